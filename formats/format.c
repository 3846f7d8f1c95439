/* format.c — the table of input formats and probing. */
#include "format.h"

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
