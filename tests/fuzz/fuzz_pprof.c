/* libFuzzer target: the pprof reader must never crash, hang or leak on any
 * bytes.  What it accepts is folded, written again as pprof, and that must
 * read back: a profile the reader takes is one the writer can reproduce.
 * Seeds (corpus/fuzz_pprof): profiles written by Go's runtime/pprof (CPU,
 * heap) and by pfold -O pprof, uncompressed so mutations reach the
 * protobuf. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fold.h"
#include "pprof.h"

struct tee {
	struct sp_sink sink;
	struct sp_sink *a, *b;
	uint64_t samples;
};

static int tee_sample(struct sp_sink *s, struct sp_profile *p, const struct sp_sample *smp, struct sp_err *err)
{
	struct tee *t = (struct tee *)s;
	t->samples++;
	if (t->a->sample(t->a, p, smp, err) < 0)
		return -1;
	return t->b->sample(t->b, p, smp, err);
}

struct count {
	struct sp_sink sink;
	uint64_t samples;
};

static int c_sample(struct sp_sink *s, struct sp_profile *p, const struct sp_sample *smp, struct sp_err *err)
{
	((struct count *)s)->samples++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sp_input *in = sp_input_mem(data, size, "fuzz");
	struct sp_profile *p = sp_profile_new();
	struct sp_fold_opts fo = { .label = SP_LABEL_TID, .annotate_kernel = 1, .annotate_jit = 1 };
	struct sp_fold *f = sp_fold_new(p, &fo);
	char *re = NULL;
	size_t relen = 0;
	FILE *mem = open_memstream(&re, &relen);
	if (!mem)
		abort();
	struct sp_pprof_writer *w = sp_pprof_writer_new(mem, p);
	struct tee t = { { tee_sample, NULL, NULL, NULL }, sp_fold_sink(f), sp_pprof_writer_sink(w), 0 };
	struct sp_read_opts o = { .value = (size & 1) ? "0" : NULL };
	struct sp_err err;
	if (sp_pprof_read(in, p, &t.sink, &o, &err) == 0) {
		FILE *out = fopen("/dev/null", "w");
		if (out) {
			sp_fold_write(f, out, &err);
			fclose(out);
		}
		if (sp_pprof_writer_finish(w, &err) < 0 || fflush(mem) != 0)
			abort();
		struct sp_input *in2 = sp_input_mem(re, relen, "rewritten");
		struct sp_profile *p2 = sp_profile_new();
		struct count c = { { c_sample, NULL, NULL, NULL }, 0 };
		if (sp_pprof_read(in2, p2, &c.sink, NULL, &err) != 0 || (t.samples && !c.samples)) {
			fprintf(stderr, "rewritten pprof does not read back: %s %s\n", err.where, err.msg);
			abort();
		}
		sp_profile_free(p2);
		sp_input_close(in2);
	}
	sp_pprof_writer_free(w);
	fclose(mem);
	free(re);
	sp_fold_free(f);
	sp_profile_free(p);
	sp_input_close(in);
	return 0;
}
