/* latency.c — call durations from trace events (see latency.h). */
#include "latency.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct group {
	uint32_t name;     /* string id of the function's name */
	int point;
	int has_by;
	int64_t by;
	uint64_t *durs;    /* ns */
	size_t n, cap;
	uint64_t count;    /* points: hits; calls: measured + abandoned + open */
	uint64_t abandoned, open;
};

struct open_call {
	uint64_t call, start;
	uint32_t name;
	int has_by;
	int64_t by;
};

struct othread {
	struct open_call *v;
	size_t n, cap;
};

struct sp_latency {
	char *by;
	struct group *g;
	size_t ng, capg;
	struct sp_u64map gidx;   /* hash(name, kind, by) -> index + 1 */
	struct othread *th;
	size_t nth, capth;
	struct sp_u64map tidx;   /* profile thread id -> index + 1 */
	uint64_t events;
	uint64_t unmatched; /* exits whose entry was not in the input */
	uint32_t by_id;          /* string id of `by` in the profile, 0 = not interned yet */
};

struct sp_latency *sp_latency_new(const char *by)
{
	struct sp_latency *l = sp_xcalloc(1, sizeof *l);
	if (by)
		l->by = sp_xstrndup(by, strlen(by));
	sp_u64map_init(&l->gidx);
	sp_u64map_init(&l->tidx);
	return l;
}

void sp_latency_free(struct sp_latency *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->ng; i++)
		free(l->g[i].durs);
	for (size_t i = 0; i < l->nth; i++)
		free(l->th[i].v);
	free(l->g);
	free(l->th);
	sp_u64map_release(&l->gidx);
	sp_u64map_release(&l->tidx);
	free(l->by);
	free(l);
}

uint64_t sp_latency_events(const struct sp_latency *l) { return l->events; }

static struct group *group_of(struct sp_latency *l, uint32_t name, int point, int has_by, int64_t by)
{
	struct {
		uint32_t name, point, has_by, pad;
		int64_t by;
	} k = { name, (uint32_t)point, (uint32_t)has_by, 0, has_by ? by : 0 };
	uint64_t h = sp_hash(&k, sizeof k);
	/* A hash collision would merge two groups: check and probe on. */
	for (;; h++) {
		int found;
		uint32_t *slot = sp_u64map_slot(&l->gidx, h, &found);
		if (found && *slot) {
			struct group *g = &l->g[*slot - 1];
			if (g->name == name && g->point == point && g->has_by == has_by && (!has_by || g->by == by))
				return g;
			continue;
		}
		if (l->ng == l->capg) {
			l->capg = l->capg ? 2 * l->capg : 16;
			l->g = sp_xrealloc(l->g, l->capg * sizeof *l->g);
		}
		struct group *g = &l->g[l->ng++];
		memset(g, 0, sizeof *g);
		g->name = name;
		g->point = point;
		g->has_by = has_by;
		g->by = has_by ? by : 0;
		*slot = (uint32_t)l->ng;
		return g;
	}
}

static struct othread *thread_of(struct sp_latency *l, uint32_t thread)
{
	int found;
	uint32_t *slot = sp_u64map_slot(&l->tidx, thread, &found);
	if (!found || !*slot) {
		if (l->nth == l->capth) {
			l->capth = l->capth ? 2 * l->capth : 16;
			l->th = sp_xrealloc(l->th, l->capth * sizeof *l->th);
		}
		memset(&l->th[l->nth], 0, sizeof *l->th);
		*slot = (uint32_t)++l->nth;
	}
	return &l->th[*slot - 1];
}

/* The --by value among t's values. */
static int by_value(struct sp_latency *l, struct sp_profile *p, const struct sp_trace *t, int64_t *v)
{
	if (!l->by)
		return 0;
	if (!l->by_id)
		l->by_id = sp_str_intern(p, l->by, strlen(l->by));
	for (uint32_t i = 0; i < t->nvalues; i++)
		if (t->vname[i] == l->by_id) {
			*v = t->value[i];
			return 1;
		}
	return 0;
}

static void add_dur(struct group *g, uint64_t d)
{
	if (g->n == g->cap) {
		g->cap = g->cap ? 2 * g->cap : 256;
		g->durs = sp_xrealloc(g->durs, g->cap * sizeof *g->durs);
	}
	g->durs[g->n++] = d;
}

void sp_latency_trace(struct sp_latency *l, struct sp_profile *p, const struct sp_trace *t)
{
	l->events++;
	const struct sp_frame *f = sp_frame_get(p, t->frame);
	uint32_t name = f ? f->name : 0;
	int64_t bv = 0;
	int hb = by_value(l, p, t, &bv);
	if (t->flags & SP_TRACE_POINT) {
		group_of(l, name, 1, hb, bv)->count++;
		return;
	}
	struct othread *th = thread_of(l, t->thread);
	if (t->kind == SP_TRACE_ENTRY) {
		if (th->n == th->cap) {
			th->cap = th->cap ? 2 * th->cap : 16;
			th->v = sp_xrealloc(th->v, th->cap * sizeof *th->v);
		}
		th->v[th->n++] = (struct open_call){ t->call, t->time, name, hb, bv };
		return;
	}
	/* An exit: its call, innermost first. */
	size_t i = th->n;
	while (i > 0 && (t->call ? th->v[i - 1].call != t->call : th->v[i - 1].name != name))
		i--;
	if (!i) {
		l->unmatched++; /* no entry seen: begun before the recording */
		return;
	}
	struct open_call c = th->v[i - 1];
	memmove(th->v + i - 1, th->v + i, (th->n - i) * sizeof *th->v);
	th->n--;
	if (!hb) {
		hb = c.has_by;
		bv = c.by;
	}
	struct group *g = group_of(l, c.name, 0, hb, bv);
	g->count++;
	if (t->flags & SP_TRACE_ABANDONED)
		g->abandoned++;
	else
		add_dur(g, t->time > c.start ? t->time - c.start : 0);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static double pct_us(const struct group *g, double q)
{
	if (!g->n)
		return 0;
	size_t i = (size_t)((double)g->n * q / 100.0);
	return (double)g->durs[i < g->n ? i : g->n - 1] / 1e3;
}

static void text_group(struct sp_latency *l, struct sp_profile *p, const struct group *g, struct sp_buf *b)
{
	sp_buf_adds(b, sp_str(p, g->name));
	if (g->has_by)
		sp_buf_addf(b, " [%s=%" PRId64 "]", l->by, g->by);
	if (g->point) {
		sp_buf_addf(b, ": %" PRIu64 " hits (point)\n", g->count);
		return;
	}
	sp_buf_addf(b, ": %zu calls", g->n);
	/* pcollect's "trace-lost" metadata, "PROBE N": the probe lost hits,
	 * so some calls are missing and these figures are not whole. */
	const char *name = sp_str(p, g->name), *lost = NULL, *stopped = NULL;
	size_t nl = strlen(name);
	for (size_t i = 0; i < sp_meta_count(p); i++) {
		const struct sp_meta *m = sp_meta_get(p, i);
		const char *v = sp_str(p, m->value), *k = sp_str(p, m->key);
		if (strncmp(v, name, nl) || v[nl] != ' ')
			continue;
		if (!lost && !strcmp(k, "trace-lost"))
			lost = v + nl + 1;
		/* "trace-stopped": stopped over its cost budget (pcollect
		 * --trace-budget): nothing counted after that */
		if (!stopped && !strcmp(k, "trace-stopped"))
			stopped = v + nl + 1;
	}
	/* a call without its return: a longjmp or an exception, or, when the
	 * probe lost hits, its return may be among them */
	if (g->abandoned)
		sp_buf_addf(b, ", %" PRIu64 " left without returning (%s)", g->abandoned,
			    lost ? "lost returns, a longjmp or an exception" : "longjmp, exception");
	if (lost)
		sp_buf_addf(b, " (INCOMPLETE: %s hits of this probe were lost)", lost);
	if (stopped)
		sp_buf_addf(b, " (INCOMPLETE: the probe was stopped at %s s, over its cost budget: a lower bound)", stopped);
	sp_buf_adds(b, "\n");
	if (!g->n)
		return;
	sp_buf_addf(b, "  min %.3f us, p50 %.3f us, p90 %.3f us, p95 %.3f us, p99 %.3f us, max %.3f us\n",
		    (double)g->durs[0] / 1e3, pct_us(g, 50), pct_us(g, 90), pct_us(g, 95), pct_us(g, 99),
		    (double)g->durs[g->n - 1] / 1e3);
	/* log2 buckets of microseconds, as bcc's funclatency prints them */
	uint64_t hist[64] = { 0 };
	int lo = 63, hi = 0;
	for (size_t i = 0; i < g->n; i++) {
		uint64_t us = g->durs[i] / 1000;
		int k = 0; /* floor(log2(us)); 0 and 1 share bucket 0 */
		while (k < 62 && us >> (k + 1))
			k++;
		hist[k]++;
		lo = k < lo ? k : lo;
		hi = k > hi ? k : hi;
	}
	uint64_t max = 0;
	for (int k = lo; k <= hi; k++)
		max = hist[k] > max ? hist[k] : max;
	sp_buf_addf(b, "  %23s : count    distribution\n", "usecs");
	for (int k = lo; k <= hi; k++) {
		uint64_t from = k ? (uint64_t)1 << k : 0, to = ((uint64_t)1 << (k + 1)) - 1;
		int stars = max ? (int)(hist[k] * 40 / max) : 0;
		sp_buf_addf(b, "  %10" PRIu64 " -> %-10" PRIu64 " : %-8" PRIu64 " |%-40.*s|\n", from, to, hist[k], stars,
			    "****************************************");
	}
}

int sp_latency_report(struct sp_latency *l, struct sp_profile *p, int json, FILE *out, struct sp_err *err)
{
	/* Calls still open at the end are not measured. */
	for (size_t i = 0; i < l->nth; i++)
		for (size_t k = 0; k < l->th[i].n; k++) {
			const struct open_call *c = &l->th[i].v[k];
			group_of(l, c->name, 0, c->has_by, c->by)->open++;
		}
	if (!l->ng) {
		sp_err_set(err, "no call has both its entry and its exit in the input (%" PRIu64
			   " exits without their entry: calls begun before the recording)", l->unmatched);
		err->code = SP_ERR_EMPTY;
		return -1;
	}
	for (size_t i = 0; i < l->ng; i++)
		sp_sort(l->g[i].durs, l->g[i].n, sizeof *l->g[i].durs, cmp_u64);
	struct sp_buf b = SP_BUF_INIT;
	if (json)
		sp_buf_adds(&b, "{\"probes\": [");
	for (size_t i = 0; i < l->ng; i++) {
		const struct group *g = &l->g[i];
		if (json) {
			sp_buf_adds(&b, i ? ",\n  {" : "\n  {");
			sp_buf_adds(&b, "\"probe\": ");
			sp_buf_add_json_str(&b, sp_str(p, g->name));
			sp_buf_addf(&b, ", \"kind\": \"%s\"", g->point ? "point" : "call");
			if (g->has_by) {
				sp_buf_adds(&b, ", \"by\": ");
				sp_buf_add_json_str(&b, l->by);
				sp_buf_addf(&b, ", \"value\": %" PRId64, g->by);
			}
			if (g->point) {
				sp_buf_addf(&b, ", \"count\": %" PRIu64 "}", g->count);
				continue;
			}
			sp_buf_addf(&b, ", \"count\": %zu", g->n);
			if (g->n)
				sp_buf_addf(&b, ", \"min_us\": %.3f, \"p50_us\": %.3f, \"p90_us\": %.3f, \"p95_us\": %.3f, "
					    "\"p99_us\": %.3f, \"max_us\": %.3f", (double)g->durs[0] / 1e3, pct_us(g, 50),
					    pct_us(g, 90), pct_us(g, 95), pct_us(g, 99), (double)g->durs[g->n - 1] / 1e3);
			else
				sp_buf_adds(&b, ", \"min_us\": null, \"p50_us\": null, \"p90_us\": null, \"p95_us\": null, "
					       "\"p99_us\": null, \"max_us\": null");
			sp_buf_adds(&b, "}");
		} else {
			if (i)
				sp_buf_adds(&b, "\n");
			text_group(l, p, g, &b);
			if (g->open)
				sp_buf_addf(&b, "  (%" PRIu64 " call%s still open at the end of the input)\n", g->open,
					    g->open == 1 ? "" : "s");
		}
	}
	if (json)
		sp_buf_adds(&b, l->ng ? "\n]}\n" : "]}\n");
	errno = 0;
	int rc = 0;
	if (b.len && fwrite(b.p, 1, b.len, out) != b.len)
		rc = sp_err_set(err, "write error: %s", strerror(errno ? errno : EIO));
	sp_buf_release(&b);
	return rc;
}
