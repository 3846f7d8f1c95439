/* flame.c — merge samples into the flame graph's tree and lay it out. */
#include "flame.h"

#include <math.h>
#include <stdlib.h>

/* The tree while building, one array per field (the flame graph of a big
 * profile has a few hundred thousand nodes: small arrays keep it in cache).
 * A node's parent has a smaller index.  The a/b columns exist only for a
 * differential profile; otherwise a = b = w. */
struct tree {
	size_t n, cap;
	uint32_t *parent, *name;
	uint8_t *kind;
	double *x, *w, *sw;      /* start, total width, own width */
	double *a, *b, *sa, *sb; /* diff: totals and own values */
};

/* One distinct (label, stack) with its values: the flame graph's input
 * for samples that have a thread label. */
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
	int ncols, col, diff, fraction;
	uint64_t samples;
	char unit[32]; /* of the drawn column: "samples", "ns", ... */

	/* Samples without a thread label (most inputs): summed per profile
	 * stack node, an array lookup instead of a hash. */
	double *na, *nb; /* nb == na unless diff */
	uint8_t *nhit;   /* the node is a sample's stack */
	size_t capn;

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
	int names_shared; /* two profile frames have one display name */

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

	struct tree t;
	struct sp_u64map cmap; /* parent << 32 | name -> child node (merging by name) */

	struct sp_flame_node *nodes;
	struct sp_flame_delta *deltas; /* diff only */
	size_t nnodes;
	double maxdelta, removed;
	size_t nremoved;
	struct sp_buf tmp;
	uint32_t *frames;
	size_t capframes;
};

static int flame_sample(struct sp_sink *s, struct sp_profile *p, const struct sp_sample *smp, struct sp_err *err);

static void tree_release(struct tree *t)
{
	free(t->parent);
	free(t->name);
	free(t->kind);
	free(t->x);
	free(t->w);
	free(t->sw);
	free(t->a);
	free(t->b);
	free(t->sa);
	free(t->sb);
	memset(t, 0, sizeof *t);
}

/* Room for cap nodes; new ones start at zero. */
static void tree_reserve(struct tree *t, size_t cap, int diff)
{
	if (cap <= t->cap)
		return;
	size_t old = t->cap, n = cap - old;
	t->parent = sp_xrealloc(t->parent, cap * sizeof *t->parent);
	t->name = sp_xrealloc(t->name, cap * sizeof *t->name);
	t->kind = sp_xrealloc(t->kind, cap * sizeof *t->kind);
	double **cols[] = { &t->x, &t->w, &t->sw, &t->a, &t->b, &t->sa, &t->sb };
	for (size_t c = 0; c < sizeof cols / sizeof *cols; c++) {
		if (c >= 3 && !diff)
			break;
		*cols[c] = sp_xrealloc(*cols[c], cap * sizeof **cols[c]);
		memset(*cols[c] + old, 0, n * sizeof **cols[c]);
	}
	t->cap = cap;
}

static uint32_t tree_push(struct tree *t, uint32_t parent, uint32_t name, uint8_t kind, int diff)
{
	if (t->n == t->cap)
		tree_reserve(t, t->cap ? t->cap * 2 : 1024, diff);
	uint32_t id = (uint32_t)t->n++;
	t->parent[id] = parent;
	t->name[id] = name;
	t->kind[id] = kind;
	return id;
}

struct sp_flame *sp_flame_new(struct sp_profile *p, const struct sp_flame_opts *o)
{
	struct sp_flame *f = sp_xcalloc(1, sizeof *f);
	f->sink.sample = flame_sample;
	f->p = p;
	if (o)
		f->o = *o;
	f->labels.group = !f->o.each_thread;
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
	tree_release(&f->t);
	free(f->na);
	if (f->nb != f->na)
		free(f->nb);
	free(f->nhit);
	free(f->nodes);
	free(f->deltas);
	free(f->frames);
	sp_buf_release(&f->tmp);
	free(f->sfile);
	free(f->sline);
	free(f);
}

struct sp_sink *sp_flame_sink(struct sp_flame *f) { return &f->sink; }
size_t sp_flame_count(const struct sp_flame *f) { return f->nnodes; }
const struct sp_flame_node *sp_flame_nodes(const struct sp_flame *f) { return f->nodes; }
const struct sp_flame_delta *sp_flame_deltas(const struct sp_flame *f) { return f->deltas; }
size_t sp_flame_names(const struct sp_flame *f) { return f->nnames; }
int sp_flame_is_diff(const struct sp_flame *f) { return f->diff; }
int sp_flame_integral(const struct sp_flame *f) { return !f->fraction; }
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
 * are known by then.  An unknown --weight is an error (err NULL: no sample
 * came, nothing to draw with it anyway). */
static int pick_columns(struct sp_flame *f, struct sp_profile *p, uint32_t event, struct sp_err *err)
{
	int n = sp_profile_nvalues(p);
	struct sp_err e;
	f->ncols = n < 1 ? 1 : n;
	f->col = 0;
	if (sp_value_is_diff(p)) {
		f->diff = 1;
		if (f->o.weight && sp_value_column(p, f->o.weight, err ? err : &e) < 0 && err)
			return -1; /* both columns are drawn: the name is only checked */
	} else if (n) {
		f->col = sp_value_column(p, f->o.weight, err ? err : &e);
		if (f->col < 0) {
			f->col = 0;
			if (err)
				return -1;
		}
	}
	snprintf(f->unit, sizeof f->unit, "%s", n ? sp_value_unit(p, f->col, event) : "samples");
	return 0;
}

const char *sp_flame_unit(const struct sp_flame *f) { return f->ncols < 0 ? "samples" : f->unit; }

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
	if (f->ncols < 0 && pick_columns(f, p, smp->event, err) < 0)
		return -1;
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
	if (a != floor(a) || b != floor(b))
		f->fraction = 1;
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
	if (!label) {
		uint32_t node = smp->stack;
		if (node >= f->capn) {
			size_t n = f->capn ? f->capn : 1024, want = sp_node_count(p);
			while (n <= node || n < want)
				n *= 2;
			f->na = sp_xrealloc(f->na, n * sizeof *f->na);
			memset(f->na + f->capn, 0, (n - f->capn) * sizeof *f->na);
			if (f->diff) {
				f->nb = sp_xrealloc(f->nb, n * sizeof *f->nb);
				memset(f->nb + f->capn, 0, (n - f->capn) * sizeof *f->nb);
			} else {
				f->nb = f->na;
			}
			f->nhit = sp_xrealloc(f->nhit, n);
			memset(f->nhit + f->capn, 0, n - f->capn);
			f->capn = n;
		}
		f->na[node] += a;
		if (f->diff)
			f->nb[node] += b;
		f->nhit[node] = 1;
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
	size_t before = f->nnames;
	uint32_t id = intern_name(f, b->p ? b->p : "", b->len, k);
	if (f->nnames == before)
		f->names_shared = 1;
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

/* A node of the tree: the child of parent named name, made when new (the
 * map merges frames whose display names are equal). */
static uint32_t child(struct sp_flame *f, uint32_t parent, uint32_t frame)
{
	uint8_t kind;
	uint32_t name = frame_name(f, frame, &kind);
	int found;
	uint32_t *slot = sp_u64map_slot(&f->cmap, (uint64_t)parent << 32 | name, &found);
	if (!found)
		*slot = tree_push(&f->t, parent, name, kind, f->diff); /* the map is apart from the nodes */
	return *slot;
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

/* Add a sample's own values at tree node cur. */
static void add_self(struct sp_flame *f, uint32_t cur, double a, double b)
{
	struct tree *t = &f->t;
	t->sw[cur] += f->o.show_removed ? a : b;
	if (f->diff) {
		t->sa[cur] += a;
		t->sb[cur] += b;
	}
}

/* The flame graph's tree when every sample without a label has a stack of
 * the profile whose frames all have names of their own: then the profile's
 * stack nodes are the tree, and only the nodes on the samples' paths are
 * copied, in their order (parents first).  Returns 0 when the names of two
 * frames turn out equal (their nodes must merge: build_graph does it). */
static int graph_from_nodes(struct sp_flame *f)
{
	struct tree *t = &f->t;
	size_t N = f->capn < sp_node_count(f->p) ? f->capn : sp_node_count(f->p);
	if (!N)
		N = 1;
	uint32_t *tid = sp_xcalloc(N, sizeof *tid); /* profile node -> tree node + 1; 1 = used */
	const struct sp_node *nd;
	size_t used = 1;
	for (size_t i = N; i-- > 1;)
		if (tid[i] || f->nhit[i]) {
			tid[i] = 1;
			tid[sp_node_get(f->p, (uint32_t)i)->parent] = 1;
			used++;
		}
	tree_reserve(t, used, f->diff);
	tid[0] = 1;
	for (size_t i = 1; i < N; i++) {
		if (!tid[i])
			continue;
		nd = sp_node_get(f->p, (uint32_t)i);
		uint8_t kind;
		uint32_t name = frame_name(f, nd->frame, &kind);
		if (f->names_shared) {
			free(tid);
			t->n = 1;
			return 0;
		}
		tid[i] = tree_push(t, tid[nd->parent] - 1, name, kind, f->diff) + 1;
	}
	for (size_t i = 0; i < N; i++)
		if (f->nhit && f->nhit[i])
			add_self(f, tid[i] - 1, f->na[i], f->nb[i]);
	free(tid);
	return 1;
}

static void build_graph(struct sp_flame *f)
{
	if (!f->nents && !f->o.reverse && (!f->capn || graph_from_nodes(f)))
		return;
	struct memo memo;
	sp_u64map_init(&memo.map);
	memo.narr = sp_node_count(f->p);
	memo.arr = sp_xcalloc(memo.narr + 1, sizeof *memo.arr);
	/* samples without a label (per node), then the others */
	for (size_t i = 0; i < f->capn + f->nents; i++) {
		uint32_t label = 0, node, cur = 0;
		double a, b;
		if (i < f->capn) {
			if (!f->nhit[i])
				continue;
			node = (uint32_t)i;
			a = f->na[i];
			b = f->nb[i];
		} else {
			const struct entry *e = &f->ents[i - f->capn];
			label = (uint32_t)(e->key >> 32);
			node = (uint32_t)e->key;
			a = e->a;
			b = e->b;
		}
		if (!f->o.reverse) {
			cur = tree_of(f, label, node, &memo);
		} else {
			uint32_t d = path_frames(f, label, node);
			for (uint32_t j = 0; j < d; j++)
				cur = child(f, cur, f->frames[j]);
		}
		add_self(f, cur, a, b);
	}
	sp_u64map_release(&memo.map);
	free(memo.arr);
}

/* Totals bottom-up: a child's index is above its parent's. */
static void sum_up(struct sp_flame *f)
{
	struct tree *t = &f->t;
	for (size_t id = t->n; id-- > 0;) {
		t->w[id] += t->sw[id];
		if (f->diff) {
			t->a[id] += t->sa[id];
			t->b[id] += t->sb[id];
		}
		if (id) {
			t->w[t->parent[id]] += t->w[id];
			if (f->diff) {
				t->a[t->parent[id]] += t->a[id];
				t->b[t->parent[id]] += t->b[id];
			}
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
	struct tree *t = &f->t;
	sp_sort(f->cs, f->ncs, sizeof *f->cs, csample_cmp);
	uint32_t *path = NULL; /* tree node at depth i+1 of the previous sample */
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
			 * only when it ends where this sample starts and its
			 * parent is this sample's (flamegraph.pl --flamechart
			 * merges a common prefix only: "a;s" then "b;s" is two
			 * s frames). */
			if (j < npath && t->parent[path[j]] == cur && t->name[path[j]] == name &&
			    t->x[path[j]] + t->w[path[j]] == cursor) {
				cur = path[j];
				continue;
			}
			cur = tree_push(t, cur, name, kind, f->diff);
			t->x[cur] = cursor;
			path[j] = cur;
		}
		npath = d;
		/* the running totals along the path (the merge test reads w) */
		if (f->diff) {
			t->sa[cur] += s->a;
			t->sb[cur] += s->b;
		}
		for (uint32_t n = cur;; n = t->parent[n]) {
			t->w[n] += w;
			if (f->diff) {
				t->a[n] += s->a;
				t->b[n] += s->b;
			}
			if (!n)
				break;
		}
		cursor += w;
	}
	free(path);
}

/* Name order: bytes, then kind ("f" and "f_[k]"). */
static const struct sp_flame *sort_f;
static int name_cmp(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
	size_t na = sort_f->nlens[a], nb = sort_f->nlens[b];
	int c = memcmp(sort_f->names[a], sort_f->names[b], na < nb ? na : nb);
	if (c)
		return c;
	if (na != nb)
		return na < nb ? -1 : 1;
	return sort_f->nkinds[a] < sort_f->nkinds[b] ? -1 : sort_f->nkinds[a] > sort_f->nkinds[b];
}

/* A sibling's sort key: weight (heaviest first) when sorting by weight,
 * then its name's rank.  Siblings have different names. */
struct skey {
	uint64_t k1;
	uint32_t k2, id;
};

static int skey_cmp(const void *x, const void *y)
{
	const struct skey *a = x, *b = y;
	if (a->k1 != b->k1)
		return a->k1 < b->k1 ? -1 : 1;
	return a->k2 < b->k2 ? -1 : a->k2 > b->k2;
}

/* Sort the children lists kids[beg[i] .. beg[i + 1]). */
static void sort_children(struct sp_flame *f, const uint32_t *beg, uint32_t *kids)
{
	struct tree *t = &f->t;
	uint32_t *rank = sp_xmalloc((f->nnames + 1) * sizeof *rank);
	for (uint32_t i = 0; i < f->nnames; i++)
		rank[i] = i;
	sort_f = f;
	sp_sort(rank, f->nnames, sizeof *rank, name_cmp);
	uint32_t *by = sp_xmalloc((f->nnames + 1) * sizeof *by); /* name -> rank */
	for (uint32_t r = 0; r < f->nnames; r++)
		by[rank[r]] = r;
	free(rank);
	struct skey *k = NULL;
	size_t capk = 0;
	for (size_t i = 0; i < t->n; i++) {
		size_t n = beg[i + 1] - beg[i];
		if (n < 2)
			continue;
		if (n > capk) {
			capk = n > 2 * capk ? n : 2 * capk;
			k = sp_xrealloc(k, capk * sizeof *k);
		}
		uint32_t *c = kids + beg[i];
		for (size_t j = 0; j < n; j++) {
			uint64_t wb = 0;
			if (f->o.sort == SP_FLAME_SORT_WEIGHT) {
				double w = t->w[c[j]] > 0 ? t->w[c[j]] : 0; /* >= 0: its bits order as the value */
				memcpy(&wb, &w, sizeof wb);
				wb = ~wb;
			}
			k[j] = (struct skey){ wb, by[t->name[c[j]]], c[j] };
		}
		if (n <= 16) {
			for (size_t j = 1; j < n; j++) {
				struct skey v = k[j];
				size_t m = j;
				for (; m > 0 && skey_cmp(&k[m - 1], &v) > 0; m--)
					k[m] = k[m - 1];
				k[m] = v;
			}
		} else {
			sp_sort(k, n, sizeof *k, skey_cmp);
		}
		for (size_t j = 0; j < n; j++)
			c[j] = k[j].id;
	}
	free(k);
	free(by);
}

/* The node array in preorder; in the flame graph a frame's own samples come
 * first, then its children left to right.  Parents come before children in
 * the tree, so one pass in index order places every node: its position is
 * its parent's plus the sizes of the subtrees of its earlier siblings. */
static void emit(struct sp_flame *f)
{
	struct tree *t = &f->t;
	size_t n = t->n;
	/* children lists: kids[beg[i] .. beg[i + 1]), in index order */
	uint32_t *beg = sp_xcalloc(n + 1, sizeof *beg), *kids = sp_xmalloc(n * sizeof *kids);
	for (size_t i = 1; i < n; i++)
		beg[t->parent[i]]++;
	for (size_t i = 0, sum = 0; i <= n; i++) {
		sum += beg[i];
		beg[i] = (uint32_t)sum; /* the end of i's list, for now */
	}
	for (size_t i = n; i-- > 1;)
		kids[--beg[t->parent[i]]] = (uint32_t)i;
	beg[n] = n ? (uint32_t)(n - 1) : 0;
	if (!f->o.flamechart)
		sort_children(f, beg, kids);
	uint32_t *size = sp_xmalloc((n + 1) * sizeof *size), *pos = sp_xmalloc((n + 1) * sizeof *pos);
	for (size_t i = 0; i < n; i++)
		size[i] = 1;
	for (size_t i = n; i-- > 1;)
		size[t->parent[i]] += size[i];
	f->nodes = sp_xmalloc((n ? n : 1) * sizeof *f->nodes);
	if (f->diff)
		f->deltas = sp_xmalloc((n ? n : 1) * sizeof *f->deltas);
	f->maxdelta = 1;
	pos[0] = 0;
	for (size_t i = 0; i < n; i++) {
		uint32_t at = pos[i];
		struct sp_flame_node *o = &f->nodes[at];
		o->parent = i ? pos[t->parent[i]] : 0;
		o->depth = i ? f->nodes[o->parent].depth + 1 : 0;
		o->name = t->name[i];
		o->end = at + size[i];
		o->kind = t->kind[i];
		o->x = t->x[i];
		o->w = t->w[i];
		if (f->diff) {
			struct sp_flame_delta *dl = &f->deltas[at];
			dl->a = t->a[i];
			dl->b = t->b[i];
			dl->self_delta = t->sb[i] - t->sa[i];
			if (fabs(dl->self_delta) > f->maxdelta)
				f->maxdelta = fabs(dl->self_delta);
		}
		if (f->diff && i && t->b[i] == 0 && t->a[i] != 0 && t->b[t->parent[i]] != 0) {
			f->removed += t->a[i];
			f->nremoved++;
		}
		/* children: positions, and x in the flame graph */
		double cx = t->x[i] + t->w[i];
		for (uint32_t k = beg[i]; k < beg[i + 1]; k++)
			cx -= t->w[kids[k]];
		uint32_t next = at + 1;
		for (uint32_t k = beg[i]; k < beg[i + 1]; k++) {
			uint32_t c = kids[k];
			pos[c] = next;
			next += size[c];
			if (!f->o.flamechart) {
				t->x[c] = cx;
				cx += t->w[c];
			}
		}
	}
	f->nnodes = n;
	free(beg);
	free(kids);
	free(size);
	free(pos);
}

void sp_flame_finish(struct sp_flame *f)
{
	if (f->ncols < 0)
		pick_columns(f, f->p, 0, NULL);
	tree_push(&f->t, 0, intern_name(f, "all", 3, SP_KIND_SYNTHETIC), SP_KIND_SYNTHETIC, f->diff);
	if (f->o.flamechart) {
		build_chart(f);
	} else {
		build_graph(f);
		sum_up(f);
	}
	/* The samples and the maps that merged them are not needed once the
	 * tree holds the totals: freed before emit's arrays are made, so that
	 * these reuse their memory instead of touching fresh pages (each new
	 * page is a fault and a page zeroed, a third of psvg's time on a big
	 * profile on the virtual machines this runs on). */
	free(f->na);
	if (f->nb != f->na)
		free(f->nb);
	free(f->nhit);
	f->na = f->nb = NULL;
	f->nhit = NULL;
	f->capn = 0;
	free(f->ents);
	f->ents = NULL;
	f->nents = f->capents = 0;
	sp_u64map_release(&f->emap);
	sp_u64map_release(&f->cmap);
	free(f->cs);
	f->cs = NULL;
	f->ncs = f->capcs = 0;
	if (!f->diff) {
		free(f->t.sw); /* own widths: summed into w */
		f->t.sw = NULL;
	}
	emit(f);
	/* emit copied the tree into the nodes: what the SVG is written from */
	tree_release(&f->t);
}
