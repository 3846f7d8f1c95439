/* locks.h — what a blocked thread waits for, and who holds it (glibc 2.36,
 * x86-64).
 *
 * A thread of a snapshot (snapshot.h) stopped inside the futex system
 * call is classified by the innermost lock function on its symbolised
 * stack (these names are in .dynsym, so a stripped libc works too):
 *
 *   pthread_mutex_lock & co   mutex: the futex address is the mutex; the
 *                             owner tid is __data.__owner (+8), or the
 *                             lock word & FUTEX_TID_MASK for priority-
 *                             inheritance and robust mutexes
 *   pthread_rwlock_wrlock/rdlock   rwlock: the writer's tid is __cur_writer
 *                             (+24); readers are only counted
 *                             (__readers >> 3): which threads cannot be known
 *   pthread_join              the futex word is the joined thread's tid
 *   pthread_cond_*wait        condition variable: no owner
 *   sem_*wait                 semaphore: no owner
 *   __lll_lock_wait alone     a glibc internal lock (malloc, stdio): no owner
 *   anything else             a futex: the address and operation only
 *
 * An owner is only reported when it is a thread of the process; otherwise
 * the reason is given (released meanwhile, exited, process-shared).
 */
#ifndef SP_LOCKS_H
#define SP_LOCKS_H

#include <stddef.h>

#include "snapshot.h"

enum sp_lock_kind {
	SP_LOCK_NONE = 0,    /* not waiting in futex */
	SP_LOCK_MUTEX,
	SP_LOCK_PI_MUTEX,
	SP_LOCK_RWLOCK_READ, /* waits to read */
	SP_LOCK_RWLOCK_WRITE,
	SP_LOCK_JOIN,
	SP_LOCK_COND,
	SP_LOCK_SEM,
	SP_LOCK_INTERNAL,
	SP_LOCK_FUTEX,
};

struct sp_lock_wait {
	enum sp_lock_kind kind;
	uint64_t addr;      /* the lock object (mutex, rwlock) or the futex address */
	int owner;          /* tid of the holder (or of the thread joined), 0 = unknown */
	int owner_index;    /* its index in the snapshot, -1 = not a thread of it */
	unsigned readers;   /* rwlock held by readers: how many */
	char why[160];      /* when the owner is unknown: what is known */
};

/* Classify thread i of s, given its function names innermost first. */
void sp_lock_classify(const struct sp_snap *s, size_t i, const char *const *names, size_t n,
		      struct sp_lock_wait *w);

/* "mutex", "rwlock (waiting to read)", ... */
const char *sp_lock_kind_name(enum sp_lock_kind k);

/* Deadlocks: follow each thread's owner edge (w[i].owner_index) and mark
 * the threads on a cycle.  cycle[i] gets the cycle's number (1, 2, ...) or
 * 0.  Returns the number of cycles. */
int sp_lock_cycles(const struct sp_lock_wait *w, size_t n, int *cycle);

#endif
