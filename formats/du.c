/* du.c — disk usage as a profile: `find DIR -printf '%s %p\n'` output, one
 * "BYTES PATH" line per file or directory, folded by path component so a
 * flame graph shows where the bytes are (the stack of "./src/lib/x.c" is
 * ".", "src", "lib", "x.c"; an absolute path starts at "/").  A directory's
 * own line (its inode's size) is its self weight.  One value column,
 * "bytes".  The path is the rest of the line, spaces included; a name with
 * a newline cannot be told from two lines.  `du -ab` output is not this: it
 * gives directories their whole subtree, which would count bytes twice.
 */
#include <stdlib.h>

#include "format.h"

/* The previous line's components: a path shares its directory with its
 * neighbours in find's order, so only the new components are interned. */
struct prev {
	struct sp_buf path;
	uint32_t *ends, *nodes; /* per component: end offset in path, node */
	size_t n, cap;
};

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

static uint32_t path_node(struct sp_profile *p, struct prev *pv, const char *s, size_t n)
{
	/* reuse the components both paths share, whole, from the start */
	size_t common = 0, lim = n < pv->path.len ? n : pv->path.len;
	while (common < lim && s[common] == pv->path.p[common])
		common++;
	size_t keep = 0;
	while (keep < pv->n && pv->ends[keep] <= common &&
	       (pv->ends[keep] == n || s[pv->ends[keep]] == '/' || s[pv->ends[keep] - 1] == '/'))
		keep++;
	uint32_t node = keep ? pv->nodes[keep - 1] : 0;
	pv->n = keep;
	size_t i = keep ? pv->ends[keep - 1] : 0;
	if (!keep && n && s[0] == '/') {
		node = sp_node_intern(p, 0, sp_frame_named(p, "/", 1, SP_KIND_NATIVE));
		i = 1;
		if (pv->n == pv->cap) {
			pv->cap = pv->cap ? 2 * pv->cap : 32;
			pv->ends = sp_xrealloc(pv->ends, pv->cap * sizeof *pv->ends);
			pv->nodes = sp_xrealloc(pv->nodes, pv->cap * sizeof *pv->nodes);
		}
		pv->ends[pv->n] = 1;
		pv->nodes[pv->n++] = node;
	}
	while (i < n) {
		while (i < n && s[i] == '/')
			i++;
		size_t b = i;
		while (i < n && s[i] != '/')
			i++;
		if (i == b)
			break;
		node = sp_node_intern(p, node, sp_frame_named(p, s + b, i - b, SP_KIND_NATIVE));
		if (pv->n == pv->cap) {
			pv->cap = pv->cap ? 2 * pv->cap : 32;
			pv->ends = sp_xrealloc(pv->ends, pv->cap * sizeof *pv->ends);
			pv->nodes = sp_xrealloc(pv->nodes, pv->cap * sizeof *pv->nodes);
		}
		pv->ends[pv->n] = (uint32_t)i;
		pv->nodes[pv->n++] = node;
	}
	sp_buf_reset(&pv->path);
	sp_buf_add(&pv->path, s, n);
	return node;
}

static int du_read(struct sp_input *in, struct sp_profile *p, struct sp_sink *sink, struct sp_read_opts *o,
		   struct sp_err *err)
{
	struct sp_read_opts none;
	if (!o) {
		memset(&none, 0, sizeof none);
		o = &none;
	}
	if (sp_profile_nvalues(p) == 0) {
		static const char *const names[] = { "bytes" };
		sp_profile_set_values(p, 1, names);
		sp_profile_set_unit(p, 0, "bytes");
		if (sink->meta && sink->meta(sink, p, err) < 0)
			return -1;
	}
	int nv = sp_profile_nvalues(p);
	struct prev pv;
	memset(&pv, 0, sizeof pv);
	struct sp_sample smp;
	memset(&smp, 0, sizeof smp);
	smp.time = SP_NO_TIME;
	int rc = 0;
	const char *line;
	size_t len;
	while ((line = sp_input_line(in, &len))) {
		size_t n = len;
		if (n && line[n - 1] == '\r')
			n--;
		if (!n)
			continue;
		uint64_t bytes;
		size_t k = sp_parse_u64(line, line + n, &bytes);
		if (!k || k >= n || (line[k] != ' ' && line[k] != '\t') || k + 1 == n) {
			warn_bad(o, in, "expected \"BYTES PATH\" (find DIR -printf '%s %p\\n')", line, len);
			continue;
		}
		smp.stack = path_node(p, &pv, line + k + 1, n - k - 1);
		if (!smp.stack) {
			warn_bad(o, in, "the path has no name in it", line, len);
			continue;
		}
		for (int i = 0; i < nv && i < SP_MAX_VALUES; i++)
			smp.values[i] = (double)bytes;
		if (sink->sample && sink->sample(sink, p, &smp, err) < 0) {
			rc = -1;
			break;
		}
	}
	if (!rc && sp_input_failed(in, err))
		rc = -1;
	if (!rc && sink->end_input && sink->end_input(sink, p, err) < 0)
		rc = -1;
	sp_buf_release(&pv.path);
	free(pv.ends);
	free(pv.nodes);
	return rc;
}

/* Every complete line is "DIGITS PATH" (one space, PATH not starting with
 * a space), and some path has a '/' in it. */
static int du_probe(const char *buf, size_t n, int complete)
{
	const char *s = buf, *e = buf + n;
	int lines = 0, slash = 0;
	while (s < e) {
		const char *nl = memchr(s, '\n', (size_t)(e - s));
		if (!nl) {
			if (complete)
				nl = e;
			else
				break;
		}
		size_t i = 0, len = (size_t)(nl - s);
		while (i < len && s[i] >= '0' && s[i] <= '9')
			i++;
		if (!i || i + 1 >= len || s[i] != ' ' || s[i + 1] == ' ' || s[i + 1] == '\t')
			return 0;
		slash |= memchr(s + i, '/', len - i) != NULL;
		lines++;
		s = nl + 1;
	}
	return lines && slash ? 40 : 0;
}

const struct sp_format sp_format_du = { "du", "disk usage: find DIR -printf '%s %p\\n'", du_probe, du_read };
