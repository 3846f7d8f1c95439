/* hitstack.h — profiles of probe hits (pcollect --trace PROBE --stacks):
 * the user stack at each hit of a uprobe, unwound by the engine
 * (collect.h) like a sample, written as a SAMPLE of its own value columns,
 * optionally weighed by an argument of the probed call (--weight argN:
 * malloc's size gives an allocation flame graph; argN*argM: calloc's).
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
 * Live bytes (opts.live, pcollect --live): the probes have roles
 * (sp_hitstacks_role): allocators, whose entry hit gives the stack and the
 * size and whose return hit (rax) the block's address, and free, whose
 * entry hit (rdi) ends a block.  Nothing is written while the target runs;
 * sp_hitstacks_finish writes the blocks still allocated, summed per stack
 * and thread, in columns "bytes" and "blocks".  Hits must arrive in time
 * order (perfev delivers them so): a block freed by another thread is
 * freed after its allocator returned.
 *
 * Ownership: borrows the profile and the output sink.  Never prints.
 */
#ifndef SP_HITSTACK_H
#define SP_HITSTACK_H

#include <stdint.h>

#include "perf_records.h"
#include "profile.h"

struct sp_hitstacks_stats {
	uint64_t hits;      /* entry hits offered (of our processes) */
	uint64_t skipped;   /* left out by sampling (every > 1) */
	uint64_t written;   /* samples written */
	uint64_t cpu;       /* the engine's cpu-clock samples, dropped */
	uint64_t weight;    /* sum of the weights of the written samples (unscaled) */
	/* live */
	uint64_t allocs;    /* blocks recorded (sampled, returned non-NULL) */
	uint64_t frees;     /* free() of a recorded block */
	uint64_t unknown;   /* free() of a block not recorded (allocated before
			     * attaching, or left out by sampling) */
	uint64_t unpaired;  /* allocator entries whose return never came */
	uint64_t live;      /* blocks live at the end */
	uint64_t live_bytes; /* their bytes (unscaled) */
};

/* Weights: weight[0] 1..6 weighs each hit by that integer argument (SysV
 * x86-64: rdi rsi rdx rcx r8 r9), 0 no weight; weight[1] 1..6 multiplies
 * it by a second one (calloc: arg1*arg2), 0 none.  every >= 1 (0 = 1).
 * live: the live-bytes view (the roles say the weights; weight ignored). */
struct sp_hitstacks_opts {
	int weight[2];
	unsigned every;
	int live;
};

/* What a probe is to the live view. */
enum sp_hit_role {
	SP_HIT_OTHER = 0,
	SP_HIT_MALLOC,  /* size arg1, returns the block */
	SP_HIT_CALLOC,  /* size arg1*arg2 */
	SP_HIT_REALLOC, /* block arg1 (may be NULL), size arg2; returns the new block */
	SP_HIT_FREE,    /* block arg1 */
};

struct sp_hitstacks;

/* nprobes: the number of probes if known, or 0 (cookies 2*i for entries,
 * 2*i+1 for returns, as trace_events.h; the tables grow with the cookies seen). */
struct sp_hitstacks *sp_hitstacks_new(struct sp_profile *p, struct sp_sink *out, size_t nprobes,
				      const struct sp_hitstacks_opts *o);
void sp_hitstacks_free(struct sp_hitstacks *h); /* NULL ok */
/* opts.live: probe i's role. */
void sp_hitstacks_role(struct sp_hitstacks *h, size_t probe, enum sp_hit_role role);

/* The sink to give the engine (sp_collect_new). */
struct sp_sink *sp_hitstacks_sink(struct sp_hitstacks *h);

/* A hit u of one of our processes: an entry's stack goes through the
 * engine's sample callback (engine: the engine's handler).  Return hits
 * (odd cookies) matter to the live view only.  stack: u's stack copy with
 * return addresses fixed (sp_tracer_fix_stack), or NULL for u's own. */
void sp_hitstacks_hit(struct sp_hitstacks *h, const struct sp_perf_handler *engine, const struct sp_perf_uprobe *u,
		      const uint8_t *stack);

/* opts.live: write the blocks still allocated, at time `time`.  Returns
 * 0, or -1 with err set (the output sink failed).  Other modes: 0. */
int sp_hitstacks_finish(struct sp_hitstacks *h, uint64_t time, struct sp_err *err);

const struct sp_hitstacks_stats *sp_hitstacks_stats(const struct sp_hitstacks *h);
/* Non-zero once the output sink failed; *err gets its error. */
int sp_hitstacks_error(const struct sp_hitstacks *h, struct sp_err *err);

#endif
