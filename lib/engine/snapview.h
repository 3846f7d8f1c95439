/* snapview.h — what `pcollect --snapshot` shows of one process: each
 * snapshot (snapshot.h) unwound and symbolised, the locks blocked threads
 * wait for and who holds them (locks.h), written as text (thread by thread,
 * with owner chains and deadlocks), as folded text, or as binary-stream
 * samples whose leaf frame is the thread's state ("[futex wait]").
 *
 * Ownership: an sp_snapview owns its profile, symbols, maps, unwinder and
 * writer; it borrows out, which must stay open until sp_snapview_free.  It
 * never prints to stderr: what a caller may report is in sp_snapview_last.
 */
#ifndef SP_SNAPVIEW_H
#define SP_SNAPVIEW_H

#include <stdint.h>
#include <stdio.h>

#include "util.h"

enum sp_snapview_format {
	SP_SNAPVIEW_TEXT = 1,
	SP_SNAPVIEW_FOLDED,
	SP_SNAPVIEW_STREAM,
	SP_SNAPVIEW_JSON,        /* one object per snapshot and line */
};

struct sp_snapview_opts {
	int pid;                 /* the process (not a thread id) */
	const char *threads;     /* extended regex on thread names, NULL = all */
	enum sp_snapview_format format;
	size_t stack;            /* stack bytes copied per thread, 0 = 262144 */
	int lines, no_inline;    /* frames of folded and stream output */
	int verbose;             /* text: how long each thread was stopped */
	double interval;         /* seconds between snapshots (for the metadata) */
	int no_python;           /* do not merge CPython's frames (python.h) */
	int full_filenames;      /* Python files by full path, not relative to sys.path */
	int locals;              /* text: each frame's variables (locals.h) */
};

struct sp_snapview_stats {
	size_t threads;       /* threads of the last snapshot */
	uint64_t window_ns;   /* first interrupt to last detach */
	uint64_t longest_ns;  /* the longest a thread was stopped */
	char python[480];     /* "Python 3.12.1" (frames merged), or why a CPython
			       * was refused; "" when not Python */
	int python_merged;    /* Python frames are merged into the stacks */
	size_t locals_skipped; /* --locals: values not read (the stop's budget) */
	size_t locals_frames;  /* --locals: Python frames whose locals were not read */
	size_t locals_late;    /* --locals: threads not reached during the stop */
	size_t locals_late_frames; /* --locals: frames of the others not reached */
	size_t locals_reads;   /* --locals: reads of the stopped process for native values */
	uint64_t locals_ns;    /* --locals: time the stop spent on the values */
	uint64_t locals_cpu_ns; /* of which pcollect was on a CPU */
};

struct sp_snapview;

/* NULL with err set when an option is wrong (the regex). */
struct sp_snapview *sp_snapview_new(const struct sp_snapview_opts *o, FILE *out, struct sp_err *err);
void sp_snapview_free(struct sp_snapview *v); /* NULL ok */

/* Take one snapshot and write it.  Returns 0; -1 with err set; or the
 * number of the signal (SIGINT, SIGTERM, SIGHUP) that came during the stop:
 * the snapshot was abandoned and the process let go. */
int sp_snapview_take(struct sp_snapview *v, struct sp_err *err);
const struct sp_snapview_stats *sp_snapview_last(const struct sp_snapview *v);

/* Folded and stream output: write what the snapshots collected (the fold,
 * the stream's trailer).  Returns 0 or -1 with err set. */
int sp_snapview_finish(struct sp_snapview *v, struct sp_err *err);

#endif
