/* offcpu.h — off-CPU and wall-clock profiles from context switches.
 *
 * Sits on both sides of the engine (collect.h): perfev's raw records go
 * through sp_offcpu_handler to the engine, and the engine's samples come
 * back through sp_offcpu_sink.  A context-switch sample (perfev opts.offcpu:
 * taken as the thread leaves the CPU, unwound by the engine like any
 * sample) gives the stack the thread went to sleep in; the
 * PERF_RECORD_SWITCH records around it give when it left and when it came
 * back.  At the switch in, one sample is written: that stack, a synthetic
 * leaf frame "[blocked]" (it gave up the CPU: a blocking system call, a
 * lock, a sleep) or "[preempted]" (the kernel says it was still runnable),
 * and the interval in nanoseconds.
 *
 * Values: the profile has ONE column, "off-cpu-ns" (off-CPU only) or
 * "wall-ns" (wall: cpu-clock samples weigh their period, also ns), set by
 * sp_offcpu_new, so that off-CPU time is never summed with CPU samples of
 * another column by accident.  In wall mode each thread's samples add up
 * to the time it existed while followed: on-CPU samples cover its CPU
 * time, the intervals the rest.
 *
 * Time lost: a thread that was already asleep when sampling started has
 * no stack for its first interval, nor has an interval whose switch sample
 * the kernel dropped (a full ring: perfev's stats.lost), and an interval
 * whose switch record was dropped is not seen at all (counted in
 * stats.unknown, not written);
 * a thread still asleep at sp_offcpu_finish is charged up to that instant.
 * Ownership: borrows the profile and the output sink.
 */
#ifndef SP_OFFCPU_H
#define SP_OFFCPU_H

#include "perf_records.h"
#include "profile.h"

struct sp_offcpu;

struct sp_offcpu_stats {
	uint64_t intervals;    /* samples written for off-CPU intervals */
	uint64_t blocked_ns, preempted_ns;
	uint64_t unknown;      /* intervals without a stack (see above) */
	uint64_t on_cpu;       /* wall: cpu-clock samples passed on */
};

/* wall: also pass on cpu-clock samples (weighed by their period). */
struct sp_offcpu *sp_offcpu_new(struct sp_profile *p, struct sp_sink *out, int wall);
void sp_offcpu_free(struct sp_offcpu *o); /* NULL ok */

/* The sink to give the engine (sp_collect_new). */
struct sp_sink *sp_offcpu_sink(struct sp_offcpu *o);
/* Wrap the engine's handler: out gets callbacks that go through o first. */
void sp_offcpu_handler(struct sp_offcpu *o, const struct sp_perf_handler *engine, struct sp_perf_handler *out);
/* Charge the threads still off the CPU up to now_ns (CLOCK_MONOTONIC).
 * Returns 0 or -1 (the output sink failed; err filled). */
int sp_offcpu_finish(struct sp_offcpu *o, uint64_t now_ns, struct sp_err *err);
/* Non-zero once the output sink failed; *err gets its error. */
int sp_offcpu_error(const struct sp_offcpu *o, struct sp_err *err);
const struct sp_offcpu_stats *sp_offcpu_stats(const struct sp_offcpu *o);

#endif
