/* trace_events.c — uprobe hits to trace events (see trace_events.h). */
#include "trace_events.h"

#include <stdlib.h>
#include <sys/uio.h>

/* SysV x86-64 integer arguments 1..6 in DWARF register numbers:
 * rdi rsi rdx rcx r8 r9. */
static const int arg_reg[7] = { -1, 5, 4, 1, 2, 8, 9 };
#define REG_AX 0

struct open_call {
	uint64_t sp, call;
	uint64_t ret;   /* the real return address at [sp], 0 unknown */
	uint32_t probe;
};

struct tthread {
	uint32_t id;    /* the profile's thread id, 0 = filtered out */
	int pid, tid;
	struct open_call *stk;
	size_t n, cap;
};

struct sp_tracer {
	uint64_t tramp; /* the return probes' trampoline, as seen in a fixed slot; 0 unknown */
	struct sp_profile *p;
	struct sp_sink *sink;
	struct sp_collect *eng;
	const struct sp_uprobe_set *set;
	uint32_t *frame;           /* per probe */
	uint32_t (*vname)[SP_UPROBE_MAX_VALUES]; /* per probe: string ids */
	uint64_t *hits;            /* per probe */
	struct sp_u64map pids;     /* our processes */
	struct sp_u64map thidx;    /* tid -> index + 1 */
	struct tthread *th;
	size_t nth, capth;
	uint64_t next_call;
	int sampling;              /* COMM records keep thread names up to date */
	struct sp_tracer_stats st;
	int failed;
	struct sp_err err;
};

struct sp_tracer *sp_tracer_new(struct sp_profile *p, struct sp_sink *sink, struct sp_collect *eng,
				const struct sp_uprobe_set *set, int pid)
{
	struct sp_tracer *t = sp_xcalloc(1, sizeof *t);
	t->p = p;
	t->sink = sink;
	t->eng = eng;
	t->set = set;
	size_t n = set->n ? set->n : 1;
	t->frame = sp_xcalloc(n, sizeof *t->frame);
	t->vname = sp_xcalloc(n, sizeof *t->vname);
	t->hits = sp_xcalloc(n, sizeof *t->hits);
	for (size_t i = 0; i < set->n; i++) {
		const struct sp_uprobe *u = &set->v[i];
		struct sp_frame f;
		memset(&f, 0, sizeof f);
		f.name = sp_str_intern(p, u->name, strlen(u->name));
		const char *base = strrchr(u->path, '/');
		base = base ? base + 1 : u->path;
		f.module = sp_str_intern(p, base, strlen(base));
		f.kind = SP_KIND_NATIVE;
		t->frame[i] = sp_frame_intern(p, &f);
		for (int k = 0; k < u->nvalues; k++)
			t->vname[i][k] = sp_str_intern(p, u->vname[k], strlen(u->vname[k]));
	}
	sp_u64map_init(&t->pids);
	sp_u64map_init(&t->thidx);
	sp_tracer_add_pid(t, pid);
	return t;
}

void sp_tracer_free(struct sp_tracer *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nth; i++)
		free(t->th[i].stk);
	free(t->th);
	free(t->frame);
	free(t->vname);
	free(t->hits);
	sp_u64map_release(&t->pids);
	sp_u64map_release(&t->thidx);
	free(t);
}

void sp_tracer_set_sampling(struct sp_tracer *t, int on) { t->sampling = on; }

void sp_tracer_add_pid(struct sp_tracer *t, int pid)
{
	int found;
	*sp_u64map_slot(&t->pids, (uint64_t)(uint32_t)pid, &found) = 1;
}

static struct tthread *thread_of(struct sp_tracer *t, int pid, int tid)
{
	int found;
	uint32_t *slot = sp_u64map_slot(&t->thidx, (uint64_t)(uint32_t)tid, &found);
	if (found && *slot && t->th[*slot - 1].pid == pid)
		return &t->th[*slot - 1];
	if (t->nth == t->capth) {
		t->capth = t->capth ? 2 * t->capth : 16;
		t->th = sp_xrealloc(t->th, t->capth * sizeof *t->th);
	}
	struct tthread *th = &t->th[t->nth++];
	memset(th, 0, sizeof *th);
	th->pid = pid;
	th->tid = tid;
	*slot = (uint32_t)t->nth;
	if (!t->sampling)
		sp_collect_refresh_task(t->eng, pid, tid);
	return th;
}

static void emit(struct sp_tracer *t, struct sp_trace *tr)
{
	if (t->failed || !t->sink->trace)
		return;
	if (t->sink->trace(t->sink, t->p, tr, &t->err) < 0)
		t->failed = 1;
}

/* The open call at index i of th is dead: an abandoned exit. */
static void abandon(struct sp_tracer *t, struct tthread *th, size_t i, uint64_t time)
{
	struct sp_trace tr;
	memset(&tr, 0, sizeof tr);
	tr.kind = SP_TRACE_EXIT;
	tr.frame = t->frame[th->stk[i].probe];
	tr.thread = th->id;
	tr.time = time;
	tr.call = th->stk[i].call;
	tr.flags = SP_TRACE_ABANDONED;
	t->st.abandoned++;
	emit(t, &tr);
}

/* n bytes at address at of the hit's process into *v: from the stack copy
 * when they lie there (the memory at the hit), else from the live process
 * (its memory now, when the hit is read: it may have changed since). */
static int deref(const struct sp_perf_uprobe *h, uint64_t at, size_t n, uint64_t *v)
{
	uint64_t sp = h->regs[SP_REG_SP];
	*v = 0;
	if (h->stack && at >= sp && at - sp + n <= h->stack_len) {
		memcpy(v, h->stack + (at - sp), n);
		return 0;
	}
	struct iovec l = { v, n }, r = { (void *)(uintptr_t)at, n };
	return process_vm_readv(h->pid, &l, 1, &r, 1, 0) == (ssize_t)n ? 0 : -1;
}

static void values(struct sp_tracer *t, const struct sp_uprobe *u, uint32_t probe, const struct sp_perf_uprobe *h,
		   int at_exit, struct sp_trace *tr)
{
	if (!h->has_regs)
		return;
	for (int k = 0; k < u->nvalues; k++) {
		int reg;
		if (u->vkind[k] >= SP_UV_REG) {
			/* a variable at a line probe */
			uint64_t v = h->regs[u->vreg[k]];
			if (u->vkind[k] == SP_UV_ADDR) {
				v += (uint64_t)u->voff[k];
			} else if (u->vkind[k] == SP_UV_MEM) {
				uint64_t at = v + (uint64_t)u->voff[k], sp = h->regs[SP_REG_SP];
				uint64_t sz = u->vderef[k] ? 8 : (uint64_t)u->vsize[k];
				if (!h->stack || at < sp || at - sp + sz > h->stack_len) {
					t->st.unread++;
					continue; /* not in the copy: not recorded */
				}
				v = 0;
				memcpy(&v, h->stack + (at - sp), (size_t)sz);
			}
			if (u->vderef[k] && deref(h, v + (uint64_t)u->vmoff[k], (size_t)u->vsize[k], &v) < 0) {
				t->st.unread++;
				continue;
			}
			int bits = 8 * u->vsize[k];
			if (bits < 64) {
				v &= (1ULL << bits) - 1;
				if (u->vsigned[k] && (v >> (bits - 1)) & 1)
					v |= ~0ULL << bits;
			}
			tr->vname[tr->nvalues] = t->vname[probe][k];
			tr->value[tr->nvalues] = (int64_t)v;
			tr->nvalues++;
			continue;
		}
		if (u->vkind[k] == SP_UV_RET) {
			if (!at_exit)
				continue;
			reg = REG_AX;
		} else {
			if (at_exit)
				continue;
			reg = arg_reg[u->varg[k]];
		}
		tr->vname[tr->nvalues] = t->vname[probe][k];
		tr->value[tr->nvalues] = (int64_t)h->regs[reg];
		tr->nvalues++;
	}
}

void sp_tracer_hit(void *ctx, const struct sp_perf_uprobe *h)
{
	struct sp_tracer *t = ctx;
	int found;
	sp_u64map_get(&t->pids, h->pid, &found);
	if (!found) {
		t->st.foreign++;
		return;
	}
	/* Cookies: 2*i the entry (or point) probe of probe i, 2*i+1 its return. */
	uint32_t probe = h->cookie / 2;
	int is_exit = h->cookie & 1;
	if (probe >= t->set->n)
		return;
	const struct sp_uprobe *u = &t->set->v[probe];
	t->st.hits++;
	t->hits[probe]++;
	struct tthread *th = thread_of(t, (int)h->pid, (int)h->tid);
	/* The engine's id now: a renamed thread gets a new one. */
	th->id = sp_collect_thread_id(t->eng, (int)h->pid, (int)h->tid);
	if (!th->id) {
		t->st.filtered++;
		return;
	}
	uint64_t sp = h->has_regs ? h->regs[SP_REG_SP] : 0;
	struct sp_trace tr;
	memset(&tr, 0, sizeof tr);
	tr.frame = t->frame[probe];
	tr.thread = th->id;
	tr.time = h->time;
	if (u->point) {
		tr.kind = SP_TRACE_ENTRY;
		tr.flags = SP_TRACE_POINT;
		tr.call = ++t->next_call;
		values(t, u, probe, h, 0, &tr);
		t->st.points++;
		emit(t, &tr);
		return;
	}
	if (!is_exit) {
		/* Every open call at or below this SP is gone. */
		while (th->n && sp && th->stk[th->n - 1].sp <= sp)
			abandon(t, th, --th->n, h->time);
		if (u->ret) {
			if (th->n == th->cap) {
				th->cap = th->cap ? 2 * th->cap : 16;
				th->stk = sp_xrealloc(th->stk, th->cap * sizeof *th->stk);
			}
			th->stk[th->n++] = (struct open_call){ sp, t->next_call + 1, h->has_top ? h->top : 0, probe };
		}
		tr.kind = SP_TRACE_ENTRY;
		tr.call = ++t->next_call;
		if (!u->ret)
			tr.flags = SP_TRACE_POINT; /* FUNC:entry: no exit will come */
		values(t, u, probe, h, 0, &tr);
		t->st.entries++;
		emit(t, &tr);
		return;
	}
	size_t d = th->n;
	while (d > 0 && th->stk[d - 1].sp + 8 < sp)
		d--;
	if (!d || th->stk[d - 1].sp + 8 != sp || th->stk[d - 1].probe != probe) {
		t->st.orphans++;
		return;
	}
	while (th->n > d)
		abandon(t, th, --th->n, h->time);
	th->n--;
	tr.kind = SP_TRACE_EXIT;
	tr.call = th->stk[th->n].call;
	values(t, u, probe, h, 1, &tr);
	t->st.exits++;
	emit(t, &tr);
}

uint64_t sp_tracer_probe_hits(const struct sp_tracer *t, size_t i) { return i < t->set->n ? t->hits[i] : 0; }

const struct sp_tracer_stats *sp_tracer_stats(struct sp_tracer *t)
{
	t->st.open = 0;
	for (size_t i = 0; i < t->nth; i++)
		t->st.open += t->th[i].n;
	return &t->st;
}

int sp_tracer_error(const struct sp_tracer *t, struct sp_err *err)
{
	if (t->failed && err)
		*err = t->err;
	return t->failed;
}

int sp_tracer_fix_stack(struct sp_tracer *t, int tid, uint64_t sp, const uint8_t *stack, uint64_t len, uint8_t *buf)
{
	int found;
	uint32_t i = sp_u64map_get(&t->thidx, (uint64_t)(uint32_t)tid, &found);
	if (!found || !i)
		return 0;
	const struct tthread *th = &t->th[i - 1];
	int patched = 0;
	for (size_t k = 0; k < th->n; k++) {
		const struct open_call *c = &th->stk[k];
		if (!c->ret || !t->set->v[c->probe].ret || c->sp < sp || c->sp + 8 > sp + len)
			continue;
		if (!patched) {
			memcpy(buf, stack, len);
			patched = 1;
		}
		uint64_t was;
		memcpy(&was, stack + (c->sp - sp), 8);
		if (was != c->ret)
			t->tramp = was;
		memcpy(buf + (c->sp - sp), &c->ret, 8);
	}
	return patched;
}

void sp_tracer_set_trampoline(struct sp_tracer *t, uint64_t addr)
{
	if (!t->tramp)
		t->tramp = addr;
}

uint64_t sp_tracer_trampoline(const struct sp_tracer *t) { return t->tramp; }
