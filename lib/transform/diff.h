/* diff.h — differential profiles (pdiff) and merging (pmerge).
 *
 * pdiff: two inputs A and B become one two-value profile, "stack a b" for
 * every stack in either (0 where absent), as difffolded.pl writes it; or
 * one timestamped input is split by calls of a function into "outside slow
 * calls" (a) and "inside slow calls" (b).  Memory grows with distinct
 * stacks.  Samples of a thread are kept under the thread's name only, so
 * the same thread of two runs matches.
 *
 * pmerge: any number of inputs summed into one output, streamed: binary
 * samples are passed through (with ids remapped by the reader) in input
 * order, folded inputs aggregated.
 */
#ifndef SP_DIFF_H
#define SP_DIFF_H

#include <stdio.h>

#include "filter.h"
#include "report.h"

/* Root frames (the process name of a stream, the first frame of folded
 * text) of two profiles: matched when each input is one process (auto),
 * kept apart, dropped, or one renamed to another. */
enum sp_roots { SP_ROOTS_AUTO = 0, SP_ROOTS_KEEP, SP_ROOTS_DROP, SP_ROOTS_MAP };
struct sp_roots_opts {
	enum sp_roots mode;
	const char *from, *to; /* SP_ROOTS_MAP: the first input's root from is read as to */
};
/* Parse --roots=auto|keep|drop|FROM=TO into r.  Returns 0 or -1. */
int sp_roots_parse(const char *arg, struct sp_roots_opts *r);

struct sp_diff_opts {
	const char *format;          /* -f */
	struct sp_read_opts *read;
	enum sp_output output;
	int normalize;               /* -n: scale a to b's total, truncated to integers as the peers do */
	int strip_hex;               /* -s: "0x1234" -> "0x..." before matching */
	int keep_suffixes;           /* --keep-suffixes: compare foo.isra.0 as itself */
	const char *split_func;      /* --split FUNC[:PCT] */
	double split_pct;
	uint64_t max_gap;            /* ns, 0 = default (see calls.h) */
	int cpu_time;                /* durations on CPU (see calls.h) */
	int report;                  /* --report: a table instead of a profile */
	struct sp_report_opts ropts;
	int quiet;                   /* no call statistics */
	struct sp_roots_opts roots;  /* --roots */
	const char *weight;          /* --weight: value column compared (sp_value_column) */
};

/* Runs pdiff on files (two, or one with split_func).  *change gets the
 * largest change of a function's self or total share, in percentage
 * points.  Messages for the user are appended to msg.  Returns 0 or -1. */
int sp_diff_run(const struct sp_diff_opts *o, char **files, int nfiles, FILE *out, struct sp_buf *msg,
		double *change, struct sp_err *err);

struct sp_merge_opts {
	const char *format;
	struct sp_read_opts *read;
	enum sp_output output;
	int tag;                     /* root frame naming each input (its "host" metadata or file name) */
	struct sp_roots_opts roots;  /* --roots: keep (SP_ROOTS_AUTO too), drop or FROM=TO in every input */
};

int sp_merge_run(const struct sp_merge_opts *o, char **files, int nfiles, FILE *out, struct sp_err *err);

#endif
