/* fold.h — aggregate samples by stack and write folded text.
 *
 * An sp_fold is a sink: every sample adds its values to the entry of its
 * (root label, stack node).  The root label is the thread's name (comm),
 * optionally with pid and tid, as stackcollapse-perf.pl prints it.  Memory
 * grows with the number of distinct stacks, not with the number of samples.
 *
 * Writing builds each distinct stack's text once, sorts the lines by bytes
 * (the order stackcollapse-perf.pl and inferno use), merges lines that became
 * equal (the same name from two modules) and prints "stack value" or, for
 * two-value profiles (value names a,b), "stack a b".
 */
#ifndef SP_FOLD_H
#define SP_FOLD_H

#include <stdio.h>

#include "profile.h"

enum sp_fold_label {
	SP_LABEL_NONE = 0, /* no root frame */
	SP_LABEL_COMM,     /* "comm" (spaces become '_') */
	SP_LABEL_PID,      /* "comm-PID" */
	SP_LABEL_TID,      /* "comm-PID/TID" */
};

struct sp_fold_opts {
	enum sp_fold_label label; /* for samples that have a thread */
	int annotate_kernel;      /* _[k] on kernel frames */
	int annotate_jit;         /* _[j] on jit frames */
	const char *weight;       /* value column to print (sp_value_column):
				   * NULL = "period" when present, else the first */
	int each_thread;          /* SP_LABEL_COMM: every thread name its own root,
				   * numbered names not grouped (sp_thread_group) */
};

struct sp_fold;

struct sp_fold *sp_fold_new(struct sp_profile *p, const struct sp_fold_opts *o);
void sp_fold_free(struct sp_fold *f);
struct sp_sink *sp_fold_sink(struct sp_fold *f);
/* pfold --value: the column sp_fold_write prints, by name or index (value
 * borrowed); one the input lacks is an error naming its columns. */
void sp_fold_set_value(struct sp_fold *f, const char *value);
/* Add everything of src (which may use another profile) into dst. */
void sp_fold_merge(struct sp_fold *dst, struct sp_fold *src);
/* Take src, a fold of another profile srcp, into dst without merging: both
 * are freed with dst, and dst is written as if src had been merged into it
 * (sp_fold_write renders each adopted fold in a thread of its own and merges
 * the sorted lines).  What pfold -j does with its workers' folds. */
void sp_fold_adopt(struct sp_fold *dst, struct sp_fold *src, struct sp_profile *srcp);
/* Write sorted folded lines to out.  Returns 0, or -1 when out failed. */
int sp_fold_write(struct sp_fold *f, FILE *out, struct sp_err *err);
uint64_t sp_fold_samples(const struct sp_fold *f); /* samples added */
uint64_t sp_fold_stacks(const struct sp_fold *f);  /* entries (adopted folds' too) */

/* The display name of a frame in folded text (with _[k]/_[j] as asked). */
/* The root frame a sample of thread gets for a label kind ("comm",
 * "comm-PID", "comm-PID/TID"; spaces in comm become '_'), a synthetic frame
 * of p, memoised per thread id.  0 for no thread or SP_LABEL_NONE. */
struct sp_label_cache {
	uint32_t *frame_of; /* thread id -> frame id + 1, 0 = not yet */
	size_t n;
	int group;          /* SP_LABEL_COMM: numbered thread names grouped
			     * (sp_thread_group); set before the first call */
};
/* A thread-per-request server names its threads by number: the root of
 * each is the name with every number that follows '-' or '_' after a letter
 * or digit (and ends
 * the name or comes before '-', '_', ' ' or '(') spelled N:
 * "Thread-575 (process_request_thread)" is "Thread-N (process_request_thread)",
 * "ThreadPoolExecutor-0_3" "ThreadPoolExecutor-N_N", "pool-1-thread-7"
 * "pool-N-thread-N", "worker-12" "worker-N"; "python3", "kworker/0:1" stay.
 * Appends the grouped name to out; returns 1 when it differs from name. */
int sp_thread_group(const char *name, struct sp_buf *out);
uint32_t sp_label_frame(struct sp_label_cache *c, struct sp_profile *p, uint32_t thread, enum sp_fold_label label);
void sp_label_cache_release(struct sp_label_cache *c);

void sp_fold_frame_name(const struct sp_profile *p, uint32_t frame, const struct sp_fold_opts *o,
			struct sp_buf *out);
/* The same, and with lines set, "func (file:line)" for every frame that has
 * a source file (py-spy's spelling; Python frames always have it). */
void sp_fold_frame_name_lines(const struct sp_profile *p, uint32_t frame, const struct sp_fold_opts *o, int lines,
			      struct sp_buf *out);
/* pfold --lines: name frames with their source lines. */
void sp_fold_set_lines(struct sp_fold *f, int lines);

#endif
