/* pfleet — profiles of many hosts in ClickHouse: create the store, put any
 * profile into it, get any slice back as a stream (pfleet(1)). */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

#include "cmd.h"
#include "fleet.h"
#include "stream.h"

static const char synopsis[] =
	"usage: pfleet init [--cluster NAME] [--ttl DAYS] URL\n"
	"       pfleet put [--service S] [--host H] [--label K=V]... [--bucket SECONDS] URL [FILE...]\n"
	"       pfleet get [--service S] [--host GLOB] [--label K=V]... [--since T] [--until T]\n"
	"                  [--by host|time]... URL\n"
	"       pfleet hosts --function F [--service S] [--host GLOB] [--since T] [--until T] URL\n"
	"       pfleet flush URL\n"
	"       pfleet prune [--ttl DAYS] URL\n"
	"Profiles of many hosts in ClickHouse (URL: its HTTP address, http://HOST:8123).\n"
	"\n"
	"  init    create the database and tables (idempotent)\n"
	"  put     store profiles (any input format; standard input by default)\n"
	"  get     write the slice's profile as a binary stream, summed by the server\n"
	"  hosts   the hosts that spend most in function F\n"
	"  flush   send the batches kept in the spool\n"
	"  prune   drop the days older than --ttl (servers without TTL)\n"
	"\n"
	"      --database=NAME     the database (default stackpipe)\n"
	"      --cluster=NAME      init: also Distributed tables over cluster NAME;\n"
	"                          put, get, hosts: use them\n"
	"      --ttl=DAYS          init, prune: keep DAYS days (default 30)\n"
	"      --service=S         the service (put: default the input's command)\n"
	"      --host=H            put: the host (default the input's, else this one);\n"
	"                          get, hosts: a glob of hosts\n"
	"      --label=K=V         put: label the samples; get, hosts: only these (repeat)\n"
	"      --bucket=SECONDS    put: time bucket (default 10)\n"
	"      --start=T           put: the wall-clock time of the first sample\n"
	"      --batch-rows=N      put: rows per insert (default 250000)\n"
	"      --spool=FILE        where batches the server did not take wait\n"
	"      --spool-max=BYTES   put: the spool's bound (default 1G; K, M, G)\n"
	"      --retries=N         sends after a failure before spooling (default 3)\n"
	"      --timeout=SECONDS   of a connection and of each answer (default 60)\n"
	"      --since=T, --until=T  get, hosts: the time range (default -1h to now);\n"
	"                          T: now, -30m, -2h, -1d, @EPOCH, 2026-11-26T10:00:00 (UTC)\n"
	"      --by=host|time      get: a root frame per host; a sample per time bucket\n"
	"      --function=F        hosts: the function\n"
	"      --value=NAME        hosts: the value column (default: time, else the first)\n"
	"  -f, --format=NAME       put: input format (default: detect)\n"
	"  -o, --output=FILE       get, hosts: write FILE instead of standard output\n"
	"  -q, --quiet             put: no summary line\n"
	"      --partial           put: use a truncated binary stream up to its cut\n"
	"  -V, --version           print the version\n"
	"  -h, --help              show this help\n"
	"\n"
	"Exit status: 0 ok, 1 no samples in the range, 2 error (put: also when\n"
	"batches went to the spool).\n";

/* The usage line of each subcommand (a usage error names its own). */
static const char *const sub_usage[] = {
	"usage: pfleet init [--cluster NAME] [--ttl DAYS] URL",
	"usage: pfleet put [--service S] [--host H] [--label K=V]... [--bucket SECONDS] URL [FILE...]",
	"usage: pfleet get [--service S] [--host GLOB] [--label K=V]... [--since T] [--until T] [--by host|time]... URL",
	"usage: pfleet hosts --function F [--service S] [--host GLOB] [--since T] [--until T] URL",
	"usage: pfleet flush URL",
	"usage: pfleet prune [--ttl DAYS] URL",
};
static const char *syn = synopsis; /* the usage of the subcommand once known */

/* The default spool: one file per server and database, in the user's state
 * directory. */
static char *default_spool(const struct sp_fleet *f)
{
	const char *env = getenv("PFLEET_SPOOL");
	if (env && *env)
		return strdup(env);
	struct sp_buf b = SP_BUF_INIT;
	const char *x = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
	if (x && *x)
		sp_buf_adds(&b, x);
	else if (home && *home)
		sp_buf_addf(&b, "%s/.local/state", home);
	else
		sp_buf_adds(&b, "/tmp");
	sp_buf_adds(&b, "/pfleet");
	/* mkdir -p (an error shows when the spool is opened) */
	char *d = sp_xstrndup(b.p, b.len);
	for (char *sl = strchr(d + 1, '/');; sl = strchr(sl + 1, '/')) {
		if (sl)
			*sl = 0;
		mkdir(d, 0700);
		if (!sl)
			break;
		*sl = '/';
	}
	free(d);
	sp_buf_addf(&b, "/spool-%s-%s-%s", f->url.host, f->url.port, f->db);
	char *s = sp_xstrndup(b.p, b.len);
	sp_buf_release(&b);
	return s;
}

static int parse_time(const char *opt, const char *v, int64_t *out)
{
	if (sp_fleet_parse_time(v, (int64_t)time(NULL), out) < 0)
		return sp_usage_error(syn, "%s '%s': a time is now, -30m, -2h, -1d, @EPOCH or 2026-11-26T10:00:00", opt, v);
	return 0;
}

static int cmd_pfleet(int argc, char **argv)
{
	enum { O_DB = 256, O_CLUSTER, O_TTL, O_SERVICE, O_HOST, O_LABEL, O_BUCKET, O_START, O_BATCH, O_SPOOL,
	       O_RETRIES, O_TIMEOUT, O_SPOOL_MAX, O_SINCE, O_UNTIL, O_BY, O_FUNCTION, O_VALUE };
	static const struct option longopts[] = {
		{ "database", required_argument, NULL, O_DB },
		{ "cluster", required_argument, NULL, O_CLUSTER },
		{ "ttl", required_argument, NULL, O_TTL },
		{ "service", required_argument, NULL, O_SERVICE },
		{ "host", required_argument, NULL, O_HOST },
		{ "label", required_argument, NULL, O_LABEL },
		{ "bucket", required_argument, NULL, O_BUCKET },
		{ "start", required_argument, NULL, O_START },
		{ "batch-rows", required_argument, NULL, O_BATCH },
		{ "spool", required_argument, NULL, O_SPOOL },
		{ "spool-max", required_argument, NULL, O_SPOOL_MAX },
		{ "retries", required_argument, NULL, O_RETRIES },
		{ "timeout", required_argument, NULL, O_TIMEOUT },
		{ "since", required_argument, NULL, O_SINCE },
		{ "until", required_argument, NULL, O_UNTIL },
		{ "by", required_argument, NULL, O_BY },
		{ "function", required_argument, NULL, O_FUNCTION },
		{ "value", required_argument, NULL, O_VALUE },
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		SP_LONGOPTS_COMMON,
		{ NULL, 0, NULL, 0 },
	};
	if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		fputs(synopsis, stdout);
		return SP_EXIT_OK;
	}
	if (argc >= 2 && (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version")))
		return sp_version();
	if (argc < 2 || argv[1][0] == '-')
		return sp_usage_error(syn, "no subcommand (init, put, get, hosts, flush, prune)");
	const char *sub = argv[1];
	enum { INIT, PUT, GET, HOSTS, FLUSH, PRUNE } mode;
	if (!strcmp(sub, "init")) mode = INIT;
	else if (!strcmp(sub, "put")) mode = PUT;
	else if (!strcmp(sub, "get")) mode = GET;
	else if (!strcmp(sub, "hosts")) mode = HOSTS;
	else if (!strcmp(sub, "flush")) mode = FLUSH;
	else if (!strcmp(sub, "prune")) mode = PRUNE;
	else return sp_usage_error(syn, "unknown subcommand '%s' (init, put, get, hosts, flush, prune)", sub);
	syn = sub_usage[mode];
	argc--, argv++;

	const char *db = "stackpipe", *cluster = NULL, *spool = NULL, *output = NULL;
	unsigned long long spool_max = 1ULL << 30;
	unsigned long ttl = 30, bucket = 10, batch = 250000, retries = 3, timeout = 60;
	struct sp_fleet_put_opts po;
	memset(&po, 0, sizeof po);
	po.start = INT64_MIN;
	struct sp_fleet_query q;
	memset(&q, 0, sizeof q);
	struct sp_read_opts ro;
	memset(&ro, 0, sizeof ro);
	struct sp_warnings warn = { 0, 0 };
	ro.warn = sp_print_warning;
	ro.warn_ctx = &warn;
	po.read = &ro;
	const char **labels = sp_xcalloc((size_t)argc + 1, sizeof *labels);
	int nlabels = 0, quiet = 0, have_since = 0, have_until = 0;
	int64_t now = (int64_t)time(NULL);
	int c, rc = SP_EXIT_OK;
	while ((c = getopt_long(argc, argv, "f:o:qhV", longopts, NULL)) != -1) {
		switch (c) {
		case O_DB: db = optarg; break;
		case O_CLUSTER: cluster = optarg; break;
		case O_TTL:
			if (sp_opt_uint("--ttl", optarg, &ttl) < 0 || !ttl)
				goto usage;
			break;
		case O_SERVICE: po.service = q.service = optarg; break;
		case O_HOST: po.host = q.host = optarg; break;
		case O_LABEL: {
			const char *eq = strchr(optarg, '=');
			if (!eq || eq == optarg) {
				rc = sp_usage_error(syn, "--label '%s': a label is KEY=VALUE", optarg);
				goto done;
			}
			labels[nlabels++] = optarg;
			break;
		}
		case O_BUCKET:
			if (sp_opt_uint("--bucket", optarg, &bucket) < 0 || !bucket || bucket > 86400) {
				rc = sp_usage_error(syn, "--bucket '%s': seconds from 1 to 86400", optarg);
				goto done;
			}
			break;
		case O_START:
			if (parse_time("--start", optarg, &po.start)) { rc = SP_EXIT_ERROR; goto done; }
			break;
		case O_BATCH:
			if (sp_opt_uint("--batch-rows", optarg, &batch) < 0 || !batch || batch > 1000000) {
				rc = sp_usage_error(syn, "--batch-rows '%s': from 1 to 1000000 (one atomic insert)", optarg);
				goto done;
			}
			break;
		case O_SPOOL: spool = optarg; break;
		case O_SPOOL_MAX: {
			char *end;
			errno = 0;
			unsigned long long v = strtoull(optarg, &end, 10);
			unsigned long long mul = !*end ? 1 : !strcmp(end, "K") ? 1ULL << 10 : !strcmp(end, "M") ? 1ULL << 20
						: !strcmp(end, "G") ? 1ULL << 30 : 0;
			if (errno || end == optarg || !mul || !v || v > (1ULL << 50) / mul) {
				rc = sp_usage_error(syn, "--spool-max '%s': a size in bytes (K, M, G)", optarg);
				goto done;
			}
			spool_max = v * mul;
			break;
		}
		case O_RETRIES:
			if (sp_opt_uint("--retries", optarg, &retries) < 0) goto usage;
			break;
		case O_TIMEOUT:
			if (sp_opt_uint("--timeout", optarg, &timeout) < 0 || !timeout) goto usage;
			break;
		case O_SINCE:
			if (parse_time("--since", optarg, &q.since)) { rc = SP_EXIT_ERROR; goto done; }
			have_since = 1;
			break;
		case O_UNTIL:
			if (parse_time("--until", optarg, &q.until)) { rc = SP_EXIT_ERROR; goto done; }
			have_until = 1;
			break;
		case O_BY:
			if (!strcmp(optarg, "host")) q.by |= SP_FLEET_BY_HOST;
			else if (!strcmp(optarg, "time")) q.by |= SP_FLEET_BY_TIME;
			else { rc = sp_usage_error(syn, "--by '%s': host or time", optarg); goto done; }
			break;
		case O_FUNCTION: q.function = optarg; break;
		case O_VALUE: q.value = optarg; break;
		case 'f':
			if (sp_opt_format(syn, optarg, NULL, &po.format) < 0) {
				rc = SP_EXIT_ERROR;
				goto done;
			}
			break;
		case 'o': output = optarg; break;
		case 'q': quiet = 1; warn.quiet = 1; break;
		case 'h': fputs(synopsis, stdout); goto done;
		case 'V': rc = sp_version(); goto done;
		case SP_OPT_PARTIAL: ro.partial = 1; break;
		default: goto usage;
		}
	}
	if (optind >= argc) {
		rc = sp_usage_error(syn, "pfleet %s: no URL (ClickHouse's HTTP address, http://127.0.0.1:8123)", sub);
		goto done;
	}
	if (mode != PUT && optind + 1 < argc) {
		rc = sp_usage_error(syn, "pfleet %s: one URL, and nothing after it ('%s')", sub, argv[optind + 1]);
		goto done;
	}
	if (mode == HOSTS && !q.function) {
		rc = sp_usage_error(syn, "pfleet hosts: no --function");
		goto done;
	}
	if (!have_since)
		q.since = now - 3600;
	if (!have_until)
		q.until = now;
	if (q.since >= q.until) {
		rc = sp_usage_error(syn, "--since is not before --until");
		goto done;
	}
	q.labels = labels;
	q.nlabels = nlabels;
	po.labels = labels;
	po.nlabels = nlabels;
	po.bucket = (unsigned)bucket;
	po.batch_rows = batch;

	struct sp_fleet f;
	struct sp_err err;
	char *spool_path = NULL;
	if (sp_fleet_open(&f, argv[optind], db, &err) < 0) {
		sp_error_e(&err);
		rc = SP_EXIT_ERROR;
		goto done;
	}
	f.timeout_ms = (int)(timeout > 86400 ? 86400000 : timeout * 1000);
	f.retries = (int)retries;
	f.cluster = cluster;
	spool_path = spool ? strdup(spool) : default_spool(&f);
	f.spool = spool_path;
	f.spool_max = spool_max;
	struct sp_fleet_stats st;
	memset(&st, 0, sizeof st);
	int r = 0;
	switch (mode) {
	case INIT: {
		int no_ttl = 0;
		f.cluster = NULL;
		r = sp_fleet_init(&f, cluster, (unsigned)ttl, &no_ttl, &err);
		if (f.remade[0])
			fprintf(stderr, "pfleet: note: %s made again over the cluster: %s of an older schema\n", f.remade,
				strchr(f.remade, ',') ? "they were" : "it was");
		if (r == 0 && no_ttl)
			fprintf(stderr, "pfleet: note: this server has no TTL (ClickHouse 19.6 has): run 'pfleet prune --ttl %lu %s' daily\n",
				ttl, argv[optind]);
		break;
	}
	case PRUNE: {
		unsigned dropped;
		r = sp_fleet_prune(&f, (unsigned)ttl, &dropped, &err);
		if (r == 0 && !quiet)
			fprintf(stderr, "pfleet: %u day%s older than %lu days dropped\n", dropped, dropped == 1 ? "" : "s", ttl);
		break;
	}
	case FLUSH:
	case PUT: {
		char *def[] = { "-", NULL };
		char **files = optind + 1 < argc ? argv + optind + 1 : def;
		int nfiles = optind + 1 < argc ? argc - optind - 1 : 1;
		r = mode == PUT ? sp_fleet_put(&f, &po, files, nfiles, &st, &err) : sp_fleet_flush(&f, &st, &err);
		sp_print_bad_lines(&ro);
		if (st.unspooled)
			fprintf(stderr, "pfleet: %llu spooled batch%s (%llu rows) sent from %s\n", (unsigned long long)st.unspooled,
				st.unspooled == 1 ? "" : "es", (unsigned long long)st.unspooled_rows, f.spool);
		if (st.landed)
			fprintf(stderr, "pfleet: %llu batch%s found stored after a lost answer: not sent twice\n",
				(unsigned long long)st.landed, st.landed == 1 ? "" : "es");
		if (st.already)
			fprintf(stderr, "pfleet: %llu batch%s (%llu rows) stored already by an earlier put of the same rows: not sent again\n",
				(unsigned long long)st.already, st.already == 1 ? "" : "es", (unsigned long long)st.already_rows);
		if (st.unlocked)
			fprintf(stderr, "pfleet: %llu batch%s sent without the host's lock (no lock file could be opened in $TMPDIR or"
				" /tmp): a put of the same host at the same moment could store them twice\n",
				(unsigned long long)st.unlocked, st.unlocked == 1 ? "" : "es");
		if (mode == FLUSH && r == 0 && !st.unspooled && !st.landed)
			fprintf(stderr, "pfleet: the spool %s holds nothing to send\n", f.spool);
		if (mode == PUT && !quiet && r == 0)
			fprintf(stderr, "pfleet: %llu samples -> %llu rows stored in %llu insert%s, %llu stacks sent to the dictionary"
				" (%llu it had already), %llu hourly rollup rows%s\n",
				(unsigned long long)st.samples, (unsigned long long)st.rows, (unsigned long long)st.batches,
				st.batches == 1 ? "" : "s", (unsigned long long)st.stacks, (unsigned long long)st.stacks_known,
				(unsigned long long)st.rollup_rows, st.retried ? " (after retries)" : "");
		if (st.rounded)
			fprintf(stderr, "pfleet: %llu value%s not whole, stored rounded to the nearest integer\n",
				(unsigned long long)st.rounded, st.rounded == 1 ? "" : "s");
		if (r == 1) {
			if (st.spooled)
				sp_error("%s: %llu rows in %llu batch%s spooled to %s ('pfleet flush %s' or the next put sends them)",
					 err.msg, (unsigned long long)st.spooled_rows, (unsigned long long)st.spooled,
					 st.spooled == 1 ? "" : "es", f.spool, argv[optind]);
			else
				sp_error("%s: the spool %s keeps its batches", err.msg, f.spool);
			r = -1;
		} else if (r < 0) {
			sp_error_e(&err);
			if (st.failed_inputs)
				sp_error("none of the %llu samples read from %s stored (a put stores an input whole or not at all)%s",
					 (unsigned long long)st.failed_samples,
					 st.failed_inputs == 1 ? "it" : "the inputs that failed", "");
			if (st.failed_inputs && (st.rows || st.already_rows))
				sp_error("the other inputs: %llu samples -> %llu rows stored", (unsigned long long)(st.samples - st.failed_samples),
					 (unsigned long long)(st.rows + st.already_rows));
			if (st.spooled)
				sp_error("%llu rows in %llu batches were spooled to %s before that", (unsigned long long)st.spooled_rows,
					 (unsigned long long)st.spooled, f.spool);
			r = -2;
		}
		break;
	}
	case GET:
	case HOSTS: {
		struct sp_outfile of;
		if (mode == GET && !output && sp_check_binary_stdout(stdout) < 0) {
			r = -2;
			break;
		}
		if (sp_outfile_open(&of, output, SP_OUT_SIGNALS) < 0) {
			r = -2;
			break;
		}
		r = mode == GET ? sp_fleet_get(&f, &q, of.f, &st, &err) : sp_fleet_hosts(&f, &q, of.f, &err);
		if (r == 1)
			sp_error("%s", err.msg);
		else if (r < 0)
			sp_outfile_error(&of, &err);
		if (st.rollup_stale)
			sp_error("warning: the hourly rollup of %s disagrees with its samples in this range (an insert cut short by"
				 " a server stopped?): read from the samples; pfleet(1), ROLLUP, says how to rebuild it", db);
		if (st.missing_stacks)
			sp_error("warning: %llu stack%s of the slice not in the dictionary (its batch is in a spool?): "
				 "shown as '[stack ID not in the dictionary]'", (unsigned long long)st.missing_stacks,
				 st.missing_stacks == 1 ? "" : "s");
		if (sp_outfile_close(&of, r == 0) < 0 && r == 0)
			r = -2;
		break;
	}
	}
	if (r == 1)
		rc = SP_EXIT_NEGATIVE;
	else if (r < 0) {
		if (r == -1 && (mode == INIT || mode == PRUNE))
			sp_error_e(&err);
		rc = SP_EXIT_ERROR;
		if (f.migrate.len) /* the statements the error names */
			fputs(sp_buf_cstr(&f.migrate), stderr);
	}
	sp_fleet_close(&f);
	free(spool_path);
done:
	free(labels);
	return rc;
usage:
	free(labels);
	return sp_usage_error(syn, NULL);
}

int main(int argc, char **argv) { return sp_cmd_run("pfleet", cmd_pfleet, argc, argv); }
