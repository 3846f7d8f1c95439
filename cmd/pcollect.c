/* pcollect — sample the native stacks of a running process (-p PID) or of
 * a command it launches, and write them as the binary stream.
 *
 * Wiring only: the session (lib/engine/session.h) owns the perf events,
 * the engine and the stream writer, and runs the sampling loop and its
 * stop logic.  This file parses options, sets the signals, launches or
 * attaches, says what happened and picks the exit status; its hooks tell
 * the session when the targets are gone and what to do each round. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <malloc.h>
#include <math.h>
#include <poll.h>
#include <regex.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "pcollect/pcollect.h"
#include "collect.h"
#include "perf_events.h"
#include "procmaps.h"
#include "python.h"
#include "snapshot.h"
#include "symbols.h"

static const char synopsis[] =
	"usage: pcollect [options] -p PID[,PID...]\n"
	"       pcollect [options] [--] COMMAND [ARG...]\n"
	"       pcollect [options] -a\n"
	"       pcollect --snapshot [-c COUNT [-i SECONDS]] [options] -p PID   (see pcollect --snapshot -h)\n"
	"Sample the native stacks of every thread of a running process, or of a command\n"
	"from its first instruction, and write them as the stackpipe binary stream\n"
	"(pipe it into pfold, psvg, pspeedscope...).  Frame pointers are not needed.\n"
	"\n"
	"  -p, --pid=PID           attach to process PID (all its threads, and new ones);\n"
	"                          a thread id: that thread only\n"	"  -a, --all-cpus          every process of the machine, as perf record -a (root,\n"
	"                          CAP_PERFMON or kernel.perf_event_paranoid <= 0)\n"
	"  -F, --freq=HZ           samples per second per thread (default 99); 0: no\n"
	"                          sampling, only --trace\n"
	"  -d, --duration=SECONDS  stop after SECONDS (default: when the target exits,\n"
	"                          or on SIGINT/SIGTERM)\n"
	"  -p PID,PID...           several processes (or -p repeated), each under its own\n"
	"                          name; the end when the last one has exited\n"
	"      --children          also the processes the targets forked before pcollect\n"
	"                          attached (those forked later are always followed);\n"
	"                          the end waits for all of them\n"
	"      --per-thread        sampling events per thread, not per CPU: by default,\n"
	"                          where the kernel allows it (root, CAP_PERFMON), the\n"
	"                          targets are sampled per CPU, so threads shorter than a\n"
	"                          sample period are sampled too\n"
	"  -o, --output=FILE       write to FILE instead of standard output: a temporary\n"
	"                          file renamed to FILE at the end (an error or a kill\n"
	"                          leaves FILE as it was)\n"
	"      --no-rename         write -o FILE itself as samples come (to follow it\n"
	"                          while it grows)\n"
	"      --rotate=SECONDS    with -o PATTERN: a new file every SECONDS, each a whole\n"
	"                          stream renamed into place when complete; PATTERN as\n"
	"                          strftime(3) (api-%%H%%M%%S.sp), or without a %%: with\n"
	"                          .YYYYmmdd-HHMMSS before its extension\n"
	"  -t, --threads=REGEX     keep only threads whose name matches REGEX (extended)\n"
	"      --call-graph=MODE   dwarf[,BYTES] (default, BYTES of stack per sample,\n"
	"                          default 16384), fp (frame pointers) or none\n"
	"      --lines             add file:line to frames (one frame per source line)\n"
	"      --no-inline         do not show functions inlined by the compiler\n"
	"      --no-kernel         user-mode samples and frames only\n"
	"      --buffer=MIB        sample buffer per CPU (default 8 for dwarf, 1 otherwise)\n"
	"      --off-cpu           time spent off the CPU (ns), charged to the stack each\n"
	"                          thread went to sleep in, under [blocked] or [preempted]\n"
	"                          (needs kernel sampling: root or perf_event_paranoid <= 1)\n"
	"      --wall              wall-clock time: on-CPU samples and off-CPU intervals in\n"
	"                          one ns column; each thread adds up to the time it lived\n"
	"      --trace=PROBE       trace calls exactly with uprobes (repeatable):\n"
	"                          [LIB:]FUNC[+OFF][:entry][(arg1,..,arg6,ret)], FUNC a\n"
	"                          name, a C++ name or a glob; or FILE.c:LINE[(VAR,..)],\n"
	"                          VAR a variable, var.member or ptr->member;\n"
	"                          see pcollect(1)\n"
	"      --trace-returns     return probes in C++ code with exception tables too\n"
	"      --trace-budget=PCT  stop the hottest probe when tracing takes more than\n"
	"                          PCT %% of a traced thread's time for a second\n"
	"                          (default 50; none: no limit)\n"
	"      --python=MODE       CPython 3.8-3.13 targets: merged (default: Python frames\n"
	"                          in place of the interpreter's eval-loop frames), only\n"
	"                          (Python frames alone) or off\n"
	"      --python-lines=no   one frame per Python function, not per line\n"
	"      --full-filenames    Python files by their full path, not relative to\n"
	"                          the target's sys.path (json/encoder.py)\n"
	"      --python-sampling=HOW  exact (default at -F 100 or less: each sampled\n"
	"                          Python thread is stopped while its stack and Python\n"
	"                          frames are read) or nonblocking (read just after\n"
	"                          the sample, without stopping it)\n"
	"      --stacks            a profile of the --trace probes' hits: the user stack\n"
	"                          at each entry, in a \"calls\" column (CPU samples are\n"
	"                          not written); needs --call-graph dwarf\n"
	"      --weight=argN       with --stacks: weigh each hit by its Nth argument\n"
	"                          (1-6), or by a product argN*argM (calloc), in a\n"
	"                          \"bytes\" column before \"calls\" (malloc's size: an\n"
	"                          allocation flame graph)\n"
	"      --every=N           with --stacks or --live: keep every Nth hit of each\n"
	"                          probe, its values multiplied by N (hot allocators)\n"
	"      --live              live bytes: the stacks of the blocks malloc, calloc\n"
	"                          and realloc returned and free did not take back by\n"
	"                          the end, in columns \"bytes\" and \"blocks\"\n"
	"  -q, --quiet             no status line, summary or warnings\n"
	"  -v, --verbose           print a summary at the end\n"
	"      --snapshot          where is every thread now, and who holds the lock it\n"
	"                          waits for (pcollect --snapshot -h for its options)\n"
	"  -V, --version           print the version\n"
	"  -h, --help              show this help\n"
	"\n"
	"Needs perf_event_open: root, CAP_PERFMON, or kernel.perf_event_paranoid <= 2 for\n"
	"your own processes (kernel frames need <= 1); attaching needs ptrace access.\n"
	"Exit status: 0 ok, 1 no samples (-p; the reason is on stderr), 2 error; when it\n"
	"launched COMMAND, the command's own status (128+N if signal N ended it, 127 if\n"
	"not found, 126 if it could not run), or 0 if pcollect ended it (-d, SIGINT,\n"
	"SIGTERM).\n";

static volatile sig_atomic_t stop_signal;
static void on_stop(int sig) { stop_signal = sig; }
static void on_child(int sig) { (void)sig; }

static void on_task(void *ctx, int pid, int tid) { sp_collect_add_task(ctx, pid, tid); }

/* ---- options ---- */

static int check_opts(struct opts *o, int argc);

static int parse_opts(struct opts *o, int argc, char **argv)
{
	enum { O_CG = 256, O_LINES, O_NOINLINE, O_NOKERNEL, O_BUFFER, O_NORENAME, O_OFFCPU, O_WALL, O_TRACE,
	       O_TRACE_RETURNS, O_TRACE_BUDGET, O_PYTHON, O_PYLINES, O_PYSAMPLING, O_FULLNAMES, O_STACKS, O_WEIGHT, O_EVERY, O_LIVE,
	       O_CHILDREN, O_ROTATE, O_PER_THREAD };
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "all-cpus", no_argument, NULL, 'a' },
		{ "freq", required_argument, NULL, 'F' },
		{ "duration", required_argument, NULL, 'd' },
		{ "output", required_argument, NULL, 'o' },
		{ "threads", required_argument, NULL, 't' },
		{ "call-graph", required_argument, NULL, O_CG },
		{ "lines", no_argument, NULL, O_LINES },
		{ "no-inline", no_argument, NULL, O_NOINLINE },
		{ "no-kernel", no_argument, NULL, O_NOKERNEL },
		{ "buffer", required_argument, NULL, O_BUFFER },
		{ "no-rename", no_argument, NULL, O_NORENAME },
		{ "off-cpu", no_argument, NULL, O_OFFCPU },
		{ "wall", no_argument, NULL, O_WALL },
		{ "trace", required_argument, NULL, O_TRACE },
		{ "trace-returns", no_argument, NULL, O_TRACE_RETURNS },
		{ "trace-budget", required_argument, NULL, O_TRACE_BUDGET },
		{ "python", required_argument, NULL, O_PYTHON },
		{ "python-lines", required_argument, NULL, O_PYLINES },
		{ "python-sampling", required_argument, NULL, O_PYSAMPLING },
		{ "full-filenames", no_argument, NULL, O_FULLNAMES },
		{ "stacks", no_argument, NULL, O_STACKS },
		{ "weight", required_argument, NULL, O_WEIGHT },
		{ "every", required_argument, NULL, O_EVERY },
		{ "live", no_argument, NULL, O_LIVE },
		{ "children", no_argument, NULL, O_CHILDREN },
		{ "per-thread", no_argument, NULL, O_PER_THREAD },
		{ "rotate", required_argument, NULL, O_ROTATE },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long v;
	char *end;
	int ch;
	opterr = 0; /* our own one-line reasons */
	while ((ch = getopt_long(argc, argv, "+:ap:F:d:o:t:qvhV", longopts, NULL)) != -1) {
		switch (ch) {
		case 'p':
			if (pcollect_pids_opt(o, optarg) < 0)
				return sp_usage_error(synopsis, "-p needs a process id, not '%s'", optarg), -1;
			break;
		case 'F':
			if (sp_opt_uint("--freq", optarg, &v) < 0)
				return -1;
			if (v > 1000000)
				return sp_usage_error(synopsis, "-F must be between 0 and 1000000 Hz, not %lu", v), -1;
			o->freq = (unsigned)v;
			break;
		case 'd':
			errno = 0;
			o->duration = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(o->duration > 0) || !isfinite(o->duration))
				return sp_usage_error(synopsis, "-d needs a positive number of seconds, not '%s'", optarg),
				       -1;
			break;
		case 'a': o->all = 1; break;
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
					o->stack_set = 1;
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
		case O_NORENAME: o->no_rename = 1; break;
		case O_OFFCPU:
		case O_WALL:
			if (o->offcpu && o->offcpu != (ch == O_WALL ? 2 : 1))
				return sp_usage_error(synopsis, "give --off-cpu or --wall, not both"), -1;
			o->offcpu = ch == O_WALL ? 2 : 1;
			break;
		case O_TRACE:
			o->traces = sp_xrealloc(o->traces, (o->ntraces + 1) * sizeof *o->traces);
			o->traces[o->ntraces++] = optarg;
			break;
		case O_TRACE_RETURNS: o->trace_returns = 1; break;
		case O_TRACE_BUDGET:
			errno = 0;
			if (!strcmp(optarg, "none")) {
				o->trace_budget = -1; /* no limit */
				break;
			}
			o->trace_budget = strtod(optarg, &end) / 100;
			if (errno || end == optarg || *end || !(o->trace_budget > 0) || !isfinite(o->trace_budget))
				return sp_usage_error(synopsis, "--trace-budget needs a positive percentage or none, "
						      "not '%s'", optarg), -1;
			break;
		case O_PYTHON:
			if (!strcmp(optarg, "merged"))
				o->python = SP_PY_MERGED;
			else if (!strcmp(optarg, "only"))
				o->python = SP_PY_ONLY;
			else if (!strcmp(optarg, "off"))
				o->python = SP_PY_OFF;
			else
				return sp_usage_error(synopsis, "--python must be merged, only or off, not '%s'", optarg),
				       -1;
			break;
		case O_PYLINES:
			if (strcmp(optarg, "yes") && strcmp(optarg, "no"))
				return sp_usage_error(synopsis, "--python-lines must be yes or no, not '%s'", optarg), -1;
			o->python_nolines = !strcmp(optarg, "no");
			break;
		case O_PYSAMPLING:
			if (!strcmp(optarg, "exact"))
				o->python_sampling = 1;
			else if (!strcmp(optarg, "nonblocking"))
				o->python_sampling = 2;
			else
				return sp_usage_error(synopsis, "--python-sampling must be exact or nonblocking, not '%s'",
						      optarg), -1;
			break;
		case O_FULLNAMES: o->python_full = 1; break;
		case O_STACKS: o->stacks = 1; break;
		case O_WEIGHT: /* argN or argN*argM */
			if (strncmp(optarg, "arg", 3) || optarg[3] < '1' || optarg[3] > '6' ||
			    (optarg[4] && (strncmp(optarg + 4, "*arg", 4) || optarg[8] < '1' || optarg[8] > '6' ||
					   optarg[9])))
				return sp_usage_error(synopsis, "--weight needs an argument arg1 .. arg6, or a "
							      "product argN*argM, not '%s'", optarg), -1;
			o->weight[0] = optarg[3] - '0';
			o->weight[1] = optarg[4] ? optarg[8] - '0' : 0;
			break;
		case O_LIVE: o->live = 1; break;
		case O_CHILDREN: o->children = 1; break;
		case O_PER_THREAD: o->per_thread = 1; break;
		case O_ROTATE:
			errno = 0;
			o->rotate = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(o->rotate >= 1) || !isfinite(o->rotate))
				return sp_usage_error(synopsis, "--rotate needs a number of seconds >= 1, not '%s'", optarg),
				       -1;
			break;
		case O_EVERY:
			if (sp_opt_uint("--every", optarg, &v) < 0)
				return -1;
			if (v < 1 || v > UINT32_MAX)
				return sp_usage_error(synopsis, "--every needs a number of hits >= 1, not '%s'", optarg),
				       -1;
			o->every = (unsigned)v;
			break;
		case 'q': o->quiet = 1; break;
		case 'v': o->verbose = 1; break;
		case 'h': fputs(synopsis, stdout); return 1;
		case 'V': sp_version(); return 1;
		case ':': return sp_usage_error(synopsis, "option '%s' needs a value", argv[optind - 1]), -1;
		default:
			if (optopt)
				return sp_usage_error(synopsis, "unknown option '-%c'", optopt), -1;
			return sp_usage_error(synopsis, "unknown option '%s'", argv[optind - 1]), -1;
		}
	}
	return check_opts(o, argc);
}

/* What the options cannot go with, once all are read: -1 after a usage
 * error.  --live becomes its probes. */
static int check_opts(struct opts *o, int argc)
{
	if (o->all && pcollect_all_check_opts(o, synopsis, argc - optind) < 0)
		return -1;
	if (o->pid && optind < argc)
		return sp_usage_error(synopsis, "give either -p PID or a command, not both"), -1;
	if (!o->pid && !o->all && optind >= argc)
		return sp_usage_error(synopsis, "nothing to profile: give -p PID or a command"), -1;
	if (o->live) { /* --stacks of the allocator's probes (cmd/pcollect/mode_trace.c) */
		if (o->ntraces || o->weight[0] || o->stacks)
			return sp_usage_error(synopsis, "--live probes malloc, calloc, realloc and free itself and "
						      "weighs blocks by their size: not with --trace, --stacks or --weight"), -1;
		static const char *const live_traces[] = { "malloc", "calloc", "realloc", "free:entry" };
		o->traces = sp_xrealloc(o->traces, sizeof live_traces);
		memcpy(o->traces, live_traces, sizeof live_traces);
		o->ntraces = 4;
		o->stacks = 1;
	}
	if (!o->freq && !o->ntraces)
		return sp_usage_error(synopsis, "-F 0 samples nothing: it is for --trace alone"), -1;
	if (o->rotate && (!o->output || !strcmp(o->output, "-")))
		return sp_usage_error(synopsis, "--rotate writes one file per period: it needs -o PATTERN"), -1;
	if (o->rotate && o->no_rename)
		return sp_usage_error(synopsis, "--rotate renames each file when complete: not with --no-rename"), -1;
	if ((o->npids > 1 || o->children) && o->ntraces)
		return sp_usage_error(synopsis, "--trace follows one process: not with several -p targets or "
					      "--children"), -1;
	if ((o->weight[0] || o->every) && !o->stacks)
		return sp_usage_error(synopsis, "--weight and --every are for --stacks"), -1;
	if (o->python_sampling == 1) {
		if (o->python == SP_PY_OFF)
			return sp_usage_error(synopsis, "--python-sampling=exact is for Python frames: not with --python=off"),
			       -1;
		if (o->cg != SP_CG_DWARF)
			return sp_usage_error(synopsis, "--python-sampling=exact unwinds the stopped thread's stack copy: "
						      "it needs --call-graph dwarf"), -1;
		if (o->offcpu || o->stacks)
			return sp_usage_error(synopsis, "--python-sampling=exact stops threads at CPU samples: not with "
						      "--off-cpu, --wall or --stacks"), -1;
	}
	if (o->stacks) {
		if (!o->ntraces)
			return sp_usage_error(synopsis, "--stacks needs --trace PROBE: the stacks are its hits'"), -1;
		const char *what = o->live ? "--live" : "--stacks";
		if (o->offcpu)
			return sp_usage_error(synopsis, "%s makes its own profile: not with --off-cpu or --wall", what),
			       -1;
		if (o->cg != SP_CG_DWARF)
			return sp_usage_error(synopsis, "%s unwinds the hits' stack copies: it needs "
						      "--call-graph dwarf", what), -1;
	}
	return 0;
}

/* ---- the command ---- */

/* The status line is drawn only while the terminal is in its line mode: a
 * full-screen reader on the same terminal (pcollect -p PID | plive, | less)
 * puts it in raw mode, and the line would scribble over its screen. */
static int status_shown;
static int terminal_in_line_mode(void)
{
	struct termios t;
	return tcgetattr(STDERR_FILENO, &t) == 0 && (t.c_lflag & ICANON);
}

static void status_line(struct coll *c, double elapsed, int final)
{
	const struct sp_perfev_stats *st = sp_perfev_stats(c->s->ev);
	if (!terminal_in_line_mode())
		return;
	if (final) {
		if (status_shown)
			fputs("\r\033[K", stderr);
		return;
	}
	status_shown = 1;
	const struct sp_collect_stats *cs = sp_collect_stats(c->s->eng);
	fprintf(stderr, "\rpcollect: %.1f s, %llu samples, %zu threads, %llu lost\033[K", elapsed,
		(unsigned long long)cs->samples, (size_t)cs->threads, (unsigned long long)st->lost);
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

/* The command's state that the session's hooks see. */
struct run {
	struct coll c;
	struct sp_outfile of;
	char **cmd;       /* launched: COMMAND and its arguments */
	struct child ch;  /* launched: the command (ch.pid 0 otherwise) */
	int child_status, child_done, we_ended_it;
};

/* Whether the target is a Python interpreter: launched, the command's
 * name (python3, /usr/bin/python3.11); -p PID, its mappings.  Several
 * processes or --children: no. */
static int python_target(struct run *r)
{
	struct coll *c = &r->c;
	if (!c->o.pid)
		return !c->o.all && r->cmd && r->cmd[0] && sp_python_named(r->cmd[0]);
	if (c->o.npids > 1 || c->o.children)
		return 0;
	struct sp_maps *m = sp_maps_new();
	struct sp_err err;
	int py = sp_maps_load(m, c->o.pid, 1, &err) == 0 && sp_python_in_maps(m);
	sp_maps_free(m);
	return py;
}

/* The perf events, the metadata, the writer and the engine; -1 after its
 * error message. */
static int open_session(struct run *r)
{
	struct coll *c = &r->c;
	struct sp_err err;
	memset(&err, 0, sizeof err);
	struct sp_perfev_opts po = { c->o.freq, c->o.cg, c->o.stack_bytes, !c->o.no_kernel, 0, !c->o.pid && !c->o.all,
				     0, 0, 0 };
	po.offcpu = c->o.offcpu;
	/* Python: frames read right after each sample (exact: the thread
	 * stopped then; non-blocking: the sooner, the more of them are the
	 * frames the sample saw).  --off-cpu, --wall: only where the target
	 * is a Python (python_target), else the drainer's millisecond poll:
	 * a wakeup at every switch out costs the target in the kernel even
	 * with no reader waiting (t63-block's CPU per round trip 25 -> 58 us,
	 * its round trip 40 -> 76 us), and the events cannot change it once
	 * open.  An idle Python server: 3.5 % -> 1.4 % of a CPU (issue 35). */
	po.wakeup_each = c->o.python != SP_PY_OFF && !c->o.stacks && (!c->o.offcpu || python_target(r));
	if (c->o.stacks) /* a hit with a stack copy is ~stack_bytes: room for bursts */
		po.probe_ring_bytes = (c->o.buffer_mib ? c->o.buffer_mib : 32) << 20;
	po.ring_bytes = (c->o.buffer_mib ? c->o.buffer_mib : c->o.cg == SP_CG_DWARF ? 8 : 1) << 20;
	if (sp_session_open(c->s, &po, &err) < 0) {
		sp_error_e(&err);
		return -1;
	}
	if (pcollect_per_cpu(c) < 0)
		return -1;
	if (sp_perfev_stats(c->s->ev)->freq != c->o.freq) {
		if (!c->o.quiet)
			sp_error("-F %u is above the kernel's limit (kernel.perf_event_max_sample_rate): sampling at "
				 "%u Hz", c->o.freq, sp_perfev_stats(c->s->ev)->freq);
		c->o.freq = sp_perfev_stats(c->s->ev)->freq;
	}
	struct sp_profile *p = c->s->p;
	const char *event = c->o.offcpu == 1 ? "off-cpu" : c->o.offcpu == 2 ? "wall-clock" : c->o.live ? "live-bytes"
			    : c->o.stacks ? "probe-hits" : "cpu-clock";
	sp_meta_add(p, "source", "pcollect");
	sp_meta_add(p, "event", event);
	char buf[64];
	snprintf(buf, sizeof buf, "%u", c->o.freq);
	sp_meta_add(p, "frequency", buf);
	sp_meta_add(p, "call-graph", c->o.cg == SP_CG_DWARF ? "dwarf" : c->o.cg == SP_CG_FP ? "fp" : "none");
	if (!c->o.all)
		sp_meta_add(p, "sampling", sp_perfev_stats(c->s->ev)->per_cpu ? "per-cpu" : "per-thread");
	if (c->o.all) {
		sp_meta_add(p, "system-wide", "yes");
	} else if (c->o.pid) {
		snprintf(buf, sizeof buf, "%d", c->o.pid);
		sp_meta_add(p, "pid", buf);
		if (c->tid) {
			snprintf(buf, sizeof buf, "%d", c->tid);
			sp_meta_add(p, "tid", buf);
		}
	} else {
		char *j = join_args(r->cmd);
		sp_meta_add(p, "command", j);
		free(j);
	}
	sp_session_write_to(c->s, r->of.f);
	if (c->o.rotate)
		c->s->sink = pcollect_rotate_sink(c);
	if (c->tg)
		pcollect_targets_meta(c);
	for (size_t i = 0; i < c->o.ntraces; i++)
		sp_meta_add(p, "trace", c->o.traces[i]);
	struct sp_session_opts so = {
		.collect = { .callgraph = c->o.cg, .lines = c->o.lines, .no_inline = c->o.no_inline,
			     .threads = c->o.threads, .event = event, .python = c->o.python,
			     .python_lines = !c->o.python_nolines, .python_full_filenames = c->o.python_full,
			     .system_wide = c->o.all },
		.offcpu = c->o.offcpu,
		.stacks = c->o.stacks,
		.hits = { { c->o.weight[0], c->o.weight[1] }, c->o.every, c->o.live },
	};
	if (sp_session_wire(c->s, &so, &err) < 0) {
		sp_error_e(&err);
		return -1;
	}
	return 0;
}

/* -p: attach to the process or thread. */
static int attach(struct coll *c)
{
	struct sp_err err;
	memset(&err, 0, sizeof err);
	int n;
	c->attach_t0 = sp_mono_s();
	struct sp_proc_info pi;
	if (sp_proc_info(c->o.pid, &pi) == 0)
		c->attach_sys0 = pi.sys_ns;
	if (pcollect_trace_hold(c, c->o.pid) < 0)
		return -1;
	if (c->tid) {
		/* -p TID: that thread (and the threads it creates) only. */
		if ((n = sp_perfev_add_task(c->s->ev, c->tid, &err)) == 1)
			n = sp_err_set(&err, "thread %d exited", c->tid);
		else if (n == 0)
			sp_collect_add_task(c->s->eng, c->o.pid, c->tid);
	} else {
		n = sp_perfev_add_process(c->s->ev, c->o.pid, on_task, c->s->eng, &err);
	}
	if (n < 0 || (c->tg && pcollect_targets_attach(c, &err) < 0)) {
		sp_error_e(&err);
		return -1;
	}
	if (c->o.ntraces)
		pcollect_trace_start(c, c->o.pid);
	sp_perfev_enable(c->s->ev);
	/* Mappings made from now on arrive as MMAP2 records.  From a live
	 * thread: a zombie main thread (it called pthread_exit while the
	 * others run on) shows no maps. */
	if (sp_collect_load_maps(c->s->eng, c->o.pid, sp_snap_live_tid(c->o.pid), &err) < 0) {
		sp_error_e(&err);
		return -1;
	}
	if (c->tg)
		pcollect_targets_load_maps(c);
	return 0;
}

/* Start COMMAND, held before its exec until its events are open: 0, or
 * the exit status after its error message. */
static int launch(struct run *r)
{
	struct coll *c = &r->c;
	struct sp_err err;
	memset(&err, 0, sizeof err);
	if (pcollect_spawn(&r->ch, r->cmd, r->of.f == stdout) < 0) {
		sp_error("cannot start %s: %s", r->cmd[0], strerror(errno));
		return SP_EXIT_ERROR;
	}
	if (pcollect_trace_hold(c, r->ch.pid) < 0 || sp_perfev_add_task(c->s->ev, r->ch.pid, &err) != 0) {
		sp_hold_stop(c->hold);
		kill(r->ch.pid, SIGKILL);
		waitpid(r->ch.pid, NULL, 0);
		if (err.msg[0])
			sp_error_e(&err);
		return SP_EXIT_ERROR;
	}
	sp_collect_add_task(c->s->eng, r->ch.pid, r->ch.pid);
	if (c->o.children)
		pcollect_targets_scan(c, r->ch.pid);
	if (c->o.ntraces)
		pcollect_trace_start(c, r->ch.pid);
	if (write(r->ch.go, "x", 1) != 1) {
		/* the child died already; waitpid tells why */
	}
	close(r->ch.go);
	int e = 0;
	ssize_t n;
	while ((n = read(r->ch.errp, &e, sizeof e)) < 0 && errno == EINTR)
		;
	close(r->ch.errp);
	if (n == (ssize_t)sizeof e) {
		pcollect_wait_child(c, r->ch.pid, &r->child_status, 0);
		sp_error("cannot run %s: %s", r->cmd[0], strerror(e));
		return e == ENOENT ? 127 : 126;
	}
	return 0;
}

/* ---- the session's hooks ---- */

static void on_round(void *ctx, double now)
{
	struct coll *c = &((struct run *)ctx)->c;
	pcollect_python_poll(c);
	pcollect_python_messages(c);
	pcollect_trace_tick(c, now);
}

static int on_rotate(void *ctx, double now)
{
	struct run *r = ctx;
	if (!pcollect_rotate_due(&r->c, now))
		return 0;
	int rc = pcollect_rotate(&r->c, &r->of, now);
	r->c.s->out = r->of.f;
	return rc;
}

static int on_gone(void *ctx, double now)
{
	struct run *r = ctx;
	struct coll *c = &r->c;
	if (!r->ch.pid)
		return c->tg ? pcollect_targets_gone(c, now) : pcollect_target_gone(c);
	/* --children: the command's end waits for its children's */
	if (!r->child_done && pcollect_wait_child(c, r->ch.pid, &r->child_status, WNOHANG) == r->ch.pid) {
		r->child_done = 1;
		if (!c->tg)
			return 1;
	}
	return r->child_done && pcollect_targets_gone(c, now);
}

static void on_status(void *ctx, double elapsed) { status_line(&((struct run *)ctx)->c, elapsed, 0); }

/* the held threads go, before the events close */
static void on_stopping(void *ctx) { pcollect_trace_unhold(&((struct run *)ctx)->c); }

static void on_stopped(void *ctx)
{
	struct coll *c = &((struct run *)ctx)->c;
	pcollect_python_release(c); /* the seized threads go, before anything else */
	pcollect_python_messages(c);
	pcollect_python_meta(c);
}

/* Stopped by -d or a signal: end the command we started. */
static void end_child(struct run *r)
{
	if (pcollect_wait_child(&r->c, r->ch.pid, &r->child_status, WNOHANG) != r->ch.pid) {
		kill(r->ch.pid, SIGTERM);
		double until = sp_mono_s() + 2;
		while (pcollect_wait_child(&r->c, r->ch.pid, &r->child_status, WNOHANG) != r->ch.pid) {
			if (sp_mono_s() > until) {
				kill(r->ch.pid, SIGKILL);
				pcollect_wait_child(&r->c, r->ch.pid, &r->child_status, 0);
				break;
			}
			usleep(10000);
		}
		r->we_ended_it = 1;
	}
	r->child_done = 1;
}

/* What the kernel and the tracer could not give. */
static void warnings(struct coll *c)
{
	const struct sp_perfev_stats *st = sp_perfev_stats(c->s->ev);
	if (st->kernel_denied)
		sp_error("kernel frames are not available (kernel.perf_event_paranoid allows user-mode "
			 "sampling only; run as root for kernel frames): user frames only");
	else if (!c->o.no_kernel && sp_collect_kernel_hidden(c->s->eng))
		sp_error("kernel addresses are hidden (kernel.kptr_restrict): kernel frames show as [kernel.kallsyms]");
	if (st->lost)
		sp_error("%llu samples lost: the sample buffer was full (use --buffer with more MiB or a "
			 "lower -F)", (unsigned long long)st->lost);
	if (st->throttled)
		sp_error("the kernel throttled sampling %llu times (kernel.perf_cpu_time_max_percent): "
			 "fewer samples than asked for", (unsigned long long)st->throttled);
	const char *file, *why;
	for (size_t i = 0; (why = sp_symbols_go_unread(sp_collect_symbols(c->s->eng), &i, &file));)
		sp_error("%s: Go's function table is not read (%s): its functions are named from its "
			 "symbols, as perf names them", file, why);
}

/* -v: the summary. */
static void summary(struct coll *c)
{
	const struct sp_collect_stats *cs = sp_collect_stats(c->s->eng);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
		     (double)ru.ru_stime.tv_usec / 1e6;
	sp_error("%llu samples of %zu threads in %zu processes, %.1f s; %llu filtered out, %llu lost, "
		 "%llu truncated stacks, %.1f frames per sample, %llu distinct stacks; collector CPU %.3f s",
		 (unsigned long long)cs->samples, (size_t)cs->threads, (size_t)cs->processes, sp_mono_s() - c->s->t0,
		 (unsigned long long)cs->filtered, (unsigned long long)sp_perfev_stats(c->s->ev)->lost,
		 (unsigned long long)cs->truncated, cs->samples ? (double)cs->unwound_frames / (double)cs->samples : 0,
		 (unsigned long long)sp_writer_stacks(c->s->w), cpu);
	if (cs->go_switches)
		sp_error("Go: %llu stacks went on past the switch to the system stack (runtime.systemstack, "
			 "morestack) in the goroutine's frames, from the kernel's frame-pointer chain",
			 (unsigned long long)cs->go_switches);
	if (c->s->off) {
		const struct sp_offcpu_stats *os = sp_offcpu_stats(c->s->off);
		sp_error("off-CPU: %llu intervals, %.3f s blocked, %.3f s preempted, %llu without a stack "
			 "(asleep before sampling started, or its switch sample lost); %llu on-CPU samples",
			 (unsigned long long)os->intervals, (double)os->blocked_ns / 1e9,
			 (double)os->preempted_ns / 1e9, (unsigned long long)os->unknown,
			 (unsigned long long)os->on_cpu);
	}
	if (c->s->hs && !c->o.live) { /* --live: its own line (mode_trace.c) */
		const struct sp_hitstacks_stats *hst = sp_hitstacks_stats(c->s->hs);
		sp_error("--stacks: %llu probe entries, %llu stacks written (%llu left out by --every), "
			 "weight %llu; %llu CPU samples not written", (unsigned long long)hst->hits,
			 (unsigned long long)hst->written, (unsigned long long)hst->skipped,
			 (unsigned long long)hst->weight, (unsigned long long)hst->cpu);
	}
	pcollect_python_summary(c);
}

/* The CPU time sampled against the kernel's count, named by target. */
static void cpu_account(struct run *r)
{
	char who[64];
	if (r->c.o.npids > 1 || r->c.o.children)
		snprintf(who, sizeof who, "the targets");
	else
		snprintf(who, sizeof who, "process %d", r->ch.pid ? r->ch.pid : r->c.o.pid);
	pcollect_cpu_account(&r->c, who);
}

/* Samples until the end, then completes the stream: the exit status so
 * far; *finished: the stream's trailer is written (not written and
 * SP_EXIT_OK: the reader went away). */
static int sample(struct run *r, int *finished)
{
	struct coll *c = &r->c;
	int show_status = !c->o.quiet && isatty(STDERR_FILENO);
	pcollect_trace_handler(c, &c->s->hd);
	if (c->tg)
		pcollect_targets_handler(c, &c->s->hd);
	/* Python frames are read when a sample is handed out, not when it was
	 * taken: rounds are shorter so that they are read soon after.  -a: a
	 * sample wakes the round already (wakeup_each); the timeout only
	 * paces the rest, as short rounds cost a host all day. */
	struct sp_session_hooks h = { .ctx = r, .stop = &stop_signal, .duration = c->o.duration,
				      .round_ms = c->o.python != SP_PY_OFF && !c->o.all ? 10 : 50,
				      .round = on_round, .gone = on_gone, .rotate = c->o.rotate ? on_rotate : NULL,
				      .status = show_status ? on_status : NULL, .stopping = on_stopping,
				      .stopped = on_stopped };
	sp_session_run(c->s, &h);
	c->stop_t0 = sp_mono_s();
	sp_session_stop(c->s, &h);
	pcollect_trace_finish(c);
	if (c->o.all)
		pcollect_all_report(c);
	else
		cpu_account(r);
	pcollect_python_unmerged(c);
	if (show_status)
		status_line(c, 0, 1);
	if (r->ch.pid && !r->child_done)
		end_child(r);
	if (r->ch.pid) {
		char buf[32];
		snprintf(buf, sizeof buf, "%d", pcollect_exit_code(r->child_status));
		sp_meta_add(c->s->p, "exit-status", buf);
		c->s->sink->meta(c->s->sink, c->s->p, &c->s->werr);
	}
	*finished = sp_session_finish(c->s) == 0;
	/* what the last samples handled may have queued after the stop's
	 * drain (the final read and pending non-blocking samples) */
	pcollect_python_messages(c);
	if (!*finished) {
		/* A reader that went away (| head, plive quit) is a normal end:
		 * the target is detached by now, nothing more is said, and what
		 * stdio still holds goes nowhere instead of failing again. */
		if (!sp_err_is_closed_pipe(&c->s->werr)) {
			sp_outfile_error(&r->of, &c->s->werr);
			return SP_EXIT_ERROR;
		}
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (null >= 0) {
			dup2(null, fileno(r->of.f));
			close(null);
		}
		clearerr(r->of.f);
	}
	return SP_EXIT_OK;
}

static int cmd_pcollect(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--snapshot"))
			return pcollect_snapshot(argc, argv);
	struct run r;
	memset(&r, 0, sizeof r);
	struct coll *c = &r.c;
	c->o.freq = 99;
	c->o.stack_bytes = 16384;
	c->o.trace_budget = 0.5;
	c->o.python = SP_PY_MERGED;
	int prc = parse_opts(&c->o, argc, argv);
	if (prc) {
		free(c->o.traces);
		return prc > 0 ? SP_EXIT_OK : SP_EXIT_ERROR;
	}
	r.cmd = argv + optind;
	if (c->o.threads) {
		/* A bad regex is a usage error, before anything is opened. */
		regex_t re;
		struct sp_err e;
		if (sp_thread_regex(&re, c->o.threads, &e) < 0)
			return sp_usage_error(synopsis, "%s", e.msg);
		regfree(&re);
	}
	if (!c->o.output && sp_check_binary_stdout(stdout) < 0)
		return SP_EXIT_ERROR;
	if (c->o.pid && kill(c->o.pid, 0) < 0 && errno == ESRCH) {
		sp_error("no process %d", c->o.pid);
		return SP_EXIT_ERROR;
	}
	if (c->o.npids > 1 && pcollect_targets_check(c) < 0)
		return SP_EXIT_ERROR;
	if (c->o.rotate && pcollect_rotate_start(c, sp_mono_s()) < 0)
		return SP_EXIT_ERROR;
	/* -o FILE: a temporary renamed over FILE once the trailer is written
	 * (after -d, the command's end, SIGINT/SIGTERM/SIGHUP), so an error or
	 * a SIGKILL leaves FILE as it was.  --no-rename: FILE itself, for a
	 * reader that follows it while it grows. */
	if (sp_outfile_open(&r.of, c->o.output, c->o.no_rename ? SP_OUT_IN_PLACE : 0) < 0)
		return SP_EXIT_ERROR;
	c->s = sp_session_new();
	int rc = SP_EXIT_ERROR, finished = 0; /* finished: the stream's trailer is written */
	if (c->o.pid && pcollect_check_target(c) < 0)
		goto out;
	if (c->o.pid && (c->o.npids > 1 || c->o.children))
		pcollect_targets_scan(c, 0); /* before any event is opened */
	if (open_session(&r) < 0)
		goto out;
	pcollect_python_sampling(c);

	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_stop; /* no SA_RESTART: poll returns at once */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sa.sa_handler = on_child;
	sigaction(SIGCHLD, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	/* Kernel symbols are read before sampling starts, not in its midst.
	 * Not for probes alone (-F 0, no --off-cpu): their records hold no
	 * kernel frame, and reading /proc/kallsyms took 0.1 s of plive's T. */
	if (!c->o.no_kernel && (c->o.freq || c->o.offcpu))
		sp_collect_load_kernel(c->s->eng);
	/* Probes are resolved and opened before the target runs on. */
	if (c->o.ntraces && pcollect_trace_setup(c, c->o.pid ? NULL : r.cmd[0]) < 0)
		goto out;
	/* System-wide, every process that exits frees its unwinder (libdw's
	 * trees of small nodes) and freeing a large block then sweeps the
	 * fast bins: glibc's malloc_consolidate was 7-9 % of pcollect -a's
	 * CPU.  Without fast bins (the per-thread cache still serves small
	 * blocks): warm 1.37 -> 1.26 % of one CPU at -F 49 (fleet-warm-bench,
	 * 5 paired 12 s runs; 1.36 -> 1.15 with the glibc tunable set at
	 * the start). */
	if (c->o.all)
		mallopt(M_MXFAST, 0);
	if (c->o.all ? pcollect_all_start(c) < 0 : c->o.pid ? attach(c) < 0 : (rc = launch(&r)) != 0)
		goto out;
	rc = sample(&r, &finished);
	if (!c->o.quiet && (finished || rc != SP_EXIT_OK)) /* not when the reader went away */
		warnings(c);
	if (c->s->tracer && sp_tracer_stats(c->s->tracer)->unread && !c->o.quiet)
		sp_error("%llu recorded values could not be read (memory outside the stack copy, or the process "
			 "was gone): those hits lack them", (unsigned long long)sp_tracer_stats(c->s->tracer)->unread);
	if (c->o.verbose)
		summary(c);
	if (rc == SP_EXIT_OK && finished && !sp_collect_stats(c->s->eng)->samples && !(c->s->tracer && sp_tracer_stats(c->s->tracer)->hits)) {
		/* An empty result is not a success when attached; a command's
		 * own exit status stays what pcollect returns. */
		if (!c->o.quiet && c->o.freq)
			pcollect_explain_empty(c, sp_mono_s() - c->s->t0);
		else if (!c->o.quiet) /* -F 0: the probes with 0 hits are named above */
			sp_error("nothing recorded: no probe was hit (-F 0 takes no CPU samples)");
		if (!r.ch.pid)
			rc = SP_EXIT_NEGATIVE;
	}
	if (r.ch.pid && rc == SP_EXIT_OK && !r.we_ended_it) {
		rc = pcollect_exit_code(r.child_status);
		if (rc && !c->o.quiet) {
			if (WIFSIGNALED(r.child_status))
				sp_error("%s was killed by signal %d", r.cmd[0], WTERMSIG(r.child_status));
			else
				sp_error("%s exited with status %d", r.cmd[0], rc);
		}
	}
out:
	/* A complete stream is kept even when the command failed: its samples
	 * are good. */
	if (sp_outfile_close(&r.of, finished) < 0 && rc == SP_EXIT_OK)
		rc = SP_EXIT_ERROR;
	pcollect_trace_release(c);
	int say_detach = c->o.verbose && c->o.ntraces && c->stop_t0 > 0;
	unsigned kept = c->s && c->s->ev ? sp_perfev_stats(c->s->ev)->probe_kept : 0;
	sp_session_free(c->s);
	if (say_detach)
		sp_error("probes detached %.3f s after tracing ended%s", sp_mono_s() - c->stop_t0,
			 kept ? " (the tracefs uprobes are ended by a keeper process after pcollect exits: the "
				"kernel's grace periods, ~0.1 s per probe)" : "");
	pcollect_targets_free(c);
	pcollect_rotate_free(c);
	return rc;
}

int main(int argc, char **argv) { return sp_cmd_run("pcollect", cmd_pcollect, argc, argv); }
