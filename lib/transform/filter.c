/* filter.c — stack transforms, sample selection, rereadable inputs and
 * pfilter's passes (see filter.h). */
#include "filter.h"

#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "calls.h"
#include "fold.h"

/* sp_buf_add with nothing to add may pass NULL to memcpy (undefined). */
static inline void buf_add(struct sp_buf *b, const void *p, size_t n)
{
	if (n)
		sp_buf_add(b, p, n);
}
static inline SP_UNUSED void buf_adds(struct sp_buf *b, const char *s) { buf_add(b, s, strlen(s)); }

/* ---- inputs ---- */

struct sp_source {
	char *path;
	int fd;                     /* spooled copy of a pipe, or -1 */
	struct sp_input *in;        /* opened (maybe probed), not read yet */
	const struct sp_format *fmt;
	int have_fmt;
};

static int spool(struct sp_source *s, struct sp_err *err)
{
	struct sp_buf why = SP_BUF_INIT;
	sp_buf_addf(&why, "reading %s twice", s->path);
	int fd = sp_tmpfile(sp_buf_cstr(&why), err);
	sp_buf_release(&why);
	if (fd < 0)
		return -1;
	int in = 0;
	if (strcmp(s->path, "-") && (in = open(s->path, O_RDONLY | O_CLOEXEC)) < 0) {
		close(fd);
		return sp_err_set(err, "%s: %s", s->path, strerror(errno));
	}
	static char buf[1 << 16];
	for (;;) {
		ssize_t r = read(in, buf, sizeof buf);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			sp_err_set(err, "%s: %s", s->path, strerror(errno));
			goto fail;
		}
		if (!r)
			break;
		for (ssize_t off = 0; off < r;) {
			ssize_t w = write(fd, buf + off, (size_t)(r - off));
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				sp_err_set(err, "%s: cannot copy to a temporary file: %s", s->path,
					   w < 0 ? strerror(errno) : "short write");
				goto fail;
			}
			off += w;
		}
	}
	if (in)
		close(in);
	s->fd = fd;
	return 0;
fail:
	if (in)
		close(in);
	close(fd);
	return -1;
}

struct sp_source *sp_source_open(const char *path, int rereadable, struct sp_err *err)
{
	struct sp_source *s = sp_xcalloc(1, sizeof *s);
	s->path = sp_xstrndup(path, strlen(path));
	s->fd = -1;
	struct stat st;
	if (strcmp(path, "-")) {
		if (stat(path, &st) < 0) {
			sp_err_set(err, "%s: %s", path, strerror(errno));
			goto fail;
		}
		if (S_ISDIR(st.st_mode)) {
			sp_err_set(err, "%s: is a directory", path);
			goto fail;
		}
	}
	if (rereadable && (!strcmp(path, "-") || !S_ISREG(st.st_mode)) && spool(s, err) < 0)
		goto fail;
	return s;
fail:
	sp_source_free(s);
	return NULL;
}

void sp_source_free(struct sp_source *s)
{
	if (!s)
		return;
	sp_input_close(s->in);
	if (s->fd >= 0)
		close(s->fd);
	free(s->path);
	free(s);
}

const char *sp_source_name(const struct sp_source *s) { return s->path; }

static int source_input(struct sp_source *s, struct sp_err *err)
{
	if (s->in)
		return 0;
	if (s->fd >= 0) {
		if (lseek(s->fd, 0, SEEK_SET) < 0)
			return sp_err_set(err, "%s: %s", s->path, strerror(errno));
		s->in = sp_input_fd(s->fd, s->path, 0, 0);
		return 0;
	}
	s->in = sp_input_open(s->path, err);
	return s->in ? 0 : -1;
}

int sp_source_format(struct sp_source *s, const char *format, const struct sp_format **fmt, struct sp_err *err)
{
	if (s->have_fmt) {
		*fmt = s->fmt;
		return 0;
	}
	*fmt = NULL;
	if (source_input(s, err) < 0 || sp_input_check_empty(s->in, err) < 0)
		return -1;
	if (format) {
		s->fmt = sp_format_find(format);
		if (!s->fmt)
			return sp_err_set(err, "unknown format '%s' (known: %s)", format, sp_format_names());
	} else {
		s->fmt = sp_format_probe(s->in);
		if (!s->fmt)
			return sp_err_set(err, "%s: cannot tell the input format (known: %s; choose with -f)",
					  s->path, sp_format_names());
	}
	s->have_fmt = 1;
	*fmt = s->fmt;
	return 0;
}

int sp_source_read(struct sp_source *s, const char *format, struct sp_profile *p, struct sp_sink *sink,
		   struct sp_read_opts *o, struct sp_err *err)
{
	const struct sp_format *fmt;
	if (sp_source_format(s, format, &fmt, err) < 0)
		return -1;
	if (source_input(s, err) < 0)
		return -1;
	int rc = fmt ? fmt->read(s->in, p, sink, o, err) : 0;
	sp_input_close(s->in);
	s->in = NULL;
	return rc;
}

/* ---- the stack filter ---- */

enum { M_GREP = 1, M_FOCUS = 2, M_EXCLUDE = 4, M_HIDE = 8, M_PRUNE = 16, M_DONE = 128 };

struct repl {
	regex_t re;
	char *to;
	int global;
};

struct rxlist {
	regex_t *re;
	size_t n;
};

struct sp_filter {
	struct sp_profile *p;
	struct sp_filter_opts o;
	struct rxlist lists[5]; /* grep, focus, exclude, hide, prune: bit 1 << i */
	struct repl *repl;
	size_t nrepl;
	regex_t thread_re;
	int has_thread_re, select_threads, active;
	uint32_t *renamed; /* frame -> renamed frame + 1 */
	size_t nrenamed;
	uint8_t *bits;     /* frame -> M_* | M_DONE */
	size_t nbits;
	uint32_t *out;     /* node -> 0 unknown, 1 drop, else new node + 2 */
	size_t nout;
	uint8_t *tkeep;    /* thread -> 0 unknown, 1 drop, 2 keep */
	size_t ntkeep;
	uint8_t *rkeep;    /* node (threadless samples) -> same */
	size_t nrkeep;
	uint32_t *fr;
	size_t capfr;
	struct sp_buf b1, b2;
};

/* A fixed string as an extended regex. */
static void escape_fixed(struct sp_buf *b, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (strchr(".[]()*+?{}|^$\\", s[i]))
			sp_buf_addc(b, '\\');
		sp_buf_addc(b, s[i]);
	}
}

static int compile(regex_t *re, const char *opt, const char *pat, size_t n, int fixed, int icase, int nosub,
		   struct sp_err *err)
{
	struct sp_buf b = SP_BUF_INIT;
	if (fixed)
		escape_fixed(&b, pat, n);
	else
		buf_add(&b, pat, n);
	int rc = regcomp(re, sp_buf_cstr(&b), REG_EXTENDED | (icase ? REG_ICASE : 0) | (nosub ? REG_NOSUB : 0));
	sp_buf_release(&b);
	if (rc) {
		char msg[200];
		regerror(rc, re, msg, sizeof msg);
		return sp_err_set(err, "%s: bad regular expression '%.*s': %s", opt, (int)n, pat, msg);
	}
	return 0;
}

/* "s/RE/REPL/[gi]" with any delimiter; "\DELIM" stands for DELIM. */
static int parse_replace(struct repl *r, const char *prog, int fixed, int icase, struct sp_err *err)
{
	size_t n = strlen(prog);
	if (n < 4 || prog[0] != 's' || prog[1] == '\\' || prog[1] == '\n')
		return sp_err_set(err, "--replace: expected s/REGEX/REPLACEMENT/[gi], not '%s'", prog);
	char d = prog[1];
	struct sp_buf part[2] = { SP_BUF_INIT, SP_BUF_INIT };
	size_t i = 2;
	for (int k = 0; k < 2; k++) {
		for (; i < n && prog[i] != d; i++) {
			if (prog[i] == '\\' && i + 1 < n && prog[i + 1] == d)
				i++;
			else if (prog[i] == '\\' && i + 1 < n) {
				sp_buf_addc(&part[k], prog[i++]);
			}
			sp_buf_addc(&part[k], prog[i]);
		}
		if (i >= n) {
			sp_buf_release(&part[0]);
			sp_buf_release(&part[1]);
			return sp_err_set(err, "--replace: expected s/REGEX/REPLACEMENT/[gi], not '%s'", prog);
		}
		i++;
	}
	for (; i < n; i++) {
		if (prog[i] == 'g')
			r->global = 1;
		else if (prog[i] == 'i')
			icase = 1;
		else {
			sp_buf_release(&part[0]);
			sp_buf_release(&part[1]);
			return sp_err_set(err, "--replace: unknown flag '%c' in '%s' (known: g, i)", prog[i], prog);
		}
	}
	int rc = compile(&r->re, "--replace", part[0].p ? part[0].p : "", part[0].len, fixed, icase, 0, err);
	if (!rc && !part[0].len) {
		regfree(&r->re);
		rc = sp_err_set(err, "--replace: empty regular expression in '%s'", prog);
	}
	if (rc) {
		sp_buf_release(&part[0]);
		sp_buf_release(&part[1]);
		return -1;
	}
	if (fixed) { /* a fixed replacement: escape & and backslashes */
		struct sp_buf t = SP_BUF_INIT;
		for (size_t j = 0; j < part[1].len; j++) {
			if (part[1].p[j] == '&' || part[1].p[j] == '\\')
				sp_buf_addc(&t, '\\');
			sp_buf_addc(&t, part[1].p[j]);
		}
		sp_buf_release(&part[1]);
		part[1] = t;
	}
	r->to = sp_xstrndup(part[1].p ? part[1].p : "", part[1].len);
	sp_buf_release(&part[0]);
	sp_buf_release(&part[1]);
	return 0;
}

/* sed's replacement: & = the match, \1..\9 = groups, \\ and \& literal. */
static void apply_replace(const struct repl *r, const char *s, struct sp_buf *out)
{
	size_t len = strlen(s), pos = 0;
	regmatch_t m[10];
	sp_buf_reset(out);
	while (pos <= len) {
		if (regexec(&r->re, s + pos, 10, m, pos ? REG_NOTBOL : 0))
			break;
		buf_add(out, s + pos, (size_t)m[0].rm_so);
		for (const char *t = r->to; *t; t++) {
			if (*t == '&') {
				buf_add(out, s + pos + m[0].rm_so, (size_t)(m[0].rm_eo - m[0].rm_so));
			} else if (*t == '\\' && t[1] >= '0' && t[1] <= '9') {
				int g = *++t - '0';
				if (m[g].rm_so >= 0)
					buf_add(out, s + pos + m[g].rm_so, (size_t)(m[g].rm_eo - m[g].rm_so));
			} else if (*t == '\\' && t[1]) {
				sp_buf_addc(out, *++t);
			} else {
				sp_buf_addc(out, *t);
			}
		}
		size_t end = pos + (size_t)m[0].rm_eo;
		if (m[0].rm_eo == m[0].rm_so) { /* empty match: step over one byte */
			if (end < len)
				sp_buf_addc(out, s[end]);
			end++;
		}
		pos = end;
		if (!r->global)
			break;
	}
	if (pos < len)
		buf_add(out, s + pos, len - pos);
}

struct sp_filter *sp_filter_new(struct sp_profile *p, const struct sp_filter_opts *o, struct sp_err *err)
{
	static const char *const names[5] = { "-e", "--focus", "--exclude", "--hide", "--prune-below" };
	struct sp_filter *f = sp_xcalloc(1, sizeof *f);
	f->p = p;
	f->o = *o;
	const char *const *pats[5] = { o->grep, o->focus, o->exclude, o->hide, o->prune };
	size_t npats[5] = { o->ngrep, o->nfocus, o->nexclude, o->nhide, o->nprune };
	for (int k = 0; k < 5; k++) {
		f->lists[k].re = sp_xcalloc(npats[k] ? npats[k] : 1, sizeof(regex_t));
		for (size_t i = 0; i < npats[k]; i++) {
			if (compile(&f->lists[k].re[i], names[k], pats[k][i], strlen(pats[k][i]), o->fixed, o->icase, 1,
				    err) < 0)
				goto fail;
			f->lists[k].n++;
		}
	}
	f->repl = sp_xcalloc(o->nreplace ? o->nreplace : 1, sizeof *f->repl);
	for (size_t i = 0; i < o->nreplace; i++) {
		if (parse_replace(&f->repl[i], o->replace[i], o->fixed, o->icase, err) < 0)
			goto fail;
		f->nrepl++;
	}
	if (o->thread) {
		if (compile(&f->thread_re, "--thread", o->thread, strlen(o->thread), o->fixed, o->icase, 1, err) < 0)
			goto fail;
		f->has_thread_re = 1;
	}
	f->select_threads = f->has_thread_re || o->pid >= 0 || o->tid >= 0;
	f->active = f->select_threads || o->nreplace || o->ngrep || o->nfocus || o->nexclude || o->nhide ||
		    o->nprune || o->max_depth || o->collapse || o->invert;
	return f;
fail:
	sp_filter_free(f);
	return NULL;
}

void sp_filter_free(struct sp_filter *f)
{
	if (!f)
		return;
	for (int k = 0; k < 5; k++) {
		for (size_t i = 0; i < f->lists[k].n; i++)
			regfree(&f->lists[k].re[i]);
		free(f->lists[k].re);
	}
	for (size_t i = 0; i < f->nrepl; i++) {
		regfree(&f->repl[i].re);
		free(f->repl[i].to);
	}
	free(f->repl);
	if (f->has_thread_re)
		regfree(&f->thread_re);
	free(f->renamed);
	free(f->bits);
	free(f->out);
	free(f->tkeep);
	free(f->rkeep);
	free(f->fr);
	sp_buf_release(&f->b1);
	sp_buf_release(&f->b2);
	free(f);
}

int sp_filter_active(const struct sp_filter *f) { return f->active; }

static uint32_t rename_frame(struct sp_filter *f, uint32_t id)
{
	if (!f->nrepl)
		return id;
	f->renamed = sp_xgrow0(f->renamed, &f->nrenamed, id, sizeof *f->renamed);
	if (f->renamed[id])
		return f->renamed[id] - 1;
	struct sp_frame fr = *sp_frame_get(f->p, id);
	struct sp_buf *cur = &f->b1, *next = &f->b2;
	sp_buf_reset(cur);
	buf_add(cur, sp_str(f->p, fr.name), sp_str_len(f->p, fr.name));
	for (size_t i = 0; i < f->nrepl; i++) {
		apply_replace(&f->repl[i], sp_buf_cstr(cur), next);
		struct sp_buf *t = cur;
		cur = next;
		next = t;
	}
	uint32_t to = id;
	if (cur->len != sp_str_len(f->p, fr.name) || memcmp(cur->p, sp_str(f->p, fr.name), cur->len)) {
		/* A renamed frame stands for whatever got the same name: it
		 * keeps its kind and module, not its address or source line. */
		fr.name = sp_str_intern(f->p, cur->p ? cur->p : "", cur->len);
		fr.file = 0;
		fr.line = 0;
		fr.addr = 0;
		to = sp_frame_intern(f->p, &fr);
	}
	/* The table may have moved while interning. */
	f->renamed = sp_xgrow0(f->renamed, &f->nrenamed, id, sizeof *f->renamed);
	f->renamed[id] = to + 1;
	return to;
}

static unsigned frame_bits(struct sp_filter *f, uint32_t id)
{
	f->bits = sp_xgrow0(f->bits, &f->nbits, id, 1);
	if (!f->bits[id]) {
		const char *name = sp_str(f->p, sp_frame_get(f->p, id)->name);
		unsigned b = M_DONE;
		for (int k = 0; k < 5; k++)
			for (size_t i = 0; i < f->lists[k].n; i++)
				if (!regexec(&f->lists[k].re[i], name, 0, NULL, 0)) {
					b |= 1u << k;
					break;
				}
		f->bits[id] = (uint8_t)b;
	}
	return f->bits[id];
}

static uint32_t transform(struct sp_filter *f, uint32_t node)
{
	uint32_t d = sp_node_frames(f->p, node, &f->fr, &f->capfr);
	uint32_t *fr = f->fr;
	int was_empty = d == 0;
	for (uint32_t i = 0; i < d; i++)
		fr[i] = rename_frame(f, fr[i]);
	uint32_t k = 0;
	if (f->lists[3].n) {
		for (uint32_t i = 0; i < d; i++)
			if (!(frame_bits(f, fr[i]) & M_HIDE))
				fr[k++] = fr[i];
		d = k;
	}
	if (f->o.collapse) {
		k = 0;
		for (uint32_t i = 0; i < d; i++) {
			uint32_t name = sp_frame_get(f->p, fr[i])->name;
			uint32_t j = k;
			if (f->o.collapse == SP_COLLAPSE_DIRECT) {
				if (k && sp_frame_get(f->p, fr[k - 1])->name == name)
					continue;
			} else {
				/* A frame already on the stack: cut back to it. */
				for (j = 0; j < k; j++)
					if (sp_frame_get(f->p, fr[j])->name == name)
						break;
				if (j < k) {
					k = j + 1;
					continue;
				}
			}
			fr[k++] = fr[i];
		}
		d = k;
	}
	if (f->lists[0].n) {
		int any = 0;
		for (uint32_t i = 0; i < d && !any; i++)
			any = (frame_bits(f, fr[i]) & M_GREP) != 0;
		if (any == f->o.invert_match)
			return SP_FILTER_DROP;
	}
	if (f->lists[2].n)
		for (uint32_t i = 0; i < d; i++)
			if (frame_bits(f, fr[i]) & M_EXCLUDE)
				return SP_FILTER_DROP;
	if (f->lists[1].n) {
		uint32_t i = 0;
		while (i < d && !(frame_bits(f, fr[i]) & M_FOCUS))
			i++;
		if (i == d)
			return SP_FILTER_DROP;
		memmove(fr, fr + i, (d - i) * sizeof *fr);
		d -= i;
	}
	if (f->lists[4].n)
		for (uint32_t i = 0; i < d; i++)
			if (frame_bits(f, fr[i]) & M_PRUNE) {
				d = i + 1;
				break;
			}
	if (f->o.max_depth && d > f->o.max_depth)
		d = f->o.max_depth;
	if (f->o.invert)
		for (uint32_t i = 0; i < d / 2; i++) {
			uint32_t t = fr[i];
			fr[i] = fr[d - 1 - i];
			fr[d - 1 - i] = t;
		}
	if (!d && !was_empty) /* every frame hidden: nothing left to show */
		return SP_FILTER_DROP;
	uint32_t n = 0;
	for (uint32_t i = 0; i < d; i++)
		n = sp_node_intern(f->p, n, fr[i]);
	return n;
}

uint32_t sp_filter_stack(struct sp_filter *f, uint32_t node)
{
	if (!f->active)
		return node;
	f->out = sp_xgrow0(f->out, &f->nout, node, sizeof *f->out);
	if (!f->out[node]) {
		uint32_t n = transform(f, node);
		f->out = sp_xgrow0(f->out, &f->nout, node, sizeof *f->out);
		f->out[node] = n == SP_FILTER_DROP ? 1 : n + 2;
	}
	return f->out[node] == 1 ? SP_FILTER_DROP : f->out[node] - 2;
}

static int thread_ok(struct sp_filter *f, const char *comm, size_t n, int64_t pid, int64_t tid)
{
	if (f->o.pid >= 0 && pid != f->o.pid)
		return 0;
	if (f->o.tid >= 0 && tid != f->o.tid)
		return 0;
	if (f->has_thread_re) {
		char *c = sp_xstrndup(comm, n);
		int m = !regexec(&f->thread_re, c, 0, NULL, 0);
		free(c);
		if (!m)
			return 0;
	}
	return 1;
}

/* "comm-PID/TID", "comm-PID" or "comm", as pfold's root frames read. */
static int root_ok(struct sp_filter *f, uint32_t node)
{
	if (!node)
		return 0;
	while (sp_node_get(f->p, node)->parent)
		node = sp_node_get(f->p, node)->parent;
	const struct sp_frame *fr = sp_frame_get(f->p, sp_node_get(f->p, node)->frame);
	const char *s = sp_str(f->p, fr->name);
	size_t n = sp_str_len(f->p, fr->name);
	int64_t pid = -1, tid = -1;
	size_t e = n, i = n;
	while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9')
		i--;
	if (i > 0 && i < e && s[i - 1] == '/') {
		size_t j = i - 1;
		while (j > 0 && s[j - 1] >= '0' && s[j - 1] <= '9')
			j--;
		if (j > 1 && j < i - 1 && s[j - 1] == '-') {
			pid = strtoll(s + j, NULL, 10);
			tid = strtoll(s + i, NULL, 10);
			e = j - 1;
		}
	} else if (i > 1 && i < e && s[i - 1] == '-') {
		pid = strtoll(s + i, NULL, 10);
		e = i - 1;
	}
	return thread_ok(f, s, e, pid, tid);
}

int sp_filter_thread(struct sp_filter *f, uint32_t thread, uint32_t node)
{
	if (!f->select_threads)
		return 1;
	if (thread) {
		f->tkeep = sp_xgrow0(f->tkeep, &f->ntkeep, thread, 1);
		if (!f->tkeep[thread]) {
			const struct sp_thread *t = sp_thread_get(f->p, thread);
			f->tkeep[thread] = thread_ok(f, sp_str(f->p, t->name), sp_str_len(f->p, t->name), t->pid,
						     t->tid) ? 2 : 1;
		}
		return f->tkeep[thread] == 2;
	}
	f->rkeep = sp_xgrow0(f->rkeep, &f->nrkeep, node, 1);
	if (!f->rkeep[node])
		f->rkeep[node] = root_ok(f, node) ? 2 : 1;
	return f->rkeep[node] == 2;
}

int sp_parse_func_pct(const char *arg, char *func, size_t funcsz, double *pct)
{
	*pct = 95;
	size_t n = strlen(arg);
	const char *colon = strrchr(arg, ':');
	if (colon && colon[1]) {
		char *end;
		double v = strtod(colon + 1, &end);
		if (!*end) {
			if (!(v > 0 && v < 100))
				return -1;
			*pct = v;
			n = (size_t)(colon - arg);
		}
	}
	if (!n || n >= funcsz)
		return -1;
	memcpy(func, arg, n);
	func[n] = 0;
	return 0;
}

/* ---- pfilter's passes ---- */

enum pass { P_SCAN, P_CALLS, P_SHARE, P_FINAL };

struct select {
	struct sp_sink sink;
	const struct sp_select_opts *o;
	enum pass pass;
	struct sp_profile *p;
	struct sp_filter *f;
	struct sp_calls *calls;
	struct sp_sink *out;  /* final pass */
	const char *name;     /* current input, for messages */
	/* time */
	uint64_t tmin, tmax;
	int have_time, window;
	uint64_t from, to;    /* absolute, [from, to) */
	/* --min-share: totals by output stack hash */
	uint64_t *hash;       /* node -> hash of its frame names (0 = unknown) */
	size_t nhash;
	struct sp_u64map share;
	double *sharev;       /* per entry: ncols values */
	size_t nshare, capshare;
	double total[2];
	int cols[2], ncols;
	struct sp_buf gname;  /* a thread's name as folded text groups it */
	uint64_t in_samples, out_samples;
};

static uint64_t stack_hash(struct select *s, uint32_t node)
{
	if (!node)
		return 1;
	s->hash = sp_xgrow0(s->hash, &s->nhash, node, sizeof *s->hash);
	if (!s->hash[node]) {
		const struct sp_node *n = sp_node_get(s->p, node);
		uint32_t parent = n->parent;
		const struct sp_frame *fr = sp_frame_get(s->p, n->frame);
		uint64_t h = sp_hash_seed(sp_str(s->p, fr->name), sp_str_len(s->p, fr->name),
					  stack_hash(s, parent) ^ fr->kind);
		s->hash = sp_xgrow0(s->hash, &s->nhash, node, sizeof *s->hash);
		s->hash[node] = h ? h : 2;
	}
	return s->hash[node];
}

static int share_cols(struct select *s, struct sp_profile *p, struct sp_err *err)
{
	if (sp_value_is_diff(p)) {
		s->ncols = 2;
		s->cols[0] = 0;
		s->cols[1] = 1;
		if (s->o->weight && sp_value_column(p, s->o->weight, err) < 0)
			return -1; /* both columns are kept: the name is only checked */
	} else {
		if ((s->cols[0] = sp_value_column(p, s->o->weight, err)) < 0)
			return -1;
		s->ncols = 1;
	}
	return 0;
}

static int emit_out(struct select *s, const struct sp_sample *smp, struct sp_err *err)
{
	uint32_t stack = sp_filter_stack(s->f, smp->stack);
	if (stack == SP_FILTER_DROP)
		return 0;
	if (s->o->min_share > 0) {
		if (!s->ncols && share_cols(s, s->p, err) < 0)
			return -1;
		/* Stacks of differently named threads are different lines of
		 * folded text (comm root frames): keep them apart here too,
		 * with numbered names grouped as pfold shows them (worker-N). */
		uint64_t key = stack_hash(s, stack);
		if (smp->thread) {
			uint32_t name = sp_thread_get(s->p, smp->thread)->name;
			sp_buf_reset(&s->gname);
			sp_thread_group(sp_str(s->p, name), &s->gname);
			key ^= sp_mix64(sp_hash(s->gname.p, s->gname.len));
		}
		if (key == UINT64_MAX)
			key--;
		int found;
		uint32_t *slot = sp_u64map_slot(&s->share, key, &found);
		if (s->pass == P_SHARE) {
			if (!found) {
				if (s->nshare == s->capshare) {
					s->capshare = s->capshare ? s->capshare * 2 : 1024;
					s->sharev = sp_xrealloc(s->sharev, s->capshare * 2 * sizeof *s->sharev);
				}
				s->sharev[2 * s->nshare] = s->sharev[2 * s->nshare + 1] = 0;
				*slot = (uint32_t)++s->nshare;
			}
			for (int i = 0; i < s->ncols; i++) {
				s->sharev[2 * (*slot - 1) + (size_t)i] += smp->values[s->cols[i]];
				s->total[i] += smp->values[s->cols[i]];
			}
			return 0;
		}
		int keep = 0;
		for (int i = 0; found && i < s->ncols; i++)
			if (s->total[i] > 0 && s->sharev[2 * (*slot - 1) + (size_t)i] * 100.0 >= s->o->min_share * s->total[i])
				keep = 1;
		if (!keep)
			return 0;
	}
	if (s->pass != P_FINAL)
		return 0;
	struct sp_sample o = *smp;
	o.stack = stack;
	s->out_samples++;
	return s->out->sample ? s->out->sample(s->out, s->p, &o, err) : 0;
}

static int on_call(void *ctx, const struct sp_sample *smp, enum sp_call_where where, struct sp_err *err)
{
	struct select *s = ctx;
	if (where != (s->o->fast ? SP_CALL_FAST : SP_CALL_SLOW))
		return 0;
	return emit_out(s, smp, err);
}

static int in_window(struct select *s, uint64_t t, struct sp_err *err)
{
	if (!s->window)
		return 1;
	if (t == SP_NO_TIME) {
		sp_err_set(err, "%s: the input has no timestamps (--from, --to and --last need a timestamped "
				"binary stream: perf script | pfold -b, or pcollect)", s->name);
		return -1;
	}
	return t >= s->from && t < s->to;
}

static int sel_sample(struct sp_sink *sk, struct sp_profile *p, const struct sp_sample *smp, struct sp_err *err)
{
	struct select *s = (struct select *)sk;
	if (s->pass == P_SCAN) {
		if (smp->time != SP_NO_TIME) {
			if (!s->have_time || smp->time < s->tmin)
				s->tmin = smp->time;
			if (!s->have_time || smp->time > s->tmax)
				s->tmax = smp->time;
			s->have_time = 1;
		}
		if (s->calls && sp_calls_observe(s->calls, p, smp, err) < 0) {
			char m[sizeof err->msg];
			memcpy(m, err->msg, sizeof m);
			sp_err_set(err, "%s: %s", s->name, m);
			return -1;
		}
		return 0;
	}
	if (s->pass == P_FINAL)
		s->in_samples++;
	if (!sp_filter_thread(s->f, smp->thread, smp->stack))
		return 0;
	int w = in_window(s, smp->time, err);
	if (w <= 0)
		return w;
	if (s->calls)
		return sp_calls_sample(s->calls, smp, on_call, s, err);
	return emit_out(s, smp, err);
}

static int sel_trace(struct sp_sink *sk, struct sp_profile *p, const struct sp_trace *t, struct sp_err *err)
{
	struct select *s = (struct select *)sk;
	if (s->pass == P_SCAN) {
		if (s->calls)
			sp_calls_observe_trace(s->calls, p, t);
		return 0;
	}
	if (s->calls && sp_calls_trace(s->calls, t, on_call, s, err) < 0)
		return -1;
	if (s->pass != P_FINAL || !s->out->trace)
		return 0;
	if (!sp_filter_thread(s->f, t->thread, t->stack))
		return 0;
	if (s->window && t->time != SP_NO_TIME && !(t->time >= s->from && t->time < s->to))
		return 0;
	struct sp_trace o = *t;
	if (o.stack) {
		o.stack = sp_filter_stack(s->f, o.stack);
		if (o.stack == SP_FILTER_DROP)
			o.stack = 0;
	}
	return s->out->trace(s->out, p, &o, err);
}

static int sel_meta(struct sp_sink *sk, struct sp_profile *p, struct sp_err *err)
{
	struct select *s = (struct select *)sk;
	if (s->pass == P_FINAL && s->out->meta)
		return s->out->meta(s->out, p, err);
	return 0;
}

static int run_pass(struct select *s, enum pass pass, struct sp_source **src, int n, struct sp_read_opts *ro,
		    struct sp_err *err)
{
	s->pass = pass;
	if (s->calls && pass != P_SCAN)
		sp_calls_begin(s->calls, s->p, pass == P_CALLS);
	for (int i = 0; i < n; i++) {
		s->name = sp_source_name(src[i]);
		if (sp_source_read(src[i], s->o->format, s->p, &s->sink, ro, err) < 0)
			return -1;
	}
	if (s->calls && pass != P_SCAN && sp_calls_end(s->calls, on_call, s, err) < 0)
		return -1;
	return 0;
}

static uint64_t add_sat(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX - 1 : a + b; }

int sp_select_run(const struct sp_select_opts *o, char **files, int nfiles, FILE *out, struct sp_buf *msg,
		  struct sp_err *err)
{
	int rc = -1;
	int need_scan = o->func || o->last || o->from_rel || o->to_rel;
	int rereadable = need_scan || o->min_share > 0;
	struct sp_source **src = sp_xcalloc((size_t)nfiles, sizeof *src);
	struct sp_profile *scratch = NULL, *p = sp_profile_new();
	struct sp_filter *fs = NULL, *fp = NULL;
	struct sp_writer *w = NULL;
	struct select s;
	memset(&s, 0, sizeof s);
	s.sink.sample = sel_sample;
	s.sink.trace = sel_trace;
	s.sink.meta = sel_meta;
	s.o = o;
	sp_u64map_init(&s.share);
	/* Bad patterns are usage errors: said before any input is read. */
	if (!(fp = sp_filter_new(p, &o->f, err)))
		goto out;
	int n = 0;
	for (; n < nfiles; n++)
		if (!(src[n] = sp_source_open(files[n], rereadable, err)))
			goto out;
	/* The output keeps the first input's encoding. */
	const struct sp_format *fmt = NULL;
	for (int i = 0; i < nfiles && !fmt; i++)
		if (sp_source_format(src[i], o->format, &fmt, err) < 0)
			goto out;
	enum sp_output kind = sp_output_kind(o->output, fmt);
	if (o->func) {
		s.calls = sp_calls_new(o->func, o->pct);
		sp_calls_set_gap(s.calls, o->max_gap);
		sp_calls_set_cpu(s.calls, o->cpu_time);
	}

	/* Passes over the whole input before the one that writes: each
	 * needs what the previous found.  They read into a scratch profile so
	 * the output profile gets each input's metadata once. */
	struct sp_read_opts quiet = *o->read;
	quiet.warn = NULL;
	if (rereadable) {
		scratch = sp_profile_new();
		if (!(fs = sp_filter_new(scratch, &o->f, err)))
			goto out;
		s.p = scratch;
		s.f = fs;
	}
	if (need_scan) {
		if (run_pass(&s, P_SCAN, src, n, &quiet, err) < 0)
			goto out;
		if (!s.have_time && (o->last || o->from_rel || o->to_rel)) {
			sp_err_set(err, "%s: the input has no timestamps (--from, --to and --last need a timestamped "
					"binary stream: perf script | pfold -b, or pcollect)", sp_source_name(src[0]));
			goto out;
		}
	}
	s.from = 0;
	s.to = UINT64_MAX;
	if (o->from != SP_NO_TIME) {
		s.window = 1;
		s.from = o->from_rel ? add_sat(s.tmin, o->from) : o->from;
	}
	if (o->to != SP_NO_TIME) {
		s.window = 1;
		s.to = o->to_rel ? add_sat(s.tmin, o->to) : o->to;
	}
	if (o->last) {
		s.window = 1;
		uint64_t f = s.tmax >= o->last ? s.tmax - o->last : 0;
		if (f > s.from)
			s.from = f;
	}
	if (o->func) {
		if (run_pass(&s, P_CALLS, src, n, &quiet, err) < 0)
			goto out;
		if (!sp_calls_stats(s.calls)->calls) {
			sp_err_set(err, "%s: no calls of %s found (no sample has it on its stack)",
				   sp_source_name(src[0]), o->func);
			goto out;
		}
	}
	if (o->min_share > 0) {
		free(s.hash);
		s.hash = NULL;
		s.nhash = 0;
		if (run_pass(&s, P_SHARE, src, n, &quiet, err) < 0)
			goto out;
	}
	/* The pass that writes. */
	free(s.hash);
	s.hash = NULL;
	s.nhash = 0;
	s.ncols = 0;
	s.p = p;
	s.f = fp;
	if (!(w = sp_writer_open(kind, out, p, NULL, SP_WRITER_NO_TTY, err)))
		goto out;
	s.out = sp_writer_sink(w);
	if (run_pass(&s, P_FINAL, src, n, o->read, err) < 0)
		goto out;
	if (sp_writer_finish(w, err) < 0)
		goto out;
	if (s.calls && !o->quiet) {
		sp_calls_describe(s.calls, o->func, msg);
		sp_buf_addc(msg, '\n');
	}
	if (o->stats)
		sp_buf_addf(msg, "%llu samples read, %llu written\n", (unsigned long long)s.in_samples,
			    (unsigned long long)s.out_samples);
	if (!s.out_samples)
		sp_buf_addf(msg, "no sample selected (of %llu read)\n", (unsigned long long)s.in_samples);
	rc = s.out_samples ? 0 : 1;
out:
	for (int i = 0; i < nfiles; i++)
		sp_source_free(src[i]);
	free(src);
	sp_filter_free(fs);
	sp_filter_free(fp);
	sp_calls_free(s.calls);
	sp_writer_free(w);
	sp_u64map_release(&s.share);
	sp_buf_release(&s.gname);
	free(s.sharev);
	free(s.hash);
	sp_profile_free(scratch);
	sp_profile_free(p);
	return rc;
}
