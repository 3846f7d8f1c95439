/* svg.h — the interactive SVG flame graph writer.
 *
 * sp_svg_write draws a finished sp_flame as one standalone SVG document:
 * the frames visible in the overview as plain SVG (so the file shows without
 * a script, e.g. as an <img>), and every frame of the tree — narrow ones
 * too — in a compact data block that the embedded script decodes to redraw
 * on zoom and to search.  The script and style are given by the caller (the
 * command embeds share/svg/flame.js and flame.css at build time) so the
 * library has no generated parts.
 *
 * Any byte sequence is safe as a frame name, title, notes or font: text is
 * made valid UTF-8 (invalid bytes and control characters are shown as
 * "\xHH"), XML-escaped in markup and JS-escaped in the data, so nothing
 * in the input can end a CDATA section, a string or an element.
 *
 * Output is deterministic: the same flame and options give the same bytes.
 */
#ifndef SP_SVG_H
#define SP_SVG_H

#include <stdio.h>

#include "flame.h"

struct sp_palette; /* --cp: the consistent palette map, "NAME->rgb(r,g,b)" */

struct sp_svg_opts {
	const char *title;     /* NULL = "Flame Graph" / "Icicle Graph" / "Flame Chart" */
	const char *subtitle;  /* NULL or "" = none */
	const char *title_note; /* NULL, or added to the title after ": " (psvg --last's window) */
	const char *root;      /* NULL, or a regular expression: the SVG opens zoomed to the
				* widest frame whose name matches (--root) */
	const char *notes;     /* NULL = none; written as an XML comment */
	const char *countname; /* NULL: the data's unit ("samples", or time as ms/s) */
	const char *nametype;  /* "Function:" */
	const char *fonttype;  /* "Verdana"; a comma-separated CSS family list */
	const char *colors;    /* palette name, NULL = "hot" */
	const char *bgcolors;  /* yellow, blue, green, grey or #rrggbb; NULL = by palette */
	const char *search_color; /* #rrggbb, NULL = rgb(230,0,230) */
	double width;          /* image width, px (1200) */
	double frame_height;   /* px (16) */
	double fontsize;       /* px (12) */
	double fontwidth;      /* average glyph width / font size (0.59) */
	double minwidth;       /* draw frames at least this wide: px, or percent */
	int minwidth_pct;      /* minwidth is a percentage of the total */
	int hash;              /* colour by the name's leading characters */
	int inverted;          /* icicle: root at the top */
	int flamechart;        /* title and labels of a flame chart */
	int negate;            /* diff: swap red and blue */
	int show_removed;      /* diff: the flame was built with show_removed */
	double factor;         /* multiply shown values (1) */
	struct sp_palette *palette; /* NULL = no --cp */
	const char *js, *css;  /* the embedded script and style */
	size_t js_len, css_len;
};

void sp_svg_opts_init(struct sp_svg_opts *o);
/* Known palette / background names, for option checking. */
int sp_svg_palette_known(const char *name);
int sp_svg_bgcolors_known(const char *name);
extern const char sp_svg_palettes[]; /* "hot, mem, ..." for messages */

/* Writes the document.  Returns 0, or -1 (err filled) when out failed. */
int sp_svg_write(FILE *out, const struct sp_flame *f, const struct sp_svg_opts *o, struct sp_err *err);
/* The document flamegraph.pl writes for an empty profile: a message, no
 * frames, so tools that expect an SVG get one. */
int sp_svg_write_message(FILE *out, const struct sp_svg_opts *o, const char *msg, struct sp_err *err);

/* The consistent palette.  sp_palette_read adds the lines of path (a missing
 * file is an empty palette); lines that are not "NAME->rgb(R,G,B)" are
 * skipped and counted in *bad.  sp_palette_write writes every entry, sorted
 * by name, replacing path atomically.  Both return 0 or -1 (err filled). */
struct sp_palette *sp_palette_new(void);
void sp_palette_free(struct sp_palette *pal);
int sp_palette_read(struct sp_palette *pal, const char *path, uint64_t *bad, struct sp_err *err);
int sp_palette_write(const struct sp_palette *pal, const char *path, struct sp_err *err);

#endif
