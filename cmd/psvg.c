/* psvg — render stack samples as a standalone interactive SVG flame graph,
 * icicle graph, flame chart or differential flame graph. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <regex.h>
#include <stdlib.h>

#include "cmd.h"
#include "flame.h"
#include "format.h"
#include "heap.h"
#include "heatmap.h"
#include "rolling.h"
#include "svg.h"

/* share/svg/flame.js and flame.css, embedded by the Makefile (build/gen). */
extern const unsigned char sp_asset_flame_js[], sp_asset_flame_css[];
extern const unsigned long sp_asset_flame_js_len, sp_asset_flame_css_len;
extern const unsigned char sp_asset_heatmap_js[];
extern const unsigned long sp_asset_heatmap_js_len;

static const char synopsis[] =
	"usage: psvg [options] [FILE...]\n"
	"Draw stack samples as a standalone interactive SVG flame graph.\n"
	"Inputs (auto-detected, gzip ok, '-' or none = stdin): folded stacks (one value, or\n"
	"two for a differential graph: \"stack before after\"), perf script text, py-spy raw\n"
	"output, speedscope JSON, the stackpipe binary stream.\n"
	"\n"
	"  -o, --output=FILE       write to FILE instead of standard output\n"
	"  -f, --format=NAME       input format: perf, folded, pyspy,\n"
	"                          speedscope, stream, perf.data, pprof, cprofile, du\n"
	"                          (default: detect)\n"
	"      --title=TEXT        heading (default \"Flame Graph\", \"Icicle Graph\", \"Flame Chart\")\n"
	"      --subtitle=TEXT     second heading\n"
	"      --width=PX          image width (default 1200)\n"
	"      --height=PX         frame height (default 16)\n"
	"      --fontsize=PX       font size (default 12)\n"
	"      --fontwidth=F       average glyph width relative to the font size (default 0.59)\n"
	"      --fonttype=FONT     font family, or a comma-separated list (default Verdana)\n"
	"      --minwidth=PX|PCT%  draw frames at least this wide (default 0.1); narrower ones\n"
	"                          stay in the file and appear when zooming in\n"
	"      --countname=TEXT    unit of the values (default: the input's; folded text has\n"
	"                          none: bare numbers; ns shows time)\n"
	"      --nametype=TEXT     label of the details line (default \"Function:\")\n"
	"      --colors=PALETTE    hot (default), mem, io, wakeup, chain, java, js, perl, python,\n"
	"                          red, green, blue, aqua, yellow, purple, orange\n"
	"      --bgcolors=COLOR    background: yellow, blue, green, grey or #rrggbb\n"
	"      --hash              colour by the name's first characters (similar names, similar\n"
	"                          colours); the default colour is also fixed per name\n"
	"      --cp                consistent palette: read and update ./palette.map\n"
	"      --palette-file=FILE the palette file for --cp (implies --cp)\n"
	"      --search-color=#RGB search highlight colour (#rrggbb)\n"
	"      --reverse           merge stacks leaf first (callers view)\n"
	"      --inverted          icicle graph: root at the top\n"
	"      --flamechart        time order (timestamps of the binary stream, else input order)\n"
	"      --last=S            only the last S seconds of stream time (as pfilter --last)\n"
	"      --root=REGEX        open zoomed to the widest frame whose name matches\n"
	"                          (--root='<module>'); the frames below stay in the file\n"
	"      --every=S           with -o FILE: rewrite FILE (atomically) every S seconds of\n"
	"                          stream time while the input grows, and at its end\n"
	"      --heatmap[=seconds|hosts]\n"
	"                          a heat map; select a range of cells to draw its flame graph.\n"
	"                          seconds: sub-second (flamescope): a column per second, a row\n"
	"                          per slice; hosts: a row per host (root frame of pfleet get\n"
	"                          --by host, pmerge --tag), a column per --bucket.  Default:\n"
	"                          hosts for pfleet get's streams, else seconds\n"
	"      --slices=N          heat map rows: slices per second (default 50: 20 ms)\n"
	"      --bucket=SECONDS    hosts heat map: seconds per column (default 60)\n"
	"      --function=NAME     hosts heat map: colour by the share of the stacks that hold\n"
	"                          the frame NAME (exactly), as pfleet hosts --function\n"
	"      --sort=name|weight  order of frames: by name (default) or heaviest first\n"
	"      --negate            differential: swap red and blue\n"
	"      --show-removed      differential: draw the first profile's shape, so paths gone\n"
	"                          from the second profile show (dashed)\n"
	"      --factor=F          multiply the values shown by F\n"
	"      --notes=TEXT        add TEXT as a comment in the SVG\n"
	"      --weight=NAME       value column to draw (default: period when present, else the first;\n"
	"                          count = samples)\n"
	"      --pid, --tid        root frame of threaded input: comm-PID, comm-PID/TID\n"
	"      --threads           every thread name its own root frame (by default\n"
	"                          numbered names are grouped: Thread-N, worker-N)\n"
	"      --no-comm           no root frame for the thread\n"
	"  -q, --quiet             do not print each bad input line (the summary is still printed)\n"
	"      --partial           use a truncated binary stream up to its cut (warns)\n"
	"  -V, --version           print the version\n"
	"  -h, --help              show this help\n"
	"\n"
	"In the SVG: click a frame to zoom (narrow frames appear), Esc or \"Reset Zoom\" resets,\n"
	"Ctrl-F or \"Search\" searches names by regular expression, Ctrl-I toggles case.\n"
	"Exit status: 0 ok (bad lines are reported and skipped), 2 error (no samples: an SVG\n"
	"saying so is still written).\n";

struct opts {
	const char *format, *output, *palette_file;
	double last, every; /* seconds, 0 = none */
	int heatmap; /* 1 auto, 2 seconds, 3 hosts */
	unsigned long slices;
	double bucket;
	const char *function;
	struct sp_roll *roll;
	int cp, quiet;
	struct sp_warnings warn; /* line warnings: counted, -q drops them */
	struct sp_read_opts read;
	struct sp_flame_opts flame;
	struct sp_svg_opts svg;
};

static int opt_double(const char *opt, const char *val, double min, double max, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(val, &end);
	if (errno || end == val || *end || !isfinite(v) || v < min || v > max) {
		sp_usage_error(synopsis, "%s: '%s' is not a number from %g to %g", opt, val, min, max);
		return -1;
	}
	*out = v;
	return 0;
}

/* --every: draw what the stream held so far into -o FILE, replacing it
 * atomically (a browser tab or a dashboard never sees half a file). */
static int render_every(void *ctx, struct sp_profile *p, struct sp_err *err)
{
	struct opts *o = ctx;
	struct sp_flame *f = sp_flame_new(p, &o->flame);
	int rc = sp_roll_feed(o->roll, p, sp_flame_sink(f), err);
	if (rc == 0) {
		sp_flame_finish(f);
		if (sp_flame_nodes(f)[0].w > 0) {
			struct sp_outfile of = { 0 };
			if (sp_outfile_open(&of, o->output, SP_OUT_SIGNALS) < 0) {
				rc = sp_err_set(err, "cannot write %s", o->output);
			} else {
				int ok = sp_svg_write(of.f, f, &o->svg, err) == 0;
				if (!ok)
					sp_outfile_error(&of, err);
				if (sp_outfile_close(&of, ok) < 0 || !ok)
					rc = sp_err_set(err, "cannot write %s", o->output);
			}
		}
	}
	sp_flame_free(f);
	return rc;
}

/* --heatmap: read every input into the heat map, then write it. */
static int heatmap_main(struct opts *o, int nfiles, char **files)
{
	struct sp_heatmap_opts ho = {
		.rows = (int)(o->slices ? o->slices : 50), .width = o->svg.width, .title = o->svg.title,
		.js = (const char *)sp_asset_heatmap_js, .js_len = sp_asset_heatmap_js_len,
		.hosts = o->heatmap == 1 ? -1 : o->heatmap == 3, .bucket = o->bucket, .fn = o->function,
		.weight = o->flame.weight,
	};
	struct sp_profile *p = sp_profile_new();
	struct sp_heatmap *h = sp_heatmap_new(p, &ho);
	char *stdin_only[] = { "-" };
	if (!nfiles) {
		files = stdin_only;
		nfiles = 1;
	}
	struct sp_err err;
	int rc = SP_EXIT_OK;
	struct sp_sink *sink = sp_heatmap_sink(h);
	if (o->last) {
		struct sp_roll_opts ro = { (uint64_t)(o->last * 1e9), 0, 1, "--last", NULL, NULL, NULL };
		o->roll = sp_roll_new(&ro);
		sink = sp_roll_sink(o->roll);
	}
	for (int i = 0; i < nfiles && rc == SP_EXIT_OK; i++) {
		sp_heatmap_set_input(h, files[i]);
		if (o->roll)
			sp_roll_set_input(o->roll, files[i]);
		if (sp_read_file(files[i], o->format, p, sink, &o->read, NULL, &err) < 0) {
			sp_error_e(&err);
			rc = SP_EXIT_ERROR;
		}
	}
	sp_print_bad_lines(&o->read);
	if (rc == SP_EXIT_OK && o->roll && sp_roll_feed(o->roll, p, sp_heatmap_sink(h), &err) < 0) {
		sp_error_e(&err);
		rc = SP_EXIT_ERROR;
	}
	if (rc == SP_EXIT_OK && !sp_heatmap_samples(h)) {
		sp_error("no samples in the input: no heat map");
		rc = SP_EXIT_ERROR;
	}
	/* nothing is written after an error: a map of part of the input
	 * would pass for the whole */
	struct sp_outfile of = { 0 };
	if (rc == SP_EXIT_OK && sp_outfile_open(&of, o->output, SP_OUT_SIGNALS) < 0)
		rc = SP_EXIT_ERROR;
	if (rc == SP_EXIT_OK && sp_heatmap_write(of.f, h, &err) < 0) {
		sp_outfile_error(&of, &err);
		rc = SP_EXIT_ERROR;
	}
	if (of.f && sp_outfile_close(&of, rc == SP_EXIT_OK) < 0)
		rc = SP_EXIT_ERROR;
	sp_roll_free(o->roll);
	sp_heatmap_free(h);
	sp_profile_free(p);
	return rc;
}

static int cmd_psvg(int argc, char **argv)
{
	enum {
		O_TITLE = 256, O_SUBTITLE, O_WIDTH, O_HEIGHT, O_FONTSIZE, O_FONTWIDTH, O_FONTTYPE, O_MINWIDTH,
		O_COUNTNAME, O_NAMETYPE, O_COLORS, O_BGCOLORS, O_HASH, O_CP, O_PALFILE, O_SEARCHCOLOR, O_REVERSE,
		O_INVERTED, O_FLAMECHART, O_SORT, O_NEGATE, O_SHOWREMOVED, O_FACTOR, O_NOTES, O_WEIGHT, O_PID,
		O_TID, O_THREADS, O_NOCOMM, O_LAST, O_EVERY, O_HEATMAP, O_SLICES, O_ROOT,
		O_BUCKET, O_FUNCTION,
	};
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, 'f' },
		{ "title", required_argument, NULL, O_TITLE },
		{ "subtitle", required_argument, NULL, O_SUBTITLE },
		{ "width", required_argument, NULL, O_WIDTH },
		{ "height", required_argument, NULL, O_HEIGHT },
		{ "fontsize", required_argument, NULL, O_FONTSIZE },
		{ "fontwidth", required_argument, NULL, O_FONTWIDTH },
		{ "fonttype", required_argument, NULL, O_FONTTYPE },
		{ "minwidth", required_argument, NULL, O_MINWIDTH },
		{ "countname", required_argument, NULL, O_COUNTNAME },
		{ "nametype", required_argument, NULL, O_NAMETYPE },
		{ "colors", required_argument, NULL, O_COLORS },
		{ "colours", required_argument, NULL, O_COLORS },
		{ "color", required_argument, NULL, O_COLORS },
		{ "bgcolors", required_argument, NULL, O_BGCOLORS },
		{ "hash", no_argument, NULL, O_HASH },
		{ "cp", no_argument, NULL, O_CP },
		{ "palette-file", required_argument, NULL, O_PALFILE },
		{ "search-color", required_argument, NULL, O_SEARCHCOLOR },
		{ "reverse", no_argument, NULL, O_REVERSE },
		{ "inverted", no_argument, NULL, O_INVERTED },
		{ "flamechart", no_argument, NULL, O_FLAMECHART },
		{ "sort", required_argument, NULL, O_SORT },
		{ "negate", no_argument, NULL, O_NEGATE },
		{ "show-removed", no_argument, NULL, O_SHOWREMOVED },
		{ "factor", required_argument, NULL, O_FACTOR },
		{ "notes", required_argument, NULL, O_NOTES },
		{ "weight", required_argument, NULL, O_WEIGHT },
		{ "pid", no_argument, NULL, O_PID },
		{ "tid", no_argument, NULL, O_TID },
		{ "threads", no_argument, NULL, O_THREADS },
		{ "no-comm", no_argument, NULL, O_NOCOMM },
		{ "last", required_argument, NULL, O_LAST },
		{ "root", required_argument, NULL, O_ROOT },
		{ "every", required_argument, NULL, O_EVERY },
		{ "heatmap", optional_argument, NULL, O_HEATMAP },
		{ "bucket", required_argument, NULL, O_BUCKET },
		{ "function", required_argument, NULL, O_FUNCTION },
		{ "slices", required_argument, NULL, O_SLICES },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		SP_LONGOPTS_COMMON,
		{ NULL, 0, NULL, 0 },
	};
	struct opts o;
	memset(&o, 0, sizeof o);
	sp_svg_opts_init(&o.svg);
	o.flame.label = SP_LABEL_COMM;
	o.palette_file = "palette.map";
	int c;
	while ((c = getopt_long(argc, argv, "o:f:qhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': o.output = optarg; break;
		case 'f':
			if (sp_opt_format(synopsis, optarg, NULL, &o.format) < 0)
				return SP_EXIT_ERROR;
			break;
		case O_TITLE: o.svg.title = optarg; break;
		case O_ROOT: {
			regex_t re;
			if (regcomp(&re, optarg, REG_EXTENDED | REG_NOSUB) != 0)
				return sp_usage_error(synopsis, "--root: '%s' is not a regular expression", optarg);
			regfree(&re);
			o.svg.root = optarg;
			break;
		}
		case O_SUBTITLE: o.svg.subtitle = optarg; break;
		case O_WIDTH:
			if (opt_double("--width", optarg, 50, 100000, &o.svg.width) < 0)
				return SP_EXIT_ERROR;
			break;
		case O_HEIGHT:
			if (opt_double("--height", optarg, 2, 1000, &o.svg.frame_height) < 0)
				return SP_EXIT_ERROR;
			break;
		case O_FONTSIZE:
			if (opt_double("--fontsize", optarg, 1, 1000, &o.svg.fontsize) < 0)
				return SP_EXIT_ERROR;
			break;
		case O_FONTWIDTH:
			if (opt_double("--fontwidth", optarg, 0.01, 100, &o.svg.fontwidth) < 0)
				return SP_EXIT_ERROR;
			break;
		case O_FONTTYPE: o.svg.fonttype = optarg; break;
		case O_MINWIDTH: {
			char buf[64];
			size_t n = strlen(optarg);
			o.svg.minwidth_pct = n && optarg[n - 1] == '%';
			if (n >= sizeof buf)
				return sp_usage_error(synopsis, "--minwidth: '%s' is not a number", optarg);
			memcpy(buf, optarg, n + 1);
			if (o.svg.minwidth_pct)
				buf[n - 1] = 0;
			if (opt_double("--minwidth", buf, 0, 1e9, &o.svg.minwidth) < 0)
				return SP_EXIT_ERROR;
			break;
		}
		case O_COUNTNAME: o.svg.countname = optarg; break;
		case O_NAMETYPE: o.svg.nametype = optarg; break;
		case O_COLORS:
			if (!sp_svg_palette_known(optarg))
				return sp_usage_error(synopsis, "unknown palette '%s' (known: %s)", optarg,
						      sp_svg_palettes);
			o.svg.colors = optarg;
			break;
		case O_BGCOLORS:
			if (!sp_svg_bgcolors_known(optarg))
				return sp_usage_error(synopsis,
						      "--bgcolors must be yellow, blue, green, grey or #rrggbb, not '%s'",
						      optarg);
			o.svg.bgcolors = optarg;
			break;
		case O_HASH: o.svg.hash = 1; break;
		case O_CP: o.cp = 1; break;
		case O_PALFILE: o.cp = 1; o.palette_file = optarg; break;
		case O_SEARCHCOLOR:
			if (optarg[0] != '#' || strlen(optarg) != 7 || strspn(optarg + 1, "0123456789abcdefABCDEF") != 6)
				return sp_usage_error(synopsis, "--search-color must be #rrggbb, not '%s'", optarg);
			o.svg.search_color = optarg;
			break;
		case O_REVERSE: o.flame.reverse = 1; break;
		case O_INVERTED: o.svg.inverted = 1; break;
		case O_FLAMECHART: o.flame.flamechart = o.svg.flamechart = 1; break;
		case O_SORT:
			if (!strcmp(optarg, "name"))
				o.flame.sort = SP_FLAME_SORT_NAME;
			else if (!strcmp(optarg, "weight"))
				o.flame.sort = SP_FLAME_SORT_WEIGHT;
			else
				return sp_usage_error(synopsis, "--sort must be name or weight, not '%s'", optarg);
			break;
		case O_NEGATE: o.svg.negate = 1; break;
		case O_SHOWREMOVED: o.flame.show_removed = o.svg.show_removed = 1; break;
		case O_FACTOR:
			if (opt_double("--factor", optarg, 0, 1e300, &o.svg.factor) < 0)
				return SP_EXIT_ERROR;
			break;
		case O_NOTES: o.svg.notes = optarg; break;
		case O_WEIGHT: o.flame.weight = optarg; break;
		case O_PID: if (o.flame.label != SP_LABEL_TID) o.flame.label = SP_LABEL_PID; break;
		case O_TID: o.flame.label = SP_LABEL_TID; break;
		case O_THREADS: o.flame.each_thread = 1; break;
		case O_NOCOMM: o.flame.label = SP_LABEL_NONE; break;
		case O_LAST:
			if (opt_double("--last", optarg, 1e-9, 1e9, &o.last) < 0)
				return SP_EXIT_ERROR;
			break;
		case O_HEATMAP:
			if (!optarg)
				o.heatmap = 1;
			else if (!strcmp(optarg, "seconds"))
				o.heatmap = 2;
			else if (!strcmp(optarg, "hosts"))
				o.heatmap = 3;
			else
				return sp_usage_error(synopsis, "--heatmap must be seconds or hosts, not '%s'", optarg);
			break;
		case O_BUCKET:
			if (opt_double("--bucket", optarg, 1, 86400 * 366, &o.bucket) < 0)
				return SP_EXIT_ERROR;
			break;
		case O_FUNCTION: o.function = optarg; break;
		case O_SLICES:
			if (sp_opt_uint("--slices", optarg, &o.slices) < 0)
				return SP_EXIT_ERROR;
			if (o.slices < 1 || o.slices > 1000)
				return sp_usage_error(synopsis, "--slices must be from 1 to 1000");
			break;
		case O_EVERY:
			if (opt_double("--every", optarg, 1e-3, 1e9, &o.every) < 0)
				return SP_EXIT_ERROR;
			break;
		case 'q': o.quiet = 1; break;
		case 'h': fputs(synopsis, stdout); return SP_EXIT_OK;
		case 'V': return sp_version();
		case SP_OPT_PARTIAL: o.read.partial = 1; break;
		default: return sp_usage_error(synopsis, NULL);
		}
	}
	if (o.heatmap && (o.every || o.flame.flamechart || o.flame.reverse))
		return sp_usage_error(synopsis, "--heatmap draws its own graphs: not with --every, --flamechart or --reverse");
	if ((o.bucket || o.function) && o.heatmap != 1 && o.heatmap != 3)
		return sp_usage_error(synopsis, "--bucket and --function are options of the hosts heat map (--heatmap=hosts)");
	if (o.heatmap == 3 && o.slices)
		return sp_usage_error(synopsis, "--slices is an option of the sub-second heat map (--heatmap=seconds)");
	if (o.heatmap)
		return heatmap_main(&o, argc - optind, argv + optind);
	if (o.every && (!o.output || !strcmp(o.output, "-")))
		return sp_usage_error(synopsis, "--every rewrites a file: give it with -o FILE");
	o.svg.js = (const char *)sp_asset_flame_js;
	o.svg.js_len = sp_asset_flame_js_len;
	o.svg.css = (const char *)sp_asset_flame_css;
	o.svg.css_len = sp_asset_flame_css_len;
	o.warn.quiet = o.quiet;
	o.read.warn = sp_print_warning;
	o.read.warn_ctx = &o.warn;

	int rc = SP_EXIT_OK, empty = 0;
	struct sp_err err;
	if (o.cp) {
		o.svg.palette = sp_palette_new();
		uint64_t bad = 0;
		if (sp_palette_read(o.svg.palette, o.palette_file, &bad, &err) < 0) {
			sp_error_e(&err);
			sp_palette_free(o.svg.palette);
			return SP_EXIT_ERROR;
		}
		if (bad)
			sp_error("%s: ignored %llu line%s with invalid format (want NAME->rgb(R,G,B))", o.palette_file,
				 (unsigned long long)bad, bad == 1 ? "" : "s");
	}

	int nfiles = argc - optind;
	char *stdin_only[] = { "-" };
	char **files = nfiles ? argv + optind : stdin_only;
	if (!nfiles)
		nfiles = 1;
	/* a pipe: room for a middling profile (16 MB) */
	size_t insize = sp_heap_input_bytes(files, nfiles, (size_t)16 << 20);
	/* reading, the tree and the writer touch about 4 bytes per input byte */
	sp_heap_prepare(4 * insize);

	struct sp_profile *p = sp_profile_new();
	struct sp_flame *fl = sp_flame_new(p, &o.flame);
	struct sp_sink *sink = sp_flame_sink(fl);
	if (o.last || o.every) {
		/* --last keeps the window's samples, --every sums per stack
		 * and draws a fresh graph from them at each mark */
		struct sp_roll_opts ro = { (uint64_t)(o.last * 1e9), (uint64_t)(o.every * 1e9), o.flame.flamechart,
					   o.last ? "--last" : "--every", render_every, &o, NULL };
		o.roll = sp_roll_new(&ro);
		sink = sp_roll_sink(o.roll);
	}
	for (int i = 0; i < nfiles && rc == SP_EXIT_OK; i++) {
		if (o.roll)
			sp_roll_set_input(o.roll, files[i]);
		if (sp_read_file(files[i], o.format, p, sink, &o.read, NULL, &err) < 0) {
			sp_error_e(&err);
			/* flamegraph.pl's picture of nothing, below: a page
			 * that says so rather than an empty file */
			if (err.code == SP_ERR_EMPTY && !o.output)
				empty = 1;
			else
				rc = SP_EXIT_ERROR;
		}
	}
	sp_print_bad_lines(&o.read);
	if (o.roll && rc == SP_EXIT_OK && sp_roll_feed(o.roll, p, sp_flame_sink(fl), &err) < 0) {
		sp_error_e(&err);
		rc = SP_EXIT_ERROR;
	}
	/* --last: the window in the title, in seconds from the stream's start */
	char note[128];
	if (o.last && o.roll && sp_roll_newest(o.roll) != SP_NO_TIME) {
		uint64_t newest = sp_roll_newest(o.roll), oldest = sp_roll_oldest(o.roll), w = (uint64_t)(o.last * 1e9);
		uint64_t from = newest - oldest > w ? newest - w : oldest;
		snprintf(note, sizeof note, "last %g s (t=%.1f\u2013%.1f s)", o.last, (double)(from - oldest) / 1e9,
			 (double)(newest - oldest) / 1e9);
		o.svg.title_note = note;
	}

	/* Nothing is written after a read error: a graph of part of the
	 * input would pass for the whole. */
	struct sp_outfile of = { 0 };
	if (rc == SP_EXIT_OK && sp_outfile_open(&of, o.output, SP_OUT_SIGNALS) < 0)
		rc = SP_EXIT_ERROR;
	FILE *out = of.f;
	if (rc == SP_EXIT_OK) {
		/* all read: the stack index's memory is reused by the layout */
		sp_profile_drop_node_index(p);
		sp_flame_finish(fl);
		const struct sp_flame_node *root = sp_flame_nodes(fl);
		double total = root[0].w;
		if (sp_flame_is_diff(fl) && total <= 0 && sp_flame_deltas(fl)[0].a > 0 && !o.flame.show_removed)
			sp_error("the second profile is empty; --show-removed draws the first");
		if (total <= 0) {
			if (!empty)
				sp_error("no stack counts found in the input");
			if (sp_svg_write_message(out, &o.svg, "ERROR: No valid input provided to psvg.", &err) < 0)
				sp_error_e(&err);
			rc = SP_EXIT_ERROR;
		} else if (sp_svg_write(out, fl, &o.svg, &err) < 0) {
			sp_outfile_error(&of, &err);
			rc = SP_EXIT_ERROR;
		}
	}
	if (sp_outfile_close(&of, rc == SP_EXIT_OK) < 0)
		rc = SP_EXIT_ERROR;
	if (rc == SP_EXIT_OK && o.svg.palette && sp_palette_write(o.svg.palette, o.palette_file, &err) < 0) {
		sp_error_e(&err);
		rc = SP_EXIT_ERROR;
	}
	sp_palette_free(o.svg.palette);
	sp_roll_free(o.roll);
	sp_flame_free(fl);
	sp_profile_free(p);
	return rc;
}

int main(int argc, char **argv) { return sp_cmd_run("psvg", cmd_psvg, argc, argv); }
