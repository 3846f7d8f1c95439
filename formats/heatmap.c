/* heatmap.c — psvg --heatmap (see heatmap.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "heatmap.h"

struct entry {
	int64_t slice; /* slice number from the first sample's */
	uint32_t node; /* heat-map stack */
	uint32_t count;
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
	uint32_t cur = comm ? child_of(h, 0, comm) : 0;
	uint32_t depth = sp_node_frames(h->p, node, &h->frames, &h->cap_frames);
	for (uint32_t i = 0; i < depth; i++)
		cur = child_of(h, cur, sp_frame_get(h->p, h->frames[i])->name);
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
				       "stream has them: pcollect, or perf script | pfold -b; folded text has none)",
				  h->input ? h->input : "", h->input ? ": " : "");
	if (!h->have_t0) {
		h->have_t0 = 1;
		h->t0 = s->time;
	}
	double slice_ns = 1e9 / h->o.rows;
	int64_t sl = (int64_t)floor(((double)s->time - (double)h->t0) / slice_ns);
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
			h->e[h->ne].count = 0;
			h->ne++;
			slot = &h->e[h->ne - 1].count;
			(*slot)++;
			break;
		}
		struct entry *e = &h->e[*slot];
		if (e->slice == sl && e->node == node) {
			e->count++;
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

static int flush(FILE *out, struct sp_buf *b, struct sp_err *err)
{
	if (b->len && fwrite(b->p, 1, b->len, out) != b->len)
		return sp_err_set(err, "write error");
	b->len = 0;
	return 0;
}

int sp_heatmap_write(FILE *out, struct sp_heatmap *h, struct sp_err *err)
{
	sp_sort(h->e, h->ne, sizeof *h->e, cmp_entry);
	int rows = h->o.rows;
	int64_t smin = h->ne ? h->e[0].slice : 0, smax = h->ne ? h->e[h->ne - 1].slice : 0;
	/* columns are whole seconds from the first (earliest) sample */
	int64_t base = smin;
	int64_t cols = (smax - base) / rows + 1;
	size_t ncells = (size_t)cols * (size_t)rows;
	uint32_t *count = sp_xcalloc(ncells, sizeof *count);
	uint32_t maxc = 0;
	for (size_t i = 0; i < h->ne; i++) {
		size_t c = (size_t)(h->e[i].slice - base);
		count[c] += h->e[i].count;
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
	sp_buf_addf(&b,
		    "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		    "<svg version=\"1.1\" width=\"%.0f\" height=\"%.0f\" xmlns=\"http://www.w3.org/2000/svg\" "
		    "xmlns:xlink=\"http://www.w3.org/1999/xlink\">\n",
		    W, H);
	sp_buf_adds(&b, "<style type=\"text/css\">\n"
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
	sp_buf_addf(&b, "<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"#f8f8f8\"/>\n");
	sp_buf_addf(&b, "<text id=\"title\" x=\"%.1f\" y=\"24\" text-anchor=\"middle\">", W / 2);
	{
		const char *t = h->o.title ? h->o.title : "Heat Map";
		for (const char *q = t; *q; q++) {
			if (*q == '<')
				sp_buf_adds(&b, "&lt;");
			else if (*q == '&')
				sp_buf_adds(&b, "&amp;");
			else if (*q == '>')
				sp_buf_adds(&b, "&gt;");
			else if ((unsigned char)*q >= 0x20)
				sp_buf_addc(&b, *q);
		}
	}
	sp_buf_adds(&b, "</text>\n");
	sp_buf_addf(&b,
		    "<text id=\"help\" x=\"%.1f\" y=\"42\">%llu samples, %lld s; columns: seconds, rows: %d ms slices. "
		    "Click a start cell, then an end cell: the flame graph of that range is drawn below.</text>\n",
		    left, (unsigned long long)h->samples, (long long)cols, 1000 / rows);
	sp_buf_addf(&b, "<text id=\"unzoom\" class=\"btn\" x=\"%.1f\" y=\"42\" text-anchor=\"end\" display=\"none\">Reset Zoom</text>\n",
		    W - pad - 70);
	sp_buf_addf(&b, "<text id=\"search\" class=\"btn\" x=\"%.1f\" y=\"42\" text-anchor=\"end\">Search</text>\n", W - pad);
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
	for (int64_t c = 0; c < cols; c++) {
		for (int r = 0; r < rows; r++) {
			uint32_t n = count[(size_t)c * (size_t)rows + (size_t)r];
			int g = 255, bl = 255;
			if (n) {
				double t = (double)n / maxc;
				g = (int)lround(225 * (1 - t));
				bl = (int)lround(160 * (1 - t));
			}
			sp_buf_addf(&b, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"#ff%02x%02x\"/>\n",
				    left + (double)c * cw, top + r * ch, cw, ch, g, bl);
		}
		if (flush(out, &b, err) < 0)
			goto fail;
	}
	sp_buf_adds(&b, "</g>\n");
	sp_buf_addf(&b, "<text id=\"details\" x=\"%.1f\" y=\"%.1f\"> </text>\n", left, top + maph + 20);
	sp_buf_addf(&b, "<text id=\"matched\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\"> </text>\n", W - pad,
		    top + maph + 20);
	sp_buf_adds(&b, "<g id=\"flame\"></g>\n");
	/* the data: names, the stack tree, and per cell (stack, samples) pairs */
	sp_buf_adds(&b, "<script type=\"text/ecmascript\"><![CDATA[\nvar spheat={v:1,");
	sp_buf_addf(&b, "W:%.0f,left:%.1f,top:%.1f,cw:%.4f,ch:%.1f,cols:%lld,rows:%d,fh:16,pad:%.0f,max:%u,samples:%llu,",
		    W, left, top, cw, ch, (long long)cols, rows, pad, maxc, (unsigned long long)h->samples);
	/* names: the string ids used, densely renumbered */
	struct sp_u64map names;
	sp_u64map_init(&names);
	sp_buf_adds(&b, "names:[\"all\"");
	uint32_t nnames = 1;
	uint32_t *nid = sp_xcalloc(h->nnodes, sizeof *nid);
	for (size_t i = 1; i < h->nnodes; i++) {
		int found;
		uint32_t *slot = sp_u64map_slot(&names, h->name[i], &found);
		if (!found) {
			*slot = nnames++;
			sp_buf_addc(&b, ',');
			js_string(&b, sp_str(h->p, h->name[i]), sp_str_len(h->p, h->name[i]));
			if (b.len > 1 << 16 && flush(out, &b, err) < 0) {
				free(nid);
				sp_u64map_release(&names);
				goto fail;
			}
		}
		nid[i] = *slot;
	}
	sp_u64map_release(&names);
	/* nodes: parent, name pairs for node 1.. (parents come first) */
	sp_buf_adds(&b, "],\nnodes:[");
	for (size_t i = 1; i < h->nnodes; i++) {
		sp_buf_addf(&b, "%s%u,%u", i > 1 ? "," : "", h->parent[i], nid[i]);
		if (b.len > 1 << 16 && flush(out, &b, err) < 0) {
			free(nid);
			goto fail;
		}
	}
	free(nid);
	/* cells: cell index, number of pairs, then (node, samples) pairs */
	sp_buf_adds(&b, "],\ncells:[");
	int first = 1;
	for (size_t i = 0; i < h->ne;) {
		size_t j = i;
		while (j < h->ne && h->e[j].slice == h->e[i].slice)
			j++;
		sp_buf_addf(&b, "%s%lld,%zu", first ? "" : ",", (long long)(h->e[i].slice - base), j - i);
		first = 0;
		for (size_t k = i; k < j; k++)
			sp_buf_addf(&b, ",%u,%u", h->e[k].node, h->e[k].count);
		i = j;
		if (b.len > 1 << 16 && flush(out, &b, err) < 0)
			goto fail;
	}
	sp_buf_adds(&b, "]};\n]]></script>\n<script type=\"text/ecmascript\"><![CDATA[\n");
	if (flush(out, &b, err) < 0)
		goto fail;
	/* the script is ours (share/svg/heatmap.js): it holds no "]]>" */
	if (h->o.js_len && fwrite(h->o.js, 1, h->o.js_len, out) != h->o.js_len) {
		sp_err_set(err, "write error");
		goto fail;
	}
	sp_buf_adds(&b, "\n]]></script>\n</svg>\n");
	if (flush(out, &b, err) < 0)
		goto fail;
	free(count);
	sp_buf_release(&b);
	return 0;
fail:
	free(count);
	sp_buf_release(&b);
	return -1;
}
