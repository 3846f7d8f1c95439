/* pfilter — grep for stacks: keep, drop, rename and cut stacks, select
 * threads, time windows and the samples inside slow (or fast) calls. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>

#include "cmd.h"
#include "filter.h"

static const char synopsis[] =
	"usage: pfilter [options] [-e REGEX]... [FILE...]\n"
	"       pfilter [options] PATTERN [FILE...]\n"
	"Select and rewrite stack samples; writes the encoding it read (folded or binary).\n"
	"Every REGEX is a POSIX extended regex matched against one frame name.  As in grep,\n"
	"the first operand is the PATTERN when there is no -e and the only options are\n"
	"-v, -i, -F (or none).\n"
	"\n"
	"  -e, --regexp=REGEX      keep samples with a frame matching REGEX (repeatable: any)\n"
	"  -v, --invert-match      drop the samples -e matches instead\n"
	"  -F, --fixed-strings     patterns are plain strings, not regexes\n"
	"  -i, --ignore-case       patterns ignore case\n"
	"      --focus=REGEX       keep samples through a matching frame; it becomes the root\n"
	"      --exclude=REGEX     drop samples through a matching frame\n"
	"      --hide=REGEX        remove matching frames, keep the samples\n"
	"      --prune-below=REGEX cut the callees of a matching frame\n"
	"      --replace=s/RE/REPL/[gi]  rename frames (sed syntax: & and \\1..\\9); repeatable\n"
	"  -t, --threads=REGEX     keep threads whose name matches\n"
	"      --pid=N, --tid=N    keep one process or thread\n"
	"      --from=T, --to=T    time window, seconds as perf script prints them, or +S\n"
	"                          from the first sample (binary stream with timestamps)\n"
	"      --last=S            the last S seconds of the input\n"
	"      --min-share=PCT     drop stacks below PCT percent of the total\n"
	"      --weight=NAME       the value column --min-share weighs (default: period when\n"
	"                          present, else the first; count = samples)\n"
	"      --max-depth=N       cut stacks to N frames from the root\n"
	"      --collapse-recursion[=direct|all]  a frame calling itself (or, with all, any\n"
	"                          frame recurring further up) becomes one frame\n"
	"      --invert            leaf becomes the root (callers view)\n"
	"      --slow=FUNC[:PCT]   keep samples inside calls of FUNC at or above the PCT-th\n"
	"                          percentile of call duration (default 95; needs timestamps)\n"
	"      --fast=FUNC[:PCT]   keep samples inside calls of FUNC below that percentile\n"
	"      --max-gap=MS        a call goes on across gaps up to MS milliseconds between\n"
	"                          samples (default: 4 sampling periods)\n"
	"      --cpu-time          measure calls by their time on CPU, not their time span\n"
	"  -f, --format=NAME       input format: perf, folded, pyspy,\n"
	"                          speedscope, stream, perf.data, pprof, cprofile, du\n"
	"                          (default: detect)\n"
	"  -O, --output-format=F   folded or stream (default: the first input's encoding)\n"
	"  -b, --binary            the same as -O stream\n"
	"      --folded            the same as -O folded\n"
	"  -o, --output=FILE       write to FILE instead of standard output\n"
	"  -q, --quiet             no call statistics on standard error\n"
	"      --stats             print sample counts on standard error\n"
	"      --partial           use a truncated binary stream up to its cut (warns)\n"
	"  -V, --version           print the version\n"
	"  -h, --help              show this help\n"
	"\n"
	"Exit status: 0 ok, 1 no sample selected, 2 error.\n";

struct list {
	const char **v;
	size_t n;
};

static void push(struct list *l, const char *s)
{
	l->v = sp_xrealloc(l->v, (l->n + 1) * sizeof *l->v);
	l->v[l->n++] = s;
}

/* Seconds ("12345.678", "+1.5") to ns. */
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

static int cmd_pfilter(int argc, char **argv)
{
	enum { O_FOCUS = 256, O_EXCLUDE, O_HIDE, O_PRUNE, O_REPLACE, O_THREAD, O_PID, O_TID, O_FROM, O_TO,
	       O_LAST, O_MINSHARE, O_MAXDEPTH, O_COLLAPSE, O_INVERT, O_SLOW, O_FAST, O_FOLDED, O_STATS, O_GAP, O_CPU, O_WEIGHT };
	static const struct option longopts[] = {
		{ "regexp", required_argument, NULL, 'e' },
		{ "invert-match", no_argument, NULL, 'v' },
		{ "fixed-strings", no_argument, NULL, 'F' },
		{ "ignore-case", no_argument, NULL, 'i' },
		{ "focus", required_argument, NULL, O_FOCUS },
		{ "exclude", required_argument, NULL, O_EXCLUDE },
		{ "hide", required_argument, NULL, O_HIDE },
		{ "prune-below", required_argument, NULL, O_PRUNE },
		{ "replace", required_argument, NULL, O_REPLACE },
		{ "threads", required_argument, NULL, 't' },
		{ "thread", required_argument, NULL, 't' },
		{ "pid", required_argument, NULL, O_PID },
		{ "tid", required_argument, NULL, O_TID },
		{ "from", required_argument, NULL, O_FROM },
		{ "to", required_argument, NULL, O_TO },
		{ "last", required_argument, NULL, O_LAST },
		{ "min-share", required_argument, NULL, O_MINSHARE },
		{ "weight", required_argument, NULL, O_WEIGHT },
		{ "max-depth", required_argument, NULL, O_MAXDEPTH },
		{ "collapse-recursion", optional_argument, NULL, O_COLLAPSE },
		{ "collapse-recursive", optional_argument, NULL, O_COLLAPSE }, /* the peers' spelling */
		{ "invert", no_argument, NULL, O_INVERT },
		{ "slow", required_argument, NULL, O_SLOW },
		{ "fast", required_argument, NULL, O_FAST },
		{ "max-gap", required_argument, NULL, O_GAP },
		{ "cpu-time", no_argument, NULL, O_CPU },
		{ "format", required_argument, NULL, 'f' },
		{ "binary", no_argument, NULL, 'b' },
		{ "output-format", required_argument, NULL, 'O' },
		{ "folded", no_argument, NULL, O_FOLDED },
		{ "output", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "stats", no_argument, NULL, O_STATS },
		{ "help", no_argument, NULL, 'h' },
		SP_LONGOPTS_COMMON,
		{ NULL, 0, NULL, 0 },
	};
	struct sp_select_opts o;
	memset(&o, 0, sizeof o);
	o.f.pid = o.f.tid = -1;
	o.from = o.to = SP_NO_TIME;
	struct sp_read_opts ro;
	memset(&ro, 0, sizeof ro);
	ro.warn = sp_print_warning;
	o.read = &ro;
	struct list grep = { 0 }, focus = { 0 }, exclude = { 0 }, hide = { 0 }, prune = { 0 }, replace = { 0 };
	static char func[4096];
	const char *output = NULL;
	int other = 0, gflags = 0, rc = SP_EXIT_ERROR;
	unsigned long u;
	int c;
	while ((c = getopt_long(argc, argv, "e:vFit:f:bO:o:qhV", longopts, NULL)) != -1) {
		/* options that select (not the input, output or messages) */
		if (!(c < 256 && strchr("evFifbOoqhV", c)) && c != O_FOLDED && c != O_STATS && c != SP_OPT_PARTIAL)
			other = 1;
		switch (c) {
		case 'e': push(&grep, optarg); break;
		case 'v': o.f.invert_match = 1; gflags = 1; break;
		case 'F': o.f.fixed = 1; gflags = 1; break;
		case 'i': o.f.icase = 1; gflags = 1; break;
		case O_FOCUS: push(&focus, optarg); break;
		case O_EXCLUDE: push(&exclude, optarg); break;
		case O_HIDE: push(&hide, optarg); break;
		case O_PRUNE: push(&prune, optarg); break;
		case O_REPLACE: push(&replace, optarg); break;
		case 't': o.f.thread = optarg; break;
		case O_PID:
			if (sp_opt_uint("--pid", optarg, &u) < 0)
				goto usage_quiet;
			o.f.pid = (int64_t)u;
			break;
		case O_TID:
			if (sp_opt_uint("--tid", optarg, &u) < 0)
				goto usage_quiet;
			o.f.tid = (int64_t)u;
			break;
		case O_FROM:
			if (parse_time("--from", optarg, &o.from, &o.from_rel) < 0)
				goto usage_quiet;
			break;
		case O_TO:
			if (parse_time("--to", optarg, &o.to, &o.to_rel) < 0)
				goto usage_quiet;
			break;
		case O_LAST: {
			int rel;
			if (parse_time("--last", optarg, &o.last, &rel) < 0)
				goto usage_quiet;
			if (!o.last) {
				rc = sp_usage_error(synopsis, "--last must be more than 0 seconds");
				goto out;
			}
			break;
		}
		case O_MINSHARE: {
			char *end;
			o.min_share = strtod(optarg, &end);
			if (end == optarg || *end || !(o.min_share > 0 && o.min_share <= 100)) {
				rc = sp_usage_error(synopsis, "--min-share: not a percentage in (0, 100]: '%s'", optarg);
				goto out;
			}
			break;
		}
		case O_WEIGHT: o.weight = optarg; break;
		case O_MAXDEPTH:
			if (sp_opt_uint("--max-depth", optarg, &u) < 0)
				goto usage_quiet;
			if (!u || u > UINT32_MAX) {
				rc = sp_usage_error(synopsis, "--max-depth must be at least 1");
				goto out;
			}
			o.f.max_depth = (unsigned)u;
			break;
		case O_COLLAPSE:
			if (!optarg || !strcmp(optarg, "direct"))
				o.f.collapse = SP_COLLAPSE_DIRECT;
			else if (!strcmp(optarg, "all"))
				o.f.collapse = SP_COLLAPSE_ALL;
			else {
				rc = sp_usage_error(synopsis, "--collapse-recursion takes direct or all, not '%s'", optarg);
				goto out;
			}
			break;
		case O_INVERT: o.f.invert = 1; break;
		case O_SLOW:
		case O_FAST:
			if (o.func) {
				rc = sp_usage_error(synopsis, "only one of --slow and --fast, once");
				goto out;
			}
			if (sp_parse_func_pct(optarg, func, sizeof func, &o.pct) < 0) {
				rc = sp_usage_error(synopsis, "%s: expected FUNC[:PCT] with 0 < PCT < 100, not '%s'",
						    c == O_SLOW ? "--slow" : "--fast", optarg);
				goto out;
			}
			o.func = func;
			o.fast = c == O_FAST;
			break;
		case O_CPU: o.cpu_time = 1; break;
		case O_GAP: {
			char *end;
			double ms = strtod(optarg, &end);
			if (end == optarg || *end || !(ms > 0 && ms < 1e9)) {
				rc = sp_usage_error(synopsis, "--max-gap: not a number of milliseconds: '%s'", optarg);
				goto out;
			}
			o.max_gap = (uint64_t)llround(ms * 1e6);
			break;
		}
		case 'f':
			if (sp_opt_format(synopsis, optarg, NULL, &o.format) < 0) {
				rc = SP_EXIT_ERROR;
				goto out;
			}
			break;
		case 'O':
			if (sp_opt_output(synopsis, optarg, 0, &o.output) < 0) {
				rc = SP_EXIT_ERROR;
				goto out;
			}
			break;
		case 'b': o.output = SP_OUT_BINARY; break;
		case O_FOLDED: o.output = SP_OUT_FOLDED; break;
		case 'o': output = optarg; break;
		case 'q': o.quiet = 1; break;
		case O_STATS: o.stats = 1; break;
		case 'h':
			fputs(synopsis, stdout);
			rc = SP_EXIT_OK;
			goto out;
		case 'V':
			rc = sp_version();
			goto out;
		case SP_OPT_PARTIAL: ro.partial = 1; break;
		default:
			rc = sp_usage_error(synopsis, NULL);
			goto out;
		}
	}
	/* As in grep, the first operand is the pattern when no -e is given
	 * and the options are about patterns (-v, -i, -F) or there are none. */
	if (!grep.n && (gflags || !other) && optind < argc)
		push(&grep, argv[optind++]);
	else if (!grep.n && gflags) {
		rc = sp_usage_error(synopsis, "-v, -i and -F need a PATTERN (or -e REGEX)");
		goto out;
	}
	if (o.weight && !(o.min_share > 0)) {
		rc = sp_usage_error(synopsis, "--weight is for --min-share (pfilter keeps every value column)");
		goto out;
	}
	o.f.grep = grep.v;
	o.f.ngrep = grep.n;
	o.f.focus = focus.v;
	o.f.nfocus = focus.n;
	o.f.exclude = exclude.v;
	o.f.nexclude = exclude.n;
	o.f.hide = hide.v;
	o.f.nhide = hide.n;
	o.f.prune = prune.v;
	o.f.nprune = prune.n;
	o.f.replace = replace.v;
	o.f.nreplace = replace.n;

	struct sp_outfile of;
	if (sp_outfile_open(&of, output, SP_OUT_SIGNALS) < 0)
		goto out;
	FILE *out = of.f;
	char *stdin_only[] = { "-" };
	int nfiles = argc - optind;
	char **files = nfiles ? argv + optind : stdin_only;
	if (!nfiles)
		nfiles = 1;
	struct sp_err err;
	struct sp_buf msg = SP_BUF_INIT;
	rc = SP_EXIT_OK;
	int r = sp_select_run(&o, files, nfiles, out, &msg, &err);
	if (r < 0) {
		sp_outfile_error(&of, &err);
		rc = SP_EXIT_ERROR;
	} else if (r > 0) {
		rc = SP_EXIT_NEGATIVE; /* as grep: nothing matched */
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
	goto out;
usage_quiet:
	fputs(synopsis, stderr);
	rc = SP_EXIT_ERROR;
out:
	free(grep.v);
	free(focus.v);
	free(exclude.v);
	free(hide.v);
	free(prune.v);
	free(replace.v);
	return rc;
}

int main(int argc, char **argv) { return sp_cmd_run("pfilter", cmd_pfilter, argc, argv); }
