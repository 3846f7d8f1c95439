/* python.c — pcollect's wiring of the Python step (lib/pymerge.h). */
#include <stdio.h>

#include "cmd.h"
#include "pcollect.h"

void pcollect_python_messages(struct coll *c)
{
	struct sp_pymerge *m = sp_collect_python(c->eng);
	const char *s;
	while (m && (s = sp_pymerge_message(m)))
		if (!c->o.quiet)
			sp_error("%s", s);
}

void pcollect_python_meta(struct coll *c)
{
	struct sp_pymerge *m = sp_collect_python(c->eng);
	if (!m || !sp_pymerge_stats(m)->processes)
		return;
	const struct sp_pymerge_stats *st = sp_pymerge_stats(m);
	char buf[32];
	snprintf(buf, sizeof buf, "%llu", (unsigned long long)st->samples);
	sp_meta_add(c->p, "python-samples", buf);
	snprintf(buf, sizeof buf, "%llu", (unsigned long long)st->disagree);
	sp_meta_add(c->p, "python-disagree", buf);
	c->sink->meta(c->sink, c->p, &c->werr);
}

void pcollect_python_summary(struct coll *c)
{
	struct sp_pymerge *m = sp_collect_python(c->eng);
	if (!m || !sp_pymerge_stats(m)->processes)
		return;
	const struct sp_pymerge_stats *st = sp_pymerge_stats(m);
	sp_error("python: %llu samples with Python frames, %llu of them with eval-frame and Python-group counts "
		 "that disagree (frames read after the sample), %llu unreadable; innermost frame from the stack "
		 "copy in %llu",
		 (unsigned long long)st->samples, (unsigned long long)st->disagree, (unsigned long long)st->failed,
		 (unsigned long long)st->from_cstack);
}
