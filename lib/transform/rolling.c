/* rolling.c — the last seconds of a stream, and repeated renders (see
 * rolling.h). */
#include <stdlib.h>
#include <string.h>

#include "rolling.h"

struct sum {
	uint32_t stack, thread, event;
	uint64_t time;
	double values[SP_MAX_VALUES];
};

struct sp_roll {
	struct sp_sink sink;
	struct sp_roll_opts o;
	/* kept samples: a ring (last or keep_samples) */
	struct sp_sample *ring;
	size_t cap, head, len;
	/* or sums per (stack, thread) */
	struct sp_u64map map;
	struct sum *sums;
	size_t nsums, cap_sums;
	uint64_t newest, oldest, next, renders, samples;
	const char *input;
	int have_time;
};

static void ring_push(struct sp_roll *r, const struct sp_sample *s)
{
	if (r->len == r->cap) {
		size_t n = r->cap ? r->cap * 2 : 1024;
		struct sp_sample *a = sp_xmalloc(n * sizeof *a);
		for (size_t i = 0; i < r->len; i++)
			a[i] = r->ring[(r->head + i) % r->cap];
		free(r->ring);
		r->ring = a;
		r->cap = n;
		r->head = 0;
	}
	r->ring[(r->head + r->len) % r->cap] = *s;
	r->len++;
	if (r->o.last) {
		uint64_t from = r->newest > r->o.last ? r->newest - r->o.last : 0;
		while (r->len && r->ring[r->head].time < from) {
			r->head = (r->head + 1) % r->cap;
			r->len--;
		}
	}
}

static void sum_add(struct sp_roll *r, struct sp_profile *p, const struct sp_sample *s)
{
	/* one sum per (stack, thread, event); keys that collide probe on */
	uint64_t key = sp_mix64(((uint64_t)s->stack << 32 | s->thread) ^ ((uint64_t)s->event * 0x9e3779b97f4a7c15ull));
	struct sum *m = NULL;
	for (;; key++) {
		if (key == UINT64_MAX) /* reserved by the map */
			key = 0;
		int found;
		uint32_t *slot = sp_u64map_slot(&r->map, key, &found);
		if (!found) {
			if (r->nsums == r->cap_sums) {
				r->cap_sums = r->cap_sums ? r->cap_sums * 2 : 1024;
				r->sums = sp_xrealloc(r->sums, r->cap_sums * sizeof *r->sums);
			}
			*slot = (uint32_t)r->nsums;
			m = &r->sums[r->nsums++];
			memset(m, 0, sizeof *m);
			m->stack = s->stack;
			m->thread = s->thread;
			m->event = s->event;
			m->time = s->time;
			break;
		}
		m = &r->sums[*slot];
		if (m->stack == s->stack && m->thread == s->thread && m->event == s->event)
			break;
	}
	int nv = sp_profile_nvalues(p);
	for (int i = 0; i < nv && i < SP_MAX_VALUES; i++)
		m->values[i] += s->values[i];
	if (s->time != SP_NO_TIME && (m->time == SP_NO_TIME || s->time > m->time))
		m->time = s->time;
}

static int roll_sample(struct sp_sink *sk, struct sp_profile *p, const struct sp_sample *s, struct sp_err *err)
{
	struct sp_roll *r = (struct sp_roll *)sk;
	if (s->time == SP_NO_TIME) {
		if (r->o.last || r->o.every)
			return sp_err_set(err, "%s%sthe input has no timestamps (%s needs a timestamped binary stream: "
					       "pcollect, or perf script | pfold -b)",
					  r->input ? r->input : "", r->input ? ": " : "", r->o.what ? r->o.what : "--last");
	} else {
		if (!r->have_time) {
			r->have_time = 1;
			r->newest = r->oldest = s->time;
			r->next = s->time + r->o.every;
		}
		if (r->o.every && s->time >= r->next) {
			/* render what came before this sample */
			if (r->o.render && r->samples && r->o.render(r->o.ctx, p, err) < 0)
				return -1;
			r->renders++;
			/* the next mark after this sample: a gap in the stream
			 * gets one render, not one per missed mark */
			r->next += ((s->time - r->next) / r->o.every + 1) * r->o.every;
		}
		if (s->time > r->newest)
			r->newest = s->time;
		if (s->time < r->oldest)
			r->oldest = s->time;
	}
	r->samples++;
	if (r->o.last || r->o.keep_samples)
		ring_push(r, s);
	else
		sum_add(r, p, s);
	return 0;
}

static int roll_meta(struct sp_sink *sk, struct sp_profile *p, struct sp_err *err)
{
	struct sp_roll *r = (struct sp_roll *)sk;
	return r->o.fwd && r->o.fwd->meta ? r->o.fwd->meta(r->o.fwd, p, err) : 0;
}

static int roll_end(struct sp_sink *sk, struct sp_profile *p, struct sp_err *err)
{
	struct sp_roll *r = (struct sp_roll *)sk;
	return r->o.fwd && r->o.fwd->end_input ? r->o.fwd->end_input(r->o.fwd, p, err) : 0;
}

struct sp_roll *sp_roll_new(const struct sp_roll_opts *o)
{
	struct sp_roll *r = sp_xcalloc(1, sizeof *r);
	r->o = *o;
	r->sink.sample = roll_sample;
	r->sink.meta = roll_meta;
	r->sink.end_input = roll_end;
	r->newest = SP_NO_TIME;
	sp_u64map_init(&r->map);
	return r;
}

void sp_roll_free(struct sp_roll *r)
{
	if (!r)
		return;
	free(r->ring);
	free(r->sums);
	sp_u64map_release(&r->map);
	free(r);
}

struct sp_sink *sp_roll_sink(struct sp_roll *r) { return &r->sink; }

int sp_roll_feed(struct sp_roll *r, struct sp_profile *p, struct sp_sink *sink, struct sp_err *err)
{
	if (!sink->sample)
		return 0;
	if (r->o.last || r->o.keep_samples) {
		uint64_t from = r->o.last && r->newest != SP_NO_TIME && r->newest > r->o.last ? r->newest - r->o.last : 0;
		for (size_t i = 0; i < r->len; i++) {
			const struct sp_sample *s = &r->ring[(r->head + i) % r->cap];
			if (r->o.last && s->time < from)
				continue;
			if (sink->sample(sink, p, s, err) < 0)
				return -1;
		}
		return 0;
	}
	struct sp_sample s;
	memset(&s, 0, sizeof s);
	for (size_t i = 0; i < r->nsums; i++) {
		const struct sum *m = &r->sums[i];
		s.stack = m->stack;
		s.thread = m->thread;
		s.event = m->event;
		s.time = m->time;
		memcpy(s.values, m->values, sizeof s.values);
		if (sink->sample(sink, p, &s, err) < 0)
			return -1;
	}
	return 0;
}

uint64_t sp_roll_renders(const struct sp_roll *r) { return r->renders; }
uint64_t sp_roll_newest(const struct sp_roll *r) { return r->have_time ? r->newest : SP_NO_TIME; }
uint64_t sp_roll_oldest(const struct sp_roll *r) { return r->have_time ? r->oldest : SP_NO_TIME; }
uint64_t sp_roll_samples(const struct sp_roll *r) { return r->samples; }
void sp_roll_set_input(struct sp_roll *r, const char *name) { r->input = name; }
