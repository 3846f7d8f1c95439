/* snapshot.h — where is every thread of a process right now: stop all its
 * threads at once with ptrace (PTRACE_SEIZE + PTRACE_INTERRUPT, so no
 * SIGSTOP is ever queued and the kernel resumes the target even if we are
 * killed), copy each thread's registers, the top of its stack and the
 * words around the futex it sleeps on, detach, and only then let the
 * caller unwind and symbolise the copies (unwind.h, symbols.h) at leisure.
 *
 * While threads are stopped, fatal and terminating signals to this process
 * detach them first (an async-signal-safe handler), then take their
 * default action.
 */
#ifndef SP_SNAPSHOT_H
#define SP_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

#include "unwind.h"
#include "util.h"

#define SP_SNAP_LOCKBYTES 64 /* copied around a futex address: [addr-32, addr+32) */

struct sp_snap_thread {
	int tid;
	char name[32];   /* /proc/PID/task/TID/comm */
	char state;      /* /proc/.../stat before the stop: R S D T t Z X I, '?' */
	char fd[128];    /* what the first argument's file descriptor is (pipe:[N],
			  * socket:[N], a path), for calls that take one; "" otherwise */
	char kstack[256];/* blocked threads: /proc/.../stack, "f1 < f2 < ..." innermost
			  * first, without the system call entry ("" unknown: root only) */
	long nr;         /* system call blocked in (while stopped), -1 none/running */
	uint64_t args[6];
	char str[256];   /* the path argument of a call that takes one (openat,
			  * stat...), read while stopped; "" none or unreadable */
	int have_time;   /* time[] holds the timespec/timeval argument */
	int64_t time[2]; /* seconds, nanoseconds (timeval: microseconds) */
	int restarted;   /* nr was restart_syscall: the call it resumes, from the stack */
	int unstopped;   /* would not stop in time (uninterruptible sleep): no stack */
	int have_regs;
	uint64_t regs[SP_NREGS];
	uint8_t *stack;  /* copy of [regs[SP], +stack_len) */
	size_t stack_len;
	int have_lock;   /* lock[] holds [args[0]-32, args[0]+32) of a futex call */
	uint8_t lock[SP_SNAP_LOCKBYTES];
	uint64_t stopped_ns; /* how long this thread was stopped */
};

struct sp_snap {
	int pid;
	struct sp_snap_thread *t; /* main thread first, then by tid */
	size_t n;
	uint64_t time;        /* CLOCK_MONOTONIC ns at the stop */
	uint64_t window_ns;   /* first interrupt to last detach */
	size_t gone;          /* threads that exited while being stopped */
	int interrupted;      /* SIGINT/TERM/HUP came during the stop: the signal */
};

/* Take one snapshot of process pid, copying at most stack_max bytes of
 * each stack.  Returns 0, or -1 with err set (one sentence, e.g. why
 * ptrace is not allowed).  Every thread seized is detached before this
 * returns, on every path.  SIGINT, SIGTERM or SIGHUP during the stop
 * detach at once and abandon the snapshot (-1, s->interrupted = the
 * signal); a second one, or a crash, ends the process after detaching. */
int sp_snap_take(int pid, size_t stack_max, struct sp_snap *s, struct sp_err *err);
void sp_snap_free(struct sp_snap *s);
/* fn (NULL: none) is called by sp_snap_take once the copies are made and
 * while every thread is still stopped, to read more of their state (the
 * Python frames); it must not block, and must not print. */
void sp_snap_set_hook(void (*fn)(void *ctx, struct sp_snap *s), void *ctx);
/* Detach threads whose stop came after their snapshot's deadline (waits
 * up to half a second for them).  Call before exiting. */
void sp_snap_release(void);
/* err = why the kernel refused us process pid (errno e): already traced,
 * kernel.yama.ptrace_scope, another user. */
void sp_snap_denied(int pid, int e, struct sp_err *err);

/* Non-zero when system call nr takes a file descriptor first. */
int sp_syscall_takes_fd(long nr);

/* The arguments of system call nr, one letter each (NULL when not in the
 * table: print six raw words):
 *   f file descriptor      d directory fd (AT_FDCWD)   s path (sp_snap_thread.str)
 *   p pointer               u unsigned number           i signed int
 *   x flags in hex          o open(2) flags             m mode, octal (with O_CREAT)
 *   n number of fds ("3 fds")   t timeout in ms ("timeout=-1")
 *   T struct timespec *     V struct timeval *  (sp_snap_thread.time)
 *   c clock id (CLOCK_MONOTONIC)
 * futex has its own printer (snapview.c). */
const char *sp_syscall_args(long nr);

/* A thread of pid that has not exited (pid itself when it has not): its
 * /proc maps and memory stand for the process's. */
int sp_snap_live_tid(int pid);

/* What /proc/PID/stat says of a process (or thread). */
struct sp_proc_info {
	char comm[32];
	char state;      /* R S D T t Z X I */
	int kthread;     /* a kernel thread (PF_KTHREAD): no user space */
	uint64_t cpu_ns; /* user + system CPU time so far */
	uint64_t sys_ns; /* of which system (kernel) time: a uprobe's traps */
};
/* Returns 0, or -1 when the process does not exist (any more). */
int sp_proc_info(int pid, struct sp_proc_info *out);

/* The name of x86-64 system call nr ("futex"), or NULL when not in the
 * table. */
const char *sp_syscall_name(long nr);

#endif
