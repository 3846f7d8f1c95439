/* Unit tests of lib/hitstack: a probe hit goes to the engine's sample
 * callback (a fake one here, which writes a sample into the sink it was
 * given, as the engine does), and comes back weighed by the argument, in
 * the profile's own columns; the engine's CPU samples are dropped;
 * --every N keeps the 1st, N+1th... hit of each probe, times N. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hitstack.h"

#include "unit.h"

struct got {
	struct sp_sink sink;
	double v[16][2];
	uint32_t tid[16];
	int n;
};

static int g_sample(struct sp_sink *s, struct sp_profile *p, const struct sp_sample *smp, struct sp_err *e)
{
	(void)p;
	(void)e;
	struct got *g = (struct got *)s;
	if (g->n < 16) {
		g->v[g->n][0] = smp->values[0];
		g->v[g->n][1] = smp->values[1];
		g->tid[g->n] = smp->thread;
		g->n++;
	}
	return 0;
}

/* The fake engine: a sample of the raw sample's tid (as thread) into the
 * sink, values 1 and the period, as collect.c writes them. */
struct fake {
	struct sp_sink *sink;
	struct sp_profile *p;
	uint64_t last_sp, last_stack0;
};

static void f_sample(void *ctx, const struct sp_perf_sample *s)
{
	struct fake *f = ctx;
	struct sp_sample smp;
	struct sp_err err;
	memset(&smp, 0, sizeof smp);
	smp.thread = s->tid;
	smp.values[0] = 1;
	smp.values[1] = (double)s->period;
	f->last_sp = s->regs[SP_REG_SP];
	f->last_stack0 = s->stack_len ? s->stack[0] : 0;
	f->sink->sample(f->sink, f->p, &smp, &err);
}

/* A hit of process 100: rdi, rsi, rax, at SP sp, with an 8-byte stack. */
static void hit_regs(struct sp_hitstacks *h, struct sp_perf_handler *eng, uint32_t cookie, uint32_t tid, uint64_t rdi,
		     uint64_t rsi, uint64_t rax, uint64_t sp, const uint8_t *stack, const uint8_t *fixed)
{
	struct sp_perf_uprobe u;
	memset(&u, 0, sizeof u);
	u.cookie = cookie;
	u.pid = 100;
	u.tid = tid;
	u.has_regs = 1;
	u.regs[5] = rdi; /* rdi: arg1 */
	u.regs[4] = rsi; /* rsi: arg2 */
	u.regs[0] = rax;
	u.regs[SP_REG_SP] = sp;
	u.stack = stack;
	u.stack_len = 8;
	sp_hitstacks_hit(h, eng, &u, fixed);
}

static void hit(struct sp_hitstacks *h, struct sp_perf_handler *eng, uint32_t cookie, uint32_t tid, uint64_t rdi,
		const uint8_t *stack, const uint8_t *fixed)
{
	hit_regs(h, eng, cookie, tid, rdi, 7, 0, 0x7000, stack, fixed);
}

/* A live-view hit: entry cookies with arguments rdi, rsi at SP 0x7000,
 * returns (odd cookies) at SP 0x7008 with rax. */
static void live(struct sp_hitstacks *h, struct sp_perf_handler *eng, uint32_t cookie, uint32_t tid, uint64_t rdi,
		 uint64_t rsi, uint64_t rax)
{
	static uint8_t stack[8];
	hit_regs(h, eng, cookie, tid, rdi, rsi, rax, cookie & 1 ? 0x7008 : 0x7000, stack, NULL);
}

int main(void)
{
	uint8_t stack[8] = { 1 }, fixed[8] = { 2 };
	/* weight arg1 */
	struct sp_profile *p = sp_profile_new();
	struct got g;
	memset(&g, 0, sizeof g);
	g.sink.sample = g_sample;
	struct sp_hitstacks *h = sp_hitstacks_new(p, &g.sink, 1, &(struct sp_hitstacks_opts){ { 1, 0 }, 1, 0 });
	CHECK(sp_profile_nvalues(p) == 2 && !strcmp(sp_profile_value_name(p, 0), "bytes") &&
		      !strcmp(sp_profile_value_name(p, 1), "calls"),
	      "weight: columns bytes, calls");
	CHECK(!strcmp(sp_value_unit(p, 0, 0), "bytes") && !strcmp(sp_value_unit(p, 1, 0), "samples"),
	      "weight: units bytes, samples");
	struct fake f = { sp_hitstacks_sink(h), p, 0, 0 };
	struct sp_perf_handler eng;
	memset(&eng, 0, sizeof eng);
	eng.ctx = &f;
	eng.sample = f_sample;
	hit(h, &eng, 0, 11, 1000, stack, NULL);
	CHECK(g.n == 1 && g.v[0][0] == 1000 && g.v[0][1] == 1 && g.tid[0] == 11, "a hit: bytes = arg1, calls = 1");
	CHECK(f.last_sp == 0x7000 && f.last_stack0 == 1, "the engine gets the hit's registers and stack");
	hit(h, &eng, 0, 11, 24, stack, fixed);
	CHECK(g.n == 2 && g.v[1][0] == 24 && f.last_stack0 == 2, "a fixed stack is the one unwound");
	hit(h, &eng, 1, 11, 5, stack, NULL);
	CHECK(g.n == 2, "return hits make no sample");
	hit(h, &eng, 4, 12, 300, stack, NULL); /* probe 2: beyond the count given */
	CHECK(g.n == 3 && g.v[2][0] == 300, "probes beyond the count given grow the table");
	/* the engine's own sample (cpu-clock): dropped */
	struct sp_perf_sample cpu;
	memset(&cpu, 0, sizeof cpu);
	cpu.tid = 11;
	cpu.period = 10101010;
	f_sample(&f, &cpu);
	CHECK(g.n == 3 && sp_hitstacks_stats(h)->cpu == 1, "CPU samples are dropped, counted");
	CHECK(sp_hitstacks_stats(h)->written == 3 && sp_hitstacks_stats(h)->weight == 1324 &&
		      sp_hitstacks_stats(h)->hits == 3,
	      "stats: 3 hits, 3 written, weight 1324");
	sp_hitstacks_free(h);
	sp_profile_free(p);

	/* no weight, every 3: hits 0, 3, 6 of each probe, counted 3 times */
	p = sp_profile_new();
	memset(&g, 0, sizeof g);
	g.sink.sample = g_sample;
	h = sp_hitstacks_new(p, &g.sink, 0, &(struct sp_hitstacks_opts){ { 0, 0 }, 3, 0 });
	CHECK(sp_profile_nvalues(p) == 1 && !strcmp(sp_profile_value_name(p, 0), "calls") &&
		      !strcmp(sp_value_unit(p, 0, 0), "samples"),
	      "no weight: one column, calls");
	f.sink = sp_hitstacks_sink(h);
	f.p = p;
	for (int i = 0; i < 7; i++)
		hit(h, &eng, 0, 11, 50, stack, NULL);
	hit(h, &eng, 2, 11, 50, stack, NULL); /* another probe: its own count */
	CHECK(g.n == 4 && g.v[0][0] == 3 && g.v[3][0] == 3, "every 3: 3 of 7 hits kept, and the other probe's 1st");
	CHECK(sp_hitstacks_stats(h)->skipped == 4, "every 3: 4 skipped");
	sp_hitstacks_free(h);
	sp_profile_free(p);
	sp_hitstacks_free(NULL);

	/* live: probe 0 malloc, 1 calloc, 2 realloc, 3 free; the fake engine
	 * gives each sample the thread tid, and stack 0, so blocks sum per
	 * thread.  Returns: cookie 2*i+1 at SP + 8 with rax the block. */
	p = sp_profile_new();
	memset(&g, 0, sizeof g);
	g.sink.sample = g_sample;
	h = sp_hitstacks_new(p, &g.sink, 4, &(struct sp_hitstacks_opts){ { 0, 0 }, 1, 1 });
	CHECK(sp_profile_nvalues(p) == 2 && !strcmp(sp_profile_value_name(p, 1), "blocks"), "live: columns bytes, blocks");
	sp_hitstacks_role(h, 0, SP_HIT_MALLOC);
	sp_hitstacks_role(h, 1, SP_HIT_CALLOC);
	sp_hitstacks_role(h, 2, SP_HIT_REALLOC);
	sp_hitstacks_role(h, 3, SP_HIT_FREE);
	f.sink = sp_hitstacks_sink(h);
	f.p = p;
	live(h, &eng, 0, 21, 100, 0, 0);      /* malloc(100) in thread 21 */
	live(h, &eng, 1, 21, 0, 0, 0xa000);   /* returns 0xa000 */
	live(h, &eng, 2, 22, 10, 30, 0);      /* calloc(10, 30) in thread 22 */
	live(h, &eng, 3, 22, 0, 0, 0xb000);
	live(h, &eng, 0, 21, 7, 0, 0);        /* malloc(7) */
	live(h, &eng, 1, 21, 0, 0, 0xc000);
	live(h, &eng, 6, 21, 0xc000, 0, 0);   /* free(0xc000) */
	live(h, &eng, 4, 22, 0xb000, 500, 0); /* realloc(0xb000, 500) */
	live(h, &eng, 5, 22, 0, 0, 0xd000);   /* moved to 0xd000 */
	live(h, &eng, 6, 22, 0xe000, 0, 0);   /* free of a block never seen */
	live(h, &eng, 0, 21, 50, 0, 0);       /* malloc(50) that fails */
	live(h, &eng, 1, 21, 0, 0, 0);
	CHECK(g.n == 0, "live: nothing written while the target runs");
	struct sp_err err;
	CHECK(sp_hitstacks_finish(h, 99, &err) == 0 && g.n == 2, "live: finish writes a sample per stack and thread");
	int i21 = g.tid[0] == 21 ? 0 : 1;
	CHECK(g.n == 2 && g.v[i21][0] == 100 && g.v[i21][1] == 1 && g.v[1 - i21][0] == 500 && g.v[1 - i21][1] == 1,
	      "live: thread 21 keeps malloc(100), thread 22 the realloc'd 500 (calloc's 300 went with it)");
	const struct sp_hitstacks_stats *ls = sp_hitstacks_stats(h);
	CHECK(ls->frees == 1 && ls->unknown == 1 && ls->live == 2 && ls->live_bytes == 600 && ls->allocs == 4,
	      "live stats: 4 recorded, 1 freed, 1 unknown free, 2 live (600 bytes)");
	sp_hitstacks_free(h);

	/* The table of blocks grows and deletes: 5000 blocks, the odd ones
	 * freed (in reverse), then the even ones of the first half. */
	memset(&g, 0, sizeof g);
	g.sink.sample = g_sample;
	h = sp_hitstacks_new(p, &g.sink, 4, &(struct sp_hitstacks_opts){ { 0, 0 }, 1, 1 });
	sp_hitstacks_role(h, 0, SP_HIT_MALLOC);
	sp_hitstacks_role(h, 3, SP_HIT_FREE);
	f.sink = sp_hitstacks_sink(h);
	uint64_t want = 0;
	for (uint64_t i = 1; i <= 5000; i++) {
		live(h, &eng, 0, 31, i, 0, 0);
		live(h, &eng, 1, 31, 0, 0, i * 16);
	}
	for (uint64_t i = 5000; i >= 1; i--)
		if (i & 1)
			live(h, &eng, 6, 31, i * 16, 0, 0);
	for (uint64_t i = 2; i <= 2500; i += 2)
		live(h, &eng, 6, 31, i * 16, 0, 0);
	for (uint64_t i = 2502; i <= 5000; i += 2)
		want += i;
	CHECK(sp_hitstacks_finish(h, 1, &err) == 0 && g.n == 1 && g.v[0][0] == (double)want && g.v[0][1] == 1250 &&
		      sp_hitstacks_stats(h)->frees == 3750 && !sp_hitstacks_stats(h)->unknown,
	      "live: 5000 blocks, 3750 freed in any order: the other 1250 and their bytes remain");
	sp_hitstacks_free(h);
	sp_profile_free(p);
	return failed;
}
