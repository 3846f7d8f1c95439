/* format.h — the table of foreign-format readers, and the writers.
 *
 * Every input format is a module with a name, a probe and a reader.  The
 * reader parses an sp_input into a profile and pushes samples into a sink.
 * Commands pick a format by name (-f NAME) or by probing the first bytes;
 * they never include a format's internals.  A profile is written through
 * sp_writer (folded text, the binary stream or pprof), which the library's
 * transforms and the commands open alike.
 */
#ifndef SP_FORMAT_H
#define SP_FORMAT_H

#include <stdio.h>

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
	/* perf: samples' times are not wanted (folded output has none): the
	 * timestamps are not parsed, and samples carry SP_NO_TIME. */
	int no_time;
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

/* ---- writers ---- */

/* The encodings a profile is written in.  SP_OUT_AUTO: the input's (the
 * binary stream when one was read, else folded text). */
enum sp_output { SP_OUT_AUTO = 0, SP_OUT_FOLDED, SP_OUT_BINARY, SP_OUT_PPROF };
/* -O's value for the commands that write folded text or the stream:
 * "folded", "stream" (or "binary"); SP_OUT_AUTO for anything else. */
enum sp_output sp_opt_encoding(const char *name);
/* The encoding written: o, or for SP_OUT_AUTO the binary stream when the
 * input read (in, may be NULL) was one, else folded text. */
enum sp_output sp_output_kind(enum sp_output o, const struct sp_format *in);

struct sp_fold_opts;
struct sp_writer;
/* SP_WRITER_NO_TTY: refuse to write the binary stream to a terminal. */
#define SP_WRITER_NO_TTY 1
/* A writer of p's samples to out (not closed here) in the encoding kind
 * (SP_OUT_FOLDED with fo, which NULL means labelled by comm without
 * annotations; SP_OUT_BINARY; SP_OUT_PPROF).  NULL with err when flags
 * refuse out. */
struct sp_writer *sp_writer_open(enum sp_output kind, FILE *out, struct sp_profile *p, const struct sp_fold_opts *fo,
				 int flags, struct sp_err *err);
struct sp_sink *sp_writer_sink(struct sp_writer *w);
/* The folded writer's fold (pfold's options and threads), else NULL. */
struct sp_fold *sp_writer_fold(struct sp_writer *w);
/* Pass what is written so far on to out (the stream's records; folded
 * text and pprof are written whole at the end: nothing to do). */
int sp_writer_flush(struct sp_writer *w, struct sp_err *err);
/* Write the end: the stream's trailer, the folded text, pprof's message. */
int sp_writer_finish(struct sp_writer *w, struct sp_err *err);
void sp_writer_free(struct sp_writer *w);
/* Distinct stacks written so far (the stream's, the fold's); 0 for pprof. */
uint64_t sp_writer_stacks(const struct sp_writer *w);

#endif
