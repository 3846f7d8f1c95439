/* folded.c — readers of folded stacks: "a;b;c 12", two-value "a;b;c 3 5"
 * (difffolded.pl), and py-spy's `record --format raw` output, which is
 * folded text whose Python frames read "function (file.py:LINE)".
 *
 * A line's stack text is looked up whole in a cache (one xxh3 per line), so
 * re-aggregating folded text does not re-hash every frame of every line.
 */
#include <stdio.h>
#include <stdlib.h>

#include "format.h"

struct stack_cache {
	struct sp_u64map map; /* hash -> index+1 into ents */
	struct { uint32_t off, len, node; } *ents;
	size_t n, cap;
	struct sp_buf text;
};

/* The previous line's stack: folded text is usually sorted, so a line
 * shares its first frames with the one before; those frames' nodes are
 * taken from here instead of being hashed and looked up again. */
struct prev_line {
	struct sp_buf text;
	uint32_t *ends;  /* ends[i]: offset just past frame i (';' or the end) */
	uint32_t *nodes; /* nodes[i]: the node of frames 0..i */
	/* string id -> frame id + 1 of a plain frame (its kind follows from
	 * its text): one array lookup instead of interning the frame again */
	uint32_t *fof;
	size_t nfof;
	size_t n, cap;
};

static int is_num_char(char c) { return (c >= '0' && c <= '9') || c == '.'; }

/* Parse a count token [s,e): digits with an optional fraction, optional
 * leading '-'.  Returns 1 and the value when it is one. */
static int parse_count(const char *s, const char *e, double *v)
{
	if (s == e)
		return 0;
	int neg = 0;
	if (*s == '-') {
		neg = 1;
		s++;
	}
	if (s == e || !(*s >= '0' && *s <= '9'))
		return 0;
	uint64_t ip = 0;
	const char *q = s;
	while (q < e && *q >= '0' && *q <= '9') {
		if (ip > (UINT64_MAX - 9) / 10)
			return 0;
		ip = ip * 10 + (uint64_t)(*q - '0');
		q++;
	}
	double d = (double)ip;
	if (q < e && *q == '.') {
		q++;
		double scale = 0.1;
		while (q < e && *q >= '0' && *q <= '9') {
			d += (*q - '0') * scale;
			scale *= 0.1;
			q++;
		}
		/* Exact parse of the decimal for output stability. */
		char tmp[64];
		size_t n = (size_t)(e - s);
		if (n < sizeof tmp) {
			memcpy(tmp, s, n);
			tmp[n] = 0;
			d = strtod(tmp, NULL);
		}
	}
	if (q != e)
		return 0;
	*v = neg ? -d : d;
	return 1;
}

/* Split "stack N" or "stack A B" (want: 1 or 2 counts, 0 = undecided, take
 * two when the line ends in two numbers).  Returns the number of counts
 * found (0 = not a folded line); c[0] (and c[1]) get them. */
static int split_counts(const char *s, const char *e, int want, const char **stack_end, double *c)
{
	double last, prev;
	const char *t = e;
	while (t > s && !(t[-1] == ' ' || t[-1] == '\t'))
		t--;
	if (t == s || !parse_count(t, e, &last))
		return 0;
	/* Exactly one blank separates the stack from its count, as in
	 * flamegraph.pl's /^(.*)\s+?(\d+(?:\.\d*)?)$/: a frame may end in a
	 * space ("[unknown] " from stackcollapse-perf.pl) and keeps it. */
	const char *u = t - 1;
	if (u == s)
		return 0;
	if (want != 1) {
		const char *v = u;
		while (v > s && !(v[-1] == ' ' || v[-1] == '\t'))
			v--;
		if (v > s && is_num_char(u[-1]) && parse_count(v, u, &prev)) {
			const char *w = v - 1;
			if (w > s) {
				*stack_end = w;
				c[0] = prev;
				c[1] = last;
				return 2;
			}
		}
		if (want == 2)
			return 0;
	}
	c[0] = last;
	*stack_end = u;
	return 1;
}

/* "name (file.py:12)" -> python frame.  Returns 1 when it is one. */
static int python_frame(struct sp_profile *p, const char *s, size_t n, struct sp_frame *f)
{
	if (n < 6 || s[n - 1] != ')')
		return 0;
	const char *lp = memrchr(s, '(', n);
	if (!lp || lp == s || lp[-1] != ' ')
		return 0;
	const char *in = lp + 1, *ie = s + n - 1;
	const char *colon = memrchr(in, ':', (size_t)(ie - in));
	uint32_t line = 0;
	const char *fe = ie;
	if (colon) {
		uint64_t l;
		size_t k = sp_parse_u64(colon + 1, ie, &l);
		if (k && colon + 1 + k == ie) {
			line = (uint32_t)l;
			fe = colon;
		}
	}
	if (fe - in < 3 || !(memmem(in, (size_t)(fe - in), ".py", 3) || memmem(in, (size_t)(fe - in), "<", 1)))
		return 0;
	memset(f, 0, sizeof *f);
	f->name = sp_str_intern(p, s, (size_t)(lp - 1 - s));
	f->file = sp_str_intern(p, in, (size_t)(fe - in));
	f->line = line;
	f->kind = SP_KIND_PYTHON;
	return 1;
}

/* How many bytes a and b share at their start (at most n), eight at a
 * time: lines of sorted folded text share most of their frames. */
static size_t common_prefix(const char *a, const char *b, size_t n)
{
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t x, y;
		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		if (x != y) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
			return i + (size_t)(__builtin_ctzll(x ^ y) >> 3);
#else
			return i + (size_t)(__builtin_clzll(x ^ y) >> 3);
#endif
		}
	}
	while (i < n && a[i] == b[i])
		i++;
	return i;
}

/* The frame of a plain frame's text [s, s+n) (h: its hash), its kind from
 * its _[k]/_[j]/_[i] suffix. */
static inline uint32_t native_frame(struct sp_profile *p, struct prev_line *pl, const char *s, size_t n, uint64_t h)
{
	unsigned kind = SP_KIND_NATIVE;
	if (n > 4 && s[n - 4] == '_' && s[n - 3] == '[' && s[n - 1] == ']') {
		if (s[n - 2] == 'k')
			kind = SP_KIND_KERNEL;
		else if (s[n - 2] == 'j')
			kind = SP_KIND_JIT;
		else if (s[n - 2] == 'i')
			kind = SP_KIND_INLINED;
	}
	struct sp_frame f = { 0 };
	f.name = n ? sp_str_intern_h(p, s, n, h) : 0;
	f.kind = (uint8_t)kind;
	if (f.name >= pl->nfof) {
		size_t m = pl->nfof ? pl->nfof : 1024;
		while (m <= f.name)
			m *= 2;
		pl->fof = sp_xrealloc(pl->fof, m * sizeof *pl->fof);
		memset(pl->fof + pl->nfof, 0, (m - pl->nfof) * sizeof *pl->fof);
		pl->nfof = m;
	}
	if (!pl->fof[f.name])
		pl->fof[f.name] = sp_frame_intern(p, &f) + 1;
	return pl->fof[f.name] - 1;
}

static inline void push_node(struct prev_line *pl, uint32_t node, uint32_t end)
{
	if (pl->n == pl->cap) {
		pl->cap = pl->cap ? 2 * pl->cap : 64;
		pl->ends = sp_xrealloc(pl->ends, pl->cap * sizeof *pl->ends);
		pl->nodes = sp_xrealloc(pl->nodes, pl->cap * sizeof *pl->nodes);
	}
	pl->ends[pl->n] = end;
	pl->nodes[pl->n++] = node;
}

/* The plain frames [s, e] of a line (s0: its start) below node, in
 * batches: each frame's text split and hashed and its string's slot
 * prefetched first, then the names and frames interned, then the nodes, so
 * that the cache misses of a batch overlap instead of coming one after
 * another (lines in no order, psvg's input from a random walk, miss on
 * every frame).  Once a node is new, the line's nodes below it are new
 * too, with the next ids: their index slots are prefetched as well.  Ids
 * are given in the same order as frame by frame. */
static uint32_t intern_frames(struct sp_profile *p, const char *s, const char *e, const char *s0, uint32_t node,
			      struct prev_line *pl)
{
	enum { FBATCH = 32 };
	struct {
		const char *s;
		size_t n;
		uint64_t h;
		uint32_t end, frame;
		int push;
	} b[FBATCH];
	int more = 1;
	while (more) {
		int k = 0;
		while (k < FBATCH) {
			const char *sc = memchr(s, ';', (size_t)(e - s));
			const char *fe = sc ? sc : e;
			b[k].s = s;
			b[k].n = (size_t)(fe - s);
			b[k].h = sp_hash(s, b[k].n);
			b[k].end = (uint32_t)(fe - s0);
			b[k].push = b[k].n || sc; /* "a;b;": no frame after the last ';' */
			if (b[k].n)
				sp_str_prefetch(p, b[k].h);
			k++;
			if (!sc) {
				more = 0;
				break;
			}
			s = sc + 1;
		}
		for (int i = 0; i < k; i++)
			b[i].frame = native_frame(p, pl, b[i].s, b[i].n, b[i].h);
		int fresh = 0;
		uint32_t nn = sp_node_count(p); /* a new node's id */
		for (int i = 0; i < k; i++) {
			if (!b[i].push)
				continue;
			node = sp_node_intern(p, node, b[i].frame);
			if (!fresh && node == nn) {
				fresh = 1;
				uint32_t next = node + 1;
				for (int j = i + 1; j < k; j++)
					if (b[j].push)
						sp_node_prefetch(p, next++, b[j].frame);
			}
			push_node(pl, node, b[i].end);
		}
	}
	return node;
}

static uint32_t intern_stack(struct sp_profile *p, const char *s, const char *e, int pyspy, struct prev_line *pl)
{
	const char *s0 = s;
	size_t len = (size_t)(e - s), lim = len < pl->text.len ? len : pl->text.len;
	size_t common = common_prefix(s, pl->text.p, lim);
	/* Reuse the frames that end inside the common prefix (at a ';' both
	 * lines share, or where both end). */
	size_t keep = 0;
	while (keep < pl->n && (pl->ends[keep] < common ||
				(pl->ends[keep] == common && (common == len ? common == pl->text.len
									     : s[common] == ';'))))
		keep++;
	uint32_t node = 0;
	if (keep) {
		node = pl->nodes[keep - 1];
		if (pl->ends[keep - 1] >= len) {
			pl->n = keep;
			goto done;
		}
		s += pl->ends[keep - 1] + 1;
	}
	pl->n = keep;
	if (!pyspy) {
		node = intern_frames(p, s, e, s0, node, pl);
		goto done;
	}
	while (s <= e) {
		const char *sc = memchr(s, ';', (size_t)(e - s));
		const char *fe = sc ? sc : e;
		size_t n = (size_t)(fe - s);
		struct sp_frame f = { 0 };
		uint32_t frame = 0;
		if ((n > 8 && !memcmp(s, "thread (", 8)) || (n > 8 && !memcmp(s, "process ", 8))) {
			/* py-spy's --threads / --subprocesses root frames:
			 * "thread (TID): NAME", "process PID:\"CMDLINE\"" */
			f.name = sp_str_intern(p, s, n);
			f.kind = SP_KIND_SYNTHETIC;
		} else if (!python_frame(p, s, n, &f)) {
			frame = native_frame(p, pl, s, n, sp_hash(s, n)) + 1;
		}
		if (n || sc)
			push_node(pl, node = sp_node_intern(p, node, frame ? frame - 1 : sp_frame_intern(p, &f)),
				  (uint32_t)(fe - s0));
		if (!sc)
			break;
		s = sc + 1;
	}
done:
	sp_buf_reset(&pl->text);
	sp_buf_add(&pl->text, s0, len);
	return node;
}

static void warn_bad(struct sp_read_opts *o, struct sp_input *in, const char *what, const char *line, size_t len)
{
	o->bad_lines++;
	if (!o->warn)
		return;
	struct sp_err e;
	if (len > 120)
		len = 120;
	sp_err_at(&e, sp_input_name(in), sp_input_lineno(in), "%s: %.*s", what, (int)len, line);
	o->warn(o->warn_ctx, &e);
}

/* One-value folded text read after an input with columns of its own (pmerge
 * x.sp y.folded): its value, of unknown unit, adds to their weight column
 * (period, else the first), never to a count it may not be; the other
 * columns get 0 for its lines.  Said once when that mixes units. */
static int unitless_into(struct sp_profile *p, struct sp_input *in, struct sp_read_opts *o)
{
	int col = sp_value_column(p, NULL, NULL), nv = sp_profile_nvalues(p);
	const char *unit = sp_value_unit(p, col, 0);
	if (!sp_profile_unit_set(p, col) && !strcmp(sp_profile_value_name(p, col), "period"))
		unit = ""; /* perf script text: the event was each sample's */
	if ((*unit || nv > 1) && o->warn) {
		struct sp_err e;
		sp_err_set(&e, "%s: folded text has no unit: its values are added to column '%s'%s%s%s as they are%s",
			   sp_input_name(in), sp_profile_value_name(p, col), *unit ? " (" : "", unit, *unit ? ")" : "",
			   nv > 1 ? "; the other columns get 0 for its lines" : "");
		o->warn(o->warn_ctx, &e);
	}
	return col;
}

static int read_folded(struct sp_input *in, struct sp_profile *p, struct sp_sink *sink, struct sp_read_opts *o,
		       struct sp_err *err, int pyspy)
{
	struct stack_cache sc = { 0 };
	struct prev_line pl = { 0 };
	sp_u64map_init(&sc.map);
	int nv = sp_profile_nvalues(p);
	int want = 0; /* columns in this file: decided by the first line */
	int col = 0;  /* where a one-value line's value goes */
	if (sp_value_is_diff(p))
		want = 2;
	struct sp_sample smp;
	memset(&smp, 0, sizeof smp);
	smp.time = SP_NO_TIME;
	int rc = 0;
	const char *line;
	size_t len;
	/* The whole-line cache pays when lines repeat (concatenated profiles);
	 * after 8192 lines with fewer than 1/16 hits it is left off. */
	uint64_t sc_lines = 0, sc_hits = 0, bad = 0;
	int sc_off = 0;
	while ((line = sp_input_line(in, &len))) {
		const char *s = line, *e = line + len;
		while (e > s && (e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t'))
			e--;
		if (s == e)
			continue;
		double c[2] = { 0, 0 };
		const char *se;
		int k = split_counts(s, e, want, &se, c);
		if (!k) {
			warn_bad(o, in, want == 2 ? "expected \"stack COUNT COUNT\"" : "expected \"stack COUNT\"", line,
				 len);
			bad++;
			continue;
		}
		if (!want) {
			want = k;
			if (nv == 0) {
				/* Folded text's value has no unit: pfold prints
				 * perf's period (ns or events), a count, bytes... */
				static const char *const one[] = { "value" }, *const two[] = { "a", "b" };
				sp_profile_set_values(p, k, k == 2 ? two : one);
				nv = k;
			} else if (k == 2) {
				sp_err_at(err, sp_input_name(in), sp_input_lineno(in),
					  "two-value (diff) input cannot be mixed with one-value input");
				rc = -1;
				break;
			} else {
				col = unitless_into(p, in, o);
			}
		}
		uint32_t node;
		if (sc_off) {
			/* every line distinct (pfold's output, psvg's usual
			 * input): no hashing or copying of whole lines */
			node = intern_stack(p, s, se, pyspy, &pl);
			goto have_node;
		}
		if (++sc_lines == 8192 && sc_hits * 16 < sc_lines) {
			sc_off = 1;
			/* its copies of the lines (megabytes): free for the
			 * tables that grow next */
			sp_u64map_release(&sc.map);
			free(sc.ents);
			sc.ents = NULL;
			sc.n = sc.cap = 0;
			sp_buf_release(&sc.text);
			node = intern_stack(p, s, se, pyspy, &pl);
			goto have_node;
		}
		uint64_t h = sp_hash(s, (size_t)(se - s));
		int found;
		uint32_t *slot = sp_u64map_slot(&sc.map, h, &found);
		if (found && sc.ents[*slot - 1].len == (size_t)(se - s) &&
		    !memcmp(sc.text.p + sc.ents[*slot - 1].off, s, (size_t)(se - s))) {
			node = sc.ents[*slot - 1].node;
			sc_hits++;
		} else {
			node = intern_stack(p, s, se, pyspy, &pl);
			if (!found) {
				if (sc.n == sc.cap) {
					sc.cap = sc.cap ? sc.cap * 2 : 256;
					sc.ents = sp_xrealloc(sc.ents, sc.cap * sizeof *sc.ents);
				}
				sc.ents[sc.n].off = (uint32_t)sc.text.len;
				sc.ents[sc.n].len = (uint32_t)(se - s);
				sc.ents[sc.n].node = node;
				sp_buf_add(&sc.text, s, (size_t)(se - s));
				*slot = (uint32_t)++sc.n;
			}
		}
	have_node:
		smp.stack = node;
		if (want == 2) {
			smp.values[0] = c[0];
			smp.values[1] = c[1];
		} else {
			smp.values[col] = c[0];
		}
		if (sink->sample && sink->sample(sink, p, &smp, err) < 0) {
			rc = -1;
			break;
		}
	}
	if (!rc && sp_input_failed(in, err))
		rc = -1;
	/* Nothing but rejected lines is no profile, as an empty input is not:
	 * an empty output would pass for one with no samples. */
	if (!rc && !want) {
		const char *name = strcmp(sp_input_name(in), "-") ? sp_input_name(in) : "standard input";
		if (bad)
			sp_err_set(err, "%s: no valid stack line (%llu line%s rejected)", name,
				   (unsigned long long)bad, bad == 1 ? "" : "s");
		else
			sp_err_set(err, "%s: no valid stack line (only blank lines)", name);
		rc = -1;
	}
	if (!rc && sink->end_input && sink->end_input(sink, p, err) < 0)
		rc = -1;
	sp_u64map_release(&sc.map);
	free(sc.ents);
	sp_buf_release(&sc.text);
	sp_buf_release(&pl.text);
	free(pl.ends);
	free(pl.nodes);
	free(pl.fof);
	return rc;
}

/* Probe: most non-empty lines end in a count and hold no tab-indented frame
 * lines. */
static int probe_common(const char *buf, size_t n, int complete, int *python)
{
	const char *s = buf, *e = buf + n;
	int good = 0, bad = 0, py = 0;
	while (s < e && good + bad < 100) {
		const char *nl = memchr(s, '\n', (size_t)(e - s));
		if (!nl && !complete)
			break;
		const char *le = nl ? nl : e;
		while (le > s && (le[-1] == '\r' || le[-1] == ' '))
			le--;
		if (le > s) {
			double c[2];
			const char *se;
			if (s[0] != ' ' && s[0] != '\t' && split_counts(s, le, 0, &se, c)) {
				good++;
				if (memmem(s, (size_t)(se - s), ".py:", 4))
					py++;
			} else {
				bad++;
			}
		}
		if (!nl)
			break;
		s = nl + 1;
	}
	*python = py;
	if (!good || good < bad * 2)
		return 0;
	return 50;
}

static int folded_probe(const char *buf, size_t n, int complete)
{
	int py;
	return probe_common(buf, n, complete, &py);
}

static int pyspy_probe(const char *buf, size_t n, int complete)
{
	int py;
	int r = probe_common(buf, n, complete, &py);
	return r && py ? 60 : 0;
}

static int folded_read(struct sp_input *in, struct sp_profile *p, struct sp_sink *sink, struct sp_read_opts *o,
		       struct sp_err *err)
{
	return read_folded(in, p, sink, o, err, 0);
}

static int pyspy_read(struct sp_input *in, struct sp_profile *p, struct sp_sink *sink, struct sp_read_opts *o,
		      struct sp_err *err)
{
	return read_folded(in, p, sink, o, err, 1);
}

const struct sp_format sp_format_folded = {
	"folded", "folded stacks: \"a;b;c COUNT\" or two-value \"a;b;c A B\"", folded_probe, folded_read,
};

const struct sp_format sp_format_pyspy = {
	"pyspy", "py-spy record --format raw (folded, frames \"func (file.py:LINE)\")", pyspy_probe, pyspy_read,
};
