/* calls.h — calls of one function, inferred from timestamped samples (or
 * read from trace events), their duration percentiles, and which samples
 * fall inside slow or fast calls (pfilter --slow/--fast, pdiff --split).
 *
 * Inference from samples: on each thread, a call of FUNC is a maximal run
 * of consecutive samples of that thread whose stacks hold FUNC (its
 * outermost frame) on the same callers, with no gap between two samples
 * longer than SP_CALLS_GAP sampling periods (or a gap given in ns).  Its duration is the run's
 * time span plus one period.  The period is the median time between
 * consecutive samples of a thread, measured on the input.  Limits: a call
 * shorter than a period may not be seen at all; two calls made back to
 * back from the same call site, with no sample outside FUNC between them,
 * read as one; a thread descheduled inside FUNC for longer than the gap
 * splits the call.
 *
 * When the input holds trace events (entry/exit) of FUNC, calls come from
 * them instead: exact durations, and a sample is inside a call when it
 * arrives on the call's thread between its entry and exit.
 *
 * Use: observe every sample and trace once (sp_calls_observe) to measure
 * the period; run a learning pass (sp_calls_begin(.., 1), sp_calls_sample
 * with emit NULL, sp_calls_end) which fixes the threshold; then a
 * classifying pass that hands every sample to emit with where = NONE
 * (outside any call: at once), FAST or SLOW (at the end of its call, so a
 * call's samples are held until it ends — memory grows with the longest
 * call, not with the input).
 */
#ifndef SP_CALLS_H
#define SP_CALLS_H

#include <stdio.h>

#include "profile.h"

#define SP_CALLS_GAP 4 /* periods */

enum sp_call_where { SP_CALL_NONE = 0, SP_CALL_FAST = 1, SP_CALL_SLOW = 2 };

typedef int (*sp_calls_emit)(void *ctx, const struct sp_sample *smp, enum sp_call_where where,
			     struct sp_err *err);

struct sp_calls;

/* func: a frame matches when its name equals func, or starts with func
 * followed by '(' (C++ signatures) or " (" (Python frames).  pct: the
 * percentile (0 < pct < 100) at or above which a call is slow. */
struct sp_calls *sp_calls_new(const char *func, double pct);
void sp_calls_free(struct sp_calls *c);
/* The longest gap between two samples of one call, ns; 0 (the default) is
 * SP_CALLS_GAP periods. */
void sp_calls_set_gap(struct sp_calls *c, uint64_t ns);
/* Measure a call by its time on CPU instead of its time span: the sum of
 * its samples' periods when the event counts time in ns (cpu-clock,
 * task-clock), else its samples times the measured period.  Load on the
 * machine (descheduling) does not change it; latency does not show. */
void sp_calls_set_cpu(struct sp_calls *c, int on);

/* Measuring pass: sample times per thread, trace events of func.  Returns
 * -1 (err filled, names no file) when a sample has no timestamp. */
int sp_calls_observe(struct sp_calls *c, struct sp_profile *p, const struct sp_sample *smp, struct sp_err *err);
void sp_calls_observe_trace(struct sp_calls *c, struct sp_profile *p, const struct sp_trace *t);

/* Starts a pass over the input read into p; learning = 1 records call
 * durations, 0 classifies against the threshold of the learning pass. */
void sp_calls_begin(struct sp_calls *c, struct sp_profile *p, int learning);
int sp_calls_sample(struct sp_calls *c, const struct sp_sample *smp, sp_calls_emit emit, void *ctx,
		    struct sp_err *err);
int sp_calls_trace(struct sp_calls *c, const struct sp_trace *t, sp_calls_emit emit, void *ctx,
		   struct sp_err *err);
/* End of the input: closes open calls (emitting their samples). */
int sp_calls_end(struct sp_calls *c, sp_calls_emit emit, void *ctx, struct sp_err *err);

struct sp_call_stats {
	uint64_t calls;          /* found in the learning pass */
	uint64_t p50, p95, p99;  /* ns */
	uint64_t threshold;      /* ns: slow = at or above */
	uint64_t period;         /* ns, 0 with traces */
	int traced;              /* durations from trace events */
	uint64_t slow_calls, fast_calls;     /* classifying pass */
	uint64_t slow_samples, fast_samples, outside_samples;
};
const struct sp_call_stats *sp_calls_stats(const struct sp_calls *c);
/* One line: "FUNC: N calls (...), p50 .., p95 .., p99 ..; threshold .." */
void sp_calls_describe(const struct sp_calls *c, const char *func, struct sp_buf *out);

#endif
