/* svg.c — the interactive SVG flame graph writer (see svg.h).
 *
 * Layout of the document:
 *   header, notes comment, background gradient, two <style>s (the options'
 *   rules, then share/svg/flame.css), title/subtitle/status texts, the
 *   overview's frames as <rect>/<text> (only those at least --minwidth
 *   wide), the data <script> (names, colours and every frame, encoded
 *   below), then share/svg/flame.js, which decodes the data and redraws.
 *
 * The frame data: frames in preorder without the root, each as numbers in
 * a base-32 text varint (a digit from T ends a number, a digit from C says
 * more follow; both sets are plain ASCII letters, digits and "$%" so the
 * block needs no escaping):
 *   up    how many levels above the previous frame's child this frame sits
 *         (0 = child of the previous frame)
 *   name  index into the name table
 *   dx    start minus the end of the previous sibling (or the parent's start)
 *   w     width
 *   diff graphs add: other (the total of the profile not drawn), and the
 *   frame's own change, zigzag-encoded.
 * Positions are integers: values times `scale` (1 for integer counts),
 * rounded at the running sums so children never exceed their parent.
 */
#include "svg.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

void sp_svg_opts_init(struct sp_svg_opts *o)
{
	memset(o, 0, sizeof *o);
	o->countname = NULL; /* the data's unit */
	o->nametype = "Function:";
	o->fonttype = "Verdana";
	o->width = 1200;
	o->frame_height = 16;
	o->fontsize = 12;
	o->fontwidth = 0.59;
	o->minwidth = 0.1;
	o->factor = 1;
}

/* ---- text: valid UTF-8, then escaped for where it goes ---- */

static void add_hex_byte(struct sp_buf *out, unsigned char c)
{
	static const char hex[] = "0123456789abcdef";
	char t[4] = { '\\', 'x', hex[c >> 4], hex[c & 15] };
	sp_buf_add(out, t, 4);
}

/* Length of a valid UTF-8 sequence at s that XML 1.0 allows, 0 if none. */
static size_t utf8_ok(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	if (c < 0x80)
		return c >= 0x20 && c != 0x7f ? 1 : 0; /* controls: shown escaped */
	size_t len;
	uint32_t cp;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0; /* overlong or out of range */
	if ((cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe || cp == 0xffff)
		return 0; /* surrogates and the two non-characters XML forbids */
	return len;
}

/* Bytes -> valid UTF-8 holding only characters XML allows; anything else
 * (invalid UTF-8, NUL, ESC, DEL, other controls) becomes the text "\xHH",
 * and a backslash stays a backslash (names are code, not escapes).
 * Returns the number of characters written. */
static size_t clean(const char *s, size_t n, struct sp_buf *out)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, chars = 0;
	while (i < n) {
		size_t j = i;
		while (j < n && u[j] >= 0x20 && u[j] < 0x7f) /* printable ASCII: as it is */
			j++;
		if (j > i) {
			sp_buf_add(out, s + i, j - i);
			chars += j - i;
			i = j;
			continue;
		}
		size_t k = utf8_ok(u + i, n - i);
		if (k) {
			sp_buf_add(out, s + i, k);
			chars++;
			i += k;
		} else {
			add_hex_byte(out, u[i]);
			chars += 4;
			i++;
		}
	}
	return chars;
}

/* Escape clean text for XML character data or a quoted attribute. */
static void xml_esc(struct sp_buf *out, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		switch (s[i]) {
		case '&': sp_buf_add(out, "&amp;", 5); break;
		case '<': sp_buf_add(out, "&lt;", 4); break;
		case '>': sp_buf_add(out, "&gt;", 4); break;
		case '"': sp_buf_add(out, "&quot;", 6); break;
		case '\'': sp_buf_add(out, "&#39;", 5); break;
		default: sp_buf_addc(out, s[i]);
		}
	}
}

static void xml_text(struct sp_buf *out, const char *s, size_t n)
{
	struct sp_buf c = SP_BUF_INIT;
	clean(s, n, &c);
	xml_esc(out, c.p ? c.p : "", c.len);
	sp_buf_release(&c);
}

/* Bytes a JavaScript string literal holds as they are. */
static const unsigned char js_plain[256] = {
	/* printable ASCII but " & < > \ */
	[' '] = 1, ['!'] = 1, ['#' ... '%'] = 1, ['\'' ... ';'] = 1, ['='] = 1, ['?' ... '['] = 1,
	[']' ... 0x7f] = 1,
	/* UTF-8 bytes but 0xe2, which may start U+2028 or U+2029 */
	[0x80 ... 0xe1] = 1, [0xe3 ... 0xff] = 1,
};

/* Clean text as a JavaScript string literal, safe inside CDATA and inside
 * an HTML <script> (no '<', '>', '&' at all). */
static void js_str(struct sp_buf *out, const char *s, size_t n)
{
	sp_buf_addc(out, '"');
	for (size_t i = 0; i < n; i++) {
		size_t j = i;
		while (j < n && js_plain[(unsigned char)s[j]])
			j++;
		if (j > i) {
			sp_buf_add(out, s + i, j - i);
			if (j == n)
				break;
			i = j;
		}
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\') {
			sp_buf_addc(out, '\\');
			sp_buf_addc(out, (char)c);
		} else if (c == '<' || c == '>' || c == '&' || c < 0x20) {
			static const char hex[] = "0123456789abcdef";
			char t[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };
			sp_buf_add(out, t, 6);
		} else if (c == 0xe2 && i + 2 < n && (unsigned char)s[i + 1] == 0x80 &&
			   ((unsigned char)s[i + 2] == 0xa8 || (unsigned char)s[i + 2] == 0xa9)) {
			sp_buf_addf(out, "\\u%04x", (unsigned char)s[i + 2] == 0xa8 ? 0x2028 : 0x2029);
			i += 2;
		} else {
			sp_buf_addc(out, (char)c);
		}
	}
	sp_buf_addc(out, '"');
}

static void js_clean(struct sp_buf *out, const char *s)
{
	struct sp_buf c = SP_BUF_INIT;
	clean(s, strlen(s), &c);
	js_str(out, c.p ? c.p : "", c.len);
	sp_buf_release(&c);
}

/* An XML comment may not contain "--" nor end in "-". */
static void comment_text(struct sp_buf *out, const char *s)
{
	struct sp_buf c = SP_BUF_INIT;
	clean(s, strlen(s), &c);
	for (size_t i = 0; i < c.len; i++) {
		sp_buf_addc(out, c.p[i]);
		if (c.p[i] == '-' && (i + 1 == c.len || c.p[i + 1] == '-'))
			sp_buf_addc(out, ' ');
	}
	sp_buf_release(&c);
}

/* A CSS font-family list: generic families bare, others as quoted strings
 * with every character that could end the string, the rule or the markup
 * written as a CSS escape. */
static void css_fonts(struct sp_buf *out, const char *fonts)
{
	static const char *const generic[] = { "serif", "sans-serif", "monospace", "cursive", "fantasy",
					       "system-ui", "ui-monospace", "ui-sans-serif", "ui-serif", NULL };
	struct sp_buf c = SP_BUF_INIT;
	clean(fonts, strlen(fonts), &c);
	const char *s = c.p ? c.p : "", *e = s + c.len;
	int first = 1;
	while (s <= e) {
		const char *comma = memchr(s, ',', (size_t)(e - s));
		const char *fe = comma ? comma : e;
		const char *a = s, *b = fe;
		while (a < b && (*a == ' ' || *a == '\'' || *a == '"'))
			a++;
		while (b > a && (b[-1] == ' ' || b[-1] == '\'' || b[-1] == '"'))
			b--;
		if (b > a) {
			if (!first)
				sp_buf_add(out, ", ", 2);
			first = 0;
			int gen = 0;
			for (int i = 0; generic[i]; i++)
				if (strlen(generic[i]) == (size_t)(b - a) && !memcmp(generic[i], a, (size_t)(b - a)))
					gen = 1;
			if (gen) {
				sp_buf_add(out, a, (size_t)(b - a));
			} else {
				sp_buf_addc(out, '"');
				for (const char *q = a; q < b; q++) {
					unsigned char ch = (unsigned char)*q;
					if (ch == '"' || ch == '\\' || ch == '<' || ch == '>' || ch == '&' || ch == ']' ||
					    ch < 0x20)
						sp_buf_addf(out, "\\%x ", ch);
					else
						sp_buf_addc(out, (char)ch);
				}
				sp_buf_addc(out, '"');
			}
		}
		if (!comma)
			break;
		s = comma + 1;
	}
	if (first)
		sp_buf_adds(out, "sans-serif");
	sp_buf_release(&c);
}

/* CDATA cannot contain "]]>": split it there. */
static void cdata(struct sp_buf *out, const char *s, size_t n)
{
	sp_buf_adds(out, "<![CDATA[");
	const char *e = s + n;
	while (s < e) {
		const char *m = memmem(s, (size_t)(e - s), "]]>", 3);
		if (!m) {
			sp_buf_add(out, s, (size_t)(e - s));
			break;
		}
		sp_buf_add(out, s, (size_t)(m - s) + 2);
		sp_buf_adds(out, "]]><![CDATA[");
		s = m + 2;
	}
	sp_buf_adds(out, "]]>");
}

/* ---- colours ---- */

const char sp_svg_palettes[] =
	"hot, mem, io, wakeup, chain, java, js, perl, python, red, green, blue, aqua, yellow, purple, orange";

int sp_svg_palette_known(const char *name)
{
	size_t n = strlen(name);
	if (!n)
		return 0;
	for (const char *s = sp_svg_palettes; (s = strstr(s, name)); s += n)
		if ((s == sp_svg_palettes || s[-1] == ' ') && (s[n] == ',' || !s[n]))
			return 1;
	return 0;
}

static int is_hex_colour(const char *s)
{
	if (!s || s[0] != '#' || strlen(s) != 7)
		return 0;
	for (int i = 1; i < 7; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f') || (s[i] >= 'A' && s[i] <= 'F')))
			return 0;
	return 1;
}

int sp_svg_bgcolors_known(const char *name)
{
	return !strcmp(name, "yellow") || !strcmp(name, "blue") || !strcmp(name, "green") || !strcmp(name, "grey") ||
	       !strcmp(name, "gray") || is_hex_colour(name);
}

/* A value in [0,1] from the name, stable across graphs: the first
 * characters weigh most, so similar names get similar colours (the --hash
 * of flamegraph.pl: three characters, after a "module`" prefix; or the
 * last three, reversed). */
static double name_vector(const char *s, size_t n, int reverse)
{
	char head[3];
	size_t k = 0;
	if (reverse) {
		for (; k < 3 && k < n; k++)
			head[k] = s[n - 1 - k];
	} else {
		const char *tick = n > 1 ? memchr(s + 1, '`', n - 1) : NULL;
		for (size_t i = tick ? (size_t)(tick + 1 - s) : 0; k < 3 && i < n; i++)
			head[k++] = s[i];
	}
	double vector = 0, weight = 1, max = 1;
	for (size_t i = 0; i < k; i++) {
		int mod = 10 + (int)i;
		vector += ((double)((unsigned char)head[i] % mod) / (mod - 1)) * weight;
		max += weight;
		weight *= 0.70;
	}
	return 1 - vector / max;
}

static uint32_t rgb(int r, int g, int b) { return (uint32_t)r << 16 | (uint32_t)g << 8 | (uint32_t)b; }

enum hue { H_HOT, H_MEM, H_IO, H_RED, H_GREEN, H_BLUE, H_AQUA, H_YELLOW, H_PURPLE, H_ORANGE };

static int has(const char *s, size_t n, const char *needle) { return memmem(s, n, needle, strlen(needle)) != NULL; }

/* A Python frame: its kind, or py-spy's and cProfile's "func (file.py:N)". */
static int python_frame(const char *s, size_t n, unsigned kind)
{
	return kind == SP_KIND_PYTHON || has(s, n, ".py:") || has(s, n, ".py)") || has(s, n, "<frozen ");
}

/* The hue of a frame in a language-aware palette: the frame's kind first
 * (kernel, JIT, inlined, Python are known exactly), then name patterns. */
static enum hue pick_hue(const char *pal, const char *s, size_t n, unsigned kind)
{
	/* python: py-spy's three families, Python code, native code (the
	 * interpreter, extensions, libc, inlined or not), the kernel */
	if (!strcmp(pal, "python"))
		return kind == SP_KIND_KERNEL ? H_ORANGE : python_frame(s, n, kind) ? H_GREEN : H_BLUE;
	if (!strcmp(pal, "hot"))
		return H_HOT;
	if (!strcmp(pal, "mem"))
		return H_MEM;
	if (!strcmp(pal, "io"))
		return H_IO;
	if (!strcmp(pal, "wakeup"))
		return H_AQUA;
	if (!strcmp(pal, "chain"))
		return H_BLUE;
	if (!strcmp(pal, "red")) return H_RED;
	if (!strcmp(pal, "green")) return H_GREEN;
	if (!strcmp(pal, "blue")) return H_BLUE;
	if (!strcmp(pal, "aqua")) return H_AQUA;
	if (!strcmp(pal, "yellow")) return H_YELLOW;
	if (!strcmp(pal, "purple")) return H_PURPLE;
	if (!strcmp(pal, "orange")) return H_ORANGE;
	if (kind == SP_KIND_KERNEL)
		return H_ORANGE;
	if (kind == SP_KIND_INLINED)
		return H_AQUA;
	if (!strcmp(pal, "java")) {
		if (kind == SP_KIND_JIT)
			return H_GREEN;
		if (n > 1 && (s[0] == 'L' ? s + 1 : s)[0] && (!strncmp(s[0] == 'L' ? s + 1 : s, "java/", 5) ||
			      !strncmp(s[0] == 'L' ? s + 1 : s, "javax/", 6) || !strncmp(s[0] == 'L' ? s + 1 : s, "jdk/", 4) ||
			      !strncmp(s[0] == 'L' ? s + 1 : s, "net/", 4) || !strncmp(s[0] == 'L' ? s + 1 : s, "org/", 4) ||
			      !strncmp(s[0] == 'L' ? s + 1 : s, "com/", 4) || !strncmp(s[0] == 'L' ? s + 1 : s, "io/", 3) ||
			      !strncmp(s[0] == 'L' ? s + 1 : s, "sun/", 4)))
			return H_GREEN;
		if (has(s, n, ":::"))
			return H_GREEN;
		if (has(s, n, "::"))
			return H_YELLOW;
		return H_RED;
	}
	if (!strcmp(pal, "js")) {
		if (kind == SP_KIND_JIT)
			return memchr(s, '/', n) ? H_GREEN : H_AQUA;
		if (has(s, n, "::"))
			return H_YELLOW;
		const char *sl = memchr(s, '/', n);
		if (sl && has(sl, n - (size_t)(sl - s), ".js"))
			return H_GREEN;
		if (memchr(s, ':', n))
			return H_AQUA;
		if (n == 1 && s[0] == ' ')
			return H_GREEN;
		return H_RED;
	}
	if (!strcmp(pal, "perl")) {
		if (kind == SP_KIND_JIT)
			return H_PURPLE;
		if (has(s, n, "::"))
			return H_YELLOW;
		if (has(s, n, "Perl") || has(s, n, ".pl"))
			return H_GREEN;
		return H_RED;
	}
	return H_RED;
}

static uint32_t name_colour(const struct sp_svg_opts *o, const char *s, size_t n, unsigned kind)
{
	if (n == 1 && s[0] == '-')
		return rgb(200, 200, 200);
	if (n == 2 && s[0] == '-' && s[1] == '-')
		return rgb(160, 160, 160);
	double v1, v2, v3;
	if (o->hash) {
		v1 = name_vector(s, n, 0);
		v2 = v3 = name_vector(s, n, 1);
	} else {
		/* Random-looking but fixed per name (and so across graphs). */
		uint64_t h = sp_hash(s, n);
		v1 = v2 = v3 = (double)(h >> 11) / 9007199254740992.0;
	}
	switch (pick_hue(o->colors ? o->colors : "hot", s, n, kind)) {
	case H_HOT: return rgb(205 + (int)(50 * v3), (int)(230 * v1), (int)(55 * v2));
	case H_MEM: return rgb(0, 190 + (int)(50 * v2), (int)(210 * v1));
	case H_IO: return rgb(80 + (int)(60 * v1), 80 + (int)(60 * v1), 190 + (int)(55 * v2));
	case H_RED: return rgb(200 + (int)(55 * v1), 50 + (int)(80 * v1), 50 + (int)(80 * v1));
	case H_GREEN: return rgb(50 + (int)(60 * v1), 200 + (int)(55 * v1), 50 + (int)(60 * v1));
	case H_BLUE: return rgb(80 + (int)(60 * v1), 80 + (int)(60 * v1), 205 + (int)(50 * v1));
	case H_AQUA: return rgb(50 + (int)(60 * v1), 165 + (int)(55 * v1), 165 + (int)(55 * v1));
	case H_YELLOW: return rgb(175 + (int)(55 * v1), 175 + (int)(55 * v1), 50 + (int)(20 * v1));
	case H_PURPLE: return rgb(190 + (int)(65 * v1), 80 + (int)(60 * v1), 190 + (int)(65 * v1));
	case H_ORANGE: return rgb(190 + (int)(65 * v1), 90 + (int)(65 * v1), 0);
	}
	return 0;
}

/* Differential: white when unchanged, red when the frame's own samples grew,
 * blue when they shrank, saturated by the change relative to the largest. */
static uint32_t diff_colour(double delta, double max, int negate)
{
	if (negate)
		delta = -delta;
	int r = 255, g = 255, b = 255;
	if (delta > 0)
		g = b = (int)(210 * (max - delta) / max);
	else if (delta < 0)
		r = g = (int)(210 * (max + delta) / max);
	return rgb(r, g, b);
}

/* ---- the consistent palette (--cp) ---- */

struct sp_palette {
	struct sp_u64map map; /* hash -> index + 1 */
	char **keys;
	size_t *lens;
	uint32_t *colour;
	size_t n, cap;
};

struct sp_palette *sp_palette_new(void)
{
	struct sp_palette *pal = sp_xcalloc(1, sizeof *pal);
	sp_u64map_init(&pal->map);
	return pal;
}

void sp_palette_free(struct sp_palette *pal)
{
	if (!pal)
		return;
	for (size_t i = 0; i < pal->n; i++)
		free(pal->keys[i]);
	free(pal->keys);
	free(pal->lens);
	free(pal->colour);
	sp_u64map_release(&pal->map);
	free(pal);
}

/* Find (or with add, insert) a name; returns the index or -1. */
static long pal_find(struct sp_palette *pal, const char *s, size_t n, int add, uint32_t colour)
{
	uint64_t h = sp_hash(s, n);
	for (;;) {
		if (h == UINT64_MAX)
			h = 0;
		int found;
		uint32_t *slot;
		if (add) {
			slot = sp_u64map_slot(&pal->map, h, &found);
		} else {
			uint32_t v = sp_u64map_get(&pal->map, h, &found);
			if (!found)
				return -1;
			slot = &v;
			size_t i = v - 1;
			if (pal->lens[i] == n && !memcmp(pal->keys[i], s, n))
				return (long)i;
			h++;
			continue;
		}
		if (!found) {
			if (pal->n == pal->cap) {
				pal->cap = pal->cap ? pal->cap * 2 : 256;
				pal->keys = sp_xrealloc(pal->keys, pal->cap * sizeof *pal->keys);
				pal->lens = sp_xrealloc(pal->lens, pal->cap * sizeof *pal->lens);
				pal->colour = sp_xrealloc(pal->colour, pal->cap * sizeof *pal->colour);
			}
			pal->keys[pal->n] = sp_xstrndup(s, n);
			pal->lens[pal->n] = n;
			pal->colour[pal->n] = colour;
			*slot = (uint32_t)++pal->n;
			return (long)pal->n - 1;
		}
		size_t i = *slot - 1;
		if (pal->lens[i] == n && !memcmp(pal->keys[i], s, n)) {
			pal->colour[i] = colour;
			return (long)i;
		}
		h++;
	}
}

static int parse_rgb(const char *s, const char *e, uint32_t *out)
{
	if (e - s < 10 || memcmp(s, "rgb(", 4) || e[-1] != ')')
		return 0;
	s += 4;
	int v[3];
	for (int i = 0; i < 3; i++) {
		uint64_t x;
		while (s < e && *s == ' ')
			s++;
		size_t k = sp_parse_u64(s, e, &x);
		if (!k || x > 255)
			return 0;
		v[i] = (int)x;
		s += k;
		while (s < e && *s == ' ')
			s++;
		if (s >= e || *s != (i < 2 ? ',' : ')'))
			return 0;
		s++;
	}
	if (s != e)
		return 0;
	*out = rgb(v[0], v[1], v[2]);
	return 1;
}

int sp_palette_read(struct sp_palette *pal, const char *path, uint64_t *bad, struct sp_err *err)
{
	FILE *fp = fopen(path, "r");
	if (!fp) {
		if (errno == ENOENT)
			return 0;
		return sp_err_set(err, "%s: %s", path, strerror(errno));
	}
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	while ((len = getline(&line, &cap, fp)) >= 0) {
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			len--;
		if (!len)
			continue;
		/* The colour follows the last "->": names may contain "->". */
		char *arrow = NULL;
		for (char *q = line; q + 1 < line + len; q++)
			if (q[0] == '-' && q[1] == '>')
				arrow = q;
		uint32_t c;
		if (!arrow || !parse_rgb(arrow + 2, line + len, &c)) {
			(*bad)++;
			continue;
		}
		pal_find(pal, line, (size_t)(arrow - line), 1, c);
	}
	int rc = 0;
	if (ferror(fp))
		rc = sp_err_set(err, "%s: %s", path, strerror(errno));
	free(line);
	fclose(fp);
	return rc;
}

static const struct sp_palette *pal_sort;
static int pal_cmp(const void *x, const void *y)
{
	size_t a = *(const size_t *)x, b = *(const size_t *)y;
	size_t na = pal_sort->lens[a], nb = pal_sort->lens[b];
	int c = memcmp(pal_sort->keys[a], pal_sort->keys[b], na < nb ? na : nb);
	return c ? c : na < nb ? -1 : na > nb;
}

int sp_palette_write(const struct sp_palette *pal, const char *path, struct sp_err *err)
{
	size_t *ord = sp_xmalloc((pal->n ? pal->n : 1) * sizeof *ord);
	for (size_t i = 0; i < pal->n; i++)
		ord[i] = i;
	pal_sort = pal;
	sp_sort(ord, pal->n, sizeof *ord, pal_cmp);
	struct sp_buf tmp = SP_BUF_INIT;
	sp_buf_addf(&tmp, "%s.tmp%ld", path, (long)getpid());
	FILE *fp = fopen(sp_buf_cstr(&tmp), "w");
	int rc = 0;
	if (!fp) {
		rc = sp_err_set(err, "%s: %s", tmp.p, strerror(errno));
	} else {
		for (size_t k = 0; k < pal->n; k++) {
			size_t i = ord[k];
			uint32_t c = pal->colour[i];
			fwrite(pal->keys[i], 1, pal->lens[i], fp);
			fprintf(fp, "->rgb(%u,%u,%u)\n", c >> 16, (c >> 8) & 255, c & 255);
		}
		if (ferror(fp) | (fclose(fp) != 0))
			rc = sp_err_set(err, "%s: write error", tmp.p);
		else if (rename(tmp.p, path) != 0)
			rc = sp_err_set(err, "%s: %s", path, strerror(errno));
		if (rc)
			unlink(tmp.p);
	}
	sp_buf_release(&tmp);
	free(ord);
	return rc;
}

/* ---- numbers ---- */

/* Base-32 varint digits: T ends a number, C continues it. */
static const char T32[] = "0123456789abcdefghijklmnopqrstuv";
static const char C32[] = "wxyzABCDEFGHIJKLMNOPQRSTUVWXYZ$%";

/* Write v at p (room for 13 bytes); returns the end. */
static inline char *var_at(char *p, uint64_t v)
{
	int n = (64 - __builtin_clzll(v | 1) + 4) / 5;
	char *e = p + n;
	*--e = T32[v & 31];
	while (e > p) {
		v >>= 5;
		*--e = C32[v & 31];
	}
	return p + n;
}

static uint64_t zigzag(int64_t v) { return v < 0 ? ((uint64_t)(-(v + 1)) << 1) | 1 : (uint64_t)v << 1; }

/* A coordinate with one decimal, without a trailing ".0". */
static void put_coord(struct sp_buf *out, double v)
{
	long t = lround(v * 10);
	if (t < 0) {
		sp_buf_addc(out, '-');
		t = -t;
	}
	sp_buf_addu64(out, (uint64_t)(t / 10));
	if (t % 10) {
		sp_buf_addc(out, '.');
		sp_buf_addc(out, (char)('0' + t % 10));
	}
}


static void put_hex_colour(struct sp_buf *out, uint32_t c)
{
	static const char hex[] = "0123456789abcdef";
	char t[7] = { '#' };
	for (int i = 0; i < 6; i++)
		t[1 + i] = hex[(c >> (20 - 4 * i)) & 15];
	sp_buf_add(out, t, 7);
}

/* Largest power of ten (<= 10^6) that keeps every position an exact
 * integer below 2^53; 1 when the values are integers already. */
static double pick_scale(const struct sp_flame *f, const struct sp_flame_node *nd, size_t n, int diff)
{
	const struct sp_flame_delta *dl = diff ? sp_flame_deltas(f) : NULL;
	double total = n ? nd[0].w : 0;
	if (dl && n && dl[0].a > total)
		total = dl[0].a;
	int integers = 1;
	if (sp_flame_integral(f) && total < 9007199254740992.0)
		return 1; /* sums of integers below 2^53 are integers */
	for (size_t i = 0; i < n && integers; i++)
		if (nd[i].x != floor(nd[i].x) || nd[i].w != floor(nd[i].w) ||
		    (dl && (dl[i].a != floor(dl[i].a) || dl[i].b != floor(dl[i].b))))
			integers = 0;
	double scale = 1;
	if (integers && total < 9007199254740992.0)
		return 1;
	if (!integers)
		while (scale < 1e6 && total * scale * 10 < 9007199254740992.0)
			scale *= 10;
	while (total * scale >= 9007199254740992.0)
		scale /= 10;
	return scale;
}

/* ---- the document ---- */

/* Frames narrower than this (px) are drawn on a pixel grid of shared paths
 * instead of one <rect> each (flame.js: NARROW). */
#define SP_SVG_NARROW 3

struct layout {
	double W, fh, fs, xpad, ypad1, ypad2, ypad3, yrem, H, ppu, minpx;
	int inverted;
};

static double frame_y(const struct layout *L, uint32_t depth)
{
	if (L->inverted)
		return L->ypad1 + L->ypad3 + depth * L->fh;
	return L->H - L->ypad2 - (depth + 1) * L->fh + 1;
}

static const char *default_title(const struct sp_svg_opts *o)
{
	if (o->title && *o->title)
		return o->title;
	return o->flamechart ? "Flame Chart" : o->inverted ? "Icicle Graph" : "Flame Graph";
}

static void header(struct sp_buf *b, const struct sp_svg_opts *o, double W, double H)
{
	sp_buf_adds(b, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		       "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"");
	put_coord(b, W);
	sp_buf_adds(b, "\" height=\"");
	put_coord(b, H);
	sp_buf_adds(b, "\" viewBox=\"0 0 ");
	put_coord(b, W);
	sp_buf_addc(b, ' ');
	put_coord(b, H);
	sp_buf_adds(b, "\">\n<!-- Flame graph by psvg (stackpipe). Click a frame to zoom, Esc resets, "
		       "Ctrl-F searches (regular expression), Ctrl-I toggles case. -->\n");
	if (o->notes) {
		sp_buf_adds(b, "<!-- NOTES: ");
		comment_text(b, o->notes);
		sp_buf_adds(b, " -->\n");
	}
}

static void bg_colours(const struct sp_svg_opts *o, const char **c1, const char **c2)
{
	const char *bg = o->bgcolors;
	const char *pal = o->colors ? o->colors : "hot";
	if (!bg || !*bg) {
		if (!strcmp(pal, "mem"))
			bg = "green";
		else if (!strcmp(pal, "io") || !strcmp(pal, "wakeup") || !strcmp(pal, "chain"))
			bg = "blue";
		else if (strstr("red green blue aqua yellow purple orange", pal))
			bg = "grey";
		else
			bg = "yellow";
	}
	if (!strcmp(bg, "blue")) {
		*c1 = "#eeeeee";
		*c2 = "#e0e0ff";
	} else if (!strcmp(bg, "green")) {
		*c1 = "#eef2ee";
		*c2 = "#e0ffe0";
	} else if (!strcmp(bg, "grey") || !strcmp(bg, "gray")) {
		*c1 = "#f8f8f8";
		*c2 = "#e8e8e8";
	} else if (is_hex_colour(bg)) {
		*c1 = *c2 = bg;
	} else {
		*c1 = "#eeeeee";
		*c2 = "#eeeeb0";
	}
}

static void style(struct sp_buf *b, const struct sp_svg_opts *o)
{
	const char *c1, *c2;
	bg_colours(o, &c1, &c2);
	sp_buf_adds(b, "<defs><linearGradient id=\"background\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\"><stop stop-color=\"");
	xml_esc(b, c1, strlen(c1));
	sp_buf_adds(b, "\" offset=\"5%\"/><stop stop-color=\"");
	xml_esc(b, c2, strlen(c2));
	sp_buf_adds(b, "\" offset=\"95%\"/></linearGradient></defs>\n");
	struct sp_buf css = SP_BUF_INIT;
	sp_buf_adds(&css, "svg{font-family:");
	css_fonts(&css, o->fonttype ? o->fonttype : "Verdana");
	sp_buf_adds(&css, ";font-size:");
	put_coord(&css, o->fontsize);
	sp_buf_adds(&css, "px}#title{font-size:");
	put_coord(&css, o->fontsize + 5);
	sp_buf_adds(&css, "px}");
	sp_buf_adds(b, "<style type=\"text/css\">");
	cdata(b, css.p, css.len);
	sp_buf_adds(b, "</style>\n<style type=\"text/css\">");
	cdata(b, o->css ? o->css : "", o->css_len);
	sp_buf_adds(b, "</style>\n");
	sp_buf_release(&css);
}

static void text_el(struct sp_buf *b, const char *id, const char *cls, double x, double y, const char *s)
{
	sp_buf_adds(b, "<text id=\"");
	sp_buf_adds(b, id);
	sp_buf_addc(b, '"');
	if (cls) {
		sp_buf_adds(b, " class=\"");
		sp_buf_adds(b, cls);
		sp_buf_addc(b, '"');
	}
	sp_buf_adds(b, " x=\"");
	put_coord(b, x);
	sp_buf_adds(b, "\" y=\"");
	put_coord(b, y);
	sp_buf_adds(b, "\">");
	xml_text(b, s, strlen(s));
	sp_buf_adds(b, "</text>\n");
}

static int flush(FILE *out, struct sp_buf *b, struct sp_err *err)
{
	if (b->len && fwrite(b->p, 1, b->len, out) != b->len)
		return sp_err_set(err, "write error: %s", strerror(errno));
	sp_buf_reset(b);
	return 0;
}

int sp_svg_write_message(FILE *out, const struct sp_svg_opts *o, const char *msg, struct sp_err *err)
{
	struct sp_buf b = SP_BUF_INIT;
	double H = o->fontsize * 5;
	header(&b, o, o->width, H);
	text_el(&b, "message", NULL, o->width / 2, o->fontsize * 2, msg);
	sp_buf_adds(&b, "</svg>\n");
	int rc = flush(out, &b, err);
	sp_buf_release(&b);
	return rc;
}

/* Cleaned names: one buffer, offsets, and lengths in characters. */
struct names {
	struct sp_buf text;
	size_t *off, *len, *chars;
};

static void clean_names(const struct sp_flame *f, struct names *nm)
{
	size_t n = sp_flame_names(f);
	nm->off = sp_xmalloc((n + 1) * sizeof *nm->off);
	nm->len = sp_xmalloc((n + 1) * sizeof *nm->len);
	nm->chars = sp_xmalloc((n + 1) * sizeof *nm->chars);
	sp_buf_init(&nm->text);
	for (size_t i = 0; i < n; i++) {
		size_t len;
		const char *s = sp_flame_name(f, (uint32_t)i, &len);
		nm->off[i] = nm->text.len;
		nm->chars[i] = clean(s, len, &nm->text);
		nm->len[i] = nm->text.len - nm->off[i];
	}
}

static void free_names(struct names *nm)
{
	sp_buf_release(&nm->text);
	free(nm->off);
	free(nm->len);
	free(nm->chars);
}

/* The key of a name in the palette file: as folded text spells it. */
static void pal_key(struct sp_buf *k, const char *s, size_t n, unsigned kind)
{
	sp_buf_reset(k);
	sp_buf_add(k, s, n);
	if (kind == SP_KIND_KERNEL)
		sp_buf_adds(k, "_[k]");
	else if (kind == SP_KIND_JIT)
		sp_buf_adds(k, "_[j]");
	else if (kind == SP_KIND_INLINED && !(n > 4 && !memcmp(s + n - 4, "_[i]", 4)))
		sp_buf_adds(k, "_[i]");
}

/* A label that fits w pixels: the first characters, ".." when cut. */
static void label(struct sp_buf *b, const struct names *nm, uint32_t name, double wpx, const struct sp_svg_opts *o)
{
	size_t fit = (size_t)(wpx / (o->fontsize * o->fontwidth));
	if (fit < 3)
		return;
	const char *s = nm->text.p + nm->off[name];
	size_t n = nm->len[name];
	if (nm->chars[name] <= fit) {
		xml_esc(b, s, n);
		return;
	}
	size_t k = 0, c = 0;
	while (k < n && c < fit - 2) {
		k++;
		while (k < n && ((unsigned char)s[k] & 0xc0) == 0x80)
			k++;
		c++;
	}
	xml_esc(b, s, k);
	sp_buf_add(b, "..", 2);
}

/* What sp_svg_write's phases share. */
struct svgw {
	FILE *out;
	struct sp_buf b; /* the output, flushed when large */
	struct sp_err *err;
	const struct sp_flame *f;
	const struct sp_svg_opts *o;
	const struct sp_flame_node *nd;
	const struct sp_flame_delta *dl; /* a diff's values by node, else NULL */
	size_t n;
	int diff, has_py;
	const char *unit;
	struct layout L;
	uint32_t maxdepth; /* of the overview */
	double total, maxdelta;
	struct sp_buf remmsg; /* a diff's line on what vanished */
	struct names nm;
	/* the name table, in preorder of first use */
	size_t nnames;
	uint32_t *ren;    /* flame name -> table index + 1 */
	uint32_t *order;  /* table index -> flame name */
	uint32_t *colour; /* by flame name */
};

/* The page's geometry; for a diff, the line saying what vanished. */
static void plan_layout(struct svgw *s)
{
	const struct sp_svg_opts *o = s->o;
	struct layout *L = &s->L;
	L->W = o->width;
	L->fh = o->frame_height;
	L->fs = o->fontsize;
	L->xpad = 10;
	L->ypad1 = o->fontsize * 3;
	L->ypad2 = o->fontsize * 2 + 10;
	L->ypad3 = o->subtitle && *o->subtitle ? o->fontsize * 2 : 0;
	/* Differential: say what vanished, on a line of its own. */
	if (s->diff) {
		size_t nrem;
		double rem = sp_flame_removed(s->f, &nrem);
		if (o->show_removed) {
			sp_buf_adds(&s->remmsg, "Shape of the first profile: dashed frames are gone from the second");
		} else if (nrem) {
			sp_buf_addf(&s->remmsg, "%zu path%s of the first profile (", nrem, nrem == 1 ? "" : "s");
			sp_buf_addvalue(&s->remmsg, rem * o->factor, o->countname ? o->countname : s->unit);
			sp_buf_addf(&s->remmsg, ") %s gone from the second: psvg --show-removed draws them",
				    nrem == 1 ? "is" : "are");
		}
	}
	L->yrem = s->remmsg.len ? o->fontsize * 1.5 : 0;
	L->ypad3 += L->yrem;
	L->inverted = o->inverted;
	s->total = s->n ? s->nd[0].w : 0;
	L->ppu = s->total > 0 ? (L->W - 2 * L->xpad) / s->total : 0;
	L->minpx = o->minwidth_pct ? o->minwidth / 100 * (L->W - 2 * L->xpad) : o->minwidth;

	/* Which frames the overview draws, and how deep it goes: as deep as
	 * its frames of a pixel or more, so that a rare deep stack of slivers
	 * does not make the first view tall (zooming shows it), as flame.js. */
	s->maxdepth = 0;
	for (size_t i = 0; i < s->n;) {
		const struct sp_flame_node *d = &s->nd[i];
		if (d->w * L->ppu < L->minpx || d->w <= 0) {
			i = d->end;
			continue;
		}
		if (d->w * L->ppu >= 1 && d->depth > s->maxdepth)
			s->maxdepth = d->depth;
		i++;
	}
	L->H = (s->maxdepth + 1) * L->fh + L->ypad1 + L->ypad2 + L->ypad3;
}

/* The name table lists names in preorder of first use, so the file does
 * not depend on the order the input came in; each name's colour. */
static void name_table(struct svgw *s)
{
	const struct sp_flame *f = s->f;
	const struct sp_svg_opts *o = s->o;
	size_t nall = sp_flame_names(f);
	s->ren = sp_xcalloc(nall + 1, sizeof *s->ren);
	s->order = sp_xmalloc((nall + 1) * sizeof *s->order);
	s->nnames = 0;
	for (size_t i = 0; i < s->n; i++)
		if (!s->ren[s->nd[i].name]) {
			s->order[s->nnames] = s->nd[i].name;
			s->ren[s->nd[i].name] = (uint32_t)++s->nnames;
		}
	s->colour = sp_xmalloc((nall + 1) * sizeof *s->colour);
	struct sp_buf key = SP_BUF_INIT;
	for (size_t t = 0; t < s->nnames; t++) {
		uint32_t i = s->order[t];
		size_t len;
		const char *str = sp_flame_name(f, i, &len);
		unsigned kind = sp_flame_name_kind(f, i);
		/* Colours hash the name as folded text spells it, with its
		 * _[k]-style annotation, as flamegraph.pl does. */
		pal_key(&key, str, len, kind);
		s->colour[i] = name_colour(o, key.p ? key.p : "", key.len, kind);
		if (o->palette) {
			long k = pal_find(o->palette, key.p ? key.p : "", key.len, 0, 0);
			if (k >= 0)
				s->colour[i] = o->palette->colour[k];
			else
				pal_find(o->palette, key.p ? key.p : "", key.len, 1, s->colour[i]);
		}
	}
	sp_buf_release(&key);
}

/* The header, the title lines and the controls' texts. */
static void write_heading(struct svgw *s)
{
	const struct sp_svg_opts *o = s->o;
	const struct layout *L = &s->L;
	struct sp_buf *b = &s->b;
	header(b, o, L->W, L->H);
	style(b, o);
	sp_buf_adds(b, "<rect id=\"bg\" x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" fill=\"url(#background)\"/>\n");
	if (o->title_note && *o->title_note) {
		struct sp_buf t = SP_BUF_INIT;
		sp_buf_adds(&t, default_title(o));
		sp_buf_adds(&t, ": ");
		sp_buf_adds(&t, o->title_note);
		sp_buf_cstr(&t);
		text_el(b, "title", NULL, L->W / 2, o->fontsize * 2, t.p);
		sp_buf_release(&t);
	} else {
		text_el(b, "title", NULL, L->W / 2, o->fontsize * 2, default_title(o));
	}
	int has_sub = o->subtitle && *o->subtitle;
	if (has_sub)
		text_el(b, "subtitle", NULL, L->W / 2, o->fontsize * 4, o->subtitle);
	text_el(b, "details", NULL, L->xpad, L->H - L->ypad2 / 2, " ");
	text_el(b, "unzoom", "hide", L->xpad, o->fontsize * 2, "Reset Zoom");
	text_el(b, "search", NULL, L->W - L->xpad - 24, o->fontsize * 2, "Search");
	text_el(b, "ignorecase", NULL, L->W - L->xpad - 16, o->fontsize * 2, "ic");
	if (s->has_py)
		text_el(b, "pyroot", NULL, L->xpad + o->fontsize * 8, o->fontsize * 2, "Python");
	text_el(b, "matched", NULL, L->W - L->xpad, L->H - L->ypad2 / 2, " ");
	if (s->remmsg.len)
		text_el(b, "removed", NULL, L->W / 2, (has_sub ? o->fontsize * 4 : o->fontsize * 2) + L->yrem,
			sp_buf_cstr(&s->remmsg));
}

/* The overview's narrow frames: a grid of rows and pixel columns whose
 * cells hold a colour group, or -1. */
struct narrow {
	int16_t *grid;
	size_t rows, cols;
	int16_t gid[4096];    /* colour group (a nibble per channel) -> id */
	uint32_t gfill[4096]; /* id -> fill: the group's first colour */
	size_t ngroups;
};

/* A sliver of colour c from x, wpx pixels wide: the cells it covers that
 * no sliver took yet take c's group. */
static void narrow_mark(struct narrow *g, uint32_t depth, double x, double wpx, uint32_t c)
{
	if (!g->grid) {
		g->grid = sp_xmalloc(g->rows * g->cols * sizeof *g->grid);
		memset(g->grid, 0xff, g->rows * g->cols * sizeof *g->grid);
	}
	size_t cols = g->cols;
	double f0 = floor(x), f1 = ceil(x + wpx) - 1;
	size_t c0 = f0 < 0 ? 0 : f0 >= (double)cols ? cols - 1 : (size_t)f0;
	size_t c1 = f1 < (double)c0 ? c0 : f1 >= (double)cols ? cols - 1 : (size_t)f1;
	for (size_t cc = c0; cc <= c1; cc++) {
		int16_t *cell = &g->grid[depth * cols + cc];
		if (*cell >= 0)
			continue;
		unsigned bk = (c >> 12 & 0xf00) | (c >> 8 & 0xf0) | (c >> 4 & 0xf);
		if (g->gid[bk] < 0) {
			g->gfill[g->ngroups] = c;
			g->gid[bk] = (int16_t)g->ngroups++;
		}
		*cell = g->gid[bk];
	}
}

/* The grid's runs of cells of a group as rectangles, one <path> per
 * group. */
static void narrow_paths(struct svgw *s, const struct narrow *g)
{
	struct sp_buf *b = &s->b;
	struct sp_buf *gd = sp_xcalloc(g->ngroups, sizeof *gd);
	for (size_t r = 0; r < g->rows; r++) {
		const int16_t *row = g->grid + r * g->cols;
		double y = frame_y(&s->L, (uint32_t)r);
		for (size_t col = 0; col < g->cols;) {
			int16_t id = row[col];
			if (id < 0) {
				col++;
				continue;
			}
			size_t from = col;
			while (col < g->cols && row[col] == id)
				col++;
			struct sp_buf *pb = &gd[id];
			sp_buf_addc(pb, 'M');
			sp_buf_addu64(pb, from);
			sp_buf_addc(pb, ' ');
			put_coord(pb, y);
			sp_buf_addc(pb, 'h');
			sp_buf_addu64(pb, col - from);
			sp_buf_addc(pb, 'v');
			put_coord(pb, s->L.fh - 1);
			sp_buf_add(pb, "h-", 2);
			sp_buf_addu64(pb, col - from);
			sp_buf_addc(pb, 'z');
		}
	}
	for (size_t k = 0; k < g->ngroups; k++) {
		sp_buf_adds(b, "<path class=\"narrow\" fill=\"");
		put_hex_colour(b, g->gfill[k]);
		sp_buf_adds(b, "\" d=\"");
		sp_buf_add(b, gd[k].p, gd[k].len);
		sp_buf_adds(b, "\"/>\n");
		sp_buf_release(&gd[k]);
	}
	free(gd);
}

/* A frame of the overview as a rect and its label. */
static void frame_rect(struct svgw *s, const struct sp_flame_node *d, double x, double y, double wpx, uint32_t c)
{
	struct sp_buf *b = &s->b;
	sp_buf_adds(b, "<rect x=\"");
	put_coord(b, x);
	sp_buf_adds(b, "\" y=\"");
	put_coord(b, y);
	sp_buf_adds(b, "\" width=\"");
	put_coord(b, wpx);
	sp_buf_adds(b, "\" height=\"");
	put_coord(b, s->L.fh - 1);
	sp_buf_adds(b, "\" fill=\"");
	put_hex_colour(b, c);
	if (s->diff && s->o->show_removed && s->dl[d - s->nd].b == 0)
		sp_buf_adds(b, "\" class=\"gone");
	sp_buf_adds(b, "\"/>");
	size_t before = b->len;
	sp_buf_adds(b, "<text x=\"");
	put_coord(b, x + 3);
	sp_buf_adds(b, "\" y=\"");
	put_coord(b, y + s->L.fh / 2 + 3.5);
	sp_buf_adds(b, "\">");
	size_t mark = b->len;
	label(b, &s->nm, d->name, wpx, s->o);
	if (b->len == mark)
		b->len = before;
	else
		sp_buf_adds(b, "</text>");
	sp_buf_addc(b, '\n');
}

/* The overview, drawn without a script, as flame.js draws it: frames at
 * least SP_SVG_NARROW wide as rects; narrower ones on a grid of rows and
 * pixel columns, each cell taking the colour group (the first nibble of
 * each channel) of its first sliver, and runs of cells of a group drawn
 * as rectangles of one <path> per group. */
static int write_overview(struct svgw *s)
{
	const struct layout *L = &s->L;
	const struct sp_flame_node *nd = s->nd;
	struct narrow *g = sp_xcalloc(1, sizeof *g);
	g->cols = (size_t)ceil(L->W);
	g->rows = s->maxdepth + 1;
	memset(g->gid, 0xff, sizeof g->gid);
	int rc = 0;
	sp_buf_adds(&s->b, "<g id=\"frames\">\n");
	for (size_t i = 0; i < s->n;) {
		const struct sp_flame_node *d = &nd[i];
		double wpx = d->w * L->ppu;
		if (wpx < L->minpx || d->w <= 0 || d->depth > s->maxdepth) {
			i = d->end;
			continue;
		}
		double x = L->xpad + d->x * L->ppu, y = frame_y(L, d->depth);
		uint32_t c = s->diff ? diff_colour(s->dl[i].self_delta, s->maxdelta, s->o->negate) : s->colour[d->name];
		if (wpx < SP_SVG_NARROW && i)
			narrow_mark(g, d->depth, x, wpx, c);
		else
			frame_rect(s, d, x, y, wpx, c);
		if (s->b.len > (1 << 20) && (rc = flush(s->out, &s->b, s->err)) < 0)
			break;
		i++;
	}
	if (g->grid && !rc)
		narrow_paths(s, g);
	free(g->grid);
	free(g);
	if (!rc)
		sp_buf_adds(&s->b, "</g>\n");
	return rc;
}

/* key, then a coordinate: an option of the script's data. */
static void put_named_coord(struct sp_buf *b, const char *key, double v)
{
	sp_buf_adds(b, key);
	put_coord(b, v);
}

/* The script's options: geometry, flags, units and colours. */
static void write_options(struct svgw *s, double scale)
{
	const struct sp_svg_opts *o = s->o;
	const struct layout *L = &s->L;
	struct sp_buf *b = &s->b;
	sp_buf_adds(b, "<script type=\"text/ecmascript\"><![CDATA[\nvar spflame={v:1");
	put_named_coord(b, ",W:", L->W);
	put_named_coord(b, ",fh:", L->fh);
	put_named_coord(b, ",fs:", L->fs);
	sp_buf_addf(b, ",fw:%.10g,minpx:%.10g", o->fontwidth, L->minpx);
	put_named_coord(b, ",xpad:", L->xpad);
	put_named_coord(b, ",ypad1:", L->ypad1);
	put_named_coord(b, ",ypad2:", L->ypad2);
	put_named_coord(b, ",ypad3:", L->ypad3);
	sp_buf_addf(b, ",inv:%d,chart:%d,diff:%d,neg:%d,removed:%d,scale:%.17g,factor:%.17g,maxdelta:%.17g,",
		    o->inverted, o->flamechart, s->diff, o->negate, o->show_removed, scale, o->factor,
		    round(s->maxdelta * scale));
	/* "ns" makes the script show time as ms or s; any other unit is
	 * printed after the number ("14 samples"), none when it is unknown
	 * (folded text); --countname names it: "ns" is time, as in the data. */
	sp_buf_adds(b, "unit:");
	js_clean(b, o->countname ? o->countname : s->unit);
	sp_buf_adds(b, ",nametype:");
	js_clean(b, o->nametype);
	sp_buf_adds(b, ",sc:");
	js_clean(b, o->search_color && is_hex_colour(o->search_color) ? o->search_color : "#e600e6");
	if (o->root && *o->root) {
		sp_buf_adds(b, ",root:");
		js_clean(b, o->root);
	}
}

/* The name table: names, the Python ones' indexes, where each name's
 * frames are (file:line) when the input has source lines, colours. */
static void write_names(struct svgw *s)
{
	const struct sp_flame *f = s->f;
	struct sp_buf *b = &s->b;
	if (s->has_py) {
		/* the table indexes of the Python frames' names */
		sp_buf_adds(b, ",py:[");
		for (size_t t = 0, k = 0; t < s->nnames; t++) {
			size_t len;
			const char *str = sp_flame_name(f, s->order[t], &len);
			if (!python_frame(str, len, sp_flame_name_kind(f, s->order[t])))
				continue;
			if (k++)
				sp_buf_addc(b, ',');
			sp_buf_addf(b, "%zu", t);
		}
		sp_buf_adds(b, "]");
	}
	sp_buf_adds(b, ",\nnames:[");
	for (size_t t = 0; t < s->nnames; t++) {
		if (t)
			sp_buf_addc(b, ',');
		if (t && !(t % 16))
			sp_buf_addc(b, '\n');
		js_str(b, s->nm.text.p + s->nm.off[s->order[t]], s->nm.len[s->order[t]]);
	}
	sp_buf_adds(b, "],\n");
	/* Sources, shown in the tooltip and the details line. */
	struct sp_buf src = SP_BUF_INIT, cl = SP_BUF_INIT;
	int any = 0;
	for (size_t t = 0; t < s->nnames && !any; t++) {
		sp_buf_reset(&src);
		sp_flame_name_source(f, s->order[t], &src);
		any = src.len > 0;
	}
	if (any) {
		sp_buf_adds(b, "srcs:[");
		for (size_t t = 0; t < s->nnames; t++) {
			if (t)
				sp_buf_addc(b, ',');
			if (t && !(t % 16))
				sp_buf_addc(b, '\n');
			sp_buf_reset(&src);
			sp_buf_reset(&cl);
			sp_flame_name_source(f, s->order[t], &src);
			clean(src.p ? src.p : "", src.len, &cl);
			js_str(b, cl.p ? cl.p : "", cl.len);
		}
		sp_buf_adds(b, "],\n");
	}
	sp_buf_release(&src);
	sp_buf_release(&cl);
	sp_buf_adds(b, "colours:\"");
	for (size_t t = 0; t < s->nnames; t++) {
		put_hex_colour(b, s->colour[s->order[t]]);
		memmove(b->p + b->len - 7, b->p + b->len - 6, 6); /* no '#' */
		b->len--;
	}
}

/* Every frame but the root, in preorder, as base-32 varints: depth
 * change, name, gap before it, width (and for a diff, its first
 * profile's value and self delta). */
static int write_frames(struct svgw *s, double scale)
{
	const struct sp_flame_node *nd = s->nd;
	struct sp_buf *b = &s->b;
	/* cur[d]: where the next frame at depth d would start without a gap
	 * (the end of its previous sibling, or its parent's start). */
	uint32_t dmax = 0;
	for (size_t i = 0; i < s->n; i++)
		if (nd[i].depth > dmax)
			dmax = nd[i].depth;
	uint64_t *cur = sp_xcalloc(dmax + 2, sizeof *cur);
	uint32_t prevdepth = 0;
	int rc = 0;
	/* integers below 2^53 (scale 1) convert exactly, without llround */
	int exact = scale == 1 && sp_flame_integral(s->f);
	for (size_t i = 1; i < s->n; i++) {
		const struct sp_flame_node *d = &nd[i];
		uint64_t x0, x1;
		if (exact) {
			x0 = (uint64_t)d->x;
			x1 = (uint64_t)(d->x + d->w);
		} else {
			x0 = (uint64_t)llround(d->x * scale);
			x1 = (uint64_t)llround((d->x + d->w) * scale);
		}
		if (x1 < x0)
			x1 = x0;
		if (SP_UNLIKELY(b->cap - b->len < 6 * 13))
			sp_buf_grow(b, 6 * 13);
		char *q = b->p + b->len;
		q = var_at(q, prevdepth + 1 - d->depth);
		q = var_at(q, s->ren[d->name] - 1);
		q = var_at(q, x0 > cur[d->depth] ? x0 - cur[d->depth] : 0);
		q = var_at(q, x1 - x0);
		if (s->diff) {
			const struct sp_flame_delta *dl = &s->dl[i];
			q = var_at(q, (uint64_t)llround((s->o->show_removed ? dl->b : dl->a) * scale));
			q = var_at(q, zigzag((int64_t)llround(dl->self_delta * scale)));
		}
		b->len = (size_t)(q - b->p);
		uint64_t x0e = x0 > cur[d->depth] ? x0 : cur[d->depth]; /* as the reader sees it */
		cur[d->depth] = x0e + (x1 - x0);
		cur[d->depth + 1] = x0e;
		prevdepth = d->depth;
		if (b->len > (1 << 20) && (rc = flush(s->out, b, s->err)) < 0)
			break;
	}
	free(cur);
	return rc;
}

/* The data: options, names, colours and every frame.  Everything in it
 * is numbers, base-32 digits or js_str() strings, none of which can
 * hold "]]>", so it goes into one CDATA section as it is made. */
static int write_data(struct svgw *s)
{
	const struct sp_svg_opts *o = s->o;
	const struct sp_flame_node *nd = s->nd;
	struct sp_buf *b = &s->b;
	double scale = pick_scale(s->f, nd, s->n, s->diff);
	write_options(s, scale);
	write_names(s);
	sp_buf_adds(b, "\",\nn:");
	sp_buf_addu64(b, s->n);
	sp_buf_adds(b, ",total:");
	sp_buf_addnum(b, (double)llround(s->total * scale));
	sp_buf_adds(b, ",total2:");
	/* a plain profile's totals: a = b = w */
	double total2 = !s->n ? 0 : !s->dl ? nd[0].w : o->show_removed ? s->dl[0].b : s->dl[0].a;
	sp_buf_addnum(b, (double)llround(total2 * scale));
	sp_buf_adds(b, ",\nframes:\"");
	if (write_frames(s, scale) < 0)
		return -1;
	sp_buf_adds(b, "\"};\n]]></script>\n<script type=\"text/ecmascript\">");
	cdata(b, o->js ? o->js : "", o->js_len);
	sp_buf_adds(b, "</script>\n</svg>\n");
	return 0;
}

int sp_svg_write(FILE *out, const struct sp_flame *f, const struct sp_svg_opts *o, struct sp_err *err)
{
	struct svgw s;
	memset(&s, 0, sizeof s);
	s.out = out;
	s.err = err;
	s.f = f;
	s.nd = sp_flame_nodes(f);
	s.n = sp_flame_count(f);
	s.diff = sp_flame_is_diff(f);
	s.dl = s.diff ? sp_flame_deltas(f) : NULL;
	s.unit = sp_flame_unit(f);
	/* A profile with Python frames: the python palette by default, and a
	 * button that zooms to the first Python frame. */
	for (uint32_t i = 0; i < sp_flame_names(f) && !s.has_py; i++) {
		size_t len;
		const char *str = sp_flame_name(f, i, &len);
		s.has_py = python_frame(str, len, sp_flame_name_kind(f, i));
	}
	struct sp_svg_opts opy;
	if (s.has_py && !o->colors) {
		opy = *o;
		opy.colors = "python";
		o = &opy;
	}
	s.o = o;
	plan_layout(&s);
	clean_names(f, &s.nm);
	name_table(&s);
	s.maxdelta = sp_flame_max_delta(f);

	write_heading(&s);
	int rc = write_overview(&s);
	if (!rc)
		rc = write_data(&s);
	if (!rc)
		rc = flush(out, &s.b, err);
	sp_buf_release(&s.b);
	sp_buf_release(&s.remmsg);
	free(s.colour);
	free(s.ren);
	free(s.order);
	free_names(&s.nm);
	return rc;
}
