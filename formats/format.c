/* format.c — the table of input formats and probing. */
#include "format.h"

static const struct sp_format *const formats[] = {
	&sp_format_stream,
	&sp_format_perf,
	&sp_format_pyspy,
	&sp_format_folded,
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
	if (!strcmp(name, "binary"))
		return &sp_format_stream;
	return NULL;
}

const char *sp_format_names(void) { return "perf, folded, pyspy, stream"; }

#define PROBE_BYTES (256 * 1024)

const struct sp_format *sp_format_probe(struct sp_input *in)
{
	const char *buf;
	size_t n;
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
