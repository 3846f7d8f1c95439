/* stream.c — the stackpipe binary stream: writer and reader.
 * The format is specified in formats/stream.md (stackpipe-stream(5)). */
#include "stream.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "input.h"

#define SP_MAGIC "\x89SPS\r\n\x1a\n"
#define SP_MAGIC_LEN 8
#define SP_VERSION 1
#define MAX_RECORD (64u << 20)

enum rec {
	R_HEADER = 1,
	R_STRING = 2,
	R_FRAME = 3,
	R_NODE = 4,
	R_THREAD = 5,
	R_SAMPLE = 6,
	R_TRACE = 7,
	R_META = 8,
	R_TRAILER = 9,
};

enum { S_HAS_TIME = 1, S_FLOAT = 2, S_HAS_EVENT = 4, S_FLAGS = 7 };
enum { C_STRINGS, C_FRAMES, C_NODES, C_THREADS, C_SAMPLES, C_TRACES, C_METAS, C_RECORDS, C_N };

/* ---- varints ---- */

#define put_uv sp_buf_add_uvarint

static inline uint64_t zz(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static inline int64_t unzz(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

static void put_f64(struct sp_buf *b, double d)
{
	uint64_t u;
	memcpy(&u, &d, 8);
	unsigned char x[8];
	for (int i = 0; i < 8; i++)
		x[i] = (unsigned char)(u >> (8 * i));
	sp_buf_add(b, x, 8);
}

/* ======================= writer ======================= */

struct idmap {
	uint32_t *v; /* profile id -> stream id (0 = not written) */
	size_t n;
};

static uint32_t *idmap_slot(struct idmap *m, uint32_t id)
{
	if (id >= m->n) {
		size_t n = m->n ? m->n : 1024;
		while (n <= id)
			n *= 2;
		m->v = sp_xrealloc(m->v, n * sizeof *m->v);
		memset(m->v + m->n, 0, (n - m->n) * sizeof *m->v);
		m->n = n;
	}
	return &m->v[id];
}

struct sp_stream_writer {
	struct sp_sink sink; /* first: callbacks cast back */
	FILE *out;
	struct sp_profile *p;
	struct sp_buf buf, rec;
	XXH64_state_t *hash;
	int header_done, failed, finished;
	struct idmap strs, frames, nodes, threads;
	uint32_t next[4]; /* next stream id: strings, frames, nodes, threads */
	uint64_t count[C_N];
	size_t meta_done;
	uint64_t last_time;
	int nvalues;
	/* stream node ids a sample has used: one bit each */
	uint64_t *sampled;
	size_t nsampled;
	uint64_t stacks;
};

static int w_sample(struct sp_sink *s, struct sp_profile *p, const struct sp_sample *smp, struct sp_err *err);
static int w_trace(struct sp_sink *s, struct sp_profile *p, const struct sp_trace *t, struct sp_err *err);
static int w_meta(struct sp_sink *s, struct sp_profile *p, struct sp_err *err);

struct sp_stream_writer *sp_stream_writer_new(FILE *out, struct sp_profile *p)
{
	struct sp_stream_writer *w = sp_xcalloc(1, sizeof *w);
	w->sink.sample = w_sample;
	w->sink.trace = w_trace;
	w->sink.meta = w_meta;
	w->out = out;
	w->p = p;
	w->hash = XXH64_createState();
	XXH64_reset(w->hash, 0);
	return w;
}

struct sp_sink *sp_stream_writer_sink(struct sp_stream_writer *w) { return &w->sink; }

void sp_stream_writer_free(struct sp_stream_writer *w)
{
	if (!w)
		return;
	sp_buf_release(&w->buf);
	sp_buf_release(&w->rec);
	XXH64_freeState(w->hash);
	free(w->strs.v);
	free(w->frames.v);
	free(w->nodes.v);
	free(w->threads.v);
	free(w->sampled);
	free(w);
}

uint64_t sp_stream_writer_stacks(const struct sp_stream_writer *w) { return w->stacks; }

static int w_drain(struct sp_stream_writer *w, struct sp_err *err)
{
	if (!w->buf.len)
		return 0;
	XXH64_update(w->hash, w->buf.p, w->buf.len);
	errno = 0;
	if (!w->failed && fwrite(w->buf.p, 1, w->buf.len, w->out) != w->buf.len)
		w->failed = errno ? errno : EIO;
	w->buf.len = 0;
	if (w->failed)
		return sp_err_write(err, w->failed);
	return 0;
}

/* Append the record in w->rec with its type and length. */
static void w_emit(struct sp_stream_writer *w, unsigned type)
{
	put_uv(&w->buf, type);
	put_uv(&w->buf, w->rec.len);
	sp_buf_add(&w->buf, w->rec.p, w->rec.len);
	w->rec.len = 0;
	w->count[C_RECORDS]++;
}

static void w_str_bytes(struct sp_buf *b, const char *s, size_t n)
{
	put_uv(b, n);
	sp_buf_add(b, s, n);
}

/* event: the first sample's, which tells the unit of perf's "period". */
static void w_header(struct sp_stream_writer *w, uint32_t event)
{
	if (w->header_done)
		return;
	w->header_done = 1;
	sp_buf_add(&w->buf, SP_MAGIC, SP_MAGIC_LEN);
	w->nvalues = sp_profile_nvalues(w->p);
	put_uv(&w->rec, SP_VERSION);
	put_uv(&w->rec, 0); /* flags: reserved, must be zero */
	put_uv(&w->rec, (uint64_t)w->nvalues);
	for (int i = 0; i < w->nvalues; i++) {
		const char *n = sp_profile_value_name(w->p, i);
		w_str_bytes(&w->rec, n, strlen(n));
	}
	for (int i = 0; i < w->nvalues; i++) {
		const char *u = sp_value_unit(w->p, i, event);
		w_str_bytes(&w->rec, u, strlen(u));
	}
	w_emit(w, R_HEADER);
}

static uint32_t w_str(struct sp_stream_writer *w, uint32_t id)
{
	if (!id)
		return 0;
	uint32_t *slot = idmap_slot(&w->strs, id);
	if (*slot)
		return *slot;
	/* Callers define what a record refers to before they start it, so
	 * w->rec is empty here. */
	w_str_bytes(&w->rec, sp_str(w->p, id), sp_str_len(w->p, id));
	w_emit(w, R_STRING);
	w->count[C_STRINGS]++;
	return *slot = ++w->next[0];
}

static uint32_t w_frame(struct sp_stream_writer *w, uint32_t id)
{
	if (!id)
		return 0;
	uint32_t *slot = idmap_slot(&w->frames, id);
	if (*slot)
		return *slot;
	const struct sp_frame f = *sp_frame_get(w->p, id);
	uint32_t name = w_str(w, f.name), mod = w_str(w, f.module), file = w_str(w, f.file);
	put_uv(&w->rec, name);
	put_uv(&w->rec, f.kind);
	put_uv(&w->rec, mod);
	put_uv(&w->rec, file);
	put_uv(&w->rec, f.line);
	put_uv(&w->rec, f.addr);
	w_emit(w, R_FRAME);
	w->count[C_FRAMES]++;
	slot = idmap_slot(&w->frames, id);
	return *slot = ++w->next[1];
}

static uint32_t w_node(struct sp_stream_writer *w, uint32_t id)
{
	if (!id)
		return 0;
	uint32_t *slot = idmap_slot(&w->nodes, id);
	if (*slot)
		return *slot;
	const struct sp_node n = *sp_node_get(w->p, id);
	uint32_t parent = w_node(w, n.parent);
	uint32_t frame = w_frame(w, n.frame);
	put_uv(&w->rec, parent);
	put_uv(&w->rec, frame);
	w_emit(w, R_NODE);
	w->count[C_NODES]++;
	slot = idmap_slot(&w->nodes, id);
	return *slot = ++w->next[2];
}

static uint32_t w_thread(struct sp_stream_writer *w, uint32_t id)
{
	if (!id)
		return 0;
	uint32_t *slot = idmap_slot(&w->threads, id);
	if (*slot)
		return *slot;
	const struct sp_thread t = *sp_thread_get(w->p, id);
	uint32_t name = w_str(w, t.name);
	uint32_t sid = ++w->next[3];
	put_uv(&w->rec, sid);
	put_uv(&w->rec, zz(t.pid));
	put_uv(&w->rec, zz(t.tid));
	put_uv(&w->rec, name);
	w_emit(w, R_THREAD);
	w->count[C_THREADS]++;
	slot = idmap_slot(&w->threads, id);
	return *slot = sid;
}

static void w_metas(struct sp_stream_writer *w)
{
	size_t n = sp_meta_count(w->p);
	for (; w->meta_done < n; w->meta_done++) {
		const struct sp_meta *m = sp_meta_get(w->p, w->meta_done);
		uint32_t k = w_str(w, m->key), v = w_str(w, m->value);
		put_uv(&w->rec, k);
		put_uv(&w->rec, v);
		w_emit(w, R_META);
		w->count[C_METAS]++;
	}
}

static void w_time(struct sp_stream_writer *w, uint64_t t)
{
	put_uv(&w->rec, zz((int64_t)(t - w->last_time)));
	w->last_time = t;
}

static int w_sample(struct sp_sink *s, struct sp_profile *p, const struct sp_sample *smp, struct sp_err *err)
{
	struct sp_stream_writer *w = (struct sp_stream_writer *)s;
	w_header(w, smp->event);
	w_metas(w);
	uint32_t node = w_node(w, smp->stack);
	if (node / 64 >= w->nsampled) {
		size_t n = w->nsampled ? w->nsampled : 64;
		while (n <= node / 64)
			n *= 2;
		w->sampled = sp_xrealloc(w->sampled, n * sizeof *w->sampled);
		memset(w->sampled + w->nsampled, 0, (n - w->nsampled) * sizeof *w->sampled);
		w->nsampled = n;
	}
	if (!(w->sampled[node / 64] & (1ull << (node % 64)))) {
		w->sampled[node / 64] |= 1ull << (node % 64);
		w->stacks++;
	}
	uint32_t thread = w_thread(w, smp->thread);
	uint32_t event = w_str(w, smp->event);
	unsigned flags = 0;
	if (smp->time != SP_NO_TIME)
		flags |= S_HAS_TIME;
	if (event)
		flags |= S_HAS_EVENT;
	for (int i = 0; i < w->nvalues; i++) {
		double v = smp->values[i];
		if (v != floor(v) || fabs(v) >= 9.2e18)
			flags |= S_FLOAT;
	}
	put_uv(&w->rec, flags);
	put_uv(&w->rec, node);
	put_uv(&w->rec, thread);
	if (flags & S_HAS_EVENT)
		put_uv(&w->rec, event);
	if (flags & S_HAS_TIME)
		w_time(w, smp->time);
	for (int i = 0; i < w->nvalues; i++) {
		if (flags & S_FLOAT)
			put_f64(&w->rec, smp->values[i]);
		else
			put_uv(&w->rec, zz((int64_t)smp->values[i]));
	}
	w_emit(w, R_SAMPLE);
	w->count[C_SAMPLES]++;
	if (w->buf.len >= (64u << 10))
		return w_drain(w, err);
	return 0;
}

static int w_trace(struct sp_sink *s, struct sp_profile *p, const struct sp_trace *t, struct sp_err *err)
{
	struct sp_stream_writer *w = (struct sp_stream_writer *)s;
	w_header(w, 0);
	w_metas(w);
	uint32_t frame = w_frame(w, t->frame);
	uint32_t thread = w_thread(w, t->thread);
	uint32_t stack = w_node(w, t->stack);
	uint32_t vname[SP_TRACE_VALUES];
	uint32_t nv = t->nvalues < SP_TRACE_VALUES ? t->nvalues : SP_TRACE_VALUES;
	for (uint32_t i = 0; i < nv; i++)
		vname[i] = w_str(w, t->vname[i]);
	put_uv(&w->rec, t->kind);
	put_uv(&w->rec, frame);
	put_uv(&w->rec, thread);
	put_uv(&w->rec, stack);
	w_time(w, t->time);
	/* The appended fields (call, flags, values) only when there are some:
	 * a trace without them is written as before. */
	if (t->call || t->flags || nv) {
		put_uv(&w->rec, t->call);
		put_uv(&w->rec, t->flags);
		put_uv(&w->rec, nv);
		for (uint32_t i = 0; i < nv; i++) {
			put_uv(&w->rec, vname[i]);
			put_uv(&w->rec, zz(t->value[i]));
		}
	}
	w_emit(w, R_TRACE);
	w->count[C_TRACES]++;
	if (w->buf.len >= (64u << 10))
		return w_drain(w, err);
	return 0;
}

static int w_meta(struct sp_sink *s, struct sp_profile *p, struct sp_err *err)
{
	struct sp_stream_writer *w = (struct sp_stream_writer *)s;
	/* Before the first sample the header (value names) may not be final:
	 * metadata waits for it. */
	if (w->header_done)
		w_metas(w);
	return 0;
}

int sp_stream_writer_flush(struct sp_stream_writer *w, struct sp_err *err)
{
	if (w_drain(w, err) < 0)
		return -1;
	if (fflush(w->out) != 0)
		return sp_err_write(err, errno);
	return 0;
}

int sp_stream_writer_finish(struct sp_stream_writer *w, struct sp_err *err)
{
	if (w->finished)
		return 0;
	w->finished = 1;
	w_header(w, 0);
	w_metas(w);
	if (w_drain(w, err) < 0)
		return -1;
	/* The checksum covers every byte before the trailer record. */
	uint64_t h = XXH64_digest(w->hash);
	for (int i = 0; i < C_N; i++)
		put_uv(&w->rec, w->count[i]);
	unsigned char x[8];
	for (int i = 0; i < 8; i++)
		x[i] = (unsigned char)(h >> (8 * i));
	sp_buf_add(&w->rec, x, 8);
	put_uv(&w->buf, R_TRAILER);
	put_uv(&w->buf, w->rec.len);
	sp_buf_add(&w->buf, w->rec.p, w->rec.len);
	w->rec.len = 0;
	if (w_drain(w, err) < 0)
		return -1;
	if (fflush(w->out) != 0)
		return sp_err_write(err, errno);
	return 0;
}

/* ======================= reader ======================= */

struct rmap {
	uint32_t *v;
	size_t n, cap;
};

static void rmap_push(struct rmap *m, uint32_t id)
{
	if (m->n == m->cap) {
		m->cap = m->cap ? m->cap * 2 : 1024;
		m->v = sp_xrealloc(m->v, m->cap * sizeof *m->v);
	}
	m->v[m->n++] = id;
}

struct reader {
	struct sp_input *in;
	struct sp_profile *p;
	struct sp_sink *sink;
	struct sp_err *err;
	XXH64_state_t *hash;
	unsigned char hp[4096]; /* bytes not yet hashed: records are small, and */
	size_t hpn;             /* hashing each alone cost a tenth of a read */
	uint64_t pre_hash;      /* the hash before the trailer record */
	struct sp_buf rec;
	uint64_t rec_off; /* offset of the current record */
	struct rmap strs, frames, nodes, threads;
	uint64_t count[C_N];
	uint64_t last_time;
	int nvalues;
	int colmap[SP_MAX_VALUES]; /* stream column -> profile column, -1 = dropped */
	/* cursor into rec */
	const unsigned char *c, *e;
	int bad;
	int partial; /* --partial: a cut is a warning */
	struct sp_read_opts *o; /* may be NULL */
	int cut;     /* the input ends inside a stream (partial mode) */
};

static int rfail(struct reader *r, const char *what, ...) __attribute__((format(printf, 2, 3)));
static int rfail(struct reader *r, const char *what, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, what);
	vsnprintf(msg, sizeof msg, what, ap);
	va_end(ap);
	return sp_err_off(r->err, sp_input_name(r->in), r->rec_off, "%s", msg);
}

/* The input ends before the stream does.  An error, or with --partial a
 * note that reading stops here (the records before were delivered). */
static int rcut(struct reader *r, const char *what, ...) __attribute__((format(printf, 2, 3)));
static int rcut(struct reader *r, const char *what, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, what);
	vsnprintf(msg, sizeof msg, what, ap);
	va_end(ap);
	r->cut = r->partial;
	if (r->partial) /* a warning that -q does not hide: no "where" */
		return sp_err_set(r->err, "%s: offset %llu: %s; using the %llu samples before the cut (--partial)",
				  sp_input_name(r->in), (unsigned long long)r->rec_off, msg,
				  (unsigned long long)r->count[C_SAMPLES]);
	return sp_err_off(r->err, sp_input_name(r->in), r->rec_off, "%s (--partial uses the %llu samples before the cut)",
			  msg, (unsigned long long)r->count[C_SAMPLES]);
}

/* Decode a varint from p[0..n).  Returns its length, 0 if incomplete, -1
 * on overflow. */
static int dec_varint(const unsigned char *p, size_t n, uint64_t *v)
{
	uint64_t x = 0;
	for (size_t i = 0; i < n && i < 10; i++) {
		x |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if (!(p[i] & 0x80)) {
			if (i == 9 && p[i] > 1)
				return -1;
			*v = x;
			return (int)i + 1;
		}
	}
	return n >= 10 ? -1 : 0;
}

/* The stream's checksum: bytes are hashed in runs of up to hp's size. */
static void hash_add(struct reader *r, const void *p, size_t n)
{
	if (r->hpn + n > sizeof r->hp) {
		if (r->hpn)
			XXH64_update(r->hash, r->hp, r->hpn);
		r->hpn = 0;
		if (n > sizeof r->hp / 2) {
			XXH64_update(r->hash, p, n);
			return;
		}
	}
	memcpy(r->hp + r->hpn, p, n);
	r->hpn += n;
}

/* The record header (type and length varints).  Returns 0 ok, 1 at a clean
 * EOF, -1 error. */
static int read_rec_header(struct reader *r, uint64_t *type, uint64_t *len)
{
	const char *b;
	size_t n;
	if (sp_input_peek(r->in, 20, &b, &n) < 0 || sp_input_failed(r->in, r->err))
		return -1;
	if (n == 0)
		return 1;
	const unsigned char *u = (const unsigned char *)b;
	int k1 = dec_varint(u, n, type);
	int k2 = k1 > 0 ? dec_varint(u + k1, n - (size_t)k1, len) : 0;
	if (k1 < 0 || k2 < 0)
		return rfail(r, "varint overflow in a record header (corrupt stream)");
	if (k1 == 0 || k2 == 0)
		return rcut(r, "truncated stream: record header cut short");
	unsigned char tmp[20];
	sp_input_read(r->in, tmp, (size_t)(k1 + k2));
	if (*type == R_TRAILER) { /* the checksum covers what comes before it */
		if (r->hpn)
			XXH64_update(r->hash, r->hp, r->hpn);
		r->hpn = 0;
		r->pre_hash = XXH64_digest(r->hash);
	}
	hash_add(r, tmp, (size_t)(k1 + k2));
	return 0;
}

/* Varint from the record payload; sets r->bad on underrun. */
static uint64_t cv_long(struct reader *r)
{
	uint64_t x = 0;
	for (int i = 0; i < 10; i++) {
		if (r->c >= r->e) {
			r->bad = 1;
			return 0;
		}
		unsigned b = *r->c++;
		x |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80)) {
			if (i == 9 && b > 1)
				r->bad = 1;
			return x;
		}
	}
	r->bad = 1;
	return 0;
}
static inline uint64_t cv(struct reader *r)
{
	if (SP_LIKELY(r->c < r->e && !(*r->c & 0x80))) /* one byte: most ids and counts */
		return *r->c++;
	return cv_long(r);
}

static double cf64(struct reader *r)
{
	if (r->e - r->c < 8) {
		r->bad = 1;
		r->c = r->e;
		return 0;
	}
	uint64_t u = 0;
	for (int i = 0; i < 8; i++)
		u |= (uint64_t)r->c[i] << (8 * i);
	r->c += 8;
	double d;
	memcpy(&d, &u, 8);
	return d;
}

/* A length-prefixed string from the payload. */
static const char *cstr(struct reader *r, size_t *n)
{
	uint64_t len = cv(r);
	if (r->bad || len > (uint64_t)(r->e - r->c)) {
		r->bad = 1;
		*n = 0;
		return "";
	}
	const char *s = (const char *)r->c;
	r->c += len;
	*n = (size_t)len;
	return s;
}

static int ref(struct reader *r, struct rmap *m, uint64_t id, const char *what, uint32_t *out)
{
	if (id == 0) {
		*out = 0;
		return 0;
	}
	if (id > m->n)
		return rfail(r, "%s %llu used before it is defined", what, (unsigned long long)id);
	*out = m->v[id - 1];
	return 0;
}

/* Columns of a later stream that differ from the earlier input's are matched
 * by meaning, so mixed inputs work in any order:
 *  - after folded text (one "value" column of unknown unit that holds what
 *    pfold printed: the period by default), the stream's weight column
 *    (period) fills it, as folded text read after a stream adds to that
 *    column (said once: the units may differ);
 *  - otherwise a column of the same name, else of the same unit (a count is
 *    a count, time is time: speedscope's "ns" takes perf's cpu-clock period).
 * Every earlier column must be filled; the stream's other columns are not
 * read.  Returns 1 when every column found its source. */
/* Time that is not CPU time (pcollect --off-cpu, --wall): matched by its
 * name only, so it is never summed with a CPU profile's ns by accident. */
static int by_name_only(const char *name) { return !strcmp(name, "off-cpu-ns") || !strcmp(name, "wall-ns"); }

static int reconcile(struct reader *r, int n, const char *const *names, const char *units, const size_t *uat)
{
	int pn = sp_profile_nvalues(r->p);
	for (int i = 0; i < n; i++)
		r->colmap[i] = -1;
	const char *u[SP_MAX_VALUES];
	for (int i = 0; i < n; i++) {
		if (units) {
			u[i] = units + uat[i];
		} else if (!strcmp(names[i], "period")) {
			const char *ev = sp_meta_find(r->p, "event");
			u[i] = ev && (!strncmp(ev, "cpu-clock", 9) || !strncmp(ev, "task-clock", 10)) ? "ns" : "events";
		} else {
			u[i] = !strcmp(names[i], "samples") || !strcmp(names[i], "count") ? "samples"
			       : !strcmp(names[i], "ns") || (strlen(names[i]) > 3 && !strcmp(names[i] + strlen(names[i]) - 3, "-ns")) ? "ns"
			       : names[i];
		}
	}
	if (pn == 1 && !strcmp(sp_profile_value_name(r->p, 0), "value")) {
		int w = 0;
		for (int i = 0; i < n; i++)
			if (!strcmp(names[i], "period"))
				w = i;
		r->colmap[w] = 0;
		if (r->o && r->o->warn && (*u[w] || n > 1)) {
			struct sp_err e;
			sp_err_set(&e, "%s: its column '%s'%s%s%s is added to the unitless values of the folded text "
				       "before it%s", sp_input_name(r->in), names[w], *u[w] ? " (" : "", u[w],
				   *u[w] ? ")" : "", n > 1 ? "; its other columns are not read" : "");
			r->o->warn(r->o->warn_ctx, &e);
		}
		return 1;
	}
	for (int j = 0; j < pn; j++) {
		const char *pname = sp_profile_value_name(r->p, j);
		const char *punit = sp_value_unit(r->p, j, 0);
		int src = -1;
		for (int i = 0; i < n && src < 0; i++)
			if (r->colmap[i] < 0 && !strcmp(names[i], pname))
				src = i;
		for (int i = 0; i < n && src < 0; i++)
			if (r->colmap[i] < 0 && !strcmp(u[i], punit) && !by_name_only(names[i]) && !by_name_only(pname))
				src = i;
		if (src < 0)
			return 0;
		r->colmap[src] = j;
	}
	return 1;
}

/* Columns of the same name whose units differ (a cpu-clock period in ns
 * and a cycles period in events) are added as they are, and said once.
 * perf script text read before has no unit for its period but each
 * sample's event: not compared. */
static void say_unlike_units(struct reader *r, int n, const char *const *names, const char *units,
			     const size_t *uat)
{
	for (int i = 0; i < n && r->o && r->o->warn; i++) {
		const char *su = units + uat[i], *pu = sp_value_unit(r->p, r->colmap[i], 0);
		if (!sp_profile_unit_set(r->p, r->colmap[i]) && !strcmp(names[i], "period"))
			continue;
		if (*su && *pu && strcmp(su, pu)) {
			struct sp_err e;
			sp_err_set(&e, "%s: its column '%s' (%s) is added to the earlier input's (%s) as it is",
				   sp_input_name(r->in), names[i], su, pu);
			r->o->warn(r->o->warn_ctx, &e);
		}
	}
}

static int read_header(struct reader *r)
{
	uint64_t version = cv(r), flags = cv(r), n = cv(r);
	if (r->bad)
		return rfail(r, "truncated header record");
	if (version != SP_VERSION)
		return rfail(r, "unsupported stream version %llu (this reader knows %d)", (unsigned long long)version,
			     SP_VERSION);
	if (flags)
		return rfail(r, "reserved header flags are set (0x%llx)", (unsigned long long)flags);
	if (n > SP_MAX_VALUES)
		return rfail(r, "%llu value columns (at most %d)", (unsigned long long)n, SP_MAX_VALUES);
	/* The names are copied NUL-terminated into one buffer (they point
	 * into r->rec, which is not terminated). */
	struct sp_buf nb = SP_BUF_INIT;
	size_t at[SP_MAX_VALUES];
	int rc = 0;
	sp_buf_grow(&nb, 64); /* never NULL, even for empty names */
	for (uint64_t i = 0; i < n && !rc; i++) {
		size_t len;
		const char *s = cstr(r, &len);
		if (r->bad) {
			rc = rfail(r, "truncated header record");
			break;
		}
		if (memchr(s, 0, len)) {
			rc = rfail(r, "value name %llu contains a NUL byte", (unsigned long long)i + 1);
			break;
		}
		at[i] = nb.len;
		sp_buf_add(&nb, s, len);
		sp_buf_addc(&nb, 0);
	}
	const char *names[SP_MAX_VALUES];
	for (uint64_t i = 0; i < n && !rc; i++) {
		names[i] = nb.p + at[i];
		for (uint64_t j = 0; j < i; j++)
			if (!strcmp(names[i], names[j]))
				rc = rfail(r, "value column \"%s\" is named twice", names[i]);
	}
	if (rc) {
		sp_buf_release(&nb);
		return -1;
	}
	/* Units, one per column, follow the names in streams written since
	 * 2026-11; older streams end here and their units are inferred. */
	size_t uat[SP_MAX_VALUES];
	int have_units = r->c < r->e;
	for (uint64_t i = 0; i < n && have_units; i++) {
		size_t len;
		const char *u = cstr(r, &len);
		if (r->bad || memchr(u, 0, len)) {
			sp_buf_release(&nb);
			return rfail(r, "bad unit of value column %llu in the header", (unsigned long long)i + 1);
		}
		uat[i] = nb.len;
		sp_buf_add(&nb, u, len);
		sp_buf_addc(&nb, 0);
	}
	for (uint64_t i = 0; i < n; i++)
		names[i] = nb.p + at[i]; /* nb may have moved */
	r->nvalues = (int)n;
	int pn = sp_profile_nvalues(r->p), set = 0;
	if (pn == 0 && n) {
		sp_profile_set_values(r->p, (int)n, names);
		for (uint64_t i = 0; i < n && have_units; i++)
			sp_profile_set_unit(r->p, (int)i, nb.p + uat[i]);
		pn = (int)n;
		set = 1;
	}
	/* Columns are matched by name, so streams with the same columns in
	 * another order still add up; any other difference would drop or
	 * zero a column without a word, so it is an error. */
	int same = (int)n == pn;
	for (uint64_t i = 0; i < n; i++) {
		r->colmap[i] = -1;
		for (int j = 0; j < pn; j++)
			if (!strcmp(names[i], sp_profile_value_name(r->p, j)))
				r->colmap[i] = j;
		if (r->colmap[i] < 0)
			same = 0;
	}
	if (!set && r->o && r->o->same_columns) {
		for (uint64_t i = 0; i < n && same && have_units; i++)
			same = !strcmp(nb.p + uat[i], sp_value_unit(r->p, r->colmap[i], 0));
		if (!same) {
			sp_buf_release(&nb);
			return rfail(r, "its value columns are not the earlier input's");
		}
	}
	if (!same && !set)
		same = reconcile(r, (int)n, names, have_units ? nb.p : NULL, uat);
	else if (same && !set && have_units)
		say_unlike_units(r, (int)n, names, nb.p, uat);
	if (!same) {
		struct sp_buf a = SP_BUF_INIT, b = SP_BUF_INIT;
		for (uint64_t i = 0; i < n; i++)
			sp_buf_addf(&a, "%s%s", i ? "," : "", names[i]);
		for (int j = 0; j < pn; j++)
			sp_buf_addf(&b, "%s%s", j ? "," : "", sp_profile_value_name(r->p, j));
		rfail(r, "value columns of this stream (%s) differ from the earlier input's (%s)", sp_buf_cstr(&a),
		      sp_buf_cstr(&b));
		sp_buf_release(&a);
		sp_buf_release(&b);
	}
	sp_buf_release(&nb);
	if (!same)
		return -1;
	if (set && r->sink->meta && r->sink->meta(r->sink, r->p, r->err) < 0)
		return -1;
	return 0;
}

static int read_record(struct reader *r, uint64_t type)
{
	struct sp_profile *p = r->p;
	switch (type) {
	case R_STRING: {
		size_t n;
		const char *s = cstr(r, &n);
		if (r->bad)
			return rfail(r, "truncated string record");
		rmap_push(&r->strs, sp_str_intern(p, s, n));
		r->count[C_STRINGS]++;
		return 0;
	}
	case R_FRAME: {
		uint64_t name = cv(r), kind = cv(r), mod = cv(r), file = cv(r), line = cv(r), addr = cv(r);
		if (r->bad)
			return rfail(r, "truncated frame record");
		struct sp_frame f = { 0 };
		if (kind >= SP_KIND_MAX)
			return rfail(r, "unknown frame kind %llu", (unsigned long long)kind);
		if (line > UINT32_MAX)
			return rfail(r, "line number out of range");
		if (ref(r, &r->strs, name, "string", &f.name) || ref(r, &r->strs, mod, "string", &f.module) ||
		    ref(r, &r->strs, file, "string", &f.file))
			return -1;
		f.kind = (uint8_t)kind;
		f.line = (uint32_t)line;
		f.addr = addr;
		rmap_push(&r->frames, sp_frame_intern(p, &f));
		r->count[C_FRAMES]++;
		return 0;
	}
	case R_NODE: {
		uint64_t parent = cv(r), frame = cv(r);
		if (r->bad)
			return rfail(r, "truncated node record");
		uint32_t pn = 0, fr = 0;
		if (ref(r, &r->nodes, parent, "node", &pn))
			return -1;
		if (frame == 0 || ref(r, &r->frames, frame, "frame", &fr))
			return frame == 0 ? rfail(r, "node without a frame") : -1;
		rmap_push(&r->nodes, sp_node_intern(p, pn, fr));
		r->count[C_NODES]++;
		return 0;
	}
	case R_THREAD: {
		uint64_t id = cv(r), pid = cv(r), tid = cv(r), name = cv(r);
		if (r->bad)
			return rfail(r, "truncated thread record");
		uint32_t nm = 0;
		if (id == 0 || id > r->threads.n + 1)
			return rfail(r, "thread id %llu out of order", (unsigned long long)id);
		if (ref(r, &r->strs, name, "string", &nm))
			return -1;
		uint32_t t = sp_thread_intern(p, unzz(pid), unzz(tid), nm);
		if (id == r->threads.n + 1)
			rmap_push(&r->threads, t);
		else
			r->threads.v[id - 1] = t; /* redefined: a rename */
		r->count[C_THREADS]++;
		return 0;
	}
	case R_SAMPLE: {
		struct sp_sample s;
		uint64_t flags = cv(r), node = cv(r), thread = cv(r);
		memset(s.values, 0, sizeof s.values);
		if (flags & ~(uint64_t)S_FLAGS)
			return rfail(r, "reserved sample flags are set");
		uint64_t event = (flags & S_HAS_EVENT) ? cv(r) : 0;
		s.time = SP_NO_TIME;
		if (flags & S_HAS_TIME) {
			r->last_time += (uint64_t)unzz(cv(r));
			s.time = r->last_time;
		}
		for (int i = 0; i < r->nvalues; i++) {
			double v = (flags & S_FLOAT) ? cf64(r) : (double)unzz(cv(r));
			if (r->colmap[i] >= 0)
				s.values[r->colmap[i]] = v;
		}
		if (r->bad)
			return rfail(r, "truncated sample record");
		if (ref(r, &r->nodes, node, "node", &s.stack) || ref(r, &r->threads, thread, "thread", &s.thread) ||
		    ref(r, &r->strs, event, "string", &s.event))
			return -1;
		r->count[C_SAMPLES]++;
		if (r->sink->sample && r->sink->sample(r->sink, p, &s, r->err) < 0)
			return -1;
		return 0;
	}
	case R_TRACE: {
		struct sp_trace t;
		uint64_t kind = cv(r), frame = cv(r), thread = cv(r), stack = cv(r);
		uint64_t dt = cv(r);
		if (r->bad)
			return rfail(r, "truncated trace record");
		if (kind > SP_TRACE_EXIT)
			return rfail(r, "unknown trace event kind %llu", (unsigned long long)kind);
		t.kind = (uint32_t)kind;
		if (ref(r, &r->frames, frame, "frame", &t.frame) || ref(r, &r->threads, thread, "thread", &t.thread) ||
		    ref(r, &r->nodes, stack, "node", &t.stack))
			return -1;
		r->last_time += (uint64_t)unzz(dt);
		t.time = r->last_time;
		t.call = 0;
		t.flags = t.nvalues = 0;
		if (r->c < r->e) {
			/* appended 2026-11: call, flags, values */
			uint64_t call = cv(r), flags = cv(r), nv = cv(r);
			if (r->bad)
				return rfail(r, "truncated trace record");
			if (flags & ~(uint64_t)SP_TRACE_FLAGS)
				return rfail(r, "reserved trace flags 0x%llx set", (unsigned long long)flags);
			if (nv > SP_TRACE_VALUES)
				return rfail(r, "a trace event with %llu values (at most %d)", (unsigned long long)nv,
					     SP_TRACE_VALUES);
			t.call = call;
			t.flags = (uint32_t)flags;
			t.nvalues = (uint32_t)nv;
			for (uint32_t i = 0; i < t.nvalues; i++) {
				uint64_t name = cv(r), val = cv(r);
				if (r->bad)
					return rfail(r, "truncated trace record");
				if (!name)
					return rfail(r, "a trace value without a name");
				if (ref(r, &r->strs, name, "string", &t.vname[i]))
					return -1;
				t.value[i] = unzz(val);
			}
		}
		r->count[C_TRACES]++;
		if (r->sink->trace && r->sink->trace(r->sink, p, &t, r->err) < 0)
			return -1;
		return 0;
	}
	case R_META: {
		uint64_t k = cv(r), v = cv(r);
		if (r->bad)
			return rfail(r, "truncated metadata record");
		uint32_t ks = 0, vs = 0;
		if (ref(r, &r->strs, k, "string", &ks) || ref(r, &r->strs, v, "string", &vs))
			return -1;
		sp_meta_add(p, sp_str(p, ks), sp_str(p, vs));
		r->count[C_METAS]++;
		if (r->sink->meta && r->sink->meta(r->sink, p, r->err) < 0)
			return -1;
		return 0;
	}
	default:
		return 0; /* unknown record types are skipped (forward compatibility) */
	}
}

static void reader_reset(struct reader *r)
{
	r->strs.n = r->frames.n = r->nodes.n = r->threads.n = 0;
	memset(r->count, 0, sizeof r->count);
	r->last_time = 0;
	r->nvalues = 0;
	XXH64_reset(r->hash, 0);
	r->hpn = 0;
}

/* Read a record's payload into r->rec.  The buffer grows with the data
 * that actually arrives, so a corrupt length cannot make a short input
 * allocate the 64 MiB a record may have. */
static int read_payload(struct reader *r, size_t len)
{
	sp_buf_reset(&r->rec);
	/* An empty first record must still leave rec.p non-NULL: the caller
	 * computes rec.p + len. */
	if (SP_UNLIKELY(!r->rec.p))
		sp_buf_grow(&r->rec, 0);
	while (r->rec.len < len) {
		size_t want = len - r->rec.len;
		if (want > (1u << 20))
			want = 1u << 20;
		if (r->rec.cap - r->rec.len < want)
			sp_buf_grow(&r->rec, want);
		size_t got = sp_input_read(r->in, r->rec.p + r->rec.len, want);
		r->rec.len += got;
		if (got < want) {
			if (sp_input_failed(r->in, r->err))
				return -1;
			return rcut(r, "truncated stream: record of %zu bytes has only %zu", len, r->rec.len);
		}
	}
	return 0;
}

/* One stream, after its magic was consumed.  Returns 0 at its trailer. */
static int read_one(struct reader *r)
{
	int first = 1;
	for (;;) {
		r->rec_off = sp_input_offset(r->in);
		uint64_t type, len;
		/* a small record whole in the input's buffer is decoded where
		 * it is (copying each into rec cost a fifth of reading) */
		const char *b;
		size_t n;
		if (!first && sp_input_peek(r->in, 256, &b, &n) == 0) {
			const unsigned char *u = (const unsigned char *)b;
			int k1 = dec_varint(u, n < 20 ? n : 20, &type);
			int k2 = k1 > 0 ? dec_varint(u + k1, (n < 20 ? n : 20) - (size_t)k1, &len) : 0;
			size_t need = (size_t)k1 + (size_t)k2 + (size_t)len;
			if (k1 > 0 && k2 > 0 && type != R_TRAILER && type != R_HEADER && len <= 4096 &&
			    (need <= n || (sp_input_peek(r->in, need, &b, &n) == 0 && n >= need))) {
				hash_add(r, b, need);
				r->c = (const unsigned char *)b + k1 + k2;
				r->e = r->c + len;
				r->bad = 0;
				r->count[C_RECORDS]++;
				int rr = read_record(r, type);
				sp_input_consume(r->in, need, 0);
				if (rr < 0)
					return -1;
				continue;
			}
		}
		int rc = read_rec_header(r, &type, &len);
		if (rc == 1)
			return rcut(r, "truncated stream: it ends without its trailer");
		if (rc < 0)
			return -1;
		if (len > MAX_RECORD)
			return rfail(r, "record of %llu bytes is too large (corrupt stream?)", (unsigned long long)len);
		if (read_payload(r, (size_t)len) < 0)
			return -1;
		r->c = (const unsigned char *)r->rec.p;
		r->e = r->c + len;
		r->bad = 0;
		if (first && type != R_HEADER)
			return rfail(r, "the stream does not start with its header record");
		if (type == R_TRAILER) {
			uint64_t cnt[C_N];
			for (int i = 0; i < C_N; i++)
				cnt[i] = cv(r);
			if (r->bad || r->e - r->c != 8)
				return rfail(r, "malformed trailer");
			uint64_t h = 0;
			for (int i = 0; i < 8; i++)
				h |= (uint64_t)r->c[i] << (8 * i);
			if (h != r->pre_hash)
				return rfail(r, "checksum mismatch: the stream is corrupt");
			static const char *const what[C_N] = { "strings", "frames", "nodes", "threads",
							       "samples", "traces", "metadata", "records" };
			for (int i = 0; i < C_N; i++)
				if (cnt[i] != r->count[i])
					return rfail(r, "trailer counts %llu %s, the stream held %llu",
						     (unsigned long long)cnt[i], what[i], (unsigned long long)r->count[i]);
			return 0;
		}
		r->count[C_RECORDS]++;
		hash_add(r, r->rec.p, r->rec.len);
		int rr = type == R_HEADER ? (first ? read_header(r) : rfail(r, "a second header record")) :
					    read_record(r, type);
		if (rr < 0)
			return -1;
		first = 0;
	}
}

int sp_stream_read(struct sp_input *in, struct sp_profile *p, struct sp_sink *sink, struct sp_err *err)
{
	return sp_stream_read_opts(in, p, sink, NULL, err);
}

int sp_stream_read_opts(struct sp_input *in, struct sp_profile *p, struct sp_sink *sink, struct sp_read_opts *o,
			struct sp_err *err)
{
	static struct sp_sink none;
	struct reader r;
	memset(&r, 0, sizeof r);
	r.partial = o && o->partial;
	r.o = o;
	r.in = in;
	r.p = p;
	r.sink = sink ? sink : &none;
	r.err = err;
	err->msg[0] = 0;
	r.hash = XXH64_createState();
	int rc = 0, streams = 0;
	for (;;) {
		char magic[SP_MAGIC_LEN];
		r.rec_off = sp_input_offset(in);
		size_t got = sp_input_read(in, magic, SP_MAGIC_LEN);
		if (got < SP_MAGIC_LEN && sp_input_failed(in, err)) {
			rc = -1;
			break;
		}
		if (got == 0 && streams > 0)
			break;
		if (got != SP_MAGIC_LEN || memcmp(magic, SP_MAGIC, SP_MAGIC_LEN)) {
			rc = streams ? rfail(&r, "%s", "data after the trailer is not another stream") :
				       rfail(&r, "%s", got == SP_MAGIC_LEN ? "not a stackpipe stream (bad magic)" :
									   "truncated stream: magic cut short");
			break;
		}
		reader_reset(&r);
		hash_add(&r, magic, SP_MAGIC_LEN);
		if (read_one(&r) < 0) {
			rc = -1;
			if (r.cut) {
				/* --partial: say where, then end as if the
				 * trailer had been there. */
				if (o->warn)
					o->warn(o->warn_ctx, err);
				rc = r.sink->end_input ? r.sink->end_input(r.sink, p, err) : 0;
			}
			break;
		}
		streams++;
		if (r.sink->end_input && r.sink->end_input(r.sink, p, err) < 0) {
			rc = -1;
			break;
		}
	}
	if (!rc && sp_input_failed(in, err))
		rc = -1;
	XXH64_freeState(r.hash);
	sp_buf_release(&r.rec);
	free(r.strs.v);
	free(r.frames.v);
	free(r.nodes.v);
	free(r.threads.v);
	return rc;
}

static int stream_probe(const char *buf, size_t n, int complete)
{
	return n >= SP_MAGIC_LEN && !memcmp(buf, SP_MAGIC, SP_MAGIC_LEN) ? 100 : 0;
}

static int stream_read(struct sp_input *in, struct sp_profile *p, struct sp_sink *sink, struct sp_read_opts *o,
		       struct sp_err *err)
{
	return sp_stream_read_opts(in, p, sink, o, err);
}

const struct sp_format sp_format_stream = {
	"stream", "stackpipe binary stream", stream_probe, stream_read,
};
