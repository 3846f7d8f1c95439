/* flame.c — merge samples into the flame graph's tree and lay it out. */
#include "flame.h"

#include <math.h>
#include <stdlib.h>

/* A tree node while building; children are a linked list. */
struct tnode {
	uint32_t parent, first, last, next;
	uint32_t name;
	uint8_t kind;
	double x, w, a, b, sa, sb, sw; /* totals, and what ends here */
};

/* One distinct (label, stack) with its values: the flame graph's input. */
struct entry {
	uint64_t key; /* label frame << 32 | stack node */
	double a, b;
};

/* One sample, kept in order for the flame chart. */
struct csample {
	uint32_t label, node, lorder;
	uint64_t time, seq;
	double a, b;
};

struct sp_flame {
	struct sp_sink sink; /* first: the callbacks cast back to us */
	struct sp_profile *p;
	struct sp_flame_opts o;
	int ncols, col, diff;
	uint64_t samples;
	char unit[32]; /* of the drawn column: "samples", "ns", ... */

	struct sp_u64map emap; /* key -> entry index + 1 */
	struct entry *ents;
	size_t nents, capents;

	struct csample *cs;
	size_t ncs, capcs;
	struct sp_u64map lorder; /* label frame -> order + 1 */

	struct sp_label_cache labels;

	/* Profile frame id -> display name index + 1, and kind. */
	uint32_t *fname;
	uint8_t *fkind;
	size_t nfname;

	/* Display names. */
	struct sp_arena arena;
	struct sp_u64map nmap; /* hash -> name index + 1 */
	const char **names;
	size_t *nlens;
	uint8_t *nkinds;
	size_t nnames, capnames;
	/* Per name: the source of its frames, file string id and line; a line
	 * of UINT32_MAX when frames of the name have different lines, a file
	 * of UINT32_MAX when they are in different files. */
	uint32_t *sfile, *sline;
	size_t capsrc;

	struct tnode *t;
	size_t nt, capt;
	struct sp_u64map cmap; /* parent << 32 | name -> child tnode (flame graph only) */

	struct sp_flame_node *nodes;
	size_t nnodes;
	double maxdelta, removed;
	size_t nremoved;
	struct sp_buf tmp;
	uint32_t *frames;
	size_t capframes;
};

static int flame_sample(struct sp_sink *s, struct sp_profile *p, const struct sp_sample *smp, struct sp_err *err);

struct sp_flame *sp_flame_new(struct sp_profile *p, const struct sp_flame_opts *o)
{
	struct sp_flame *f = sp_xcalloc(1, sizeof *f);
	f->sink.sample = flame_sample;
	f->p = p;
	if (o)
		f->o = *o;
	f->ncols = -1;
	sp_u64map_init(&f->emap);
	sp_u64map_init(&f->lorder);
	sp_u64map_init(&f->nmap);
	sp_u64map_init(&f->cmap);
	sp_arena_init(&f->arena);
	return f;
}

void sp_flame_free(struct sp_flame *f)
{
	if (!f)
		return;
	sp_u64map_release(&f->emap);
	sp_u64map_release(&f->lorder);
	sp_u64map_release(&f->nmap);
	sp_u64map_release(&f->cmap);
	sp_arena_release(&f->arena);
	free(f->ents);
	free(f->cs);
	sp_label_cache_release(&f->labels);
	free(f->fname);
	free(f->fkind);
	free(f->names);
	free(f->nlens);
	free(f->nkinds);
	free(f->t);
	free(f->nodes);
	free(f->frames);
	sp_buf_release(&f->tmp);
	free(f->sfile);
	free(f->sline);
	free(f);
}

struct sp_sink *sp_flame_sink(struct sp_flame *f) { return &f->sink; }
size_t sp_flame_count(const struct sp_flame *f) { return f->nnodes; }
const struct sp_flame_node *sp_flame_nodes(const struct sp_flame *f) { return f->nodes; }
size_t sp_flame_names(const struct sp_flame *f) { return f->nnames; }
int sp_flame_is_diff(const struct sp_flame *f) { return f->diff; }
uint64_t sp_flame_samples(const struct sp_flame *f) { return f->samples; }
double sp_flame_max_delta(const struct sp_flame *f) { return f->maxdelta; }

const char *sp_flame_name(const struct sp_flame *f, uint32_t name, size_t *len)
{
	*len = f->nlens[name];
	return f->names[name];
}

unsigned sp_flame_name_kind(const struct sp_flame *f, uint32_t name) { return f->nkinds[name]; }

double sp_flame_removed(const struct sp_flame *f, size_t *nframes)
{
	if (nframes)
		*nframes = f->nremoved;
	return f->removed;
}

/* Decide the value columns on the first sample: the profile's value names
 * are known by then. */
static void pick_columns(struct sp_flame *f, struct sp_profile *p, uint32_t event)
{
	int n = sp_profile_nvalues(p);
	f->ncols = n < 1 ? 1 : n;
	f->col = 0;
	if (n == 2 && !strcmp(sp_profile_value_name(p, 0), "a") && !strcmp(sp_profile_value_name(p, 1), "b")) {
		f->diff = 1;
	} else {
		for (int i = 0; i < n; i++) {
			const char *name = sp_profile_value_name(p, i);
			if (f->o.weight ? !strcmp(name, f->o.weight) : !strcmp(name, "period"))
				f->col = i;
		}
	}
	snprintf(f->unit, sizeof f->unit, "%s", n ? sp_value_unit(p, f->col, event) : "samples");
}

const char *sp_flame_unit(const struct sp_flame *f) { return f->unit[0] ? f->unit : "samples"; }

void sp_flame_name_source(const struct sp_flame *f, uint32_t name, struct sp_buf *out)
{
	if (name >= f->capsrc || !f->sfile[name])
		return;
	if (f->sfile[name] == UINT32_MAX) {
		sp_buf_adds(out, "several files");
		return;
	}
	sp_buf_adds(out, sp_str(f->p, f->sfile[name]));
	if (f->sline[name] == UINT32_MAX)
		sp_buf_adds(out, ", several lines");
	else if (f->sline[name])
		sp_buf_addf(out, ":%u", f->sline[name]);
}


static int flame_sample(struct sp_sink *s, struct sp_profile *p, const struct sp_sample *smp, struct sp_err *err)
{
	struct sp_flame *f = (struct sp_flame *)s;
	if (f->ncols < 0)
		pick_columns(f, p, smp->event);
	double a, b;
	if (f->diff) {
		a = smp->values[0];
		b = smp->values[1];
	} else {
		a = b = smp->values[f->col];
	}
	/* A negative or undefined weight has no width: drawn as nothing. */
	if (!(a > 0))
		a = 0;
	if (!(b > 0))
		b = 0;
	uint32_t label = sp_label_frame(&f->labels, f->p, smp->thread, f->o.label);
	f->samples++;
	if (f->o.flamechart) {
		int found;
		uint32_t *lo = sp_u64map_slot(&f->lorder, label, &found);
		if (!found)
			*lo = (uint32_t)f->lorder.used;
		if (f->ncs == f->capcs) {
			f->capcs = f->capcs ? f->capcs * 2 : 4096;
			f->cs = sp_xrealloc(f->cs, f->capcs * sizeof *f->cs);
		}
		f->cs[f->ncs] = (struct csample){ label, smp->stack, *lo, smp->time, f->ncs, a, b };
		f->ncs++;
		return 0;
	}
	uint64_t key = (uint64_t)label << 32 | smp->stack;
	int found;
	uint32_t *slot = sp_u64map_slot(&f->emap, key, &found);
	if (!found) {
		if (f->nents == f->capents) {
			f->capents = f->capents ? f->capents * 2 : 1024;
			f->ents = sp_xrealloc(f->ents, f->capents * sizeof *f->ents);
		}
		f->ents[f->nents] = (struct entry){ key, 0, 0 };
		*slot = (uint32_t)++f->nents;
	}
	f->ents[*slot - 1].a += a;
	f->ents[*slot - 1].b += b;
	return 0;
}

static uint32_t intern_name(struct sp_flame *f, const char *s, size_t n, uint8_t kind)
{
	uint64_t h = sp_hash_seed(s, n, kind);
	for (;;) {
		if (h == UINT64_MAX)
			h = 0;
		int found;
		uint32_t *slot = sp_u64map_slot(&f->nmap, h, &found);
		if (!found) {
			if (f->nnames == f->capnames) {
				f->capnames = f->capnames ? f->capnames * 2 : 1024;
				f->names = sp_xrealloc(f->names, f->capnames * sizeof *f->names);
				f->nlens = sp_xrealloc(f->nlens, f->capnames * sizeof *f->nlens);
				f->nkinds = sp_xrealloc(f->nkinds, f->capnames * sizeof *f->nkinds);
			}
			f->nkinds[f->nnames] = kind;
			f->names[f->nnames] = sp_arena_strndup(&f->arena, s, n);
			f->nlens[f->nnames] = n;
			*slot = (uint32_t)++f->nnames;
			return *slot - 1;
		}
		uint32_t i = *slot - 1;
		if (f->nlens[i] == n && f->nkinds[i] == kind && !memcmp(f->names[i], s, n))
			return i;
		h++; /* a 64-bit collision: probe on */
	}
}

/* The display name and kind of a profile frame, computed once. */
static uint32_t frame_name(struct sp_flame *f, uint32_t frame, uint8_t *kind)
{
	if (frame >= f->nfname) {
		size_t n = f->nfname ? f->nfname : 1024;
		while (n <= frame)
			n *= 2;
		f->fname = sp_xrealloc(f->fname, n * sizeof *f->fname);
		f->fkind = sp_xrealloc(f->fkind, n * sizeof *f->fkind);
		memset(f->fname + f->nfname, 0, (n - f->nfname) * sizeof *f->fname);
		f->nfname = n;
	}
	if (f->fname[frame]) {
		*kind = f->fkind[frame];
		return f->fname[frame] - 1;
	}
	static const struct sp_fold_opts plain = { 0 };
	struct sp_buf *b = &f->tmp;
	sp_buf_reset(b);
	sp_fold_frame_name(f->p, frame, &plain, b);
	uint8_t k = sp_frame_get(f->p, frame)->kind;
	/* The annotations of folded text name the kind; they are not part of
	 * the name a person reads (flamegraph.pl strips them too). */
	if (b->len > 4 && b->p[b->len - 4] == '_' && b->p[b->len - 3] == '[' && b->p[b->len - 1] == ']') {
		char c = b->p[b->len - 2];
		if (c == 'k' || c == 'j' || c == 'i' || c == 'w') {
			if (k == SP_KIND_NATIVE || k == SP_KIND_KERNEL || k == SP_KIND_JIT || k == SP_KIND_INLINED)
				k = c == 'k' ? SP_KIND_KERNEL : c == 'j' ? SP_KIND_JIT : c == 'i' ? SP_KIND_INLINED : k;
			b->len -= 4;
		}
	}
	uint32_t id = intern_name(f, b->p ? b->p : "", b->len, k);
	f->fname[frame] = id + 1;
	f->fkind[frame] = k;
	const struct sp_frame *fr = sp_frame_get(f->p, frame);
	if (fr->file && fr->kind != SP_KIND_PYTHON) { /* a Python frame's name says it already */
		if (id >= f->capsrc) {
			size_t n = f->capsrc ? f->capsrc : 256;
			while (n <= id)
				n *= 2;
			f->sfile = sp_xrealloc(f->sfile, n * sizeof *f->sfile);
			f->sline = sp_xrealloc(f->sline, n * sizeof *f->sline);
			memset(f->sfile + f->capsrc, 0, (n - f->capsrc) * sizeof *f->sfile);
			memset(f->sline + f->capsrc, 0, (n - f->capsrc) * sizeof *f->sline);
			f->capsrc = n;
		}
		if (!f->sfile[id]) {
			f->sfile[id] = fr->file;
			f->sline[id] = fr->line;
		} else {
			if (f->sfile[id] != fr->file)
				f->sfile[id] = UINT32_MAX;
			if (f->sline[id] != fr->line)
				f->sline[id] = UINT32_MAX;
		}
	}
	*kind = k;
	return id;
}

static uint32_t new_tnode(struct sp_flame *f, uint32_t parent, uint32_t name, uint8_t kind)
{
	if (f->nt == f->capt) {
		f->capt = f->capt ? f->capt * 2 : 1024;
		f->t = sp_xrealloc(f->t, f->capt * sizeof *f->t);
	}
	uint32_t id = (uint32_t)f->nt++;
	struct tnode *n = &f->t[id];
	memset(n, 0, sizeof *n);
	n->parent = parent;
	n->name = name;
	n->kind = kind;
	if (id) {
		struct tnode *pn = &f->t[parent];
		if (pn->last)
			f->t[pn->last].next = id;
		else
			pn->first = id;
		pn->last = id;
	}
	return id;
}

/* The frames of a (label, stack), root first (or leaf first with reverse),
 * into f->frames.  Returns how many. */
static uint32_t path_frames(struct sp_flame *f, uint32_t label, uint32_t node)
{
	uint32_t d = sp_node_frames(f->p, node, &f->frames, &f->capframes);
	if (f->o.reverse)
		for (uint32_t i = 0, j = d ? d - 1 : 0; i < j; i++, j--) {
			uint32_t t = f->frames[i];
			f->frames[i] = f->frames[j];
			f->frames[j] = t;
		}
	if (label) {
		if (d + 1 > f->capframes) {
			f->capframes = d + 16;
			f->frames = sp_xrealloc(f->frames, f->capframes * sizeof *f->frames);
		}
		memmove(f->frames + 1, f->frames, d * sizeof *f->frames);
		f->frames[0] = label;
		d++;
		if (!f->o.reverse && d > 1 && sp_frame_get(f->p, f->frames[1])->kind == SP_KIND_SYNTHETIC) {
			/* a root tag (pmerge --tag) stays the root, above the thread */
			f->frames[0] = f->frames[1];
			f->frames[1] = label;
		}
	}
	return d;
}

static void add_along(struct sp_flame *f, uint32_t leaf, double w, double a, double b)
{
	f->t[leaf].sa += a;
	f->t[leaf].sb += b;
	for (uint32_t n = leaf;; n = f->t[n].parent) {
		f->t[n].w += w;
		f->t[n].a += a;
		f->t[n].b += b;
		if (!n)
			break;
	}
}

static uint32_t child(struct sp_flame *f, uint32_t parent, uint32_t frame)
{
	uint8_t kind;
	uint32_t name = frame_name(f, frame, &kind);
	int found;
	uint32_t *slot = sp_u64map_slot(&f->cmap, (uint64_t)parent << 32 | name, &found);
	if (!found)
		*slot = new_tnode(f, parent, name, kind); /* the map is apart from the nodes */
	return *slot;
}

/* The tree node of (label, profile stack node), memoised per stack node so
 * that a prefix shared by many stacks is looked up once: stack nodes are a
 * tree already, with the same parents. */
struct memo {
	struct sp_u64map map; /* label << 32 | node -> tree node (threaded samples) */
	uint32_t *arr;        /* node -> tree node + 1 (no label: most inputs) */
	size_t narr;
};

static int memo_get(struct memo *m, uint32_t label, uint32_t node, uint32_t *t)
{
	int found;
	if (!label) {
		if (node < m->narr && m->arr[node]) {
			*t = m->arr[node] - 1;
			return 1;
		}
		return 0;
	}
	*t = sp_u64map_get(&m->map, (uint64_t)label << 32 | node, &found);
	return found;
}

static void memo_set(struct memo *m, uint32_t label, uint32_t node, uint32_t t)
{
	int found;
	if (!label && node < m->narr)
		m->arr[node] = t + 1;
	else
		*sp_u64map_slot(&m->map, (uint64_t)label << 32 | node, &found) = t;
}

static uint32_t tree_of(struct sp_flame *f, uint32_t label, uint32_t node, struct memo *memo)
{
	uint32_t chain_cap = 64, nchain = 0;
	uint32_t *chain = f->frames; /* reused scratch: unresolved nodes, leaf first */
	if (f->capframes < chain_cap) {
		f->frames = chain = sp_xrealloc(f->frames, chain_cap * sizeof *chain);
		f->capframes = chain_cap;
	}
	uint32_t base = 0;
	for (uint32_t n = node;; n = sp_node_get(f->p, n)->parent) {
		if (!n) {
			base = label ? child(f, 0, label) : 0;
			break;
		}
		uint32_t t;
		if (memo_get(memo, label, n, &t)) {
			base = t;
			break;
		}
		const struct sp_node *nd = sp_node_get(f->p, n);
		if (label && !nd->parent && sp_frame_get(f->p, nd->frame)->kind == SP_KIND_SYNTHETIC) {
			/* a root tag (pmerge --tag) stays the root, above the thread */
			base = child(f, child(f, 0, nd->frame), label);
			memo_set(memo, label, n, base);
			break;
		}
		if (nchain == f->capframes) {
			f->capframes *= 2;
			f->frames = chain = sp_xrealloc(f->frames, f->capframes * sizeof *chain);
		}
		chain[nchain++] = n;
	}
	while (nchain) {
		uint32_t n = chain[--nchain];
		base = child(f, base, sp_node_get(f->p, n)->frame);
		memo_set(memo, label, n, base);
	}
	return base;
}

static void build_graph(struct sp_flame *f)
{
	struct memo memo;
	sp_u64map_init(&memo.map);
	memo.narr = sp_node_count(f->p);
	memo.arr = sp_xcalloc(memo.narr + 1, sizeof *memo.arr);
	for (size_t i = 0; i < f->nents; i++) {
		const struct entry *e = &f->ents[i];
		uint32_t label = (uint32_t)(e->key >> 32), cur = 0;
		if (!f->o.reverse) {
			cur = tree_of(f, label, (uint32_t)e->key, &memo);
		} else {
			uint32_t d = path_frames(f, label, (uint32_t)e->key);
			for (uint32_t j = 0; j < d; j++)
				cur = child(f, cur, f->frames[j]);
		}
		f->t[cur].sw += f->o.show_removed ? e->a : e->b;
		f->t[cur].sa += e->a;
		f->t[cur].sb += e->b;
	}
	sp_u64map_release(&memo.map);
	free(memo.arr);
	/* Totals bottom-up: a child's index is above its parent's. */
	for (size_t id = f->nt; id-- > 0;) {
		struct tnode *t = &f->t[id];
		t->w += t->sw;
		t->a += t->sa;
		t->b += t->sb;
		if (id) {
			f->t[t->parent].w += t->w;
			f->t[t->parent].a += t->a;
			f->t[t->parent].b += t->b;
		}
	}
}

static int csample_cmp(const void *x, const void *y)
{
	const struct csample *a = x, *b = y;
	if (a->lorder != b->lorder)
		return a->lorder < b->lorder ? -1 : 1;
	if (a->time != b->time)
		return a->time < b->time ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static void build_chart(struct sp_flame *f)
{
	sp_sort(f->cs, f->ncs, sizeof *f->cs, csample_cmp);
	uint32_t *path = NULL; /* tnode at depth i+1 of the previous sample */
	size_t npath = 0, cappath = 0;
	double cursor = 0;
	for (size_t i = 0; i < f->ncs; i++) {
		const struct csample *s = &f->cs[i];
		double w = f->o.show_removed ? s->a : s->b;
		uint32_t d = path_frames(f, s->label, s->node);
		if (d > cappath) {
			cappath = d + 64;
			path = sp_xrealloc(path, cappath * sizeof *path);
		}
		uint32_t cur = 0;
		size_t j = 0;
		for (; j < d; j++) {
			uint8_t kind;
			uint32_t name = frame_name(f, f->frames[j], &kind);
			/* Merge with the previous sample's frame at this depth
			 * only when it ends where this sample starts. */
			if (j < npath && f->t[path[j]].name == name && f->t[path[j]].x + f->t[path[j]].w == cursor) {
				cur = path[j];
				continue;
			}
			cur = new_tnode(f, cur, name, kind);
			f->t[cur].x = cursor;
			path[j] = cur;
		}
		npath = d;
		add_along(f, cur, w, s->a, s->b);
		cursor += w;
	}
	free(path);
}

static int cmp_name(const struct sp_flame *f, uint32_t x, uint32_t y)
{
	size_t nx = f->nlens[x], ny = f->nlens[y];
	int c = memcmp(f->names[x], f->names[y], nx < ny ? nx : ny);
	if (c)
		return c;
	return nx < ny ? -1 : nx > ny;
}

static const struct sp_flame *sort_f;
static int child_cmp(const void *x, const void *y)
{
	const struct tnode *a = &sort_f->t[*(const uint32_t *)x], *b = &sort_f->t[*(const uint32_t *)y];
	if (sort_f->o.sort == SP_FLAME_SORT_WEIGHT && a->w != b->w)
		return a->w > b->w ? -1 : 1;
	int c = cmp_name(sort_f, a->name, b->name);
	if (c)
		return c;
	return a->kind < b->kind ? -1 : a->kind > b->kind; /* "f" and "f_[k]" */
}

/* Sort every child list (flame graph only; the chart keeps time order). */
static void sort_children(struct sp_flame *f)
{
	uint32_t *tmp = NULL;
	size_t cap = 0;
	sort_f = f;
	for (size_t i = 0; i < f->nt; i++) {
		size_t n = 0;
		for (uint32_t c = f->t[i].first; c; c = f->t[c].next) {
			if (n == cap) {
				cap = cap ? cap * 2 : 64;
				tmp = sp_xrealloc(tmp, cap * sizeof *tmp);
			}
			tmp[n++] = c;
		}
		if (n < 2)
			continue;
		sp_sort(tmp, n, sizeof *tmp, child_cmp);
		f->t[i].first = tmp[0];
		for (size_t k = 0; k + 1 < n; k++)
			f->t[tmp[k]].next = tmp[k + 1];
		f->t[tmp[n - 1]].next = 0;
		f->t[i].last = tmp[n - 1];
	}
	free(tmp);
}

/* Preorder node array; in the flame graph a frame's own samples come first,
 * then its children left to right. */
static void emit(struct sp_flame *f)
{
	f->nodes = sp_xmalloc(f->nt * sizeof *f->nodes);
	uint32_t *stack = sp_xmalloc((f->nt + 1) * sizeof *stack);
	uint32_t *open = sp_xmalloc((f->nt + 1) * sizeof *open); /* output index by depth */
	uint32_t *depth = sp_xmalloc(f->nt * sizeof *depth);
	size_t sp = 0, nopen = 0, out = 0;
	stack[sp++] = 0;
	depth[0] = 0;
	uint32_t *kids = NULL;
	size_t capk = 0;
	f->maxdelta = 1;
	while (sp) {
		uint32_t id = stack[--sp];
		struct tnode *t = &f->t[id];
		uint32_t d = depth[id];
		while (nopen > d)
			f->nodes[open[--nopen]].end = (uint32_t)out;
		open[nopen++] = (uint32_t)out;
		struct sp_flame_node *n = &f->nodes[out];
		n->parent = d ? open[d - 1] : 0;
		n->depth = d;
		n->name = t->name;
		n->kind = t->kind;
		n->x = t->x;
		n->w = t->w;
		n->a = t->a;
		n->b = t->b;
		n->self_delta = t->sb - t->sa;
		if (f->diff && fabs(n->self_delta) > f->maxdelta)
			f->maxdelta = fabs(n->self_delta);
		if (f->diff && id && t->b == 0 && t->a != 0 && f->t[t->parent].b != 0) {
			f->removed += t->a;
			f->nremoved++;
		}
		out++;
		/* Children: lay out x (graph), push in reverse for preorder. */
		size_t nk = 0;
		double cx = t->x + t->w;
		for (uint32_t c = t->first; c; c = f->t[c].next) {
			if (nk == capk) {
				capk = capk ? capk * 2 : 64;
				kids = sp_xrealloc(kids, capk * sizeof *kids);
			}
			kids[nk++] = c;
			cx -= f->t[c].w;
		}
		if (!f->o.flamechart)
			for (size_t k = 0; k < nk; k++) {
				f->t[kids[k]].x = cx;
				cx += f->t[kids[k]].w;
			}
		for (size_t k = nk; k-- > 0;) {
			depth[kids[k]] = d + 1;
			stack[sp++] = kids[k];
		}
	}
	while (nopen)
		f->nodes[open[--nopen]].end = (uint32_t)out;
	f->nnodes = out;
	free(kids);
	free(stack);
	free(open);
	free(depth);
}

void sp_flame_finish(struct sp_flame *f)
{
	if (f->ncols < 0)
		pick_columns(f, f->p, 0);
	new_tnode(f, 0, intern_name(f, "all", 3, SP_KIND_SYNTHETIC), SP_KIND_SYNTHETIC);
	if (f->o.flamechart) {
		build_chart(f);
	} else {
		build_graph(f);
		sort_children(f);
	}
	emit(f);
}
