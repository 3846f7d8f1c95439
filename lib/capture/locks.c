/* locks.c — lock classification and the wait-for graph (see locks.h). */
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>

#include "locks.h"

#define FUTEX_LOCK_PI_OP 6
#define FUTEX_LOCK_PI2_OP 13
#define TID_MASK 0x3fffffffu
#define OWNER_DIED 0x40000000u

static int has(const char *s, const char *a) { return strstr(s, a) != NULL; }

/* Which lock API the innermost matching frame belongs to. */
static enum sp_lock_kind family(const char *const *names, size_t n)
{
	int lll = 0;
	for (size_t i = 0; i < n; i++) {
		const char *s = names[i];
		if (!s)
			continue;
		if (has(s, "pthread_mutex_") && has(s, "lock") && !has(s, "unlock") && !has(s, "trylock"))
			return SP_LOCK_MUTEX;
		if (has(s, "pthread_rwlock_") && has(s, "rdlock") && !has(s, "try"))
			return SP_LOCK_RWLOCK_READ;
		if (has(s, "pthread_rwlock_") && has(s, "wrlock") && !has(s, "try"))
			return SP_LOCK_RWLOCK_WRITE;
		if (has(s, "pthread_") && has(s, "join"))
			return SP_LOCK_JOIN;
		if (has(s, "pthread_cond_") && has(s, "wait"))
			return SP_LOCK_COND;
		if ((has(s, "sem_wait") || has(s, "sem_timedwait") || has(s, "sem_clockwait")) ||
		    (has(s, "sem_") && has(s, "wait_slow")))
			return SP_LOCK_SEM;
		if (has(s, "__lll_lock_wait"))
			lll = 1;
	}
	return lll ? SP_LOCK_INTERNAL : SP_LOCK_FUTEX;
}

static uint32_t u32at(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

static int index_of(const struct sp_snap *s, int tid)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->t[i].tid == tid)
			return (int)i;
	return -1;
}

static void set_owner(const struct sp_snap *s, struct sp_lock_wait *w, int tid, const char *none)
{
	if (!tid) {
		snprintf(w->why, sizeof w->why, "%s", none);
		return;
	}
	w->owner_index = index_of(s, tid);
	if (w->owner_index >= 0) {
		w->owner = tid;
		return;
	}
	snprintf(w->why, sizeof w->why,
		 "its owner, tid %d, is not a thread of process %d (it exited while holding it, or the lock is "
		 "shared with another process)", tid, s->pid);
}

void sp_lock_classify(const struct sp_snap *s, size_t i, const char *const *names, size_t n,
		      struct sp_lock_wait *w)
{
	const struct sp_snap_thread *t = &s->t[i];
	memset(w, 0, sizeof *w);
	w->owner_index = -1;
	if (t->nr != SYS_futex || t->state == 'R')
		return;
	uint64_t a = t->args[0];
	unsigned op = (unsigned)t->args[1] & 0x7f;
	w->addr = a;
	w->kind = family(names, n);
	int lo = t->have_lock & 1, hi = (t->have_lock & 2) != 0;
	const uint8_t *at = t->lock + 32; /* the futex word */
	switch (w->kind) {
	case SP_LOCK_MUTEX: {
		if (op == FUTEX_LOCK_PI_OP || op == FUTEX_LOCK_PI2_OP)
			w->kind = SP_LOCK_PI_MUTEX;
		if (!hi) {
			snprintf(w->why, sizeof w->why, "the mutex could not be read");
			break;
		}
		uint32_t word = u32at(at), owner = u32at(at + 8), kind = u32at(at + 16);
		int robust = (kind & 16) != 0;
		if (w->kind == SP_LOCK_PI_MUTEX || robust) {
			if (word & OWNER_DIED) {
				snprintf(w->why, sizeof w->why, "its owner died holding it (robust mutex, FUTEX_OWNER_DIED)");
				break;
			}
			owner = word & TID_MASK;
		}
		set_owner(s, w, (int)owner, "the mutex shows no owner (released just now?)");
		break;
	}
	case SP_LOCK_RWLOCK_READ:
	case SP_LOCK_RWLOCK_WRITE: {
		/* The rwlock is 8-aligned; readers wait on __wrphase_futex (+8),
		 * writers on __writers_futex (+12) or __wrphase_futex. */
		uint64_t off = (a & 7) ? 12 : 8;
		w->addr = a - off;
		if (!lo || !hi) {
			snprintf(w->why, sizeof w->why, "the rwlock could not be read");
			break;
		}
		const uint8_t *base = at - off;
		uint32_t readers = u32at(base) >> 3, writer = u32at(base + 24);
		if (writer) {
			set_owner(s, w, (int)writer, "");
		} else if (readers) {
			w->readers = readers;
			snprintf(w->why, sizeof w->why,
				 "held by %u reader%s: glibc does not record which threads read", readers,
				 readers == 1 ? "" : "s");
		} else {
			snprintf(w->why, sizeof w->why, "the rwlock shows no writer and no readers (released just now?)");
		}
		break;
	}
	case SP_LOCK_JOIN:
		if (!hi) {
			snprintf(w->why, sizeof w->why, "the thread descriptor could not be read");
			break;
		}
		set_owner(s, w, (int)u32at(at), "the joined thread has exited");
		break;
	case SP_LOCK_COND:
		snprintf(w->why, sizeof w->why, "a condition variable has no owner: any thread may signal it");
		break;
	case SP_LOCK_SEM:
		snprintf(w->why, sizeof w->why, "a semaphore has no owner: any thread may post it");
		break;
	case SP_LOCK_INTERNAL:
		snprintf(w->why, sizeof w->why, "a glibc internal lock (malloc, stdio...): its owner is not recorded");
		break;
	default:
		snprintf(w->why, sizeof w->why,
			 "futex operation %u; no known lock function on the stack, so the owner is unknown", op);
		break;
	}
}

const char *sp_lock_kind_name(enum sp_lock_kind k)
{
	switch (k) {
	case SP_LOCK_MUTEX: return "mutex";
	case SP_LOCK_PI_MUTEX: return "priority-inheritance mutex";
	case SP_LOCK_RWLOCK_READ: return "rwlock (to read)";
	case SP_LOCK_RWLOCK_WRITE: return "rwlock (to write)";
	case SP_LOCK_JOIN: return "thread exit (pthread_join)";
	case SP_LOCK_COND: return "condition variable";
	case SP_LOCK_SEM: return "semaphore";
	case SP_LOCK_INTERNAL: return "internal lock";
	case SP_LOCK_FUTEX: return "futex";
	default: return "nothing";
	}
}

int sp_lock_cycles(const struct sp_lock_wait *w, size_t n, int *cycle)
{
	/* Each thread has at most one outgoing edge: walk from every thread,
	 * colouring the walk; meeting the walk's own colour closes a cycle. */
	int ncyc = 0;
	int *mark = sp_xcalloc(n ? n : 1, sizeof *mark);
	for (size_t i = 0; i < n; i++)
		cycle[i] = 0;
	for (size_t i = 0; i < n; i++) {
		if (mark[i])
			continue;
		int c = (int)i + 1;
		int j = (int)i;
		while (j >= 0 && !mark[j]) {
			mark[j] = c;
			j = w[j].owner_index;
		}
		if (j >= 0 && mark[j] == c && !cycle[j]) {
			ncyc++;
			int k = j;
			do {
				cycle[k] = ncyc;
				k = w[k].owner_index;
			} while (k != j);
		}
	}
	free(mark);
	return ncyc;
}
