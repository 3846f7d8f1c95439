/* speedscope.h — speedscope's JSON file format, written and read.
 *
 * Schema: https://www.speedscope.app/file-format-schema.json (speedscope's
 * src/lib/file-format-spec.ts): {"$schema", "shared": {"frames": [...]},
 * "profiles": [...], "activeProfileIndex", "name", "exporter"}; a profile is
 * "sampled" (samples = arrays of frame indices, root first, and weights) or
 * "evented" (open/close events at non-decreasing values).
 *
 * Writer: a sink that keeps one compact, time-ordered run of samples per
 * thread (spilled to an unlinked temporary file past a few MB, so memory
 * grows with distinct stacks and threads, not with samples) and, at
 * sp_speedscope_writer_finish, writes the JSON text directly: one sampled
 * profile per thread, then the shared frame table.  No JSON tree is built.
 *
 * Reader: sp_format_speedscope (format.h) reads sampled and evented profiles
 * (py-spy's `record --format speedscope`, speedscope's own exports) into a
 * profile: one thread per profile, times from the weights, and one value
 * column named after the unit ("samples", "ns" for any time unit, "bytes").
 */
#ifndef SP_SPEEDSCOPE_H
#define SP_SPEEDSCOPE_H

#include <stdio.h>

#include "format.h"

struct sp_speedscope_opts {
	const char *name;   /* the file's "name" (speedscope's title); NULL = "profile" */
	int side;           /* two-value input: -1 refuse, 0 = a, 1 = b */
	int all_threads;    /* add one merged profile of the selected threads */
	/* The value column of the weights, by name (sp_value_column: "count"
	 * is "samples"); NULL: a time column (ns) or timestamps -> nanoseconds,
	 * else bytes, else the default column as a plain count. */
	const char *weight;
	uint32_t max_depth; /* frames per stack; deeper stacks are cut (0 = SP_SPEEDSCOPE_MAX_DEPTH) */
	/* Thread selection: called once per thread with its profile name
	 * ("comm (tid)"); returns non-zero to keep it.  NULL keeps every thread. */
	int (*select)(void *ctx, const char *name);
	void *select_ctx;
	/* Non-fatal notes (deep stacks cut, bad weights dropped); may be NULL. */
	void (*warn)(void *ctx, const struct sp_err *e);
	void *warn_ctx;
};

/* speedscope builds its call tree recursively: in Chromium 156, speedscope
 * 1.25 fails ("Maximum call stack size exceeded") on some loads of a
 * 4000-frame stack and loads 3500 reliably (tests/cmd/t5*.sh measure it). */
#define SP_SPEEDSCOPE_MAX_DEPTH 3000

struct sp_speedscope_writer;

/* The writer reads ids from p and writes to out (not closed). opts is copied. */
struct sp_speedscope_writer *sp_speedscope_writer_new(FILE *out, struct sp_profile *p,
						      const struct sp_speedscope_opts *o);
struct sp_sink *sp_speedscope_writer_sink(struct sp_speedscope_writer *w);
/* Write the whole file.  Returns 0, or -1 (no profile selected, a write or
 * temporary-file error) with err filled.  Nothing is written to out before
 * this call. */
int sp_speedscope_writer_finish(struct sp_speedscope_writer *w, struct sp_err *err);
void sp_speedscope_writer_free(struct sp_speedscope_writer *w);

/* Counters for messages and tests. */
struct sp_speedscope_stats {
	uint64_t samples_in;   /* samples the sink received */
	uint64_t samples_out;  /* entries written to "samples" arrays (idle gaps included) */
	uint64_t truncated;    /* written samples whose stack was cut at max_depth */
	uint64_t dropped;      /* samples with a negative, NaN or infinite weight */
	uint32_t profiles;     /* profiles written */
	uint32_t frames;       /* entries of shared.frames */
	const char *unit;      /* "none", "nanoseconds", "bytes" */
	int write_errno;       /* errno of a failed write to out, 0 = none */
};
void sp_speedscope_writer_stats(const struct sp_speedscope_writer *w, struct sp_speedscope_stats *st);

/* JSON string text of s[0..n) without the quotes: '"', '\\' and control
 * characters escaped, invalid UTF-8 replaced by U+FFFD. */
void sp_json_escape(struct sp_buf *b, const char *s, size_t n);

#endif
