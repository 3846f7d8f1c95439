/* session.c — the sampling session (session.h). */
#include <errno.h>
#include <poll.h>
#include <string.h>

#include "session.h"

struct sp_session *sp_session_new(void) { return sp_xcalloc(1, sizeof(struct sp_session)); }

int sp_session_open(struct sp_session *s, const struct sp_perfev_opts *po, struct sp_err *err)
{
	if (!(s->ev = sp_perfev_new(po, err)))
		return -1;
	s->p = sp_profile_new();
	static const char *const values[] = { "samples", "period" };
	sp_profile_set_values(s->p, 2, values); /* off-CPU: one ns column, set by sp_offcpu_new */
	return 0;
}

void sp_session_write_to(struct sp_session *s, FILE *out)
{
	s->out = out;
	s->w = sp_writer_open(SP_OUT_BINARY, out, s->p, NULL, 0, NULL); /* flags 0: cannot fail */
	s->sink = sp_writer_sink(s->w);
}

int sp_session_wire(struct sp_session *s, const struct sp_session_opts *o, struct sp_err *err)
{
	if (o->offcpu)
		s->off = sp_offcpu_new(s->p, s->sink, o->offcpu == 2);
	if (o->stacks)
		s->hs = sp_hitstacks_new(s->p, s->sink, 0, &o->hits);
	struct sp_sink *to = s->off ? sp_offcpu_sink(s->off) : s->hs ? sp_hitstacks_sink(s->hs) : s->sink;
	if (!(s->eng = sp_collect_new(s->p, to, &o->collect, err)))
		return -1;
	sp_collect_handler(s->eng, &s->hd);
	if (s->off) {
		struct sp_perf_handler eng = s->hd;
		sp_offcpu_handler(s->off, &eng, &s->hd);
	}
	if (s->hd.early)
		sp_perfev_set_early(s->ev, s->hd.early, s->hd.early_ctx);
	return 0;
}

/* The steps' first error, into s->werr. */
static void check_errors(struct sp_session *s, int offcpu)
{
	if (!s->write_failed && (sp_collect_error(s->eng, &s->werr) || (offcpu && s->off && sp_offcpu_error(s->off, &s->werr)) ||
				 (s->tracer && sp_tracer_error(s->tracer, &s->werr))))
		s->write_failed = 1;
}

/* Let a consumer downstream see samples as they come; a reader that went
 * away while the target is idle makes no write fail: the pipe's POLLERR
 * tells. */
static void flush(struct sp_session *s)
{
	if (sp_writer_flush(s->w, &s->werr) < 0) {
		s->write_failed = 1;
		return;
	}
	struct pollfd pf = { fileno(s->out), 0, 0 };
	if (poll(&pf, 1, 0) == 1 && (pf.revents & POLLERR)) {
		sp_err_sys(&s->werr, EPIPE, "%s", strerror(EPIPE));
		s->write_failed = 1;
	}
}

void sp_session_run(struct sp_session *s, const struct sp_session_hooks *h)
{
	double last_status = 0, last_flush;
	s->t0 = last_flush = sp_mono_s();
	while (!(h->stop && *h->stop) && !s->write_failed) {
		sp_perfev_wait(s->ev, h->round_ms);
		sp_perfev_read(s->ev, &s->hd, 0);
		double now = sp_mono_s();
		if (h->round)
			h->round(h->ctx, now);
		check_errors(s, 1);
		/* every round in the first second: a live reader (plive's T)
		 * shows the first calls without waiting for a fifth of a second */
		if (now - last_flush >= 0.2 || now - s->t0 < 1) {
			last_flush = now;
			flush(s);
		}
		if (h->rotate && !s->write_failed && h->rotate(h->ctx, now) < 0)
			s->write_failed = 1;
		if (h->gone && h->gone(h->ctx, now))
			break;
		if (h->duration && now - s->t0 >= h->duration)
			break;
		if (h->status && now - last_status >= 0.5) {
			last_status = now;
			h->status(h->ctx, now - s->t0);
		}
	}
}

void sp_session_stop(struct sp_session *s, const struct sp_session_hooks *h)
{
	if (h->stopping)
		h->stopping(h->ctx);
	sp_perfev_disable(s->ev);
	sp_perfev_read(s->ev, &s->hd, 1);
	if (h->stopped)
		h->stopped(h->ctx);
	check_errors(s, 0);
	/* Threads still asleep are charged up to now (the samples' clock). */
	if (s->off && !s->write_failed && sp_offcpu_finish(s->off, sp_mono_ns(), &s->werr) < 0)
		s->write_failed = 1;
}

int sp_session_finish(struct sp_session *s)
{
	const struct sp_perfev_stats *st = sp_perfev_stats(s->ev);
	if (st->lost) {
		char buf[32];
		snprintf(buf, sizeof buf, "%llu", (unsigned long long)st->lost);
		sp_meta_add(s->p, "lost", buf);
		s->sink->meta(s->sink, s->p, &s->werr);
	}
	if (!s->write_failed && sp_writer_finish(s->w, &s->werr) < 0)
		s->write_failed = 1;
	return s->write_failed ? -1 : 0;
}

void sp_session_free(struct sp_session *s)
{
	if (!s)
		return;
	sp_perfev_free(s->ev);
	sp_tracer_free(s->tracer);
	sp_collect_free(s->eng);
	sp_offcpu_free(s->off);
	sp_hitstacks_free(s->hs);
	sp_writer_free(s->w);
	sp_profile_free(s->p);
	free(s);
}
