/* Unit tests of the transforms (filter, calls, diff, report) and of the
 * flame graph's layout (formats/flame.c), through their public headers,
 * on small profiles built here.  One line per check. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calls.h"
#include "diff.h"
#include "filter.h"
#include "flame.h"
#include "fold.h"
#include "report.h"

#include "unit.h"

/* The node of a stack written "root;...;leaf". */
static uint32_t stack_of(struct sp_profile *p, const char *path)
{
	uint32_t node = 0;
	while (*path) {
		size_t n = strcspn(path, ";");
		node = sp_node_intern(p, node, sp_frame_named(p, path, n, SP_KIND_NATIVE));
		path += n + (path[n] == ';');
	}
	return node;
}

/* A node's stack written "root;...;leaf" (static buffer), or "DROP". */
static const char *path_of(struct sp_profile *p, uint32_t node)
{
	static char out[512];
	if (node == SP_FILTER_DROP)
		return "DROP";
	uint32_t *fr = NULL;
	size_t cap = 0, len = 0;
	uint32_t d = sp_node_frames(p, node, &fr, &cap);
	out[0] = 0;
	for (uint32_t i = 0; i < d; i++)
		len += (size_t)snprintf(out + len, sizeof out - len, "%s%s", i ? ";" : "",
					sp_str(p, sp_frame_get(p, fr[i])->name));
	free(fr);
	return out;
}

/* What a writer printed to a memory stream (caller frees). */
struct capture {
	char *buf;
	size_t len;
	FILE *f;
};
static FILE *capture_start(struct capture *c)
{
	c->buf = NULL;
	c->len = 0;
	c->f = open_memstream(&c->buf, &c->len);
	return c->f;
}
static char *capture_end(struct capture *c)
{
	fclose(c->f);
	return c->buf;
}

/* A check on a writer's output: on failure the output follows, each of
 * its lines after "# ". */
static void dump(const char *out)
{
	for (const char *l = out; l && *l;) {
		size_t n = strcspn(l, "\n");
		printf("#   %.*s\n", (int)n, l);
		l += n + (l[n] == '\n');
	}
}
#define CHECK_OUT(cond, name, out)         \
	do {                               \
		int ok_ = !!(cond);        \
		CHECK(ok_, "%s", name);    \
		if (!ok_)                  \
			dump(out);         \
	} while (0)

/* ---- filter ---- */

/* The path of stack `in` after a filter with options o. */
static const char *filtered(const struct sp_filter_opts *o, const char *in)
{
	static char out[512];
	struct sp_profile *p = sp_profile_new();
	struct sp_err err;
	struct sp_filter *f = sp_filter_new(p, o, &err);
	if (!f) {
		snprintf(out, sizeof out, "error: %s", err.msg);
	} else {
		snprintf(out, sizeof out, "%s", path_of(p, sp_filter_stack(f, stack_of(p, in))));
		sp_filter_free(f);
	}
	sp_profile_free(p);
	return out;
}

static const char *const hide[] = { "^b$" }, *const focus[] = { "^a$" }, *const exclude[] = { "^x" },
		  *const prune[] = { "^a$" }, *const replace[] = { "s/^a$/A/" }, *const grep[] = { "^c$" },
		  *const bad[] = { "(" };

/* Each option on a stack: the stack it gives ("DROP": the sample is
 * dropped; "error: ...": the filter refused the options). */
static const struct {
	struct sp_filter_opts o;
	const char *in, *want, *what;
} filter_cases[] = {
	{ { .pid = -1, .tid = -1 }, "main;a;b", "main;a;b", "no options keep the stack" },
	{ { .pid = -1, .tid = -1, .hide = hide, .nhide = 1 }, "main;a;b;c", "main;a;c",
	  "hide removes the frame, its callee moves up" },
	{ { .pid = -1, .tid = -1, .focus = focus, .nfocus = 1 }, "main;a;b", "a;b", "focus makes the match the root" },
	{ { .pid = -1, .tid = -1, .focus = focus, .nfocus = 1 }, "main;c", "DROP", "focus drops a stack without a match" },
	{ { .pid = -1, .tid = -1, .exclude = exclude, .nexclude = 1 }, "main;xy;z", "DROP",
	  "exclude drops a stack through a match" },
	{ { .pid = -1, .tid = -1, .exclude = exclude, .nexclude = 1 }, "main;y;z", "main;y;z", "exclude keeps the others" },
	{ { .pid = -1, .tid = -1, .prune = prune, .nprune = 1 }, "main;a;b;c", "main;a", "prune cuts the match's callees" },
	{ { .pid = -1, .tid = -1, .replace = replace, .nreplace = 1 }, "main;a;ab", "main;A;ab",
	  "replace renames whole-name matches only" },
	{ { .pid = -1, .tid = -1, .grep = grep, .ngrep = 1 }, "main;c;d", "main;c;d", "-e keeps a stack with a match" },
	{ { .pid = -1, .tid = -1, .grep = grep, .ngrep = 1 }, "main;d", "DROP", "-e drops one without" },
	{ { .pid = -1, .tid = -1, .grep = grep, .ngrep = 1, .invert_match = 1 }, "main;c;d", "DROP",
	  "-v -e drops a stack with a match" },
	{ { .pid = -1, .tid = -1, .focus = focus, .nfocus = 1, .icase = 1 }, "main;A;b", "A;b", "icase matches across case" },
	{ { .pid = -1, .tid = -1, .max_depth = 2 }, "main;a;b;c", "main;a", "max_depth keeps the root's frames" },
	{ { .pid = -1, .tid = -1, .collapse = SP_COLLAPSE_DIRECT }, "main;r;r;r;x;r", "main;r;x;r",
	  "collapse direct recursion only" },
	{ { .pid = -1, .tid = -1, .collapse = SP_COLLAPSE_ALL }, "main;r;x;r;y", "main;r;y",
	  "collapse all cuts back to the first r" },
	{ { .pid = -1, .tid = -1, .invert = 1 }, "main;a;b", "b;a;main", "invert puts the leaf first" },
	{ { .pid = -1, .tid = -1, .hide = bad, .nhide = 1 }, "main", "error: ", "a bad regex is an error" },
};

static void test_filter(void)
{
	for (size_t i = 0; i < sizeof filter_cases / sizeof filter_cases[0]; i++) {
		const char *r = filtered(&filter_cases[i].o, filter_cases[i].in);
		const char *want = filter_cases[i].want;
		int ok = !strncmp(want, "error: ", 7) ? !strncmp(r, want, 7) && strstr(r, "(") : !strcmp(r, want);
		CHECK(ok, "filter: %s: %s -> %s", filter_cases[i].what, filter_cases[i].in, r);
	}
	struct sp_filter_opts o;
	memset(&o, 0, sizeof o);
	o.pid = o.tid = -1;

	/* threads */
	struct sp_profile *p = sp_profile_new();
	struct sp_err err;
	o.thread = "^work";
	struct sp_filter *f = sp_filter_new(p, &o, &err);
	uint32_t worker = sp_thread_intern(p, 10, 11, sp_str_intern(p, "worker", 6));
	uint32_t other = sp_thread_intern(p, 10, 12, sp_str_intern(p, "other", 5));
	uint32_t node = stack_of(p, "main;a");
	CHECK(f && sp_filter_active(f), "filter: a thread pattern is active");
	CHECK(f && sp_filter_thread(f, worker, node) == 1, "filter: thread pattern keeps its thread");
	CHECK(f && sp_filter_thread(f, other, node) == 0, "filter: and drops another");
	sp_filter_free(f);
	o.thread = NULL;
	o.tid = 12;
	f = sp_filter_new(p, &o, &err);
	CHECK(f && !sp_filter_thread(f, worker, node) && sp_filter_thread(f, other, node), "filter: --tid selects by tid");
	sp_filter_free(f);
	o.tid = -1;
	f = sp_filter_new(p, &o, &err);
	CHECK(f && !sp_filter_active(f), "filter: no options: not active");
	sp_filter_free(f);
	sp_profile_free(p);

	char func[64];
	double pct = 0;
	CHECK(sp_parse_func_pct("work:90", func, sizeof func, &pct) == 0 && !strcmp(func, "work") && pct == 90,
	      "filter: FUNC:PCT parses");
	CHECK(sp_parse_func_pct("work", func, sizeof func, &pct) == 0 && pct == 95, "filter: PCT defaults to 95");
	CHECK(sp_parse_func_pct("work:100", func, sizeof func, &pct) < 0, "filter: PCT 100 is refused");
}

/* ---- calls ---- */

struct emitted {
	size_t n[3];            /* by enum sp_call_where */
	uint64_t slow_min, slow_max; /* times of the slow calls' samples */
};

static int count_emit(void *ctx, const struct sp_sample *smp, enum sp_call_where where, struct sp_err *err)
{
	struct emitted *e = ctx;
	e->n[where]++;
	if (where == SP_CALL_SLOW) {
		if (!e->slow_min || smp->time < e->slow_min)
			e->slow_min = smp->time;
		if (smp->time > e->slow_max)
			e->slow_max = smp->time;
	}
	return 0;
}

static void test_calls(void)
{
	/* One thread sampled every 10 ms: three calls of work one sample
	 * long (10 ms each), then one six samples long (60 ms), idle
	 * samples between them. */
	static const char *const seq[] = { "main;idle", "main;work",   "main;idle", "main;work;x", "main;idle",
					   "main;work", "main;idle",   "main;work", "main;work;y", "main;work",
					   "main;work", "main;work;y", "main;work", "main;idle" };
	const size_t n = sizeof seq / sizeof seq[0];
	const uint64_t ms = 1000000;
	struct sp_profile *p = sp_profile_new();
	static const char *const one[] = { "samples" };
	sp_profile_set_values(p, 1, one);
	uint32_t t = sp_thread_intern(p, 5, 5, sp_str_intern(p, "prog", 4));
	struct sp_sample smp[16];
	for (size_t i = 0; i < n; i++) {
		memset(&smp[i], 0, sizeof smp[i]);
		smp[i].stack = stack_of(p, seq[i]);
		smp[i].thread = t;
		smp[i].time = 1000 * ms + i * 10 * ms;
		smp[i].values[0] = 1;
	}
	struct sp_calls *c = sp_calls_new("work", 75);
	struct sp_err err;
	int rc = 0;
	for (size_t i = 0; i < n; i++)
		rc |= sp_calls_observe(c, p, &smp[i], &err);
	sp_calls_begin(c, p, 1);
	for (size_t i = 0; i < n; i++)
		rc |= sp_calls_sample(c, &smp[i], NULL, NULL, &err);
	rc |= sp_calls_end(c, NULL, NULL, &err);
	struct emitted e;
	memset(&e, 0, sizeof e);
	sp_calls_begin(c, p, 0);
	for (size_t i = 0; i < n; i++)
		rc |= sp_calls_sample(c, &smp[i], count_emit, &e, &err);
	rc |= sp_calls_end(c, count_emit, &e, &err);
	const struct sp_call_stats *st = sp_calls_stats(c);
	CHECK(rc == 0, "calls: both passes run");
	CHECK(st->period == 10 * ms, "calls: the period is the samples' spacing (%llu ns)", (unsigned long long)st->period);
	CHECK(st->calls == 4, "calls: 4 calls found (%llu)", (unsigned long long)st->calls);
	CHECK(st->p50 == 10 * ms, "calls: p50 is a one-sample call's 10 ms (%llu ns)", (unsigned long long)st->p50);
	CHECK(st->threshold > 10 * ms && st->threshold <= 60 * ms, "calls: the 75th percentile threshold lies in (10, 60] ms (%llu ns)",
	      (unsigned long long)st->threshold);
	CHECK(st->slow_calls == 1 && st->fast_calls == 3, "calls: --slow is the long call, --fast the 3 short (%llu, %llu)",
	      (unsigned long long)st->slow_calls, (unsigned long long)st->fast_calls);
	CHECK(st->slow_samples == 6 && st->fast_samples == 3 && st->outside_samples == 5,
	      "calls: samples 6 slow, 3 fast, 5 outside (%llu, %llu, %llu)", (unsigned long long)st->slow_samples,
	      (unsigned long long)st->fast_samples, (unsigned long long)st->outside_samples);
	CHECK(e.n[SP_CALL_SLOW] == 6 && e.n[SP_CALL_FAST] == 3 && e.n[SP_CALL_NONE] == 5,
	      "calls: every sample is emitted once, with its class (%zu, %zu, %zu)", e.n[SP_CALL_SLOW], e.n[SP_CALL_FAST],
	      e.n[SP_CALL_NONE]);
	CHECK(e.slow_min == smp[7].time && e.slow_max == smp[12].time, "calls: the slow samples are the long call's");
	struct sp_buf d = SP_BUF_INIT;
	sp_calls_describe(c, "work", &d);
	CHECK(d.len && strstr(sp_buf_cstr(&d), "work") && strstr(sp_buf_cstr(&d), "4 calls"),
	      "calls: the description names the function and its 4 calls (%s)", sp_buf_cstr(&d));
	sp_buf_release(&d);
	sp_calls_free(c);

	/* A sample without a time cannot be placed in a call. */
	c = sp_calls_new("work", 75);
	struct sp_sample untimed = smp[1];
	untimed.time = SP_NO_TIME;
	CHECK(sp_calls_observe(c, p, &untimed, &err) < 0, "calls: an untimed sample is an error");
	sp_calls_free(c);
	sp_profile_free(p);
}

/* ---- diff ---- */

/* A temporary file holding text; its path in path (PATH_MAX). */
static void write_temp(char *path, const char *text)
{
	strcpy(path, "/tmp/sp-unit-XXXXXX");
	int fd = mkstemp(path);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		CHECK(0, "diff: cannot write a temporary file");
	if (fd >= 0)
		close(fd);
}

/* pdiff of two folded texts, as folded text (caller frees); *change gets
 * the largest change in percentage points, *rc the result. */
static char *diff_of(const char *a, const char *b, int normalize, double *change, int *rc)
{
	char pa[64], pb[64];
	write_temp(pa, a);
	write_temp(pb, b);
	char *files[] = { pa, pb };
	struct sp_diff_opts o;
	memset(&o, 0, sizeof o);
	o.output = SP_OUT_FOLDED;
	o.normalize = normalize;
	struct sp_buf msg = SP_BUF_INIT;
	struct sp_err err;
	struct capture c;
	*rc = sp_diff_run(&o, files, 2, capture_start(&c), &msg, change, &err);
	sp_buf_release(&msg);
	unlink(pa);
	unlink(pb);
	return capture_end(&c);
}

static void test_diff(void)
{
	const char *a = "main;a 10\nmain;b 30\n", *b = "main;a 30\nmain;b 10\nmain;c 40\n";
	double change = -1;
	int rc;
	char *out = diff_of(a, b, 0, &change, &rc);
	CHECK_OUT(rc == 0 && !strcmp(out, "main;a 10 30\nmain;b 30 10\nmain;c 0 40\n"),
	      "diff: every stack of either input with both values, 0 where absent", out);
	/* shares of b: 75% of A, 12.5% of B */
	CHECK(fabs(change - 62.5) < 1e-9, "diff: the largest change is b's self share, 62.5 points (%g)", change);
	free(out);
	out = diff_of(a, b, 1, &change, &rc);
	CHECK_OUT(rc == 0 && !strcmp(out, "main;a 20 30\nmain;b 60 10\nmain;c 0 40\n"),
	      "diff: -n scales the first input to the second's total", out);
	free(out);
	out = diff_of(a, a, 0, &change, &rc);
	CHECK(rc == 0 && change == 0 && !strcmp(out, "main;a 10 10\nmain;b 30 30\n"), "diff: a profile against itself changes nothing (%g)",
	      change);
	free(out);
}

/* ---- report ---- */

static void test_report(void)
{
	struct sp_profile *p = sp_profile_new();
	struct sp_agg *a = sp_agg_new(p, 1);
	sp_agg_entry(a, 0, stack_of(p, "main;a;b"))[0] += 6;
	sp_agg_entry(a, 0, stack_of(p, "main;a"))[0] += 2;
	sp_agg_entry(a, 0, stack_of(p, "main;c"))[0] += 1;
	sp_agg_entry(a, 0, stack_of(p, "main;c"))[0] += 1;
	CHECK(sp_agg_count(a) == 3, "report: one entry per distinct stack (%zu)", sp_agg_count(a));
	CHECK(sp_agg_total(a, 0) == 10, "report: the total sums every entry (%g)", sp_agg_total(a, 0));
	struct sp_report_opts o;
	memset(&o, 0, sizeof o);
	o.format = SP_REPORT_TSV;
	o.unit = "samples";
	struct sp_err err;
	struct capture c;
	int rc = sp_report_top(a, &o, capture_start(&c), &err);
	char *out = capture_end(&c);
	CHECK_OUT(rc == 0 && !strcmp(out, "self\tself_pct\ttotal\ttotal_pct\tfunction\n"
				      "6\t60.0000\t6\t60.0000\tb\n"
				      "2\t20.0000\t8\t80.0000\ta\n"
				      "2\t20.0000\t2\t20.0000\tc\n"
				      "0\t0.0000\t10\t100.0000\tmain\n"),
	      "report: top functions by self, with self and total shares", out);
	free(out);
	o.sort_total = 1;
	o.top = 2;
	rc = sp_report_top(a, &o, capture_start(&c), &err);
	out = capture_end(&c);
	CHECK_OUT(rc == 0 && !strcmp(out, "self\tself_pct\ttotal\ttotal_pct\tfunction\n"
				      "0\t0.0000\t10\t100.0000\tmain\n"
				      "2\t20.0000\t8\t80.0000\ta\n"),
	      "report: --total orders by total, -n 2 keeps two rows", out);
	free(out);
	o.sort_total = 0;
	o.top = 0;
	rc = sp_report_tree(a, &o, capture_start(&c), &err);
	out = capture_end(&c);
	CHECK_OUT(rc == 0 && !strcmp(out, "depth\ttotal\ttotal_pct\tself\tself_pct\tfunction\n"
				      "1\t10\t100.0000\t0\t0.0000\tmain\n"
				      "2\t8\t80.0000\t2\t20.0000\ta\n"
				      "3\t6\t60.0000\t6\t60.0000\tb\n"
				      "2\t2\t20.0000\t2\t20.0000\tc\n"),
	      "report: the call tree, heaviest child first", out);
	free(out);
	o.min_share = 50;
	rc = sp_report_tree(a, &o, capture_start(&c), &err);
	out = capture_end(&c);
	CHECK_OUT(rc == 0 && strstr(out, "\tb\n") && !strstr(out, "\tc\n"), "report: the tree prunes below min_share", out);
	free(out);
	o.min_share = 0;
	rc = sp_report_peek(a, &o, "^a$", 1, 1, capture_start(&c), &err);
	out = capture_end(&c);
	CHECK_OUT(rc == 0 && !strcmp(out, "of\trelation\tself\tself_pct\ttotal\ttotal_pct\tfunction\n"
				      "a\tcaller\t2\t20.0000\t8\t80.0000\tmain\n"
				      "a\tcallee\t6\t60.0000\t6\t60.0000\tb\n"),
	      "report: peek lists a's caller and callee", out);
	free(out);
	rc = sp_report_peek(a, &o, "^zz$", 1, 1, capture_start(&c), &err);
	free(capture_end(&c));
	CHECK(rc < 0 && err.code == SP_ERR_NOMATCH, "report: peek of no function is SP_ERR_NOMATCH (%s)", err.msg);
	sp_agg_free(a);

	/* Two columns: what changed. */
	struct sp_agg *d = sp_agg_new(p, 2);
	double *e = sp_agg_entry(d, 0, stack_of(p, "main;a"));
	e[0] = 10, e[1] = 30;
	e = sp_agg_entry(d, 0, stack_of(p, "main;b"));
	e[0] = 30, e[1] = 10;
	e = sp_agg_entry(d, 0, stack_of(p, "main;c"));
	e[0] = 0, e[1] = 40;
	double mc = 0;
	rc = sp_report_diff(d, &o, capture_start(&c), &mc, &err);
	out = capture_end(&c);
	const char *nl = strchr(out, '\n');
	CHECK_OUT(rc == 0 && nl && !strncmp(nl + 1, "75.0000\t12.5000\t-62.5000\t75.0000\t12.5000\t-62.5000\tb\n", 52),
	      "report: diff's first row is the largest change, b's -62.5 points", out);
	CHECK(mc == 62.5 && sp_report_max_change(d) == 62.5, "report: the largest change is 62.5 points (%g)", mc);
	free(out);
	sp_agg_free(d);

	/* Threads are reported by name only. */
	uint32_t t1 = sp_thread_intern(p, 1, 2, sp_str_intern(p, "w", 1));
	uint32_t t2 = sp_thread_intern(p, 3, 4, sp_str_intern(p, "w", 1));
	CHECK(t1 != t2 && sp_agg_thread(p, t1) == sp_agg_thread(p, t2) && sp_agg_thread(p, 0) == 0,
	      "report: two runs' threads of one name are one");
	/* Numbered names are grouped: one root per pattern. */
	static const char *const names[][2] = {
		{ "Thread-575 (process_request_thread)", "Thread-N (process_request_thread)" },
		{ "ThreadPoolExecutor-0_3", "ThreadPoolExecutor-N_N" }, { "pool-1-thread-7", "pool-N-thread-N" },
		{ "worker-12", "worker-N" }, { "python3", "python3" }, { "kworker/0:1", "kworker/0:1" },
		{ "a-1b", "a-1b" }, { "x_", "x_" }, { ":-1", ":-1" }, { "-5", "-5" },
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		struct sp_buf g = SP_BUF_INIT;
		int changed = sp_thread_group(names[i][0], &g);
		CHECK(!strcmp(sp_buf_cstr(&g), names[i][1]) && changed == !!strcmp(names[i][0], names[i][1]),
		      "report: thread name '%s' grouped as '%s' (%s)", names[i][0], names[i][1], sp_buf_cstr(&g));
		sp_buf_release(&g);
	}
	struct sp_agg *ga = sp_agg_new(p, 1);
	uint32_t w1 = sp_thread_intern(p, 1, 5, sp_str_intern(p, "worker-1", 8));
	uint32_t w2 = sp_thread_intern(p, 1, 6, sp_str_intern(p, "worker-2", 8));
	CHECK(sp_agg_thread_of(ga, w1) == sp_agg_thread_of(ga, w2) &&
	      !strcmp(sp_str(p, sp_thread_get(p, sp_agg_thread_of(ga, w1))->name), "worker-N"),
	      "report: worker-1 and worker-2 are reported as worker-N");
	sp_agg_set_each_thread(ga, 1);
	sp_agg_free(ga);
	ga = sp_agg_new(p, 1);
	sp_agg_set_each_thread(ga, 1);
	CHECK(sp_agg_thread_of(ga, w1) != sp_agg_thread_of(ga, w2), "report: --threads keeps worker-1 and worker-2 apart");
	sp_agg_free(ga);
	sp_profile_free(p);
}

/* ---- flame ---- */

/* A sample of stack path on thread t with values v0, v1 into sink s. */
static void flame_add(struct sp_flame *f, struct sp_profile *p, uint32_t t, const char *path, double v0, double v1)
{
	struct sp_sample smp;
	memset(&smp, 0, sizeof smp);
	smp.stack = stack_of(p, path);
	smp.thread = t;
	smp.time = SP_NO_TIME;
	smp.values[0] = v0;
	smp.values[1] = v1;
	struct sp_sink *s = sp_flame_sink(f);
	struct sp_err err;
	if (s->sample(s, p, &smp, &err) < 0)
		CHECK(0, "flame: a sample is refused: %s", err.msg);
}

/* The nodes in preorder as "name@depth:x+w" (static buffer). */
static const char *flame_layout(const struct sp_flame *f)
{
	static char out[1024];
	size_t len = 0;
	const struct sp_flame_node *nd = sp_flame_nodes(f);
	for (size_t i = 0; i < sp_flame_count(f); i++) {
		size_t n;
		const char *s = sp_flame_name(f, nd[i].name, &n);
		len += (size_t)snprintf(out + len, sizeof out - len, "%s%.*s@%u:%g+%g", i ? " " : "", (int)n, s,
					nd[i].depth, nd[i].x, nd[i].w);
	}
	return out;
}

struct fsample {
	uint32_t thread;
	const char *path;
	double v0, v1;
};

/* The layout of a flame of samples s[0..n) with options o. */
static const char *laid_out(struct sp_profile *p, const struct sp_flame_opts *o, const struct fsample *s, size_t n)
{
	struct sp_flame *f = sp_flame_new(p, o);
	for (size_t i = 0; i < n; i++)
		flame_add(f, p, s[i].thread, s[i].path, s[i].v0, s[i].v1);
	sp_flame_finish(f);
	const char *l = flame_layout(f);
	sp_flame_free(f);
	return l;
}

static void test_flame(void)
{
	static const char *const one[] = { "samples" }, *const two[] = { "a", "b" };
	struct sp_profile *p = sp_profile_new();
	sp_profile_set_values(p, 1, one);
	struct sp_flame_opts o;
	memset(&o, 0, sizeof o);
	struct sp_flame *f = sp_flame_new(p, &o);
	flame_add(f, p, 0, "main;b", 1, 0);
	flame_add(f, p, 0, "main;a", 3, 0);
	flame_add(f, p, 0, "main;a;c", 2, 0);
	sp_flame_finish(f);
	const char *l = flame_layout(f);
	/* a's own 3 samples at its left edge, then its child c */
	CHECK(!strcmp(l, "all@0:0+6 main@1:0+6 a@2:0+5 c@3:3+2 b@2:5+1"),
	      "flame: widths, depths and x by name order, self at the left edge (%s)", l);
	const struct sp_flame_node *nd = sp_flame_nodes(f);
	CHECK(sp_flame_count(f) == 5 && nd[0].end == 5 && nd[2].end == 4 && nd[3].parent == 2 && nd[4].parent == 1,
	      "flame: subtree ends and parents");
	CHECK(sp_flame_samples(f) == 3 && sp_flame_integral(f) && !sp_flame_is_diff(f), "flame: 3 integral samples, not a diff");
	CHECK(!strcmp(sp_flame_unit(f), "samples"), "flame: the unit is the column's (%s)", sp_flame_unit(f));
	sp_flame_free(f);

	o.sort = SP_FLAME_SORT_WEIGHT;
	const struct fsample heavy_b[] = { { 0, "main;a", 1, 0 }, { 0, "main;b", 5, 0 } };
	l = laid_out(p, &o, heavy_b, 2);
	CHECK(!strcmp(l, "all@0:0+6 main@1:0+6 b@2:0+5 a@2:5+1"), "flame: weight order puts the heaviest first (%s)", l);
	o.sort = SP_FLAME_SORT_NAME;

	o.reverse = 1;
	const struct fsample leaf_x[] = { { 0, "main;a;x", 2, 0 }, { 0, "main;b;x", 1, 0 } };
	l = laid_out(p, &o, leaf_x, 2);
	CHECK(!strcmp(l, "all@0:0+3 x@1:0+3 a@2:0+2 main@3:0+2 b@2:2+1 main@3:2+1"),
	      "flame: reverse merges leaf first (%s)", l);
	o.reverse = 0;

	o.label = SP_LABEL_COMM;
	uint32_t t = sp_thread_intern(p, 7, 7, sp_str_intern(p, "prog", 4));
	const struct fsample threaded[] = { { t, "main;a", 2, 0 }, { 0, "main;a", 1, 0 } };
	l = laid_out(p, &o, threaded, 2);
	CHECK(!strcmp(l, "all@0:0+3 main@1:0+1 a@2:0+1 prog@1:1+2 main@2:1+2 a@3:1+2"),
	      "flame: a thread's name is its samples' root frame (%s)", l);
	o.label = SP_LABEL_NONE;

	o.flamechart = 1;
	const struct fsample aba[] = { { 0, "main;a", 1, 0 }, { 0, "main;b", 1, 0 }, { 0, "main;a", 1, 0 } };
	l = laid_out(p, &o, aba, 3);
	CHECK(!strcmp(l, "all@0:0+3 main@1:0+3 a@2:0+1 b@2:1+1 a@2:2+1"),
	      "flame: a flame chart merges only adjacent frames, in input order (%s)", l);
	o.flamechart = 0;
	sp_profile_free(p);

	/* A differential profile: width from b, self deltas, what vanished. */
	p = sp_profile_new();
	sp_profile_set_values(p, 2, two);
	f = sp_flame_new(p, &o);
	flame_add(f, p, 0, "main;x", 4, 2);
	flame_add(f, p, 0, "main;y", 0, 3);
	flame_add(f, p, 0, "main;z", 2, 0);
	sp_flame_finish(f);
	l = flame_layout(f);
	CHECK(sp_flame_is_diff(f) && !strcmp(l, "all@0:0+5 main@1:0+5 x@2:0+2 y@2:2+3 z@2:5+0"),
	      "flame: a diff is drawn with the second profile's widths, the gone frame kept at width 0 (%s)", l);
	nd = sp_flame_nodes(f);
	const struct sp_flame_delta *dl = sp_flame_deltas(f);
	CHECK(sp_flame_count(f) == 5 && dl && dl[2].a == 4 && dl[2].b == 2 && dl[2].self_delta == -2 && dl[3].self_delta == 3 &&
		      dl[1].a == 6 && dl[1].b == 5,
	      "flame: a diff's nodes carry both totals and the self delta");
	CHECK(sp_flame_max_delta(f) == 3, "flame: the largest |self delta| (%g)", sp_flame_max_delta(f));
	size_t nrem = 0;
	double rem = sp_flame_removed(f, &nrem);
	CHECK(rem == 2 && nrem == 1, "flame: one vanished path worth 2 (%g, %zu)", rem, nrem);
	sp_flame_free(f);
	o.show_removed = 1;
	const struct fsample gone[] = { { 0, "main;x", 4, 2 }, { 0, "main;z", 2, 0 } };
	l = laid_out(p, &o, gone, 2);
	CHECK(!strcmp(l, "all@0:0+6 main@1:0+6 x@2:0+4 z@2:4+2"), "flame: show_removed draws the first profile's shape (%s)", l);
	sp_profile_free(p);
}

int main(void)
{
	test_filter();
	test_calls();
	test_diff();
	test_report();
	test_flame();
	return failed;
}
