/* livetrace.h — plive's traced function: the calls of a function read live
 * from a trace stream (pcollect -F 0 --trace FUNC), over the same window of
 * stream time as plive's samples: calls per second, p50/p95/p99/max, a log2
 * histogram of microseconds (bcc funclatency's buckets), and which of the
 * window's samples fall inside the slowest 5 % of calls.
 *
 * One thread reads (sp_livetrace_read blocks on its input), another
 * computes (sp_livetrace_compute); a mutex guards what they share.  Calls
 * are paired by the trace's call id (or the innermost open call of the
 * thread, as lib/latency pairs them); a point event (a line probe's hit)
 * counts as a call of no duration.  Memory: the window's calls (32 bytes
 * each) plus the open calls.  The library never prints.
 */
#ifndef SP_LIVETRACE_H
#define SP_LIVETRACE_H

#include <stdint.h>

#include "profile.h"
#include "util.h"

struct sp_livetrace;

/* by: a recorded value ("arg1".."arg6", "ret") to group the calls by
 * (latency by value, as preport --latency --by), NULL = none. */
struct sp_livetrace *sp_livetrace_new(uint64_t window_ns, const char *by);
void sp_livetrace_free(struct sp_livetrace *lt); /* NULL ok */
/* Reads path ("/dev/fd/N") until its end or sp_livetrace_stop.  Returns 0
 * or -1 (err filled). */
int sp_livetrace_read(struct sp_livetrace *lt, const char *path, struct sp_err *err);
void sp_livetrace_stop(struct sp_livetrace *lt);
/* 0 while reading, 1 ended, 2 read error */
int sp_livetrace_ended(struct sp_livetrace *lt);
/* Calls (or a line probe's hits) read so far, all time. */
uint64_t sp_livetrace_total(struct sp_livetrace *lt);

/* A sample of the view: its stream time and OS thread id. */
struct sp_live_point {
	uint64_t time;
	uint32_t tid;
};

struct sp_livetrace_stats {
	uint64_t calls;            /* calls that returned inside the window */
	uint64_t total_calls;      /* since the probe started */
	uint64_t events;           /* trace events read */
	uint64_t abandoned;        /* left without returning, in the window */
	double span_s;             /* stream time the window covers */
	uint64_t tend;             /* its end: the newest event's time (ns) */
	double rate;               /* calls per second */
	uint64_t p50, p95, p99, max, threshold; /* ns; slow = at or above threshold (p95) */
	uint64_t hist[64];         /* log2 buckets of microseconds */
	int lo, hi;                /* the buckets used (lo > hi: none) */
	uint64_t samples_slow, samples_fast, samples_outside; /* the points given */
	uint64_t slow_calls;
	/* with by: the values of the most calls in the window, most first */
	struct sp_livetrace_by {
		int64_t value;
		uint64_t calls, p50, p95, max;
	} by[8];
	int nby;
	uint64_t by_values, by_missing; /* distinct values; calls without one */
};
/* Computes over the last window of the trace's own stream time; points
 * (the sample view's, any order) are classified against the window's calls:
 * inside a call at or above p95, inside another call, or outside. */
void sp_livetrace_compute(struct sp_livetrace *lt, const struct sp_live_point *pts, size_t npts,
			  struct sp_livetrace_stats *st);
/* The window's calls (those sp_livetrace_compute counts) pushed into sink
 * as an entry and an exit trace event each (the exit flagged abandoned
 * when it was) of frame, on threads (pid, OS tid) interned in p: plive's W
 * hands them to lib/timeline.  Returns the number of calls, or -1 (err:
 * the sink's). */
int64_t sp_livetrace_emit(struct sp_livetrace *lt, struct sp_profile *p, struct sp_sink *sink, uint32_t frame,
			  int64_t pid, struct sp_err *err);
/* "12.3 us", "4.56 ms", "1.20 s" */
void sp_livetrace_dur(struct sp_buf *b, uint64_t ns);

#endif
