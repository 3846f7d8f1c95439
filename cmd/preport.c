/* preport — the text view: top functions by self and total, or the call
 * tree, for terminals, logs and scripts. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>

#include "cmd.h"
#include "cprofile.h"
#include "filter.h"
#include "latency.h"
#include "report.h"

static const char synopsis[] =
	"usage: preport [options] [FILE...]\n"
	"Print the functions with the most samples, by self (the leaf) and total (anywhere\n"
	"on the stack), with counts and shares; or the call tree.  Reads any input.\n"
	"\n"
	"  -n, --top=N             rows (default 20, 0 = all)\n"
	"      --sort=self|total   order of the rows (default self)\n"
	"      --per-thread        one table per thread name (--tree: threads as roots)\n"
	"      --threads           with --per-thread, every thread name its own (by default\n"
	"                          numbered names are grouped: Thread-N, worker-N)\n"
	"      --tree              the call tree, root first, with total and self shares\n"
	"      --lines             functions \"func (file:line)\" when the input has source lines\n"
	"      --min-share=PCT     --tree: leave out subtrees below PCT percent (default 1)\n"
	"      --callers=FUNC      the direct callers of FUNC (a name, else an extended regular\n"
	"                          expression), in the table's columns (rows by total)\n"
	"      --callees=FUNC      the functions FUNC calls directly (both: callers, then callees)\n"
	"      --latency           durations of traced calls (pcollect --trace): count, min,\n"
	"                          p50, p90, p95, p99, max and a log2 histogram per\n"
	"                          function; hit counts of point probes\n"
	"      --by=VALUE          --latency: one table per value of a recorded value\n"
	"                          (arg2, ret)\n"
	"  -O, --output-format=F   text (default), tsv or json (--json: the same as -O json)\n"
	"      --weight=NAME       value column to count (default: period when present, else\n"
	"                          the first, as pfold prints; count = samples)\n"
	"  -f, --format=NAME       input format: perf, folded, pyspy,\n"
	"                          speedscope, stream, perf.data, pprof, cprofile, du\n"
	"                          (default: detect)\n"
	"  -o, --output=FILE       write to FILE instead of standard output\n"
	"  -q, --quiet             do not print each bad line (the summary is still printed)\n"
	"      --partial           use a truncated binary stream up to its cut (warns)\n"
	"  -V, --version           print the version\n"
	"  -h, --help              show this help\n"
	"\n"
	"Exit status: 0 ok, 1 --latency measured no call, 2 error.\n";

struct rsink {
	struct sp_sink sink;
	struct sp_agg *agg;
	const char *weight;
	int col, have_col;
	uint32_t event; /* the first sample's: the unit of perf's period */
	struct sp_latency *lat; /* --latency */
};

static int r_trace(struct sp_sink *s, struct sp_profile *p, const struct sp_trace *t, struct sp_err *err)
{
	struct rsink *r = (struct rsink *)s;
	if (r->lat)
		sp_latency_trace(r->lat, p, t);
	return 0;
}

static int r_sample(struct sp_sink *s, struct sp_profile *p, const struct sp_sample *smp, struct sp_err *err)
{
	struct rsink *r = (struct rsink *)s;
	if (!r->have_col) {
		r->have_col = 1;
		r->event = smp->event;
		if ((r->col = sp_value_column(p, r->weight, err)) < 0)
			return -1;
	}
	sp_agg_entry(r->agg, sp_agg_thread_of(r->agg, smp->thread), smp->stack)[0] += smp->values[r->col];
	return 0;
}

static int cmd_preport(int argc, char **argv)
{
	enum { O_SORT = 256, O_PER_THREAD, O_THREADS, O_TREE, O_MINSHARE, O_WEIGHT, O_LINES, O_LATENCY, O_BY, O_JSON, O_CALLERS,
	       O_CALLEES };
	static const struct option longopts[] = {
		{ "top", required_argument, NULL, 'n' },
		{ "sort", required_argument, NULL, O_SORT },
		{ "per-thread", no_argument, NULL, O_PER_THREAD },
		{ "threads", no_argument, NULL, O_THREADS },
		{ "tree", no_argument, NULL, O_TREE },
		{ "lines", no_argument, NULL, O_LINES },
		{ "latency", no_argument, NULL, O_LATENCY },
		{ "by", required_argument, NULL, O_BY },
		{ "json", no_argument, NULL, O_JSON },
		{ "min-share", required_argument, NULL, O_MINSHARE },
		{ "callers", required_argument, NULL, O_CALLERS },
		{ "callees", required_argument, NULL, O_CALLEES },
		{ "output-format", required_argument, NULL, 'O' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "weight", required_argument, NULL, O_WEIGHT },
		{ "format", required_argument, NULL, 'f' },
		{ "input-format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		SP_LONGOPTS_COMMON,
		{ NULL, 0, NULL, 0 },
	};
	struct sp_report_opts o;
	memset(&o, 0, sizeof o);
	o.top = 20;
	o.min_share = 1;
	struct sp_read_opts ro;
	memset(&ro, 0, sizeof ro);
	struct sp_warnings warn = { 0, 0 };
	ro.warn = sp_print_warning;
	ro.warn_ctx = &warn;
	const char *output = NULL, *format = NULL;
	struct rsink r;
	memset(&r, 0, sizeof r);
	r.sink.sample = r_sample;
	r.sink.trace = r_trace;
	int tree = 0, lines = 0, latency = 0, each_thread = 0;
	const char *by = NULL, *callers = NULL, *callees = NULL;
	int sort_set = 0;
	unsigned long u;
	char *end;
	int c;
	while ((c = getopt_long(argc, argv, "n:f:O:o:qhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (sp_opt_uint("--top", optarg, &u) < 0)
				return sp_usage_error(synopsis, NULL);
			o.top = u;
			break;
		case O_SORT:
			sort_set = 1;
			if (!strcmp(optarg, "total"))
				o.sort_total = 1;
			else if (strcmp(optarg, "self"))
				return sp_usage_error(synopsis, "--sort: self or total, not '%s'", optarg);
			break;
		case O_PER_THREAD: o.per_thread = 1; break;
		case O_THREADS: each_thread = 1; break;
		case O_TREE: tree = 1; break;
		case O_LINES: lines = 1; break;
		case O_LATENCY: latency = 1; break;
		case O_BY: by = optarg; break;
		case O_CALLERS: callers = optarg; break;
		case O_CALLEES: callees = optarg; break;
		case O_JSON: o.format = SP_REPORT_JSON; break;
		case O_MINSHARE:
			o.min_share = strtod(optarg, &end);
			if (end == optarg || *end || !(o.min_share >= 0 && o.min_share <= 100))
				return sp_usage_error(synopsis, "--min-share: not a percentage: '%s'", optarg);
			break;
		case 'q': warn.quiet = 1; break;
		case 'O':
			if (!strcmp(optarg, "text"))
				o.format = SP_REPORT_TEXT;
			else if (!strcmp(optarg, "tsv"))
				o.format = SP_REPORT_TSV;
			else if (!strcmp(optarg, "json"))
				o.format = SP_REPORT_JSON;
			else
				return sp_usage_error(synopsis, "-O: output format is text, tsv or json, not '%s'", optarg);
			break;
		case O_WEIGHT: r.weight = optarg; break;
		case 'f':
			if (sp_opt_format(synopsis, optarg, strstr("text tsv json", optarg) ? "; the report's format is -O" : NULL,
					  &format) < 0)
				return SP_EXIT_ERROR;
			break;
		case 'o': output = optarg; break;
		case 'h': fputs(synopsis, stdout); return SP_EXIT_OK;
		case 'V': return sp_version();
		case SP_OPT_PARTIAL: ro.partial = 1; break;
		default: return sp_usage_error(synopsis, NULL);
		}
	}
	if (by && !latency)
		return sp_usage_error(synopsis, "--by goes with --latency");
	if (latency && (tree || o.format == SP_REPORT_TSV))
		return sp_usage_error(synopsis, "--latency prints text or json (not --tree or tsv)");
	const char *peek = callers ? callers : callees;
	if (callers && callees && strcmp(callers, callees))
		return sp_usage_error(synopsis, "--callers and --callees name one function (given '%s' and '%s')",
				      callers, callees);
	if (peek && (tree || latency || o.per_thread))
		return sp_usage_error(synopsis, "--callers/--callees go without --tree, --latency and --per-thread");
	if (peek && !sort_set)
		o.sort_total = 1; /* a caller's weight is its total through FUNC */
	if (latency)
		r.lat = sp_latency_new(by);
	int nfiles = argc - optind;
	char *stdin_only[] = { "-" };
	char **files = nfiles ? argv + optind : stdin_only;
	if (!nfiles)
		nfiles = 1;
	struct sp_profile *p = sp_profile_new();
	r.agg = sp_agg_new(p, 1);
	sp_agg_set_lines(r.agg, lines);
	sp_agg_set_each_thread(r.agg, each_thread);
	struct sp_err err;
	int rc = SP_EXIT_OK;
	struct sp_outfile of;
	if (sp_outfile_open(&of, output, SP_OUT_SIGNALS) < 0)
		rc = SP_EXIT_ERROR;
	FILE *out = of.f;
	/* One cProfile file: pstats' exact table, not rebuilt stacks. */
	if (rc == SP_EXIT_OK && nfiles == 1 && !tree && !peek && !o.per_thread && !r.weight && !lines &&
	    o.format != SP_REPORT_JSON) {
		struct sp_cprofile_report_opts co = { o.top, o.sort_total, o.format == SP_REPORT_TSV };
		int k = sp_cprofile_report_file(files[0], format, out, &co, &err);
		if (k < 0) {
			sp_error_e(&err);
			rc = SP_EXIT_ERROR;
		}
		if (k) {
			if (sp_outfile_close(&of, rc == SP_EXIT_OK) < 0)
				rc = SP_EXIT_ERROR;
			sp_agg_free(r.agg);
			sp_profile_free(p);
			return rc;
		}
	}
	for (int i = 0; i < nfiles && rc == SP_EXIT_OK; i++) {
		if (sp_read_file(files[i], format, p, &r.sink, &ro, NULL, &err) < 0) {
			sp_error_e(&err);
			rc = SP_EXIT_ERROR;
		}
	}
	if (rc == SP_EXIT_OK && latency) {
		if (!sp_latency_events(r.lat)) {
			sp_error("--latency: the input has no trace events (record them with pcollect --trace FUNC)");
			rc = SP_EXIT_ERROR;
		} else if (sp_latency_report(r.lat, p, o.format == SP_REPORT_JSON, out, &err) < 0) {
			if (err.code == SP_ERR_EMPTY) {
				sp_error("--latency: %s", err.msg);
				rc = SP_EXIT_NEGATIVE;
			} else {
				sp_outfile_error(&of, &err);
				rc = SP_EXIT_ERROR;
			}
		}
	} else if (rc == SP_EXIT_OK) {
		o.unit = r.have_col ? sp_value_unit(p, r.col, r.event) : "samples";
		/* One pcollect stream: how much of its targets' CPU time it sampled. */
		const char *cs = sp_meta_find(p, "cpu-sampled-ns"), *cc = sp_meta_find(p, "cpu-counted-ns");
		if (nfiles == 1 && cs && cc) {
			o.cpu_sampled_ns = strtod(cs, NULL);
			o.cpu_counted_ns = strtod(cc, NULL);
		}
		int w = peek   ? sp_report_peek(r.agg, &o, peek, callers != NULL, callees != NULL, out, &err)
			: tree ? sp_report_tree(r.agg, &o, out, &err)
			       : sp_report_top(r.agg, &o, out, &err);
		if (w < 0 && err.code == SP_ERR_NOMATCH) {
			sp_error("%s %s", callers ? "--callers:" : "--callees:", err.msg);
			rc = SP_EXIT_ERROR;
		} else if (w < 0) {
			sp_outfile_error(&of, &err);
			rc = SP_EXIT_ERROR;
		}
	}
	sp_print_bad_lines(&ro);
	if (sp_outfile_close(&of, rc == SP_EXIT_OK) < 0)
		rc = SP_EXIT_ERROR;
	sp_agg_free(r.agg);
	sp_latency_free(r.lat);
	sp_profile_free(p);
	return rc;
}

int main(int argc, char **argv) { return sp_cmd_run("preport", cmd_preport, argc, argv); }
