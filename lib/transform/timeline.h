/* timeline.h — traced calls one at a time (ptimeline): every call of the
 * input's trace events on its thread, with the samples taken meanwhile,
 * written as the Chrome Trace Event Format (formats/chrometrace.h) that
 * Perfetto, chrome://tracing and speedscope open.
 *
 * What becomes what: a thread is a track (metadata process_name and
 * thread_name); a call (entry + exit, paired by call id, else the
 * innermost open call of the function on its thread, as latency.h) is a
 * complete event named after the function, its recorded values (arg1,
 * ret) in args; a point hit (a line probe) an instant event with its
 * variables; a CPU sample a "samples" entry whose "sf" is its stack in
 * "stackFrames" (node ids of the profile); an off-CPU or wall interval
 * (pcollect --off-cpu/--wall: a "[blocked]" or "[preempted]" leaf over the
 * off-cpu-ns/wall-ns column) a complete event with its stack.  Nothing is
 * dropped: a call without its exit ends at the input's last timestamp,
 * category "unfinished"; an exit without its entry begins at the input's
 * first, category "begun-before"; a call left by longjmp or an exception,
 * category "abandoned"; lost hits and lost samples (metadata trace-lost,
 * lost) are global instant events, category "lost".  Times are written
 * from the input's first timestamp (otherData.origin_ns).
 *
 * Selection: calls of the traced functions (or of opts.func) are picked
 * by duration (the N slowest, those at or above a time, those at or above
 * a percentile of their function: the slowest of each function apart);
 * around each picked call, opts.context ns on either side, everything of
 * its thread is kept (with opts.meanwhile, of every thread: what the others
 * did meanwhile), the rest dropped.
 * Picked calls get category "slow".  from/to keep a window.
 *
 * Memory: the whole input's events are held (about 48 bytes a call, 16 a
 * recorded value, 32 a sample) because the selection needs every duration
 * before the first byte is written.
 */
#ifndef SP_TIMELINE_H
#define SP_TIMELINE_H

#include <stdio.h>

#include "profile.h"

struct sp_timeline_opts {
	uint64_t slowest;     /* keep the N slowest calls of each function; 0 = no */
	uint64_t slower_than; /* ns; 0 = no */
	double percentile;    /* 0 < pct < 100; 0 = no */
	const char *func;     /* the selection's function; NULL = every traced one */
	uint64_t context;     /* ns kept on either side of a picked call */
	int meanwhile;        /* keep the other threads' events in the windows too */
	uint64_t from, to;    /* ns of stream time, SP_NO_TIME = open */
	int from_rel, to_rel; /* from/to count from the input's first timestamp */
	int no_samples;       /* leave stackFrames and samples out (speedscope then
			       * imports the calls; with samples it imports those) */
	int sample_slices;    /* the CPU samples as slices nested in the calls they
			       * fell in, instead of samples (speedscope shows
			       * slices or samples, not both) */
	int gzip;
};

struct sp_timeline_stats {
	uint64_t calls, unfinished, begun_before, abandoned, points, samples, offcpu;
	uint64_t picked;            /* calls picked by the selection */
	uint64_t kept_calls, kept_points, kept_samples, kept_offcpu;
	uint64_t func_calls;        /* calls of opts.func (or of every function) */
	uint32_t threads;           /* tracks written */
	uint64_t bytes;             /* written */
	int selecting;
};

struct sp_timeline;

/* p: the profile the input is read into (borrowed); o is copied. */
struct sp_timeline *sp_timeline_new(struct sp_profile *p, const struct sp_timeline_opts *o);
void sp_timeline_free(struct sp_timeline *t); /* NULL ok */
/* The sink to read the input into. */
struct sp_sink *sp_timeline_sink(struct sp_timeline *t);
/* Picks and writes the JSON to out.  Returns 0, or -1 with err (an input
 * without timestamps; picking with opts.func that no call has, code
 * SP_ERR_NOMATCH, before anything is written; a write error). */
int sp_timeline_write(struct sp_timeline *t, FILE *out, struct sp_err *err);
const struct sp_timeline_stats *sp_timeline_stats(const struct sp_timeline *t);

#endif
