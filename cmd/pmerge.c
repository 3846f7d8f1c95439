/* pmerge — sum many profiles into one, optionally tagging each stack with
 * a root frame naming its source. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>

#include "cmd.h"
#include "diff.h"

static const char synopsis[] =
	"usage: pmerge [options] FILE...\n"
	"Sum profiles (folded text and binary streams, mixed, gzip ok) into one, in the\n"
	"encoding of the first input.  Inputs are read one at a time; in a binary stream\n"
	"the samples of all inputs come out in time order (see pmerge(1)).\n"
	"\n"
	"      --tag               root frame naming each input: its \"host\" metadata, else\n"
	"                          the file name as given\n"
	"      --roots=MODE        the root frames (process names): keep (default), drop, or\n"
	"                          FROM=TO (root FROM of every input read as TO)\n"
	"  -f, --format=NAME       input format: perf, folded, pyspy,\n"
	"                          speedscope, stream, perf.data, pprof, cprofile, du\n"
	"                          (default: detect)\n"
	"  -O, --output-format=F   folded or stream (default: the first input's encoding)\n"
	"  -b, --binary            the same as -O stream\n"
	"      --folded            the same as -O folded\n"
	"  -o, --output=FILE       write to FILE instead of standard output\n"
	"  -q, --quiet             do not print each bad line (the summary is still printed)\n"
	"      --partial           use a truncated binary stream up to its cut (warns)\n"
	"  -V, --version           print the version\n"
	"  -h, --help              show this help\n"
	"\n"
	"Exit status: 0 ok, 2 error.\n";

static int cmd_pmerge(int argc, char **argv)
{
	enum { O_FOLDED = 256, O_TAG, O_ROOTS };
	static const struct option longopts[] = {
		{ "tag", no_argument, NULL, O_TAG },
		{ "roots", required_argument, NULL, O_ROOTS },
		{ "format", required_argument, NULL, 'f' },
		{ "input-format", required_argument, NULL, 'f' },
		{ "binary", no_argument, NULL, 'b' },
		{ "output-format", required_argument, NULL, 'O' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "folded", no_argument, NULL, O_FOLDED },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		SP_LONGOPTS_COMMON,
		{ NULL, 0, NULL, 0 },
	};
	struct sp_merge_opts o;
	memset(&o, 0, sizeof o);
	struct sp_read_opts ro;
	memset(&ro, 0, sizeof ro);
	struct sp_warnings warn = { 0, 0 };
	ro.warn = sp_print_warning;
	ro.warn_ctx = &warn;
	o.read = &ro;
	const char *output = NULL;
	int c;
	while ((c = getopt_long(argc, argv, "f:bO:o:qhV", longopts, NULL)) != -1) {
		switch (c) {
		case O_TAG: o.tag = 1; break;
		case O_ROOTS:
			/* auto is pdiff's: merged inputs are often different
			 * programs (hosts), whose roots stay apart */
			if (sp_roots_parse(optarg, &o.roots) < 0 || o.roots.mode == SP_ROOTS_AUTO)
				return sp_usage_error(synopsis, "--roots: keep, drop or FROM=TO, not '%s'", optarg);
			break;
		case 'q': warn.quiet = 1; break;
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
		case 'h': fputs(synopsis, stdout); return SP_EXIT_OK;
		case 'V': return sp_version();
		case SP_OPT_PARTIAL: ro.partial = 1; break;
		default: return sp_usage_error(synopsis, NULL);
		}
	}
	int nfiles = argc - optind;
	if (!nfiles)
		return sp_usage_error(synopsis, "no input files");
	int nstdin = 0;
	for (int i = optind; i < argc; i++)
		nstdin += !strcmp(argv[i], "-");
	if (nstdin > 1)
		return sp_usage_error(synopsis, "only one input can be standard input");
	struct sp_outfile of;
	if (sp_outfile_open(&of, output, SP_OUT_SIGNALS) < 0)
		return SP_EXIT_ERROR;
	FILE *out = of.f;
	struct sp_err err;
	int rc = SP_EXIT_OK;
	if (sp_merge_run(&o, argv + optind, nfiles, out, &err) < 0) {
		sp_outfile_error(&of, &err);
		rc = SP_EXIT_ERROR;
	}
	sp_print_bad_lines(&ro);
	if (sp_outfile_close(&of, rc == SP_EXIT_OK) < 0)
		rc = SP_EXIT_ERROR;
	return rc;
}

int main(int argc, char **argv) { return sp_cmd_run("pmerge", cmd_pmerge, argc, argv); }
