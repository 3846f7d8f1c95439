/* pprof.c — pprof (profile.proto) writer and reader.
 *
 * The protobuf wire format, as much of it as profile.proto uses: a field is
 * a varint key (field number << 3 | wire type) and then a varint (type 0), 8
 * bytes (1), a varint length and that many bytes (2: strings, messages,
 * packed repeated numbers) or 4 bytes (5).  Field numbers of profile.proto
 * (github.com/google/pprof, proto/profile.proto) are listed in the enums
 * below.  No protobuf library: the encoder and the decoder are small. */
#include "pprof.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>

#include "input.h"

/* Profile */
enum {
	P_SAMPLE_TYPE = 1, P_SAMPLE = 2, P_MAPPING = 3, P_LOCATION = 4, P_FUNCTION = 5, P_STRING = 6,
	P_DROP = 7, P_KEEP = 8, P_TIME = 9, P_DURATION = 10, P_PERIOD_TYPE = 11, P_PERIOD = 12,
	P_COMMENT = 13, P_DEFAULT_TYPE = 14, P_NFIELDS
};
enum { VT_TYPE = 1, VT_UNIT = 2 };                                  /* ValueType */
enum { S_LOCATION = 1, S_VALUE = 2, S_LABEL = 3 };                  /* Sample */
enum { L_KEY = 1, L_STR = 2, L_NUM = 3, L_UNIT = 4 };               /* Label */
enum { M_ID = 1, M_START = 2, M_LIMIT = 3, M_OFFSET = 4, M_FILE = 5, M_BUILD_ID = 6,
       M_HAS_FUNCTIONS = 7 };                                       /* Mapping */
enum { LOC_ID = 1, LOC_MAPPING = 2, LOC_ADDRESS = 3, LOC_LINE = 4 }; /* Location */
enum { LN_FUNCTION = 1, LN_LINE = 2 };                              /* Line */
enum { F_ID = 1, F_NAME = 2, F_SYSTEM_NAME = 3, F_FILE = 4 };       /* Function */
enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_I32 = 5 };

/* ======================= encoder ======================= */

#define put_uv sp_buf_add_uvarint

static inline void put_key(struct sp_buf *b, unsigned field, unsigned wt) { put_uv(b, (uint64_t)field << 3 | wt); }

/* A varint field; proto3 leaves zeros out. */
static inline void put_int(struct sp_buf *b, unsigned field, uint64_t v)
{
	if (!v)
		return;
	put_key(b, field, WT_VARINT);
	put_uv(b, v);
}

static void put_bytes(struct sp_buf *b, unsigned field, const void *p, size_t n)
{
	put_key(b, field, WT_LEN);
	put_uv(b, n);
	sp_buf_add(b, p, n);
}

/* A nested message built in m, appended to b as field `field`; m is reset. */
static void put_msg(struct sp_buf *b, unsigned field, struct sp_buf *m)
{
	put_bytes(b, field, m->p, m->len);
	m->len = 0;
}

/* ======================= writer ======================= */

struct entry {
	uint32_t stack, thread;
};

struct sp_pprof_writer {
	struct sp_sink sink; /* first: callbacks cast back */
	struct sp_profile *p;
	FILE *out;
	struct sp_u64map map; /* thread << 32 | stack -> entry + 1 */
	struct entry *ents;
	double *vals; /* SP_MAX_VALUES per entry */
	size_t n, cap;
	int nvals;
	uint32_t event;       /* the first sample's event name */
	uint64_t tmin, tmax;  /* sample times, SP_NO_TIME = none */
	/* finish */
	struct sp_buf strtab; /* encoded string_table fields */
	uint32_t *str_ix;     /* profile string id -> pprof index + 1 */
	size_t nstr_ix;
	uint32_t nstrings;
};

static int w_sample(struct sp_sink *s, struct sp_profile *p, const struct sp_sample *smp, struct sp_err *err)
{
	struct sp_pprof_writer *w = (struct sp_pprof_writer *)s;
	int nv = sp_profile_nvalues(p);
	if (nv > w->nvals)
		w->nvals = nv;
	if (!w->event && smp->event)
		w->event = smp->event;
	if (smp->time != SP_NO_TIME) {
		if (w->tmin == SP_NO_TIME || smp->time < w->tmin)
			w->tmin = smp->time;
		if (w->tmax == SP_NO_TIME || smp->time > w->tmax)
			w->tmax = smp->time;
	}
	int found;
	uint32_t *slot = sp_u64map_slot(&w->map, (uint64_t)smp->thread << 32 | smp->stack, &found);
	if (!found) {
		if (w->n == w->cap) {
			w->cap = w->cap ? w->cap * 2 : 1024;
			w->ents = sp_xrealloc(w->ents, w->cap * sizeof *w->ents);
			w->vals = sp_xrealloc(w->vals, w->cap * SP_MAX_VALUES * sizeof *w->vals);
		}
		w->ents[w->n] = (struct entry){ smp->stack, smp->thread };
		memset(w->vals + w->n * SP_MAX_VALUES, 0, SP_MAX_VALUES * sizeof *w->vals);
		*slot = (uint32_t)++w->n;
	}
	double *v = w->vals + (size_t)(*slot - 1) * SP_MAX_VALUES;
	for (int i = 0; i < nv && i < SP_MAX_VALUES; i++)
		v[i] += smp->values[i];
	return 0;
}

struct sp_pprof_writer *sp_pprof_writer_new(FILE *out, struct sp_profile *p)
{
	struct sp_pprof_writer *w = sp_xcalloc(1, sizeof *w);
	w->sink.sample = w_sample;
	w->p = p;
	w->out = out;
	w->tmin = w->tmax = SP_NO_TIME;
	sp_u64map_init(&w->map);
	return w;
}

struct sp_sink *sp_pprof_writer_sink(struct sp_pprof_writer *w) { return &w->sink; }

void sp_pprof_writer_free(struct sp_pprof_writer *w)
{
	if (!w)
		return;
	sp_u64map_release(&w->map);
	free(w->ents);
	free(w->vals);
	free(w->str_ix);
	sp_buf_release(&w->strtab);
	free(w);
}

/* The pprof string index of a profile string id, added to the table the
 * first time. */
static uint64_t str_ix(struct sp_pprof_writer *w, uint32_t id)
{
	if (!id)
		return 0;
	if (id >= w->nstr_ix) {
		size_t n = w->nstr_ix ? w->nstr_ix : 1024;
		while (n <= id)
			n *= 2;
		w->str_ix = sp_xrealloc(w->str_ix, n * sizeof *w->str_ix);
		memset(w->str_ix + w->nstr_ix, 0, (n - w->nstr_ix) * sizeof *w->str_ix);
		w->nstr_ix = n;
	}
	if (!w->str_ix[id]) {
		put_bytes(&w->strtab, P_STRING, sp_str(w->p, id), sp_str_len(w->p, id));
		w->str_ix[id] = ++w->nstrings; /* index nstrings, stored + 1 */
	}
	return w->str_ix[id] - 1;
}

static uint64_t lit_ix(struct sp_pprof_writer *w, const char *s)
{
	return str_ix(w, sp_str_intern(w->p, s, strlen(s)));
}

static int starts(const char *s, const char *prefix) { return !strncmp(s, prefix, strlen(prefix)); }

/* pprof's type/unit of a value column. */
static void value_type(struct sp_pprof_writer *w, const char *name, const char **type, const char **unit,
		       struct sp_buf *evbuf)
{
	*unit = "count";
	*type = name;
	if (!strcmp(name, "samples")) {
		*type = "samples";
	} else if (!strcmp(name, "period")) {
		const char *ev = w->event ? sp_str(w->p, w->event) : sp_meta_find(w->p, "event");
		if (!ev || !*ev)
			ev = "events";
		sp_buf_reset(evbuf);
		sp_buf_add(evbuf, ev, strcspn(ev, ":"));
		ev = sp_buf_cstr(evbuf);
		if (starts(ev, "cpu-clock") || starts(ev, "task-clock") || !strcmp(ev, "cpu")) {
			*type = "cpu";
			*unit = "nanoseconds";
		} else {
			*type = ev;
		}
	} else if (!strcmp(name, "ns")) {
		*type = "time";
		*unit = "nanoseconds";
	} else if (!strcmp(name, "bytes")) {
		*type = "space";
		*unit = "bytes";
	}
}

static int write_gzip(FILE *out, const struct sp_buf *b, struct sp_err *err)
{
	z_stream z;
	memset(&z, 0, sizeof z);
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return sp_err_set(err, "zlib: cannot start compression");
	unsigned char chunk[1 << 16];
	z.next_in = (unsigned char *)b->p;
	size_t left = b->len;
	int rc = 0, zr;
	do {
		uInt step = left > (1u << 30) ? (1u << 30) : (uInt)left;
		if (!z.avail_in) {
			z.avail_in = step;
			left -= step;
		}
		z.next_out = chunk;
		z.avail_out = sizeof chunk;
		zr = deflate(&z, left || z.avail_in ? Z_NO_FLUSH : Z_FINISH);
		size_t have = sizeof chunk - z.avail_out;
		if (have && fwrite(chunk, 1, have, out) != have) {
			rc = sp_err_set(err, "write error: %s", strerror(errno));
			break;
		}
	} while (zr != Z_STREAM_END && zr != Z_STREAM_ERROR);
	if (!rc && zr != Z_STREAM_END)
		rc = sp_err_set(err, "zlib: compression failed");
	deflateEnd(&z);
	if (!rc && fflush(out) != 0)
		rc = sp_err_set(err, "write error: %s", strerror(errno));
	return rc;
}

static int64_t to_int(double v) { return (int64_t)llround(v); }

/* The state sp_pprof_writer_finish's phases share: the message being
 * built, scratch buffers, the locations samples use and the value
 * columns pprof's period is taken from. */
struct finish {
	struct sp_buf out, m, m2, evbuf;
	int nv;
	int col_samples, col_period; /* -1: none */
	const char *ptype, *punit;   /* the period column's type and unit */
	double tot_samples, tot_period;
	uint32_t *loc_of;     /* frame -> location id */
	uint32_t *loc_frames; /* location id - 1 -> frame */
	size_t nlocs, caplocs;
	uint32_t *frames; /* scratch for sp_node_frames */
	size_t capf;
};

/* sample_type, one per value column, and which columns are samples and
 * period. */
static void write_sample_types(struct sp_pprof_writer *w, struct finish *fs)
{
	struct sp_profile *p = w->p;
	for (int i = 0; i < fs->nv; i++) {
		const char *name = sp_profile_value_name(p, i);
		if (!*name)
			name = i ? "value" : "samples";
		const char *type, *unit;
		value_type(w, name, &type, &unit, &fs->evbuf);
		put_int(&fs->m, VT_TYPE, lit_ix(w, type));
		put_int(&fs->m, VT_UNIT, lit_ix(w, unit));
		put_msg(&fs->out, P_SAMPLE_TYPE, &fs->m);
		if (!strcmp(name, "samples"))
			fs->col_samples = i;
		else if (!strcmp(name, "period") && fs->col_period < 0) {
			fs->col_period = i;
			fs->ptype = sp_str(p, sp_str_intern(p, type, strlen(type)));
			fs->punit = unit;
		}
	}
}

/* The location id of a frame, numbered in the order samples meet them. */
static uint32_t location_of(struct finish *fs, uint32_t f)
{
	if (!fs->loc_of[f]) {
		if (fs->nlocs == fs->caplocs) {
			fs->caplocs = fs->caplocs ? fs->caplocs * 2 : 1024;
			fs->loc_frames = sp_xrealloc(fs->loc_frames, fs->caplocs * sizeof *fs->loc_frames);
		}
		fs->loc_frames[fs->nlocs++] = f;
		fs->loc_of[f] = (uint32_t)fs->nlocs;
	}
	return fs->loc_of[f];
}

/* One sample per (thread, stack): its locations, values and labels. */
static void write_samples(struct sp_pprof_writer *w, struct finish *fs)
{
	struct sp_profile *p = w->p;
	struct sp_buf *m = &fs->m, *m2 = &fs->m2;
	uint64_t k_thread = lit_ix(w, "thread"), k_tid = lit_ix(w, "tid"), k_pid = lit_ix(w, "pid"),
		 k_tag = lit_ix(w, "tag");
	for (size_t i = 0; i < w->n; i++) {
		const struct entry *e = &w->ents[i];
		uint32_t d = sp_node_frames(p, e->stack, &fs->frames, &fs->capf);
		const uint32_t *frames = fs->frames;
		/* location ids, leaf first, packed */
		for (uint32_t j = d; j-- > 0;)
			put_uv(m2, location_of(fs, frames[j]));
		if (m2->len)
			put_msg(m, S_LOCATION, m2);
		const double *v = w->vals + i * SP_MAX_VALUES;
		for (int j = 0; j < fs->nv; j++)
			put_uv(m2, (uint64_t)to_int(v[j]));
		put_msg(m, S_VALUE, m2);
		if (fs->col_samples >= 0)
			fs->tot_samples += v[fs->col_samples];
		if (fs->col_period >= 0)
			fs->tot_period += v[fs->col_period];
		if (d && sp_frame_get(p, frames[0])->kind == SP_KIND_SYNTHETIC) {
			/* pmerge --tag's root frame: kept in the stack (so
			 * stacks read the same everywhere) and a label to
			 * filter on (go tool pprof -tagfocus tag=host1). */
			put_int(m2, L_KEY, k_tag);
			put_int(m2, L_STR, str_ix(w, sp_frame_get(p, frames[0])->name));
			put_msg(m, S_LABEL, m2);
		}
		if (e->thread) {
			const struct sp_thread *t = sp_thread_get(p, e->thread);
			int64_t pid = t->pid, tid = t->tid;
			uint32_t name = t->name;
			if (name) {
				put_int(m2, L_KEY, k_thread);
				put_int(m2, L_STR, str_ix(w, name));
				put_msg(m, S_LABEL, m2);
			}
			if (tid >= 0) {
				put_int(m2, L_KEY, k_tid);
				put_key(m2, L_NUM, WT_VARINT);
				put_uv(m2, (uint64_t)tid);
				put_msg(m, S_LABEL, m2);
			}
			if (pid >= 0) {
				put_int(m2, L_KEY, k_pid);
				put_key(m2, L_NUM, WT_VARINT);
				put_uv(m2, (uint64_t)pid);
				put_msg(m, S_LABEL, m2);
			}
		}
		put_msg(&fs->out, P_SAMPLE, m);
	}
}

/* pprof names its first mapping "File:", the main binary: the module of
 * _start, where stacks start (an interpreter's executable, not the
 * libpython of its leaves); without _start, the first one met (0). */
static uint32_t main_module(struct sp_pprof_writer *w, struct finish *fs)
{
	struct sp_profile *p = w->p;
	uint32_t mainmod = 0, best = 0;
	struct sp_u64map roots;
	sp_u64map_init(&roots);
	for (size_t i = 0; i < w->n; i++) {
		uint32_t d = sp_node_frames(p, w->ents[i].stack, &fs->frames, &fs->capf);
		for (uint32_t j = 0; j < d; j++) {
			const struct sp_frame *f = sp_frame_get(p, fs->frames[j]);
			if (!f->module || f->kind == SP_KIND_KERNEL || sp_str(p, f->module)[0] == '[')
				continue;
			if (strcmp(sp_str(p, f->name), "_start"))
				break;
			int found;
			uint32_t *c = sp_u64map_slot(&roots, f->module, &found);
			*c = found ? *c + 1 : 1;
			if (*c > best)
				best = *c, mainmod = f->module;
			break;
		}
	}
	sp_u64map_release(&roots);
	return mainmod;
}

/* Locations (one per distinct frame), then the mappings and functions
 * they use. */
static void write_locations(struct sp_pprof_writer *w, struct finish *fs, uint32_t mainmod)
{
	struct sp_profile *p = w->p;
	struct sp_buf *m = &fs->m, *m2 = &fs->m2;
	struct sp_u64map funcs, maps;
	sp_u64map_init(&funcs);
	sp_u64map_init(&maps);
	/* encoded functions; mappings: the main one, others, [...] ones */
	struct sp_buf fbuf = SP_BUF_INIT, mmain = SP_BUF_INIT, mbuf = SP_BUF_INIT, mlate = SP_BUF_INIT;
	uint32_t nfuncs = 0, nmaps = 0;
	for (size_t i = 0; i < fs->nlocs; i++) {
		struct sp_frame fr = *sp_frame_get(p, fs->loc_frames[i]);
		int found;
		uint32_t map_id = 0;
		uint32_t module = fr.module;
		if (!module && fr.kind == SP_KIND_KERNEL)
			module = sp_str_intern(p, "[kernel.kallsyms]", 17);
		if (module) {
			uint32_t *slot = sp_u64map_slot(&maps, module, &found);
			if (!found) {
				*slot = ++nmaps;
				put_int(m2, M_ID, nmaps);
				put_int(m2, M_FILE, str_ix(w, module));
				put_int(m2, M_HAS_FUNCTIONS, 1);
				/* pprof takes the first mapping for the main
				 * binary: "[kernel.kallsyms]", "[vdso]" go last. */
				put_msg(module == mainmod		? &mmain
					: sp_str(p, module)[0] == '[' ? &mlate
								       : &mbuf,
					P_MAPPING, m2);
			}
			map_id = *slot;
		}
		uint32_t *fslot = sp_u64map_slot(&funcs, (uint64_t)fr.name << 32 | fr.file, &found);
		if (!found) {
			*fslot = ++nfuncs;
			put_int(m2, F_ID, nfuncs);
			put_int(m2, F_NAME, str_ix(w, fr.name));
			/* A Python name such as <module> or <lambda> has no
			 * system name: pprof would take it for demangled C++
			 * and strip the <...> (an empty name, "<unknown>");
			 * a name unlike its system name is left alone. */
			if (fr.kind != SP_KIND_PYTHON)
				put_int(m2, F_SYSTEM_NAME, str_ix(w, fr.name));
			put_int(m2, F_FILE, str_ix(w, fr.file));
			put_msg(&fbuf, P_FUNCTION, m2);
		}
		put_int(m2, LN_FUNCTION, *fslot);
		put_int(m2, LN_LINE, fr.line);
		put_int(m, LOC_ID, i + 1);
		put_int(m, LOC_MAPPING, map_id);
		put_int(m, LOC_ADDRESS, fr.addr);
		put_msg(m, LOC_LINE, m2);
		put_msg(&fs->out, P_LOCATION, m);
	}
	sp_buf_add(&fs->out, mmain.p, mmain.len);
	sp_buf_add(&fs->out, mbuf.p, mbuf.len);
	sp_buf_add(&fs->out, mlate.p, mlate.len);
	sp_buf_add(&fs->out, fbuf.p, fbuf.len);
	sp_buf_release(&mmain);
	sp_buf_release(&mbuf);
	sp_buf_release(&mlate);
	sp_buf_release(&fbuf);
	sp_u64map_release(&funcs);
	sp_u64map_release(&maps);
}

/* Times, period and the metadata as comments. */
static void write_trailer(struct sp_pprof_writer *w, struct finish *fs)
{
	struct sp_profile *p = w->p;
	struct sp_buf *out = &fs->out, *m = &fs->m;
	if (w->tmin != SP_NO_TIME) {
		/* time_nanos is wall-clock time since the epoch; perf and
		 * pcollect times are of a monotonic clock (since boot), which
		 * would read as 1970: only the duration is written then. */
		if (w->tmin > 1000000000000000000ull)
			put_int(out, P_TIME, w->tmin);
		put_int(out, P_DURATION, w->tmax - w->tmin);
	}
	if (fs->col_period >= 0) {
		put_int(m, VT_TYPE, lit_ix(w, fs->ptype));
		put_int(m, VT_UNIT, lit_ix(w, fs->punit));
		put_msg(out, P_PERIOD_TYPE, m);
		double per = 0;
		const char *freq = sp_meta_find(p, "frequency");
		if (freq && atof(freq) > 0 && !strcmp(fs->punit, "nanoseconds"))
			per = 1e9 / atof(freq);
		else if (fs->col_samples >= 0 && fs->tot_samples > 0)
			per = fs->tot_period / fs->tot_samples;
		put_int(out, P_PERIOD, (uint64_t)to_int(per));
	}
	for (size_t i = 0; i < sp_meta_count(p); i++) {
		const struct sp_meta *mt = sp_meta_get(p, i);
		sp_buf_reset(&fs->evbuf);
		sp_buf_adds(&fs->evbuf, sp_str(p, mt->key));
		sp_buf_addc(&fs->evbuf, '=');
		sp_buf_adds(&fs->evbuf, sp_str(p, mt->value));
		uint64_t ix = str_ix(w, sp_str_intern(p, fs->evbuf.p, fs->evbuf.len));
		put_key(out, P_COMMENT, WT_VARINT);
		put_uv(out, ix);
	}
}

int sp_pprof_writer_finish(struct sp_pprof_writer *w, struct sp_err *err)
{
	struct sp_profile *p = w->p;
	struct finish fs = { .out = SP_BUF_INIT, .m = SP_BUF_INIT, .m2 = SP_BUF_INIT, .evbuf = SP_BUF_INIT,
			     .col_samples = -1, .col_period = -1 };
	sp_buf_reset(&w->strtab);
	put_bytes(&w->strtab, P_STRING, "", 0); /* string 0 is "" */
	w->nstrings = 1;
	fs.nv = sp_profile_nvalues(p);
	if (fs.nv < w->nvals)
		fs.nv = w->nvals;
	if (fs.nv < 1)
		fs.nv = 1;
	if (fs.nv > SP_MAX_VALUES)
		fs.nv = SP_MAX_VALUES;
	uint32_t nframes = sp_frame_count(p);
	fs.loc_of = sp_xcalloc(nframes ? nframes : 1, sizeof *fs.loc_of);

	write_sample_types(w, &fs);
	write_samples(w, &fs);
	write_locations(w, &fs, main_module(w, &fs));
	write_trailer(w, &fs);
	sp_buf_add(&fs.out, w->strtab.p, w->strtab.len);

	int rc = write_gzip(w->out, &fs.out, err);
	free(fs.loc_of);
	free(fs.loc_frames);
	free(fs.frames);
	sp_buf_release(&fs.out);
	sp_buf_release(&fs.m);
	sp_buf_release(&fs.m2);
	sp_buf_release(&fs.evbuf);
	return rc;
}

/* ======================= reader ======================= */

/* A cursor over one message: [p, end) of the whole buffer base. */
struct pb {
	const unsigned char *base, *p, *end;
};

struct rd {
	const char *name;
	struct sp_err *err;
	const unsigned char *base;
};

static int bad(struct rd *r, const unsigned char *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(struct rd *r, const unsigned char *at, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return sp_err_off(r->err, r->name, (uint64_t)(at - r->base), "%s", msg);
}

static int get_uv(struct rd *r, struct pb *b, uint64_t *v, const char *what)
{
	const unsigned char *at = b->p;
	uint64_t x = 0;
	for (unsigned shift = 0; shift < 64; shift += 7) {
		if (b->p >= b->end)
			return bad(r, at, "truncated varint in %s", what);
		unsigned char c = *b->p++;
		x |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80)) {
			*v = x;
			return 0;
		}
	}
	return bad(r, at, "varint longer than 10 bytes in %s", what);
}

/* One field of a message: its number, wire type, and the value (varint or
 * fixed) or the sub-buffer (length-delimited).  0 at the end, 1 for a field,
 * -1 on error. */
struct field {
	unsigned num, wt;
	uint64_t v;
	struct pb sub;
	const unsigned char *at;
};

static int next_field(struct rd *r, struct pb *b, struct field *f, const char *msg)
{
	if (b->p >= b->end)
		return 0;
	f->at = b->p;
	uint64_t key;
	if (get_uv(r, b, &key, msg) < 0)
		return -1;
	f->num = (unsigned)(key >> 3);
	f->wt = (unsigned)(key & 7);
	if (key >> 3 == 0 || key >> 3 > 536870911)
		return bad(r, f->at, "bad field number in %s (key %llu)", msg, (unsigned long long)key);
	switch (f->wt) {
	case WT_VARINT:
		return get_uv(r, b, &f->v, msg) < 0 ? -1 : 1;
	case WT_I64:
	case WT_I32: {
		size_t n = f->wt == WT_I64 ? 8 : 4;
		if ((size_t)(b->end - b->p) < n)
			return bad(r, f->at, "truncated fixed-size field in %s", msg);
		f->v = 0;
		for (size_t i = 0; i < n; i++)
			f->v |= (uint64_t)b->p[i] << (8 * i);
		b->p += n;
		return 1;
	}
	case WT_LEN: {
		uint64_t n;
		if (get_uv(r, b, &n, msg) < 0)
			return -1;
		if (n > (uint64_t)(b->end - b->p)) {
			char m2[200];
			snprintf(m2, sizeof m2, "length %llu of field %u runs past the end of %s (%llu bytes left)",
				 (unsigned long long)n, f->num, msg, (unsigned long long)(b->end - b->p));
			return sp_err_off(r->err, r->name, (uint64_t)(f->at - r->base), "%s", m2);
		}
		f->sub = (struct pb){ b->base, b->p, b->p + n };
		b->p += n;
		return 1;
	}
	default: {
		char m2[160];
		snprintf(m2, sizeof m2, "wire type %u of field %u in %s is not a protobuf wire type", f->wt, f->num, msg);
		return sp_err_off(r->err, r->name, (uint64_t)(f->at - r->base), "%s", m2);
	}
	}
}

/* A known field must have the wire type profile.proto gives it. */
static int want_wt(struct rd *r, const struct field *f, unsigned wt, const char *msg)
{
	if (f->wt == wt)
		return 0;
	char m2[160];
	snprintf(m2, sizeof m2, "field %u of %s has wire type %u, expected %u", f->num, msg, f->wt, wt);
	return sp_err_off(r->err, r->name, (uint64_t)(f->at - r->base), "%s", m2);
}

/* Repeated numbers: packed (one length-delimited field) or one varint. */
static int get_nums(struct rd *r, const struct field *f, uint64_t **v, size_t *n, size_t *cap, const char *msg)
{
	if (f->wt == WT_VARINT) {
		if (*n == *cap) {
			*cap = *cap ? *cap * 2 : 64;
			*v = sp_xrealloc(*v, *cap * sizeof **v);
		}
		(*v)[(*n)++] = f->v;
		return 0;
	}
	if (want_wt(r, f, WT_LEN, msg) < 0)
		return -1;
	struct pb b = f->sub;
	while (b.p < b.end) {
		if (*n == *cap) {
			*cap = *cap ? *cap * 2 : 64;
			*v = sp_xrealloc(*v, *cap * sizeof **v);
		}
		if (get_uv(r, &b, &(*v)[*n], msg) < 0)
			return -1;
		(*n)++;
	}
	return 0;
}

struct loc {
	uint32_t first, n; /* frames in the frame list, root first */
};

struct pprof_read {
	struct rd r;
	struct sp_profile *p;
	const unsigned char **str; /* string table */
	uint32_t *strn;
	size_t nstr, capstr;
	uint32_t *str_id; /* pprof string -> profile string id + 1 */
	struct sp_u64map fn_ix, map_ix, loc_ix; /* id -> index + 1 */
	uint32_t (*fns)[2];                   /* name, file (pprof string indexes) */
	const unsigned char **fn_at;
	size_t nfn, capfn;
	uint32_t *maps; /* filename (pprof string index) */
	size_t nmaps, capmaps;
	struct loc *locs;
	size_t nlocs, caplocs;
	uint32_t *lframes;
	size_t nlf, caplf;
};

static int str_ref(struct pprof_read *pr, const unsigned char *at, uint64_t ix, const char *what, uint32_t *out)
{
	if (ix >= pr->nstr)
		return bad(&pr->r, at, "%s refers to string %llu, past the string table", what,
			   (unsigned long long)ix);
	*out = (uint32_t)ix;
	return 0;
}

/* The profile string id of pprof string ix (interned once). */
static uint32_t pstr(struct pprof_read *pr, uint32_t ix)
{
	if (!ix)
		return 0;
	if (!pr->str_id[ix])
		pr->str_id[ix] = sp_str_intern(pr->p, (const char *)pr->str[ix], pr->strn[ix]) + 1;
	return pr->str_id[ix] - 1;
}

static int streq(struct pprof_read *pr, uint32_t ix, const char *s)
{
	size_t n = strlen(s);
	return pr->strn[ix] == n && !memcmp(pr->str[ix], s, n);
}

static int map_id(struct pprof_read *pr, struct sp_u64map *m, const unsigned char *at, uint64_t id, size_t ix,
		  const char *what)
{
	if (!id || id == UINT64_MAX)
		return bad(&pr->r, at, "%s id %llu is not valid", what, (unsigned long long)id);
	int found;
	uint32_t *slot = sp_u64map_slot(m, id, &found);
	if (found)
		return bad(&pr->r, at, "%s id %llu defined twice", what, (unsigned long long)id);
	*slot = (uint32_t)ix + 1;
	return 0;
}

static int lookup(struct pprof_read *pr, struct sp_u64map *m, const unsigned char *at, uint64_t id, const char *what,
		  uint32_t *ix)
{
	int found = 0;
	uint32_t v = id == UINT64_MAX ? 0 : sp_u64map_get(m, id, &found);
	if (!found)
		return bad(&pr->r, at, "reference to %s id %llu, which is not defined", what, (unsigned long long)id);
	*ix = v - 1;
	return 0;
}

static unsigned kind_of_module(const char *m, size_t n)
{
	if ((n >= 7 && !memcmp(m, "[kernel", 7)) || (n >= 13 && !memcmp(m, "/lib/modules/", 13)))
		return SP_KIND_KERNEL;
	if ((n == 5 && !memcmp(m, "[JIT]", 5)) || (n > 14 && !memcmp(m, "/tmp/perf-", 10) && !memcmp(m + n - 4, ".map", 4)))
		return SP_KIND_JIT;
	return SP_KIND_NATIVE;
}

/* A Location: its lines become frames, the caller (last line) first; the
 * lines before it were inlined into it. */
static int read_location(struct pprof_read *pr, struct pb b, const unsigned char *at)
{
	struct rd *r = &pr->r;
	struct field f;
	int k;
	uint64_t id = 0, mapping = 0, addr = 0;
	struct pb lines[64];
	const unsigned char *line_at[64];
	size_t nl = 0;
	while ((k = next_field(r, &b, &f, "Location")) > 0) {
		switch (f.num) {
		case LOC_ID: if (want_wt(r, &f, WT_VARINT, "Location") < 0) return -1; id = f.v; break;
		case LOC_MAPPING: if (want_wt(r, &f, WT_VARINT, "Location") < 0) return -1; mapping = f.v; break;
		case LOC_ADDRESS: if (want_wt(r, &f, WT_VARINT, "Location") < 0) return -1; addr = f.v; break;
		case LOC_LINE:
			if (want_wt(r, &f, WT_LEN, "Location") < 0)
				return -1;
			if (nl == 64)
				return bad(r, f.at, "Location has more than 64 lines");
			line_at[nl] = f.at;
			lines[nl++] = f.sub;
			break;
		}
	}
	if (k < 0)
		return -1;
	if (pr->nlocs == pr->caplocs) {
		pr->caplocs = pr->caplocs ? pr->caplocs * 2 : 256;
		pr->locs = sp_xrealloc(pr->locs, pr->caplocs * sizeof *pr->locs);
	}
	if (map_id(pr, &pr->loc_ix, at, id, pr->nlocs, "location") < 0)
		return -1;
	uint32_t module = 0;
	if (mapping) {
		uint32_t mi;
		if (lookup(pr, &pr->map_ix, at, mapping, "mapping", &mi) < 0)
			return -1;
		module = pstr(pr, pr->maps[mi]);
	}
	unsigned mkind = module ? kind_of_module(sp_str(pr->p, module), sp_str_len(pr->p, module)) : SP_KIND_NATIVE;
	struct loc *L = &pr->locs[pr->nlocs++];
	L->first = (uint32_t)pr->nlf;
	L->n = 0;
	if (pr->nlf + nl + 1 > pr->caplf) {
		pr->caplf = (pr->caplf ? pr->caplf * 2 : 1024) + nl + 1;
		pr->lframes = sp_xrealloc(pr->lframes, pr->caplf * sizeof *pr->lframes);
	}
	if (!nl) {
		/* No symbol: the address, as pprof shows it. */
		char name[32];
		int n = snprintf(name, sizeof name, "0x%" PRIx64, addr);
		struct sp_frame fr = { sp_str_intern(pr->p, name, (size_t)n), module, 0, 0, addr, (uint8_t)mkind };
		pr->lframes[pr->nlf++] = sp_frame_intern(pr->p, &fr);
		L->n = 1;
		return 0;
	}
	for (size_t i = nl; i-- > 0;) {
		uint64_t fid = 0, line = 0;
		struct pb lb = lines[i];
		while ((k = next_field(r, &lb, &f, "Line")) > 0) {
			if (f.num == LN_FUNCTION || f.num == LN_LINE) {
				if (want_wt(r, &f, WT_VARINT, "Line") < 0)
					return -1;
				if (f.num == LN_FUNCTION)
					fid = f.v;
				else
					line = f.v;
			}
		}
		if (k < 0)
			return -1;
		uint32_t fi;
		if (lookup(pr, &pr->fn_ix, line_at[i], fid, "function", &fi) < 0)
			return -1;
		struct sp_frame fr = { 0 };
		fr.name = pstr(pr, pr->fns[fi][0]);
		fr.file = pstr(pr, pr->fns[fi][1]);
		fr.line = line > UINT32_MAX ? 0 : (uint32_t)line;
		fr.module = module;
		fr.addr = addr;
		fr.kind = (uint8_t)(i + 1 < nl ? SP_KIND_INLINED : mkind);
		if (fr.kind == SP_KIND_NATIVE && !module && fr.file) {
			size_t fl = sp_str_len(pr->p, fr.file);
			const char *fs = sp_str(pr->p, fr.file);
			/* a .py, or CPython's "<frozen importlib._bootstrap>" */
			if ((fl > 3 && !memcmp(fs + fl - 3, ".py", 3)) || (fl > 2 && fs[0] == '<' && fs[fl - 1] == '>'))
				fr.kind = SP_KIND_PYTHON;
		}
		pr->lframes[pr->nlf++] = sp_frame_intern(pr->p, &fr);
		L->n++;
	}
	return 0;
}

struct vtype {
	uint32_t type, unit;
};

static int read_vtype(struct pprof_read *pr, struct pb b, struct vtype *vt)
{
	struct field f;
	int k;
	vt->type = vt->unit = 0;
	while ((k = next_field(&pr->r, &b, &f, "ValueType")) > 0) {
		if (f.num != VT_TYPE && f.num != VT_UNIT)
			continue;
		if (want_wt(&pr->r, &f, WT_VARINT, "ValueType") < 0 ||
		    str_ref(pr, f.at, f.v, "ValueType", f.num == VT_TYPE ? &vt->type : &vt->unit) < 0)
			return -1;
	}
	return k;
}

static void pprof_read_release(struct pprof_read *pr)
{
	free(pr->str);
	free(pr->strn);
	free(pr->str_id);
	sp_u64map_release(&pr->fn_ix);
	sp_u64map_release(&pr->map_ix);
	sp_u64map_release(&pr->loc_ix);
	free(pr->fns);
	free(pr->fn_at);
	free(pr->maps);
	free(pr->locs);
	free(pr->lframes);
}

#define MAX_PPROF (1ull << 32)

/* The whole input in memory: a Profile's parts come in any order
 * (strings last in Go's output). */
static int read_all(struct sp_input *in, struct sp_buf *data, struct sp_err *err)
{
	for (;;) {
		sp_buf_grow(data, 1 << 16);
		size_t got = sp_input_read(in, data->p + data->len, data->cap - data->len);
		data->len += got;
		if (!got)
			break;
		if (data->len > MAX_PPROF)
			return sp_err_set(err, "%s: larger than 4 GiB uncompressed: not a profile this reader takes",
					  sp_input_name(in));
	}
	return sp_input_failed(in, err) ? -1 : 0;
}

/* The Profile's fields, found by the first pass: repeated messages are
 * kept as cursors and read once the string table is known. */
struct parts {
	struct field *samples, *locs, *mappings, *funcs;
	size_t ns, cs, nlo, clo, nm, cm, nf, cf;
	struct pb types[SP_MAX_VALUES * 8];
	size_t ntypes;
	struct pb period_type;
	uint64_t default_type;
	const unsigned char *default_at;
	uint64_t *comments; /* string indexes */
	size_t ncom, ccom;
};

static void parts_release(struct parts *pa)
{
	free(pa->samples);
	free(pa->locs);
	free(pa->mappings);
	free(pa->funcs);
	free(pa->comments);
}

/* Pass 1: the string table, and the fields of each kind, their wire
 * types checked. */
static int read_parts(struct pprof_read *pr, struct pb top, struct parts *pa)
{
	struct rd *r = &pr->r;
	struct field f;
	int k;
	while ((k = next_field(r, &top, &f, "Profile")) > 0) {
		struct field **arr = NULL;
		size_t *n = NULL, *c = NULL;
		switch (f.num) {
		case P_SAMPLE_TYPE:
			if (want_wt(r, &f, WT_LEN, "Profile") < 0)
				return -1;
			if (pa->ntypes == sizeof pa->types / sizeof pa->types[0])
				return bad(r, f.at, "more than %zu sample types", pa->ntypes);
			pa->types[pa->ntypes++] = f.sub;
			break;
		case P_SAMPLE: arr = &pa->samples; n = &pa->ns; c = &pa->cs; break;
		case P_MAPPING: arr = &pa->mappings; n = &pa->nm; c = &pa->cm; break;
		case P_LOCATION: arr = &pa->locs; n = &pa->nlo; c = &pa->clo; break;
		case P_FUNCTION: arr = &pa->funcs; n = &pa->nf; c = &pa->cf; break;
		case P_STRING:
			if (want_wt(r, &f, WT_LEN, "Profile") < 0)
				return -1;
			if (pr->nstr == pr->capstr) {
				pr->capstr = pr->capstr ? pr->capstr * 2 : 1024;
				pr->str = sp_xrealloc(pr->str, pr->capstr * sizeof *pr->str);
				pr->strn = sp_xrealloc(pr->strn, pr->capstr * sizeof *pr->strn);
			}
			if (!pr->nstr && f.sub.p != f.sub.end)
				return bad(r, f.at, "the first string of the table must be empty");
			pr->str[pr->nstr] = f.sub.p;
			pr->strn[pr->nstr++] = (uint32_t)(f.sub.end - f.sub.p);
			break;
		case P_PERIOD_TYPE:
			if (want_wt(r, &f, WT_LEN, "Profile") < 0)
				return -1;
			pa->period_type = f.sub;
			break;
		case P_DROP: case P_KEEP: case P_TIME: case P_DURATION: case P_PERIOD: case P_DEFAULT_TYPE:
			/* checked; of these only default_sample_type is used */
			if (want_wt(r, &f, WT_VARINT, "Profile") < 0)
				return -1;
			if (f.num == P_DEFAULT_TYPE) { pa->default_type = f.v; pa->default_at = f.at; }
			break;
		case P_COMMENT:
			if (get_nums(r, &f, &pa->comments, &pa->ncom, &pa->ccom, "Profile comment") < 0)
				return -1;
			break;
		}
		if (arr) {
			if (want_wt(r, &f, WT_LEN, "Profile") < 0)
				return -1;
			if (*n == *c) {
				*c = *c ? *c * 2 : 256;
				*arr = sp_xrealloc(*arr, *c * sizeof **arr);
			}
			(*arr)[(*n)++] = f;
		}
	}
	return k < 0 ? -1 : 0;
}

/* The profile's value columns, named and given units the first time;
 * an input after the first must have the same ones. */
static int declare_values(struct pprof_read *pr, const struct vtype *vt, const size_t *cols, int ncols,
			  const char *const *cname)
{
	struct sp_profile *p = pr->p;
	const char *vnames[SP_MAX_VALUES];
	for (int i = 0; i < ncols; i++)
		vnames[i] = cname[cols[i]];
	int pn = sp_profile_nvalues(p);
	if (!pn) {
		sp_profile_set_values(p, ncols, vnames);
		/* The sample types' units, as our commands show them: time
		 * in ns, bytes; a count is named by its type ("samples",
		 * "alloc_objects"); other units ("microseconds") as they are. */
		for (int i = 0; i < ncols; i++) {
			uint32_t u = pstr(pr, vt[cols[i]].unit);
			const char *us = sp_str(p, u);
			if (!strcmp(us, "nanoseconds"))
				sp_profile_set_unit(p, i, "ns");
			else if (strcmp(us, "count"))
				sp_profile_set_unit(p, i, us);
		}
		return 0;
	}
	int same = pn == ncols;
	for (int i = 0; same && i < ncols; i++)
		same = !strcmp(sp_profile_value_name(p, i), vnames[i]);
	if (!same)
		return sp_err_set(pr->r.err, "%s: its values (%s%s) differ from the inputs' before it (%s%s)", pr->r.name,
				  vnames[0], ncols > 1 ? ", ..." : "", sp_profile_value_name(p, 0), pn > 1 ? ", ..." : "");
	return 0;
}

/* Sample types and the columns read: cols[] are the indexes, in a
 * sample's values, of the profile's value columns. */
static int read_columns(struct pprof_read *pr, const struct parts *pa, const struct sp_read_opts *o, size_t *cols,
			int *ncols)
{
	struct sp_profile *p = pr->p;
	struct rd *r = &pr->r;
	size_t ntypes = pa->ntypes;
	struct vtype vt[SP_MAX_VALUES * 8], pt = { 0, 0 };
	for (size_t i = 0; i < ntypes; i++)
		if (read_vtype(pr, pa->types[i], &vt[i]) < 0)
			return -1;
	if (pa->period_type.p && read_vtype(pr, pa->period_type, &pt) < 0)
		return -1;
	if (!ntypes)
		return sp_err_off(r->err, r->name, 0, "no sample types: not a pprof profile");
	size_t def = ntypes - 1;
	if (pa->default_type) {
		uint32_t dt = 0;
		if (str_ref(pr, pa->default_at, pa->default_type, "default_sample_type", &dt) < 0)
			return -1;
		for (size_t i = 0; i < ntypes; i++)
			if (vt[i].type == dt)
				def = i;
	}
	/* Column names: samples/count -> "samples"; the period type (or
	 * cpu/nanoseconds) -> "period"; others by their type. */
	const char *cname[SP_MAX_VALUES * 8];
	int have_period = 0;
	for (size_t i = 0; i < ntypes; i++) {
		if (streq(pr, vt[i].type, "samples") && streq(pr, vt[i].unit, "count"))
			cname[i] = "samples";
		else if (!have_period && ((pt.type && vt[i].type == pt.type && vt[i].unit == pt.unit) ||
					  (streq(pr, vt[i].type, "cpu") && streq(pr, vt[i].unit, "nanoseconds")))) {
			cname[i] = "period";
			have_period = 1;
		} else {
			cname[i] = sp_str(p, pstr(pr, vt[i].type));
		}
	}
	*ncols = 0;
	if (o && o->value) {
		char *end;
		unsigned long ix = strtoul(o->value, &end, 10);
		size_t pick = ntypes;
		if (*o->value && !*end && ix < ntypes)
			pick = ix;
		for (size_t i = 0; i < ntypes && pick == ntypes; i++)
			if (!strcmp(cname[i], o->value) || streq(pr, vt[i].type, o->value))
				pick = i;
		if (pick == ntypes) {
			struct sp_buf have = SP_BUF_INIT;
			for (size_t i = 0; i < ntypes; i++)
				sp_buf_addf(&have, "%s%zu=%s/%s", i ? ", " : "", i, sp_str(p, pstr(pr, vt[i].type)),
					    sp_str(p, pstr(pr, vt[i].unit)));
			sp_err_set(r->err, "%s: no sample type '%s' (the profile has %s)", r->name, o->value,
				   sp_buf_cstr(&have));
			sp_buf_release(&have);
			return -1;
		}
		cols[(*ncols)++] = pick;
	} else {
		if (ntypes > SP_MAX_VALUES)
			return sp_err_set(r->err, "%s: %zu sample types, more than %d: pick one with --value", r->name,
					  ntypes, SP_MAX_VALUES);
		if (strcmp(cname[def], "period"))
			cols[(*ncols)++] = def;
		for (size_t i = 0; i < ntypes; i++)
			if (i != def || !strcmp(cname[def], "period"))
				cols[(*ncols)++] = i;
	}
	return declare_values(pr, vt, cols, *ncols, cname);
}

/* Comments "key=value" are metadata (the writer puts them there). */
static int read_comments(struct pprof_read *pr, const struct parts *pa)
{
	for (size_t i = 0; i < pa->ncom; i++) {
		uint32_t ci = 0;
		if (str_ref(pr, pr->r.base, pa->comments[i], "a comment", &ci) < 0)
			return -1;
		const char *s = (const char *)pr->str[ci];
		const char *eq = memchr(s, '=', pr->strn[ci]);
		char *key = sp_xstrndup(s, eq ? (size_t)(eq - s) : strlen("comment"));
		if (!eq)
			memcpy(key, "comment", 7);
		char *val = eq ? sp_xstrndup(eq + 1, pr->strn[ci] - (size_t)(eq + 1 - s)) : sp_xstrndup(s, pr->strn[ci]);
		sp_meta_add(pr->p, key, val);
		free(key);
		free(val);
	}
	return 0;
}

/* Functions (name, file) and mappings (file), by id. */
static int read_functions(struct pprof_read *pr, const struct parts *pa)
{
	struct rd *r = &pr->r;
	struct field f;
	int k;
	for (size_t i = 0; i < pa->nf; i++) {
		struct pb b = pa->funcs[i].sub;
		uint64_t id = 0;
		uint32_t name = 0, file = 0;
		while ((k = next_field(r, &b, &f, "Function")) > 0) {
			if (f.num < F_ID || f.num > 5)
				continue;
			if (want_wt(r, &f, WT_VARINT, "Function") < 0)
				return -1;
			if (f.num == F_ID)
				id = f.v;
			else if (f.num == F_NAME && str_ref(pr, f.at, f.v, "Function name", &name) < 0)
				return -1;
			else if (f.num == F_FILE && str_ref(pr, f.at, f.v, "Function filename", &file) < 0)
				return -1;
			else if (f.num == F_SYSTEM_NAME && str_ref(pr, f.at, f.v, "Function system_name", &(uint32_t){ 0 }) < 0)
				return -1;
		}
		if (k < 0 || map_id(pr, &pr->fn_ix, pa->funcs[i].at, id, pr->nfn, "function") < 0)
			return -1;
		if (pr->nfn == pr->capfn) {
			pr->capfn = pr->capfn ? pr->capfn * 2 : 256;
			pr->fns = sp_xrealloc(pr->fns, pr->capfn * sizeof *pr->fns);
		}
		pr->fns[pr->nfn][0] = name;
		pr->fns[pr->nfn++][1] = file;
	}
	for (size_t i = 0; i < pa->nm; i++) {
		struct pb b = pa->mappings[i].sub;
		uint64_t id = 0;
		uint32_t file = 0;
		while ((k = next_field(r, &b, &f, "Mapping")) > 0) {
			if (f.num > 10)
				continue;
			if (want_wt(r, &f, WT_VARINT, "Mapping") < 0)
				return -1;
			if (f.num == M_ID)
				id = f.v;
			else if (f.num == M_FILE && str_ref(pr, f.at, f.v, "Mapping filename", &file) < 0)
				return -1;
			else if (f.num == M_BUILD_ID && str_ref(pr, f.at, f.v, "Mapping build_id", &(uint32_t){ 0 }) < 0)
				return -1;
		}
		if (k < 0 || map_id(pr, &pr->map_ix, pa->mappings[i].at, id, pr->nmaps, "mapping") < 0)
			return -1;
		if (pr->nmaps == pr->capmaps) {
			pr->capmaps = pr->capmaps ? pr->capmaps * 2 : 64;
			pr->maps = sp_xrealloc(pr->maps, pr->capmaps * sizeof *pr->maps);
		}
		pr->maps[pr->nmaps++] = file;
	}
	return 0;
}

/* The label keys samples are read with: thread, tid, pid and tag are
 * kept; up to 8 others are named in a warning. */
struct label_keys {
	uint32_t thread, tid, pid, tag; /* string indexes, 0 = absent */
	uint32_t other[8];
	size_t nother, more_other;
};

/* One sample's fields. nums and vals are reused from sample to sample,
 * so reading one allocates nothing once they have grown. */
struct sample_in {
	uint64_t *nums; /* location ids, leaf first */
	size_t nnums, cnums;
	uint64_t *vals;
	size_t nvals, cvals;
	uint32_t tname, tag; /* string indexes */
	int64_t tid, pid;
	int has_thread;
};

/* A sample's label: one of the kept keys into s, another key noted. */
static int read_label(struct pprof_read *pr, const struct field *f, struct label_keys *lk, struct sample_in *s)
{
	struct rd *r = &pr->r;
	if (want_wt(r, f, WT_LEN, "Sample") < 0)
		return -1;
	struct pb lb = f->sub;
	struct field g;
	uint32_t key = 0, str = 0;
	uint64_t num = 0;
	int kk, has_num = 0;
	while ((kk = next_field(r, &lb, &g, "Label")) > 0) {
		if (g.num < L_KEY || g.num > L_UNIT)
			continue;
		if (want_wt(r, &g, WT_VARINT, "Label") < 0)
			return -1;
		uint32_t dummy;
		if (g.num == L_KEY && str_ref(pr, g.at, g.v, "Label key", &key) < 0)
			return -1;
		if (g.num == L_STR && str_ref(pr, g.at, g.v, "Label str", &str) < 0)
			return -1;
		if (g.num == L_UNIT && str_ref(pr, g.at, g.v, "Label num_unit", &dummy) < 0)
			return -1;
		if (g.num == L_NUM) {
			num = g.v;
			has_num = 1;
		}
	}
	if (kk != 0)
		return -1;
	if (key && key == lk->thread && str) {
		s->tname = str;
		s->has_thread = 1;
	} else if (key && key == lk->tid && has_num) {
		s->tid = (int64_t)num;
		s->has_thread = 1;
	} else if (key && key == lk->pid && has_num) {
		s->pid = (int64_t)num;
		s->has_thread = 1;
	} else if (key && key == lk->tag && str) {
		s->tag = str;
	} else {
		size_t q = 0;
		while (q < lk->nother && lk->other[q] != key)
			q++;
		if (q == lk->nother && lk->nother < 8)
			lk->other[lk->nother++] = key;
		else if (q == lk->nother)
			lk->more_other++;
	}
	return 0;
}

/* A sample's location ids, values and labels into s. */
static int read_sample_fields(struct pprof_read *pr, struct pb b, struct label_keys *lk, struct sample_in *s)
{
	struct rd *r = &pr->r;
	struct field f;
	int k;
	s->nnums = s->nvals = 0;
	s->tname = s->tag = 0;
	s->tid = s->pid = -1;
	s->has_thread = 0;
	while ((k = next_field(r, &b, &f, "Sample")) > 0) {
		if (f.num == S_LOCATION) {
			if (get_nums(r, &f, &s->nums, &s->nnums, &s->cnums, "Sample location_id") < 0)
				return -1;
		} else if (f.num == S_VALUE) {
			if (get_nums(r, &f, &s->vals, &s->nvals, &s->cvals, "Sample value") < 0)
				return -1;
		} else if (f.num == S_LABEL) {
			if (read_label(pr, &f, lk, s) < 0)
				return -1;
		}
	}
	return k < 0 ? -1 : 0;
}

/* The stack of a sample's locations (leaf first), as a node. A tag
 * label makes its root frame synthetic: the tag's root frame (pmerge
 * --tag's) is turned into one, a tag from elsewhere gets one added. */
static int sample_stack(struct pprof_read *pr, const struct sample_in *s, const unsigned char *at, uint32_t *out)
{
	struct sp_profile *p = pr->p;
	uint32_t node = 0;
	int first = 1;
	for (size_t j = s->nnums; j-- > 0;) {
		uint32_t li;
		if (lookup(pr, &pr->loc_ix, at, s->nums[j], "location", &li) < 0)
			return -1;
		const struct loc *L = &pr->locs[li];
		for (uint32_t q = 0; q < L->n; q++) {
			uint32_t fr = pr->lframes[L->first + q];
			if (first && s->tag) {
				uint32_t tagname = pstr(pr, s->tag);
				if (sp_frame_get(p, fr)->name != tagname)
					node = sp_node_intern(p, 0, sp_frame_named(p, sp_str(p, tagname),
										   sp_str_len(p, tagname), SP_KIND_SYNTHETIC));
				else
					fr = sp_frame_named(p, sp_str(p, tagname), sp_str_len(p, tagname),
							    SP_KIND_SYNTHETIC);
			}
			first = 0;
			node = sp_node_intern(p, node, fr);
		}
	}
	*out = node;
	return 0;
}

/* Labels the data model has no place for (Go's pprof.Do labels): said
 * once, not dropped silently. */
static void warn_labels(struct pprof_read *pr, const struct label_keys *lk, struct sp_read_opts *o)
{
	struct sp_buf b = SP_BUF_INIT;
	for (size_t q = 0; q < lk->nother; q++) {
		sp_buf_adds(&b, q ? ", " : "");
		sp_buf_add(&b, pr->str[lk->other[q]], pr->strn[lk->other[q]]);
	}
	struct sp_err w;
	sp_err_set(&w, "%s: pprof labels not kept (only thread, tid, pid and tag are): %s%s", pr->r.name,
		   sp_buf_cstr(&b), lk->more_other ? ", ..." : "");
	o->warn(o->warn_ctx, &w);
	sp_buf_release(&b);
}

/* The samples, each to the sink with the columns cols[] as its values. */
static int read_samples(struct pprof_read *pr, const struct parts *pa, const size_t *cols, int ncols,
			struct sp_sink *sink, struct sp_read_opts *o)
{
	struct sp_profile *p = pr->p;
	struct label_keys lk;
	memset(&lk, 0, sizeof lk);
	for (uint32_t i = 1; i < pr->nstr; i++) {
		if (streq(pr, i, "thread")) lk.thread = i;
		else if (streq(pr, i, "tid")) lk.tid = i;
		else if (streq(pr, i, "pid")) lk.pid = i;
		else if (streq(pr, i, "tag")) lk.tag = i;
	}
	struct sample_in s;
	memset(&s, 0, sizeof s);
	int rc = -1;
	for (size_t i = 0; i < pa->ns; i++) {
		const unsigned char *at = pa->samples[i].at;
		if (read_sample_fields(pr, pa->samples[i].sub, &lk, &s) < 0)
			goto out;
		if (s.nvals != pa->ntypes) {
			bad(&pr->r, at, "sample has %zu values, the profile %zu sample types", s.nvals, pa->ntypes);
			goto out;
		}
		struct sp_sample smp;
		memset(&smp, 0, sizeof smp);
		smp.time = SP_NO_TIME;
		for (int j = 0; j < ncols; j++)
			smp.values[j] = (double)(int64_t)s.vals[cols[j]];
		if (sample_stack(pr, &s, at, &smp.stack) < 0)
			goto out;
		if (s.has_thread)
			smp.thread = sp_thread_intern(p, s.pid, s.tid, pstr(pr, s.tname));
		if (sink->sample && sink->sample(sink, p, &smp, pr->r.err) < 0)
			goto out;
	}
	if (lk.nother && o && o->warn)
		warn_labels(pr, &lk, o);
	rc = 0;
out:
	free(s.nums);
	free(s.vals);
	return rc;
}

int sp_pprof_read(struct sp_input *in, struct sp_profile *p, struct sp_sink *sink, struct sp_read_opts *o,
		  struct sp_err *err)
{
	struct sp_buf data = SP_BUF_INIT;
	if (read_all(in, &data, err) < 0) {
		sp_buf_release(&data);
		return -1;
	}
	struct pprof_read pr;
	memset(&pr, 0, sizeof pr);
	pr.p = p;
	pr.r.name = sp_input_name(in);
	pr.r.err = err;
	pr.r.base = (const unsigned char *)data.p;
	sp_u64map_init(&pr.fn_ix);
	sp_u64map_init(&pr.map_ix);
	sp_u64map_init(&pr.loc_ix);
	const unsigned char *base = pr.r.base;
	struct parts pa;
	memset(&pa, 0, sizeof pa);
	pa.period_type = (struct pb){ base, NULL, NULL };
	size_t cols[SP_MAX_VALUES];
	int ncols = 0, rc = -1;

	if (read_parts(&pr, (struct pb){ base, base, base + data.len }, &pa) < 0)
		goto out;
	if (!pr.nstr) {
		sp_err_off(err, pr.r.name, data.len, "no string table: not a pprof profile");
		goto out;
	}
	pr.str_id = sp_xcalloc(pr.nstr, sizeof *pr.str_id);
	if (read_columns(&pr, &pa, o, cols, &ncols) < 0 || read_comments(&pr, &pa) < 0)
		goto out;
	if (pa.ncom && sink->meta && sink->meta(sink, p, err) < 0)
		goto out;
	if (read_functions(&pr, &pa) < 0)
		goto out;
	for (size_t i = 0; i < pa.nlo; i++)
		if (read_location(&pr, pa.locs[i].sub, pa.locs[i].at) < 0)
			goto out;
	if (read_samples(&pr, &pa, cols, ncols, sink, o) < 0)
		goto out;
	if (sink->end_input && sink->end_input(sink, p, err) < 0)
		goto out;
	rc = 0;
out:
	parts_release(&pa);
	pprof_read_release(&pr);
	sp_buf_release(&data);
	return rc;
}

/* ======================= probe ======================= */

/* The first bytes must walk as a Profile message: known field numbers with
 * their wire types, lengths that fit (the last field may run past a
 * partial buffer), and sample types that parse as ValueType. */
static int probe(const char *buf, size_t n, int complete)
{
	static const unsigned char wt_of[P_NFIELDS] = { 9, WT_LEN, WT_LEN, WT_LEN, WT_LEN, WT_LEN, WT_LEN,
							WT_VARINT, WT_VARINT, WT_VARINT, WT_VARINT, WT_LEN,
							WT_VARINT, 9, WT_VARINT };
	struct sp_err e;
	struct rd r = { "probe", &e, (const unsigned char *)buf };
	struct pb b = { r.base, r.base, r.base + n };
	struct field f;
	int k, fields = 0, strings = 0;
	while ((k = next_field(&r, &b, &f, "Profile")) > 0) {
		if (f.num >= P_NFIELDS)
			return 0;
		if (f.num == P_COMMENT) {
			if (f.wt != WT_VARINT && f.wt != WT_LEN)
				return 0;
		} else if (f.wt != wt_of[f.num]) {
			return 0;
		}
		if (f.num == P_SAMPLE_TYPE || f.num == P_PERIOD_TYPE) {
			struct pb s = f.sub;
			struct field g;
			int kk;
			while ((kk = next_field(&r, &s, &g, "ValueType")) > 0)
				if ((g.num != VT_TYPE && g.num != VT_UNIT) || g.wt != WT_VARINT)
					return 0;
			if (kk < 0)
				return 0;
		}
		strings += f.num == P_STRING;
		fields++;
	}
	/* A field cut by the end of a partial probe buffer is fine. */
	if (k < 0 && (complete || !(strstr(e.msg, "runs past the end") || strstr(e.msg, "truncated"))))
		return 0;
	if (fields < 3 && !(complete && strings && fields >= 2))
		return 0;
	return 90;
}

static int read_fmt(struct sp_input *in, struct sp_profile *p, struct sp_sink *sink, struct sp_read_opts *o,
		    struct sp_err *err)
{
	return sp_pprof_read(in, p, sink, o, err);
}

const struct sp_format sp_format_pprof = { "pprof", "pprof profile.proto (gzipped or not)", probe, read_fmt };
