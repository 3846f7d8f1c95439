/* perf_script_jobs.h — perf script text folded by several threads (pfold -j), from a
 * file or a pipe (read into a ring of buffers). */
#ifndef SP_PERF_SCRIPT_JOBS_H
#define SP_PERF_SCRIPT_JOBS_H

#include "fold.h"
#include "format.h"

/* The default chunk: small, because every page of memory a process touches
 * for the first time is a page fault (a ring of 2 * jobs + 1 chunks is
 * touched once and reused, where 4 MB chunks cost 20 MB of faults), but not
 * too small: each chunk is a read, a hand-over and, from a pipe, a wake-up
 * of the writer (tests/bench/ab-cpu.sh compares chunk sizes). */
#define SP_PERF_CHUNK (512u << 10)

struct sp_perf_par_opts {
	unsigned jobs;                  /* worker threads (the caller reads) */
	size_t chunk;                   /* bytes per chunk, 0 = SP_PERF_CHUNK */
	const struct sp_fold_opts *fold; /* for the workers' folds */
	int lines;                      /* sp_fold_set_lines */
};

/* Read perf script text from in (already probed; nothing consumed yet) and
 * add its samples to fold (over p).  One of the worker threads folds into
 * fold and p directly: the caller must not use them until this returns.  o is used as by the perf reader:
 * warnings go to o->warn in input order with lines counted from the start
 * of in, o->bad_lines is added to.  The folded output of fold is the same
 * as one pass of the perf reader would give.  Returns 0, or -1 (err). */
int sp_perf_fold_parallel(struct sp_input *in, const struct sp_perf_par_opts *po, struct sp_profile *p,
			  struct sp_fold *fold, struct sp_read_opts *o, struct sp_err *err);

/* Where to cut perf script text [p, p+n) into whole samples: the offset
 * just after the last blank line, else before the last line that starts in
 * column 0 (samples without blank lines between them); 0 when neither. */
size_t sp_perf_cut(const char *p, size_t n);

#endif
