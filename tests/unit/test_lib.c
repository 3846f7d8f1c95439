/* Unit tests of lib/: buffers, interning, stack nodes, threads, input
 * (lines, long lines, gzip), folding and merging.  One line per check. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "fold.h"
#include "input.h"
#include "profile.h"

#include "unit.h"

static void test_buf(void)
{
	struct sp_buf b = SP_BUF_INIT;
	sp_buf_addu64(&b, 0);
	sp_buf_addc(&b, ' ');
	sp_buf_addi64(&b, -1234567890123LL);
	sp_buf_addc(&b, ' ');
	sp_buf_addnum(&b, 10101010);
	sp_buf_addc(&b, ' ');
	sp_buf_addnum(&b, 14.2343983248723);
	sp_buf_addc(&b, ' ');
	sp_buf_addnum(&b, 0.1);
	CHECK(!strcmp(sp_buf_cstr(&b), "0 -1234567890123 10101010 14.2343983248723 0.1"), "buf: numbers print exactly");
	for (int i = 0; i < 100000; i++)
		sp_buf_addc(&b, 'x');
	CHECK(b.len == 46 + 100000, "buf: grows");
	sp_buf_release(&b);
	CHECK(b.p == NULL && b.len == 0, "buf: release empties");
}

static void test_intern(void)
{
	struct sp_profile *p = sp_profile_new();
	uint32_t a = sp_str_intern(p, "main", 4);
	uint32_t b = sp_str_intern(p, "mainx", 4);
	CHECK(a == b && a != 0, "strings: equal bytes give one id");
	CHECK(sp_str_intern(p, "", 0) == 0, "strings: empty is id 0");
	/* Many strings force rehashing; ids stay stable. */
	char tmp[32];
	uint32_t ids[20000];
	for (int i = 0; i < 20000; i++) {
		int n = snprintf(tmp, sizeof tmp, "fn%d", i);
		ids[i] = sp_str_intern(p, tmp, (size_t)n);
	}
	int stable = 1;
	for (int i = 0; i < 20000; i++) {
		int n = snprintf(tmp, sizeof tmp, "fn%d", i);
		if (sp_str_intern(p, tmp, (size_t)n) != ids[i] || strcmp(sp_str(p, ids[i]), tmp))
			stable = 0;
	}
	CHECK(stable, "strings: 20000 strings keep their ids across rehashes");

	struct sp_frame f = { 0 };
	f.name = a;
	f.kind = SP_KIND_NATIVE;
	uint32_t f1 = sp_frame_intern(p, &f);
	f.kind = SP_KIND_KERNEL;
	uint32_t f2 = sp_frame_intern(p, &f);
	f.kind = SP_KIND_NATIVE;
	uint32_t f3 = sp_frame_intern(p, &f);
	CHECK(f1 != f2 && f1 == f3, "frames: kind is part of a frame's identity");
	f.module = sp_str_intern(p, "/bin/x", 6);
	f.line = 7;
	CHECK(sp_frame_intern(p, &f) != f1, "frames: module and line too");

	uint32_t n1 = sp_node_intern(p, 0, f1);
	uint32_t n2 = sp_node_intern(p, n1, f2);
	uint32_t n3 = sp_node_intern(p, n1, f2);
	CHECK(n2 == n3 && n1 != n2, "nodes: a repeated stack costs one id");
	CHECK(sp_node_get(p, n2)->depth == 2 && sp_node_get(p, n2)->parent == n1, "nodes: parent and depth");
	/* the index dropped (psvg, done reading): the same ids again, and a
	 * new stack still gets the next id */
	sp_profile_drop_node_index(p);
	sp_node_prefetch(p, n1, f2); /* a hint only: no index to touch */
	uint32_t before = sp_node_count(p);
	CHECK(sp_node_intern(p, n1, f2) == n2 && sp_node_intern(p, 0, f1) == n1 && sp_node_count(p) == before,
	      "nodes: known stacks keep their ids after the index is dropped");
	CHECK(sp_node_intern(p, n2, f1) == before && sp_node_count(p) == before + 1,
	      "nodes: a new stack after the index is dropped gets the next id");
	uint32_t *fr = NULL;
	size_t cap = 0;
	uint32_t d = sp_node_frames(p, n2, &fr, &cap);
	CHECK(d == 2 && fr[0] == f1 && fr[1] == f2, "nodes: frames come back root first");
	free(fr);

	uint32_t t1 = sp_thread_intern(p, 10, 11, a);
	uint32_t t2 = sp_thread_intern(p, 10, 12, a);
	uint32_t t3 = sp_thread_intern(p, 10, 11, a);
	CHECK(t1 == t3 && t1 != t2 && t1 != 0, "threads: (pid, tid, name) interned");

	sp_meta_add(p, "event", "cpu-clock");
	sp_meta_add(p, "event", "cycles");
	CHECK(sp_meta_count(p) == 2 && !strcmp(sp_meta_find(p, "event"), "cycles"), "metadata: kept in order, last wins in find");
	sp_profile_free(p);
	sp_profile_free(NULL);
	CHECK(1, "profile: free(NULL) is a no-op");
}

/* --weight's column (sp_value_column) and the units values are shown in. */
static void test_columns(void)
{
	struct sp_profile *p = sp_profile_new();
	struct sp_err e;
	static const char *const sp[] = { "samples", "period" }, *const one[] = { "value" };
	sp_profile_set_values(p, 2, sp);
	CHECK(sp_value_column(p, NULL, &e) == 1, "columns: period is the default");
	CHECK(sp_value_column(p, "samples", &e) == 0 && sp_value_column(p, "count", &e) == 0,
	      "columns: by name, count = samples");
	CHECK(sp_value_column(p, "bogus", &e) == -1 &&
		      !strcmp(e.msg, "--weight=bogus: the input has no such value column (its columns: samples, period)"),
	      "columns: an unknown name is an error naming the columns");
	CHECK(sp_value_column(p, "1", &e) == 1 && sp_value_column(p, "2", &e) == -1,
	      "columns: by index, past the last is an error");
	CHECK(sp_value_option(p, "--value", "x", &e) == -1 &&
		      !strcmp(e.msg, "--value=x: the input has no such value column (its columns: samples, period)"),
	      "columns: the error names the option");
	CHECK(!sp_value_is_diff(p), "columns: samples, period is not a difference");
	static const char *const ab[] = { "a", "b" };
	sp_profile_set_values(p, 2, ab);
	CHECK(sp_value_is_diff(p) && sp_value_find(p, "b") == 1 && sp_value_find(p, "c") == -1,
	      "columns: a, b is a difference; found by name");
	sp_profile_set_values(p, 1, one);
	CHECK(sp_value_column(p, NULL, &e) == 0 && sp_value_column(p, "count", &e) == -1,
	      "columns: folded text's one column; count is not it");
	CHECK(!strcmp(sp_value_unit(p, 0, 0), ""), "units: folded text's value has no unit");
	struct sp_buf b = SP_BUF_INIT;
	sp_buf_addvalue(&b, 2909090880, "");
	sp_buf_adds(&b, "|");
	sp_buf_addvalue(&b, 14014, "samples");
	sp_buf_adds(&b, "|");
	sp_buf_addvalue(&b, 896250000, "ns");
	CHECK(!strcmp(sp_buf_cstr(&b), "2,909,090,880|14,014 samples|896.25 ms"),
	      "units: a bare number when unknown, samples, time as ms");
	sp_buf_release(&b);
	sp_profile_free(p);
}

static void test_input(void)
{
	/* Lines, a line longer than the buffer, a last line without '\n'. */
	size_t big = 3u << 20;
	char *data = malloc(big + 64);
	memcpy(data, "one\r\ntwo\n", 9);
	memset(data + 9, 'x', big);
	memcpy(data + 9 + big, "\nlast", 5);
	size_t total = 9 + big + 5;
	struct sp_input *in = sp_input_mem(data, total, "mem");
	size_t len;
	const char *l1 = sp_input_line(in, &len);
	int ok1 = l1 && len == 4 && !memcmp(l1, "one\r", 4);
	const char *l2 = sp_input_line(in, &len);
	int ok2 = l2 && len == 3 && !memcmp(l2, "two", 3);
	const char *l3 = sp_input_line(in, &len);
	int ok3 = l3 && len == big && l3[0] == 'x' && l3[big - 1] == 'x';
	const char *l4 = sp_input_line(in, &len);
	int ok4 = l4 && len == 4 && !memcmp(l4, "last", 4);
	CHECK(ok1 && ok2, "input: lines split at newlines, CR kept");
	CHECK(ok3, "input: a 3 MB line comes back whole");
	CHECK(ok4 && sp_input_line(in, &len) == NULL, "input: last line without newline, then EOF");
	CHECK(sp_input_lineno(in) == 4 && sp_input_offset(in) == total, "input: line numbers and offsets");
	sp_input_close(in);

	/* gzip, two members, read through a file. */
	char path[] = "/tmp/sp-test-XXXXXX";
	int fd = mkstemp(path);
	close(fd);
	gzFile gz = gzopen(path, "wb");
	gzwrite(gz, "alpha\nbeta\n", 11);
	gzclose(gz);
	FILE *f = fopen(path, "rb");
	char raw[256];
	size_t n = fread(raw, 1, sizeof raw, f);
	fclose(f);
	f = fopen(path, "ab");
	fwrite(raw, 1, n, f);
	fclose(f);
	struct sp_err err;
	in = sp_input_open(path, &err);
	int lines = 0, good = 1;
	const char *l;
	while ((l = sp_input_line(in, &len))) {
		lines++;
		if (!(len == 5 && !memcmp(l, "alpha", 5)) && !(len == 4 && !memcmp(l, "beta", 4)))
			good = 0;
	}
	CHECK(in && sp_input_is_gzip(in) && lines == 4 && good && !sp_input_failed(in, &err),
	      "input: gzip with two members is decompressed transparently");
	sp_input_close(in);
	/* truncated gzip is an error, not silently shorter data */
	f = fopen(path, "wb");
	fwrite(raw, 1, n - 6, f);
	fclose(f);
	in = sp_input_open(path, &err);
	while (sp_input_line(in, &len))
		;
	CHECK(sp_input_failed(in, &err) && strstr(err.msg, "gzip"), "input: truncated gzip is reported");
	sp_input_close(in);
	unlink(path);
	CHECK(sp_input_open("/nonexistent/x", &err) == NULL && strstr(err.msg, "No such file"), "input: open error message");
	free(data);
}

static int sample_into(struct sp_sink *s, struct sp_profile *p, uint32_t thread, const char *const *frames, int n,
		       double v)
{
	uint32_t node = 0;
	for (int i = 0; i < n; i++)
		node = sp_node_intern(p, node, sp_frame_named(p, frames[i], strlen(frames[i]), SP_KIND_NATIVE));
	struct sp_sample smp = { 0 };
	smp.stack = node;
	smp.thread = thread;
	smp.values[0] = v;
	struct sp_err err;
	return s->sample(s, p, &smp, &err);
}

static char *fold_to_string(struct sp_fold *f)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	struct sp_err err;
	sp_fold_write(f, out, &err);
	fclose(out);
	return buf;
}

static void test_fold(void)
{
	static const char *const one[] = { "samples" };
	struct sp_profile *p = sp_profile_new();
	sp_profile_set_values(p, 1, one);
	struct sp_fold_opts o = { .label = SP_LABEL_PID };
	struct sp_fold *f = sp_fold_new(p, &o);
	uint32_t t = sp_thread_intern(p, 42, 43, sp_str_intern(p, "my prog", 7));
	static const char *const s1[] = { "main", "b" }, *const s2[] = { "main", "a" };
	sample_into(sp_fold_sink(f), p, t, s1, 2, 1);
	sample_into(sp_fold_sink(f), p, t, s2, 2, 2);
	sample_into(sp_fold_sink(f), p, t, s1, 2, 3);
	sample_into(sp_fold_sink(f), p, 0, s1, 2, 5);
	char *out = fold_to_string(f);
	CHECK(!strcmp(out, "main;b 5\nmy_prog-42;main;a 2\nmy_prog-42;main;b 4\n"),
	      "fold: aggregated, comm-pid root, sorted by bytes");
	free(out);

	/* merge a fold of another profile */
	struct sp_profile *q = sp_profile_new();
	sp_profile_set_values(q, 1, one);
	struct sp_fold *g = sp_fold_new(q, &o);
	uint32_t tq = sp_thread_intern(q, 42, 43, sp_str_intern(q, "my prog", 7));
	static const char *const s3[] = { "main", "c" };
	sample_into(sp_fold_sink(g), q, tq, s1, 2, 10);
	sample_into(sp_fold_sink(g), q, tq, s3, 2, 1);
	sp_fold_merge(f, g);
	out = fold_to_string(f);
	CHECK(!strcmp(out, "main;b 5\nmy_prog-42;main;a 2\nmy_prog-42;main;b 14\nmy_prog-42;main;c 1\n"),
	      "fold: merging another profile's fold remaps frames");
	free(out);
	CHECK(sp_fold_samples(f) == 6, "fold: sample count");
	sp_fold_free(g);
	sp_profile_free(q);
	sp_fold_free(f);

	/* adopted folds of other profiles are written as if merged: a stack
	 * in several folds, and text made equal in one, are one line */
	static const char *const s4[] = { "main", "b2" }, *const s5[] = { "main" };
	struct sp_profile *pa = sp_profile_new();
	sp_profile_set_values(pa, 1, one);
	f = sp_fold_new(pa, &o);
	t = sp_thread_intern(pa, 42, 43, sp_str_intern(pa, "my prog", 7));
	sample_into(sp_fold_sink(f), pa, t, s1, 2, 1);
	sample_into(sp_fold_sink(f), pa, t, s4, 2, 7);
	struct sp_profile *qs[3];
	for (int i = 0; i < 3; i++) {
		qs[i] = sp_profile_new();
		sp_profile_set_values(qs[i], 1, one);
		struct sp_fold *a = sp_fold_new(qs[i], &o);
		uint32_t ta = sp_thread_intern(qs[i], 42, 43, sp_str_intern(qs[i], "my prog", 7));
		sample_into(sp_fold_sink(a), qs[i], ta, i == 1 ? s3 : s1, 2, 10 * (i + 1));
		sample_into(sp_fold_sink(a), qs[i], ta, s5, 1, 100);
		if (i == 2) { /* "main" of another module: another frame, the same text */
			struct sp_frame fm = { 0 };
			fm.name = sp_str_intern(qs[i], "main", 4);
			fm.module = sp_str_intern(qs[i], "/lib/x.so", 9);
			struct sp_sample sm = { 0 };
			struct sp_err e2;
			sm.stack = sp_node_intern(qs[i], 0, sp_frame_intern(qs[i], &fm));
			sm.thread = ta;
			sm.values[0] = 1000;
			sp_fold_sink(a)->sample(sp_fold_sink(a), qs[i], &sm, &e2);
		}
		sp_fold_adopt(f, a, qs[i]);
	}
	out = fold_to_string(f);
	CHECK(out && !strcmp(out, "my_prog-42;main 1300\nmy_prog-42;main;b 41\nmy_prog-42;main;b2 7\nmy_prog-42;main;c 20\n"),
	      "fold: adopted folds are merged by text when written");
	free(out);
	CHECK(sp_fold_samples(f) == 9, "fold: adopted folds' samples are counted");
	sp_fold_free(f);
	sp_profile_free(pa);

	/* same name from two modules folds into one line */
	struct sp_fold *h = sp_fold_new(p, &(struct sp_fold_opts){ 0 });
	struct sp_frame fa = { 0 }, fb = { 0 };
	fa.name = fb.name = sp_str_intern(p, "memcpy", 6);
	fa.module = sp_str_intern(p, "/lib/a.so", 9);
	fb.module = sp_str_intern(p, "/lib/b.so", 9);
	struct sp_sample smp = { 0 };
	struct sp_err err;
	smp.values[0] = 1;
	smp.stack = sp_node_intern(p, 0, sp_frame_intern(p, &fa));
	sp_fold_sink(h)->sample(sp_fold_sink(h), p, &smp, &err);
	smp.stack = sp_node_intern(p, 0, sp_frame_intern(p, &fb));
	sp_fold_sink(h)->sample(sp_fold_sink(h), p, &smp, &err);
	out = fold_to_string(h);
	CHECK(!strcmp(out, "memcpy 2\n"), "fold: equal text from different modules merges");
	free(out);
	sp_fold_free(h);
	sp_profile_free(p);
}

/* sp_find_nl and sp_find_blank against a byte loop, on every start and end
 * of random text of newlines and letters (16-byte steps, their carries). */
static void test_scan(void)
{
	char t[200];
	unsigned x = 12345;
	int bad_nl = 0, bad_blank = 0;
	for (int round = 0; round < 50; round++) {
		for (size_t i = 0; i < sizeof t; i++) {
			x = x * 1103515245u + 12345u;
			t[i] = (x >> 16) % (round % 5 + 2) ? 'a' : '\n';
		}
		for (size_t a = 0; a < 40; a++)
			for (size_t b = a; b <= sizeof t; b += 7) {
				const char *want = NULL, *wantb = NULL;
				for (size_t i = a; i < b && !want; i++)
					if (t[i] == '\n')
						want = t + i;
				for (size_t i = a; i + 1 < b && !wantb; i++)
					if (t[i] == '\n' && t[i + 1] == '\n')
						wantb = t + i;
				bad_nl += sp_find_nl(t + a, t + b) != want;
				bad_blank += sp_find_blank(t + a, t + b) != wantb;
			}
	}
	CHECK(!bad_nl, "scan: sp_find_nl finds the first newline");
	CHECK(!bad_blank, "scan: sp_find_blank finds the first blank line");
}

struct kv {
	int k, v;
};
#define KV_LESS(a, b) ((a)->k < (b)->k)
SP_RUNSORT(kv_runsort, struct kv, KV_LESS)

/* SP_RUNSORT: stable; in-order data comes back as it is, without a pass */
static void test_runsort(void)
{
	struct kv a[200], tmp[200];
	for (int i = 0; i < 200; i++)
		a[i] = (struct kv){ (i * 37) % 11, i }; /* 11 ascending runs, keys repeated */
	struct kv *r = kv_runsort(a, 200, tmp);
	int sorted = 1, stable = 1;
	for (int i = 1; i < 200; i++) {
		sorted &= r[i - 1].k <= r[i].k;
		stable &= r[i - 1].k < r[i].k || r[i - 1].v < r[i].v;
	}
	CHECK(sorted && stable, "runsort: runs merged in order, equal keys in their first order");
	for (int i = 0; i < 200; i++)
		a[i] = (struct kv){ i / 3, i };
	memset(tmp, 0, sizeof tmp);
	r = kv_runsort(a, 200, tmp);
	CHECK(r == a && tmp[0].v == 0 && tmp[199].v == 0 && a[199].v == 199, "runsort: data in order is returned in place, tmp untouched");
	struct kv one[2] = { { 2, 0 }, { 1, 1 } };
	r = kv_runsort(one, 2, tmp);
	CHECK(r[0].k == 1 && r[1].k == 2, "runsort: two out of order");
}

int main(void)
{
	test_runsort();
	test_scan();
	test_buf();
	test_intern();
	test_columns();
	test_input();
	test_fold();
	return failed;
}
