/* speedscope.c — speedscope's JSON file format: the writer behind
 * pspeedscope and the reader behind `pfold x.speedscope.json`.
 *
 * The writer never builds a JSON tree.  Samples are appended per thread to a
 * compact run (varints: node, time delta, weight); runs live in memory up to
 * a bound and are spilled in chunks to an unlinked temporary file beyond it.
 * At the end each thread's run is replayed twice, once for "samples" and once
 * for "weights" (speedscope keeps them in two parallel arrays), and the
 * shared frame table is written last: JSON objects are unordered, so
 * "profiles" may precede "shared" (py-spy writes them in that order too).
 *
 * The reader scans the document's structure itself and lets cJSON parse the
 * small pieces (see "The reader" below); errors carry their byte offset.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "speedscope.h"

#define SCHEMA_URL "https://www.speedscope.app/file-format-schema.json"

/* ------------------------------------------------------------------ */
/* JSON strings                                                         */

/* Length of the valid UTF-8 sequence at s (1..4), 0 when invalid (RFC 3629:
 * no overlongs, no surrogates, nothing above U+10FFFF). */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		return n >= 2 && (s[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		if (n < 3 || (s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80)
			return 0;
		if (c == 0xe0 && s[1] < 0xa0)
			return 0;
		if (c == 0xed && s[1] > 0x9f)
			return 0;
		return 3;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		if (n < 4 || (s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80 || (s[3] & 0xc0) != 0x80)
			return 0;
		if (c == 0xf0 && s[1] < 0x90)
			return 0;
		if (c == 0xf4 && s[1] > 0x8f)
			return 0;
		return 4;
	}
	return 0;
}

void sp_json_escape(struct sp_buf *b, const char *str, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str, *e = s + n;
	while (s < e) {
		const unsigned char *r = s;
		while (r < e && *r >= 0x20 && *r < 0x7f && *r != '"' && *r != '\\')
			r++;
		if (r > s) {
			sp_buf_add(b, s, (size_t)(r - s));
			s = r;
			if (s == e)
				break;
		}
		unsigned c = *s;
		if (c == '"' || c == '\\') {
			sp_buf_addc(b, '\\');
			sp_buf_addc(b, (char)c);
			s++;
		} else if (c < 0x20 || c == 0x7f) {
			switch (c) {
			case '\n': sp_buf_add(b, "\\n", 2); break;
			case '\t': sp_buf_add(b, "\\t", 2); break;
			case '\r': sp_buf_add(b, "\\r", 2); break;
			case '\b': sp_buf_add(b, "\\b", 2); break;
			case '\f': sp_buf_add(b, "\\f", 2); break;
			default: {
				char u[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };
				sp_buf_add(b, u, 6);
			}
			}
			s++;
		} else {
			size_t k = utf8_len(s, (size_t)(e - s));
			if (k) {
				sp_buf_add(b, s, k);
				s += k;
			} else {
				sp_buf_add(b, "\\ufffd", 6);
				s++;
			}
		}
	}
}

/* ------------------------------------------------------------------ */
/* The writer                                                           */

/* Records of a thread's run: varint(node << 1 | weight_is_f64),
 * zigzag(time - previous time), weight (varint, or 8 bytes little-endian). */
struct chunk {
	uint64_t off;
	uint32_t len;
};

struct tstate {
	uint32_t thread;  /* sp thread id: the thread's name of its latest sample */
	uint64_t name_time; /* the time of that sample */
	uint64_t nrec;
	uint64_t last_time;
	int unsorted;     /* a timestamp went backwards */
	struct sp_buf buf;/* records not yet spilled */
	struct chunk *chunks;
	size_t nchunks, capchunks;
	double total;     /* weight written (idle excluded), for activeProfileIndex */
	int selected;
	uint32_t name;    /* string id of the profile name */
};

#define IDLE_NODE UINT32_MAX
#define RUN_CHUNK (64u << 10)          /* spill a thread's run in pieces of this size */
#define MEM_BOUND (32u << 20)          /* total unspilled bytes before everything spills */
#define MAX_DELTAS 65536               /* deltas kept to estimate the sampling interval */

struct sp_speedscope_writer {
	struct sp_sink sink;
	FILE *out;
	struct sp_profile *p;
	struct sp_speedscope_opts o;
	struct sp_err *err; /* set during finish */

	/* Decided at the first sample. */
	int decided;
	int col;          /* value column of the weight, -1 = estimated from time */
	int timed;        /* lay samples out on their timestamps, idle gaps kept */
	int has_time;
	int round_ns;     /* weights are integer nanoseconds */
	const char *unit;

	struct tstate **ts; /* by sp thread id, NULL = no sample yet */
	size_t capts;
	uint32_t *order;    /* sp thread ids in the order of their first sample */
	struct sp_u64map tids; /* pid << 32 | tid -> the first sp thread id + 1: a
				* thread renamed while recorded is one profile */
	size_t norder;
	size_t mem;         /* unspilled bytes over all threads */

	int tmpfd;          /* spill file, -1 until needed */
	uint64_t tmpoff;

	uint64_t *deltas;   /* positive per-thread time deltas, for col == -1 */
	size_t ndeltas;
	uint64_t interval;  /* the estimated sampling interval (ns) */

	/* The shared frame table: sp frame id -> index + 1, and the entries. */
	uint32_t *fidx;
	size_t capfidx;
	struct jframe { uint32_t name, file, line; } *jf;
	size_t njf, capjf;
	struct sp_u64map jmap; /* hash(name, file, line) -> index + 1, probed */
	uint32_t trunc_frame;  /* index + 1 of the "[truncated]" frame */

	/* Cache of each node's "[...]" text (only for stacks without a prefix). */
	struct sp_u64map scache; /* node -> index + 1 into sents */
	struct { uint64_t off; uint32_t len; } *sents;
	size_t nsents, capsents;
	struct sp_buf stext;

	uint32_t *frames; /* scratch for sp_node_frames */
	size_t capframes;
	struct sp_buf ob; /* output buffer */
	struct sp_buf rb; /* chunk read buffer */
	struct sp_speedscope_stats st;
};

static void put_varint(struct sp_buf *b, uint64_t v)
{
	char tmp[10];
	int n = 0;
	while (v >= 0x80) {
		tmp[n++] = (char)(v | 0x80);
		v >>= 7;
	}
	tmp[n++] = (char)v;
	sp_buf_add(b, tmp, (size_t)n);
}

static uint64_t get_varint(const unsigned char **pp)
{
	const unsigned char *s = *pp;
	uint64_t v = 0;
	int shift = 0;
	for (;;) {
		unsigned c = *s++;
		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			break;
		shift += 7;
	}
	*pp = s;
	return v;
}

/* Move a thread's unspilled records to the temporary file. */
static int spill(struct sp_speedscope_writer *w, struct tstate *t, struct sp_err *err)
{
	if (!t->buf.len)
		return 0;
	if (w->tmpfd < 0 && (w->tmpfd = sp_tmpfile("the threads' events", err)) < 0)
		return -1;
	if (sp_write_all(w->tmpfd, t->buf.p, t->buf.len) < 0)
		return sp_err_set(err, "cannot write the temporary file: %s", strerror(errno));
	if (t->nchunks == t->capchunks) {
		t->capchunks = t->capchunks ? t->capchunks * 2 : 16;
		t->chunks = sp_xrealloc(t->chunks, t->capchunks * sizeof *t->chunks);
	}
	t->chunks[t->nchunks++] = (struct chunk){ w->tmpoff, (uint32_t)t->buf.len };
	w->tmpoff += t->buf.len;
	w->mem -= t->buf.len;
	sp_buf_reset(&t->buf);
	return 0;
}

/* Is value column i in nanoseconds?  By its unit: a stream's header, a
 * pprof sample type, a name ("cpu-ns") or perf's "period" of a clock event
 * (cpu-clock and task-clock count nanoseconds). */
static int col_is_ns(const struct sp_profile *p, int i, uint32_t event)
{
	return sp_unit_is_time(sp_value_unit(p, i, event));
}

static int decide(struct sp_speedscope_writer *w, const struct sp_sample *smp, struct sp_err *err)
{
	struct sp_profile *p = w->p;
	int nv = sp_profile_nvalues(p);
	w->decided = 1;
	w->has_time = smp->time != SP_NO_TIME;
	w->unit = "none";
	w->col = 0;
	w->timed = 0;
	if (sp_value_is_diff(p)) {
		if (w->o.side < 0)
			return sp_err_set(err, "two-value (diff) input: speedscope has no differential view; "
					       "pick a side with --side a or --side b");
		w->col = w->o.side;
		return 0;
	}
	if (nv == 0)
		return sp_err_set(err, "the input names no value columns");
	int ns = -1;
	for (int i = 0; i < nv && ns < 0; i++)
		if (col_is_ns(p, i, smp->event))
			ns = i;
	int period = sp_value_find(p, "period"), bytes = sp_value_find(p, "bytes");
	for (int i = 0; i < nv && bytes < 0; i++)
		if (!strcmp(sp_value_unit(p, i, smp->event), "bytes"))
			bytes = i; /* pprof's alloc_space, inuse_space */
	int calls = sp_value_find(p, "calls");
	if (w->o.weight) {
		/* a column by name: its unit, durations when it is time */
		if ((w->col = sp_value_column(p, w->o.weight, err)) < 0)
			return -1;
		const char *u = sp_value_unit(p, w->col, smp->event);
		if (sp_unit_is_time(u)) {
			w->unit = "nanoseconds";
			w->timed = w->has_time;
		} else if (!strcmp(u, "bytes")) {
			w->unit = "bytes";
		}
		return 0;
	}
	if (ns >= 0) {
		w->col = ns;
		w->unit = "nanoseconds";
		w->timed = w->has_time;
	} else if (bytes >= 0 || calls >= 0) {
		/* probe hits (pcollect --stacks): their times are not
		 * durations; bytes (allocations) or a count of calls */
		w->col = bytes >= 0 ? bytes : calls;
		if (bytes >= 0)
			w->unit = "bytes";
	} else if (w->has_time) {
		w->col = -1;
		w->unit = "nanoseconds";
		w->timed = 1;
	} else if (period >= 0) {
		w->col = period;
	}
	return 0;
}

static struct tstate *tstate_get(struct sp_speedscope_writer *w, uint32_t thread)
{
	if (thread >= w->capts) {
		size_t n = w->capts ? w->capts : 64;
		while (n <= thread)
			n *= 2;
		w->ts = sp_xrealloc(w->ts, n * sizeof *w->ts);
		memset(w->ts + w->capts, 0, (n - w->capts) * sizeof *w->ts);
		w->order = sp_xrealloc(w->order, n * sizeof *w->order);
		w->capts = n;
	}
	struct tstate *t = w->ts[thread];
	if (!t) {
		/* A known pid/tid under another name: the same thread. */
		const struct sp_thread *th = thread ? sp_thread_get(w->p, thread) : NULL;
		uint32_t *first = NULL;
		if (th && th->tid >= 0) {
			int found;
			first = sp_u64map_slot(&w->tids, (uint64_t)(uint32_t)th->pid << 32 | (uint32_t)th->tid, &found);
			if (found)
				return w->ts[thread] = w->ts[*first - 1];
			*first = thread + 1;
		}
		t = sp_xcalloc(1, sizeof *t);
		t->thread = thread;
		w->ts[thread] = t;
		w->order[w->norder++] = thread;
	}
	return t;
}

static int ss_sample(struct sp_sink *s, struct sp_profile *p, const struct sp_sample *smp, struct sp_err *err)
{
	struct sp_speedscope_writer *w = (struct sp_speedscope_writer *)s;
	if (!w->decided) {
		if (decide(w, smp, err) < 0)
			return -1;
		w->round_ns = !strcmp(w->unit, "nanoseconds");
	}
	w->st.samples_in++;
	double v = 0;
	if (w->col >= 0) {
		v = smp->values[w->col];
		if (!isfinite(v) || v < 0) {
			w->st.dropped++;
			return 0;
		}
		if (w->round_ns)
			v = nearbyint(v); /* integer nanoseconds */
		if (v == 0)
			return 0; /* speedscope ignores zero weights; so do we */
	}
	struct tstate *t = tstate_get(w, smp->thread);
	uint64_t time = smp->time == SP_NO_TIME ? t->last_time : smp->time;
	if (time >= t->name_time) { /* renamed: the profile takes its latest name */
		t->thread = smp->thread;
		t->name_time = time;
	}
	if (t->nrec && time < t->last_time)
		t->unsorted = 1;
	if (w->col < 0 && t->nrec && time > t->last_time && w->ndeltas < MAX_DELTAS) {
		if (!w->deltas)
			w->deltas = sp_xmalloc(MAX_DELTAS * sizeof *w->deltas);
		w->deltas[w->ndeltas++] = time - t->last_time;
	}
	int64_t d = (int64_t)(time - t->last_time);
	size_t before = t->buf.len;
	int f64 = !(v == floor(v) && v < 9.2e18);
	put_varint(&t->buf, (uint64_t)smp->stack << 1 | (uint64_t)f64);
	put_varint(&t->buf, ((uint64_t)d << 1) ^ (uint64_t)(d >> 63));
	if (f64) {
		uint64_t bits;
		memcpy(&bits, &v, 8);
		for (int i = 0; i < 8; i++)
			sp_buf_addc(&t->buf, (char)(bits >> (8 * i)));
	} else {
		put_varint(&t->buf, (uint64_t)v);
	}
	t->last_time = time;
	t->nrec++;
	w->mem += t->buf.len - before;
	if (t->buf.len >= RUN_CHUNK && spill(w, t, err) < 0)
		return -1;
	if (w->mem > MEM_BOUND)
		for (size_t i = 0; i < w->norder; i++)
			if (spill(w, w->ts[w->order[i]], err) < 0)
				return -1;
	return 0;
}

struct sp_speedscope_writer *sp_speedscope_writer_new(FILE *out, struct sp_profile *p,
						      const struct sp_speedscope_opts *o)
{
	struct sp_speedscope_writer *w = sp_xcalloc(1, sizeof *w);
	w->sink.sample = ss_sample;
	w->out = out;
	w->p = p;
	w->o = *o;
	if (!w->o.max_depth)
		w->o.max_depth = SP_SPEEDSCOPE_MAX_DEPTH;
	if (w->o.max_depth < 2)
		w->o.max_depth = 2;
	w->tmpfd = -1;
	sp_u64map_init(&w->jmap);
	sp_u64map_init(&w->scache);
	sp_u64map_init(&w->tids);
	return w;
}

struct sp_sink *sp_speedscope_writer_sink(struct sp_speedscope_writer *w) { return &w->sink; }

void sp_speedscope_writer_stats(const struct sp_speedscope_writer *w, struct sp_speedscope_stats *st)
{
	*st = w->st;
	st->unit = w->unit ? w->unit : "none";
}

void sp_speedscope_writer_free(struct sp_speedscope_writer *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->norder; i++) {
		struct tstate *t = w->ts[w->order[i]];
		sp_buf_release(&t->buf);
		free(t->chunks);
		free(t);
	}
	free(w->ts);
	free(w->order);
	if (w->tmpfd >= 0)
		close(w->tmpfd);
	free(w->deltas);
	free(w->fidx);
	free(w->jf);
	sp_u64map_release(&w->jmap);
	sp_u64map_release(&w->scache);
	sp_u64map_release(&w->tids);
	free(w->sents);
	sp_buf_release(&w->stext);
	free(w->frames);
	sp_buf_release(&w->ob);
	sp_buf_release(&w->rb);
	free(w);
}

/* ---- output ---- */

static int out_flush(struct sp_speedscope_writer *w)
{
	if (w->ob.len && fwrite(w->ob.p, 1, w->ob.len, w->out) != w->ob.len) {
		w->st.write_errno = errno;
		w->ob.len = 0;
		return sp_err_write(w->err, w->st.write_errno);
	}
	w->ob.len = 0;
	return 0;
}

static inline int out_maybe_flush(struct sp_speedscope_writer *w)
{
	return w->ob.len >= (1u << 16) ? out_flush(w) : 0;
}

static void out_str(struct sp_speedscope_writer *w, const char *s, size_t n)
{
	sp_buf_addc(&w->ob, '"');
	sp_json_escape(&w->ob, s, n);
	sp_buf_addc(&w->ob, '"');
}

/* Index of a (name, file, line) entry of the shared frame table. */
static uint32_t jframe(struct sp_speedscope_writer *w, uint32_t name, uint32_t file, uint32_t line)
{
	uint64_t key = sp_mix64(((uint64_t)name << 32 | file) ^ sp_mix64(line + 1));
	for (;;) {
		if (key == UINT64_MAX)
			key--;
		int found;
		uint32_t *slot = sp_u64map_slot(&w->jmap, key, &found);
		if (found) {
			const struct jframe *j = &w->jf[*slot - 1];
			if (j->name == name && j->file == file && j->line == line)
				return *slot - 1;
			key = sp_mix64(key + 1);
			continue;
		}
		if (w->njf == w->capjf) {
			w->capjf = w->capjf ? w->capjf * 2 : 1024;
			w->jf = sp_xrealloc(w->jf, w->capjf * sizeof *w->jf);
		}
		w->jf[w->njf] = (struct jframe){ name, file, line };
		*slot = (uint32_t)++w->njf;
		return *slot - 1;
	}
}

static uint32_t frame_index(struct sp_speedscope_writer *w, uint32_t frame)
{
	if (frame >= w->capfidx) {
		size_t n = w->capfidx ? w->capfidx : 1024;
		while (n <= frame)
			n *= 2;
		w->fidx = sp_xrealloc(w->fidx, n * sizeof *w->fidx);
		memset(w->fidx + w->capfidx, 0, (n - w->capfidx) * sizeof *w->fidx);
		w->capfidx = n;
	}
	if (!w->fidx[frame]) {
		const struct sp_frame *f = sp_frame_get(w->p, frame);
		w->fidx[frame] = jframe(w, f->name, f->file, f->line) + 1;
	}
	return w->fidx[frame] - 1;
}

/* Append "[i,j,...]" for node (root first) with an optional prefix frame
 * index (prefix + 1, 0 = none); stacks deeper than max_depth keep their
 * root-most frames and end in the "[truncated]" frame. */
static void stack_text(struct sp_speedscope_writer *w, uint32_t node, uint32_t prefix, struct sp_buf *b,
		       int count)
{
	if (node == IDLE_NODE) {
		sp_buf_add(b, "[]", 2);
		return;
	}
	uint32_t d = sp_node_frames(w->p, node, &w->frames, &w->capframes);
	uint32_t max = w->o.max_depth - (prefix ? 1 : 0), keep = d;
	if (d > max) {
		keep = max - 1;
		if (count)
			w->st.truncated++;
		if (!w->trunc_frame)
			w->trunc_frame = jframe(w, sp_str_intern(w->p, "[truncated]", 11), 0, 0) + 1;
	}
	sp_buf_addc(b, '[');
	int first = 1;
	if (prefix) {
		sp_buf_addu64(b, prefix - 1);
		first = 0;
	}
	for (uint32_t i = 0; i < keep; i++) {
		if (!first)
			sp_buf_addc(b, ',');
		first = 0;
		sp_buf_addu64(b, frame_index(w, w->frames[i]));
	}
	if (keep < d) {
		if (!first)
			sp_buf_addc(b, ',');
		sp_buf_addu64(b, w->trunc_frame - 1);
	}
	sp_buf_addc(b, ']');
}

#define STACK_CACHE_BYTES (256u << 20)

static void out_stack(struct sp_speedscope_writer *w, uint32_t node, uint32_t prefix, int count)
{
	if (prefix || node == IDLE_NODE) {
		stack_text(w, node, prefix, &w->ob, count);
		return;
	}
	int found;
	uint32_t v = sp_u64map_get(&w->scache, node, &found);
	if (found) {
		sp_buf_add(&w->ob, w->stext.p + w->sents[v - 1].off, w->sents[v - 1].len);
		if (count && sp_node_get(w->p, node)->depth > w->o.max_depth)
			w->st.truncated++;
		return;
	}
	size_t at = w->ob.len;
	stack_text(w, node, 0, &w->ob, count);
	if (w->stext.len < STACK_CACHE_BYTES) {
		if (w->nsents == w->capsents) {
			w->capsents = w->capsents ? w->capsents * 2 : 1024;
			w->sents = sp_xrealloc(w->sents, w->capsents * sizeof *w->sents);
		}
		w->sents[w->nsents].off = w->stext.len;
		w->sents[w->nsents].len = (uint32_t)(w->ob.len - at);
		sp_buf_add(&w->stext, w->ob.p + at, w->ob.len - at);
		*sp_u64map_slot(&w->scache, node, &found) = (uint32_t)++w->nsents;
	}
}

/* ---- replaying a thread's run ---- */

struct rec {
	uint64_t time;
	uint32_t node;
	double w;
};

struct run {
	struct sp_speedscope_writer *w;
	struct tstate *t;
	size_t chunk;       /* next chunk to load; nchunks = the in-memory buffer */
	const unsigned char *s, *e;
	uint64_t time;
	struct rec *sorted; /* the whole run, sorted by time (unsorted threads) */
	uint64_t nsorted, isorted;
	int done_mem;
};

static int run_load(struct run *r, struct sp_err *err)
{
	struct sp_speedscope_writer *w = r->w;
	struct tstate *t = r->t;
	while (r->s == r->e) {
		if (r->chunk < t->nchunks) {
			struct chunk c = t->chunks[r->chunk++];
			sp_buf_reset(&w->rb);
			sp_buf_grow(&w->rb, c.len);
			size_t got = 0;
			while (got < c.len) {
				ssize_t k = pread(w->tmpfd, w->rb.p + got, c.len - got, (off_t)(c.off + got));
				if (k <= 0) {
					if (k < 0 && errno == EINTR)
						continue;
					return sp_err_set(err, "cannot read the temporary file: %s",
							  k < 0 ? strerror(errno) : "short read");
				}
				got += (size_t)k;
			}
			r->s = (const unsigned char *)w->rb.p;
			r->e = r->s + c.len;
		} else if (!r->done_mem) {
			r->done_mem = 1;
			r->s = (const unsigned char *)t->buf.p;
			r->e = r->s + t->buf.len;
		} else {
			return 0;
		}
	}
	return 1;
}

/* Next record in input order: 1, 0 at the end, -1 on error. */
static int run_next_raw(struct run *r, struct rec *out, struct sp_err *err)
{
	int k = run_load(r, err);
	if (k <= 0)
		return k;
	uint64_t a = get_varint(&r->s);
	uint64_t z = get_varint(&r->s);
	r->time += (uint64_t)((int64_t)(z >> 1) ^ -(int64_t)(z & 1));
	out->node = (uint32_t)(a >> 1);
	out->time = r->time;
	if (a & 1) {
		uint64_t bits = 0;
		for (int i = 0; i < 8; i++)
			bits |= (uint64_t)r->s[i] << (8 * i);
		r->s += 8;
		memcpy(&out->w, &bits, 8);
	} else {
		out->w = (double)get_varint(&r->s);
	}
	return 1;
}

static int rec_cmp(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	/* Equal times keep input order: the index is stashed in w's place
	 * while sorting (see run_open). */
	return x->w < y->w ? -1 : x->w > y->w;
}

static int run_open(struct run *r, struct sp_speedscope_writer *w, struct tstate *t, struct sp_err *err)
{
	memset(r, 0, sizeof *r);
	r->w = w;
	r->t = t;
	if (!t->unsorted)
		return 0;
	/* Out of time order (rare: merged inputs): sort this thread's run in
	 * memory.  Weights are kept aside so the sort is stable. */
	struct rec *a = sp_xmalloc((t->nrec ? t->nrec : 1) * sizeof *a);
	double *wts = sp_xmalloc((t->nrec ? t->nrec : 1) * sizeof *wts);
	uint64_t n = 0;
	struct rec x;
	int k;
	while (n < t->nrec && (k = run_next_raw(r, &x, err)) > 0) {
		wts[n] = x.w;
		x.w = (double)n;
		a[n++] = x;
	}
	if (n < t->nrec) {
		free(a);
		free(wts);
		return -1;
	}
	sp_sort(a, n, sizeof *a, rec_cmp);
	for (uint64_t i = 0; i < n; i++)
		a[i].w = wts[(uint64_t)a[i].w];
	free(wts);
	r->sorted = a;
	r->nsorted = n;
	return 0;
}

static int run_next(struct run *r, struct rec *out, struct sp_err *err)
{
	if (r->sorted) {
		if (r->isorted == r->nsorted)
			return 0;
		*out = r->sorted[r->isorted++];
		return 1;
	}
	return run_next_raw(r, out, err);
}

static void run_close(struct run *r) { free(r->sorted); }

/* Items of a profile: a thread's samples with durations, idle gaps as
 * IDLE_NODE, consecutive equal stacks merged. */
struct items {
	struct run run;
	int timed, est, no_idle;
	uint64_t interval;
	int have_next, started;
	struct rec next;
	int64_t cursor, start;
	int have_pend;
	uint32_t pend_node;
	double pend_w;
	/* queued output (a gap and a sample can come from one record) */
	uint32_t qnode[2];
	double qw[2];
	int nq;
};

static int items_open(struct items *it, struct sp_speedscope_writer *w, struct tstate *t, int no_idle,
		      struct sp_err *err)
{
	memset(it, 0, sizeof *it);
	it->timed = w->timed;
	it->est = w->col < 0;
	it->interval = w->interval;
	it->no_idle = no_idle;
	if (run_open(&it->run, w, t, err) < 0)
		return -1;
	int k = run_next(&it->run, &it->next, err);
	if (k < 0)
		return -1;
	it->have_next = k;
	return 0;
}

/* Raw (unmerged) item: 1, 0 at the end, -1 on error. */
static int items_raw(struct items *it, uint32_t *node, double *wt, struct sp_err *err)
{
	if (it->nq) {
		*node = it->qnode[0];
		*wt = it->qw[0];
		it->qnode[0] = it->qnode[1];
		it->qw[0] = it->qw[1];
		it->nq--;
		return 1;
	}
	if (!it->have_next)
		return 0;
	struct rec r = it->next;
	int k = run_next(&it->run, &it->next, err);
	if (k < 0)
		return -1;
	it->have_next = k;
	double d = r.w;
	if (it->est) {
		uint64_t gap = it->have_next && it->next.time > r.time ? it->next.time - r.time : 0;
		d = (double)(gap && gap < it->interval ? gap : it->interval);
	}
	if (it->timed) {
		/* A sample is taken at the end of its period: it covers
		 * [time - d, time].  Overlaps (jitter) shift it later. */
		int64_t start = (int64_t)r.time - (int64_t)d;
		if (!it->started) {
			it->started = 1;
			it->cursor = it->start = start;
		}
		/* Timer jitter leaves gaps much shorter than a period
		 * between back-to-back samples: not idle time. */
		if (start > it->cursor && (double)(start - it->cursor) * 2 < d)
			start = it->cursor;
		if (start > it->cursor) {
			if (!it->no_idle) {
				it->qnode[it->nq] = IDLE_NODE;
				it->qw[it->nq++] = (double)(start - it->cursor);
			}
			it->cursor = start;
		}
		it->cursor += (int64_t)d;
	} else {
		it->cursor += (int64_t)d;
	}
	it->qnode[it->nq] = r.node;
	it->qw[it->nq++] = d;
	return items_raw(it, node, wt, err);
}

/* Merged item: consecutive equal stacks become one weighted sample. */
static int items_next(struct items *it, uint32_t *node, double *wt, struct sp_err *err)
{
	uint32_t n;
	double x;
	int k;
	while ((k = items_raw(it, &n, &x, err)) > 0) {
		if (x <= 0)
			continue;
		if (it->have_pend && n == it->pend_node) {
			it->pend_w += x;
			continue;
		}
		if (it->have_pend) {
			*node = it->pend_node;
			*wt = it->pend_w;
			it->pend_node = n;
			it->pend_w = x;
			return 1;
		}
		it->have_pend = 1;
		it->pend_node = n;
		it->pend_w = x;
	}
	if (k < 0)
		return -1;
	if (it->have_pend) {
		it->have_pend = 0;
		*node = it->pend_node;
		*wt = it->pend_w;
		return 1;
	}
	return 0;
}

static void items_close(struct items *it) { run_close(&it->run); }

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The name speedscope shows for a thread: "comm (tid)". */
static uint32_t thread_profile_name(struct sp_speedscope_writer *w, uint32_t thread)
{
	struct sp_profile *p = w->p;
	if (!thread)
		return sp_str_intern(p, w->o.name ? w->o.name : "profile", strlen(w->o.name ? w->o.name : "profile"));
	const struct sp_thread *t = sp_thread_get(p, thread);
	struct sp_buf b = SP_BUF_INIT;
	sp_buf_add(&b, sp_str(p, t->name), sp_str_len(p, t->name));
	if (t->tid >= 0) {
		if (b.len)
			sp_buf_addc(&b, ' ');
		sp_buf_addf(&b, "(%lld)", (long long)t->tid);
	} else if (!b.len) {
		sp_buf_adds(&b, "thread");
	}
	uint32_t id = sp_str_intern(p, b.p, b.len);
	sp_buf_release(&b);
	return id;
}

/* One sampled profile: the threads in list (one, or every selected one for
 * the merged profile, each stack then prefixed with its thread's frame). */
static int write_profile(struct sp_speedscope_writer *w, struct tstate **list, size_t n, uint32_t name,
			 int merged, double *total)
{
	struct sp_err *err = w->err;
	sp_buf_add(&w->ob, "{\"type\":\"sampled\",\"name\":", 25);
	out_str(w, sp_str(w->p, name), sp_str_len(w->p, name));
	sp_buf_adds(&w->ob, ",\"unit\":\"");
	sp_buf_adds(&w->ob, w->unit);
	sp_buf_adds(&w->ob, "\",\"samples\":[");
	int64_t start = 0, end = 0;
	double sum = 0, busy = 0;
	int first = 1;
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1)
			sp_buf_adds(&w->ob, "],\n\"weights\":[");
		first = 1;
		for (size_t i = 0; i < n; i++) {
			struct items it;
			uint32_t prefix = 0;
			if (merged && list[i]->thread) {
				const struct sp_thread *t = sp_thread_get(w->p, list[i]->thread);
				prefix = jframe(w, t->name, 0, 0) + 1;
			}
			if (items_open(&it, w, list[i], merged, err) < 0)
				return -1;
			uint32_t node;
			double x;
			int k;
			while ((k = items_next(&it, &node, &x, err)) > 0) {
				if (!first)
					sp_buf_addc(&w->ob, ',');
				first = 0;
				if (pass == 0) {
					out_stack(w, node, prefix, 1);
					w->st.samples_out++;
				} else {
					sp_buf_addnum(&w->ob, x);
					sum += x;
					if (node != IDLE_NODE)
						busy += x;
				}
				if (out_maybe_flush(w) < 0) {
					items_close(&it);
					return -1;
				}
			}
			if (pass == 1 && !merged && w->timed && it.started) {
				start = it.start;
				end = it.cursor;
			}
			items_close(&it);
			if (k < 0)
				return -1;
		}
	}
	sp_buf_adds(&w->ob, "],\"startValue\":");
	if (w->timed && !merged) {
		sp_buf_addi64(&w->ob, start);
		sp_buf_adds(&w->ob, ",\"endValue\":");
		sp_buf_addi64(&w->ob, end);
	} else {
		sp_buf_add(&w->ob, "0", 1);
		sp_buf_adds(&w->ob, ",\"endValue\":");
		sp_buf_addnum(&w->ob, sum);
	}
	sp_buf_add(&w->ob, "}", 1);
	*total = busy;
	w->st.profiles++;
	return out_maybe_flush(w);
}

int sp_speedscope_writer_finish(struct sp_speedscope_writer *w, struct sp_err *err)
{
	struct sp_profile *p = w->p;
	w->err = err;
	if (!w->decided)
		return sp_err_set(err, "no samples in the input: nothing to write");
	if (w->col < 0) {
		/* The sampling interval: the median gap between a thread's
		 * consecutive samples; a busy thread's gaps are the period. */
		w->interval = 1000000;
		if (w->ndeltas) {
			sp_sort(w->deltas, w->ndeltas, sizeof *w->deltas, cmp_u64);
			w->interval = w->deltas[w->ndeltas / 2];
		}
	}
	struct tstate **sel = sp_xmalloc((w->norder ? w->norder : 1) * sizeof *sel);
	size_t nsel = 0;
	for (size_t i = 0; i < w->norder; i++) {
		struct tstate *t = w->ts[w->order[i]];
		t->name = thread_profile_name(w, t->thread);
		if (w->o.select && !w->o.select(w->o.select_ctx, sp_str(p, t->name)))
			continue;
		if (!t->nrec)
			continue;
		sel[nsel++] = t;
	}
	int rc = 0;
	if (!nsel) {
		rc = w->st.samples_in ? sp_err_set(err, "no thread matches --thread, or every weight is zero")
				      : sp_err_set(err, "no samples in the input: nothing to write");
		goto out;
	}
	sp_buf_adds(&w->ob, "{\"$schema\":\"" SCHEMA_URL "\",\"exporter\":\"stackpipe pspeedscope\",\"name\":");
	const char *fname = w->o.name ? w->o.name : "profile";
	out_str(w, fname, strlen(fname));
	sp_buf_adds(&w->ob, ",\n\"profiles\":[\n");
	double best = -1;
	size_t active = 0;
	for (size_t i = 0; i < nsel; i++) {
		double total;
		if (i)
			sp_buf_add(&w->ob, ",\n", 2);
		if (write_profile(w, &sel[i], 1, sel[i]->name, 0, &total) < 0) {
			rc = -1;
			goto out;
		}
		sel[i]->total = total;
		if (total > best) {
			best = total;
			active = i;
		}
	}
	if (w->o.all_threads) {
		double total;
		sp_buf_add(&w->ob, ",\n", 2);
		uint32_t name = sp_str_intern(p, "all threads", 11);
		if (write_profile(w, sel, nsel, name, 1, &total) < 0) {
			rc = -1;
			goto out;
		}
	}
	sp_buf_adds(&w->ob, "\n],\n\"shared\":{\"frames\":[");
	for (size_t i = 0; i < w->njf; i++) {
		const struct jframe *j = &w->jf[i];
		sp_buf_adds(&w->ob, i ? ",\n{\"name\":" : "\n{\"name\":");
		out_str(w, sp_str(p, j->name), sp_str_len(p, j->name));
		if (j->file) {
			sp_buf_adds(&w->ob, ",\"file\":");
			out_str(w, sp_str(p, j->file), sp_str_len(p, j->file));
		}
		if (j->line) {
			sp_buf_adds(&w->ob, ",\"line\":");
			sp_buf_addu64(&w->ob, j->line);
		}
		sp_buf_addc(&w->ob, '}');
		if (out_maybe_flush(w) < 0) {
			rc = -1;
			goto out;
		}
	}
	w->st.frames = (uint32_t)w->njf;
	sp_buf_adds(&w->ob, "\n]},\n\"activeProfileIndex\":");
	sp_buf_addu64(&w->ob, active);
	sp_buf_adds(&w->ob, "}\n");
	if (out_flush(w) < 0) {
		rc = -1;
		goto out;
	}
	if (fflush(w->out) != 0) {
		w->st.write_errno = errno;
		rc = sp_err_write(err, errno);
		goto out;
	}
out:
	free(sel);
	return rc;
}

/* ------------------------------------------------------------------ */
/* The reader                                                           */

/* The document is read into memory whole, but never turned into one cJSON
 * tree: a tree costs about 25 times the text, and a sampled profile of
 * millions of samples would need one node per frame index.  A structural
 * scanner (strings, brackets, commas, colons: enough to find where each
 * value ends and to report a syntax error at its byte offset) walks the
 * top level, the profiles and the elements of their big arrays; cJSON
 * parses the small pieces (the frame table, a profile's scalars, an event),
 * and plain integer stacks and plain numbers take a fast path. */
struct rd {
	struct sp_profile *p;
	struct sp_sink *sink;
	struct sp_read_opts *o;
	struct sp_err *err;
	const char *name;
	const char *s; /* the document */
	size_t n;
	struct sp_buf stack; /* open brackets while skipping a value */
	uint32_t *fid;       /* JSON frame index -> sp frame id */
	int nframes;
	int col;       /* our value column (see the first profile in rd_profile) */
	int nv;
	int unit_kind; /* 0 none, 1 time, 2 bytes */
};

/* A syntax error at byte off: offset, line, column and what follows. */
static int rd_syntax(struct rd *r, size_t off, const char *what)
{
	uint64_t line = 1, col = 1;
	for (size_t i = 0; i < off && i < r->n; i++) {
		if (r->s[i] == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	char near[40];
	size_t k = 0;
	for (size_t i = off; i < r->n && k < 24; i++)
		near[k++] = r->s[i] >= 0x20 && r->s[i] < 0x7f ? r->s[i] : '?';
	near[k] = 0;
	if (k)
		return sp_err_off(r->err, r->name, off, "%s (line %llu, column %llu, near \"%s\")", what,
				  (unsigned long long)line, (unsigned long long)col, near);
	return sp_err_off(r->err, r->name, off, "%s (line %llu, column %llu, at the end of the input)", what,
			  (unsigned long long)line, (unsigned long long)col);
}

/* An error about a part of the document: "FILE: offset N: profiles[1].samples[7]: ..." */
static int rd_fail(struct rd *r, size_t off, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int rd_fail(struct rd *r, size_t off, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->err->msg, sizeof r->err->msg, fmt, ap);
	va_end(ap);
	snprintf(r->err->where, sizeof r->err->where, "%s: offset %llu", r->name, (unsigned long long)off);
	return -1;
}

static inline size_t skip_ws(const struct rd *r, size_t i)
{
	while (i < r->n && (r->s[i] == ' ' || r->s[i] == '\n' || r->s[i] == '\r' || r->s[i] == '\t'))
		i++;
	return i;
}

static int skip_string(struct rd *r, size_t *pi)
{
	size_t i = *pi + 1;
	for (;;) {
		if (i >= r->n)
			return rd_syntax(r, i, "malformed JSON: unterminated string");
		unsigned char c = (unsigned char)r->s[i];
		if (c == '"') {
			*pi = i + 1;
			return 0;
		}
		if (c < 0x20)
			return rd_syntax(r, i, "malformed JSON: control character in a string");
		if (c == '\\') {
			if (i + 1 >= r->n)
				return rd_syntax(r, i, "malformed JSON: unterminated string");
			c = (unsigned char)r->s[i + 1];
			if (c == 'u') {
				for (int k = 2; k < 6; k++)
					if (i + (size_t)k >= r->n || !strchr("0123456789abcdefABCDEF", r->s[i + (size_t)k]) ||
					    !r->s[i + (size_t)k])
						return rd_syntax(r, i, "malformed JSON: bad \\u escape");
				i += 6;
				continue;
			}
			if (!c || !strchr("\"\\/bfnrt", c))
				return rd_syntax(r, i, "malformed JSON: bad escape in a string");
			i += 2;
			continue;
		}
		i++;
	}
}

/* Length of the JSON number at i, 0 when there is none. */
static size_t number_len(const struct rd *r, size_t i)
{
	const char *s = r->s;
	size_t j = i, n = r->n;
	if (j < n && s[j] == '-')
		j++;
	if (j >= n || !(s[j] >= '0' && s[j] <= '9'))
		return 0;
	if (s[j] == '0')
		j++;
	else
		while (j < n && s[j] >= '0' && s[j] <= '9')
			j++;
	if (j < n && s[j] == '.') {
		j++;
		if (j >= n || !(s[j] >= '0' && s[j] <= '9'))
			return 0;
		while (j < n && s[j] >= '0' && s[j] <= '9')
			j++;
	}
	if (j < n && (s[j] == 'e' || s[j] == 'E')) {
		j++;
		if (j < n && (s[j] == '+' || s[j] == '-'))
			j++;
		if (j >= n || !(s[j] >= '0' && s[j] <= '9'))
			return 0;
		while (j < n && s[j] >= '0' && s[j] <= '9')
			j++;
	}
	return j - i;
}

#define MAX_NESTING 10000

/* Skip the value at *pi (after whitespace); *pi ends just after it. */
static int skip_value(struct rd *r, size_t *pi)
{
	size_t i = *pi;
	size_t base = r->stack.len;
	for (;;) {
		/* A value. */
		i = skip_ws(r, i);
		if (i >= r->n)
			return rd_syntax(r, i, "malformed JSON: expected a value");
		char c = r->s[i];
		if (c == '{' || c == '[') {
			if (r->stack.len - base >= MAX_NESTING)
				return rd_syntax(r, i, "malformed JSON: nested too deeply");
			sp_buf_addc(&r->stack, c == '{' ? '}' : ']');
			i = skip_ws(r, i + 1);
			if (i < r->n && r->s[i] == r->stack.p[r->stack.len - 1]) {
				r->stack.len--;
				i++;
			} else if (c == '{') {
				goto key;
			} else {
				continue;
			}
		} else if (c == '"') {
			if (skip_string(r, &i) < 0)
				return -1;
		} else if (c == '-' || (c >= '0' && c <= '9')) {
			size_t k = number_len(r, i);
			if (!k)
				return rd_syntax(r, i, "malformed JSON: bad number");
			i += k;
		} else if (r->n - i >= 4 && (!memcmp(r->s + i, "true", 4) || !memcmp(r->s + i, "null", 4))) {
			i += 4;
		} else if (r->n - i >= 5 && !memcmp(r->s + i, "false", 5)) {
			i += 5;
		} else {
			return rd_syntax(r, i, "malformed JSON: expected a value");
		}
		/* After a value: close brackets, or a comma and the next member. */
		for (;;) {
			if (r->stack.len == base) {
				*pi = i;
				return 0;
			}
			i = skip_ws(r, i);
			char top = r->stack.p[r->stack.len - 1];
			if (i < r->n && r->s[i] == top) {
				r->stack.len--;
				i++;
				continue;
			}
			if (i < r->n && r->s[i] == ',') {
				i++;
				if (top == '}')
					goto key;
				break;
			}
			return rd_syntax(r, i, top == '}' ? "malformed JSON: expected ',' or '}'"
							  : "malformed JSON: expected ',' or ']'");
		}
		continue;
key:
		i = skip_ws(r, i);
		if (i >= r->n || r->s[i] != '"')
			return rd_syntax(r, i, "malformed JSON: expected a string (an object key)");
		if (skip_string(r, &i) < 0)
			return -1;
		i = skip_ws(r, i);
		if (i >= r->n || r->s[i] != ':')
			return rd_syntax(r, i, "malformed JSON: expected ':'");
		i++;
	}
}

/* Members of the object at *pi: *st is 0 before the first.  Returns 1 with
 * the key's raw text and *pi at the value (which the caller must skip or
 * parse, leaving *pi after it), 0 after the closing brace, -1 on error. */
static int obj_next(struct rd *r, size_t *pi, int *st, const char **key, size_t *klen)
{
	size_t i = skip_ws(r, *pi);
	if (!*st) {
		if (i >= r->n || r->s[i] != '{')
			return rd_syntax(r, i, "expected an object");
		i = skip_ws(r, i + 1);
		*st = 1;
		if (i < r->n && r->s[i] == '}') {
			*pi = i + 1;
			return 0;
		}
	} else {
		if (i < r->n && r->s[i] == '}') {
			*pi = i + 1;
			return 0;
		}
		if (i >= r->n || r->s[i] != ',')
			return rd_syntax(r, i, "malformed JSON: expected ',' or '}'");
		i = skip_ws(r, i + 1);
	}
	if (i >= r->n || r->s[i] != '"')
		return rd_syntax(r, i, "malformed JSON: expected a string (an object key)");
	size_t ks = i;
	if (skip_string(r, &i) < 0)
		return -1;
	*key = r->s + ks + 1;
	*klen = i - ks - 2;
	i = skip_ws(r, i);
	if (i >= r->n || r->s[i] != ':')
		return rd_syntax(r, i, "malformed JSON: expected ':'");
	*pi = skip_ws(r, i + 1);
	return 1;
}

/* Elements of the array at *pi, like obj_next. */
static int arr_next(struct rd *r, size_t *pi, int *st)
{
	size_t i = skip_ws(r, *pi);
	if (!*st) {
		if (i >= r->n || r->s[i] != '[')
			return rd_syntax(r, i, "expected an array");
		i = skip_ws(r, i + 1);
		*st = 1;
		if (i < r->n && r->s[i] == ']') {
			*pi = i + 1;
			return 0;
		}
	} else {
		if (i < r->n && r->s[i] == ']') {
			*pi = i + 1;
			return 0;
		}
		if (i >= r->n || r->s[i] != ',')
			return rd_syntax(r, i, "malformed JSON: expected ',' or ']'");
		i = skip_ws(r, i + 1);
	}
	*pi = i;
	return 1;
}

static int key_is(const char *k, size_t kl, const char *want)
{
	return kl == strlen(want) && !memcmp(k, want, kl);
}

/* Parse the value at *pi with cJSON; *pi moves after it. */
static cJSON *rd_parse(struct rd *r, size_t *pi)
{
	size_t start = skip_ws(r, *pi), end = start;
	if (skip_value(r, &end) < 0)
		return NULL;
	const char *e = NULL;
	cJSON *v = cJSON_ParseWithLengthOpts(r->s + start, end - start, &e, 0);
	if (!v) {
		rd_syntax(r, e && e >= r->s + start ? (size_t)(e - r->s) : start, "malformed JSON");
		return NULL;
	}
	*pi = end;
	return v;
}

/* Unit -> (kind, scale to our column's unit).  -1 when unknown. */
static int unit_parse(const char *u, int *kind, double *scale)
{
	static const struct { const char *n; int kind; double scale; } units[] = {
		{ "none", 0, 1 }, { "nanoseconds", 1, 1 }, { "microseconds", 1, 1e3 },
		{ "milliseconds", 1, 1e6 }, { "seconds", 1, 1e9 }, { "bytes", 2, 1 },
	};
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
		if (!strcmp(u, units[i].n)) {
			*kind = units[i].kind;
			*scale = units[i].scale;
			return 0;
		}
	return -1;
}

static int is_index(const cJSON *x, int n)
{
	return cJSON_IsNumber(x) && x->valuedouble >= 0 && x->valuedouble < n &&
	       x->valuedouble == floor(x->valuedouble);
}

static int rd_frames(struct rd *r, const cJSON *frames, size_t off)
{
	r->nframes = cJSON_GetArraySize(frames);
	r->fid = sp_xmalloc(((size_t)r->nframes + 1) * sizeof *r->fid);
	int i = 0;
	const cJSON *f;
	cJSON_ArrayForEach(f, frames) {
		if (!cJSON_IsObject(f))
			return rd_fail(r, off, "shared.frames[%d]: not an object", i);
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(f, "name");
		const cJSON *file = cJSON_GetObjectItemCaseSensitive(f, "file");
		const cJSON *line = cJSON_GetObjectItemCaseSensitive(f, "line");
		if (!cJSON_IsString(name))
			return rd_fail(r, off, "shared.frames[%d]: \"name\" is missing or not a string", i);
		if (file && !cJSON_IsString(file) && !cJSON_IsNull(file))
			return rd_fail(r, off, "shared.frames[%d]: \"file\" is not a string", i);
		if (line && !cJSON_IsNumber(line) && !cJSON_IsNull(line))
			return rd_fail(r, off, "shared.frames[%d]: \"line\" is not a number", i);
		struct sp_frame fr;
		memset(&fr, 0, sizeof fr);
		size_t n = strlen(name->valuestring);
		const char *s = name->valuestring;
		fr.name = sp_str_intern(r->p, s, n);
		fr.kind = SP_KIND_NATIVE;
		if (n > 4 && s[n - 4] == '_' && s[n - 3] == '[' && s[n - 1] == ']') {
			if (s[n - 2] == 'k')
				fr.kind = SP_KIND_KERNEL;
			else if (s[n - 2] == 'j')
				fr.kind = SP_KIND_JIT;
			else if (s[n - 2] == 'i')
				fr.kind = SP_KIND_INLINED;
		}
		if (cJSON_IsString(file) && *file->valuestring) {
			size_t fl = strlen(file->valuestring);
			fr.file = sp_str_intern(r->p, file->valuestring, fl);
			/* Python's files: a .py, or code CPython names in angle
			 * brackets ("<frozen importlib._bootstrap>", "<string>") */
			if ((fl > 3 && !strcmp(file->valuestring + fl - 3, ".py")) ||
			    (fl > 2 && file->valuestring[0] == '<' && file->valuestring[fl - 1] == '>'))
				fr.kind = SP_KIND_PYTHON;
		}
		if (cJSON_IsNumber(line) && line->valuedouble > 0 && line->valuedouble < 4294967296.0)
			fr.line = (uint32_t)line->valuedouble;
		r->fid[i++] = sp_frame_intern(r->p, &fr);
	}
	return 0;
}

/* Parse an unsigned decimal (or 0x hex) integer filling [s, e). */
static int parse_int(const char *s, const char *e, int64_t *out)
{
	uint64_t v = 0;
	int base = 10;
	if (e - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (s == e)
		return 0;
	for (; s < e; s++) {
		int d;
		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (base == 16 && *s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			return 0;
		if (v > (UINT64_MAX >> 5))
			return 0;
		v = v * (uint64_t)base + (uint64_t)d;
	}
	if (v > INT64_MAX)
		return 0;
	*out = (int64_t)v;
	return 1;
}

/* The thread of a profile, from its name: pspeedscope's "comm (tid)",
 * py-spy's `Thread TID "name"` and `Process PID Thread TID "name"`.  Other
 * names become a thread without ids when the file holds several profiles,
 * and no thread when it holds one (so folding it adds no root frame). */
static uint32_t rd_thread(struct rd *r, const char *name, int nprofiles)
{
	size_t n = strlen(name);
	int64_t pid = -1, tid = -1;
	if (n > 2 && name[n - 1] == ')') {
		const char *lp = memrchr(name, '(', n);
		if (lp && (lp == name || (lp > name + 1 && lp[-1] == ' ')) && parse_int(lp + 1, name + n - 1, &tid)) {
			size_t cl = lp == name ? 0 : (size_t)(lp - 1 - name);
			return sp_thread_intern(r->p, -1, tid, sp_str_intern(r->p, name, cl));
		}
	}
	const char *s = name, *e = name + n;
	if (n > 8 && !memcmp(s, "Process ", 8)) {
		const char *sp = memchr(s + 8, ' ', (size_t)(e - s - 8));
		if (sp && parse_int(s + 8, sp, &pid))
			s = sp + 1;
		else
			pid = -1;
	}
	if (e - s > 7 && !memcmp(s, "Thread ", 7)) {
		const char *sp = memchr(s + 7, ' ', (size_t)(e - s - 7));
		const char *te = sp ? sp : e;
		if (parse_int(s + 7, te, &tid)) {
			uint32_t nm = 0;
			if (sp && e - sp >= 3 && sp[1] == '"' && e[-1] == '"')
				nm = sp_str_intern(r->p, sp + 2, (size_t)(e - sp - 3));
			return sp_thread_intern(r->p, pid, tid, nm);
		}
	}
	if (nprofiles <= 1)
		return 0;
	return sp_thread_intern(r->p, -1, -1, sp_str_intern(r->p, name, n));
}

static int rd_emit(struct rd *r, uint32_t node, uint32_t thread, double w, uint64_t time)
{
	struct sp_sample smp;
	memset(&smp, 0, sizeof smp);
	smp.stack = node;
	smp.thread = thread;
	smp.time = time;
	smp.values[r->col] = w;
	if (r->sink->sample && r->sink->sample(r->sink, r->p, &smp, r->err) < 0)
		return -1;
	return 0;
}

/* A number at *pi: a plain JSON number (fast), else whatever cJSON makes of
 * the value.  Returns 1 and the number, 0 when the value is not a number
 * (*pi after it), -1 on a syntax error. */
static int rd_num(struct rd *r, size_t *pi, double *out)
{
	size_t i = skip_ws(r, *pi), k = number_len(r, i);
	if (k && k < 64) {
		char tmp[64];
		memcpy(tmp, r->s + i, k);
		tmp[k] = 0;
		*out = strtod(tmp, NULL);
		*pi = i + k;
		return 1;
	}
	cJSON *v = rd_parse(r, pi);
	if (!v)
		return -1;
	int ok = cJSON_IsNumber(v) && isfinite(v->valuedouble);
	if (ok)
		*out = v->valuedouble;
	cJSON_Delete(v);
	return ok;
}

/* A stack at *pi: an array of frame indices, root first.  Fast path for
 * plain integers; anything else goes through cJSON. */
static int rd_stack(struct rd *r, size_t *pi, int pi_, int si, uint32_t *node)
{
	size_t i = skip_ws(r, *pi), at = i;
	uint32_t nd = 0;
	int j = 0;
	if (i < r->n && r->s[i] == '[') {
		i = skip_ws(r, i + 1);
		if (i < r->n && r->s[i] == ']') {
			*pi = i + 1;
			*node = 0;
			return 0;
		}
		for (;;) {
			uint64_t v = 0;
			size_t d = 0;
			while (i + d < r->n && r->s[i + d] >= '0' && r->s[i + d] <= '9' && d < 10)
				v = v * 10 + (uint64_t)(r->s[i + d++] - '0');
			size_t e = skip_ws(r, i + d);
			if (!d || (d > 1 && r->s[i] == '0') || e >= r->n || (r->s[e] != ',' && r->s[e] != ']'))
				break; /* not a plain integer: the slow path decides */
			if (v >= (uint64_t)r->nframes)
				return rd_fail(r, i, "profiles[%d].samples[%d][%d]: not a frame index (the file has %d frames)",
					       pi_, si, j, r->nframes);
			nd = sp_node_intern(r->p, nd, r->fid[v]);
			j++;
			if (r->s[e] == ']') {
				*pi = e + 1;
				*node = nd;
				return 0;
			}
			i = skip_ws(r, e + 1);
		}
	}
	*pi = at;
	cJSON *a = rd_parse(r, pi);
	if (!a)
		return -1;
	int rc = 0;
	nd = 0;
	j = 0;
	if (!cJSON_IsArray(a)) {
		rc = rd_fail(r, at, "profiles[%d].samples[%d]: not an array of frame indices", pi_, si);
	} else {
		const cJSON *f;
		cJSON_ArrayForEach(f, a) {
			if (!is_index(f, r->nframes)) {
				rc = rd_fail(r, at, "profiles[%d].samples[%d][%d]: not a frame index (the file has %d frames)",
					     pi_, si, j, r->nframes);
				break;
			}
			nd = sp_node_intern(r->p, nd, r->fid[(int)f->valuedouble]);
			j++;
		}
	}
	cJSON_Delete(a);
	*node = nd;
	return rc;
}

/* Count the remaining elements of an array (for a length mismatch message). */
static int rd_count_rest(struct rd *r, size_t i, int st, long *count)
{
	int k;
	while ((k = arr_next(r, &i, &st)) > 0) {
		if (skip_value(r, &i) < 0)
			return -1;
		(*count)++;
	}
	return k;
}

struct prof {
	int index;
	size_t at;       /* offset of the profile object */
	char *type, *name, *unit;
	double start;
	size_t samples, weights, events; /* offsets of the arrays, 0 = absent */
};

/* A sample's time in nanoseconds, as the stream keeps it (uint64_t).  Times
 * before 0 read as 0; a time at or past 2^64 ns (584 years) cannot be kept
 * and converting it would be undefined: the caller reports it.  Returns 0
 * then, else 1. */
static int ns_time(double t, uint64_t *out)
{
	if (!(t < 18446744073709551616.0))
		return 0;
	*out = t > 0 ? (uint64_t)t : 0;
	return 1;
}

static int rd_sampled(struct rd *r, const struct prof *pr, uint32_t thread, double scale, int timed)
{
	int pi = pr->index;
	if (!pr->samples)
		return rd_fail(r, pr->at, "profiles[%d]: \"samples\" is missing", pi);
	if (!pr->weights)
		return rd_fail(r, pr->at, "profiles[%d]: \"weights\" is missing", pi);
	size_t is = pr->samples, iw = pr->weights;
	int ss = 0, sw = 0;
	double t = pr->start * scale;
	for (int i = 0;; i++) {
		int ks = arr_next(r, &is, &ss);
		if (ks < 0)
			return -1;
		int kw = arr_next(r, &iw, &sw);
		if (kw < 0)
			return -1;
		if (!ks || !kw) {
			long ns = i + ks, nw = i + kw;
			if (ks && (skip_value(r, &is) < 0 || rd_count_rest(r, is, 1, &ns) < 0))
				return -1;
			if (kw && (skip_value(r, &iw) < 0 || rd_count_rest(r, iw, 1, &nw) < 0))
				return -1;
			if (ns != nw)
				return rd_fail(r, pr->at, "profiles[%d]: %ld samples but %ld weights", pi, ns, nw);
			return 0;
		}
		size_t wat = iw;
		double w;
		int k = rd_num(r, &iw, &w);
		if (k < 0)
			return -1;
		if (!k || !isfinite(w) || w < 0)
			return rd_fail(r, wat, "profiles[%d].weights[%d]: not a number >= 0", pi, i);
		w *= scale;
		if (scale != 1)
			w = nearbyint(w);
		uint32_t node = 0;
		if (rd_stack(r, &is, pi, i, &node) < 0)
			return -1;
		t += w;
		if (!node || w == 0)
			continue; /* an idle gap: time passes, no sample */
		uint64_t ns = SP_NO_TIME;
		if (timed && !ns_time(t, &ns))
			return rd_fail(r, wat, "profiles[%d].weights[%d]: the sample's time (%g ns) is out of range", pi,
				       i, t);
		if (rd_emit(r, node, thread, w, ns) < 0)
			return -1;
	}
}

static int rd_evented(struct rd *r, const struct prof *pr, uint32_t thread, double scale, int timed)
{
	int pi = pr->index;
	if (!pr->events)
		return rd_fail(r, pr->at, "profiles[%d]: \"events\" is missing", pi);
	uint32_t node = 0;
	double last = 0;
	size_t i = pr->events;
	int st = 0, k, n = 0;
	while ((k = arr_next(r, &i, &st)) > 0) {
		size_t at = i;
		cJSON *ev = rd_parse(r, &i);
		if (!ev)
			return -1;
		const cJSON *type = cJSON_GetObjectItemCaseSensitive(ev, "type");
		const cJSON *frame = cJSON_GetObjectItemCaseSensitive(ev, "frame");
		const cJSON *atv = cJSON_GetObjectItemCaseSensitive(ev, "at");
		int rc = 0;
		double a = 0;
		if (!cJSON_IsObject(ev) || !cJSON_IsString(type) ||
		    (strcmp(type->valuestring, "O") && strcmp(type->valuestring, "C")))
			rc = rd_fail(r, at, "profiles[%d].events[%d]: not an event (\"type\" must be \"O\" or \"C\")", pi, n);
		else if (!is_index(frame, r->nframes))
			rc = rd_fail(r, at, "profiles[%d].events[%d]: \"frame\" is not a frame index (the file has %d frames)",
				     pi, n, r->nframes);
		else if (!cJSON_IsNumber(atv) || !isfinite(atv->valuedouble))
			rc = rd_fail(r, at, "profiles[%d].events[%d]: \"at\" is not a number", pi, n);
		if (!rc) {
			a = atv->valuedouble * scale;
			if (scale != 1)
				a = nearbyint(a);
			if (n && a < last)
				rc = rd_fail(r, at, "profiles[%d].events[%d]: \"at\" goes backwards (%g after %g)", pi, n,
					     atv->valuedouble, last / scale);
		}
		uint64_t ns = SP_NO_TIME;
		if (!rc && timed && !ns_time(a, &ns))
			rc = rd_fail(r, at, "profiles[%d].events[%d]: \"at\" (%g) is out of range", pi, n,
				     atv->valuedouble);
		if (!rc && node && n && a > last && rd_emit(r, node, thread, a - last, ns) < 0)
			rc = -1;
		if (!rc) {
			uint32_t fid = r->fid[(int)frame->valuedouble];
			if (type->valuestring[0] == 'O') {
				node = sp_node_intern(r->p, node, fid);
			} else {
				const struct sp_node *nd = node ? sp_node_get(r->p, node) : NULL;
				if (!nd || nd->frame != fid)
					rc = rd_fail(r, at,
						     "profiles[%d].events[%d]: closes frame %d, which is not the innermost open frame",
						     pi, n, (int)frame->valuedouble);
				else
					node = nd->parent;
			}
		}
		cJSON_Delete(ev);
		if (rc)
			return -1;
		last = a;
		n++;
	}
	if (k < 0)
		return -1;
	if (node)
		return rd_fail(r, pr->at, "profiles[%d]: %u frames are still open after the last event", pi,
			       sp_node_get(r->p, node)->depth);
	return 0;
}

/* A string member of a profile: its text (malloc'd) or NULL. */
static int rd_string(struct rd *r, size_t *pi, int index, const char *key, char **out)
{
	size_t at = skip_ws(r, *pi);
	cJSON *v = rd_parse(r, pi);
	if (!v)
		return -1;
	int rc = 0;
	if (cJSON_IsString(v)) {
		free(*out);
		*out = sp_xstrndup(v->valuestring, strlen(v->valuestring));
	} else if (!cJSON_IsNull(v)) {
		rc = rd_fail(r, at, "profiles[%d]: \"%s\" is not a string", index, key);
	}
	cJSON_Delete(v);
	return rc;
}

static int rd_profile(struct rd *r, size_t *pi, int index, int nprofiles)
{
	struct prof pr;
	memset(&pr, 0, sizeof pr);
	pr.index = index;
	pr.at = skip_ws(r, *pi);
	int st = 0, k, rc = -1;
	const char *key;
	size_t kl;
	if (pr.at >= r->n || r->s[pr.at] != '{')
		return rd_fail(r, pr.at, "profiles[%d]: not an object", index);
	while ((k = obj_next(r, pi, &st, &key, &kl)) > 0) {
		size_t at = *pi;
		if (key_is(key, kl, "type") || key_is(key, kl, "name") || key_is(key, kl, "unit")) {
			char **dst = key[0] == 't' ? &pr.type : key[0] == 'n' ? &pr.name : &pr.unit;
			char kbuf[8];
			memcpy(kbuf, key, kl);
			kbuf[kl] = 0;
			if (rd_string(r, pi, index, kbuf, dst) < 0)
				goto out;
			continue;
		}
		if (key_is(key, kl, "startValue")) {
			int n = rd_num(r, pi, &pr.start);
			if (n < 0)
				goto out;
			if (!n) {
				rd_fail(r, at, "profiles[%d]: \"startValue\" is not a number", index);
				goto out;
			}
			continue;
		}
		if (key_is(key, kl, "samples"))
			pr.samples = at;
		else if (key_is(key, kl, "weights"))
			pr.weights = at;
		else if (key_is(key, kl, "events"))
			pr.events = at;
		if (skip_value(r, pi) < 0)
			goto out;
	}
	if (k < 0)
		goto out;
	if (!pr.type) {
		rd_fail(r, pr.at, "profiles[%d]: not a profile (no \"type\")", index);
		goto out;
	}
	int kind = 0;
	double scale = 1;
	const char *u = pr.unit ? pr.unit : "none";
	if (unit_parse(u, &kind, &scale) < 0) {
		rd_fail(r, pr.at, "profiles[%d]: unknown unit \"%s\"", index, u);
		goto out;
	}
	/* One value column per file, named after the unit; the first profile
	 * decides, later ones must agree. */
	static const char *const colname[] = { "samples", "ns", "bytes" };
	if (!index) {
		r->unit_kind = kind;
		r->nv = sp_profile_nvalues(r->p);
		if (!r->nv) {
			sp_profile_set_values(r->p, 1, &colname[kind]);
			r->nv = 1;
		}
		/* after other input: the column of that name, else of that
		 * unit (a cpu-clock period is ns), else (folded text's
		 * unitless value, perf's events) the weight column alone,
		 * said when others get 0 */
		r->col = sp_value_find(r->p, colname[kind]);
		for (int i = 0; i < r->nv && r->col < 0; i++)
			if (!strcmp(sp_value_unit(r->p, i, 0), colname[kind]))
				r->col = i;
		if (r->col < 0) {
			r->col = sp_value_column(r->p, NULL, NULL);
			if (r->nv > 1 && r->o && r->o->warn) {
				struct sp_err e;
				sp_err_set(&e, "%s: its weights (%s) are added to column '%s' as they are; the other columns "
					       "get 0 for its samples", r->name, u, sp_profile_value_name(r->p, r->col));
				r->o->warn(r->o->warn_ctx, &e);
			}
		}
	} else if (kind != r->unit_kind) {
		rd_fail(r, pr.at, "profiles[%d]: unit \"%s\" differs from the first profile's (one value column per file)",
			index, u);
		goto out;
	}
	uint32_t thread = rd_thread(r, pr.name ? pr.name : "", nprofiles);
	if (!strcmp(pr.type, "sampled"))
		rc = rd_sampled(r, &pr, thread, scale, kind == 1);
	else if (!strcmp(pr.type, "evented"))
		rc = rd_evented(r, &pr, thread, scale, kind == 1);
	else
		rd_fail(r, pr.at, "profiles[%d]: unknown profile type \"%s\" (known: sampled, evented)", index, pr.type);
out:
	free(pr.type);
	free(pr.name);
	free(pr.unit);
	return rc;
}

static int rd_document(struct rd *r)
{
	size_t i = 0;
	if (r->n >= 3 && !memcmp(r->s, "\xef\xbb\xbf", 3))
		i = 3; /* UTF-8 byte order mark */
	i = skip_ws(r, i);
	if (i >= r->n || r->s[i] != '{')
		return rd_syntax(r, i, "not a speedscope file: not a JSON object");
	/* Walk the top level once: the whole document's syntax is checked before
	 * a sample is passed on, and "shared" may come after "profiles". */
	size_t shared = 0, profiles = 0;
	int st = 0, k;
	const char *key;
	size_t kl;
	while ((k = obj_next(r, &i, &st, &key, &kl)) > 0) {
		if (key_is(key, kl, "shared"))
			shared = i;
		else if (key_is(key, kl, "profiles"))
			profiles = i;
		if (skip_value(r, &i) < 0)
			return -1;
	}
	if (k < 0)
		return -1;
	i = skip_ws(r, i);
	if (i < r->n)
		return rd_syntax(r, i, "unexpected data after the JSON document");
	if (!profiles || r->s[profiles] != '[')
		return rd_fail(r, profiles, "not a speedscope file: no \"profiles\" array");
	if (!shared)
		return rd_fail(r, 0, "not a speedscope file: no \"shared\": {\"frames\": [...]}");
	size_t at = shared;
	cJSON *sh = rd_parse(r, &at);
	if (!sh)
		return -1;
	const cJSON *frames = cJSON_GetObjectItemCaseSensitive(sh, "frames");
	int rc = cJSON_IsArray(frames) ? rd_frames(r, frames, shared)
				       : rd_fail(r, shared, "not a speedscope file: no \"shared\": {\"frames\": [...]}");
	cJSON_Delete(sh);
	if (rc < 0)
		return -1;
	int np = 0;
	i = profiles;
	st = 0;
	while ((k = arr_next(r, &i, &st)) > 0) {
		if (skip_value(r, &i) < 0)
			return -1;
		np++;
	}
	i = profiles;
	st = 0;
	for (int pi = 0; (k = arr_next(r, &i, &st)) > 0; pi++)
		if (rd_profile(r, &i, pi, np) < 0)
			return -1;
	return k;
}

static int speedscope_read(struct sp_input *in, struct sp_profile *p, struct sp_sink *sink, struct sp_read_opts *o,
			   struct sp_err *err)
{
	struct sp_buf b = SP_BUF_INIT;
	for (;;) {
		/* 32 KB more each time; sp_buf_grow doubles, so a big document
		 * still takes few reads, and a small one no megabyte */
		sp_buf_grow(&b, 32 * 1024);
		size_t k = sp_input_read(in, b.p + b.len, b.cap - b.len);
		if (!k)
			break;
		b.len += k;
	}
	if (sp_input_failed(in, err)) {
		sp_buf_release(&b);
		return -1;
	}
	struct rd r;
	memset(&r, 0, sizeof r);
	r.p = p;
	r.sink = sink;
	r.o = o;
	r.err = err;
	r.name = sp_input_name(in);
	r.s = b.p ? b.p : "";
	r.n = b.len;
	int rc = rd_document(&r);
	if (!rc && sink->end_input && sink->end_input(sink, p, err) < 0)
		rc = -1;
	free(r.fid);
	sp_buf_release(&r.stack);
	sp_buf_release(&b);
	return rc;
}

/* Probe: a JSON object naming speedscope's schema, or holding both
 * "shared" and "profiles" keys. */
static int speedscope_probe(const char *buf, size_t n, int complete)
{
	size_t i = 0;
	if (n >= 3 && (unsigned char)buf[0] == 0xef && (unsigned char)buf[1] == 0xbb && (unsigned char)buf[2] == 0xbf)
		i = 3; /* UTF-8 byte order mark */
	while (i < n && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\n' || buf[i] == '\r'))
		i++;
	if (i == n || buf[i] != '{')
		return 0;
	if (memmem(buf, n, "speedscope.app/file-format-schema", 33))
		return 100;
	if (memmem(buf, n, "\"profiles\"", 10) && memmem(buf, n, "\"shared\"", 8))
		return 80;
	return 0;
}

const struct sp_format sp_format_speedscope = {
	"speedscope", "speedscope JSON (sampled and evented profiles; py-spy --format speedscope)",
	speedscope_probe, speedscope_read,
};
