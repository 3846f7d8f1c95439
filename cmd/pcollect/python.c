/* python.c — pcollect's wiring of the Python step (lib/python/pymerge.h). */
#include <stdio.h>
#include <sys/wait.h>

#include "cmd.h"
#include "pcollect.h"

void pcollect_python_messages(struct coll *c)
{
	struct sp_pymerge *m = sp_collect_python(c->s->eng);
	const char *s;
	/* -a: one line per CPython process of the machine is noise; -v says
	 * them, the summary counts them (all.c). */
	while (m && (s = sp_pymerge_message(m)))
		if (!c->o.quiet && (!c->o.all || c->o.verbose))
			sp_error("%s", s);
}

void pcollect_python_meta(struct coll *c)
{
	struct sp_pymerge *m = sp_collect_python(c->s->eng);
	if (!m || !sp_pymerge_stats(m)->processes)
		return;
	const struct sp_pymerge_stats *st = sp_pymerge_stats(m);
	char buf[32];
	snprintf(buf, sizeof buf, "%llu", (unsigned long long)st->samples);
	sp_meta_add(c->s->p, "python-samples", buf);
	snprintf(buf, sizeof buf, "%llu", (unsigned long long)st->disagree);
	sp_meta_add(c->s->p, "python-disagree", buf);
	sp_meta_add(c->s->p, "python-sampling", sp_pymerge_stopper(m) ? "exact" : "nonblocking");
	/* non-blocking samples checked against what each sample saw */
	snprintf(buf, sizeof buf, "%llu", (unsigned long long)st->seen);
	sp_meta_add(c->s->p, "python-seen", buf);
	snprintf(buf, sizeof buf, "%llu", (unsigned long long)st->trimmed);
	sp_meta_add(c->s->p, "python-trimmed", buf);
	snprintf(buf, sizeof buf, "%llu", (unsigned long long)st->changed);
	sp_meta_add(c->s->p, "python-changed", buf);
	snprintf(buf, sizeof buf, "%llu", (unsigned long long)st->recovered);
	sp_meta_add(c->s->p, "python-changed-named", buf);
	snprintf(buf, sizeof buf, "%llu", (unsigned long long)st->unchecked);
	sp_meta_add(c->s->p, "python-unchecked", buf);
	snprintf(buf, sizeof buf, "%llu", (unsigned long long)st->unmerged);
	sp_meta_add(c->s->p, "python-unmerged", buf);
	if (sp_pymerge_stopper(m)) {
		snprintf(buf, sizeof buf, "%llu", (unsigned long long)st->exact);
		sp_meta_add(c->s->p, "python-exact", buf);
		snprintf(buf, sizeof buf, "%llu", (unsigned long long)st->exact_disagree);
		sp_meta_add(c->s->p, "python-exact-disagree", buf);
	}
	c->s->sink->meta(c->s->sink, c->s->p, &c->s->werr);
}

/* Samples left with the eval loop's native frames (no Python frames to
 * put there): said unless -q, with how many. */
void pcollect_python_unmerged(struct coll *c)
{
	struct sp_pymerge *m = sp_collect_python(c->s->eng);
	if (!m || !sp_pymerge_stats(m)->processes || c->o.quiet)
		return;
	const struct sp_pymerge_stats *st = sp_pymerge_stats(m);
	uint64_t un = st->unmerged, all = st->samples + un;
	if (un)
		sp_error("python: %llu of %llu samples of Python threads (%.1f %%) keep _PyEval_EvalFrameDefault "
			 "in place of their Python frames: read after the sample, the thread had none any more (it had "
			 "exited or returned) in %llu, they could not be read in %llu", (unsigned long long)un,
			 (unsigned long long)all, 100.0 * (double)un / (double)all,
			 (unsigned long long)(st->unmerged - st->unmerged_failed), (unsigned long long)st->unmerged_failed);
}

void pcollect_python_summary(struct coll *c)
{
	struct sp_pymerge *m = sp_collect_python(c->s->eng);
	if (!m || !sp_pymerge_stats(m)->processes)
		return;
	const struct sp_pymerge_stats *st = sp_pymerge_stats(m);
	sp_error("python: %llu samples with Python frames, %llu of them with eval-frame and Python-group counts "
		 "that disagree (frames read after the sample), %llu unreadable; innermost frame from the stack "
		 "copy in %llu",
		 (unsigned long long)st->samples, (unsigned long long)st->disagree, (unsigned long long)st->failed,
		 (unsigned long long)st->from_cstack);
	if (st->early) {
		int rt = sp_perfev_stats(c->s->ev)->early_rt;
		sp_error("python: frames of %llu samples taken as they left the kernel's ring (%s), %.2f ms after "
			 "the kernel's sample on average (%.2f ms at most); %llu samples merged with them; %llu not taken "
			 "early (the readers were busy: read when handled)",
			 (unsigned long long)st->early,
			 rt > 0 ? "by a reader at real-time priority" : rt < 0 ? "real-time priority refused: by a "
			 "reader at its own priority" : "by a reader at its own priority",
			 (double)st->early_ns / (double)st->early / 1e6, (double)st->early_max_ns / 1e6,
			 (unsigned long long)st->from_early, (unsigned long long)st->early_busy);
	}
	if (st->seen + st->trimmed + st->changed + st->unchecked)
		sp_error("python: non-blocking: %llu samples whose innermost Python frame is the one the sample saw "
			 "(in its registers or stack copy), %llu merged at an outer frame the sample saw (the thread "
			 "had gone deeper), %llu marked [python frame changed] (the sample saw none of the frames "
			 "read: the thread had moved on; %llu of them with the sample's own innermost function, "
			 "from its next instruction, under the mark), %llu not checked (no eval-loop frame in the "
			 "stack copy)",
			 (unsigned long long)st->seen, (unsigned long long)st->trimmed, (unsigned long long)st->changed,
			 (unsigned long long)st->recovered, (unsigned long long)st->unchecked);
	struct sp_pystop *ps = sp_pymerge_stopper(m);
	if (!ps)
		return;
	const struct sp_pystop_stats *ss = sp_pystop_stats(ps);
	sp_error("python: exact: %llu samples from stopped threads (%llu of them disagree; %llu threads seized), stopped %.0f us on "
		 "average, %.0f us at most, %.2f ms after the kernel's sample on average; %llu merged non-blocking "
		 "(%llu threads off the CPU by then, %llu gone, %llu slow to stop); %llu signals passed on",
		 (unsigned long long)st->exact, (unsigned long long)st->exact_disagree, (unsigned long long)ss->seized,
		 ss->stops ? (double)ss->stopped_ns / (double)ss->stops / 1e3 : 0, (double)ss->max_ns / 1e3,
		 st->exact ? (double)st->delay_ns / (double)st->exact / 1e6 : 0, (unsigned long long)st->moved,
		 (unsigned long long)ss->asleep, (unsigned long long)ss->gone, (unsigned long long)ss->late,
		 (unsigned long long)ss->signals);
}

/* Why Python samples are not exact, into why (size n); "" when they are. */
static void not_exact(const struct coll *c, char *why, size_t n)
{
	why[0] = 0;
	if (c->o.python == SP_PY_OFF)
		snprintf(why, n, "--python=off");
	else if (c->o.python_sampling == 2)
		snprintf(why, n, "--python-sampling=nonblocking");
	else if (c->o.all)
		snprintf(why, n, "-a: a system-wide collector does not stop the threads of every process");
	else if (c->o.python_sampling == 1)
		; /* checked with the options */
	else if (!c->o.freq)
		snprintf(why, n, "-F 0 takes no samples");
	else if (c->o.ntraces)
		snprintf(why, n, "--trace holds the target's new threads with ptrace until their probes are "
			 "open, and a thread has one tracer (--python-sampling=exact stops them anyway, and new "
			 "threads get their probes a few ms late)");
	else if (c->o.cg != SP_CG_DWARF)
		snprintf(why, n, "exact stacks unwind the stopped thread's stack copy, which needs "
			 "--call-graph dwarf");
	else if (c->o.offcpu || c->o.stacks)
		snprintf(why, n, "%s samples are not CPU samples that a stop could stand for",
			 c->o.offcpu == 1 ? "--off-cpu" : c->o.offcpu ? "--wall" : "--stacks");
	else if (c->o.freq > 100)
		snprintf(why, n, "-F %u is above 100 Hz, where stopping each sampled thread would slow "
			 "it down by more than 5 %% (--python-sampling=exact stops them anyway)", c->o.freq);
}

int pcollect_python_exact(const struct coll *c)
{
	char why[256];
	not_exact(c, why, sizeof why);
	return !why[0];
}

void pcollect_python_sampling(struct coll *c)
{
	struct sp_pymerge *m = sp_collect_python(c->s->eng);
	if (!m)
		return;
	char why[256];
	not_exact(c, why, sizeof why);
	/* The stopped thread's stack is read by us, not copied by the kernel
	 * at each sample: 64 KiB (the kernel's most) unless told otherwise,
	 * so deep Python recursion unwinds to its root. */
	sp_pymerge_set_exact(m, !why[0], c->o.stack_set ? c->o.stack_bytes : 65536, why[0] ? why : NULL);
}

void pcollect_python_poll(struct coll *c)
{
	struct sp_pymerge *m = sp_collect_python(c->s->eng);
	if (m && sp_pymerge_stopper(m))
		sp_pystop_poll(sp_pymerge_stopper(m));
}

void pcollect_python_release(struct coll *c)
{
	struct sp_pymerge *m = sp_collect_python(c->s->eng);
	if (m && sp_pymerge_stopper(m))
		sp_pystop_detach_all(sp_pymerge_stopper(m));
}

int pcollect_wait_child(struct coll *c, int pid, int *status, int options)
{
	struct sp_pymerge *m = c->s->eng ? sp_collect_python(c->s->eng) : NULL;
	while (c->hold) {
		if (sp_hold_status(c->hold, pid, status))
			return pid; /* the holder of new threads reaped it */
		if (sp_hold_stopped(c->hold))
			break;
		if (options & WNOHANG)
			return 0; /* a waitpid now would take the holder's stops */
		usleep(2000);
	}
	if (m && sp_pymerge_stopper(m))
		return sp_pystop_waitpid(sp_pymerge_stopper(m), pid, status, options);
	return (int)waitpid(pid, status, options);
}
