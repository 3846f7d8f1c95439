/* pcollect --snapshot: options, the loop of snapshots at -i intervals,
 * signals and the exit status.  The work is in the library: snapshot.h
 * stops and copies, snapview.h unwinds, names and writes. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <regex.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "procmaps.h"
#include "snapshot.h"
#include "snapview.h"
#include "pcollect.h"

static const char sp_snapshot_synopsis[] =
	"usage: pcollect --snapshot [options] -p PID\n"
	"Stop every thread of process PID for a moment (milliseconds), copy its registers\n"
	"and stack, let it run again, then print each thread: tid, name, state, the system\n"
	"call it is blocked in and its stack with file:line.  A thread waiting for a mutex\n"
	"(or rwlock, or pthread_join) is shown with the thread that holds it and that\n"
	"thread's stack; chains are followed and cycles reported as deadlocks.\n"
	"\n"
	"  -p, --pid=PID           the process (a thread id means its process)\n"
	"  -t, --threads=REGEX     only threads whose name matches REGEX (extended)\n"
	"  -c, --count=N           take N snapshots (default 1)\n"
	"  -i, --interval=SECONDS  a snapshot every SECONDS (default 0.1)\n"
	"  -O, --output-format=F   text (default for one snapshot), folded, or stream (the\n"
	"                          binary stream, default with -c > 1): one sample per\n"
	"                          thread and snapshot, its state as a leaf frame such as\n"
	"                          [futex wait], [disk wait] or [running]; or json:\n"
	"                          one object per snapshot and line, each thread with its\n"
	"                          wait and its frames (and their locals)\n"
	"  -o, --output=FILE       write to FILE instead of standard output (through a\n"
	"                          temporary file: an error leaves FILE as it was)\n"
	"      --stack=BYTES       stack bytes copied per thread (default 262144; deeper\n"
	"                          frames are read from the running process afterwards)\n"
	"      --lines             file:line frames in folded and stream output\n"
	"      --no-inline         do not show functions inlined by the compiler\n"
	"      --python=off        CPython 3.8-3.13: do not put the Python frames (read\n"
	"                          while the threads are stopped: exact) in place of the\n"
	"                          interpreter's eval-loop frames (--python=merged: default)\n"
	"      --full-filenames    Python files by their full path, not relative to\n"
	"                          their sys.path entry (json/encoder.py)\n"
	"      --locals            under each frame its parameters and local variables:\n"
	"                          native frames' from DWARF, Python frames' read from\n"
	"                          the interpreter's memory (text and json output)\n"
	"  -v, --verbose           how long each thread was stopped; with --locals, the\n"
	"                          time the stop spent on values and what it left unread\n"
	"  -q, --quiet             no warnings\n"
	"  -V, --version           print the version\n"
	"  -h, --help              show this help\n"
	"\n"
	"Needs ptrace access to PID (same user and kernel.yama.ptrace_scope 0, or root).\n"
	"The target is always let go: on errors, on SIGINT/SIGTERM/SIGHUP, and even when\n"
	"pcollect is killed (PTRACE_SEIZE never sends it a SIGSTOP).\n";



struct sopts {
	int pid;
	const char *threads, *output;
	unsigned long count;
	double interval;
	enum sp_snapview_format format; /* 0: by -n */
	unsigned long stack;
	int lines, no_inline, verbose, quiet, no_python, full_filenames, locals;
};

static volatile sig_atomic_t stop_sig;
static void on_stop(int sig) { stop_sig = sig; }

static int parse(struct sopts *o, int argc, char **argv)
{
	enum { O_SNAP = 256, O_FORMAT, O_STACK, O_LINES, O_NOINLINE, O_PYTHON, O_FULLNAMES, O_LOCALS };
	static const struct option longopts[] = {
		{ "snapshot", no_argument, NULL, O_SNAP },
		{ "pid", required_argument, NULL, 'p' },
		{ "threads", required_argument, NULL, 't' },
		{ "count", required_argument, NULL, 'c' },
		{ "interval", required_argument, NULL, 'i' },
		{ "output-format", required_argument, NULL, 'O' },
		{ "output", required_argument, NULL, 'o' },
		{ "stack", required_argument, NULL, O_STACK },
		{ "lines", no_argument, NULL, O_LINES },
		{ "no-inline", no_argument, NULL, O_NOINLINE },
		{ "python", required_argument, NULL, O_PYTHON },
		{ "full-filenames", no_argument, NULL, O_FULLNAMES },
		{ "locals", no_argument, NULL, O_LOCALS },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *syn = sp_snapshot_synopsis;
	unsigned long v;
	char *end;
	int ch;
	opterr = 0;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "+:p:t:c:i:O:o:vqhV", longopts, NULL)) != -1) {
		switch (ch) {
		case O_SNAP: break;
		case 'p':
			if ((o->pid = pcollect_pid(optarg)) < 0)
				return sp_usage_error(syn, "-p needs a process id, not '%s'", optarg), -1;
			break;
		case 't': o->threads = optarg; break;
		case 'c':
			if (sp_opt_uint("--count", optarg, &v) < 0)
				return -1;
			if (v < 1)
				return sp_usage_error(syn, "-c needs at least 1 snapshot"), -1;
			o->count = v;
			break;
		case 'i':
			errno = 0;
			o->interval = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(o->interval >= 0) || !isfinite(o->interval))
				return sp_usage_error(syn, "-i needs a number of seconds, not '%s'", optarg), -1;
			break;
		case 'O':
			if (!strcmp(optarg, "text"))
				o->format = SP_SNAPVIEW_TEXT;
			else if (!strcmp(optarg, "folded"))
				o->format = SP_SNAPVIEW_FOLDED;
			else if (!strcmp(optarg, "stream"))
				o->format = SP_SNAPVIEW_STREAM;
			else if (!strcmp(optarg, "json"))
				o->format = SP_SNAPVIEW_JSON;
			else
				return sp_usage_error(syn, "-O: output format is text, folded, stream or json, not '%s'",
						      optarg), -1;
			break;
		case 'o': o->output = optarg; break;
		case O_STACK:
			if (sp_opt_uint("--stack", optarg, &v) < 0)
				return -1;
			if (v < 512 || v > (64ul << 20))
				return sp_usage_error(syn, "--stack must be between 512 bytes and 64 MiB, not %lu", v), -1;
			o->stack = v;
			break;
		case O_LINES: o->lines = 1; break;
		case O_NOINLINE: o->no_inline = 1; break;
		case O_PYTHON:
			if (strcmp(optarg, "merged") && strcmp(optarg, "off"))
				return sp_usage_error(syn, "--python must be merged or off with --snapshot, not '%s'",
						      optarg), -1;
			o->no_python = !strcmp(optarg, "off");
			break;
		case O_FULLNAMES: o->full_filenames = 1; break;
		case O_LOCALS: o->locals = 1; break;
		case 'v': o->verbose = 1; break;
		case 'q': o->quiet = 1; break;
		case 'h': fputs(syn, stdout); return 1;
		case 'V': sp_version(); return 1;
		case ':': return sp_usage_error(syn, "option '%s' needs a value", argv[optind - 1]), -1;
		default:
			if (optopt)
				return sp_usage_error(syn, "unknown option '-%c' (with --snapshot)", optopt), -1;
			return sp_usage_error(syn, "unknown option '%s' (with --snapshot)", argv[optind - 1]), -1;
		}
	}
	if (optind < argc)
		return sp_usage_error(syn, "--snapshot takes a running process (-p PID), not a command ('%s')",
				      argv[optind]), -1;
	if (!o->pid)
		return sp_usage_error(syn, "--snapshot needs -p PID"), -1;
	return 0;
}

int pcollect_pid(const char *s)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || end == s || *end || *s < '0' || *s > '9' || v < 1 || v > 0x3fffffff)
		return -1;
	return (int)v;
}

/* The process ended during -c N: what was taken is kept; said unless -q. */
static void say_exited(const struct sopts *o, unsigned long done)
{
	if (!o->quiet)
		fprintf(stderr, "%s: process %d exited after %lu snapshots\n", sp_prog, o->pid, done);
}

static char proc_state(int pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 'X';
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	char *p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : '?';
}

int pcollect_snapshot(int argc, char **argv)
{
	struct sopts o;
	memset(&o, 0, sizeof o);
	o.count = 1;
	o.interval = 0.1;
	int prc = parse(&o, argc, argv);
	if (prc)
		return prc > 0 ? SP_EXIT_OK : SP_EXIT_ERROR;
	if (!o.format)
		o.format = o.count > 1 ? SP_SNAPVIEW_STREAM : SP_SNAPVIEW_TEXT;
	if (o.locals && o.format != SP_SNAPVIEW_TEXT && o.format != SP_SNAPVIEW_JSON)
		return sp_usage_error(sp_snapshot_synopsis, "--locals needs text or json output (-O text, -O json)");
	if (o.threads) {
		regex_t re;
		struct sp_err e;
		if (sp_thread_regex(&re, o.threads, &e) < 0)
			return sp_usage_error(sp_snapshot_synopsis, "%s", e.msg);
		regfree(&re);
	}
	if (kill(o.pid, 0) < 0 && errno == ESRCH) {
		sp_error("no process %d", o.pid);
		return SP_EXIT_ERROR;
	}
	o.pid = sp_proc_tgid(o.pid);
	struct sp_proc_info pi;
	if (sp_proc_info(o.pid, &pi) == 0 && pi.kthread) {
		sp_error("%d (%s) is a kernel thread: it has no user space to stop and unwind (its kernel stack "
			 "is in /proc/%d/stack, for root)", o.pid, pi.comm, o.pid);
		return SP_EXIT_ERROR;
	}
	if (sp_proc_info(o.pid, &pi) == 0 && (pi.state == 'Z' || pi.state == 'X') && sp_snap_live_tid(o.pid) == o.pid) {
		sp_error("process %d (%s) is a zombie: it has exited and its parent has not yet collected its exit "
			 "status; it has no threads left to look at", o.pid, pi.comm);
		return SP_EXIT_ERROR;
	}
	if (o.pid == getpid()) {
		sp_error("process %d is pcollect itself: a process cannot stop its own threads to look at them", o.pid);
		return SP_EXIT_ERROR;
	}
	if (o.format == SP_SNAPVIEW_STREAM && !o.output && sp_check_binary_stdout(stdout) < 0)
		return SP_EXIT_ERROR;
	/* -o FILE: renamed over FILE at the end; our own signal handling
	 * (below) ends the loop and still writes what was taken. */
	struct sp_outfile of;
	if (sp_outfile_open(&of, o.output, 0) < 0)
		return SP_EXIT_ERROR;
	FILE *out = of.f;
	struct sp_err err;
	memset(&err, 0, sizeof err);
	struct sp_snapview_opts vo = { o.pid, o.threads, o.format, o.stack, o.lines, o.no_inline, o.verbose,
				       o.interval, o.no_python, o.full_filenames, o.locals };
	struct sp_snapview *v = sp_snapview_new(&vo, out, &err);
	if (!v) {
		sp_error_e(&err);
		sp_outfile_close(&of, 0);
		return SP_EXIT_ERROR;
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_stop;
	struct sigaction old[3];
	int sigs[3] = { SIGINT, SIGTERM, SIGHUP };
	for (int i = 0; i < 3; i++)
		sigaction(sigs[i], &sa, &old[i]);

	int rc = 0;
	unsigned long done = 0;
	double next = 0; /* CLOCK_MONOTONIC seconds the next snapshot is due */
	for (; done < o.count && !stop_sig; done++) {
		if (done && o.interval > 0) {
			/* -i is the period: snapshot k is due at the first one's
			 * time + k intervals (one late by symbolising is not made up
			 * by bunching the next ones: the schedule moves on). */
			double t = sp_mono_s();
			if (next < t)
				next = t;
			double wait = next - t;
			struct timespec d = { (time_t)wait, (long)((wait - floor(wait)) * 1e9) };
			while (nanosleep(&d, &d) < 0 && errno == EINTR && !stop_sig)
				;
			if (stop_sig)
				break;
		}
		next = (done ? next : sp_mono_s()) + o.interval;
		if (done && sp_snap_live_tid(o.pid) == o.pid && proc_state(o.pid) == 'Z') {
			/* Every thread has exited: a zombie its parent has not reaped. */
			say_exited(&o, done);
			break;
		}
		int r = sp_snapview_take(v, &err);
		if (r > 0) {
			stop_sig = r; /* interrupted: the snapshot was abandoned */
			break;
		}
		if (r < 0) {
			/* The process ended between snapshots: keep what we have. */
			if (done && kill(o.pid, 0) < 0 && errno == ESRCH) {
				say_exited(&o, done);
				break;
			}
			rc = -1;
			break;
		}
		if (done && !sp_snapview_last(v)->threads &&
		    ((kill(o.pid, 0) < 0 && errno == ESRCH) || proc_state(o.pid) == 'Z')) {
			/* Every thread exited before this snapshot could stop one:
			 * it holds no sample, so it is not counted. */
			say_exited(&o, done);
			break;
		}
		if (!done && !o.quiet && sp_snapview_last(v)->python[0] && !sp_snapview_last(v)->python_merged)
			fprintf(stderr, "%s: process %d: %s\n", sp_prog, o.pid, sp_snapview_last(v)->python);
		if (o.verbose && o.format != SP_SNAPVIEW_TEXT) {
			const struct sp_snapview_stats *st = sp_snapview_last(v);
			fprintf(stderr, "%s: snapshot of %zu threads: stopped for %.3f ms (longest thread %.3f ms)\n",
				sp_prog, st->threads, (double)st->window_ns / 1e6, (double)st->longest_ns / 1e6);
		}
		if (o.verbose && o.locals) {
			const struct sp_snapview_stats *st = sp_snapview_last(v);
			fprintf(stderr, "%s: --locals: stopped for %.3f ms, of which %.3f ms reading values (%.3f ms of CPU, %zu reads); "
					"%zu values not read (budget); read after the stop, from the stack copies only: "
					"%zu threads and %zu frames of others; %zu Python frames not read\n",
				sp_prog, (double)st->window_ns / 1e6, (double)st->locals_ns / 1e6, (double)st->locals_cpu_ns / 1e6,
				st->locals_reads,
				st->locals_skipped, st->locals_late, st->locals_late_frames, st->locals_frames);
		}
		if (o.format == SP_SNAPVIEW_TEXT && done + 1 < o.count)
			fputc('\n', out);
		if ((o.format == SP_SNAPVIEW_TEXT || o.format == SP_SNAPVIEW_JSON) && (fflush(out) != 0 || ferror(out))) {
			/* Text is written as it comes: a full disk ends the run. */
			sp_err_set(&err, "write error: %s", strerror(errno));
			rc = -1;
			done++;
			break;
		}
	}
	sp_snap_release();
	/* pcollect's own signals restored: a second ^C ends it at once. */
	for (int i = 0; i < 3; i++)
		sigaction(sigs[i], &old[i], NULL);
	if (rc < 0)
		sp_outfile_error(&of, &err);
	if (!rc && !done && stop_sig) {
		sp_error("interrupted by signal %d before a snapshot was taken; the process was let go", (int)stop_sig);
		rc = -1;
	}
	struct sp_err werr;
	memset(&werr, 0, sizeof werr);
	int wrc = rc < 0 && ferror(out) ? -1 : sp_snapview_finish(v, &werr);
	if (wrc < 0 && rc >= 0)
		sp_outfile_error(&of, &werr);
	if (o.verbose && done != o.count && !rc)
		fprintf(stderr, "%s: %lu of %lu snapshots taken\n", sp_prog, done, o.count);
	sp_snapview_free(v); /* before out is closed: it may hold buffered output */
	/* Kept when complete: after an error it would only hide the old file,
	 * after SIGINT/SIGTERM/SIGHUP it holds what was taken (maybe nothing). */
	if (sp_outfile_close(&of, wrc == 0 && (rc == 0 || stop_sig)) < 0)
		wrc = -1;
	return rc < 0 || wrc < 0 ? SP_EXIT_ERROR : SP_EXIT_OK;
}
