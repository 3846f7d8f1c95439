/* offcpu.c — off-CPU intervals charged to the stack a thread slept in
 * (see offcpu.h). */
#include <stdlib.h>

#include "offcpu.h"

struct tstate {
	uint32_t tid;
	uint32_t node, thread, event; /* the stack it went to sleep in (node 0: none yet) */
	uint64_t out_time;            /* when it left the CPU, 0 = on CPU */
	int preempt;
};

struct sp_offcpu {
	struct sp_sink sink; /* first: the engine's samples arrive here */
	struct sp_profile *p;
	struct sp_sink *out;
	int wall;
	struct sp_perf_handler eng;
	/* set around the engine's handling of a context-switch sample */
	int in_switch;
	uint32_t cur_tid;
	struct tstate *ts;
	size_t nts, capts;
	struct sp_u64map idx; /* tid -> index + 1 */
	uint32_t blocked, preempted; /* frame ids */
	struct sp_offcpu_stats st;
	int failed;
	struct sp_err err;
};

static struct tstate *state(struct sp_offcpu *o, uint32_t tid)
{
	int found;
	uint32_t *slot = sp_u64map_slot(&o->idx, tid, &found);
	if (!found) {
		if (o->nts == o->capts) {
			o->capts = o->capts ? 2 * o->capts : 64;
			o->ts = sp_xrealloc(o->ts, o->capts * sizeof *o->ts);
		}
		memset(&o->ts[o->nts], 0, sizeof *o->ts);
		o->ts[o->nts].tid = tid;
		*slot = (uint32_t)++o->nts;
	}
	return &o->ts[*slot - 1];
}

static void put(struct sp_offcpu *o, const struct sp_sample *smp)
{
	if (o->failed || !o->out->sample)
		return;
	if (o->out->sample(o->out, o->p, smp, &o->err) < 0)
		o->failed = 1;
}

/* The engine's samples. */
static int s_sample(struct sp_sink *s, struct sp_profile *p, const struct sp_sample *smp, struct sp_err *err)
{
	(void)p;
	(void)err;
	struct sp_offcpu *o = (struct sp_offcpu *)s;
	if (o->in_switch) {
		struct tstate *t = state(o, o->cur_tid);
		t->node = smp->stack ? smp->stack : UINT32_MAX; /* UINT32_MAX: the empty stack */
		t->thread = smp->thread;
		t->event = smp->event;
		return 0;
	}
	if (!o->wall)
		return 0;
	struct sp_sample w = *smp;
	w.values[0] = smp->values[1]; /* cpu-clock's period: ns of CPU time */
	for (int i = 1; i < SP_MAX_VALUES; i++)
		w.values[i] = 0;
	o->st.on_cpu++;
	put(o, &w);
	return o->failed ? -1 : 0;
}

static int s_meta(struct sp_sink *s, struct sp_profile *p, struct sp_err *err)
{
	struct sp_offcpu *o = (struct sp_offcpu *)s;
	return o->out->meta ? o->out->meta(o->out, p, err) : 0;
}

static void charge(struct sp_offcpu *o, struct tstate *t, uint64_t until)
{
	if (!t->out_time)
		return;
	uint64_t d = until > t->out_time ? until - t->out_time : 0;
	int preempt = t->preempt;
	t->out_time = 0;
	if (!t->node) {
		o->st.unknown++;
		return;
	}
	struct sp_sample smp;
	memset(&smp, 0, sizeof smp);
	smp.stack = sp_node_intern(o->p, t->node == UINT32_MAX ? 0 : t->node, preempt ? o->preempted : o->blocked);
	smp.thread = t->thread;
	smp.event = t->event;
	smp.time = until;
	smp.values[0] = (double)d;
	if (preempt)
		o->st.preempted_ns += d;
	else
		o->st.blocked_ns += d;
	o->st.intervals++;
	t->node = 0; /* the next sleep brings its own stack */
	put(o, &smp);
}

/* ---- raw records ---- */

static void r_sample(void *ctx, const struct sp_perf_sample *s)
{
	struct sp_offcpu *o = ctx;
	if (s->switch_out) {
		o->in_switch = 1;
		o->cur_tid = s->tid;
		struct tstate *t = state(o, s->tid);
		t->node = 0;
		if (o->eng.sample)
			o->eng.sample(o->eng.ctx, s);
		o->in_switch = 0;
		return;
	}
	if (o->wall && o->eng.sample) /* --off-cpu alone opens no cpu-clock event */
		o->eng.sample(o->eng.ctx, s);
}

static void r_sched(void *ctx, uint32_t pid, uint32_t tid, int out, int preempt, uint64_t time)
{
	(void)pid;
	struct sp_offcpu *o = ctx;
	struct tstate *t = state(o, tid);
	if (out) {
		t->out_time = time;
		t->preempt = preempt;
	} else {
		charge(o, t, time);
	}
}

static void r_comm(void *ctx, uint32_t pid, uint32_t tid, const char *comm, int exec, uint64_t time)
{
	struct sp_offcpu *o = ctx;
	if (o->eng.comm)
		o->eng.comm(o->eng.ctx, pid, tid, comm, exec, time);
}

static void r_mmap(void *ctx, uint32_t pid, uint32_t tid, const struct sp_map *m, uint64_t time)
{
	struct sp_offcpu *o = ctx;
	if (o->eng.mmap)
		o->eng.mmap(o->eng.ctx, pid, tid, m, time);
}

static void r_fork(void *ctx, uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid, uint64_t time)
{
	struct sp_offcpu *o = ctx;
	if (o->eng.fork)
		o->eng.fork(o->eng.ctx, pid, ppid, tid, ptid, time);
}

static void r_exit(void *ctx, uint32_t pid, uint32_t tid, uint64_t time)
{
	struct sp_offcpu *o = ctx;
	/* An exiting thread is on the CPU; a pending switch-out of it (the
	 * last one) has nothing to charge. */
	int found;
	uint32_t i = sp_u64map_get(&o->idx, tid, &found);
	if (found && i)
		o->ts[i - 1].out_time = 0;
	if (o->eng.exit)
		o->eng.exit(o->eng.ctx, pid, tid, time);
}

struct sp_offcpu *sp_offcpu_new(struct sp_profile *p, struct sp_sink *out, int wall)
{
	struct sp_offcpu *o = sp_xcalloc(1, sizeof *o);
	o->p = p;
	o->out = out;
	o->wall = wall;
	o->sink.sample = s_sample;
	o->sink.meta = s_meta;
	sp_u64map_init(&o->idx);
	static const char *const off[] = { "off-cpu-ns" }, *const wl[] = { "wall-ns" };
	sp_profile_set_values(p, 1, wall ? wl : off);
	sp_profile_set_unit(p, 0, "ns");
	o->blocked = sp_frame_named(p, "[blocked]", 9, SP_KIND_SYNTHETIC);
	o->preempted = sp_frame_named(p, "[preempted]", 11, SP_KIND_SYNTHETIC);
	return o;
}

void sp_offcpu_free(struct sp_offcpu *o)
{
	if (!o)
		return;
	sp_u64map_release(&o->idx);
	free(o->ts);
	free(o);
}

struct sp_sink *sp_offcpu_sink(struct sp_offcpu *o) { return &o->sink; }

void sp_offcpu_handler(struct sp_offcpu *o, const struct sp_perf_handler *engine, struct sp_perf_handler *out)
{
	o->eng = *engine;
	memset(out, 0, sizeof *out);
	out->ctx = o;
	out->sample = r_sample;
	out->comm = r_comm;
	out->mmap = r_mmap;
	out->fork = r_fork;
	out->exit = r_exit;
	out->sched = r_sched;
	out->early = engine->early;
	out->early_ctx = engine->early_ctx;
}

int sp_offcpu_finish(struct sp_offcpu *o, uint64_t now_ns, struct sp_err *err)
{
	for (size_t i = 0; i < o->nts; i++)
		charge(o, &o->ts[i], now_ns);
	return sp_offcpu_error(o, err) ? -1 : 0;
}

int sp_offcpu_error(const struct sp_offcpu *o, struct sp_err *err)
{
	if (o->failed && err)
		*err = o->err;
	return o->failed;
}

const struct sp_offcpu_stats *sp_offcpu_stats(const struct sp_offcpu *o) { return &o->st; }
