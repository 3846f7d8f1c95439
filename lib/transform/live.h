/* live.h — plive's model: a stream read as it grows, summed per function
 * over the last seconds of stream time, an exponentially weighted moving
 * average, or all time.
 *
 * One thread reads (sp_live_read: it blocks on its input) while another
 * computes tables and renders them (sp_live_compute, sp_live_render); an
 * sp_live is safe to share between exactly those two.  The reader's own
 * profile stays inside sp_live_read; what the view needs (function names,
 * stacks as chains of functions, a window of samples) is copied under a
 * mutex once per new frame or stack, and once per sample a few words.
 * Memory grows with distinct stacks plus the samples of the window.
 *
 * A function is a (name, file, line) triple, as py-spy top shows it:
 * "name (file:line)".  Own is the weight of samples whose leaf it is, total
 * of samples with it anywhere on the stack (counted once per sample, so
 * recursion does not inflate it).  The weight is the "period" column when
 * the input has it (pcollect's and perf's cpu-clock nanoseconds), else the
 * first column.  Time is the samples' stream time; a sample without time
 * gets the wall-clock time since sp_live_new.  The library never prints.
 */
#ifndef SP_LIVE_H
#define SP_LIVE_H

#include <regex.h>

#include "format.h"
#include "livetrace.h"
#include "util.h"

enum sp_live_mode { SP_LIVE_WINDOW = 0, SP_LIVE_ALL = 1, SP_LIVE_EWMA = 2 };
enum sp_live_sort { SP_LIVE_SORT_OWN = 0, SP_LIVE_SORT_TOTAL = 1, SP_LIVE_SORT_NAME = 2 };

struct sp_live;

/* window_ns: how much of the past the window mode keeps (samples older
 * than the newest minus this are dropped); half_life_ns: the EWMA's. */
struct sp_live *sp_live_new(uint64_t window_ns, uint64_t half_life_ns);
void sp_live_free(struct sp_live *l);
/* The value column shown (sp_value_column; NULL = the default), set
 * before reading: an unknown name fails the read. */
void sp_live_set_weight(struct sp_live *l, const char *name);

/* Reads path ("-" = stdin) with the format (NULL = probe) into l, until
 * its end.  speed > 0 paces the samples: stream time runs speed times as
 * fast as the wall clock (a recording replayed); 0 reads as fast as it
 * comes.  Returns 0 or -1 (err filled).  Afterwards sp_live_ended says so. */
int sp_live_read(struct sp_live *l, const char *path, const char *format, struct sp_read_opts *ro,
		 double speed, struct sp_err *err);
/* Stops a read: the reader returns at its next sample (with success). */
void sp_live_stop(struct sp_live *l);
/* A replay reads the rest of its input without waiting for its timestamps
 * (plive --once: the end of a FILE is still checked). */
void sp_live_unpace(struct sp_live *l);
/* 0 while reading, 1 after the input ended, 2 after a read error. */
int sp_live_ended(struct sp_live *l);
/* The window's samples as (time, OS thread id), for the traced calls
 * (sp_livetrace_compute): fills *pts, grown as needed; returns the count. */
size_t sp_live_points(struct sp_live *l, struct sp_live_point **pts, size_t *cap);
/* The window's samples pushed into sink (each on thread (pid, its OS
 * tid), its stack's functions as frames of p), for plive's W (lib/
 * timeline).  Returns the number of samples, or -1 (err: the sink's). */
int64_t sp_live_emit(struct sp_live *l, struct sp_profile *p, struct sp_sink *sink, int64_t pid, struct sp_err *err);
/* Samples read so far. */
uint64_t sp_live_samples(struct sp_live *l);

/* One row: a function and its weights in the view. */
struct sp_live_row {
	uint32_t func;
	double own, total;
};

/* What to show.  filter: rows whose "name (file:line)" matches (NULL =
 * all).  detail: a function id (from a row) whose callers and callees to
 * compute, 0 = none. */
struct sp_live_query {
	enum sp_live_mode mode;
	enum sp_live_sort sort;
	const regex_t *filter;
	uint32_t detail;
};

/* A computed table (caller-owned; sp_live_table_release frees it). */
struct sp_live_table {
	struct sp_live_query q;
	struct sp_live_row *rows, *callers, *callees;
	size_t nrows, ncallers, ncallees, cap_rows, cap_callers, cap_callees;
	struct sp_live_row self;  /* the detail function's own row */
	double sum;               /* weight of every sample in the view (100%) */
	uint64_t samples;         /* samples in the view */
	double span_s;            /* stream time the view covers, seconds */
	double rate;              /* samples per second of stream time */
	uint32_t threads;         /* distinct threads in the view */
	uint64_t lost;            /* the input's "lost" metadata */
	uint64_t total_samples;   /* read so far */
	double stream_s;          /* stream time from the first sample to the newest */
	int time_unit;            /* weights are nanoseconds */
	uint64_t window_ns, half_life_ns;
	int ended;                /* sp_live_ended at the time of computing */
};
void sp_live_table_release(struct sp_live_table *t);

/* Computes t (its previous contents are reused) from what was read so far. */
void sp_live_compute(struct sp_live *l, const struct sp_live_query *q, struct sp_live_table *t);

/* How a table is drawn: the screen size, the first row shown (scroll),
 * the selected row (-1 none; drawn in reverse video with ansi), a title
 * (the command line) and a status line (keys, a message). */
struct sp_live_look {
	int width, height;
	int top, sel;
	int ansi;
	int paused;
	const char *title;
	const char *status;
	const char *filter_text;
};
/* Appends the screen (lines ending in "\n"; at most look->height lines
 * when height > 0) to out.  Returns the number of table rows that fit, for
 * scrolling. */
int sp_live_render(struct sp_live *l, const struct sp_live_table *t, const struct sp_live_look *look,
		   struct sp_buf *out);
/* The module (executable or library path) of a function's first frame
 * seen, nothing when unknown. */
void sp_live_func_module(struct sp_live *l, uint32_t func, struct sp_buf *out);
/* The display name of a function: "name (file:line)". */
void sp_live_func_name(struct sp_live *l, uint32_t func, struct sp_buf *out);

#endif
