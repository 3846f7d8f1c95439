/* heatmap.c — psvg --heatmap (see heatmap.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fold.h"
#include "heatmap.h"

struct entry {
	int64_t slice; /* slice number from the first sample's; hosts: bucket number */
	int64_t cell;  /* the cell, set when writing */
	uint32_t node; /* heat-map stack */
	double w;      /* samples; hosts: the weight column's sum */
};

struct sp_heatmap {
	struct sp_sink sink;
	struct sp_profile *p;
	struct sp_heatmap_opts o;
	const char *input;
	/* stacks: a tree of (parent, name string id) under the thread's name */
	uint32_t *parent, *name;
	size_t nnodes, cap_nodes;
	struct sp_u64map child;  /* (parent << 32 | name) -> node */
	struct sp_u64map cache;  /* (thread name << 32 | profile node) -> node */
	/* (slice, node) -> entry */
	struct sp_u64map cells;
	struct entry *e;
	size_t ne, cap_e;
	uint64_t t0, samples;
	int have_t0;
	int col;            /* hosts: the weight column, -1 until the first sample */
	uint64_t bucket_ns; /* hosts */
	uint32_t *frames;
	size_t cap_frames;
};

struct sp_heatmap *sp_heatmap_new(struct sp_profile *p, const struct sp_heatmap_opts *o);

static uint32_t child_of(struct sp_heatmap *h, uint32_t parent, uint32_t name)
{
	int found;
	uint32_t *slot = sp_u64map_slot(&h->child, (uint64_t)parent << 32 | name, &found);
	if (found)
		return *slot;
	if (h->nnodes == h->cap_nodes) {
		h->cap_nodes *= 2;
		h->parent = sp_xrealloc(h->parent, h->cap_nodes * sizeof *h->parent);
		h->name = sp_xrealloc(h->name, h->cap_nodes * sizeof *h->name);
	}
	uint32_t id = (uint32_t)h->nnodes++;
	h->parent[id] = parent;
	h->name[id] = name;
	*slot = id;
	return id;
}

/* A frame's name as pfold and psvg's flame graph spell it: a Python frame
 * with its file and line ("dumps (json/__init__.py:231)"). */
static uint32_t frame_label(struct sp_heatmap *h, uint32_t frame)
{
	const struct sp_frame *fr = sp_frame_get(h->p, frame);
	if (fr->kind != SP_KIND_PYTHON || !fr->file)
		return fr->name;
	static const struct sp_fold_opts plain;
	struct sp_buf b = SP_BUF_INIT;
	sp_fold_frame_name(h->p, frame, &plain, &b);
	uint32_t id = sp_str_intern(h->p, b.p, b.len);
	sp_buf_release(&b);
	return id;
}

/* The heat map's stack of a sample: looked up once per (thread name,
 * stack); a new one is walked frame by frame once. */
static uint32_t stack_of(struct sp_heatmap *h, uint32_t thread, uint32_t node)
{
	uint32_t comm = 0;
	if (thread) {
		const struct sp_thread *t = sp_thread_get(h->p, thread);
		comm = t->name;
	}
	int found;
	uint32_t *slot = sp_u64map_slot(&h->cache, (uint64_t)comm << 32 | node, &found);
	if (found)
		return *slot;
	uint32_t depth = sp_node_frames(h->p, node, &h->frames, &h->cap_frames), i = 0, cur = 0;
	/* hosts: a root frame a tool made (the host of pfleet get --by host,
	 * pmerge --tag's) comes before the thread's name, as pfold prints it */
	if (h->o.hosts == 1 && depth && sp_frame_get(h->p, h->frames[0])->kind == SP_KIND_SYNTHETIC)
		cur = child_of(h, cur, sp_frame_get(h->p, h->frames[i++])->name);
	if (comm)
		cur = child_of(h, cur, comm);
	for (; i < depth; i++)
		cur = child_of(h, cur, frame_label(h, h->frames[i]));
	/* the slot may have moved while interning: look it up again */
	slot = sp_u64map_slot(&h->cache, (uint64_t)comm << 32 | node, &found);
	*slot = cur;
	return cur;
}

static int heat_sample(struct sp_sink *sk, struct sp_profile *p, const struct sp_sample *s, struct sp_err *err)
{
	struct sp_heatmap *h = (struct sp_heatmap *)sk;
	if (s->time == SP_NO_TIME)
		return sp_err_set(err, "%s%sthe input has no timestamps: the heat map places samples in time (a binary "
				       "stream has them: pcollect, perf script | pfold -b, pfleet get --by time; folded "
				       "text has none)",
				  h->input ? h->input : "", h->input ? ": " : "");
	if (!h->have_t0) {
		h->have_t0 = 1;
		h->t0 = s->time;
		if (h->o.hosts < 0) { /* decided by the first sample: the header is read */
			const char *src = sp_meta_find(p, "source");
			h->o.hosts = src && !strcmp(src, "pfleet");
		}
		if (h->o.hosts && (h->col = sp_value_column(p, h->o.weight, err)) < 0)
			return -1;
	}
	int64_t sl;
	double w = 1;
	if (h->o.hosts) {
		sl = (int64_t)(s->time / h->bucket_ns);
		w = s->values[h->col];
		if (!(w > 0)) /* no weight (or not a number): nothing to draw */
			return 0;
	} else {
		double slice_ns = 1e9 / h->o.rows;
		sl = (int64_t)floor(((double)s->time - (double)h->t0) / slice_ns);
	}
	uint32_t node = stack_of(h, s->thread, s->stack);
	int found;
	uint64_t key = sp_mix64((uint64_t)sl * 0x9e3779b97f4a7c15ull ^ node);
	/* distinct (slice, node) pairs whose keys collide probe on */
	for (;; key++) {
		if (key == UINT64_MAX)
			key = 0;
		uint32_t *slot = sp_u64map_slot(&h->cells, key, &found);
		if (!found) {
			if (h->ne == h->cap_e) {
				h->cap_e = h->cap_e ? h->cap_e * 2 : 1024;
				h->e = sp_xrealloc(h->e, h->cap_e * sizeof *h->e);
			}
			*slot = (uint32_t)h->ne;
			h->e[h->ne].slice = sl;
			h->e[h->ne].node = node;
			h->e[h->ne].w = w;
			h->ne++;
			break;
		}
		struct entry *e = &h->e[*slot];
		if (e->slice == sl && e->node == node) {
			e->w += w;
			break;
		}
	}
	h->samples++;
	return 0;
}

struct sp_heatmap *sp_heatmap_new(struct sp_profile *p, const struct sp_heatmap_opts *o)
{
	struct sp_heatmap *h = sp_xcalloc(1, sizeof *h);
	h->p = p;
	h->o = *o;
	if (h->o.rows <= 0)
		h->o.rows = 50;
	if (!(h->o.width > 0))
		h->o.width = 1200;
	if (!(h->o.bucket > 0))
		h->o.bucket = 60;
	h->bucket_ns = (uint64_t)llround(h->o.bucket * 1e9);
	if (!h->bucket_ns)
		h->bucket_ns = 1;
	h->col = -1;
	h->sink.sample = heat_sample;
	h->cap_nodes = 256;
	h->nnodes = 1; /* node 0: the root, "all" */
	h->parent = sp_xcalloc(h->cap_nodes, sizeof *h->parent);
	h->name = sp_xcalloc(h->cap_nodes, sizeof *h->name);
	sp_u64map_init(&h->child);
	sp_u64map_init(&h->cache);
	sp_u64map_init(&h->cells);
	return h;
}

void sp_heatmap_free(struct sp_heatmap *h)
{
	if (!h)
		return;
	free(h->parent);
	free(h->name);
	free(h->e);
	free(h->frames);
	sp_u64map_release(&h->child);
	sp_u64map_release(&h->cache);
	sp_u64map_release(&h->cells);
	free(h);
}

struct sp_sink *sp_heatmap_sink(struct sp_heatmap *h) { return &h->sink; }
void sp_heatmap_set_input(struct sp_heatmap *h, const char *name) { h->input = name; }
uint64_t sp_heatmap_samples(const struct sp_heatmap *h) { return h->samples; }

/* ---- writing ---- */

/* Length of a valid UTF-8 sequence at s (of n bytes), 0 when invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	if (s[0] < 0x80)
		return 1;
	size_t k = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 && s[0] < 0xe0 ? 2 : 0;
	if (!k || k > n)
		return 0;
	for (size_t i = 1; i < k; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if (k == 3 && ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0)))
		return 0; /* overlong, surrogate */
	if (k == 4 && ((s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90)))
		return 0;
	return k;
}

/* A JavaScript string literal that is safe in CDATA and in HTML: no '<',
 * '>', '&', no control bytes, no line separators; invalid UTF-8 becomes
 * U+FFFD. */
static void js_string(struct sp_buf *b, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	sp_buf_addc(b, '"');
	for (size_t i = 0; i < n;) {
		unsigned char c = u[i];
		size_t k = utf8_len(u + i, n - i);
		if (!k) {
			sp_buf_adds(b, "\\ufffd");
			i++;
		} else if (k > 1) {
			if (k == 3 && c == 0xe2 && u[i + 1] == 0x80 && (u[i + 2] == 0xa8 || u[i + 2] == 0xa9))
				sp_buf_addf(b, "\\u%04x", u[i + 2] == 0xa8 ? 0x2028 : 0x2029);
			else
				sp_buf_add(b, s + i, k);
			i += k;
		} else {
			if (c == '"' || c == '\\') {
				sp_buf_addc(b, '\\');
				sp_buf_addc(b, (char)c);
			} else if (c < 0x20 || c == '<' || c == '>' || c == '&' || c == 0x7f) {
				sp_buf_addf(b, "\\u%04x", c);
			} else {
				sp_buf_addc(b, (char)c);
			}
			i++;
		}
	}
	sp_buf_addc(b, '"');
}

static int cmp_entry(const void *pa, const void *pb)
{
	const struct entry *a = pa, *b = pb;
	if (a->slice != b->slice)
		return a->slice < b->slice ? -1 : 1;
	return a->node < b->node ? -1 : a->node > b->node;
}

static int cmp_cell(const void *pa, const void *pb)
{
	const struct entry *a = pa, *b = pb;
	if (a->cell != b->cell)
		return a->cell < b->cell ? -1 : 1;
	return a->node < b->node ? -1 : a->node > b->node;
}

static int flush(FILE *out, struct sp_buf *b, struct sp_err *err)
{
	if (b->len && fwrite(b->p, 1, b->len, out) != b->len)
		return sp_err_set(err, "write error");
	b->len = 0;
	return 0;
}

/* Clean text in XML character data: '<', '>', '&' escaped, control bytes
 * dropped, invalid UTF-8 as U+FFFD; cut to max characters with "..". */
static void xml_label(struct sp_buf *b, const char *s, size_t n, size_t max)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t chars = 0;
	for (size_t i = 0; i < n; chars++) {
		if (chars + 2 >= max && n - i > 2) {
			sp_buf_adds(b, "..");
			return;
		}
		size_t k = utf8_len(u + i, n - i);
		if (!k) {
			sp_buf_adds(b, "\xef\xbf\xbd");
			i++;
		} else if (k > 1) {
			sp_buf_add(b, s + i, k);
			i += k;
		} else {
			if (u[i] == '<')
				sp_buf_adds(b, "&lt;");
			else if (u[i] == '>')
				sp_buf_adds(b, "&gt;");
			else if (u[i] == '&')
				sp_buf_adds(b, "&amp;");
			else if (u[i] >= 0x20 && u[i] != 0x7f)
				sp_buf_addc(b, s[i]);
			i++;
		}
	}
}

/* The document's head: XML declaration, style, background, title. */
static void head(struct sp_buf *b, struct sp_heatmap *h, double W, double H, const char *deftitle)
{
	sp_buf_addf(b,
		    "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		    "<svg version=\"1.1\" width=\"%.0f\" height=\"%.0f\" xmlns=\"http://www.w3.org/2000/svg\" "
		    "xmlns:xlink=\"http://www.w3.org/1999/xlink\">\n",
		    W, H);
	sp_buf_adds(b, "<style type=\"text/css\">\n"
		       "text { font-family: Verdana, sans-serif; font-size: 12px; fill: #000; }\n"
		       "#title { font-size: 17px; }\n"
		       ".lbl { font-size: 10px; fill: #555; }\n"
		       "#cells rect { stroke: #fff; stroke-width: 0.5; cursor: pointer; }\n"
		       "#cells rect.sel { stroke: #00f; stroke-width: 1.5; }\n"
		       "#flame rect { stroke: #fff; stroke-width: 0.5; cursor: pointer; }\n"
		       "#flame text { font-size: 11px; pointer-events: none; }\n"
		       "#flame .dim { opacity: 0.5; }\n"
		       ".btn { cursor: pointer; fill: #333; }\n"
		       "</style>\n");
	sp_buf_addf(b, "<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"#f8f8f8\"/>\n");
	sp_buf_addf(b, "<text id=\"title\" x=\"%.1f\" y=\"24\" text-anchor=\"middle\">", W / 2);
	const char *t = h->o.title ? h->o.title : deftitle;
	xml_label(b, t, strlen(t), (size_t)-1);
	sp_buf_adds(b, "</text>\n");
}

/* A cell: white when empty (t < 0), else from light yellow (t near 0) to
 * red (t = 1). */
static void cell_rect(struct sp_buf *b, double x, double y, double w, double hgt, double t)
{
	int g = 255, bl = 255;
	if (t >= 0) {
		if (t > 1)
			t = 1;
		g = (int)lround(225 * (1 - t));
		bl = (int)lround(160 * (1 - t));
	}
	sp_buf_addf(b, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"#ff%02x%02x\"/>\n", x, y, w, hgt,
		    g, bl);
}

/* The buttons, the details line and the flame graph's group; y: the
 * details line. */
static void controls(struct sp_buf *b, double W, double left, double pad, double y)
{
	sp_buf_addf(b, "<text id=\"unzoom\" class=\"btn\" x=\"%.1f\" y=\"42\" text-anchor=\"end\" display=\"none\">Reset Zoom</text>\n",
		    W - pad - 70);
	sp_buf_addf(b, "<text id=\"search\" class=\"btn\" x=\"%.1f\" y=\"42\" text-anchor=\"end\">Search</text>\n", W - pad);
	sp_buf_addf(b, "<text id=\"details\" x=\"%.1f\" y=\"%.1f\"> </text>\n", left, y);
	sp_buf_addf(b, "<text id=\"matched\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\"> </text>\n", W - pad, y);
	sp_buf_adds(b, "<g id=\"flame\"></g>\n");
}

/* The data after the fields each mode writes: names, the stack tree, and
 * per cell (stack, weight) pairs (entries sorted by cell), then the
 * script. */
static int data_and_script(FILE *out, struct sp_buf *b, struct sp_heatmap *h, struct sp_err *err)
{
	/* names: the string ids used, densely renumbered */
	struct sp_u64map names;
	sp_u64map_init(&names);
	sp_buf_adds(b, "names:[\"all\"");
	uint32_t nnames = 1;
	uint32_t *nid = sp_xcalloc(h->nnodes, sizeof *nid);
	int rc = 0;
	for (size_t i = 1; i < h->nnodes && !rc; i++) {
		int found;
		uint32_t *slot = sp_u64map_slot(&names, h->name[i], &found);
		if (!found) {
			*slot = nnames++;
			sp_buf_addc(b, ',');
			js_string(b, sp_str(h->p, h->name[i]), sp_str_len(h->p, h->name[i]));
			if (b->len > 1 << 16)
				rc = flush(out, b, err);
		}
		nid[i] = *slot;
	}
	sp_u64map_release(&names);
	/* nodes: parent, name pairs for node 1.. (parents come first) */
	sp_buf_adds(b, "],\nnodes:[");
	for (size_t i = 1; i < h->nnodes && !rc; i++) {
		sp_buf_addf(b, "%s%u,%u", i > 1 ? "," : "", h->parent[i], nid[i]);
		if (b->len > 1 << 16)
			rc = flush(out, b, err);
	}
	free(nid);
	/* cells: cell index, number of pairs, then (node, weight) pairs */
	sp_buf_adds(b, "],\ncells:[");
	int first = 1;
	for (size_t i = 0; i < h->ne && !rc;) {
		size_t j = i;
		while (j < h->ne && h->e[j].cell == h->e[i].cell)
			j++;
		sp_buf_addf(b, "%s%lld,%zu", first ? "" : ",", (long long)h->e[i].cell, j - i);
		first = 0;
		for (size_t k = i; k < j; k++) {
			double w = h->e[k].w;
			/* whole counts (samples, ns) as integers: printed faster than by %g */
			if (w == floor(w) && fabs(w) < 1e15)
				sp_buf_addf(b, ",%u,%lld", h->e[k].node, (long long)w);
			else
				sp_buf_addf(b, ",%u,%.15g", h->e[k].node, w);
		}
		i = j;
		if (b->len > 1 << 16)
			rc = flush(out, b, err);
	}
	if (rc)
		return -1;
	sp_buf_adds(b, "]};\n]]></script>\n<script type=\"text/ecmascript\"><![CDATA[\n");
	if (flush(out, b, err) < 0)
		return -1;
	/* the script is ours (share/svg/heatmap.js): it holds no "]]>" */
	if (h->o.js_len && fwrite(h->o.js, 1, h->o.js_len, out) != h->o.js_len)
		return sp_err_set(err, "write error");
	sp_buf_adds(b, "\n]]></script>\n</svg>\n");
	return flush(out, b, err);
}

static int write_seconds(FILE *out, struct sp_heatmap *h, struct sp_err *err)
{
	sp_sort(h->e, h->ne, sizeof *h->e, cmp_entry);
	int rows = h->o.rows;
	int64_t smin = h->ne ? h->e[0].slice : 0, smax = h->ne ? h->e[h->ne - 1].slice : 0;
	/* columns are whole seconds from the first (earliest) sample */
	int64_t base = smin;
	int64_t cols = (smax - base) / rows + 1;
	size_t ncells = (size_t)cols * (size_t)rows;
	double *count = sp_xcalloc(ncells, sizeof *count);
	double maxc = 0;
	for (size_t i = 0; i < h->ne; i++) {
		size_t c = (size_t)(h->e[i].slice - base);
		h->e[i].cell = (int64_t)c;
		count[c] += h->e[i].w;
		if (count[c] > maxc)
			maxc = count[c];
	}
	double W = h->o.width, left = 50, top = 56, pad = 10;
	double cw = (W - left - pad) / (double)cols;
	if (cw > 24)
		cw = 24;
	double ch = rows <= 50 ? 8 : rows <= 100 ? 4 : 2;
	double maph = ch * rows;
	double H = top + maph + 60;
	struct sp_buf b = SP_BUF_INIT;
	head(&b, h, W, H, "Heat Map");
	sp_buf_addf(&b,
		    "<text id=\"help\" x=\"%.1f\" y=\"42\">%llu samples, %lld s; columns: seconds, rows: %d ms slices. "
		    "Click a start cell, then an end cell: the flame graph of that range is drawn below.</text>\n",
		    left, (unsigned long long)h->samples, (long long)cols, 1000 / rows);
	/* row labels: ms at every fifth slice */
	for (int r = 0; r < rows; r += rows >= 20 ? rows / 10 : 1)
		sp_buf_addf(&b, "<text class=\"lbl\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%d ms</text>\n", left - 4,
			    top + r * ch + ch, r * 1000 / rows);
	/* column labels */
	int64_t step = cw >= 20 ? 1 : cw >= 8 ? 5 : cw >= 2 ? 10 : 60;
	for (int64_t c = 0; c < cols; c += step)
		sp_buf_addf(&b, "<text class=\"lbl\" x=\"%.1f\" y=\"%.1f\">%llds</text>\n", left + (double)c * cw,
			    top - 3, (long long)c);
	sp_buf_adds(&b, "<g id=\"cells\">\n");
	int rc = 0;
	for (int64_t c = 0; c < cols && !rc; c++) {
		for (int r = 0; r < rows; r++) {
			double n = count[(size_t)c * (size_t)rows + (size_t)r];
			cell_rect(&b, left + (double)c * cw, top + r * ch, cw, ch, n ? n / maxc : -1);
		}
		rc = flush(out, &b, err);
	}
	free(count);
	if (!rc) {
		sp_buf_adds(&b, "</g>\n");
		controls(&b, W, left, pad, top + maph + 20);
		sp_buf_adds(&b, "<script type=\"text/ecmascript\"><![CDATA[\nvar spheat={v:1,mode:\"seconds\",");
		sp_buf_addf(&b, "W:%.0f,left:%.1f,top:%.1f,cw:%.4f,ch:%.1f,cols:%lld,rows:%d,fh:16,pad:%.0f,max:%.15g,samples:%llu,",
			    W, left, top, cw, ch, (long long)cols, rows, pad, maxc, (unsigned long long)h->samples);
		rc = data_and_script(out, &b, h, err);
	}
	sp_buf_release(&b);
	return rc;
}

static const char *node_name(struct sp_heatmap *h, uint32_t node, size_t *n)
{
	static const char empty[] = "[empty stack]";
	if (!node) {
		*n = sizeof empty - 1;
		return empty;
	}
	*n = sp_str_len(h->p, h->name[node]);
	return sp_str(h->p, h->name[node]);
}

static struct sp_heatmap *sort_h; /* the heat map whose rows sp_sort orders */
static int cmp_row(const void *pa, const void *pb)
{
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	size_t na, nb;
	const char *x = node_name(sort_h, a, &na), *y = node_name(sort_h, b, &nb);
	/* names hold no NUL in practice; compare as C strings, web-2 before web-10 */
	char xa[256], yb[256];
	snprintf(xa, sizeof xa, "%.*s", (int)na, x);
	snprintf(yb, sizeof yb, "%.*s", (int)nb, y);
	int c = strverscmp(xa, yb);
	return c ? c : (a < b ? -1 : a > b);
}

/* A bucket's start as a label: wall-clock "HH:MM" (UTC) for times after
 * 2001 (pfleet's), else seconds from the first bucket. */
static void time_label(struct sp_buf *b, int64_t sec, int64_t first, int wall, int with_date)
{
	if (!wall) {
		sp_buf_addf(b, "+%llds", (long long)(sec - first));
		return;
	}
	time_t tt = (time_t)sec;
	struct tm tm;
	char t[32];
	gmtime_r(&tt, &tm);
	strftime(t, sizeof t, with_date ? "%Y-%m-%d %H:%M:%S" : tm.tm_sec ? "%H:%M:%S" : "%H:%M", &tm);
	sp_buf_adds(b, t);
}

static int write_hosts(FILE *out, struct sp_heatmap *h, struct sp_err *err)
{
	size_t nn = h->nnodes;
	/* a node's row: its ancestor right below the root (parents come first) */
	uint32_t *top = sp_xcalloc(nn, sizeof *top), *rowof = sp_xcalloc(nn, sizeof *rowof);
	unsigned char *hasf = sp_xcalloc(nn, 1);
	size_t fl = h->o.fn ? strlen(h->o.fn) : 0;
	for (size_t i = 1; i < nn; i++) {
		top[i] = h->parent[i] ? top[h->parent[i]] : (uint32_t)i;
		hasf[i] = hasf[h->parent[i]] ||
			  (h->o.fn && sp_str_len(h->p, h->name[i]) == fl && !memcmp(sp_str(h->p, h->name[i]), h->o.fn, fl));
	}
	/* the rows that hold samples, by name */
	uint32_t *rown = NULL;
	size_t nrows = 0;
	unsigned char *seen = sp_xcalloc(nn, 1);
	int64_t cmin = INT64_MAX, cmax = INT64_MIN;
	for (size_t i = 0; i < h->ne; i++) {
		uint32_t t = top[h->e[i].node];
		if (!seen[t]) {
			seen[t] = 1;
			rown = sp_xrealloc(rown, (nrows + 1) * sizeof *rown);
			rown[nrows++] = t;
		}
		if (h->e[i].slice < cmin)
			cmin = h->e[i].slice;
		if (h->e[i].slice > cmax)
			cmax = h->e[i].slice;
	}
	free(seen);
	sort_h = h;
	sp_sort(rown, nrows, sizeof *rown, cmp_row);
	for (size_t r = 0; r < nrows; r++)
		rowof[rown[r]] = (uint32_t)r;
	int64_t cols = cmax - cmin + 1;
	int rc = 0;
	double *tot = NULL, *fw = NULL;
	struct sp_buf b = SP_BUF_INIT;
	if (cols > 20000 || (double)cols * (double)nrows > 4e6) {
		rc = sp_err_set(err, "%lld buckets of %g s for %zu hosts is too large a map: give a larger --bucket",
				(long long)cols, h->o.bucket, nrows);
		goto out;
	}
	size_t ncells = (size_t)cols * nrows;
	tot = sp_xcalloc(ncells, sizeof *tot);
	fw = sp_xcalloc(ncells, sizeof *fw);
	for (size_t i = 0; i < h->ne; i++) {
		struct entry *e = &h->e[i];
		e->cell = (e->slice - cmin) * (int64_t)nrows + rowof[top[e->node]];
		tot[e->cell] += e->w;
		if (hasf[e->node])
			fw[e->cell] += e->w;
	}
	sp_sort(h->e, h->ne, sizeof *h->e, cmp_cell);
	double maxv = 0, sum = 0, fsum = 0;
	for (size_t c = 0; c < ncells; c++) {
		double v = h->o.fn ? (tot[c] > 0 ? fw[c] / tot[c] : 0) : tot[c];
		if (v > maxv)
			maxv = v;
		sum += tot[c];
		fsum += fw[c];
	}
	/* layout: host names at the left, a row per host, a column per bucket */
	size_t longest = 4;
	for (size_t r = 0; r < nrows; r++) {
		size_t n;
		node_name(h, rown[r], &n);
		if (n > longest)
			longest = n;
	}
	if (longest > 32)
		longest = 32;
	double W = h->o.width, pad = 10, top0 = 70;
	double left = 12 + 6.2 * (double)longest;
	double cw = (W - left - pad) / (double)cols;
	if (cw > 160)
		cw = 160;
	double ch = floor(480.0 / (double)nrows);
	ch = ch > 20 ? 20 : ch < 3 ? 3 : ch;
	double maph = ch * (double)nrows;
	double H = top0 + maph + 60;
	const char *unit = sp_value_unit(h->p, h->col, 0);
	int64_t bsec = (int64_t)(h->bucket_ns / 1000000000u), t0 = 0;
	int wall = 0;
	if (h->bucket_ns % 1000000000u == 0) {
		t0 = cmin * bsec;
		wall = t0 >= 978307200; /* after 2001: a wall clock */
	}
	head(&b, h, W, H, "Fleet Heat Map");
	sp_buf_addf(&b, "<text id=\"help\" x=\"%.1f\" y=\"42\">", pad);
	sp_buf_addvalue(&b, sum, unit);
	sp_buf_addf(&b, ", %zu host%s x %lld bucket%s of %g s", nrows, nrows == 1 ? "" : "s", (long long)cols,
		    cols == 1 ? "" : "s", h->o.bucket);
	if (wall) {
		sp_buf_adds(&b, " from ");
		time_label(&b, t0, t0, 1, 1);
		sp_buf_adds(&b, " UTC");
	}
	if (h->o.fn) {
		sp_buf_adds(&b, "; colour: the share in ");
		xml_label(&b, h->o.fn, fl, 60);
		sp_buf_addf(&b, " (%.1f%% of all)", sum > 0 ? 100 * fsum / sum : 0.0);
	}
	sp_buf_adds(&b, ".</text>\n");
	sp_buf_addf(&b, "<text x=\"%.1f\" y=\"58\" class=\"lbl\">Click a start cell, then an end cell: the flame graph of "
			"those hosts and buckets is drawn below.</text>\n", pad);
	/* host labels: every row that has room, else every k-th */
	int every = ch >= 9 ? 1 : (int)ceil(9.0 / ch);
	for (size_t r = 0; r < nrows; r += (size_t)every) {
		size_t n;
		const char *nm = node_name(h, rown[r], &n);
		sp_buf_addf(&b, "<text class=\"lbl\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", left - 4,
			    top0 + (double)r * ch + (ch >= 10 ? ch - 2 : ch));
		xml_label(&b, nm, n, longest + 2);
		sp_buf_adds(&b, "</text>\n");
	}
	/* bucket labels: one each 70 px or so */
	int64_t step = (int64_t)ceil(70.0 / cw);
	for (int64_t c = 0; c < cols; c += step) {
		sp_buf_addf(&b, "<text class=\"lbl\" x=\"%.1f\" y=\"%.1f\">", left + (double)c * cw, top0 - 3);
		time_label(&b, t0 + c * bsec, t0, wall, 0);
		sp_buf_adds(&b, "</text>\n");
	}
	sp_buf_adds(&b, "<g id=\"cells\">\n");
	for (int64_t c = 0; c < cols && !rc; c++) {
		for (size_t r = 0; r < nrows; r++) {
			size_t k = (size_t)c * nrows + r;
			double v = h->o.fn ? (tot[k] > 0 ? fw[k] / tot[k] : 0) : tot[k];
			cell_rect(&b, left + (double)c * cw, top0 + (double)r * ch, cw, ch,
				  tot[k] > 0 ? (maxv > 0 ? v / maxv : 0) : -1);
		}
		if (b.len > 1 << 16)
			rc = flush(out, &b, err);
	}
	if (rc)
		goto out;
	sp_buf_adds(&b, "</g>\n");
	controls(&b, W, pad, pad, top0 + maph + 20);
	sp_buf_adds(&b, "<script type=\"text/ecmascript\"><![CDATA[\nvar spheat={v:1,mode:\"hosts\",");
	sp_buf_addf(&b, "W:%.0f,left:%.1f,top:%.1f,cw:%.4f,ch:%.1f,cols:%lld,rows:%zu,fh:16,pad:%.0f,max:%.15g,samples:%.15g,",
		    W, left, top0, cw, ch, (long long)cols, nrows, pad, maxv, sum);
	sp_buf_addf(&b, "t0:%lld,bucket:%g,wall:%d,unit:", (long long)t0, h->o.bucket, wall);
	js_string(&b, unit, strlen(unit));
	sp_buf_adds(&b, ",fn:");
	if (h->o.fn)
		js_string(&b, h->o.fn, fl);
	else
		sp_buf_adds(&b, "null");
	sp_buf_adds(&b, ",\nrowNames:[");
	for (size_t r = 0; r < nrows; r++) {
		size_t n;
		const char *nm = node_name(h, rown[r], &n);
		if (r)
			sp_buf_addc(&b, ',');
		js_string(&b, nm, n);
	}
	sp_buf_adds(&b, "],\n");
	rc = data_and_script(out, &b, h, err);
out:
	free(top);
	free(rowof);
	free(hasf);
	free(rown);
	free(tot);
	free(fw);
	sp_buf_release(&b);
	return rc;
}

int sp_heatmap_write(FILE *out, struct sp_heatmap *h, struct sp_err *err)
{
	return h->o.hosts == 1 ? write_hosts(out, h, err) : write_seconds(out, h, err);
}
