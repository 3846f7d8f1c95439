/* t4gen — writes a small synthetic binary stream for the pfilter/pdiff/
 * pmerge tests: what no recording here produces (host metadata, trace
 * events of function entry and exit).
 *
 *   t4gen HOST [trace|notrace]
 *
 * Thread "srv" (pid 10, tid 11) calls handle_request 20 times back to back,
 * a sample every ms: calls 3 and 13 take 10 ms (main;handle_request;
 * work_slow), the others 2 ms (main;handle_request;work_fast).  With
 * "trace", ENTRY/EXIT trace events of handle_request mark every call; with
 * no sample outside handle_request between calls, inference from samples
 * alone sees one long call.  Metadata: host=HOST. */
#include <stdio.h>
#include <string.h>

#include "stream.h"

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	int trace = argc > 2 && !strcmp(argv[2], "trace");
	struct sp_profile *p = sp_profile_new();
	static const char *const v[] = { "samples" };
	sp_profile_set_values(p, 1, v);
	sp_meta_add(p, "host", argv[1]);
	struct sp_stream_writer *w = sp_stream_writer_new(stdout, p);
	struct sp_sink *s = sp_stream_writer_sink(w);
	struct sp_err err;
	uint32_t fmain = sp_frame_named(p, "main", 4, SP_KIND_NATIVE);
	uint32_t fh = sp_frame_named(p, "handle_request", 14, SP_KIND_NATIVE);
	uint32_t fs = sp_frame_named(p, "work_slow", 9, SP_KIND_NATIVE);
	uint32_t ff = sp_frame_named(p, "work_fast", 9, SP_KIND_NATIVE);
	uint32_t nh = sp_node_intern(p, sp_node_intern(p, 0, fmain), fh);
	uint32_t ns = sp_node_intern(p, nh, fs), nf = sp_node_intern(p, nh, ff);
	uint32_t th = sp_thread_intern(p, 10, 11, sp_str_intern(p, "srv", 3));
	uint64_t t = 1000000000;
	for (int k = 0; k < 20; k++) {
		int slow = k == 3 || k == 13;
		struct sp_trace tr = { .kind = SP_TRACE_ENTRY, .frame = fh, .thread = th, .time = t };
		if (trace && s->trace(s, p, &tr, &err) < 0)
			return 1;
		for (int i = 0; i < (slow ? 10 : 2); i++) {
			struct sp_sample smp;
			memset(&smp, 0, sizeof smp);
			smp.stack = slow ? ns : nf;
			smp.thread = th;
			smp.time = t + 500000 + (uint64_t)i * 1000000;
			smp.values[0] = 1;
			if (s->sample(s, p, &smp, &err) < 0)
				return 1;
		}
		t += (slow ? 10 : 2) * 1000000ull;
		tr.kind = SP_TRACE_EXIT;
		tr.time = t;
		if (trace && s->trace(s, p, &tr, &err) < 0)
			return 1;
	}
	if (sp_stream_writer_finish(w, &err) < 0)
		return 1;
	sp_stream_writer_free(w);
	sp_profile_free(p);
	return 0;
}
