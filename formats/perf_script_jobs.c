/* perf_script_jobs.c — perf script text folded by several threads, from a file or a
 * pipe.
 *
 * The calling thread is the reader: it cuts the input into chunks of whole
 * samples (at a blank line, which ends every perf script sample) and queues
 * them; each worker feeds its chunks to its own perf reader (caches kept
 * across chunks) over its own profile and fold (the first worker over the
 * caller's), and the other folds are adopted by the caller's, to be
 * rendered in parallel and merged by text when it is written.  Folded
 * output is sorted by stack text, so it is byte-identical for any number of
 * workers and any chunk size.
 *
 * Input is read into a fixed ring of buffers (2 * jobs + 1 of them), a pipe
 * and a file alike; only the partial sample at the end of a buffer is
 * copied to the front of the next one.
 *
 * Bad-line warnings name the line in the whole input: workers keep them per
 * chunk, and they are printed in input order once every chunk's line count
 * is known (the first SP_WARN_KEEP of each chunk are kept; the summary of
 * bad lines counts them all).
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "format.h"
#include "perf_script.h"
#include "perf_script_jobs.h"

#define SP_WARN_KEEP 101

struct pwarn {
	uint64_t seq, line; /* chunk, line in the chunk (0: no line) */
	size_t ord;         /* arrival order, to keep a chunk's order */
	struct sp_err e;
};

struct chunk {
	char *buf;      /* its buffer in the ring */
	size_t cap;
	const char *p;  /* the chunk's bytes */
	size_t n;
	uint64_t seq;
	struct chunk *next;
};

struct par;

struct pworker {
	pthread_t th;
	struct par *par;
	struct sp_profile *p;
	struct sp_fold *fold;
	struct sp_perf_reader *rd;
	struct sp_read_opts o;
	struct sp_input *cur;  /* the chunk being read */
	uint64_t cur_seq;
	uint64_t cur_warned;   /* warnings kept for cur_seq */
	struct sp_err err;
	int rc;
};

struct par {
	pthread_mutex_t mu;
	pthread_cond_t work, freed;
	struct chunk *head, *tail; /* queued chunks */
	struct chunk *free;        /* ring buffers ready for reading */
	int done;                  /* no more chunks will come */
	int failed;                /* a worker failed: stop early */
	const char *name;
	uint64_t *lines;           /* lines per chunk, by seq */
	size_t nlines_cap;
	struct pwarn *warns;
	size_t nwarn, capwarn;
	struct chunk *ring;        /* the pipe reader's buffers */
	unsigned nring;
};

static void keep_warning(void *ctx, const struct sp_err *e)
{
	struct pworker *w = ctx;
	struct par *par = w->par;
	if (w->cur_warned >= SP_WARN_KEEP && e->where[0])
		return;
	w->cur_warned++;
	pthread_mutex_lock(&par->mu);
	if (par->nwarn == par->capwarn) {
		par->capwarn = par->capwarn ? par->capwarn * 2 : 64;
		par->warns = sp_xrealloc(par->warns, par->capwarn * sizeof *par->warns);
	}
	struct pwarn *pw = &par->warns[par->nwarn++];
	pw->seq = w->cur_seq;
	pw->ord = par->nwarn - 1;
	pw->line = e->where[0] && w->cur ? sp_input_lineno(w->cur) : 0;
	pw->e = *e;
	pthread_mutex_unlock(&par->mu);
}

static void set_lines(struct par *par, uint64_t seq, uint64_t n)
{
	pthread_mutex_lock(&par->mu);
	if (seq >= par->nlines_cap) {
		size_t cap = par->nlines_cap ? par->nlines_cap : 64;
		while (cap <= seq)
			cap *= 2;
		par->lines = sp_xrealloc(par->lines, cap * sizeof *par->lines);
		memset(par->lines + par->nlines_cap, 0, (cap - par->nlines_cap) * sizeof *par->lines);
		par->nlines_cap = cap;
	}
	par->lines[seq] = n;
	pthread_mutex_unlock(&par->mu);
}

static void *worker_main(void *arg)
{
	struct pworker *w = arg;
	struct par *par = w->par;
	for (;;) {
		pthread_mutex_lock(&par->mu);
		while (!par->head && !par->done)
			pthread_cond_wait(&par->work, &par->mu);
		struct chunk *c = par->head;
		if (c) {
			par->head = c->next;
			if (!par->head)
				par->tail = NULL;
		}
		int stop = par->failed;
		pthread_mutex_unlock(&par->mu);
		if (!c)
			break;
		if (!stop && !w->rc) {
			w->cur = sp_input_mem(c->p, c->n, par->name);
			w->cur_seq = c->seq;
			w->cur_warned = 0;
			if (sp_perf_reader_feed(w->rd, w->cur, &w->err) < 0)
				w->rc = -1;
			set_lines(par, c->seq, sp_input_lineno(w->cur));
			sp_input_close(w->cur);
			w->cur = NULL;
		}
		pthread_mutex_lock(&par->mu);
		if (w->rc)
			par->failed = 1;
		c->next = par->free;
		par->free = c;
		pthread_cond_signal(&par->freed);
		pthread_mutex_unlock(&par->mu);
	}
	return NULL;
}

static void submit(struct par *par, struct chunk *c)
{
	pthread_mutex_lock(&par->mu);
	c->next = NULL;
	if (par->tail)
		par->tail->next = c;
	else
		par->head = c;
	par->tail = c;
	pthread_cond_signal(&par->work);
	pthread_mutex_unlock(&par->mu);
}

/* Where to cut [p, p+n): just after the last blank line ("\n\n"), else (no
 * blank line: samples not separated, e.g. perf script without -g) before
 * the last line that starts in column 0 and is not the first line, unless
 * a stack line (starting with a tab) is in [p, p+n): then it is one sample
 * longer than the buffer, and a line in column 0 inside it is a bad line,
 * not the start of a sample.  0 when no cut is found. */
size_t sp_perf_cut(const char *p, size_t n)
{
	const char *e = p + n;
	while (e > p) {
		const char *nl = memrchr(p, '\n', (size_t)(e - p));
		if (!nl)
			break;
		if (nl > p && nl[-1] == '\n' && nl + 1 < p + n)
			return (size_t)(nl + 1 - p);
		e = nl;
	}
	if (n && (p[0] == '\t' || memmem(p, n, "\n\t", 2)))
		return 0;
	e = p + n;
	while (e > p) {
		const char *nl = memrchr(p, '\n', (size_t)(e - p));
		if (!nl)
			break;
		if (nl + 1 < p + n && nl[1] != ' ' && nl[1] != '\t' && nl[1] != '\n' && nl[1] != '\r' && nl[1] != '#')
			return (size_t)(nl + 1 - p);
		e = nl;
	}
	return 0;
}

/* The reader: a ring of buffers, for a pipe, gzip or a file alike.  A file
 * is read, not mapped: on the virtual machines this runs on, a mapped 146
 * MB file cost 2,500 more page faults and a third more CPU time than
 * reading it into the reused buffers of the ring (perf stat, pfold -j2). */
static int read_ring(struct par *par, struct sp_input *in, size_t chunk, unsigned nbuf, uint64_t *seq,
		     struct sp_err *err)
{
	struct chunk *all = sp_xcalloc(nbuf, sizeof *all);
	for (unsigned i = 0; i < nbuf; i++) {
		all[i].cap = chunk;
		all[i].buf = sp_xmalloc(chunk);
		all[i].next = i + 1 < nbuf ? &all[i + 1] : NULL;
	}
	par->free = &all[0];
	struct sp_buf carry = SP_BUF_INIT;
	int rc = 0, eof = 0;
	while (!eof) {
		pthread_mutex_lock(&par->mu);
		while (!par->free)
			pthread_cond_wait(&par->freed, &par->mu);
		struct chunk *c = par->free;
		par->free = c->next;
		int failed = par->failed;
		pthread_mutex_unlock(&par->mu);
		if (failed)
			break;
		size_t len = 0;
		if (carry.len > c->cap) {
			c->buf = sp_xrealloc(c->buf, carry.len * 2);
			c->cap = carry.len * 2;
		}
		if (carry.len)
			memcpy(c->buf, carry.p, carry.len);
		len = carry.len;
		carry.len = 0;
		size_t cut = 0;
		for (;;) {
			size_t got = sp_input_read(in, c->buf + len, c->cap - len);
			size_t before = len;
			len += got;
			if (got < c->cap - before) {
				eof = 1;
				break;
			}
			cut = sp_perf_cut(c->buf, len);
			if (cut)
				break;
			/* one sample longer than the buffer: grow it */
			c->cap *= 2;
			c->buf = sp_xrealloc(c->buf, c->cap);
		}
		if (eof)
			cut = len;
		sp_buf_add(&carry, c->buf + cut, len - cut);
		c->p = c->buf;
		c->n = cut;
		c->seq = (*seq)++;
		if (cut)
			submit(par, c);
		else {
			pthread_mutex_lock(&par->mu);
			c->next = par->free;
			par->free = c;
			pthread_mutex_unlock(&par->mu);
		}
	}
	if (sp_input_failed(in, err))
		rc = -1;
	sp_buf_release(&carry);
	/* the caller frees the ring once the workers are joined */
	par->ring = all;
	par->nring = nbuf;
	return rc;
}

static int warn_cmp(const void *a, const void *b)
{
	const struct pwarn *x = a, *y = b;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return x->ord < y->ord ? -1 : x->ord > y->ord;
}

int sp_perf_fold_parallel(struct sp_input *in, const struct sp_perf_par_opts *po, struct sp_profile *p,
			  struct sp_fold *fold, struct sp_read_opts *o, struct sp_err *err)
{
	unsigned nw = po->jobs ? po->jobs : 1;
	size_t chunk = po->chunk ? po->chunk : SP_PERF_CHUNK;
	struct par par;
	memset(&par, 0, sizeof par);
	pthread_mutex_init(&par.mu, NULL);
	pthread_cond_init(&par.work, NULL);
	pthread_cond_init(&par.freed, NULL);
	par.name = sp_input_name(in);

	/* Every worker filters on the event a single pass would choose: the
	 * first event of the input, unless one was given. */
	struct sp_buf ev = SP_BUF_INIT;
	const char *first = o->event_filter;
	int defaulted = o->event_filter_defaulted;
	if (!first || !*first) {
		const char *buf;
		size_t n;
		sp_input_peek(in, 1 << 20, &buf, &n);
		first = sp_perf_first_event(buf, n, &ev);
		defaulted = 1;
	}

	struct pworker *w = sp_xcalloc(nw, sizeof *w);
	for (unsigned i = 0; i < nw; i++) {
		w[i].par = &par;
		if (i == 0) {
			/* The first worker folds into the caller's fold: one
			 * merge fewer, and one set of tables fewer to build. */
			w[i].p = p;
			w[i].fold = fold;
		} else {
			w[i].p = sp_profile_new();
			/* the caller's columns (folded text's "value" read
			 * before: the period fills it), so that its fold adds
			 * up column by column as worker 0's */
			const char *cols[SP_MAX_VALUES];
			int nc = sp_profile_nvalues(p);
			for (int j = 0; j < nc; j++)
				cols[j] = sp_profile_value_name(p, j);
			if (nc)
				sp_profile_set_values(w[i].p, nc, cols);
			w[i].fold = sp_fold_new(w[i].p, po->fold);
			sp_fold_set_lines(w[i].fold, po->lines);
		}
		w[i].o = *o;
		w[i].o.bad_lines = 0;
		w[i].o.event_filter = first;
		w[i].o.event_filter_defaulted = defaulted;
		w[i].o.warn = keep_warning;
		w[i].o.warn_ctx = &w[i];
		w[i].rd = sp_perf_reader_new(w[i].p, sp_fold_sink(w[i].fold), &w[i].o);
	}
	for (unsigned i = 0; i < nw; i++)
		pthread_create(&w[i].th, NULL, worker_main, &w[i]);

	uint64_t seq = 0;
	int rc = read_ring(&par, in, chunk, 2 * nw + 1, &seq, err);
	pthread_mutex_lock(&par.mu);
	par.done = 1;
	pthread_cond_broadcast(&par.work);
	pthread_mutex_unlock(&par.mu);
	for (unsigned i = 0; i < nw; i++) {
		pthread_join(w[i].th, NULL);
		if (w[i].rc && !rc) {
			rc = -1;
			*err = w[i].err;
		}
	}

	/* The warnings in input order, with lines counted from the start. */
	if (par.nwarn)
		qsort(par.warns, par.nwarn, sizeof *par.warns, warn_cmp);
	uint64_t base = 0, at = 0;
	for (size_t i = 0; i < par.nwarn; i++) {
		struct pwarn *pw = &par.warns[i];
		while (at < pw->seq && at < par.nlines_cap)
			base += par.lines[at++];
		if (!o->warn)
			break;
		if (pw->line) {
			struct sp_err e;
			sp_err_at(&e, par.name, base + pw->line, "%s", pw->e.msg);
			o->warn(o->warn_ctx, &e);
		} else {
			o->warn(o->warn_ctx, &pw->e);
		}
	}
	for (unsigned i = 0; i < nw; i++) {
		o->bad_lines += w[i].o.bad_lines;
		sp_perf_reader_free(w[i].rd);
		if (i == 0)
			continue;
		/* written with the caller's fold: each renders its own
		 * text in a thread, and the sorted lines are merged */
		sp_fold_adopt(fold, w[i].fold, w[i].p);
	}
	for (unsigned i = 0; i < par.nring; i++)
		free(par.ring[i].buf);
	free(par.ring);
	free(par.warns);
	free(par.lines);
	free(w);
	sp_buf_release(&ev);
	pthread_mutex_destroy(&par.mu);
	pthread_cond_destroy(&par.work);
	pthread_cond_destroy(&par.freed);
	return rc;
}
