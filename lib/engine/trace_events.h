/* trace_events.h — uprobe hits (perf_events.h) turned into trace events of the
 * profile (sp_trace) as they arrive: entries and exits paired into calls
 * by the stack-pointer rule, recorded values, the thread of the samples.
 *
 * Pairing, per thread (x86-64): at a function's entry SP points at the
 * return address, and its return probe fires with SP = that + 8.
 *  - An entry at SP s proves every open call with SP <= s dead: the code
 *    left it without returning (longjmp, an exception).
 *  - An exit at SP r closes the open call of its function with SP + 8 = r;
 *    the open calls above it (SP + 8 < r) are dead for the same reason.
 * A dead call gets an exit with SP_TRACE_ABANDONED, at the time of the
 * event that proved it, so every entry has an exit and readers that count
 * nesting stay balanced.  Recursion needs nothing special: each level has
 * its own SP.  An exit with no open call (the call began before we
 * attached) is counted and dropped.
 *
 * Ownership: the tracer borrows the profile, the sink, the engine (for
 * thread ids) and the probe set; they must outlive it.  It never prints:
 * problems are counted (sp_tracer_stats), a sink error is kept.
 */
#ifndef SP_TRACE_EVENTS_H
#define SP_TRACE_EVENTS_H

#include <stdint.h>

#include "collect.h"
#include "perf_records.h"
#include "profile.h"
#include "uprobe.h"

struct sp_tracer_stats {
	uint64_t hits;        /* of our processes */
	uint64_t entries, exits, points;
	uint64_t abandoned;   /* calls left without a return (longjmp, exceptions) */
	uint64_t orphans;     /* exits without an entry (begun before attaching) */
	uint64_t foreign;     /* hits of other processes running the same binary */
	uint64_t filtered;    /* hits of threads the thread filter drops */
	uint64_t open;        /* calls still open at the end */
	uint64_t unread;      /* values not recorded: memory outside the stack
			       * copy, or gone from the process (VAR->MEMBER) */
};

struct sp_tracer;

/* The probes' cookies are their indexes in set.  The tracer keeps the hits
 * of process pid (and of the others added with sp_tracer_add_pid). */
struct sp_tracer *sp_tracer_new(struct sp_profile *p, struct sp_sink *sink, struct sp_collect *eng,
				const struct sp_uprobe_set *set, int pid);
void sp_tracer_free(struct sp_tracer *t); /* NULL ok */
void sp_tracer_add_pid(struct sp_tracer *t, int pid);
/* Samples are taken too: their COMM records name the threads.  Without
 * them the tracer reads a thread's name from /proc when it first hits. */
void sp_tracer_set_sampling(struct sp_tracer *t, int on);

/* A handler for perfev's uprobe callback (ctx = the tracer). */
void sp_tracer_hit(void *ctx, const struct sp_perf_uprobe *u);

/* A return probe replaces the return address of the call it watches with
 * the kernel's trampoline, where unwinding a sample taken inside the call
 * would stop.  For a sample of thread tid whose stack copy (len bytes from
 * address sp) holds such slots: copies the stack into buf (len bytes) with
 * the real return addresses and returns 1; 0 when there is nothing to
 * fix. */
int sp_tracer_fix_stack(struct sp_tracer *t, int tid, uint64_t sp, const uint8_t *stack, uint64_t len, uint8_t *buf);
/* The return probes' trampoline, as seen in a fixed slot or set below;
 * 0 unknown.  A copy taken later than the records read so far (a thread
 * stopped now) may still hold it where an entry is not read yet. */
uint64_t sp_tracer_trampoline(const struct sp_tracer *t);
/* The return probes' trampoline (the start of the process's [uprobes]
 * mapping), when the caller knows it before a fixed copy showed it. */
void sp_tracer_set_trampoline(struct sp_tracer *t, uint64_t addr);

/* Hits of probe i so far (entry and return hits). */
uint64_t sp_tracer_probe_hits(const struct sp_tracer *t, size_t i);
const struct sp_tracer_stats *sp_tracer_stats(struct sp_tracer *t);
int sp_tracer_error(const struct sp_tracer *t, struct sp_err *err);

#endif
