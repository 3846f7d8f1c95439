/* latency.h — call durations from trace events (preport --latency): per
 * traced function, count, min, p50, p90, p95, p99, max and a log2
 * histogram (the shape of bcc's funclatency); point events (FUNC+OFF,
 * FUNC:entry) as hit counts.  Optionally grouped by a recorded value
 * (--by arg2): the value the call's entry (or exit: ret) carried.
 *
 * Pairing: by the trace's call id when the stream has one; else, for
 * streams without it, the innermost open call of the same function on the
 * thread.  Abandoned calls (left by longjmp or an exception) and calls
 * still open at the end are counted, not measured.
 *
 * Memory: one duration per call (8 bytes), open calls per thread.
 */
#ifndef SP_LATENCY_H
#define SP_LATENCY_H

#include <stdio.h>

#include "profile.h"

struct sp_latency;

/* by: a value name ("arg2", "ret") to group by, NULL for none. */
struct sp_latency *sp_latency_new(const char *by);
void sp_latency_free(struct sp_latency *l); /* NULL ok */
/* Feed every trace event of the input, in order. */
void sp_latency_trace(struct sp_latency *l, struct sp_profile *p, const struct sp_trace *t);
/* Number of trace events seen. */
uint64_t sp_latency_events(const struct sp_latency *l);

/* The report: text (tables and histograms) or json
 * {"probes":[{"probe","kind","count","min_us",...,"max_us"}]}.
 * Returns 0, or -1 on a write error (err filled). */
int sp_latency_report(struct sp_latency *l, struct sp_profile *p, int json, FILE *out, struct sp_err *err);

#endif
