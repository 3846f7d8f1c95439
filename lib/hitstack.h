/* hitstack.h — profiles of probe hits (pcollect --trace PROBE --stacks):
 * the user stack at each hit of a uprobe, unwound by the engine
 * (collect.h) like a sample, written as a SAMPLE of its own value columns,
 * optionally weighed by an argument of the probed call (--weight argN:
 * malloc's size gives an allocation flame graph).
 *
 * Sits on both sides of the engine, as offcpu.h does: a hit goes through
 * sp_hitstacks_hit into the engine's sample callback as a sample of the
 * hit's registers and stack copy; the engine's samples come back through
 * sp_hitstacks_sink.  The engine's own (cpu-clock) samples are dropped
 * there and counted: their value is CPU time, which must never be summed
 * with calls or bytes.
 *
 * Values (set by sp_hitstacks_new): with a weight, two columns "bytes"
 * (unit bytes: the weight) and "calls" (unit samples); without, one
 * column "calls".  Sampling of hits (every > 1): every Nth hit of each
 * probe is kept, and its values are multiplied by N, so the columns
 * estimate the totals of all hits.
 *
 * Ownership: borrows the profile and the output sink.  Never prints.
 */
#ifndef SP_HITSTACK_H
#define SP_HITSTACK_H

#include <stdint.h>

#include "perfev.h"
#include "profile.h"

struct sp_hitstacks_stats {
	uint64_t hits;      /* entry hits offered (of our processes) */
	uint64_t skipped;   /* left out by sampling (every > 1) */
	uint64_t written;   /* samples written */
	uint64_t cpu;       /* the engine's cpu-clock samples, dropped */
	uint64_t weight;    /* sum of the weights of the written samples (unscaled) */
};

struct sp_hitstacks;

/* weight_arg: 1..6 weigh each hit by that integer argument (SysV x86-64:
 * rdi rsi rdx rcx r8 r9), 0 no weight.  every >= 1.  nprobes: the number
 * of probes if known, or 0 (cookies 2*i for entries, as trace.h; the
 * table grows with the cookies seen). */
struct sp_hitstacks *sp_hitstacks_new(struct sp_profile *p, struct sp_sink *out, size_t nprobes, int weight_arg,
				      unsigned every);
void sp_hitstacks_free(struct sp_hitstacks *h); /* NULL ok */

/* The sink to give the engine (sp_collect_new). */
struct sp_sink *sp_hitstacks_sink(struct sp_hitstacks *h);

/* An entry (or point) hit u of one of our processes: its stack through
 * the engine's sample callback (engine: the engine's handler).  Return
 * hits (odd cookies) are ignored.  stack: u's stack copy with return
 * addresses fixed (sp_tracer_fix_stack), or NULL for u's own. */
void sp_hitstacks_hit(struct sp_hitstacks *h, const struct sp_perf_handler *engine, const struct sp_perf_uprobe *u,
		      const uint8_t *stack);

const struct sp_hitstacks_stats *sp_hitstacks_stats(const struct sp_hitstacks *h);
/* Non-zero once the output sink failed; *err gets its error. */
int sp_hitstacks_error(const struct sp_hitstacks *h, struct sp_err *err);

#endif
