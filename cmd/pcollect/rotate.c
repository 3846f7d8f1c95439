/* pcollect --rotate=SECONDS -o PATTERN: one stream file per period.
 *
 * The name follows tcpdump's -G/-w: PATTERN goes through strftime(3) at
 * the start of each file (local time, TZ applies); a PATTERN without a %
 * gets ".YYYYmmdd-HHMMSS" before its extension.  A name that exists
 * already (a pattern coarser than the period, a file from another run)
 * gets "-1", "-2"... before the extension: no file is ever replaced.
 *
 * The engine, --off-cpu and --stacks write into one sink that forwards to
 * the current file's stream writer, and the switch happens between two
 * rounds of reading: every sample goes to exactly one file.  Each file is
 * a whole stream (header, the frames it uses, trailer), written under a
 * hidden temporary name (sp_outfile) and renamed when complete, so a
 * reader polling the directory never sees half a file. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

#include "cmd.h"
#include "pcollect.h"

struct pc_rotate {
	struct sp_sink fwd; /* first: the sink handed out */
	struct sp_sink *cur;
	const char *pattern; /* -o PATTERN */
	char *name, *prev; /* the current file's name (of.path borrows it), the last one's */
	double next;        /* monotonic time of the next switch */
	unsigned long files;
};

static int f_sample(struct sp_sink *s, struct sp_profile *p, const struct sp_sample *smp, struct sp_err *err)
{
	struct sp_sink *c = ((struct pc_rotate *)s)->cur;
	return c->sample(c, p, smp, err);
}

static int f_trace(struct sp_sink *s, struct sp_profile *p, const struct sp_trace *t, struct sp_err *err)
{
	struct sp_sink *c = ((struct pc_rotate *)s)->cur;
	return c->trace(c, p, t, err);
}

static int f_meta(struct sp_sink *s, struct sp_profile *p, struct sp_err *err)
{
	struct sp_sink *c = ((struct pc_rotate *)s)->cur;
	return c->meta(c, p, err);
}

static int f_end(struct sp_sink *s, struct sp_profile *p, struct sp_err *err)
{
	struct sp_sink *c = ((struct pc_rotate *)s)->cur;
	return c->end_input ? c->end_input(c, p, err) : 0;
}

/* Where a suffix goes in path: before the extension of its last
 * component (".sp" of "api.sp"; none for ".hidden" or "dir.d/api"). */
static size_t ext_at(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	const char *dot = strrchr(base, '.');
	return dot && dot > base ? (size_t)(dot - path) : strlen(path);
}

/* The name of a file started at wall time t; NULL when the pattern gives
 * an empty or overlong name. */
static char *file_name(const char *pattern, time_t t, const char *prev)
{
	struct tm tm;
	localtime_r(&t, &tm);
	char stamp[4096];
	struct sp_buf b = SP_BUF_INIT;
	if (strchr(pattern, '%')) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
		size_t n = strftime(stamp, sizeof stamp, pattern, &tm); /* the user's pattern, as tcpdump -w */
#pragma GCC diagnostic pop
		if (!n)
			return NULL;
		sp_buf_add(&b, stamp, n);
	} else {
		strftime(stamp, sizeof stamp, ".%Y%m%d-%H%M%S", &tm);
		size_t at = ext_at(pattern);
		sp_buf_add(&b, pattern, at);
		sp_buf_adds(&b, stamp);
		sp_buf_adds(&b, pattern + at);
	}
	char *name = strdup(sp_buf_cstr(&b));
	struct stat st;
	for (unsigned k = 1; name && ((prev && !strcmp(name, prev)) || stat(name, &st) == 0); k++) {
		free(name);
		size_t at = ext_at(sp_buf_cstr(&b));
		char num[24];
		snprintf(num, sizeof num, "-%u", k);
		struct sp_buf n2 = SP_BUF_INIT;
		sp_buf_add(&n2, b.p, at);
		sp_buf_adds(&n2, num);
		sp_buf_adds(&n2, b.p + at);
		name = strdup(sp_buf_cstr(&n2));
		sp_buf_release(&n2);
	}
	sp_buf_release(&b);
	return name;
}

/* Kept here too: an early return of the command leaves it reachable. */
static struct pc_rotate *the;

int pcollect_rotate_start(struct coll *c, double now)
{
	struct pc_rotate *r = sp_xcalloc(1, sizeof *r);
	c->rot = the = r;
	r->pattern = c->o.output;
	if (!(r->name = file_name(c->o.output, time(NULL), NULL))) {
		sp_error("-o '%s' makes an empty file name (or one longer than 4095 bytes)", c->o.output);
		return -1;
	}
	c->o.output = r->name;
	r->next = now + c->o.rotate;
	return 0;
}

struct sp_sink *pcollect_rotate_sink(struct coll *c)
{
	struct pc_rotate *r = c->rot;
	r->fwd.sample = f_sample;
	r->fwd.trace = f_trace;
	r->fwd.meta = f_meta;
	r->fwd.end_input = f_end;
	r->cur = c->s->sink;
	return &r->fwd;
}

int pcollect_rotate_due(const struct coll *c, double now)
{
	return c->rot && now >= c->rot->next;
}

int pcollect_rotate(struct coll *c, struct sp_outfile *of, double now)
{
	struct pc_rotate *r = c->rot;
	while (r->next <= now) /* a round late (a loaded machine): the next period starts now */
		r->next += c->o.rotate;
	char *name;
	/* The next file first: when it cannot be opened, the current one is
	 * still whole and ends as usual. */
	if (!(name = file_name(r->pattern, time(NULL), r->name)))
		return sp_err_set(&c->s->werr, "-o '%s' makes an empty file name", r->pattern);
	struct sp_outfile next;
	if (sp_outfile_open(&next, name, 0) < 0) {
		free(name);
		return sp_err_set(&c->s->werr, "the next file could not be started (see above)");
	}
	if (sp_writer_finish(c->s->w, &c->s->werr) < 0) {
		sp_outfile_close(&next, 0);
		free(name);
		return -1;
	}
	int kept = sp_outfile_close(of, 1);
	sp_writer_free(c->s->w);
	*of = next;
	free(r->prev);
	r->prev = r->name;
	r->name = name;
	c->o.output = name;
	c->s->w = sp_writer_open(SP_OUT_BINARY, of->f, c->s->p, NULL, 0, NULL);
	r->cur = sp_writer_sink(c->s->w);
	r->files++;
	if (kept < 0) /* said by sp_outfile_close */
		return sp_err_set(&c->s->werr, "stopped: %s was not kept", r->prev);
	return 0;
}

void pcollect_rotate_free(struct coll *c)
{
	struct pc_rotate *r = c->rot ? c->rot : the;
	if (!r)
		return;
	free(r->name);
	free(r->prev);
	free(r);
	c->rot = the = NULL;
}
