/* report.c — aggregation and the text views (see report.h). */
#include "report.h"

#include <errno.h>
#include <math.h>
#include <regex.h>
#include <stdlib.h>

#include "fold.h"

/* sp_buf_add with nothing to add may pass NULL to memcpy (undefined). */
static inline void buf_add(struct sp_buf *b, const void *p, size_t n)
{
	if (n)
		sp_buf_add(b, p, n);
}
static inline void buf_adds(struct sp_buf *b, const char *s) { buf_add(b, s, strlen(s)); }

struct sp_agg {
	struct sp_profile *p;
	int ncols;
	struct sp_u64map map; /* thread << 32 | node -> index + 1 */
	uint64_t *keys;
	double *vals;
	size_t n, cap;
	double total[2];
	int lines; /* function names with " (file:line)" */
	int each_thread;       /* sp_agg_thread_of: numbered names not grouped */
	struct sp_u64map tmemo; /* sp_agg_thread_of: thread -> its root thread + 1 */
};

void sp_agg_set_lines(struct sp_agg *a, int lines) { a->lines = lines; }
void sp_agg_set_each_thread(struct sp_agg *a, int each) { a->each_thread = each; }

struct sp_agg *sp_agg_new(struct sp_profile *p, int ncols)
{
	struct sp_agg *a = sp_xcalloc(1, sizeof *a);
	a->p = p;
	a->ncols = ncols < 1 ? 1 : ncols > 2 ? 2 : ncols;
	sp_u64map_init(&a->map);
	sp_u64map_init(&a->tmemo);
	return a;
}

void sp_agg_free(struct sp_agg *a)
{
	if (!a)
		return;
	sp_u64map_release(&a->map);
	sp_u64map_release(&a->tmemo);
	free(a->keys);
	free(a->vals);
	free(a);
}

double *sp_agg_entry(struct sp_agg *a, uint32_t thread, uint32_t node)
{
	int found;
	uint32_t *slot = sp_u64map_slot(&a->map, (uint64_t)thread << 32 | node, &found);
	if (!found) {
		if (a->n == a->cap) {
			a->cap = a->cap ? a->cap * 2 : 1024;
			a->keys = sp_xrealloc(a->keys, a->cap * sizeof *a->keys);
			a->vals = sp_xrealloc(a->vals, a->cap * 2 * sizeof *a->vals);
		}
		a->keys[a->n] = (uint64_t)thread << 32 | node;
		a->vals[2 * a->n] = a->vals[2 * a->n + 1] = 0;
		*slot = (uint32_t)++a->n;
	}
	return a->vals + 2 * (size_t)(*slot - 1);
}

size_t sp_agg_count(const struct sp_agg *a) { return a->n; }

const double *sp_agg_get(const struct sp_agg *a, size_t i, uint32_t *thread, uint32_t *node)
{
	*thread = (uint32_t)(a->keys[i] >> 32);
	*node = (uint32_t)a->keys[i];
	return a->vals + 2 * i;
}

double sp_agg_total(const struct sp_agg *a, int col)
{
	double t = 0;
	for (size_t i = 0; i < a->n; i++)
		t += a->vals[2 * i + (size_t)col];
	return t;
}

uint32_t sp_agg_thread(struct sp_profile *p, uint32_t thread)
{
	if (!thread)
		return 0;
	const struct sp_thread *t = sp_thread_get(p, thread);
	if (t->pid == -1 && t->tid == -1)
		return thread;
	return sp_thread_intern(p, -1, -1, t->name);
}

uint32_t sp_agg_thread_of(struct sp_agg *a, uint32_t thread)
{
	if (!thread)
		return 0;
	int found;
	uint32_t *slot = sp_u64map_slot(&a->tmemo, thread, &found);
	if (found)
		return *slot - 1;
	uint32_t id = sp_agg_thread(a->p, thread);
	struct sp_buf g = SP_BUF_INIT;
	const struct sp_thread *t = sp_thread_get(a->p, thread);
	if (!a->each_thread && sp_thread_group(sp_str(a->p, t->name), &g))
		id = sp_thread_intern(a->p, -1, -1, sp_str_intern(a->p, g.p, g.len));
	sp_buf_release(&g);
	slot = sp_u64map_slot(&a->tmemo, thread, &found); /* the interning may not move it, but be sure */
	*slot = id + 1;
	return id;
}

/* ---- per-function statistics ---- */

struct fstat {
	uint32_t name; /* string id of the display name */
	uint32_t seen; /* last entry counted into total, + 1 */
	double self[2], total[2];
};

struct fstats {
	struct fstat *f;
	size_t n, cap;
	struct sp_u64map map; /* name -> index + 1 */
	double total[2];
};

static uint32_t display_name(struct sp_profile *p, int lines, uint32_t frame, uint32_t **memo, size_t *nmemo,
			     struct sp_buf *b)
{
	if (frame >= *nmemo) {
		size_t m = *nmemo ? *nmemo : 256;
		while (m <= frame)
			m *= 2;
		*memo = sp_xrealloc(*memo, m * sizeof **memo);
		memset(*memo + *nmemo, 0, (m - *nmemo) * sizeof **memo);
		*nmemo = m;
	}
	if (!(*memo)[frame]) {
		struct sp_fold_opts fo = { SP_LABEL_NONE, 0, 0, NULL, 0 };
		sp_buf_reset(b);
		sp_fold_frame_name_lines(p, frame, &fo, lines, b);
		uint32_t s = sp_str_intern(p, b->p ? b->p : "", b->len);
		(*memo)[frame] = s + 1;
	}
	return (*memo)[frame] - 1;
}

static struct fstat *fstat_get(struct fstats *fs, uint32_t name)
{
	int found;
	uint32_t *slot = sp_u64map_slot(&fs->map, name, &found);
	if (!found) {
		if (fs->n == fs->cap) {
			fs->cap = fs->cap ? fs->cap * 2 : 256;
			fs->f = sp_xrealloc(fs->f, fs->cap * sizeof *fs->f);
		}
		memset(&fs->f[fs->n], 0, sizeof fs->f[fs->n]);
		fs->f[fs->n].name = name;
		*slot = (uint32_t)++fs->n;
	}
	return &fs->f[*slot - 1];
}

static const char *thread_name(struct sp_agg *a, uint32_t t)
{
	return t ? sp_str(a->p, sp_thread_get(a->p, t)->name) : "";
}

/* The process name as the root frame of folded text spells it ("a b"
 * spelt "a_b"): the caller of a stack's first frame in --callers.  It is
 * no function: preport's table has no row for it (folded text, which has
 * no threads, keeps its root frame a row: nothing tells it from a frame);
 * pdiff --report's has, so that a stream and folded text of the same
 * program compare like with like. */
static uint32_t root_name(struct sp_agg *a, uint32_t t, struct sp_buf *b)
{
	const char *tn = thread_name(a, t);
	sp_buf_reset(b);
	for (; *tn; tn++)
		sp_buf_addc(b, *tn == ' ' ? '_' : *tn);
	return sp_str_intern(a->p, b->p ? b->p : "", b->len);
}

/* Statistics of the entries of one thread (all when thread is UINT32_MAX).
 * roots: the process names count as rows too (pdiff --report, which may
 * compare a stream with folded text, whose root frames are rows). */
static void compute(struct sp_agg *a, uint32_t thread, int roots, struct fstats *fs)
{
	memset(fs, 0, sizeof *fs);
	sp_u64map_init(&fs->map);
	uint32_t *memo = NULL, *frames = NULL;
	size_t nmemo = 0, capf = 0;
	struct sp_buf b = SP_BUF_INIT;
	for (size_t i = 0; i < a->n; i++) {
		uint32_t t, node;
		const double *v = sp_agg_get(a, i, &t, &node);
		if (thread != UINT32_MAX && t != thread)
			continue;
		for (int c = 0; c < a->ncols; c++)
			fs->total[c] += v[c];
		if (roots && t && thread == UINT32_MAX) {
			struct fstat *f = fstat_get(fs, root_name(a, t, &b));
			if (f->seen != i + 1) {
				f->seen = (uint32_t)(i + 1);
				for (int c = 0; c < a->ncols; c++)
					f->total[c] += v[c];
			}
		}
		uint32_t d = sp_node_frames(a->p, node, &frames, &capf);
		for (uint32_t j = 0; j < d; j++) {
			struct fstat *f = fstat_get(fs, display_name(a->p, a->lines, frames[j], &memo, &nmemo, &b));
			if (f->seen != i + 1) {
				f->seen = (uint32_t)(i + 1);
				for (int c = 0; c < a->ncols; c++)
					f->total[c] += v[c];
			}
			if (j + 1 == d)
				for (int c = 0; c < a->ncols; c++)
					f->self[c] += v[c];
		}
	}
	free(memo);
	free(frames);
	sp_buf_release(&b);
}

static void fstats_release(struct fstats *fs)
{
	free(fs->f);
	sp_u64map_release(&fs->map);
}

static int sort_total;
static int cmp_fstat(const void *x, const void *y)
{
	const struct fstat *a = x, *b = y;
	double ka = sort_total ? a->total[0] : a->self[0], kb = sort_total ? b->total[0] : b->self[0];
	if (ka != kb)
		return ka > kb ? -1 : 1;
	double la = sort_total ? a->self[0] : a->total[0], lb = sort_total ? b->self[0] : b->total[0];
	if (la != lb)
		return la > lb ? -1 : 1;
	return a->name < b->name ? -1 : a->name > b->name;
}

static double pct(double v, double total) { return total > 0 ? 100.0 * v / total : 0; }

static int flush(struct sp_buf *b, FILE *out, struct sp_err *err)
{
	if (b->len && fwrite(b->p, 1, b->len, out) != b->len) {
		sp_err_set(err, "write error: %s", strerror(errno));
		return -1;
	}
	b->len = 0;
	return 0;
}

/* Thread names present, in order of first appearance; 0 = no thread. */
static uint32_t *thread_list(struct sp_agg *a, size_t *n)
{
	struct sp_u64map seen;
	sp_u64map_init(&seen);
	uint32_t *v = NULL;
	*n = 0;
	for (size_t i = 0; i < a->n; i++) {
		uint32_t t = (uint32_t)(a->keys[i] >> 32);
		int found;
		sp_u64map_slot(&seen, t, &found);
		if (!found) {
			v = sp_xrealloc(v, (*n + 1) * sizeof *v);
			v[(*n)++] = t;
		}
	}
	sp_u64map_release(&seen);
	return v;
}


/* A table cell: time as ms or s, a count as a plain number (the heading
 * line says "samples"). */
static void add_cell(struct sp_buf *b, double v, const char *unit)
{
	if (sp_unit_is_time(unit))
		sp_buf_addvalue(b, v, unit);
	else
		sp_buf_addnum(b, v);
}

/* Rows f[0..rows) of a table: text, TSV (after prefix, which ends in a
 * tab or is empty) or the JSON array's objects. */
static void add_rows(struct sp_agg *a, const struct sp_report_opts *o, const struct fstat *f, size_t rows,
		     double total, const char *unit, const char *prefix, struct sp_buf *b)
{
	for (size_t i = 0; i < rows; i++) {
		double sp = pct(f[i].self[0], total), tp = pct(f[i].total[0], total);
		const char *name = sp_str(a->p, f[i].name);
		if (o->format == SP_REPORT_TEXT) {
			struct sp_buf n1 = SP_BUF_INIT, n2 = SP_BUF_INIT;
			add_cell(&n1, f[i].self[0], unit);
			add_cell(&n2, f[i].total[0], unit);
			sp_buf_addf(b, "%7.2f%% %12s %7.2f%% %12s  %s\n", sp, sp_buf_cstr(&n1), tp, sp_buf_cstr(&n2),
				    name);
			sp_buf_release(&n1);
			sp_buf_release(&n2);
		} else if (o->format == SP_REPORT_TSV) {
			buf_adds(b, prefix);
			sp_buf_addnum(b, f[i].self[0]);
			sp_buf_addf(b, "\t%.4f\t", sp);
			sp_buf_addnum(b, f[i].total[0]);
			sp_buf_addf(b, "\t%.4f\t%s\n", tp, name);
		} else {
			buf_adds(b, i ? ",\n{\"name\":" : "\n{\"name\":");
			sp_buf_add_json_str(b, name);
			buf_adds(b, ",\"self\":");
			sp_buf_addnum(b, f[i].self[0]);
			sp_buf_addf(b, ",\"self_share\":%.6g,\"total\":", sp / 100);
			sp_buf_addnum(b, f[i].total[0]);
			sp_buf_addf(b, ",\"total_share\":%.6g}", tp / 100);
		}
	}
}

static void top_table(struct sp_agg *a, const struct sp_report_opts *o, uint32_t thread, struct sp_buf *b,
		      int first)
{
	struct fstats fs;
	compute(a, thread, 0, &fs);
	sort_total = o->sort_total;
	if (fs.n)
		sp_sort(fs.f, fs.n, sizeof *fs.f, cmp_fstat);
	size_t rows = o->top && o->top < fs.n ? o->top : fs.n;
	const char *unit = o->unit ? o->unit : "samples";
	struct sp_buf prefix = SP_BUF_INIT;
	if (o->format == SP_REPORT_TEXT) {
		if (thread != UINT32_MAX)
			sp_buf_addf(b, "%sthread %s\n", first ? "" : "\n", thread ? thread_name(a, thread) : "(none)");
		buf_adds(b, "total ");
		sp_buf_addvalue(b, fs.total[0], unit);
		sp_buf_addf(b, ", %zu functions\n", fs.n);
		if (o->cpu_counted_ns > 0 && first)
			sp_buf_addf(b, "CPU time sampled %.3f s of %.3f s counted by the kernel (%.1f %%)\n",
				    o->cpu_sampled_ns / 1e9, o->cpu_counted_ns / 1e9,
				    100 * o->cpu_sampled_ns / o->cpu_counted_ns);
		sp_buf_addf(b, "%8s %12s %8s %12s  %s\n", "self%", "self", "total%", "total", "function");
	} else if (o->format == SP_REPORT_TSV) {
		if (thread != UINT32_MAX)
			sp_buf_addf(&prefix, "%s\t", thread ? thread_name(a, thread) : "");
	} else {
		buf_adds(b, first ? "" : ",\n");
		buf_adds(b, "{");
		if (thread != UINT32_MAX) {
			buf_adds(b, "\"thread\":");
			sp_buf_add_json_str(b, thread_name(a, thread));
			buf_adds(b, ",");
		}
		buf_adds(b, "\"unit\":");
		sp_buf_add_json_str(b, unit);
		buf_adds(b, ",\"total\":");
		sp_buf_addnum(b, fs.total[0]);
		if (o->cpu_counted_ns > 0) {
			buf_adds(b, ",\"cpu_sampled_ns\":");
			sp_buf_addnum(b, o->cpu_sampled_ns);
			buf_adds(b, ",\"cpu_counted_ns\":");
			sp_buf_addnum(b, o->cpu_counted_ns);
		}
		buf_adds(b, ",\"functions\":[");
	}
	add_rows(a, o, fs.f, rows, fs.total[0], unit, sp_buf_cstr(&prefix), b);
	if (o->format == SP_REPORT_JSON)
		buf_adds(b, "]}");
	sp_buf_release(&prefix);
	fstats_release(&fs);
}

int sp_report_top(struct sp_agg *a, const struct sp_report_opts *o, FILE *out, struct sp_err *err)
{
	struct sp_buf b = SP_BUF_INIT;
	if (o->format == SP_REPORT_TSV)
		sp_buf_addf(&b, "%sself\tself_pct\ttotal\ttotal_pct\tfunction\n", o->per_thread ? "thread\t" : "");
	if (o->format == SP_REPORT_JSON)
		buf_adds(&b, o->per_thread ? "[" : "");
	if (o->per_thread) {
		size_t n;
		uint32_t *ts = thread_list(a, &n);
		for (size_t i = 0; i < n; i++)
			top_table(a, o, ts[i], &b, i == 0);
		free(ts);
	} else {
		top_table(a, o, UINT32_MAX, &b, 1);
	}
	if (o->format == SP_REPORT_JSON)
		buf_adds(&b, o->per_thread ? "]\n" : "\n");
	int rc = flush(&b, out, err);
	sp_buf_release(&b);
	return rc;
}

/* ---- callers and callees of a function ---- */

/* The rows of one focus function (string id): its direct callers (up = 1)
 * or callees, each counted once per stack however often the pair recurs
 * in it.  A caller's self is the weight of the stacks where the focus is
 * the leaf under it; a callee's, where the callee is the leaf under the
 * focus.  The caller of a root frame is "(root)" (folded text with no
 * process name). */
static void peek_rows(struct sp_agg *a, uint32_t focus, int up, struct fstats *rows)
{
	memset(rows, 0, sizeof *rows);
	sp_u64map_init(&rows->map);
	uint32_t *memo = NULL, *frames = NULL, *names = NULL;
	size_t nmemo = 0, capf = 0, capn = 0;
	struct sp_buf b = SP_BUF_INIT;
	uint32_t root = sp_str_intern(a->p, "(root)", 6);
	for (size_t i = 0; i < a->n; i++) {
		uint32_t t, node;
		const double *v = sp_agg_get(a, i, &t, &node);
		uint32_t d = sp_node_frames(a->p, node, &frames, &capf);
		if (d + 2 > capn) {
			capn = d + 2;
			names = sp_xrealloc(names, capn * sizeof *names);
		}
		size_t n = 0;
		names[n++] = t ? root_name(a, t, &b) : root;
		for (uint32_t j = 0; j < d; j++)
			names[n++] = display_name(a->p, a->lines, frames[j], &memo, &nmemo, &b);
		for (size_t k = t ? 0 : 1; k < n; k++) {
			if (names[k] != focus || (up ? !k : k + 1 == n))
				continue;
			size_t other = up ? k - 1 : k + 1;
			struct fstat *f = fstat_get(rows, names[other]);
			if (f->seen != i + 1) {
				f->seen = (uint32_t)(i + 1);
				f->total[0] += v[0];
			}
			if (other + 1 == n || k + 1 == n)
				f->self[0] += v[0];
		}
	}
	free(memo);
	free(frames);
	free(names);
	sp_buf_release(&b);
}

int sp_report_peek(struct sp_agg *a, const struct sp_report_opts *o, const char *pattern, int callers,
		   int callees, FILE *out, struct sp_err *err)
{
	struct fstats fs;
	compute(a, UINT32_MAX, 0, &fs);
	/* The function named pattern; else every one it matches as an
	 * extended regular expression. */
	uint32_t *foci = sp_xmalloc((fs.n ? fs.n : 1) * sizeof *foci);
	size_t nf = 0;
	for (size_t i = 0; i < fs.n; i++)
		if (!strcmp(sp_str(a->p, fs.f[i].name), pattern))
			foci[nf++] = (uint32_t)i;
	if (!nf) {
		regex_t re;
		int e = regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB);
		if (e) {
			char m[128];
			regerror(e, &re, m, sizeof m);
			free(foci);
			fstats_release(&fs);
			return sp_err_set(err, "'%s': not a function name nor a regular expression: %s", pattern, m);
		}
		for (size_t i = 0; i < fs.n; i++)
			if (!regexec(&re, sp_str(a->p, fs.f[i].name), 0, NULL, 0))
				foci[nf++] = (uint32_t)i;
		regfree(&re);
	}
	if (!nf) {
		sp_err_set(err, "no function matches '%s' (of %zu functions)", pattern, fs.n);
		err->code = SP_ERR_NOMATCH;
		free(foci);
		fstats_release(&fs);
		return -1;
	}
	/* foci by total weight, as the table orders by total */
	sort_total = 1;
	struct fstat *ff = sp_xmalloc(nf * sizeof *ff);
	for (size_t i = 0; i < nf; i++)
		ff[i] = fs.f[foci[i]];
	sp_sort(ff, nf, sizeof *ff, cmp_fstat);
	const char *unit = o->unit ? o->unit : "samples";
	struct sp_buf b = SP_BUF_INIT, prefix = SP_BUF_INIT;
	if (o->format == SP_REPORT_TEXT) {
		buf_adds(&b, "total ");
		sp_buf_addvalue(&b, fs.total[0], unit);
		sp_buf_addf(&b, ", %zu function%s\n", fs.n, fs.n == 1 ? "" : "s");
	} else if (o->format == SP_REPORT_TSV) {
		buf_adds(&b, "of\trelation\tself\tself_pct\ttotal\ttotal_pct\tfunction\n");
	} else {
		buf_adds(&b, "{\"unit\":");
		sp_buf_add_json_str(&b, unit);
		buf_adds(&b, ",\"total\":");
		sp_buf_addnum(&b, fs.total[0]);
		buf_adds(&b, ",\"functions\":[");
	}
	for (size_t i = 0; i < nf; i++) {
		const char *fname = sp_str(a->p, ff[i].name);
		if (o->format == SP_REPORT_TEXT) {
			sp_buf_addf(&b, "\n%8s %12s %8s %12s  %s\n", "self%", "self", "total%", "total", "function");
			add_rows(a, o, &ff[i], 1, fs.total[0], unit, "", &b);
		} else if (o->format == SP_REPORT_JSON) {
			buf_adds(&b, i ? ",\n{\"name\":" : "\n{\"name\":");
			sp_buf_add_json_str(&b, fname);
			buf_adds(&b, ",\"self\":");
			sp_buf_addnum(&b, ff[i].self[0]);
			buf_adds(&b, ",\"total\":");
			sp_buf_addnum(&b, ff[i].total[0]);
		}
		for (int up = 1; up >= 0; up--) {
			if (up ? !callers : !callees)
				continue;
			struct fstats rows;
			peek_rows(a, ff[i].name, up, &rows);
			sort_total = o->sort_total;
			if (rows.n)
				sp_sort(rows.f, rows.n, sizeof *rows.f, cmp_fstat);
			size_t nr = o->top && o->top < rows.n ? o->top : rows.n;
			const char *rel = up ? "callers" : "callees";
			if (o->format == SP_REPORT_TEXT) {
				sp_buf_addf(&b, "  %s of %s: %zu%s\n", rel, fname, rows.n,
					    rows.n ? "" : up ? " (it is only a root)" : " (it is only a leaf)");
			} else if (o->format == SP_REPORT_TSV) {
				sp_buf_reset(&prefix);
				sp_buf_addf(&prefix, "%s\t%s\t", fname, up ? "caller" : "callee");
			} else {
				sp_buf_addf(&b, ",\"%s\":[", rel);
			}
			add_rows(a, o, rows.f, nr, fs.total[0], unit, sp_buf_cstr(&prefix), &b);
			if (o->format == SP_REPORT_TEXT && nr < rows.n)
				sp_buf_addf(&b, "  (%zu more; -n 0 shows all)\n", rows.n - nr);
			if (o->format == SP_REPORT_JSON)
				buf_adds(&b, "]");
			fstats_release(&rows);
		}
		if (o->format == SP_REPORT_JSON)
			buf_adds(&b, "}");
	}
	if (o->format == SP_REPORT_JSON)
		buf_adds(&b, "]}\n");
	int rc = flush(&b, out, err);
	sp_buf_release(&b);
	sp_buf_release(&prefix);
	free(ff);
	free(foci);
	fstats_release(&fs);
	return rc;
}

/* ---- the call tree ---- */

struct tnode {
	uint32_t name;
	uint32_t child, next; /* first child, next sibling (index + 1) */
	double total, self;
};

struct tree {
	struct tnode *v;
	size_t n, cap;
	struct sp_u64map map; /* parent << 32 | name -> index + 1 */
};

static uint32_t tree_child(struct tree *t, uint32_t parent, uint32_t name)
{
	int found;
	uint32_t *slot = sp_u64map_slot(&t->map, (uint64_t)parent << 32 | name, &found);
	if (found)
		return *slot - 1;
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 1024;
		t->v = sp_xrealloc(t->v, t->cap * sizeof *t->v);
	}
	uint32_t id = (uint32_t)t->n++;
	t->v[id] = (struct tnode){ name, 0, t->v[parent].child, 0, 0 };
	t->v[parent].child = id + 1;
	*slot = id + 1;
	return id;
}

static struct tree *cur_tree; /* for qsort's comparison */

static int cmp_tnode_total(const void *x, const void *y)
{
	const struct tnode *a = &cur_tree->v[*(const uint32_t *)x];
	const struct tnode *b = &cur_tree->v[*(const uint32_t *)y];
	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	return a->name < b->name ? -1 : a->name > b->name;
}

static void tree_print(struct sp_agg *a, struct tree *t, uint32_t id, unsigned depth, double total,
		       const struct sp_report_opts *o, struct sp_buf *b, int *first)
{
	struct tnode *n = &t->v[id];
	if (id) { /* node 0 is the invisible root */
		if (o->format == SP_REPORT_TEXT) {
			sp_buf_addf(b, "%7.2f%% %7.2f%%  ", pct(n->total, total), pct(n->self, total));
			for (unsigned i = 1; i < depth; i++)
				buf_adds(b, "  ");
			buf_adds(b, sp_str(a->p, n->name));
			sp_buf_addc(b, '\n');
		} else if (o->format == SP_REPORT_TSV) {
			sp_buf_addf(b, "%u\t", depth);
			sp_buf_addnum(b, n->total);
			sp_buf_addf(b, "\t%.4f\t", pct(n->total, total));
			sp_buf_addnum(b, n->self);
			sp_buf_addf(b, "\t%.4f\t%s\n", pct(n->self, total), sp_str(a->p, n->name));
		} else {
			buf_adds(b, *first ? "\n{\"name\":" : ",\n{\"name\":");
			*first = 0;
			sp_buf_add_json_str(b, sp_str(a->p, n->name));
			buf_adds(b, ",\"total\":");
			sp_buf_addnum(b, n->total);
			buf_adds(b, ",\"self\":");
			sp_buf_addnum(b, n->self);
			buf_adds(b, ",\"children\":[");
		}
	}
	size_t nc = 0;
	for (uint32_t c = n->child; c; c = t->v[c - 1].next)
		nc++;
	uint32_t *kids = sp_xmalloc((nc ? nc : 1) * sizeof *kids);
	nc = 0;
	for (uint32_t c = n->child; c; c = t->v[c - 1].next)
		if (pct(t->v[c - 1].total, total) >= o->min_share)
			kids[nc++] = c - 1;
	cur_tree = t;
	sp_sort(kids, nc, sizeof *kids, cmp_tnode_total);
	int kfirst = 1;
	for (size_t i = 0; i < nc; i++)
		tree_print(a, t, kids[i], depth + 1, total, o, b, id ? &kfirst : first);
	free(kids);
	if (id && o->format == SP_REPORT_JSON)
		buf_adds(b, "]}");
}

int sp_report_tree(struct sp_agg *a, const struct sp_report_opts *o, FILE *out, struct sp_err *err)
{
	struct tree t = { 0 };
	sp_u64map_init(&t.map);
	t.cap = 1024;
	t.v = sp_xmalloc(t.cap * sizeof *t.v);
	t.v[0] = (struct tnode){ 0, 0, 0, 0, 0 };
	t.n = 1;
	uint32_t *memo = NULL, *frames = NULL;
	size_t nmemo = 0, capf = 0;
	struct sp_buf b = SP_BUF_INIT;
	double total = 0;
	for (size_t i = 0; i < a->n; i++) {
		uint32_t th, node;
		const double *v = sp_agg_get(a, i, &th, &node);
		total += v[0];
		uint32_t cur = 0;
		t.v[0].total += v[0];
		if (th && o->per_thread) {
			const char *name = thread_name(a, th);
			cur = tree_child(&t, cur, sp_str_intern(a->p, name, strlen(name)));
			t.v[cur].total += v[0];
		}
		uint32_t d = sp_node_frames(a->p, node, &frames, &capf);
		for (uint32_t j = 0; j < d; j++) {
			cur = tree_child(&t, cur, display_name(a->p, a->lines, frames[j], &memo, &nmemo, &b));
			t.v[cur].total += v[0];
		}
		t.v[cur].self += v[0];
	}
	sp_buf_reset(&b);
	int first = 1;
	if (o->format == SP_REPORT_TEXT) {
		buf_adds(&b, "total ");
		sp_buf_addvalue(&b, total, o->unit ? o->unit : "samples");
		sp_buf_addf(&b, "\n%8s %8s  %s\n", "total%", "self%", "stack");
	} else if (o->format == SP_REPORT_TSV) {
		buf_adds(&b, "depth\ttotal\ttotal_pct\tself\tself_pct\tfunction\n");
	} else {
		buf_adds(&b, "{\"unit\":");
		sp_buf_add_json_str(&b, o->unit ? o->unit : "samples");
		buf_adds(&b, ",\"total\":");
		sp_buf_addnum(&b, total);
		buf_adds(&b, ",\"children\":[");
	}
	tree_print(a, &t, 0, 0, total, o, &b, &first);
	if (o->format == SP_REPORT_JSON)
		buf_adds(&b, "]}\n");
	int rc = flush(&b, out, err);
	sp_buf_release(&b);
	free(memo);
	free(frames);
	free(t.v);
	sp_u64map_release(&t.map);
	return rc;
}

/* ---- what changed ---- */

struct change {
	size_t i;
	double dself, dtotal, key;
};

static int cmp_change(const void *x, const void *y)
{
	const struct change *a = x, *b = y;
	if (a->key != b->key)
		return a->key > b->key ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

static struct change *changes(struct fstats *fs)
{
	struct change *ch = sp_xmalloc((fs->n ? fs->n : 1) * sizeof *ch);
	for (size_t i = 0; i < fs->n; i++) {
		const struct fstat *f = &fs->f[i];
		ch[i].i = i;
		ch[i].dself = pct(f->self[1], fs->total[1]) - pct(f->self[0], fs->total[0]);
		ch[i].dtotal = pct(f->total[1], fs->total[1]) - pct(f->total[0], fs->total[0]);
		ch[i].key = fmax(fabs(ch[i].dself), fabs(ch[i].dtotal));
	}
	sp_sort(ch, fs->n, sizeof *ch, cmp_change);
	return ch;
}

double sp_report_max_change(struct sp_agg *a)
{
	struct fstats fs;
	compute(a, UINT32_MAX, 1, &fs);
	struct change *ch = changes(&fs);
	double m = fs.n ? ch[0].key : 0;
	free(ch);
	fstats_release(&fs);
	return m;
}

int sp_report_diff(struct sp_agg *a, const struct sp_report_opts *o, FILE *out, double *max_change,
		   struct sp_err *err)
{
	struct fstats fs;
	compute(a, UINT32_MAX, 1, &fs);
	struct change *ch = changes(&fs);
	if (max_change)
		*max_change = fs.n ? ch[0].key : 0;
	size_t rows = o->top && o->top < fs.n ? o->top : fs.n;
	struct sp_buf b = SP_BUF_INIT;
	const char *unit = o->unit ? o->unit : "samples";
	if (o->format == SP_REPORT_TEXT) {
		buf_adds(&b, "a: ");
		sp_buf_addvalue(&b, fs.total[0], unit);
		buf_adds(&b, ", b: ");
		sp_buf_addvalue(&b, fs.total[1], o->unit_b ? o->unit_b : unit);
		buf_adds(&b, "; shares in percent, changes in percentage points (b - a)\n");
		sp_buf_addf(&b, "%8s %8s %8s %8s %8s %8s  %s\n", "self a", "self b", "change", "total a", "total b",
			    "change", "function");
	} else if (o->format == SP_REPORT_TSV) {
		buf_adds(&b, "self_a_pct\tself_b_pct\tself_change\ttotal_a_pct\ttotal_b_pct\ttotal_change\tfunction\n");
	} else {
		buf_adds(&b, "{\"unit\":");
		sp_buf_add_json_str(&b, unit);
		buf_adds(&b, ",\"total_a\":");
		sp_buf_addnum(&b, fs.total[0]);
		buf_adds(&b, ",\"total_b\":");
		sp_buf_addnum(&b, fs.total[1]);
		buf_adds(&b, ",\"functions\":[");
	}
	for (size_t r = 0; r < rows; r++) {
		const struct fstat *f = &fs.f[ch[r].i];
		double sa = pct(f->self[0], fs.total[0]), sb = pct(f->self[1], fs.total[1]);
		double ta = pct(f->total[0], fs.total[0]), tb = pct(f->total[1], fs.total[1]);
		const char *name = sp_str(a->p, f->name);
		if (o->format == SP_REPORT_TEXT)
			sp_buf_addf(&b, "%7.2f%% %7.2f%% %+8.2f %7.2f%% %7.2f%% %+8.2f  %s\n", sa, sb, ch[r].dself, ta, tb,
				    ch[r].dtotal, name);
		else if (o->format == SP_REPORT_TSV)
			sp_buf_addf(&b, "%.4f\t%.4f\t%+.4f\t%.4f\t%.4f\t%+.4f\t%s\n", sa, sb, ch[r].dself, ta, tb,
				    ch[r].dtotal, name);
		else {
			buf_adds(&b, r ? ",\n{\"name\":" : "\n{\"name\":");
			sp_buf_add_json_str(&b, name);
			sp_buf_addf(&b, ",\"self_a\":%.6g,\"self_b\":%.6g,\"self_change\":%.6g,\"total_a\":%.6g,"
					"\"total_b\":%.6g,\"total_change\":%.6g}",
				    sa / 100, sb / 100, ch[r].dself / 100, ta / 100, tb / 100, ch[r].dtotal / 100);
		}
	}
	if (o->format == SP_REPORT_JSON)
		buf_adds(&b, "]}\n");
	int rc = flush(&b, out, err);
	sp_buf_release(&b);
	free(ch);
	fstats_release(&fs);
	return rc;
}
