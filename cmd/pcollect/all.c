/* all.c — pcollect -a: every process of the machine, as perf record -a.
 * The events are per CPU (lib/capture/perf_events.h's sp_perfev_add_cpus); the engine
 * (lib/engine/collect.h, opts.system_wide) learns the processes from their
 * records, and those that ran before from /proc when sampling starts. */
#include <stdio.h>

#include "cmd.h"
#include "pcollect.h"

int pcollect_all_check_opts(const struct opts *o, const char *synopsis, int ncmd)
{
	if (o->pid || ncmd > 0)
		return sp_usage_error(synopsis, "-a samples every process: not with -p PID or a command"), -1;
	if (o->children)
		return sp_usage_error(synopsis, "-a samples every process already: not with --children"), -1;
	if (o->ntraces || o->stacks || o->live)
		return sp_usage_error(synopsis, "-a takes CPU samples only: not with --trace, --stacks or --live"), -1;
	if (o->offcpu)
		return sp_usage_error(synopsis, "-a takes CPU samples only: not with --off-cpu or --wall"), -1;
	if (o->python_sampling == 1)
		return sp_usage_error(synopsis, "-a cannot stop the threads of every process: "
					      "not with --python-sampling=exact"), -1;
	if (!o->freq)
		return sp_usage_error(synopsis, "-a with -F 0 samples nothing"), -1;
	return 0;
}

int pcollect_all_start(struct coll *c)
{
	struct sp_err err;
	if (sp_perfev_add_cpus(c->s->ev, &err) < 0) {
		sp_error_e(&err);
		return -1;
	}
	sp_perfev_enable(c->s->ev);
	sp_collect_load_all(c->s->eng);
	return 0;
}

void pcollect_all_report(struct coll *c)
{
	const struct sp_collect_stats *cs = sp_collect_stats(c->s->eng);
	char buf[32];
	snprintf(buf, sizeof buf, "%llu", (unsigned long long)cs->processes);
	sp_meta_add(c->s->p, "processes", buf);
	if (cs->unresolved) {
		snprintf(buf, sizeof buf, "%llu", (unsigned long long)cs->unresolved);
		sp_meta_add(c->s->p, "unresolved-processes", buf);
		snprintf(buf, sizeof buf, "%llu", (unsigned long long)cs->unresolved_samples);
		sp_meta_add(c->s->p, "unresolved-samples", buf);
		if (!c->o.quiet)
			sp_error("%llu process%s exited before %s maps could be read: %llu sample%s with "
				 "[unknown] user frames", (unsigned long long)cs->unresolved,
				 cs->unresolved == 1 ? "" : "es", cs->unresolved == 1 ? "its" : "their",
				 (unsigned long long)cs->unresolved_samples, cs->unresolved_samples == 1 ? "" : "s");
	}
	if (cs->maps_reread) { /* a mapping's record lost (said as lost samples) or late */
		snprintf(buf, sizeof buf, "%llu", (unsigned long long)cs->maps_reread);
		sp_meta_add(c->s->p, "maps-reread", buf);
	}
	struct sp_pymerge *m = sp_collect_python(c->s->eng);
	if (m && sp_pymerge_stats(m)->processes && !c->o.quiet && !c->o.verbose)
		sp_error("%llu CPython process%s found: Python frames merged, non-blocking (-v names each, and "
			 "any whose frames could not be read)", (unsigned long long)sp_pymerge_stats(m)->processes,
			 sp_pymerge_stats(m)->processes == 1 ? "" : "es");
	c->s->sink->meta(c->s->sink, c->s->p, &c->s->werr);
}
