/* flame.h — the tree a flame graph draws: samples merged by call path.
 *
 * An sp_flame is a sink.  Every sample's stack (root first, or leaf first
 * with `reverse`) is merged into a tree of frames keyed by (parent, display
 * name), so two frames that print the same merge, as lines that became equal
 * merge in folded output.  A sample with a thread gets the thread's name
 * (comm, like pfold) as its root frame.
 *
 * Two layouts:
 *  - the flame graph: children sorted by name (byte order, the default, so
 *    graphs of similar profiles stay comparable) or by weight (heaviest
 *    first); a frame's own samples sit at its left edge, its children
 *    follow.  Memory grows with the number of distinct stacks.
 *  - the flame chart: samples in time order (timestamps when the input has
 *    them, else input order), grouped by thread; only frames of adjacent
 *    samples merge, and x is the running sum of the samples' weights.  Every
 *    sample is kept until sp_flame_finish (memory grows with samples).
 *
 * Values: one column (the one named by `weight`, else "period" when the
 * profile has it, else the first), or two for a differential profile (value
 * names "a","b": a = before, b = after).  The width of a frame is b, or a
 * with `show_removed` (the first profile's shape); frames whose width is 0
 * are kept in the tree so a writer can tell what vanished.  Negative values
 * count as 0.
 *
 * sp_flame_finish builds the node array in preorder (node 0 is the root,
 * "all", depth 0).  The array, and the names it points at, belong to the
 * sp_flame and live until sp_flame_free.  The library never prints.
 */
#ifndef SP_FLAME_H
#define SP_FLAME_H

#include "fold.h"
#include "profile.h"

enum sp_flame_sort { SP_FLAME_SORT_NAME = 0, SP_FLAME_SORT_WEIGHT = 1 };

struct sp_flame_opts {
	enum sp_fold_label label; /* root frame for samples that have a thread */
	int reverse;              /* merge stacks leaf first (a "callers" view) */
	int flamechart;           /* time order, only adjacent frames merge */
	enum sp_flame_sort sort;
	int show_removed;         /* diff: width from a instead of b */
	const char *weight;       /* value column name, NULL = default */
	int each_thread;          /* SP_LABEL_COMM: numbered names not grouped (sp_thread_group) */
};

struct sp_flame_node {
	uint32_t parent;   /* node index; the root's parent is 0 too */
	uint32_t depth;    /* root 0 */
	uint32_t name;     /* index into the flame's name table */
	uint32_t end;      /* one past the last node of this subtree (preorder) */
	uint8_t kind;      /* enum sp_kind: from the frame, or its _[k]/_[j]/_[i] suffix */
	double x, w;       /* start and width, in value units, of the drawn shape */
};

/* A differential profile's values of a node, apart (sp_flame_deltas): the
 * nodes of a plain one stay small, 40 bytes. */
struct sp_flame_delta {
	double a, b;       /* totals of the first and second profile */
	double self_delta; /* b - a of the samples that end here */
};

struct sp_flame;

struct sp_flame *sp_flame_new(struct sp_profile *p, const struct sp_flame_opts *o);
void sp_flame_free(struct sp_flame *f);
struct sp_sink *sp_flame_sink(struct sp_flame *f);

/* Merge and lay out what was read.  Call once, after the last input. */
void sp_flame_finish(struct sp_flame *f);

/* After sp_flame_finish: the nodes in preorder, node 0 = "all". */
size_t sp_flame_count(const struct sp_flame *f);
const struct sp_flame_node *sp_flame_nodes(const struct sp_flame *f);
/* After sp_flame_finish, a diff only: its values by node index, in the order
 * of sp_flame_nodes; NULL for a plain profile (there a = b = w, and the
 * self delta is 0). */
const struct sp_flame_delta *sp_flame_deltas(const struct sp_flame *f);
/* Display names (annotation suffixes such as _[k] removed) with their kind,
 * one entry per distinct (name, kind); indexed by sp_flame_node.name.  The
 * bytes are as read: not necessarily UTF-8, not NUL-free. */
size_t sp_flame_names(const struct sp_flame *f);
const char *sp_flame_name(const struct sp_flame *f, uint32_t name, size_t *len);
unsigned sp_flame_name_kind(const struct sp_flame *f, uint32_t name);

int sp_flame_is_diff(const struct sp_flame *f);
/* Every value added was an integer (so are the sums, below 2^53). */
int sp_flame_integral(const struct sp_flame *f);
uint64_t sp_flame_samples(const struct sp_flame *f); /* samples added */
double sp_flame_max_delta(const struct sp_flame *f); /* largest |self_delta|, >= 1 */
/* Diff: the total of the first profile under frames whose width is 0 (paths
 * that vanished from the second profile), and how many such frames head a
 * vanished subtree. */
double sp_flame_removed(const struct sp_flame *f, size_t *nframes);
/* The unit of the drawn values (sp_value_unit of the column): "samples",
 * "ns", "" (unknown: folded text), ...; "samples" before the first sample. */
const char *sp_flame_unit(const struct sp_flame *f);
/* Where the frames of a name are: "file.c:12", "file.c, several lines",
 * "several files", or nothing when the input has no source lines. */
void sp_flame_name_source(const struct sp_flame *f, uint32_t name, struct sp_buf *out);

#endif
