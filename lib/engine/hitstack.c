/* hitstack.c — profiles of probe hits (see hitstack.h). */
#include "hitstack.h"

#include <stdlib.h>
#include <string.h>

/* SysV x86-64 integer arguments 1..6 in DWARF register numbers. */
static const int arg_reg[7] = { -1, 5, 4, 1, 2, 8, 9 };
#define REG_AX 0

/* live: an allocator call between its entry and its return. */
struct pending {
	uint64_t sp;     /* at the entry: its return is at sp + 8 */
	uint64_t size, old;
	uint32_t stack, thread, event, probe;
	int kept;        /* sampled and unwound: its block is recorded */
};

struct hthread {
	struct pending *v;
	size_t n, cap;
};

/* live: a block, in an open-addressing table keyed by its address. */
struct block {
	uint64_t addr;   /* 0: an empty slot */
	uint64_t size;
	uint32_t stack, thread, event;
};

struct sp_hitstacks {
	struct sp_sink sink; /* first: the engine's sink */
	struct sp_profile *p;
	struct sp_sink *out;
	struct sp_hitstacks_opts o;
	uint64_t *count; /* per probe: entry hits seen */
	uint8_t *role;   /* per probe: enum sp_hit_role */
	size_t nprobes;
	int in_hit;      /* the engine's sample now is a hit's */
	uint64_t weight;
	/* live */
	int got;                    /* the engine unwound the hit: cur is set */
	struct sp_sample cur;
	struct sp_u64map thidx;     /* tid -> index + 1 in th */
	struct hthread *th;
	size_t nth, capth;
	struct block *blk;
	size_t mask, used;
	struct sp_hitstacks_stats st;
	int failed;
	struct sp_err err;
};

static int s_sample(struct sp_sink *s, struct sp_profile *p, const struct sp_sample *smp, struct sp_err *err)
{
	struct sp_hitstacks *h = (struct sp_hitstacks *)s;
	if (!h->in_hit) {
		h->st.cpu++;
		return 0;
	}
	if (h->o.live) {
		h->cur = *smp;
		h->got = 1;
		return 0;
	}
	struct sp_sample w = *smp;
	for (int i = 0; i < SP_MAX_VALUES; i++)
		w.values[i] = 0;
	double n = (double)h->o.every;
	if (h->o.weight[0]) {
		w.values[0] = (double)h->weight * n;
		w.values[1] = n;
	} else {
		w.values[0] = n;
	}
	h->st.written++;
	h->st.weight += h->weight;
	if (h->failed)
		return -1;
	if (h->out->sample(h->out, p, &w, err) < 0) {
		h->failed = 1;
		h->err = *err;
		return -1;
	}
	return 0;
}

static int s_trace(struct sp_sink *s, struct sp_profile *p, const struct sp_trace *t, struct sp_err *err)
{
	struct sp_hitstacks *h = (struct sp_hitstacks *)s;
	return h->out->trace ? h->out->trace(h->out, p, t, err) : 0;
}

static int s_meta(struct sp_sink *s, struct sp_profile *p, struct sp_err *err)
{
	struct sp_hitstacks *h = (struct sp_hitstacks *)s;
	return h->out->meta ? h->out->meta(h->out, p, err) : 0;
}

static int s_end(struct sp_sink *s, struct sp_profile *p, struct sp_err *err)
{
	struct sp_hitstacks *h = (struct sp_hitstacks *)s;
	return h->out->end_input ? h->out->end_input(h->out, p, err) : 0;
}

static int valid_arg(int a) { return a >= 1 && a <= 6 ? a : 0; }

struct sp_hitstacks *sp_hitstacks_new(struct sp_profile *p, struct sp_sink *out, size_t nprobes,
				      const struct sp_hitstacks_opts *o)
{
	struct sp_hitstacks *h = sp_xcalloc(1, sizeof *h);
	h->sink.sample = s_sample;
	h->sink.trace = s_trace;
	h->sink.meta = s_meta;
	h->sink.end_input = s_end;
	h->p = p;
	h->out = out;
	h->o = *o;
	h->o.weight[0] = valid_arg(o->weight[0]);
	h->o.weight[1] = h->o.weight[0] ? valid_arg(o->weight[1]) : 0;
	h->o.every = o->every ? o->every : 1;
	h->nprobes = nprobes;
	h->count = sp_xcalloc(nprobes ? nprobes : 1, sizeof *h->count);
	h->role = sp_xcalloc(nprobes ? nprobes : 1, 1);
	sp_u64map_init(&h->thidx);
	static const char *const wv[] = { "bytes", "calls" }, *const cv[] = { "calls" }, *const lv[] = { "bytes",
													  "blocks" };
	if (h->o.live || h->o.weight[0]) {
		sp_profile_set_values(p, 2, h->o.live ? lv : wv);
		sp_profile_set_unit(p, 0, "bytes");
		sp_profile_set_unit(p, 1, "samples");
	} else {
		sp_profile_set_values(p, 1, cv);
		sp_profile_set_unit(p, 0, "samples");
	}
	return h;
}

void sp_hitstacks_free(struct sp_hitstacks *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < h->nth; i++)
		free(h->th[i].v);
	free(h->th);
	free(h->blk);
	sp_u64map_release(&h->thidx);
	free(h->count);
	free(h->role);
	free(h);
}

struct sp_sink *sp_hitstacks_sink(struct sp_hitstacks *h) { return &h->sink; }

static void grow_probes(struct sp_hitstacks *h, size_t probe)
{
	if (probe < h->nprobes)
		return;
	size_t n = probe + 1;
	h->count = sp_xrealloc(h->count, n * sizeof *h->count);
	memset(h->count + h->nprobes, 0, (n - h->nprobes) * sizeof *h->count);
	h->role = sp_xrealloc(h->role, n);
	memset(h->role + h->nprobes, 0, n - h->nprobes);
	h->nprobes = n;
}

void sp_hitstacks_role(struct sp_hitstacks *h, size_t probe, enum sp_hit_role role)
{
	grow_probes(h, probe);
	h->role[probe] = (uint8_t)role;
}

/* ---- live: the table of blocks (linear probing, backward-shift delete) ---- */

static struct block *blk_find(struct sp_hitstacks *h, uint64_t addr)
{
	if (!h->blk)
		return NULL;
	for (size_t i = sp_mix64(addr) & h->mask;; i = (i + 1) & h->mask) {
		if (h->blk[i].addr == addr)
			return &h->blk[i];
		if (!h->blk[i].addr)
			return NULL;
	}
}

static void blk_put(struct sp_hitstacks *h, const struct block *b)
{
	if (!h->blk || 2 * (h->used + 1) > h->mask + 1) {
		size_t cap = h->blk ? 2 * (h->mask + 1) : 1024;
		struct block *old = h->blk;
		size_t oldcap = old ? h->mask + 1 : 0;
		h->blk = sp_xcalloc(cap, sizeof *h->blk);
		h->mask = cap - 1;
		h->used = 0;
		for (size_t i = 0; i < oldcap; i++)
			if (old[i].addr)
				blk_put(h, &old[i]);
		free(old);
	}
	size_t i = sp_mix64(b->addr) & h->mask;
	while (h->blk[i].addr && h->blk[i].addr != b->addr)
		i = (i + 1) & h->mask;
	if (!h->blk[i].addr)
		h->used++;
	h->blk[i] = *b; /* an address seen again (malloc inside realloc): the outer call's */
}

static int blk_del(struct sp_hitstacks *h, uint64_t addr)
{
	struct block *b = blk_find(h, addr);
	if (!b)
		return 0;
	size_t i = (size_t)(b - h->blk);
	/* Pull later members of the run back over the hole. */
	for (size_t j = (i + 1) & h->mask; h->blk[j].addr; j = (j + 1) & h->mask) {
		size_t home = sp_mix64(h->blk[j].addr) & h->mask;
		if (((j - home) & h->mask) >= ((j - i) & h->mask)) {
			h->blk[i] = h->blk[j];
			i = j;
		}
	}
	h->blk[i].addr = 0;
	h->used--;
	return 1;
}

/* Hit u as a sample of the engine, whose sink (s_sample) gets it back. */
static void unwind(struct sp_hitstacks *h, const struct sp_perf_handler *engine, const struct sp_perf_uprobe *u,
		   const uint8_t *stack)
{
	struct sp_perf_sample s;
	memset(&s, 0, sizeof s);
	s.pid = u->pid;
	s.tid = u->tid;
	s.time = u->time;
	s.period = 1;
	s.ip = u->ip;
	s.has_regs = u->has_regs;
	memcpy(s.regs, u->regs, sizeof s.regs);
	s.stack = stack ? stack : u->stack;
	s.stack_len = u->stack_len;
	h->in_hit = 1;
	engine->sample(engine->ctx, &s);
	h->in_hit = 0;
}

static struct hthread *thread_of(struct sp_hitstacks *h, uint32_t tid)
{
	int found;
	uint32_t *slot = sp_u64map_slot(&h->thidx, tid, &found);
	if (!found) {
		if (h->nth == h->capth) {
			h->capth = h->capth ? 2 * h->capth : 16;
			h->th = sp_xrealloc(h->th, h->capth * sizeof *h->th);
		}
		memset(&h->th[h->nth], 0, sizeof *h->th);
		*slot = (uint32_t)++h->nth;
	}
	return &h->th[*slot - 1];
}

static void live_hit(struct sp_hitstacks *h, const struct sp_perf_handler *engine, const struct sp_perf_uprobe *u,
		     const uint8_t *stack, size_t probe, int role)
{
	const uint64_t *r = u->regs;
	uint64_t sp = r[SP_REG_SP];
	if (role == SP_HIT_FREE) {
		if (!(u->cookie & 1) && r[arg_reg[1]]) {
			if (blk_del(h, r[arg_reg[1]]))
				h->st.frees++;
			else
				h->st.unknown++;
		}
		return;
	}
	struct hthread *th = thread_of(h, u->tid);
	if (u->cookie & 1) {
		/* The return of the open call entered at sp - 8; calls above it
		 * were left without returning. */
		while (th->n && th->v[th->n - 1].sp + 8 < sp) {
			th->n--;
			h->st.unpaired++;
		}
		if (!th->n || th->v[th->n - 1].sp + 8 != sp || th->v[th->n - 1].probe != probe)
			return;
		const struct pending *c = &th->v[--th->n];
		uint64_t addr = r[REG_AX];
		if (role == SP_HIT_REALLOC && c->old && (addr || !c->size))
			blk_del(h, c->old);
		if (c->kept && addr) {
			struct block b = { addr, c->size, c->stack, c->thread, c->event };
			blk_put(h, &b);
			h->st.allocs++;
		}
		return;
	}
	h->st.hits++;
	/* An entry at sp: every open call at or below it is gone. */
	while (th->n && th->v[th->n - 1].sp <= sp) {
		th->n--;
		h->st.unpaired++;
	}
	uint64_t size = role == SP_HIT_MALLOC ? r[arg_reg[1]]
			: role == SP_HIT_CALLOC ? r[arg_reg[1]] * r[arg_reg[2]]
						: r[arg_reg[2]];
	uint64_t old = role == SP_HIT_REALLOC ? r[arg_reg[1]] : 0;
	int kept = 0;
	if (h->count[probe]++ % h->o.every) {
		h->st.skipped++;
	} else if (engine->sample) {
		h->got = 0;
		unwind(h, engine, u, stack);
		kept = h->got;
	}
	if (!kept && !old)
		return; /* nothing to do at its return */
	if (th->n == th->cap) {
		th->cap = th->cap ? 2 * th->cap : 8;
		th->v = sp_xrealloc(th->v, th->cap * sizeof *th->v);
	}
	struct pending *c = &th->v[th->n++];
	*c = (struct pending){ sp, size, old, 0, 0, 0, (uint32_t)probe, kept };
	if (kept) {
		c->stack = h->cur.stack;
		c->thread = h->cur.thread;
		c->event = h->cur.event;
	}
}

void sp_hitstacks_hit(struct sp_hitstacks *h, const struct sp_perf_handler *engine, const struct sp_perf_uprobe *u,
		      const uint8_t *stack)
{
	size_t probe = u->cookie / 2;
	grow_probes(h, probe);
	if (h->o.live) {
		if (h->role[probe] && u->has_regs)
			live_hit(h, engine, u, stack, probe, h->role[probe]);
		return;
	}
	if (u->cookie & 1 || !engine->sample)
		return;
	h->st.hits++;
	if (h->count[probe]++ % h->o.every) {
		h->st.skipped++;
		return;
	}
	h->weight = 0;
	if (h->o.weight[0] && u->has_regs) {
		h->weight = u->regs[arg_reg[h->o.weight[0]]];
		if (h->o.weight[1])
			h->weight *= u->regs[arg_reg[h->o.weight[1]]];
	}
	unwind(h, engine, u, stack);
}

int sp_hitstacks_finish(struct sp_hitstacks *h, uint64_t time, struct sp_err *err)
{
	if (!h->o.live || h->failed)
		return h->failed ? -1 : 0;
	for (size_t i = 0; i < h->nth; i++)
		h->st.unpaired += h->th[i].n;
	/* Sum the blocks per (stack, thread): one sample each. */
	struct sum {
		uint32_t stack, thread, event;
		uint64_t bytes, n;
	} *sum = NULL;
	size_t nsum = 0, cap = 0;
	struct sp_u64map idx;
	sp_u64map_init(&idx);
	for (size_t i = 0; h->blk && i <= h->mask; i++) {
		const struct block *b = &h->blk[i];
		if (!b->addr)
			continue;
		int found;
		uint32_t *slot = sp_u64map_slot(&idx, (uint64_t)b->stack << 32 | b->thread, &found);
		if (!found) {
			if (nsum == cap) {
				cap = cap ? 2 * cap : 64;
				sum = sp_xrealloc(sum, cap * sizeof *sum);
			}
			sum[nsum] = (struct sum){ b->stack, b->thread, b->event, 0, 0 };
			*slot = (uint32_t)++nsum;
		}
		sum[*slot - 1].bytes += b->size;
		sum[*slot - 1].n++;
		h->st.live++;
		h->st.live_bytes += b->size;
	}
	sp_u64map_release(&idx);
	int rc = 0;
	for (size_t i = 0; i < nsum && !rc; i++) {
		struct sp_sample w;
		memset(&w, 0, sizeof w);
		w.stack = sum[i].stack;
		w.thread = sum[i].thread;
		w.event = sum[i].event;
		w.time = time;
		w.values[0] = (double)sum[i].bytes * h->o.every;
		w.values[1] = (double)sum[i].n * h->o.every;
		if (h->out->sample(h->out, h->p, &w, err) < 0) {
			h->failed = 1;
			h->err = *err;
			rc = -1;
		}
		h->st.written++;
	}
	free(sum);
	return rc;
}

const struct sp_hitstacks_stats *sp_hitstacks_stats(const struct sp_hitstacks *h) { return &h->st; }

int sp_hitstacks_error(const struct sp_hitstacks *h, struct sp_err *err)
{
	if (h->failed && err)
		*err = h->err;
	return h->failed;
}
