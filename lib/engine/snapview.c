/* snapview.c — the views of `pcollect --snapshot` (see snapview.h): one
 * snapshot taken (snapshot.h), each thread unwound and symbolised
 * (unwind.h, symbols.h), what blocked threads wait for (locks.h), then
 * written as text, folded text or stream samples. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fold.h"
#include "locals.h"
#include "format.h"
#include "locks.h"
#include "procmaps.h"
#include "pymerge.h"
#include "python.h"
#include "snapshot.h"
#include "snapview.h"
#include "symbols.h"
#include "unwind.h"

#define F_TEXT SP_SNAPVIEW_TEXT
#define F_FOLDED SP_SNAPVIEW_FOLDED
#define F_STREAM SP_SNAPVIEW_STREAM

/* ---- one thread's stack ---- */

#define MAX_PCS 512

struct tstack {
	uint32_t *frames; /* innermost first */
	uint64_t *pcs;    /* the address each frame came from */
	uint32_t *loc;    /* --locals: offset + 1 in lb of the frame's variables
			   * ("name\0value\0" pairs), 0 none */
	uint16_t *nloc;   /* how many */
	struct sp_buf lb;
	size_t n, cap;
	int truncated;
	int unstopped;
};

static void ts_grow(struct tstack *ts, size_t n)
{
	if (n <= ts->cap)
		return;
	ts->cap = n;
	ts->frames = sp_xrealloc(ts->frames, ts->cap * sizeof *ts->frames);
	ts->pcs = sp_xrealloc(ts->pcs, ts->cap * sizeof *ts->pcs);
	ts->loc = sp_xrealloc(ts->loc, ts->cap * sizeof *ts->loc);
	ts->nloc = sp_xrealloc(ts->nloc, ts->cap * sizeof *ts->nloc);
}

static void free_tstack(struct tstack *ts)
{
	free(ts->frames);
	free(ts->pcs);
	free(ts->loc);
	free(ts->nloc);
	sp_buf_release(&ts->lb);
}

struct sp_snapview {
	struct sp_snapview_opts o;
	struct sp_snapview_stats last;
	struct sp_profile *p;  /* frames for the output */
	struct sp_symbols *syms;
	struct sp_maps *maps;
	struct sp_unwind *u;
	regex_t re;
	int have_re;
	FILE *out;
	struct sp_sink *sink;   /* folded or stream */
	struct sp_writer *w; /* folded or stream output, else NULL (text) */
	uint32_t event;
	int live; /* a thread whose /proc and memory stand for the process */
	struct sp_err pyerr;
	/* Python: the reader, and the frames read while the threads were
	 * stopped (thread i's in pyfr[pyt[i].off ..], pyt[i].n of them) */
	struct sp_python *py;
	enum sp_python_state pystate;
	struct {
		uint32_t off;
		int n;
		uint32_t name;
		struct sp_python_wait w;
		struct sp_python_lockwait lw; /* a Lock, Condition... (lw.lock 0: none) */
		size_t raw_off, raw_len; /* --locals: the frames' slots in pyraw */
		int nraw;
		int nholders;   /* Lock: how many threads' frames refer to it */
		struct { int i; uint32_t where, as; } holder[4]; /* the first ones: thread index,
				 * the function that refers to it, what it calls it */
	} *pyt;
	size_t npyt;
	int gil;          /* sp_python_gil_holder while stopped */
	uint32_t *pyfr;
	uint8_t *pyen;
	uint32_t *pyloc;  /* --locals: per Python frame (as pyfr) its variables'
			   * offset + 1 in pylb, 0 none, NOT_READ */
	uint16_t *pylocn;
	struct sp_buf pylb;
	struct sp_buf pyraw; /* sp_python_slots' copies (pyt[i].raw_off, raw_len) */
	size_t pyskipped; /* Python frames whose locals the stop's budget left unread */
	size_t npyfr, cappyfr;
	uint32_t *mfr;
	int32_t *msrc;
	size_t capm;
	struct sp_locals_mem mem; /* --locals: memory of this snapshot's threads */
	/* --locals: the threads unwound and read while stopped (by tid: the
	 * snapshot orders its threads once they are let go) */
	struct prestack *pre;
	size_t npre;
	uint64_t test_reads;  /* SP_SNAPSHOT_TEST_LOCALS_READS: the budgets made small, for tests */
	struct {              /* --locals, this snapshot's */
		uint64_t t0, cpu0;    /* CLOCK_MONOTONIC, CPU time when the stop began on the values */
		uint64_t ns, cpu_ns;  /* time the stop spent reading values, of it on a CPU */
		size_t late;          /* threads read after the stop (the stop's budget) */
		size_t late_frames;   /* frames of the others read after the stop */
		size_t notread;       /* values shown as not read (the stop's budget) */
		size_t pyreads;       /* reads for the Python values */
	} v;
};

#define PY_MAX 2048
#define PY_LOCAL_READS 4000 /* --locals: memory reads of Python values per stop */
#define NOT_READ UINT32_MAX  /* a frame's locals were not read (the budget) */
#define LOCALS_BUDGET (1u << 20) /* --locals: bytes read outside the stack copies */
/* --locals: the stop's time for values: 4 ms of this thread's CPU, and 25 ms
 * at most on a loaded machine */
#define LOCALS_CPU_NS 4000000ull
#define LOCALS_WALL_NS 25000000ull

/* A threading.Lock records no owner: the threads whose frames still refer
 * to it (inside "with lock:", or between acquire() and release() while a
 * local holds it) stand for its holders; one of them is named as the
 * owner. */
static void lock_holders(struct sp_snapview *c, struct sp_snap *s)
{
	uint32_t kind = sp_str_intern(c->p, "Lock", 4);
	size_t i, waiting = 0;
	for (i = 0; i < s->n; i++)
		waiting += c->pyt[i].lw.lock && c->pyt[i].lw.kind == kind;
	if (!waiting)
		return;
	/* Each thread's Locks read once, then matched to every waiter. */
	enum { MAXREF = 32 };
	struct sp_python_ref *refs = sp_xcalloc(s->n * MAXREF + 1, sizeof *refs);
	int *nref = sp_xcalloc(s->n + 1, sizeof *nref);
	for (size_t j = 0; j < s->n; j++)
		nref[j] = sp_python_refs(c->py, s->t[j].tid, refs + j * MAXREF, MAXREF);
	for (i = 0; i < s->n; i++) {
		uint64_t lock = c->pyt[i].lw.lock;
		if (!lock || c->pyt[i].lw.kind != kind)
			continue;
		/* Inside "with lock:" (lock.__exit__ on a value stack) beats a
		 * variable that holds it (the function that made it, a closure
		 * that may or may not have acquired it). */
		int with = 0;
		for (int pass = 0; pass < 2; pass++)
		for (size_t j = 0; j < s->n; j++) {
			if (j == i || c->pyt[j].lw.lock == lock) /* waits for it too */
				continue;
			const struct sp_python_ref *r = refs + j * MAXREF;
			int m = 0, mw = -1;
			for (; m < nref[j]; m++)
				if (r[m].obj == lock && (mw < 0 || (r[m].with && !r[mw].with)))
					mw = m;
			if (mw < 0)
				continue;
			m = mw;
			if (pass == 0) {
				with |= r[m].with;
				continue;
			}
			if (with && !r[m].with)
				continue;
			int k = c->pyt[i].nholders++;
			if (k < 4) {
				c->pyt[i].holder[k].i = (int)j;
				c->pyt[i].holder[k].where = r[m].where;
				c->pyt[i].holder[k].as = r[m].name;
			}
		}
	}
	free(refs);
	free(nref);
}

/* sp_snap_take's hook: every thread is stopped, so what is read is exact. */
static void py_hook(void *ctx, struct sp_snap *s)
{
	struct sp_snapview *c = ctx;
	c->pyt = sp_xrealloc(c->pyt, (s->n ? s->n : 1) * sizeof *c->pyt);
	c->npyt = s->n;
	c->npyfr = 0;
	c->pyskipped = 0;
	sp_buf_reset(&c->pylb);
	sp_buf_reset(&c->pyraw);
	uint64_t budget = PY_LOCAL_READS;
	c->gil = sp_python_gil_holder(c->py);
	for (size_t i = 0; i < s->n; i++) {
		c->pyt[i].off = (uint32_t)c->npyfr;
		c->pyt[i].n = 0;
		if (c->npyfr + PY_MAX > c->cappyfr) {
			c->cappyfr = c->npyfr + PY_MAX + c->cappyfr;
			c->pyfr = sp_xrealloc(c->pyfr, c->cappyfr * sizeof *c->pyfr);
			c->pyen = sp_xrealloc(c->pyen, c->cappyfr);
			c->pyloc = sp_xrealloc(c->pyloc, c->cappyfr * sizeof *c->pyloc);
			c->pylocn = sp_xrealloc(c->pylocn, c->cappyfr * sizeof *c->pylocn);
		}
		int n = sp_python_stack(c->py, s->t[i].tid, NULL, c->pyfr + c->npyfr, c->pyen + c->npyfr, PY_MAX);
		c->pyt[i].raw_off = c->pyraw.len;
		c->pyt[i].nraw = 0;
		if (c->o.locals && n > 0) {
			/* What the frames' locals hold, as of the stop (within a
			 * budget of reads); their values once the threads run on. */
			int got = sp_python_slots(c->py, s->t[i].tid, &c->pyraw, n, &budget);
			c->pyt[i].nraw = got < 0 ? 0 : got;
			for (int k = 0; k < n; k++) {
				c->pyloc[c->npyfr + (size_t)k] = k < got ? 0 : NOT_READ;
				c->pylocn[c->npyfr + (size_t)k] = 0;
				c->pyskipped += k >= got;
			}
		}
		c->pyt[i].raw_len = c->pyraw.len - c->pyt[i].raw_off;
		c->pyt[i].name = 0; /* read once the threads run again */
		/* Lock owners only for threads asleep in futex (py_confirm):
		 * the others need not be held stopped for the reads. */
		memset(&c->pyt[i].lw, 0, sizeof c->pyt[i].lw);
		c->pyt[i].nholders = 0;
		if (s->t[i].nr == SYS_futex || s->t[i].nr == SYS_restart_syscall) {
			if (!sp_python_wait(c->py, s->t[i].tid, &c->pyt[i].w) && s->t[i].nr == SYS_futex)
				sp_python_lock_wait(c->py, s->t[i].tid, s->t[i].args[0], &c->pyt[i].lw);
		} else {
			memset(&c->pyt[i].w, 0, sizeof c->pyt[i].w);
		}
		if (n > 0) {
			c->pyt[i].n = n;
			c->npyfr += (size_t)n;
		}
	}
	lock_holders(c, s);
	if (!c->o.locals)
		return;
	/* --locals: the values, while stopped, within the stop's budget, which
	 * counts from here (the frames are read); frames it stopped say so
	 * (NOT_READ). */
	c->v.t0 = sp_mono_ns();
	c->v.cpu0 = sp_thread_cpu_ns();
	sp_budget_start(&c->mem.time, LOCALS_CPU_NS, LOCALS_WALL_NS);
	uint64_t rd0 = sp_python_stats(c->py)->reads;
	sp_python_read_limit(c->py, c->test_reads ? c->test_reads : PY_LOCAL_READS, &c->mem.time);
	for (size_t i = 0; i < s->n; i++) {
		int nraw = c->pyt[i].nraw;
		uint32_t *loc = c->pyloc + c->pyt[i].off;
		int done = nraw > 0 ? sp_python_locals(c->py, c->pyraw.p + c->pyt[i].raw_off, c->pyt[i].raw_len, &c->pylb,
							loc, c->pylocn + c->pyt[i].off, nraw)
				    : 0;
		for (int k = done; k < nraw; k++) {
			loc[k] = NOT_READ;
			c->pyskipped++;
		}
	}
	sp_python_read_limit(c->py, 0, NULL);
	c->v.pyreads = sp_python_stats(c->py)->reads - rd0;
}

/* --locals: Python frame j's variables (read in py_hook) as display
 * frame k's, copied into ts's buffer. */
static void py_frame_locals(struct sp_snapview *c, size_t j, struct tstack *ts, size_t k)
{
	if (c->pyloc[j] == NOT_READ) {
		ts->loc[k] = NOT_READ;
		return;
	}
	if (!c->pyloc[j])
		return;
	const char *p = c->pylb.p + c->pyloc[j] - 1, *e = p;
	for (unsigned v = 0; v < 2u * c->pylocn[j]; v++)
		e += strlen(e) + 1;
	ts->loc[k] = (uint32_t)ts->lb.len + 1;
	ts->nloc[k] = c->pylocn[j];
	sp_buf_add(&ts->lb, p, (size_t)(e - p));
}

/* Thread i's native frames (innermost first) with its Python frames
 * merged in (python.h, pymerge.h). */
static void py_merge(struct sp_snapview *c, size_t i, struct tstack *ts)
{
	int npy = c->pyt[i].n;
	if (npy <= 0 || !ts->n)
		return;
	uint32_t *nat = sp_xmalloc(ts->n * sizeof *nat), *loc = sp_xmalloc(ts->n * sizeof *loc);
	uint64_t *pcs = sp_xmalloc(ts->n * sizeof *pcs);
	uint16_t *nloc = sp_xmalloc(ts->n * sizeof *nloc);
	for (size_t k = 0; k < ts->n; k++) {
		nat[k] = ts->frames[ts->n - 1 - k];
		pcs[k] = ts->pcs[ts->n - 1 - k];
		loc[k] = ts->loc[ts->n - 1 - k];
		nloc[k] = ts->nloc[ts->n - 1 - k];
	}
	int disagree;
	size_t n = sp_pymerge_frames(c->p, SP_PY_MERGED, nat, ts->n, c->pyfr + c->pyt[i].off, c->pyen + c->pyt[i].off,
				     npy, ts->truncated, &c->mfr, &c->msrc, &c->capm, &disagree);
	ts_grow(ts, n);
	for (size_t k = 0; k < n; k++) {
		ts->frames[n - 1 - k] = c->mfr[k];
		ts->pcs[n - 1 - k] = c->msrc[k] >= 0 ? pcs[c->msrc[k]] : 0;
		ts->loc[n - 1 - k] = c->msrc[k] >= 0 ? loc[c->msrc[k]] : 0;
		ts->nloc[n - 1 - k] = c->msrc[k] >= 0 ? nloc[c->msrc[k]] : 0;
		if (c->msrc[k] <= -2 && c->o.locals)
			py_frame_locals(c, c->pyt[i].off + (size_t)(-2 - c->msrc[k]), ts, n - 1 - k);
	}
	ts->n = n;
	free(nat);
	free(pcs);
	free(loc);
	free(nloc);
}

/* --locals: the variables of the group-th function at unwound frame i
 * (pc) of thread t, appended to lb, *loc = their offset + 1 (0 none) and
 * *nloc their number; *ngroups (optional): how many functions pc is in
 * (inlined ones).  The registers are those the unwinder recovered for the
 * frame: all of them in the innermost frame; the stack pointer, rbx, rbp
 * and r12-r15 in its callers.  The frame's CFA is its caller's stack
 * pointer. */
static void frame_locals(struct sp_snapview *c, const struct sp_snap_thread *t, const uint64_t *sps,
			 const uint8_t *known, int i, int n, uint64_t pc, int group, struct sp_buf *lb, uint32_t *loc,
			 uint16_t *nloc, int *ngroups)
{
	static const unsigned kept[SP_UNWIND_KEPT] = { 7, 3, 6, 12, 13, 14, 15 };
	struct sp_locals_regs rg;
	memset(&rg, 0, sizeof rg);
	if (i == 0) {
		memcpy(rg.r, t->regs, sizeof rg.r);
		rg.known = (1u << 17) - 1;
	} else {
		for (int k = 0; k < SP_UNWIND_KEPT; k++)
			if ((known[i] >> k) & 1) {
				rg.r[kept[k]] = sps[i * SP_UNWIND_KEPT + k];
				rg.known |= 1u << kept[k];
			}
		rg.r[16] = pc + 1;
		rg.known |= 1u << 16;
	}
	rg.cfa = i + 1 < n && (known[i + 1] & 1) ? sps[(i + 1) * SP_UNWIND_KEPT] : 0;
	c->mem.stack = t->stack;
	c->mem.stack_lo = t->regs[7];
	c->mem.stack_len = t->stack_len;
	size_t off = lb->len;
	int nv = sp_locals_frame(sp_unwind_dwfl(c->u), pc, group, &rg, &c->mem, lb, ngroups);
	*loc = nv > 0 ? (uint32_t)off + 1 : 0;
	*nloc = (uint16_t)(nv <= 0 ? 0 : nv > 65535 ? 65535 : nv);
}

/* --locals: a thread unwound and its variables read while it is stopped
 * (stop_hook), without symbols (they load slowly): per unwound frame, the
 * variables of each function its pc is in, innermost first, as
 * unwind_thread's frames will be once symbolised.  Frames past the stop's
 * budget (LOCALS_CPU_NS) have no groups: read after the stop, from the
 * stack copy. */
struct prestack {
	int tid, n, truncated;
	uint64_t *pcs, *sps;
	uint8_t *known;
	uint32_t *gfirst; /* frame i's groups: g[gfirst[i] .. + ngrp[i]) */
	uint16_t *ngrp;   /* REPLACED: a frame the Python frames replace, not read */
	struct { uint32_t loc; uint16_t n; } *g;
	size_t ng, capg;
	struct sp_buf lb;
};

#define REPLACED UINT16_MAX

static void read_stopped(struct sp_snapview *c, const struct sp_snap_thread *t, struct prestack *ps)
{
	ps->tid = t->tid;
	if (!t->have_regs)
		return;
	uint64_t pcs[MAX_PCS];
	uint8_t known[MAX_PCS];
	ps->sps = sp_xmalloc(MAX_PCS * SP_UNWIND_KEPT * sizeof *ps->sps);
	struct sp_unwind_result r = sp_unwind_stack_sps(c->u, t->tid, t->regs, t->stack, t->stack_len, SP_UNWIND_LIVE,
							pcs, ps->sps, known, MAX_PCS);
	size_t n = r.n > 0 ? (size_t)r.n : 0;
	ps->n = (int)n;
	ps->truncated = r.truncated;
	ps->pcs = sp_xmalloc((n ? n : 1) * sizeof *ps->pcs);
	ps->known = sp_xmalloc(n ? n : 1);
	ps->gfirst = sp_xcalloc(n ? n : 1, sizeof *ps->gfirst);
	ps->ngrp = sp_xcalloc(n ? n : 1, sizeof *ps->ngrp);
	memcpy(ps->pcs, pcs, n * sizeof *pcs);
	memcpy(ps->known, known, n);
	/* Innermost first, while the stop's time lasts (a frame's DWARF
	 * scopes may take a millisecond in a large compilation unit). */
	for (int i = 0; i < r.n && !sp_budget_spent(&c->mem.time); i++) {
		ps->gfirst[i] = (uint32_t)ps->ng;
		const char *fn = c->last.python_merged ? sp_locals_function(sp_unwind_dwfl(c->u), pcs[i]) : NULL;
		if (fn && !strcmp(fn, "_PyEval_EvalFrameDefault")) {
			/* Python frames stand in its place (pymerge.h): not shown,
			 * and its scopes are thousands (milliseconds to find) */
			ps->ngrp[i] = REPLACED;
			continue;
		}
		int ng = 1;
		for (int g = 0; g < ng && g < 64; g++) {
			if (ps->ng == ps->capg) {
				ps->capg = ps->capg ? 2 * ps->capg : 64;
				ps->g = sp_xrealloc(ps->g, ps->capg * sizeof *ps->g);
			}
			int groups = 0;
			frame_locals(c, t, ps->sps, known, i, r.n, pcs[i], g, &ps->lb, &ps->g[ps->ng].loc,
				     &ps->g[ps->ng].n, g ? NULL : &groups);
			ps->ng++;
			if (!g && groups > 1)
				ng = groups;
		}
		ps->ngrp[i] = (uint16_t)(ng < 64 ? ng : 64);
	}
}

static void free_prestack(struct prestack *ps)
{
	free(ps->pcs);
	free(ps->sps);
	free(ps->known);
	free(ps->gfirst);
	free(ps->ngrp);
	free(ps->g);
	sp_buf_release(&ps->lb);
}

/* Thread t unwound and symbolised into ts; with --locals, each frame's
 * variables: as read during the stop (ps), else now, from the stack copy
 * only (c->mem's budget is spent). */
static void unwind_thread(struct sp_snapview *c, const struct sp_snap_thread *t, struct prestack *ps,
			  struct tstack *ts)
{
	ts->n = 0;
	ts->truncated = 0;
	ts->unstopped = t->unstopped;
	if (!t->have_regs)
		return;
	uint64_t pcs[MAX_PCS];
	uint64_t *own = c->o.locals && !ps ? sp_xmalloc(MAX_PCS * SP_UNWIND_KEPT * sizeof *own) : NULL, *sps = own;
	uint8_t known[MAX_PCS];
	struct sp_unwind_result r;
	if (ps) {
		r.n = ps->n;
		r.truncated = ps->truncated;
		memcpy(pcs, ps->pcs, (size_t)ps->n * sizeof *pcs);
		memcpy(known, ps->known, (size_t)ps->n);
		sps = ps->sps;
		sp_buf_release(&ts->lb);
		ts->lb = ps->lb; /* the values, moved */
		memset(&ps->lb, 0, sizeof ps->lb);
	} else {
		r = sp_unwind_stack_sps(c->u, t->tid, t->regs, t->stack, t->stack_len, SP_UNWIND_LIVE, pcs, sps, known,
					MAX_PCS);
	}
	ts->truncated = r.truncated;
	for (int i = 0; i < r.n; i++) {
		const uint32_t *f;
		size_t k = sp_symbols_user(c->syms, c->u, c->maps, c->live, pcs[i], &f);
		for (size_t j = 0; j < k; j++) {
			if (ts->n == ts->cap)
				ts_grow(ts, ts->cap ? 2 * ts->cap : 64);
			ts->pcs[ts->n] = pcs[i];
			ts->loc[ts->n] = 0;
			ts->nloc[ts->n] = 0;
			if (ps && ps->ngrp[i] != REPLACED && j < ps->ngrp[i]) {
				ts->loc[ts->n] = ps->g[ps->gfirst[i] + j].loc;
				ts->nloc[ts->n] = ps->g[ps->gfirst[i] + j].n;
			} else if (sps && !(ps && ps->ngrp[i] == REPLACED)) {
				c->v.late_frames += ps && !ps->ngrp[i] && !j;
				frame_locals(c, t, sps, known, i, r.n, pcs[i], (int)j, &ts->lb, &ts->loc[ts->n],
					     &ts->nloc[ts->n], NULL);
			}
			ts->frames[ts->n++] = f[j];
		}
	}
	free(own);
}

/* sp_snap_take's hook, every thread stopped: the Python frames (py_hook)
 * and, with --locals, each thread unwound and its variables read, so that
 * values outside the stack copies (the heap, strings) are as of the
 * stacks.  Within LOCALS_CPU_NS: live reads after that are refused (the
 * variable says so), and threads not reached are read after the stop
 * from their stack copies only. */
static void stop_hook(void *ctx, struct sp_snap *s)
{
	struct sp_snapview *c = ctx;
	c->v.t0 = sp_mono_ns();
	c->v.cpu0 = sp_thread_cpu_ns();
	sp_budget_start(&c->mem.time, LOCALS_CPU_NS, LOCALS_WALL_NS);
	if (c->last.python_merged)
		py_hook(c, s); /* starts the budget anew once the stacks are read */
	if (!c->o.locals)
		return;
	c->pre = sp_xcalloc(s->n ? s->n : 1, sizeof *c->pre);
	for (size_t i = 0; i < s->n && !sp_budget_spent(&c->mem.time); i++) {
		read_stopped(c, &s->t[i], &c->pre[i]);
		c->npre = i + 1;
	}
	c->v.ns = sp_mono_ns() - c->v.t0;
	c->v.cpu_ns = sp_thread_cpu_ns() - c->v.cpu0;
}

/* --locals: what the stop read of thread t, NULL when it did not reach it. */
static struct prestack *stopped_stack(struct sp_snapview *c, const struct sp_snap_thread *t)
{
	for (size_t j = 0; j < c->npre; j++)
		if (c->pre[j].tid == t->tid)
			return &c->pre[j];
	return NULL;
}

/* --locals: the values of ts's frames that say "<not read at 0x...:
 * budget>" (locals.h, python.h), not counting such text inside a string. */
static size_t count_not_read(const struct tstack *ts)
{
	size_t n = 0;
	for (size_t i = 0; i < ts->n; i++) {
		const char *v = ts->loc[i] && ts->loc[i] != NOT_READ ? ts->lb.p + ts->loc[i] - 1 : NULL;
		for (unsigned k = 0; v && k < ts->nloc[i]; k++) {
			v += strlen(v) + 1; /* the value, after the name */
			for (const char *p = v; (p = strstr(p, "<not read at 0x")); p++)
				n += p == v || (p[-1] != '\'' && p[-1] != '"');
			v += strlen(v) + 1;
		}
	}
	return n;
}

static void free_stopped(struct sp_snapview *c)
{
	for (size_t j = 0; j < c->npre; j++)
		free_prestack(&c->pre[j]);
	free(c->pre);
	c->pre = NULL;
	c->npre = 0;
}

static const char *state_name(char s)
{
	switch (s) {
	case 'R': return "running";
	case 'S': return "sleeping";
	case 'D': return "disk wait";
	case 'T': return "stopped";
	case 't': return "stopped by a debugger";
	case 'Z': return "zombie";
	case 'X': return "dead";
	case 'I': return "idle";
	default: return "state unknown";
	}
}

/* The leaf pseudo-frame of a thread's state: "[futex wait]", "[running]". */
static void state_frame(const struct sp_snap_thread *t, char *buf, size_t n)
{
	const char *sc = t->nr >= 0 ? sp_syscall_name(t->nr) : NULL;
	if (t->state == 'R')
		snprintf(buf, n, "[running]");
	else if (t->state == 'D')
		snprintf(buf, n, "[disk wait]");
	else if (t->state == 'S' && sc)
		snprintf(buf, n, "[%s wait]", sc);
	else if (t->state == 'S' && t->nr >= 0)
		snprintf(buf, n, "[syscall %ld wait]", t->nr);
	else if (t->state == 'S')
		snprintf(buf, n, "[sleeping]");
	else
		snprintf(buf, n, "[%s]", state_name(t->state));
}

static void print_futex_op(FILE *f, uint64_t v)
{
	static const char *const ops[] = { "WAIT", "WAKE", "FD", "REQUEUE", "CMP_REQUEUE", "WAKE_OP", "LOCK_PI",
					   "UNLOCK_PI", "TRYLOCK_PI", "WAIT_BITSET", "WAKE_BITSET",
					   "WAIT_REQUEUE_PI", "CMP_REQUEUE_PI", "LOCK_PI2" };
	unsigned op = (unsigned)v & 0x7f;
	if ((v & ~(uint64_t)0x1ff) || op >= sizeof ops / sizeof ops[0]) {
		fprintf(f, "0x%llx", (unsigned long long)v);
		return;
	}
	fprintf(f, "FUTEX_%s%s%s", ops[op], v & 128 ? "_PRIVATE" : "", v & 256 ? "|FUTEX_CLOCK_REALTIME" : "");
}

static void print_open_flags(FILE *f, uint64_t v)
{
	static const struct {
		uint64_t bit;
		const char *name;
	} bits[] = { { O_CREAT, "O_CREAT" }, { O_EXCL, "O_EXCL" }, { O_NOCTTY, "O_NOCTTY" }, { O_TRUNC, "O_TRUNC" },
		     { O_APPEND, "O_APPEND" }, { O_NONBLOCK, "O_NONBLOCK" }, { O_DSYNC, "O_DSYNC" },
		     { O_DIRECT, "O_DIRECT" }, { O_LARGEFILE, "O_LARGEFILE" }, { O_DIRECTORY, "O_DIRECTORY" },
		     { O_NOFOLLOW, "O_NOFOLLOW" }, { O_NOATIME, "O_NOATIME" }, { O_CLOEXEC, "O_CLOEXEC" },
		     { O_PATH, "O_PATH" } };
	unsigned acc = (unsigned)v & O_ACCMODE;
	fputs(acc == O_RDONLY ? "O_RDONLY" : acc == O_WRONLY ? "O_WRONLY" : acc == O_RDWR ? "O_RDWR" : "O_ACCMODE", f);
	v &= ~(uint64_t)O_ACCMODE;
	if ((v & __O_TMPFILE) == __O_TMPFILE) {
		fputs("|O_TMPFILE", f);
		v &= ~(uint64_t)__O_TMPFILE;
	}
	if ((v & O_SYNC) == O_SYNC) {
		fputs("|O_SYNC", f);
		v &= ~(uint64_t)O_SYNC;
	}
	for (size_t k = 0; k < sizeof bits / sizeof bits[0]; k++)
		if (v & bits[k].bit) {
			fprintf(f, "|%s", bits[k].name);
			v &= ~bits[k].bit;
		}
	if (v)
		fprintf(f, "|0x%llx", (unsigned long long)v);
}

static void print_clock(FILE *f, uint64_t v)
{
	static const char *const names[] = { "CLOCK_REALTIME", "CLOCK_MONOTONIC", "CLOCK_PROCESS_CPUTIME_ID",
					      "CLOCK_THREAD_CPUTIME_ID", "CLOCK_MONOTONIC_RAW", "CLOCK_REALTIME_COARSE",
					      "CLOCK_MONOTONIC_COARSE", "CLOCK_BOOTTIME" };
	if (v < sizeof names / sizeof names[0])
		fputs(names[v], f);
	else
		fprintf(f, "%lld", (long long)(int)v);
}

/* Argument i of t's system call, printed as its letter in
 * sp_syscall_args says. */
static void print_arg(FILE *f, const struct sp_snap_thread *t, char kind, int i)
{
	uint64_t v = t->args[i];
	switch (kind) {
	case 'f':
		fprintf(f, "%d", (int)v);
		if (i == 0 && t->fd[0])
			fprintf(f, " = %s", t->fd);
		break;
	case 'd':
		if ((int)v == AT_FDCWD)
			fputs("AT_FDCWD", f);
		else
			fprintf(f, "%d", (int)v);
		break;
	case 's':
		if (!v) {
			fputs("NULL", f);
		} else if (t->str[0]) {
			fputc('"', f);
			for (const char *c = t->str; *c; c++) {
				if (*c == '"' || *c == '\\')
					fprintf(f, "\\%c", *c);
				else if ((unsigned char)*c < 32 || *c == 127)
					fprintf(f, "\\x%02x", (unsigned char)*c);
				else
					fputc(*c, f);
			}
			fputc('"', f);
		} else {
			fprintf(f, "0x%llx", (unsigned long long)v);
		}
		break;
	case 'p':
		if (v)
			fprintf(f, "0x%llx", (unsigned long long)v);
		else
			fputs("NULL", f);
		break;
	case 'u': fprintf(f, "%llu", (unsigned long long)v); break;
	case 'i': fprintf(f, "%d", (int)v); break;
	case 'x':
		if (v)
			fprintf(f, "0x%llx", (unsigned long long)v);
		else
			fputc('0', f);
		break;
	case 'o': print_open_flags(f, v); break;
	case 'm':
		fprintf(f, "0%llo", (unsigned long long)v);
		break;
	case 'n': fprintf(f, "%llu fd%s", (unsigned long long)v, v == 1 ? "" : "s"); break;
	case 't': fprintf(f, "timeout=%d", (int)v); break;
	case 'T':
	case 'V':
		if (!v)
			fputs("NULL", f);
		else if (t->have_time)
			fprintf(f, "{%lld, %lld}", (long long)t->time[0], (long long)t->time[1]);
		else
			fprintf(f, "0x%llx", (unsigned long long)v);
		break;
	case 'c': print_clock(f, v); break;
	default: fprintf(f, "0x%llx", (unsigned long long)v); break;
	}
}

static void print_syscall(FILE *f, const struct sp_snap_thread *t)
{
	const char *sc = sp_syscall_name(t->nr);
	if (sc)
		fprintf(f, "%s(", sc);
	else
		fprintf(f, "syscall %ld(", t->nr);
	if (t->nr == SYS_futex) {
		fprintf(f, "0x%llx, ", (unsigned long long)t->args[0]);
		print_futex_op(f, t->args[1]);
		fprintf(f, ", %lld, ", (long long)(int)t->args[2]);
		if (t->args[3])
			fprintf(f, "0x%llx)", (unsigned long long)t->args[3]);
		else
			fputs("NULL)", f);
		return;
	}
	const char *fmt = sp_syscall_args(t->nr);
	if (fmt) {
		for (int i = 0; fmt[i] && i < 6; i++) {
			/* open's mode only matters when it creates a file */
			if (fmt[i] == 'm' && i && fmt[i - 1] == 'o' && !(t->args[i - 1] & (O_CREAT | __O_TMPFILE)))
				break;
			if (i)
				fputs(", ", f);
			print_arg(f, t, fmt[i], i);
		}
		fputc(')', f);
		return;
	}
	int i = 0;
	if (sp_syscall_takes_fd(t->nr)) {
		fprintf(f, "%d", (int)t->args[0]);
		if (t->fd[0])
			fprintf(f, " = %s", t->fd);
		i = 1;
	}
	for (; i < 6; i++)
		fprintf(f, "%s0x%llx", i ? ", " : "", (unsigned long long)t->args[i]);
	fputc(')', f);
}

static void print_frames(struct sp_snapview *c, const struct tstack *ts, const char *indent)
{
	for (size_t i = 0; i < ts->n; i++) {
		const struct sp_frame *fr = sp_frame_get(c->p, ts->frames[i]);
		fprintf(c->out, "%s#%-2zu %s", indent, i, sp_str(c->p, fr->name));
		if (fr->file)
			fprintf(c->out, " at %s:%u", sp_str(c->p, fr->file), fr->line);
		if (fr->kind == SP_KIND_INLINED)
			fputs(" (inlined)", c->out);
		const char *m = fr->module ? sp_str(c->p, fr->module) : NULL, *b = m ? strrchr(m, '/') : NULL;
		const struct sp_map *mp = !fr->file ? sp_maps_find(c->maps, ts->pcs[i]) : NULL;
		if (mp && mp->path[0] && !fr->file) {
			/* No source line: the file offset, for addr2line and friends. */
			const char *mb = strrchr(mp->path, '/');
			fprintf(c->out, " [%s+0x%llx]", mb ? mb + 1 : mp->path,
				(unsigned long long)(ts->pcs[i] - mp->start + mp->pgoff));
		} else if (m) {
			fprintf(c->out, " [%s]", b ? b + 1 : m);
		}
		fputc('\n', c->out);
		if (ts->loc && ts->loc[i] == NOT_READ) {
			fprintf(c->out, "%s        (locals not read: past the 64 innermost frames or the stop's budget of reads)\n", indent);
			continue;
		}
		const char *lv = ts->loc && ts->loc[i] ? ts->lb.p + ts->loc[i] - 1 : NULL;
		for (unsigned k = 0; lv && k < ts->nloc[i]; k++) {
			const char *val = lv + strlen(lv) + 1;
			fprintf(c->out, "%s        %s = %s\n", indent, lv, val);
			lv = val + strlen(val) + 1;
		}
	}
	if (!ts->n && ts->unstopped)
		fprintf(c->out, "%s(no stack: the thread did not stop in time; uninterruptible waits end only when the "
				"kernel is done)\n", indent);
	else if (!ts->n)
		fprintf(c->out, "%s(no user stack)\n", indent);
	else if (ts->truncated)
		fprintf(c->out, "%s(unwinding stopped here)\n", indent);
}

/* A thread's name: its threading name where Python has one (read while
 * stopped), else its comm. */
static const char *tname(const struct sp_snapview *c, const struct sp_snap *s, size_t i)
{
	return c->pyt && c->pyt[i].name ? sp_str(c->p, c->pyt[i].name) : s->t[i].name;
}

/* What thread i waits for in Python terms, when CPython records it:
 * "RLock 0x..." (the lock object) or a Thread.join. */
static int py_wait(const struct sp_snapview *c, size_t i)
{
	return c->pyt ? (int)c->pyt[i].w.kind : SP_PYWAIT_NONE;
}

/* "Lock other._lock (0x...)", "Queue q (0x...)" */
static void print_pyobj(struct sp_snapview *c, size_t i)
{
	const struct sp_python_lockwait *lw = &c->pyt[i].lw;
	fprintf(c->out, "%s ", sp_str(c->p, lw->kind));
	if (lw->obj_name)
		fprintf(c->out, "%s ", sp_str(c->p, lw->obj_name));
	fprintf(c->out, "(0x%llx)", (unsigned long long)lw->obj);
}

/* A threading.Lock, Condition, Semaphore, Event, Barrier or Queue (python.h's
 * sp_python_lock_wait): who holds a Lock, as far as frames tell; that the
 * others have no owner; the other threads waiting for the same object. */
static void print_pylock(struct sp_snapview *c, const struct sp_snap *s, const struct sp_lock_wait *w, size_t i,
			 const char *indent)
{
	const struct sp_python_lockwait *lw = &c->pyt[i].lw;
	int lock = !strcmp(sp_str(c->p, lw->kind), "Lock");
	fprintf(c->out, "%swaits for ", indent);
	print_pyobj(c, i);
	const char *kind = sp_str(c->p, lw->kind);
	if (lock && w[i].owner)
		fprintf(c->out, " held by %d (%s)", w[i].owner, tname(c, s, (size_t)w[i].owner_index));
	else if (lock && c->pyt[i].nholders)
		fputs(": a Lock records no owner; it may be held by", c->out);
	else if (lock)
		fputs(": a Lock records no owner, and no other thread's frames refer to it (released by code that "
		      "did not take it?)", c->out);
	else
		fprintf(c->out, ": a%s %s has no owner: any thread may %s it", strchr("AEIOU", kind[0]) ? "n" : "", kind,
			!strcmp(kind, "Queue") ? "put to or get from" : !strcmp(kind, "Condition") ? "notify"
			: !strcmp(kind, "Event") ? "set" : !strcmp(kind, "Barrier") ? "reach or reset" : "release");
	for (int k = 0; lock && k < c->pyt[i].nholders && k < 4; k++) {
		size_t o = (size_t)c->pyt[i].holder[k].i;
		if (!w[i].owner)
			fprintf(c->out, "%s %d (%s), whose frame", k ? ";" : "", s->t[o].tid, tname(c, s, o));
		else
			fputs(": its frame", c->out);
		fprintf(c->out, " %s is inside \"with\" or between acquire() and release()",
			sp_str(c->p, c->pyt[i].holder[k].where));
		if (c->pyt[i].holder[k].as)
			fprintf(c->out, " of %s", sp_str(c->p, c->pyt[i].holder[k].as));
	}
	if (lock && c->pyt[i].nholders > 4)
		fprintf(c->out, ", and %d more", c->pyt[i].nholders - 4);
	int also = 0;
	for (size_t j = 0; j < s->n; j++)
		if (j != i && c->pyt[j].lw.obj == lw->obj) {
			fprintf(c->out, "%s%d (%s)", also++ ? ", " : "; also waited for by ", s->t[j].tid, tname(c, s, j));
		}
}

static void print_wait(struct sp_snapview *c, const struct sp_snap *s, const struct sp_lock_wait *w, size_t i,
		       const char *indent)
{
	if (c->pyt && c->pyt[i].lw.lock) {
		print_pylock(c, s, w, i, indent);
		return;
	}
	if (py_wait(c, i) == SP_PYWAIT_JOIN) {
		const struct sp_python_wait *pw = &c->pyt[i].w;
		if (w[i].owner)
			fprintf(c->out, "%swaits for thread %d (%s) to finish (Thread.join)", indent, w[i].owner,
				tname(c, s, (size_t)w[i].owner_index));
		else
			fprintf(c->out, "%swaits in Thread.join for \"%s\": %s", indent,
				pw->name ? sp_str(c->p, pw->name) : "?", pw->why[0] ? pw->why : "not a thread of this snapshot");
		return;
	}
	if (py_wait(c, i) == SP_PYWAIT_RLOCK) {
		const struct sp_python_wait *pw = &c->pyt[i].w;
		if (pw->name)
			fprintf(c->out, "%swaits for RLock %s (0x%llx)", indent, sp_str(c->p, pw->name),
				(unsigned long long)pw->obj);
		else
			fprintf(c->out, "%swaits for RLock 0x%llx", indent, (unsigned long long)pw->obj);
		if (w[i].owner) {
			fprintf(c->out, " held by %d (%s)", w[i].owner, tname(c, s, (size_t)w[i].owner_index));
			if (pw->count > 1)
				fprintf(c->out, ", %llu times", (unsigned long long)pw->count);
		} else
			fprintf(c->out, ": %s", pw->why[0] ? pw->why : "its owner is not a thread of this snapshot");
		return;
	}
	if (w[i].kind == SP_LOCK_JOIN && w[i].owner) {
		fprintf(c->out, "%swaits for thread %d (%s) to exit (pthread_join)", indent, w[i].owner,
			tname(c, s, (size_t)w[i].owner_index));
		return;
	}
	fprintf(c->out, "%swaits for %s 0x%llx", indent, sp_lock_kind_name(w[i].kind), (unsigned long long)w[i].addr);
	if (w[i].owner)
		fprintf(c->out, " held by %d (%s)", w[i].owner, tname(c, s, (size_t)w[i].owner_index));
	else if (w[i].why[0])
		fprintf(c->out, ": %s", w[i].why);
}

static void thread_head(struct sp_snapview *c, const struct sp_snap *s, size_t i)
{
	const struct sp_snap_thread *t = &s->t[i];
	fprintf(c->out, "%d (%s) %s", t->tid, tname(c, s, i), state_name(t->state));
	if (t->state != 'R' && t->nr >= 0) {
		fputs(" in ", c->out);
		print_syscall(c->out, t);
		if (t->restarted)
			fputs(" (restarted)", c->out);
	}
	if (c->o.verbose)
		fprintf(c->out, ", stopped %.3f ms", (double)t->stopped_ns / 1e6);
}

/* As Go says "all goroutines are asleep": every thread sleeps in a futex
 * wait with no timeout, on something known (a lock, a condition, a
 * queue, a join), so none can wake another. */
static int all_blocked(const struct sp_snapview *c, const struct sp_snap *s, const struct sp_lock_wait *w)
{
	for (size_t i = 0; i < s->n; i++) {
		const struct sp_snap_thread *t = &s->t[i];
		unsigned op = (unsigned)t->args[1] & 0x7f;
		if (t->state == 'R' || t->nr != SYS_futex || t->args[3] || (op != 0 && op != 9 /* WAIT, WAIT_BITSET */) ||
		    (w[i].kind == SP_LOCK_NONE && !py_wait(c, i) && !(c->pyt && c->pyt[i].lw.lock)))
			return 0;
	}
	return s->n > 0;
}

/* "DEADLOCK: 2 threads wait for each other: ..." for cycle k, no newline. */
static void print_cycle(struct sp_snapview *c, const struct sp_snap *s, const struct sp_lock_wait *w, const int *cycle,
			int k)
{
	size_t first = 0, len = 0;
	for (size_t i = 0; i < s->n; i++)
		if (cycle[i] == k) {
			if (!len)
				first = i;
			len++;
		}
	fprintf(c->out, "DEADLOCK: %zu threads wait for each other: %d (%s)", len, s->t[first].tid, tname(c, s, first));
	size_t j = first;
	do {
		size_t o = (size_t)w[j].owner_index;
		int pk = py_wait(c, j);
		if (c->pyt && c->pyt[j].lw.lock) {
			fputs(j == first ? " waits for " : ", which waits for ", c->out);
			print_pyobj(c, j);
			fprintf(c->out, " held by %d (%s)", s->t[o].tid, tname(c, s, o));
			j = o;
			continue;
		}
		if (pk == SP_PYWAIT_RLOCK && c->pyt[j].w.name) {
			fprintf(c->out, "%s RLock %s (0x%llx) held by %d (%s)", j == first ? " waits for" : ", which waits for",
				sp_str(c->p, c->pyt[j].w.name), (unsigned long long)c->pyt[j].w.obj, s->t[o].tid,
				tname(c, s, o));
			j = o;
			continue;
		}
		fprintf(c->out, "%s %s 0x%llx held by %d (%s)", j == first ? " waits for" : ", which waits for",
			pk == SP_PYWAIT_RLOCK ? "RLock" : pk == SP_PYWAIT_JOIN ? "the end of Thread" : sp_lock_kind_name(w[j].kind),
			(unsigned long long)(pk ? c->pyt[j].w.obj : w[j].addr), s->t[o].tid, tname(c, s, o));
		j = o;
	} while (j != first);
}

/* ---- -O json: the text's printers into a string ---- */

struct cap {
	FILE *saved;
	char *p;
	size_t n;
};

static int cap_on(struct sp_snapview *c, struct cap *k)
{
	k->saved = c->out;
	k->p = NULL;
	k->n = 0;
	FILE *f = open_memstream(&k->p, &k->n);
	if (!f)
		return -1;
	c->out = f;
	return 0;
}

/* What was printed since cap_on, as "key":"text" (null when nothing). */
static void cap_off(struct sp_snapview *c, struct cap *k, struct sp_buf *b, const char *key)
{
	fclose(c->out);
	c->out = k->saved;
	sp_buf_addf(b, ",\"%s\":", key);
	if (k->p && k->n)
		sp_buf_add_json_str(b, k->p);
	else
		sp_buf_adds(b, "null");
	free(k->p);
}

static void json_frames(struct sp_snapview *c, const struct tstack *ts, struct sp_buf *b)
{
	static const char *const kinds[SP_KIND_MAX] = { "native", "kernel", "jit", "inlined", "python", "synthetic" };
	sp_buf_adds(b, ",\"frames\":[");
	for (size_t i = 0; i < ts->n; i++) {
		const struct sp_frame *fr = sp_frame_get(c->p, ts->frames[i]);
		sp_buf_adds(b, i ? ",{\"name\":" : "{\"name\":");
		sp_buf_add_json_str(b, sp_str(c->p, fr->name));
		sp_buf_addf(b, ",\"kind\":\"%s\"", fr->kind < SP_KIND_MAX ? kinds[fr->kind] : "native");
		if (fr->file) {
			sp_buf_adds(b, ",\"file\":");
			sp_buf_add_json_str(b, sp_str(c->p, fr->file));
			sp_buf_addf(b, ",\"line\":%u", fr->line);
		}
		if (fr->module) {
			sp_buf_adds(b, ",\"module\":");
			sp_buf_add_json_str(b, sp_str(c->p, fr->module));
		}
		if (ts->pcs[i])
			sp_buf_addf(b, ",\"address\":\"0x%llx\"", (unsigned long long)ts->pcs[i]);
		if (c->o.locals && ts->loc[i] == NOT_READ) {
			sp_buf_adds(b, ",\"locals_not_read\":true");
		} else if (c->o.locals) {
			const char *lv = ts->loc[i] ? ts->lb.p + ts->loc[i] - 1 : NULL;
			sp_buf_adds(b, ",\"locals\":[");
			for (unsigned k = 0; lv && k < ts->nloc[i]; k++) {
				const char *val = lv + strlen(lv) + 1;
				sp_buf_adds(b, k ? ",{\"name\":" : "{\"name\":");
				sp_buf_add_json_str(b, lv);
				sp_buf_adds(b, ",\"value\":");
				sp_buf_add_json_str(b, val);
				sp_buf_addc(b, '}');
				lv = val + strlen(val) + 1;
			}
			sp_buf_addc(b, ']');
		}
		sp_buf_addc(b, '}');
	}
	sp_buf_addc(b, ']');
}

/* One snapshot as one JSON object on one line (several snapshots: JSON
 * Lines): the process, the deadlocks, and each thread with its wait and
 * its frames, innermost first (with their locals under --locals). */
static void json_snapshot(struct sp_snapview *c, const struct sp_snap *s, const int *keep, struct tstack *ts,
			  const struct sp_lock_wait *w, const int *cycle, int ncyc)
{
	struct sp_buf b = SP_BUF_INIT;
	struct cap k;
	sp_buf_addf(&b, "{\"pid\":%d,\"comm\":", s->pid);
	sp_buf_add_json_str(&b, s->n ? s->t[0].name : "?");
	sp_buf_addf(&b, ",\"threads_total\":%zu,\"stopped_ms\":", s->n);
	sp_buf_addnum(&b, (double)s->window_ns / 1e6);
	if (c->pyt) {
		sp_buf_adds(&b, ",\"python\":");
		sp_buf_add_json_str(&b, c->last.python);
		if (c->gil >= 0)
			sp_buf_addf(&b, ",\"gil_holder\":%d", c->gil);
	}
	sp_buf_addf(&b, ",\"all_blocked\":%s,\"deadlocks\":[", all_blocked(c, s, w) ? "true" : "false");
	for (int cy = 1; cy <= ncyc; cy++) {
		if (cap_on(c, &k) < 0)
			break;
		print_cycle(c, s, w, cycle, cy);
		fclose(c->out);
		c->out = k.saved;
		if (cy > 1)
			sp_buf_addc(&b, ',');
		sp_buf_add_json_str(&b, k.p ? k.p : "");
		free(k.p);
	}
	sp_buf_adds(&b, "],\"threads\":[");
	int first = 1;
	for (size_t i = 0; i < s->n; i++) {
		if (!keep[i])
			continue;
		const struct sp_snap_thread *t = &s->t[i];
		sp_buf_addf(&b, "%s{\"tid\":%d,\"name\":", first ? "" : ",", t->tid);
		first = 0;
		sp_buf_add_json_str(&b, tname(c, s, i));
		sp_buf_adds(&b, ",\"state\":");
		sp_buf_add_json_str(&b, state_name(t->state));
		if (t->state != 'R' && t->nr >= 0 && cap_on(c, &k) == 0) {
			print_syscall(c->out, t);
			cap_off(c, &k, &b, "syscall");
			if (t->restarted)
				sp_buf_adds(&b, ",\"restarted\":true");
		}
		if (t->kstack[0]) {
			sp_buf_adds(&b, ",\"kernel\":");
			sp_buf_add_json_str(&b, t->kstack);
		}
		if (c->o.verbose) {
			sp_buf_adds(&b, ",\"stopped_ms\":");
			sp_buf_addnum(&b, (double)t->stopped_ns / 1e6);
		}
		if ((w[i].kind != SP_LOCK_NONE || py_wait(c, i)) && cap_on(c, &k) == 0) {
			print_wait(c, s, w, i, "");
			cap_off(c, &k, &b, "waits");
			if (w[i].owner)
				sp_buf_addf(&b, ",\"owner\":%d", w[i].owner);
		}
		if (ts[i].truncated)
			sp_buf_adds(&b, ",\"truncated\":true");
		json_frames(c, &ts[i], &b);
		sp_buf_addc(&b, '}');
	}
	sp_buf_adds(&b, "]");
	if (c->o.locals)
		sp_buf_addf(&b, ",\"values_not_read\":%zu,\"python_frames_not_read\":%zu", c->v.notread,
			    c->pyt ? c->pyskipped : 0);
	if (s->gone)
		sp_buf_addf(&b, ",\"exited_during\":%zu", s->gone);
	sp_buf_adds(&b, "}\n");
	fwrite(b.p, 1, b.len, c->out);
	sp_buf_release(&b);
}

static void text_snapshot(struct sp_snapview *c, const struct sp_snap *s, const int *keep, struct tstack *ts,
			  const struct sp_lock_wait *w, const int *cycle, int ncyc)
{
	size_t kept = 0;
	for (size_t i = 0; i < s->n; i++)
		kept += keep[i];
	char when[64] = "";
	time_t now = time(NULL);
	struct tm tm;
	if (localtime_r(&now, &tm))
		strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
	fprintf(c->out, "process %d (%s): %zu thread%s", s->pid, s->n ? s->t[0].name : "?", s->n,
		s->n == 1 ? "" : "s");
	if (kept != s->n)
		fprintf(c->out, ", %zu shown", kept);
	fprintf(c->out, ", stopped for %.2f ms at %s\n", (double)s->window_ns / 1e6, when);
	if (c->pyt) {
		fprintf(c->out, "%s: ", c->last.python);
		size_t g = 0;
		while (c->gil > 0 && g < s->n && s->t[g].tid != c->gil)
			g++;
		if (c->gil == 0)
			fputs("no thread holds the GIL\n", c->out);
		else if (c->gil > 0 && g < s->n)
			fprintf(c->out, "the GIL is held by thread %d (%s)\n", c->gil, tname(c, s, g));
		else
			fputs("which thread holds the GIL is unknown\n", c->out);
	}
	if (all_blocked(c, s, w))
		fprintf(c->out, "all threads are blocked: deadlock (each waits, with no timeout, for a lock, condition, "
				"queue or thread that only another of them could free)\n");
	for (int k = 1; k <= ncyc; k++) {
		print_cycle(c, s, w, cycle, k);
		fputc('\n', c->out);
	}
	char *seen = sp_xcalloc(s->n ? s->n : 1, 1);
	for (size_t i = 0; i < s->n; i++) {
		if (!keep[i])
			continue;
		fputc('\n', c->out);
		fputs("thread ", c->out);
		thread_head(c, s, i);
		fputc('\n', c->out);
		if (s->t[i].kstack[0])
			fprintf(c->out, "    in the kernel: %s\n", s->t[i].kstack);
		print_frames(c, &ts[i], "    ");
		if (c->pyt && c->gil > 0 && c->gil != s->t[i].tid) {
			/* A Python thread asleep in take_gil waits for the GIL's
			 * holder (named only where the interpreter has symbols). */
			size_t k = 0;
			while (k < ts[i].n && strcmp(sp_str(c->p, sp_frame_get(c->p, ts[i].frames[k])->name), "take_gil"))
				k++;
			size_t g = 0;
			while (g < s->n && s->t[g].tid != c->gil)
				g++;
			if (k < ts[i].n && g < s->n)
				fprintf(c->out, "  waits for the GIL, held by thread %d (%s)\n", c->gil, tname(c, s, g));
		}
		if (w[i].kind == SP_LOCK_NONE && !py_wait(c, i))
			continue;
		/* The chain of owners: each one's stack right below. */
		print_wait(c, s, w, i, "  ");
		fputc('\n', c->out);
		for (size_t k = 0; k < s->n; k++)
			seen[k] = 0;
		seen[i] = 1;
		size_t j = i;
		while (w[j].owner_index >= 0) {
			size_t o = (size_t)w[j].owner_index;
			if (seen[o]) {
				fprintf(c->out, "  ... and %d (%s) is already in this chain: DEADLOCK\n", s->t[o].tid,
					tname(c, s, o));
				break;
			}
			seen[o] = 1;
			fputs(w[j].kind == SP_LOCK_JOIN || py_wait(c, j) == SP_PYWAIT_JOIN ? "  thread " : "  owner ", c->out);
			thread_head(c, s, o);
			fputs(":\n", c->out);
			print_frames(c, &ts[o], "      ");
			if (w[o].kind == SP_LOCK_NONE && !py_wait(c, o))
				break;
			fputs("  which ", c->out);
			print_wait(c, s, w, o, "");
			fputc('\n', c->out);
			j = o;
		}
	}
	free(seen);
	if (c->pyt && c->pyskipped)
		fprintf(c->out, "\n(the locals of %zu Python frames were not read: the 64 innermost frames of a thread "
				"at most, and %d reads of the target's memory in %.0f ms of CPU while it is stopped)\n",
			c->pyskipped, PY_LOCAL_READS, LOCALS_CPU_NS / 1e6);
	if (c->v.notread)
		fprintf(c->out, "\n(%zu values not read: --locals reads the values outside the stack copies while the threads "
				"are stopped, for %.0f ms of CPU (%.0f ms of wall-clock time) and %u bytes at most)\n",
			c->v.notread, LOCALS_CPU_NS / 1e6, LOCALS_WALL_NS / 1e6, LOCALS_BUDGET);
	if (s->gone)
		fprintf(c->out, "\n(%zu thread%s exited during the snapshot)\n", s->gone, s->gone == 1 ? "" : "s");
}

static int sample_snapshot(struct sp_snapview *c, const struct sp_snap *s, const int *keep, struct tstack *ts,
			   struct sp_err *err)
{
	for (size_t i = 0; i < s->n; i++) {
		if (!keep[i])
			continue;
		const struct sp_snap_thread *t = &s->t[i];
		uint32_t node = 0;
		/* A Python thread asleep in take_gil waits for the GIL: its
		 * leaf is "[gil wait]" in place of take_gil and what is under
		 * it, as in sampling (pymerge.h). */
		size_t top = 0;
		char leaf[64];
		state_frame(t, leaf, sizeof leaf);
		for (size_t k = ts[i].n; c->pyt && k-- > 0;)
			if (!strcmp(sp_str(c->p, sp_frame_get(c->p, ts[i].frames[k])->name), "take_gil")) {
				top = k + 1;
				snprintf(leaf, sizeof leaf, "[gil wait]");
				break;
			}
		for (size_t k = ts[i].n; k-- > top;)
			node = sp_node_intern(c->p, node, ts[i].frames[k]);
		node = sp_node_intern(c->p, node, sp_frame_named(c->p, leaf, strlen(leaf), SP_KIND_SYNTHETIC));
		struct sp_sample smp;
		memset(&smp, 0, sizeof smp);
		smp.stack = node;
		const char *nm = tname(c, s, i);
		smp.thread = sp_thread_intern(c->p, s->pid, t->tid, sp_str_intern(c->p, nm, strlen(nm)));
		smp.event = c->event;
		smp.time = s->time;
		smp.values[0] = 1;
		if (c->sink->sample(c->sink, c->p, &smp, err) < 0)
			return -1;
	}
	return 0;
}

/* A sleep with a timeout that a signal or an earlier snapshot interrupted
 * goes on as restart_syscall, with the argument registers untouched: which
 * call it resumes is told by the innermost frames (libc's wrappers). */
static void resolve_restart(struct sp_snap_thread *t, const char *const *names, size_t n)
{
	static const struct {
		const char *name;
		long nr;
	} calls[] = {
		{ "futex", SYS_futex }, { "lll_lock_wait", SYS_futex }, { "clock_nanosleep", SYS_clock_nanosleep },
		{ "nanosleep", SYS_nanosleep }, { "epoll_pwait", SYS_epoll_pwait }, { "epoll_wait", SYS_epoll_wait },
		{ "ppoll", SYS_ppoll }, { "poll", SYS_poll }, { "pselect", SYS_pselect6 }, { "select", SYS_select },
	};
	if (t->nr != SYS_restart_syscall)
		return;
	for (size_t i = 0; i < n && i < 8; i++)
		for (size_t k = 0; k < sizeof calls / sizeof calls[0]; k++)
			if (names[i] && strstr(names[i], calls[k].name)) {
				t->nr = calls[k].nr;
				t->restarted = 1;
				return;
			}
}

/* A Python wait (python.h) is kept when the native stack agrees: the
 * thread sleeps in futex and, where the interpreter has symbols, inside
 * rlock_acquire for an RLock (not Lock.acquire's
 * lock_PyThread_acquire_lock alone).  The owner then stands in w, so
 * chains and deadlocks follow it as they follow a mutex's. */
static void py_confirm(struct sp_snapview *c, const struct sp_snap *s, size_t i, const char *const *names, size_t n,
		       struct sp_lock_wait *w)
{
	struct sp_python_wait *pw = &c->pyt[i].w;
	if (!pw->kind)
		return;
	int rlock = 0, lock = 0;
	for (size_t k = 0; k < n; k++) {
		rlock |= !strcmp(names[k], "rlock_acquire");
		lock |= !strcmp(names[k], "lock_PyThread_acquire_lock");
	}
	if (s->t[i].nr != SYS_futex || (pw->kind == SP_PYWAIT_RLOCK && lock && !rlock)) {
		pw->kind = SP_PYWAIT_NONE;
		return;
	}
	w->owner = 0;
	w->owner_index = -1;
	for (size_t k = 0; pw->owner && k < s->n; k++)
		if (s->t[k].tid == pw->owner) {
			w->owner = pw->owner;
			w->owner_index = (int)k;
		}
	if (pw->owner && !w->owner)
		snprintf(pw->why, sizeof pw->why, "its owner %d is not a thread of this snapshot (it exited)", pw->owner);
}

int sp_snapview_take(struct sp_snapview *c, struct sp_err *err)
{
	/* The process's files, reported to libdwfl before anything stops. */
	int live = sp_snap_live_tid(c->o.pid);
	if (!c->u)
		c->u = sp_unwind_new(live, sp_symbols_mods(c->syms));
	c->live = live;
	sp_maps_clear(c->maps);
	if (sp_maps_load(c->maps, live, 1, err) < 0) {
		char path[64];
		snprintf(path, sizeof path, "/proc/%d/maps", c->o.pid);
		int fd = open(path, O_RDONLY | O_CLOEXEC); /* maps are guarded by the ptrace rule */
		if (fd >= 0)
			close(fd);
		else if (errno == EACCES || errno == EPERM)
			sp_snap_denied(c->o.pid, EPERM, err); /* the same rule guards the maps */
		return -1;
	}
	sp_unwind_sync(c->u, c->maps);
	if (!c->py && c->pystate != SP_PY_REFUSED && !c->o.no_python) {
		c->py = sp_python_open(c->p, c->o.pid, c->maps, 1, &c->pystate, &c->pyerr);
		if (c->py)
			sp_python_set_full_filenames(c->py, c->o.full_filenames);
		if (c->py)
			snprintf(c->last.python, sizeof c->last.python, "Python %s", sp_python_version(c->py));
		else if (c->pystate == SP_PY_REFUSED)
			snprintf(c->last.python, sizeof c->last.python, "%s", c->pyerr.msg);
	}
	if (c->py && c->pystate == SP_PY_WAITING)
		c->pystate = sp_python_check(c->py, &c->pyerr);
	if (c->py && c->pystate == SP_PY_REFUSED) {
		snprintf(c->last.python, sizeof c->last.python, "%s", c->pyerr.msg);
		sp_python_free(c->py);
		c->py = NULL;
	}
	c->last.python_merged = c->py && c->pystate == SP_PY_READY;
	free(c->pyt);
	c->pyt = NULL; /* set again by py_hook */
	memset(&c->mem, 0, sizeof c->mem);
	c->mem.pid = live;
	c->mem.budget = c->test_reads ? c->test_reads : LOCALS_BUDGET;
	c->npre = 0;
	memset(&c->v, 0, sizeof c->v);
	c->pyskipped = 0;
	if (c->o.locals) /* DWARF loaded before the stop, not during it */
		sp_locals_prepare(sp_unwind_dwfl(c->u));
	sp_snap_set_hook(c->last.python_merged || c->o.locals ? stop_hook : NULL, c);
	struct sp_snap s;
	int took = sp_snap_take(c->o.pid, c->o.stack ? c->o.stack : 262144, &s, err);
	sp_snap_set_hook(NULL, NULL);
	if (took < 0) {
		free_stopped(c);
		if (s.interrupted)
			return s.interrupted; /* a request to stop, as between snapshots */
		return -1;
	}
	if (c->pyt && s.n > c->npyt) {
		/* zombie threads, listed after the stop: no Python frames */
		c->pyt = sp_xrealloc(c->pyt, s.n * sizeof *c->pyt);
		memset(c->pyt + c->npyt, 0, (s.n - c->npyt) * sizeof *c->pyt);
	}
	/* Thread names change seldom: read after the threads were let go. */
	for (size_t i = 0; c->pyt && i < s.n; i++)
		c->pyt[i].name = sp_python_thread_name(c->py, s.t[i].tid, i == 0);
	struct tstack *ts = sp_xcalloc(s.n ? s.n : 1, sizeof *ts);
	struct sp_lock_wait *w = sp_xcalloc(s.n ? s.n : 1, sizeof *w);
	int *keep = sp_xcalloc(s.n ? s.n : 1, sizeof *keep), *cycle = sp_xcalloc(s.n ? s.n : 1, sizeof *cycle);
	const char **names = NULL;
	size_t capnames = 0;
	int py = c->pyt != NULL;
	/* Threads the stop did not reach: their stack copies only. */
	c->mem.budget = 0;
	memset(&c->mem.time, 0, sizeof c->mem.time);
	for (size_t i = 0; i < s.n; i++) {
		struct prestack *ps = c->o.locals ? stopped_stack(c, &s.t[i]) : NULL;
		c->v.late += c->o.locals && !ps && s.t[i].have_regs;
		unwind_thread(c, &s.t[i], ps, &ts[i]);
		if (py)
			py_merge(c, i, &ts[i]);
		keep[i] = !c->have_re || !regexec(&c->re, s.t[i].name, 0, NULL, 0) ||
			  !regexec(&c->re, tname(c, &s, i), 0, NULL, 0);
		if (ts[i].n > capnames) {
			capnames = ts[i].n;
			names = sp_xrealloc(names, capnames * sizeof *names);
		}
		for (size_t k = 0; k < ts[i].n; k++)
			names[k] = sp_str(c->p, sp_frame_get(c->p, ts[i].frames[k])->name);
		resolve_restart(&s.t[i], names, ts[i].n);
		sp_lock_classify(&s, i, names, ts[i].n, &w[i]);
		if (py)
			py_confirm(c, &s, i, names, ts[i].n, &w[i]);
		if (py && c->pyt[i].lw.lock) {
			w[i].owner = 0;
			w[i].owner_index = -1;
			if (c->pyt[i].nholders == 1) {
				w[i].owner_index = c->pyt[i].holder[0].i;
				w[i].owner = s.t[w[i].owner_index].tid;
			}
		}
	}
	for (size_t i = 0; c->o.locals && i < s.n; i++)
		if (keep[i])
			c->v.notread += count_not_read(&ts[i]);
	int ncyc = sp_lock_cycles(w, s.n, cycle);
	int rc = 0;
	if (c->o.format == F_TEXT)
		text_snapshot(c, &s, keep, ts, w, cycle, ncyc);
	else if (c->o.format == SP_SNAPVIEW_JSON)
		json_snapshot(c, &s, keep, ts, w, cycle, ncyc);
	else
		rc = sample_snapshot(c, &s, keep, ts, err);
	c->last.threads = s.n;
	c->last.locals_skipped = c->v.notread;
	c->last.locals_frames = c->pyskipped;
	c->last.locals_late = c->v.late;
	c->last.locals_late_frames = c->v.late_frames;
	c->last.locals_reads = c->mem.reads + c->v.pyreads;
	c->last.locals_ns = c->v.ns;
	c->last.locals_cpu_ns = c->v.cpu_ns;
	c->last.window_ns = s.window_ns;
	c->last.longest_ns = 0;
	for (size_t i = 0; i < s.n; i++)
		if (s.t[i].stopped_ns > c->last.longest_ns)
			c->last.longest_ns = s.t[i].stopped_ns;
	for (size_t i = 0; i < s.n; i++)
		free_tstack(&ts[i]);
	free(ts);
	free(w);
	free(keep);
	free(cycle);
	free(names);
	sp_snap_free(&s);
	free(c->pyt);
	c->pyt = NULL;
	free_stopped(c);
	return rc;
}

const struct sp_snapview_stats *sp_snapview_last(const struct sp_snapview *v) { return &v->last; }

struct sp_snapview *sp_snapview_new(const struct sp_snapview_opts *o, FILE *out, struct sp_err *err)
{
	struct sp_snapview *c = sp_xcalloc(1, sizeof *c);
	c->o = *o;
	if (o->threads) {
		if (sp_thread_regex(&c->re, o->threads, err) < 0) {
			free(c);
			return NULL;
		}
		c->have_re = 1;
	}
	c->o.threads = NULL;
	c->out = out;
	/* Test hook: bytes of native values and reads of Python ones (in
	 * place of LOCALS_BUDGET and PY_LOCAL_READS), to see what the budget
	 * leaves unread said on each variable. */
	const char *tr = getenv("SP_SNAPSHOT_TEST_LOCALS_READS");
	c->test_reads = tr && atol(tr) > 0 ? (uint64_t)atol(tr) : 0;
	c->p = sp_profile_new();
	static const char *const values[] = { "samples" };
	sp_profile_set_values(c->p, 1, values);
	sp_meta_add(c->p, "source", "pcollect --snapshot");
	sp_meta_add(c->p, "event", "snapshot");
	char buf[64];
	snprintf(buf, sizeof buf, "%d", o->pid);
	sp_meta_add(c->p, "pid", buf);
	snprintf(buf, sizeof buf, "%llu", (unsigned long long)llround(o->interval * 1e9));
	sp_meta_add(c->p, "interval-ns", buf);
	c->event = sp_str_intern(c->p, "snapshot", 8);
	struct sp_symbols_opts so = { .lines = o->format == F_TEXT || o->format == SP_SNAPVIEW_JSON || o->lines, .no_inline = o->no_inline };
	c->syms = sp_symbols_new(c->p, &so);
	c->maps = sp_maps_new();
	c->u = sp_unwind_new(o->pid, sp_symbols_mods(c->syms));
	struct sp_fold_opts fo = { SP_LABEL_COMM, 1, 1, NULL, 1 };
	if (o->format == F_STREAM || o->format == F_FOLDED) {
		c->w = sp_writer_open(o->format == F_STREAM ? SP_OUT_BINARY : SP_OUT_FOLDED, out, c->p, &fo, 0, err);
		c->sink = sp_writer_sink(c->w);
	}
	return c;
}

int sp_snapview_finish(struct sp_snapview *c, struct sp_err *err)
{
	return c->w ? sp_writer_finish(c->w, err) : 0;
}

void sp_snapview_free(struct sp_snapview *c)
{
	if (!c)
		return;
	sp_writer_free(c->w);
	sp_python_free(c->py);
	free(c->pyt);
	free(c->pyfr);
	free(c->pyen);
	free(c->pyloc);
	free(c->pylocn);
	sp_buf_release(&c->pylb);
	sp_buf_release(&c->pyraw);
	free(c->mfr);
	free(c->msrc);
	sp_unwind_free(c->u);
	sp_maps_free(c->maps);
	sp_symbols_free(c->syms);
	sp_profile_free(c->p);
	if (c->have_re)
		regfree(&c->re);
	free(c);
}
