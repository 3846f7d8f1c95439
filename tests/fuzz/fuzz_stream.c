/* libFuzzer target: the binary stream reader must never crash, hang or leak
 * on any bytes.  Whatever it accepts is touched (every frame of every stack,
 * threads, strings), folded, and written again as a stream, which must read
 * back with the same number of samples and trace events: a stream the
 * reader accepts is one the writer can reproduce. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fold.h"
#include "stream.h"

struct tee {
	struct sp_sink sink;
	struct sp_sink *fold, *out;
	uint32_t *frames;
	size_t cap;
	uint64_t samples, traces, touched;
};

static void touch_frame(struct tee *t, struct sp_profile *p, uint32_t id)
{
	const struct sp_frame *f = sp_frame_get(p, id);
	t->touched += sp_str_len(p, f->name) + sp_str_len(p, f->module) + sp_str_len(p, f->file) + f->line + f->kind;
}

static int tee_sample(struct sp_sink *s, struct sp_profile *p, const struct sp_sample *smp, struct sp_err *err)
{
	struct tee *t = (struct tee *)s;
	uint32_t n = sp_node_frames(p, smp->stack, &t->frames, &t->cap);
	for (uint32_t i = 0; i < n; i++)
		touch_frame(t, p, t->frames[i]);
	t->touched += sp_str_len(p, sp_thread_get(p, smp->thread)->name) + sp_str_len(p, smp->event);
	t->samples++;
	if (t->fold->sample(t->fold, p, smp, err) < 0)
		return -1;
	return t->out->sample(t->out, p, smp, err);
}

static int tee_trace(struct sp_sink *s, struct sp_profile *p, const struct sp_trace *tr, struct sp_err *err)
{
	struct tee *t = (struct tee *)s;
	if (tr->frame)
		touch_frame(t, p, tr->frame);
	t->touched += sp_str_len(p, sp_thread_get(p, tr->thread)->name);
	t->traces++;
	if (t->fold->trace && t->fold->trace(t->fold, p, tr, err) < 0)
		return -1;
	return t->out->trace(t->out, p, tr, err);
}

static int tee_meta(struct sp_sink *s, struct sp_profile *p, struct sp_err *err)
{
	struct tee *t = (struct tee *)s;
	if (t->fold->meta && t->fold->meta(t->fold, p, err) < 0)
		return -1;
	return t->out->meta(t->out, p, err);
}

struct count {
	struct sp_sink sink;
	uint64_t samples, traces;
};

static int c_sample(struct sp_sink *s, struct sp_profile *p, const struct sp_sample *smp, struct sp_err *err)
{
	((struct count *)s)->samples++;
	return 0;
}

static int c_trace(struct sp_sink *s, struct sp_profile *p, const struct sp_trace *tr, struct sp_err *err)
{
	((struct count *)s)->traces++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sp_input *in = sp_input_mem(data, size, "fuzz");
	struct sp_profile *p = sp_profile_new();
	struct sp_fold_opts fo = { .label = SP_LABEL_TID, .annotate_kernel = 1 };
	struct sp_fold *f = sp_fold_new(p, &fo);
	char *re = NULL;
	size_t relen = 0;
	FILE *mem = open_memstream(&re, &relen);
	if (!mem)
		abort();
	struct sp_stream_writer *w = sp_stream_writer_new(mem, p);
	struct tee t = { { tee_sample, tee_trace, tee_meta, NULL }, sp_fold_sink(f), sp_stream_writer_sink(w), NULL, 0,
			 0, 0, 0 };
	struct sp_err err;
	if (sp_stream_read(in, p, &t.sink, &err) == 0) {
		FILE *out = fopen("/dev/null", "w");
		if (out) {
			sp_fold_write(f, out, &err);
			fclose(out);
		}
		if (sp_stream_writer_finish(w, &err) < 0 || fflush(mem) != 0)
			abort();
		struct sp_input *in2 = sp_input_mem(re, relen, "rewritten");
		struct sp_profile *p2 = sp_profile_new();
		struct count c = { { c_sample, c_trace, NULL, NULL }, 0, 0 };
		if (sp_stream_read(in2, p2, &c.sink, &err) != 0 || c.samples != t.samples || c.traces != t.traces) {
			fprintf(stderr, "rewritten stream differs: %s %s\n", err.where, err.msg);
			abort();
		}
		sp_profile_free(p2);
		sp_input_close(in2);
	}
	sp_stream_writer_free(w);
	fclose(mem);
	free(re);
	free(t.frames);
	sp_fold_free(f);
	sp_profile_free(p);
	sp_input_close(in);
	return 0;
}
