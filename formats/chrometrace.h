/* chrometrace.h — the Chrome Trace Event Format (JSON object form), written.
 *
 * Spec: "Trace Event Format" (Google doc, the format of chrome://tracing,
 * which Perfetto's UI and speedscope import too): {"traceEvents": [...],
 * "stackFrames": {...}, "samples": [...], "displayTimeUnit", "otherData"}.
 * An event has "ph" (X complete, i instant, M metadata), "pid", "tid", "ts"
 * and "dur" in microseconds (written with three decimals: nanoseconds),
 * "name", "cat", "args" and optionally "sf" (a stackFrames id).  A stack
 * frame is {"name", "category", "parent"}; a sample {"pid", "tid", "ts",
 * "name", "sf"}.
 *
 * The writer streams: events first, then frames, then samples, each
 * section opened by its first call (a call of an earlier section after a
 * later one is a programming error: -1).  Text goes out in 1 MiB pieces,
 * through zlib's gzip when asked.  Names are escaped with sp_json_escape
 * (quotes, backslashes, control bytes; invalid UTF-8 replaced), so the
 * output always parses.  Times are nanoseconds from an origin the caller
 * chooses (ts = ns / 1000 in the file).
 */
#ifndef SP_CHROMETRACE_H
#define SP_CHROMETRACE_H

#include <stdio.h>

#include "util.h"

struct sp_ctrace;

/* One "args" entry: an integer, or a string when s is not NULL. */
struct sp_ctrace_arg {
	const char *key; /* escaped */
	int64_t i;
	const char *s;
};

struct sp_ctrace_ev {
	char ph;             /* 'X', 'B', 'E', 'i' or 'M' */
	char scope;          /* instants: 't' thread, 'p' process, 'g' global */
	int64_t pid, tid;
	const char *name;    /* escaped */
	size_t name_len;
	const char *cat;     /* plain ASCII, NULL = none */
	uint64_t ts, dur;    /* ns from the origin; dur for 'X' only */
	uint32_t sf;         /* stackFrames id, 0 = none */
	const struct sp_ctrace_arg *args;
	size_t nargs;
};

/* Writes to out (not closed); gzip: compress the whole text. */
struct sp_ctrace *sp_ctrace_new(FILE *out, int gzip);
void sp_ctrace_free(struct sp_ctrace *w); /* NULL ok */

int sp_ctrace_event(struct sp_ctrace *w, const struct sp_ctrace_ev *e, struct sp_err *err);
/* A stack frame: id > 0, parent 0 = a root. */
int sp_ctrace_frame(struct sp_ctrace *w, uint32_t id, uint32_t parent, const char *name, size_t n,
		    const char *category, struct sp_err *err);
/* A CPU sample of thread (pid, tid) at ts whose leaf is frame sf. */
int sp_ctrace_sample(struct sp_ctrace *w, int64_t pid, int64_t tid, uint64_t ts, uint32_t sf,
		     const char *event, struct sp_err *err);
/* Closes the JSON with "otherData" (nkv key/value string pairs, escaped)
 * and flushes out.  Returns 0 or -1 (a write or zlib error). */
int sp_ctrace_finish(struct sp_ctrace *w, const char *const *kv, size_t nkv, struct sp_err *err);
/* Bytes written so far (compressed ones with gzip). */
uint64_t sp_ctrace_bytes(const struct sp_ctrace *w);

#endif
