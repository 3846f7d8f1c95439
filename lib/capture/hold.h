/* hold.h — hold every new thread and forked child of a target until the
 * caller has armed it (its uprobe events open), then let it run.
 *
 * A thread of pcollect (the holder) seizes each thread of the target with
 * ptrace (PTRACE_O_TRACECLONE, _TRACEFORK, _TRACEVFORK): the kernel stops a
 * thread or process the target creates before its first instruction and
 * tells the holder, which calls on_new for it and resumes it.  Signals the
 * target receives pass through the holder (re-injected at once); a job
 * control stop stays a stop.  At the end every thread is detached and runs
 * on as before.
 *
 * While the holder runs, the caller must not waitpid for the target: the
 * holder reaps a launched command it seized (sp_hold_status gives its
 * status), and a waitpid elsewhere would take the holder's stops.
 */
#ifndef SP_HOLD_H
#define SP_HOLD_H

#include "util.h"

struct sp_hold;

/* on_new(ctx, pid, tid): thread tid of process pid appeared (a new thread,
 * or a forked child whose pid == tid); it runs once on_new returns.  It is
 * called from the holder's thread. */
struct sp_hold *sp_hold_new(void (*on_new)(void *ctx, int pid, int tid), void *ctx);
/* Seize every thread of process pid (listing /proc/PID/task until nothing
 * is new); on_new is not called for them.  Returns the number seized, or
 * -1 with err set (ptrace refused: permission, or a tracer is attached). */
int sp_hold_attach(struct sp_hold *h, int pid, struct sp_err *err);
/* Detach from everything and end the holder; statuses stay readable. */
void sp_hold_stop(struct sp_hold *h);
void sp_hold_free(struct sp_hold *h); /* NULL ok; stops first */
int sp_hold_stopped(const struct sp_hold *h); /* sp_hold_stop was called */
/* A waitpid(pid, status, WNOHANG) for a process the holder may have
 * reaped: 1 and *status when it exited, 0 while it runs. */
int sp_hold_status(struct sp_hold *h, int pid, int *status);
/* Threads and processes held at their start so far. */
unsigned long sp_hold_count(const struct sp_hold *h);

#endif
