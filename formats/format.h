/* format.h — the table of foreign-format readers.
 *
 * Every input format is a module with a name, a probe and a reader.  The
 * reader parses an sp_input into a profile and pushes samples into a sink.
 * Commands pick a format by name (-f NAME) or by probing the first bytes;
 * they never include a format's internals.
 */
#ifndef SP_FORMAT_H
#define SP_FORMAT_H

#include "input.h"
#include "profile.h"

/* Options understood by readers; a reader ignores what does not apply. */
struct sp_read_opts {
	int addrs;           /* perf: raw address inside [unknown] frames */
	int inline_frames;   /* perf: resolve inlined frames with libdw (--inline) */
	/* perf: keep only samples of this event; NULL = the first event seen
	 * (event_filter_defaulted says the name was picked that way, so a
	 * note is printed when other events are dropped). */
	const char *event_filter;
	int event_filter_defaulted;
	/* Non-fatal problems (a bad line that is skipped): called with the error,
	 * may be NULL.  Readers count them in *bad_lines as well. */
	void (*warn)(void *ctx, const struct sp_err *e);
	void *warn_ctx;
	uint64_t bad_lines;
	/* --partial: use what precedes the cut of a truncated input (a
	 * stream without its trailer), with a warning, instead of refusing. */
	int partial;
	/* pprof: the sample type to read, by index or name (--value); NULL =
	 * every type, the default one as folded output picks it. */
	const char *value;
	/* stream: the value columns (names and units) must be those of the
	 * profile read into, which has some: else an error before the first
	 * sample instead of matching them (pfleet put's shared profile). */
	int same_columns;
};

struct sp_format {
	const char *name;
	const char *description;
	/* Score 0 (not this format) .. 100 (certain) for the first bytes of the
	 * input; `complete` says buf holds the whole input. */
	int (*probe)(const char *buf, size_t n, int complete);
	/* Read the whole input.  Returns 0, or -1 with err filled for a fatal
	 * error (binary stream corruption, read failure). */
	int (*read)(struct sp_input *in, struct sp_profile *p, struct sp_sink *sink,
		    struct sp_read_opts *o, struct sp_err *err);
};

extern const struct sp_format sp_format_perf;    /* perf script text */
extern const struct sp_format sp_format_folded;  /* folded stacks, 1 or 2 values */
extern const struct sp_format sp_format_pyspy;   /* py-spy record --format raw */
extern const struct sp_format sp_format_stream;  /* the binary stream */
extern const struct sp_format sp_format_speedscope; /* speedscope JSON (formats/speedscope.h) */
extern const struct sp_format sp_format_perfdata; /* perf record's perf.data (lib/engine/perf_data.h) */
extern const struct sp_format sp_format_pprof;   /* pprof profile.proto (formats/pprof.h) */
extern const struct sp_format sp_format_cprofile; /* Python cProfile/pstats (formats/cprofile.h) */
extern const struct sp_format sp_format_du;      /* find -printf '%s %p\n' disk usage (formats/du.c) */

const struct sp_format *sp_format_find(const char *name);
/* Probe an input (peeks, does not consume).  NULL when nothing matches. */
const struct sp_format *sp_format_probe(struct sp_input *in);
/* Names of all formats, comma separated, for messages. */
const char *sp_format_names(void);

/* Open and read one input (path "-" = stdin) with the named format, or the
 * probed one when format is NULL.  *used (may be NULL) gets the format that
 * was read.  Returns 0, or -1 with err filled ("empty input", "cannot tell
 * the input format", open/read errors, a reader's fatal error). */
/* -1 with err "NAME: empty input (0 bytes): nothing to read" when the input
 * holds nothing (or failed to read), else 0.  Every reader refuses an empty
 * input: a pipeline step that produced nothing must not pass for a profile
 * of nothing. */
int sp_input_check_empty(struct sp_input *in, struct sp_err *err);

int sp_read_file(const char *path, const char *format, struct sp_profile *p, struct sp_sink *sink,
		 struct sp_read_opts *o, const struct sp_format **used, struct sp_err *err);
/* The same over an open input (not closed here). */
int sp_read_input(struct sp_input *in, const char *format, struct sp_profile *p, struct sp_sink *sink,
		  struct sp_read_opts *o, const struct sp_format **used, struct sp_err *err);

#endif
