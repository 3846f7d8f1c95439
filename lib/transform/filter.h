/* filter.h — stack transforms and sample selection (pfilter, pdiff, pmerge,
 * preport), and inputs that can be read more than once.
 *
 * An sp_filter rewrites the stack of a sample (rename, hide, collapse
 * recursion, focus, prune, truncate, invert) and decides whether the sample
 * is kept (frame regexes, thread/pid/tid).  Results are memoised per frame,
 * per stack node and per thread, so a repeated stack costs one array
 * lookup: memory grows with distinct stacks, not with samples.  A filter is
 * bound to one profile; new stacks are interned into that profile.
 *
 * An sp_source is an input that can be read again from its start (a file
 * is reopened; standard input is first copied to an unlinked temporary
 * file), for the commands that need a look at the whole input before they
 * can select (time windows relative to the end, call percentiles,
 * --min-share).
 *
 * sp_select is pfilter's engine: a filter plus a time window, "inside slow
 * (or fast) calls of FUNC" selection and --min-share, run as the passes
 * over the input that these need.
 */
#ifndef SP_FILTER_H
#define SP_FILTER_H

#include <stdio.h>

#include "format.h"
#include "profile.h"

/* ---- inputs ---- */

struct sp_source;

/* Opens path ("-" = standard input).  With rereadable set, standard input
 * (or any non-regular file) is copied to an unlinked temporary file first.
 * NULL on error (err filled). */
struct sp_source *sp_source_open(const char *path, int rereadable, struct sp_err *err);
void sp_source_free(struct sp_source *s);
const char *sp_source_name(const struct sp_source *s);
/* The input's format: the named one (format != NULL) or the probed one.
 * *fmt is NULL for an empty input (not an error).  Returns 0, or -1 with err
 * filled ("cannot tell the input format"). */
int sp_source_format(struct sp_source *s, const char *format, const struct sp_format **fmt, struct sp_err *err);
/* Reads the whole input from its start into p and sink (a second call reads
 * it again when the source was opened rereadable).  Returns 0 or -1. */
int sp_source_read(struct sp_source *s, const char *format, struct sp_profile *p, struct sp_sink *sink,
		   struct sp_read_opts *o, struct sp_err *err);

/* ---- the stack filter ---- */

enum sp_collapse { SP_COLLAPSE_NONE = 0, SP_COLLAPSE_DIRECT, SP_COLLAPSE_ALL };

/* Every pattern is a POSIX extended regex matched against one frame name
 * (or, with fixed, a plain substring); icase ignores case.  Arrays are
 * borrowed until sp_filter_free. */
struct sp_filter_opts {
	const char *const *grep; /* -e: keep samples with a matching frame */
	size_t ngrep;
	int invert_match;        /* -v: drop them instead */
	const char *const *focus;   /* keep samples through a match; it becomes the root */
	size_t nfocus;
	const char *const *exclude; /* drop samples through a match */
	size_t nexclude;
	const char *const *hide;    /* remove matching frames */
	size_t nhide;
	const char *const *prune;   /* cut the callees of a match */
	size_t nprune;
	const char *const *replace; /* "s/RE/REPL/[gi]", applied in order, first */
	size_t nreplace;
	int icase, fixed;
	const char *thread;         /* regex on the thread name (comm) */
	int64_t pid, tid;           /* -1 = any */
	unsigned max_depth;         /* 0 = no limit */
	enum sp_collapse collapse;
	int invert;                 /* leaf becomes the root (callers view) */
};

#define SP_FILTER_DROP UINT32_MAX

struct sp_filter;

/* Compiles the patterns.  NULL on a bad pattern (err names it). */
struct sp_filter *sp_filter_new(struct sp_profile *p, const struct sp_filter_opts *o, struct sp_err *err);
void sp_filter_free(struct sp_filter *f);
/* Whether the options change stacks or select anything at all. */
int sp_filter_active(const struct sp_filter *f);
/* The transformed stack of node, or SP_FILTER_DROP. */
uint32_t sp_filter_stack(struct sp_filter *f, uint32_t node);
/* Thread selection: 1 to keep.  A sample without a thread is judged by its
 * root frame when it reads "comm", "comm-PID" or "comm-PID/TID" (folded
 * text written by pfold, --pid, --tid). */
int sp_filter_thread(struct sp_filter *f, uint32_t thread, uint32_t node);

/* ---- pfilter's engine ---- */

struct sp_select_opts {
	struct sp_filter_opts f;
	/* Time window, ns as in the stream.  A relative bound counts from the
	 * first sample's time. */
	uint64_t from, to;      /* SP_NO_TIME = open */
	int from_rel, to_rel;
	uint64_t last;          /* --last, ns; 0 = none */
	/* --slow / --fast FUNC[:PCT] */
	const char *func;
	double pct;
	int fast;
	uint64_t max_gap;       /* ns, 0 = default (see calls.h) */
	int cpu_time;           /* durations on CPU (see calls.h) */
	double min_share;       /* percent; 0 = none */
	const char *weight;     /* the column min_share weighs (sp_value_column) */
	enum sp_output output;
	const char *format;     /* -f: force the input format */
	int quiet;              /* no call statistics on stderr */
	int stats;              /* counts on stderr */
	struct sp_read_opts *read;
};

/* Runs the selection over files (read as one input, in order) and writes
 * the result to out in the encoding of the first input (or as asked).
 * Messages for the user (call statistics, --stats), one per line, are
 * appended to msg.  Returns 0, 1 when no sample was selected (the output
 * is then a valid empty profile), or -1 (err filled). */
int sp_select_run(const struct sp_select_opts *o, char **files, int nfiles, FILE *out, struct sp_buf *msg,
		  struct sp_err *err);

/* Parses "FUNC[:PCT]" (PCT default 95, 0 < PCT < 100).  *func points into a
 * static copy.  Returns 0 or -1. */
int sp_parse_func_pct(const char *arg, char *func, size_t funcsz, double *pct);


#endif
