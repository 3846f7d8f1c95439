/* preport — the text view: top functions by self and total, or the call
 * tree, for terminals, logs and scripts. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>

#include "cmd.h"
#include "filter.h"
#include "report.h"

static const char synopsis[] =
	"usage: preport [options] [FILE...]\n"
	"Print the functions with the most samples, by self (the leaf) and total (anywhere\n"
	"on the stack), with counts and shares; or the call tree.  Reads any input.\n"
	"\n"
	"  -n, --top=N             rows (default 20, 0 = all)\n"
	"      --sort=self|total   order of the rows (default self)\n"
	"      --per-thread        one table per thread name (--tree: threads as roots)\n"
	"      --tree              the call tree, root first, with total and self shares\n"
	"      --min-share=PCT     --tree: leave out subtrees below PCT percent (default 1)\n"
	"      --format=FMT        text (default), tsv or json\n"
	"      --weight=NAME       value column to count (default: period when present, else\n"
	"                          the first, as pfold prints)\n"
	"  -f, --input-format=NAME input format: perf, folded, pyspy, stream (default: detect)\n"
	"  -o, --output=FILE       write to FILE instead of standard output\n"
	"  -h, --help              show this help\n"
	"\n"
	"Exit status: 0 ok, 2 error.\n";

struct rsink {
	struct sp_sink sink;
	struct sp_agg *agg;
	const char *weight;
	int col, have_col;
};

static int r_sample(struct sp_sink *s, struct sp_profile *p, const struct sp_sample *smp, struct sp_err *err)
{
	struct rsink *r = (struct rsink *)s;
	if (!r->have_col) {
		r->have_col = 1;
		r->col = sp_weight_column(p);
		if (r->weight) {
			r->col = -1;
			for (int i = 0; i < sp_profile_nvalues(p); i++)
				if (!strcmp(sp_profile_value_name(p, i), r->weight))
					r->col = i;
			if (r->col < 0)
				return sp_err_set(err, "--weight: the input has no value column '%s'", r->weight);
		}
	}
	sp_agg_entry(r->agg, sp_agg_thread(p, smp->thread), smp->stack)[0] += smp->values[r->col];
	return 0;
}

static int cmd_preport(int argc, char **argv)
{
	enum { O_SORT = 256, O_PER_THREAD, O_TREE, O_MINSHARE, O_FORMAT, O_WEIGHT };
	static const struct option longopts[] = {
		{ "top", required_argument, NULL, 'n' },
		{ "sort", required_argument, NULL, O_SORT },
		{ "per-thread", no_argument, NULL, O_PER_THREAD },
		{ "tree", no_argument, NULL, O_TREE },
		{ "min-share", required_argument, NULL, O_MINSHARE },
		{ "format", required_argument, NULL, O_FORMAT },
		{ "weight", required_argument, NULL, O_WEIGHT },
		{ "input-format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct sp_report_opts o;
	memset(&o, 0, sizeof o);
	o.top = 20;
	o.min_share = 1;
	struct sp_read_opts ro;
	memset(&ro, 0, sizeof ro);
	ro.warn = sp_print_warning;
	const char *output = NULL, *format = NULL;
	struct rsink r;
	memset(&r, 0, sizeof r);
	r.sink.sample = r_sample;
	int tree = 0;
	unsigned long u;
	char *end;
	int c;
	while ((c = getopt_long(argc, argv, "n:f:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (sp_opt_uint("--top", optarg, &u) < 0) {
				fputs(synopsis, stderr);
				return SP_EXIT_ERROR;
			}
			o.top = u;
			break;
		case O_SORT:
			if (!strcmp(optarg, "total"))
				o.sort_total = 1;
			else if (strcmp(optarg, "self"))
				return sp_usage_error(synopsis, "--sort: self or total, not '%s'", optarg);
			break;
		case O_PER_THREAD: o.per_thread = 1; break;
		case O_TREE: tree = 1; break;
		case O_MINSHARE:
			o.min_share = strtod(optarg, &end);
			if (end == optarg || *end || !(o.min_share >= 0 && o.min_share <= 100))
				return sp_usage_error(synopsis, "--min-share: not a percentage: '%s'", optarg);
			break;
		case O_FORMAT:
			if (!strcmp(optarg, "text"))
				o.format = SP_REPORT_TEXT;
			else if (!strcmp(optarg, "tsv"))
				o.format = SP_REPORT_TSV;
			else if (!strcmp(optarg, "json"))
				o.format = SP_REPORT_JSON;
			else
				return sp_usage_error(synopsis, "--format: text, tsv or json, not '%s'", optarg);
			break;
		case O_WEIGHT: r.weight = optarg; break;
		case 'f':
			if (!sp_format_find(optarg))
				return sp_usage_error(synopsis, "unknown format '%s' (known: %s)", optarg,
						      sp_format_names());
			format = optarg;
			break;
		case 'o': output = optarg; break;
		case 'h': fputs(synopsis, stdout); return SP_EXIT_OK;
		default: return sp_usage_error(synopsis, "unknown option");
		}
	}
	int nfiles = argc - optind;
	char *stdin_only[] = { "-" };
	char **files = nfiles ? argv + optind : stdin_only;
	if (!nfiles)
		nfiles = 1;
	struct sp_profile *p = sp_profile_new();
	r.agg = sp_agg_new(p, 1);
	struct sp_err err;
	int rc = SP_EXIT_OK;
	struct sp_outfile of;
	if (sp_outfile_open(&of, output, SP_OUT_SIGNALS) < 0)
		rc = SP_EXIT_ERROR;
	FILE *out = of.f;
	for (int i = 0; i < nfiles && rc == SP_EXIT_OK; i++) {
		if (sp_read_file(files[i], format, p, &r.sink, &ro, NULL, &err) < 0) {
			sp_error_e(&err);
			rc = SP_EXIT_ERROR;
		}
	}
	if (rc == SP_EXIT_OK) {
		o.unit = r.have_col ? sp_profile_value_name(p, r.col) : "samples";
		int w = tree ? sp_report_tree(r.agg, &o, out, &err) : sp_report_top(r.agg, &o, out, &err);
		if (w < 0) {
			sp_outfile_error(&of, &err);
			rc = SP_EXIT_ERROR;
		}
	}
	if (ro.bad_lines)
		sp_error("%llu bad line%s skipped", (unsigned long long)ro.bad_lines, ro.bad_lines == 1 ? "" : "s");
	if (sp_outfile_close(&of, rc == SP_EXIT_OK) < 0)
		rc = SP_EXIT_ERROR;
	if (ro.partial && rc == SP_EXIT_OK)
		rc = SP_EXIT_ERROR; /* a cut input: what came before the cut was used and written */
	sp_agg_free(r.agg);
	sp_profile_free(p);
	return rc;
}

int main(int argc, char **argv) { return sp_cmd_run("preport", cmd_preport, argc, argv); }
