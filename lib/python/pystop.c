/* pystop.c — stop, copy, resume one seized thread per sample (pystop.h). */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pystop.h"
#include "snapshot.h"

#define WAIT_NS 100000000ull /* a stop not seen after this is left for sp_pystop_poll */
#define PAGE 4096u
#define MAX_IOV 17

struct pthr {
	int tid, pid;   /* tid 0: a free entry */
	int statfd;     /* /proc/PID/task/TID/stat, read again for each sample */
	int late;       /* interrupted, its stop not seen yet */
	int group;      /* stopped in a group stop: resume with PTRACE_LISTEN */
	int sig;        /* a signal to pass on when it is resumed */
	uint64_t t_int; /* when it was interrupted */
};

struct exited {
	int pid, status;
};

struct sp_pystop {
	size_t stack_max;
	uint8_t *stack;
	struct pthr *t;
	size_t n, cap;
	struct sp_u64map idx; /* tid -> index + 1 (0: removed) */
	struct sp_u64map denied; /* pid -> 1: ptrace refused; 2: a thread was seized */
	struct exited *ex;
	size_t nex, capex;
	struct pthr *cur; /* stopped now */
	struct sp_pystop_stats st;
};

struct sp_pystop *sp_pystop_new(size_t stack_max)
{
	struct sp_pystop *ps = sp_xcalloc(1, sizeof *ps);
	ps->stack_max = stack_max ? stack_max : 16384;
	if (ps->stack_max > (MAX_IOV - 1) * PAGE)
		ps->stack_max = (MAX_IOV - 1) * PAGE;
	ps->stack = sp_xmalloc(ps->stack_max);
	sp_u64map_init(&ps->idx);
	sp_u64map_init(&ps->denied);
	return ps;
}

void sp_pystop_free(struct sp_pystop *ps)
{
	if (!ps)
		return;
	sp_pystop_detach_all(ps);
	for (size_t i = 0; i < ps->n; i++)
		if (ps->t[i].tid && ps->t[i].statfd >= 0)
			close(ps->t[i].statfd);
	free(ps->t);
	free(ps->ex);
	free(ps->stack);
	sp_u64map_release(&ps->idx);
	sp_u64map_release(&ps->denied);
	free(ps);
}

const struct sp_pystop_stats *sp_pystop_stats(const struct sp_pystop *ps) { return &ps->st; }

static struct pthr *find(struct sp_pystop *ps, int tid)
{
	int found;
	uint32_t i = sp_u64map_get(&ps->idx, (uint64_t)(uint32_t)tid, &found);
	return found && i ? &ps->t[i - 1] : NULL;
}

static void forget(struct sp_pystop *ps, struct pthr *t)
{
	int found;
	*sp_u64map_slot(&ps->idx, (uint64_t)(uint32_t)t->tid, &found) = 0;
	if (t->statfd >= 0)
		close(t->statfd);
	if (ps->cur == t)
		ps->cur = NULL;
	memset(t, 0, sizeof *t);
	t->statfd = -1;
}

static void keep_status(struct sp_pystop *ps, int pid, int status)
{
	if (ps->nex == ps->capex) {
		ps->capex = ps->capex ? 2 * ps->capex : 8;
		ps->ex = sp_xrealloc(ps->ex, ps->capex * sizeof *ps->ex);
	}
	ps->ex[ps->nex++] = (struct exited){ pid, status };
}

static struct pthr *add(struct sp_pystop *ps, int pid, int tid)
{
	struct pthr *t = NULL;
	for (size_t i = 0; i < ps->n && !t; i++)
		if (!ps->t[i].tid)
			t = &ps->t[i];
	if (!t) {
		if (ps->n == ps->cap) {
			/* cur points into the array: it is NULL between samples */
			ps->cap = ps->cap ? 2 * ps->cap : 16;
			ps->t = sp_xrealloc(ps->t, ps->cap * sizeof *ps->t);
		}
		t = &ps->t[ps->n++];
	}
	memset(t, 0, sizeof *t);
	t->tid = tid;
	t->pid = pid;
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task/%d/stat", pid, tid);
	t->statfd = open(path, O_RDONLY | O_CLOEXEC);
	int found;
	*sp_u64map_slot(&ps->idx, (uint64_t)(uint32_t)tid, &found) = (uint32_t)(t - ps->t) + 1;
	return t;
}

static int is_stop_signal(int sig) { return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU; }

/* A report of tid that is not the stop a caller waits for: pass signals
 * on, keep group stops, reap exits. */
static void handle(struct sp_pystop *ps, int tid, int st)
{
	struct pthr *t = find(ps, tid);
	if (WIFEXITED(st) || WIFSIGNALED(st)) {
		keep_status(ps, tid, st);
		if (t)
			forget(ps, t);
		return;
	}
	if (!WIFSTOPPED(st))
		return;
	int event = st >> 16, sig = WSTOPSIG(st);
	if (t)
		t->late = 0;
	if (event == PTRACE_EVENT_STOP && is_stop_signal(sig)) {
		ptrace(PTRACE_LISTEN, tid, 0, 0); /* job control stopped it: it stays so */
	} else if (event == 0) {
		ps->st.signals++;
		ptrace(PTRACE_CONT, tid, 0, (void *)(uintptr_t)sig);
	} else {
		ptrace(PTRACE_CONT, tid, 0, 0); /* our interrupt, seen late */
	}
}

void sp_pystop_poll(struct sp_pystop *ps)
{
	int st;
	pid_t w;
	while ((w = waitpid(-1, &st, __WALL | WNOHANG)) > 0)
		handle(ps, (int)w, st);
}

int sp_pystop_waitpid(struct sp_pystop *ps, int pid, int *status, int options)
{
	for (;;) {
		for (size_t i = 0; i < ps->nex; i++)
			if (ps->ex[i].pid == pid) {
				*status = ps->ex[i].status;
				ps->ex[i] = ps->ex[--ps->nex];
				return pid;
			}
		int st;
		pid_t w = waitpid(pid, &st, options | __WALL);
		if (w <= 0)
			return (int)w;
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			struct pthr *t = find(ps, pid);
			if (t)
				forget(ps, t);
			*status = st;
			return pid;
		}
		handle(ps, pid, st); /* a ptrace stop: not the caller's business */
	}
}

/* The state letter of the thread now, '?' when unknown. */
static char thread_state(struct pthr *t)
{
	char buf[512];
	if (t->statfd < 0)
		return '?';
	ssize_t n = pread(t->statfd, buf, sizeof buf - 1, 0);
	if (n <= 0)
		return n == 0 || errno == ESRCH ? 'X' : '?';
	buf[n] = 0;
	char *p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] ? p[2] : '?';
}

/* Wait for the stop of interrupted thread t: 0 stopped (by our interrupt
 * or a group stop), 1 gone, 2 not in time. */
static int wait_stop(struct sp_pystop *ps, struct pthr *t, uint64_t deadline)
{
	for (unsigned spin = 0;; spin++) {
		int st;
		pid_t w = waitpid(t->tid, &st, __WALL | WNOHANG);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return 1; /* not our tracee any more */
		if (w == 0) {
			if (sp_mono_ns() > deadline)
				return 2;
			if (spin < 64) {
				sched_yield(); /* the stop is usually a few microseconds away */
			} else {
				struct timespec d = { 0, 20000 };
				nanosleep(&d, NULL);
			}
			continue;
		}
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			keep_status(ps, t->tid, st);
			return 1;
		}
		if (!WIFSTOPPED(st))
			continue;
		int event = st >> 16, sig = WSTOPSIG(st);
		t->late = 0;
		if (event == PTRACE_EVENT_STOP) {
			t->group = is_stop_signal(sig);
			return 0;
		}
		/* A signal on its way to the thread: it goes on now, and our
		 * interrupt, still pending, stops the thread right after. */
		ps->st.signals++;
		ptrace(PTRACE_CONT, t->tid, 0, (void *)(uintptr_t)(event ? 0 : sig));
	}
}

static void copy_regs(const struct user_regs_struct *r, struct sp_pystop_copy *out)
{
	uint64_t *d = out->regs;
	d[0] = r->rax, d[1] = r->rdx, d[2] = r->rcx, d[3] = r->rbx;
	d[4] = r->rsi, d[5] = r->rdi, d[6] = r->rbp, d[7] = r->rsp;
	d[8] = r->r8, d[9] = r->r9, d[10] = r->r10, d[11] = r->r11;
	d[12] = r->r12, d[13] = r->r13, d[14] = r->r14, d[15] = r->r15;
	d[16] = r->rip;
	out->in_syscall = (long)r->orig_rax >= 0;
}

/* The stack from sp, page by page: the read stops at the first unmapped
 * page (the stack's end) instead of failing as a whole. */
static size_t copy_stack(struct sp_pystop *ps, int tid, uint64_t sp)
{
	struct iovec l = { ps->stack, ps->stack_max }, r[MAX_IOV];
	size_t nr = 0, want = ps->stack_max;
	uint64_t a = sp;
	while (want && nr < MAX_IOV) {
		size_t k = PAGE - (size_t)(a & (PAGE - 1));
		if (k > want)
			k = want;
		r[nr].iov_base = (void *)(uintptr_t)a;
		r[nr].iov_len = k;
		nr++;
		a += k;
		want -= k;
	}
	ssize_t got = process_vm_readv(tid, &l, 1, r, nr, 0);
	return got > 0 ? (size_t)got : 0;
}

enum sp_pystop_rc sp_pystop_stop(struct sp_pystop *ps, int pid, int tid, struct sp_pystop_copy *out,
				 struct sp_err *err)
{
	int found;
	struct pthr *t = find(ps, tid);
	if (!t) {
		uint32_t *seen = sp_u64map_slot(&ps->denied, (uint64_t)(uint32_t)pid, &found);
		if (*seen == 1)
			return SP_PYSTOP_DENIED;
		if (ptrace(PTRACE_SEIZE, tid, 0, 0) < 0) {
			int e = errno;
			/* A process we could trace refuses us once it exits (its
			 * memory is gone): that is not a denial. */
			if (e == ESRCH || *seen == 2) {
				ps->st.gone++;
				return SP_PYSTOP_GONE;
			}
			sp_snap_denied(pid, e, err);
			*seen = 1;
			return SP_PYSTOP_DENIED;
		}
		*seen = 2;
		t = add(ps, pid, tid);
		ps->st.seized++;
	}
	if (!t->late) {
		/* A cpu-clock sample stands for CPU time: a thread that has left
		 * the CPU since is not charged the stack it sleeps in now. */
		char s = thread_state(t);
		if (s == 'X' || s == 'Z') {
			ps->st.gone++;
			return SP_PYSTOP_GONE;
		}
		if (s != 'R') {
			ps->st.asleep++;
			return SP_PYSTOP_ASLEEP;
		}
		t->t_int = sp_mono_ns();
		if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) < 0) {
			forget(ps, t);
			ps->st.gone++;
			return SP_PYSTOP_GONE;
		}
	}
	int w = wait_stop(ps, t, sp_mono_ns() + WAIT_NS);
	if (w == 1) {
		forget(ps, t);
		ps->st.gone++;
		return SP_PYSTOP_GONE;
	}
	if (w == 2) {
		t->late = 1;
		ps->st.late++;
		return SP_PYSTOP_LATE;
	}
	struct user_regs_struct r;
	ps->cur = t;
	if (ptrace(PTRACE_GETREGS, tid, 0, &r) < 0) {
		sp_pystop_cont(ps);
		return SP_PYSTOP_GONE;
	}
	copy_regs(&r, out);
	out->len = copy_stack(ps, tid, r.rsp);
	out->stack = ps->stack;
	out->stop_ns = sp_mono_ns();
	return SP_PYSTOP_OK;
}

void sp_pystop_cont(struct sp_pystop *ps)
{
	struct pthr *t = ps->cur;
	if (!t)
		return;
	ps->cur = NULL;
	if (ptrace(t->group ? PTRACE_LISTEN : PTRACE_CONT, t->tid, 0, 0) < 0 && errno == ESRCH) {
		forget(ps, t);
		return;
	}
	t->group = 0;
	uint64_t d = sp_mono_ns() - t->t_int;
	ps->st.stops++;
	ps->st.stopped_ns += d;
	if (d > ps->st.max_ns)
		ps->st.max_ns = d;
}

/* Detach the threads of pid (-1: all): interrupt them all, then detach
 * each at its stop.  A thread that does not stop within the deadline is
 * left seized (the kernel detaches it when we exit). */
static void detach(struct sp_pystop *ps, int pid)
{
	sp_pystop_cont(ps);
	for (size_t i = 0; i < ps->n; i++) {
		struct pthr *t = &ps->t[i];
		if (t->tid && (pid < 0 || t->pid == pid) && !t->late &&
		    ptrace(PTRACE_INTERRUPT, t->tid, 0, 0) < 0)
			forget(ps, t);
	}
	uint64_t deadline = sp_mono_ns() + 1000000000ull;
	for (size_t i = 0; i < ps->n; i++) {
		struct pthr *t = &ps->t[i];
		if (!t->tid || (pid >= 0 && t->pid != pid))
			continue;
		int w = wait_stop(ps, t, deadline);
		if (w == 0)
			ptrace(PTRACE_DETACH, t->tid, 0, 0); /* a group stop stays a stop */
		if (w != 2)
			forget(ps, t);
		else
			t->late = 1;
	}
}

void sp_pystop_release(struct sp_pystop *ps, int pid)
{
	detach(ps, pid);
	int found;
	*sp_u64map_slot(&ps->denied, (uint64_t)(uint32_t)pid, &found) = 0; /* a new image: ask again */
	sp_pystop_poll(ps);
}

void sp_pystop_detach_all(struct sp_pystop *ps)
{
	detach(ps, -1);
	sp_pystop_poll(ps);
}
