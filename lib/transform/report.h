/* report.h — aggregation by (thread, stack) with one or two value columns,
 * and the text views built on it: top functions by self and total, the
 * call tree (preport), and the table of what changed between two profiles
 * (pdiff --report).
 *
 * An sp_agg holds one entry per distinct (thread, stack node) of a profile:
 * memory grows with distinct stacks.  It does not own the profile.
 */
#ifndef SP_REPORT_H
#define SP_REPORT_H

#include <stdio.h>

#include "profile.h"

struct sp_agg;

struct sp_agg *sp_agg_new(struct sp_profile *p, int ncols); /* ncols 1 or 2 */
void sp_agg_free(struct sp_agg *a);
/* The values of (thread, node), zero when new; valid until the next call. */
double *sp_agg_entry(struct sp_agg *a, uint32_t thread, uint32_t node);
size_t sp_agg_count(const struct sp_agg *a);
/* Entry i (in insertion order). */
const double *sp_agg_get(const struct sp_agg *a, size_t i, uint32_t *thread, uint32_t *node);
double sp_agg_total(const struct sp_agg *a, int col);
/* Name functions "func (file:line)" when the frame has a source line
 * (preport --lines); off by default. */
void sp_agg_set_lines(struct sp_agg *a, int lines);

/* The thread a sample is reported under: its name only (pid and tid of
 * different runs never match), 0 for none. */
uint32_t sp_agg_thread(struct sp_profile *p, uint32_t thread);
/* The same, with numbered names grouped (fold.h's sp_thread_group:
 * "Thread-575 (f)" is reported as "Thread-N (f)") unless
 * sp_agg_set_each_thread; memoised per thread. */
uint32_t sp_agg_thread_of(struct sp_agg *a, uint32_t thread);
void sp_agg_set_each_thread(struct sp_agg *a, int each);

enum sp_report_format { SP_REPORT_TEXT = 0, SP_REPORT_TSV, SP_REPORT_JSON };

struct sp_report_opts {
	enum sp_report_format format;
	size_t top;          /* rows, 0 = all */
	int sort_total;      /* order by total instead of self */
	int per_thread;      /* one table per thread name */
	double min_share;    /* --tree: prune below this percentage */
	const char *unit;    /* sp_value_unit of the column: "samples", "ns" (shown as ms/s), ... */
	const char *unit_b;  /* pdiff --report: b's, when it differs from a's */
	/* The CPU time the input's samples stand for and the time the kernel
	 * counted for its targets (pcollect's cpu-sampled-ns, cpu-counted-ns),
	 * in ns; 0: not known (not shown) */
	double cpu_sampled_ns, cpu_counted_ns;
};

/* Top functions by self and total (column 0).  Returns 0 or -1 (write
 * error, err filled). */
int sp_report_top(struct sp_agg *a, const struct sp_report_opts *o, FILE *out, struct sp_err *err);
/* The call tree with total and self shares, pruned by min_share. */
int sp_report_tree(struct sp_agg *a, const struct sp_report_opts *o, FILE *out, struct sp_err *err);

/* Callers and/or callees of a function (pprof -peek, speedscope's
 * sandwich): the function named pattern, else every function pattern
 * matches (extended regular expression); for each, its own row and one
 * row per direct caller / callee, in the table's columns (shares of the
 * whole profile).  Returns 0, or -1 with err (err->code SP_ERR_NOMATCH
 * when nothing matches, or a write error). */
int sp_report_peek(struct sp_agg *a, const struct sp_report_opts *o, const char *pattern, int callers,
		   int callees, FILE *out, struct sp_err *err);

/* Two columns (a, b): per function, share of self and total in a and in b;
 * rows ordered by the largest change.  *max_change gets the largest
 * absolute change in percentage points (may be NULL). */
int sp_report_diff(struct sp_agg *a, const struct sp_report_opts *o, FILE *out, double *max_change,
		   struct sp_err *err);
/* The largest absolute change of a function's self or total share, in
 * percentage points, without printing. */
double sp_report_max_change(struct sp_agg *a);

#endif
