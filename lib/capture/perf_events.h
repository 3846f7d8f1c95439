/* perf_events.h — sampling with perf_event_open: the software cpu-clock event
 * on every CPU for each followed thread, one mmap ring per CPU shared by
 * all its events (PERF_EVENT_IOC_SET_OUTPUT), and a reader that merges the
 * rings' records by timestamp and hands them, parsed, to callbacks.
 *
 * Kernel rules this follows (see the notes behind pcollect): an event with
 * cpu=-1 and inherit cannot be mmapped, and cpu=-1 events of different
 * threads cannot share a ring, so events are per CPU with inherit=1: the
 * threads a followed thread creates later are followed too.
 *
 * Records are delivered in timestamp order across CPUs: a round of reading
 * takes the clock first and only hands out records older than that
 * instant, keeping younger ones in the rings for the next round, so a
 * thread's MMAP2/COMM/FORK records always come before its later samples.
 * Pointers in a delivered record (stack copy, callchain) are valid during
 * the callback only.
 */
#ifndef SP_PERF_EVENTS_H
#define SP_PERF_EVENTS_H

#include <stdint.h>

#include "perf_records.h"
#include "procmaps.h"
#include "util.h"

struct sp_perfev_opts {
	unsigned freq;          /* samples per second per thread (lowered to
				 * kernel.perf_event_max_sample_rate: see stats) */
	enum sp_callgraph callgraph;
	unsigned stack_bytes;   /* SP_CG_DWARF: bytes of user stack per sample (8-aligned, <= 65528) */
	int kernel;             /* also sample in kernel mode and record kernel callchains */
	size_t ring_bytes;      /* per CPU; rounded down to pages times a power of two */
	int enable_on_exec;     /* launch mode: start counting at the target's exec */
	/* Off-CPU (lib/capture/offcpu.h): 1 = instead of cpu-clock, 2 = besides it, a
	 * context-switch event per CPU (a sample, with the same stack capture,
	 * at every switch out: where the thread went to sleep) with
	 * PERF_RECORD_SWITCH records (the switch-out and switch-in instants).
	 * The switch happens in the kernel, so this needs kernel sampling
	 * (root, CAP_PERFMON or kernel.perf_event_paranoid <= 1). */
	int offcpu;
	size_t probe_ring_bytes; /* per CPU for uprobe hits; 0: 2 MiB */
	int wakeup_each;         /* wake the reader at every sample, not at a quarter
				  * of the ring (exact Python sampling stops the
				  * sampled thread as soon as it can) */
};

struct sp_perfev_stats {
	uint64_t records, samples;
	uint64_t lost;      /* samples the kernel dropped: a ring was full */
	uint64_t throttled; /* times the kernel lowered the rate (perf_cpu_time_max_percent) */
	unsigned tasks;     /* threads opened */
	int early_rt;       /* the drainer (early reads) runs at real-time
			     * priority: 1, refused: -1, not asked: 0 */
	unsigned freq;      /* the rate asked of the kernel: opts.freq, or
			     * kernel.perf_event_max_sample_rate when that is lower */
	int kernel_denied;  /* kernel sampling was asked for and refused: user mode only */
	uint64_t probe_hits; /* uprobe records delivered */
	unsigned probe_tasks; /* threads whose probes are open */
	unsigned probe_shared; /* probes defined once in tracefs (tracefs.h) */
	unsigned probe_events; /* uprobe perf events open: per thread, threads x CPUs x
				* probes; with probe_bpf, probe_procs x probes + probe_outputs */
	unsigned probe_events_max; /* the most probe_events were */
	int probe_bpf;         /* hits recorded by a BPF program (bpfhit.h) */
	unsigned probe_procs;  /* with probe_bpf: processes traced */
	unsigned probe_outputs; /* with probe_bpf: output events (one per CPU) */
	unsigned probe_kept;    /* with probe_bpf: events on the keeper process
				 * that carry the programs (one per probe) */
	unsigned probe_reanchored; /* with probe_bpf: anchors whose thread exited, replaced */
	uint64_t probe_lost; /* uprobe hits dropped: a probe ring was full, or
			      * the records waiting to be read passed 1 GiB */
	uint64_t sampled_ns; /* the periods of the CPU samples delivered */
	int per_cpu;         /* sp_perfev_follow_cpus took */
	uint64_t draws;      /* per CPU with a wakeup at every sample: periods
			      * drawn at random (redraw_period) */
	uint64_t refired;    /* ... samples dropped, a second one after the same
			      * draw (every process's) */
};

struct sp_perfev;

/* Checks the options (err says what is wrong); nothing is opened yet.
 * freq 0: no sampling (uprobes only); each task gets a dummy event for its
 * MMAP2/COMM/FORK/EXIT records instead. */
struct sp_perfev *sp_perfev_new(const struct sp_perfev_opts *o, struct sp_err *err);
void sp_perfev_free(struct sp_perfev *ev); /* NULL ok; closes everything */

/* Follow thread tid (and, by inheritance, the threads and processes it
 * creates from now on).  Returns 0, 1 when the thread no longer exists,
 * or -1 with err set to a sentence a user can act on (permissions). */
int sp_perfev_add_task(struct sp_perfev *ev, int tid, struct sp_err *err);
/* Follow every thread of process pid: lists /proc/PID/task until no new
 * thread shows up.  on_task (may be NULL) is called for each new one.
 * Returns the number of threads followed, or -1 with err set. */
int sp_perfev_add_process(struct sp_perfev *ev, int pid, void (*on_task)(void *ctx, int pid, int tid),
			  void *ctx, struct sp_err *err);
/* Every process of the machine (perf record -a): the event once per CPU
 * with pid = -1, its records (MMAP2, COMM, FORK, EXIT) those of every
 * process, the ones started from now on included.  Needs root,
 * CAP_PERFMON or kernel.perf_event_paranoid <= 0.  Returns 0, or -1 with
 * err set to one sentence naming the setting needed. */
int sp_perfev_add_cpus(struct sp_perfev *ev, struct sp_err *err);
/* The followed processes sampled per CPU instead of per thread: the
 * cpu-clock event once per CPU with pid = -1 (as sp_perfev_add_cpus, idle
 * excluded) and, of its records, only those of the processes that
 * sp_perfev_add_task and sp_perfev_add_process name (a thread stands for
 * its whole process) and of the processes they fork from now on.  Why: a
 * per-thread event starts each new thread's sampling period afresh, so a
 * thread that runs less than one period (1e9/freq ns) is never sampled; a
 * CPU's period runs on across the threads it runs.  Needs what
 * sp_perfev_add_cpus needs (root, CAP_PERFMON, paranoid <= 0), CPU samples
 * only (no off-CPU, no uprobes), and no thread added yet.  Sampling starts
 * at once (no enable_on_exec: a launched command is held before its exec
 * anyway).  Returns 0; 1 when the kernel refuses (nothing changed: per
 * thread it is); -1 with err set for a call out of turn. */
int sp_perfev_follow_cpus(struct sp_perfev *ev, struct sp_err *err);
/* The CPU time the kernel counted for the followed threads (task-clock
 * counters, inherited by their new threads and processes, opened by
 * sp_perfev_add_task), over the same window as the sampling; ns, 0 when
 * some counter could not be opened or none was.  Compare with
 * stats.sampled_ns to know how much CPU time the samples missed. */
uint64_t sp_perfev_counted_ns(struct sp_perfev *ev);
/* A uprobe (ret: a return probe) on the instruction at file offset
 * `offset` of binary `path`: defined once in tracefs when it can be
 * (tracefs.h: every event shares it, and closing them waits one grace
 * period, not one each), else through the uprobe PMU.  Its hits arrive in
 * the same time order as the samples, to h->uprobe with `cookie`.
 *
 * As root with tracefs (bpfhit.h), per process: one anchor event per probe
 * on three of its threads, a BPF program writing every thread's hits into
 * output events per CPU (sp_perfev_probe_why says why not).  Otherwise the
 * probe is opened per followed thread and CPU (pid = TID, cpu = N, as
 * perf record opens events), by sp_perfev_add_task for the threads added
 * after it and sp_perfev_add_task_probes: the kernel writes the breakpoint
 * only into the memory of the processes of those threads, so no other
 * process traps, and a hit is recorded only for a thread that has the
 * events.  Not inherit=1: on a uprobe-PMU event the kernel re-reads the
 * path pointer (and checks CAP_PERFMON) in the target at clone(), which
 * then fails with EFAULT.  Threads created later need their own events,
 * opened before they run (lib/capture/hold.h holds them).  Add the probes before
 * the threads.  The probes are removed when the events are closed
 * (sp_perfev_free, or the kernel at our exit).  regs: the registers the
 * hits need (bpfhit.h's SP_BPFHIT_REG bits and SP_BPFHIT_TOP; SP is
 * always there): with BPF, a probe of stack_bytes <= 8 and a non-zero
 * regs writes only those (the others read 0); 0: every register.
 * Returns 0, or -1 with err set (no uprobe PMU). */
int sp_perfev_add_uprobe(struct sp_perfev *ev, const char *path, uint64_t offset, int ret, uint32_t cookie,
			 unsigned stack_bytes, uint32_t regs, struct sp_err *err);
/* Open every probe on thread tid (which its sampling events reach by
 * inheritance already).  Safe to call from another thread than the
 * reader's.  Returns 0 (also when they are open already), 1 when the
 * thread is gone, -1 with err set (permission, a probe the kernel refuses). */
int sp_perfev_add_task_probes(struct sp_perfev *ev, int tid, struct sp_err *err);
/* The probe added with cookie: *fired, the hits the kernel counted on its
 * events (every thread, every CPU); *delivered, the records of it read so
 * far.  After the final sp_perfev_read, fired - delivered is what was lost
 * (a full ring, or the 1 GiB queue limit), whether or not the kernel got
 * to write a LOST record for it.  Returns -1 for an unknown cookie. */
/* Why the probes are per thread (not bpfhit.h), or NULL. */
/* An event of a probe of the caller's (fd, -1 none; tp its tracefs name
 * or ""), closed and deleted with the probes (by the keeper when there is
 * one). */
void sp_perfev_adopt_probe(struct sp_perfev *ev, int fd, const char *tp);
const char *sp_perfev_probe_why(const struct sp_perfev *ev);
int sp_perfev_probe_counts(struct sp_perfev *ev, uint32_t cookie, uint64_t *fired, uint64_t *delivered);
/* Close every event of the probe added with cookie, on every thread, and
 * open it on no thread from now on: the kernel takes its breakpoint out of
 * the target (a disabled event would still trap).  Its counts stay
 * (sp_perfev_probe_counts).  Returns the events closed, -1 for an unknown
 * cookie.  Safe beside sp_perfev_add_task_probes. */
int sp_perfev_close_probe(struct sp_perfev *ev, uint32_t cookie);
/* Start every uprobe at once (they are opened disabled; sp_perfev_enable
 * starts them too, and probes opened later start enabled).  Note the kernel
 * writes the breakpoint into the code when a probe is opened: a disabled
 * probe costs its thread a trap per hit already. */
void sp_perfev_enable_uprobes(struct sp_perfev *ev);
int sp_perfev_enable(struct sp_perfev *ev);
int sp_perfev_disable(struct sp_perfev *ev);

/* Waits until a ring has data past its watermark, a signal arrives or
 * timeout_ms pass.  Returns 1 when every followed task is gone (all rings
 * hung up), 0 otherwise. */
int sp_perfev_wait(struct sp_perfev *ev, int timeout_ms);
/* Hands out the records that are ready (all of them when final).
 * Returns the number of records delivered. */
uint64_t sp_perfev_read(struct sp_perfev *ev, const struct sp_perf_handler *h, int final);
/* early(ctx, sample) is called for each sample as soon as it is taken
 * from the kernel's ring: in the drainer thread (while it runs; else in
 * the caller of sp_perfev_read), before the sample is handed out, without
 * the follow filter.  For reads that must be done soon after the sample
 * (Python frames); early must be thread-safe against the handler. */
void sp_perfev_set_early(struct sp_perfev *ev, void (*early)(void *ctx, const struct sp_perf_sample *s), void *ctx);
/* Every record taken before this instant (CLOCK_MONOTONIC ns) has been
 * handed out by sp_perfev_read: e.g. the FORK record of a process forked
 * before a parent that exited then. */
uint64_t sp_perfev_read_until(const struct sp_perfev *ev);
const struct sp_perfev_stats *sp_perfev_stats(const struct sp_perfev *ev);

#endif
