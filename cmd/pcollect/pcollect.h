/* pcollect.h — the parts of the pcollect command (cmd/pcollect.c and the
 * files of cmd/pcollect/), not a library header. */
#ifndef SP_CMD_PCOLLECT_H
#define SP_CMD_PCOLLECT_H

#include <stdint.h>
#include <sys/types.h>

#include "collect.h"
#include "hitstack.h"
#include "hold.h"
#include "offcpu.h"
#include "perf_events.h"
#include "session.h"
#include "stream.h"
#include "trace_events.h"
#include "uprobe.h"

struct opts {
	int pid;
	int *pids;           /* -p PID,PID...: all of them (pid is the first) */
	size_t npids;
	int children;        /* --children */
	double rotate;       /* --rotate SECONDS, 0 none */
	unsigned freq;
	double duration;
	const char *output;
	const char *threads;
	enum sp_callgraph cg;
	unsigned stack_bytes;
	int lines, no_inline, no_kernel, quiet, verbose, no_rename;
	unsigned long buffer_mib;
	int offcpu; /* 1 --off-cpu, 2 --wall (lib/capture/offcpu.h) */
	const char **traces; /* --trace PROBE, ntraces of them */
	size_t ntraces;
	int trace_returns;   /* --trace-returns: return probes in C++ code too */
	double trace_budget; /* share of a CPU above which tracing warns */
	enum sp_pymode python; /* --python */
	int python_nolines;    /* --python-lines=no */
	int python_full;       /* --full-filenames */
	int python_sampling;   /* --python-sampling: 0 by the rate, 1 exact, 2 nonblocking */
	int stacks;          /* --stacks: a profile of the probes' hits (lib/engine/hitstack.h) */
	int weight[2];       /* --weight argN[*argM]: N and M, 0 none */
	int live;            /* --live: stacks of the blocks not freed (lib/engine/hitstack.h) */
	unsigned every;      /* --every N, 0 = 1 */
	int stack_set;       /* --call-graph dwarf,BYTES given */
	int all;             /* -a: every process of the machine (all.c) */
	int per_thread;      /* --per-thread: no per-CPU sampling of the targets */
};

struct coll {
	struct opts o;
	/* the profile, events, writer, engine, off-CPU step, hit stacks and
	 * tracer, the write error (lib/engine/session.h) */
	struct sp_session *s;
	int tid;          /* -p TID: that thread only (o.pid is its process) */
	uint64_t cpu0_ns; /* the target's CPU time when sampling started */
	/* --trace (mode_trace.c) */
	struct sp_uprobe_set probes;
	double hit_ns;       /* measured cost of a probe hit, 0 unknown */
	double trace_t0;
	double trace_started; /* when the probes were enabled (monotonic s) */
	double attach_t0;     /* -p: when attaching began (monotonic s) */
	double stop_t0;       /* when tracing ended: the detach is timed from it */
	int tramp_known;      /* the return probes' trampoline read from /proc (mode_trace.c) */
	uint64_t trace_h0;
	int budget_warned;
	int trace_pid;        /* the traced process: its CPU time bounds the cost */
	uint64_t trace_cpu0;  /* its CPU time at the last check (ns) */
	uint64_t trace_sys0;  /* of which system time */
	uint64_t attach_sys0; /* -p: its system time when attaching began */
	double sys_before;    /* its system time per second before the probes */
	struct sp_u64map tid_hits, tid_hits0, tid_delay0; /* per thread: hits read, at the last check; run_delay (us) */
	struct sp_u64map tid_stime0; /* per thread: system time at the last check (clock ticks) */
	void (*inner_hit)(void *ctx, const struct sp_perf_uprobe *u); /* the handler behind the count */
	void *inner_ctx;
	uint64_t *probe_h0;   /* each probe's hits at the last check */
	double over_s;        /* seconds in a row over the budget */
	double cost_sum, cost_dt; /* the busiest thread's share, x seconds, and the seconds (-v) */
	double cost_hit;      /* the cost of a hit of the last check (ns) */
	int *stopped;         /* each probe: stopped over the budget */
	int trace_meta;       /* trace-stopped metadata to write at the end */
	uint8_t *stackbuf;   /* a sample's stack with return addresses fixed */
	struct sp_perf_handler engine_hd; /* --stacks: the engine's callbacks */
	struct sp_hold *hold;             /* holds new threads until their probes are open */
	unsigned long arm_failed;         /* new threads whose probes could not be opened */
	struct sp_err arm_err;            /* the first one's reason */
	void (*engine_fork)(void *ctx, uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid, uint64_t time);
	struct pc_targets *tg; /* targets.c */
	struct pc_rotate *rot; /* rotate.c */
};

/* target.c: -p's process or thread.  check: it exists and is not a
 * zombie; a thread id sets c->tid and o.pid to its process (0, or -1 after
 * an error message).  gone: it exited.  explain_empty: why no sample. */
int pcollect_check_target(struct coll *c);
int pcollect_target_gone(const struct coll *c);
void pcollect_explain_empty(struct coll *c, double seconds);
/* Per-CPU sampling of the targets when the kernel allows it and the
 * options go with it (before any thread is added): -1 after an error. */
int pcollect_per_cpu(struct coll *c);
/* At the end: the CPU time sampled against the CPU time the kernel
 * counted, in the metadata, and said when much of it was not sampled
 * (who: "process 123", "the command's processes"); -v says it always. */
void pcollect_cpu_account(struct coll *c, const char *who);

/* all.c: -a.  check_opts: what -a cannot go with (a usage error, -1);
 * start opens the system-wide events (-1 after its error message);
 * report says, and puts in the stream's metadata, what could not be
 * resolved. */
int pcollect_all_check_opts(const struct opts *o, const char *synopsis, int ncmd);
int pcollect_all_start(struct coll *c);
void pcollect_all_report(struct coll *c);

/* launch.c: COMMAND started, waiting for one byte on go before its exec. */
struct child {
	pid_t pid;
	int go;   /* write end: one byte lets the child exec */
	int errp; /* read end: the child's errno if exec failed, EOF if it worked */
};

/* stdout_to_stderr: the stream goes to our standard output, so the
 * command's own output goes to standard error. */
int pcollect_spawn(struct child *ch, char **argv, int stdout_to_stderr);
/* pcollect's exit status for the command's wait status. */
int pcollect_exit_code(int status);

/* The value of -p: a process or thread id, or -1 when it is not one (the
 * caller says so once, as a usage error). */
int pcollect_pid(const char *s);

/* mode_trace.c: --trace.  setup resolves the probes (cmd: COMMAND's name in
 * launch mode) and opens them, before the target runs; start makes the
 * tracer once the target's pid is known; tick checks the overhead budget;
 * finish says what was lost.  Setup returns -1 after its error message. */
int pcollect_trace_setup(struct coll *c, const char *cmd);
void pcollect_trace_start(struct coll *c, int pid);
/* Before the target's threads are added: hold the threads and processes
 * it creates until their probes are open (attach: every thread of pid is
 * seized; launch: the child, before its exec).  Returns -1 after its error
 * message. */
int pcollect_trace_hold(struct coll *c, int pid);
/* At the end, before the events are disabled: let every thread go. */
void pcollect_trace_unhold(struct coll *c);
/* The uprobe callback, and the samples' stacks fixed where return probes
 * replaced return addresses. */
void pcollect_trace_handler(struct coll *c, struct sp_perf_handler *hd);
void pcollect_trace_tick(struct coll *c, double now);
void pcollect_trace_finish(struct coll *c);
void pcollect_trace_release(struct coll *c);
/* python.c: print the Python step's messages (not with -q); its counts
 * as stream metadata at the end; with -v, its summary line. */
void pcollect_python_messages(struct coll *c);
void pcollect_python_meta(struct coll *c);
void pcollect_python_summary(struct coll *c);
void pcollect_python_unmerged(struct coll *c);
/* Exact or non-blocking Python samples (--python-sampling, and by default
 * by the rate), once the engine exists. */
void pcollect_python_sampling(struct coll *c);
/* Non-zero when Python samples will be exact (known before sampling
 * starts, the rate as asked). */
int pcollect_python_exact(const struct coll *c);
/* Exact mode: pass on what the seized threads reported (each round), and
 * let them go (at the end). */
void pcollect_python_poll(struct coll *c);
void pcollect_python_release(struct coll *c);
/* waitpid for the launched command, which exact mode may have reaped. */
int pcollect_wait_child(struct coll *c, int pid, int *status, int options);

/* targets.c: -p PID,PID... and --children.  pids_opt adds the pids of
 * one -p value (-1: not a list of pids); check says (and returns -1) when
 * a listed pid cannot be sampled; scan, before any event is opened, lists
 * the targets (launched: the command's pid, else o.pids) and with
 * --children their descendants; attach follows all but the first after it
 * (-1 with err set); load_maps their mappings once sampling is enabled;
 * handler follows the processes forked later (--children); gone: every
 * process waited for has exited. */
int pcollect_pids_opt(struct opts *o, const char *arg);
int pcollect_targets_check(struct coll *c);
void pcollect_targets_scan(struct coll *c, int launched);
int pcollect_targets_attach(struct coll *c, struct sp_err *err);
void pcollect_targets_load_maps(struct coll *c);
void pcollect_targets_handler(struct coll *c, struct sp_perf_handler *hd);
int pcollect_targets_gone(struct coll *c, double now);
void pcollect_targets_meta(struct coll *c);
int pcollect_targets_who(struct coll *c, struct sp_buf *b, double *cpu_s);
void pcollect_targets_free(struct coll *c);

/* rotate.c: --rotate.  start names the first file (o.output becomes it;
 * -1 after an error message); sink wraps c->s->sink so that the file can
 * change under the engine; rotate, when due, completes the current file
 * and starts the next (-1 with c->s->werr set: stop, as after a write error;
 * *of is then still a file to close). */
struct sp_outfile;
int pcollect_rotate_start(struct coll *c, double now);
struct sp_sink *pcollect_rotate_sink(struct coll *c);
int pcollect_rotate_due(const struct coll *c, double now);
int pcollect_rotate(struct coll *c, struct sp_outfile *of, double now);
void pcollect_rotate_free(struct coll *c);

/* pcollect --snapshot with pcollect's argv; returns the exit status. */
int pcollect_snapshot(int argc, char **argv);

#endif
