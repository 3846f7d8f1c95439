/* perf_script.c — reader of `perf script` text output.
 *
 * Follows stackcollapse-perf.pl's interpretation (FlameGraph at 57207afbe114)
 * so that folded output matches the peers byte for byte, and goes further
 * where it gives up: padded comms, single-line samples (event line carrying
 * its one frame), frames without a dso, srcline lines, "(inlined)" frames.
 *
 * Hot path: a sample is an event line plus one line per frame.  Each frame
 * line is split with memchr/memrchr only; the symbol+module text is looked
 * up in a cache that maps it to the frame ids it produces (after tidying,
 * "->" inline splitting and [unknown] handling), so a frame seen before costs
 * one xxh3 hash and one probe.  No allocation per line or per sample.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "format.h"
#include "perf_script.h"

/* ---- frame cache: raw (sym, module, flags) -> frame id list ----
 *
 * Every page a process touches for the first time costs a page fault, some
 * 30 microseconds on the virtual machines this runs on, and every probe of
 * a table larger than the CPU's caches costs a cache miss, so the cache is
 * one table of 16-byte slots and nothing else on the hit path: a slot holds
 * the raw text's 128-bit xxh3 hash (96 bits of it: 64 choose the slot and
 * compare, 32 more compare) and, for the common line that makes one frame,
 * that frame's id.  Lines that make no frame or several ("a->b" inline
 * chains) keep their ids in a pool the slot points into.
 *
 * The text itself is not kept: comparing it would cost a second cache miss
 * per frame line.  Two different frame texts of one input share those 96
 * bits with odds below 2^-56 even for 2^20 distinct texts, as the block
 * cache below trusts its 128-bit hash. */

struct fc_slot {
	uint64_t lo;  /* hash bits 0-63 */
	uint32_t hi;  /* hash bits 64-95 */
	uint32_t val; /* 0: empty; odd: id << 1 | 1; even: pool offset << 1 */
};

struct fcache {
	struct fc_slot *tab;
	size_t mask, used;
	uint32_t *pool; /* at an offset: nids, then the ids */
	size_t npool, cappool;
};

static void fc_init(struct fcache *c)
{
	c->mask = 4095;
	c->tab = sp_xzalloc(c->mask + 1, sizeof *c->tab);
	c->used = 0;
	c->pool = NULL;
	c->npool = 1; /* offset 0 would be an empty slot */
	c->cappool = 0;
}

static void fc_release(struct fcache *c)
{
	free(c->tab);
	free(c->pool);
}

static void fc_grow(struct fcache *c)
{
	size_t cap = (c->mask + 1) * 2;
	struct fc_slot *t = sp_xzalloc(cap, sizeof *t);
	for (size_t i = 0; i <= c->mask; i++) {
		if (!c->tab[i].val)
			continue;
		size_t j = c->tab[i].lo & (cap - 1);
		while (t[j].val)
			j = (j + 1) & (cap - 1);
		t[j] = c->tab[i];
	}
	free(c->tab);
	c->tab = t;
	c->mask = cap - 1;
}

/* ---- reader state ---- */

/* Recent threads by (pid, tid, comm): samples of a system-wide recording
 * alternate between CPUs and threads, so a one-entry "last thread" misses
 * more often than not, and a miss costs two interning probes. */
#define THR_WAYS 256
#define THR_COMM 42
struct thr_ent {
	int64_t pid, tid;
	uint32_t thread; /* 0: empty */
	uint8_t len, java;
	char comm[THR_COMM];
};

/* Whole stacks seen before (an fcache keyed by the hash of the frame ids of
 * a sample, leaf first, whose one id is the stack's node), so a repeated
 * stack costs one hash instead of one probe per frame. */

/* Whole sample blocks seen before: the text of a sample's frame lines ->
 * its stack node.  perf repeats the same block for every sample of the
 * same stack at the same addresses, so most samples cost one hash of their
 * frame lines.  A block is known by its 128-bit xxh3 hash (which covers its
 * length), not by a copy of its text: copying every new block (most of
 * fresh input) and comparing every hit would dominate pfold's time.
 *
 * The cache is a fixed table of BLOCK_SETS sets of BLOCK_WAYS entries, the
 * most recently used first in each set: a block not seen for a while makes
 * room for a new one, so the table's size is bounded (an unbounded map
 * grows by megabytes per worker, every page a page fault; see fcache) while
 * recent blocks, the ones that repeat, keep hitting.  An entry is 16 bytes
 * and a set one 64-byte cache line, 512 KB in all: the probe is the one
 * cache miss most samples cost.  The low 13 bits of the hash choose the set and an entry keeps the high 64: a
 * false hit needs those 64 bits of another block to agree with one of four
 * entries, odds of 2^-62 per sample, below 2^-32 over a billion samples. */
#define BLOCK_WAYS 4
#define BLOCK_SETS 8192
struct block_ent {
	uint64_t hi;     /* hash bits 64-127 */
	uint32_t node;
	uint32_t nlines; /* the block's lines; 0: an empty entry */
};

struct perf_state {
	int period_only;   /* the profile's one column is folded text's "value" */
	struct block_ent *blocks; /* BLOCK_SETS * BLOCK_WAYS, allocated on first use */
	int use_node;      /* flush_sample: the stack is `node`, not frames[] */
	uint32_t node;
	struct sp_profile *p;
	struct sp_sink *sink;
	struct sp_read_opts *o;
	struct sp_input *in;
	struct sp_err *err;
	struct fcache fc;    /* raw frame text (name, offset, module) -> frame ids */
	struct fcache names; /* name (offset cut) and module -> frame ids */
	struct fcache stacks; /* frame ids of a sample -> its node */

	/* the sample being built */
	int in_sample;   /* an event line was seen and not yet flushed */
	int skipping;    /* the current sample's event is filtered out */
	int dry;         /* probing: parse, touch no tables */
	int java;        /* comm starts with "java" (Java name tidying) */
	int last_was_frame;
	struct sp_sample smp;
	uint32_t *frames; /* leaf first */
	size_t nframes, capframes;

	/* event filter */
	uint32_t filter_event; /* string id, 0 = not chosen yet */
	int filter_defaulted;

	/* threads seen lately, to skip re-interning (allocated on first use) */
	struct thr_ent *thr;
	uint32_t last_event_str;
	struct sp_buf last_event;
	struct sp_buf tmp;
};

static atomic_int filter_warned;

static void warn_line(struct perf_state *st, const char *what, const char *line, size_t len)
{
	struct sp_err e;
	st->o->bad_lines++;
	if (!st->o->warn)
		return;
	if (len > 120)
		len = 120;
	sp_err_at(&e, sp_input_name(st->in), sp_input_lineno(st->in), "%s: %.*s", what, (int)len, line);
	st->o->warn(st->o->warn_ctx, &e);
}

/* Character classes by table: the frame-line scan is the hottest loop. */
enum { C_WS = 1, C_HEX = 2, C_WORD = 4 };
static const uint8_t cls[256] = {
	[' '] = C_WS, ['\t'] = C_WS, ['\r'] = C_WS, ['\f'] = C_WS, ['\v'] = C_WS,
	['0' ... '9'] = C_HEX | C_WORD, ['a' ... 'f'] = C_HEX | C_WORD, ['A' ... 'F'] = C_HEX | C_WORD,
	['g' ... 'z'] = C_WORD, ['G' ... 'Z'] = C_WORD, ['_'] = C_WORD,
};
static inline int is_ws(char c) { return cls[(unsigned char)c] & C_WS; }
static inline int is_word(char c) { return cls[(unsigned char)c] & C_WORD; }

static int fc_find(const struct fcache *c, XXH128_hash_t h, size_t *slot, const uint32_t **ids, uint16_t *nids,
		   uint32_t *one);
static void cache_add(struct fcache *c, size_t slot, XXH128_hash_t h, const uint32_t *ids, uint16_t nids);

static uint32_t stack_node(struct perf_state *st)
{
	size_t n = st->nframes;
	if (!n)
		return 0;
	XXH128_hash_t h = XXH3_128bits(st->frames, n * sizeof *st->frames);
	size_t slot;
	const uint32_t *ids;
	uint16_t nids;
	uint32_t one;
	if (fc_find(&st->stacks, h, &slot, &ids, &nids, &one))
		return ids[0];
	uint32_t node = 0;
	for (size_t k = n; k > 0; k--)
		node = sp_node_intern(st->p, node, st->frames[k - 1]);
	cache_add(&st->stacks, slot, h, &node, 1);
	return node;
}

static int flush_sample(struct perf_state *st)
{
	if (!st->in_sample) {
		st->skipping = 0;
		return 0;
	}
	st->in_sample = 0;
	if (st->skipping) {
		st->skipping = 0;
		st->nframes = 0;
		return 0;
	}
	uint32_t node = st->use_node ? st->node : stack_node(st);
	st->use_node = 0;
	st->nframes = 0;
	st->smp.stack = node;
	if (st->sink->sample)
		return st->sink->sample(st->sink, st->p, &st->smp, st->err);
	return 0;
}

/* Skip blanks (' ') eight at a time: perf pads every frame line's address
 * to 16 columns. */
static inline const char *skip_spaces(const char *s, const char *e)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	while (e - s >= 8) {
		uint64_t x;
		memcpy(&x, s, 8);
		x ^= 0x2020202020202020ull;
		if (x)
			return s + (__builtin_ctzll(x) >> 3);
		s += 8;
	}
#endif
	while (s < e && *s == ' ')
		s++;
	return s;
}

/* memmem for the short needles used here: glibc's generic memmem sets up
 * a two-way search on every call, which costs more than these scans. */
static const char *find(const char *h, size_t n, const char *needle, size_t k)
{
	const char *e = h + n;
	while (n >= k) {
		const char *c = memchr(h, needle[0], n - k + 1);
		if (!c)
			return NULL;
		if (!memcmp(c, needle, k))
			return c;
		h = c + 1;
		n = (size_t)(e - h);
	}
	return NULL;
}

/* Does the module name a kernel image?  (stackcollapse-perf.pl:
 * $mod =~ m/(^\[|vmlinux$)/ && $mod !~ /unknown/; and, as inferno, a
 * debug image named vmlinux-VERSION: /usr/lib/debug/boot/vmlinux-6.1.0-26-amd64) */
static int mod_is_kernel(const char *m, size_t n)
{
	if (!n)
		return 0;
	if (find(m, n, "unknown", 7))
		return 0;
	const char *b = memrchr(m, '/', n);
	b = b ? b + 1 : m;
	size_t bn = (size_t)(m + n - b);
	if (m[0] == '[' || (n >= 7 && !memcmp(m + n - 7, "vmlinux", 7)) || (bn > 8 && !memcmp(b, "vmlinux-", 8)))
		return 1;
	/* A kernel module, as inferno: /lib/modules/VERSION/.../mlx5_core.ko
	 * (compressed: .ko.xz, .ko.zst, .ko.gz) */
	const char *ko = find(b, bn, ".ko", 3);
	return ko && (ko + 3 == m + n || ko[3] == '.');
}

/* m:/tmp/perf-\d+\.map: (perf map files), and perf inject --jit's
 * "jitted-PID-N.so" images (as inferno does). */
static int mod_is_jit(const char *m, size_t n)
{
	const char *e = m + n;
	const char *s = m;
	const char *j = find(m, n, "/jitted-", 8);
	if (j && n >= 3 && !memcmp(e - 3, ".so", 3))
		return 1;
	while ((s = find(s, (size_t)(e - s), "/tmp/perf-", 10))) {
		const char *d = s + 10;
		const char *q = d;
		while (q < e && *q >= '0' && *q <= '9')
			q++;
		if (q > d && e - q >= 4 && !memcmp(q, ".map", 4))
			return 1;
		s++;
	}
	return 0;
}

/* Tidy one function name as stackcollapse-perf.pl does, into out. */
static void tidy_name(struct perf_state *st, const char *f, size_t n, struct sp_buf *out)
{
	sp_perf_tidy_name(f, n, st->java, out);
}

void sp_perf_tidy_name(const char *f, size_t n, int java, struct sp_buf *out)
{
	sp_buf_reset(out);
	/* Go method names such as "net/http.(*Client).Do" keep their parens:
	 * $func !~ m/\.\(.*\)\./ */
	int go = 0;
	const char *dp = find(f, n, ".(", 2);
	if (dp) {
		const char *rest = dp + 2;
		size_t rn = (size_t)(f + n - rest);
		if (find(rest, rn, ").", 2))
			go = 1;
	}
	size_t end = n;
	if (!go) {
		/* perl: everything from the first '(' that does not open
		 * "(anonymous namespace)" is dropped.  Like inferno, a '('
		 * inside template arguments ("std::function<int (int, int)>"),
		 * a lambda's "{lambda(int, int)#1}" and the one of "operator()"
		 * are part of the name, as pcollect names them. */
		int depth = 0;
		for (size_t i = 0; i < n; i++) {
			if (n - i >= 8 && !memcmp(f + i, "operator", 8) &&
			    (i == 0 || f[i - 1] == ':' || f[i - 1] == ' ')) {
				i += 8;
				if (n - i >= 2 && f[i] == '(' && f[i + 1] == ')')
					i += 1;
				else
					while (i < n && strchr("<>=!+-*/%^&|~[],", f[i]))
						i++;
				i--;
				continue;
			}
			if (f[i] == '<' || f[i] == '{')
				depth++;
			else if ((f[i] == '>' || f[i] == '}') && depth > 0)
				depth--;
			if (f[i] != '(' || depth > 0)
				continue;
			if (n - i - 1 >= 20 && !memcmp(f + i + 1, "anonymous namespace)", 20))
				continue;
			end = i;
			break;
		}
	}
	for (size_t i = 0; i < end; i++) {
		char c = f[i];
		if (c == ';')
			c = ':';
		else if (c == '"' || c == '\'')
			continue;
		sp_buf_addc(out, c);
	}
	/* Rust legacy names perf printed half-demangled, repaired as inferno
	 * does (stackcollapse-perf.pl keeps them). */
	out->len = sp_rust_tidy(out->p ? out->p : (char *)"", out->len);
	/* Java: Lorg/mozilla/...;.call -> org/mozilla/...:.call */
	if (java && out->len && out->p[0] == 'L' && memchr(out->p, '/', out->len)) {
		memmove(out->p, out->p + 1, out->len - 1);
		out->len--;
	}
}

/* Produce the frames of one frame line (several when "a->b->c" lists
 * inlined functions), pushing them leaf first. */
static void make_frames(struct perf_state *st, const char *pc, size_t pclen, const char *fn, size_t fnlen,
			const char *mod, size_t modlen, uint32_t *ids, uint16_t *nids, size_t maxids)
{
	struct sp_buf *t = &st->tmp;
	uint32_t modid = sp_str_intern(st->p, mod, modlen);
	size_t k = 0;
	const char *s = fn, *e = fn + fnlen;
	int part = 0;
	while (s <= e && k < maxids) {
		const char *arrow = find(s, (size_t)(e - s), "->", 2);
		const char *pe = arrow ? arrow : e;
		const char *f = s;
		size_t n = (size_t)(pe - s);
		char ubuf[512];
		if (n == 9 && !memcmp(f, "[unknown]", 9)) {
			const char *base;
			size_t bn;
			if (!(modlen == 9 && !memcmp(mod, "[unknown]", 9)) && modlen) {
				const char *sl = memrchr(mod, '/', modlen);
				base = sl ? sl + 1 : mod;
				bn = (size_t)(mod + modlen - base);
			} else {
				base = "unknown";
				bn = 7;
			}
			int w;
			if (st->o->addrs)
				w = snprintf(ubuf, sizeof ubuf, "[%.*s <%.*s>]", (int)bn, base, (int)pclen, pc);
			else
				w = snprintf(ubuf, sizeof ubuf, "[%.*s]", (int)bn, base);
			f = ubuf;
			n = (size_t)w < sizeof ubuf ? (size_t)w : sizeof ubuf - 1;
		}
		tidy_name(st, f, n, t);
		/* Functions inlined into the first of "a->b->c" are marked in
		 * their name, as the peers do; "(inlined)" frames of newer perf
		 * are not (the peers leave them bare), only their kind says it. */
		if (part > 0 && !find(t->p ? t->p : "", t->len, "_[i]", 4))
			sp_buf_add(t, "_[i]", 4);
		unsigned kind = SP_KIND_NATIVE;
		if (part > 0 || (modlen == 7 && !memcmp(mod, "inlined", 7)))
			kind = SP_KIND_INLINED;
		else if (mod_is_kernel(mod, modlen))
			kind = SP_KIND_KERNEL;
		else if (mod_is_jit(mod, modlen))
			kind = SP_KIND_JIT;
		struct sp_frame fr = { 0 };
		fr.name = sp_str_intern(st->p, t->p ? t->p : "", t->len);
		fr.module = modid;
		fr.kind = (uint8_t)kind;
		ids[k++] = sp_frame_intern(st->p, &fr);
		part++;
		if (!arrow)
			break;
		s = arrow + 2;
	}
	*nids = (uint16_t)k;
}

#define MAX_INLINE 64

/* Push the frames of one frame line, leaf first.  The perl pushes the parts
 * of "a->b" so that a is nearer the root, so they go in reverse. */
static inline void push_ids(struct perf_state *st, const uint32_t *ids, size_t n)
{
	if (!n) /* (and frames may still be NULL) */
		return;
	if (st->nframes + n > st->capframes) {
		while (st->nframes + n > st->capframes)
			st->capframes = st->capframes ? st->capframes * 2 : 256;
		st->frames = sp_xrealloc(st->frames, st->capframes * sizeof *st->frames);
	}
	uint32_t *f = st->frames + st->nframes;
	for (size_t i = n; i > 0; i--)
		*f++ = ids[i - 1];
	st->nframes += n;
}

/* Look h up in c: 1 and its ids (*one holds a single id), or 0 and *slot,
 * where h goes. */
static inline int fc_find(const struct fcache *c, XXH128_hash_t h, size_t *slot, const uint32_t **ids, uint16_t *nids,
			  uint32_t *one)
{
	size_t i = h.low64 & c->mask;
	uint32_t hi = (uint32_t)h.high64;
	for (;;) {
		const struct fc_slot *sl = &c->tab[i];
		if (!sl->val)
			break;
		if (sl->lo == h.low64 && sl->hi == hi) {
			uint32_t v = sl->val;
			if (v & 1) {
				*one = v >> 1;
				*ids = one;
				*nids = 1;
			} else { /* nids is 0 for a skipped "(process name)" frame */
				*ids = c->pool + (v >> 1) + 1;
				*nids = (uint16_t)c->pool[v >> 1];
			}
			return 1;
		}
		i = (i + 1) & c->mask;
	}
	*slot = i;
	return 0;
}

/* Cache lookup of a frame line by the hash of its raw text (symbol,
 * offset, module) or of its name and module.  Returns 1 and pushes the
 * frames on a hit; else *slot is where the text goes. */
static inline int cache_hit(struct perf_state *st, struct fcache *c, XXH128_hash_t h, size_t *slot)
{
	const uint32_t *ids;
	uint16_t nids;
	uint32_t one;
	if (!fc_find(c, h, slot, &ids, &nids, &one))
		return 0;
	push_ids(st, ids, nids);
	return 1;
}

static void cache_add(struct fcache *c, size_t slot, XXH128_hash_t h, const uint32_t *ids, uint16_t nids)
{
	uint32_t v;
	if (nids == 1) {
		if (ids[0] >= (1u << 31))
			return; /* not kept: too many frames to encode */
		v = ids[0] << 1 | 1;
	} else {
		if (c->npool + 1 + nids >= (1u << 31))
			return;
		if (c->npool + 1 + nids > c->cappool) {
			c->cappool = (c->npool + 1 + nids) * 2;
			c->pool = sp_xrealloc(c->pool, c->cappool * sizeof *c->pool);
		}
		v = (uint32_t)c->npool << 1;
		c->pool[c->npool++] = nids;
		memcpy(c->pool + c->npool, ids, nids * sizeof *ids);
		c->npool += nids;
	}
	c->tab[slot] = (struct fc_slot){ h.low64, (uint32_t)h.high64, v };
	if (++c->used * 4 > c->mask * 3)
		fc_grow(c);
}

/* A frame line "   ADDR SYM+OFF (MODULE)" split: the address, the text
 * after it (raw: symbol, offset, module; trailing blanks cut). */
struct fsplit {
	const char *pc, *s, *raw, *e; /* address; its end; raw text; its end */
};

/* Split the line [s, e) (leading whitespace allowed).  Returns 0 when it is
 * not a frame line. */
static inline int frame_split(const char *s, const char *e, struct fsplit *fs)
{
	const char *pc = NULL, *raw, *a = NULL;
	/* Fast path for perf's own layout, "\t" + the address right-aligned
	 * in 16 columns + " " + the rest: the same split as the general scan
	 * below, found without a loop whose exit branch mispredicts. */
	if (e - s > 17 && s[0] == '\t' && s[17] == ' ') {
		unsigned ok;
#ifdef __SSE2__
		/* the 16 columns: blanks, then hex digits (at least one) */
		__m128i v = _mm_loadu_si128((const __m128i *)(s + 1));
		unsigned sp = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(' ')));
		__m128i lo = _mm_or_si128(v, _mm_set1_epi8(0x20)); /* 'A'-'F' -> 'a'-'f' */
		__m128i dig = _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8('0' - 1)),
					    _mm_cmplt_epi8(v, _mm_set1_epi8('9' + 1)));
		__m128i af = _mm_and_si128(_mm_cmpgt_epi8(lo, _mm_set1_epi8('a' - 1)),
					   _mm_cmplt_epi8(lo, _mm_set1_epi8('f' + 1)));
		unsigned hex = (unsigned)_mm_movemask_epi8(_mm_or_si128(dig, af));
		ok = (sp | hex) == 0xffff && !(sp & (sp + 1)) && sp != 0xffff;
		/* the blanks are the mask's low bits (checked in ok): their
		 * count is its trailing ones, one instruction where popcount
		 * is a libgcc call without -mpopcnt */
		pc = s + 1 + __builtin_ctz(~sp);
#else
		pc = skip_spaces(s + 1, s + 17);
		ok = pc < s + 17;
		for (int i = 1; i < 17; i++)
			ok &= (s + i < pc) | (cls[(unsigned char)s[i]] >> 1);
#endif
		if (ok)
			a = s + 17; /* the blank after the address */
	}
	if (!a) {
		a = s;
		if (a < e && *a == '\t')
			a++;
		a = skip_spaces(a, e);
		pc = a;
		while (a < e && (cls[(unsigned char)*a] & C_HEX))
			a++;
	}
	if (a > pc && a < e && *a == ' ') {
		s = a;
		raw = a + 1;
		while (e > raw && is_ws(e[-1]))
			e--;
		if (raw < e && is_ws(*raw))
			while (raw < e && is_ws(*raw))
				raw++;
	} else {
		while (s < e && is_ws(*s))
			s++;
		pc = s;
		unsigned all = C_HEX | C_WORD;
		while (s < e && (cls[(unsigned char)*s] & C_WORD))
			all &= cls[(unsigned char)*s++];
		if (s == pc || !(all & C_HEX))
			return 0;
		if (s < e && !is_ws(*s))
			return 0;
		while (e > s && is_ws(e[-1]))
			e--;
		raw = s;
		while (raw < e && is_ws(*raw))
			raw++;
	}
	*fs = (struct fsplit){ pc, s, raw, e };
	return 1;
}

static inline XXH128_hash_t frame_hash(const struct perf_state *st, const struct fsplit *fs)
{
	return XXH3_128bits_withSeed(fs->raw, (size_t)(fs->e - fs->raw), (uint64_t)st->java);
}

static int parse_split(struct perf_state *st, const struct fsplit *fs, const XXH128_hash_t *hash);

/* Parse a frame line "   ADDR SYM+OFF (MODULE)" starting at s (leading
 * whitespace allowed).  Returns 1 if it was a frame line, 0 otherwise. */
static int parse_frame(struct perf_state *st, const char *s, const char *e)
{
	struct fsplit fs;
	if (!frame_split(s, e, &fs))
		return 0;
	return parse_split(st, &fs, NULL);
}

/* The rest of parse_frame, given the split and, when known, the hash. */
static int parse_split(struct perf_state *st, const struct fsplit *fs, const XXH128_hash_t *hash)
{
	const char *pc = fs->pc, *s = fs->s, *e = fs->e;
	size_t pclen = (size_t)(s - pc);
	XXH128_hash_t h = { 0, 0 };
	size_t slot = 0;
	int cacheable = !st->dry && !st->skipping;
	if (cacheable) {
		/* Fast path: this exact symbol text was seen before. */
		h = hash ? *hash : frame_hash(st, fs);
		if (cache_hit(st, &st->fc, h, &slot))
			return 1;
	}
	/* The module is inside the last " (" ... ")" of the line.  Between the
	 * address and " (" is the symbol, as perl's
	 * /^\s*(\w+)\s*(.+) \((.*)\)/ splits it, quirks included: trailing
	 * blanks stay, and with no symbol the peers produce " ". */
	const char *fn = NULL, *fe = NULL, *mod = "", *me = mod;
	const char *rp = e > s ? memrchr(s, ')', (size_t)(e - s)) : NULL;
	const char *q = rp;
	while (rp && q > s) {
		const char *lp = memrchr(s, '(', (size_t)(q - s));
		if (!lp)
			break;
		if (lp > s && lp[-1] == ' ') {
			mod = lp + 1;
			me = rp;
			fe = lp - 1;
			fn = s;
			while (fn < fe && is_ws(*fn))
				fn++;
			if (fn == fe) {
				if (fe > s) {
					fn = fe - 1; /* the last blank */
				} else {
					/* "ADDR (MOD)": perl takes the address's last
					 * character as the symbol */
					if (pclen < 2)
						return 0;
					pclen--;
					cacheable = 0; /* the result depends on the address */
					fn = pc + pclen;
				}
				fe = fn + 1;
			}
			break;
		}
		q = lp;
	}
	if (!fn) {
		fn = s;
		while (fn < e && is_ws(*fn))
			fn++;
		fe = e;
		if (fn == fe)
			return 0; /* an address and nothing else */
	}
	if (st->skipping || st->dry)
		return 1;
	/* strip "+0x1f" symbol offsets: s/\+0x[\da-f]+$// */
	const char *x = fe;
	while (x > fn && ((x[-1] >= '0' && x[-1] <= '9') || (x[-1] >= 'a' && x[-1] <= 'f')))
		x--;
	/* With --inline the offset stays on the name: the libdw resolver
	 * (lib/capture/inline.c) needs it to find the address inside the symbol. */
	if (x < fe && x - fn >= 3 && x[-1] == 'x' && x[-2] == '0' && x[-3] == '+' && !st->o->inline_frames)
		fe = x - 3;
	uint32_t ids[MAX_INLINE];
	uint16_t nids = 0;
	if (st->o->addrs && find(fn, (size_t)(fe - fn), "[unknown]", 9))
		cacheable = 0; /* the name is made of the address */
	if (fe > fn && fn[0] == '(') {
		/* perl: "skip process names" */
	} else if (cacheable) {
		/* The same function at another address (another offset) makes
		 * the same frames: the name cache, keyed by the name (offset cut)
		 * and the module, skips tidying and interning them again (most
		 * new frame lines of fresh input are a known function's). */
		XXH128_hash_t hn = XXH3_128bits_withSeed(fn, (size_t)(fe - fn), (uint64_t)st->java);
		hn = XXH3_128bits_withSeed(mod, (size_t)(me - mod), hn.low64 ^ hn.high64 ^ (uint64_t)(fe - fn));
		size_t nslot;
		const uint32_t *known;
		uint32_t one;
		if (fc_find(&st->names, hn, &nslot, &known, &nids, &one)) {
			/* the line's own entry gets the same ids */
			push_ids(st, known, nids);
			cache_add(&st->fc, slot, h, known, nids);
			return 1;
		}
		make_frames(st, pc, pclen, fn, (size_t)(fe - fn), mod, (size_t)(me - mod), ids, &nids, MAX_INLINE);
		cache_add(&st->names, nslot, hn, ids, nids);
	} else {
		make_frames(st, pc, pclen, fn, (size_t)(fe - fn), mod, (size_t)(me - mod), ids, &nids, MAX_INLINE);
	}
	push_ids(st, ids, nids);
	if (cacheable)
		cache_add(&st->fc, slot, h, ids, nids);
	return 1;
}

/* A pid or tid on an event line: digits, or "-1", which perf prints for a
 * task that exited before its comm and pid were recorded (its comm is then
 * ":-1").  stackcollapse-perf.pl's regex takes the period for the pid there
 * (and all of ":-1  -1 [000]  2053.660405:" for the comm) but still weighs
 * the sample by its period; we read the line as perf wrote it: comm ":-1",
 * pid unknown, the period and the timestamp where they are. */
static inline size_t parse_dec(const char *s, const char *e, uint64_t *out)
{
	const char *p = s;
	uint64_t v = 0;
	while (p < e && (unsigned)(*p - '0') < 10)
		v = v * 10 + (uint64_t)(*p++ - '0');
	*out = v;
	return (size_t)(p - s);
}

static inline size_t parse_id(const char *q, const char *e, int64_t *v)
{
	uint64_t u;
	if (e - q >= 2 && q[0] == '-' && q[1] == '1' && (e - q == 2 || !(q[2] >= '0' && q[2] <= '9'))) {
		*v = -1;
		return 2;
	}
	size_t n = parse_dec(q, e, &u);
	*v = (int64_t)u;
	return n;
}

/* comm is the shortest prefix of [s, e) followed by " PID[/TID] " (comms
 * may contain spaces: "V8 WorkerThread 24636/25607 [000] ...").  Returns
 * where the PID[/TID] ends, NULL when the line has none; *comm_end, *pid
 * and *tid are set. */
static const char *find_comm(const char *s, const char *e, int trailing_ws, const char **comm_end, int64_t *pid,
			     int64_t *tid)
{
	const char *c = s + 1;
	while (c < e) {
		const char *w = c;
		while (w < e && *w != ' ' && *w != '\t')
			w++;
		if (w == e)
			break;
		const char *q = w;
		while (q < e && is_ws(*q))
			q++;
		int64_t a, b;
		size_t na = parse_id(q, e, &a);
		if (na) {
			const char *r = q + na;
			int has_b = 0;
			while (r < e && *r == '/')
				r++;
			size_t nb = parse_id(r, e, &b);
			if (nb) {
				has_b = 1;
				r += nb;
			}
			/* perl wants a blank after the pid: "prog  6241 " */
			if ((r == e && trailing_ws) || (r < e && is_ws(*r))) {
				*comm_end = w;
				/* perl: `if (not $tid)`: a tid of 0 (the idle task,
				 * "swapper 0/0") counts as absent, pid becomes "?" */
				if (has_b && b != 0) {
					*pid = a;
					*tid = b;
				} else {
					*tid = a;
				}
				return r;
			}
		}
		c = w + 1;
	}
	return NULL;
}

/* Event and period at the end of [after, e): /:\s*(\d+)*\s+(\S+):\s*$/.
 * *ev stays NULL when there is none. */
static void find_event(const char *after, const char *e, const char **ev, const char **eve, uint64_t *period)
{
	if (e[-1] != ':')
		return;
	const char *q = e - 1;
	const char *t = q;
	while (t > after && !is_ws(t[-1]))
		t--;
	if (!(t < q && t > after))
		return;
	const char *u = t;
	while (u > after && is_ws(u[-1]))
		u--;
	const char *d = u;
	while (d > after && d[-1] >= '0' && d[-1] <= '9')
		d--;
	const char *v = d;
	if (d < u && v > after && !is_ws(v[-1]) && v[-1] != ':')
		return; /* digits glued to something else */
	while (v > after && is_ws(v[-1]))
		v--;
	if (v > after && v[-1] == ':') {
		*ev = t;
		*eve = q;
		parse_dec(d, u, period);
	}
}

/* The timestamp: the first token "SECONDS.FRACTION:" of [after, e) before
 * the event ev (may be NULL); SP_NO_TIME when there is none. */
static uint64_t find_time(const char *after, const char *e, const char *ev)
{
	for (const char *q = after; q < e;) {
		while (q < e && is_ws(*q))
			q++;
		const char *t = q;
		while (q < e && !is_ws(*q))
			q++;
		if (q - t >= 3 && q[-1] == ':') {
			uint64_t sec, frac;
			size_t ns = parse_dec(t, q, &sec);
			if (ns && t[ns] == '.') {
				size_t nf = parse_dec(t + ns + 1, q, &frac);
				if (nf && t + ns + 1 + nf == q - 1) {
					for (size_t k = nf; k < 9; k++)
						frac *= 10;
					for (size_t k = 9; k < nf; k++)
						frac /= 10;
					return sec * 1000000000ull + frac;
				}
			}
		}
		if (ev && t >= ev)
			break;
	}
	return SP_NO_TIME;
}

/* The event's string id, and whether the filter drops the sample (1):
 * by default the first event seen is kept. */
static int filter_event(struct perf_state *st, const char *ev, const char *eve, int single_line, uint32_t *evid)
{
	size_t evn = (size_t)(eve - ev);
	if (st->last_event_str && st->last_event.len == evn && !memcmp(st->last_event.p, ev, evn)) {
		*evid = st->last_event_str;
	} else {
		*evid = sp_str_intern(st->p, ev, evn);
		sp_buf_reset(&st->last_event);
		sp_buf_add(&st->last_event, ev, evn);
		st->last_event_str = *evid;
	}
	if (single_line) {
		/* Single-line samples: the peers' event pattern needs the
		 * line to end at "EVENT:", so they never filter these;
		 * neither do we, to give the same folded output. */
	} else if (!st->filter_event) {
		st->filter_event = *evid;
		st->filter_defaulted = 1;
	} else if (*evid != st->filter_event) {
		if (st->filter_defaulted && st->o->warn && !atomic_exchange(&filter_warned, 1)) {
			struct sp_err n;
			sp_err_set(&n, "filtering for events of type: %s (use --event-filter to choose)",
				   sp_str(st->p, st->filter_event));
			st->o->warn(st->o->warn_ctx, &n);
		}
		return 1;
	}
	return 0;
}

/* The sample's thread (comm [s, s + clen)), re-interned only when it
 * changes. */
static void set_thread(struct perf_state *st, const char *s, size_t clen, int64_t pid, int64_t tid)
{
	if (!st->thr)
		st->thr = sp_xcalloc(THR_WAYS, sizeof *st->thr);
	struct thr_ent *te = &st->thr[sp_mix64((uint64_t)pid * 0x9E3779B97F4A7C15ULL ^ (uint64_t)tid ^ clen) & (THR_WAYS - 1)];
	if (!(te->thread && te->pid == pid && te->tid == tid && te->len == clen && !memcmp(te->comm, s, clen))) {
		uint32_t name = sp_str_intern(st->p, s, clen);
		uint32_t th = sp_thread_intern(st->p, pid, tid, name);
		int java = clen >= 4 && !memcmp(s, "java", 4);
		if (clen > THR_COMM) {
			/* too long to cache: interned every time */
			st->java = java;
			st->smp.thread = th;
			return;
		}
		te->pid = pid;
		te->tid = tid;
		te->thread = th;
		te->len = (uint8_t)clen;
		te->java = (uint8_t)java;
		memcpy(te->comm, s, clen);
	}
	st->java = te->java;
	st->smp.thread = te->thread;
}

/* Parse an event line.  Returns 1 if it is one.  On success a sample is
 * started (or skipped when its event is filtered out). */
static int parse_event(struct perf_state *st, const char *line, size_t len, int strict)
{
	const char *s = line, *e = line + len;
	while (e > s && (e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t'))
		e--;
	int trailing_ws = e < line + len;
	while (s < e && is_ws(*s))
		s++;
	if (s == e)
		return 0;
	const char *comm_end = NULL;
	int64_t pid = -1, tid = -1;
	const char *after = find_comm(s, e, trailing_ws, &comm_end, &pid, &tid);
	if (!after)
		return 0;

	/* A single-line sample carries its frame after "EVENT: ". */
	const char *frame_s = NULL;
	if (e[-1] != ':') {
		const char *q = e;
		while (q > after) {
			const char *col = memrchr(after, ':', (size_t)(q - after));
			if (!col)
				break;
			if (col + 1 < e && is_ws(col[1])) {
				frame_s = col + 1;
				e = col + 1;
				break;
			}
			q = col;
		}
		if (!frame_s && strict)
			return 0;
	}
	const char *ev = NULL, *eve = NULL;
	uint64_t period = 0;
	find_event(after, e, &ev, &eve, &period);
	uint64_t time = st->o && st->o->no_time ? SP_NO_TIME : find_time(after, e, ev);

	if (st->dry)
		return frame_s ? (parse_frame(st, frame_s, line + len) ? 2 : 0) : 1;
	if (flush_sample(st) < 0)
		return -1;
	st->in_sample = 1;
	st->skipping = 0;
	st->nframes = 0;
	st->last_was_frame = 0;

	uint32_t evid = 0;
	if (ev && filter_event(st, ev, eve, frame_s != NULL, &evid)) {
		st->skipping = 1;
		return 1;
	}
	set_thread(st, s, (size_t)(comm_end - s), pid, tid);
	st->smp.event = evid;
	st->smp.time = time;
	st->smp.values[1] = period ? (double)period : 1;
	st->smp.values[0] = st->period_only ? st->smp.values[1] : 1;

	if (frame_s && !parse_frame(st, frame_s, line + len))
		warn_line(st, "cannot parse the frame on this event line", line, len);
	return 1;
}

/* For a line without indentation inside a sample: is it rather the next
 * event line (samples not separated by blank lines)?  Event lines end in
 * "EVENT:" or carry a "SECONDS.FRACTION:" timestamp. */
static int looks_like_event(const char *s, const char *e)
{
	while (e > s && is_ws(e[-1]))
		e--;
	if (e > s && e[-1] == ':')
		return 1;
	for (const char *q = s; q < e; q++) {
		if (*q != ':' || q + 1 >= e || !is_ws(q[1]))
			continue;
		const char *t = q;
		while (t > s && t[-1] >= '0' && t[-1] <= '9')
			t--;
		if (t < q && t > s && t[-1] == '.') {
			const char *u = t - 1;
			while (u > s && u[-1] >= '0' && u[-1] <= '9')
				u--;
			if (u < t - 1 && (u == s || is_ws(u[-1])))
				return 1;
		}
	}
	return 0;
}

/* A line following a frame that is perf's srcline field ("file.c:12" or
 * "lib.so[1234]"). */
static int is_srcline(const char *s, const char *e)
{
	while (s < e && is_ws(*s))
		s++;
	while (e > s && is_ws(e[-1]))
		e--;
	if (e - s > 10 && !memcmp(e - 10, " (inlined)", 10))
		e -= 10;
	if (s == e || memchr(s, ' ', (size_t)(e - s)))
		return 0;
	if (e[-1] == ']')
		return memchr(s, '[', (size_t)(e - s)) != NULL;
	const char *c = memrchr(s, ':', (size_t)(e - s));
	if (!c || c + 1 == e)
		return 0;
	for (const char *q = c + 1; q < e; q++)
		if (*q < '0' || *q > '9')
			return 0;
	return 1;
}

/* Fast path right after an event line: look the sample's frame lines up
 * whole.  Returns 1 when the block was consumed (sample flushed), 0 to let
 * the line loop handle it, -1 on a sink error. */
static int try_block(struct perf_state *st)
{
	size_t n;
	const char *b = sp_input_until_blank(st->in, 4u << 20, &n);
	if (!b)
		return 0;
	if (st->skipping) {
		uint64_t lines = 0;
		for (const char *q = b; (q = memchr(q, '\n', (size_t)(b + n - q))); q++)
			lines++;
		sp_input_consume(st->in, n + 1, lines + 1);
		return flush_sample(st) < 0 ? -1 : 1;
	}
	XXH128_hash_t hh = XXH3_128bits_withSeed(b, n, (uint64_t)st->java);
	if (!st->blocks) {
		size_t sz = (size_t)BLOCK_SETS * BLOCK_WAYS * sizeof *st->blocks;
		void *m = NULL;
		if (posix_memalign(&m, 64, sz))
			m = sp_xmalloc(sz); /* (not aligned: only slower) */
		memset(m, 0, sz);
		st->blocks = m;
	}
	struct block_ent *set = st->blocks + (hh.low64 & (BLOCK_SETS - 1)) * BLOCK_WAYS;
	for (int w = 0; w < BLOCK_WAYS; w++) {
		if (set[w].hi == hh.high64 && set[w].nlines) { /* (an entry holds >= 1 line; 0: empty) */
			struct block_ent hit = set[w];
			memmove(set + 1, set, (size_t)w * sizeof *set); /* to the front */
			set[0] = hit;
			sp_input_consume(st->in, n + 1, (uint64_t)hit.nlines + 1);
			st->use_node = 1;
			st->node = hit.node;
			return flush_sample(st) < 0 ? -1 : 1;
		}
	}
	/* Miss: parse the lines here; anything but frame and srcline lines
	 * (an event line, a bad line) goes back to the line loop, which
	 * reports it. */
	uint32_t nlines = 0;
	st->last_was_frame = 0;
	/* In batches of lines: each line split and hashed and its cache slot
	 * prefetched first, then looked up, so that the cache misses of a
	 * batch overlap instead of coming one after another. */
	enum { BATCH = 32 };
	struct {
		const char *q, *le;
		int frame;
		struct fsplit fs;
		XXH128_hash_t h;
	} bt[BATCH];
	for (const char *q = b, *end = b + n; q < end;) {
		int k = 0;
		for (; k < BATCH && q < end; k++) {
			const char *le = sp_find_nl(q, end);
			bt[k].q = q;
			bt[k].le = le;
			bt[k].frame = frame_split(q, le, &bt[k].fs);
			if (bt[k].frame) {
				bt[k].h = frame_hash(st, &bt[k].fs);
				__builtin_prefetch(&st->fc.tab[bt[k].h.low64 & st->fc.mask]);
			}
			q = le + 1;
		}
		for (int i = 0; i < k; i++) {
			const char *lq = bt[i].q, *le = bt[i].le;
			/* a frame line that starts with a blank is neither blank
			 * nor an event line */
			if (!bt[i].frame || !is_ws(*lq)) {
				const char *t = lq;
				while (t < le && is_ws(*t))
					t++;
				if (t == le || (t == lq && looks_like_event(lq, le))) {
					st->nframes = 0;
					return 0;
				}
			}
			if (bt[i].frame && parse_split(st, &bt[i].fs, &bt[i].h)) {
				st->last_was_frame = 1;
			} else if (st->last_was_frame && is_srcline(lq, le)) {
				st->last_was_frame = 0;
			} else {
				st->nframes = 0;
				return 0;
			}
			nlines++;
		}
	}
	uint32_t node = stack_node(st);
	memmove(set + 1, set, (BLOCK_WAYS - 1) * sizeof *set);
	set[0] = (struct block_ent){ hh.high64, node, nlines };
	sp_input_consume(st->in, n + 1, (uint64_t)nlines + 1);
	st->use_node = 1;
	st->node = node;
	st->nframes = 0;
	return flush_sample(st) < 0 ? -1 : 1;
}

struct sp_perf_reader {
	struct perf_state st;
};

struct sp_perf_reader *sp_perf_reader_new(struct sp_profile *p, struct sp_sink *sink, struct sp_read_opts *o)
{
	struct sp_perf_reader *r = sp_xcalloc(1, sizeof *r);
	struct perf_state *st = &r->st;
	st->p = p;
	st->sink = sink;
	st->o = o;
	fc_init(&st->fc);
	fc_init(&st->names);
	fc_init(&st->stacks);
	sp_buf_init(&st->last_event);
	sp_buf_init(&st->tmp);
	if (sp_profile_nvalues(p) == 0) {
		static const char *const names[] = { "samples", "period" };
		sp_profile_set_values(p, 2, names);
	}
	/* after folded text (one column of unknown unit, what pfold
	 * printed: the period), the period fills it, as a stream's does */
	st->period_only = sp_profile_nvalues(p) == 1 && !strcmp(sp_profile_value_name(p, 0), "value");
	if (o->event_filter && *o->event_filter) {
		st->filter_event = sp_str_intern(p, o->event_filter, strlen(o->event_filter));
		st->filter_defaulted = o->event_filter_defaulted;
	}
	return r;
}

void sp_perf_reader_free(struct sp_perf_reader *r)
{
	if (!r)
		return;
	struct perf_state *st = &r->st;
	fc_release(&st->fc);
	fc_release(&st->names);
	fc_release(&st->stacks);
	free(st->frames);
	free(st->blocks);
	free(st->thr);
	sp_buf_release(&st->last_event);
	sp_buf_release(&st->tmp);
	free(r);
}

int sp_perf_reader_feed(struct sp_perf_reader *r, struct sp_input *in, struct sp_err *err)
{
	struct perf_state *st = &r->st;
	struct sp_sink *sink = st->sink;
	struct sp_profile *p = st->p;
	st->in = in;
	st->err = err;
	int rc = 0;
	const char *line;
	size_t len;
	while ((line = sp_input_line(in, &len))) {
		if (len && line[0] == '#') {
			if (len > 12 && !memcmp(line, "# cmdline : ", 12) && !st->in_sample) {
				sp_buf_reset(&st->tmp);
				sp_buf_add(&st->tmp, line + 12, len - 12);
				while (st->tmp.len && is_ws(st->tmp.p[st->tmp.len - 1]))
					st->tmp.len--;
				sp_meta_add(p, "command", sp_buf_cstr(&st->tmp));
				if (sink->meta && sink->meta(sink, p, err) < 0) {
					rc = -1;
					break;
				}
			}
			continue;
		}
		const char *e = line + len;
		const char *s = line;
		while (s < e && is_ws(*s))
			s++;
		if (s == e) {
			if (flush_sample(st) < 0) {
				rc = -1;
				break;
			}
			continue;
		}
		if (!st->in_sample) {
			int pr = parse_event(st, line, len, 0);
			if (pr < 0) {
				rc = -1;
				break;
			}
			if (pr == 1 && st->in_sample && !st->nframes) {
				int b = try_block(st);
				if (b < 0) {
					rc = -1;
					break;
				}
				if (b)
					continue;
			}
			if (pr == 0) {
				if (line[0] != s[0] && parse_frame(&(struct perf_state){ .dry = 1 }, line, e))
					warn_line(st, "stack line outside a sample (no event line before it)", line, len);
				else
					warn_line(st, "not an event line", line, len);
			}
			continue;
		}
		/* Inside a sample: a frame, a srcline, or (no blank line between
		 * samples) the next event line. */
		if (line[0] != s[0] || !looks_like_event(line, e)) {
			if (parse_frame(st, line, e)) {
				st->last_was_frame = 1;
				continue;
			}
			if (st->last_was_frame && is_srcline(line, e)) {
				st->last_was_frame = 0;
				continue;
			}
		}
		int pr = parse_event(st, line, len, line[0] == s[0] ? 0 : 1);
		if (pr < 0) {
			rc = -1;
			break;
		}
		if (pr == 0)
			warn_line(st, "cannot parse stack line", line, len);
	}
	if (!rc && flush_sample(st) < 0)
		rc = -1;
	if (!rc && sp_input_failed(in, err))
		rc = -1;
	st->in = NULL;
	return rc;
}

static int perf_read(struct sp_input *in, struct sp_profile *p, struct sp_sink *sink, struct sp_read_opts *o,
		     struct sp_err *err)
{
	struct sp_perf_reader *r = sp_perf_reader_new(p, sink, o);
	int rc = sp_perf_reader_feed(r, in, err);
	if (!rc && sink->end_input && sink->end_input(sink, p, err) < 0)
		rc = -1;
	sp_perf_reader_free(r);
	return rc;
}

const char *sp_perf_first_event(const char *buf, size_t n, struct sp_buf *out)
{
	/* Find the first event line and return its event name (into out). */
	struct sp_input *in = sp_input_mem(buf, n, "-");
	struct sp_profile *p = sp_profile_new();
	struct sp_read_opts o = { 0 };
	struct perf_state st;
	memset(&st, 0, sizeof st);
	st.p = p;
	st.o = &o;
	st.in = in;
	struct sp_sink none = { 0 };
	st.sink = &none;
	sp_buf_init(&st.last_event);
	sp_buf_init(&st.tmp);
	fc_init(&st.fc);
	fc_init(&st.names);
	fc_init(&st.stacks);
	const char *res = NULL;
	const char *line;
	size_t len;
	int prev_blank = 1;
	while ((line = sp_input_line(in, &len))) {
		if (len && line[0] == '#')
			continue;
		int blank = 1;
		for (size_t i = 0; i < len; i++)
			if (!is_ws(line[i]))
				blank = 0;
		if (!blank && prev_blank && parse_event(&st, line, len, 0) == 1) {
			if (st.filter_event) {
				sp_buf_reset(out);
				sp_buf_adds(out, sp_str(p, st.filter_event));
				res = sp_buf_cstr(out);
			}
			break;
		}
		prev_blank = blank;
	}
	fc_release(&st.fc);
	fc_release(&st.names);
	fc_release(&st.stacks);
	free(st.frames);
	free(st.thr);
	sp_buf_release(&st.last_event);
	sp_buf_release(&st.tmp);
	sp_profile_free(p);
	sp_input_close(in);
	return res;
}

static int ends_with_colon(const char *s, const char *e)
{
	while (e > s && is_ws(e[-1]))
		e--;
	return e > s && e[-1] == ':';
}

/* Probe: perf script text is event lines, each followed by its frame lines
 * (or carrying its one frame), samples separated by blank lines.  An event
 * line, a blank line and then frame lines is not perf (inferno agrees). */
static int perf_probe(const char *buf, size_t n, int complete)
{
	const char *s = buf, *e = buf + n;
	int state = 0; /* 0 expect an event, 1 after an event, 2 after event + blank */
	int with_event = 0;
	int lines = 0;
	while (s < e && lines < 200) {
		const char *nl = memchr(s, '\n', (size_t)(e - s));
		if (!nl && !complete)
			break;
		const char *le = nl ? nl : e;
		lines++;
		const char *t = s;
		while (t < le && is_ws(*t))
			t++;
		struct perf_state st;
		memset(&st, 0, sizeof st);
		st.dry = 1;
		if (t == le) {
			if (state == 1)
				state = 2;
		} else if (*s == '#' && state != 1) {
			/* perf's header */
		} else if (state == 0) {
			int r = parse_event(&st, s, (size_t)(le - s), 0);
			if (r == 2)
				return 90; /* single-line samples */
			if (r != 1)
				return 0;
			state = 1;
			with_event = ends_with_colon(s, le);
		} else if (state == 1 && parse_frame(&st, s, le)) {
			return 95;
		} else if (with_event && ends_with_colon(s, le) && parse_event(&st, s, (size_t)(le - s), 0) == 1) {
			return 80; /* samples without stacks: "comm pid ... EVENT:" lines */
		} else {
			return 0;
		}
		if (!nl)
			break;
		s = nl + 1;
	}
	return complete && state ? 60 : 0;
}

const struct sp_format sp_format_perf = {
	"perf", "perf script text output", perf_probe, perf_read,
};
