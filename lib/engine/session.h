/* session.h — a sampling session: the objects that turn perf_event_open's
 * records into a binary stream, wired together and owned as one, the
 * sampling loop and its stop logic.
 *
 * The session owns its profile, perf events, stream writer, collect engine
 * (symbols and the Python merge are in it), off-CPU step, hit stacks and
 * tracer; sp_session_free frees them all, whatever was made, on success and
 * after any error.  The caller (pcollect) opens the targets, draws the
 * status, reports and decides the exit status, through the hooks below.
 *
 * Order: sp_session_new, sp_session_open (events), metadata into s->p,
 * sp_session_write_to (the writer), sp_session_wire (engine and steps),
 * the targets added to s->ev, sp_session_run, sp_session_stop,
 * sp_session_finish, sp_session_free. */
#ifndef SP_SESSION_H
#define SP_SESSION_H

#include <signal.h>
#include <stdio.h>

#include "collect.h"
#include "hitstack.h"
#include "offcpu.h"
#include "perf_events.h"
#include "format.h"
#include "trace_events.h"

struct sp_session {
	struct sp_profile *p;
	struct sp_perfev *ev;
	FILE *out;                    /* the stream's file (rotation changes it) */
	struct sp_writer *w;          /* the binary stream's (format.h) */
	struct sp_sink *sink;         /* the writer's sink, or the caller's wrapper of it */
	struct sp_offcpu *off;        /* off-CPU or wall-clock time (offcpu.h) */
	struct sp_hitstacks *hs;      /* a profile of probe hits (hitstack.h) */
	struct sp_collect *eng;
	struct sp_tracer *tracer;     /* made by the caller's tracing, freed here */
	struct sp_perf_handler hd;    /* where records go: the engine's, off-CPU's and the caller's callbacks */
	int write_failed;             /* the stream cannot be written on: stop */
	struct sp_err werr;           /* why */
	double t0;                    /* when the loop started (sp_mono_s) */
};

struct sp_session_opts {
	struct sp_collect_opts collect;
	int offcpu;                      /* 1 off-CPU time, 2 wall-clock time (offcpu.h) */
	int stacks;                      /* a profile of the probes' hits (hitstack.h) */
	struct sp_hitstacks_opts hits;
};

/* The loop's hooks: ctx is passed back to each; a NULL hook is not called. */
struct sp_session_hooks {
	void *ctx;
	volatile sig_atomic_t *stop; /* non-zero: stop (a signal handler's flag) */
	double duration;             /* seconds, 0: until stop or gone */
	int round_ms;                /* the longest wait for records */
	/* After each round's records (now: sp_mono_s). */
	void (*round)(void *ctx, double now);
	/* Non-zero when every target has gone. */
	int (*gone)(void *ctx, double now);
	/* A rotation of the output when due: -1 with s->werr set stops the loop. */
	int (*rotate)(void *ctx, double now);
	/* Every half second, with the seconds since the start. */
	void (*status)(void *ctx, double elapsed);
	/* At the stop, before the events are disabled, and after the last
	 * records are read (before the steps are finished). */
	void (*stopping)(void *ctx);
	void (*stopped)(void *ctx);
};

struct sp_session *sp_session_new(void);
/* Opens the perf events (s->ev) and makes the profile (s->p, columns
 * samples and period): -1 with err set. */
int sp_session_open(struct sp_session *s, const struct sp_perfev_opts *po, struct sp_err *err);
/* The stream writer on out; s->sink is its sink (the caller may wrap it). */
void sp_session_write_to(struct sp_session *s, FILE *out);
/* The off-CPU step or the hit stacks, and the engine in front of them;
 * s->hd the records' callbacks: -1 with err set. */
int sp_session_wire(struct sp_session *s, const struct sp_session_opts *o, struct sp_err *err);
/* Samples until hooks->stop, hooks->gone, the duration or a write error. */
void sp_session_run(struct sp_session *s, const struct sp_session_hooks *hooks);
/* Disables the events, reads the last records and completes the steps
 * (off-CPU time up to now).  An error: s->write_failed, s->werr. */
void sp_session_stop(struct sp_session *s, const struct sp_session_hooks *hooks);
/* The lost samples' count into the metadata, then the stream's trailer:
 * 0, or -1 (s->write_failed, s->werr). */
int sp_session_finish(struct sp_session *s);
void sp_session_free(struct sp_session *s); /* NULL ok */

#endif
