/* timeline.c — traced calls and samples as a Chrome trace (see timeline.h). */
#include "timeline.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "chrometrace.h"

enum { F_UNFINISHED = 1, F_BEGUN = 2, F_ABANDONED = 4, F_PICKED = 8 };

struct call {
	uint64_t start, end;      /* end SP_NO_TIME while open */
	uint32_t thread, frame, stack, flags;
	uint32_t voff, xoff;      /* entry and exit values in vals */
	uint8_t nv, nx;
};

struct point {
	uint64_t time;
	uint32_t thread, frame, stack, voff;
	uint8_t nv;
};

struct smp {
	uint64_t time, dur;       /* off-CPU: time is the interval's end */
	uint32_t thread, stack, event;
	uint8_t off;              /* an off-CPU or wall interval */
};

struct val {
	uint32_t name;
	int64_t v;
};

struct open {
	uint64_t id;              /* the trace's call id, 0 = unknown */
	uint32_t idx;             /* in calls */
};

struct othread {
	struct open *v;           /* open calls, innermost last */
	size_t n, cap;
};

struct sp_timeline {
	struct sp_sink sink;
	struct sp_profile *p;
	struct sp_timeline_opts o;
	struct call *calls;
	size_t ncalls, capcalls;
	struct point *points;
	size_t npoints, cappoints;
	struct smp *smps;
	size_t nsmps, capsmps;
	struct val *vals;
	size_t nvals, capvals;
	struct othread *th;
	size_t nth;
	uint64_t tmin, tmax;
	uint64_t untimed;         /* samples without a timestamp */
	int offcol;               /* off-cpu-ns / wall-ns column, -1 none, -2 not looked up */
	uint8_t *leaf_off;        /* frame -> 0 unknown, 1 no, 2 [blocked]/[preempted] */
	size_t nleaf;
	struct sp_timeline_stats st;
};

#define GROW(a, n, cap)                                                         \
	do {                                                                    \
		if ((n) == (cap)) {                                             \
			(cap) = (cap) ? 2 * (cap) : 1024;                        \
			(a) = sp_xrealloc((a), (cap) * sizeof *(a));           \
		}                                                               \
	} while (0)

static void seen_time(struct sp_timeline *t, uint64_t time)
{
	if (time < t->tmin)
		t->tmin = time;
	if (time > t->tmax || t->tmax == SP_NO_TIME)
		t->tmax = time;
}

static uint32_t add_vals(struct sp_timeline *t, const struct sp_trace *tr, uint8_t *n)
{
	uint32_t off = (uint32_t)t->nvals;
	for (uint32_t i = 0; i < tr->nvalues && i < SP_TRACE_VALUES; i++) {
		GROW(t->vals, t->nvals, t->capvals);
		t->vals[t->nvals++] = (struct val){ tr->vname[i], tr->value[i] };
	}
	*n = (uint8_t)(t->nvals - off);
	return off;
}

static struct call *new_call(struct sp_timeline *t)
{
	GROW(t->calls, t->ncalls, t->capcalls);
	struct call *c = &t->calls[t->ncalls++];
	memset(c, 0, sizeof *c);
	return c;
}

static uint32_t frame_name(struct sp_timeline *t, uint32_t frame)
{
	const struct sp_frame *f = sp_frame_get(t->p, frame);
	return f ? f->name : 0;
}

static int on_trace(struct sp_sink *s, struct sp_profile *p, const struct sp_trace *tr, struct sp_err *err)
{
	struct sp_timeline *t = (struct sp_timeline *)s;
	(void)p;
	(void)err;
	seen_time(t, tr->time);
	if (tr->flags & SP_TRACE_POINT) {
		GROW(t->points, t->npoints, t->cappoints);
		struct point *pt = &t->points[t->npoints++];
		pt->time = tr->time;
		pt->thread = tr->thread;
		pt->frame = tr->frame;
		pt->stack = tr->stack;
		pt->voff = add_vals(t, tr, &pt->nv);
		return 0;
	}
	t->th = sp_xgrow0(t->th, &t->nth, tr->thread, sizeof *t->th);
	struct othread *th = &t->th[tr->thread];
	if (tr->kind == SP_TRACE_ENTRY) {
		struct call *c = new_call(t);
		c->start = tr->time;
		c->end = SP_NO_TIME;
		c->thread = tr->thread;
		c->frame = tr->frame;
		c->stack = tr->stack;
		c->voff = add_vals(t, tr, &c->nv);
		c->xoff = c->voff + c->nv;
		GROW(th->v, th->n, th->cap);
		th->v[th->n++] = (struct open){ tr->call, (uint32_t)(t->ncalls - 1) };
		return 0;
	}
	/* An exit: its call, innermost first (by id when the stream has one). */
	uint32_t name = frame_name(t, tr->frame);
	size_t i = th->n;
	while (i > 0 && (tr->call ? th->v[i - 1].id != tr->call : frame_name(t, t->calls[th->v[i - 1].idx].frame) != name))
		i--;
	struct call *c;
	if (!i) {
		/* Begun before the recording: it starts at the input's first
		 * timestamp (set when writing). */
		c = new_call(t);
		c->thread = tr->thread;
		c->frame = tr->frame;
		c->stack = tr->stack;
		c->flags = F_BEGUN;
		c->voff = c->xoff = (uint32_t)t->nvals;
	} else {
		c = &t->calls[th->v[i - 1].idx];
		memmove(th->v + i - 1, th->v + i, (th->n - i) * sizeof *th->v);
		th->n--;
	}
	c->end = tr->time;
	if (tr->flags & SP_TRACE_ABANDONED)
		c->flags |= F_ABANDONED;
	c->xoff = add_vals(t, tr, &c->nx);
	return 0;
}

/* Is frame a synthetic "[blocked]"/"[preempted]" leaf of pcollect --off-cpu/--wall? */
static int leaf_is_off(struct sp_timeline *t, uint32_t frame)
{
	t->leaf_off = sp_xgrow0(t->leaf_off, &t->nleaf, frame, 1);
	if (!t->leaf_off[frame]) {
		const struct sp_frame *f = sp_frame_get(t->p, frame);
		const char *n = f ? sp_str(t->p, f->name) : "";
		t->leaf_off[frame] = f && f->kind == SP_KIND_SYNTHETIC &&
				     (!strcmp(n, "[blocked]") || !strcmp(n, "[preempted]")) ? 2 : 1;
	}
	return t->leaf_off[frame] == 2;
}

static int on_sample(struct sp_sink *s, struct sp_profile *p, const struct sp_sample *smp, struct sp_err *err)
{
	struct sp_timeline *t = (struct sp_timeline *)s;
	(void)err;
	if (smp->time == SP_NO_TIME) {
		t->untimed++;
		return 0;
	}
	if (t->offcol == -2) {
		t->offcol = sp_value_find(p, "off-cpu-ns");
		if (t->offcol < 0)
			t->offcol = sp_value_find(p, "wall-ns");
	}
	GROW(t->smps, t->nsmps, t->capsmps);
	struct smp *m = &t->smps[t->nsmps++];
	m->time = smp->time;
	m->dur = 0;
	m->thread = smp->thread;
	m->stack = smp->stack;
	m->event = smp->event;
	m->off = 0;
	if (t->offcol >= 0 && smp->stack) {
		const struct sp_node *nd = sp_node_get(p, smp->stack);
		double v = smp->values[t->offcol];
		if (leaf_is_off(t, nd->frame) && v > 0) {
			m->off = 1;
			m->dur = (uint64_t)v;
			t->st.offcpu++;
			seen_time(t, m->time > m->dur ? m->time - m->dur : 0);
		}
	}
	seen_time(t, smp->time);
	return 0;
}

struct sp_timeline *sp_timeline_new(struct sp_profile *p, const struct sp_timeline_opts *o)
{
	struct sp_timeline *t = sp_xcalloc(1, sizeof *t);
	t->p = p;
	t->o = *o;
	t->sink.trace = on_trace;
	t->sink.sample = on_sample;
	t->tmin = SP_NO_TIME;
	t->tmax = SP_NO_TIME;
	t->offcol = -2;
	return t;
}

void sp_timeline_free(struct sp_timeline *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nth; i++)
		free(t->th[i].v);
	free(t->th);
	free(t->calls);
	free(t->points);
	free(t->smps);
	free(t->vals);
	free(t->leaf_off);
	free(t);
}

struct sp_sink *sp_timeline_sink(struct sp_timeline *t) { return &t->sink; }
const struct sp_timeline_stats *sp_timeline_stats(const struct sp_timeline *t) { return &t->st; }

/* ---- selection ---- */

struct win {
	uint32_t thread;          /* 0 with --meanwhile: every thread */
	uint64_t s, e;
};

struct pick {
	struct win *w;
	size_t n;
	uint64_t from, to;
	int selecting, meanwhile;
};

static int keep(const struct pick *k, uint32_t thread, uint64_t s, uint64_t e)
{
	if (e < k->from || s > k->to)
		return 0;
	if (!k->selecting)
		return 1;
	if (k->meanwhile)
		thread = 0;
	/* the first window of thread that ends at or after s */
	size_t lo = 0, hi = k->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (k->w[mid].thread < thread || (k->w[mid].thread == thread && k->w[mid].e < s))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < k->n && k->w[lo].thread == thread && k->w[lo].s <= e;
}

/* The selection's function: its name, or the name followed by '(' (C++
 * signatures) or " (" (Python frames), as calls.h matches. */
static int is_func(const struct sp_timeline *t, uint32_t frame)
{
	if (!t->o.func)
		return 1;
	const char *n = sp_str(t->p, frame_name((struct sp_timeline *)t, frame));
	size_t l = strlen(t->o.func);
	return !strncmp(n, t->o.func, l) && (!n[l] || n[l] == '(' || (n[l] == ' ' && n[l + 1] == '('));
}

struct cand {
	uint32_t name;
	uint32_t idx;
	uint64_t dur;
};

static int cmp_cand(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	if (x->name != y->name)
		return x->name < y->name ? -1 : 1;
	return x->dur < y->dur ? -1 : x->dur > y->dur;
}

static int cmp_win(const void *a, const void *b)
{
	const struct win *x = a, *y = b;
	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	return x->s < y->s ? -1 : x->s > y->s;
}

static void select_calls(struct sp_timeline *t, struct pick *k)
{
	struct cand *c = sp_xmalloc((t->ncalls + 1) * sizeof *c);
	size_t n = 0;
	for (size_t i = 0; i < t->ncalls; i++)
		if (is_func(t, t->calls[i].frame))
			c[n++] = (struct cand){ frame_name(t, t->calls[i].frame), (uint32_t)i,
						t->calls[i].end - t->calls[i].start };
	t->st.func_calls = n;
	sp_sort(c, n, sizeof *c, cmp_cand);
	k->w = sp_xmalloc((n + 1) * sizeof *k->w);
	for (size_t g = 0; g < n;) {
		size_t e = g;
		while (e < n && c[e].name == c[g].name)
			e++;
		/* c[g..e) is one function's calls, fastest first */
		uint64_t thr = 0;
		if (t->o.percentile > 0) {
			size_t q = (size_t)((double)(e - g) * t->o.percentile / 100.0);
			thr = c[g + (q < e - g ? q : e - g - 1)].dur;
		}
		if (t->o.slower_than > thr)
			thr = t->o.slower_than;
		size_t lo = e;
		while (lo > g && c[lo - 1].dur >= thr)
			lo--;
		if (t->o.slowest && e - lo > t->o.slowest)
			lo = e - t->o.slowest;
		for (size_t i = lo; i < e; i++) {
			struct call *cl = &t->calls[c[i].idx];
			cl->flags |= F_PICKED;
			uint64_t ctx = t->o.context;
			k->w[k->n++] = (struct win){ k->meanwhile ? 0 : cl->thread, cl->start > ctx ? cl->start - ctx : 0,
						     cl->end + ctx < cl->end ? UINT64_MAX : cl->end + ctx };
		}
		g = e;
	}
	free(c);
	t->st.picked = k->n;
	sp_sort(k->w, k->n, sizeof *k->w, cmp_win);
	size_t m = 0;
	for (size_t i = 0; i < k->n; i++) {
		if (m && k->w[i].thread == k->w[m - 1].thread && k->w[i].s <= k->w[m - 1].e) {
			if (k->w[i].e > k->w[m - 1].e)
				k->w[m - 1].e = k->w[i].e;
		} else {
			k->w[m++] = k->w[i];
		}
	}
	k->n = m;
}

/* ---- writing ---- */

/* A time on a thread where a sample's slice must stop: a call's start or
 * end (kind 1, 0: an end comes first), an off-CPU interval's (2). */
struct bnd {
	uint32_t thread, call, kind;
	uint64_t time;
};


struct tinfo {
	int64_t pid, tid;
	uint8_t used;
};

struct wctx {
	struct sp_timeline *t;
	struct sp_ctrace *w;
	struct tinfo *ti;
	size_t nti;
	uint8_t *node_used;
	size_t nnode;
	uint64_t origin;
	struct sp_ctrace_arg args[2 * SP_TRACE_VALUES + 1];
	struct bnd *off;          /* --sample-slices: the off-CPU intervals' ends */
	size_t noff, capoff;
};

static struct tinfo *tinfo(struct wctx *x, uint32_t thread)
{
	x->ti = sp_xgrow0(x->ti, &x->nti, thread, sizeof *x->ti);
	struct tinfo *ti = &x->ti[thread];
	if (!ti->used) {
		const struct sp_thread *th = thread ? sp_thread_get(x->t->p, thread) : NULL;
		ti->tid = th && th->tid >= 0 ? th->tid : (int64_t)thread;
		ti->pid = th && th->pid >= 0 ? th->pid : th && th->tid >= 0 ? th->tid : 0;
		ti->used = 1;
	}
	return ti;
}

static void use_node(struct wctx *x, uint32_t node)
{
	if (!node)
		return;
	x->node_used = sp_xgrow0(x->node_used, &x->nnode, node, 1);
	x->node_used[node] = 1;
}

static size_t add_args(struct wctx *x, uint32_t off, uint8_t n, size_t at)
{
	for (uint8_t i = 0; i < n && at < sizeof x->args / sizeof x->args[0]; i++)
		x->args[at++] = (struct sp_ctrace_arg){ sp_str(x->t->p, x->t->vals[off + i].name),
							x->t->vals[off + i].v, NULL };
	return at;
}

static int write_call(struct wctx *x, const struct call *c, struct sp_err *err)
{
	struct sp_timeline *t = x->t;
	struct tinfo *ti = tinfo(x, c->thread);
	uint32_t name = frame_name(t, c->frame);
	size_t na = add_args(x, c->voff, c->nv, 0);
	na = add_args(x, c->xoff, c->nx, na);
	const char *cat = "call", *note = NULL;
	if (c->flags & F_UNFINISHED) {
		cat = c->flags & F_PICKED ? "slow,unfinished" : "unfinished";
		note = "no exit in the input: shown up to its last timestamp";
	} else if (c->flags & F_BEGUN) {
		cat = c->flags & F_PICKED ? "slow,begun-before" : "begun-before";
		note = "no entry in the input: begun before the recording";
	} else if (c->flags & F_ABANDONED) {
		cat = c->flags & F_PICKED ? "slow,abandoned" : "abandoned";
		note = "left without returning (longjmp, an exception): ends at the event that proved it";
	} else if (c->flags & F_PICKED) {
		cat = "slow";
	}
	if (note)
		x->args[na++] = (struct sp_ctrace_arg){ "note", 0, note };
	if (c->stack)
		use_node(x, c->stack);
	struct sp_ctrace_ev e = { 'X', 0, ti->pid, ti->tid, sp_str(t->p, name), sp_str_len(t->p, name), cat,
				  c->start - x->origin, c->end - c->start, c->stack, x->args, na };
	return sp_ctrace_event(x->w, &e, err);
}

static int cmp_smp_time(const void *a, const void *b)
{
	const struct smp *x = a, *y = b;
	return x->time < y->time ? -1 : x->time > y->time;
}

static int write_marker(struct wctx *x, const char *name, const char *what, int64_t n, struct sp_err *err)
{
	struct sp_ctrace_arg a = { what, n, NULL };
	struct sp_ctrace_ev e = { 'i', 'g', 0, 0, name, strlen(name), what, 0, 0, 0, &a, 1 };
	return sp_ctrace_event(x->w, &e, err);
}

/* Lost hits (trace-lost "PROBE N"), lost samples ("lost" N) and probes
 * stopped over their budget (trace-stopped "PROBE SECONDS") of the
 * stream's metadata. */
static int write_lost(struct wctx *x, struct sp_err *err)
{
	struct sp_profile *p = x->t->p;
	struct sp_buf b = SP_BUF_INIT;
	int rc = 0;
	for (size_t i = 0; i < sp_meta_count(p) && !rc; i++) {
		const struct sp_meta *m = sp_meta_get(p, i);
		const char *k = sp_str(p, m->key), *v = sp_str(p, m->value);
		sp_buf_reset(&b);
		if (!strcmp(k, "trace-lost")) {
			const char *sp = strrchr(v, ' ');
			int64_t n = sp ? strtoll(sp + 1, NULL, 10) : 0;
			sp_buf_addf(&b, "lost hits: %.*s, %" PRId64 " hits lost (calls missing)",
				    (int)(sp ? sp - v : (long)strlen(v)), v, n);
			rc = write_marker(x, sp_buf_cstr(&b), "lost", n, err);
		} else if (!strcmp(k, "lost")) {
			int64_t n = strtoll(v, NULL, 10);
			sp_buf_addf(&b, "lost samples: %" PRId64, n);
			rc = write_marker(x, sp_buf_cstr(&b), "lost", n, err);
		} else if (!strcmp(k, "trace-stopped")) {
			/* "PROBE SECONDS": pcollect stopped the probe over its
			 * --trace-budget, SECONDS into the trace */
			const char *sp = strrchr(v, ' ');
			sp_buf_addf(&b, "probe stopped: %.*s at %s s of the trace, over its cost budget (its calls after are missing)",
				    (int)(sp ? sp - v : (long)strlen(v)), v, sp ? sp + 1 : "?");
			rc = write_marker(x, sp_buf_cstr(&b), "stopped", 1, err);
		}
	}
	sp_buf_release(&b);
	return rc;
}

static int write_threads(struct wctx *x, struct sp_err *err)
{
	struct sp_profile *p = x->t->p;
	int rc = 0;
	/* pcollect's "command": its program's file name, for the process
	 * of a recording of one process whose main thread has no name here */
	struct sp_buf cmdname = SP_BUF_INIT;
	const char *cmd = sp_meta_find(p, "command");
	int64_t pid1 = -1;
	for (size_t i = 0; i < x->nti && cmd; i++)
		if (x->ti[i].used) {
			if (pid1 >= 0 && x->ti[i].pid != pid1)
				cmd = NULL;
			pid1 = x->ti[i].pid;
		}
	if (cmd) {
		size_t n = strcspn(cmd, " ");
		const char *sl = memrchr(cmd, '/', n);
		const char *b = sl ? sl + 1 : cmd;
		sp_buf_add(&cmdname, b, n - (size_t)(b - cmd));
	}
	/* process_name once per pid */
	for (size_t i = 0; i < x->nti && !rc; i++) {
		if (!x->ti[i].used)
			continue;
		x->t->st.threads++;
		const struct sp_thread *th = i ? sp_thread_get(p, (uint32_t)i) : NULL;
		const char *tn = th ? sp_str(p, th->name) : "(no thread)";
		struct sp_ctrace_arg a = { "name", 0, *tn ? tn : "(unnamed)" };
		int first = 1;
		for (size_t j = 0; j < i && first; j++)
			first = !x->ti[j].used || x->ti[j].pid != x->ti[i].pid;
		if (first) {
			/* the process's name: its main thread's (which may have
			 * no event of its own), else the recorded command's
			 * program, else this thread's */
			const char *pn = cmdname.len ? sp_buf_cstr(&cmdname) : tn;
			for (uint32_t j = 1; j < sp_thread_count(p); j++) {
				const struct sp_thread *o = sp_thread_get(p, j);
				if (o->tid == x->ti[i].pid && o->pid == x->ti[i].pid && *sp_str(p, o->name))
					pn = sp_str(p, o->name);
			}
			struct sp_ctrace_arg pa = { "name", 0, *pn ? pn : "(unnamed)" };
			struct sp_ctrace_ev e = { 'M', 0, x->ti[i].pid, x->ti[i].tid, "process_name", 12, NULL, 0, 0, 0, &pa, 1 };
			rc = sp_ctrace_event(x->w, &e, err);
		}
		struct sp_ctrace_ev e = { 'M', 0, x->ti[i].pid, x->ti[i].tid, "thread_name", 11, NULL, 0, 0, 0, &a, 1 };
		if (!rc)
			rc = sp_ctrace_event(x->w, &e, err);
	}
	sp_buf_release(&cmdname);
	return rc;
}

static const char *frame_category(struct sp_profile *p, const struct sp_frame *f)
{
	if (f->module) {
		const char *m = sp_str(p, f->module), *sl = strrchr(m, '/');
		return sl ? sl + 1 : m;
	}
	return sp_kind_name(f->kind);
}

static int write_frames(struct wctx *x, struct sp_err *err)
{
	struct sp_profile *p = x->t->p;
	/* ancestors too; a parent's id is below its child's */
	for (size_t i = x->nnode; i-- > 1;)
		if (x->node_used[i]) {
			uint32_t par = sp_node_get(p, (uint32_t)i)->parent;
			if (par)
				x->node_used[par] = 1;
		}
	for (size_t i = 1; i < x->nnode; i++) {
		if (!x->node_used[i])
			continue;
		const struct sp_node *nd = sp_node_get(p, (uint32_t)i);
		const struct sp_frame *f = sp_frame_get(p, nd->frame);
		if (sp_ctrace_frame(x->w, (uint32_t)i, nd->parent, sp_str(p, f->name), sp_str_len(p, f->name),
				    frame_category(p, f), err) < 0)
			return -1;
	}
	return 0;
}

/* ---- samples as slices (speedscope) ---- */

static int cmp_bnd(const void *a, const void *b)
{
	const struct bnd *x = a, *y = b;
	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->kind < y->kind ? -1 : x->kind > y->kind;
}

static int cmp_smp_thread(const void *a, const void *b)
{
	const struct smp *x = a, *y = b;
	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	return x->time < y->time ? -1 : x->time > y->time;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

struct oslice {
	uint32_t frame;
	uint64_t start;
};

/* A sample slice's begin (ph B) or end (ph E).  B and E events, not X:
 * their order in the file is the order of equal times (outer frames begin
 * first and end last), which a viewer computing ends as ts + dur in
 * floating point would lose. */
static int slice_event(struct wctx *x, uint32_t thread, char ph, uint32_t frame, uint64_t time, struct sp_err *err)
{
	struct tinfo *ti = tinfo(x, thread);
	uint32_t name = frame_name(x->t, frame);
	struct sp_ctrace_ev e = { ph, 0, ti->pid, ti->tid, sp_str(x->t->p, name), sp_str_len(x->t->p, name),
				  "sample", time - x->origin, 0, 0, NULL, 0 };
	return sp_ctrace_event(x->w, &e, err);
}

/* Ends the open slices above keep_n at end, innermost first. */
static int close_slices(struct wctx *x, uint32_t thread, struct oslice *o, size_t *n, size_t keep_n, uint64_t end,
			struct sp_err *err)
{
	while (*n > keep_n)
		if (slice_event(x, thread, 'E', o[--*n].frame, end, err) < 0)
			return -1;
	return 0;
}

/* The kept CPU samples (smps[0..n)) as slices: the frames a sample's stack
 * has below the innermost traced call it fell in (or all of them outside
 * calls), from its time for one sampling period, cut 1 ns before the
 * thread's next sample and the next start or end of a call or off-CPU
 * interval, so that they nest inside the calls; consecutive samples
 * sharing frames share their slices. */
static int write_sample_slices(struct wctx *x, const struct pick *k, size_t n, struct sp_err *err)
{
	struct sp_timeline *t = x->t;
	struct bnd *b = sp_xmalloc((2 * t->ncalls + 1) * sizeof *b);
	size_t nb = 0;
	for (size_t i = 0; i < t->ncalls; i++) {
		const struct call *c = &t->calls[i];
		if (!keep(k, c->thread, c->start, c->end))
			continue;
		b[nb++] = (struct bnd){ c->thread, (uint32_t)i, 1, c->start };
		b[nb++] = (struct bnd){ c->thread, (uint32_t)i, 0, c->end };
	}
	b = sp_xrealloc(b, (nb + x->noff + 1) * sizeof *b);
	if (x->noff)
		memcpy(b + nb, x->off, x->noff * sizeof *b);
	nb += x->noff;
	sp_sort(b, nb, sizeof *b, cmp_bnd);
	sp_sort(t->smps, n, sizeof *t->smps, cmp_smp_thread);
	/* one sampling period: the median gap between a thread's samples */
	uint64_t *gaps = sp_xmalloc((n + 1) * sizeof *gaps);
	size_t ng = 0;
	for (size_t i = 1; i < n; i++)
		if (t->smps[i].thread == t->smps[i - 1].thread && t->smps[i].time > t->smps[i - 1].time)
			gaps[ng++] = t->smps[i].time - t->smps[i - 1].time;
	sp_sort(gaps, ng, sizeof *gaps, cmp_u64);
	uint64_t period = ng ? gaps[ng / 2] : 1000000;
	free(gaps);

	uint32_t *open = NULL, *fr = NULL;
	size_t nopen = 0, capopen = 0, capfr = 0, no = 0, capo = 0;
	struct oslice *o = NULL;
	uint64_t oend = 0;
	uint32_t ocont = UINT32_MAX, othread = 0;
	size_t bi = 0;
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		const struct smp *m = &t->smps[i];
		if (m->thread != othread || !i) {
			rc = close_slices(x, othread, o, &no, 0, oend, err);
			othread = m->thread;
			nopen = 0;
			while (bi < nb && b[bi].thread < m->thread)
				bi++;
		}
		/* the calls open at the sample's time */
		while (!rc && bi < nb && b[bi].thread == m->thread && b[bi].time <= m->time) {
			if (b[bi].kind == 1) {
				if (nopen == capopen) {
					capopen = capopen ? 2 * capopen : 16;
					open = sp_xrealloc(open, capopen * sizeof *open);
				}
				open[nopen++] = b[bi].call;
			} else if (b[bi].kind == 0) {
				size_t j = nopen;
				while (j > 0 && open[j - 1] != b[bi].call)
					j--;
				if (j) {
					memmove(open + j - 1, open + j, (nopen - j) * sizeof *open);
					nopen--;
				}
			}
			bi++;
		}
		/* 1 ns short of what comes next: a slice ending where another
		 * of the same name starts is ambiguous to a viewer (speedscope
		 * then nests the new one in the old) */
		uint64_t next = UINT64_MAX, end = m->time + period;
		if (bi < nb && b[bi].thread == m->thread)
			next = b[bi].time;
		if (i + 1 < n && t->smps[i + 1].thread == m->thread && t->smps[i + 1].time < next)
			next = t->smps[i + 1].time;
		if (next <= end)
			end = next > m->time + 1 ? next - 1 : next;
		uint32_t cont = nopen ? open[nopen - 1] : UINT32_MAX;
		uint32_t d = sp_node_frames(t->p, m->stack, &fr, &capfr);
		uint32_t from = 0;
		if (cont != UINT32_MAX) {
			uint32_t want = frame_name(t, t->calls[cont].frame);
			for (uint32_t j = d; j-- > 0;)
				if (frame_name(t, fr[j]) == want) {
					from = j + 1;
					break;
				}
		}
		/* what the open slices share with this sample */
		size_t common = 0;
		if (m->time == oend + 1 && cont == ocont)
			while (common < no && from + common < d && o[common].frame == fr[from + common])
				common++;
		if (!rc)
			rc = close_slices(x, othread, o, &no, common, oend, err);
		if (end <= m->time)
			continue;
		for (uint32_t j = from + (uint32_t)common; j < d && !rc; j++) {
			if (no == capo) {
				capo = capo ? 2 * capo : 64;
				o = sp_xrealloc(o, capo * sizeof *o);
			}
			o[no++] = (struct oslice){ fr[j], m->time };
			rc = slice_event(x, m->thread, 'B', fr[j], m->time, err);
		}
		oend = end;
		ocont = cont;
	}
	if (!rc)
		rc = close_slices(x, othread, o, &no, 0, oend, err);
	free(open);
	free(fr);
	free(o);
	free(b);
	return rc;
}

int sp_timeline_write(struct sp_timeline *t, FILE *out, struct sp_err *err)
{
	struct sp_timeline_stats *st = &t->st;
	if (t->tmin == SP_NO_TIME) {
		if (t->untimed)
			return sp_err_set(err, "the input has no timestamps (%" PRIu64 " samples): nothing to place on "
					  "a timeline (record the binary stream: pcollect, or perf script | pfold -b)",
					  t->untimed);
		return sp_err_set(err, "the input holds no trace events and no samples");
	}
	uint64_t origin = t->tmin;
	/* Close what the input left open. */
	for (size_t i = 0; i < t->nth; i++)
		for (size_t k = 0; k < t->th[i].n; k++) {
			struct call *c = &t->calls[t->th[i].v[k].idx];
			c->end = t->tmax;
			c->flags |= F_UNFINISHED;
		}
	for (size_t i = 0; i < t->ncalls; i++) {
		struct call *c = &t->calls[i];
		if (c->flags & F_BEGUN)
			c->start = origin;
		st->unfinished += !!(c->flags & F_UNFINISHED);
		st->begun_before += !!(c->flags & F_BEGUN);
		st->abandoned += !!(c->flags & F_ABANDONED);
	}
	st->calls = t->ncalls;
	st->points = t->npoints;
	st->samples = t->nsmps - st->offcpu;

	struct pick k = { NULL, 0, 0, UINT64_MAX, 0, t->o.meanwhile };
	if (t->o.from != SP_NO_TIME)
		k.from = t->o.from_rel ? origin + t->o.from : t->o.from;
	if (t->o.to != SP_NO_TIME)
		k.to = t->o.to_rel ? origin + t->o.to : t->o.to;
	k.selecting = st->selecting = t->o.slowest || t->o.slower_than || t->o.percentile > 0;
	if (k.selecting)
		select_calls(t, &k);
	if (k.selecting && !st->func_calls) {
		free(k.w);
		sp_err_set(err, "no traced call %s%s in the input (%" PRIu64 " calls): nothing to pick",
			   t->o.func ? "of " : "", t->o.func ? t->o.func : "", t->ncalls);
		err->code = SP_ERR_NOMATCH;
		return -1;
	}

	struct wctx x = { .t = t, .origin = origin };
	x.w = sp_ctrace_new(out, t->o.gzip);
	int rc = 0;
	/* which threads have something kept: their tracks come first */
	for (size_t i = 0; i < t->ncalls; i++)
		if (keep(&k, t->calls[i].thread, t->calls[i].start, t->calls[i].end))
			tinfo(&x, t->calls[i].thread);
	for (size_t i = 0; i < t->npoints; i++)
		if (keep(&k, t->points[i].thread, t->points[i].time, t->points[i].time))
			tinfo(&x, t->points[i].thread);
	for (size_t i = 0; i < t->nsmps; i++) {
		const struct smp *m = &t->smps[i];
		if ((!m->off && t->o.no_samples) || !keep(&k, m->thread, m->time - m->dur, m->time))
			continue;
		tinfo(&x, m->thread);
	}
	rc = write_threads(&x, err);
	for (size_t i = 0; i < t->ncalls && !rc; i++) {
		const struct call *c = &t->calls[i];
		if (!keep(&k, c->thread, c->start, c->end))
			continue;
		st->kept_calls++;
		rc = write_call(&x, c, err);
	}
	for (size_t i = 0; i < t->npoints && !rc; i++) {
		const struct point *pt = &t->points[i];
		if (!keep(&k, pt->thread, pt->time, pt->time))
			continue;
		st->kept_points++;
		struct tinfo *ti = tinfo(&x, pt->thread);
		uint32_t name = frame_name(t, pt->frame);
		use_node(&x, pt->stack);
		struct sp_ctrace_ev e = { 'i', 't', ti->pid, ti->tid, sp_str(t->p, name), sp_str_len(t->p, name), "point",
					  pt->time - origin, 0, pt->stack, x.args, add_args(&x, pt->voff, pt->nv, 0) };
		rc = sp_ctrace_event(x.w, &e, err);
	}
	/* Off-CPU intervals as slices with their stacks; CPU samples held
	 * back for the samples section, in time order. */
	size_t nkeep = 0;
	for (size_t i = 0; i < t->nsmps && !rc; i++) {
		const struct smp *m = &t->smps[i];
		if (!keep(&k, m->thread, m->time - m->dur, m->time))
			continue;
		if (!m->off) {
			if (!t->o.no_samples) {
				t->smps[nkeep++] = *m;
				if (!t->o.sample_slices)
					use_node(&x, m->stack);
			}
			continue;
		}
		st->kept_offcpu++;
		if (t->o.sample_slices) {
			if (x.noff + 2 > x.capoff) {
				x.capoff = x.capoff ? 2 * x.capoff : 256;
				x.off = sp_xrealloc(x.off, x.capoff * sizeof *x.off);
			}
			x.off[x.noff++] = (struct bnd){ m->thread, 0, 2, m->time - m->dur };
			x.off[x.noff++] = (struct bnd){ m->thread, 0, 2, m->time };
		}
		struct tinfo *ti = tinfo(&x, m->thread);
		uint32_t leaf = sp_node_get(t->p, m->stack)->frame;
		uint32_t name = frame_name(t, leaf);
		use_node(&x, m->stack);
		struct sp_ctrace_ev e = { 'X', 0, ti->pid, ti->tid, sp_str(t->p, name), sp_str_len(t->p, name), "off-cpu",
					  m->time - m->dur - origin, m->dur, m->stack, NULL, 0 };
		rc = sp_ctrace_event(x.w, &e, err);
	}
	if (!rc && t->o.sample_slices)
		rc = write_sample_slices(&x, &k, nkeep, err);
	if (!rc)
		rc = write_lost(&x, err);
	if (!rc && x.nnode)
		rc = write_frames(&x, err);
	/* speedscope reads each thread's samples in the order given */
	int sorted = 1;
	for (size_t i = 1; i < nkeep && sorted; i++)
		sorted = t->smps[i - 1].time <= t->smps[i].time;
	if (!sorted)
		sp_sort(t->smps, nkeep, sizeof *t->smps, cmp_smp_time);
	const char *defev = sp_meta_find(t->p, "event");
	for (size_t i = 0; i < nkeep && !rc && !t->o.sample_slices; i++) {
		const struct smp *m = &t->smps[i];
		struct tinfo *ti = tinfo(&x, m->thread);
		const char *ev = m->event ? sp_str(t->p, m->event) : defev ? defev : "sample";
		rc = sp_ctrace_sample(x.w, ti->pid, ti->tid, m->time - origin, m->stack, ev, err);
	}
	st->kept_samples = nkeep;
	t->nsmps = 0; /* the array now holds the kept ones only */
	if (!rc) {
		char org[24];
		snprintf(org, sizeof org, "%" PRIu64, origin);
		const char *kv[] = { "source", "ptimeline", "origin_ns", org };
		rc = sp_ctrace_finish(x.w, kv, 4, err);
	}
	st->bytes = sp_ctrace_bytes(x.w);
	sp_ctrace_free(x.w);
	free(x.ti);
	free(x.off);
	free(x.node_used);
	free(k.w);
	return rc;
}
