/* livetrace.c — a traced function's calls, live (see livetrace.h). */
#include "livetrace.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "profile.h"

struct lcall {
	uint64_t start, end;
	uint32_t tid;
	uint16_t abandoned, has_by;
	int64_t by;
};

struct lopen {
	uint64_t call, start;
	uint32_t tid, frame;
	int has_by;
	int64_t by;
};

struct byent {
	int64_t v;
	uint64_t d;
};

struct sp_livetrace {
	pthread_mutex_t mu;
	uint64_t window_ns;
	char *by;
	struct lcall *ring; /* calls by their end, oldest first */
	size_t cap, head, len;
	struct lopen *open; /* reader thread only */
	size_t nopen, capopen;
	uint64_t tmax, tfirst, total, events;
	int have_first, ended, stop;
	/* compute's scratch (view thread only) */
	uint64_t *durs;
	struct lcall *calls;
	struct byent *bys;
	size_t capd;
};

struct sp_livetrace *sp_livetrace_new(uint64_t window_ns, const char *by)
{
	struct sp_livetrace *lt = sp_xcalloc(1, sizeof *lt);
	if (by)
		lt->by = sp_xstrndup(by, strlen(by));
	pthread_mutex_init(&lt->mu, NULL);
	lt->window_ns = window_ns;
	return lt;
}

void sp_livetrace_free(struct sp_livetrace *lt)
{
	if (!lt)
		return;
	pthread_mutex_destroy(&lt->mu);
	free(lt->ring);
	free(lt->open);
	free(lt->durs);
	free(lt->calls);
	free(lt->bys);
	free(lt->by);
	free(lt);
}

static void push_call(struct sp_livetrace *lt, const struct lcall *c)
{
	if (lt->len == lt->cap) {
		size_t n = lt->cap ? lt->cap * 2 : 4096;
		struct lcall *r = sp_xmalloc(n * sizeof *r);
		for (size_t i = 0; i < lt->len; i++)
			r[i] = lt->ring[(lt->head + i) % lt->cap];
		free(lt->ring);
		lt->ring = r;
		lt->cap = n;
		lt->head = 0;
	}
	lt->ring[(lt->head + lt->len) % lt->cap] = *c;
	lt->len++;
	uint64_t from = lt->tmax > lt->window_ns ? lt->tmax - lt->window_ns : 0;
	while (lt->len && lt->ring[lt->head].end < from) {
		lt->head = (lt->head + 1) % lt->cap;
		lt->len--;
	}
}

struct lt_sink {
	struct sp_sink sink;
	struct sp_livetrace *lt;
};

/* The event's value of lt->by, if it carries one. */
static int by_value(const struct sp_livetrace *lt, const struct sp_profile *p, const struct sp_trace *t, int64_t *v)
{
	if (!lt->by)
		return 0;
	for (uint32_t i = 0; i < t->nvalues && i < SP_TRACE_VALUES; i++)
		if (!strcmp(sp_str(p, t->vname[i]), lt->by)) {
			*v = t->value[i];
			return 1;
		}
	return 0;
}

static int lt_trace(struct sp_sink *sk, struct sp_profile *p, const struct sp_trace *t, struct sp_err *err)
{
	struct sp_livetrace *lt = ((struct lt_sink *)sk)->lt;
	const struct sp_thread *th = sp_thread_get(p, t->thread);
	uint32_t tid = th && th->tid >= 0 ? (uint32_t)th->tid : t->thread;
	int64_t bv = 0;
	int hb = by_value(lt, p, t, &bv);
	pthread_mutex_lock(&lt->mu);
	if (lt->stop) {
		pthread_mutex_unlock(&lt->mu);
		sp_err_set(err, "stopped");
		err->code = -1;
		return -1;
	}
	lt->events++;
	if (t->time > lt->tmax)
		lt->tmax = t->time;
	if (!lt->have_first) {
		lt->have_first = 1;
		lt->tfirst = t->time;
	}
	if (t->flags & SP_TRACE_POINT) {
		/* a line probe's hit: a call of no duration */
		struct lcall c = { t->time, t->time, tid, 0, (uint16_t)hb, bv };
		lt->total++;
		push_call(lt, &c);
	} else {
		if (t->kind == SP_TRACE_ENTRY) {
			if (lt->nopen == lt->capopen) {
				lt->capopen = lt->capopen ? 2 * lt->capopen : 16;
				lt->open = sp_xrealloc(lt->open, lt->capopen * sizeof *lt->open);
			}
			lt->open[lt->nopen++] = (struct lopen){ t->call, t->time, tid, t->frame, hb, bv };
		} else {
			/* its entry, innermost first (as lib/latency pairs) */
			size_t i = lt->nopen;
			while (i > 0 && (lt->open[i - 1].tid != tid ||
					 (t->call ? lt->open[i - 1].call != t->call : lt->open[i - 1].frame != t->frame)))
				i--;
			if (i) {
				struct lopen o = lt->open[i - 1];
				memmove(lt->open + i - 1, lt->open + i, (lt->nopen - i) * sizeof *lt->open);
				lt->nopen--;
				if (!hb) {
					hb = o.has_by;
					bv = o.by;
				}
				struct lcall c = { o.start, t->time > o.start ? t->time : o.start, tid,
						   (t->flags & SP_TRACE_ABANDONED) != 0, (uint16_t)hb, bv };
				lt->total++;
				push_call(lt, &c);
			}
		}
	}
	pthread_mutex_unlock(&lt->mu);
	return 0;
}

int sp_livetrace_read(struct sp_livetrace *lt, const char *path, struct sp_err *err)
{
	struct lt_sink s;
	memset(&s, 0, sizeof s);
	s.sink.trace = lt_trace;
	s.lt = lt;
	struct sp_profile *p = sp_profile_new();
	struct sp_read_opts ro;
	memset(&ro, 0, sizeof ro);
	int rc = sp_read_file(path, "stream", p, &s.sink, &ro, NULL, err);
	pthread_mutex_lock(&lt->mu);
	if (rc < 0 && lt->stop && err->code == -1)
		rc = 0;
	lt->ended = rc < 0 ? 2 : 1;
	pthread_mutex_unlock(&lt->mu);
	sp_profile_free(p);
	return rc;
}

void sp_livetrace_stop(struct sp_livetrace *lt)
{
	pthread_mutex_lock(&lt->mu);
	lt->stop = 1;
	pthread_mutex_unlock(&lt->mu);
}

uint64_t sp_livetrace_total(struct sp_livetrace *lt)
{
	pthread_mutex_lock(&lt->mu);
	uint64_t n = lt->total;
	pthread_mutex_unlock(&lt->mu);
	return n;
}

int sp_livetrace_ended(struct sp_livetrace *lt)
{
	pthread_mutex_lock(&lt->mu);
	int e = lt->ended;
	pthread_mutex_unlock(&lt->mu);
	return e;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int cmp_by(const void *a, const void *b)
{
	const struct byent *x = a, *y = b;
	if (x->v != y->v)
		return x->v < y->v ? -1 : 1;
	return x->d < y->d ? -1 : x->d > y->d;
}

static int cmp_by_calls(const void *a, const void *b)
{
	const struct sp_livetrace_by *x = a, *y = b;
	if (x->calls != y->calls)
		return x->calls > y->calls ? -1 : 1;
	return x->value < y->value ? -1 : x->value > y->value;
}

/* Latency by value: per distinct value, its calls and percentiles; the
 * values of the most calls kept. */
static void by_groups(struct sp_livetrace *lt, size_t nc, struct sp_livetrace_stats *st)
{
	size_t nb = 0;
	for (size_t i = 0; i < nc; i++) {
		const struct lcall *c = &lt->calls[i];
		if (c->abandoned)
			continue;
		if (!c->has_by) {
			st->by_missing++;
			continue;
		}
		lt->bys[nb++] = (struct byent){ c->by, c->end - c->start };
	}
	qsort(lt->bys, nb, sizeof *lt->bys, cmp_by);
	struct sp_livetrace_by all[9];
	int nall = 0;
	for (size_t i = 0; i < nb;) {
		size_t j = i;
		while (j < nb && lt->bys[j].v == lt->bys[i].v)
			j++;
		size_t n = j - i;
		struct sp_livetrace_by g = { lt->bys[i].v, n, lt->bys[i + n * 50 / 100].d, lt->bys[i + n * 95 / 100].d,
					     lt->bys[j - 1].d };
		st->by_values++;
		/* keep the 8 of the most calls: insert, sort, drop the 9th */
		all[nall++] = g;
		qsort(all, (size_t)nall, sizeof *all, cmp_by_calls);
		if (nall > 8)
			nall = 8;
		i = j;
	}
	memcpy(st->by, all, (size_t)nall * sizeof *all);
	st->nby = nall;
}

static int cmp_call(const void *a, const void *b)
{
	const struct lcall *x = a, *y = b;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

void sp_livetrace_compute(struct sp_livetrace *lt, const struct sp_live_point *pts, size_t npts,
			  struct sp_livetrace_stats *st)
{
	memset(st, 0, sizeof *st);
	st->lo = 64;
	st->hi = -1;
	pthread_mutex_lock(&lt->mu);
	if (lt->len > lt->capd) {
		lt->capd = lt->len;
		lt->durs = sp_xrealloc(lt->durs, lt->capd * sizeof *lt->durs);
		lt->calls = sp_xrealloc(lt->calls, lt->capd * sizeof *lt->calls);
		lt->bys = sp_xrealloc(lt->bys, lt->capd * sizeof *lt->bys);
	}
	size_t n = 0, nc = 0;
	uint64_t from = lt->tmax > lt->window_ns ? lt->tmax - lt->window_ns : 0;
	for (size_t i = 0; i < lt->len; i++) {
		const struct lcall *c = &lt->ring[(lt->head + i) % lt->cap];
		if (c->end < from)
			continue;
		lt->calls[nc++] = *c;
		if (c->abandoned)
			st->abandoned++;
		else
			lt->durs[n++] = c->end - c->start;
	}
	st->total_calls = lt->total;
	st->events = lt->events;
	st->tend = lt->tmax;
	uint64_t first = lt->tfirst > from ? lt->tfirst : from;
	st->span_s = lt->have_first && lt->tmax > first ? (double)(lt->tmax - first) / 1e9 : 0;
	pthread_mutex_unlock(&lt->mu);
	st->calls = nc;
	st->rate = st->span_s > 0 ? (double)nc / st->span_s : 0;
	if (!n)
		return;
	qsort(lt->durs, n, sizeof *lt->durs, cmp_u64);
	/* the percentile rule of lib/latency */
	st->p50 = lt->durs[n * 50 / 100];
	st->p95 = lt->durs[n * 95 / 100];
	st->p99 = lt->durs[n * 99 / 100];
	st->max = lt->durs[n - 1];
	st->threshold = st->p95;
	for (size_t i = 0; i < n; i++) {
		uint64_t us = lt->durs[i] / 1000;
		int k = 0;
		while (k < 62 && us >> (k + 1))
			k++;
		st->hist[k]++;
		st->lo = k < st->lo ? k : st->lo;
		st->hi = k > st->hi ? k : st->hi;
	}
	if (lt->by)
		by_groups(lt, nc, st);
	/* samples inside slow calls, other calls, or none: calls by thread
	 * and start (calls of one thread nest or follow each other; the
	 * innermost containing call decides) */
	qsort(lt->calls, nc, sizeof *lt->calls, cmp_call);
	for (size_t i = 0; i < nc; i++)
		if (!lt->calls[i].abandoned && lt->calls[i].end - lt->calls[i].start >= st->threshold)
			st->slow_calls++;
	for (size_t k = 0; k < npts; k++) {
		const struct sp_live_point *pt = &pts[k];
		/* the last call of the thread starting at or before the point */
		size_t lo = 0, hi = nc;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			const struct lcall *c = &lt->calls[mid];
			if (c->tid < pt->tid || (c->tid == pt->tid && c->start <= pt->time))
				lo = mid + 1;
			else
				hi = mid;
		}
		int where = 0;
		for (size_t j = lo; j > 0; j--) {
			const struct lcall *c = &lt->calls[j - 1];
			if (c->tid != pt->tid)
				break;
			if (c->end >= pt->time) {
				where = !c->abandoned && c->end - c->start >= st->threshold ? 2 : 1;
				break;
			}
			if (lo - j > 64)
				break; /* far back: not nested around this point */
		}
		if (where == 2)
			st->samples_slow++;
		else if (where == 1)
			st->samples_fast++;
		else
			st->samples_outside++;
	}
}

int64_t sp_livetrace_emit(struct sp_livetrace *lt, struct sp_profile *p, struct sp_sink *sink, uint32_t frame,
			  int64_t pid, struct sp_err *err)
{
	/* copied under the lock, pushed outside it (the reader goes on) */
	pthread_mutex_lock(&lt->mu);
	size_t nc = 0;
	struct lcall *calls = lt->len ? sp_xmalloc(lt->len * sizeof *calls) : NULL;
	uint64_t from = lt->tmax > lt->window_ns ? lt->tmax - lt->window_ns : 0;
	for (size_t i = 0; i < lt->len; i++) {
		const struct lcall *c = &lt->ring[(lt->head + i) % lt->cap];
		if (c->end >= from)
			calls[nc++] = *c;
	}
	pthread_mutex_unlock(&lt->mu);
	int rc = 0;
	for (size_t i = 0; i < nc && !rc && sink->trace; i++) {
		const struct lcall *c = &calls[i];
		struct sp_trace t;
		memset(&t, 0, sizeof t);
		t.frame = frame;
		t.thread = sp_thread_intern(p, pid, c->tid, 0);
		t.call = i + 1;
		t.time = c->start;
		t.kind = SP_TRACE_ENTRY;
		rc = sink->trace(sink, p, &t, err);
		if (rc)
			break;
		t.kind = SP_TRACE_EXIT;
		t.time = c->end;
		t.flags = c->abandoned ? SP_TRACE_ABANDONED : 0;
		rc = sink->trace(sink, p, &t, err);
	}
	free(calls);
	return rc ? -1 : (int64_t)nc;
}

void sp_livetrace_dur(struct sp_buf *b, uint64_t ns)
{
	if (ns < 1000000)
		sp_buf_addf(b, "%.1f us", (double)ns / 1e3);
	else if (ns < 1000000000)
		sp_buf_addf(b, "%.2f ms", (double)ns / 1e6);
	else
		sp_buf_addf(b, "%.2f s", (double)ns / 1e9);
}
