/* chrometrace.c — the Chrome Trace Event Format writer (see chrometrace.h). */
#include "chrometrace.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "speedscope.h"

#define PIECE (1u << 20)

enum { S_NONE, S_EVENTS, S_FRAMES, S_SAMPLES, S_DONE };

struct sp_ctrace {
	FILE *out;
	int gzip, zopen;
	z_stream z;
	struct sp_buf b;
	int section;
	int first;        /* no entry written yet in the open section */
	uint64_t bytes;
	int failed;
};

struct sp_ctrace *sp_ctrace_new(FILE *out, int gzip)
{
	struct sp_ctrace *w = sp_xcalloc(1, sizeof *w);
	w->out = out;
	w->gzip = gzip;
	sp_buf_grow(&w->b, PIECE + 4096);
	return w;
}

void sp_ctrace_free(struct sp_ctrace *w)
{
	if (!w)
		return;
	if (w->zopen)
		deflateEnd(&w->z);
	sp_buf_release(&w->b);
	free(w);
}

uint64_t sp_ctrace_bytes(const struct sp_ctrace *w) { return w->bytes; }

static int put(struct sp_ctrace *w, const void *p, size_t n, struct sp_err *err)
{
	errno = 0;
	if (n && fwrite(p, 1, n, w->out) != n) {
		int e = errno ? errno : EIO;
		w->failed = 1;
		sp_err_set(err, "write error: %s", strerror(e));
		err->errnum = e;
		return -1;
	}
	w->bytes += n;
	return 0;
}

/* Passes the buffer on: as is, or through deflate (finish: Z_FINISH). */
static int drain(struct sp_ctrace *w, int finish, struct sp_err *err)
{
	if (w->failed)
		return sp_err_set(err, "write error");
	if (!w->gzip) {
		int rc = put(w, w->b.p, w->b.len, err);
		w->b.len = 0;
		return rc;
	}
	if (!w->zopen) {
		/* level 1: JSON this repetitive shrinks 15-fold even so, at a
		 * fifth of level 6's time */
		memset(&w->z, 0, sizeof w->z);
		if (deflateInit2(&w->z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
			return sp_err_set(err, "zlib: cannot start compression");
		w->zopen = 1;
	}
	unsigned char chunk[1 << 16];
	w->z.next_in = (unsigned char *)w->b.p;
	w->z.avail_in = (uInt)w->b.len;
	int zr;
	do {
		w->z.next_out = chunk;
		w->z.avail_out = sizeof chunk;
		zr = deflate(&w->z, finish ? Z_FINISH : Z_NO_FLUSH);
		if (zr == Z_STREAM_ERROR)
			return sp_err_set(err, "zlib: compression failed");
		if (put(w, chunk, sizeof chunk - w->z.avail_out, err) < 0)
			return -1;
	} while (finish ? zr != Z_STREAM_END : w->z.avail_out == 0);
	w->b.len = 0;
	return 0;
}

static int maybe_drain(struct sp_ctrace *w, struct sp_err *err)
{
	return w->b.len >= PIECE ? drain(w, 0, err) : 0;
}

/* Opens section s (closing the one before); -1 when s is behind. */
static int section(struct sp_ctrace *w, int s, struct sp_err *err)
{
	if (w->section == s)
		return 0;
	if (w->section > s)
		return sp_err_set(err, "chrometrace: sections out of order");
	static const char *const open[] = { "", "\"traceEvents\": [\n", "\"stackFrames\": {\n", "\"samples\": [\n" };
	if (w->section == S_NONE)
		sp_buf_addc(&w->b, '{');
	else
		sp_buf_adds(&w->b, w->section == S_FRAMES ? "\n},\n" : "\n],\n");
	w->section = s;
	w->first = 1;
	if (s < S_DONE)
		sp_buf_adds(&w->b, open[s]);
	return 0;
}

static void sep(struct sp_ctrace *w)
{
	if (!w->first)
		sp_buf_adds(&w->b, ",\n");
	w->first = 0;
}

/* ns as microseconds with three decimals. */
static void add_us(struct sp_buf *b, uint64_t ns)
{
	sp_buf_addu64(b, ns / 1000);
	unsigned f = (unsigned)(ns % 1000);
	char t[4] = { '.', (char)('0' + f / 100), (char)('0' + f / 10 % 10), (char)('0' + f % 10) };
	sp_buf_add(b, t, 4);
}

static void add_str(struct sp_buf *b, const char *s, size_t n)
{
	sp_buf_addc(b, '"');
	sp_json_escape(b, s, n);
	sp_buf_addc(b, '"');
}

int sp_ctrace_event(struct sp_ctrace *w, const struct sp_ctrace_ev *e, struct sp_err *err)
{
	if (section(w, S_EVENTS, err) < 0)
		return -1;
	struct sp_buf *b = &w->b;
	sep(w);
	sp_buf_adds(b, "{\"ph\":\"");
	sp_buf_addc(b, e->ph);
	sp_buf_adds(b, "\",\"pid\":");
	sp_buf_addi64(b, e->pid);
	sp_buf_adds(b, ",\"tid\":");
	sp_buf_addi64(b, e->tid);
	if (e->ph != 'M') {
		sp_buf_adds(b, ",\"ts\":");
		add_us(b, e->ts);
	}
	if (e->ph == 'X') {
		sp_buf_adds(b, ",\"dur\":");
		add_us(b, e->dur);
	}
	if (e->ph == 'i') {
		sp_buf_adds(b, ",\"s\":\"");
		sp_buf_addc(b, e->scope ? e->scope : 't');
		sp_buf_addc(b, '"');
	}
	sp_buf_adds(b, ",\"name\":");
	add_str(b, e->name, e->name_len);
	if (e->cat) {
		sp_buf_adds(b, ",\"cat\":\"");
		sp_buf_adds(b, e->cat);
		sp_buf_addc(b, '"');
	}
	if (e->sf) {
		sp_buf_adds(b, ",\"sf\":");
		sp_buf_addu64(b, e->sf);
	}
	if (e->nargs) {
		sp_buf_adds(b, ",\"args\":{");
		for (size_t i = 0; i < e->nargs; i++) {
			const struct sp_ctrace_arg *a = &e->args[i];
			if (i)
				sp_buf_addc(b, ',');
			add_str(b, a->key, strlen(a->key));
			sp_buf_addc(b, ':');
			if (a->s)
				add_str(b, a->s, strlen(a->s));
			else
				sp_buf_addi64(b, a->i);
		}
		sp_buf_addc(b, '}');
	}
	sp_buf_addc(b, '}');
	return maybe_drain(w, err);
}

int sp_ctrace_frame(struct sp_ctrace *w, uint32_t id, uint32_t parent, const char *name, size_t n,
		    const char *category, struct sp_err *err)
{
	if (section(w, S_FRAMES, err) < 0)
		return -1;
	struct sp_buf *b = &w->b;
	sep(w);
	sp_buf_addc(b, '"');
	sp_buf_addu64(b, id);
	sp_buf_adds(b, "\":{\"name\":");
	add_str(b, name, n);
	sp_buf_adds(b, ",\"category\":");
	add_str(b, category ? category : "", category ? strlen(category) : 0);
	if (parent) {
		sp_buf_adds(b, ",\"parent\":\"");
		sp_buf_addu64(b, parent);
		sp_buf_addc(b, '"');
	}
	sp_buf_addc(b, '}');
	return maybe_drain(w, err);
}

int sp_ctrace_sample(struct sp_ctrace *w, int64_t pid, int64_t tid, uint64_t ts, uint32_t sf,
		     const char *event, struct sp_err *err)
{
	if (section(w, S_SAMPLES, err) < 0)
		return -1;
	struct sp_buf *b = &w->b;
	sep(w);
	sp_buf_adds(b, "{\"pid\":");
	sp_buf_addi64(b, pid);
	sp_buf_adds(b, ",\"tid\":");
	sp_buf_addi64(b, tid);
	sp_buf_adds(b, ",\"ts\":");
	add_us(b, ts);
	sp_buf_adds(b, ",\"name\":");
	add_str(b, event, strlen(event));
	if (sf) {
		sp_buf_adds(b, ",\"sf\":\"");
		sp_buf_addu64(b, sf);
		sp_buf_addc(b, '"');
	}
	sp_buf_addc(b, '}');
	return maybe_drain(w, err);
}

int sp_ctrace_finish(struct sp_ctrace *w, const char *const *kv, size_t nkv, struct sp_err *err)
{
	/* An empty traceEvents array still makes a file the viewers open. */
	if (w->section == S_NONE && section(w, S_EVENTS, err) < 0)
		return -1;
	if (section(w, S_DONE, err) < 0)
		return -1;
	struct sp_buf *b = &w->b;
	sp_buf_adds(b, "\"displayTimeUnit\": \"ns\",\n\"otherData\": {");
	for (size_t i = 0; i + 1 < nkv; i += 2) {
		if (i)
			sp_buf_addc(b, ',');
		add_str(b, kv[i], strlen(kv[i]));
		sp_buf_addc(b, ':');
		add_str(b, kv[i + 1], strlen(kv[i + 1]));
	}
	sp_buf_adds(b, "}\n}\n");
	if (drain(w, 1, err) < 0)
		return -1;
	errno = 0;
	if (fflush(w->out) != 0) {
		int e = errno ? errno : EIO;
		sp_err_set(err, "write error: %s", strerror(e));
		err->errnum = e;
		return -1;
	}
	return 0;
}
