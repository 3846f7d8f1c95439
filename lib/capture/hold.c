/* hold.c — the holder thread: ptrace stops new threads and children until
 * they are armed (hold.h). */
#include "hold.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { T_RUNNING = 1, T_WAITING, T_ARMED, T_DETACHING };

struct tracee {
	int tid, state;
};

struct status {
	int pid, status;
};

struct sp_hold {
	void (*on_new)(void *ctx, int pid, int tid);
	void *ctx;
	pthread_t thread;
	int started;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	/* A request to the holder (only it may make ptrace calls): attach to
	 * req_pid, or stop; req_done and req_rc/req_err answer it. */
	int req_pid, req_stop, req_done, req_rc;
	struct sp_err req_err;
	int stopped;
	struct tracee *t; /* the holder's own */
	size_t n, cap;
	struct status *st; /* under lock */
	size_t nst, capst;
	unsigned long held;
};

static void nothing(int sig) { (void)sig; }

static struct tracee *find(struct sp_hold *h, int tid)
{
	for (size_t i = 0; i < h->n; i++)
		if (h->t[i].tid == tid)
			return &h->t[i];
	return NULL;
}

static struct tracee *add(struct sp_hold *h, int tid, int state)
{
	struct tracee *t = find(h, tid);
	if (t) {
		t->state = state;
		return t;
	}
	if (h->n == h->cap) {
		h->cap = h->cap ? 2 * h->cap : 32;
		h->t = sp_xrealloc(h->t, h->cap * sizeof *h->t);
	}
	t = &h->t[h->n++];
	t->tid = tid;
	t->state = state;
	return t;
}

static void drop(struct sp_hold *h, int tid)
{
	struct tracee *t = find(h, tid);
	if (t)
		*t = h->t[--h->n];
}

/* The process of thread tid (its Tgid), or tid when /proc does not say. */
static int tgid_of(int tid)
{
	char path[64], line[128];
	snprintf(path, sizeof path, "/proc/%d/status", tid);
	FILE *f = fopen(path, "re");
	int pid = tid;
	if (!f)
		return tid;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "Tgid: %d", &pid) == 1)
			break;
	fclose(f);
	return pid;
}

static const long OPTIONS = PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK;

static int do_attach(struct sp_hold *h, int pid, struct sp_err *err)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", pid);
	int total = 0;
	for (int round = 0; round < 20; round++) {
		DIR *d = opendir(path);
		if (!d)
			return total ? total : sp_err_set(err, "no process %d", pid);
		int added = 0;
		struct dirent *de;
		while ((de = readdir(d))) {
			if (de->d_name[0] < '0' || de->d_name[0] > '9')
				continue;
			int tid = atoi(de->d_name);
			if (find(h, tid))
				continue;
			if (ptrace(PTRACE_SEIZE, tid, 0, (void *)OPTIONS) < 0) {
				if (errno == ESRCH)
					continue;
				if (errno == EPERM && total) /* one of ours, created meanwhile: it reports */
					continue;
				int e = errno;
				closedir(d);
				return sp_err_set(err, "cannot hold the new threads of process %d: ptrace: %s%s", pid,
						  strerror(e), e == EPERM ? " (another tracer, a debugger or strace, is "
						  "attached; or ptrace is not allowed: kernel.yama.ptrace_scope)" : "");
			}
			add(h, tid, T_RUNNING);
			added++;
		}
		closedir(d);
		total += added;
		if (!added)
			break;
	}
	return total;
}

static void keep_status(struct sp_hold *h, int pid, int status)
{
	pthread_mutex_lock(&h->lock);
	if (h->nst == h->capst) {
		h->capst = h->capst ? 2 * h->capst : 8;
		h->st = sp_xrealloc(h->st, h->capst * sizeof *h->st);
	}
	h->st[h->nst++] = (struct status){ pid, status };
	pthread_mutex_unlock(&h->lock);
}

static int is_stop_signal(int sig) { return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU; }

/* One wait status of tracee tid.  detaching: let go of whatever stops. */
static void handle(struct sp_hold *h, int tid, int st, int detaching)
{
	if (WIFEXITED(st) || WIFSIGNALED(st)) {
		drop(h, tid);
		keep_status(h, tid, st);
		return;
	}
	if (!WIFSTOPPED(st))
		return;
	int sig = WSTOPSIG(st), event = st >> 16;
	struct tracee *t = find(h, tid);
	if (event == PTRACE_EVENT_CLONE || event == PTRACE_EVENT_FORK || event == PTRACE_EVENT_VFORK) {
		unsigned long msg = 0;
		ptrace(PTRACE_GETEVENTMSG, tid, 0, &msg);
		int child = (int)msg;
		if (child > 0) {
			/* The child is stopped before its first instruction (its
			 * own stop may come before or after this one). */
			h->on_new(h->ctx, event == PTRACE_EVENT_CLONE ? tgid_of(child) : child, child);
			h->held++;
			struct tracee *c = find(h, child);
			if (c && c->state == T_WAITING) {
				if (detaching)
					ptrace(PTRACE_DETACH, child, 0, 0), drop(h, child);
				else
					ptrace(PTRACE_CONT, child, 0, 0), c->state = T_RUNNING;
			} else {
				add(h, child, T_ARMED);
			}
		}
		if (detaching)
			ptrace(PTRACE_DETACH, tid, 0, 0), drop(h, tid);
		else
			ptrace(PTRACE_CONT, tid, 0, 0);
		return;
	}
	if (event == PTRACE_EVENT_STOP) {
		if (is_stop_signal(sig) && t && t->state == T_RUNNING && !detaching) {
			ptrace(PTRACE_LISTEN, tid, 0, 0); /* job control stopped it: it stays so */
			return;
		}
		if (!t) {
			/* A new thread or child, before its parent's event. */
			if (detaching)
				ptrace(PTRACE_DETACH, tid, 0, 0);
			else
				add(h, tid, T_WAITING);
			return;
		}
		if (detaching) {
			ptrace(PTRACE_DETACH, tid, 0, 0);
			drop(h, tid);
			return;
		}
		t->state = T_RUNNING;
		ptrace(PTRACE_CONT, tid, 0, 0);
		return;
	}
	/* A signal on its way to the thread: deliver it. */
	if (detaching) {
		ptrace(PTRACE_DETACH, tid, 0, (void *)(uintptr_t)sig);
		drop(h, tid);
	} else {
		ptrace(PTRACE_CONT, tid, 0, (void *)(uintptr_t)(event ? 0 : sig));
	}
}

static void detach_all(struct sp_hold *h)
{
	for (size_t i = 0; i < h->n; i++)
		if (h->t[i].state == T_RUNNING && ptrace(PTRACE_INTERRUPT, h->t[i].tid, 0, 0) == 0)
			h->t[i].state = T_DETACHING;
	for (size_t i = 0; i < h->n;) {
		if (h->t[i].state == T_WAITING) {
			ptrace(PTRACE_DETACH, h->t[i].tid, 0, 0);
			drop(h, h->t[i].tid);
		} else {
			i++;
		}
	}
	struct timespec nap = { 0, 1000000 };
	double t0 = sp_mono_s();
	while (h->n) {
		int st;
		pid_t w = waitpid(-1, &st, __WALL | __WNOTHREAD | WNOHANG);
		if (w > 0) {
			handle(h, w, st, 1);
			continue;
		}
		if (w < 0 && errno == ECHILD)
			break;
		if (sp_mono_s() - t0 > 3)
			break; /* a thread that never stops (D state): the kernel detaches at our exit */
		nanosleep(&nap, NULL);
	}
	h->n = 0;
}

static void *holder_main(void *arg)
{
	struct sp_hold *h = arg;
	for (;;) {
		pthread_mutex_lock(&h->lock);
		if (h->req_pid) {
			struct sp_err e;
			memset(&e, 0, sizeof e);
			h->req_rc = do_attach(h, h->req_pid, &e);
			h->req_err = e;
			h->req_pid = 0;
			h->req_done = 1;
			pthread_cond_broadcast(&h->cond);
		}
		int stop = h->req_stop;
		pthread_mutex_unlock(&h->lock);
		if (stop)
			break;
		int st;
		pid_t w = waitpid(-1, &st, __WALL | __WNOTHREAD);
		if (w > 0) {
			handle(h, w, st, 0);
		} else if (errno == ECHILD) {
			/* Nothing traced yet (or any more): wait for a request. */
			pthread_mutex_lock(&h->lock);
			if (!h->req_pid && !h->req_stop) {
				struct timespec until;
				clock_gettime(CLOCK_REALTIME, &until);
				until.tv_nsec += 20000000;
				if (until.tv_nsec >= 1000000000) {
					until.tv_sec++;
					until.tv_nsec -= 1000000000;
				}
				pthread_cond_timedwait(&h->cond, &h->lock, &until);
			}
			pthread_mutex_unlock(&h->lock);
		}
	}
	detach_all(h);
	pthread_mutex_lock(&h->lock);
	h->stopped = 1;
	h->req_done = 1;
	pthread_cond_broadcast(&h->cond);
	pthread_mutex_unlock(&h->lock);
	return NULL;
}

struct sp_hold *sp_hold_new(void (*on_new)(void *ctx, int pid, int tid), void *ctx)
{
	struct sp_hold *h = sp_xcalloc(1, sizeof *h);
	h->on_new = on_new;
	h->ctx = ctx;
	pthread_mutex_init(&h->lock, NULL);
	pthread_cond_init(&h->cond, NULL);
	/* The holder's waitpid is woken by a SIGCHLD sent to it: that needs
	 * a handler (without SA_RESTART), not the default of ignoring it. */
	struct sigaction sa;
	if (sigaction(SIGCHLD, NULL, &sa) == 0 && (sa.sa_handler == SIG_DFL || sa.sa_handler == SIG_IGN) &&
	    !(sa.sa_flags & SA_SIGINFO)) {
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = nothing;
		sigaction(SIGCHLD, &sa, NULL);
	}
	/* Signals are the main thread's, but SIGCHLD. */
	sigset_t all, old;
	sigfillset(&all);
	sigdelset(&all, SIGCHLD);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (pthread_create(&h->thread, NULL, holder_main, h) == 0)
		h->started = 1;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!h->started) {
		free(h);
		return NULL;
	}
	return h;
}

/* Ask the holder (blocked in waitpid: a SIGCHLD wakes it, sent again
 * until it answers) and wait for its answer. */
static void ask(struct sp_hold *h)
{
	h->req_done = 0;
	while (!h->req_done) {
		pthread_kill(h->thread, SIGCHLD);
		pthread_cond_signal(&h->cond);
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += 5000000;
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&h->cond, &h->lock, &until);
	}
}

int sp_hold_attach(struct sp_hold *h, int pid, struct sp_err *err)
{
	pthread_mutex_lock(&h->lock);
	if (h->stopped) {
		pthread_mutex_unlock(&h->lock);
		return sp_err_set(err, "the holder of new threads has ended");
	}
	h->req_pid = pid;
	ask(h);
	int rc = h->req_rc;
	if (rc < 0)
		*err = h->req_err;
	pthread_mutex_unlock(&h->lock);
	return rc;
}

void sp_hold_stop(struct sp_hold *h)
{
	if (!h || !h->started)
		return;
	pthread_mutex_lock(&h->lock);
	if (!h->stopped) {
		h->req_stop = 1;
		ask(h);
	}
	pthread_mutex_unlock(&h->lock);
	pthread_join(h->thread, NULL);
	h->started = 0;
}

void sp_hold_free(struct sp_hold *h)
{
	if (!h)
		return;
	sp_hold_stop(h);
	pthread_mutex_destroy(&h->lock);
	pthread_cond_destroy(&h->cond);
	free(h->t);
	free(h->st);
	free(h);
}

int sp_hold_status(struct sp_hold *h, int pid, int *status)
{
	int found = 0;
	pthread_mutex_lock(&h->lock);
	for (size_t i = 0; i < h->nst && !found; i++)
		if (h->st[i].pid == pid) {
			*status = h->st[i].status;
			found = 1;
		}
	pthread_mutex_unlock(&h->lock);
	return found;
}

int sp_hold_stopped(const struct sp_hold *h) { return !h->started; }

unsigned long sp_hold_count(const struct sp_hold *h) { return h ? h->held : 0; }
