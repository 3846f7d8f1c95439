/* pystop.h — exact samples of Python threads: the threads are kept seized
 * with PTRACE_SEIZE (which neither stops them nor queues a SIGSTOP), and
 * each sample of one stops it with PTRACE_INTERRUPT, copies its registers
 * and the top of its stack, lets the caller read its Python frames while
 * it is stopped, and resumes it.  The stack copy and the Python frames are
 * then of one instant: the merged stack is exact.
 *
 * A thread is seized at its first stop, not before: threads never sampled
 * (idle, or left out by -t) are never traced.  While seized, a signal for
 * the target stops the receiving thread until sp_pystop_poll passes it on:
 * the caller polls every few milliseconds.  Group stops (SIGSTOP, ^Z) are
 * kept with PTRACE_LISTEN.  Threads are detached by sp_pystop_release (a
 * process that exec'd or exited), sp_pystop_detach_all and sp_pystop_free;
 * if we die instead (SIGKILL, a crash), the kernel detaches and resumes
 * them, and PTRACE_SEIZE never queued a stop signal that could keep them
 * stopped.  So the target is never left stopped.
 *
 * A seized thread's exit and its process's exit are reported to us first:
 * sp_pystop_poll reaps them (or the target's parent would not see its exit)
 * and keeps the statuses, for sp_pystop_waitpid (launch mode: the command
 * is our child as well as our tracee).
 *
 * Ownership: the caller owns the struct (new/free).  Never prints.
 */
#ifndef SP_PYSTOP_H
#define SP_PYSTOP_H

#include <stddef.h>
#include <stdint.h>

#include "perf_records.h"
#include "util.h"

enum sp_pystop_rc {
	SP_PYSTOP_OK = 0,   /* stopped and copied: call sp_pystop_cont */
	SP_PYSTOP_GONE,     /* the thread exited (or exec'd) meanwhile */
	SP_PYSTOP_ASLEEP,   /* not on a CPU any more: its stack now is not the sample's */
	SP_PYSTOP_LATE,     /* would not stop in time (uninterruptible sleep): resumed when it stops */
	SP_PYSTOP_DENIED,   /* ptrace refused (err says why, once per process) */
};

struct sp_pystop_copy {
	uint64_t regs[SP_NREGS]; /* DWARF numbering (perf_events.h) */
	const uint8_t *stack;    /* copy of [regs[SP_REG_SP], +len); owned by the sp_pystop */
	size_t len;
	int in_syscall;          /* stopped inside a system call */
	uint64_t stop_ns;        /* CLOCK_MONOTONIC when the stop was seen */
};

struct sp_pystop_stats {
	uint64_t stops;       /* threads stopped and resumed */
	uint64_t stopped_ns;  /* total time they were stopped, interrupt to resume */
	uint64_t max_ns;      /* the longest stop */
	uint64_t seized;      /* threads seized */
	uint64_t gone, asleep, late, signals; /* signals: passed on to the target */
};

struct sp_pystop;

/* stack_max: bytes of each stack to copy. */
struct sp_pystop *sp_pystop_new(size_t stack_max);
void sp_pystop_free(struct sp_pystop *ps); /* NULL ok; detaches every thread */

/* Stop thread tid of process pid (seizing it first), copy into *out.  On
 * DENIED, err holds one sentence the first time for this pid (later calls
 * return DENIED at once, err untouched). */
enum sp_pystop_rc sp_pystop_stop(struct sp_pystop *ps, int pid, int tid, struct sp_pystop_copy *out,
				 struct sp_err *err);
/* Resume the thread stopped by the last sp_pystop_stop that returned OK. */
void sp_pystop_cont(struct sp_pystop *ps);
/* Handle what the seized threads reported: signals passed on, group stops
 * kept, exits reaped.  Never blocks. */
void sp_pystop_poll(struct sp_pystop *ps);
/* Detach every thread of process pid (it exec'd, or is no Python any more). */
void sp_pystop_release(struct sp_pystop *ps, int pid);
/* Detach every thread (waits up to a second for their stops). */
void sp_pystop_detach_all(struct sp_pystop *ps);
/* waitpid(pid, status, options) for our child pid, which sp_pystop_poll
 * may have reaped already.  A ptrace stop of it is handled, not returned. */
int sp_pystop_waitpid(struct sp_pystop *ps, int pid, int *status, int options);

const struct sp_pystop_stats *sp_pystop_stats(const struct sp_pystop *ps);

#endif
