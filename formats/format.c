/* format.c — the table of input formats, probing, and the writers. */
#include "format.h"

#include <unistd.h>

#include "fold.h"
#include "pprof.h"
#include "stream.h"

static const struct sp_format *const formats[] = {
	&sp_format_stream,
	&sp_format_perf,
	&sp_format_pyspy,
	&sp_format_folded,
	&sp_format_speedscope,
	&sp_format_perfdata,
	&sp_format_pprof,
	&sp_format_cprofile,
	&sp_format_du,
};
#define NFORMATS (sizeof formats / sizeof formats[0])

const struct sp_format *sp_format_find(const char *name)
{
	for (size_t i = 0; i < NFORMATS; i++)
		if (!strcmp(formats[i]->name, name))
			return formats[i];
	if (!strcmp(name, "perf-script"))
		return &sp_format_perf;
	if (!strcmp(name, "py-spy") || !strcmp(name, "raw"))
		return &sp_format_pyspy;
	if (!strcmp(name, "perfdata") || !strcmp(name, "perf-data"))
		return &sp_format_perfdata;
	if (!strcmp(name, "cProfile") || !strcmp(name, "pstats"))
		return &sp_format_cprofile;
	if (!strcmp(name, "binary"))
		return &sp_format_stream;
	return NULL;
}

const char *sp_format_names(void) { return "perf, folded, pyspy, stream, speedscope, perf.data, pprof, cprofile, du"; }

#define PROBE_BYTES (256 * 1024)

const struct sp_format *sp_format_probe(struct sp_input *in)
{
	const char *buf;
	size_t n;
	/* The binary stream's magic is certain in its first 8 bytes: a live
	 * collector's stream (pcollect | plive) arrives a few bytes at a
	 * time and must not wait for PROBE_BYTES. */
	if (sp_input_peek(in, 8, &buf, &n) < 0)
		return NULL;
	if (sp_format_stream.probe(buf, n, 0) == 100)
		return &sp_format_stream;
	if (sp_input_peek(in, PROBE_BYTES, &buf, &n) < 0)
		return NULL;
	int complete = n < PROBE_BYTES;
	const struct sp_format *best = NULL;
	int score = 0;
	for (size_t i = 0; i < NFORMATS; i++) {
		int s = formats[i]->probe(buf, n, complete);
		if (s > score) {
			score = s;
			best = formats[i];
		}
	}
	return best;
}

int sp_input_check_empty(struct sp_input *in, struct sp_err *err)
{
	const char *b;
	size_t n = 0;
	sp_input_peek(in, 1, &b, &n);
	if (sp_input_failed(in, err))
		return -1;
	if (!n) {
		sp_err_set(err, "%s: empty input (0 bytes): nothing to read",
			   strcmp(sp_input_name(in), "-") ? sp_input_name(in) : "standard input");
		err->code = SP_ERR_EMPTY;
		return -1;
	}
	return 0;
}

int sp_read_file(const char *path, const char *format, struct sp_profile *p, struct sp_sink *sink,
		 struct sp_read_opts *o, const struct sp_format **used, struct sp_err *err)
{
	if (used)
		*used = NULL;
	struct sp_input *in = sp_input_open(path, err);
	if (!in)
		return -1;
	int rc = sp_read_input(in, format, p, sink, o, used, err);
	sp_input_close(in);
	return rc;
}

int sp_read_input(struct sp_input *in, const char *format, struct sp_profile *p, struct sp_sink *sink,
		  struct sp_read_opts *o, const struct sp_format **used, struct sp_err *err)
{
	if (used)
		*used = NULL;
	int rc = 0;
	const struct sp_format *fmt = format ? sp_format_find(format) : sp_format_probe(in);
	if (sp_input_check_empty(in, err) < 0) {
		rc = -1;
	} else if (!fmt) {
		if (format)
			rc = sp_err_set(err, "unknown format '%s' (known: %s)", format, sp_format_names());
		else
			rc = sp_err_set(err, "%s: cannot tell the input format (known: %s; choose with -f)",
					sp_input_name(in), sp_format_names());
	} else {
		if (used)
			*used = fmt;
		rc = fmt->read(in, p, sink, o, err);
	}
	return rc;
}

enum sp_output sp_opt_encoding(const char *name)
{
	if (!strcmp(name, "stream") || !strcmp(name, "binary"))
		return SP_OUT_BINARY;
	return !strcmp(name, "folded") ? SP_OUT_FOLDED : SP_OUT_AUTO;
}

enum sp_output sp_output_kind(enum sp_output o, const struct sp_format *in)
{
	if (o != SP_OUT_AUTO)
		return o;
	return in == &sp_format_stream ? SP_OUT_BINARY : SP_OUT_FOLDED;
}

struct sp_writer {
	enum sp_output kind;
	FILE *out;
	struct sp_fold *fold;
	struct sp_stream_writer *stream;
	struct sp_pprof_writer *pprof;
};

struct sp_writer *sp_writer_open(enum sp_output kind, FILE *out, struct sp_profile *p, const struct sp_fold_opts *fo,
				 int flags, struct sp_err *err)
{
	if (kind == SP_OUT_BINARY && (flags & SP_WRITER_NO_TTY) && isatty(fileno(out))) {
		sp_err_set(err, "refusing to write the binary stream to a terminal; pipe it into another "
				"command or use -o FILE");
		return NULL;
	}
	struct sp_writer *w = sp_xcalloc(1, sizeof *w);
	w->kind = kind;
	w->out = out;
	if (kind == SP_OUT_BINARY) {
		w->stream = sp_stream_writer_new(out, p);
	} else if (kind == SP_OUT_PPROF) {
		w->pprof = sp_pprof_writer_new(out, p);
	} else {
		static const struct sp_fold_opts plain = { SP_LABEL_COMM, 0, 0, NULL, 0 };
		w->kind = SP_OUT_FOLDED;
		w->fold = sp_fold_new(p, fo ? fo : &plain);
	}
	return w;
}

struct sp_sink *sp_writer_sink(struct sp_writer *w)
{
	return w->stream ? sp_stream_writer_sink(w->stream)
	       : w->pprof ? sp_pprof_writer_sink(w->pprof) : sp_fold_sink(w->fold);
}

struct sp_fold *sp_writer_fold(struct sp_writer *w) { return w->fold; }

int sp_writer_flush(struct sp_writer *w, struct sp_err *err)
{
	return w->stream ? sp_stream_writer_flush(w->stream, err) : 0;
}

int sp_writer_finish(struct sp_writer *w, struct sp_err *err)
{
	if (w->stream)
		return sp_stream_writer_finish(w->stream, err);
	if (w->pprof)
		return sp_pprof_writer_finish(w->pprof, err);
	return sp_fold_write(w->fold, w->out, err);
}

uint64_t sp_writer_stacks(const struct sp_writer *w)
{
	return w->stream ? sp_stream_writer_stacks(w->stream) : w->fold ? sp_fold_stacks(w->fold) : 0;
}

void sp_writer_free(struct sp_writer *w)
{
	if (!w)
		return;
	sp_stream_writer_free(w->stream);
	sp_pprof_writer_free(w->pprof);
	if (w->fold)
		sp_fold_free(w->fold);
	free(w);
}
