/* pcollect — sample the native stacks of a running process (-p PID) or of
 * a command it launches, and write them as the binary stream.
 *
 * Wiring only: perfev.h samples and parses, unwind.h unwinds, symbols.h
 * names frames, the stream writer writes.  This file keeps the table of
 * threads (names, filter), turns a sample's addresses into a stack node
 * (with a cache of whole stacks) and runs the loop and the stop logic. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <regex.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "perfev.h"
#include "procmaps.h"
#include "snapcmd.h"
#include "snapshot.h"
#include "stream.h"
#include "symbols.h"
#include "unwind.h"

static const char synopsis[] =
	"usage: pcollect [options] -p PID\n"
	"       pcollect [options] [--] COMMAND [ARG...]\n"
	"       pcollect --snapshot [-n COUNT -i SECONDS] -p PID   (see pcollect --snapshot -h)\n"
	"Sample the native stacks of every thread of a running process, or of a command\n"
	"from its first instruction, and write them as the stackpipe binary stream\n"
	"(pipe it into pfold, psvg, pspeedscope...).  Frame pointers are not needed.\n"
	"\n"
	"  -p, --pid=PID           attach to process PID (all its threads, and new ones)\n"
	"  -F, --freq=HZ           samples per second per thread (default 99)\n"
	"  -d, --duration=SECONDS  stop after SECONDS (default: when the target exits,\n"
	"                          or on SIGINT/SIGTERM)\n"
	"  -o, --output=FILE       write to FILE instead of standard output\n"
	"  -t, --threads=REGEX     keep only threads whose name matches REGEX (extended)\n"
	"      --call-graph=MODE   dwarf[,BYTES] (default, BYTES of stack per sample,\n"
	"                          default 16384), fp (frame pointers) or none\n"
	"      --lines             add file:line to frames (one frame per source line)\n"
	"      --no-inline         do not show functions inlined by the compiler\n"
	"      --no-kernel         user-mode samples and frames only\n"
	"      --buffer=MIB        sample buffer per CPU (default 8 for dwarf, 1 otherwise)\n"
	"  -q, --quiet             no status line, summary or warnings\n"
	"  -v, --verbose           print a summary at the end\n"
	"      --snapshot          where is every thread now, and who holds the lock it\n"
	"                          waits for (pcollect --snapshot -h for its options)\n"
	"  -h, --help              show this help\n"
	"\n"
	"Needs perf_event_open: root, CAP_PERFMON, or kernel.perf_event_paranoid <= 2 for\n"
	"your own processes (kernel frames need <= 1); attaching needs ptrace access.\n"
	"Exit status: 0 ok, 2 error; when it launched COMMAND, the command's own status\n"
	"(128+N if signal N ended it, 127 if not found, 126 if it could not run), or 0 if\n"
	"pcollect ended it (-d, SIGINT, SIGTERM).\n";

#define MAX_PCS 256
#define MAX_FRAMES 1024

/* ---- state ---- */

struct thr {
	int pid, tid;
	uint32_t name;   /* string id */
	uint32_t id;     /* profile thread id for (pid, tid, name) */
	int keep;        /* the -t filter matched the current name */
};

struct stack_ent {
	uint64_t hash, serial, gen;
	uint32_t nk, n; /* kernel pcs, all pcs */
	uint32_t off;   /* pcs in the arena */
	uint32_t node;
};

struct opts {
	int pid;
	unsigned freq;
	double duration;
	const char *output;
	const char *threads;
	enum sp_callgraph cg;
	unsigned stack_bytes;
	int lines, no_inline, no_kernel, quiet, verbose;
	unsigned long buffer_mib;
};

struct coll {
	struct opts o;
	struct sp_profile *p;
	struct sp_sink *sink;
	struct sp_stream_writer *w;
	struct sp_symbols *syms;
	struct sp_procs *procs;
	struct sp_perfev *ev;
	regex_t re;
	int have_re;
	uint32_t event;
	/* threads by tid */
	struct thr *thr;
	size_t nthr, capthr;
	struct sp_u64map thridx; /* tid -> index + 1 */
	/* whole-stack cache */
	struct stack_ent *ents;
	size_t nents, capents;
	struct sp_u64map stackidx; /* hash -> index + 1 */
	uint64_t *pcarena;
	size_t npc, cappc;
	/* stats */
	uint64_t written, filtered, truncated, kthread, unwound_frames;
	int write_failed;
	struct sp_err werr;
	uint32_t *fr;
	size_t capfr;
};

static volatile sig_atomic_t stop_signal;
static void on_stop(int sig) { stop_signal = sig; }
static void on_child(int sig) { (void)sig; }

static double mono_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* ---- threads ---- */

static struct thr *thread_get(struct coll *c, int tid)
{
	int found;
	uint32_t i = sp_u64map_get(&c->thridx, (uint64_t)(uint32_t)tid, &found);
	return found && i ? &c->thr[i - 1] : NULL;
}

static void thread_set(struct coll *c, int pid, int tid, const char *name)
{
	struct thr *t = thread_get(c, tid);
	if (!t) {
		if (c->nthr == c->capthr) {
			c->capthr = c->capthr ? 2 * c->capthr : 64;
			c->thr = sp_xrealloc(c->thr, c->capthr * sizeof *c->thr);
		}
		t = &c->thr[c->nthr++];
		int found;
		*sp_u64map_slot(&c->thridx, (uint64_t)(uint32_t)tid, &found) = (uint32_t)c->nthr;
	}
	t->pid = pid;
	t->tid = tid;
	t->name = sp_str_intern(c->p, name, strlen(name));
	/* A renamed thread is a new (pid, tid, name) in the profile: the
	 * stream writes a THREAD record for it before its next sample. */
	t->id = sp_thread_intern(c->p, pid, tid, t->name);
	t->keep = !c->have_re || regexec(&c->re, name, 0, NULL, 0) == 0;
}

static void read_comm(int pid, int tid, char *out, size_t n)
{
	char path[96];
	snprintf(path, sizeof path, "/proc/%d/task/%d/comm", pid, tid);
	out[0] = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t r = read(fd, out, n - 1);
		close(fd);
		if (r > 0) {
			out[r] = 0;
			out[strcspn(out, "\n")] = 0;
		}
	}
	if (!out[0])
		snprintf(out, n, "[%d]", tid);
}

/* The process (thread group) of a thread id, from /proc/TID/status. */

static void on_task(void *ctx, int pid, int tid)
{
	char name[64];
	read_comm(pid, tid, name, sizeof name);
	thread_set(ctx, pid, tid, name);
}

/* ---- record handlers ---- */

static void free_unwind(void *u) { sp_unwind_free(u); }

static void h_comm(void *ctx, uint32_t pid, uint32_t tid, const char *comm, int exec, uint64_t time)
{
	struct coll *c = ctx;
	if (exec)
		sp_procs_exec(c->procs, (int)pid);
	thread_set(c, (int)pid, (int)tid, comm);
}

static void h_mmap(void *ctx, uint32_t pid, uint32_t tid, const struct sp_map *m, uint64_t time)
{
	struct coll *c = ctx;
	if (!(m->prot & 4)) /* PROT_EXEC: only code matters */
		return;
	sp_maps_add(sp_procs_get(c->procs, (int)pid, 1)->maps, m);
}

static void h_fork(void *ctx, uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid, uint64_t time)
{
	struct coll *c = ctx;
	if (pid != ppid)
		sp_procs_fork(c->procs, (int)ppid, (int)pid);
	/* A new thread or process starts with its creator's name. */
	struct thr *parent = thread_get(c, (int)ptid);
	char name[64];
	if (parent)
		snprintf(name, sizeof name, "%s", sp_str(c->p, parent->name));
	else
		read_comm((int)pid, (int)tid, name, sizeof name);
	thread_set(c, (int)pid, (int)tid, name);
}

static void h_exit(void *ctx, uint32_t pid, uint32_t tid, uint64_t time)
{
	struct coll *c = ctx;
	/* The process is gone: free its unwinder (libdwfl state, DWARF) but
	 * keep its maps, in case a late sample still needs them. */
	if (pid == tid) {
		struct sp_proc *pr = sp_procs_get(c->procs, (int)pid, 0);
		if (pr && pr->user) {
			sp_unwind_free(pr->user);
			pr->user = NULL;
		}
	}
}

static void add_frame(struct coll *c, size_t *n, uint32_t f)
{
	if (*n == c->capfr) {
		c->capfr = c->capfr ? 2 * c->capfr : 256;
		c->fr = sp_xrealloc(c->fr, c->capfr * sizeof *c->fr);
	}
	c->fr[(*n)++] = f;
}

/* The stack node of the addresses pcs[0..n): nk kernel addresses (innermost
 * first), then the user ones (innermost first).  Whole stacks are cached by
 * their addresses, so a repeated stack costs one hash. */
static uint32_t stack_node(struct coll *c, struct sp_proc *pr, struct sp_unwind *u, const uint64_t *pcs, uint32_t nk,
			   uint32_t n)
{
	uint64_t gen = pr ? sp_maps_generation(pr->maps) : 0, serial = pr ? pr->serial : 0;
	uint64_t h = sp_hash_seed(pcs, n * sizeof *pcs, sp_mix64(serial * 0x9E3779B97F4A7C15ULL ^ gen) ^ nk);
	uint64_t key = h == UINT64_MAX ? h - 1 : h;
	for (;;) {
		int found;
		uint32_t *slot = sp_u64map_slot(&c->stackidx, key, &found);
		if (!found)
			break;
		const struct stack_ent *e = &c->ents[*slot - 1];
		if (e->hash == h && e->serial == serial && e->gen == gen && e->nk == nk && e->n == n &&
		    !memcmp(c->pcarena + e->off, pcs, n * sizeof *pcs))
			return e->node;
		key = sp_mix64(key + 1);
		if (key == UINT64_MAX)
			key--;
	}
	/* Frames root first: user outermost .. user leaf, then kernel. */
	size_t nf = 0;
	for (uint32_t i = n; i-- > nk;) {
		const uint32_t *f;
		size_t k = sp_symbols_user(c->syms, u, pr ? pr->maps : NULL, pr ? pr->pid : -1, pcs[i], &f);
		while (k--)
			add_frame(c, &nf, f[k]);
	}
	for (uint32_t i = nk; i-- > 0;) {
		const uint32_t *f;
		sp_symbols_kernel(c->syms, pcs[i], &f);
		add_frame(c, &nf, f[0]);
	}
	uint32_t node = 0;
	for (size_t i = 0; i < nf; i++)
		node = sp_node_intern(c->p, node, c->fr[i]);
	if (c->nents == c->capents) {
		c->capents = c->capents ? 2 * c->capents : 1024;
		c->ents = sp_xrealloc(c->ents, c->capents * sizeof *c->ents);
	}
	if (c->npc + n > c->cappc) {
		while (c->npc + n > c->cappc)
			c->cappc = c->cappc ? 2 * c->cappc : 8192;
		c->pcarena = sp_xrealloc(c->pcarena, c->cappc * sizeof *c->pcarena);
	}
	memcpy(c->pcarena + c->npc, pcs, n * sizeof *pcs);
	c->ents[c->nents] = (struct stack_ent){ h, serial, gen, nk, n, (uint32_t)c->npc, node };
	c->npc += n;
	c->nents++;
	int found;
	*sp_u64map_slot(&c->stackidx, key, &found) = (uint32_t)c->nents;
	return node;
}

static void h_sample(void *ctx, const struct sp_perf_sample *s)
{
	struct coll *c = ctx;
	struct thr *t = thread_get(c, (int)s->tid);
	if (!t) {
		/* A thread we have not heard of (created while attaching). */
		on_task(c, (int)s->pid, (int)s->tid);
		t = thread_get(c, (int)s->tid);
	}
	if (!t->keep) {
		c->filtered++;
		return;
	}
	uint64_t pcs[MAX_PCS];
	uint32_t n = 0, nk = 0;
	for (uint32_t i = 0; i < s->nkernel && n < MAX_PCS / 2; i++)
		pcs[n++] = i ? s->kernel[i] - 1 : s->kernel[i];
	nk = n;
	struct sp_proc *pr = sp_procs_get(c->procs, (int)s->pid, 1);
	struct sp_unwind *u = NULL;
	if (c->o.cg == SP_CG_DWARF || c->o.cg == SP_CG_FP) {
		if (!pr->user)
			pr->user = sp_unwind_new(pr->pid, c->syms);
		u = pr->user;
		sp_unwind_sync(u, pr->maps);
	}
	if (c->o.cg == SP_CG_DWARF && s->has_regs) {
		struct sp_unwind_result r =
			sp_unwind_stack(u, (int)s->tid, s->regs, s->stack, s->stack_len, 0, pcs + n, MAX_PCS - (int)n);
		n += (uint32_t)r.n;
		c->truncated += r.truncated;
	} else if (c->o.cg == SP_CG_FP && s->nuser) {
		for (uint32_t i = 0; i < s->nuser && n < MAX_PCS; i++)
			pcs[n++] = i ? s->user[i] - 1 : s->user[i];
	} else if (c->o.cg == SP_CG_DWARF && !s->has_regs && !nk) {
		c->kthread++; /* no user context: a kernel thread */
		return;
	} else if (!nk) {
		/* No callchain: the sampled instruction, user or kernel. */
		pcs[n++] = s->ip;
		if (s->ip >= (1ULL << 63))
			nk = n;
	}
	c->unwound_frames += n - nk;
	struct sp_sample smp;
	memset(&smp, 0, sizeof smp);
	smp.stack = stack_node(c, pr, u, pcs, nk, n);
	smp.thread = t->id;
	smp.event = c->event;
	smp.time = s->time;
	smp.values[0] = 1;
	smp.values[1] = (double)s->period;
	if (c->write_failed)
		return;
	if (c->sink->sample(c->sink, c->p, &smp, &c->werr) < 0)
		c->write_failed = 1;
	c->written++;
}

/* ---- options ---- */

static int parse_opts(struct opts *o, int argc, char **argv)
{
	enum { O_CG = 256, O_LINES, O_NOINLINE, O_NOKERNEL, O_BUFFER };
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "freq", required_argument, NULL, 'F' },
		{ "duration", required_argument, NULL, 'd' },
		{ "output", required_argument, NULL, 'o' },
		{ "threads", required_argument, NULL, 't' },
		{ "call-graph", required_argument, NULL, O_CG },
		{ "lines", no_argument, NULL, O_LINES },
		{ "no-inline", no_argument, NULL, O_NOINLINE },
		{ "no-kernel", no_argument, NULL, O_NOKERNEL },
		{ "buffer", required_argument, NULL, O_BUFFER },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long v;
	char *end;
	int ch;
	opterr = 0; /* our own one-line reasons */
	while ((ch = getopt_long(argc, argv, "+:p:F:d:o:t:qvh", longopts, NULL)) != -1) {
		switch (ch) {
		case 'p':
			if (sp_opt_uint("--pid", optarg, &v) < 0 || v < 1 || v > 0x3fffffff)
				return sp_usage_error(synopsis, "-p needs a process id, not '%s'", optarg), -1;
			o->pid = (int)v;
			break;
		case 'F':
			if (sp_opt_uint("--freq", optarg, &v) < 0)
				return -1;
			if (v < 1 || v > 100000)
				return sp_usage_error(synopsis, "-F must be between 1 and 100000 Hz, not %lu", v), -1;
			o->freq = (unsigned)v;
			break;
		case 'd':
			errno = 0;
			o->duration = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(o->duration > 0) || !isfinite(o->duration))
				return sp_usage_error(synopsis, "-d needs a positive number of seconds, not '%s'", optarg),
				       -1;
			break;
		case 'o': o->output = optarg; break;
		case 't': o->threads = optarg; break;
		case O_CG:
			if (!strcmp(optarg, "fp")) {
				o->cg = SP_CG_FP;
			} else if (!strcmp(optarg, "none")) {
				o->cg = SP_CG_NONE;
			} else if (!strncmp(optarg, "dwarf", 5) && (!optarg[5] || optarg[5] == ',')) {
				o->cg = SP_CG_DWARF;
				if (optarg[5]) {
					if (sp_opt_uint("--call-graph dwarf,", optarg + 6, &v) < 0)
						return -1;
					if (v < 64 || v > 65528)
						return sp_usage_error(synopsis, "the dwarf stack size must be between 64 "
									  "and 65528 bytes, not %lu", v), -1;
					o->stack_bytes = (unsigned)v & ~7u;
				}
			} else {
				return sp_usage_error(synopsis, "--call-graph must be dwarf[,BYTES], fp or none, not '%s'",
						      optarg), -1;
			}
			break;
		case O_LINES: o->lines = 1; break;
		case O_NOINLINE: o->no_inline = 1; break;
		case O_NOKERNEL: o->no_kernel = 1; break;
		case O_BUFFER:
			if (sp_opt_uint("--buffer", optarg, &v) < 0)
				return -1;
			if (v < 1 || v > 4096)
				return sp_usage_error(synopsis, "--buffer must be between 1 and 4096 MiB, not %lu", v), -1;
			o->buffer_mib = v;
			break;
		case 'q': o->quiet = 1; break;
		case 'v': o->verbose = 1; break;
		case 'h': fputs(synopsis, stdout); return 1;
		case ':': return sp_usage_error(synopsis, "option '%s' needs a value", argv[optind - 1]), -1;
		default:
			if (optopt)
				return sp_usage_error(synopsis, "unknown option '-%c'", optopt), -1;
			return sp_usage_error(synopsis, "unknown option '%s'", argv[optind - 1]), -1;
		}
	}
	if (o->pid && optind < argc)
		return sp_usage_error(synopsis, "give either -p PID or a command, not both"), -1;
	if (!o->pid && optind >= argc)
		return sp_usage_error(synopsis, "nothing to profile: give -p PID or a command"), -1;
	return 0;
}

/* ---- launch ---- */

struct child {
	pid_t pid;
	int go;   /* write end: one byte lets the child exec */
	int errp; /* read end: the child's errno if exec failed, EOF if it worked */
};

/* stdout_to_stderr: the stream goes to our standard output, so the
 * command's own output must not: it goes to standard error instead. */
static int spawn(struct child *ch, char **argv, int stdout_to_stderr)
{
	int go[2], er[2];
	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(er, O_CLOEXEC) < 0)
		return -1;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(go[1]);
		close(er[0]);
		char b;
		/* Wait until the sampling events are open: then the command is
		 * sampled from its first instruction (enable_on_exec). */
		if (read(go[0], &b, 1) != 1)
			_exit(127);
		signal(SIGPIPE, SIG_DFL);
		if (stdout_to_stderr && dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
			_exit(126);
		execvp(argv[0], argv);
		int e = errno;
		if (write(er[1], &e, sizeof e) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(er[1]);
	ch->pid = pid;
	ch->go = go[1];
	ch->errp = er[0];
	return 0;
}

static int exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return SP_EXIT_ERROR;
}

/* ---- the command ---- */

static void status_line(struct coll *c, double elapsed, int final)
{
	const struct sp_perfev_stats *st = sp_perfev_stats(c->ev);
	if (final) {
		fputs("\r\033[K", stderr);
		return;
	}
	fprintf(stderr, "\rpcollect: %.1f s, %llu samples, %zu threads, %llu lost\033[K", elapsed,
		(unsigned long long)c->written, c->nthr, (unsigned long long)st->lost);
}

static char *join_args(char **argv)
{
	struct sp_buf b = SP_BUF_INIT;
	for (int i = 0; argv[i]; i++) {
		if (i)
			sp_buf_addc(&b, ' ');
		sp_buf_adds(&b, argv[i]);
	}
	sp_buf_cstr(&b);
	return b.p;
}

static int cmd_pcollect(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--snapshot"))
			return sp_snapshot_main(argc, argv);
	struct coll c;
	memset(&c, 0, sizeof c);
	c.o.freq = 99;
	c.o.stack_bytes = 16384;
	int prc = parse_opts(&c.o, argc, argv);
	if (prc)
		return prc > 0 ? SP_EXIT_OK : SP_EXIT_ERROR;
	char **cmd = argv + optind;
	struct sp_err err;
	memset(&err, 0, sizeof err);

	if (c.o.threads) {
		int rc = regcomp(&c.re, c.o.threads, REG_EXTENDED | REG_NOSUB);
		if (rc) {
			char msg[256];
			regerror(rc, &c.re, msg, sizeof msg);
			return sp_usage_error(synopsis, "-t '%s': %s", c.o.threads, msg);
		}
		c.have_re = 1;
	}
	FILE *out = stdout;
	if (c.o.output && !(out = fopen(c.o.output, "w"))) {
		sp_error("%s: %s", c.o.output, strerror(errno));
		return SP_EXIT_ERROR;
	}
	if (sp_check_binary_stdout(out) < 0)
		return SP_EXIT_ERROR;
	if (c.o.pid && kill(c.o.pid, 0) < 0 && errno == ESRCH) {
		sp_error("no process %d", c.o.pid);
		return SP_EXIT_ERROR;
	}
	if (c.o.pid)
		c.o.pid = sp_proc_tgid(c.o.pid); /* -p TID means its process */

	struct sp_perfev_opts po = { c.o.freq, c.o.cg, c.o.stack_bytes, !c.o.no_kernel, 0, !c.o.pid };
	po.ring_bytes = (c.o.buffer_mib ? c.o.buffer_mib : c.o.cg == SP_CG_DWARF ? 8 : 1) << 20;
	if (!(c.ev = sp_perfev_new(&po, &err))) {
		sp_error_e(&err);
		return SP_EXIT_ERROR;
	}
	c.p = sp_profile_new();
	static const char *const values[] = { "samples", "period" };
	sp_profile_set_values(c.p, 2, values);
	sp_meta_add(c.p, "source", "pcollect");
	sp_meta_add(c.p, "event", "cpu-clock");
	char buf[64];
	snprintf(buf, sizeof buf, "%u", c.o.freq);
	sp_meta_add(c.p, "frequency", buf);
	sp_meta_add(c.p, "call-graph", c.o.cg == SP_CG_DWARF ? "dwarf" : c.o.cg == SP_CG_FP ? "fp" : "none");
	if (c.o.pid) {
		snprintf(buf, sizeof buf, "%d", c.o.pid);
		sp_meta_add(c.p, "pid", buf);
	} else {
		char *j = join_args(cmd);
		sp_meta_add(c.p, "command", j);
		free(j);
	}
	c.event = sp_str_intern(c.p, "cpu-clock", 9);
	c.w = sp_stream_writer_new(out, c.p);
	c.sink = sp_stream_writer_sink(c.w);
	struct sp_symbols_opts so = { c.o.lines, c.o.no_inline };
	c.syms = sp_symbols_new(c.p, &so);
	c.procs = sp_procs_new(free_unwind);
	sp_u64map_init(&c.thridx);
	sp_u64map_init(&c.stackidx);

	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_stop; /* no SA_RESTART: poll returns at once */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sa.sa_handler = on_child;
	sigaction(SIGCHLD, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	/* Kernel symbols are read before sampling starts, not in its midst. */
	if (!c.o.no_kernel)
		sp_symbols_load_kernel(c.syms);

	int rc = SP_EXIT_OK;
	struct child ch = { 0, -1, -1 };
	int child_status = 0, child_done = 0, we_ended_it = 0;
	if (c.o.pid) {
		int n = sp_perfev_add_process(c.ev, c.o.pid, on_task, &c, &err);
		if (n < 0) {
			sp_error_e(&err);
			rc = SP_EXIT_ERROR;
			goto out;
		}
		sp_perfev_enable(c.ev);
		/* Mappings made from now on arrive as MMAP2 records. */
		struct sp_proc *pr = sp_procs_get(c.procs, c.o.pid, 1);
		/* From a live thread: a zombie main thread (it called
		 * pthread_exit while the others run on) shows no maps. */
		if (sp_maps_load(pr->maps, sp_snap_live_tid(c.o.pid), 1, &err) < 0) {
			sp_error_e(&err);
			rc = SP_EXIT_ERROR;
			goto out;
		}
	} else {
		if (spawn(&ch, cmd, out == stdout) < 0) {
			sp_error("cannot start %s: %s", cmd[0], strerror(errno));
			rc = SP_EXIT_ERROR;
			goto out;
		}
		if (sp_perfev_add_task(c.ev, ch.pid, &err) != 0) {
			kill(ch.pid, SIGKILL);
			waitpid(ch.pid, NULL, 0);
			sp_error_e(&err);
			rc = SP_EXIT_ERROR;
			goto out;
		}
		on_task(&c, ch.pid, ch.pid);
		if (write(ch.go, "x", 1) != 1) {
			/* the child died already; waitpid tells why */
		}
		close(ch.go);
		int e = 0;
		ssize_t r;
		while ((r = read(ch.errp, &e, sizeof e)) < 0 && errno == EINTR)
			;
		close(ch.errp);
		if (r == (ssize_t)sizeof e) {
			waitpid(ch.pid, NULL, 0);
			sp_error("cannot run %s: %s", cmd[0], strerror(e));
			rc = e == ENOENT ? 127 : 126;
			goto out;
		}
	}

	struct sp_perf_handler hd = { &c, h_sample, h_comm, h_mmap, h_fork, h_exit };
	double t0 = mono_s(), last_status = 0, last_flush = t0;
	int show_status = !c.o.quiet && isatty(STDERR_FILENO);
	while (!stop_signal && !c.write_failed) {
		sp_perfev_wait(c.ev, 50);
		sp_perfev_read(c.ev, &hd, 0);
		double now = mono_s();
		if (now - last_flush >= 0.2) {
			/* Let a consumer downstream see samples as they come. */
			last_flush = now;
			if (sp_stream_writer_flush(c.w, &c.werr) < 0)
				c.write_failed = 1;
		}
		if (ch.pid) {
			if (waitpid(ch.pid, &child_status, WNOHANG) == ch.pid) {
				child_done = 1;
				break;
			}
		} else if (kill(c.o.pid, 0) < 0 && errno == ESRCH) {
			break;
		} else {
			/* A zombie (exited, not reaped by its parent) is gone too. */
			char path[64], st[256];
			snprintf(path, sizeof path, "/proc/%d/stat", c.o.pid);
			int fd = open(path, O_RDONLY | O_CLOEXEC);
			ssize_t r = fd >= 0 ? read(fd, st, sizeof st - 1) : -1;
			if (fd >= 0)
				close(fd);
			if (r > 0) {
				st[r] = 0;
				char *rp = strrchr(st, ')');
				if (rp && rp[1] == ' ' && (rp[2] == 'Z' || rp[2] == 'X'))
					break;
			}
		}
		if (c.o.duration && now - t0 >= c.o.duration)
			break;
		if (show_status && now - last_status >= 0.5) {
			last_status = now;
			status_line(&c, now - t0, 0);
		}
	}
	sp_perfev_disable(c.ev);
	sp_perfev_read(c.ev, &hd, 1);
	if (show_status)
		status_line(&c, 0, 1);
	if (ch.pid && !child_done) {
		/* Stopped by -d or a signal: end the command we started. */
		if (waitpid(ch.pid, &child_status, WNOHANG) != ch.pid) {
			kill(ch.pid, SIGTERM);
			double until = mono_s() + 2;
			while (waitpid(ch.pid, &child_status, WNOHANG) != ch.pid) {
				if (mono_s() > until) {
					kill(ch.pid, SIGKILL);
					waitpid(ch.pid, &child_status, 0);
					break;
				}
				usleep(10000);
			}
			we_ended_it = 1;
		}
		child_done = 1;
	}
	if (ch.pid) {
		snprintf(buf, sizeof buf, "%d", exit_code(child_status));
		sp_meta_add(c.p, "exit-status", buf);
		c.sink->meta(c.sink, c.p, &c.werr);
	}
	const struct sp_perfev_stats *st = sp_perfev_stats(c.ev);
	if (st->lost) {
		snprintf(buf, sizeof buf, "%llu", (unsigned long long)st->lost);
		sp_meta_add(c.p, "lost", buf);
		c.sink->meta(c.sink, c.p, &c.werr);
	}
	if (!c.write_failed && sp_stream_writer_finish(c.w, &c.werr) < 0)
		c.write_failed = 1;
	if (c.write_failed) {
		/* A reader that went away (| head) is not an error. */
		if (!strstr(c.werr.msg, strerror(EPIPE))) {
			sp_error_e(&c.werr);
			rc = SP_EXIT_ERROR;
		}
	}
	if (!c.o.quiet) {
		if (st->kernel_denied)
			sp_error("kernel frames are not available (kernel.perf_event_paranoid allows user-mode "
				 "sampling only; run as root for kernel frames): user frames only");
		else if (!c.o.no_kernel && sp_symbols_kernel_hidden(c.syms))
			sp_error("kernel addresses are hidden (kernel.kptr_restrict): kernel frames show as [unknown]");
		if (st->lost)
			sp_error("%llu samples lost: the sample buffer was full (use --buffer with more MiB or a "
				 "lower -F)", (unsigned long long)st->lost);
		if (st->throttled)
			sp_error("the kernel throttled sampling %llu times (kernel.perf_cpu_time_max_percent): "
				 "fewer samples than asked for", (unsigned long long)st->throttled);
	}
	if (c.o.verbose) {
		struct rusage ru;
		getrusage(RUSAGE_SELF, &ru);
		double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
			     (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
		sp_error("%llu samples of %zu threads in %zu processes, %.1f s; %llu filtered out, %llu lost, "
			 "%llu truncated stacks, %.1f frames per sample, %zu distinct stacks; collector CPU %.3f s",
			 (unsigned long long)c.written, c.nthr, sp_procs_count(c.procs), mono_s() - t0,
			 (unsigned long long)c.filtered, (unsigned long long)st->lost,
			 (unsigned long long)c.truncated, c.written ? (double)c.unwound_frames / (double)c.written : 0,
			 c.nents, cpu);
	}
	if (ch.pid && rc == SP_EXIT_OK && !we_ended_it) {
		rc = exit_code(child_status);
		if (rc && !c.o.quiet) {
			if (WIFSIGNALED(child_status))
				sp_error("%s was killed by signal %d", cmd[0], WTERMSIG(child_status));
			else
				sp_error("%s exited with status %d", cmd[0], rc);
		}
	}
out:
	if (out != stdout && fclose(out) != 0 && rc == SP_EXIT_OK) {
		sp_error("%s: %s", c.o.output, strerror(errno));
		rc = SP_EXIT_ERROR;
	}
	sp_perfev_free(c.ev);
	sp_procs_free(c.procs);
	sp_symbols_free(c.syms);
	sp_stream_writer_free(c.w);
	sp_profile_free(c.p);
	sp_u64map_release(&c.thridx);
	sp_u64map_release(&c.stackidx);
	free(c.thr);
	free(c.ents);
	free(c.pcarena);
	free(c.fr);
	if (c.have_re)
		regfree(&c.re);
	return rc;
}

int main(int argc, char **argv) { return sp_cmd_run("pcollect", cmd_pcollect, argc, argv); }
