/* live.c — plive's model (see live.h). */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "filter.h"
#include "live.h"
#include "profile.h"

struct func {
	const char *name, *file; /* in the arena */
	const char *module;      /* the first frame's (a library's path), "" unknown */
	size_t name_len, file_len;
	uint32_t line;
};

struct lstack {
	uint32_t parent; /* lstack id, 0 = root */
	uint32_t func;
};

struct lsample {
	uint64_t time;
	double w;
	uint32_t stack, thread;
	uint32_t tid; /* the OS thread id (plive's traced calls) */
};

struct sp_live {
	pthread_mutex_t mu;
	uint64_t window_ns, half_life_ns;
	struct sp_arena arena;
	/* functions: id 0 unused */
	struct func *funcs;
	size_t nfuncs, cap_funcs;
	struct sp_u64map func_map; /* hash of (name, file, line) -> func id (chained by probing key+1) */
	/* stacks: id 0 = empty */
	struct lstack *stacks;
	double *all_w, *ewma_s; /* per stack: all-time weight, EWMA scaled to ewma_base */
	size_t nstacks, cap_stacks;
	uint64_t ewma_base;
	/* the reader's ids -> ours (reader thread only) */
	uint32_t *node_map, *frame_map;
	size_t cap_node_map, cap_frame_map;
	/* the window: a ring of samples */
	struct lsample *ring;
	size_t ring_cap, ring_head, ring_len;
	/* counters */
	uint64_t total_samples, lost;
	uint64_t tmin, tmax;
	uint32_t max_thread;
	int have_time, time_unit, weight_col, cols_known;
	const char *weight; /* --weight, NULL = the default column */
	int ended, stop;
	int unpaced; /* sp_live_unpace: the rest of a replay at once */
	uint64_t wall0;
	/* scratch of sp_live_compute (view thread only) */
	double *win_w, *own, *tot, *cal, *cee;
	uint64_t *stamp, *stamp2, *tstamp;
	size_t cap_scratch, cap_tstamp;
	uint64_t gen;
};

void sp_live_set_weight(struct sp_live *l, const char *name) { l->weight = name; }

struct sp_live *sp_live_new(uint64_t window_ns, uint64_t half_life_ns)
{
	struct sp_live *l = sp_xcalloc(1, sizeof *l);
	pthread_mutex_init(&l->mu, NULL);
	l->window_ns = window_ns ? window_ns : 10000000000ull;
	l->half_life_ns = half_life_ns ? half_life_ns : 30000000000ull;
	sp_arena_init(&l->arena);
	sp_u64map_init(&l->func_map);
	l->nfuncs = 1;
	l->cap_funcs = 256;
	l->funcs = sp_xcalloc(l->cap_funcs, sizeof *l->funcs);
	l->nstacks = 1;
	l->cap_stacks = 256;
	l->stacks = sp_xcalloc(l->cap_stacks, sizeof *l->stacks);
	l->all_w = sp_xcalloc(l->cap_stacks, sizeof *l->all_w);
	l->ewma_s = sp_xcalloc(l->cap_stacks, sizeof *l->ewma_s);
	l->tmin = UINT64_MAX;
	l->wall0 = sp_mono_ns();
	return l;
}

void sp_live_free(struct sp_live *l)
{
	if (!l)
		return;
	pthread_mutex_destroy(&l->mu);
	sp_arena_release(&l->arena);
	sp_u64map_release(&l->func_map);
	free(l->funcs);
	free(l->stacks);
	free(l->all_w);
	free(l->ewma_s);
	free(l->node_map);
	free(l->frame_map);
	free(l->ring);
	free(l->win_w);
	free(l->own);
	free(l->tot);
	free(l->cal);
	free(l->cee);
	free(l->stamp);
	free(l->stamp2);
	free(l->tstamp);
	free(l);
}

void sp_live_table_release(struct sp_live_table *t)
{
	free(t->rows);
	free(t->callers);
	free(t->callees);
	memset(t, 0, sizeof *t);
}

/* ---- the reader's side ---- */

static void grow_u32(uint32_t **a, size_t *cap, size_t need)
{
	if (need < *cap)
		return;
	size_t n = *cap ? *cap : 256;
	while (n <= need)
		n *= 2;
	*a = sp_xrealloc(*a, n * sizeof **a);
	memset(*a + *cap, 0, (n - *cap) * sizeof **a);
	*cap = n;
}

/* Our function for the reader's frame (under the lock). */
static uint32_t map_frame(struct sp_live *l, struct sp_profile *p, uint32_t frame)
{
	grow_u32(&l->frame_map, &l->cap_frame_map, frame);
	if (l->frame_map[frame])
		return l->frame_map[frame];
	const struct sp_frame *f = sp_frame_get(p, frame);
	const char *name = sp_str(p, f->name), *file = sp_str(p, f->file);
	size_t nl = sp_str_len(p, f->name), fl = sp_str_len(p, f->file);
	uint32_t line = f->line;
	uint64_t key = sp_hash_seed(name, nl, sp_hash_seed(file, fl, line)) & ~1ull;
	uint32_t id = 0;
	for (;; key = (key + 2) & ~1ull) {
		int found;
		uint32_t *slot = sp_u64map_slot(&l->func_map, key, &found);
		if (!found) {
			if (l->nfuncs == l->cap_funcs) {
				l->cap_funcs *= 2;
				l->funcs = sp_xrealloc(l->funcs, l->cap_funcs * sizeof *l->funcs);
			}
			id = (uint32_t)l->nfuncs++;
			struct func *fn = &l->funcs[id];
			fn->name = sp_arena_strndup(&l->arena, name, nl);
			fn->file = sp_arena_strndup(&l->arena, file, fl);
			fn->module = sp_arena_strndup(&l->arena, sp_str(p, f->module), sp_str_len(p, f->module));
			fn->name_len = nl;
			fn->file_len = fl;
			fn->line = line;
			*slot = id;
			break;
		}
		struct func *fn = &l->funcs[*slot];
		if (fn->line == line && fn->name_len == nl && fn->file_len == fl && !memcmp(fn->name, name, nl) &&
		    !memcmp(fn->file, file, fl)) {
			id = *slot;
			break;
		}
	}
	l->frame_map[frame] = id;
	return id;
}

static uint32_t new_stack(struct sp_live *l, uint32_t parent, uint32_t func)
{
	if (l->nstacks == l->cap_stacks) {
		size_t n = l->cap_stacks * 2;
		l->stacks = sp_xrealloc(l->stacks, n * sizeof *l->stacks);
		l->all_w = sp_xrealloc(l->all_w, n * sizeof *l->all_w);
		l->ewma_s = sp_xrealloc(l->ewma_s, n * sizeof *l->ewma_s);
		memset(l->all_w + l->cap_stacks, 0, (n - l->cap_stacks) * sizeof *l->all_w);
		memset(l->ewma_s + l->cap_stacks, 0, (n - l->cap_stacks) * sizeof *l->ewma_s);
		l->cap_stacks = n;
	}
	uint32_t id = (uint32_t)l->nstacks++;
	l->stacks[id].parent = parent;
	l->stacks[id].func = func;
	return id;
}

/* Our stack for the reader's node (under the lock): new nodes are mapped
 * once, root first from their first mapped ancestor. */
static uint32_t map_node(struct sp_live *l, struct sp_profile *p, uint32_t node)
{
	if (!node)
		return 0;
	grow_u32(&l->node_map, &l->cap_node_map, node);
	if (l->node_map[node])
		return l->node_map[node];
	/* the unmapped chain, leaf first, kept in the map's own slots: walk up
	 * to the first mapped ancestor, then back down by recursion depth */
	uint32_t n = node, depth = 0;
	while (n && !l->node_map[n]) {
		depth++;
		n = sp_node_get(p, n)->parent;
	}
	uint32_t *chain = sp_xmalloc(depth * sizeof *chain);
	uint32_t i = depth;
	for (n = node; n && !l->node_map[n]; n = sp_node_get(p, n)->parent)
		chain[--i] = n;
	uint32_t parent = n ? l->node_map[n] : 0;
	for (i = 0; i < depth; i++) {
		uint32_t func = map_frame(l, p, sp_node_get(p, chain[i])->frame);
		parent = new_stack(l, parent, func);
		l->node_map[chain[i]] = parent;
	}
	free(chain);
	return parent;
}

static void ring_push(struct sp_live *l, const struct lsample *s)
{
	if (l->ring_len == l->ring_cap) {
		size_t n = l->ring_cap ? l->ring_cap * 2 : 4096;
		struct lsample *r = sp_xmalloc(n * sizeof *r);
		for (size_t i = 0; i < l->ring_len; i++)
			r[i] = l->ring[(l->ring_head + i) % l->ring_cap];
		free(l->ring);
		l->ring = r;
		l->ring_cap = n;
		l->ring_head = 0;
	}
	l->ring[(l->ring_head + l->ring_len) % l->ring_cap] = *s;
	l->ring_len++;
	/* drop what fell out of the window */
	uint64_t from = l->tmax > l->window_ns ? l->tmax - l->window_ns : 0;
	while (l->ring_len && l->ring[l->ring_head].time < from) {
		l->ring_head = (l->ring_head + 1) % l->ring_cap;
		l->ring_len--;
	}
}

struct live_sink {
	struct sp_sink sink;
	struct sp_live *l;
	double speed;
	uint64_t t0, w0;
	int paced;
};

static int live_sample(struct sp_sink *sk, struct sp_profile *p, const struct sp_sample *smp, struct sp_err *err)
{
	struct live_sink *ls = (struct live_sink *)sk;
	struct sp_live *l = ls->l;
	if (ls->speed > 0 && smp->time != SP_NO_TIME && !__atomic_load_n(&l->unpaced, __ATOMIC_RELAXED)) {
		/* a recording replayed: wait until its time comes */
		if (!ls->paced) {
			ls->paced = 1;
			ls->t0 = smp->time;
			ls->w0 = sp_mono_ns();
		} else if (smp->time > ls->t0) {
			uint64_t due = ls->w0 + (uint64_t)((double)(smp->time - ls->t0) / ls->speed);
			uint64_t now = sp_mono_ns();
			if (due > now + 1000000) {
				struct timespec ts = { (time_t)((due - now) / 1000000000ull),
						       (long)((due - now) % 1000000000ull) };
				nanosleep(&ts, NULL);
			}
		}
	}
	pthread_mutex_lock(&l->mu);
	if (l->stop) {
		pthread_mutex_unlock(&l->mu);
		sp_err_set(err, "stopped");
		err->code = -1;
		return -1;
	}
	if (!l->cols_known) {
		if ((l->weight_col = sp_value_column(p, l->weight, err)) < 0) {
			pthread_mutex_unlock(&l->mu);
			return -1;
		}
		l->cols_known = 1;
		l->time_unit = sp_unit_is_time(sp_value_unit(p, l->weight_col, smp->event));
	}
	struct lsample s;
	s.stack = map_node(l, p, smp->stack);
	s.thread = smp->thread;
	const struct sp_thread *th = sp_thread_get(p, smp->thread);
	s.tid = th && th->tid >= 0 ? (uint32_t)th->tid : smp->thread;
	s.w = smp->values[l->weight_col];
	if (!(s.w > 0))
		s.w = 0;
	if (smp->time != SP_NO_TIME) {
		s.time = smp->time;
		l->have_time = 1;
	} else {
		s.time = sp_mono_ns() - l->wall0;
	}
	if (s.time > l->tmax || !l->total_samples)
		l->tmax = s.time;
	if (s.time < l->tmin)
		l->tmin = s.time;
	if (s.thread > l->max_thread)
		l->max_thread = s.thread;
	l->total_samples++;
	l->all_w[s.stack] += s.w;
	/* EWMA: weights scaled by 2^((t - base)/H), renormalised now and then
	 * so the scale stays finite */
	double hl = (double)l->half_life_ns;
	if (!l->ewma_base)
		l->ewma_base = s.time ? s.time : 1;
	double e = ((double)s.time - (double)l->ewma_base) / hl;
	if (e > 30) {
		double k = exp2(-e);
		for (size_t i = 0; i < l->nstacks; i++)
			l->ewma_s[i] *= k;
		l->ewma_base = s.time;
		e = 0;
	}
	l->ewma_s[s.stack] += s.w * exp2(e);
	ring_push(l, &s);
	pthread_mutex_unlock(&l->mu);
	return 0;
}

static int live_meta(struct sp_sink *sk, struct sp_profile *p, struct sp_err *err)
{
	struct live_sink *ls = (struct live_sink *)sk;
	const char *lost = sp_meta_find(p, "lost");
	if (lost) {
		pthread_mutex_lock(&ls->l->mu);
		ls->l->lost = strtoull(lost, NULL, 10);
		pthread_mutex_unlock(&ls->l->mu);
	}
	return 0;
}

int sp_live_read(struct sp_live *l, const char *path, const char *format, struct sp_read_opts *ro, double speed,
		 struct sp_err *err)
{
	struct live_sink ls;
	memset(&ls, 0, sizeof ls);
	ls.sink.sample = live_sample;
	ls.sink.meta = live_meta;
	ls.l = l;
	ls.speed = speed;
	struct sp_profile *p = sp_profile_new();
	int rc = sp_read_file(path, format, p, &ls.sink, ro, NULL, err);
	pthread_mutex_lock(&l->mu);
	if (rc < 0 && l->stop && err->code == -1)
		rc = 0;
	l->ended = rc < 0 ? 2 : 1;
	pthread_mutex_unlock(&l->mu);
	sp_profile_free(p);
	return rc;
}

void sp_live_unpace(struct sp_live *l) { __atomic_store_n(&l->unpaced, 1, __ATOMIC_RELAXED); }

void sp_live_stop(struct sp_live *l)
{
	pthread_mutex_lock(&l->mu);
	l->stop = 1;
	pthread_mutex_unlock(&l->mu);
}

int sp_live_ended(struct sp_live *l)
{
	pthread_mutex_lock(&l->mu);
	int e = l->ended;
	pthread_mutex_unlock(&l->mu);
	return e;
}

void sp_live_func_module(struct sp_live *l, uint32_t func, struct sp_buf *out)
{
	pthread_mutex_lock(&l->mu);
	if (func && func < l->nfuncs && l->funcs[func].module)
		sp_buf_adds(out, l->funcs[func].module);
	pthread_mutex_unlock(&l->mu);
}

size_t sp_live_points(struct sp_live *l, struct sp_live_point **pts, size_t *cap)
{
	pthread_mutex_lock(&l->mu);
	if (l->ring_len > *cap) {
		*cap = l->ring_len;
		*pts = sp_xrealloc(*pts, *cap * sizeof **pts);
	}
	for (size_t i = 0; i < l->ring_len; i++) {
		const struct lsample *s = &l->ring[(l->ring_head + i) % l->ring_cap];
		(*pts)[i] = (struct sp_live_point){ s->time, s->tid };
	}
	size_t n = l->ring_len;
	pthread_mutex_unlock(&l->mu);
	return n;
}

static uint32_t emit_stack(struct sp_live *l, struct sp_profile *p, uint32_t *memo, uint32_t s)
{
	if (!s)
		return 0;
	if (memo[s])
		return memo[s];
	uint32_t parent = emit_stack(l, p, memo, l->stacks[s].parent);
	const struct func *f = &l->funcs[l->stacks[s].func];
	struct sp_frame fr;
	memset(&fr, 0, sizeof fr);
	fr.name = sp_str_intern(p, f->name, f->name_len);
	fr.file = f->file_len ? sp_str_intern(p, f->file, f->file_len) : 0;
	fr.module = f->module && f->module[0] ? sp_str_intern(p, f->module, strlen(f->module)) : 0;
	fr.line = f->line;
	memo[s] = sp_node_intern(p, parent, sp_frame_intern(p, &fr));
	return memo[s];
}

int64_t sp_live_emit(struct sp_live *l, struct sp_profile *p, struct sp_sink *sink, int64_t pid, struct sp_err *err)
{
	pthread_mutex_lock(&l->mu);
	uint32_t *memo = sp_xcalloc(l->nstacks, sizeof *memo);
	int rc = 0;
	size_t i;
	for (i = 0; i < l->ring_len && !rc && sink->sample; i++) {
		const struct lsample *ls = &l->ring[(l->ring_head + i) % l->ring_cap];
		struct sp_sample smp;
		memset(&smp, 0, sizeof smp);
		smp.stack = emit_stack(l, p, memo, ls->stack);
		smp.thread = sp_thread_intern(p, pid, ls->tid, 0);
		smp.time = ls->time;
		rc = sink->sample(sink, p, &smp, err);
	}
	pthread_mutex_unlock(&l->mu);
	free(memo);
	return rc ? -1 : (int64_t)i;
}

uint64_t sp_live_samples(struct sp_live *l)
{
	pthread_mutex_lock(&l->mu);
	uint64_t n = l->total_samples;
	pthread_mutex_unlock(&l->mu);
	return n;
}

/* ---- the view's side ---- */

static void scratch(struct sp_live *l)
{
	size_t need = l->nfuncs > l->nstacks ? l->nfuncs : l->nstacks;
	if (need > l->cap_scratch) {
		size_t n = need * 2;
		l->win_w = sp_xrealloc(l->win_w, n * sizeof *l->win_w);
		l->own = sp_xrealloc(l->own, n * sizeof *l->own);
		l->tot = sp_xrealloc(l->tot, n * sizeof *l->tot);
		l->cal = sp_xrealloc(l->cal, n * sizeof *l->cal);
		l->cee = sp_xrealloc(l->cee, n * sizeof *l->cee);
		l->stamp = sp_xrealloc(l->stamp, n * sizeof *l->stamp);
		l->stamp2 = sp_xrealloc(l->stamp2, n * sizeof *l->stamp2);
		memset(l->stamp + l->cap_scratch, 0, (n - l->cap_scratch) * sizeof *l->stamp);
		memset(l->stamp2 + l->cap_scratch, 0, (n - l->cap_scratch) * sizeof *l->stamp2);
		l->cap_scratch = n;
	}
	if ((size_t)l->max_thread + 1 > l->cap_tstamp) {
		size_t n = ((size_t)l->max_thread + 1) * 2;
		l->tstamp = sp_xrealloc(l->tstamp, n * sizeof *l->tstamp);
		memset(l->tstamp + l->cap_tstamp, 0, (n - l->cap_tstamp) * sizeof *l->tstamp);
		l->cap_tstamp = n;
	}
}

static void push_row(struct sp_live_row **a, size_t *n, size_t *cap, uint32_t func, double own, double total)
{
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 64;
		*a = sp_xrealloc(*a, *cap * sizeof **a);
	}
	(*a)[*n].func = func;
	(*a)[*n].own = own;
	(*a)[*n].total = total;
	(*n)++;
}

static struct sp_live *sort_live; /* qsort has no context argument; the view thread only */
static int sort_key;

static int cmp_name(const struct sp_live_row *a, const struct sp_live_row *b)
{
	const struct func *fa = &sort_live->funcs[a->func], *fb = &sort_live->funcs[b->func];
	size_t n = fa->name_len < fb->name_len ? fa->name_len : fb->name_len;
	int c = memcmp(fa->name, fb->name, n);
	if (c)
		return c;
	if (fa->name_len != fb->name_len)
		return fa->name_len < fb->name_len ? -1 : 1;
	n = fa->file_len < fb->file_len ? fa->file_len : fb->file_len;
	if ((c = memcmp(fa->file, fb->file, n)))
		return c;
	if (fa->file_len != fb->file_len)
		return fa->file_len < fb->file_len ? -1 : 1;
	return fa->line < fb->line ? -1 : fa->line > fb->line;
}

static int cmp_rows(const void *pa, const void *pb)
{
	const struct sp_live_row *a = pa, *b = pb;
	double x = sort_key == SP_LIVE_SORT_TOTAL ? a->total : a->own;
	double y = sort_key == SP_LIVE_SORT_TOTAL ? b->total : b->own;
	if (sort_key != SP_LIVE_SORT_NAME) {
		if (x != y)
			return x > y ? -1 : 1;
		double x2 = sort_key == SP_LIVE_SORT_TOTAL ? a->own : a->total;
		double y2 = sort_key == SP_LIVE_SORT_TOTAL ? b->own : b->total;
		if (x2 != y2)
			return x2 > y2 ? -1 : 1;
	}
	return cmp_name(a, b);
}

void sp_live_func_name(struct sp_live *l, uint32_t func, struct sp_buf *out)
{
	const struct func *f = &l->funcs[func];
	sp_buf_add(out, f->name, f->name_len);
	if (f->file_len) {
		sp_buf_adds(out, " (");
		sp_buf_add(out, f->file, f->file_len);
		if (f->line)
			sp_buf_addf(out, ":%u", f->line);
		sp_buf_addc(out, ')');
	}
}

void sp_live_compute(struct sp_live *l, const struct sp_live_query *q, struct sp_live_table *t)
{
	pthread_mutex_lock(&l->mu);
	scratch(l);
	t->q = *q;
	t->nrows = t->ncallers = t->ncallees = 0;
	t->sum = 0;
	t->samples = 0;
	t->threads = 0;
	t->lost = l->lost;
	t->total_samples = l->total_samples;
	t->time_unit = l->time_unit;
	t->window_ns = l->window_ns;
	t->half_life_ns = l->half_life_ns;
	t->ended = l->ended;
	t->stream_s = l->total_samples ? (double)(l->tmax - l->tmin) / 1e9 : 0;
	memset(&t->self, 0, sizeof t->self);
	/* the weight of each stack in the view */
	double *w = l->win_w;
	uint64_t g = ++l->gen;
	if (q->mode == SP_LIVE_WINDOW) {
		memset(w, 0, l->nstacks * sizeof *w);
		uint64_t from = l->tmax > l->window_ns ? l->tmax - l->window_ns : 0;
		for (size_t i = 0; i < l->ring_len; i++) {
			const struct lsample *s = &l->ring[(l->ring_head + i) % l->ring_cap];
			if (s->time < from)
				continue;
			w[s->stack] += s->w;
			t->samples++;
			if (l->tstamp[s->thread] != g) {
				l->tstamp[s->thread] = g;
				t->threads += s->thread != 0;
			}
		}
		uint64_t span = l->tmax - (l->tmin > from ? l->tmin : from);
		t->span_s = (double)span / 1e9;
	} else if (q->mode == SP_LIVE_ALL) {
		memcpy(w, l->all_w, l->nstacks * sizeof *w);
		t->samples = l->total_samples;
		t->threads = l->max_thread;
		t->span_s = t->stream_s;
	} else {
		double k = exp2(-((double)l->tmax - (double)l->ewma_base) / (double)l->half_life_ns);
		for (size_t i = 0; i < l->nstacks; i++)
			w[i] = l->ewma_s[i] * k;
		t->samples = l->total_samples;
		t->threads = l->max_thread;
		t->span_s = t->stream_s;
	}
	t->rate = q->mode == SP_LIVE_EWMA || t->span_s <= 0 ? 0 : (double)t->samples / t->span_s;
	if (q->mode == SP_LIVE_EWMA && t->stream_s > 0)
		t->rate = (double)l->total_samples / t->stream_s;
	/* own and total per function; callers and callees of the detail one */
	memset(l->own, 0, l->nfuncs * sizeof *l->own);
	memset(l->tot, 0, l->nfuncs * sizeof *l->tot);
	if (q->detail) {
		memset(l->cal, 0, l->nfuncs * sizeof *l->cal);
		memset(l->cee, 0, l->nfuncs * sizeof *l->cee);
	}
	for (size_t s = 1; s < l->nstacks; s++) {
		double ws = w[s];
		if (!(ws > 0))
			continue;
		t->sum += ws;
		uint64_t sg = ++l->gen;
		l->own[l->stacks[s].func] += ws;
		uint32_t child = 0;
		for (uint32_t n = (uint32_t)s; n; n = l->stacks[n].parent) {
			uint32_t f = l->stacks[n].func;
			if (l->stamp[f] != sg) {
				l->stamp[f] = sg;
				l->tot[f] += ws;
			}
			if (q->detail && f == q->detail) {
				uint32_t par = l->stacks[n].parent;
				if (par) {
					uint32_t cf = l->stacks[par].func;
					if (l->stamp2[cf] != sg) {
						l->stamp2[cf] = sg;
						l->cal[cf] += ws;
					}
				}
				/* callees: counted once per sample, marked with the
				 * odd generation so callers' marks do not collide */
				if (child && l->stamp2[child] != sg + (1ull << 63)) {
					l->stamp2[child] = sg + (1ull << 63);
					l->cee[child] += ws;
				}
			}
			child = f;
		}
	}
	for (size_t f = 1; f < l->nfuncs; f++) {
		if (!(l->tot[f] > 0))
			continue;
		if (q->filter) {
			struct sp_buf b = SP_BUF_INIT;
			sp_live_func_name(l, (uint32_t)f, &b);
			int m = regexec(q->filter, sp_buf_cstr(&b), 0, NULL, 0) == 0;
			sp_buf_release(&b);
			if (!m)
				continue;
		}
		push_row(&t->rows, &t->nrows, &t->cap_rows, (uint32_t)f, l->own[f], l->tot[f]);
	}
	if (q->detail && q->detail < l->nfuncs) {
		t->self.func = q->detail;
		t->self.own = l->own[q->detail];
		t->self.total = l->tot[q->detail];
		for (size_t f = 1; f < l->nfuncs; f++) {
			if (l->cal[f] > 0)
				push_row(&t->callers, &t->ncallers, &t->cap_callers, (uint32_t)f, l->own[f], l->cal[f]);
			if (l->cee[f] > 0)
				push_row(&t->callees, &t->ncallees, &t->cap_callees, (uint32_t)f, l->own[f], l->cee[f]);
		}
	}
	sort_live = l;
	sort_key = q->sort == SP_LIVE_SORT_NAME ? SP_LIVE_SORT_NAME : q->sort;
	sp_sort(t->rows, t->nrows, sizeof *t->rows, cmp_rows);
	/* callers and callees: heaviest first (their total is the weight
	 * of the calls through the detail function) */
	sort_key = q->sort == SP_LIVE_SORT_NAME ? SP_LIVE_SORT_NAME : SP_LIVE_SORT_TOTAL;
	sp_sort(t->callers, t->ncallers, sizeof *t->callers, cmp_rows);
	sp_sort(t->callees, t->ncallees, sizeof *t->callees, cmp_rows);
	pthread_mutex_unlock(&l->mu);
}

/* ---- drawing ---- */

static void add_weight(struct sp_buf *b, double v, int time_unit)
{
	if (time_unit)
		sp_buf_addf(b, "%9.2fs", v / 1e9);
	else
		sp_buf_addf(b, "%10.0f", v);
}

static void add_pct(struct sp_buf *b, double v, double sum)
{
	sp_buf_addf(b, "%6.1f%%", sum > 0 ? 100 * v / sum : 0.0);
}

/* Ends a line at the screen width (bytes; names are mostly ASCII). */
static void end_line(struct sp_buf *b, size_t start, int width)
{
	if (width > 0 && b->len - start > (size_t)width)
		b->len = start + (size_t)width;
	sp_buf_addc(b, '\n');
}

static void row_line(struct sp_live *l, const struct sp_live_table *t, const struct sp_live_row *r, int width,
		     int reverse, int ansi, struct sp_buf *out)
{
	if (reverse && ansi)
		sp_buf_adds(out, "\033[7m");
	size_t start = out->len;
	add_pct(out, r->own, t->sum);
	sp_buf_addc(out, ' ');
	add_pct(out, r->total, t->sum);
	sp_buf_addc(out, ' ');
	add_weight(out, r->own, t->time_unit);
	sp_buf_addc(out, ' ');
	add_weight(out, r->total, t->time_unit);
	sp_buf_adds(out, "  ");
	sp_live_func_name(l, r->func, out);
	if (reverse && ansi) {
		if (width > 0 && out->len - start > (size_t)width)
			out->len = start + (size_t)width;
		while (width > 0 && out->len - start < (size_t)width)
			sp_buf_addc(out, ' ');
		sp_buf_adds(out, "\033[m");
		sp_buf_addc(out, '\n');
	} else {
		end_line(out, start, width);
	}
}

static void view_name(const struct sp_live_table *t, struct sp_buf *b)
{
	if (t->q.mode == SP_LIVE_WINDOW)
		sp_buf_addf(b, "last %g s", (double)t->window_ns / 1e9);
	else if (t->q.mode == SP_LIVE_EWMA)
		sp_buf_addf(b, "ewma, half-life %g s", (double)t->half_life_ns / 1e9);
	else
		sp_buf_adds(b, "all time");
}

int sp_live_render(struct sp_live *l, const struct sp_live_table *t, const struct sp_live_look *look,
		   struct sp_buf *out)
{
	pthread_mutex_lock(&l->mu);
	int lines = 0, h = look->height, fit = 0;
	size_t start = out->len;
	/* header: what is shown, then the rates */
	if (look->title)
		sp_buf_addf(out, "%s  ", look->title);
	sp_buf_adds(out, "[");
	view_name(t, out);
	sp_buf_adds(out, "]");
	/* the stream time the view covers, from the first sample read */
	if (t->total_samples) {
		double from = 0;
		if (t->q.mode == SP_LIVE_WINDOW && t->stream_s > (double)t->window_ns / 1e9)
			from = t->stream_s - (double)t->window_ns / 1e9;
		sp_buf_addf(out, " t=%.1f\u2013%.1f s", from, t->stream_s);
	}
	if (look->paused)
		sp_buf_adds(out, " [paused]");
	if (t->ended == 1)
		sp_buf_adds(out, " [input ended]");
	else if (t->ended == 2)
		sp_buf_adds(out, " [input failed]");
	end_line(out, start, look->width);
	lines++;
	start = out->len;
	sp_buf_addf(out, "Samples: %llu (%.0f/s)  Threads: %u  Lost: %llu  Stream: %.1f s  Read: %llu",
		    (unsigned long long)t->samples, t->rate, t->threads, (unsigned long long)t->lost, t->stream_s,
		    (unsigned long long)t->total_samples);
	if (look->filter_text && *look->filter_text)
		sp_buf_addf(out, "  Filter: /%s/", look->filter_text);
	end_line(out, start, look->width);
	lines++;
	if (look->status) {
		start = out->len;
		sp_buf_adds(out, look->status);
		end_line(out, start, look->width);
		lines++;
	}
	sp_buf_addc(out, '\n');
	lines++;
	static const char heading[] = "   %Own  %Total    OwnTime  TotalTime  Function (filename:line)";
	static const char heading_n[] = "   %Own  %Total        Own      Total  Function (filename:line)";
	const char *hd = t->time_unit ? heading : heading_n;
	if (t->q.detail) {
		/* callers, the function, callees */
		start = out->len;
		sp_buf_adds(out, "Callers of ");
		sp_live_func_name(l, t->self.func, out);
		sp_buf_adds(out, " (%Total: of the calls from each)");
		end_line(out, start, look->width);
		lines++;
		start = out->len;
		sp_buf_adds(out, hd);
		end_line(out, start, look->width);
		lines++;
		int room = h > 0 ? (h - lines - 4) / 2 : -1;
		if (room < 1 && h > 0)
			room = 1;
		for (size_t i = 0; i < t->ncallers && (room < 0 || (int)i < room); i++, lines++)
			row_line(l, t, &t->callers[i], look->width, 0, look->ansi, out);
		if (!t->ncallers) {
			sp_buf_adds(out, "  (none: a root)\n");
			lines++;
		}
		row_line(l, t, &t->self, look->width, 1, look->ansi, out);
		lines++;
		start = out->len;
		sp_buf_adds(out, "Callees");
		end_line(out, start, look->width);
		lines++;
		for (size_t i = 0; i < t->ncallees && (h <= 0 || lines < h); i++, lines++)
			row_line(l, t, &t->callees[i], look->width, 0, look->ansi, out);
		if (!t->ncallees && (h <= 0 || lines < h)) {
			sp_buf_adds(out, "  (none: a leaf)\n");
			lines++;
		}
		pthread_mutex_unlock(&l->mu);
		return 0;
	}
	start = out->len;
	sp_buf_adds(out, hd);
	end_line(out, start, look->width);
	lines++;
	for (size_t i = (size_t)(look->top > 0 ? look->top : 0); i < t->nrows && (h <= 0 || lines < h); i++) {
		row_line(l, t, &t->rows[i], look->width, (int)i == look->sel, look->ansi, out);
		lines++;
		fit++;
	}
	if (!t->nrows) {
		sp_buf_adds(out, t->total_samples ? "  (no function matches)\n" : "  (no samples yet)\n");
		lines++;
	}
	pthread_mutex_unlock(&l->mu);
	return fit;
}
