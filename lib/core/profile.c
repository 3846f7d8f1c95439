/* profile.c — interning tables for strings, frames, stack nodes, threads. */
#include "profile.h"

#include <math.h>
#include <stdio.h>

#include <stdlib.h>

struct str_ent {
	const char *s;
	uint32_t len;
	uint64_t hash;
};

struct sp_profile {
	struct sp_arena arena;
	/* strings */
	struct str_ent *strs;
	uint32_t nstrs, capstrs;
	uint32_t *strtab; /* open addressing over string ids, 0 = empty */
	size_t strmask;
	/* frames */
	struct sp_frame *frames;
	uint32_t nframes, capframes;
	uint32_t *frametab;
	size_t framemask;
	/* nodes */
	struct sp_node *nodes;
	uint32_t nnodes, capnodes;
	struct sp_u64map nodemap;
	/* threads */
	struct sp_thread *threads;
	uint32_t nthreads, capthreads;
	struct sp_u64map threadmap; /* hash of (pid,tid,name) -> chain head via probing */
	/* values */
	int nvalues;
	char *value_names[SP_MAX_VALUES];
	char *value_units[SP_MAX_VALUES]; /* NULL: inferred (sp_value_unit) */
	/* metadata */
	struct sp_meta *meta;
	size_t nmeta, capmeta;
};

static const char *const kind_names[SP_KIND_MAX] = {
	"native", "kernel", "jit", "inlined", "python", "synthetic",
};

const char *sp_kind_name(unsigned kind)
{
	return kind < SP_KIND_MAX ? kind_names[kind] : "unknown";
}

int sp_kind_parse(const char *s, size_t n)
{
	for (int i = 0; i < SP_KIND_MAX; i++)
		if (strlen(kind_names[i]) == n && !memcmp(kind_names[i], s, n))
			return i;
	return -1;
}

struct sp_profile *sp_profile_new(void)
{
	struct sp_profile *p = sp_xcalloc(1, sizeof *p);
	sp_arena_init(&p->arena);
	sp_u64map_init(&p->nodemap);
	sp_u64map_init(&p->threadmap);
	p->capstrs = 1024;
	p->strs = sp_xmalloc(p->capstrs * sizeof *p->strs);
	p->strmask = 2047;
	p->strtab = sp_xzalloc(p->strmask + 1, sizeof *p->strtab);
	p->strs[0] = (struct str_ent){ "", 0, sp_hash("", 0) };
	p->nstrs = 1;

	p->capframes = 1024;
	p->frames = sp_xcalloc(p->capframes, sizeof *p->frames);
	p->framemask = 2047;
	p->frametab = sp_xzalloc(p->framemask + 1, sizeof *p->frametab);
	p->nframes = 1; /* frame 0: unused placeholder */

	p->capnodes = 1024;
	p->nodes = sp_xcalloc(p->capnodes, sizeof *p->nodes);
	p->nnodes = 1;

	p->capthreads = 64;
	p->threads = sp_xcalloc(p->capthreads, sizeof *p->threads);
	p->threads[0] = (struct sp_thread){ -1, -1, 0 };
	p->nthreads = 1;
	return p;
}

void sp_profile_free(struct sp_profile *p)
{
	if (!p)
		return;
	sp_arena_release(&p->arena);
	free(p->strs);
	free(p->strtab);
	free(p->frames);
	free(p->frametab);
	free(p->nodes);
	sp_u64map_release(&p->nodemap);
	free(p->threads);
	sp_u64map_release(&p->threadmap);
	for (int i = 0; i < p->nvalues; i++) {
		free(p->value_names[i]);
		free(p->value_units[i]);
	}
	free(p->meta);
	free(p);
}

/* ---- strings ---- */

static void str_rehash(struct sp_profile *p)
{
	size_t cap = (p->strmask + 1) * 2;
	uint32_t *t = sp_xzalloc(cap, sizeof *t);
	for (uint32_t id = 1; id < p->nstrs; id++) {
		size_t i = p->strs[id].hash & (cap - 1);
		while (t[i])
			i = (i + 1) & (cap - 1);
		t[i] = id;
	}
	free(p->strtab);
	p->strtab = t;
	p->strmask = cap - 1;
}

uint32_t sp_str_intern_h(struct sp_profile *p, const char *s, size_t n, uint64_t h)
{
	if (n == 0)
		return 0;
	size_t i = h & p->strmask;
	for (;;) {
		uint32_t id = p->strtab[i];
		if (!id)
			break;
		const struct str_ent *e = &p->strs[id];
		if (e->hash == h && e->len == n && !memcmp(e->s, s, n))
			return id;
		i = (i + 1) & p->strmask;
	}
	if (p->nstrs == p->capstrs) {
		p->capstrs *= 2;
		p->strs = sp_xrealloc(p->strs, p->capstrs * sizeof *p->strs);
	}
	uint32_t id = p->nstrs++;
	p->strs[id] = (struct str_ent){ sp_arena_strndup(&p->arena, s, n), (uint32_t)n, h };
	p->strtab[i] = id;
	if ((size_t)p->nstrs * 2 > p->strmask)
		str_rehash(p);
	return id;
}

uint32_t sp_str_intern(struct sp_profile *p, const char *s, size_t n)
{
	return sp_str_intern_h(p, s, n, sp_hash(s, n));
}

const char *sp_str(const struct sp_profile *p, uint32_t id)
{
	return id < p->nstrs ? p->strs[id].s : "";
}

size_t sp_str_len(const struct sp_profile *p, uint32_t id)
{
	return id < p->nstrs ? p->strs[id].len : 0;
}

uint32_t sp_str_count(const struct sp_profile *p) { return p->nstrs; }

/* ---- frames ---- */

static uint64_t frame_hash(const struct sp_frame *f)
{
	uint64_t h = sp_mix64(((uint64_t)f->name << 32) ^ f->module ^ ((uint64_t)f->kind << 56));
	h = sp_mix64(h ^ (((uint64_t)f->file << 32) | f->line));
	return sp_mix64(h ^ f->addr);
}

static int frame_eq(const struct sp_frame *a, const struct sp_frame *b)
{
	return a->name == b->name && a->module == b->module && a->file == b->file &&
	       a->line == b->line && a->addr == b->addr && a->kind == b->kind;
}

static void frame_rehash(struct sp_profile *p)
{
	size_t cap = (p->framemask + 1) * 2;
	uint32_t *t = sp_xzalloc(cap, sizeof *t);
	for (uint32_t id = 1; id < p->nframes; id++) {
		size_t i = frame_hash(&p->frames[id]) & (cap - 1);
		while (t[i])
			i = (i + 1) & (cap - 1);
		t[i] = id;
	}
	free(p->frametab);
	p->frametab = t;
	p->framemask = cap - 1;
}

uint32_t sp_frame_intern(struct sp_profile *p, const struct sp_frame *f)
{
	struct sp_frame k = *f;
	size_t i = frame_hash(&k) & p->framemask;
	for (;;) {
		uint32_t id = p->frametab[i];
		if (!id)
			break;
		if (frame_eq(&p->frames[id], &k))
			return id;
		i = (i + 1) & p->framemask;
	}
	if (p->nframes == p->capframes) {
		p->capframes *= 2;
		p->frames = sp_xrealloc(p->frames, p->capframes * sizeof *p->frames);
	}
	uint32_t id = p->nframes++;
	p->frames[id] = k;
	p->frametab[i] = id;
	if ((size_t)p->nframes * 2 > p->framemask)
		frame_rehash(p);
	return id;
}

uint32_t sp_frame_named(struct sp_profile *p, const char *name, size_t n, unsigned kind)
{
	struct sp_frame f = { 0 };
	f.name = sp_str_intern(p, name, n);
	f.kind = (uint8_t)kind;
	return sp_frame_intern(p, &f);
}

const struct sp_frame *sp_frame_get(const struct sp_profile *p, uint32_t id)
{
	return &p->frames[id < p->nframes ? id : 0];
}

uint32_t sp_frame_count(const struct sp_profile *p) { return p->nframes; }

/* ---- nodes ---- */

void sp_profile_drop_node_index(struct sp_profile *p) { sp_u64map_release(&p->nodemap); }

void sp_str_prefetch(const struct sp_profile *p, uint64_t h) { __builtin_prefetch(&p->strtab[h & p->strmask]); }

void sp_node_prefetch(const struct sp_profile *p, uint32_t parent, uint32_t frame)
{
	if (p->nodemap.tab)
		__builtin_prefetch(&p->nodemap.tab[sp_mix64(((uint64_t)parent << 32) | frame) & p->nodemap.mask]);
}

/* The index again, after sp_profile_drop_node_index (node 0, the root, is
 * never in it). */
static void node_index_build(struct sp_profile *p)
{
	for (uint32_t id = 1; id < p->nnodes; id++) {
		int found;
		*sp_u64map_slot(&p->nodemap, ((uint64_t)p->nodes[id].parent << 32) | p->nodes[id].frame, &found) = id;
	}
}

uint32_t sp_node_intern(struct sp_profile *p, uint32_t parent, uint32_t frame)
{
	int found;
	if (__builtin_expect(!p->nodemap.tab && p->nnodes > 1, 0))
		node_index_build(p);
	uint32_t *slot = sp_u64map_slot(&p->nodemap, ((uint64_t)parent << 32) | frame, &found);
	if (found)
		return *slot;
	if (p->nnodes == p->capnodes) {
		p->capnodes *= 2;
		p->nodes = sp_xrealloc(p->nodes, p->capnodes * sizeof *p->nodes);
	}
	uint32_t id = p->nnodes++;
	p->nodes[id] = (struct sp_node){ parent, frame, p->nodes[parent].depth + 1 };
	*slot = id;
	return id;
}

const struct sp_node *sp_node_get(const struct sp_profile *p, uint32_t id)
{
	return &p->nodes[id < p->nnodes ? id : 0];
}

uint32_t sp_node_count(const struct sp_profile *p) { return p->nnodes; }

uint32_t sp_node_frames(const struct sp_profile *p, uint32_t node, uint32_t **out, size_t *cap)
{
	uint32_t d = p->nodes[node].depth;
	if (*cap < d + 1) {
		*cap = d + 16;
		*out = sp_xrealloc(*out, *cap * sizeof **out);
	}
	for (uint32_t i = d; i > 0; i--) {
		(*out)[i - 1] = p->nodes[node].frame;
		node = p->nodes[node].parent;
	}
	return d;
}

/* ---- threads ---- */

uint32_t sp_thread_intern(struct sp_profile *p, int64_t pid, int64_t tid, uint32_t name)
{
	uint64_t key = sp_mix64((uint64_t)pid * 0x9E3779B97F4A7C15ULL ^ (uint64_t)tid) ^ name;
	if (key == UINT64_MAX)
		key--;
	/* Colliding keys probe linearly through successor keys. */
	for (;;) {
		int found;
		uint32_t *slot = sp_u64map_slot(&p->threadmap, key, &found);
		if (found) {
			const struct sp_thread *t = &p->threads[*slot];
			if (t->pid == pid && t->tid == tid && t->name == name)
				return *slot;
			key = sp_mix64(key + 1);
			if (key == UINT64_MAX)
				key--;
			continue;
		}
		if (p->nthreads == p->capthreads) {
			p->capthreads *= 2;
			p->threads = sp_xrealloc(p->threads, p->capthreads * sizeof *p->threads);
		}
		uint32_t id = p->nthreads++;
		p->threads[id] = (struct sp_thread){ pid, tid, name };
		*slot = id;
		return id;
	}
}

const struct sp_thread *sp_thread_get(const struct sp_profile *p, uint32_t id)
{
	return &p->threads[id < p->nthreads ? id : 0];
}

uint32_t sp_thread_count(const struct sp_profile *p) { return p->nthreads; }

/* ---- values and metadata ---- */

int sp_profile_nvalues(const struct sp_profile *p) { return p->nvalues; }

const char *sp_profile_value_name(const struct sp_profile *p, int i)
{
	return i >= 0 && i < p->nvalues ? p->value_names[i] : "";
}

void sp_profile_set_values(struct sp_profile *p, int n, const char *const *names)
{
	for (int i = 0; i < p->nvalues; i++) {
		free(p->value_names[i]);
		free(p->value_units[i]);
		p->value_units[i] = NULL;
	}
	if (n > SP_MAX_VALUES)
		n = SP_MAX_VALUES;
	p->nvalues = n;
	for (int i = 0; i < n; i++)
		p->value_names[i] = sp_xstrndup(names[i], strlen(names[i]));
}

void sp_profile_set_unit(struct sp_profile *p, int i, const char *unit)
{
	if (i < 0 || i >= p->nvalues)
		return;
	free(p->value_units[i]);
	p->value_units[i] = unit && *unit ? sp_xstrndup(unit, strlen(unit)) : NULL;
}

int sp_value_find(const struct sp_profile *p, const char *name)
{
	for (int i = 0; i < p->nvalues; i++)
		if (!strcmp(p->value_names[i], name))
			return i;
	return -1;
}

int sp_value_option(const struct sp_profile *p, const char *opt, const char *name, struct sp_err *err)
{
	if (!name) {
		int i = sp_value_find(p, "period");
		return i < 0 ? 0 : i;
	}
	int i = sp_value_find(p, name);
	if (i < 0 && !strcmp(name, "count"))
		i = sp_value_find(p, "samples");
	if (i >= 0)
		return i;
	char *end;
	unsigned long ix = strtoul(name, &end, 10);
	if (name[0] >= '0' && name[0] <= '9' && !*end && ix < (unsigned long)p->nvalues)
		return (int)ix;
	char have[256] = "";
	size_t at = 0;
	for (int k = 0; k < p->nvalues && at < sizeof have; k++) {
		int n = snprintf(have + at, sizeof have - at, "%s%s", k ? ", " : "", p->value_names[k]);
		at += n > 0 ? (size_t)n : 0;
	}
	return sp_err_set(err, "%s=%s: the input has no such value column (its columns: %s)", opt, name,
			  p->nvalues ? have : "none");
}

int sp_value_column(const struct sp_profile *p, const char *name, struct sp_err *err)
{
	return sp_value_option(p, "--weight", name, err);
}

int sp_value_is_diff(const struct sp_profile *p)
{
	return p->nvalues == 2 && !strcmp(p->value_names[0], "a") && !strcmp(p->value_names[1], "b");
}

static int is_clock_event(const char *ev)
{
	return !strncmp(ev, "cpu-clock", 9) || !strncmp(ev, "task-clock", 10);
}

const char *sp_value_unit(const struct sp_profile *p, int i, uint32_t event)
{
	if (i < 0 || i >= p->nvalues)
		return "samples";
	if (p->value_units[i])
		return p->value_units[i];
	const char *n = p->value_names[i];
	size_t len = strlen(n);
	if (!strcmp(n, "samples") || !strcmp(n, "count"))
		return "samples";
	/* folded text's value and a difference of two: a number, unit unknown */
	if (!strcmp(n, "value") || !strcmp(n, "a") || !strcmp(n, "b"))
		return "";
	if (!strcmp(n, "ns") || (len > 3 && !strcmp(n + len - 3, "-ns")))
		return "ns";
	if (!strcmp(n, "bytes"))
		return "bytes";
	if (!strcmp(n, "period")) {
		/* perf's period counts the event: nanoseconds for the clock
		 * events (pcollect's cpu-clock), cycles or instructions else. */
		const char *ev = event ? sp_str(p, event) : sp_meta_find(p, "event");
		return ev && is_clock_event(ev) ? "ns" : "events";
	}
	return n;
}

int sp_profile_unit_set(const struct sp_profile *p, int i)
{
	return i >= 0 && i < p->nvalues && p->value_units[i];
}

int sp_unit_is_time(const char *unit) { return !strcmp(unit, "ns"); }

void sp_buf_addvalue(struct sp_buf *b, double v, const char *unit)
{
	if (sp_unit_is_time(unit)) {
		double a = fabs(v);
		if (a >= 1e9)
			sp_buf_addf(b, "%.2f s", v / 1e9);
		else
			sp_buf_addf(b, "%.2f ms", v / 1e6);
		return;
	}
	/* counts with thousands separators: "14,014 samples" */
	char t[64];
	if (v == floor(v) && fabs(v) < 9.2e18)
		snprintf(t, sizeof t, "%lld", (long long)fabs(v));
	else
		snprintf(t, sizeof t, "%.2f", fabs(v));
	if (v < 0)
		sp_buf_addc(b, '-');
	char *dot = strchr(t, '.');
	size_t ip = dot ? (size_t)(dot - t) : strlen(t);
	for (size_t k = 0; k < ip; k++) {
		if (k && (ip - k) % 3 == 0)
			sp_buf_addc(b, ',');
		sp_buf_addc(b, t[k]);
	}
	if (dot)
		sp_buf_adds(b, dot);
	if (*unit) {
		sp_buf_addc(b, ' ');
		sp_buf_adds(b, unit);
	}
}

void sp_meta_add(struct sp_profile *p, const char *key, const char *value)
{
	if (p->nmeta == p->capmeta) {
		p->capmeta = p->capmeta ? p->capmeta * 2 : 16;
		p->meta = sp_xrealloc(p->meta, p->capmeta * sizeof *p->meta);
	}
	p->meta[p->nmeta].key = sp_str_intern(p, key, strlen(key));
	p->meta[p->nmeta].value = sp_str_intern(p, value, strlen(value));
	p->nmeta++;
}

size_t sp_meta_count(const struct sp_profile *p) { return p->nmeta; }

const struct sp_meta *sp_meta_get(const struct sp_profile *p, size_t i)
{
	return i < p->nmeta ? &p->meta[i] : NULL;
}

const char *sp_meta_find(const struct sp_profile *p, const char *key)
{
	for (size_t i = p->nmeta; i > 0; i--)
		if (!strcmp(sp_str(p, p->meta[i - 1].key), key))
			return sp_str(p, p->meta[i - 1].value);
	return NULL;
}
