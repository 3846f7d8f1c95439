/* pspeedscope — write stack samples (any input pfold reads) as a speedscope
 * JSON file: one sampled profile per thread, in time order. */
#include <errno.h>
#include <getopt.h>
#include <regex.h>
#include <signal.h>
#include <stdio_ext.h>
#include <stdlib.h>

#include "cmd.h"
#include "format.h"
#include "rolling.h"
#include "speedscope.h"

static const char synopsis[] =
	"usage: pspeedscope [options] [FILE...]\n"
	"Write stack samples as a speedscope JSON file (https://www.speedscope.app): one\n"
	"sampled profile per thread, samples in time order, weights in nanoseconds when the\n"
	"input has timestamps or clock periods, plain counts otherwise.\n"
	"Inputs (auto-detected, gzip ok, '-' or none = stdin): the stackpipe binary stream,\n"
	"perf script text, folded stacks, py-spy raw output, speedscope JSON.\n"
	"\n"
	"  -f, --format=NAME       input format: perf, folded, pyspy,\n"
	"                          speedscope, stream, perf.data, pprof, cprofile, du\n"
	"                          (default: detect)\n"
	"  -o, --output=FILE       write to FILE instead of standard output\n"
	"  -t, --threads=REGEX     keep the threads whose profile name (\"comm (tid)\") matches\n"
	"                          the extended regular expression REGEX\n"
	"  -a, --all-threads       add one profile of all kept threads merged (each stack\n"
	"                          under its thread's name)\n"
	"      --side=a|b          which side of two-value (diff) input to write\n"
	"      --weight=NAME       value column of the weights (default auto: time when the\n"
	"                          input has it, else bytes, else period or the first;\n"
	"                          count = samples)\n"
	"      --max-depth=N       cut stacks deeper than N frames (default 3000, what speedscope\n"
	"                          draws in Chromium), with a warning\n"
	"      --name=NAME         the name speedscope shows (default: the input file's name)\n"
	"      --last=S            only the last S seconds of stream time (as pfilter --last)\n"
	"  -q, --quiet             do not print each bad input line (the summary is still printed)\n"
	"      --partial           use a truncated binary stream up to its cut (warns)\n"
	"  -V, --version           print the version\n"
	"  -h, --help              show this help\n"
	"\n"
	"Exit status: 0 ok (bad lines are reported and skipped), 2 error.\n";

struct opts {
	const char *format;
	const char *output;
	struct sp_speedscope_opts ss;
	struct sp_read_opts read;
	regex_t thread_re;
	int have_re;
	int quiet;
	struct sp_warnings warn; /* line warnings: counted, -q drops them */
};

static int select_thread(void *ctx, const char *name)
{
	struct opts *o = ctx;
	return regexec(&o->thread_re, name, 0, NULL, 0) == 0;
}

static int cmd_pspeedscope(int argc, char **argv)
{
	enum { O_SIDE = 256, O_NAME, O_WEIGHT, O_MAXDEPTH, O_LAST };
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "threads", required_argument, NULL, 't' },
		{ "thread", required_argument, NULL, 't' },
		{ "all-threads", no_argument, NULL, 'a' },
		{ "side", required_argument, NULL, O_SIDE },
		{ "weight", required_argument, NULL, O_WEIGHT },
		{ "max-depth", required_argument, NULL, O_MAXDEPTH },
		{ "name", required_argument, NULL, O_NAME },
		{ "last", required_argument, NULL, O_LAST },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		SP_LONGOPTS_COMMON,
		{ NULL, 0, NULL, 0 },
	};
	struct opts o;
	memset(&o, 0, sizeof o);
	o.ss.side = -1;
	unsigned long depth = 0;
	double last = 0;
	int c;
	while ((c = getopt_long(argc, argv, "f:o:t:aqhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (sp_opt_format(synopsis, optarg, NULL, &o.format) < 0)
				return SP_EXIT_ERROR;
			break;
		case 'o': o.output = optarg; break;
		case 't': {
			if (o.have_re)
				regfree(&o.thread_re);
			int k = regcomp(&o.thread_re, optarg, REG_EXTENDED | REG_NOSUB);
			if (k) {
				char msg[256];
				regerror(k, &o.thread_re, msg, sizeof msg);
				return sp_usage_error(synopsis, "--threads: bad regular expression '%s': %s", optarg, msg);
			}
			o.have_re = 1;
			break;
		}
		case 'a': o.ss.all_threads = 1; break;
		case O_SIDE:
			if (!strcmp(optarg, "a"))
				o.ss.side = 0;
			else if (!strcmp(optarg, "b"))
				o.ss.side = 1;
			else
				return sp_usage_error(synopsis, "--side must be a or b, not '%s'", optarg);
			break;
		case O_WEIGHT: /* "auto": the default, as before names were taken */
			o.ss.weight = strcmp(optarg, "auto") ? optarg : NULL;
			break;
		case O_MAXDEPTH:
			if (sp_opt_uint("--max-depth", optarg, &depth) < 0)
				return SP_EXIT_ERROR;
			if (depth < 2 || depth > 1000000)
				return sp_usage_error(synopsis, "--max-depth must be between 2 and 1000000");
			break;
		case O_NAME: o.ss.name = optarg; break;
		case O_LAST: {
			char *end;
			errno = 0;
			last = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(last > 0) || last > 1e9)
				return sp_usage_error(synopsis, "--last: '%s' is not a number of seconds above 0", optarg);
			break;
		}
		case 'q': o.quiet = 1; break;
		case 'h': fputs(synopsis, stdout); return SP_EXIT_OK;
		case 'V': return sp_version();
		case SP_OPT_PARTIAL: o.read.partial = 1; break;
		default: return sp_usage_error(synopsis, NULL);
		}
	}
	int nfiles = argc - optind;
	char *stdin_only[] = { "-" };
	char **files = nfiles ? argv + optind : stdin_only;
	if (!nfiles)
		nfiles = 1;
	if (!o.ss.name) {
		/* speedscope's title: the input's base name. */
		const char *f = files[0], *sl = strrchr(f, '/');
		o.ss.name = nfiles > 1 ? "profile" : !strcmp(f, "-") ? "stdin" : sl ? sl + 1 : f;
	}
	o.ss.max_depth = (uint32_t)depth;
	if (o.have_re) {
		o.ss.select = select_thread;
		o.ss.select_ctx = &o;
	}
	o.ss.warn = sp_print_warning;
	o.ss.warn_ctx = &o.warn;
	o.warn.quiet = o.quiet;
	o.read.warn = sp_print_warning;
	o.read.warn_ctx = &o.warn;

	/* A closed reader shows up as EPIPE, which ends the command quietly
	 * (cmd.h), instead of a SIGPIPE death. */
	signal(SIGPIPE, SIG_IGN);
	struct sp_outfile of;
	if (sp_outfile_open(&of, o.output, SP_OUT_SIGNALS) < 0) {
		if (o.have_re)
			regfree(&o.thread_re);
		return SP_EXIT_ERROR;
	}
	FILE *out = of.f;
	struct sp_profile *p = sp_profile_new();
	struct sp_speedscope_writer *w = sp_speedscope_writer_new(out, p, &o.ss);
	struct sp_sink *sink = sp_speedscope_writer_sink(w);
	struct sp_roll *roll = NULL;
	if (last > 0) {
		/* --last: the window's samples, then into the writer */
		struct sp_roll_opts ro = { (uint64_t)(last * 1e9), 0, 1, "--last", NULL, NULL, sink };
		roll = sp_roll_new(&ro);
		sink = sp_roll_sink(roll);
	}
	int rc = SP_EXIT_OK;
	struct sp_err err;
	for (int i = 0; i < nfiles && rc == SP_EXIT_OK; i++) {
		if (roll)
			sp_roll_set_input(roll, files[i]);
		if (sp_read_file(files[i], o.format, p, sink, &o.read, NULL, &err) < 0) {
			sp_outfile_error(&of, &err);
			rc = SP_EXIT_ERROR;
		}
	}
	if (roll && rc == SP_EXIT_OK && sp_roll_feed(roll, p, sp_speedscope_writer_sink(w), &err) < 0) {
		sp_outfile_error(&of, &err);
		rc = SP_EXIT_ERROR;
	}
	sp_roll_free(roll);
	struct sp_speedscope_stats st;
	if (rc == SP_EXIT_OK && sp_speedscope_writer_finish(w, &err) < 0) {
		if (sp_err_is_closed_pipe(&err) && out == stdout) {
			/* The reader went away (| head): quiet, as everywhere.
			 * Drop what is buffered and the error flag, so the
			 * wrapper's final check of stdout passes. */
			__fpurge(stdout);
			clearerr(stdout);
			sp_speedscope_writer_free(w);
			sp_profile_free(p);
			if (o.have_re)
				regfree(&o.thread_re);
			return SP_EXIT_OK;
		}
		sp_outfile_error(&of, &err);
		rc = SP_EXIT_ERROR;
		if (err.errnum && out == stdout) {
			/* Reported once here, not again by the wrapper. */
			__fpurge(stdout);
			clearerr(stdout);
		}
	}
	sp_speedscope_writer_stats(w, &st);
	if (rc == SP_EXIT_OK && st.truncated)
		sp_error("%llu sample%s had stacks deeper than %u frames: kept the %u frames nearest the root "
			 "and marked the cut with a \"[truncated]\" frame (--max-depth)",
			 (unsigned long long)st.truncated, st.truncated == 1 ? "" : "s",
			 depth ? (unsigned)depth : SP_SPEEDSCOPE_MAX_DEPTH,
			 (depth ? (unsigned)depth : SP_SPEEDSCOPE_MAX_DEPTH) - 1);
	if (st.dropped)
		sp_error("%llu sample%s with a negative or non-finite weight dropped", (unsigned long long)st.dropped,
			 st.dropped == 1 ? "" : "s");
	sp_print_bad_lines(&o.read);
	/* No partial file passed off as complete, and the old one kept. */
	if (sp_outfile_close(&of, rc == SP_EXIT_OK) < 0)
		rc = SP_EXIT_ERROR;
	sp_speedscope_writer_free(w);
	sp_profile_free(p);
	if (o.have_re)
		regfree(&o.thread_re);
	return rc;
}

int main(int argc, char **argv) { return sp_cmd_run("pspeedscope", cmd_pspeedscope, argc, argv); }
