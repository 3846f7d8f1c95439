/* cprofile.c — Python's cProfile/pstats files in (see cprofile.h).
 *
 * Marshal (Python/marshal.c, versions 2-4): a type byte, whose bit 7
 * (FLAG_REF) says the object gets the next slot of the reference table,
 * then its contents, little-endian.  An 'r' object names a slot by index.
 * Containers reserve their slot before their items.  Only the types a
 * pstats dict can hold are accepted; code objects and the like are an
 * error, not a guess.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "cprofile.h"

#define FLAG_REF 0x80
#define MAX_DEPTH 32		/* a pstats dict nests 4 deep */
#define CP_MAX_INPUT (1ULL << 31)	/* marshal lengths are 32-bit */

enum { V_NONE, V_NUM, V_STR, V_TUPLE, V_DICT, V_OTHER };

struct val {
	uint8_t t;
	uint8_t is_int;
	uint32_t n;   /* string length, item count (dict: pairs) */
	uint64_t off; /* where the object starts, for messages */
	union {
		double num;
		uint64_t str;  /* offset of the bytes in the data */
		uint64_t kids; /* first index into mp.kids */
	} u;
};

struct mp {
	const unsigned char *b;
	size_t n, pos;
	const char *name;
	struct sp_err *err;
	struct val *v;
	size_t nv, capv;
	uint32_t *kids;
	size_t nk, capk;
	uint32_t *stk; /* items of open containers */
	size_t ns, caps;
	uint32_t *refs;
	size_t nr, capr;
};

#define GROW(arr, len, cap)                                                  \
	do {                                                                 \
		if ((len) == (cap)) {                                        \
			(cap) = (cap) ? 2 * (cap) : 256;                     \
			(arr) = sp_xrealloc((arr), (cap) * sizeof *(arr));   \
		}                                                            \
	} while (0)

static int bad(struct mp *m, uint64_t off, const char *what)
{
	return sp_err_off(m->err, m->name, off, "%s", what);
}

static int need(struct mp *m, size_t k, uint64_t start)
{
	if (m->n - m->pos < k)
		return bad(m, start, "truncated: the object runs past the end of the file");
	return 0;
}

static uint32_t u32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint32_t newval(struct mp *m, int t, uint64_t off)
{
	GROW(m->v, m->nv, m->capv);
	struct val *v = &m->v[m->nv];
	memset(v, 0, sizeof *v);
	v->t = (uint8_t)t;
	v->off = off;
	return (uint32_t)m->nv++;
}

static int obj(struct mp *m, uint32_t *out, int depth);

/* Items of a container: parsed onto the stack, then moved into kids in one
 * piece (nested containers put their own items first). */
static int items(struct mp *m, uint32_t id, size_t count, int dict, int depth)
{
	size_t base = m->ns;
	for (size_t i = 0; i < count || dict; i++) {
		if (dict) {
			if (need(m, 1, m->pos) < 0)
				return -1;
			if (m->b[m->pos] == '0') { /* NULL ends a dict */
				m->pos++;
				break;
			}
		}
		uint32_t k;
		if (obj(m, &k, depth + 1) < 0)
			return -1;
		GROW(m->stk, m->ns, m->caps);
		m->stk[m->ns++] = k;
		if (dict) {
			if (obj(m, &k, depth + 1) < 0)
				return -1;
			GROW(m->stk, m->ns, m->caps);
			m->stk[m->ns++] = k;
		}
	}
	size_t cnt = m->ns - base;
	while (m->capk - m->nk < cnt) {
		m->capk = m->capk ? 2 * m->capk : 256;
		m->kids = sp_xrealloc(m->kids, m->capk * sizeof *m->kids);
	}
	if (cnt)
		memcpy(m->kids + m->nk, m->stk + base, cnt * sizeof *m->kids);
	m->v[id].u.kids = m->nk;
	m->v[id].n = (uint32_t)(dict ? cnt / 2 : cnt);
	m->nk += cnt;
	m->ns = base;
	return 0;
}

static int obj(struct mp *m, uint32_t *out, int depth)
{
	uint64_t start = m->pos;
	if (depth > MAX_DEPTH)
		return bad(m, start, "objects nest too deep for a pstats dict");
	if (need(m, 1, start) < 0)
		return -1;
	unsigned code = m->b[m->pos++];
	int ref = code & FLAG_REF;
	code &= ~FLAG_REF;
	size_t slot = 0;
	if (ref) {
		GROW(m->refs, m->nr, m->capr);
		slot = m->nr++;
		m->refs[slot] = UINT32_MAX; /* filled when the object is complete */
	}
	uint32_t id;
	uint32_t len;
	switch (code) {
	case 'N': case 'F': case 'T': case 'S': case '.':
		id = newval(m, V_NONE, start);
		break;
	case 'i':
		if (need(m, 4, start) < 0)
			return -1;
		id = newval(m, V_NUM, start);
		m->v[id].u.num = (double)(int32_t)u32(m->b + m->pos);
		m->v[id].is_int = 1;
		m->pos += 4;
		break;
	case 'l': { /* n 15-bit digits, least significant first; sign of n */
		if (need(m, 4, start) < 0)
			return -1;
		int32_t nd = (int32_t)u32(m->b + m->pos);
		m->pos += 4;
		uint64_t ad = nd < 0 ? (uint64_t)-(int64_t)nd : (uint64_t)nd;
		if (ad > (m->n - m->pos) / 2)
			return bad(m, start, "truncated: a long integer runs past the end of the file");
		double x = 0;
		for (uint64_t k = ad; k-- > 0;) {
			unsigned d = m->b[m->pos + 2 * k] | m->b[m->pos + 2 * k + 1] << 8;
			if (d >= 1u << 15)
				return bad(m, start, "long integer digit out of range");
			x = x * 32768.0 + d;
		}
		m->pos += 2 * ad;
		id = newval(m, V_NUM, start);
		m->v[id].u.num = nd < 0 ? -x : x;
		m->v[id].is_int = 1;
		break;
	}
	case 'g': {
		if (need(m, 8, start) < 0)
			return -1;
		uint64_t bits = (uint64_t)u32(m->b + m->pos) | (uint64_t)u32(m->b + m->pos + 4) << 32;
		double d;
		memcpy(&d, &bits, sizeof d);
		m->pos += 8;
		id = newval(m, V_NUM, start);
		m->v[id].u.num = d;
		break;
	}
	case 'f': { /* marshal version 0/1 float: a length byte and text */
		if (need(m, 1, start) < 0)
			return -1;
		len = m->b[m->pos++];
		if (need(m, len, start) < 0)
			return -1;
		char tmp[256];
		memcpy(tmp, m->b + m->pos, len);
		tmp[len] = 0;
		char *e;
		double d = strtod(tmp, &e);
		if (!len || *e)
			return bad(m, start, "float text is not a number");
		m->pos += len;
		id = newval(m, V_NUM, start);
		m->v[id].u.num = d;
		break;
	}
	case 'z': case 'Z':
		if (need(m, 1, start) < 0)
			return -1;
		len = m->b[m->pos++];
		goto str;
	case 's': case 'u': case 't': case 'a': case 'A':
		if (need(m, 4, start) < 0)
			return -1;
		len = u32(m->b + m->pos);
		m->pos += 4;
	str:
		if (m->n - m->pos < len)
			return bad(m, start, "truncated: a string runs past the end of the file");
		id = newval(m, V_STR, start);
		m->v[id].n = len;
		m->v[id].u.str = m->pos;
		m->pos += len;
		break;
	case ')': case '(': case '[': case '<': case '>': {
		size_t cnt;
		if (code == ')') {
			if (need(m, 1, start) < 0)
				return -1;
			cnt = m->b[m->pos++];
		} else {
			if (need(m, 4, start) < 0)
				return -1;
			int32_t c = (int32_t)u32(m->b + m->pos);
			m->pos += 4;
			if (c < 0)
				return bad(m, start, "negative container size");
			cnt = (size_t)c;
		}
		if (cnt > m->n - m->pos) /* every item takes a byte at least */
			return bad(m, start, "truncated: a tuple runs past the end of the file");
		id = newval(m, code == ')' || code == '(' ? V_TUPLE : V_OTHER, start);
		if (ref)
			m->refs[slot] = id;
		if (items(m, id, cnt, 0, depth) < 0)
			return -1;
		break;
	}
	case '{':
		id = newval(m, V_DICT, start);
		if (ref)
			m->refs[slot] = id;
		if (items(m, id, 0, 1, depth) < 0)
			return -1;
		break;
	case 'r': {
		if (need(m, 4, start) < 0)
			return -1;
		uint32_t k = u32(m->b + m->pos);
		m->pos += 4;
		if (k >= m->nr || m->refs[k] == UINT32_MAX)
			return bad(m, start, "reference to an object not seen before");
		*out = m->refs[k];
		return 0; /* an 'r' never has FLAG_REF */
	}
	case '0':
		return bad(m, start, "NULL object outside a dict");
	case 'c':
		/* The pure-Python `profile` module names the main script by its
		 * code object, whose layout changes with each Python version. */
		return bad(m, start, "a code object (the pure-Python profile module's output?): only cProfile's files are read");
	default: {
		char msg[80];
		snprintf(msg, sizeof msg, "marshal type '%c' (0x%02x) cannot appear in a pstats file",
			 code >= 32 && code < 127 ? code : '?', code);
		return bad(m, start, msg);
	}
	}
	if (ref)
		m->refs[slot] = id;
	*out = id;
	return 0;
}

/* ---- the pstats dict ---- */

struct fn {
	uint64_t file, func; /* offsets of the strings */
	uint32_t filen, funcn, line;
	double cc, nc, tt, ct;
	uint32_t callers;  /* the callers dict (val id) */
	uint32_t frame;    /* profile frame id (reader) */
	uint32_t first, n; /* callees: edges[first .. first+n) */
	double rootc, roott; /* calls no profiled caller made, their time */
	uint8_t root;      /* some calls had no profiled caller */
	uint8_t dispatch;  /* exec/eval: callees shared out among its callers */
};

#define SLOT_ROOT UINT32_MAX

struct edge {
	uint32_t from, to;
	double ct, nc;
	double tt;     /* the callee's own time in these calls; -1 unknown */
	double cc;     /* calls that were not inside a call of the same pair */
	uint32_t slot; /* edge out of a dispatcher: the caller edge (or
			* SLOT_ROOT) whose calls of it ran this callee */
	uint8_t onstack; /* an edge into a dispatcher is being walked */
};

struct cp {
	struct mp m;
	struct sp_buf data;
	struct fn *fns;
	size_t nfns;
	struct edge *edges;
	size_t nedges;
	struct sp_u64map ix; /* hash of the key -> fn index + 1 */
};

static void cp_release(struct cp *c)
{
	free(c->m.v);
	free(c->m.kids);
	free(c->m.stk);
	free(c->m.refs);
	sp_buf_release(&c->data);
	free(c->fns);
	free(c->edges);
	sp_u64map_release(&c->ix);
}

static const struct val *kid(const struct mp *m, const struct val *v, size_t i)
{
	return &m->v[m->kids[v->u.kids + i]];
}

/* (filename, lineno, funcname) */
static int key_of(struct cp *c, const struct val *k, struct fn *f)
{
	struct mp *m = &c->m;
	if (k->t != V_TUPLE || k->n != 3)
		return bad(m, k->off, "function key is not a (filename, lineno, funcname) tuple");
	const struct val *file = kid(m, k, 0), *line = kid(m, k, 1), *func = kid(m, k, 2);
	if (file->t != V_STR || func->t != V_STR)
		return bad(m, k->off, "function key: filename and funcname must be strings");
	if (line->t != V_NUM || !line->is_int || line->u.num < 0 || line->u.num > UINT32_MAX)
		return bad(m, line->off, "function key: lineno is not a line number");
	f->file = file->u.str;
	f->filen = file->n;
	f->func = func->u.str;
	f->funcn = func->n;
	f->line = (uint32_t)line->u.num;
	return 0;
}

static uint64_t key_hash(const struct cp *c, const struct fn *f)
{
	const char *d = c->data.p;
	uint64_t h = sp_hash_seed(d + f->file, f->filen, f->line);
	h = sp_hash_seed(d + f->func, f->funcn, h);
	return h == UINT64_MAX ? 0 : h;
}

static int same_key(const struct cp *c, const struct fn *a, const struct fn *b)
{
	const char *d = c->data.p;
	return a->line == b->line && a->filen == b->filen && a->funcn == b->funcn &&
	       !memcmp(d + a->file, d + b->file, a->filen) && !memcmp(d + a->func, d + b->func, a->funcn);
}

static int num_ok(const struct val *v) { return v->t == V_NUM && isfinite(v->u.num) && v->u.num >= 0; }

static int cmp_edge(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;
	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	return x->to < y->to ? -1 : x->to > y->to;
}


/* Roots.  A call no profiled frame made (the script's exec under
 * `python -m cProfile`, the function inside Profile.enable/disable) has no
 * caller entry: a function's calls beyond its callers' counts are root
 * calls.  Their time: what the caller edges leave of cumtime; for a
 * recursive function, whose cumtime counts outermost calls only (a root
 * call is always one), cumtime's share of the root calls. */
static void find_roots(struct cp *c)
{
	double *calls = sp_xcalloc(c->nfns + 1, sizeof *calls), *ct = sp_xcalloc(c->nfns + 1, sizeof *ct);
	uint8_t *has = sp_xcalloc(c->nfns + 1, 1);
	for (size_t i = 0; i < c->nedges; i++) {
		calls[c->edges[i].to] += c->edges[i].nc;
		ct[c->edges[i].to] += c->edges[i].ct;
		has[c->edges[i].to] = 1;
	}
	for (size_t i = 0; i < c->nfns; i++) {
		struct fn *f = &c->fns[i];
		double r = f->nc - calls[i];
		if (!has[i]) {
			f->root = 1;
			f->rootc = f->nc;
			f->roott = f->ct;
		} else if (r >= 0.5) {
			f->root = 1;
			f->rootc = r;
			if (f->nc == f->cc)
				f->roott = f->ct > ct[i] ? f->ct - ct[i] : 0;
			else
				f->roott = f->cc > 0 ? f->ct * (r < f->cc ? r / f->cc : 1) : 0;
		}
		const char *d = c->data.p + f->func;
		f->dispatch = f->filen == 1 && c->data.p[f->file] == '~' &&
			      (memmem(d, f->funcn, "builtins.exec>", 14) || memmem(d, f->funcn, "builtins.eval>", 14) ||
			       memmem(d, f->funcn, "method exec>", 12) || memmem(d, f->funcn, "method eval>", 12));
	}
	free(calls);
	free(ct);
	free(has);
}

struct by_ct {
	double ct;
	uint32_t e;
};

static int cmp_ct(const void *a, const void *b)
{
	const struct by_ct *x = a, *y = b;
	if (x->ct != y->ct)
		return x->ct > y->ct ? -1 : 1;
	return x->e < y->e ? -1 : x->e > y->e;
}

/* exec and eval run unrelated code for each caller: the script's
 * <module> for the root call, a module's <module> for importlib's
 * _call_with_frames_removed, the module of `-m` for runpy's _run_code.
 * Spreading every callee over every caller (what the walk does elsewhere)
 * would put the imported modules beside the script.  Each callee goes
 * whole to one caller: largest first, to the caller whose time still
 * holds it and who has calls left (a caller's outermost calls, the pair's
 * primitive count, are its top-level callees).  One that fits nowhere ran
 * in an exec nested in another through the same caller (a module
 * importing a module): it goes to the largest caller, beside its importer
 * (cProfile does not record which module imported which). */
static void share_out(struct cp *c, uint32_t fi)
{
	struct fn *F = &c->fns[fi];
	size_t ns = 0;
	uint32_t *slot = sp_xcalloc(c->nedges + 2, sizeof *slot);
	double *rem = sp_xcalloc(c->nedges + 2, sizeof *rem), *left = sp_xcalloc(c->nedges + 2, sizeof *left);
	if (F->root) {
		slot[ns] = SLOT_ROOT;
		left[ns] = F->rootc;
		rem[ns++] = F->roott;
	}
	for (size_t i = 0; i < c->nedges; i++)
		if (c->edges[i].to == fi) {
			slot[ns] = (uint32_t)i;
			left[ns] = c->edges[i].cc > 0 ? c->edges[i].cc : 1e300;
			rem[ns++] = c->edges[i].ct;
		}
	struct by_ct *order = sp_xcalloc(F->n + 1, sizeof *order);
	for (uint32_t i = 0; i < F->n; i++) {
		order[i].e = F->first + i;
		order[i].ct = c->edges[F->first + i].ct;
		c->edges[F->first + i].slot = SLOT_ROOT;
	}
	sp_sort(order, F->n, sizeof *order, cmp_ct);
	for (uint32_t i = 0; i < F->n && ns; i++) {
		struct edge *e = &c->edges[order[i].e];
		size_t best = SIZE_MAX, big = SIZE_MAX;
		for (size_t s = 0; s < ns; s++) {
			if (left[s] >= 0.5 && rem[s] >= e->ct * (1 - 1e-9) - 1e-12 && (best == SIZE_MAX || rem[s] > rem[best]))
				best = s;
			if (slot[s] != SLOT_ROOT && (big == SIZE_MAX || c->edges[slot[s]].ct > c->edges[slot[big]].ct))
				big = s;
		}
		if (best != SIZE_MAX) {
			e->slot = slot[best];
			rem[best] -= e->ct;
			left[best] -= 1;
			continue;
		}
		if (big == SIZE_MAX)
			big = 0;
		e->slot = slot[big];
	}
	free(order);
	free(slot);
	free(rem);
	free(left);
}

/* Read and check the whole file: functions and caller edges. */
static int cp_load(struct cp *c, struct sp_input *in, struct sp_err *err)
{
	memset(c, 0, sizeof *c);
	sp_u64map_init(&c->ix);
	struct mp *m = &c->m;
	m->name = sp_input_name(in);
	m->err = err;
	for (;;) {
		sp_buf_grow(&c->data, 1 << 16);
		size_t k = sp_input_read(in, c->data.p + c->data.len, c->data.cap - c->data.len);
		c->data.len += k;
		if (!k)
			break;
		if (c->data.len > CP_MAX_INPUT)
			return sp_err_off(err, m->name, CP_MAX_INPUT, "too large for a cProfile file (over 2 GiB)");
	}
	if (sp_input_failed(in, err))
		return -1;
	m->b = (const unsigned char *)c->data.p;
	m->n = c->data.len;
	uint32_t root;
	if (obj(m, &root, 0) < 0)
		return -1;
	if (m->pos != m->n)
		return bad(m, m->pos, "data after the pstats dict");
	const struct val *r = &m->v[root];
	if (r->t != V_DICT)
		return bad(m, r->off, "not a pstats file: the top object is not a dict");
	c->nfns = r->n;
	c->fns = sp_xcalloc(c->nfns ? c->nfns : 1, sizeof *c->fns);
	size_t nedges = 0;
	for (size_t i = 0; i < r->n; i++) {
		struct fn *f = &c->fns[i];
		if (key_of(c, kid(m, r, 2 * i), f) < 0)
			return -1;
		const struct val *v = kid(m, r, 2 * i + 1);
		if (v->t != V_TUPLE || v->n != 5)
			return bad(m, v->off, "function entry is not a (calls, primitive calls, tottime, cumtime, callers) tuple");
		for (int j = 0; j < 4; j++)
			if (!num_ok(kid(m, v, j)))
				return bad(m, kid(m, v, j)->off, "function entry: calls and times must be numbers >= 0");
		f->cc = kid(m, v, 0)->u.num;
		f->nc = kid(m, v, 1)->u.num;
		f->tt = kid(m, v, 2)->u.num;
		f->ct = kid(m, v, 3)->u.num;
		const struct val *cl = kid(m, v, 4);
		if (cl->t != V_DICT)
			return bad(m, cl->off, "function entry: callers is not a dict");
		f->callers = (uint32_t)(cl - m->v);
		nedges += cl->n;
		int found;
		uint32_t *slot = sp_u64map_slot(&c->ix, key_hash(c, f), &found);
		if (found)
			return bad(m, kid(m, r, 2 * i)->off, same_key(c, &c->fns[*slot - 1], f)
								  ? "the same function twice"
								  : "two functions with one key hash");
		*slot = (uint32_t)i + 1;
	}
	c->edges = sp_xcalloc(nedges ? nedges : 1, sizeof *c->edges);
	for (size_t i = 0; i < c->nfns; i++) {
		struct fn *f = &c->fns[i];
		const struct val *cl = &m->v[f->callers];
		for (size_t j = 0; j < cl->n; j++) {
			struct fn tmp;
			const struct val *k = kid(m, cl, 2 * j), *v = kid(m, cl, 2 * j + 1);
			if (key_of(c, k, &tmp) < 0)
				return -1;
			int found;
			uint32_t ix = sp_u64map_get(&c->ix, key_hash(c, &tmp), &found);
			if (!found || !same_key(c, &c->fns[ix - 1], &tmp))
				return bad(m, k->off, "a caller that is not a function of the file");
			struct edge *e = &c->edges[c->nedges++];
			e->from = ix - 1;
			e->to = (uint32_t)i;
			if (v->t == V_TUPLE && v->n == 4) { /* cProfile */
				if (!num_ok(kid(m, v, 3)))
					return bad(m, kid(m, v, 3)->off, "caller entry: cumtime must be a number >= 0");
				e->ct = kid(m, v, 3)->u.num;
				e->tt = num_ok(kid(m, v, 2)) ? kid(m, v, 2)->u.num : -1;
				e->nc = num_ok(kid(m, v, 0)) ? kid(m, v, 0)->u.num : 0;
				e->cc = num_ok(kid(m, v, 1)) ? kid(m, v, 1)->u.num : e->nc;
			} else if (num_ok(v)) { /* profile: a call count */
				e->ct = f->nc > 0 ? f->ct * (v->u.num / f->nc) : 0;
				e->tt = -1;
				e->nc = e->cc = v->u.num;
			} else {
				return bad(m, v->off, "caller entry is not a (calls, primitive calls, tottime, cumtime) tuple");
			}
		}
	}
	sp_sort(c->edges, c->nedges, sizeof *c->edges, cmp_edge);
	for (size_t i = 0; i < c->nedges; i++) {
		struct fn *f = &c->fns[c->edges[i].from];
		if (!f->n)
			f->first = (uint32_t)i;
		f->n++;
	}
	find_roots(c);
	for (size_t i = 0; i < c->nfns; i++)
		if (c->fns[i].dispatch)
			share_out(c, (uint32_t)i);
	return 0;
}

/* ---- stacks from edges ---- */

#define MAX_STACK 512		/* deeper contexts are folded into their parent */
#define MAX_CONTEXTS 2000000	/* pruning gets coarser until the tree fits */

struct walk {
	struct cp *c;
	struct sp_profile *p;
	struct sp_sink *sink;
	struct sp_err *err;
	double eps;
	int emit;
	size_t contexts;
	uint8_t *onstack;
	double *w;        /* pass 1: context time summed per function */
	double *exact;    /* pass 2: own time emitted so far, exact and rounded */
	int64_t *emitted;
};

static int emit(struct walk *k, uint32_t f, uint32_t node, double self_s)
{
	k->exact[f] += self_s * 1e9;
	if (!(k->exact[f] < 9e18)) { /* ns past int64: no real profile's */
		sp_err_set(k->err, "%s: %s: its own time, %.6g s, is out of range", k->c->m.name,
			   sp_str(k->p, sp_frame_get(k->p, k->c->fns[f].frame)->name), k->exact[f] / 1e9);
		return -1;
	}
	int64_t to = llround(k->exact[f]);
	int64_t v = to - k->emitted[f];
	if (!v)
		return 0;
	k->emitted[f] = to;
	struct sp_sample smp;
	memset(&smp, 0, sizeof smp);
	smp.time = SP_NO_TIME;
	smp.stack = node;
	smp.values[0] = (double)v;
	return k->sink->sample ? k->sink->sample(k->sink, k->p, &smp, k->err) : 0;
}

static int visit(struct walk *k, uint32_t f, double t, uint32_t parent, int depth, uint32_t via)
{
	struct fn *F = &k->c->fns[f];
	const struct edge *E = via == SLOT_ROOT ? NULL : &k->c->edges[via];
	/* cProfile keeps, per caller, the callee's own time in the calls it
	 * made (the edge's tottime): of a function that is not recursive, a
	 * context's own time and its callees' time are what its caller's
	 * calls spent, not the function's average (str.join over a long
	 * generator for one caller, over short lists for another). */
	int exact = E && E->tt >= 0 && E->ct > 0 && F->nc == F->cc && !F->dispatch && E->tt <= E->ct;
	double own = exact ? E->tt * (t / E->ct) : F->ct > 0 ? t * (F->tt / F->ct) : 0;
	uint32_t node = 0;
	if (k->emit) {
		node = sp_node_intern(k->p, parent, F->frame);
		if (k->w[f] > 0 && emit(k, f, node, F->tt * (own / k->w[f])) < 0)
			return -1;
	} else {
		k->w[f] += own;
		if (++k->contexts > MAX_CONTEXTS)
			return 1;
	}
	if (depth >= MAX_STACK)
		return 0;
	/* A dispatcher's callees are those of the caller it came from, in
	 * that caller's time.  It runs inside itself through another caller
	 * (exec -> the script -> an import -> exec), so for a dispatcher the
	 * edge into it, not the function, is what recursion checks. */
	double ratio = F->ct > 0 ? t / F->ct : 0;
	if (F->dispatch) {
		double whole = via == SLOT_ROOT ? F->roott : k->c->edges[via].ct;
		ratio = whole > 0 ? t / whole : 0;
	} else if (exact) {
		ratio = F->ct - F->tt > 0 ? (E->ct - E->tt) * (t / E->ct) / (F->ct - F->tt) : 0;
	}
	k->onstack[f] = 1;
	int rc = 0;
	for (uint32_t i = 0; i < F->n && !rc; i++) {
		uint32_t ei = F->first + i;
		struct edge *e = &k->c->edges[ei];
		if (F->dispatch && e->slot != via)
			continue;
		if (k->c->fns[e->to].dispatch ? e->onstack : k->onstack[e->to])
			continue;
		double ct = e->ct * ratio;
		if (ct > t)
			ct = t;
		if (!(ct > k->eps))
			continue;
		e->onstack = 1;
		rc = visit(k, e->to, ct, node, depth + 1, ei);
		e->onstack = 0;
	}
	k->onstack[f] = 0;
	return rc;
}

static int walk_roots(struct walk *k)
{
	struct cp *c = k->c;
	for (size_t i = 0; i < c->nfns; i++) {
		if (!c->fns[i].root)
			continue;
		int rc = visit(k, (uint32_t)i, c->fns[i].roott, 0, 0, SLOT_ROOT);
		if (rc)
			return rc;
	}
	/* Functions no root reaches (callers only in a cycle, or pruned):
	 * their own time as a stack of their own, never dropped. */
	for (size_t i = 0; i < c->nfns; i++) {
		if (k->w[i] > 0 || c->fns[i].tt <= 0)
			continue;
		if (!k->emit) {
			k->w[i] = -1; /* marks: emitted alone */
			continue;
		}
	}
	return 0;
}

static int cp_read(struct sp_input *in, struct sp_profile *p, struct sp_sink *sink, struct sp_read_opts *o,
		   struct sp_err *err)
{
	(void)o;
	struct cp c;
	int rc = -1;
	struct walk k;
	memset(&k, 0, sizeof k);
	if (cp_load(&c, in, err) < 0)
		goto out;
	static const char *const names[] = { "wall-ns" };
	sp_profile_set_values(p, 1, names);
	sp_profile_set_unit(p, 0, "ns");
	sp_meta_add(p, "format", "cprofile");
	if (sink->meta && sink->meta(sink, p, err) < 0)
		goto out;
	for (size_t i = 0; i < c.nfns; i++) {
		struct fn *f = &c.fns[i];
		struct sp_frame fr;
		memset(&fr, 0, sizeof fr);
		fr.kind = SP_KIND_PYTHON;
		fr.name = sp_str_intern(p, c.data.p + f->func, f->funcn);
		if (!(f->filen == 1 && c.data.p[f->file] == '~' && !f->line)) { /* a built-in: no file */
			fr.file = sp_str_intern(p, c.data.p + f->file, f->filen);
			fr.line = f->line;
		}
		f->frame = sp_frame_intern(p, &fr);
	}
	k.c = &c;
	k.p = p;
	k.sink = sink;
	k.err = err;
	k.onstack = sp_xcalloc(c.nfns + 1, 1);
	k.w = sp_xcalloc(c.nfns + 1, sizeof *k.w);
	k.exact = sp_xcalloc(c.nfns + 1, sizeof *k.exact);
	k.emitted = sp_xcalloc(c.nfns + 1, sizeof *k.emitted);
	double total = 0;
	for (size_t i = 0; i < c.nfns; i++)
		if (c.fns[i].root)
			total += c.fns[i].roott;
	k.eps = total * 1e-9;
	/* Pass 1 sums each function's context time; too many contexts (a
	 * wide DAG multiplies them) coarsen the pruning and start again. */
	while (walk_roots(&k) > 0) {
		memset(k.w, 0, c.nfns * sizeof *k.w);
		memset(k.onstack, 0, c.nfns);
		for (size_t i = 0; i < c.nedges; i++)
			c.edges[i].onstack = 0;
		k.contexts = 0;
		k.eps = k.eps > 0 ? k.eps * 10 : 1e-9;
	}
	k.emit = 1;
	if (walk_roots(&k) < 0)
		goto out;
	for (size_t i = 0; i < c.nfns; i++) {
		if (k.w[i] >= 0)
			continue;
		uint32_t node = sp_node_intern(p, 0, c.fns[i].frame);
		k.w[i] = 1;
		if (emit(&k, (uint32_t)i, node, c.fns[i].tt) < 0)
			goto out;
	}
	if (sink->end_input && sink->end_input(sink, p, err) < 0)
		goto out;
	rc = 0;
out:
	free(k.onstack);
	free(k.w);
	free(k.exact);
	free(k.emitted);
	cp_release(&c);
	return rc;
}

/* ---- the table ---- */

struct row {
	const struct fn *f;
};

static int sort_total;

static void std_name(const struct cp *c, const struct fn *f, struct sp_buf *b)
{
	const char *d = c->data.p;
	if (f->filen == 1 && d[f->file] == '~' && !f->line) {
		/* pstats' func_std_string: "{built-in method x}" */
		if (f->funcn >= 2 && d[f->func] == '<' && d[f->func + f->funcn - 1] == '>') {
			sp_buf_addc(b, '{');
			sp_buf_add(b, d + f->func + 1, f->funcn - 2);
			sp_buf_addc(b, '}');
		} else {
			sp_buf_add(b, d + f->func, f->funcn);
		}
		return;
	}
	sp_buf_add(b, d + f->file, f->filen);
	sp_buf_addf(b, ":%u(", f->line);
	sp_buf_add(b, d + f->func, f->funcn);
	sp_buf_addc(b, ')');
}

static int cmp_row(const void *a, const void *b)
{
	const struct fn *x = ((const struct row *)a)->f, *y = ((const struct row *)b)->f;
	double vx = sort_total ? x->ct : x->tt, vy = sort_total ? y->ct : y->tt;
	if (vx != vy)
		return vx > vy ? -1 : 1;
	return x < y ? -1 : x > y;
}

int sp_cprofile_report(struct sp_input *in, FILE *out, const struct sp_cprofile_report_opts *o,
		       struct sp_err *err)
{
	struct cp c;
	int rc = -1;
	struct row *rows = NULL;
	struct sp_buf b = SP_BUF_INIT, name = SP_BUF_INIT;
	if (cp_load(&c, in, err) < 0)
		goto out;
	rows = sp_xcalloc(c.nfns + 1, sizeof *rows);
	double calls = 0, prim = 0, tt = 0;
	for (size_t i = 0; i < c.nfns; i++) {
		rows[i].f = &c.fns[i];
		calls += c.fns[i].nc;
		prim += c.fns[i].cc;
		tt += c.fns[i].tt;
	}
	sort_total = o->sort_total;
	sp_sort(rows, c.nfns, sizeof *rows, cmp_row);
	size_t top = o->top && o->top < c.nfns ? o->top : c.nfns;
	if (o->tsv) {
		sp_buf_adds(&b, "ncalls\tprimcalls\ttottime\tcumtime\tfile\tline\tfunction\n");
	} else {
		if (calls != prim)
			sp_buf_addf(&b, "         %.0f function calls (%.0f primitive calls) in %.3f seconds\n\n", calls,
				    prim, tt);
		else
			sp_buf_addf(&b, "         %.0f function calls in %.3f seconds\n\n", calls, tt);
		sp_buf_addf(&b, "   Ordered by: %s\n", o->sort_total ? "cumulative time" : "internal time");
		if (top < c.nfns)
			sp_buf_addf(&b, "   List reduced from %zu to %zu due to restriction <%zu>\n", c.nfns, top, top);
		sp_buf_adds(&b, "\n   ncalls  tottime  percall  cumtime  percall filename:lineno(function)\n");
	}
	for (size_t i = 0; i < top; i++) {
		const struct fn *f = rows[i].f;
		if (o->tsv) {
			const char *d = c.data.p;
			sp_buf_addf(&b, "%.0f\t%.0f\t%.9g\t%.9g\t", f->nc, f->cc, f->tt, f->ct);
			sp_buf_add(&b, d + f->file, f->filen);
			sp_buf_addf(&b, "\t%u\t", f->line);
			sp_buf_add(&b, d + f->func, f->funcn);
			sp_buf_addc(&b, '\n');
		} else {
			char ncs[64];
			if (f->nc != f->cc)
				snprintf(ncs, sizeof ncs, "%.0f/%.0f", f->nc, f->cc);
			else
				snprintf(ncs, sizeof ncs, "%.0f", f->nc);
			sp_buf_addf(&b, "%9s %8.3f ", ncs, f->tt);
			if (f->nc > 0)
				sp_buf_addf(&b, "%8.3f ", f->tt / f->nc);
			else
				sp_buf_adds(&b, "         ");
			sp_buf_addf(&b, "%8.3f ", f->ct);
			if (f->cc > 0)
				sp_buf_addf(&b, "%8.3f ", f->ct / f->cc);
			else
				sp_buf_adds(&b, "         ");
			sp_buf_reset(&name);
			std_name(&c, f, &name);
			sp_buf_add(&b, name.p, name.len);
			sp_buf_addc(&b, '\n');
		}
		if (b.len > 1 << 16) {
			if (fwrite(b.p, 1, b.len, out) != b.len)
				goto werr;
			sp_buf_reset(&b);
		}
	}
	if (!o->tsv)
		sp_buf_addc(&b, '\n');
	if (b.len && fwrite(b.p, 1, b.len, out) != b.len)
		goto werr;
	rc = 0;
	goto out;
werr:
	sp_err_write(err, errno);
out:
	sp_buf_release(&b);
	sp_buf_release(&name);
	free(rows);
	cp_release(&c);
	return rc;
}

int sp_cprofile_report_file(const char *path, const char *format, FILE *out,
			    const struct sp_cprofile_report_opts *o, struct sp_err *err)
{
	const struct sp_format *f = format ? sp_format_find(format) : NULL;
	if (format && f != &sp_format_cprofile)
		return 0;
	if (!format && !strcmp(path, "-"))
		return 0; /* stdin cannot be read twice: the generic report */
	struct sp_input *in = sp_input_open(path, err);
	if (!in)
		return 0; /* the generic path says why */
	int rc = 0;
	if (!f)
		f = sp_format_probe(in);
	if (f == &sp_format_cprofile) {
		rc = 1;
		if (sp_input_check_empty(in, err) < 0 || sp_cprofile_report(in, out, o, err) < 0)
			rc = -1;
	}
	sp_input_close(in);
	return rc;
}

/* A dict whose first key is a 3-tuple starting with a string: '{' then
 * ')' 3 (either with FLAG_REF) then a string type. */
int sp_cprofile_probe(const char *buf, size_t n, int complete)
{
	(void)complete;
	const unsigned char *b = (const unsigned char *)buf;
	if (n < 4 || (b[0] & ~FLAG_REF) != '{')
		return 0;
	if ((b[1] & ~FLAG_REF) == ')' && b[2] == 3)
		b += 3;
	else if ((b[1] & ~FLAG_REF) == '(' && n >= 7 && u32(b + 2) == 3)
		b += 6;
	else
		return 0;
	if ((size_t)(b - (const unsigned char *)buf) >= n)
		return 0;
	unsigned t = *b & ~FLAG_REF;
	return strchr("zZsuatA", (int)t) && t ? 85 : 0;
}

const struct sp_format sp_format_cprofile = { "cprofile", "Python cProfile/pstats output (python -m cProfile -o)",
					       sp_cprofile_probe, cp_read };
