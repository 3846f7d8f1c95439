/* Unit tests of the pprof writer and reader (formats/pprof.c): a profile
 * written and read back, hand-made messages the reader must take or
 * refuse, labels it cannot keep.  One line per check. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "input.h"
#include "pprof.h"

#include "unit.h"

/* The node of a stack written "root;...;leaf", frames of module mod. */
static uint32_t stack_of(struct sp_profile *p, const char *path, const char *mod)
{
	uint32_t node = 0;
	while (*path) {
		size_t n = strcspn(path, ";");
		struct sp_frame f;
		memset(&f, 0, sizeof f);
		f.name = sp_str_intern(p, path, n);
		f.kind = SP_KIND_NATIVE;
		f.module = sp_str_intern(p, mod, strlen(mod));
		node = sp_node_intern(p, node, sp_frame_intern(p, &f));
		path += n + (path[n] == ';');
	}
	return node;
}

/* A sink that writes each sample as "thread|stack|v0,v1" lines. */
struct collect {
	struct sp_sink sink; /* first: the callback casts back */
	struct sp_buf text;
};

static int collect_sample(struct sp_sink *s, struct sp_profile *p, const struct sp_sample *smp, struct sp_err *err)
{
	struct collect *c = (struct collect *)s;
	if (smp->thread) {
		const struct sp_thread *t = sp_thread_get(p, smp->thread);
		sp_buf_addf(&c->text, "%s-%lld/%lld", sp_str(p, t->name), (long long)t->pid, (long long)t->tid);
	}
	sp_buf_addc(&c->text, '|');
	uint32_t *fr = NULL;
	size_t cap = 0;
	uint32_t d = sp_node_frames(p, smp->stack, &fr, &cap);
	for (uint32_t i = 0; i < d; i++) {
		const struct sp_frame *f = sp_frame_get(p, fr[i]);
		sp_buf_addf(&c->text, "%s%s%s", i ? ";" : "", sp_str(p, f->name),
			    f->kind == SP_KIND_SYNTHETIC ? "[tag]" : "");
	}
	free(fr);
	for (int i = 0; i < sp_profile_nvalues(p); i++)
		sp_buf_addf(&c->text, "%c%g", i ? ',' : '|', smp->values[i]);
	sp_buf_addc(&c->text, '\n');
	return 0;
}

/* Reads n bytes of pprof into a new profile; *out gets the collected
 * samples, *pp the profile (caller frees both). */
static int read_pprof(const void *bytes, size_t n, struct sp_read_opts *o, struct sp_profile **pp, char **out,
		      struct sp_err *err)
{
	struct sp_profile *p = sp_profile_new();
	struct collect c = { .sink = { .sample = collect_sample }, .text = SP_BUF_INIT };
	struct sp_input *in = sp_input_mem(bytes, n, "test.pb");
	int rc = sp_pprof_read(in, p, &c.sink, o, err);
	sp_input_close(in);
	*out = sp_xstrndup(sp_buf_cstr(&c.text), c.text.len);
	sp_buf_release(&c.text);
	*pp = p;
	return rc;
}

static void test_round_trip(void)
{
	static const char *const cols[] = { "samples", "period" };
	struct sp_profile *p = sp_profile_new();
	sp_profile_set_values(p, 2, cols);
	sp_meta_add(p, "host", "box1");
	uint32_t t = sp_thread_intern(p, 40, 41, sp_str_intern(p, "worker", 6));
	struct sp_sample smp;
	memset(&smp, 0, sizeof smp);
	smp.time = SP_NO_TIME;
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	struct sp_pprof_writer *w = sp_pprof_writer_new(out, p);
	struct sp_sink *s = sp_pprof_writer_sink(w);
	struct sp_err err;
	struct { uint32_t thread; const char *path; double v0, v1; } in[] = {
		{ t, "main;a;b", 1, 1000 }, { t, "main;a", 2, 2000 }, { 0, "main;a;b", 3, 3000 }, { t, "main;a;b", 4, 4000 },
	};
	for (size_t i = 0; i < sizeof in / sizeof in[0]; i++) {
		smp.thread = in[i].thread;
		smp.stack = stack_of(p, in[i].path, "/usr/bin/app");
		smp.values[0] = in[i].v0;
		smp.values[1] = in[i].v1;
		s->sample(s, p, &smp, &err);
	}
	/* a pmerge --tag root frame */
	smp.thread = 0;
	smp.stack = sp_node_intern(p, 0, sp_frame_named(p, "host1", 5, SP_KIND_SYNTHETIC));
	smp.stack = sp_node_intern(p, smp.stack, sp_frame_named(p, "main", 4, SP_KIND_NATIVE));
	smp.values[0] = 7, smp.values[1] = 7000;
	s->sample(s, p, &smp, &err);
	int rc = sp_pprof_writer_finish(w, &err);
	fclose(out);
	CHECK(rc == 0 && len > 18 && (unsigned char)buf[0] == 0x1f && (unsigned char)buf[1] == 0x8b,
	      "pprof: the writer writes a gzip stream (%zu bytes)", len);

	struct sp_profile *q;
	char *got;
	rc = read_pprof(buf, len, NULL, &q, &got, &err);
	const char *want = "worker-40/41|main;a;b|5,5000\n"
			   "worker-40/41|main;a|2,2000\n"
			   "|main;a;b|3,3000\n"
			   "|host1[tag];main|7,7000\n";
	CHECK(rc == 0 && !strcmp(got, want), "pprof: read back, samples are summed by (thread, stack), threads and the tag kept");
	if (strcmp(got, want))
		printf("#   got:\n%s", got);
	CHECK(sp_profile_nvalues(q) == 2 && !strcmp(sp_profile_value_name(q, 0), "samples") &&
		      !strcmp(sp_profile_value_name(q, 1), "period"),
	      "pprof: the value columns come back as samples, period");
	const char *host = sp_meta_find(q, "host");
	CHECK(host && !strcmp(host, "box1"), "pprof: metadata round-trips as comments (%s)", host ? host : "none");
	free(got);
	sp_profile_free(q);

	struct sp_read_opts o;
	memset(&o, 0, sizeof o);
	o.value = "period";
	rc = read_pprof(buf, len, &o, &q, &got, &err);
	CHECK(rc == 0 && sp_profile_nvalues(q) == 1 && strstr(got, "|main;a|2000\n"), "pprof: --value picks one column by name");
	free(got);
	sp_profile_free(q);
	o.value = "bogus";
	rc = read_pprof(buf, len, &o, &q, &got, &err);
	CHECK(rc < 0 && strstr(err.msg, "no sample type 'bogus'") && strstr(err.msg, "0=samples/count"),
	      "pprof: an unknown --value is an error listing the types (%s)", err.msg);
	free(got);
	sp_profile_free(q);
	sp_pprof_writer_free(w);
	sp_profile_free(p);
	free(buf);
}

/* Protobuf by hand: a Profile with sample type samples/count and the
 * given sample message bytes. */
static size_t profile_with(unsigned char *b, const unsigned char *sample, size_t n)
{
	static const unsigned char head[] = {
		0x0a, 0x04, 0x08, 0x01, 0x10, 0x02,                   /* sample_type { type 1, unit 2 } */
		0x32, 0x00,                                           /* string_table: "" */
		0x32, 0x07, 's', 'a', 'm', 'p', 'l', 'e', 's',        /* "samples" */
		0x32, 0x05, 'c', 'o', 'u', 'n', 't',                  /* "count" */
		0x32, 0x04, 's', 'p', 'a', 'n',                       /* "span" */
		0x32, 0x01, 'x',                                      /* "x" */
	};
	memcpy(b, head, sizeof head);
	size_t len = sizeof head;
	b[len++] = 0x12; /* sample */
	b[len++] = (unsigned char)n;
	memcpy(b + len, sample, n);
	return len + n;
}

static void warn_into(void *ctx, const struct sp_err *e)
{
	snprintf(ctx, 256, "%.200s", e->msg);
}

static void test_hand_made(void)
{
	unsigned char b[128];
	struct sp_profile *q;
	char *got;
	struct sp_err err;
	/* value 5, no location: an empty stack */
	static const unsigned char ok[] = { 0x10, 0x05 };
	int rc = read_pprof(b, profile_with(b, ok, sizeof ok), NULL, &q, &got, &err);
	CHECK(rc == 0 && !strcmp(got, "||5\n"), "pprof: a hand-made profile reads, its sample with an empty stack (%s)",
	      rc ? err.msg : "read");
	free(got);
	sp_profile_free(q);

	/* the value first, then a location_id list cut inside a varint */
	static const unsigned char cut[] = { 0x10, 0x05, 0x0a, 0x01, 0x80 };
	rc = read_pprof(b, profile_with(b, cut, sizeof cut), NULL, &q, &got, &err);
	CHECK(rc < 0 && strstr(err.msg, "truncated varint in Sample location_id"),
	      "pprof: a cut location_id list is an error, not a sample (%s)", rc < 0 ? err.msg : "read");
	free(got);
	sp_profile_free(q);

	/* two values for one sample type */
	static const unsigned char two[] = { 0x10, 0x05, 0x10, 0x06 };
	rc = read_pprof(b, profile_with(b, two, sizeof two), NULL, &q, &got, &err);
	CHECK(rc < 0 && strstr(err.msg, "sample has 2 values, the profile 1 sample types"), "pprof: a value count mismatch is an error (%s)",
	      err.msg);
	free(got);
	sp_profile_free(q);

	/* a label "span" = "x": not kept, and said */
	static const unsigned char lab[] = { 0x10, 0x05, 0x1a, 0x04, 0x08, 0x03, 0x10, 0x04 };
	char warned[256] = "";
	struct sp_read_opts o;
	memset(&o, 0, sizeof o);
	o.warn = warn_into;
	o.warn_ctx = warned;
	rc = read_pprof(b, profile_with(b, lab, sizeof lab), &o, &q, &got, &err);
	CHECK(rc == 0 && !strcmp(got, "||5\n") && strstr(warned, "pprof labels not kept") && strstr(warned, ": span"),
	      "pprof: a label it cannot keep is named in a warning (%s)", warned);
	free(got);
	sp_profile_free(q);

	/* a string index past the table */
	static const unsigned char badstr[] = { 0x10, 0x05, 0x1a, 0x02, 0x08, 0x09 };
	rc = read_pprof(b, profile_with(b, badstr, sizeof badstr), NULL, &q, &got, &err);
	CHECK(rc < 0 && strstr(err.msg, "Label key"), "pprof: a label key past the string table is an error (%s)", err.msg);
	free(got);
	sp_profile_free(q);
}

int main(void)
{
	test_round_trip();
	test_hand_made();
	return failed;
}
