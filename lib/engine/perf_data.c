/* perf_data.c — reader of perf.data (file mode and pipe mode); see perf_data.h.
 *
 * Written from perf's format documentation
 * (tools/perf/Documentation/perf.data-file-format.txt) and the kernel's
 * <linux/perf_event.h>.  Layers, bottom up:
 *   - input: file mode maps the file (a pipe or gzip input is first copied
 *     to an unlinked temporary file, so memory never grows with the file);
 *     pipe mode reads record by record and never seeks.
 *   - header: attrs, their sample ids, feature sections (event names,
 *     build ids, os release, hostname, cmdline).
 *   - records: bounds-checked parsing, queued and delivered in time order
 *     at FINISHED_ROUND as perf does.
 *   - engine: threads, maps, unwinding and symbols, into profile samples.
 * Every multi-byte field is read with memcpy: nothing assumes alignment.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "format.h"
#include "perf_script.h"
#include "perf_data.h"
#include "elfmod.h"
#include "perf_records.h"
#include "symbols.h"
#include "collect.h"

/* ---- constants perf's own tools define (not in the kernel's header) ---- */

enum {
	R_HEADER_ATTR = 64, R_HEADER_EVENT_TYPE = 65, R_HEADER_TRACING_DATA = 66, R_HEADER_BUILD_ID = 67,
	R_FINISHED_ROUND = 68, R_ID_INDEX = 69, R_AUXTRACE_INFO = 70, R_AUXTRACE = 71, R_AUXTRACE_ERROR = 72,
	R_EVENT_UPDATE = 78, R_HEADER_FEATURE = 80, R_COMPRESSED = 81,
};
enum { F_BUILD_ID = 2, F_HOSTNAME = 3, F_OSRELEASE = 4, F_CMDLINE = 11, F_EVENT_DESC = 12, F_COMPRESSED = 27 };
enum { EVENT_UPDATE_NAME = 2 };
#define MISC_BUILD_ID_SIZE (1u << 15)  /* HEADER_BUILD_ID: the size is in the record */
#define MISC_MMAP_BUILD_ID (1u << 14)  /* MMAP2 carries a build id, not dev/ino */
#define MISC_COMM_EXEC (1u << 13)
#define MISC_MMAP_DATA (1u << 13)
#define CTX_MAX ((uint64_t)-4095)      /* callchain entries >= this are PERF_CONTEXT_* */

#define KNOWN_SAMPLE_TYPE ((1ull << 25) - 1) /* IP .. WEIGHT_STRUCT */
#define KNOWN_READ_FORMAT 31ull            /* TOTAL_TIME_ENABLED .. LOST */
#define MAX_RECORD (64u << 20)             /* sizes are u16, tracing/auxtrace data larger */
#define MAX_ATTRS 4096

static inline uint64_t rd64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static inline uint32_t rd32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static inline uint16_t rd16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return v; }

/* ---- state ---- */

struct pattr {
	struct perf_event_attr a; /* the recorded attr, zero-filled past its size */
	uint32_t name;            /* string id */
	int named;                /* by EVENT_DESC / EVENT_UPDATE (else a default) */
};

struct qent {
	uint64_t time, seq;
	uint64_t pos; /* of the record in the base (map or pipe arena) */
	uint32_t len;
	uint64_t off; /* in the input, for messages */
};

struct bid { uint32_t path; uint8_t len; uint8_t id[20]; };

struct eng_sample {
	struct sp_perf_sample s;
	uint32_t event; /* string id */
};

struct pd {
	int period_only; /* the profile's one column is folded text's "value" */
	struct sp_input *in;
	const char *name;
	struct sp_profile *p;
	struct sp_sink *sink;
	struct sp_read_opts *o;
	struct sp_err *err;
	int pipe;

	/* file mode */
	const uint8_t *map;
	size_t mapsize;
	int tmpfd;
	/* pipe mode: records read so far and not yet delivered */
	struct sp_buf arena;
	struct sp_buf scratch;
	uint64_t inoff;

	/* header */
	struct pattr *attrs;
	size_t nattrs;
	struct sp_u64map ids; /* sample id -> attr index + 1 */
	int id_sample_idx;    /* u64 index of the id in a sample, -1 none */
	int id_trailer_back;  /* u64s from the end of a non-sample record, 0 none */
	int dwarf;            /* an attr samples user registers and stack */
	char *osrelease;
	struct bid *bids;
	size_t nbids;

	/* ordering */
	struct qent *q;
	size_t nq, capq;
	struct qent *qtmp; /* flush's merge buffer */
	size_t capqtmp;
	uint64_t seq, max_time, next_flush;

	/* stats */
	uint64_t samples, lost, lost_records, lost_samples;

	/* engine */
	struct sp_collect *eng;
	struct sp_perf_handler h;
	struct sp_sink renamer;  /* in front of sink: perf's names */
	struct sp_u64map named;  /* tids perf named (COMM, FORK, or a placeholder) */
	struct sp_u64map located; /* recorded path string id -> file string id the engine opened */
	struct sp_u64map rename;  /* frame id -> renamed frame id + 1 */
	struct sp_u64map renode;  /* node id -> renamed node id + 1 */
	struct modinfo **mods;
	size_t nmods;
	struct sp_u64map modidx;  /* module string id -> index + 1 (0 = none) */
	uint64_t *ccbuf;
	size_t capcc;
	struct sp_buf tname;
	uint32_t filter_event;
	int filter_defaulted, filter_warned;
	struct eng_sample es; /* the sample being delivered (parse_sample) */
	int regs_dirty;       /* es.s.regs hold a sample's registers */
};

static int fail_off(struct pd *d, uint64_t off, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail_off(struct pd *d, uint64_t off, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return sp_err_off(d->err, d->name, off, "%s", msg);
}

static void warn(struct pd *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(struct pd *d, const char *fmt, ...)
{
	if (!d->o->warn)
		return;
	struct sp_err e;
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	sp_err_set(&e, "%s: %s", d->name, msg);
	d->o->warn(d->o->warn_ctx, &e);
}

/* A cut input, as for a binary stream without its trailer (stackpipe(7)):
 * an error naming the offset, or with --partial (o->partial) a warning
 * that -q does not hide, the samples before the cut having been used.
 * `whole` says every sample is there (only sections after the data are
 * cut): then it is always a warning. */
static int cut_at(struct pd *d, uint64_t off, int whole, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int cut_at(struct pd *d, uint64_t off, int whole, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (!whole && !d->o->partial)
		return sp_err_off(d->err, d->name, off, "%s (--partial uses the %llu samples before the cut)", msg,
				  (unsigned long long)d->samples);
	if (d->o->warn) {
		struct sp_err e;
		sp_err_set(&e, "%s: offset %llu: %s%s", d->name, (unsigned long long)off, msg,
			   whole ? "" : "; using the samples before the cut (--partial)");
		d->o->warn(d->o->warn_ctx, &e);
	}
	return 0;
}

/* ---- probe ---- */

static const char MAGIC[8] = { 'P', 'E', 'R', 'F', 'I', 'L', 'E', '2' };
static const char MAGIC_BE[8] = { '2', 'E', 'L', 'I', 'F', 'R', 'E', 'P' };

int sp_perfdata_probe(const char *buf, size_t n, int complete)
{
	(void)complete;
	if (n < 8)
		return 0;
	if (!memcmp(buf, MAGIC, 8) || !memcmp(buf, MAGIC_BE, 8) || !memcmp(buf, "PERFFILE", 8))
		return 100;
	return 0;
}

/* ---- event names ---- */

static const char *default_name(const struct perf_event_attr *a, char *tmp, size_t n)
{
	static const char *const hw[] = { "cycles", "instructions", "cache-references", "cache-misses",
					  "branches", "branch-misses", "bus-cycles", "stalled-cycles-frontend",
					  "stalled-cycles-backend", "ref-cycles" };
	static const char *const sw[] = { "cpu-clock", "task-clock", "page-faults", "context-switches",
					  "cpu-migrations", "minor-faults", "major-faults", "alignment-faults",
					  "emulation-faults", "dummy", "bpf-output", "cgroup-switches" };
	if (a->type == PERF_TYPE_HARDWARE && a->config < sizeof hw / sizeof hw[0])
		return hw[a->config];
	if (a->type == PERF_TYPE_SOFTWARE && a->config < sizeof sw / sizeof sw[0])
		return sw[a->config];
	snprintf(tmp, n, "event-%u-0x%llx", a->type, (unsigned long long)a->config);
	return tmp;
}

/* ---- attrs ---- */

/* Take one attr (raw bytes of the recorded size) and its ids. */
static int add_attr(struct pd *d, uint64_t off, const uint8_t *raw, uint32_t size, const uint8_t *ids,
		    uint64_t nids)
{
	if (d->nattrs >= MAX_ATTRS)
		return fail_off(d, off, "more than %d event attrs", MAX_ATTRS);
	if (size < PERF_ATTR_SIZE_VER0)
		return fail_off(d, off, "event attr size %u is smaller than the smallest perf writes (%u)", size,
				PERF_ATTR_SIZE_VER0);
	struct pattr pa;
	memset(&pa, 0, sizeof pa);
	memcpy(&pa.a, raw, size < sizeof pa.a ? size : sizeof pa.a);
	if (pa.a.sample_type & ~KNOWN_SAMPLE_TYPE)
		return fail_off(d, off, "event attr has sample_type bits 0x%llx this reader does not know",
				(unsigned long long)(pa.a.sample_type & ~KNOWN_SAMPLE_TYPE));
	if (pa.a.read_format & ~KNOWN_READ_FORMAT)
		return fail_off(d, off, "event attr has read_format bits 0x%llx this reader does not know",
				(unsigned long long)(pa.a.read_format & ~KNOWN_READ_FORMAT));
	char tmp[64];
	const char *nm = default_name(&pa.a, tmp, sizeof tmp);
	pa.name = sp_str_intern(d->p, nm, strlen(nm));
	if (pa.a.sample_type & (PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER))
		d->dwarf = 1;
	d->attrs = sp_xrealloc(d->attrs, (d->nattrs + 1) * sizeof *d->attrs);
	d->attrs[d->nattrs++] = pa;
	for (uint64_t i = 0; i < nids; i++) {
		uint64_t id = rd64(ids + 8 * i);
		if (id == UINT64_MAX)
			id--;
		int found;
		*sp_u64map_slot(&d->ids, id, &found) = (uint32_t)d->nattrs;
	}
	/* Where the sample id sits: perf requires the same place in every attr. */
	uint64_t st = pa.a.sample_type;
	int si = -1, tb = 0;
	if (st & PERF_SAMPLE_IDENTIFIER) {
		si = 0;
		tb = 1;
	} else if (st & PERF_SAMPLE_ID) {
		si = !!(st & PERF_SAMPLE_IP) + !!(st & PERF_SAMPLE_TID) + !!(st & PERF_SAMPLE_TIME) +
		     !!(st & PERF_SAMPLE_ADDR);
		tb = 1 + !!(st & PERF_SAMPLE_STREAM_ID) + !!(st & PERF_SAMPLE_CPU);
	}
	if (d->nattrs == 1) {
		d->id_sample_idx = si;
		d->id_trailer_back = pa.a.sample_id_all ? tb : 0;
	} else if (si != d->id_sample_idx) {
		return fail_off(d, off, "events with sample ids in different places (sample_type 0x%llx)",
				(unsigned long long)st);
	}
	return 0;
}

/* The attr of a record: by its sample id when there are several. */
static const struct pattr *attr_of(struct pd *d, const uint8_t *r, uint32_t size, int sample)
{
	if (d->nattrs == 1)
		return &d->attrs[0];
	if (!d->nattrs)
		return NULL;
	uint64_t id;
	if (sample) {
		if (d->id_sample_idx < 0 || 8 + 8 * (uint64_t)d->id_sample_idx + 8 > size)
			return NULL;
		id = rd64(r + 8 + 8 * d->id_sample_idx);
	} else {
		if (!d->id_trailer_back || 8 + 8 * (uint64_t)d->id_trailer_back > size)
			return NULL;
		id = rd64(r + size - 8 * d->id_trailer_back);
	}
	if (id == UINT64_MAX)
		id--;
	int found;
	uint32_t i = sp_u64map_get(&d->ids, id, &found);
	return found && i ? &d->attrs[i - 1] : NULL;
}

/* ---- features ---- */

/* A perf_header_string: u32 length (with padding) then the text. */
static int hstring(const uint8_t *p, size_t n, size_t *used, const char **s, size_t *len)
{
	if (n < 4)
		return -1;
	uint32_t l = rd32(p);
	if (l > n - 4)
		return -1;
	*s = (const char *)p + 4;
	*len = strnlen(*s, l);
	*used = 4 + (size_t)l;
	return 0;
}

static void add_bid(struct pd *d, const char *path, size_t plen, const uint8_t *id, size_t idlen)
{
	if (idlen > 20)
		idlen = 20;
	d->bids = sp_xrealloc(d->bids, (d->nbids + 1) * sizeof *d->bids);
	struct bid *b = &d->bids[d->nbids++];
	b->path = sp_str_intern(d->p, path, plen);
	b->len = (uint8_t)idlen;
	memcpy(b->id, id, idlen);
}

/* perf_record_header_build_id records: header, pid, build id (20 bytes +
 * size + padding to 24), file name. */
static int build_id_records(struct pd *d, const uint8_t *p, size_t n, uint64_t off)
{
	while (n >= 8) {
		uint16_t misc = rd16(p + 4), size = rd16(p + 6);
		if (size < 8 + 4 + 24 || size > n)
			return fail_off(d, off, "build id record of size %u in a section of %zu bytes", size, n);
		const uint8_t *id = p + 12;
		size_t idlen = misc & MISC_BUILD_ID_SIZE ? id[20] : 20;
		const char *fn = (const char *)p + 36;
		size_t fl = strnlen(fn, size - 36u);
		add_bid(d, fn, fl, id, idlen);
		p += size;
		n -= size;
		off += size;
	}
	return 0;
}

static int event_desc(struct pd *d, const uint8_t *p, size_t n, uint64_t off)
{
	if (n < 8)
		return fail_off(d, off, "event description section of %zu bytes", n);
	uint32_t nr = rd32(p), asz = rd32(p + 4);
	p += 8;
	n -= 8;
	for (uint32_t i = 0; i < nr; i++) {
		if (asz > n || n - asz < 4)
			return fail_off(d, off, "event description %u runs past its section", i);
		p += asz;
		n -= asz;
		uint32_t nids = rd32(p);
		p += 4;
		n -= 4;
		const char *s;
		size_t sl, used;
		if (hstring(p, n, &used, &s, &sl) < 0)
			return fail_off(d, off, "event description %u: bad name", i);
		p += used;
		n -= used;
		if ((uint64_t)nids * 8 > n)
			return fail_off(d, off, "event description %u: %u ids run past its section", i, nids);
		uint32_t name = sp_str_intern(d->p, s, sl);
		for (uint32_t k = 0; k < nids; k++) {
			uint64_t id = rd64(p + 8 * k);
			if (id == UINT64_MAX)
				id--;
			int found;
			uint32_t a = sp_u64map_get(&d->ids, id, &found);
			if (found && a) {
				d->attrs[a - 1].name = name;
				d->attrs[a - 1].named = 1;
			}
		}
		/* Without ids (one event) the descriptions follow attr order. */
		if (!nids && i < d->nattrs) {
			d->attrs[i].name = name;
			d->attrs[i].named = 1;
		}
		p += 8 * (size_t)nids;
		n -= 8 * (size_t)nids;
	}
	return 0;
}

static int meta_str(struct pd *d, const char *key, const uint8_t *p, size_t n)
{
	const char *s;
	size_t sl, used;
	if (hstring(p, n, &used, &s, &sl) < 0)
		return -1;
	char *v = sp_xstrndup(s, sl);
	sp_meta_add(d->p, key, v);
	if (!strcmp(key, "os-release")) {
		free(d->osrelease);
		d->osrelease = v;
	} else {
		free(v);
	}
	return 0;
}

static int feature(struct pd *d, int f, const uint8_t *p, size_t n, uint64_t off)
{
	switch (f) {
	case F_BUILD_ID:
		return build_id_records(d, p, n, off);
	case F_HOSTNAME:
		if (meta_str(d, "hostname", p, n) < 0)
			return fail_off(d, off, "bad hostname section");
		break;
	case F_OSRELEASE:
		if (meta_str(d, "os-release", p, n) < 0)
			return fail_off(d, off, "bad os release section");
		break;
	case F_CMDLINE: {
		if (n < 4)
			return fail_off(d, off, "bad cmdline section");
		uint32_t nr = rd32(p);
		size_t k = 4;
		struct sp_buf b = SP_BUF_INIT;
		for (uint32_t i = 0; i < nr; i++) {
			const char *s;
			size_t sl, used;
			if (hstring(p + k, n - k, &used, &s, &sl) < 0) {
				sp_buf_release(&b);
				return fail_off(d, off, "bad cmdline section");
			}
			if (i)
				sp_buf_addc(&b, ' ');
			sp_buf_add(&b, s, sl);
			k += used;
		}
		sp_meta_add(d->p, "command", sp_buf_cstr(&b));
		sp_buf_release(&b);
		break;
	}
	case F_EVENT_DESC:
		return event_desc(d, p, n, off);
	case F_COMPRESSED:
		break; /* the COMPRESSED records say it */
	default:
		break;
	}
	return 0;
}

/* ---- the engine (lib/engine/collect.h), offline ----
 *
 * Threads, maps, unwinding and the stack cache are the sampling engine's,
 * as for pcollect.  This file adds what a recording needs: which file
 * stands for a mapping (locate: build ids), and perf's names for frames
 * (a sink in front of the caller's renames each new stack once).
 */

static const struct bid *recorded_bid(struct pd *d, uint32_t path)
{
	for (size_t i = d->nbids; i-- > 0;)
		if (d->bids[i].path == path)
			return &d->bids[i];
	return NULL;
}

static int same_bid(const char *path, const struct bid *b)
{
	uint8_t id[20];
	size_t n = 0;
	return sp_elf_build_id(path, id, &n) == 0 && n == b->len && !memcmp(id, b->id, n);
}

/* The engine's locate: the file for mapping m.  The path itself when its
 * build id is the recording's, else perf's build-id cache copy
 * (~/.debug/.build-id/ab/cdef.../elf), else refused with one warning (its
 * frames are named [FILE], as perf names them). */
static int locate(void *ctx, int pid, const struct sp_map *m, char *buf, size_t n)
{
	struct pd *d = ctx;
	(void)pid;
	const char *path = m->path;
	int vdso = !strcmp(path, "[vdso]");
	if (!vdso && (path[0] != '/' || path[1] == '/'))
		return 0; /* anonymous memory, //anon */
	uint32_t ps = sp_str_intern(d->p, path, strlen(path));
	const struct bid *b = recorded_bid(d, ps);
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if (!b || !b->len) {
		/* no build id recorded for the vdso: perf script then names it
		 * after its own, as this does when the kernel is this one */
		if (vdso) {
			struct utsname u;
			return !d->osrelease || (uname(&u) == 0 && !strcmp(u.release, d->osrelease)) ? 2 : 0;
		}
		uint8_t id[20];
		size_t il;
		if (sp_elf_build_id(path, id, &il) < 0) {
			warn(d, "%s: missing; its frames are named [%s]", path, base);
			return 0;
		}
		snprintf(buf, n, "%s", path);
		*sp_u64map_slot(&d->located, ps, &(int){ 0 }) = ps;
		return 1;
	}
	if (!vdso && same_bid(path, b)) {
		snprintf(buf, n, "%s", path);
		*sp_u64map_slot(&d->located, ps, &(int){ 0 }) = ps;
		return 1;
	}
	char hex[41];
	for (size_t i = 0; i < b->len; i++)
		snprintf(hex + 2 * i, 3, "%02x", b->id[i]);
	const char *home = getenv("HOME");
	static const char *const leaf[] = { "/elf", "/vdso", "" };
	for (size_t i = 0; home && *home && i < 3; i++) {
		snprintf(buf, n, "%s/.debug/.build-id/%.2s/%s%s", home, hex, hex + 2, leaf[i]);
		if (same_bid(buf, b)) {
			uint32_t cs = sp_str_intern(d->p, buf, strlen(buf));
			*sp_u64map_slot(&d->located, ps, &(int){ 0 }) = cs;
			return 1;
		}
	}
	if (!vdso) {
		uint8_t id[20];
		size_t il;
		int have = sp_elf_build_id(path, id, &il) == 0;
		warn(d, "%s: %s; its frames are named [%s] (build id %s, not in ~/.debug)", path,
		     have ? "build id differs from the recording's" : "missing", base, hex);
	}
	return 0;
}

/* ---- perf's names ----
 *
 * perf script names an address after the symbol table it loads, by the
 * rules of sp_psyms_build (lib/capture/symbols.h).  With DWARF callchains it names
 * functions after DWARF, as addr2line does.  libdwfl's own choice differs
 * ("__mprotect" for perf's "mprotect"), so the engine's frames are renamed:
 * each function's name gives its start address, which gives perf's name.
 */
struct modinfo {
	Dwfl *dwfl;                /* our own, when the engine has no module of the file */
	Dwfl_Module *m;
	const struct sp_psyms *ps; /* the engine's table, or &own */
	struct sp_psyms own;
	struct sp_u64map byname; /* hash of the engine's spelling -> index + 1 into starts */
	uint64_t *starts;
	size_t nstarts, capstarts;
	int names_built;
	struct pd *d;
	struct sp_buf key;
};

/* The engine's spelling of a symbol (symbols.c: no version, demangled
 * without parameters, return type or clone suffix), into b. */
static void engine_spelling(struct pd *d, const char *nm, struct sp_buf *b)
{
	sp_buf_reset(b);
	char *dm = sp_demangle(nm);
	if (!dm) {
		const char *at = strchr(nm, '@');
		sp_buf_add(b, nm, at && at != nm ? (size_t)(at - nm) : strlen(nm));
		return;
	}
	size_t start, n = sp_cxx_spelling(dm, &start);
	sp_buf_add(b, dm + start, n - start);
	free(dm);
}

/* One symbol into t->byname: the engine's spelling -> its start. */
static void byname_add(void *ctx, const char *nm, uint64_t start)
{
	struct modinfo *t = ctx;
	engine_spelling(t->d, nm, &t->key);
	uint64_t h = sp_hash(t->key.p ? t->key.p : "", t->key.len);
	if (h == UINT64_MAX)
		h--;
	int found;
	uint32_t *slot = sp_u64map_slot(&t->byname, h, &found);
	if (found)
		return;
	if (t->nstarts == t->capstarts) {
		t->capstarts = t->capstarts ? 2 * t->capstarts : 1024;
		t->starts = sp_xrealloc(t->starts, t->capstarts * sizeof *t->starts);
	}
	t->starts[t->nstarts++] = start;
	*slot = (uint32_t)t->nstarts;
}

/* The engine's spelling of every symbol -> its start (t->byname): this
 * demangles the whole table, so only when a frame's name is not one
 * sp_symbols_symbol_start knows (a name from DWARF). */
static void byname_build(struct pd *d, struct modinfo *t)
{
	struct sp_psyms tmp;
	t->names_built = 1;
	t->d = d;
	if (!t->m)
		return;
	sp_psyms_build(&tmp, t->m, byname_add, t);
	sp_psyms_release(&tmp);
	sp_buf_release(&t->key);
}

static const Dwfl_Callbacks offline_cb = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = sp_elf_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

/* The symbol tables of the file behind module string id `module` (the
 * recorded path), NULL when the engine refused it or it has none. */
static struct modinfo *modinfo_get(struct pd *d, uint32_t module)
{
	int found;
	uint32_t i = sp_u64map_get(&d->modidx, module, &found);
	if (found)
		return i ? d->mods[i - 1] : NULL;
	struct modinfo *t = NULL;
	uint32_t file = sp_u64map_get(&d->located, module, &found);
	if (found && file) {
		t = sp_xcalloc(1, sizeof *t);
		sp_u64map_init(&t->byname);
		/* The engine's module and symbol table of the file when it read
		 * it (DWARF read and decompressed once), else ones of our own. */
		struct sp_symbols *es = d->eng ? sp_collect_symbols(d->eng) : NULL;
		t->m = es ? sp_symbols_file_module(es, sp_str(d->p, file)) : NULL;
		t->ps = t->m ? sp_symbols_file_psyms(es, sp_str(d->p, file)) : NULL;
		if (!t->m && (t->dwfl = dwfl_begin(&offline_cb))) {
			dwfl_report_begin(t->dwfl);
			t->m = dwfl_report_offline(t->dwfl, sp_str(d->p, module), sp_str(d->p, file), -1);
			dwfl_report_end(t->dwfl, NULL, NULL);
		}
		if (t->m && !t->ps) {
			sp_psyms_build(&t->own, t->m, NULL, NULL);
			t->ps = &t->own;
		}
	}
	if (t) {
		d->mods = sp_xrealloc(d->mods, (d->nmods + 1) * sizeof *d->mods);
		d->mods[d->nmods++] = t;
	}
	*sp_u64map_slot(&d->modidx, module, &found) = t ? (uint32_t)d->nmods : 0;
	return t;
}

/* perf's spelling: demangled, then tidied as pfold tidies perf script text
 * (formats/perf_script.c). */
static uint32_t perf_name(struct pd *d, const char *nm)
{
	char *dm = sp_demangle(nm);
	const char *f = dm ? dm : nm;
	size_t n = strlen(f);
	if (dm) {
		/* perf prints a template function without its return type
		 * ("wi::lts_p<...>", not "bool wi::lts_p<...>"): drop what
		 * precedes the last blank outside <> and () before the name. */
		size_t start = 0;
		int depth = 0;
		for (size_t j = 0; j < n; j++) {
			if (!depth && !strncmp(f + j, "(anonymous namespace)", 21)) {
				j += 20;
				continue;
			}
			if (!depth && (f[j] == '(' || !strncmp(f + j, "operator", 8)))
				break;
			if (f[j] == '<' || f[j] == '(')
				depth++;
			else if ((f[j] == '>' || f[j] == ')') && depth > 0)
				depth--;
			else if (f[j] == ' ' && !depth)
				start = j + 1;
		}
		f += start;
		n -= start;
	}
	struct sp_buf *b = &d->tname;
	sp_perf_tidy_name(f, n, 0, b);
	free(dm);
	return sp_str_intern(d->p, b->p ? b->p : "", b->len);
}

/* DWARF mode: the function DWARF says holds file address a, as perf's
 * addr2line names it (sp_dwarf_function), in perf's spelling; 0 when
 * there is none. */
static uint32_t dwarf_function(struct pd *d, struct modinfo *t, uint64_t a)
{
	Dwarf_Addr ebias = 0;
	if (!dwfl_module_getelf(t->m, &ebias))
		return 0;
	const char *nm = sp_dwarf_function(t->m, a + ebias);
	return nm && *nm ? perf_name(d, nm) : 0;
}

/* The frame as perf script names it, memoised per frame id. */
static uint32_t rename_frame(struct pd *d, uint32_t f)
{
	int found;
	uint32_t v = sp_u64map_get(&d->rename, f, &found);
	if (found)
		return v - 1;
	struct sp_frame fr = *sp_frame_get(d->p, f);
	const char *name = sp_str(d->p, fr.name);
	const char *m = fr.module ? sp_str(d->p, fr.module) : "";
	if (!strcmp(name, "[unknown]")) {
		/* "[unknown] (FILE)" in perf script, [FILE's name] in pfold */
		const char *sl = strrchr(m, '/');
		const char *base = sl ? sl + 1 : m;
		if (!*base || !strcmp(m, "[unknown]"))
			base = "unknown";
		char buf[512];
		int w = snprintf(buf, sizeof buf, "[%s]", base);
		fr.name = sp_str_intern(d->p, buf, (size_t)w < sizeof buf ? (size_t)w : sizeof buf - 1);
	} else if (fr.kind == SP_KIND_NATIVE && m[0] == '/') {
		struct modinfo *t = modinfo_get(d, fr.module);
		uint64_t a = 0;
		int have = 0;
		/* "[libz.so.1]": code without a symbol (no look-up by name) */
		if (t && !(have = sp_symbols_symbol_start(sp_collect_symbols(d->eng), fr.module, fr.name, &a)) &&
		    name[0] != '[') {
			if (!t->names_built)
				byname_build(d, t);
			uint64_t h = sp_hash(name, strlen(name));
			if (h == UINT64_MAX)
				h--;
			uint32_t k = sp_u64map_get(&t->byname, h, &found);
			if ((have = k != 0))
				a = t->starts[k - 1];
		}
		if (have) {
			uint32_t nm = d->dwarf ? dwarf_function(d, t, a) : 0;
			const struct sp_psym *s = nm || !t->ps ? NULL : sp_psyms_find(t->ps, a);
			if (s)
				nm = perf_name(d, t->ps->names + s->name);
			if (nm)
				fr.name = nm;
		}
	}
	uint32_t out = sp_frame_intern(d->p, &fr);
	*sp_u64map_slot(&d->rename, f, &found) = out + 1;
	return out;
}

/* The stack node with perf's names, memoised per node id. */
static uint32_t rename_node(struct pd *d, uint32_t node)
{
	if (!node)
		return 0;
	int found;
	uint32_t v = sp_u64map_get(&d->renode, node, &found);
	if (found)
		return v - 1;
	const struct sp_node *nd = sp_node_get(d->p, node);
	uint32_t parent = nd->parent, frame = nd->frame;
	uint32_t out = sp_node_intern(d->p, rename_node(d, parent), rename_frame(d, frame));
	*sp_u64map_slot(&d->renode, node, &found) = out + 1;
	return out;
}

static int rename_sample(struct sp_sink *s, struct sp_profile *p, const struct sp_sample *smp, struct sp_err *err)
{
	struct pd *d = (struct pd *)((char *)s - offsetof(struct pd, renamer));
	struct sp_sample c = *smp;
	c.stack = rename_node(d, smp->stack);
	if (d->period_only)
		c.values[0] = c.values[1];
	d->samples++;
	return d->sink->sample ? d->sink->sample(d->sink, p, &c, err) : 0;
}

static int eng_init(struct pd *d)
{
	if (d->eng)
		return 0;
	int cc = 0;
	for (size_t i = 0; i < d->nattrs; i++)
		cc |= !!(d->attrs[i].a.sample_type & PERF_SAMPLE_CALLCHAIN);
	struct utsname u;
	int kernel_ok = !d->osrelease || (uname(&u) == 0 && !strcmp(u.release, d->osrelease));
	if (!kernel_ok)
		warn(d, "recorded on kernel %s, this is %s: kernel frames are named [kernel.kallsyms]", d->osrelease,
		     u.release);
	struct sp_collect_opts co;
	memset(&co, 0, sizeof co);
	co.callgraph = d->dwarf ? SP_CG_DWARF : cc ? SP_CG_FP : SP_CG_NONE;
	/* perf script shows inlined functions for DWARF callchains only */
	co.no_inline = !(d->dwarf || d->o->inline_frames);
	co.offline = 1;
	co.no_kallsyms = !kernel_ok;
	co.locate = locate;
	co.locate_ctx = d;
	d->renamer.sample = rename_sample;
	d->eng = sp_collect_new(d->p, &d->renamer, &co, d->err);
	if (!d->eng)
		return -1;
	sp_collect_handler(d->eng, &d->h);
	return 0;
}

/* A thread perf never saw a COMM or FORK for is named ":TID" by perf
 * ("swapper" for the idle task); the engine hears the same. */
static void name_thread(struct pd *d, uint32_t pid, uint32_t tid, const char *comm)
{
	int found;
	*sp_u64map_slot(&d->named, tid, &found) = 1;
	if (comm)
		return;
	char b[24];
	snprintf(b, sizeof b, tid ? ":%u" : "swapper", tid);
	d->h.comm(d->h.ctx, pid, tid, b, 0, 0);
}

static int eng_sample(struct pd *d, const struct eng_sample *es)
{
	int found;
	sp_u64map_get(&d->named, es->s.tid, &found);
	if (!found)
		name_thread(d, es->s.pid, es->s.tid, NULL);
	sp_collect_set_event(d->eng, es->event);
	d->h.sample(d->h.ctx, &es->s);
	return sp_collect_error(d->eng, d->err) ? -1 : 0;
}

/* ---- records ---- */

/* Parse a SAMPLE record.  Returns 0, 1 to skip it, -1 with err. */
static int parse_sample(struct pd *d, const uint8_t *r, uint32_t size, uint64_t off, struct eng_sample *es)
{
	const struct pattr *pa = attr_of(d, r, size, 1);
	if (!pa) {
		return fail_off(d, off, "sample of an event that is not in the header");
	}
	uint64_t st = pa->a.sample_type;
	/* Zeroed but for the registers, which only user-register samples
	 * fill (one memset of the whole, 250 bytes, was 2 % of the time on a
	 * frame-pointer recording): they are cleared when a sample has them
	 * or follows one that had. */
	struct sp_perf_sample *s = &es->s;
	memset(s, 0, offsetof(struct sp_perf_sample, regs));
	s->stack = NULL;
	s->stack_len = 0;
	s->switch_out = 0;
	es->event = 0;
	if ((st & PERF_SAMPLE_REGS_USER) || d->regs_dirty) {
		memset(s->regs, 0, sizeof s->regs);
		d->regs_dirty = !!(st & PERF_SAMPLE_REGS_USER);
	}
	const uint8_t *p = r + 8, *e = r + size;
#define NEED(k, what)                                                                                     \
	do {                                                                                              \
		if ((uint64_t)(e - p) < (uint64_t)(k))                                                    \
			return fail_off(d, off, "sample record of %u bytes is too short for its %s (sample_type 0x%llx)", \
					size, what, (unsigned long long)st);                             \
	} while (0)
	if (st & PERF_SAMPLE_IDENTIFIER) { NEED(8, "id"); p += 8; }
	if (st & PERF_SAMPLE_IP) { NEED(8, "ip"); s->ip = rd64(p); p += 8; }
	if (st & PERF_SAMPLE_TID) { NEED(8, "pid/tid"); s->pid = rd32(p); s->tid = rd32(p + 4); p += 8; }
	if (st & PERF_SAMPLE_TIME) { NEED(8, "time"); s->time = rd64(p); p += 8; }
	if (st & PERF_SAMPLE_ADDR) { NEED(8, "addr"); p += 8; }
	if (st & PERF_SAMPLE_ID) { NEED(8, "id"); p += 8; }
	if (st & PERF_SAMPLE_STREAM_ID) { NEED(8, "stream id"); p += 8; }
	if (st & PERF_SAMPLE_CPU) { NEED(8, "cpu"); p += 8; }
	s->period = 1;
	if (st & PERF_SAMPLE_PERIOD) { NEED(8, "period"); s->period = rd64(p); p += 8; }
	if (st & PERF_SAMPLE_READ) {
		uint64_t rf = pa->a.read_format;
		uint64_t per = 1 + !!(rf & PERF_FORMAT_ID) + !!(rf & PERF_FORMAT_LOST);
		uint64_t fixed = !!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED) + !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING);
		if (rf & PERF_FORMAT_GROUP) {
			NEED(8, "read group");
			uint64_t nr = rd64(p);
			p += 8;
			if (nr > size / 8)
				return fail_off(d, off, "sample read group of %llu values in a %u-byte record",
						(unsigned long long)nr, size);
			NEED(8 * (fixed + nr * per), "read group");
			p += 8 * (fixed + nr * per);
		} else {
			NEED(8 * (fixed + per), "read values");
			p += 8 * (fixed + per);
		}
	}
	if (st & PERF_SAMPLE_CALLCHAIN) {
		NEED(8, "callchain");
		uint64_t nr = rd64(p);
		p += 8;
		if (nr > size / 8)
			return fail_off(d, off, "callchain of %llu entries in a %u-byte record", (unsigned long long)nr,
					size);
		NEED(8 * nr, "callchain");
		if (2 * nr > d->capcc || !d->ccbuf) { /* kernel part, then user part; never NULL */
			d->capcc = nr * 2 + 16;
			d->ccbuf = sp_xrealloc(d->ccbuf, d->capcc * sizeof *d->ccbuf);
		}
		/* Split at the PERF_CONTEXT_* markers: kernel then user, in one
		 * pass (the user part from ccbuf + nr).  perf script names a
		 * return address as it is, the engine (for pcollect) looks up
		 * the call instruction (address - 1): the engine's - 1 is undone
		 * here, so that a call at the very end of a function names what
		 * perf names (_dl_start_user, not _start). */
		uint64_t ctx = 0;
		uint32_t nk = 0, nu = 0;
		uint64_t *k = d->ccbuf, *u = d->ccbuf + nr;
		for (uint64_t i = 0; i < nr; i++) {
			uint64_t v = rd64(p + 8 * i);
			if (v >= CTX_MAX) {
				ctx = v;
				continue;
			}
			if (ctx == (uint64_t)PERF_CONTEXT_KERNEL) {
				k[nk] = nk ? v + 1 : v;
				nk++;
			} else if (ctx == (uint64_t)PERF_CONTEXT_USER) {
				u[nu] = nu ? v + 1 : v;
				nu++;
			}
		}
		s->kernel = k;
		s->nkernel = nk;
		s->user = u;
		s->nuser = nu;
		p += 8 * nr;
	}
	if (st & PERF_SAMPLE_RAW) {
		NEED(4, "raw data");
		uint32_t n = rd32(p);
		NEED(4 + (uint64_t)n, "raw data");
		p += 4 + n;
	}
	if (st & PERF_SAMPLE_BRANCH_STACK) {
		NEED(8, "branch stack");
		uint64_t nr = rd64(p);
		p += 8;
		if (pa->a.branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX) {
			NEED(8, "branch stack");
			p += 8;
		}
		if (nr > size / 24)
			return fail_off(d, off, "branch stack of %llu entries in a %u-byte record",
					(unsigned long long)nr, size);
		NEED(24 * nr, "branch stack");
		p += 24 * nr;
	}
	if (st & PERF_SAMPLE_REGS_USER) {
		NEED(8, "user registers");
		uint64_t abi = rd64(p);
		p += 8;
		if (abi != PERF_SAMPLE_REGS_ABI_NONE) {
			uint64_t mask = pa->a.sample_regs_user;
			int nr = __builtin_popcountll(mask);
			NEED(8 * (uint64_t)nr, "user registers");
			if (abi == PERF_SAMPLE_REGS_ABI_64) {
				/* perf's x86 register numbers (AX BX CX DX SI DI BP SP IP
				 * FLAGS CS SS DS ES FS GS R8..R15) to DWARF's. */
				static const int dw[24] = { 0, 3, 2, 1, 4, 5, 6, 7, 16, -1, -1, -1, -1, -1, -1, -1,
							    8, 9, 10, 11, 12, 13, 14, 15 };
				int idx = 0, have = 0;
				for (int bit = 0; bit < 64; bit++) {
					if (!(mask >> bit & 1))
						continue;
					if (bit < 24 && dw[bit] >= 0) {
						s->regs[dw[bit]] = rd64(p + 8 * idx);
						have |= bit == 7 || bit == 8 ? 1 << (bit - 7) : 0;
					}
					idx++;
				}
				s->has_regs = have == 3; /* SP and IP at least */
			}
			p += 8 * (uint64_t)nr;
		}
	}
	if (st & PERF_SAMPLE_STACK_USER) {
		NEED(8, "user stack");
		uint64_t n = rd64(p);
		p += 8;
		if (n) {
			NEED(n, "user stack");
			const uint8_t *stk = p;
			p += n;
			NEED(8, "user stack size");
			uint64_t dyn = rd64(p);
			p += 8;
			s->stack = stk;
			s->stack_len = dyn < n ? dyn : n;
		}
	}
	if (s->has_regs && !s->stack) {
		/* registers without a stack copy: perf still unwinds from them
		 * (the sampled function at least) */
		static const uint8_t none[8];
		s->stack = none;
		s->stack_len = 0;
	}
	es->event = pa->name;
	(void)p;
#undef NEED
	return 0;
}

/* The time of a record, SP_NO_TIME when it has none. */
static uint64_t rec_time(struct pd *d, const uint8_t *r, uint32_t size)
{
	uint32_t type = rd32(r);
	if (type >= 64 || !d->nattrs)
		return SP_NO_TIME;
	if (type == PERF_RECORD_SAMPLE) {
		const struct pattr *pa = attr_of(d, r, size, 1);
		if (!pa || !(pa->a.sample_type & PERF_SAMPLE_TIME))
			return SP_NO_TIME;
		uint64_t st = pa->a.sample_type;
		size_t o = 8 + 8 * (!!(st & PERF_SAMPLE_IDENTIFIER) + !!(st & PERF_SAMPLE_IP) + !!(st & PERF_SAMPLE_TID));
		return o + 8 <= size ? rd64(r + o) : SP_NO_TIME;
	}
	const struct pattr *pa = attr_of(d, r, size, 0);
	if (!pa || !pa->a.sample_id_all || !(pa->a.sample_type & PERF_SAMPLE_TIME))
		return SP_NO_TIME;
	uint64_t st = pa->a.sample_type;
	size_t back = 8 * (1 + !!(st & PERF_SAMPLE_ID) + !!(st & PERF_SAMPLE_STREAM_ID) + !!(st & PERF_SAMPLE_CPU) +
			   !!(st & PERF_SAMPLE_IDENTIFIER));
	return back + 8 <= size ? rd64(r + size - back) : SP_NO_TIME;
}

/* The trailer size of non-sample records (sample_id_all). */
static size_t trailer(struct pd *d, const uint8_t *r, uint32_t size)
{
	const struct pattr *pa = attr_of(d, r, size, 0);
	if (!pa || !pa->a.sample_id_all)
		return 0;
	uint64_t st = pa->a.sample_type;
	return 8 * (size_t)(!!(st & PERF_SAMPLE_TID) + !!(st & PERF_SAMPLE_TIME) + !!(st & PERF_SAMPLE_ID) +
			    !!(st & PERF_SAMPLE_STREAM_ID) + !!(st & PERF_SAMPLE_CPU) + !!(st & PERF_SAMPLE_IDENTIFIER));
}

/* A NUL-terminated string in [p, e): its copy in tmp. */
static const char *rec_str(struct sp_buf *tmp, const uint8_t *p, const uint8_t *e)
{
	sp_buf_reset(tmp);
	sp_buf_add(tmp, p, strnlen((const char *)p, (size_t)(e - p)));
	return sp_buf_cstr(tmp);
}

static int event_filtered(struct pd *d, uint32_t ev)
{
	if (!d->filter_event) {
		d->filter_event = ev;
		d->filter_defaulted = 1;
		return 0;
	}
	if (ev == d->filter_event)
		return 0;
	if (d->filter_defaulted && !d->filter_warned) {
		d->filter_warned = 1;
		warn(d, "filtering for events of type: %s (use --event-filter to choose)", sp_str(d->p, d->filter_event));
	}
	return 1;
}

/* The kernel's map, "[kernel.kallsyms]_text" at pgoff (perf's reference
 * symbol, where it was when recorded): the kernel's symbols are read from
 * perf's build-id cache copy, ~/.debug/[kernel.kallsyms]/ID/kallsyms (a
 * file: /proc/kallsyms costs the kernel ~35 ms to print), when the
 * recording names the kernel's build id and the copy has ref there. */
static void kernel_map(struct pd *d, const char *ref, uint64_t pgoff)
{
	const struct bid *b = recorded_bid(d, sp_str_intern(d->p, "[kernel.kallsyms]", 17));
	const char *home = getenv("HOME");
	if (!b || !b->len || !*ref || !home || !*home)
		return;
	char hex[41], path[4096];
	for (size_t i = 0; i < b->len; i++)
		snprintf(hex + 2 * i, 3, "%02x", b->id[i]);
	if ((size_t)snprintf(path, sizeof path, "%s/.debug/[kernel.kallsyms]/%s/kallsyms", home, hex) < sizeof path)
		sp_collect_kernel_file(d->eng, path, ref, pgoff);
}

/* Deliver one kernel record (in time order). */
static int deliver(struct pd *d, const uint8_t *r, uint32_t size, uint64_t off)
{
	uint32_t type = rd32(r);
	uint16_t misc = rd16(r + 4);
	struct sp_buf tmp = SP_BUF_INIT;
	int rc = 0;
	if (eng_init(d) < 0)
		return -1;
	switch (type) {
	case PERF_RECORD_SAMPLE: {
		struct eng_sample *es = &d->es;
		rc = parse_sample(d, r, size, off, es);
		if (rc)
			break;
		if (event_filtered(d, es->event))
			break;
		rc = eng_sample(d, es);
		break;
	}
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2: {
		size_t tr = trailer(d, r, size);
		size_t fixed = type == PERF_RECORD_MMAP ? 8 + 8 + 24 : 8 + 8 + 24 + 24 + 8;
		if (size < fixed + tr) {
			rc = fail_off(d, off, "%s record of %u bytes is too short", type == PERF_RECORD_MMAP ? "MMAP" : "MMAP2",
				      size);
			break;
		}
		struct sp_map m;
		memset(&m, 0, sizeof m);
		uint32_t pid = rd32(r + 8), tid = rd32(r + 12);
		m.start = rd64(r + 16);
		m.end = m.start + rd64(r + 24);
		m.pgoff = rd64(r + 32);
		if (type == PERF_RECORD_MMAP) {
			m.prot = misc & MISC_MMAP_DATA ? 1 : 5;
		} else {
			m.prot = rd32(r + 64);
			if (misc & MISC_MMAP_BUILD_ID) {
				const uint8_t *b = r + 40;
				size_t bl = b[0] > 20 ? 20 : b[0];
				const char *fn = rec_str(&tmp, r + fixed, r + size - tr);
				add_bid(d, fn, strlen(fn), b + 4, bl);
			}
		}
		m.path = rec_str(&tmp, r + fixed, r + size - tr);
		if (pid == UINT32_MAX && !strncmp(m.path, "[kernel.kallsyms]", 17))
			kernel_map(d, m.path + 17, m.pgoff);
		d->h.mmap(d->h.ctx, pid, tid, &m, 0);
		break;
	}
	case PERF_RECORD_COMM: {
		size_t tr = trailer(d, r, size);
		if (size < 16 + tr) {
			rc = fail_off(d, off, "COMM record of %u bytes is too short", size);
			break;
		}
		/* An exec is not passed on: perf keeps a process's maps across
		 * exec (the new image's MMAPs replace what they overlap), and a
		 * sample inside execve after the COMM still has the old image's
		 * user addresses. */
		(void)misc;
		name_thread(d, rd32(r + 8), rd32(r + 12), "");
		d->h.comm(d->h.ctx, rd32(r + 8), rd32(r + 12), rec_str(&tmp, r + 16, r + size - tr), 0, 0);
		break;
	}
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		if (size < 8 + 24) {
			rc = fail_off(d, off, "%s record of %u bytes is too short", type == PERF_RECORD_FORK ? "FORK" : "EXIT",
				      size);
			break;
		}
		if (type == PERF_RECORD_FORK) {
			name_thread(d, rd32(r + 8), rd32(r + 16), "");
			d->h.fork(d->h.ctx, rd32(r + 8), rd32(r + 12), rd32(r + 16), rd32(r + 20), rd64(r + 24));
		} else {
			d->h.exit(d->h.ctx, rd32(r + 8), rd32(r + 16), rd64(r + 24));
		}
		break;
	case PERF_RECORD_LOST:
		if (size >= 24) {
			d->lost += rd64(r + 16);
			d->lost_records++;
		}
		break;
	case PERF_RECORD_LOST_SAMPLES:
		if (size >= 16)
			d->lost_samples += rd64(r + 8);
		break;
	case PERF_RECORD_KSYMBOL: {
		/* a BPF program or trampoline: kallsyms read later does not
		 * have it (perf names it from this record) */
		size_t tr = trailer(d, r, size);
		if (size < 8 + 16 + tr) {
			rc = fail_off(d, off, "KSYMBOL record of %u bytes is too short", size);
			break;
		}
		if (!(rd16(r + 22) & PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER))
			sp_collect_kernel_symbol(d->eng, rd64(r + 8), rd32(r + 16), rec_str(&tmp, r + 24, r + size - tr));
		break;
	}
	default:
		break; /* THROTTLE, SWITCH, ...: nothing a profile needs */
	}
	sp_buf_release(&tmp);
	return rc;
}

/* ---- time order ---- */

#define QLESS(x, y) ((x)->time < (y)->time || ((x)->time == (y)->time && (x)->seq < (y)->seq))
SP_RUNSORT(qent_runsort, struct qent, QLESS)

/* Sort q[0..n) by (time, seq).  The queue is made of long ascending runs
 * (each CPU's ring in order, the previous round's leftovers sorted), so a
 * natural merge sort costs a few passes, without qsort's indirect call per
 * comparison. */
static void qsort_runs(struct pd *d, size_t n)
{
	if (n < 2)
		return;
	if (d->capqtmp < n) {
		d->capqtmp = n;
		d->qtmp = sp_xrealloc(d->qtmp, n * sizeof *d->qtmp);
	}
	if (qent_runsort(d->q, n, d->qtmp) != d->q) { /* the sorted queue is the other buffer now */
		struct qent *t = d->q;
		d->q = d->qtmp;
		d->qtmp = t;
		size_t c = d->capq;
		d->capq = d->capqtmp;
		d->capqtmp = c;
	}
}

static const uint8_t *base(struct pd *d) { return d->pipe ? (const uint8_t *)d->arena.p : d->map; }

/* Deliver the queued records with time <= limit (all for UINT64_MAX). */
static int flush(struct pd *d, uint64_t limit)
{
	if (!d->nq)
		return 0;
	qsort_runs(d, d->nq);
	size_t k = 0;
	while (k < d->nq && d->q[k].time <= limit) {
		const struct qent *e = &d->q[k];
		if (deliver(d, base(d) + e->pos, e->len, e->off) < 0)
			return -1;
		k++;
	}
	memmove(d->q, d->q + k, (d->nq - k) * sizeof *d->q);
	d->nq -= k;
	if (d->pipe) {
		/* Keep only the records still queued. */
		struct sp_buf b = SP_BUF_INIT;
		for (size_t i = 0; i < d->nq; i++) {
			uint64_t pos = b.len;
			sp_buf_add(&b, d->arena.p + d->q[i].pos, d->q[i].len);
			while (b.len & 7)
				sp_buf_addc(&b, 0);
			d->q[i].pos = pos;
		}
		sp_buf_release(&d->arena);
		d->arena = b;
	}
	return 0;
}

static int queue(struct pd *d, uint64_t pos, uint32_t len, uint64_t off, uint64_t time)
{
	if (d->nq == d->capq) {
		d->capq = d->capq ? 2 * d->capq : 4096;
		d->q = sp_xrealloc(d->q, d->capq * sizeof *d->q);
	}
	d->q[d->nq++] = (struct qent){ time, d->seq++, pos, len, off };
	if (time > d->max_time)
		d->max_time = time;
	return 0;
}

/* ---- perf's own records (pipe mode's header, rounds) ---- */

static int compressed(struct pd *d, uint64_t off)
{
	return fail_off(d, off, "this perf.data is compressed (perf record -z, zstd), which this reader does not "
				"support: record without -z");
}

/* Handle a record of perf's (type >= 64).  rec is the record, its length
 * size; returns 0 or -1. */
static int user_record(struct pd *d, const uint8_t *r, uint32_t size, uint64_t off)
{
	uint32_t type = rd32(r);
	switch (type) {
	case R_FINISHED_ROUND: {
		int rc = flush(d, d->next_flush);
		d->next_flush = d->max_time;
		return rc;
	}
	case R_HEADER_ATTR: {
		if (size < 8 + PERF_ATTR_SIZE_VER0)
			return fail_off(d, off, "HEADER_ATTR record of %u bytes is too short", size);
		uint32_t asz = rd32(r + 8 + 4);
		if (asz < PERF_ATTR_SIZE_VER0 || asz > size - 8u)
			return fail_off(d, off, "HEADER_ATTR record: attr size %u in a %u-byte record", asz, size);
		if (d->eng)
			return fail_off(d, off, "HEADER_ATTR record after the first sample");
		uint64_t nids = (size - 8u - asz) / 8;
		return add_attr(d, off, r + 8, asz, r + 8 + asz, nids);
	}
	case R_HEADER_FEATURE: {
		if (size < 16)
			return fail_off(d, off, "HEADER_FEATURE record of %u bytes is too short", size);
		uint64_t f = rd64(r + 8);
		if (f == F_COMPRESSED)
			return 0;
		return feature(d, (int)f, r + 16, size - 16u, off + 16);
	}
	case R_HEADER_BUILD_ID:
		return build_id_records(d, r, size, off);
	case R_EVENT_UPDATE:
		if (size >= 24 && rd64(r + 8) == EVENT_UPDATE_NAME) {
			uint64_t id = rd64(r + 16);
			if (id == UINT64_MAX)
				id--;
			int found;
			uint32_t a = sp_u64map_get(&d->ids, id, &found);
			if (found && a) {
				struct sp_buf t = SP_BUF_INIT;
				const char *nm = rec_str(&t, r + 24, r + size);
				d->attrs[a - 1].name = sp_str_intern(d->p, nm, strlen(nm));
				d->attrs[a - 1].named = 1;
				sp_buf_release(&t);
			}
		}
		return 0;
	case R_COMPRESSED:
		return compressed(d, off);
	default:
		return 0;
	}
}

/* Bytes of payload that follow a record outside its size (tracing data,
 * AUX data), 0 for most. */
static int trailing_payload(struct pd *d, const uint8_t *r, uint32_t size, uint64_t off, uint64_t *extra)
{
	uint32_t type = rd32(r);
	*extra = 0;
	if (type == R_HEADER_TRACING_DATA) {
		if (size < 12)
			return fail_off(d, off, "TRACING_DATA record of %u bytes is too short", size);
		*extra = rd32(r + 8);
	} else if (type == R_AUXTRACE) {
		if (size < 16)
			return fail_off(d, off, "AUXTRACE record of %u bytes is too short", size);
		*extra = rd64(r + 8);
	}
	return 0;
}

/* One record at pos of the base, of len bytes, at input offset off. */
static int handle(struct pd *d, uint64_t pos, uint32_t len, uint64_t off)
{
	const uint8_t *r = base(d) + pos;
	uint32_t type = rd32(r);
	if (type >= 64)
		return user_record(d, r, len, off);
	uint64_t t = rec_time(d, r, len);
	if (t == SP_NO_TIME)
		return deliver(d, r, len, off);
	return queue(d, pos, len, off, t);
}

/* ---- file mode ---- */

static int spill(struct pd *d)
{
	/* A non-seekable file-mode input (a pipe, gzip): copied to an
	 * unlinked temporary file so that it can be mapped. */
	const char *dir = getenv("TMPDIR");
	char path[4096];
	snprintf(path, sizeof path, "%s/stackpipe-perfdata-XXXXXX", dir && *dir ? dir : "/tmp");
	int fd = mkstemp(path);
	if (fd < 0)
		return sp_err_set(d->err, "%s: cannot make a temporary file in %s to read this perf.data from a pipe",
				  d->name, dir && *dir ? dir : "/tmp");
	unlink(path);
	char *buf = sp_xmalloc(1 << 20);
	size_t n;
	while ((n = sp_input_read(d->in, buf, 1 << 20)) > 0) {
		size_t w = 0;
		while (w < n) {
			ssize_t k = write(fd, buf + w, n - w);
			if (k <= 0) {
				free(buf);
				close(fd);
				return sp_err_set(d->err, "%s: cannot write the temporary copy of this perf.data", d->name);
			}
			w += (size_t)k;
		}
	}
	free(buf);
	if (sp_input_failed(d->in, d->err)) {
		close(fd);
		return -1;
	}
	d->tmpfd = fd;
	return fd;
}

static int read_file_mode(struct pd *d)
{
	int fd;
	uint64_t fsize;
	if (!sp_input_splittable(d->in, &fd, &fsize)) {
		if ((fd = spill(d)) < 0)
			return -1;
		struct stat st;
		fstat(fd, &st);
		fsize = (uint64_t)st.st_size;
	}
	if (fsize < 104)
		return fail_off(d, fsize, "perf.data truncated inside its %d-byte header", 104);
	void *m = mmap(NULL, fsize, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED)
		return sp_err_set(d->err, "%s: cannot map the file: %s", d->name, strerror(errno));
	d->map = m;
	d->mapsize = fsize;
	madvise(m, fsize, MADV_SEQUENTIAL);
	const uint8_t *h = d->map;
	uint64_t hsize = rd64(h + 8), attr_size = rd64(h + 16);
	uint64_t a_off = rd64(h + 24), a_size = rd64(h + 32);
	uint64_t d_off = rd64(h + 40), d_size = rd64(h + 48);
	if (hsize < 104 || hsize > fsize)
		return fail_off(d, 8, "header size %llu is not perf's (104)", (unsigned long long)hsize);
	if (attr_size < PERF_ATTR_SIZE_VER0 + 16 || attr_size > 4096)
		return fail_off(d, 16, "attr entry size %llu is absurd", (unsigned long long)attr_size);
	if (a_size % attr_size || a_size / attr_size > MAX_ATTRS)
		return fail_off(d, 32, "attr section of %llu bytes does not hold entries of %llu bytes",
				(unsigned long long)a_size, (unsigned long long)attr_size);
	if (a_off > fsize || a_size > fsize - a_off)
		return fail_off(d, fsize, "perf.data truncated: the attr section [%llu, +%llu) is cut",
				(unsigned long long)a_off, (unsigned long long)a_size);
	for (uint64_t i = 0; i < a_size / attr_size; i++) {
		const uint8_t *a = d->map + a_off + i * attr_size;
		uint64_t asz = attr_size - 16;
		uint64_t io = rd64(a + asz), is = rd64(a + asz + 8);
		if (io > fsize || is > fsize - io || is % 8)
			return fail_off(d, a_off + i * attr_size + asz, "event attr %llu: its id list [%llu, +%llu) is outside the file",
					(unsigned long long)i, (unsigned long long)io, (unsigned long long)is);
		uint32_t rsz = rd32(a + 4);
		if (rsz > asz || rsz == 0)
			rsz = (uint32_t)asz;
		if (add_attr(d, a_off + i * attr_size, a, rsz, d->map + io, is / 8) < 0)
			return -1;
	}
	if (!d->nattrs)
		return fail_off(d, 24, "perf.data has no event attrs");
	/* Features follow the data section: a table of (offset, size), one
	 * per bit set, then the sections. */
	int cut = 0;
	uint64_t d_end = d_off + d_size;
	if (d_off > fsize || d_end < d_off)
		return fail_off(d, 40, "data section offset %llu is outside the %llu-byte file", (unsigned long long)d_off,
				(unsigned long long)fsize);
	if (d_size == 0) {
		/* perf record was killed before it wrote the header back */
		d_end = fsize;
		warn(d, "the header's data size is 0 (perf record did not finish): reading to the end of the file");
	} else if (d_end > fsize) {
		cut = 1;
		d_end = fsize;
	} else {
		uint64_t nfeat = 0;
		for (int w = 0; w < 4; w++)
			nfeat += (uint64_t)__builtin_popcountll(rd64(h + 72 + 8 * w));
		uint64_t fo = d_off + d_size;
		if (nfeat && (fo > fsize || nfeat * 16 > fsize - fo)) {
			cut = 2;
		} else {
			uint64_t k = 0;
			for (int bit = 0; bit < 256; bit++) {
				if (!(rd64(h + 72 + 8 * (bit / 64)) >> (bit % 64) & 1))
					continue;
				uint64_t so = rd64(d->map + fo + 16 * k), ss = rd64(d->map + fo + 16 * k + 8);
				k++;
				if (so > fsize || ss > fsize - so) {
					cut = 2;
					continue;
				}
				if (bit == F_COMPRESSED)
					continue;
				if (feature(d, bit, d->map + so, ss, so) < 0)
					return -1;
			}
		}
	}
	/* The data section. */
	uint64_t off = d_off, released = 0;
	while (off < d_end) {
		if (d_end - off < 8) {
			cut = 1;
			break;
		}
		const uint8_t *r = d->map + off;
		uint16_t size = rd16(r + 6);
		if (size < 8)
			return fail_off(d, off, "record of type %u has size %u (less than its 8-byte header)", rd32(r), size);
		if (size > d_end - off) {
			cut = 1;
			break;
		}
		if (rd32(r) == R_COMPRESSED)
			return compressed(d, off);
		uint64_t extra;
		if (trailing_payload(d, r, size, off, &extra) < 0)
			return -1;
		if (handle(d, off, size, off) < 0)
			return -1;
		if (extra > d_end - off - size) {
			off = d_end;
			cut = 1;
			break;
		}
		off += size + extra;
		if (off - released > (64u << 20)) {
			/* Give back the pages of records already delivered, so
			 * that RSS does not grow with the file. */
			uint64_t low = off;
			for (size_t i = 0; i < d->nq; i++)
				if (d->q[i].pos < low)
					low = d->q[i].pos;
			low &= ~(uint64_t)0xfff;
			if (low > released) {
				madvise((void *)(d->map + released), low - released, MADV_DONTNEED);
				released = low;
			}
		}
	}
	if (flush(d, UINT64_MAX) < 0)
		return -1;
	if (cut == 1)
		return cut_at(d, off, 0, "perf.data truncated: the data section should run to offset %llu, the file ends "
			      "at %llu", (unsigned long long)(d_off + d_size), (unsigned long long)fsize);
	if (cut == 2)
		return cut_at(d, fsize, 1, "perf.data truncated after its data section: the feature sections (build ids, "
			      "event names) are cut (all %llu samples were used)",
			      (unsigned long long)d->samples);
	return 0;
}

/* ---- pipe mode ---- */

static int read_pipe_mode(struct pd *d)
{
	uint8_t hdr[16];
	if (sp_input_read(d->in, hdr, 16) != 16)
		return fail_off(d, 0, "perf.data truncated inside its pipe header");
	d->inoff = 16;
	for (;;) {
		uint8_t h[8];
		uint64_t off = d->inoff;
		size_t got = sp_input_read(d->in, h, 8);
		if (got == 0)
			break;
		if (got < 8) {
			if (flush(d, UINT64_MAX) < 0)
				return -1;
			return cut_at(d, off, 0, "perf.data truncated inside a record header (%zu of 8 bytes)", got);
		}
		uint16_t size = rd16(h + 6);
		if (size < 8)
			return fail_off(d, off, "record of type %u has size %u (less than its 8-byte header)", rd32(h), size);
		uint64_t pos = d->arena.len;
		sp_buf_add(&d->arena, h, 8);
		sp_buf_grow(&d->arena, size - 8u + 8);
		size_t k = sp_input_read(d->in, d->arena.p + d->arena.len, size - 8u);
		d->arena.len += k;
		if (k < size - 8u) {
			d->arena.len = pos;
			if (flush(d, UINT64_MAX) < 0)
				return -1;
			return cut_at(d, off, 0, "perf.data truncated inside a record of %u bytes", size);
		}
		while (d->arena.len & 7)
			sp_buf_addc(&d->arena, 0);
		d->inoff += size;
		const uint8_t *r = (const uint8_t *)d->arena.p + pos;
		uint64_t extra;
		if (trailing_payload(d, r, size, off, &extra) < 0)
			return -1;
		uint32_t type = rd32(r);
		int rc;
		if (type >= 64) {
			/* perf's own records are handled now and not kept (a
			 * FINISHED_ROUND rebuilds the arena). */
			sp_buf_reset(&d->scratch);
			sp_buf_add(&d->scratch, r, size);
			d->arena.len = pos;
			rc = user_record(d, (const uint8_t *)d->scratch.p, size, off);
		} else {
			rc = handle(d, pos, size, off);
			if (!rc && rec_time(d, r, size) == SP_NO_TIME)
				d->arena.len = pos;
		}
		if (rc < 0)
			return -1;
		/* Skip the payload that follows (tracing data, AUX data). */
		char sink[4096];
		while (extra) {
			size_t want = extra < sizeof sink ? (size_t)extra : sizeof sink;
			size_t n = sp_input_read(d->in, sink, want);
			if (!n) {
				if (flush(d, UINT64_MAX) < 0)
					return -1;
				return cut_at(d, d->inoff, 0, "perf.data truncated inside a record's payload");
			}
			extra -= n;
			d->inoff += n;
		}
	}
	if (sp_input_failed(d->in, d->err))
		return -1;
	return flush(d, UINT64_MAX);
}

/* ---- the reader ---- */

static int perfdata_read(struct sp_input *in, struct sp_profile *p, struct sp_sink *sink, struct sp_read_opts *o,
			 struct sp_err *err)
{
	struct pd d;
	memset(&d, 0, sizeof d);
	d.in = in;
	d.name = sp_input_name(in);
	d.p = p;
	d.sink = sink;
	d.o = o;
	d.err = err;
	d.tmpfd = -1;
	d.id_sample_idx = -1;
	sp_u64map_init(&d.ids);
	sp_u64map_init(&d.named);
	sp_u64map_init(&d.located);
	sp_u64map_init(&d.rename);
	sp_u64map_init(&d.renode);
	sp_u64map_init(&d.modidx);
	sp_buf_init(&d.tname);
	sp_buf_init(&d.arena);
	if (sp_profile_nvalues(p) == 0) {
		static const char *const names[] = { "samples", "period" };
		sp_profile_set_values(p, 2, names);
	}
	/* after folded text (one column of unknown unit, what pfold
	 * printed: the period), the period fills it, as a stream's does */
	d.period_only = sp_profile_nvalues(p) == 1 && !strcmp(sp_profile_value_name(p, 0), "value");
	if (o->event_filter && *o->event_filter) {
		d.filter_event = sp_str_intern(p, o->event_filter, strlen(o->event_filter));
		d.filter_defaulted = o->event_filter_defaulted;
	}
	const char *b;
	size_t n;
	int rc;
	if (sp_input_peek(in, 16, &b, &n) < 0) {
		rc = sp_input_failed(in, err) ? -1 : sp_err_set(err, "%s: read error", d.name);
	} else if (n < 16 || sp_perfdata_probe(b, n, 1) != 100) {
		rc = fail_off(&d, 0, "not a perf.data file (no PERFILE2 magic)");
	} else if (!memcmp(b, MAGIC_BE, 8)) {
		rc = fail_off(&d, 0, "a big-endian perf.data (recorded on another architecture) is not supported: "
				     "run perf script on the machine that recorded it and give pfold its text");
	} else if (!memcmp(b, "PERFFILE", 8)) {
		rc = fail_off(&d, 0, "a version 1 perf.data (magic PERFFILE, perf before 2.6.36) is not supported");
	} else {
		uint64_t hs = rd64((const uint8_t *)b + 8);
		d.pipe = hs == 16;
		rc = d.pipe ? read_pipe_mode(&d) : read_file_mode(&d);
	}
	if (!rc && sink->meta && sp_meta_count(p) && sink->meta(sink, p, err) < 0)
		rc = -1;
	/* One line.  The two counts overlap (perf record also turns the
	 * kernel's count of lost samples into LOST_SAMPLES records), so they
	 * are not added up. */
	if (d.lost || d.lost_samples)
		warn(&d, "perf lost data while recording: %llu events in %llu LOST records (the ring buffer was full), "
			 "%llu samples in LOST_SAMPLES records; those samples are missing here too",
		     (unsigned long long)d.lost, (unsigned long long)d.lost_records, (unsigned long long)d.lost_samples);
	if (!rc && sink->end_input && sink->end_input(sink, p, err) < 0)
		rc = -1;
	if (d.map)
		munmap((void *)d.map, d.mapsize);
	if (d.tmpfd >= 0)
		close(d.tmpfd);
	sp_collect_free(d.eng);
	free(d.attrs);
	free(d.bids);
	free(d.osrelease);
	free(d.q);
	free(d.qtmp);
	free(d.ccbuf);
	sp_buf_release(&d.arena);
	sp_buf_release(&d.scratch);
	sp_buf_release(&d.tname);
	for (size_t i = 0; i < d.nmods; i++) {
		struct modinfo *t = d.mods[i];
		if (t->dwfl)
			dwfl_end(t->dwfl);
		sp_psyms_release(&t->own);
		free(t->starts);
		sp_u64map_release(&t->byname);
		free(t);
	}
	free(d.mods);
	sp_u64map_release(&d.ids);
	sp_u64map_release(&d.named);
	sp_u64map_release(&d.located);
	sp_u64map_release(&d.rename);
	sp_u64map_release(&d.renode);
	sp_u64map_release(&d.modidx);
	return rc;
}

const struct sp_format sp_format_perfdata = {
	"perf.data", "perf record's file (file and pipe mode)", sp_perfdata_probe, perfdata_read,
};
