/* pdiff — compare two profiles (difffolded.pl's "stack a b"), or split one
 * timestamped profile into the samples inside slow calls of a function and
 * the rest. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>

#include "cmd.h"
#include "diff.h"

static const char synopsis[] =
	"usage: pdiff [options] A B\n"
	"       pdiff [options] --split=FUNC[:PCT] [FILE]\n"
	"Write the two-value profile \"stack a b\" of every stack in A or B (0 where absent),\n"
	"in the encoding of the input (folded text or the binary stream).\n"
	"\n"
	"  -n, --normalize         scale A's counts to B's total (truncated to integers)\n"
	"  -s, --strip-hex         replace hex numbers (0x1234 -> 0x...) before matching\n"
	"      --split=FUNC[:PCT]  one timestamped input: a = samples outside the calls of FUNC\n"
	"                          at or above the PCT-th duration percentile (default 95),\n"
	"                          b = samples inside them; a is scaled to b's total\n"
	"      --max-gap=MS        --split: a call goes on across gaps up to MS milliseconds\n"
	"                          between samples (default: 4 sampling periods)\n"
	"      --cpu-time          --split: measure calls by their time on CPU, not their span\n"
	"      --weight=NAME       value column compared (default: period when present, else the\n"
	"                          first; count = samples)\n"
	"      --keep-suffixes     compare compiler clones (foo.isra.0, foo.cold) as themselves,\n"
	"                          not as foo\n"
	"      --roots=MODE        the root frames (process names): auto (default: matched\n"
	"                          when A and B are one process each, ./v1 as ./v2), keep,\n"
	"                          drop, or FROM=TO (A's root FROM read as TO)\n"
	"      --report[=FMT]      print the functions whose self and total shares changed most\n"
	"                          (FMT: text, tsv, json) instead of a profile\n"
	"      --top=N             rows of the report (default 20, 0 = all); -n is\n"
	"                          --normalize here, as in difffolded.pl\n"
	"      --exit-code         exit 1 when a function's share changed by more than\n"
	"                          --threshold percentage points (default 0)\n"
	"      --threshold=PP      see --exit-code\n"
	"  -f, --format=NAME       input format: perf, folded, pyspy,\n"
	"                          speedscope, stream, perf.data, pprof, cprofile, du\n"
	"                          (default: detect)\n"
	"  -O, --output-format=F   folded or stream (default: the first input's encoding)\n"
	"  -b, --binary            the same as -O stream\n"
	"      --folded            the same as -O folded\n"
	"  -o, --output=FILE       write to FILE instead of standard output\n"
	"  -q, --quiet             no call statistics on standard error (--split)\n"
	"      --partial           use a truncated binary stream up to its cut (warns)\n"
	"  -V, --version           print the version\n"
	"  -h, --help              show this help\n"
	"\n"
	"Exit status: 0 ok (with --exit-code: no difference beyond the threshold),\n"
	"1 the profiles differ (only with --exit-code), 2 error.\n";

static int cmd_pdiff(int argc, char **argv)
{
	enum { O_SPLIT = 256, O_TOP, O_REPORT, O_EXIT, O_THRESHOLD, O_FOLDED, O_GAP, O_CPU, O_KEEPSUF, O_ROOTS, O_WEIGHT };
	static const struct option longopts[] = {
		{ "normalize", no_argument, NULL, 'n' },
		{ "strip-hex", no_argument, NULL, 's' },
		{ "keep-suffixes", no_argument, NULL, O_KEEPSUF },
		{ "roots", required_argument, NULL, O_ROOTS },
		{ "split", required_argument, NULL, O_SPLIT },
		{ "max-gap", required_argument, NULL, O_GAP },
		{ "cpu-time", no_argument, NULL, O_CPU },
		{ "weight", required_argument, NULL, O_WEIGHT },
		{ "report", optional_argument, NULL, O_REPORT },
		{ "top", required_argument, NULL, O_TOP },
		{ "exit-code", no_argument, NULL, O_EXIT },
		{ "threshold", required_argument, NULL, O_THRESHOLD },
		{ "format", required_argument, NULL, 'f' },
		{ "input-format", required_argument, NULL, 'f' },
		{ "output-format", required_argument, NULL, 'O' },
		{ "binary", no_argument, NULL, 'b' },
		{ "folded", no_argument, NULL, O_FOLDED },
		{ "output", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		SP_LONGOPTS_COMMON,
		{ NULL, 0, NULL, 0 },
	};
	struct sp_diff_opts o;
	memset(&o, 0, sizeof o);
	struct sp_read_opts ro;
	memset(&ro, 0, sizeof ro);
	ro.warn = sp_print_warning;
	o.read = &ro;
	o.ropts.top = 20;
	static char func[4096];
	const char *output = NULL;
	int exit_code = 0;
	double threshold = 0;
	unsigned long u;
	char *end;
	int c;
	while ((c = getopt_long(argc, argv, "nsf:bO:o:qhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'n': o.normalize = 1; break;
		case 's': o.strip_hex = 1; break;
		case O_KEEPSUF: o.keep_suffixes = 1; break;
		case O_ROOTS:
			if (sp_roots_parse(optarg, &o.roots) < 0)
				return sp_usage_error(synopsis, "--roots: auto, keep, drop or FROM=TO, not '%s'", optarg);
			break;
		case O_SPLIT:
			if (sp_parse_func_pct(optarg, func, sizeof func, &o.split_pct) < 0)
				return sp_usage_error(synopsis, "--split: expected FUNC[:PCT] with 0 < PCT < 100, not '%s'",
						      optarg);
			o.split_func = func;
			break;
		case O_CPU: o.cpu_time = 1; break;
		case O_WEIGHT: o.weight = optarg; break;
		case O_GAP: {
			double ms = strtod(optarg, &end);
			if (end == optarg || *end || !(ms > 0 && ms < 1e9))
				return sp_usage_error(synopsis, "--max-gap: not a number of milliseconds: '%s'", optarg);
			o.max_gap = (uint64_t)(ms * 1e6 + 0.5);
			break;
		}
		case O_REPORT:
			o.report = 1;
			if (!optarg || !strcmp(optarg, "text"))
				o.ropts.format = SP_REPORT_TEXT;
			else if (!strcmp(optarg, "tsv"))
				o.ropts.format = SP_REPORT_TSV;
			else if (!strcmp(optarg, "json"))
				o.ropts.format = SP_REPORT_JSON;
			else
				return sp_usage_error(synopsis, "--report: text, tsv or json, not '%s'", optarg);
			break;
		case O_TOP:
			if (sp_opt_uint("--top", optarg, &u) < 0)
				return sp_usage_error(synopsis, NULL);
			o.ropts.top = u;
			break;
		case O_EXIT: exit_code = 1; break;
		case O_THRESHOLD:
			threshold = strtod(optarg, &end);
			if (end == optarg || *end || !(threshold >= 0))
				return sp_usage_error(synopsis, "--threshold: not a number of percentage points: '%s'",
						      optarg);
			break;
		case 'f':
			if (sp_opt_format(synopsis, optarg, NULL, &o.format) < 0)
				return SP_EXIT_ERROR;
			break;
		case 'O':
			if (sp_opt_output(synopsis, optarg, 0, &o.output) < 0)
				return SP_EXIT_ERROR;
			break;
		case 'b': o.output = SP_OUT_BINARY; break;
		case O_FOLDED: o.output = SP_OUT_FOLDED; break;
		case 'o': output = optarg; break;
		case 'q': o.quiet = 1; break;
		case 'h': fputs(synopsis, stdout); return SP_EXIT_OK;
		case 'V': return sp_version();
		case SP_OPT_PARTIAL: ro.partial = 1; break;
		default: return sp_usage_error(synopsis, NULL);
		}
	}
	int nfiles = argc - optind;
	char **files = argv + optind;
	char *stdin_only[] = { "-" };
	if (o.split_func) {
		if (nfiles > 1)
			return sp_usage_error(synopsis, "--split reads one input, not %d", nfiles);
		if (!nfiles) {
			files = stdin_only;
			nfiles = 1;
		}
		if (o.normalize)
			return sp_usage_error(synopsis, "--split always normalises; -n does not apply");
	} else if (nfiles != 2) {
		return sp_usage_error(synopsis, "two inputs to compare, not %d", nfiles);
	} else if (!strcmp(files[0], "-") && !strcmp(files[1], "-")) {
		return sp_usage_error(synopsis, "only one input can be standard input");
	}
	struct sp_outfile of;
	if (sp_outfile_open(&of, output, SP_OUT_SIGNALS) < 0)
		return SP_EXIT_ERROR;
	FILE *out = of.f;
	struct sp_err err;
	struct sp_buf msg = SP_BUF_INIT;
	double change = 0;
	int rc = SP_EXIT_OK;
	if (sp_diff_run(&o, files, nfiles, out, &msg, &change, &err) < 0) {
		sp_outfile_error(&of, &err);
		rc = SP_EXIT_ERROR;
	} else if (exit_code && change > threshold + 1e-9) {
		rc = SP_EXIT_NEGATIVE;
	}
	for (char *l = msg.p, *e; l && l < msg.p + msg.len; l = e + 1) {
		e = memchr(l, '\n', (size_t)(msg.p + msg.len - l));
		if (!e)
			e = msg.p + msg.len;
		sp_error("%.*s", (int)(e - l), l);
	}
	sp_buf_release(&msg);
	sp_print_bad_lines(&ro);
	if (sp_outfile_close(&of, rc != SP_EXIT_ERROR) < 0)
		rc = SP_EXIT_ERROR;
	return rc;
}

int main(int argc, char **argv) { return sp_cmd_run("pdiff", cmd_pdiff, argc, argv); }
