/* snapshot.c — stop, copy, detach (see snapshot.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "procmaps.h"
#include "snapshot.h"

/* ---- the seized threads, visible to the signal handler ---- */

static int *g_tids;                 /* seized tids */
static volatile sig_atomic_t g_n;   /* how many of g_tids are seized */
static const int g_sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL };
#define NSIGS (sizeof g_sigs / sizeof g_sigs[0])
static struct sigaction g_old[NSIGS];

static volatile sig_atomic_t g_stopped_by; /* SIGINT/TERM/HUP arrived */

static void on_fatal(int sig)
{
	/* Async-signal-safe: raw syscalls only.  A thread not yet in its
	 * ptrace stop refuses the detach; the kernel detaches it when we
	 * exit, and with PTRACE_SEIZE it was never sent a SIGSTOP. */
	for (sig_atomic_t i = 0; i < g_n; i++)
		syscall(SYS_ptrace, PTRACE_DETACH, g_tids[i], 0, 0);
	g_n = 0;
	if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) {
		/* A request to stop: the threads are let go now, the snapshot
		 * is abandoned, and the caller ends its output cleanly.  The
		 * handler was reset: a second one ends us at once. */
		g_stopped_by = sig;
		return;
	}
	/* A crash: SA_RESETHAND restored the default action, SA_NODEFER
	 * lets it land. */
	raise(sig);
}

static void guard_on(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_fatal;
	sa.sa_flags = SA_RESETHAND | SA_NODEFER;
	sigfillset(&sa.sa_mask);
	for (size_t i = 0; i < NSIGS; i++)
		sigaction(g_sigs[i], &sa, &g_old[i]);
}

static void guard_off(void)
{
	for (size_t i = 0; i < NSIGS; i++)
		sigaction(g_sigs[i], &g_old[i], NULL);
}

/* ---- /proc ---- */

static int read_small(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	size_t got = fread(buf, 1, n - 1, f);
	fclose(f);
	buf[got] = 0;
	return (int)got;
}

static void thread_info(int pid, struct sp_snap_thread *t)
{
	char path[96], buf[512];
	snprintf(path, sizeof path, "/proc/%d/task/%d/comm", pid, t->tid);
	if (read_small(path, buf, sizeof buf) > 0) {
		buf[strcspn(buf, "\n")] = 0;
		buf[sizeof t->name - 1] = 0;
		memcpy(t->name, buf, strlen(buf) + 1);
	}
	t->state = '?';
	snprintf(path, sizeof path, "/proc/%d/task/%d/stat", pid, t->tid);
	if (read_small(path, buf, sizeof buf) > 0) {
		char *p = strrchr(buf, ')');
		if (p && p[1] == ' ' && p[2])
			t->state = p[2];
	}
	/* Where a blocked thread sleeps in the kernel (readable by root):
	 * "[<0>] hrtimer_nanosleep+0x74/0xf0" lines, innermost first. */
	t->kstack[0] = 0;
	if (t->state == 'R' || t->state == 'Z' || t->state == 'X')
		return;
	snprintf(path, sizeof path, "/proc/%d/task/%d/stack", pid, t->tid);
	char ks[2048];
	if (read_small(path, ks, sizeof ks) <= 0)
		return;
	size_t n = 0;
	for (char *line = ks, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		char *f = strchr(line, ']');
		f = f ? f + 1 : line;
		while (*f == ' ')
			f++;
		f[strcspn(f, "+ ")] = 0;
		if (!*f || !strncmp(f, "do_syscall_64", 13) || !strncmp(f, "entry_SYSCALL", 13))
			continue;
		int w = snprintf(t->kstack + n, sizeof t->kstack - n, "%s%s", n ? " < " : "", f);
		if (w < 0 || (size_t)w >= sizeof t->kstack - n) {
			t->kstack[n] = 0;
			break;
		}
		n += (size_t)w;
	}
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return x < y ? -1 : x > y;
}

/* The tids of pid, sorted.  Returns the count, -1 when the process is gone. */
static long list_tasks(int pid, int **out, size_t *cap)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", pid);
	DIR *d = opendir(path);
	if (!d)
		return -1;
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		char *end;
		long tid = strtol(e->d_name, &end, 10);
		if (*end || tid <= 0)
			continue;
		if (n == *cap) {
			*cap = *cap ? 2 * *cap : 64;
			*out = sp_xrealloc(*out, *cap * sizeof **out);
		}
		(*out)[n++] = (int)tid;
	}
	closedir(d);
	sp_sort(*out, n, sizeof **out, cmp_int);
	return (long)n;
}

void sp_snap_denied(int pid, int e, struct sp_err *err)
{
	char buf[4096], path[64];
	struct sp_proc_info pi;
	if (sp_proc_info(pid, &pi) == 0 && pi.kthread) {
		sp_err_set(err, "%d (%s) is a kernel thread: it has no user space to stop and unwind (its kernel "
				"stack is in /proc/%d/stack, for root)", pid, pi.comm, pid);
		return;
	}
	snprintf(path, sizeof path, "/proc/%d/status", pid);
	if (read_small(path, buf, sizeof buf) > 0) {
		char *tp = strstr(buf, "TracerPid:");
		int tracer = tp ? atoi(tp + 10) : 0;
		if (tracer) {
			char comm[64] = "";
			snprintf(path, sizeof path, "/proc/%d/comm", tracer);
			if (read_small(path, comm, sizeof comm) > 0)
				comm[strcspn(comm, "\n")] = 0;
			sp_err_set(err, "cannot attach to process %d: it is already being traced by process %d (%s); "
					"a process has one tracer at a time", pid, tracer, comm[0] ? comm : "?");
			return;
		}
	}
	if (e != EPERM) {
		sp_err_set(err, "cannot attach to process %d: %s", pid, strerror(e));
		return;
	}
	int scope = -1;
	if (read_small("/proc/sys/kernel/yama/ptrace_scope", buf, sizeof buf) > 0)
		scope = atoi(buf);
	const char *why = scope == 1   ? "kernel.yama.ptrace_scope is 1: only a process's ancestors may trace it "
					 "unless you have CAP_SYS_PTRACE (run as root, or `sysctl kernel.yama.ptrace_scope=0`)"
			  : scope == 2 ? "kernel.yama.ptrace_scope is 2: only processes with CAP_SYS_PTRACE may trace "
					 "(run as root)"
			  : scope == 3 ? "kernel.yama.ptrace_scope is 3: ptrace is disabled until the next boot"
				       : "it belongs to another user or is not dumpable; run as its user, or as root "
					 "(CAP_SYS_PTRACE)";
	sp_err_set(err, "cannot attach to process %d: the kernel does not allow tracing it (%s)", pid, why);
}

int sp_proc_info(int pid, struct sp_proc_info *out)
{
	memset(out, 0, sizeof *out);
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	char *l = strchr(buf, '('), *r = strrchr(buf, ')');
	if (!l || !r || r < l || r[1] != ' ')
		return -1;
	size_t len = (size_t)(r - l - 1);
	if (len >= sizeof out->comm)
		len = sizeof out->comm - 1;
	memcpy(out->comm, l + 1, len);
	out->state = r[2];
	/* After the state: ppid pgrp session tty_nr tpgid flags minflt
	 * cminflt majflt cmajflt utime stime. */
	unsigned long long f[11];
	if (sscanf(r + 4, "%llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &f[0], &f[1], &f[2], &f[3],
		   &f[4], &f[5], &f[6], &f[7], &f[8], &f[9], &f[10]) == 11) {
		out->kthread = (f[5] & 0x00200000) != 0; /* PF_KTHREAD */
		long hz = sysconf(_SC_CLK_TCK);
		out->cpu_ns = (f[9] + f[10]) * (1000000000ull / (unsigned long long)(hz > 0 ? hz : 100));
		out->sys_ns = f[10] * (1000000000ull / (unsigned long long)(hz > 0 ? hz : 100));
	}
	return 0;
}

int sp_snap_live_tid(int pid)
{
	struct sp_snap_thread t;
	memset(&t, 0, sizeof t);
	t.tid = pid;
	thread_info(pid, &t);
	if (t.state != 'Z' && t.state != 'X')
		return pid;
	int *tids = NULL, live = pid;
	size_t cap = 0;
	long n = list_tasks(pid, &tids, &cap);
	for (long i = 0; i < n && live == pid; i++) {
		t.tid = tids[i];
		thread_info(pid, &t);
		if (t.state != 'Z' && t.state != 'X')
			live = t.tid;
	}
	free(tids);
	return live;
}

/* ---- the snapshot ---- */

static void dwarf_regs(const struct user_regs_struct *r, uint64_t *d)
{
	d[0] = r->rax, d[1] = r->rdx, d[2] = r->rcx, d[3] = r->rbx;
	d[4] = r->rsi, d[5] = r->rdi, d[6] = r->rbp, d[7] = r->rsp;
	d[8] = r->r8, d[9] = r->r9, d[10] = r->r10, d[11] = r->r11;
	d[12] = r->r12, d[13] = r->r13, d[14] = r->r14, d[15] = r->r15;
	d[16] = r->rip;
}

static size_t vm_read(int pid, uint64_t addr, void *buf, size_t n)
{
	struct iovec l = { buf, n }, r = { (void *)(uintptr_t)addr, n };
	ssize_t got = process_vm_readv(pid, &l, 1, &r, 1, 0);
	return got > 0 ? (size_t)got : 0;
}

/* Threads seized but not yet stopped when the deadline passed (in
 * uninterruptible sleep, say): their stop comes later; they are detached
 * then, at the next snapshot or at sp_snap_release (and by the kernel if
 * we exit first). */
static int *pend;
static size_t npend, cappend;

static void reap_pending(void)
{
	size_t k = 0;
	for (size_t i = 0; i < npend; i++) {
		int st;
		pid_t w = waitpid(pend[i], &st, __WALL | WNOHANG);
		if (w == pend[i] && WIFSTOPPED(st)) {
			int sig = (st >> 16) != PTRACE_EVENT_STOP && WSTOPSIG(st) != SIGTRAP ? WSTOPSIG(st) : 0;
			ptrace(PTRACE_DETACH, pend[i], 0, (void *)(uintptr_t)sig);
		} else if (w == 0) {
			pend[k++] = pend[i]; /* still not stopped */
		}
	}
	npend = k;
}

void sp_snap_release(void)
{
	for (int round = 0; round < 50 && npend; round++) {
		reap_pending();
		if (npend) {
			struct timespec d = { 0, 10000000 };
			nanosleep(&d, NULL);
		}
	}
	free(pend);
	pend = NULL;
	npend = cappend = 0;
}

struct seized {
	int tid;
	int late;      /* seized, but no stop before the deadline */
	int stopped;   /* in a ptrace stop we waited for */
	int sig;       /* a signal its stop intercepted: given back at detach */
	uint64_t t_int, t_det;
};

static void (*g_hook)(void *ctx, struct sp_snap *s);
static void *g_hook_ctx;

void sp_snap_set_hook(void (*fn)(void *ctx, struct sp_snap *s), void *ctx)
{
	g_hook = fn;
	g_hook_ctx = ctx;
}

/* What sp_snap_take's phases share: the threads seen before the stop
 * and those seized. */
struct take {
	int pid;
	int *tids; /* list_tasks' buffer */
	size_t captids;
	struct sp_snap_thread *pre; /* names and states before the stop */
	long npre;
	struct seized *sz;
	size_t nsz, capsz;
	size_t capg; /* room in g_tids */
};

/* Whether tid was a zombie before the stop: it has no stack to show and
 * never stops. */
static int pre_zombie(const struct take *tk, int tid)
{
	for (long j = 0; j < tk->npre; j++)
		if (tk->pre[j].tid == tid && (tk->pre[j].state == 'Z' || tk->pre[j].state == 'X'))
			return 1;
	return 0;
}

/* Seized tid into the handler's list and sz[], and interrupted. */
static void add_seized(struct take *tk, int tid)
{
	if (tk->nsz == tk->capsz) {
		tk->capsz = tk->capsz ? 2 * tk->capsz : 64;
		tk->sz = sp_xrealloc(tk->sz, tk->capsz * sizeof *tk->sz);
	}
	if (tk->nsz == tk->capg) {
		/* Publish a bigger list: block the guarded signals while the
		 * pointer changes. */
		sigset_t all, old;
		sigfillset(&all);
		sigprocmask(SIG_BLOCK, &all, &old);
		int *ng = sp_xmalloc(2 * tk->capg * sizeof *ng);
		memcpy(ng, g_tids, tk->nsz * sizeof *ng);
		free(g_tids);
		g_tids = ng;
		tk->capg *= 2;
		sigprocmask(SIG_SETMASK, &old, NULL);
	}
	g_tids[tk->nsz] = tid;
	g_n = (sig_atomic_t)(tk->nsz + 1);
	tk->sz[tk->nsz] = (struct seized){ tid, 0, 0, 0, sp_mono_ns(), 0 };
	tk->nsz++;
	ptrace(PTRACE_INTERRUPT, tid, 0, 0);
}

/* Seize and interrupt every thread; threads created meanwhile show up
 * in the next listing (a stopped thread creates none). */
static int seize_all(struct take *tk, struct sp_err *err)
{
	for (int round = 0; round < 10; round++) {
		long nt = list_tasks(tk->pid, &tk->tids, &tk->captids);
		if (nt < 0)
			return sp_err_set(err, "process %d exited", tk->pid);
		size_t added = 0;
		for (long i = 0; i < nt; i++) {
			int tid = tk->tids[i], known = 0;
			for (size_t j = 0; j < tk->nsz && !known; j++)
				known = tk->sz[j].tid == tid;
			if (known || pre_zombie(tk, tid))
				continue;
			if (ptrace(PTRACE_SEIZE, tid, 0, 0) < 0) {
				int e = errno;
				if (e == ESRCH)
					continue; /* exited meanwhile */
				if (!tk->nsz) {
					sp_snap_denied(tk->pid, e, err);
					return -1;
				}
				continue;
			}
			add_seized(tk, tid);
			added++;
		}
		if (!added && round)
			break;
	}
	return 0;
}

/* Wait for thread sz's stop until dl; a thread gone meanwhile is counted
 * in s->gone. */
static void wait_stop(struct seized *sz, uint64_t dl, struct sp_snap *s)
{
	int st;
	for (;;) {
		pid_t w = waitpid(sz->tid, &st, __WALL | WNOHANG);
		if (w < 0 && errno == EINTR)
			continue;
		if (w == 0) {
			if (sp_mono_ns() > dl) {
				sz->late = 1;
				return;
			}
			struct timespec d = { 0, 20000 };
			nanosleep(&d, NULL);
			continue;
		}
		if (w != sz->tid || WIFEXITED(st) || WIFSIGNALED(st)) {
			s->gone++;
			return;
		}
		if (WIFSTOPPED(st)) {
			int event = st >> 16;
			if (event != PTRACE_EVENT_STOP && WSTOPSIG(st) != SIGTRAP) {
				/* A signal-delivery stop came first: keep the signal
				 * for the detach; registers are readable here. */
				sz->sig = WSTOPSIG(st);
			}
			sz->stopped = 1;
			return;
		}
	}
}

/* Wait for every stop, with a deadline: a thread that never stops (a
 * zombie leader whose process runs on) must not hold the others.
 * Threads in uninterruptible sleep (disk wait, vfork) stop only when
 * they leave it: the others first, then those, briefly. */
static void wait_all(struct take *tk, struct sp_snap *s)
{
	uint64_t deadline = sp_mono_ns() + 2000000000ull;
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < tk->nsz; i++) {
			int dwait = 0;
			for (long j = 0; j < tk->npre; j++)
				if (tk->pre[j].tid == tk->sz[i].tid)
					dwait = tk->pre[j].state == 'D';
			if (dwait != pass)
				continue;
			uint64_t dl = dwait ? sp_mono_ns() + 20000000ull : deadline;
			if (dl > deadline)
				dl = deadline;
			wait_stop(&tk->sz[i], dl, s);
		}
}

/* What a stopped thread's system call was given: the file its
 * descriptor names, a path, a timeout, the lock word of a futex; read
 * now, while the thread cannot change them. */
static void copy_call_args(int pid, struct sp_snap_thread *t)
{
	if (sp_syscall_takes_fd(t->nr) && t->args[0] < 1u << 30) {
		char fdpath[64];
		snprintf(fdpath, sizeof fdpath, "/proc/%d/fd/%d", pid, (int)t->args[0]);
		ssize_t got = readlink(fdpath, t->fd, sizeof t->fd - 1);
		t->fd[got > 0 ? got : 0] = 0;
	}
	const char *fmt = t->nr >= 0 ? sp_syscall_args(t->nr) : NULL;
	for (int a = 0; fmt && fmt[a] && a < 6; a++) {
		if (fmt[a] == 's' && t->args[a]) {
			/* Up to the end of its page first: the next may be unmapped. */
			uint64_t room = 4096 - (t->args[a] & 4095);
			size_t first = room < sizeof t->str - 1 ? (size_t)room : sizeof t->str - 1;
			size_t got = vm_read(t->tid, t->args[a], t->str, first);
			if (got == first && first < sizeof t->str - 1 && !memchr(t->str, 0, got))
				got += vm_read(t->tid, t->args[a] + first, t->str + first, sizeof t->str - 1 - first);
			t->str[got] = 0;
		} else if ((fmt[a] == 'T' || fmt[a] == 'V') && t->args[a]) {
			t->have_time = vm_read(t->tid, t->args[a], t->time, sizeof t->time) == sizeof t->time;
		}
	}
	if (t->nr == SYS_futex && t->args[0] >= 32) {
		size_t lo = vm_read(t->tid, t->args[0] - 32, t->lock, 32);
		size_t hi = vm_read(t->tid, t->args[0], t->lock + 32, 32);
		t->have_lock = (lo == 32 ? 1 : 0) | (hi == 32 ? 2 : 0);
	}
}

/* A stopped thread's registers, its stack (up to stack_max, within its
 * mapping) and its system call's arguments. */
static void copy_thread(int pid, const struct sp_maps *maps, size_t stack_max, struct sp_snap_thread *t)
{
	struct user_regs_struct r;
	if (ptrace(PTRACE_GETREGS, t->tid, 0, &r) < 0)
		return;
	t->have_regs = 1;
	dwarf_regs(&r, t->regs);
	if ((long)r.orig_rax >= 0) {
		t->nr = (long)r.orig_rax;
		t->args[0] = r.rdi, t->args[1] = r.rsi, t->args[2] = r.rdx;
		t->args[3] = r.r10, t->args[4] = r.r8, t->args[5] = r.r9;
	}
	uint64_t sp = r.rsp;
	const struct sp_map *m = sp_maps_find(maps, sp);
	size_t want = m ? (size_t)(m->end - sp) : 4096;
	if (want > stack_max)
		want = stack_max;
	t->stack = sp_xmalloc(want ? want : 1);
	t->stack_len = vm_read(t->tid, sp, t->stack, want);
	copy_call_args(pid, t);
}

/* Everything is stopped: copy each thread; a late one is listed without
 * registers or stack. */
static void copy_all(struct take *tk, const struct sp_maps *maps, size_t stack_max, struct sp_snap *s)
{
	s->t = sp_xcalloc(tk->nsz ? tk->nsz : 1, sizeof *s->t);
	for (size_t i = 0; i < tk->nsz; i++) {
		const struct seized *sz = &tk->sz[i];
		if (!sz->stopped && !sz->late)
			continue;
		struct sp_snap_thread *t = &s->t[s->n++];
		t->tid = sz->tid;
		t->nr = -1;
		if (sz->late)
			t->unstopped = 1;
		else
			copy_thread(tk->pid, maps, stack_max, t);
	}
}

/* Let every seized thread go (a late one is reaped later), and end the
 * signal guard. */
static void detach_all(struct take *tk)
{
	for (size_t i = 0; i < tk->nsz; i++) {
		struct seized *sz = &tk->sz[i];
		if (sz->late) {
			if (npend == cappend) {
				cappend = cappend ? 2 * cappend : 16;
				pend = sp_xrealloc(pend, cappend * sizeof *pend);
			}
			pend[npend++] = sz->tid;
		} else {
			ptrace(PTRACE_DETACH, sz->tid, 0, (void *)(uintptr_t)sz->sig);
		}
		sz->t_det = sp_mono_ns();
	}
	reap_pending();
	g_n = 0;
	guard_off();
	free(g_tids);
	g_tids = NULL;
}

/* Names and states as /proc showed them just before the stop (a thread
 * found later: as it shows now), how long each was stopped, the zombie
 * threads (not seized, listed without a stack); the main thread first,
 * then by tid (seized in tid order). */
static void complete(const struct take *tk, struct sp_snap *s)
{
	size_t npre = (size_t)tk->npre;
	for (size_t i = 0; i < s->n; i++) {
		struct sp_snap_thread *t = &s->t[i];
		size_t j = 0;
		while (j < npre && tk->pre[j].tid != t->tid)
			j++;
		if (j < npre) {
			memcpy(t->name, tk->pre[j].name, sizeof t->name);
			memcpy(t->kstack, tk->pre[j].kstack, sizeof t->kstack);
			t->state = tk->pre[j].state;
		} else {
			thread_info(tk->pid, t);
		}
		for (j = 0; j < tk->nsz; j++)
			if (tk->sz[j].tid == t->tid)
				t->stopped_ns = tk->sz[j].t_det - tk->sz[j].t_int;
	}
	for (size_t j = 0; j < npre; j++)
		if (tk->pre[j].state == 'Z' || tk->pre[j].state == 'X') {
			s->t = sp_xrealloc(s->t, (s->n + 1) * sizeof *s->t);
			s->t[s->n] = tk->pre[j];
			s->t[s->n].nr = -1;
			s->n++;
		}
	for (size_t i = 0; i < s->n; i++)
		if (s->t[i].tid == tk->pid && i) {
			struct sp_snap_thread m = s->t[i];
			memmove(s->t + 1, s->t, i * sizeof *s->t);
			s->t[0] = m;
		}
}

/* A stop signal arrived (the handler has let the threads go). */
static int interrupted(struct sp_snap *s, struct sp_err *err)
{
	s->interrupted = (int)g_stopped_by;
	return sp_err_set(err, "interrupted by signal %d", (int)g_stopped_by);
}

int sp_snap_take(int pid, size_t stack_max, struct sp_snap *s, struct sp_err *err)
{
	memset(s, 0, sizeof *s);
	s->pid = pid;
	reap_pending();
	char path[64];
	snprintf(path, sizeof path, "/proc/%d", pid);
	if (access(path, F_OK) < 0)
		return sp_err_set(err, "no process %d", pid);
	/* Before anything stops: the memory map (for the stack bounds), from
	 * a live thread (a zombie leader's /proc/PID/maps is empty). */
	struct sp_maps *maps = sp_maps_new();
	struct sp_err merr = { 0 };
	if (sp_maps_load(maps, sp_snap_live_tid(pid), 0, &merr) < 0) {
		sp_maps_free(maps);
		return sp_err_set(err, "cannot read the memory map of process %d: %s", pid, merr.msg);
	}
	struct take tk;
	memset(&tk, 0, sizeof tk);
	tk.pid = pid;
	int rc = 0;

	/* Names and states before anything stops (a stopped thread shows 't'). */
	tk.npre = list_tasks(pid, &tk.tids, &tk.captids);
	if (tk.npre < 0) {
		free(tk.tids);
		sp_maps_free(maps);
		return sp_err_set(err, "no process %d", pid);
	}
	tk.pre = sp_xcalloc((size_t)tk.npre + 1, sizeof *tk.pre);
	for (long i = 0; i < tk.npre; i++) {
		tk.pre[i].tid = tk.tids[i];
		thread_info(pid, &tk.pre[i]);
	}
	/* Room for the handler's list, grown before it is published. */
	tk.capg = 256;
	g_tids = sp_xmalloc(tk.capg * sizeof *g_tids);
	g_n = 0;
	g_stopped_by = 0;
	guard_on();
	uint64_t t0 = sp_mono_ns();
	rc = seize_all(&tk, err);
	if (!rc && g_stopped_by)
		rc = interrupted(s, err);
	if (!rc) {
		wait_all(&tk, s);
		s->time = sp_mono_ns();
		/* Test hook: hold the threads stopped, so tests can kill us in
		 * the window and check that the target runs on. */
		const char *pause_ms = getenv("SP_SNAPSHOT_TEST_PAUSE_MS");
		if (pause_ms && atol(pause_ms) > 0) {
			struct timespec d = { atol(pause_ms) / 1000, (atol(pause_ms) % 1000) * 1000000L };
			while (!g_stopped_by && nanosleep(&d, &d) < 0 && errno == EINTR)
				;
		}
		if (g_stopped_by)
			rc = interrupted(s, err);
	}
	if (!rc) {
		copy_all(&tk, maps, stack_max, s);
		if (g_hook && !g_stopped_by)
			g_hook(g_hook_ctx, s); /* every thread still stopped */
		if (g_stopped_by) /* the handler let the threads go in the middle of the copy */
			rc = interrupted(s, err);
	}
	detach_all(&tk);
	if (tk.nsz)
		s->window_ns = tk.sz[tk.nsz - 1].t_det - t0;
	if (rc == 0)
		complete(&tk, s);
	else
		sp_snap_free(s);
	free(tk.pre);
	free(tk.sz);
	free(tk.tids);
	sp_maps_free(maps);
	return rc;
}

void sp_snap_free(struct sp_snap *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->t[i].stack);
	free(s->t);
	s->t = NULL;
	s->n = 0;
}

/* ---- x86-64 system call names (the ones a thread is usually found in) ---- */

static const struct {
	short nr;
	const char *name;
} syscalls[] = {
	{ 0, "read" }, { 1, "write" }, { 2, "open" }, { 3, "close" }, { 7, "poll" }, { 9, "mmap" },
	{ 10, "mprotect" }, { 11, "munmap" }, { 12, "brk" }, { 16, "ioctl" }, { 17, "pread64" },
	{ 18, "pwrite64" }, { 19, "readv" }, { 20, "writev" }, { 23, "select" }, { 24, "sched_yield" },
	{ 28, "madvise" }, { 34, "pause" }, { 35, "nanosleep" }, { 40, "sendfile" }, { 42, "connect" },
	{ 43, "accept" }, { 44, "sendto" }, { 45, "recvfrom" }, { 46, "sendmsg" }, { 47, "recvmsg" },
	{ 56, "clone" }, { 59, "execve" }, { 60, "exit" }, { 61, "wait4" }, { 62, "kill" }, { 64, "semget" },
	{ 65, "semop" }, { 69, "msgsnd" }, { 70, "msgrcv" }, { 72, "fcntl" }, { 73, "flock" }, { 74, "fsync" },
	{ 75, "fdatasync" }, { 101, "ptrace" }, { 128, "rt_sigtimedwait" }, { 130, "rt_sigsuspend" },
	{ 202, "futex" }, { 208, "io_getevents" }, { 219, "restart_syscall" }, { 220, "semtimedop" }, { 230, "clock_nanosleep" },
	{ 231, "exit_group" }, { 232, "epoll_wait" }, { 247, "waitid" }, { 257, "openat" }, { 270, "pselect6" },
	{ 271, "ppoll" }, { 275, "splice" }, { 281, "epoll_pwait" }, { 288, "accept4" }, { 299, "recvmmsg" },
	{ 307, "sendmmsg" }, { 318, "getrandom" }, { 426, "io_uring_enter" }, { 441, "epoll_pwait2" },
	{ 449, "futex_waitv" },
};

const char *sp_syscall_name(long nr)
{
	for (size_t i = 0; i < sizeof syscalls / sizeof syscalls[0]; i++)
		if (syscalls[i].nr == nr)
			return syscalls[i].name;
	return NULL;
}

const char *sp_syscall_args(long nr)
{
	switch (nr) {
	case SYS_read: case SYS_write: return "fpu";
	case SYS_pread64: case SYS_pwrite64: return "fpuu";
	case SYS_readv: case SYS_writev: return "fpi";
	case SYS_open: return "som";
	case SYS_openat: return "dsom";
	case SYS_creat: return "sm";
	case SYS_close: case SYS_fsync: case SYS_fdatasync: return "f";
	case SYS_stat: case SYS_lstat: return "sp";
	case SYS_newfstatat: return "dspx";
	case SYS_statx: return "dsxxp";
	case SYS_unlink: case SYS_rmdir: case SYS_chdir: return "s";
	case SYS_unlinkat: return "dsx";
	case SYS_poll: return "pnt";
	case SYS_ppoll: return "pnTpu";
	case SYS_select: return "ipppV";
	case SYS_pselect6: return "ipppTp";
	case SYS_epoll_wait: return "fpit";
	case SYS_epoll_pwait: return "fpitpu";
#ifdef SYS_epoll_pwait2
	case SYS_epoll_pwait2: return "fpiTpu";
#endif
	case SYS_nanosleep: return "Tp";
	case SYS_clock_nanosleep: return "cxTp";
	case SYS_accept: return "fpp";
	case SYS_accept4: return "fppx";
	case SYS_connect: return "fpu";
	case SYS_recvfrom: return "fpuxpp";
	case SYS_sendto: return "fpuxpu";
	case SYS_recvmsg: case SYS_sendmsg: return "fpx";
	case SYS_recvmmsg: return "fpuxT";
	case SYS_sendfile: return "ffpu";
	case SYS_ioctl: return "fxp";
	case SYS_fcntl: return "fix";
	case SYS_flock: return "fx";
	case SYS_wait4: return "ipxp";
	case SYS_waitid: return "iipxp";
	case SYS_pause: case SYS_sched_yield: return "";
	case SYS_rt_sigsuspend: return "pu";
	case SYS_rt_sigtimedwait: return "ppTu";
	case SYS_msgrcv: return "ipuix";
	case SYS_semop: return "ipu";
	case SYS_semtimedop: return "ipuT";
	case SYS_getrandom: return "pux";
	case SYS_io_getevents: return "xiipT";
	default: return NULL;
	}
}

int sp_syscall_takes_fd(long nr)
{
	switch (nr) {
	case SYS_read: case SYS_write: case SYS_pread64: case SYS_pwrite64: case SYS_readv: case SYS_writev:
	case SYS_ioctl: case SYS_fcntl: case SYS_flock: case SYS_fsync: case SYS_fdatasync: case SYS_connect:
	case SYS_accept: case SYS_accept4: case SYS_sendto: case SYS_recvfrom: case SYS_sendmsg: case SYS_recvmsg:
	case SYS_recvmmsg: case SYS_sendmmsg: case SYS_epoll_wait: case SYS_epoll_pwait: case SYS_sendfile:
	case SYS_splice:
		return 1;
	default:
		return 0;
	}
}
