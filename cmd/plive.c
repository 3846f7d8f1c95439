/* plive — a live, top-like view of a stream as it grows: functions over the
 * last seconds of stream time, an EWMA, or all time.  A thread reads the
 * input into lib/live; this one draws and reads keys.  The terminal is
 * set raw (termios) and drawn with ANSI sequences on the alternate screen;
 * it is restored on every way out, signals included. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "live.h"
#include "timeline.h"
#include "uprobe.h"

static const char synopsis[] =
	"usage: plive [options] -p PID\n"
	"       plive [options] -- COMMAND [ARG...]\n"
	"       plive [options] [FILE]\n"
	"Show a live, top-like view of stack samples as they arrive: the functions of the\n"
	"last seconds of stream time, an exponentially weighted average, or all time.\n"
	"Input: process PID or COMMAND, sampled by pcollect run by plive; standard input\n"
	"as it grows (pcollect -p PID | plive); or FILE replayed in real time (any format;\n"
	"timestamps, as in the binary stream, pace the replay).\n"
	"\n"
	"  -p, --pid=PID           sample process PID (pcollect -p PID); q detaches\n"
	"  -F, --freq=HZ           with -p or COMMAND: samples per second per thread\n"
	"                          (pcollect -F, default 99)\n"
	"  -o, --output=FILE       with -p or COMMAND: record the session (samples and the\n"
	"                          T probes' calls) as a binary stream in FILE, at the end\n"
	"                          (preport --latency, pfilter --slow, psvg --heatmap)\n"
	"  -i, --interval=S        refresh every S seconds (default 1)\n"
	"  -w, --window=S          show the last S seconds of stream time (default 10)\n"
	"      --ewma=S            show an exponentially weighted moving average with a\n"
	"                          half-life of S seconds\n"
	"  -a, --all               show all time\n"
	"      --speed=N           replay stream time N times as fast (default 1 for FILE;\n"
	"                          0: read FILE at once and show its end)\n"
	"  -s, --sort=own|total|name  sort rows (default own)\n"
	"  -n, --top=N             rows of a plain table (default 20, 0 = all)\n"
	"      --once              print one plain table and exit\n"
	"      --weight=NAME       value column to show (default: period when present, else\n"
	"                          the first; count = samples)\n"
	"  -f, --format=NAME       input format: perf, folded, pyspy, speedscope, stream,\n"
	"                          perf.data, pprof (default: detect)\n"
	"  -q, --quiet             do not print each bad input line\n"
	"      --partial           use a truncated binary stream up to its cut (warns)\n"
	"  -V, --version           print the version\n"
	"  -h, --help              show this help\n"
	"\n"
	"Keys: q quit, o/t/n sort by own/total/name, w cycle the window (last S s, all, ewma),\n"
	"p pause, / filter by regular expression, arrows/j/k select, h or Enter: callers and\n"
	"callees of the selected function, Esc back.  With -p or COMMAND: T traces the selected\n"
	"function's calls exactly (pcollect -F 0 --trace FUNC beside the sampler): calls/s,\n"
	"p50, p95, p99, max, a latency histogram and the samples inside its slowest 5 % of\n"
	"calls, over the same window; A adds its first argument, then its return value\n"
	"(latency by value); S shows the probe as a pcollect command line; W writes the\n"
	"window's 20 slowest calls with the samples inside them to plive-timeline-PID-N.json\n"
	"(Chrome Trace Event JSON, as ptimeline: Perfetto, speedscope); X stops the probe.\n"
	"L lists the selected function's source lines (DWARF): Up/Down or a typed number, Enter\n"
	"counts that line's hits live (pcollect --trace=FILE:LINE): hits, hits/s; A then asks\n"
	"for a variable there and counts the hits by its value; X stops it.\n"
	"When standard output is not a terminal, a plain table is printed every interval (and\n"
	"at the end of the input).\n"
	"With -p or COMMAND, pcollect's messages (and COMMAND's output) are printed when\n"
	"plive ends; q stops pcollect (the target is detached, COMMAND ended).\n"
	"Exit status: 0 ok, 2 error (bad input, a read error, pcollect failed).\n";

struct opts {
	double interval, window, ewma, speed;
	int speed_set, once, quiet, rows;
	enum sp_live_mode mode;
	enum sp_live_sort sort;
	const char *format, *file, *weight, *pid, *freq;
	char **cmd; /* after "--": the command pcollect launches */
	struct sp_warnings warn;
	struct sp_read_opts read;
};

/* ---- the reader thread ---- */

struct reader {
	struct sp_live *l;
	struct opts *o;
	struct sp_err err;
	int rc;
	int wake; /* write end of the self-pipe */
	struct collector *coll; /* plive -p/-- COMMAND: pcollect, else NULL */
};

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	double speed = r->o->speed_set ? r->o->speed : (r->o->file && strcmp(r->o->file, "-") ? 1 : 0);
	r->rc = sp_live_read(r->l, r->o->file ? r->o->file : "-", r->o->format, &r->o->read, speed, &r->err);
	if (write(r->wake, "e", 1) < 0) {
		/* the main thread polls sp_live_ended anyway */
	}
	return NULL;
}

struct collector;
static void collector_last_line(struct collector *c, char *buf, size_t n);

/* ---- the terminal ---- */

static int tty_fd = -1, tty_raw;
static struct termios tty_saved;
static int wake_pipe[2] = { -1, -1 };
static volatile sig_atomic_t got_winch, got_cont;

static const char enter_seq[] = "\033[?1049h\033[?25l\033[H\033[2J";
static const char leave_seq[] = "\033[?25h\033[?1049l";

/* Async-signal-safe: write and tcsetattr only. */
static void tty_restore(void)
{
	if (!tty_raw)
		return;
	tty_raw = 0;
	tcsetattr(tty_fd, TCSAFLUSH, &tty_saved);
	if (write(STDOUT_FILENO, leave_seq, sizeof leave_seq - 1) < 0) {
		/* nothing to do: the terminal went away */
	}
}

static int tty_setup(void)
{
	struct termios t = tty_saved;
	t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	t.c_iflag &= ~(tcflag_t)(ICRNL | IXON);
	t.c_cc[VMIN] = 0;
	t.c_cc[VTIME] = 0;
	if (tcsetattr(tty_fd, TCSAFLUSH, &t) < 0)
		return -1;
	tty_raw = 1;
	if (write(STDOUT_FILENO, enter_seq, sizeof enter_seq - 1) < 0)
		return -1;
	return 0;
}

static void on_fatal(int sig)
{
	tty_restore();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void on_winch(int sig)
{
	(void)sig;
	got_winch = 1;
	if (write(wake_pipe[1], "w", 1) < 0) {
		/* a full pipe already wakes the loop */
	}
}

static void on_tstp(int sig)
{
	int saved = errno;
	tty_restore();
	signal(SIGTSTP, SIG_DFL);
	raise(SIGTSTP);
	errno = saved;
}

static void on_cont(int sig)
{
	(void)sig;
	got_cont = 1;
	if (write(wake_pipe[1], "c", 1) < 0) {
		/* as above */
	}
}

/* ---- -o FILE: the session recorded ----
 * Each pcollect's stream passes through a tee (a thread copying its pipe to
 * a temporary file beside FILE and on to plive's reader); at the end the
 * sampler's and every probe's files are merged by pmerge into FILE (samples
 * and trace events in time order), then removed.  FILE is replaced only
 * by a whole merge (pmerge -o writes a temporary file and renames it). */

struct tee {
	int in, out, file;
	pthread_t th;
	int running;
};

static void *tee_main(void *arg)
{
	struct tee *t = arg;
	char buf[65536];
	int out_ok = 1;
	for (;;) {
		ssize_t n = read(t->in, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (sp_write_all(t->file, buf, (size_t)n) < 0)
			break;
		if (out_ok && sp_write_all(t->out, buf, (size_t)n) < 0)
			out_ok = 0; /* the reader stopped: the file still gets the rest */
	}
	close(t->in);
	close(t->out);
	return NULL;
}

/* Starts copying fd `in` to path (created) and to a new pipe; returns the
 * pipe's read end, or -1 (msg filled). */
static int tee_start(struct tee *t, int in, const char *path, char *msg, size_t nmsg)
{
	int p[2];
	t->file = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (t->file < 0 || pipe(p) < 0) {
		snprintf(msg, nmsg, "%s: %s", path, strerror(errno));
		if (t->file >= 0)
			close(t->file);
		return -1;
	}
	fcntl(p[1], F_SETFD, FD_CLOEXEC);
	t->in = in;
	t->out = p[1];
	if (pthread_create(&t->th, NULL, tee_main, t) != 0) {
		snprintf(msg, nmsg, "cannot start a thread");
		close(t->file);
		close(p[0]);
		close(p[1]);
		return -1;
	}
	t->running = 1;
	return p[0];
}

/* Waits for the tee to copy its input's end. */
static int tee_finish(struct tee *t)
{
	if (!t->running)
		return 0;
	pthread_join(t->th, NULL);
	t->running = 0;
	return close(t->file);
}

struct recording {
	const char *out;      /* -o FILE, NULL = none */
	char **parts;         /* temporary files: the sampler's, then each probe's */
	size_t nparts;
	unsigned seq;
};

static struct recording rec;

/* A new temporary file's name, beside FILE. */
static const char *rec_part(void)
{
	char buf[4096];
	snprintf(buf, sizeof buf, "%s.plive-%ld-%u.tmp", rec.out, (long)getpid(), rec.seq++);
	rec.parts = sp_xrealloc(rec.parts, (rec.nparts + 1) * sizeof *rec.parts);
	rec.parts[rec.nparts] = sp_xstrndup(buf, strlen(buf));
	return rec.parts[rec.nparts++];
}

/* Merges the parts into FILE with pmerge; returns 0 or -1 (said). */
static int rec_merge(void)
{
	if (!rec.out)
		return 0;
	char exe[4096];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 16);
	char *slash = len > 0 ? (exe[len] = 0, strrchr(exe, '/')) : NULL;
	if (slash)
		snprintf(slash + 1, sizeof exe - (size_t)(slash + 1 - exe), "pmerge");
	if (!slash || access(exe, X_OK) != 0)
		snprintf(exe, sizeof exe, "pmerge");
	char **args = sp_xcalloc(rec.nparts + 6, sizeof *args);
	size_t k = 0;
	args[k++] = exe;
	args[k++] = "-q";
	args[k++] = "-b";
	args[k++] = "-o";
	args[k++] = (char *)rec.out;
	for (size_t i = 0; i < rec.nparts; i++) {
		struct stat sb;
		if (stat(rec.parts[i], &sb) == 0 && sb.st_size > 0)
			args[k++] = rec.parts[i];
	}
	int rc = -1;
	if (k == 5) {
		sp_error("%s: nothing was recorded (pcollect wrote no stream)", rec.out);
	} else {
		fflush(NULL);
		pid_t pid = fork();
		if (pid == 0) {
			execvp(exe, args);
			dprintf(STDERR_FILENO, "plive: cannot run %s: %s\n", exe, strerror(errno));
			_exit(127);
		}
		int st = 0;
		while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		if (pid > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0)
			rc = 0;
		else
			sp_error("%s: the recording was not written (pmerge failed)", rec.out);
	}
	free(args);
	for (size_t i = 0; i < rec.nparts; i++) {
		if (rc == 0)
			unlink(rec.parts[i]);
		else
			sp_error("its parts are kept: %s", rec.parts[i]);
		free(rec.parts[i]);
	}
	free(rec.parts);
	return rc;
}

/* ---- T: a traced function, by a second pcollect (-F 0 --trace FUNC) ----
 * The sampler keeps running untouched (the window stays continuous); this
 * one only places the entry and return probes, with the same rules and
 * refusals as pcollect --trace, and its stream is read by a thread into
 * lib/livetrace.  Its messages (a refusal, the tracing budget) go to the
 * status line.  X (or quitting) ends it: SIGTERM, and pcollect removes its
 * probes; should plive die, PR_SET_PDEATHSIG sends it the same SIGTERM. */

static void collector_path(char *buf, size_t n);
static pid_t collector_target(struct collector *c, const struct opts *o);

struct tracer {
	pid_t pid;
	FILE *err;
	int fd;
	char func[256];
	char by[64]; /* A: "arg1", "ret", a line's variable, or "" */
	int line;    /* L: func is FILE:LINE, a line probe (hits, no calls) */
	long target;
	char path[32];
	struct sp_livetrace *lt;
	struct sp_err rerr;
	pthread_t th;
	int joined, status, exited;
	struct sp_livetrace_stats st;
	struct tee tee; /* -o FILE */
	double t0;      /* when T (A, L) started it */
	double shown;   /* when its first calls were drawn, 0 = not yet */
	double tkill;   /* X: when pcollect was told to stop, 0 = running */
	struct tracer *next; /* in the ui's list of those stopping */
};

static void *tracer_main(void *arg)
{
	struct tracer *t = arg;
	sp_livetrace_read(t->lt, t->path, &t->rerr);
	if (write(wake_pipe[1], "t", 1) < 0) {
		/* the loop polls anyway */
	}
	return NULL;
}

/* pcollect's last message line (a refusal, the budget warning), or "". */
static void tracer_last_line(struct tracer *t, char *buf, size_t n)
{
	buf[0] = 0;
	fflush(t->err);
	rewind(t->err);
	char line[1024];
	while (fgets(line, sizeof line, t->err))
		if (line[0] != '\n')
			snprintf(buf, n, "%s", line);
	buf[strcspn(buf, "\n")] = 0;
	fseek(t->err, 0, SEEK_END);
}

/* The probe as pcollect's option: "--trace=FUNC" or "--trace=FUNC(arg1)". */
static void tracer_probe(const struct tracer *t, char *buf, size_t n)
{
	if (t->by[0])
		snprintf(buf, n, "--trace=%s(%s)", t->func, t->by);
	else
		snprintf(buf, n, "--trace=%s", t->func);
}

static struct tracer *tracer_start(const char *func, const char *by, int line, pid_t target, uint64_t window_ns,
				   char *msg, size_t nmsg)
{
	struct tracer *t = sp_xcalloc(1, sizeof *t);
	t->t0 = sp_mono_s();
	t->line = line;
	snprintf(t->func, sizeof t->func, "%s", func);
	snprintf(t->by, sizeof t->by, "%s", by ? by : "");
	t->target = (long)target;
	char exe[4096], pidbuf[32], probe[400];
	collector_path(exe, sizeof exe);
	snprintf(pidbuf, sizeof pidbuf, "%ld", (long)target);
	tracer_probe(t, probe, sizeof probe);
	char *args[] = { exe, "-F", "0", "-p", pidbuf, probe, NULL };
	int fd[2];
	if (!(t->err = tmpfile()) || pipe(fd) < 0) {
		snprintf(msg, nmsg, "T: cannot start pcollect: %s", strerror(errno));
		if (t->err)
			fclose(t->err);
		free(t);
		return NULL;
	}
	fcntl(fd[0], F_SETFD, FD_CLOEXEC);
	pid_t parent = getpid();
	fflush(NULL);
	t->pid = fork();
	if (t->pid < 0) {
		snprintf(msg, nmsg, "T: cannot start pcollect: %s", strerror(errno));
		close(fd[0]);
		close(fd[1]);
		fclose(t->err);
		free(t);
		return NULL;
	}
	if (t->pid == 0) {
		/* plive killed: pcollect ends as on q (probes removed) */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != parent)
			_exit(1);
		int null = open("/dev/null", O_RDONLY);
		if (null >= 0)
			dup2(null, STDIN_FILENO);
		dup2(fd[1], STDOUT_FILENO);
		dup2(fileno(t->err), STDERR_FILENO);
		close(fd[0]);
		close(fd[1]);
		execvp(exe, args);
		dprintf(STDERR_FILENO, "plive: cannot run %s: %s\n", exe, strerror(errno));
		_exit(127);
	}
	close(fd[1]);
	t->fd = fd[0];
	if (rec.out) {
		int r = tee_start(&t->tee, fd[0], rec_part(), msg, nmsg);
		if (r < 0) {
			kill(t->pid, SIGTERM);
			waitpid(t->pid, NULL, 0);
			close(fd[0]);
			fclose(t->err);
			free(t);
			return NULL;
		}
		t->fd = r;
	}
	snprintf(t->path, sizeof t->path, "/dev/fd/%d", t->fd);
	t->lt = sp_livetrace_new(window_ns, t->by[0] ? t->by : NULL);
	if (pthread_create(&t->th, NULL, tracer_main, t) != 0) {
		snprintf(msg, nmsg, "T: cannot start a thread");
		kill(t->pid, SIGTERM);
		waitpid(t->pid, NULL, 0);
		close(t->fd);
		fclose(t->err);
		sp_livetrace_free(t->lt);
		free(t);
		return NULL;
	}
	if (line && t->by[0])
		snprintf(msg, nmsg, "A: counting the hits of %.200s by %.60s (pcollect -p %ld %.250s); X stops", func,
			 t->by, (long)target, probe);
	else if (line)
		snprintf(msg, nmsg, "L: counting the hits of %.200s (pcollect -p %ld %.250s); A adds a variable, X stops",
			 func, (long)target, probe);
	else if (t->by[0])
		snprintf(msg, nmsg, "A: tracing %.200s by %s (pcollect -p %ld %.250s); A: %s, X stops", func, t->by,
			 (long)target, probe, !strcmp(t->by, "arg1") ? "by ret" : "no value");
	else
		snprintf(msg, nmsg, "T: tracing %.200s (pcollect -p %ld --trace %.200s); X stops", func, (long)target,
			 func);
	return t;
}

/* Has pcollect exited (a refusal, the target gone)?  Reaps it. */
static int tracer_exited(struct tracer *t)
{
	if (!t->exited && waitpid(t->pid, &t->status, WNOHANG) == t->pid)
		t->exited = 1;
	return t->exited;
}

/* X: its pcollect told to stop (SIGTERM: it removes the probes and
 * exits); the view carries on, and tracer_stop once it exited says how
 * long the removal took. */
static void tracer_kill(struct tracer *t)
{
	t->tkill = sp_mono_s();
	if (!t->exited)
		kill(t->pid, SIGTERM);
}

/* Stops the probe and frees t; msg gets what happened. */
static void tracer_stop(struct tracer *t, char *msg, size_t nmsg)
{
	if (!t->exited) {
		kill(t->pid, SIGTERM);
		while (waitpid(t->pid, &t->status, 0) < 0 && errno == EINTR)
			;
		t->exited = 1;
	}
	pthread_join(t->th, NULL);
	close(t->fd);
	tee_finish(&t->tee);
	char last[1024];
	tracer_last_line(t, last, sizeof last);
	struct sp_livetrace_stats st;
	sp_livetrace_compute(t->lt, NULL, 0, &st);
	if (msg) {
		if (WIFEXITED(t->status) && WEXITSTATUS(t->status) == 0)
			snprintf(msg, nmsg, "X: probe on %.200s removed in %.2f s (%llu %s)", t->func,
				 t->tkill > 0 ? sp_mono_s() - t->tkill : 0.0, (unsigned long long)st.total_calls,
				 t->line ? "hits counted" : "calls traced");
		else
			snprintf(msg, nmsg, "X: probe on %.200s ended: %.600s", t->func, last[0] ? last : "pcollect failed");
	}
	fclose(t->err);
	sp_livetrace_free(t->lt);
	free(t);
}

/* "p50 D  p95 D[  p99 D]  max D" */
static void add_figures(struct sp_buf *b, uint64_t p50, uint64_t p95, const uint64_t *p99, uint64_t max)
{
	sp_buf_adds(b, "p50 ");
	sp_livetrace_dur(b, p50);
	sp_buf_adds(b, "  p95 ");
	sp_livetrace_dur(b, p95);
	if (p99) {
		sp_buf_adds(b, "  p99 ");
		sp_livetrace_dur(b, *p99);
	}
	sp_buf_adds(b, "  max ");
	sp_livetrace_dur(b, max);
}

/* "by VAR: N values in the window  (...)\n"; what: "calls" or "hits" */
static void by_header(struct sp_buf *b, const char *by, const struct sp_livetrace_stats *st, const char *what)
{
	sp_buf_addf(b, "by %s: %llu values in the window", by, (unsigned long long)st->by_values);
	if (st->by_missing)
		sp_buf_addf(b, "  (%llu %s without one)", (unsigned long long)st->by_missing, what);
	if (st->by_values > (uint64_t)st->nby)
		sp_buf_addf(b, "  (the %d of the most %s shown)", st->nby, what);
	sp_buf_addc(b, '\n');
}

/* L's panel: the line's hits over the window, then every line pcollect
 * said (where a probe moved off a lock-prefixed instruction, a refusal,
 * the tracing budget), the newest last. */
static void line_render(struct tracer *t, const struct sp_livetrace_stats *st, int exited, int room, struct sp_buf *b)
{
	sp_buf_addf(b, "Line: %s  hits %llu  hits/s %.1f  in %.3f s of the window, to clock %.3f s  total %llu", t->func,
		    (unsigned long long)st->calls, st->span_s > 0 ? (double)st->calls / st->span_s : 0.0, st->span_s,
		    (double)st->tend / 1e9, (unsigned long long)st->total_calls);
	if (exited)
		sp_buf_adds(b, "  [probe ended]");
	else if (!st->events)
		sp_buf_adds(b, "  (no hit yet)");
	sp_buf_addc(b, '\n');
	room--;
	if (t->by[0] && room > 2) {
		by_header(b, t->by, st, "hits");
		room--;
		for (int i = 0; i < st->nby && room > 2; i++, room--)
			sp_buf_addf(b, "  %s=%lld  hits %llu\n", t->by, (long long)st->by[i].value,
				    (unsigned long long)st->by[i].calls);
	}
	fflush(t->err);
	rewind(t->err);
	char ln[1024];
	int n = 0;
	while (fgets(ln, sizeof ln, t->err))
		n += ln[0] != '\n';
	rewind(t->err);
	int skip = n > room ? n - room : 0;
	while (fgets(ln, sizeof ln, t->err))
		if (ln[0] != '\n' && skip-- <= 0) {
			ln[strcspn(ln, "\n")] = 0;
			sp_buf_addf(b, "%s\n", ln);
		}
	fseek(t->err, 0, SEEK_END);
}

/* The panel under the table: labelled figures a script can read. */
static void tracer_render(struct tracer *t, int room, struct sp_buf *b)
{
	struct sp_livetrace_stats *st = &t->st;
	char last[1024];
	tracer_last_line(t, last, sizeof last);
	int exited = tracer_exited(t);
	if (t->line) {
		line_render(t, st, exited, room, b);
		return;
	}
	sp_buf_addf(b, "Traced: %s  calls %llu in %.3f s of the window, to clock %.3f s", t->func,
		    (unsigned long long)st->calls, st->span_s, (double)st->tend / 1e9);
	if (exited)
		sp_buf_adds(b, "  [probe ended]");
	sp_buf_addc(b, '\n');
	room--;
	if (last[0] && room > 0) {
		sp_buf_addf(b, "%s\n", last);
		room--;
	}
	if (room <= 0)
		return;
	if (!st->calls) {
		sp_buf_addf(b, "calls/s 0  (%s)\n", exited ? "pcollect ended: see the line above" :
				    st->events ? "no call returned in the window" : "waiting for the first call");
		return;
	}
	sp_buf_addf(b, "calls/s %.1f  ", st->rate);
	add_figures(b, st->p50, st->p95, &st->p99, st->max);
	if (st->abandoned)
		sp_buf_addf(b, "  (%llu left without returning)", (unsigned long long)st->abandoned);
	sp_buf_addc(b, '\n');
	if (--room <= 0)
		return;
	uint64_t in = st->samples_slow + st->samples_fast;
	sp_buf_addf(b, "slowest 5%%: %llu calls >= ", (unsigned long long)st->slow_calls);
	sp_livetrace_dur(b, st->threshold);
	sp_buf_addf(b, "  samples in them %llu (%.1f%% of %llu in %s)  in the other calls %llu (%.1f%%)  outside %llu\n",
		    (unsigned long long)st->samples_slow, in ? 100.0 * (double)st->samples_slow / (double)in : 0.0,
		    (unsigned long long)in, t->func, (unsigned long long)st->samples_fast,
		    in ? 100.0 * (double)st->samples_fast / (double)in : 0.0, (unsigned long long)st->samples_outside);
	if (--room <= 0)
		return;
	if (t->by[0]) {
		by_header(b, t->by, st, "calls");
		room--;
		for (int i = 0; i < st->nby && room > 0; i++, room--) {
			const struct sp_livetrace_by *g = &st->by[i];
			sp_buf_addf(b, "  %s=%lld  calls %llu  ", t->by, (long long)g->value, (unsigned long long)g->calls);
			add_figures(b, g->p50, g->p95, NULL, g->max);
			sp_buf_addc(b, '\n');
		}
	}
	if (room <= 0 || st->lo > st->hi)
		return;
	uint64_t max = 0;
	for (int k = st->lo; k <= st->hi; k++)
		max = st->hist[k] > max ? st->hist[k] : max;
	sp_buf_addf(b, "  %23s : count    distribution\n", "usecs");
	room--;
	for (int k = st->lo; k <= st->hi && room > 0; k++, room--) {
		uint64_t from = k ? (uint64_t)1 << k : 0, to = ((uint64_t)1 << (k + 1)) - 1;
		int stars = max ? (int)(st->hist[k] * 40 / max) : 0;
		sp_buf_addf(b, "  %10llu -> %-10llu : %-8llu |%-40.*s|\n", (unsigned long long)from,
			    (unsigned long long)to, (unsigned long long)st->hist[k], stars,
			    "****************************************");
	}
}

/* ---- the interactive view ---- */

struct ui {
	struct sp_live *l;
	struct opts *o;
	struct sp_live_query q;
	struct sp_live_table t;
	regex_t re;
	int have_re;
	char filter[256], edit[256];
	int editing; /* typing a filter after '/' */
	size_t edit_len;
	int paused, sel, top, fit;
	uint32_t detail_func;
	char msg[1024];
	const char *title;
	struct tracer *tr;       /* T: the traced function, NULL = none */
	struct tracer *gone;     /* X: probes being removed (tracer_kill) */
	struct collector *coll;  /* the sampler (-p, -- COMMAND), NULL = none */
	struct sp_live_point *pts;
	size_t cap_pts;
	/* L: picking a line of the selected function */
	int picking, plines[256], npl, pl;
	char pfile[256], pedit[64];
	size_t pedit_len;
	pid_t ptarget;
};

static void ui_pick_status(struct ui *u, char *buf, size_t n);

static void ui_draw(struct ui *u)
{
	struct winsize ws;
	int width = 80, height = 24;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col && ws.ws_row) {
		width = ws.ws_col;
		height = ws.ws_row;
	}
	char status[1400];
	if (u->picking == 2)
		snprintf(status, sizeof status, "A: a variable at %.200s (a local or parameter, VAR.MEMBER, VAR->MEMBER; Enter "
			 "counts the hits by its value, Esc cancels): %.*s", u->tr->func, (int)u->pedit_len, u->pedit);
	else if (u->picking)
		ui_pick_status(u, status, sizeof status);
	else if (u->editing)
		snprintf(status, sizeof status, "Filter (regex, Enter applies, Esc cancels): /%.*s", (int)u->edit_len,
			 u->edit);
	else if (u->msg[0])
		snprintf(status, sizeof status, "%s", u->msg);
	else if (u->q.detail)
		snprintf(status, sizeof status, "Esc back, q quit, w window, p pause");
	else
		snprintf(status, sizeof status, "q quit  o/t/n sort (%s)  w window  p pause  / filter  h callers+callees",
			 u->q.sort == SP_LIVE_SORT_OWN ? "own" : u->q.sort == SP_LIVE_SORT_TOTAL ? "total" : "name");
	/* the traced function's panel takes the bottom of the screen */
	struct sp_buf panel = SP_BUF_INIT;
	if (u->tr && !u->q.detail) {
		int prow = height / 2 > 16 ? 16 : height / 2;
		struct sp_buf raw = SP_BUF_INIT;
		tracer_render(u->tr, prow, &raw);
		/* each line cut to the screen's width (a wrapped line would
		 * scroll the screen) */
		int lines = 0;
		const char *p = raw.p, *end = raw.p + raw.len;
		while (p < end) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
			sp_buf_add(&panel, p, n < (size_t)width ? n : (size_t)width);
			sp_buf_addc(&panel, '\n');
			lines++;
			p += n + 1;
		}
		sp_buf_release(&raw);
		height -= lines;
	}
	/* keep the selection on screen */
	int room = height - 5;
	if (room < 1)
		room = 1;
	if ((size_t)u->sel >= u->t.nrows)
		u->sel = u->t.nrows ? (int)u->t.nrows - 1 : 0;
	if (u->sel < u->top)
		u->top = u->sel;
	if (u->sel >= u->top + room)
		u->top = u->sel - room + 1;
	struct sp_live_look look = { width, height, u->top, u->sel, 1, u->paused, u->title, status, u->filter };
	struct sp_buf b = SP_BUF_INIT;
	sp_buf_adds(&b, "\033[H");
	struct sp_buf screen = SP_BUF_INIT;
	u->fit = sp_live_render(u->l, &u->t, &look, &screen);
	if (panel.len) {
		/* the table may be shorter than its room: the panel stays at the bottom */
		int lines = 0;
		for (size_t i = 0; i < screen.len; i++)
			lines += screen.p[i] == '\n';
		for (; lines < height; lines++)
			sp_buf_addc(&screen, '\n');
		sp_buf_add(&screen, panel.p, panel.len);
	}
	sp_buf_release(&panel);
	/* clear each line's rest, then everything below */
	const char *p = screen.p, *end = screen.p + screen.len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		sp_buf_add(&b, p, n);
		sp_buf_adds(&b, "\033[K");
		p += n;
		if (nl) {
			p++;
			if (p < end)
				sp_buf_adds(&b, "\r\n");
		}
	}
	sp_buf_adds(&b, "\033[J");
	sp_write_all(STDOUT_FILENO, b.p, b.len);
	sp_buf_release(&b);
	sp_buf_release(&screen);
}

static void ui_compute(struct ui *u)
{
	u->q.filter = u->have_re ? &u->re : NULL;
	u->q.detail = u->detail_func;
	sp_live_compute(u->l, &u->q, &u->t);
	if (u->tr) {
		size_t n = sp_live_points(u->l, &u->pts, &u->cap_pts);
		sp_livetrace_compute(u->tr->lt, u->pts, n, &u->tr->st);
	}
}

/* X: the probes whose pcollect has exited, said and freed.  Returns 1
 * when one was (the status line changed). */
static int ui_reap(struct ui *u)
{
	int said = 0;
	for (struct tracer **pp = &u->gone; *pp;) {
		struct tracer *t = *pp;
		if (!tracer_exited(t)) {
			pp = &t->next;
			continue;
		}
		*pp = t->next;
		tracer_stop(t, u->msg, sizeof u->msg);
		said = 1;
	}
	return said;
}

/* The probe's first calls (or hits) read: drawn at once, not at the next
 * interval, and the status line that started it says after how long.
 * Returns 1 when the view is to be drawn. */
static int ui_first_calls(struct ui *u)
{
	struct tracer *t = u->tr;
	if (!t || t->shown || !sp_livetrace_total(t->lt))
		return 0;
	t->shown = sp_mono_s();
	size_t n = strlen(u->msg);
	if (n >= 7 && !strcmp(u->msg + n - 7, "X stops"))
		snprintf(u->msg + n, sizeof u->msg - n, "; first %s shown %.2f s after %c", t->line ? "hits" : "calls",
			 t->shown - t->t0, u->msg[0]);
	if (!u->paused)
		ui_compute(u);
	return 1;
}

/* The selected row's function name, without its " (file:line)". */
static void ui_selected(struct ui *u, char *buf, size_t n)
{
	buf[0] = 0;
	if ((size_t)u->sel >= u->t.nrows)
		return;
	struct sp_buf b = SP_BUF_INIT;
	sp_live_func_name(u->l, u->t.rows[u->sel].func, &b);
	sp_buf_addc(&b, 0);
	char *paren = strstr(b.p, " (");
	if (paren)
		*paren = 0;
	snprintf(buf, n, "%s", b.p);
	sp_buf_release(&b);
}

/* The selected function as pcollect --trace names it (FUNC, or LIB:FUNC
 * for a library's), and the target; 0 with u->msg saying why not (key:
 * the key pressed, for the message). */
static pid_t ui_probe_func(struct ui *u, char key, char *func, size_t nfunc)
{
	if (!u->coll) {
		snprintf(u->msg, sizeof u->msg, "%c: tracing needs plive -p PID or plive -- COMMAND", key);
		return 0;
	}
	ui_selected(u, func, nfunc);
	if (!func[0]) {
		snprintf(u->msg, sizeof u->msg, "%c: no function selected (arrows or j/k select a row)", key);
		return 0;
	}
	if (func[0] == '[' || strchr(func, ' ')) {
		snprintf(u->msg, sizeof u->msg, "%c: %.200s is not a function pcollect --trace can probe", key, func);
		return 0;
	}
	pid_t target = collector_target(u->coll, u->o);
	if (target <= 0) {
		snprintf(u->msg, sizeof u->msg, "%c: the target process is not known (yet)", key);
		return 0;
	}
	/* a library's function: LIB:FUNC, LIB its path (pcollect --trace) */
	struct sp_buf mod = SP_BUF_INIT;
	sp_live_func_module(u->l, u->t.rows[u->sel].func, &mod);
	sp_buf_addc(&mod, 0);
	char exe[64], real_exe[4096], real_mod[4096];
	snprintf(exe, sizeof exe, "/proc/%ld/exe", (long)target);
	if (mod.p[0] == '/' && realpath(mod.p, real_mod) &&
	    (!realpath(exe, real_exe) || strcmp(real_exe, real_mod))) {
		char f2[256];
		snprintf(f2, sizeof f2, "%.200s:%.50s", mod.p, func);
		snprintf(func, nfunc, "%s", f2);
	}
	sp_buf_release(&mod);
	return target;
}

static void ui_trace(struct ui *u)
{
	char func[256];
	pid_t target = ui_probe_func(u, 'T', func, sizeof func);
	if (!target)
		return;
	if (u->tr)
		tracer_stop(u->tr, NULL, 0);
	u->tr = tracer_start(func, NULL, 0, target, (uint64_t)(u->o->window * 1e9), u->msg, sizeof u->msg);
}

/* L: the selected function's source lines (DWARF), one picked with
 * arrows or typed, then Enter counts its hits (pcollect --trace=FILE:LINE,
 * whose notes and refusals the panel shows). */
static void ui_lines(struct ui *u)
{
	char func[256];
	pid_t target = ui_probe_func(u, 'L', func, sizeof func);
	if (!target)
		return;
	char exe[64];
	snprintf(exe, sizeof exe, "/proc/%ld/exe", (long)target);
	struct sp_err err;
	memset(&err, 0, sizeof err);
	char *path = NULL;
	int n = sp_uprobe_func_lines(func, exe, (int)target, u->pfile, sizeof u->pfile, u->plines,
				     (int)(sizeof u->plines / sizeof *u->plines), &path, &err);
	if (n < 0) {
		snprintf(u->msg, sizeof u->msg, "L: %.900s", err.msg);
		return;
	}
	char real_exe[4096], real_path[4096];
	int in_exe = realpath(exe, real_exe) && realpath(path, real_path) && !strcmp(real_exe, real_path);
	if (!in_exe) {
		snprintf(u->msg, sizeof u->msg, "L: %.200s is in %.300s: line probes are the executable's only", func,
			 path);
		free(path);
		return;
	}
	free(path);
	u->npl = n;
	u->pl = 0;
	u->pedit_len = 0;
	u->picking = 1;
	u->ptarget = target;
}

static void ui_line_start(struct ui *u)
{
	u->picking = 0;
	int line = u->plines[u->pl];
	if (u->pedit_len) {
		u->pedit[u->pedit_len] = 0;
		line = atoi(u->pedit);
	}
	char spec[300];
	snprintf(spec, sizeof spec, "%s:%d", u->pfile, line);
	if (u->tr)
		tracer_stop(u->tr, NULL, 0);
	u->tr = tracer_start(spec, NULL, 1, u->ptarget, (uint64_t)(u->o->window * 1e9), u->msg, sizeof u->msg);
}

/* The status line while L picks a line. */
static void ui_pick_status(struct ui *u, char *buf, size_t n)
{
	struct sp_buf b = SP_BUF_INIT;
	if (u->pedit_len)
		sp_buf_addf(&b, "L: line %.*s of %s", (int)u->pedit_len, u->pedit, u->pfile);
	else
		sp_buf_addf(&b, "L: line %d of %s", u->plines[u->pl], u->pfile);
	sp_buf_adds(&b, " (Up/Down or type a number, Enter counts its hits, Esc cancels); lines with code:");
	for (int i = 0; i < u->npl; i++)
		sp_buf_addf(&b, i == u->pl && !u->pedit_len ? " [%d]" : " %d", u->plines[i]);
	sp_buf_cstr(&b);
	snprintf(buf, n, "%s", b.p);
	sp_buf_release(&b);
}

/* A: the traced function again, with its first argument, then its return
 * value, then neither (the probe restarted: its window starts over). */
static void ui_by(struct ui *u)
{
	if (!u->tr) {
		snprintf(u->msg, sizeof u->msg, "A: no traced function (T traces the selected one)");
		return;
	}
	char func[256], by[64];
	snprintf(func, sizeof func, "%s", u->tr->func);
	snprintf(by, sizeof by, "%s", !u->tr->by[0] ? "arg1" : !strcmp(u->tr->by, "arg1") ? "ret" : "");
	if (u->tr->line) {
		/* a local variable or parameter at that line, typed */
		u->picking = 2;
		u->pedit_len = 0;
		return;
	}
	pid_t target = (pid_t)u->tr->target;
	tracer_stop(u->tr, NULL, 0);
	u->tr = tracer_start(func, by[0] ? by : NULL, 0, target, (uint64_t)(u->o->window * 1e9), u->msg, sizeof u->msg);
}

/* S: the probe set as a pcollect command line (the status line, and
 * plive's standard error at the end). */
static char saved_cmd[1024];
static void ui_save(struct ui *u)
{
	if (!u->tr) {
		snprintf(u->msg, sizeof u->msg, "S: no probe to save (T traces the selected function)");
		return;
	}
	char probe[400];
	tracer_probe(u->tr, probe, sizeof probe);
	snprintf(saved_cmd, sizeof saved_cmd, "pcollect -p %ld '%s' -d 10 -o trace.sp", u->tr->target, probe);
	snprintf(u->msg, sizeof u->msg, "S: %.900s  (printed when plive ends)", saved_cmd);
}

/* W: the last window's timeline of the traced function, its 20 slowest
 * calls with the samples inside them, written as ptimeline --slowest 20
 * writes it (lib/timeline) from plive's own window: the calls of the
 * probe's stream (lib/livetrace) and the sampler's samples (lib/live). */
#define TIMELINE_SLOWEST 20
static void ui_timeline(struct ui *u)
{
	if (!u->tr) {
		snprintf(u->msg, sizeof u->msg, "W: no live trace running (T traces the selected function)");
		return;
	}
	if (u->tr->line) {
		snprintf(u->msg, sizeof u->msg, "W: %.200s is a line probe: its hits have no duration (T traces a function)",
			 u->tr->func);
		return;
	}
	/* "LIB:FUNC" (a library's function): the function's name is FUNC */
	const char *func = u->tr->func;
	const char *colon = func[0] == '/' ? strchr(func, ':') : NULL;
	if (colon)
		func = colon + 1;
	char path[96];
	int fd = -1;
	for (int n = 1; n < 10000 && fd < 0; n++) {
		snprintf(path, sizeof path, "plive-timeline-%ld-%d.json", u->tr->target, n);
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		snprintf(u->msg, sizeof u->msg, "W: %s: %s", path, strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(path);
		}
		return;
	}
	struct sp_timeline_opts o;
	memset(&o, 0, sizeof o);
	o.from = o.to = SP_NO_TIME;
	o.slowest = TIMELINE_SLOWEST;
	o.func = func;
	struct sp_profile *p = sp_profile_new();
	struct sp_timeline *tl = sp_timeline_new(p, &o);
	struct sp_err err;
	memset(&err, 0, sizeof err);
	uint32_t frame = sp_frame_named(p, func, strlen(func), SP_KIND_NATIVE);
	int64_t ncalls = sp_livetrace_emit(u->tr->lt, p, sp_timeline_sink(tl), frame, u->tr->target, &err);
	int64_t nsmp = ncalls < 0 ? -1 : sp_live_emit(u->l, p, sp_timeline_sink(tl), u->tr->target, &err);
	int rc = nsmp < 0 ? -1 : ncalls == 0 ? 1 : sp_timeline_write(tl, f, &err);
	if (fclose(f) != 0 && !rc) {
		sp_err_set(&err, "%s", strerror(errno));
		rc = -1;
	}
	if (rc) {
		unlink(path);
		if (rc > 0)
			snprintf(u->msg, sizeof u->msg, "W: no call of %.200s returned in the last window yet (nothing written)",
				 func);
		else
			snprintf(u->msg, sizeof u->msg, "W: %s: %.300s", path, err.msg);
	} else {
		const struct sp_timeline_stats *st = sp_timeline_stats(tl);
		snprintf(u->msg, sizeof u->msg,
			 "W: wrote %s (%" PRIu64 " slowest of %" PRIu64 " calls of %.100s, %" PRIu64
			 " samples inside): open it in https://ui.perfetto.dev or speedscope %s",
			 path, st->picked, st->func_calls, func, st->kept_samples, path);
	}
	sp_timeline_free(tl);
	sp_profile_free(p);
}

/* Handles the keys in buf; returns 1 to quit. */
static int ui_keys(struct ui *u, const char *buf, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)buf[i];
		if (u->picking == 2) {
			if (c == 27) {
				u->picking = 0;
				if (i + 2 < n && buf[i + 1] == '[')
					i += 2;
			} else if (c == '\r' || c == '\n') {
				u->picking = 0;
				u->pedit[u->pedit_len] = 0;
				if (u->pedit_len) {
					char func[256];
					snprintf(func, sizeof func, "%s", u->tr->func);
					pid_t target = (pid_t)u->tr->target;
					tracer_stop(u->tr, NULL, 0);
					u->tr = tracer_start(func, u->pedit, 1, target, (uint64_t)(u->o->window * 1e9), u->msg,
							     sizeof u->msg);
				}
			} else if (c == 127 || c == 8) {
				if (u->pedit_len)
					u->pedit_len--;
			} else if ((isalnum(c) || c == '_' || c == '.' || c == '-' || c == '>') &&
				   u->pedit_len + 1 < sizeof u->pedit) {
				u->pedit[u->pedit_len++] = (char)c;
			}
			continue;
		}
		if (u->picking) {
			if (c == 27 && i + 2 < n && (buf[i + 1] == '[' || buf[i + 1] == 'O')) {
				char k = buf[i + 2];
				i += 2;
				if (k == 'A' && u->pl > 0)
					u->pl--;
				else if (k == 'B' && u->pl + 1 < u->npl)
					u->pl++;
				u->pedit_len = 0;
			} else if (c == 27) {
				u->picking = 0;
			} else if (c == '\r' || c == '\n') {
				ui_line_start(u);
			} else if (c == 127 || c == 8) {
				if (u->pedit_len)
					u->pedit_len--;
			} else if (c >= '0' && c <= '9' && u->pedit_len + 1 < sizeof u->pedit) {
				u->pedit[u->pedit_len++] = (char)c;
			} else if (c == 'k' && u->pl > 0) {
				u->pl--;
				u->pedit_len = 0;
			} else if (c == 'j' && u->pl + 1 < u->npl) {
				u->pl++;
				u->pedit_len = 0;
			}
			continue;
		}
		if (u->editing) {
			if (c == 27) {
				u->editing = 0;
				if (i + 2 < n && buf[i + 1] == '[')
					i += 2;
			} else if (c == '\r' || c == '\n') {
				u->editing = 0;
				u->edit[u->edit_len] = 0;
				regex_t re;
				int e;
				if (!u->edit_len) {
					if (u->have_re)
						regfree(&u->re);
					u->have_re = 0;
					u->filter[0] = 0;
				} else if ((e = regcomp(&re, u->edit, REG_EXTENDED | REG_NOSUB)) != 0) {
					char m[128];
					regerror(e, &re, m, sizeof m);
					snprintf(u->msg, sizeof u->msg, "bad regular expression /%s/: %s", u->edit, m);
				} else {
					if (u->have_re)
						regfree(&u->re);
					u->re = re;
					u->have_re = 1;
					snprintf(u->filter, sizeof u->filter, "%s", u->edit);
					u->sel = u->top = 0;
				}
			} else if (c == 127 || c == 8) {
				if (u->edit_len)
					u->edit_len--;
			} else if (c >= 32 && u->edit_len + 1 < sizeof u->edit) {
				u->edit[u->edit_len++] = (char)c;
			}
			continue;
		}
		u->msg[0] = 0;
		if (c == 27) {
			/* an arrow or page key, or Esc alone */
			if (i + 2 < n && (buf[i + 1] == '[' || buf[i + 1] == 'O')) {
				char k = buf[i + 2];
				i += 2;
				if (k == '5' || k == '6') {
					if (i + 1 < n && buf[i + 1] == '~')
						i++;
					int step = u->fit > 1 ? u->fit - 1 : 10;
					u->sel += k == '5' ? -step : step;
				} else if (k == 'A') {
					u->sel--;
				} else if (k == 'B') {
					u->sel++;
				}
				if (u->sel < 0)
					u->sel = 0;
				continue;
			}
			u->detail_func = 0;
			continue;
		}
		switch (c) {
		case 'q': case 'Q': case 3: return 1;
		case 'o': u->q.sort = SP_LIVE_SORT_OWN; break;
		case 't': u->q.sort = SP_LIVE_SORT_TOTAL; break;
		case 'n': u->q.sort = SP_LIVE_SORT_NAME; break;
		case 'w': u->q.mode = (enum sp_live_mode)((u->q.mode + 1) % 3); break;
		case 'p': case ' ': u->paused = !u->paused; break;
		case '/':
			u->editing = 1;
			u->edit_len = 0;
			break;
		case 'T': ui_trace(u); break;
		case 'L': ui_lines(u); break;
		case 'A': ui_by(u); break;
		case 'S': ui_save(u); break;
		case 'W': ui_timeline(u); break;
		case 'X':
			if (u->tr) {
				/* the view goes on while pcollect removes the
				 * probes (ui_reap says when it is done) */
				tracer_kill(u->tr);
				snprintf(u->msg, sizeof u->msg, "X: removing the probe on %.200s", u->tr->func);
				u->tr->next = u->gone;
				u->gone = u->tr;
				u->tr = NULL;
			} else {
				snprintf(u->msg, sizeof u->msg, "X: no probe to stop");
			}
			break;
		case 'k': if (u->sel > 0) u->sel--; break;
		case 'j': u->sel++; break;
		case 'h': case '\r': case '\n':
			if (u->detail_func)
				u->detail_func = 0;
			else if ((size_t)u->sel < u->t.nrows)
				u->detail_func = u->t.rows[u->sel].func;
			break;
		default: break;
		}
	}
	return 0;
}

static int run_tty(struct sp_live *l, struct opts *o, struct reader *r)
{
	struct ui u;
	memset(&u, 0, sizeof u);
	u.l = l;
	u.o = o;
	u.q.mode = o->mode;
	u.q.sort = o->sort;
	u.title = "plive";
	u.coll = r->coll;
	if (tcgetattr(tty_fd, &tty_saved) < 0) {
		sp_error("/dev/tty: %s", strerror(errno));
		return SP_EXIT_ERROR;
	}
	atexit(tty_restore);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_fatal;
	sa.sa_flags = SA_RESETHAND;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGQUIT, &sa, NULL);
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGABRT, &sa, NULL);
	sa.sa_flags = 0;
	sa.sa_handler = on_winch;
	sigaction(SIGWINCH, &sa, NULL);
	sa.sa_handler = on_cont;
	sigaction(SIGCONT, &sa, NULL);
	sa.sa_handler = on_tstp;
	sigaction(SIGTSTP, &sa, NULL);
	if (tty_setup() < 0) {
		tty_restore();
		sp_error("cannot set up the terminal: %s", strerror(errno));
		return SP_EXIT_ERROR;
	}
	double next = sp_mono_s();
	int quit = 0, redraw = 1, was_ended = 0;
	while (!quit) {
		double now = sp_mono_s();
		if (now >= next) {
			/* paused: the screen stands still (a resize redraws it) */
			if (!u.paused) {
				ui_compute(&u);
				redraw = 1;
			}
			next = now + o->interval;
		}
		if (got_cont) {
			got_cont = 0;
			sa.sa_handler = on_tstp;
			sigaction(SIGTSTP, &sa, NULL);
			tty_setup();
			redraw = 1;
		}
		if (got_winch) {
			got_winch = 0;
			redraw = 1;
		}
		int ended = sp_live_ended(l);
		if (ended && !was_ended) {
			was_ended = 1;
			if (!u.paused)
				ui_compute(&u);
			char why[1024] = "";
			if (r->coll)
				collector_last_line(r->coll, why, sizeof why);
			if (ended == 2 && why[0])
				snprintf(u.msg, sizeof u.msg, "%.900s (q quits)", why);
			else if (ended == 2)
				snprintf(u.msg, sizeof u.msg, "%s%s%s (q quits)", r->err.where, r->err.where[0] ? ": " : "",
					 r->err.msg);
			redraw = 1;
		}
		if (redraw) {
			ui_draw(&u);
			redraw = 0;
		}
		struct pollfd pf[2] = { { tty_fd, POLLIN, 0 }, { wake_pipe[0], POLLIN, 0 } };
		int ms = (int)((next - sp_mono_s()) * 1000) + 1;
		if (ms < 0)
			ms = 0;
		/* a probe being removed, or its first calls awaited: looked
		 * at every 20 ms */
		if ((u.gone || (u.tr && !u.tr->shown && !u.tr->exited)) && ms > 20)
			ms = 20;
		if (poll(pf, 2, ms) < 0)
			continue;
		if (ui_reap(&u))
			redraw = 1;
		if (ui_first_calls(&u))
			redraw = 1;
		if (pf[1].revents & POLLIN) {
			char junk[64];
			if (read(wake_pipe[0], junk, sizeof junk) < 0) {
				/* EAGAIN: nothing left */
			}
		}
		if (pf[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			char buf[256];
			ssize_t n = read(tty_fd, buf, sizeof buf);
			if (n > 0) {
				int mode = u.q.mode, sort = u.q.sort, paused = u.paused;
				uint32_t det = u.detail_func;
				quit = ui_keys(&u, buf, (size_t)n);
				/* a new view is computed at once, not at the next tick */
				if (mode != (int)u.q.mode || sort != (int)u.q.sort || det != u.detail_func ||
				    (!u.editing && !u.paused) || paused != u.paused) {
					if (!u.paused || mode != (int)u.q.mode || sort != (int)u.q.sort ||
					    det != u.detail_func)
						ui_compute(&u);
				}
				redraw = 1;
			} else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
				quit = 1; /* the terminal went away */
			}
		}
	}
	tty_restore();
	if (u.tr)
		tracer_stop(u.tr, NULL, 0);
	while (u.gone) {
		struct tracer *t = u.gone;
		u.gone = t->next;
		tracer_stop(t, NULL, 0);
	}
	if (saved_cmd[0])
		fprintf(stderr, "plive: probe set: %s\n", saved_cmd);
	free(u.pts);
	sp_live_table_release(&u.t);
	if (u.have_re)
		regfree(&u.re);
	if (sp_live_ended(l) == 2) {
		sp_error_e(&r->err);
		return SP_EXIT_ERROR;
	}
	return SP_EXIT_OK;
}

/* ---- plain tables (not a terminal) ---- */

static int print_table(struct sp_live *l, struct opts *o, struct sp_live_table *t, int first)
{
	struct sp_live_query q = { o->mode, o->sort, NULL, 0 };
	sp_live_compute(l, &q, t);
	struct sp_live_look look = { 0, o->rows > 0 ? o->rows + 4 : 0, 0, -1, 0, 0, "plive", NULL, NULL };
	struct sp_buf b = SP_BUF_INIT;
	if (!first)
		sp_buf_addc(&b, '\n');
	sp_live_render(l, t, &look, &b);
	fwrite(b.p, 1, b.len, stdout);
	sp_buf_release(&b);
	fflush(stdout);
	return ferror(stdout) ? -1 : 0;
}

static int run_plain(struct sp_live *l, struct opts *o, struct reader *r)
{
	struct sp_live_table t;
	memset(&t, 0, sizeof t);
	/* A file read at --speed 0 prints at its end only: the same table
	 * every time. */
	int at_end_only = o->speed_set && o->speed == 0 && o->file && strcmp(o->file, "-");
	double start = sp_mono_s(), next = start + o->interval;
	int first = 1, rc = SP_EXIT_OK;
	for (;;) {
		int ended = sp_live_ended(l);
		if (ended) {
			/* no table after a read error: it would pass for the
			 * whole input */
			if (ended == 2) {
				sp_error_e(&r->err);
				rc = SP_EXIT_ERROR;
			} else if (print_table(l, o, &t, first) < 0) {
				rc = SP_EXIT_ERROR;
			}
			break;
		}
		double now = sp_mono_s();
		/* plive -p/-- COMMAND: pcollect takes a while to start (kernel
		 * symbols, a loaded machine); the first interval counts from
		 * its first samples (waiting up to 10 s for them) */
		if (!at_end_only && now >= next && r->coll && first && now - start < 10 && !sp_live_samples(l)) {
			next = now + o->interval;
		} else if (!at_end_only && now >= next) {
			if (print_table(l, o, &t, first) < 0) {
				rc = SP_EXIT_ERROR;
				break;
			}
			first = 0;
			if (o->once) {
				/* The rest of a FILE is read at once: a truncated or
				 * corrupt one is said, as every reader says it. */
				if (o->file && strcmp(o->file, "-")) {
					sp_live_unpace(l);
					while (!sp_live_ended(l)) {
						struct pollfd pf = { wake_pipe[0], POLLIN, 0 };
						char junk[64];
						if (poll(&pf, 1, 100) > 0 && read(wake_pipe[0], junk, sizeof junk) < 0) {
							/* EAGAIN */
						}
					}
					if (sp_live_ended(l) == 2) {
						sp_error_e(&r->err);
						rc = SP_EXIT_ERROR;
					}
				}
				break;
			}
			next = now + o->interval;
		}
		struct pollfd pf = { wake_pipe[0], POLLIN, 0 };
		int ms = at_end_only ? -1 : (int)((next - sp_mono_s()) * 1000) + 1;
		if (poll(&pf, 1, ms < 0 && !at_end_only ? 0 : ms) > 0) {
			char junk[64];
			if (read(wake_pipe[0], junk, sizeof junk) < 0) {
				/* EAGAIN */
			}
		}
	}
	sp_live_table_release(&t);
	return rc;
}

/* ---- the collector: pcollect as a child, its stream on our stdin ---- */

struct collector {
	pid_t pid;
	struct tee tee; /* -o FILE */
	FILE *err; /* its standard error (and COMMAND's output), shown at the end */
	int status;
};

/* pcollect beside our own executable (the build's bin/, an install's
 * bindir), else the one on PATH. */
static void collector_path(char *buf, size_t n)
{
	ssize_t len = readlink("/proc/self/exe", buf, n - 16);
	if (len > 0) {
		buf[len] = 0;
		char *slash = strrchr(buf, '/');
		if (slash) {
			snprintf(slash + 1, n - (size_t)(slash + 1 - buf), "pcollect");
			if (access(buf, X_OK) == 0)
				return;
		}
	}
	snprintf(buf, n, "pcollect");
}

static int collector_start(struct collector *c, const struct opts *o)
{
	char path[4096];
	collector_path(path, sizeof path);
	size_t ncmd = 0;
	while (o->cmd && o->cmd[ncmd])
		ncmd++;
	char **args = sp_xcalloc(ncmd + 8, sizeof *args);
	size_t k = 0;
	args[k++] = path;
	if (o->freq) {
		args[k++] = "-F";
		args[k++] = (char *)o->freq;
	}
	if (o->pid) {
		args[k++] = "-p";
		args[k++] = (char *)o->pid;
	} else {
		args[k++] = "--";
		for (size_t i = 0; i < ncmd; i++)
			args[k++] = o->cmd[i];
	}
	int fd[2];
	if (!(c->err = tmpfile()) || pipe(fd) < 0) {
		sp_error("cannot start pcollect: %s", strerror(errno));
		free(args);
		return -1;
	}
	fflush(NULL);
	c->pid = fork();
	if (c->pid < 0) {
		sp_error("cannot start pcollect: %s", strerror(errno));
		free(args);
		return -1;
	}
	if (c->pid == 0) {
		/* stdin: nothing (keys are plive's); stdout: the stream; stderr:
		 * kept for the end, off the screen; plive killed: it ends as on q */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		int null = open("/dev/null", O_RDONLY);
		if (null >= 0)
			dup2(null, STDIN_FILENO);
		dup2(fd[1], STDOUT_FILENO);
		dup2(fileno(c->err), STDERR_FILENO);
		close(fd[0]);
		close(fd[1]);
		execvp(path, args);
		dprintf(STDERR_FILENO, "plive: cannot run %s: %s\n", path, strerror(errno));
		_exit(127);
	}
	free(args);
	close(fd[1]);
	if (rec.out) {
		char msg[512];
		int r = tee_start(&c->tee, fd[0], rec_part(), msg, sizeof msg);
		if (r < 0) {
			sp_error("%s", msg);
			return -1;
		}
		fd[0] = r;
	}
	if (dup2(fd[0], STDIN_FILENO) < 0) {
		sp_error("cannot read pcollect's output: %s", strerror(errno));
		return -1;
	}
	close(fd[0]);
	return 0;
}

/* The process pcollect samples: -p PID, or the COMMAND it started (its
 * child). */
static pid_t collector_target(struct collector *c, const struct opts *o)
{
	if (o->pid)
		return (pid_t)atol(o->pid);
	char path[64];
	snprintf(path, sizeof path, "/proc/%ld/task/%ld/children", (long)c->pid, (long)c->pid);
	FILE *f = fopen(path, "r");
	long pid = 0;
	if (f) {
		if (fscanf(f, "%ld", &pid) != 1)
			pid = 0;
		fclose(f);
	}
	return (pid_t)pid;
}

/* The last line pcollect wrote, for the screen when the stream failed. */
static void collector_last_line(struct collector *c, char *buf, size_t n)
{
	buf[0] = 0;
	fflush(c->err);
	rewind(c->err);
	char line[1024];
	while (fgets(line, sizeof line, c->err))
		if (line[0] != '\n')
			snprintf(buf, n, "%s", line);
	buf[strcspn(buf, "\n")] = 0;
	fseek(c->err, 0, SEEK_END);
}

/* Stops pcollect (SIGTERM: it detaches, ends COMMAND, finishes the stream)
 * and waits for it; then its messages go to our standard error. */
static void collector_finish(struct collector *c)
{
	if (c->pid > 0) {
		kill(c->pid, SIGTERM);
		while (waitpid(c->pid, &c->status, 0) < 0 && errno == EINTR)
			;
	}
	tee_finish(&c->tee);
	fflush(c->err);
	rewind(c->err);
	char buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof buf, c->err)) > 0)
		if (fwrite(buf, 1, n, stderr) != n)
			break;
	fclose(c->err);
}

static int opt_secs(const char *opt, const char *val, double min, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(val, &end);
	if (errno || end == val || *end || !isfinite(v) || v < min || v > 1e9) {
		sp_usage_error(synopsis, "%s: '%s' is not a number of seconds (at least %g)", opt, val, min);
		return -1;
	}
	*out = v;
	return 0;
}

static int cmd_plive(int argc, char **argv)
{
	enum { O_EWMA = 256, O_SPEED, O_ONCE, O_WEIGHT };
	static const struct option longopts[] = {
		{ "interval", required_argument, NULL, 'i' },
		{ "window", required_argument, NULL, 'w' },
		{ "ewma", required_argument, NULL, O_EWMA },
		{ "all", no_argument, NULL, 'a' },
		{ "speed", required_argument, NULL, O_SPEED },
		{ "sort", required_argument, NULL, 's' },
		{ "top", required_argument, NULL, 'n' },
		{ "rows", required_argument, NULL, 'n' },
		{ "once", no_argument, NULL, O_ONCE },
		{ "weight", required_argument, NULL, O_WEIGHT },
		{ "format", required_argument, NULL, 'f' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "pid", required_argument, NULL, 'p' },
		{ "freq", required_argument, NULL, 'F' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		SP_LONGOPTS_COMMON,
		{ NULL, 0, NULL, 0 },
	};
	struct opts o;
	memset(&o, 0, sizeof o);
	o.interval = 1;
	o.window = 10;
	o.ewma = 30;
	o.rows = 20;
	o.mode = SP_LIVE_WINDOW;
	int c;
	unsigned long ul;
	/* plive [options] -- COMMAND: the options end at "--" */
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			o.cmd = argv + i + 1;
			argc = i;
			break;
		}
	while ((c = getopt_long(argc, argv, "i:w:as:n:f:qp:F:o:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			if (opt_secs("--interval", optarg, 0.05, &o.interval) < 0)
				return SP_EXIT_ERROR;
			break;
		case 'w':
			if (opt_secs("--window", optarg, 0.001, &o.window) < 0)
				return SP_EXIT_ERROR;
			o.mode = SP_LIVE_WINDOW;
			break;
		case O_EWMA:
			if (opt_secs("--ewma", optarg, 0.001, &o.ewma) < 0)
				return SP_EXIT_ERROR;
			o.mode = SP_LIVE_EWMA;
			break;
		case 'a': o.mode = SP_LIVE_ALL; break;
		case O_SPEED:
			if (opt_secs("--speed", optarg, 0, &o.speed) < 0)
				return SP_EXIT_ERROR;
			o.speed_set = 1;
			break;
		case 's':
			if (!strcmp(optarg, "own"))
				o.sort = SP_LIVE_SORT_OWN;
			else if (!strcmp(optarg, "total"))
				o.sort = SP_LIVE_SORT_TOTAL;
			else if (!strcmp(optarg, "name"))
				o.sort = SP_LIVE_SORT_NAME;
			else
				return sp_usage_error(synopsis, "--sort must be own, total or name, not '%s'", optarg);
			break;
		case 'n':
			if (sp_opt_uint("--top", optarg, &ul) < 0)
				return SP_EXIT_ERROR;
			o.rows = ul > 1000000 ? 1000000 : (int)ul;
			break;
		case O_ONCE: o.once = 1; break;
		case 'f':
			if (sp_opt_format(synopsis, optarg, NULL, &o.format) < 0)
				return SP_EXIT_ERROR;
			break;
		case 'q': o.quiet = 1; break;
		case O_WEIGHT: o.weight = optarg; break;
		case 'p':
			if (sp_opt_uint("--pid", optarg, &ul) < 0)
				return SP_EXIT_ERROR;
			o.pid = optarg;
			break;
		case 'F':
			if (sp_opt_uint("--freq", optarg, &ul) < 0)
				return SP_EXIT_ERROR;
			o.freq = optarg;
			break;
		case 'o': rec.out = optarg; break;
		case 'h': fputs(synopsis, stdout); return SP_EXIT_OK;
		case 'V': return sp_version();
		case SP_OPT_PARTIAL: o.read.partial = 1; break;
		default: return sp_usage_error(synopsis, NULL);
		}
	}
	if (argc - optind > 1)
		return sp_usage_error(synopsis, "one input at a time (%d given)", argc - optind);
	o.file = optind < argc ? argv[optind] : NULL;
	if (o.cmd && !o.cmd[0])
		return sp_usage_error(synopsis, "no COMMAND after '--'");
	if ((o.pid || o.cmd) && o.file)
		return sp_usage_error(synopsis, "give -p PID, -- COMMAND or FILE, not two of them");
	if (o.pid && o.cmd)
		return sp_usage_error(synopsis, "give -p PID or -- COMMAND, not both");
	if (o.freq && !o.pid && !o.cmd)
		return sp_usage_error(synopsis, "-F needs -p PID or -- COMMAND (plive runs pcollect)");
	if (rec.out && !o.pid && !o.cmd)
		return sp_usage_error(synopsis, "-o needs -p PID or -- COMMAND (plive records what its pcollect reads)");
	if (rec.out)
		signal(SIGPIPE, SIG_IGN); /* a tee whose reader stopped goes on into the file */
	struct collector coll;
	memset(&coll, 0, sizeof coll);
	if ((o.pid || o.cmd) && collector_start(&coll, &o) < 0)
		return SP_EXIT_ERROR;
	if (!coll.pid && (!o.file || !strcmp(o.file, "-")) && isatty(STDIN_FILENO))
		return sp_usage_error(synopsis, "standard input is a terminal: pipe a stream into plive "
					       "(pcollect -p PID | plive) or give a FILE");
	o.warn.quiet = o.quiet;
	o.read.warn = sp_print_warning;
	o.read.warn_ctx = &o.warn;

	int interactive = !o.once && isatty(STDOUT_FILENO);
	if (interactive && (tty_fd = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NONBLOCK)) < 0)
		interactive = 0;
	if (pipe(wake_pipe) < 0) {
		sp_error("pipe: %s", strerror(errno));
		return SP_EXIT_ERROR;
	}
	fcntl(wake_pipe[0], F_SETFL, O_NONBLOCK);
	fcntl(wake_pipe[1], F_SETFL, O_NONBLOCK);
	/* Line warnings would scribble over the screen. */
	if (interactive)
		o.read.warn = NULL;

	struct sp_live *l = sp_live_new((uint64_t)(o.window * 1e9), (uint64_t)(o.ewma * 1e9));
	sp_live_set_weight(l, o.weight);
	struct reader r;
	memset(&r, 0, sizeof r);
	r.l = l;
	r.o = &o;
	r.wake = wake_pipe[1];
	pthread_t th;
	if (pthread_create(&th, NULL, reader_main, &r) != 0) {
		sp_error("cannot start the reader thread");
		sp_live_free(l);
		return SP_EXIT_ERROR;
	}
	r.coll = coll.pid ? &coll : NULL;
	int rc = interactive ? run_tty(l, &o, &r) : run_plain(l, &o, &r);
	if (coll.pid) {
		/* pcollect finishes its stream; the reader reads it to the end */
		collector_finish(&coll);
		pthread_join(th, NULL);
		sp_live_free(l);
		if (rec_merge() < 0 && rc == SP_EXIT_OK)
			rc = SP_EXIT_ERROR;
		if (WIFEXITED(coll.status) && WEXITSTATUS(coll.status) == SP_EXIT_ERROR && rc == SP_EXIT_OK)
			rc = SP_EXIT_ERROR; /* it said why */
		else if (WIFEXITED(coll.status) && WEXITSTATUS(coll.status) == 127)
			rc = SP_EXIT_ERROR;
		return rc;
	}
	if (sp_live_ended(l)) {
		pthread_join(th, NULL);
		sp_print_bad_lines(&o.read);
		sp_live_free(l);
	} else {
		/* The reader may be blocked on its input: quitting closes that
		 * input (the process exits), which tells the writer upstream
		 * (pcollect stops and detaches).  The reader's memory goes
		 * with the process. */
		sp_live_stop(l);
		pthread_detach(th);
		fflush(stdout);
		_exit(ferror(stdout) && rc == SP_EXIT_OK ? SP_EXIT_ERROR : rc);
	}
	return rc;
}

int main(int argc, char **argv) { return sp_cmd_run("plive", cmd_plive, argc, argv); }
