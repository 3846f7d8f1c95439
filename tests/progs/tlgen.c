/* tlgen — writes binary streams with trace events for the ptimeline tests
 * and benchmark: what no short recording here produces.
 *
 *   tlgen bench N   N calls of handle(arg1) -> ret on 4 threads ("w0".."w3",
 *                   pid 100), 10 us apart, call k 5 + k % 7 us long, with
 *                   2 samples inside (8-frame stacks under main;serve;handle).
 *   tlgen bad       one thread whose name and a function's name hold a
 *                   quote, a backslash and control bytes; nested calls
 *                   (outer 0..100 us, inner 10..30 us); an abandoned call;
 *                   a point hit with a variable; an exit without its entry;
 *                   a call without its exit; 3 samples; trace-lost metadata.
 *   tlgen samples   6 samples on 2 threads, no trace event. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stream.h"

static struct sp_profile *p;
static struct sp_sink *s;
static struct sp_err err;

static void die(void)
{
	fprintf(stderr, "tlgen: %s\n", err.msg);
	exit(2);
}

static uint32_t fr(const char *name) { return sp_frame_named(p, name, strlen(name), SP_KIND_NATIVE); }

static void trace(uint32_t kind, uint32_t frame, uint32_t th, uint64_t t, uint64_t call, uint32_t flags,
		  const char *vn, int64_t v)
{
	struct sp_trace tr = { .kind = kind, .frame = frame, .thread = th, .time = t, .call = call, .flags = flags };
	if (vn) {
		tr.nvalues = 1;
		tr.vname[0] = sp_str_intern(p, vn, strlen(vn));
		tr.value[0] = v;
	}
	if (s->trace(s, p, &tr, &err) < 0)
		die();
}

static void sample(uint32_t node, uint32_t th, uint64_t t)
{
	struct sp_sample smp = { .stack = node, .thread = th, .time = t, .values = { 1 } };
	if (s->sample(s, p, &smp, &err) < 0)
		die();
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	p = sp_profile_new();
	static const char *const v[] = { "samples" };
	sp_profile_set_values(p, 1, v);
	sp_meta_add(p, "event", "cpu-clock");
	if (!strcmp(argv[1], "bad"))
		sp_meta_add(p, "trace-lost", "inner 7");
	struct sp_stream_writer *w = sp_stream_writer_new(stdout, p);
	s = sp_stream_writer_sink(w);
	uint64_t t0 = 1000000000;
	if (!strcmp(argv[1], "bench") && argc > 2) {
		long n = atol(argv[2]);
		uint32_t th[4], leaf[4];
		uint32_t fh = fr("handle");
		for (int i = 0; i < 4; i++) {
			char name[8];
			snprintf(name, sizeof name, "w%d", i);
			th[i] = sp_thread_intern(p, 100, 101 + i, sp_str_intern(p, name, strlen(name)));
			uint32_t nd = sp_node_intern(p, sp_node_intern(p, sp_node_intern(p, 0, fr("main")), fr("serve")), fh);
			for (int d = 0; d < 5; d++) {
				char f[16];
				snprintf(f, sizeof f, "step%d_%d", i, d);
				nd = sp_node_intern(p, nd, fr(f));
			}
			leaf[i] = nd;
		}
		for (long k = 0; k < n; k++) {
			uint64_t t = t0 + (uint64_t)k * 10000;
			int i = (int)(k % 4);
			trace(SP_TRACE_ENTRY, fh, th[i], t, (uint64_t)k + 1, 0, "arg1", k);
			sample(leaf[i], th[i], t + 1000);
			sample(leaf[i], th[i], t + 3000);
			trace(SP_TRACE_EXIT, fh, th[i], t + 5000 + (uint64_t)(k % 7) * 1000, (uint64_t)k + 1, 0, "ret", 2 * k);
		}
	} else if (!strcmp(argv[1], "bad")) {
		static const char odd[] = "q\"uo\\te\ttab\001ctl\nnl";
		uint32_t th = sp_thread_intern(p, 7, 7, sp_str_intern(p, odd, sizeof odd - 1));
		uint32_t th2 = sp_thread_intern(p, 7, 8, sp_str_intern(p, "other", 5));
		uint32_t fo = fr("outer"), fi = fr("inner"), fodd = fr("we\"ird\\name\x02"), fl = fr("never_returns");
		uint32_t fa = fr("jumped"), fp = fr("calls.c:42"), fb = fr("begun");
		uint32_t nm = sp_node_intern(p, 0, fr("main"));
		uint32_t no = sp_node_intern(p, nm, fo), ni = sp_node_intern(p, no, fi);
		trace(SP_TRACE_EXIT, fb, th2, t0 + 5000, 0, 0, NULL, 0);          /* no entry */
		trace(SP_TRACE_ENTRY, fo, th, t0, 1, 0, "arg1", 5);
		sample(no, th, t0 + 5000);
		trace(SP_TRACE_ENTRY, fi, th, t0 + 10000, 2, 0, NULL, 0);
		sample(ni, th, t0 + 20000);
		trace(SP_TRACE_ENTRY, fp, th, t0 + 25000, 0, SP_TRACE_POINT, "x", -3);
		trace(SP_TRACE_EXIT, fi, th, t0 + 30000, 2, 0, "ret", 9);
		trace(SP_TRACE_ENTRY, fodd, th, t0 + 40000, 3, 0, NULL, 0);
		trace(SP_TRACE_EXIT, fodd, th, t0 + 45000, 3, 0, NULL, 0);
		trace(SP_TRACE_ENTRY, fa, th, t0 + 50000, 4, 0, NULL, 0);
		trace(SP_TRACE_EXIT, fa, th, t0 + 60000, 4, SP_TRACE_ABANDONED, NULL, 0);
		trace(SP_TRACE_EXIT, fo, th, t0 + 100000, 1, 0, "ret", 0);
		trace(SP_TRACE_ENTRY, fl, th2, t0 + 110000, 5, 0, NULL, 0);      /* no exit */
		sample(sp_node_intern(p, nm, fl), th2, t0 + 150000);
	} else if (!strcmp(argv[1], "samples")) {
		uint32_t a = sp_thread_intern(p, 3, 3, sp_str_intern(p, "a", 1));
		uint32_t b = sp_thread_intern(p, 3, 4, sp_str_intern(p, "b", 1));
		uint32_t nd = sp_node_intern(p, sp_node_intern(p, 0, fr("main")), fr("work"));
		for (int k = 0; k < 6; k++)
			sample(nd, k % 2 ? b : a, t0 + (uint64_t)k * 1000000);
	} else {
		return 2;
	}
	if (sp_stream_writer_finish(w, &err) < 0)
		die();
	sp_stream_writer_free(w);
	sp_profile_free(p);
	return 0;
}
