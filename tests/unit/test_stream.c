/* Unit tests of the binary stream (formats/stream.c): round trips,
 * incremental reading, truncation at every byte offset, corruption of every
 * byte, unknown records, concatenation, gzip. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

#include "stream.h"

#include "unit.h"

/* A sink that renders everything it receives as text, to compare. */
struct text {
	struct sp_sink sink;
	struct sp_buf b;
	uint32_t *fr;
	size_t cap;
	int samples, traces, ends;
};

static void put_frame(struct sp_profile *p, uint32_t id, struct sp_buf *b)
{
	const struct sp_frame *f = sp_frame_get(p, id);
	sp_buf_addf(b, "%s/%s/%s/%s:%u/%llx", sp_str(p, f->name), sp_kind_name(f->kind), sp_str(p, f->module),
		    sp_str(p, f->file), f->line, (unsigned long long)f->addr);
}

static int t_sample(struct sp_sink *s, struct sp_profile *p, const struct sp_sample *smp, struct sp_err *e)
{
	struct text *t = (struct text *)s;
	const struct sp_thread *th = sp_thread_get(p, smp->thread);
	sp_buf_addf(&t->b, "S t=%llu th=%lld/%lld/%s ev=%s v=", (unsigned long long)smp->time, (long long)th->pid,
		    (long long)th->tid, sp_str(p, th->name), sp_str(p, smp->event));
	for (int i = 0; i < sp_profile_nvalues(p); i++) {
		sp_buf_addnum(&t->b, smp->values[i]);
		sp_buf_addc(&t->b, ',');
	}
	uint32_t n = sp_node_frames(p, smp->stack, &t->fr, &t->cap);
	for (uint32_t i = 0; i < n; i++) {
		sp_buf_addc(&t->b, ';');
		put_frame(p, t->fr[i], &t->b);
	}
	sp_buf_addc(&t->b, '\n');
	t->samples++;
	return 0;
}

static int t_trace(struct sp_sink *s, struct sp_profile *p, const struct sp_trace *tr, struct sp_err *e)
{
	struct text *t = (struct text *)s;
	sp_buf_addf(&t->b, "T %u t=%llu th=%lld ", tr->kind, (unsigned long long)tr->time,
		    (long long)sp_thread_get(p, tr->thread)->tid);
	put_frame(p, tr->frame, &t->b);
	sp_buf_addc(&t->b, '\n');
	t->traces++;
	return 0;
}

static int t_end(struct sp_sink *s, struct sp_profile *p, struct sp_err *e)
{
	((struct text *)s)->ends++;
	return 0;
}

static void text_init(struct text *t)
{
	memset(t, 0, sizeof *t);
	t->sink.sample = t_sample;
	t->sink.trace = t_trace;
	t->sink.end_input = t_end;
}

static void text_release(struct text *t)
{
	sp_buf_release(&t->b);
	free(t->fr);
}

/* Build a profile with every kind of content and feed it to sink; also
 * render the expected text into want. */
static void produce(struct sp_profile *p, struct sp_sink *sink, struct text *want, int nsamples, int floats)
{
	static const char *const names[] = { "samples", "cpu-ns" };
	sp_profile_set_values(p, 2, names);
	sp_meta_add(p, "source", "unit test");
	sp_meta_add(p, "host", "box");
	struct sp_err err;
	if (sink->meta)
		sink->meta(sink, p, &err);
	uint32_t t1 = sp_thread_intern(p, 100, 101, sp_str_intern(p, "main", 4));
	uint32_t t2 = sp_thread_intern(p, 100, 102, sp_str_intern(p, "worker 1", 8));
	uint32_t fr[SP_KIND_MAX];
	for (int k = 0; k < SP_KIND_MAX; k++) {
		struct sp_frame f = { 0 };
		char name[32];
		snprintf(name, sizeof name, "fn_%s", sp_kind_name((unsigned)k));
		f.name = sp_str_intern(p, name, strlen(name));
		f.kind = (uint8_t)k;
		f.module = sp_str_intern(p, "/usr/lib/libx.so", 16);
		f.file = k % 2 ? sp_str_intern(p, "x.c", 3) : 0;
		f.line = k % 2 ? 10u + (unsigned)k : 0;
		f.addr = k ? 0x7f0000001000ull + (unsigned)k : 0;
		fr[k] = sp_frame_intern(p, &f);
	}
	uint64_t t = 1000000000ull;
	for (int i = 0; i < nsamples; i++) {
		uint32_t node = 0;
		for (int d = 0; d <= i % 5; d++)
			node = sp_node_intern(p, node, fr[(i + d) % SP_KIND_MAX]);
		struct sp_sample s = { 0 };
		s.stack = node;
		s.thread = i % 3 ? t1 : t2;
		s.event = i % 4 ? sp_str_intern(p, "cpu-clock", 9) : 0;
		s.time = i % 7 == 6 ? SP_NO_TIME : (t += 1000 + (uint64_t)(i * 37 % 500));
		s.values[0] = 1;
		s.values[1] = floats && i % 2 ? 0.5 * i : 1001001.0 * i;
		sink->sample(sink, p, &s, &err);
		if (want)
			t_sample(&want->sink, p, &s, &err);
		if (i % 10 == 9) {
			struct sp_trace tr = { .kind = SP_TRACE_ENTRY, .frame = fr[0], .thread = t1, .stack = node, .time = t + 10 };
			if (sink->trace)
				sink->trace(sink, p, &tr, &err);
			if (want)
				t_trace(&want->sink, p, &tr, &err);
			tr.kind = SP_TRACE_EXIT;
			tr.time = t + 20;
			t = tr.time;
			if (sink->trace)
				sink->trace(sink, p, &tr, &err);
			if (want)
				t_trace(&want->sink, p, &tr, &err);
		}
	}
}

/* Write a stream into memory. */
static char *write_stream(int nsamples, int floats, size_t *len, struct text *want)
{
	char *buf = NULL;
	FILE *out = open_memstream(&buf, len);
	struct sp_profile *p = sp_profile_new();
	struct sp_stream_writer *w = sp_stream_writer_new(out, p);
	produce(p, sp_stream_writer_sink(w), want, nsamples, floats);
	struct sp_err err;
	sp_stream_writer_finish(w, &err);
	sp_stream_writer_free(w);
	sp_profile_free(p);
	fclose(out);
	return buf;
}

static int read_mem(const char *buf, size_t len, struct text *got, struct sp_err *err)
{
	struct sp_input *in = sp_input_mem(buf, len, "mem");
	struct sp_profile *p = sp_profile_new();
	int rc = sp_stream_read(in, p, &got->sink, err);
	sp_profile_free(p);
	sp_input_close(in);
	return rc;
}

static int vals_sample(struct sp_sink *s, struct sp_profile *p, const struct sp_sample *smp, struct sp_err *e)
{
	struct {
		struct sp_sink sink;
		double v[4][2];
		int n;
	} *g = (void *)s;
	if (g->n < 4) {
		g->v[g->n][0] = smp->values[0];
		g->v[g->n][1] = smp->values[1];
	}
	g->n++;
	return 0;
}

/* ---- hand-built streams: records are given raw, the trailer (counts and
 * checksum) is computed, so each test breaks exactly one rule ---- */

struct raw {
	struct sp_buf b;
	uint64_t counts[8];
	size_t last; /* offset of the last record added */
};

static void uv(struct sp_buf *b, uint64_t v)
{
	while (v >= 0x80) {
		sp_buf_addc(b, (char)(v | 0x80));
		v >>= 7;
	}
	sp_buf_addc(b, (char)v);
}

static void raw_rec(struct raw *r, unsigned type, const struct sp_buf *payload)
{
	r->last = r->b.len;
	uv(&r->b, type);
	uv(&r->b, payload->len);
	sp_buf_add(&r->b, payload->p, payload->len);
	if (type >= 2 && type <= 8)
		r->counts[type - 2]++;
	r->counts[7]++;
}

/* Records from a compact spec: each argument list ends with ~0ull; values
 * are varints, except after the marker STR, which takes a C string. */
#define END (~0ull)
#define STR (~1ull)
static void raw_add(struct raw *r, unsigned type, ...)
{
	struct sp_buf pl = SP_BUF_INIT;
	va_list ap;
	va_start(ap, type);
	for (;;) {
		uint64_t v = va_arg(ap, uint64_t);
		if (v == END)
			break;
		if (v == STR) {
			const char *str = va_arg(ap, const char *);
			uv(&pl, strlen(str));
			sp_buf_adds(&pl, str);
		} else {
			uv(&pl, v);
		}
	}
	va_end(ap);
	raw_rec(r, type, &pl);
	sp_buf_release(&pl);
}

static void raw_begin(struct raw *r, int n, const char *a, const char *b)
{
	memset(r, 0, sizeof *r);
	sp_buf_add(&r->b, "\x89SPS\r\n\x1a\n", 8);
	if (n == 1)
		raw_add(r, 1, 1ull, 0ull, 1ull, STR, a, END);
	else
		raw_add(r, 1, 1ull, 0ull, 2ull, STR, a, STR, b, END);
	r->counts[7] = 1;
}

static void raw_end(struct raw *r)
{
	uint64_t h = XXH64(r->b.p, r->b.len, 0);
	struct sp_buf tr = SP_BUF_INIT;
	for (int i = 0; i < 8; i++)
		uv(&tr, r->counts[i]);
	for (int i = 0; i < 8; i++)
		sp_buf_addc(&tr, (char)(h >> (8 * i)));
	uv(&r->b, 9);
	uv(&r->b, tr.len);
	sp_buf_add(&r->b, tr.p, tr.len);
	sp_buf_release(&tr);
}

/* A frame "f" + node 1, used by the crafted streams. */
static void raw_stack(struct raw *r)
{
	raw_add(r, 2, STR, "f", END);
	raw_add(r, 3, 1ull, 0ull, 0ull, 0ull, 0ull, 0ull, END);
	raw_add(r, 4, 0ull, 1ull, END);
}

/* Read r and expect an error containing `what` at the offset of the
 * record `off` (or any offset when off is -1). */
static int raw_fails(struct raw *r, const char *what, long long off)
{
	struct text g;
	struct sp_err err;
	text_init(&g);
	memset(&err, 0, sizeof err);
	int rc = read_mem(r->b.p, r->b.len, &g, &err);
	text_release(&g);
	char want[64];
	snprintf(want, sizeof want, "offset %lld", off);
	int ok = rc != 0 && strstr(err.msg, what) && (off < 0 || strstr(err.where, want));
	if (!ok)
		printf("# got rc=%d %s: %s\n", rc, err.where, err.msg);
	sp_buf_release(&r->b);
	return ok;
}

static int raw_reads(struct raw *r, struct text *g)
{
	struct sp_err err;
	text_init(g);
	int rc = read_mem(r->b.p, r->b.len, g, &err);
	if (rc)
		printf("# %s: %s\n", err.where, err.msg);
	sp_buf_release(&r->b);
	return rc == 0;
}

static void crafted_tests(void)
{
	struct raw r;
	struct text g;

	raw_begin(&r, 1, "samples", NULL);
	raw_stack(&r);
	raw_add(&r, 6, 0ull, 3ull, 0ull, 2ull, END);
	long long at = (long long)r.last;
	raw_end(&r);
	CHECK(raw_fails(&r, "node 3 used before it is defined", at), "an undefined node id is an error at its record");

	raw_begin(&r, 1, "samples", NULL);
	raw_add(&r, 3, 4ull, 0ull, 0ull, 0ull, 0ull, 0ull, END);
	at = (long long)r.last;
	raw_end(&r);
	CHECK(raw_fails(&r, "string 4 used before it is defined", at), "an undefined string id is an error");

	raw_begin(&r, 1, "samples", NULL);
	raw_stack(&r);
	raw_add(&r, 6, 0ull, 1ull, 1ull, 2ull, END);
	raw_end(&r);
	CHECK(raw_fails(&r, "thread 1 used before it is defined", -1), "an undefined thread id is an error");

	raw_begin(&r, 1, "samples", NULL);
	raw_stack(&r);
	raw_add(&r, 6, 8ull, 1ull, 0ull, 2ull, END);
	raw_end(&r);
	CHECK(raw_fails(&r, "reserved sample flags", -1), "a reserved sample flag is rejected");

	raw_begin(&r, 1, "samples", NULL);
	raw_add(&r, 2, STR, "f", END);
	raw_add(&r, 3, 1ull, 6ull, 0ull, 0ull, 0ull, 0ull, END);
	raw_end(&r);
	CHECK(raw_fails(&r, "unknown frame kind 6", -1), "an unknown frame kind is rejected");

	memset(&r, 0, sizeof r);
	sp_buf_add(&r.b, "\x89SPS\r\n\x1a\n", 8);
	raw_add(&r, 1, 1ull, 1ull, 0ull, END);
	raw_end(&r);
	CHECK(raw_fails(&r, "reserved header flags", 8), "reserved header flags are rejected");

	memset(&r, 0, sizeof r);
	sp_buf_add(&r.b, "\x89SPS\r\n\x1a\n", 8);
	raw_add(&r, 1, 2ull, 0ull, 0ull, END);
	raw_end(&r);
	CHECK(raw_fails(&r, "unsupported stream version 2", 8), "an unknown version is rejected");

	raw_begin(&r, 2, "x", "x");
	raw_end(&r);
	CHECK(raw_fails(&r, "named twice", 8), "a value column named twice is rejected");

	memset(&r, 0, sizeof r);
	sp_buf_add(&r.b, "\x89SPS\r\n\x1a\n", 8);
	raw_add(&r, 2, STR, "f", END);
	raw_end(&r);
	CHECK(raw_fails(&r, "does not start with its header", 8), "a stream must start with its header");

	raw_begin(&r, 1, "samples", NULL);
	raw_add(&r, 1, 1ull, 0ull, 1ull, STR, "samples", END);
	raw_end(&r);
	CHECK(raw_fails(&r, "second header", -1), "a second header is rejected");

	raw_begin(&r, 1, "samples", NULL);
	raw_stack(&r);
	r.counts[2]++; /* claims one node more than there is */
	raw_end(&r);
	CHECK(raw_fails(&r, "trailer counts 2 nodes, the stream held 1", -1), "a count mismatch is caught");

	raw_begin(&r, 1, "samples", NULL);
	at = (long long)r.b.len;
	sp_buf_add(&r.b, "\x0a\xff\xff\xff\xff\x0f", 6); /* type 10, 4 GiB */
	CHECK(raw_fails(&r, "too large", at), "an oversized record length is rejected before reading it");

	raw_begin(&r, 1, "samples", NULL);
	at = (long long)r.b.len;
	sp_buf_add(&r.b, "\x0a\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01", 12);
	CHECK(raw_fails(&r, "varint overflow", at), "an overlong varint is rejected");

	raw_begin(&r, 1, "samples", NULL);
	sp_buf_add(&r.b, "\x0a\xff\xff\xff\x1f", 5); /* a 64 MiB record with no data */
	CHECK(raw_fails(&r, "truncated stream: record of 67108863 bytes has only 0", -1),
	      "a long record cut short is a truncation");

	/* A thread record with an existing id renames the thread. */
	raw_begin(&r, 1, "samples", NULL);
	raw_stack(&r);
	raw_add(&r, 2, STR, "old", END);
	raw_add(&r, 2, STR, "new", END);
	raw_add(&r, 5, 1ull, 20ull, 22ull, 2ull, END);
	raw_add(&r, 6, 1ull, 1ull, 1ull, 200ull, 2ull, END);
	raw_add(&r, 5, 1ull, 20ull, 22ull, 3ull, END);
	raw_add(&r, 6, 1ull, 1ull, 1ull, 1ull, 4ull, END); /* time delta -1 */
	raw_end(&r);
	CHECK(raw_reads(&r, &g) && g.b.len && strstr(g.b.p, "t=100 th=10/11/old ev= v=1,;f/") &&
		      strstr(g.b.p, "t=99 th=10/11/new ev= v=2,;f/"),
	      "a redefined thread id is a rename; time deltas may be negative");
	text_release(&g);

	raw_begin(&r, 1, "samples", NULL);
	raw_stack(&r);
	raw_add(&r, 5, 2ull, 1ull, 1ull, 0ull, END);
	raw_end(&r);
	CHECK(raw_fails(&r, "thread id 2 out of order", -1), "a thread id that skips ahead is rejected");

	/* Concatenated streams must agree on their value columns: in another
	 * order they are matched by name, anything else is an error. */
	{
		struct raw a, b;
		raw_begin(&a, 2, "samples", "period");
		raw_stack(&a);
		raw_add(&a, 6, 0ull, 1ull, 0ull, 2ull, 200ull, END);
		raw_end(&a);
		raw_begin(&b, 2, "period", "samples");
		raw_stack(&b);
		raw_add(&b, 6, 0ull, 1ull, 0ull, 400ull, 4ull, END);
		raw_end(&b);
		size_t alen = a.b.len;
		sp_buf_add(&a.b, b.b.p, b.b.len);
		sp_buf_release(&b.b);
		CHECK(raw_reads(&a, &g) && g.samples == 2 && strstr(g.b.p, "v=1,100,;f/") && strstr(g.b.p, "v=2,200,;f/"),
		      "concatenated streams with columns in another order: matched by name");
		text_release(&g);
		raw_begin(&a, 2, "samples", "period");
		raw_end(&a);
		raw_begin(&b, 1, "samples", NULL);
		raw_end(&b);
		alen = a.b.len;
		sp_buf_add(&a.b, b.b.p, b.b.len);
		sp_buf_release(&b.b);
		CHECK(raw_fails(&a, "value columns of this stream (samples) differ from the earlier input's (samples,period)",
				(long long)alen + 8),
		      "concatenated streams with other value columns: an error");
	}

	/* Value edge cases: negative, beyond 2^53, beyond int64, fractional. */
	{
		char *buf = NULL;
		size_t len;
		FILE *out = open_memstream(&buf, &len);
		struct sp_profile *p = sp_profile_new();
		static const char *const names[] = { "a", "b" };
		sp_profile_set_values(p, 2, names);
		struct sp_stream_writer *w = sp_stream_writer_new(out, p);
		struct sp_sink *sk = sp_stream_writer_sink(w);
		static const double v[][2] = { { -5, 0 }, { 9007199254740993.0, -1 }, { 1e19, 3 }, { -0.25, 1e300 } };
		struct sp_err err;
		for (int i = 0; i < 4; i++) {
			struct sp_sample smp = { .stack = 0, .time = SP_NO_TIME };
			smp.values[0] = v[i][0];
			smp.values[1] = v[i][1];
			sk->sample(sk, p, &smp, &err);
		}
		sp_stream_writer_finish(w, &err);
		sp_stream_writer_free(w);
		sp_profile_free(p);
		fclose(out);
		struct sp_input *in = sp_input_mem(buf, len, "mem");
		p = sp_profile_new();
		struct vals {
			struct sp_sink sink;
			double v[4][2];
			int n;
		} got = { 0 };
		got.sink.sample = vals_sample;
		int rc = sp_stream_read(in, p, &got.sink, &err);
		int same = rc == 0 && got.n == 4;
		for (int i = 0; same && i < 4; i++)
			same = got.v[i][0] == v[i][0] && got.v[i][1] == v[i][1];
		CHECK(same, "values: negative, above 2^53, above 2^63, fractional, huge: exact");
		sp_profile_free(p);
		sp_input_close(in);
		free(buf);
	}

	/* No samples at all: still a valid stream with its columns, and a
	 * NULL sink is allowed. */
	{
		char *buf = NULL;
		size_t len;
		FILE *out = open_memstream(&buf, &len);
		struct sp_profile *p = sp_profile_new();
		static const char *const names[] = { "samples" };
		sp_profile_set_values(p, 1, names);
		struct sp_stream_writer *w = sp_stream_writer_new(out, p);
		struct sp_err err;
		sp_stream_writer_finish(w, &err);
		sp_stream_writer_free(w);
		sp_profile_free(p);
		fclose(out);
		struct sp_input *in = sp_input_mem(buf, len, "mem");
		p = sp_profile_new();
		int rc = sp_stream_read(in, p, NULL, &err);
		CHECK(rc == 0 && sp_profile_nvalues(p) == 1 && !strcmp(sp_profile_value_name(p, 0), "samples"),
		      "an empty profile is a valid stream; the sink may be NULL");
		sp_profile_free(p);
		sp_input_close(in);
		free(buf);
	}
}

int main(void)
{
	struct sp_err err;
	size_t len;
	struct text want, got;

	/* round trip */
	text_init(&want);
	char *buf = write_stream(200, 0, &len, &want);
	text_init(&got);
	int rc = read_mem(buf, len, &got, &err);
	CHECK(rc == 0 && got.samples == 200 && got.traces == 40 && got.ends == 1, "round trip: every sample and trace");
	CHECK(got.b.len == want.b.len && !memcmp(got.b.p, want.b.p, got.b.len),
	      "round trip: frames (kind, module, file, line, addr), threads, times, values identical");
	printf("# 200 samples, 40 trace events: %zu bytes\n", len);
	CHECK(len < 200 * 12 + 2000, "a sample of a known stack costs a few bytes");
	text_release(&got);

	/* floats */
	struct text wantf, gotf;
	text_init(&wantf);
	size_t flen;
	char *fbuf = write_stream(30, 1, &flen, &wantf);
	text_init(&gotf);
	rc = read_mem(fbuf, flen, &gotf, &err);
	CHECK(rc == 0 && gotf.b.len == wantf.b.len && !memcmp(gotf.b.p, wantf.b.p, gotf.b.len),
	      "fractional values round trip");
	text_release(&gotf);
	text_release(&wantf);
	free(fbuf);

	/* metadata */
	{
		struct sp_input *in = sp_input_mem(buf, len, "mem");
		struct sp_profile *p = sp_profile_new();
		struct sp_sink none = { 0 };
		rc = sp_stream_read(in, p, &none, &err);
		const char *src = sp_meta_find(p, "source");
		CHECK(rc == 0 && src && !strcmp(src, "unit test") && sp_meta_find(p, "host") &&
			      !strcmp(sp_profile_value_name(p, 1), "cpu-ns"),
		      "metadata and value names come back");
		sp_profile_free(p);
		sp_input_close(in);
	}

	/* truncation at every byte offset */
	size_t small_len;
	struct text wsmall;
	text_init(&wsmall);
	char *small = write_stream(25, 0, &small_len, &wsmall);
	int all_reported = 1, offsets_ok = 1;
	for (size_t cut = 0; cut < small_len; cut++) {
		struct text g;
		text_init(&g);
		memset(&err, 0, sizeof err);
		rc = read_mem(small, cut, &g, &err);
		if (rc == 0)
			all_reported = 0;
		unsigned long long off = ~0ull;
		const char *o = strstr(err.where, "offset ");
		if (o)
			off = strtoull(o + 7, NULL, 10);
		if (!o || off > cut)
			offsets_ok = 0;
		text_release(&g);
	}
	CHECK(all_reported, "truncation at every byte offset is an error");
	CHECK(offsets_ok, "every truncation error names an offset within the data");

	/* corruption of every byte */
	int caught = 1;
	char *copy = malloc(small_len);
	static const unsigned char masks[] = { 0x01, 0x20, 0x80, 0xff };
	for (size_t k = 0; k < small_len * sizeof masks; k++) {
		size_t i = k / sizeof masks;
		memcpy(copy, small, small_len);
		copy[i] ^= (char)masks[k % sizeof masks];
		struct text g;
		text_init(&g);
		rc = read_mem(copy, small_len, &g, &err);
		/* Either the read fails, or (never) it succeeds with identical data. */
		if (rc == 0 && !(g.b.len == wsmall.b.len && !memcmp(g.b.p, wsmall.b.p, g.b.len)))
			caught = 0;
		if (rc == 0)
			caught = 0;
		text_release(&g);
	}
	CHECK(caught, "any byte changed anywhere (4 patterns each) is caught (checksum or structure)");

	/* unknown record types are skipped: rebuild the small stream with an
	 * unknown record (type 77) after the header and a correct trailer, the
	 * way a newer writer would produce it. */
	{
		struct sp_buf nb = SP_BUF_INIT;
		sp_buf_add(&nb, small, 8);
		const unsigned char *u = (const unsigned char *)small;
		size_t pos = 8;
		uint64_t counts[8] = { 0 };
		int nrec = 0;
		while (pos < small_len) {
			size_t start = pos;
			uint64_t type = 0, rlen = 0;
			for (int sh = 0;; sh += 7) {
				type |= (uint64_t)(u[pos] & 0x7f) << sh;
				if (!(u[pos++] & 0x80))
					break;
			}
			for (int sh = 0;; sh += 7) {
				rlen |= (uint64_t)(u[pos] & 0x7f) << sh;
				if (!(u[pos++] & 0x80))
					break;
			}
			if (type == 9) { /* trailer: counts as varints, then the hash */
				size_t q = pos;
				for (int i = 0; i < 8; i++) {
					counts[i] = 0;
					for (int sh = 0;; sh += 7) {
						counts[i] |= (uint64_t)(u[q] & 0x7f) << sh;
						if (!(u[q++] & 0x80))
							break;
					}
				}
				break;
			}
			sp_buf_add(&nb, small + start, pos + rlen - start);
			pos += rlen;
			if (nrec++ == 0)
				sp_buf_add(&nb, "\x4d\x03xyz", 5); /* unknown type 77, 3 bytes */
		}
		counts[7]++; /* one more record */
		uint64_t h = XXH64(nb.p, nb.len, 0);
		struct sp_buf tr = SP_BUF_INIT;
		for (int i = 0; i < 8; i++) {
			uint64_t v = counts[i];
			while (v >= 0x80) {
				sp_buf_addc(&tr, (char)(v | 0x80));
				v >>= 7;
			}
			sp_buf_addc(&tr, (char)v);
		}
		for (int i = 0; i < 8; i++)
			sp_buf_addc(&tr, (char)(h >> (8 * i)));
		sp_buf_addc(&nb, 9);
		sp_buf_addc(&nb, (char)tr.len);
		sp_buf_add(&nb, tr.p, tr.len);
		struct text g;
		text_init(&g);
		rc = read_mem(nb.p, nb.len, &g, &err);
		CHECK(rc == 0 && g.b.len == wsmall.b.len && !memcmp(g.b.p, wsmall.b.p, g.b.len),
		      "an unknown record type is skipped");
		if (rc)
			printf("# %s: %s\n", err.where, err.msg);
		text_release(&g);
		sp_buf_release(&nb);
		sp_buf_release(&tr);
	}

	/* two concatenated streams read as their union */
	{
		char *two = malloc(len * 2);
		memcpy(two, buf, len);
		memcpy(two + len, buf, len);
		text_init(&got);
		rc = read_mem(two, len * 2, &got, &err);
		CHECK(rc == 0 && got.samples == 400 && got.ends == 2, "concatenated streams: their union, one end each");
		CHECK(got.b.len == 2 * want.b.len && !memcmp(got.b.p, want.b.p, want.b.len) &&
			      !memcmp(got.b.p + want.b.len, want.b.p, want.b.len),
		      "concatenated streams: ids of the second stream remapped");
		text_release(&got);
		/* garbage after a trailer */
		memcpy(two + len, "garbage!", 8);
		text_init(&got);
		rc = read_mem(two, len + 8, &got, &err);
		CHECK(rc != 0 && strstr(err.msg, "not another stream"), "bytes after the trailer must be a stream");
		text_release(&got);
		free(two);
	}

	/* truncating two concatenated streams anywhere but at the end of the
	 * first one's trailer is an error */
	{
		char *two = malloc(small_len * 2);
		memcpy(two, small, small_len);
		memcpy(two + small_len, small, small_len);
		int ok = 1;
		for (size_t cut = small_len + 1; cut < 2 * small_len; cut++) {
			struct text g;
			text_init(&g);
			if (read_mem(two, cut, &g, &err) == 0)
				ok = 0;
			text_release(&g);
		}
		struct text g;
		text_init(&g);
		ok = ok && read_mem(two, small_len, &g, &err) == 0 && g.ends == 1;
		text_release(&g);
		CHECK(ok, "a cut inside the second of two streams is an error; at the boundary, one whole stream");
		free(two);
	}

	crafted_tests();

	/* bad magic */
	text_init(&got);
	rc = read_mem("hello world, not a stream", 25, &got, &err);
	CHECK(rc != 0 && strstr(err.msg, "magic") && strstr(err.where, "offset 0"), "bad magic is reported at offset 0");
	text_release(&got);

	/* incremental: a reader sees flushed samples before the trailer */
	{
		int fds[2];
		if (pipe(fds) == 0) {
			FILE *out = fdopen(fds[1], "w");
			struct sp_profile *p = sp_profile_new();
			struct sp_stream_writer *w = sp_stream_writer_new(out, p);
			produce(p, sp_stream_writer_sink(w), NULL, 10, 0);
			sp_stream_writer_flush(w, &err);
			/* read what is there without waiting for the end */
			char part[65536];
			ssize_t n = read(fds[0], part, sizeof part);
			struct text g;
			text_init(&g);
			rc = n > 0 ? read_mem(part, (size_t)n, &g, &err) : 0;
			CHECK(n > 0 && g.samples == 10 && rc != 0 && strstr(err.msg, "without its trailer"),
			      "incremental: flushed samples are readable before the trailer (then: no trailer yet)");
			text_release(&g);
			sp_stream_writer_finish(w, &err);
			sp_stream_writer_free(w);
			sp_profile_free(p);
			fclose(out);
			close(fds[0]);
		}
	}

	/* gzip-compressed stream through a file */
	{
		char path[] = "/tmp/sp-stream-XXXXXX";
		int fd = mkstemp(path);
		close(fd);
		gzFile gz = gzopen(path, "wb");
		gzwrite(gz, buf, (unsigned)len);
		gzclose(gz);
		struct sp_input *in = sp_input_open(path, &err);
		struct sp_profile *p = sp_profile_new();
		text_init(&got);
		rc = in ? sp_stream_read(in, p, &got.sink, &err) : -1;
		CHECK(rc == 0 && got.b.len == want.b.len && !memcmp(got.b.p, want.b.p, got.b.len),
		      "a gzip-compressed stream reads the same");
		text_release(&got);
		sp_profile_free(p);
		sp_input_close(in);
		unlink(path);
	}

	/* write error is reported */
	{
		FILE *full = fopen("/dev/full", "w");
		if (full) {
			struct sp_profile *p = sp_profile_new();
			struct sp_stream_writer *w = sp_stream_writer_new(full, p);
			produce(p, sp_stream_writer_sink(w), NULL, 3000, 0);
			rc = sp_stream_writer_finish(w, &err);
			CHECK(rc != 0 && strstr(err.msg, "write error"), "a write error is reported");
			sp_stream_writer_free(w);
			sp_profile_free(p);
			fclose(full);
		} else {
			printf("skip - write error test # /dev/full cannot be opened\n");
		}
	}

	text_release(&want);
	text_release(&wsmall);
	free(small);
	free(copy);
	free(buf);
	return failed;
}
