/* cprofile.h — Python's cProfile/pstats files (`python -m cProfile -o F`).
 *
 * The file is one marshal'ed dict (pstats' Stats.dump_stats, Python 3.8 to
 * 3.13, marshal versions 2 to 4): key (filename, lineno, funcname) -> value
 * (primitive calls, total calls, tottime, cumtime, callers), where callers
 * maps each caller's key to (primitive calls, total calls, tottime,
 * cumtime) of that edge (cProfile) or to a call count (the pure-Python
 * `profile` module).  Built-ins have filename "~" and line 0.
 *
 * The file holds no stacks, only caller edges.  The reader
 * (sp_format_cprofile in format.h) rebuilds them as flameprof does: from
 * every function without callers, each callee is entered with the edge's
 * cumulative time scaled by the share of the caller's cumulative time its
 * context holds; a function already on the stack is not entered again
 * (recursion is folded into the outermost call).  Each context's own time
 * is the function's tottime split across its contexts in proportion to
 * their time, so a function's own time summed over the flame graph is its
 * tottime exactly (to the nanosecond); how it divides among callers is the
 * approximation.  One value column, "wall-ns" (unit ns: cProfile's default
 * timer is time.perf_counter).
 *
 * sp_cprofile_report prints the exact table from the file, as pstats does.
 */
#ifndef SP_CPROFILE_H
#define SP_CPROFILE_H

#include <stdio.h>

#include "format.h"

struct sp_cprofile_report_opts {
	size_t top;     /* rows, 0 = all */
	int sort_total; /* by cumtime instead of tottime */
	int tsv;        /* tab-separated columns instead of pstats' text */
};

/* The pstats-like table of one cProfile input: per function its calls
 * (total/primitive), tottime, tottime per call, cumtime, cumtime per
 * primitive call and filename:lineno(function), with pstats' header line.
 * Returns 0, or -1 with err filled (bad input: "FILE: offset N: ...",
 * a write error). */
int sp_cprofile_report(struct sp_input *in, FILE *out, const struct sp_cprofile_report_opts *o,
		       struct sp_err *err);

/* preport's hook: when path (format: -f NAME or NULL = probe) is a
 * cProfile file, print its table and return 1 (or -1 with err filled);
 * return 0, having read nothing, for any other input. */
int sp_cprofile_report_file(const char *path, const char *format, FILE *out,
			    const struct sp_cprofile_report_opts *o, struct sp_err *err);

/* Whether the first bytes look like a cProfile file (the probe). */
int sp_cprofile_probe(const char *buf, size_t n, int complete);

#endif
