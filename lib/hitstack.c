/* hitstack.c — profiles of probe hits (see hitstack.h). */
#include "hitstack.h"

#include <stdlib.h>
#include <string.h>

/* SysV x86-64 integer arguments 1..6 in DWARF register numbers. */
static const int arg_reg[7] = { -1, 5, 4, 1, 2, 8, 9 };

struct sp_hitstacks {
	struct sp_sink sink; /* first: the engine's sink */
	struct sp_profile *p;
	struct sp_sink *out;
	int weight_arg;
	unsigned every;
	uint64_t *count; /* per probe: entry hits seen */
	size_t nprobes;
	int in_hit;      /* the engine's sample now is a hit's */
	uint64_t weight;
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
	struct sp_sample w = *smp;
	for (int i = 0; i < SP_MAX_VALUES; i++)
		w.values[i] = 0;
	double n = (double)h->every;
	if (h->weight_arg) {
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

struct sp_hitstacks *sp_hitstacks_new(struct sp_profile *p, struct sp_sink *out, size_t nprobes, int weight_arg,
				      unsigned every)
{
	struct sp_hitstacks *h = sp_xcalloc(1, sizeof *h);
	h->sink.sample = s_sample;
	h->sink.trace = s_trace;
	h->sink.meta = s_meta;
	h->sink.end_input = s_end;
	h->p = p;
	h->out = out;
	h->weight_arg = weight_arg >= 1 && weight_arg <= 6 ? weight_arg : 0;
	h->every = every ? every : 1;
	h->nprobes = nprobes;
	h->count = sp_xcalloc(nprobes ? nprobes : 1, sizeof *h->count);
	static const char *const wv[] = { "bytes", "calls" }, *const cv[] = { "calls" };
	if (h->weight_arg) {
		sp_profile_set_values(p, 2, wv);
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
	free(h->count);
	free(h);
}

struct sp_sink *sp_hitstacks_sink(struct sp_hitstacks *h) { return &h->sink; }

void sp_hitstacks_hit(struct sp_hitstacks *h, const struct sp_perf_handler *engine, const struct sp_perf_uprobe *u,
		      const uint8_t *stack)
{
	if (u->cookie & 1)
		return;
	size_t probe = u->cookie / 2;
	if (!engine->sample)
		return;
	if (probe >= h->nprobes) {
		size_t n = probe + 1;
		h->count = sp_xrealloc(h->count, n * sizeof *h->count);
		memset(h->count + h->nprobes, 0, (n - h->nprobes) * sizeof *h->count);
		h->nprobes = n;
	}
	h->st.hits++;
	if (h->count[probe]++ % h->every) {
		h->st.skipped++;
		return;
	}
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
	h->weight = h->weight_arg && u->has_regs ? u->regs[arg_reg[h->weight_arg]] : 0;
	h->in_hit = 1;
	engine->sample(engine->ctx, &s);
	h->in_hit = 0;
}

const struct sp_hitstacks_stats *sp_hitstacks_stats(const struct sp_hitstacks *h) { return &h->st; }

int sp_hitstacks_error(const struct sp_hitstacks *h, struct sp_err *err)
{
	if (h->failed && err)
		*err = h->err;
	return h->failed;
}
