/* diff.c — pdiff and pmerge (see diff.h). */
#include "diff.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calls.h"

/* ---- pdiff ---- */

/* What one side's samples say of its root: one process (by pid, named
 * after its main thread) or several, or roots that are first frames. */
struct rootinfo {
	int seen, many, frames; /* frames: samples without a thread */
	int64_t pid;
	uint32_t name; /* string id */
	int main;      /* name is the main thread's (tid == pid) */
};

struct dsink {
	struct sp_sink sink;
	struct rootinfo root[2];
	struct sp_profile *p;
	struct sp_agg *agg;
	struct sp_filter *f;
	struct sp_calls *calls;
	int side, col, have_col, learning, scan;
	const char *name, *weight;
	char unit[2][32]; /* of each side's column (sp_value_unit), from its first sample */
	int have_unit[2];
};

static void note_root(struct rootinfo *r, const struct sp_profile *p, uint32_t thread)
{
	if (!thread) {
		r->frames = 1;
		return;
	}
	const struct sp_thread *t = sp_thread_get(p, thread);
	if (!r->seen) {
		r->seen = 1;
		r->pid = t->pid;
		r->name = t->name;
		r->main = t->pid >= 0 && t->tid == t->pid;
	} else if (r->pid >= 0 ? t->pid != r->pid : t->name != r->name) {
		r->many = 1;
	} else if (!r->main && t->pid >= 0 && t->tid == t->pid) {
		r->name = t->name;
		r->main = 1;
	}
}

static int dadd(struct dsink *d, const struct sp_sample *smp, int side)
{
	if (!d->calls)
		note_root(&d->root[side], d->p, smp->thread);
	uint32_t node = d->f ? sp_filter_stack(d->f, smp->stack) : smp->stack;
	if (node == SP_FILTER_DROP)
		return 0;
	double *v = sp_agg_entry(d->agg, sp_agg_thread_of(d->agg, smp->thread), node);
	v[side] += smp->values[d->col];
	return 0;
}

static int on_split(void *ctx, const struct sp_sample *smp, enum sp_call_where where, struct sp_err *err)
{
	return dadd(ctx, smp, where == SP_CALL_SLOW);
}

static int d_sample(struct sp_sink *s, struct sp_profile *p, const struct sp_sample *smp, struct sp_err *err)
{
	struct dsink *d = (struct dsink *)s;
	if (!d->have_col) {
		if ((d->col = sp_value_column(p, d->weight, err)) < 0)
			return -1;
		d->have_col = 1;
	}
	int side = d->calls ? 0 : d->side;
	if (!d->have_unit[side]) {
		snprintf(d->unit[side], sizeof d->unit[side], "%s", sp_value_unit(p, d->col, smp->event));
		d->have_unit[side] = 1;
	}
	if (!d->calls)
		return dadd(d, smp, d->side);
	if (d->scan) {
		if (sp_calls_observe(d->calls, p, smp, err) < 0) {
			char m[sizeof err->msg];
			memcpy(m, err->msg, sizeof m);
			return sp_err_set(err, "%s: %s", d->name, m);
		}
		return 0;
	}
	return sp_calls_sample(d->calls, smp, on_split, d, err);
}

static int d_trace(struct sp_sink *s, struct sp_profile *p, const struct sp_trace *t, struct sp_err *err)
{
	struct dsink *d = (struct dsink *)s;
	if (!d->calls)
		return 0;
	if (d->scan) {
		sp_calls_observe_trace(d->calls, p, t);
		return 0;
	}
	return sp_calls_trace(d->calls, t, on_split, d, err);
}

static int read_side(struct dsink *d, struct sp_source *src, const struct sp_diff_opts *o, struct sp_read_opts *ro,
		     struct sp_err *err)
{
	d->name = sp_source_name(src);
	if (sp_source_read(src, o->format, d->p, &d->sink, ro, err) < 0)
		return -1;
	if (sp_value_is_diff(d->p))
		return sp_err_set(err, "%s: already a two-value (diff) profile; pdiff compares one-value profiles",
				  d->name);
	return 0;
}

/* Names are compared after the rewrites asked for: -s strips hex numbers;
 * unless --keep-suffixes, the suffixes of compiler clones go (gcc's
 * .constprop.N .isra.N .part.N .cold .lto_priv.N), so a function compares
 * with itself whichever copy a build or a tool names. */
static struct sp_filter *name_filter(struct sp_profile *p, int strip_hex, int keep_suffixes, struct sp_err *err)
{
	const char *prog[2];
	size_t n = 0;
	if (strip_hex)
		prog[n++] = "s/0x[0-9a-fA-F]+/0x.../g";
	if (!keep_suffixes)
		prog[n++] = "s/\\.(constprop|isra|part|lto_priv|cold)(\\.[0-9]+)?//g";
	if (!n)
		return NULL;
	struct sp_filter_opts fo;
	memset(&fo, 0, sizeof fo);
	fo.replace = prog;
	fo.nreplace = n;
	fo.pid = fo.tid = -1;
	return sp_filter_new(p, &fo, err);
}

/* Emits every entry as a two-value sample (a scaled by `scale`). */
static int write_diff(struct sp_agg *agg, struct sp_profile *p, int binary, double scale, int truncate, FILE *out,
		      const char *unit_a, const char *unit_b, struct sp_err *err)
{
	static const char *const ab[] = { "a", "b" };
	sp_profile_set_values(p, 2, ab);
	sp_profile_set_unit(p, 0, unit_a);
	sp_profile_set_unit(p, 1, unit_b);
	struct sp_writer *w = sp_writer_open(binary ? SP_OUT_BINARY : SP_OUT_FOLDED, out, p, NULL, SP_WRITER_NO_TTY, err);
	if (!w)
		return -1;
	struct sp_sink *sink = sp_writer_sink(w);
	int rc = 0;
	struct sp_sample smp;
	memset(&smp, 0, sizeof smp);
	smp.time = SP_NO_TIME;
	for (size_t i = 0; i < sp_agg_count(agg) && !rc; i++) {
		const double *v = sp_agg_get(agg, i, &smp.thread, &smp.stack);
		double a = v[0] * scale;
		if (truncate)
			a = floor(a);
		else if (scale != 1)
			a = round(a * 100) / 100;
		smp.values[0] = a;
		smp.values[1] = v[1];
		rc = sink->sample(sink, p, &smp, err);
	}
	if (!rc)
		rc = sp_writer_finish(w, err);
	sp_writer_free(w);
	return rc;
}

int sp_roots_parse(const char *arg, struct sp_roots_opts *r)
{
	memset(r, 0, sizeof *r);
	const char *eq = strchr(arg, '=');
	if (!strcmp(arg, "auto"))
		r->mode = SP_ROOTS_AUTO;
	else if (!strcmp(arg, "keep"))
		r->mode = SP_ROOTS_KEEP;
	else if (!strcmp(arg, "drop"))
		r->mode = SP_ROOTS_DROP;
	else if (eq && eq != arg && eq[1]) {
		static char buf[1024];
		snprintf(buf, sizeof buf, "%.*s", (int)(eq - arg), arg);
		r->mode = SP_ROOTS_MAP;
		r->from = buf;
		r->to = eq + 1;
	} else
		return -1;
	return 0;
}

/* The root name (string id) of an entry: its thread's name, or the first
 * frame's name of its stack (folded text). */
static uint32_t entry_root(struct sp_profile *p, uint32_t thread, uint32_t node)
{
	if (thread)
		return sp_thread_get(p, thread)->name;
	uint32_t r = node;
	while (r && sp_node_get(p, r)->parent)
		r = sp_node_get(p, r)->parent;
	return r ? sp_frame_get(p, sp_node_get(p, r)->frame)->name : 0;
}

/* The one root name of side's entries, 0 when it has several (or none). */
static uint32_t single_root(struct sp_agg *agg, struct sp_profile *p, const struct rootinfo *ri, int side)
{
	if (ri->many || (ri->seen && ri->frames))
		return 0;
	if (ri->seen)
		return ri->name;
	uint32_t one = 0;
	for (size_t i = 0; i < sp_agg_count(agg); i++) {
		uint32_t t, node;
		const double *v = sp_agg_get(agg, i, &t, &node);
		if (!v[side])
			continue;
		uint32_t r = entry_root(p, t, node);
		if (one && r != one)
			return 0;
		one = r;
	}
	return one;
}

/* node without its first frame (to == 0), or with it renamed to (a string
 * id); frames/cap are the caller's scratch. */
static uint32_t node_reroot(struct sp_profile *p, uint32_t node, uint32_t to, uint32_t **frames, size_t *cap)
{
	uint32_t d = sp_node_frames(p, node, frames, cap), n = 0;
	for (uint32_t j = to ? 0 : 1; j < d; j++) {
		uint32_t f = (*frames)[j];
		if (j == 0) {
			struct sp_frame fr = *sp_frame_get(p, f);
			fr.name = to;
			f = sp_frame_intern(p, &fr);
		}
		n = sp_node_intern(p, n, f);
	}
	return n;
}

/* Rewrite the roots of agg's entries: every root dropped (from == 0), or
 * side a's root from read as to.  Returns the new aggregation. */
static struct sp_agg *reroot(struct sp_agg *agg, struct sp_profile *p, uint32_t from, uint32_t to)
{
	struct sp_agg *n = sp_agg_new(p, 2);
	uint32_t *frames = NULL;
	size_t cap = 0;
	uint32_t tothread = to ? sp_thread_intern(p, -1, -1, to) : 0;
	for (size_t i = 0; i < sp_agg_count(agg); i++) {
		uint32_t t, node;
		const double *v = sp_agg_get(agg, i, &t, &node);
		double a = v[0], b = v[1];
		uint32_t t2 = t, node2 = node;
		if (!from || entry_root(p, t, node) == from) {
			if (t) {
				t2 = from ? tothread : 0;
			} else {
				node2 = node_reroot(p, node, from ? to : 0, &frames, &cap);
			}
		}
		if (from) { /* only side a's root is renamed */
			if (a)
				sp_agg_entry(n, t2, node2)[0] += a;
			if (b)
				sp_agg_entry(n, t, node)[1] += b;
		} else {
			double *w = sp_agg_entry(n, t2, node2);
			w[0] += a;
			w[1] += b;
		}
	}
	free(frames);
	sp_agg_free(agg);
	return n;
}

/* --roots: match, drop or rename the inputs' root frames (see pdiff(1));
 * what was done is said in msg. */
static struct sp_agg *match_roots(struct sp_agg *agg, struct sp_profile *p, const struct rootinfo *ri,
				  const struct sp_roots_opts *ro, char **files, struct sp_buf *msg, struct sp_err *err)
{
	if (ro->mode == SP_ROOTS_KEEP)
		return agg;
	if (ro->mode == SP_ROOTS_DROP)
		return reroot(agg, p, 0, 0);
	if (ro->mode == SP_ROOTS_MAP) {
		uint32_t from = sp_str_intern(p, ro->from, strlen(ro->from));
		int found = 0;
		for (size_t i = 0; i < sp_agg_count(agg) && !found; i++) {
			uint32_t t, node;
			const double *v = sp_agg_get(agg, i, &t, &node);
			found = v[0] && entry_root(p, t, node) == from;
		}
		if (!found) {
			sp_agg_free(agg);
			sp_err_set(err, "--roots=%s=%s: %s has no root frame (process name) '%s'", ro->from, ro->to,
				   files[0], ro->from);
			return NULL;
		}
		return reroot(agg, p, from, sp_str_intern(p, ro->to, strlen(ro->to)));
	}
	uint32_t a = single_root(agg, p, &ri[0], 0), b = single_root(agg, p, &ri[1], 1);
	if (a && b && a != b) {
		sp_buf_addf(msg, "matched the roots: %s's process '%s' as %s's '%s' (--roots=keep keeps them apart)\n",
			    files[0], sp_str(p, a), files[1], sp_str(p, b));
		return reroot(agg, p, a, b);
	}
	/* No root in common: every stack differs, which is seldom meant. */
	struct sp_u64map rb;
	sp_u64map_init(&rb);
	int any_a = 0, any_b = 0, common = 0;
	for (int side = 1; side >= 0; side--)
		for (size_t i = 0; i < sp_agg_count(agg); i++) {
			uint32_t t, node;
			const double *v = sp_agg_get(agg, i, &t, &node);
			if (!v[side])
				continue;
			int found;
			uint32_t r = entry_root(p, t, node);
			if (side) {
				any_b = 1;
				sp_u64map_slot(&rb, r, &found);
			} else {
				any_a = 1;
				sp_u64map_get(&rb, r, &found);
				common |= found;
			}
		}
	if (any_a && any_b && !common)
		sp_buf_addf(msg, "no root frame (process name) of %s is in %s: every stack differs "
				 "(--roots=drop compares them without, --roots=FROM=TO matches two)\n",
			    files[0], files[1]);
	sp_u64map_release(&rb);
	return agg;
}

int sp_diff_run(const struct sp_diff_opts *o, char **files, int nfiles, FILE *out, struct sp_buf *msg,
		double *change, struct sp_err *err)
{
	int rc = -1;
	struct sp_source *src[2] = { NULL, NULL };
	struct sp_profile *p = sp_profile_new(), *scratch = NULL;
	struct sp_agg *agg = sp_agg_new(p, 2);
	struct dsink d;
	memset(&d, 0, sizeof d);
	d.sink.sample = d_sample;
	d.sink.trace = d_trace;
	d.p = p;
	d.agg = agg;
	d.weight = o->weight;
	int split = o->split_func != NULL;
	for (int i = 0; i < nfiles && i < 2; i++)
		if (!(src[i] = sp_source_open(files[i], split, err)))
			goto out;
	const struct sp_format *fmt = NULL;
	for (int i = 0; i < nfiles && i < 2 && !fmt; i++)
		if (sp_source_format(src[i], o->format, &fmt, err) < 0)
			goto out;
	int binary = sp_output_kind(o->output, fmt) == SP_OUT_BINARY;
	if ((o->strip_hex || !o->keep_suffixes) && !(d.f = name_filter(p, o->strip_hex, o->keep_suffixes, err)))
		goto out;
	double scale = 1;
	if (split) {
		struct sp_read_opts quiet = *o->read;
		quiet.warn = NULL;
		d.calls = sp_calls_new(o->split_func, o->split_pct);
		sp_calls_set_gap(d.calls, o->max_gap);
		sp_calls_set_cpu(d.calls, o->cpu_time);
		scratch = sp_profile_new();
		d.p = scratch;
		d.scan = 1;
		if (read_side(&d, src[0], o, &quiet, err) < 0)
			goto out;
		d.scan = 0;
		d.learning = 1;
		sp_calls_begin(d.calls, scratch, 1);
		if (read_side(&d, src[0], o, &quiet, err) < 0 || sp_calls_end(d.calls, on_split, &d, err) < 0)
			goto out;
		if (!sp_calls_stats(d.calls)->calls) {
			sp_err_set(err, "%s: no calls of %s found (no sample has it on its stack)", files[0],
				   o->split_func);
			goto out;
		}
		d.learning = 0;
		d.p = p;
		d.col = 0;
		sp_calls_begin(d.calls, p, 0);
		if (read_side(&d, src[0], o, o->read, err) < 0 || sp_calls_end(d.calls, on_split, &d, err) < 0)
			goto out;
		if (!o->quiet) {
			sp_calls_describe(d.calls, o->split_func, msg);
			sp_buf_addc(msg, '\n');
		}
		double ta = sp_agg_total(agg, 0), tb = sp_agg_total(agg, 1);
		if (ta > 0 && tb > 0)
			scale = tb / ta;
	} else {
		for (int i = 0; i < 2; i++) {
			d.side = i;
			if (read_side(&d, src[i], o, o->read, err) < 0)
				goto out;
		}
		if (!(agg = match_roots(agg, p, d.root, &o->roots, files, msg, err)))
			goto out;
		double ta = sp_agg_total(agg, 0), tb = sp_agg_total(agg, 1);
		if (o->normalize && ta > 0)
			scale = tb / ta;
	}
	if (change)
		*change = sp_report_max_change(agg);
	const char *ua = d.have_unit[0] ? d.unit[0] : "samples";
	const char *ub = split ? ua : d.have_unit[1] ? d.unit[1] : "samples";
	if (o->report) {
		struct sp_report_opts ro = o->ropts;
		ro.unit = ua;
		ro.unit_b = ub;
		if (sp_report_diff(agg, &ro, out, NULL, err) < 0)
			goto out;
	} else {
		if (write_diff(agg, p, binary, scale, o->normalize && !split, out, ua, ub, err) < 0)
			goto out;
	}
	rc = 0;
out:
	sp_source_free(src[0]);
	sp_source_free(src[1]);
	sp_filter_free(d.f);
	sp_calls_free(d.calls);
	sp_agg_free(agg);
	sp_profile_free(scratch);
	sp_profile_free(p);
	return rc;
}

/* ---- pmerge ---- */

/* Time order across binary inputs: every input is read in turn into the
 * one profile (so its ids are remapped and tagged as usual), but its
 * samples and trace events are spilled, as fixed-size records, to one
 * unlinked temporary file, one segment per input; then the segments are
 * merged by timestamp (a heap of one cursor per segment, each with a small
 * read buffer) into the output.  Memory: distinct stacks plus a bounded
 * buffer per input; the records go to disk, not to memory.  Each input is
 * taken to be in time order, as pcollect and pfold -b write them (one that
 * is not keeps its own order, and a note says so).  A record without a
 * timestamp keeps its place after its input's previous record.
 * A sample record has the fixed size rsz; a trace record carries all of
 * sp_trace (call id, flags, recorded values) in trace_rec_len bytes:
 *   0 type, 4 kind, 8 frame, 12 thread, 20 stack, 24 time, 32 call,
 *   40 flags, 44 nvalues, 48 vname[nvalues] (4 each), then value[] (8). */
enum { REC_SAMPLE = 1, REC_TRACE = 2 };
enum { TRACE_HEAD = 48, TRACE_MAX = TRACE_HEAD + 12 * SP_TRACE_VALUES + 4 };

static size_t trace_rec_len(uint32_t nvalues)
{
	return (TRACE_HEAD + 12 * (size_t)nvalues + 7) & ~(size_t)7;
}

struct spill {
	int fd;
	uint64_t len;    /* bytes written so far */
	struct sp_buf buf;
	size_t rsz;      /* record size, fixed once the value columns are known */
	int nv;
	uint64_t *seg;   /* segment i: [seg[i], seg[i + 1]) */
	size_t nseg, capseg;
	uint64_t last;   /* time of the current input's previous record */
	int unordered;   /* the current input went back in time */
};

static int spill_flush(struct spill *sp, struct sp_err *err)
{
	size_t off = 0;
	while (off < sp->buf.len) {
		ssize_t w = write(sp->fd, sp->buf.p + off, sp->buf.len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return sp_err_set(err, "writing a temporary file: %s", strerror(errno));
		off += (size_t)w;
	}
	sp->len += sp->buf.len;
	sp_buf_reset(&sp->buf);
	return 0;
}

static int spill_add(struct spill *sp, struct sp_profile *p, int type, const void *rec, struct sp_err *err)
{
	if (!sp->rsz) {
		sp->nv = sp_profile_nvalues(p);
		sp->rsz = 24 + 8 * (size_t)(sp->nv > 0 ? sp->nv : 1);
		if (sp->rsz < 32)
			sp->rsz = 32;
	}
	uint8_t r[24 + 8 * SP_MAX_VALUES > TRACE_MAX ? 24 + 8 * SP_MAX_VALUES : TRACE_MAX];
	size_t len = sp->rsz;
	memset(r, 0, sizeof r);
	uint32_t t32 = (uint32_t)type;
	memcpy(r, &t32, 4);
	uint64_t time;
	if (type == REC_SAMPLE) {
		const struct sp_sample *smp = rec;
		memcpy(r + 4, &smp->stack, 4);
		memcpy(r + 8, &smp->thread, 4);
		memcpy(r + 12, &smp->event, 4);
		time = smp->time;
		memcpy(r + 24, smp->values, 8 * (size_t)sp->nv);
	} else {
		const struct sp_trace *t = rec;
		memcpy(r + 4, &t->kind, 4);
		memcpy(r + 8, &t->frame, 4);
		memcpy(r + 12, &t->thread, 4);
		memcpy(r + 20, &t->stack, 4);
		time = t->time;
		uint32_t nv = t->nvalues > SP_TRACE_VALUES ? SP_TRACE_VALUES : t->nvalues;
		memcpy(r + 32, &t->call, 8);
		memcpy(r + 40, &t->flags, 4);
		memcpy(r + 44, &nv, 4);
		memcpy(r + TRACE_HEAD, t->vname, 4 * (size_t)nv);
		memcpy(r + TRACE_HEAD + 4 * nv, t->value, 8 * (size_t)nv);
		len = trace_rec_len(nv);
	}
	/* a sample's time at 16 (its values from 24); a trace's at 24 */
	memcpy(r + (type == REC_SAMPLE ? 16 : 24), &time, 8);
	if (time != SP_NO_TIME) {
		if (time < sp->last)
			sp->unordered = 1;
		sp->last = time;
	}
	sp_buf_add(&sp->buf, r, len);
	return sp->buf.len >= (1u << 16) ? spill_flush(sp, err) : 0;
}

struct cursor {
	uint64_t off, end;   /* next unread byte of the segment, its end */
	uint8_t *buf;
	size_t pos, n;       /* records buffered: bytes [pos, n) */
	uint64_t key;        /* time of the record at pos */
	uint32_t seg;
};

/* Refill c's buffer after the bytes [pos, n) it still holds (the start of
 * a record), which move to its front. */
static int cursor_fill(struct spill *sp, struct cursor *c, size_t cap, struct sp_err *err)
{
	size_t keep = c->n - c->pos;
	memmove(c->buf, c->buf + c->pos, keep);
	size_t room = cap - keep;
	size_t want = c->end - c->off < room ? (size_t)(c->end - c->off) : room;
	size_t got = 0;
	while (got < want) {
		ssize_t r = pread(sp->fd, c->buf + keep + got, want - got, (off_t)(c->off + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return sp_err_set(err, "reading a temporary file: %s", r < 0 ? strerror(errno) : "short read");
		got += (size_t)r;
	}
	c->off += got;
	c->pos = 0;
	c->n = keep + got;
	return 0;
}

/* Bytes of the record at r, of which avail are at hand (0: not enough to
 * tell yet). */
static size_t rec_len(const struct spill *sp, const uint8_t *r, size_t avail)
{
	uint32_t type, nv;
	if (avail < 4)
		return 0;
	memcpy(&type, r, 4);
	if (type == REC_SAMPLE)
		return sp->rsz;
	if (avail < TRACE_HEAD)
		return 0;
	memcpy(&nv, r + 44, 4);
	return trace_rec_len(nv);
}

/* Make the record at c->pos whole in the buffer.  Returns 1 when there is
 * one, 0 at the segment's end, -1 with err set. */
static int cursor_ready(struct spill *sp, struct cursor *c, size_t cap, struct sp_err *err)
{
	for (;;) {
		size_t avail = c->n - c->pos, need = rec_len(sp, c->buf + c->pos, avail);
		if (need && need <= avail)
			return 1;
		if (c->off >= c->end) {
			if (avail)
				return sp_err_set(err, "reading a temporary file: a record cut short");
			return 0;
		}
		if (cursor_fill(sp, c, cap, err) < 0)
			return -1;
	}
}

static uint64_t rec_time(const uint8_t *r)
{
	uint32_t type;
	uint64_t t;
	memcpy(&type, r, 4);
	memcpy(&t, r + (type == REC_SAMPLE ? 16 : 24), 8);
	return t;
}

static int cur_less(const struct cursor *a, const struct cursor *b)
{
	return a->key != b->key ? a->key < b->key : a->seg < b->seg;
}

static void heap_down(struct cursor **h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < n && cur_less(h[l], h[m]))
			m = l;
		if (r < n && cur_less(h[r], h[m]))
			m = r;
		if (m == i)
			return;
		struct cursor *t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

/* The key of the record at c->pos: its time, or (no time) the key before. */
static void cursor_key(struct cursor *c)
{
	uint64_t t = rec_time(c->buf + c->pos);
	if (t != SP_NO_TIME)
		c->key = t;
}

static int spill_merge(struct spill *sp, struct sp_profile *p, struct sp_sink *out, struct sp_err *err)
{
	if (spill_flush(sp, err) < 0)
		return -1;
	size_t k = sp->nseg, nh = 0;
	if (!sp->rsz || !k)
		return 0;
	/* 4 MiB of buffers in all, at least 16 records each. */
	size_t cap = ((4u << 20) / k) / sp->rsz * sp->rsz;
	if (cap < 16 * sp->rsz)
		cap = 16 * sp->rsz;
	if (cap < 16 * (size_t)TRACE_MAX)
		cap = 16 * (size_t)TRACE_MAX;
	struct cursor *cs = sp_xcalloc(k, sizeof *cs);
	struct cursor **h = sp_xcalloc(k, sizeof *h);
	int rc = 0;
	for (size_t i = 0; i < k && !rc; i++) {
		cs[i].off = sp->seg[i];
		cs[i].end = i + 1 < k ? sp->seg[i + 1] : sp->len;
		cs[i].seg = (uint32_t)i;
		if (cs[i].off == cs[i].end)
			continue;
		cs[i].buf = sp_xmalloc(cap);
		if ((rc = cursor_ready(sp, &cs[i], cap, err)) <= 0) {
			if (rc == 0)
				continue;
			break;
		}
		rc = 0;
		cs[i].key = 0;
		cursor_key(&cs[i]);
		h[nh++] = &cs[i];
	}
	for (size_t i = nh / 2; i-- > 0;)
		heap_down(h, nh, i);
	while (!rc && nh) {
		struct cursor *c = h[0];
		const uint8_t *r = c->buf + c->pos;
		uint32_t type;
		memcpy(&type, r, 4);
		if (type == REC_SAMPLE) {
			struct sp_sample smp;
			memset(&smp, 0, sizeof smp);
			memcpy(&smp.stack, r + 4, 4);
			memcpy(&smp.thread, r + 8, 4);
			memcpy(&smp.event, r + 12, 4);
			memcpy(&smp.time, r + 16, 8);
			memcpy(smp.values, r + 24, 8 * (size_t)sp->nv);
			rc = out->sample(out, p, &smp, err);
		} else if (out->trace) {
			struct sp_trace t;
			memset(&t, 0, sizeof t);
			memcpy(&t.kind, r + 4, 4);
			memcpy(&t.frame, r + 8, 4);
			memcpy(&t.thread, r + 12, 4);
			memcpy(&t.stack, r + 20, 4);
			memcpy(&t.time, r + 24, 8);
			memcpy(&t.call, r + 32, 8);
			memcpy(&t.flags, r + 40, 4);
			memcpy(&t.nvalues, r + 44, 4);
			memcpy(t.vname, r + TRACE_HEAD, 4 * (size_t)t.nvalues);
			memcpy(t.value, r + TRACE_HEAD + 4 * t.nvalues, 8 * (size_t)t.nvalues);
			rc = out->trace(out, p, &t, err);
		}
		if (rc < 0)
			break;
		c->pos += rec_len(sp, r, c->n - c->pos);
		if ((rc = cursor_ready(sp, c, cap, err)) <= 0) {
			if (rc < 0)
				break;
			rc = 0;
			h[0] = h[--nh]; /* this input is done */
			heap_down(h, nh, 0);
			continue;
		}
		rc = 0;
		cursor_key(c);
		heap_down(h, nh, 0);
	}
	for (size_t i = 0; i < k; i++)
		free(cs[i].buf);
	free(cs);
	free(h);
	return rc;
}

struct msink {
	struct sp_sink sink;
	struct sp_sink *out;
	struct spill *spill;   /* time order: records go here first */
	const struct sp_merge_opts *o;
	const char *name;
	size_t meta_at;        /* metadata of this input starts here */
	uint32_t tag;          /* tag frame, 0 = not yet */
	struct sp_u64map memo; /* node -> tagged node + 1, for this input */
	uint32_t *frames;
	size_t capf;
	/* --roots: drop (from == 0) or rename root from to to (string ids) */
	int reroot;
	uint32_t from, to;
	struct sp_u64map rememo; /* node -> rerooted node + 1 */
	uint64_t rerooted;       /* samples whose root was changed */
};

static uint32_t tag_frame(struct msink *m, struct sp_profile *p)
{
	if (m->tag)
		return m->tag;
	const char *name = m->name;
	for (size_t i = m->meta_at; i < sp_meta_count(p); i++) {
		const struct sp_meta *mt = sp_meta_get(p, i);
		if (!strcmp(sp_str(p, mt->key), "host") && sp_str_len(p, mt->value))
			name = sp_str(p, mt->value);
	}
	m->tag = sp_frame_named(p, name, strlen(name), SP_KIND_SYNTHETIC);
	return m->tag;
}

static uint32_t tagged(struct msink *m, struct sp_profile *p, uint32_t node)
{
	int found;
	uint32_t v = sp_u64map_get(&m->memo, node, &found);
	if (found)
		return v - 1;
	uint32_t n = sp_node_intern(p, 0, tag_frame(m, p));
	uint32_t d = sp_node_frames(p, node, &m->frames, &m->capf);
	for (uint32_t i = 0; i < d; i++)
		n = sp_node_intern(p, n, m->frames[i]);
	*sp_u64map_slot(&m->memo, node, &found) = n + 1;
	return n;
}

/* The stack node without its first frame (drop), or with its first frame
 * renamed when it is m->from; node itself otherwise. */
static uint32_t rerooted_node(struct msink *m, struct sp_profile *p, uint32_t node)
{
	int found;
	uint32_t v = sp_u64map_get(&m->rememo, node, &found);
	if (found)
		return v - 1;
	uint32_t n = node;
	if (node && (!m->from || entry_root(p, 0, node) == m->from))
		n = node_reroot(p, node, m->from ? m->to : 0, &m->frames, &m->capf);
	*sp_u64map_slot(&m->rememo, node, &found) = n + 1;
	return n;
}

/* --roots on one sample: a thread's name is its root (as in folded text),
 * else the stack's first frame. */
static void reroot_sample(struct msink *m, struct sp_profile *p, struct sp_sample *t)
{
	if (t->thread) {
		const struct sp_thread *th = sp_thread_get(p, t->thread);
		if (!m->from) {
			t->thread = 0;
			m->rerooted++;
		} else if (th->name == m->from) {
			t->thread = sp_thread_intern(p, th->pid, th->tid, m->to);
			m->rerooted++;
		}
		return;
	}
	uint32_t n = rerooted_node(m, p, t->stack);
	m->rerooted += n != t->stack;
	t->stack = n;
}

static int m_sample(struct sp_sink *s, struct sp_profile *p, const struct sp_sample *smp, struct sp_err *err)
{
	struct msink *m = (struct msink *)s;
	struct sp_sample t = *smp;
	if (m->reroot)
		reroot_sample(m, p, &t);
	if (m->o->tag)
		t.stack = tagged(m, p, smp->stack);
	if (m->spill)
		return spill_add(m->spill, p, REC_SAMPLE, &t, err);
	return m->out->sample(m->out, p, &t, err);
}

static int m_trace(struct sp_sink *s, struct sp_profile *p, const struct sp_trace *t, struct sp_err *err)
{
	struct msink *m = (struct msink *)s;
	if (!m->out->trace)
		return 0;
	struct sp_trace c = *t;
	if (m->o->tag && c.stack)
		c.stack = tagged(m, p, c.stack);
	if (m->spill)
		return spill_add(m->spill, p, REC_TRACE, &c, err);
	return m->out->trace(m->out, p, &c, err);
}

static int m_meta(struct sp_sink *s, struct sp_profile *p, struct sp_err *err)
{
	struct msink *m = (struct msink *)s;
	return m->out->meta ? m->out->meta(m->out, p, err) : 0;
}

int sp_merge_run(const struct sp_merge_opts *o, char **files, int nfiles, FILE *out, struct sp_err *err)
{
	int rc = -1;
	struct sp_profile *p = sp_profile_new();
	struct sp_writer *w = NULL;
	struct msink m;
	memset(&m, 0, sizeof m);
	struct spill sp;
	memset(&sp, 0, sizeof sp);
	sp.fd = -1;
	m.sink.sample = m_sample;
	m.sink.trace = m_trace;
	m.sink.meta = m_meta;
	m.o = o;
	sp_u64map_init(&m.rememo);
	if (o->roots.mode == SP_ROOTS_DROP || o->roots.mode == SP_ROOTS_MAP) {
		m.reroot = 1;
		if (o->roots.mode == SP_ROOTS_MAP) {
			m.from = sp_str_intern(p, o->roots.from, strlen(o->roots.from));
			m.to = sp_str_intern(p, o->roots.to, strlen(o->roots.to));
		}
	}
	/* The first input that is not empty decides the output encoding;
	 * only it is opened ahead (inputs are read one at a time). */
	const struct sp_format *fmt = NULL;
	struct sp_source *first = NULL;
	int i0 = 0;
	for (; i0 < nfiles && !fmt; i0++) {
		sp_source_free(first);
		if (!(first = sp_source_open(files[i0], 0, err)) || sp_source_format(first, o->format, &fmt, err) < 0)
			goto out;
	}
	i0--;
	int binary = sp_output_kind(o->output, fmt) == SP_OUT_BINARY;
	if (!(w = sp_writer_open(binary ? SP_OUT_BINARY : SP_OUT_FOLDED, out, p, NULL, SP_WRITER_NO_TTY, err)))
		goto out;
	m.out = sp_writer_sink(w);
	if (binary && nfiles - i0 > 1) {
		/* Several inputs into a stream: merged in time order (above). */
		if ((sp.fd = sp_tmpfile("the time-ordered merge", err)) < 0)
			goto out;
		m.spill = &sp;
	}
	for (int i = i0; i < nfiles; i++) {
		struct sp_source *s = i == i0 ? first : sp_source_open(files[i], 0, err);
		if (i == i0)
			first = NULL;
		if (!s)
			goto out;
		m.name = files[i];
		m.meta_at = sp_meta_count(p);
		m.tag = 0;
		if (m.spill) {
			if (sp.nseg == sp.capseg) {
				sp.capseg = sp.capseg ? 2 * sp.capseg : 64;
				sp.seg = sp_xrealloc(sp.seg, sp.capseg * sizeof *sp.seg);
			}
			sp.seg[sp.nseg++] = sp.len + sp.buf.len;
			sp.last = 0;
			sp.unordered = 0;
		}
		sp_u64map_init(&m.memo);
		int r = sp_source_read(s, o->format, p, &m.sink, o->read, err);
		sp_u64map_release(&m.memo);
		sp_source_free(s);
		if (r < 0)
			goto out;
		if (m.spill && sp.unordered && o->read && o->read->warn) {
			struct sp_err note;
			sp_err_set(&note, "%s is not in time order: its records keep their own order in the merge",
				   files[i]);
			o->read->warn(o->read->warn_ctx, &note);
		}
		if (sp_writer_flush(w, err) < 0)
			goto out;
	}
	if (m.from && !m.rerooted) {
		sp_err_set(err, "--roots=%s=%s: no input has the root frame (process name) '%s'", o->roots.from,
			   o->roots.to, o->roots.from);
		goto out;
	}
	if (m.spill && spill_merge(&sp, p, m.out, err) < 0)
		goto out;
	if (sp_writer_finish(w, err) < 0)
		goto out;
	rc = 0;
out:
	if (sp.fd >= 0)
		close(sp.fd);
	sp_buf_release(&sp.buf);
	free(sp.seg);
	sp_source_free(first);
	free(m.frames);
	sp_u64map_release(&m.rememo);
	sp_writer_free(w);
	sp_profile_free(p);
	return rc;
}
