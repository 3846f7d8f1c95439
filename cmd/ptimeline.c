/* ptimeline — traced calls one at a time, with the samples inside each, as
 * Chrome Trace Event JSON (Perfetto, chrome://tracing, speedscope). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio_ext.h>
#include <stdlib.h>

#include "cmd.h"
#include "format.h"
#include "timeline.h"

static const char synopsis[] =
	"usage: ptimeline [options] [FILE...]\n"
	"Write the traced calls (pcollect --trace) and the samples of a stream as Chrome\n"
	"Trace Event JSON, which Perfetto, chrome://tracing and speedscope open: a track per\n"
	"thread, every call a slice with its recorded values, line-probe hits as instants,\n"
	"the CPU samples with their stacks, off-CPU intervals as slices.\n"
	"Inputs (auto-detected, gzip ok, '-' or none = stdin): the stackpipe binary stream,\n"
	"perf.data, perf script text with times; speedscope JSON, folded stacks, py-spy\n"
	"output have no timestamps and are refused.\n"
	"\n"
	"  -o, --output=FILE       write to FILE instead of standard output\n"
	"  -z, --gzip              compress the JSON with gzip\n"
	"      --slowest=N         keep the N slowest calls of each traced function\n"
	"      --slower-than=T     keep the calls that took T or more (T: 5ms, 200us, 1s;\n"
	"                          a bare number is milliseconds)\n"
	"      --percentile=P      keep the calls at or above the P-th percentile of their\n"
	"                          function's durations (0 < P < 100)\n"
	"      --func=NAME         pick the calls of NAME only (default: every traced function)\n"
	"      --context=T         also keep T before and after each picked call (default 0)\n"
	"      --meanwhile         also keep what the other threads did during the picked calls\n"
	"      --from=T, --to=T    time window, seconds of stream time, or +S from the start\n"
	"      --no-samples        leave the samples out (speedscope then shows the calls)\n"
	"      --sample-slices     the samples as slices nested in their calls, one sampling\n"
	"                          period long (speedscope: the calls and what ran in them)\n"
	"  -f, --format=NAME       input format: perf, folded, pyspy,\n"
	"                          speedscope, stream, perf.data, pprof, cprofile, du\n"
	"                          (default: detect)\n"
	"      --partial           use a truncated binary stream up to its cut (warns)\n"
	"  -q, --quiet             do not print the summary (calls left open, calls picked)\n"
	"  -V, --version           print the version\n"
	"  -h, --help              show this help\n"
	"\n"
	"Exit status: 0 ok, 2 error.\n";

/* A duration: a number with ns, us, ms or s (bare: def_unit ns per unit). */
static int parse_dur(const char *opt, const char *arg, double def_unit, uint64_t *ns)
{
	char *end;
	errno = 0;
	double v = strtod(arg, &end);
	double unit = def_unit;
	if (!strcmp(end, "ns"))
		unit = 1;
	else if (!strcmp(end, "us"))
		unit = 1e3;
	else if (!strcmp(end, "ms"))
		unit = 1e6;
	else if (!strcmp(end, "s"))
		unit = 1e9;
	else if (*end)
		end = NULL;
	if (errno || !end || end == arg || !(v >= 0) || v * unit > 1.8e19) {
		sp_error("%s: not a duration: '%s' (a number with ns, us, ms or s)", opt, arg);
		return -1;
	}
	*ns = (uint64_t)llround(v * unit);
	return 0;
}

static int parse_time(const char *opt, const char *arg, uint64_t *ns, int *rel)
{
	char *end;
	*rel = arg[0] == '+';
	errno = 0;
	double v = strtod(arg + *rel, &end);
	if (errno || end == arg + *rel || *end || !(v >= 0) || v > 1.8e10) {
		sp_error("%s: not a time in seconds: '%s'", opt, arg);
		return -1;
	}
	*ns = (uint64_t)llround(v * 1e9);
	return 0;
}

static void summary(const struct sp_timeline_stats *st, const struct sp_timeline_opts *o)
{
	if (!st->calls && !st->points)
		sp_error("no trace events in the input: a timeline of its %" PRIu64 " samples%s on %u threads",
			 st->samples + st->offcpu, st->offcpu ? " and off-CPU intervals" : "", st->threads);
	if (st->unfinished)
		sp_error("%" PRIu64 " call%s without an exit in the input: shown up to its last timestamp "
			 "(category \"unfinished\")", st->unfinished, st->unfinished == 1 ? "" : "s");
	if (st->begun_before)
		sp_error("%" PRIu64 " exit%s without an entry: begun before the recording, shown from its start "
			 "(category \"begun-before\")", st->begun_before, st->begun_before == 1 ? "" : "s");
	if (st->selecting)
		sp_error("picked %" PRIu64 " of %" PRIu64 " calls%s%s; kept %" PRIu64 " calls, %" PRIu64
			 " samples, %" PRIu64 " points in their windows", st->picked, st->func_calls,
			 o->func ? " of " : "", o->func ? o->func : "", st->kept_calls, st->kept_samples,
			 st->kept_points);
}

static int cmd_ptimeline(int argc, char **argv)
{
	enum { O_SLOWEST = 256, O_SLOWER, O_PCT, O_FUNC, O_CONTEXT, O_MEANWHILE, O_FROM, O_TO, O_NOSAMPLES, O_SLICES };
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "gzip", no_argument, NULL, 'z' },
		{ "slowest", required_argument, NULL, O_SLOWEST },
		{ "slower-than", required_argument, NULL, O_SLOWER },
		{ "percentile", required_argument, NULL, O_PCT },
		{ "func", required_argument, NULL, O_FUNC },
		{ "context", required_argument, NULL, O_CONTEXT },
		{ "meanwhile", no_argument, NULL, O_MEANWHILE },
		{ "from", required_argument, NULL, O_FROM },
		{ "to", required_argument, NULL, O_TO },
		{ "no-samples", no_argument, NULL, O_NOSAMPLES },
		{ "sample-slices", no_argument, NULL, O_SLICES },
		{ "format", required_argument, NULL, 'f' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		SP_LONGOPTS_COMMON,
		{ NULL, 0, NULL, 0 },
	};
	struct sp_timeline_opts o;
	memset(&o, 0, sizeof o);
	o.from = o.to = SP_NO_TIME;
	struct sp_read_opts ro;
	memset(&ro, 0, sizeof ro);
	struct sp_warnings warn = { 0, 0 };
	const char *format = NULL, *output = NULL;
	int quiet = 0, c;
	unsigned long n;
	while ((c = getopt_long(argc, argv, "o:zf:qhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': output = optarg; break;
		case 'z': o.gzip = 1; break;
		case O_SLOWEST:
			if (sp_opt_uint("--slowest", optarg, &n) < 0)
				return SP_EXIT_ERROR;
			if (!n)
				return sp_usage_error(synopsis, "--slowest must be at least 1");
			o.slowest = n;
			break;
		case O_SLOWER:
			if (parse_dur("--slower-than", optarg, 1e6, &o.slower_than) < 0)
				return SP_EXIT_ERROR;
			if (!o.slower_than)
				return sp_usage_error(synopsis, "--slower-than must be more than 0");
			break;
		case O_PCT: {
			char *end;
			errno = 0;
			o.percentile = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(o.percentile > 0 && o.percentile < 100))
				return sp_usage_error(synopsis, "--percentile: '%s' is not a number above 0 and below 100",
						      optarg);
			break;
		}
		case O_FUNC: o.func = optarg; break;
		case O_CONTEXT:
			if (parse_dur("--context", optarg, 1e6, &o.context) < 0)
				return SP_EXIT_ERROR;
			break;
		case O_MEANWHILE: o.meanwhile = 1; break;
		case O_FROM:
			if (parse_time("--from", optarg, &o.from, &o.from_rel) < 0)
				return SP_EXIT_ERROR;
			break;
		case O_TO:
			if (parse_time("--to", optarg, &o.to, &o.to_rel) < 0)
				return SP_EXIT_ERROR;
			break;
		case O_NOSAMPLES: o.no_samples = 1; break;
		case O_SLICES: o.sample_slices = 1; break;
		case 'f':
			if (sp_opt_format(synopsis, optarg, NULL, &format) < 0)
				return SP_EXIT_ERROR;
			break;
		case 'q': quiet = 1; break;
		case 'h': fputs(synopsis, stdout); return SP_EXIT_OK;
		case 'V': return sp_version();
		case SP_OPT_PARTIAL: ro.partial = 1; break;
		default: return sp_usage_error(synopsis, NULL);
		}
	}
	if ((o.func || o.context || o.meanwhile) && !o.slowest && !o.slower_than && !(o.percentile > 0))
		return sp_usage_error(synopsis, "--func, --context and --meanwhile go with --slowest, --slower-than or --percentile");
	if (o.no_samples && o.sample_slices)
		return sp_usage_error(synopsis, "give --no-samples or --sample-slices, not both");
	int nfiles = argc - optind;
	char *stdin_only[] = { "-" };
	char **files = nfiles ? argv + optind : stdin_only;
	if (!nfiles)
		nfiles = 1;
	ro.warn = sp_print_warning;
	ro.warn_ctx = &warn;
	warn.quiet = quiet;

	signal(SIGPIPE, SIG_IGN);
	struct sp_outfile of;
	if (sp_outfile_open(&of, output, SP_OUT_SIGNALS) < 0)
		return SP_EXIT_ERROR;
	struct sp_profile *p = sp_profile_new();
	struct sp_timeline *tl = sp_timeline_new(p, &o);
	int rc = SP_EXIT_OK;
	struct sp_err err;
	for (int i = 0; i < nfiles && rc == SP_EXIT_OK; i++)
		if (sp_read_file(files[i], format, p, sp_timeline_sink(tl), &ro, NULL, &err) < 0) {
			sp_outfile_error(&of, &err);
			rc = SP_EXIT_ERROR;
		}
	if (rc == SP_EXIT_OK && sp_timeline_write(tl, of.f, &err) < 0) {
		if (sp_err_is_closed_pipe(&err) && of.f == stdout) {
			/* The reader went away (| head): quiet, as everywhere. */
			__fpurge(stdout);
			clearerr(stdout);
			sp_timeline_free(tl);
			sp_profile_free(p);
			return SP_EXIT_OK;
		}
		sp_outfile_error(&of, &err);
		rc = SP_EXIT_ERROR;
		if (err.errnum && of.f == stdout) {
			__fpurge(stdout);
			clearerr(stdout);
		}
	}
	if (rc == SP_EXIT_OK && !quiet)
		summary(sp_timeline_stats(tl), &o);
	sp_print_bad_lines(&ro);
	if (sp_outfile_close(&of, rc == SP_EXIT_OK) < 0)
		rc = SP_EXIT_ERROR;
	sp_timeline_free(tl);
	sp_profile_free(p);
	return rc;
}

int main(int argc, char **argv) { return sp_cmd_run("ptimeline", cmd_ptimeline, argc, argv); }
