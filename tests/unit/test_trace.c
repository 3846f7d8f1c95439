/* Unit tests of the trace additions: TRACE records with a call id, flags
 * and values through the stream writer and reader (and a reserved flag
 * refused), and lib/latency's pairing and percentiles. */
#include <stdio.h>
#include <stdlib.h>

#include "latency.h"
#include "stream.h"

#include "unit.h"

struct got {
	struct sp_sink sink;
	struct sp_trace t[8];
	char names[8][SP_TRACE_VALUES][16];
	int n;
};

static int g_trace(struct sp_sink *s, struct sp_profile *p, const struct sp_trace *t, struct sp_err *e)
{
	struct got *g = (struct got *)s;
	if (g->n < 8) {
		g->t[g->n] = *t;
		for (uint32_t i = 0; i < t->nvalues; i++)
			snprintf(g->names[g->n][i], sizeof g->names[0][0], "%s", sp_str(p, t->vname[i]));
		g->n++;
	}
	return 0;
}

static char *write_traces(size_t *len, uint32_t bad_flags)
{
	char *buf = NULL;
	FILE *out = open_memstream(&buf, len);
	struct sp_profile *p = sp_profile_new();
	static const char *const v[] = { "samples" };
	sp_profile_set_values(p, 1, v);
	struct sp_stream_writer *w = sp_stream_writer_new(out, p);
	struct sp_sink *s = sp_stream_writer_sink(w);
	struct sp_err err;
	uint32_t f = sp_frame_named(p, "handle", 6, SP_KIND_NATIVE);
	uint32_t th = sp_thread_intern(p, 10, 11, sp_str_intern(p, "srv", 3));
	struct sp_trace a = { .kind = SP_TRACE_ENTRY, .frame = f, .thread = th, .time = 1000, .call = 7, .nvalues = 2 };
	a.vname[0] = sp_str_intern(p, "arg2", 4);
	a.value[0] = -5;
	a.vname[1] = sp_str_intern(p, "arg1", 4);
	a.value[1] = INT64_MAX;
	s->trace(s, p, &a, &err);
	struct sp_trace b = { .kind = SP_TRACE_EXIT, .frame = f, .thread = th, .time = 3500, .call = 7,
			      .flags = bad_flags ? bad_flags : SP_TRACE_ABANDONED };
	s->trace(s, p, &b, &err);
	struct sp_trace c = { .kind = SP_TRACE_ENTRY, .frame = f, .thread = th, .time = 4000 }; /* old style */
	s->trace(s, p, &c, &err);
	sp_stream_writer_finish(w, &err);
	sp_stream_writer_free(w);
	sp_profile_free(p);
	fclose(out);
	return buf;
}

static int read_traces(const char *buf, size_t len, struct got *g, struct sp_err *err)
{
	memset(g, 0, sizeof *g);
	g->sink.trace = g_trace;
	struct sp_input *in = sp_input_mem(buf, len, "mem");
	struct sp_profile *p = sp_profile_new();
	int rc = sp_stream_read(in, p, &g->sink, err);
	sp_profile_free(p);
	sp_input_close(in);
	return rc;
}

/* A latency report of calls of f with durations d[] (ns), one abandoned. */
static void latency(void)
{
	struct sp_profile *p = sp_profile_new();
	uint32_t f = sp_frame_named(p, "f", 1, SP_KIND_NATIVE);
	uint32_t th = sp_thread_intern(p, 1, 1, sp_str_intern(p, "t", 1));
	struct sp_latency *l = sp_latency_new(NULL);
	uint64_t t = 0;
	for (uint64_t i = 1; i <= 100; i++) {
		/* nested: an outer call 1000+i around the call i*1000 */
		struct sp_trace o = { .kind = SP_TRACE_ENTRY, .frame = f, .thread = th, .time = t, .call = 2 * i };
		struct sp_trace e = { .kind = SP_TRACE_ENTRY, .frame = f, .thread = th, .time = t + 1, .call = 2 * i + 1 };
		struct sp_trace x = { .kind = SP_TRACE_EXIT, .frame = f, .thread = th, .time = t + 1 + i * 1000,
				      .call = 2 * i + 1 };
		struct sp_trace ox = { .kind = SP_TRACE_EXIT, .frame = f, .thread = th, .time = t + 2 + i * 1000,
				       .call = 2 * i, .flags = i == 50 ? SP_TRACE_ABANDONED : 0 };
		sp_latency_trace(l, p, &o);
		sp_latency_trace(l, p, &e);
		sp_latency_trace(l, p, &x);
		sp_latency_trace(l, p, &ox);
		t += 1000000;
	}
	char *buf = NULL;
	size_t len;
	FILE *out = open_memstream(&buf, &len);
	struct sp_err err;
	int rc = sp_latency_report(l, p, 1, out, &err);
	fclose(out);
	/* 100 inner calls of i*1000 ns and 99 outer calls of i*1000+2 ns (the
	 * 50th abandoned): 199 calls; sorted, index 99 (p50) is the inner
	 * call of i = 51 */
	if (getenv("SP_TEST_VERBOSE"))
		fputs(buf, stderr);
	CHECK(rc == 0 && strstr(buf, "\"probe\": \"f\", \"kind\": \"call\", \"count\": 199, \"min_us\": 1.000,") &&
		      strstr(buf, "\"max_us\": 100.002"),
	      "latency: nested calls paired by call id, the abandoned one left out");
	CHECK(rc == 0 && strstr(buf, "\"p50_us\": 51.000"), "latency: p50 at index n*50/100 of the sorted durations");
	free(buf);
	sp_latency_free(l);
	sp_profile_free(p);
}

int main(void)
{
	size_t len;
	struct got g;
	struct sp_err err;
	char *buf = write_traces(&len, 0);
	int rc = read_traces(buf, len, &g, &err);
	CHECK(rc == 0 && g.n == 3, "three trace events round trip");
	CHECK(g.t[0].call == 7 && g.t[0].nvalues == 2 && !strcmp(g.names[0][0], "arg2") && g.t[0].value[0] == -5 &&
		      !strcmp(g.names[0][1], "arg1") && g.t[0].value[1] == INT64_MAX,
	      "an entry keeps its call id and values (negative, INT64_MAX)");
	CHECK(g.t[1].call == 7 && g.t[1].flags == SP_TRACE_ABANDONED && g.t[1].time == 3500,
	      "an exit keeps its call id and the abandoned flag");
	CHECK(g.t[2].call == 0 && g.t[2].flags == 0 && g.t[2].nvalues == 0 && g.t[2].time == 4000,
	      "a trace without the appended fields reads as before");
	free(buf);
	buf = write_traces(&len, 4);
	rc = read_traces(buf, len, &g, &err);
	CHECK(rc < 0 && strstr(err.msg, "reserved trace flags 0x4"), "a reserved trace flag is rejected");
	free(buf);
	latency();
	return failed;
}
