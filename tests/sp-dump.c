/* sp-dump — print a binary stream as canonical text, for golden tests and
 * for people: one line per record that matters, stacks root first.
 *
 *   values samples,period
 *   meta command=perf record -g
 *   thread 1234/1240 "worker"
 *   sample t=1000 thread=1234/1240 event=cpu-clock values=1,1001001 stack=main;work
 *   trace entry t=1200 thread=1234/1240 frame=handle_request
 *
 * Frames print as NAME, with [kind module file:line @addr] when known.
 * Exit status: 0, 2 on error ("sp-dump: FILE: offset N: what"). */
#include <inttypes.h>
#include <stdio.h>

#include "cmd.h"
#include "format.h"
#include "stream.h"

static void frame(struct sp_profile *p, uint32_t id, struct sp_buf *b)
{
	const struct sp_frame *f = sp_frame_get(p, id);
	sp_buf_adds(b, sp_str(p, f->name));
	if (f->kind || f->module || f->file || f->addr) {
		sp_buf_addf(b, " [%s", sp_kind_name(f->kind));
		if (f->module)
			sp_buf_addf(b, " %s", sp_str(p, f->module));
		if (f->file)
			sp_buf_addf(b, " %s:%u", sp_str(p, f->file), f->line);
		if (f->addr)
			sp_buf_addf(b, " @%#" PRIx64, f->addr);
		sp_buf_addc(b, ']');
	}
}

static void thread(struct sp_profile *p, uint32_t id, struct sp_buf *b)
{
	const struct sp_thread *t = sp_thread_get(p, id);
	sp_buf_addf(b, "%" PRId64 "/%" PRId64 " \"%s\"", t->pid, t->tid, sp_str(p, t->name));
}

struct dump {
	struct sp_sink sink;
	struct sp_buf b;
	uint32_t *frames;
	size_t cap;
	size_t meta_seen;
	int header;
};

static void header(struct dump *d, struct sp_profile *p)
{
	if (d->header)
		return;
	d->header = 1;
	printf("values ");
	for (int i = 0; i < sp_profile_nvalues(p); i++)
		printf("%s%s", i ? "," : "", sp_profile_value_name(p, i));
	printf("\n");
	if (sp_profile_nvalues(p)) {
		printf("units ");
		for (int i = 0; i < sp_profile_nvalues(p); i++)
			printf("%s%s", i ? "," : "", sp_value_unit(p, i, 0));
		printf("\n");
	}
}

static int on_meta(struct sp_sink *s, struct sp_profile *p, struct sp_err *err)
{
	struct dump *d = (struct dump *)s;
	header(d, p);
	for (; d->meta_seen < sp_meta_count(p); d->meta_seen++) {
		const struct sp_meta *m = sp_meta_get(p, d->meta_seen);
		printf("meta %s=%s\n", sp_str(p, m->key), sp_str(p, m->value));
	}
	return 0;
}

static int on_sample(struct sp_sink *s, struct sp_profile *p, const struct sp_sample *smp, struct sp_err *err)
{
	struct dump *d = (struct dump *)s;
	header(d, p);
	sp_buf_reset(&d->b);
	sp_buf_adds(&d->b, "sample");
	if (smp->time != SP_NO_TIME)
		sp_buf_addf(&d->b, " t=%" PRIu64, smp->time);
	if (smp->thread) {
		sp_buf_adds(&d->b, " thread=");
		thread(p, smp->thread, &d->b);
	}
	if (smp->event)
		sp_buf_addf(&d->b, " event=%s", sp_str(p, smp->event));
	sp_buf_adds(&d->b, " values=");
	for (int i = 0; i < sp_profile_nvalues(p); i++) {
		if (i)
			sp_buf_addc(&d->b, ',');
		sp_buf_addnum(&d->b, smp->values[i]);
	}
	sp_buf_adds(&d->b, " stack=");
	uint32_t n = sp_node_frames(p, smp->stack, &d->frames, &d->cap);
	for (uint32_t i = 0; i < n; i++) {
		if (i)
			sp_buf_addc(&d->b, ';');
		frame(p, d->frames[i], &d->b);
	}
	printf("%s\n", sp_buf_cstr(&d->b));
	return 0;
}

static int on_trace(struct sp_sink *s, struct sp_profile *p, const struct sp_trace *t, struct sp_err *err)
{
	struct dump *d = (struct dump *)s;
	header(d, p);
	sp_buf_reset(&d->b);
	sp_buf_addf(&d->b, "trace %s t=%" PRIu64 " thread=", t->kind == SP_TRACE_ENTRY ? "entry" : "exit", t->time);
	thread(p, t->thread, &d->b);
	sp_buf_adds(&d->b, " frame=");
	frame(p, t->frame, &d->b);
	if (t->call)
		sp_buf_addf(&d->b, " call=%" PRIu64, t->call);
	if (t->flags & SP_TRACE_ABANDONED)
		sp_buf_adds(&d->b, " abandoned");
	if (t->flags & SP_TRACE_POINT)
		sp_buf_adds(&d->b, " point");
	for (uint32_t i = 0; i < t->nvalues; i++)
		sp_buf_addf(&d->b, " %s=%" PRId64, sp_str(p, t->vname[i]), t->value[i]);
	printf("%s\n", sp_buf_cstr(&d->b));
	return 0;
}

static int on_end(struct sp_sink *s, struct sp_profile *p, struct sp_err *err)
{
	header((struct dump *)s, p); /* a stream without samples has columns too */
	printf("end\n");
	((struct dump *)s)->header = 0;
	return 0;
}

static int cmd_dump(int argc, char **argv)
{
	static const char synopsis[] =
		"usage: sp-dump [--partial] [FILE|-]\n"
		"Print a stackpipe binary stream as canonical text, one record a line.\n"
		"\n"
		"      --partial           use a truncated stream up to its cut (warns)\n"
		"  -V, --version           print the version\n"
		"  -h, --help              show this help\n"
		"\n"
		"Exit status: 0 ok, 2 error.\n";
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		SP_LONGOPTS_COMMON,
		{ NULL, 0, NULL, 0 },
	};
	struct sp_read_opts ro;
	memset(&ro, 0, sizeof ro);
	ro.warn = sp_print_warning;
	int c;
	while ((c = getopt_long(argc, argv, "hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'h': fputs(synopsis, stdout); return SP_EXIT_OK;
		case 'V': return sp_version();
		case SP_OPT_PARTIAL: ro.partial = 1; break;
		default: return sp_usage_error(synopsis, NULL);
		}
	}
	argc -= optind - 1;
	argv += optind - 1;
	if (argc > 2)
		return sp_usage_error(synopsis, "one input at most");
	struct dump d = { .sink = { on_sample, on_trace, on_meta, on_end } };
	struct sp_profile *p = sp_profile_new();
	struct sp_err err;
	struct sp_input *in = sp_input_open(argc == 2 ? argv[1] : "-", &err);
	int rc = SP_EXIT_OK;
	if (!in || sp_input_check_empty(in, &err) < 0 || sp_stream_read_opts(in, p, &d.sink, &ro, &err) < 0) {
		fflush(stdout);
		sp_error_e(&err);
		rc = SP_EXIT_ERROR;
	}
	sp_input_close(in);
	sp_buf_release(&d.b);
	free(d.frames);
	sp_profile_free(p);
	return rc;
}

int main(int argc, char **argv) { return sp_cmd_run("sp-dump", cmd_dump, argc, argv); }
