/* rolling.h — the last seconds of a stream, and renders repeated as it
 * grows (psvg --last, --every; pspeedscope --last).
 *
 * An sp_roll is a sink that keeps what a renderer will need: with `last`,
 * the samples of the last `last` ns of stream time (the same selection as
 * pfilter --last: time >= newest - last); without it, one sum per distinct
 * (stack, thread), so memory grows with distinct stacks (or every sample,
 * with keep_samples: a flame chart needs their order).  sp_roll_feed
 * replays what is kept into another sink (a fresh sp_flame, a speedscope
 * writer).  With `every`, the render callback is called each time stream
 * time passes another `every` ns, before the sample that crossed the mark
 * is added; the caller renders once more at the end.
 *
 * Samples need timestamps when last or every is set; the first sample
 * without one stops the read with an error.  Metadata and end-of-input
 * calls are passed on to `fwd` (may be NULL) as they come.  Trace records
 * are not kept.
 */
#ifndef SP_ROLLING_H
#define SP_ROLLING_H

#include "profile.h"

struct sp_roll_opts {
	uint64_t last;     /* ns of stream time to keep, 0 = all */
	uint64_t every;    /* ns of stream time between renders, 0 = none */
	int keep_samples;  /* keep every sample (in input order), not sums */
	const char *what;  /* the option, for messages: "--last" */
	/* Called for --every; returns 0 or -1 (err filled) to stop the read. */
	int (*render)(void *ctx, struct sp_profile *p, struct sp_err *err);
	void *ctx;
	struct sp_sink *fwd;
};

struct sp_roll;
struct sp_roll *sp_roll_new(const struct sp_roll_opts *o);
void sp_roll_free(struct sp_roll *r);
struct sp_sink *sp_roll_sink(struct sp_roll *r);
/* Replays what is kept into sink: samples in input order, or one sample
 * per distinct (stack, thread) with the summed values and the newest time. */
int sp_roll_feed(struct sp_roll *r, struct sp_profile *p, struct sp_sink *sink, struct sp_err *err);
/* Renders so far, the stream time the kept samples span (ns) and the newest
 * time (SP_NO_TIME before the first timed sample). */
uint64_t sp_roll_renders(const struct sp_roll *r);
uint64_t sp_roll_newest(const struct sp_roll *r);
uint64_t sp_roll_samples(const struct sp_roll *r); /* samples read */
/* The oldest timestamp read (SP_NO_TIME before the first timed sample):
 * "t=" times are counted from it. */
uint64_t sp_roll_oldest(const struct sp_roll *r);
/* The input being read, for messages (not copied; NULL = none). */
void sp_roll_set_input(struct sp_roll *r, const char *name);

#endif
