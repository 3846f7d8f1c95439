/* pymerge.c — Python frames merged into native stacks (pymerge.h). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pymerge.h"
#include "unwind.h"

#define MAX_PY 1024

struct pyproc {
	int pid;
	uint64_t serial, gen;     /* image and maps the state was decided for */
	enum sp_python_state state;
	struct sp_python *py;
	int announced;
	int nonblocking; /* exact mode, but ptrace was refused */
	int opening;     /* one caller is in sp_python_open (lock released) */
	uint64_t refused; /* hash of the refusal last said for this pid, 0 none */
};

struct merged {
	uint64_t hash;
	uint32_t native, npy, off, node;
	int truncated; /* bit 0: the native stack was; bit 1: the counts disagreed;
			* bit 2: on a native stack cut short; bit 3: other Python
			* threads (gil_wait) */
};

struct sp_pymerge {
	struct sp_profile *p;
	enum sp_pymode mode;
	int lines, full;
	struct pyproc *procs;
	size_t nprocs, capprocs;
	struct sp_u64map procidx; /* pid -> index + 1 */
	/* merged stacks by (native node, Python frames) */
	struct merged *ents;
	size_t nents, capents;
	struct sp_u64map mergeidx;
	uint32_t *arena;
	size_t narena, caparena;
	/* scratch */
	uint32_t pyfr[MAX_PY], key[MAX_PY];
	uint8_t entry[MAX_PY];
	uint32_t *nat, *out;
	size_t capnat, capout;
	struct sp_buf msgs; /* queued messages, NUL-separated */
	size_t msgpos;
	struct sp_pymerge_stats st;
	uint32_t eval; /* string id of "_PyEval_EvalFrameDefault" */
	/* exact mode */
	struct sp_pystop *stop; /* NULL: non-blocking */
	char *why;              /* why not exact, NULL when exact */
	int npy;                /* the stopped thread's Python frames, in pyfr */
	uint32_t take_gil, gil_wait; /* "take_gil"; the frame "[gil wait]" */
	uint32_t changed;            /* the frame "[python frame changed]" */
	int multi;                   /* the sample's process has other Python threads */
	/* Frames taken early (sp_pymerge_early, in the drainer thread: lock
	 * held by every entry point): a table by hash of (tid, time), a slot
	 * overwritten by a later sample, whose raw frames are in a circular
	 * arena (valid while not written over: apos - off <= EARLY_WORDS). */
	pthread_mutex_t lock;
	struct early { uint64_t time, off; int tid, n; } *pre;
	uint64_t *praw, apos;
	uint64_t *sraw; /* the stopped thread's raw frames */
	/* the processes whose readers are READY, for the early reads to
	 * pass by the others without the lock (written under it) */
	int rpids[64];
	int nrpids; /* -1: more than 64, ask under the lock */
	uint64_t busy_until; /* the drainer's: try the lock only, until then */
};
#define EARLY_SLOTS 4096
#define EARLY_WORDS (1u << 19)
#define EARLY_FRAMES 512 /* deeper: read when the sample is handled */

struct sp_pymerge *sp_pymerge_new(struct sp_profile *p, enum sp_pymode mode, int lines, int full_filenames)
{
	struct sp_pymerge *m = sp_xcalloc(1, sizeof *m);
	m->p = p;
	m->mode = mode;
	m->lines = lines;
	m->full = full_filenames;
	sp_u64map_init(&m->procidx);
	sp_u64map_init(&m->mergeidx);
	pthread_mutex_init(&m->lock, NULL);
	m->eval = sp_str_intern(p, "_PyEval_EvalFrameDefault", 24);
	m->take_gil = sp_str_intern(p, "take_gil", 8);
	m->gil_wait = sp_frame_named(p, "[gil wait]", 10, SP_KIND_SYNTHETIC);
	m->changed = sp_frame_named(p, "[python frame changed]", 22, SP_KIND_SYNTHETIC);
	sp_buf_init(&m->msgs);
	return m;
}

void sp_pymerge_free(struct sp_pymerge *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nprocs; i++)
		sp_python_free(m->procs[i].py);
	free(m->procs);
	sp_u64map_release(&m->procidx);
	sp_u64map_release(&m->mergeidx);
	free(m->ents);
	free(m->arena);
	free(m->nat);
	free(m->out);
	sp_buf_release(&m->msgs);
	sp_pystop_free(m->stop);
	free(m->why);
	free(m->pre);
	free(m->praw);
	free(m->sraw);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

static const struct sp_pymerge_stats *stats_locked(struct sp_pymerge *m)
{
	m->st.from_cstack = 0;
	for (size_t i = 0; i < m->nprocs; i++)
		if (m->procs[i].py)
			m->st.from_cstack += sp_python_stats(m->procs[i].py)->from_cstack;
	return &m->st;
}

static const char *message_locked(struct sp_pymerge *m)
{
	if (m->msgpos >= m->msgs.len) {
		sp_buf_reset(&m->msgs);
		m->msgpos = 0;
		return NULL;
	}
	const char *s = m->msgs.p + m->msgpos;
	m->msgpos += strlen(s) + 1;
	return s;
}

static void say(struct sp_pymerge *m, int pid, const char *what)
{
	sp_buf_addf(&m->msgs, "process %d: %s", pid, what);
	sp_buf_addc(&m->msgs, 0);
}

/* A refusal is said once per pid and sentence: the process may be seen
 * anew (its serial changes when the exec's record is handled after its
 * first samples, or the exit's before its last ones) with the same
 * interpreter, and the rehearsals saw the sentence twice. */
static void say_refused(struct sp_pymerge *m, struct pyproc *pp, const char *what)
{
	uint64_t h = sp_hash_seed(what, strlen(what), 1) | 1;
	if (pp->refused == h)
		return;
	pp->refused = h;
	say(m, pp->pid, what);
}

static struct pyproc *proc_get(struct sp_pymerge *m, int pid)
{
	int found;
	uint32_t *slot = sp_u64map_slot(&m->procidx, (uint64_t)(uint32_t)pid, &found);
	if (found && *slot)
		return &m->procs[*slot - 1];
	if (m->nprocs == m->capprocs) {
		m->capprocs = m->capprocs ? 2 * m->capprocs : 16;
		m->procs = sp_xrealloc(m->procs, m->capprocs * sizeof *m->procs);
	}
	struct pyproc *pp = &m->procs[m->nprocs++];
	memset(pp, 0, sizeof *pp);
	pp->pid = pid;
	pp->gen = UINT64_MAX;
	*slot = (uint32_t)m->nprocs;
	return pp;
}

void sp_pymerge_set_exact(struct sp_pymerge *m, int exact, size_t stack_max, const char *why)
{
	sp_pystop_free(m->stop);
	m->stop = exact ? sp_pystop_new(stack_max) : NULL;
	free(m->why);
	m->why = why && !exact ? sp_xstrndup(why, strlen(why)) : NULL;
}

struct sp_pystop *sp_pymerge_stopper(struct sp_pymerge *m) { return m->stop; }

static void ready_pids(struct sp_pymerge *m);

static void exit_locked(struct sp_pymerge *m, int pid)
{
	if (m->stop)
		sp_pystop_release(m->stop, pid);
	int found;
	uint32_t i = sp_u64map_get(&m->procidx, (uint64_t)(uint32_t)pid, &found);
	if (found && i) {
		struct pyproc *pp = &m->procs[i - 1];
		sp_python_free(pp->py);
		pp->py = NULL;
		pp->state = SP_PY_NOT;
		pp->gen = UINT64_MAX;
		pp->serial = 0;
	}
	ready_pids(m);
}

/* m->rpids from the readers (lock held). */
static void ready_pids(struct sp_pymerge *m)
{
	int n = 0;
	for (size_t i = 0; i < m->nprocs && n >= 0; i++)
		if (m->procs[i].py && m->procs[i].state == SP_PY_READY) {
			if (n == 64)
				n = -1;
			else
				__atomic_store_n(&m->rpids[n++], m->procs[i].pid, __ATOMIC_RELAXED);
		}
	__atomic_store_n(&m->nrpids, n, __ATOMIC_RELEASE);
}

/* The reader of process pid, when its Python frames can be read now. */
static struct sp_python *reader(struct sp_pymerge *m, int pid, uint64_t serial, const struct sp_maps *maps)
{
	struct pyproc *pp = proc_get(m, pid);
	uint64_t gen = sp_maps_generation(maps);
	struct sp_err err;
	err.msg[0] = 0;
	if (pp->opening)
		return NULL; /* another thread is deciding; this sample goes native */
	if (pp->serial != serial) { /* first sight, or a new image after exec */
		sp_python_free(pp->py);
		pp->py = NULL;
		pp->state = SP_PY_NOT;
		if (pp->serial && m->stop)
			sp_pystop_release(m->stop, pid); /* exec: its threads are let go */
		pp->serial = serial;
		pp->gen = UINT64_MAX;
		pp->announced = 0;
		pp->nonblocking = 0;
	}
	if (pp->state == SP_PY_NOT && pp->gen != gen) {
		pp->gen = gen;
		pp->opening = 1;
		/* Reading the interpreter's symbols takes long: the early reads
		 * go on meanwhile.  The handler and the stopper (exact mode) both
		 * come here: 'opening' keeps the other one out until the state is
		 * decided, so the process is opened, and a refusal said, once. */
		enum sp_python_state st;
		pthread_mutex_unlock(&m->lock);
		struct sp_python *py = sp_python_open(m->p, pid, maps, m->lines, &st, &err);
		pthread_mutex_lock(&m->lock);
		pp = proc_get(m, pid);
		pp->opening = 0;
		pp->py = py;
		pp->state = st;
		if (pp->py)
			sp_python_set_full_filenames(pp->py, m->full);
		if (pp->state == SP_PY_REFUSED)
			say_refused(m, pp, err.msg);
		else if (pp->py)
			m->st.processes++;
	}
	if (pp->state == SP_PY_WAITING) {
		pp->state = sp_python_check(pp->py, &err);
		if (pp->state == SP_PY_REFUSED) {
			say_refused(m, pp, err.msg);
			sp_python_free(pp->py);
			pp->py = NULL;
		}
	}
	if (pp->state != SP_PY_READY)
		return NULL;
	if (!pp->announced) {
		ready_pids(m);
		char buf[512];
		const char *what = m->mode == SP_PY_ONLY ? "only" : "merged";
		if (m->stop)
			snprintf(buf, sizeof buf, "Python %s: Python frames %s, exact (each sampled thread is "
				 "stopped while its stack is copied)", sp_python_version(pp->py), what);
		else if (m->why)
			snprintf(buf, sizeof buf, "Python %s: Python frames %s, non-blocking: %s",
				 sp_python_version(pp->py), what, m->why);
		else
			snprintf(buf, sizeof buf, "Python %s: Python frames %s", sp_python_version(pp->py), what);
		say(m, pid, buf);
		pp->announced = 1;
	}
	return pp->py;
}

static uint32_t early_slot(int tid, uint64_t time)
{
	return (uint32_t)(sp_mix64(time ^ (uint64_t)(uint32_t)tid << 40) & (EARLY_SLOTS - 1));
}

void sp_pymerge_early(struct sp_pymerge *m, int pid, int tid, uint64_t time, const struct sp_py_cstack *cs)
{
	if (m->mode == SP_PY_OFF)
		return;
	int nr = __atomic_load_n(&m->nrpids, __ATOMIC_ACQUIRE), known = nr < 0;
	for (int k = 0; k < nr && !known; k++)
		known = __atomic_load_n(&m->rpids[k], __ATOMIC_RELAXED) == pid;
	if (!known)
		return;
	/* The drainer must not wait long: while it waits, the kernel's ring
	 * fills and records are lost.  Busy for longer: read when handled. */
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += 4000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	/* Waited in vain a moment ago: only a try, so that a burst of
	 * samples does not hold up the drainer once per sample. */
	uint64_t t0 = sp_mono_ns();
	int got = t0 < m->busy_until ? pthread_mutex_trylock(&m->lock) == 0
				     : pthread_mutex_timedlock(&m->lock, &until) == 0;
	if (!got) {
		m->busy_until = sp_mono_ns() + 4000000; /* only the drainer uses it */
		__atomic_add_fetch(&m->st.early_busy, 1, __ATOMIC_RELAXED);
		return;
	}
	int found;
	uint32_t i = sp_u64map_get(&m->procidx, (uint64_t)(uint32_t)pid, &found);
	if (!found || !i || m->procs[i - 1].state != SP_PY_READY || !m->procs[i - 1].py) {
		pthread_mutex_unlock(&m->lock);
		return; /* not known as a Python process yet: read when handled */
	}
	if (!m->pre) {
		m->pre = sp_xcalloc(EARLY_SLOTS, sizeof *m->pre);
		m->praw = sp_xmalloc(EARLY_WORDS * sizeof *m->praw);
	}
	if (m->apos % EARLY_WORDS + 3 * EARLY_FRAMES > EARLY_WORDS)
		m->apos += EARLY_WORDS - m->apos % EARLY_WORDS; /* wrap: the arena's start */
	struct early *e = &m->pre[early_slot(tid, time)];
	e->time = time;
	e->tid = tid;
	e->off = m->apos;
	e->n = sp_python_grab(m->procs[i - 1].py, tid, cs, m->praw + m->apos % EARLY_WORDS, EARLY_FRAMES);
	if (e->n >= EARLY_FRAMES)
		e->n = -2; /* maybe deeper: read when handled */
	if (e->n > 0)
		m->apos += 3 * (uint64_t)e->n;
	uint64_t now = sp_mono_ns();
	if (now > time) {
		m->st.early++;
		m->st.early_ns += now - time;
		if (now - time > m->st.early_max_ns)
			m->st.early_max_ns = now - time;
	}
	pthread_mutex_unlock(&m->lock);
}

/* The early read of the sample of tid at time, NULL when none (lock held). */
static const struct early *early_of(struct sp_pymerge *m, int tid, uint64_t time)
{
	if (!m->pre)
		return NULL;
	const struct early *e = &m->pre[early_slot(tid, time)];
	if (e->time != time || e->tid != tid || m->apos - e->off > EARLY_WORDS - 3 * EARLY_FRAMES)
		return NULL;
	return e;
}

struct mout {
	uint32_t **out;
	int32_t **src;
	size_t *cap, n;
};

static void out_add(struct mout *o, uint32_t f, int32_t from)
{
	if (o->n == *o->cap) {
		*o->cap = *o->cap ? 2 * *o->cap : 256;
		*o->out = sp_xrealloc(*o->out, *o->cap * sizeof **o->out);
		if (o->src)
			*o->src = sp_xrealloc(*o->src, *o->cap * sizeof **o->src);
	}
	(*o->out)[o->n] = f;
	if (o->src)
		(*o->src)[o->n] = from;
	o->n++;
}

/* Python frames py[lo..hi) (innermost first) onto out, root first. */
static void add_group(struct mout *o, const uint32_t *py, int lo, int hi)
{
	for (int i = hi; i-- > lo;)
		out_add(o, py[i], -2 - i);
}

size_t sp_pymerge_frames(struct sp_profile *p, enum sp_pymode mode, const uint32_t *nat, size_t nn,
			 const uint32_t *py, const uint8_t *entry, int npy, int truncated, uint32_t **out,
			 int32_t **src, size_t *cap, int *disagree)
{
	struct mout o = { out, src, cap, 0 };
	uint32_t eval = sp_str_intern(p, "_PyEval_EvalFrameDefault", 24);
	/* Groups, innermost first: group g is py[gs[g] .. gs[g+1]). */
	int *gs = sp_xmalloc(((size_t)npy + 1) * sizeof *gs), ng = 0;
	gs[0] = 0;
	for (int i = 0; i < npy; i++)
		if (entry[i] || i == npy - 1)
			gs[++ng] = i + 1;
	*disagree = 0;
	if (mode == SP_PY_ONLY) {
		add_group(&o, py, 0, npy);
		free(gs);
		return o.n;
	}
	/* A native stack that does not start at a thread's entry was cut by
	 * the end of the stack copy (deep recursion of old versions): match
	 * from the leaf, as for one whose unwinding failed. */
	if (!truncated && nn) {
		const char *r = sp_str(p, sp_frame_get(p, nat[0])->name);
		truncated = strcmp(r, "_start") && strcmp(r, "clone3") && strcmp(r, "clone") && strcmp(r, "__clone") &&
			    strcmp(r, "start_thread") && strcmp(r, "__libc_start_main");
	}
	/* Eval frames of the native stack. */
	size_t ne = 0;
	for (size_t i = 0; i < nn; i++)
		ne += sp_frame_get(p, nat[i])->name == eval;
	*disagree = (int)ne != ng ? (truncated ? 2 : 1) : 0;
	if (!ne) {
		/* Nowhere to put them (no eval-loop symbol): Python on top of
		 * the native root. */
		add_group(&o, py, 0, npy);
		for (size_t i = 0; i < nn; i++)
			out_add(&o, nat[i], (int32_t)i);
		free(gs);
		return o.n;
	}
	/* The k-th eval frame from the root takes groups [rlo, rhi) counted
	 * from the root (group g from the innermost is r = ng-1-g). */
	if (truncated && ng > (int)ne) {
		/* The copy did not reach the outer eval frames: their groups
		 * come first, at the root. */
		for (int r = 0; r < ng - (int)ne; r++)
			add_group(&o, py, gs[ng - 1 - r], gs[ng - r]);
	}
	size_t k = 0;
	int skip = 0;
	for (size_t i = 0; i < nn; i++) {
		const struct sp_frame *f = sp_frame_get(p, nat[i]);
		if (skip && f->kind == SP_KIND_INLINED)
			continue; /* inlined into the eval frame, at its address */
		skip = 0;
		if (f->name != eval) {
			out_add(&o, nat[i], (int32_t)i);
			continue;
		}
		int rlo, rhi;
		if (truncated && ng >= (int)ne) {
			rlo = ng - (int)ne + (int)k;
			rhi = rlo + 1;
		} else {
			/* From the root; inner groups without an eval frame
			 * (read after the thread went deeper) are dropped rather
			 * than put under native frames the sample does not have. */
			rlo = (int)k;
			rhi = (int)k + 1;
		}
		k++;
		if (rlo >= ng) {
			out_add(&o, nat[i], (int32_t)i); /* no group for it: stays native */
			continue;
		}
		if (rhi > ng)
			rhi = ng;
		for (int r = rlo; r < rhi; r++)
			add_group(&o, py, gs[ng - 1 - r], gs[ng - r]);
		skip = 1;
	}
	free(gs);
	return o.n;
}

static uint32_t merge(struct sp_pymerge *m, uint32_t node, int npy, int truncated, int exact);
static int stopped_locked(struct sp_pymerge *m, int pid, int tid, uint64_t time, struct sp_pystop_copy *out,
			  enum sp_pystop_rc rc, const struct sp_err *e);

int sp_pymerge_stop(struct sp_pymerge *m, int pid, uint64_t serial, const struct sp_maps *maps, int tid,
		    uint64_t time, struct sp_pystop_copy *out)
{
	if (!m->stop || m->mode == SP_PY_OFF || !maps)
		return 0;
	pthread_mutex_lock(&m->lock);
	struct sp_python *py = reader(m, pid, serial, maps);
	int nonblocking = proc_get(m, pid)->nonblocking;
	pthread_mutex_unlock(&m->lock);
	if (!py || nonblocking)
		return 0;
	struct sp_err err;
	err.msg[0] = 0;
	enum sp_pystop_rc rc = sp_pystop_stop(m->stop, pid, tid, out, &err);
	pthread_mutex_lock(&m->lock);
	int r = stopped_locked(m, pid, tid, time, out, rc, &err);
	pthread_mutex_unlock(&m->lock);
	return r;
}

/* sp_pymerge_stop once sp_pystop_stop said rc (lock held). */
static int stopped_locked(struct sp_pymerge *m, int pid, int tid, uint64_t time, struct sp_pystop_copy *out,
			  enum sp_pystop_rc rc, const struct sp_err *e)
{
	struct sp_err err = *e;
	struct pyproc *pp = proc_get(m, pid);
	struct sp_python *py = pp->py;
	if (rc == SP_PYSTOP_DENIED) {
		pp->nonblocking = 1;
		char buf[sizeof err.msg + 128];
		snprintf(buf, sizeof buf, "no exact Python stacks (%s): its Python frames are read after each sample, "
			 "without stopping the thread (non-blocking)", err.msg);
		say(m, pid, buf);
		return 0;
	}
	if (rc != SP_PYSTOP_OK) {
		m->st.moved++;
		return 0;
	}
	/* Stopped: the live frames are the copy's.  (Checking them against
	 * the frames taken early, at the sample, and merging the sample's own
	 * copy when the thread had moved to other functions, cost t6120's
	 * exact well-formedness under load: not done.) */
	if (!m->sraw)
		m->sraw = sp_xmalloc(3 * MAX_PY * sizeof *m->sraw);
	int n = sp_python_grab(py, tid, NULL, m->sraw, MAX_PY);
	m->npy = n > 0 ? sp_python_frames(py, m->sraw, n, m->pyfr, m->entry, MAX_PY) : n;
	m->multi = sp_python_threads(py) != 1;
	sp_pystop_cont(m->stop);
	m->st.exact++;
	if (out->stop_ns > time)
		m->st.delay_ns += out->stop_ns - time;
	return 1;
}

uint32_t sp_pymerge_stopped(struct sp_pymerge *m, uint32_t node, int truncated)
{
	return merge(m, node, m->npy, truncated, 1);
}

/* A thread asleep in the interpreter's take_gil waits for the GIL: its
 * merged stack m->out[0..n) ends in "[gil wait]" instead of take_gil and
 * the frames under it (only where the interpreter has symbols).  Returns
 * the new length. */
static size_t gil_wait(struct sp_pymerge *m, uint32_t nn, size_t n)
{
	uint32_t j = 0;
	while (j < nn && sp_frame_get(m->p, m->nat[j])->name != m->take_gil)
		j++;
	if (j == nn)
		return n;
	/* Waiting: asleep (a condition wait or the kernel under take_gil), or
	 * on the CPU in take_gil while other Python threads may hold the GIL.
	 * Not the only thread re-taking the free GIL after a C call that
	 * released it (zlib.compress). */
	uint32_t w = j + 1;
	for (; w < nn; w++) {
		const struct sp_frame *f = sp_frame_get(m->p, m->nat[w]);
		const char *nm = sp_str(m->p, f->name);
		if (f->kind == SP_KIND_KERNEL || strstr(nm, "cond_wait") || strstr(nm, "cond_timedwait") ||
		    strstr(nm, "futex"))
			break;
	}
	if (w == nn && !m->multi)
		return n; /* on the CPU, and no other thread can hold the GIL */
	if (m->mode != SP_PY_ONLY) {
		size_t k = 0;
		while (k < n && m->out[k] != m->nat[j])
			k++;
		n = k;
	}
	if (n == m->capout) {
		m->capout = m->capout ? 2 * m->capout : 256;
		m->out = sp_xrealloc(m->out, m->capout * sizeof *m->out);
	}
	m->out[n++] = m->gil_wait;
	return n;
}

static uint32_t thread_name_locked(struct sp_pymerge *m, int pid, uint64_t serial, const struct sp_maps *maps, int tid)
{
	if (m->mode == SP_PY_OFF || !maps)
		return 0;
	struct sp_python *py = reader(m, pid, serial, maps);
	return py ? sp_python_thread_name(py, tid, 0) : 0;
}

/* Is range [lo, hi) held by one of the registers of the sample's
 * innermost eval frame (as the unwinder recovered them), or of the
 * sample, or (unless regs_only) by a word of the stack copy below the end
 * of that eval frame?  1, 2, 3 for where; 0 when not. */
static int held(const struct sp_py_cstack *cs, uint64_t lo, uint64_t hi, int regs_only)
{
	if (cs->eval_regs)
		for (int r = 0; r < SP_UNWIND_KEPT - 1; r++)
			if (cs->eval_regs[r] >= lo && cs->eval_regs[r] < hi)
				return 1;
	if (regs_only)
		return 0;
	if (cs->regs)
		for (int r = 0; r < SP_NREGS; r++)
			if (cs->regs[r] >= lo && cs->regs[r] < hi)
				return 2;
	for (uint64_t at = (cs->sp + 7) & ~7ull; at + 8 <= cs->eval_end; at += 8) {
		uint64_t w;
		memcpy(&w, cs->data + (at - cs->sp), 8);
		if (w >= lo && w < hi)
			return 3;
	}
	return 0;
}

/* Non-blocking: the Python frames in m->pyfr (npy, read after the sample)
 * against what the sample itself saw.  The eval loop that ran the
 * sample's innermost Python frame holds that frame's anchor (python.h)
 * in a register or in the stack the sample copied: the innermost frame
 * whose anchor is there is the one the sample saw.  Frames read inside it
 * (the thread went on into them) are dropped; when no frame's anchor is
 * there (it returned and ran another function), the groups from the
 * sample's innermost eval frame inwards (ne: the sample's eval frames) are
 * replaced by "[python frame changed]", so the sample's native frames are
 * never put under a function they did not run in.  Returns the new npy. */
static int check_seen(struct sp_pymerge *m, struct sp_python *py, const struct sp_py_cstack *cs, int npy,
		      uint32_t ne)
{
	if (!cs || !cs->data || cs->eval_end <= cs->sp || cs->eval_end > cs->sp + cs->len) {
		m->st.unchecked++;
		return npy;
	}
	int known = 0, regs_only = 0;
	for (int i = 0; i < npy; i++) {
		uint64_t lo, hi;
		int kind = sp_python_anchor(py, i, &lo, &hi);
		if (!kind)
			continue;
		known = 1;
		regs_only = kind == 2;
		int where = held(cs, lo, hi, kind == 2);
		if (!where)
			continue;
		if (i == 0) {
			m->st.seen++;
			return npy;
		}
		m->st.trimmed++;
		memmove(m->pyfr, m->pyfr + i, (size_t)(npy - i) * sizeof *m->pyfr);
		memmove(m->entry, m->entry + i, (size_t)(npy - i) * sizeof *m->entry);
		return npy - i;
	}
	if (!known) {
		m->st.unchecked++;
		return npy;
	}
	m->st.changed++;
	/* The marker stands for the groups from the one at the sample's
	 * innermost eval frame (the ne-th from the root) inwards; the outer
	 * ones stay, one per outer eval frame the sample has.  At least the
	 * innermost group goes. */
	int ng = 0, keep = ne > 0 ? (int)ne - 1 : 0, cut = npy;
	for (int i = 0; i < npy; i++)
		ng += m->entry[i] || i == npy - 1;
	int drop = ng - keep < 1 ? 1 : ng - keep; /* groups dropped, innermost first */
	for (int i = 0, g = 0; i < npy; i++)
		if ((m->entry[i] || i == npy - 1) && ++g == drop) {
			cut = i + 1;
			break;
		}
	m->pyfr[cut - 1] = m->changed;
	m->entry[cut - 1] = 1;
	memmove(m->pyfr, m->pyfr + cut - 1, (size_t)(npy - cut + 1) * sizeof *m->pyfr);
	memmove(m->entry, m->entry + cut - 1, (size_t)(npy - cut + 1) * sizeof *m->entry);
	npy = npy - cut + 1;
	/* The sample's own innermost frame, when its next instruction is
	 * in a code object read before: under the marker (its callers are
	 * the ones not known). */
	uint32_t own = 0;
	for (int r = 0; !own && cs->eval_regs && r < SP_UNWIND_KEPT - 1; r++)
		own = cs->eval_regs[r] ? sp_python_frame_at(py, cs->eval_regs[r]) : 0;
	for (int r = 0; !own && cs->regs && r < SP_NREGS; r++)
		own = cs->regs[r] ? sp_python_frame_at(py, cs->regs[r]) : 0;
	for (uint64_t at = (cs->sp + 7) & ~7ull; !own && !regs_only && at + 8 <= cs->eval_end; at += 8) {
		uint64_t w;
		memcpy(&w, cs->data + (at - cs->sp), 8);
		own = w ? sp_python_frame_at(py, w) : 0;
	}
	if (own && npy < MAX_PY) {
		memmove(m->pyfr + 1, m->pyfr, (size_t)npy * sizeof *m->pyfr);
		memmove(m->entry + 1, m->entry, (size_t)npy * sizeof *m->entry);
		m->pyfr[0] = own;
		m->entry[0] = 0;
		npy++;
		m->st.recovered++;
	}
	return npy;
}

static uint32_t sample_locked(struct sp_pymerge *m, int pid, uint64_t serial, const struct sp_maps *maps, int tid,
			   const struct sp_py_cstack *cs, uint32_t node, int truncated)
{
	if (m->mode == SP_PY_OFF || !maps)
		return node;
	struct sp_python *py = reader(m, pid, serial, maps);
	if (!py)
		return node;
	const struct early *e = cs && cs->time ? early_of(m, tid, cs->time) : NULL;
	int npy;
	if (e && e->n > 0) {
		npy = sp_python_frames(py, m->praw + e->off % EARLY_WORDS, e->n, m->pyfr, m->entry, MAX_PY);
		m->st.from_early++;
	} else {
		npy = sp_python_stack(py, tid, cs, m->pyfr, m->entry, MAX_PY);
	}
	m->multi = sp_python_threads(py) != 1;
	uint32_t ne = 0;
	for (uint32_t n = node; n; n = sp_node_get(m->p, n)->parent)
		ne += sp_frame_get(m->p, sp_node_get(m->p, n)->frame)->name == m->eval;
	if (npy > 0 && cs && cs->data && !truncated) {
		/* The innermost frame from the stack copy is right only when the
		 * eval call whose C local it was still runs: when the groups do
		 * not match the eval frames, read the live frame instead. */
		uint32_t ng = 0;
		for (int i = 0; i < npy; i++)
			ng += m->entry[i];
		if (ng != ne) {
			int again = sp_python_stack(py, tid, NULL, m->pyfr, m->entry, MAX_PY);
			if (again >= 0)
				npy = again;
		}
	}
	if (npy > 0)
		npy = check_seen(m, py, cs, npy, ne);
	else if (ne) {
		m->st.unmerged++; /* its eval frames stay as they are */
		m->st.unmerged_failed += (uint64_t)(npy < 0);
	}
	m->npy = npy;
	return UINT32_MAX;
}

/* The merged node of native stack node and the Python frames in m->pyfr,
 * m->entry (npy of them, -1: unreadable); exact: read while stopped. */
static uint32_t merge(struct sp_pymerge *m, uint32_t node, int npy, int truncated, int exact)
{
	if (npy < 0) {
		m->st.failed++;
		return node;
	}
	if (npy == 0)
		return node; /* not running Python code */
	m->st.samples++;
	for (int i = 0; i < npy; i++)
		m->key[i] = m->pyfr[i] << 1 | m->entry[i];
	uint64_t h = sp_hash_seed(m->key, (size_t)npy * sizeof *m->key,
				  sp_mix64((uint64_t)node << 2 | (uint64_t)m->multi << 1 | (uint64_t)(truncated != 0)));
	uint64_t key = h == UINT64_MAX ? h - 1 : h;
	for (;;) {
		int found;
		uint32_t idx = sp_u64map_get(&m->mergeidx, key, &found);
		if (!found)
			break;
		const struct merged *e = &m->ents[idx - 1];
		if (e->hash == h && e->native == node && e->npy == (uint32_t)npy && (e->truncated & 1) == (truncated != 0) &&
		    !(e->truncated & 8) == !m->multi &&
		    !memcmp(m->arena + e->off, m->key, (size_t)npy * sizeof *m->key)) {
			if (e->truncated & 2) { /* counts disagreed when it was merged */
				m->st.disagree++;
				m->st.exact_disagree += (uint64_t)(exact && !(e->truncated & 4));
			}
			return e->node;
		}
		key = sp_mix64(key + 1);
		if (key == UINT64_MAX)
			key--;
	}
	int disagree;
	uint32_t nn = sp_node_frames(m->p, node, &m->nat, &m->capnat);
	size_t n = sp_pymerge_frames(m->p, m->mode, m->nat, nn, m->pyfr, m->entry, npy, truncated, &m->out, NULL,
				     &m->capout, &disagree);
	m->st.disagree += (uint64_t)(disagree != 0);
	m->st.exact_disagree += (uint64_t)(disagree == 1 && exact);
	n = gil_wait(m, nn, n);
	uint32_t out = 0;
	for (size_t i = 0; i < n; i++)
		out = sp_node_intern(m->p, out, m->out[i]);
	if (m->nents == m->capents) {
		m->capents = m->capents ? 2 * m->capents : 1024;
		m->ents = sp_xrealloc(m->ents, m->capents * sizeof *m->ents);
	}
	while (m->narena + (size_t)npy > m->caparena) {
		m->caparena = m->caparena ? 2 * m->caparena : 8192;
		m->arena = sp_xrealloc(m->arena, m->caparena * sizeof *m->arena);
	}
	memcpy(m->arena + m->narena, m->key, (size_t)npy * sizeof *m->key);
	m->ents[m->nents++] = (struct merged){ h, node, (uint32_t)npy, (uint32_t)m->narena, out,
					      (truncated != 0) | (disagree ? 2 : 0) | (disagree == 2 ? 4 : 0) |
						      (m->multi ? 8 : 0) };
	m->narena += (size_t)npy;
	int found;
	*sp_u64map_slot(&m->mergeidx, key, &found) = (uint32_t)m->nents;
	return out;
}

/* The entry points: the early reads run in another thread. */
const struct sp_pymerge_stats *sp_pymerge_stats(struct sp_pymerge *m)
{
	pthread_mutex_lock(&m->lock);
	const struct sp_pymerge_stats *r = stats_locked(m);
	pthread_mutex_unlock(&m->lock);
	return r;
}

const char *sp_pymerge_message(struct sp_pymerge *m)
{
	pthread_mutex_lock(&m->lock);
	const char *r = message_locked(m);
	pthread_mutex_unlock(&m->lock);
	return r;
}

void sp_pymerge_exit(struct sp_pymerge *m, int pid)
{
	pthread_mutex_lock(&m->lock);
	exit_locked(m, pid);
	pthread_mutex_unlock(&m->lock);
}

uint32_t sp_pymerge_thread_name(struct sp_pymerge *m, int pid, uint64_t serial, const struct sp_maps *maps, int tid)
{
	pthread_mutex_lock(&m->lock);
	uint32_t r = thread_name_locked(m, pid, serial, maps, tid);
	pthread_mutex_unlock(&m->lock);
	return r;
}

uint32_t sp_pymerge_sample(struct sp_pymerge *m, int pid, uint64_t serial, const struct sp_maps *maps, int tid,
			   const struct sp_py_cstack *cs, uint32_t node, int truncated)
{
	pthread_mutex_lock(&m->lock);
	uint32_t r = sample_locked(m, pid, serial, maps, tid, cs, node, truncated);
	pthread_mutex_unlock(&m->lock);
	/* merged outside the lock: the profile is this thread's alone */
	return r == UINT32_MAX ? merge(m, node, m->npy, truncated, 0) : r;
}
