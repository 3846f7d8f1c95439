/* calls.c — call inference and percentile selection (see calls.h). */
#include "calls.h"

#include <stdlib.h>


struct tstate {
	uint64_t seen;           /* measuring pass: last sample time + 1, 0 = none */
	uint32_t key;            /* open call: callers' node + 1; 0 = none */
	int depth;               /* traced: nesting of func on this thread */
	uint64_t start, last;
	double cpu;              /* on-CPU time of the open call, ns */
	struct sp_sample *buf;   /* classifying: samples of the open call */
	size_t n, cap;
};

struct sp_calls {
	char *func;
	size_t funclen;
	double pct;
	struct sp_profile *p;
	int learning;
	/* memo, per pass profile */
	uint8_t *fmatch;   /* frame -> 0 unknown, 1 no, 2 yes */
	size_t nfmatch;
	uint32_t *key;     /* node -> 0 unknown, 1 no func, else callers' node + 2 */
	size_t nkey;
	struct tstate *ts;
	size_t nts;
	/* measuring */
	uint64_t *deltas;
	size_t ndeltas, seen_deltas;
	uint64_t rng;
	uint64_t gap;      /* ns, 0 = SP_CALLS_GAP periods */
	int cpu;           /* durations are on-CPU time */
	int cpu_col;       /* value column in ns of CPU, -1 = none, -2 = not looked up yet */
	uint8_t *ev_ns;    /* event string -> 0 unknown, 1 not time, 2 time in ns */
	size_t nev;
	int traced;
	/* learning */
	uint64_t *durs;
	size_t ndurs, capdurs;
	struct sp_call_stats st;
};

#define MAX_DELTAS (1u << 16)

struct sp_calls *sp_calls_new(const char *func, double pct)
{
	struct sp_calls *c = sp_xcalloc(1, sizeof *c);
	c->funclen = strlen(func);
	c->func = sp_xstrndup(func, c->funclen);
	c->pct = pct;
	c->rng = 0x9E3779B97F4A7C15ULL;
	return c;
}

void sp_calls_set_gap(struct sp_calls *c, uint64_t ns) { c->gap = ns; }
void sp_calls_set_cpu(struct sp_calls *c, int on) { c->cpu = on; }

/* The CPU time a sample stands for, ns. */
static double sample_cpu(struct sp_calls *c, const struct sp_sample *smp)
{
	if (c->cpu_col == -2) {
		/* Looked up at the first sample: a pass may begin before its
		 * input has named the value columns. */
		c->cpu_col = -1;
		for (int i = 0; i < sp_profile_nvalues(c->p); i++)
			if (!strcmp(sp_profile_value_name(c->p, i), "period"))
				c->cpu_col = i;
	}
	if (c->cpu_col >= 0 && smp->event) {
		c->ev_ns = sp_xgrow0(c->ev_ns, &c->nev, smp->event, 1);
		if (!c->ev_ns[smp->event]) {
			const char *e = sp_str(c->p, smp->event);
			c->ev_ns[smp->event] = strstr(e, "cpu-clock") || strstr(e, "task-clock") ? 2 : 1;
		}
		if (c->ev_ns[smp->event] == 2)
			return smp->values[c->cpu_col];
	}
	return (double)c->st.period;
}

static void reset_threads(struct sp_calls *c)
{
	for (size_t i = 0; i < c->nts; i++)
		free(c->ts[i].buf);
	free(c->ts);
	c->ts = NULL;
	c->nts = 0;
}

static void reset_memo(struct sp_calls *c)
{
	free(c->fmatch);
	free(c->key);
	free(c->ev_ns);
	c->fmatch = NULL;
	c->key = NULL;
	c->ev_ns = NULL;
	c->nfmatch = c->nkey = c->nev = 0;
}

void sp_calls_free(struct sp_calls *c)
{
	if (!c)
		return;
	reset_threads(c);
	reset_memo(c);
	free(c->deltas);
	free(c->durs);
	free(c->func);
	free(c);
}

const struct sp_call_stats *sp_calls_stats(const struct sp_calls *c) { return &c->st; }

static int frame_is_func(struct sp_calls *c, uint32_t frame)
{
	c->fmatch = sp_xgrow0(c->fmatch, &c->nfmatch, frame, 1);
	if (!c->fmatch[frame]) {
		const struct sp_frame *f = sp_frame_get(c->p, frame);
		const char *s = sp_str(c->p, f->name);
		size_t n = sp_str_len(c->p, f->name);
		int m = n >= c->funclen && !memcmp(s, c->func, c->funclen) &&
			(n == c->funclen || s[c->funclen] == '(' ||
			 (s[c->funclen] == ' ' && n > c->funclen + 1 && s[c->funclen + 1] == '('));
		/* Python frames read from a stream keep the file apart. */
		c->fmatch[frame] = m ? 2 : 1;
	}
	return c->fmatch[frame] == 2;
}

/* Callers' node + 1 of the outermost func frame of node; 0 = none. */
static uint32_t call_key(struct sp_calls *c, uint32_t node)
{
	c->key = sp_xgrow0(c->key, &c->nkey, node, sizeof *c->key);
	if (!c->key[node]) {
		uint32_t k = 0;
		for (uint32_t n = node; n;) {
			const struct sp_node *nd = sp_node_get(c->p, n);
			if (frame_is_func(c, nd->frame))
				k = nd->parent + 1;
			n = nd->parent;
		}
		c->key[node] = k + 1;
	}
	return c->key[node] - 1;
}

static struct tstate *tstate(struct sp_calls *c, uint32_t thread)
{
	c->ts = sp_xgrow0(c->ts, &c->nts, thread, sizeof *c->ts);
	return &c->ts[thread];
}

int sp_calls_observe(struct sp_calls *c, struct sp_profile *p, const struct sp_sample *smp, struct sp_err *err)
{
	if (smp->time == SP_NO_TIME)
		return sp_err_set(err, "the input has no timestamps: calls of %s cannot be told apart "
				       "(record to the binary stream: perf script | pfold -b, or pcollect)",
				  c->func);
	struct tstate *t = tstate(c, smp->thread);
	if (t->seen && smp->time + 1 > t->seen) {
		uint64_t d = smp->time + 1 - t->seen;
		if (!c->deltas)
			c->deltas = sp_xmalloc(MAX_DELTAS * sizeof *c->deltas);
		/* A bounded uniform sample of the deltas (reservoir). */
		if (c->ndeltas < MAX_DELTAS) {
			c->deltas[c->ndeltas++] = d;
		} else {
			c->rng = c->rng * 6364136223846793005ULL + 1442695040888963407ULL;
			uint64_t j = (c->rng >> 11) % (c->seen_deltas + 1);
			if (j < MAX_DELTAS)
				c->deltas[j] = d;
		}
		c->seen_deltas++;
	}
	t->seen = smp->time + 1;
	(void)p;
	return 0;
}

void sp_calls_observe_trace(struct sp_calls *c, struct sp_profile *p, const struct sp_trace *t)
{
	c->p = p;
	if (!(t->flags & SP_TRACE_POINT) && frame_is_func(c, t->frame))
		c->traced = 1;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static uint64_t pctl(const uint64_t *v, size_t n, double q)
{
	if (!n)
		return 0;
	size_t i = (size_t)((double)n * q / 100.0);
	return v[i < n ? i : n - 1];
}

void sp_calls_begin(struct sp_calls *c, struct sp_profile *p, int learning)
{
	/* The memo belongs to the profile of the pass; a new pass may read
	 * into another profile. */
	reset_memo(c);
	reset_threads(c);
	c->p = p;
	c->learning = learning;
	c->cpu_col = -2;
	if (learning) {
		c->ndurs = 0;
		c->st.traced = c->traced;
		if (!c->traced) {
			sp_sort(c->deltas, c->ndeltas, sizeof *c->deltas, cmp_u64);
			c->st.period = c->ndeltas ? c->deltas[c->ndeltas / 2] : 1;
		}
	} else {
		c->st.slow_calls = c->st.fast_calls = 0;
		c->st.slow_samples = c->st.fast_samples = c->st.outside_samples = 0;
	}
}

static int close_call(struct sp_calls *c, struct tstate *t, uint64_t dur, sp_calls_emit emit, void *ctx,
		      struct sp_err *err)
{
	if (c->cpu && !c->traced)
		dur = (uint64_t)(t->cpu + 0.5);
	t->cpu = 0;
	t->key = 0;
	t->depth = 0;
	if (c->learning) {
		if (c->ndurs == c->capdurs) {
			c->capdurs = c->capdurs ? c->capdurs * 2 : 1024;
			c->durs = sp_xrealloc(c->durs, c->capdurs * sizeof *c->durs);
		}
		c->durs[c->ndurs++] = dur;
		return 0;
	}
	enum sp_call_where w = dur >= c->st.threshold ? SP_CALL_SLOW : SP_CALL_FAST;
	if (w == SP_CALL_SLOW) {
		c->st.slow_calls++;
		c->st.slow_samples += t->n;
	} else {
		c->st.fast_calls++;
		c->st.fast_samples += t->n;
	}
	int rc = 0;
	for (size_t i = 0; i < t->n && !rc; i++)
		rc = emit(ctx, &t->buf[i], w, err);
	t->n = 0;
	return rc;
}

static void hold(struct tstate *t, const struct sp_sample *smp)
{
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 64;
		t->buf = sp_xrealloc(t->buf, t->cap * sizeof *t->buf);
	}
	t->buf[t->n++] = *smp;
}

static int outside(struct sp_calls *c, const struct sp_sample *smp, sp_calls_emit emit, void *ctx, struct sp_err *err)
{
	if (c->learning)
		return 0;
	c->st.outside_samples++;
	return emit(ctx, smp, SP_CALL_NONE, err);
}

int sp_calls_sample(struct sp_calls *c, const struct sp_sample *smp, sp_calls_emit emit, void *ctx,
		    struct sp_err *err)
{
	struct tstate *t = tstate(c, smp->thread);
	if (c->traced) {
		if (!t->depth)
			return outside(c, smp, emit, ctx, err);
		if (smp->time != SP_NO_TIME)
			t->last = smp->time;
		if (!c->learning)
			hold(t, smp);
		return 0;
	}
	if (smp->time == SP_NO_TIME)
		return sp_err_set(err, "a sample has no timestamp: calls of %s cannot be told apart", c->func);
	uint32_t k = call_key(c, smp->stack);
	uint64_t gap = c->gap ? c->gap : SP_CALLS_GAP * c->st.period;
	if (t->key && (k != t->key || smp->time > t->last + gap)) {
		if (close_call(c, t, t->last - t->start + c->st.period, emit, ctx, err) < 0)
			return -1;
	}
	if (!k)
		return outside(c, smp, emit, ctx, err);
	if (t->key == k) {
		if (smp->time > t->last)
			t->last = smp->time;
	} else {
		t->key = k;
		t->start = t->last = smp->time;
	}
	t->cpu += sample_cpu(c, smp);
	if (!c->learning)
		hold(t, smp);
	return 0;
}

int sp_calls_trace(struct sp_calls *c, const struct sp_trace *t, sp_calls_emit emit, void *ctx,
		   struct sp_err *err)
{
	/* A point event (a probe inside a function, FUNC:entry) is no call. */
	if (!c->traced || (t->flags & SP_TRACE_POINT) || !frame_is_func(c, t->frame))
		return 0;
	struct tstate *s = tstate(c, t->thread);
	if (t->kind == SP_TRACE_ENTRY) {
		if (!s->depth++)
			s->start = s->last = t->time;
	} else if (t->kind == SP_TRACE_EXIT && s->depth > 0) {
		if (!--s->depth)
			return close_call(c, s, t->time > s->start ? t->time - s->start : 0, emit, ctx, err);
	}
	return 0;
}

int sp_calls_end(struct sp_calls *c, sp_calls_emit emit, void *ctx, struct sp_err *err)
{
	for (size_t i = 0; i < c->nts; i++) {
		struct tstate *t = &c->ts[i];
		if (c->traced ? t->depth > 0 : t->key != 0) {
			/* A call still open when the input ends: as long as seen. */
			uint64_t d = t->last - t->start + (c->traced ? 0 : c->st.period);
			if (close_call(c, t, d, emit, ctx, err) < 0)
				return -1;
		}
	}
	if (c->learning) {
		sp_sort(c->durs, c->ndurs, sizeof *c->durs, cmp_u64);
		c->st.calls = c->ndurs;
		c->st.p50 = pctl(c->durs, c->ndurs, 50);
		c->st.p95 = pctl(c->durs, c->ndurs, 95);
		c->st.p99 = pctl(c->durs, c->ndurs, 99);
		c->st.threshold = pctl(c->durs, c->ndurs, c->pct);
	}
	return 0;
}

static void add_dur(struct sp_buf *b, uint64_t ns)
{
	if (ns < 1000)
		sp_buf_addf(b, "%llu ns", (unsigned long long)ns);
	else if (ns < 1000000)
		sp_buf_addf(b, "%.3g us", (double)ns / 1e3);
	else if (ns < 1000000000)
		sp_buf_addf(b, "%.3g ms", (double)ns / 1e6);
	else
		sp_buf_addf(b, "%.4g s", (double)ns / 1e9);
}

void sp_calls_describe(const struct sp_calls *c, const char *func, struct sp_buf *b)
{
	const struct sp_call_stats *s = &c->st;
	sp_buf_addf(b, "%s: %llu calls (", func, (unsigned long long)s->calls);
	if (s->traced) {
		sp_buf_adds(b, "from trace events");
	} else {
		sp_buf_adds(b, "inferred from samples every ");
		add_dur(b, s->period);
		if (c->cpu)
			sp_buf_adds(b, "; durations on CPU");
	}
	sp_buf_adds(b, "), p50 ");
	add_dur(b, s->p50);
	sp_buf_adds(b, ", p95 ");
	add_dur(b, s->p95);
	sp_buf_adds(b, ", p99 ");
	add_dur(b, s->p99);
	sp_buf_adds(b, "; threshold ");
	add_dur(b, s->threshold);
	sp_buf_addf(b, " (%gth percentile); slow: %llu calls, %llu samples; fast: %llu calls, %llu samples; "
		       "outside calls: %llu samples",
		    c->pct, (unsigned long long)s->slow_calls, (unsigned long long)s->slow_samples,
		    (unsigned long long)s->fast_calls, (unsigned long long)s->fast_samples,
		    (unsigned long long)s->outside_samples);
}
