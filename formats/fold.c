/* fold.c — aggregation by stack and folded-text output. */
#include <ctype.h>
#include "fold.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

struct sp_fold {
	struct sp_sink sink; /* first: the sink callbacks cast back to us */
	struct sp_profile *p;
	struct sp_fold_opts o;
	const char *value;     /* sp_fold_set_value */
	struct sp_u64map map;  /* (label frame << 32 | node) -> entry index + 1 */
	uint64_t *keys;        /* per entry */
	double *vals;          /* per entry, nvals each */
	size_t n, cap;
	int nvals;
	struct sp_label_cache labels;
	uint64_t samples;
	int lines; /* --lines: "func (file:line)" */
	struct sp_fold **adopted; /* written with this one (sp_fold_adopt) */
	struct sp_profile **adopted_p;
	size_t nadopted;
};

void sp_fold_set_lines(struct sp_fold *f, int lines) { f->lines = lines; }

static int fold_sample(struct sp_sink *s, struct sp_profile *p, const struct sp_sample *smp, struct sp_err *err);

struct sp_fold *sp_fold_new(struct sp_profile *p, const struct sp_fold_opts *o)
{
	struct sp_fold *f = sp_xcalloc(1, sizeof *f);
	f->sink.sample = fold_sample;
	f->p = p;
	if (o)
		f->o = *o;
	f->labels.group = !f->o.each_thread;
	sp_u64map_init(&f->map);
	return f;
}

void sp_fold_free(struct sp_fold *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->nadopted; i++) {
		sp_fold_free(f->adopted[i]);
		sp_profile_free(f->adopted_p[i]);
	}
	free(f->adopted);
	free(f->adopted_p);
	sp_u64map_release(&f->map);
	free(f->keys);
	free(f->vals);
	sp_label_cache_release(&f->labels);
	free(f);
}

struct sp_sink *sp_fold_sink(struct sp_fold *f) { return &f->sink; }
uint64_t sp_fold_samples(const struct sp_fold *f)
{
	uint64_t n = f->samples;
	for (size_t i = 0; i < f->nadopted; i++)
		n += sp_fold_samples(f->adopted[i]);
	return n;
}

uint64_t sp_fold_stacks(const struct sp_fold *f)
{
	uint64_t n = f->n;
	for (size_t i = 0; i < f->nadopted; i++)
		n += sp_fold_stacks(f->adopted[i]);
	return n;
}

void sp_fold_adopt(struct sp_fold *dst, struct sp_fold *src, struct sp_profile *srcp)
{
	size_t n = dst->nadopted + 1 + src->nadopted;
	dst->adopted = sp_xrealloc(dst->adopted, n * sizeof *dst->adopted);
	dst->adopted_p = sp_xrealloc(dst->adopted_p, n * sizeof *dst->adopted_p);
	dst->adopted[dst->nadopted] = src;
	dst->adopted_p[dst->nadopted++] = srcp;
	/* src's own adopted folds become dst's: the list stays flat */
	for (size_t i = 0; i < src->nadopted; i++) {
		dst->adopted[dst->nadopted] = src->adopted[i];
		dst->adopted_p[dst->nadopted++] = src->adopted_p[i];
	}
	src->nadopted = 0;
}

int sp_thread_group(const char *name, struct sp_buf *out)
{
	int changed = 0;
	for (const char *ch = name; *ch;) {
		const char *e = ch;
		/* after a word only: ":-1" (perf's comm of a task it never
		 * named, pid -1) is not a numbered name */
		if ((*ch == '-' || *ch == '_') && ch > name && isalnum((unsigned char)ch[-1]) && ch[1] >= '0' &&
		    ch[1] <= '9') {
			for (e = ch + 1; *e >= '0' && *e <= '9'; e++)
				;
			if (!*e || *e == '-' || *e == '_' || *e == ' ' || *e == '(') {
				sp_buf_addc(out, *ch);
				sp_buf_addc(out, 'N');
				changed = 1;
				ch = e;
				continue;
			}
		}
		sp_buf_addc(out, *ch++);
	}
	sp_buf_cstr(out);
	return changed;
}

uint32_t sp_label_frame(struct sp_label_cache *c, struct sp_profile *p, uint32_t thread, enum sp_fold_label label)
{
	if (!thread || label == SP_LABEL_NONE)
		return 0;
	if (thread >= c->n) {
		size_t n = c->n ? c->n : 64;
		while (n <= thread)
			n *= 2;
		c->frame_of = sp_xrealloc(c->frame_of, n * sizeof *c->frame_of);
		memset(c->frame_of + c->n, 0, (n - c->n) * sizeof *c->frame_of);
		c->n = n;
	}
	if (c->frame_of[thread])
		return c->frame_of[thread] - 1;
	const struct sp_thread *t = sp_thread_get(p, thread);
	struct sp_buf b = SP_BUF_INIT, g = SP_BUF_INIT;
	const char *name = sp_str(p, t->name);
	if (c->group && label == SP_LABEL_COMM && sp_thread_group(name, &g))
		name = sp_buf_cstr(&g);
	for (const char *ch = name; *ch; ch++)
		sp_buf_addc(&b, *ch == ' ' ? '_' : *ch);
	sp_buf_release(&g);
	if (label >= SP_LABEL_PID) {
		sp_buf_addc(&b, '-');
		if (t->pid >= 0)
			sp_buf_addi64(&b, t->pid);
		else
			sp_buf_addc(&b, '?');
	}
	if (label == SP_LABEL_TID) {
		sp_buf_addc(&b, '/');
		sp_buf_addi64(&b, t->tid);
	}
	uint32_t fr = sp_frame_named(p, b.p ? b.p : "", b.len, SP_KIND_SYNTHETIC);
	sp_buf_release(&b);
	c->frame_of[thread] = fr + 1;
	return fr;
}

void sp_label_cache_release(struct sp_label_cache *c)
{
	free(c->frame_of);
	c->frame_of = NULL;
	c->n = 0;
}

static double *entry(struct sp_fold *f, uint64_t key)
{
	int found;
	uint32_t *slot = sp_u64map_slot(&f->map, key, &found);
	if (found)
		return f->vals + (size_t)(*slot - 1) * (size_t)f->nvals;
	if (f->n == f->cap) {
		f->cap = f->cap ? f->cap * 2 : 1024;
		f->keys = sp_xrealloc(f->keys, f->cap * sizeof *f->keys);
		f->vals = sp_xrealloc(f->vals, f->cap * (size_t)f->nvals * sizeof *f->vals);
	}
	f->keys[f->n] = key;
	double *v = f->vals + f->n * (size_t)f->nvals;
	memset(v, 0, (size_t)f->nvals * sizeof *v);
	*slot = (uint32_t)++f->n;
	return v;
}

static int fold_sample(struct sp_sink *s, struct sp_profile *p, const struct sp_sample *smp, struct sp_err *err)
{
	struct sp_fold *f = (struct sp_fold *)s;
	if (!f->nvals) {
		f->nvals = sp_profile_nvalues(p);
		if (f->nvals < 1)
			f->nvals = 1;
	}
	uint64_t key = ((uint64_t)sp_label_frame(&f->labels, f->p, smp->thread, f->o.label) << 32) | smp->stack;
	double *v = entry(f, key);
	for (int i = 0; i < f->nvals; i++)
		v[i] += smp->values[i];
	f->samples++;
	return 0;
}

void sp_fold_frame_name(const struct sp_profile *p, uint32_t frame, const struct sp_fold_opts *o,
			struct sp_buf *out)
{
	sp_fold_frame_name_lines(p, frame, o, 0, out);
}

void sp_fold_frame_name_lines(const struct sp_profile *p, uint32_t frame, const struct sp_fold_opts *o, int lines,
			      struct sp_buf *out)
{
	const struct sp_frame *fr = sp_frame_get(p, frame);
	const char *name = sp_str(p, fr->name);
	size_t n = sp_str_len(p, fr->name);
	sp_buf_add(out, name, n);
	if (fr->file && (fr->kind == SP_KIND_PYTHON || lines)) {
		/* py-spy's spelling: "function (file.py:LINE)", also for
		 * native frames with --lines */
		sp_buf_add(out, " (", 2);
		sp_buf_adds(out, sp_str(p, fr->file));
		if (fr->line) {
			sp_buf_addc(out, ':');
			sp_buf_addu64(out, fr->line);
		}
		sp_buf_addc(out, ')');
		return;
	}
	/* Inlined frames are not suffixed here: readers name them as the peers
	 * do ("a->b" chains get "_[i]", perf's "(inlined)" frames stay bare). */
	const char *suffix = NULL;
	if (fr->kind == SP_KIND_KERNEL && o->annotate_kernel)
		suffix = "_[k]";
	else if (fr->kind == SP_KIND_JIT && o->annotate_jit)
		suffix = "_[j]";
	/* Names read from folded text may carry the suffix already. */
	if (suffix && !(n >= 4 && !memcmp(name + n - 4, suffix, 4)) &&
	    (suffix[2] == 'k' || !memmem(name, n, suffix, 4)))
		sp_buf_add(out, suffix, 4);
}

/* ---- merging folds of different profiles ---- */

struct remap {
	struct sp_profile *from, *to;
	uint32_t *frames; /* from-id -> to-id + 1 */
	uint32_t *nodes;
};

static uint32_t remap_str(struct remap *r, uint32_t s)
{
	return s ? sp_str_intern(r->to, sp_str(r->from, s), sp_str_len(r->from, s)) : 0;
}

static uint32_t remap_frame(struct remap *r, uint32_t id)
{
	if (r->frames[id])
		return r->frames[id] - 1;
	struct sp_frame f = *sp_frame_get(r->from, id);
	f.name = remap_str(r, f.name);
	f.module = remap_str(r, f.module);
	f.file = remap_str(r, f.file);
	uint32_t to = sp_frame_intern(r->to, &f);
	r->frames[id] = to + 1;
	return to;
}

static uint32_t remap_node(struct remap *r, uint32_t id)
{
	if (!id)
		return 0;
	if (r->nodes[id])
		return r->nodes[id] - 1;
	const struct sp_node *n = sp_node_get(r->from, id);
	uint32_t frame = n->frame;
	uint32_t parent = remap_node(r, n->parent);
	uint32_t to = sp_node_intern(r->to, parent, remap_frame(r, frame));
	r->nodes[id] = to + 1;
	return to;
}

void sp_fold_merge(struct sp_fold *dst, struct sp_fold *src)
{
	for (size_t i = 0; i < src->nadopted; i++)
		sp_fold_merge(dst, src->adopted[i]);
	if (!src->n)
		return;
	if (!dst->nvals)
		dst->nvals = src->nvals;
	struct remap r = { src->p, dst->p, NULL, NULL };
	r.frames = sp_xzalloc(sp_frame_count(src->p), sizeof *r.frames);
	r.nodes = sp_xzalloc(sp_node_count(src->p), sizeof *r.nodes);
	for (size_t i = 0; i < src->n; i++) {
		uint64_t k = src->keys[i];
		uint32_t label = (uint32_t)(k >> 32), node = (uint32_t)k;
		uint64_t nk = ((uint64_t)(label ? remap_frame(&r, label) : 0) << 32) | remap_node(&r, node);
		double *v = entry(dst, nk);
		const double *sv = src->vals + i * (size_t)src->nvals;
		for (int j = 0; j < dst->nvals && j < src->nvals; j++)
			v[j] += sv[j];
	}
	dst->samples += src->samples;
	free(r.frames);
	free(r.nodes);
}

/* ---- output ---- */

struct line {
	size_t off, len; /* stack text in the buffer */
	size_t entry;
};

/* Byte order, a prefix first. */
static int text_order(const char *a, size_t na, const char *b, size_t nb)
{
	int c = memcmp(a, b, na < nb ? na : nb);
	if (c)
		return c;
	return na < nb ? -1 : na > nb;
}

static int line_cmp(const void *a, const void *b, void *base)
{
	const struct line *x = a, *y = b;
	const char *t = base;
	return text_order(t + x->off, x->len, t + y->off, y->len);
}

/* Folded frame names made once per frame: [1] as stack frames are named
 * (with --lines), [0] as a thread label or root tag is (never with lines). */
struct name {
	uint32_t off, len; /* in text; len UINT32_MAX: not made yet */
};
struct names {
	const struct sp_profile *p;
	const struct sp_fold_opts *o;
	int lines;
	struct name *of[2];
	struct sp_buf text;
};

static void names_init(struct names *nm, const struct sp_profile *p, const struct sp_fold_opts *o, int lines)
{
	size_t n = sp_frame_count(p);
	nm->p = p;
	nm->o = o;
	nm->lines = lines;
	for (int k = 0; k < 1 + !!lines; k++) {
		nm->of[k] = sp_xmalloc((n ? n : 1) * sizeof *nm->of[k]);
		for (size_t i = 0; i < n; i++)
			nm->of[k][i].len = UINT32_MAX;
	}
	if (!lines)
		nm->of[1] = nm->of[0];
	sp_buf_init(&nm->text);
	sp_buf_grow(&nm->text, 1);
}

static void names_release(struct names *nm)
{
	if (nm->of[1] != nm->of[0])
		free(nm->of[1]);
	free(nm->of[0]);
	sp_buf_release(&nm->text);
}

static const struct name *name_of(struct names *nm, uint32_t frame, int as_stack)
{
	int lines = as_stack && nm->lines;
	struct name *n = &nm->of[lines][frame];
	if (n->len == UINT32_MAX) {
		n->off = (uint32_t)nm->text.len;
		sp_fold_frame_name_lines(nm->p, frame, nm->o, lines, &nm->text);
		n->len = (uint32_t)(nm->text.len - n->off);
	}
	return n;
}

/* One fold's stacks as text, sorted: what writing merges. */
struct rendered {
	struct sp_fold *f;
	char *text;
	struct line *lines;
	size_t n, at; /* lines; the next to write */
};

static void render(struct rendered *r)
{
	struct sp_fold *f = r->f;
	struct sp_profile *p = f->p;
	/* Every frame's folded name is made once (stacks share frames), and
	 * every node's text length is its parent's plus its own frame's, so
	 * the text of all stacks is allocated once at its exact size: grown
	 * by doubling, its copies were a fifth of pfold's page faults. */
	struct names nm;
	names_init(&nm, p, &f->o, f->lines);
	uint32_t nnodes = sp_node_count(p);
	uint64_t *node_len = sp_xmalloc((size_t)nnodes * sizeof *node_len);
	uint32_t *root_frame = sp_xmalloc((size_t)nnodes * sizeof *root_frame);
	node_len[0] = 0;
	root_frame[0] = 0;
	for (uint32_t id = 1; id < nnodes; id++) {
		/* a parent is always interned before its child */
		const struct sp_node *nd = sp_node_get(p, id);
		node_len[id] = (nd->parent ? node_len[nd->parent] + 1 : 0) + name_of(&nm, nd->frame, 1)->len;
		root_frame[id] = nd->parent ? root_frame[nd->parent] : nd->frame;
	}
	struct line *lines = sp_xmalloc((f->n ? f->n : 1) * sizeof *lines);
	size_t total = 0;
	for (size_t i = 0; i < f->n; i++) {
		uint32_t label = (uint32_t)(f->keys[i] >> 32), node = (uint32_t)f->keys[i];
		size_t len = node_len[node];
		if (label) {
			len += name_of(&nm, label, 0)->len + (node ? 1 : 0);
			/* a root tag is named as a label is (no --lines) */
			uint32_t rf = root_frame[node];
			if (node && sp_frame_get(p, rf)->kind == SP_KIND_SYNTHETIC)
				len = len - name_of(&nm, rf, 1)->len + name_of(&nm, rf, 0)->len;
		}
		lines[i] = (struct line){ total, len, i };
		total += len;
	}
	/* Allocated even when empty so that text is never NULL: when every
	 * stack folds to an empty line the offsets below still point into a
	 * buffer. */
	char *text = sp_xmalloc(total ? total : 1);
	uint32_t *frames = NULL;
	size_t capf = 0;
	for (size_t i = 0; i < f->n; i++) {
		uint32_t label = (uint32_t)(f->keys[i] >> 32), node = (uint32_t)f->keys[i];
		char *o = text + lines[i].off;
		uint32_t d = sp_node_frames(p, node, &frames, &capf);
		uint32_t j0 = 0;
		const struct name *n;
		if (label && d && sp_frame_get(p, frames[0])->kind == SP_KIND_SYNTHETIC) {
			/* a root tag (pmerge --tag) stays the root, above the thread */
			n = name_of(&nm, frames[0], 0);
			memcpy(o, nm.text.p + n->off, n->len);
			o += n->len;
			*o++ = ';';
			j0 = 1;
		}
		if (label) {
			n = name_of(&nm, label, 0);
			memcpy(o, nm.text.p + n->off, n->len);
			o += n->len;
		}
		for (uint32_t j = j0; j < d; j++) {
			if (label || j)
				*o++ = ';';
			n = name_of(&nm, frames[j], 1);
			memcpy(o, nm.text.p + n->off, n->len);
			o += n->len;
		}
	}
	free(frames);
	free(node_len);
	free(root_frame);
	names_release(&nm);
	if (f->n > 1)
		qsort_r(lines, f->n, sizeof *lines, line_cmp, text);
	r->text = text;
	r->lines = lines;
	r->n = f->n;
	r->at = 0;
}

static void *render_main(void *arg)
{
	render(arg);
	return NULL;
}

/* The next lines of a and b, compared. */
static int text_cmp(const struct rendered *a, const struct rendered *b)
{
	const struct line *x = &a->lines[a->at], *y = &b->lines[b->at];
	return text_order(a->text + x->off, x->len, b->text + y->off, y->len);
}

/* The folds adopted (sp_fold_adopt) are rendered each by a thread of its
 * own while the caller renders f, then merged line by line: a stack of
 * several folds, or text made equal by names, is one line whose values are
 * the sum.  The output is the same for any number of folds: the value
 * columns are f's, as sp_fold_merge keeps them (an adopted fold's columns
 * are added by index, a column it lacks counts 0). */
void sp_fold_set_value(struct sp_fold *f, const char *value) { f->value = value; }

int sp_fold_write(struct sp_fold *f, FILE *out, struct sp_err *err)
{
	struct sp_profile *p = f->p;
	int nvals = f->nvals;
	for (size_t i = 0; i < f->nadopted && !nvals; i++)
		nvals = f->adopted[i]->nvals;
	int two = nvals == 2 && sp_value_is_diff(p);
	int col = nvals ? sp_value_column(p, f->o.weight, err) : 0;
	if (col < 0)
		return -1;
	if (f->value) {
		/* A number and one column: pprof's reader kept the sample
		 * type of that index alone. */
		int kept = nvals == 1 && f->value[0] && strspn(f->value, "0123456789") == strlen(f->value);
		col = kept ? 0 : sp_value_option(p, "--value", f->value, err);
		if (col < 0)
			return -1;
	}
	int ca = two ? 0 : col, cb = two ? 1 : -1; /* the columns written */
	size_t k = 1 + f->nadopted;
	struct rendered *r = sp_xcalloc(k, sizeof *r);
	pthread_t *th = sp_xcalloc(k, sizeof *th);
	int *started = sp_xcalloc(k, sizeof *started);
	r[0].f = f;
	for (size_t i = 1; i < k; i++) {
		r[i].f = f->adopted[i - 1];
		started[i] = pthread_create(&th[i], NULL, render_main, &r[i]) == 0;
		if (!started[i])
			render(&r[i]);
	}
	render(&r[0]);
	for (size_t i = 1; i < k; i++)
		if (started[i])
			pthread_join(th[i], NULL);
	struct sp_buf ob = SP_BUF_INIT;
	int rc = 0;
	for (;;) {
		/* the smallest next line of all folds */
		struct rendered *m = NULL;
		for (size_t i = 0; i < k; i++)
			if (r[i].at < r[i].n && (!m || text_cmp(&r[i], m) < 0))
				m = &r[i];
		if (!m)
			break;
		const char *ref = m->text + m->lines[m->at].off;
		size_t reflen = m->lines[m->at].len;
		double a = 0, b = 0;
		for (size_t i = 0; i < k; i++) {
			struct rendered *q = &r[i];
			int qn = q->f->nvals;
			while (q->at < q->n && q->lines[q->at].len == reflen &&
			       !memcmp(q->text + q->lines[q->at].off, ref, reflen)) {
				const double *v = q->f->vals + q->lines[q->at].entry * (size_t)qn;
				if (ca < qn)
					a += v[ca];
				if (cb >= 0 && cb < qn)
					b += v[cb];
				q->at++;
			}
		}
		sp_buf_add(&ob, ref, reflen);
		sp_buf_addc(&ob, ' ');
		sp_buf_addnum(&ob, a);
		if (two) {
			sp_buf_addc(&ob, ' ');
			sp_buf_addnum(&ob, b);
		}
		sp_buf_addc(&ob, '\n');
		if (ob.len > (1 << 16)) {
			if (fwrite(ob.p, 1, ob.len, out) != ob.len) {
				rc = -1;
				break;
			}
			ob.len = 0;
		}
	}
	if (!rc && ob.len && fwrite(ob.p, 1, ob.len, out) != ob.len)
		rc = -1;
	if (rc)
		sp_err_write(err, errno);
	sp_buf_release(&ob);
	for (size_t i = 0; i < k; i++) {
		free(r[i].text);
		free(r[i].lines);
	}
	free(r);
	free(th);
	free(started);
	return rc;
}
