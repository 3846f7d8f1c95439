/* util.h — growable buffers, arenas, errors and small hashing helpers.
 *
 * Ownership: a struct sp_buf owns its bytes; sp_buf_release frees them and
 * leaves the buffer empty and reusable.  An sp_arena owns every block it
 * handed out; they live until sp_arena_release.  The library never prints or
 * exits (but lib/cli, the commands' own layer, which prints their messages):
 * functions that can fail return -1 and fill a caller-owned sp_err.
 */
#ifndef SP_UTIL_H
#define SP_UTIL_H

#include <regex.h>
#include <stddef.h>
#include <stdint.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include <stdlib.h>
#include <string.h>

#define SP_UNUSED __attribute__((unused))
#define SP_LIKELY(x) __builtin_expect(!!(x), 1)
#define SP_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Allocation that cannot fail: on out-of-memory the process aborts with a
 * message, since every caller would otherwise do the same. */
void *sp_xmalloc(size_t n);
void *sp_xcalloc(size_t n, size_t size);
/* calloc for a hash table that is probed (read) before it is written: its
 * pages are written here, so that no page is first mapped to the kernel's
 * zero page and then copied at its first store (calloc's fresh pages are
 * read-mapped that way; in a threaded process each such copy flushes the
 * TLB of every CPU by interrupt). */
void *sp_xzalloc(size_t n, size_t size);
void *sp_xrealloc(void *p, size_t n);
char *sp_xstrndup(const char *s, size_t n);

struct sp_buf {
	char *p;
	size_t len, cap;
};
#define SP_BUF_INIT { NULL, 0, 0 }
void sp_buf_init(struct sp_buf *b);
void sp_buf_release(struct sp_buf *b);
void sp_buf_grow(struct sp_buf *b, size_t extra);
/* SP_RUNSORT(NAME, T, LESS) defines T *NAME(T *v, size_t n, T *tmp): a
 * stable natural merge sort of v[0..n) by the inline comparison LESS(a, b)
 * (pointers), for data made of long ascending runs (symbol tables,
 * /proc/kallsyms, perf.data's per-CPU streams): a few passes without
 * qsort's indirect calls and byte-wise copies.  tmp holds n elements; the
 * sorted data ends in v or in tmp, whichever is returned (v, untouched,
 * when it was in order). */
#define SP_RUNSORT(NAME, T, LESS)                                                                  \
	static T *NAME(T *v, size_t n, T *tmp)                                                     \
	{                                                                                          \
		size_t sorted = 1; /* in order already (one CPU's records): no pass */             \
		while (sorted < n && !LESS(&v[sorted], &v[sorted - 1]))                            \
			sorted++;                                                                  \
		if (sorted >= n)                                                                   \
			return v;                                                                  \
		T *src = v, *dst = tmp;                                                            \
		for (;;) {                                                                         \
			size_t i = 0, runs = 0;                                                    \
			while (i < n) {                                                            \
				size_t m = i + 1;                                                  \
				while (m < n && !LESS(&src[m], &src[m - 1]))                       \
					m++;                                                       \
				size_t e = m;                                                      \
				if (m < n) {                                                       \
					e = m + 1;                                                 \
					while (e < n && !LESS(&src[e], &src[e - 1]))               \
						e++;                                               \
				}                                                                  \
				size_t a = i, b = m, o = i;                                        \
				while (a < m && b < e)                                             \
					dst[o++] = LESS(&src[b], &src[a]) ? src[b++] : src[a++];   \
				while (a < m)                                                      \
					dst[o++] = src[a++];                                       \
				while (b < e)                                                      \
					dst[o++] = src[b++];                                       \
				runs++;                                                            \
				i = e;                                                             \
			}                                                                          \
			T *t = src;                                                                \
			src = dst;                                                                 \
			dst = t;                                                                   \
			if (runs <= 1)                                                             \
				return src;                                                        \
		}                                                                                  \
	}
/* The first '\n' in [s, e), or NULL: memchr for the short lines of stack
 * text (some 60 bytes), inlined, 16 bytes per step with SSE2: a call of
 * glibc's memchr per line cost more than its scan. */
static inline const char *sp_find_nl(const char *s, const char *e)
{
#ifdef __SSE2__
	const __m128i nl = _mm_set1_epi8('\n');
	while (e - s >= 16) {
		unsigned m = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)s), nl));
		if (m)
			return s + __builtin_ctz(m);
		s += 16;
	}
	for (; s < e; s++)
		if (*s == '\n')
			return s;
	return NULL;
#else
	return s < e ? memchr(s, '\n', (size_t)(e - s)) : NULL;
#endif
}

/* The first "\n\n" in [s, e), or NULL. */
static inline const char *sp_find_blank(const char *s, const char *e)
{
#ifdef __SSE2__
	const __m128i nl = _mm_set1_epi8('\n');
	unsigned carry = 0; /* the byte before s was '\n' */
	while (e - s >= 16) {
		unsigned m = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)s), nl));
		if (carry && (m & 1))
			return s - 1;
		unsigned pair = m & (m >> 1);
		if (pair)
			return s + __builtin_ctz(pair);
		carry = m >> 15;
		s += 16;
	}
	if (carry && s < e && *s == '\n')
		return s - 1;
#endif
	for (; e - s >= 2; s++)
		if (s[0] == '\n' && s[1] == '\n')
			return s;
	return NULL;
}

/* qsort that accepts an empty (possibly NULL) array: qsort(NULL, 0, ...)
 * is undefined behaviour. */
static inline void sp_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

static inline void sp_buf_reset(struct sp_buf *b) { b->len = 0; }
static inline void sp_buf_add(struct sp_buf *b, const void *p, size_t n)
{
	if (!n)
		return;
	if (SP_UNLIKELY(b->len + n > b->cap))
		sp_buf_grow(b, n);
	memcpy(b->p + b->len, p, n);
	b->len += n;
}
static inline void sp_buf_addc(struct sp_buf *b, char c)
{
	if (SP_UNLIKELY(b->len + 1 > b->cap))
		sp_buf_grow(b, 1);
	b->p[b->len++] = c;
}
static inline void sp_buf_adds(struct sp_buf *b, const char *s) { sp_buf_add(b, s, strlen(s)); }
/* An unsigned LEB128 varint (the binary stream's and protobuf's). */
static inline void sp_buf_add_uvarint(struct sp_buf *b, uint64_t v)
{
	if (SP_UNLIKELY(b->len + 10 > b->cap))
		sp_buf_grow(b, 10);
	unsigned char *p = (unsigned char *)b->p + b->len;
	while (v >= 0x80) {
		*p++ = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	*p++ = (unsigned char)v;
	b->len = (size_t)((char *)p - b->p);
}
void sp_buf_addf(struct sp_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* s as a JSON string, quotes included: " and \ escaped, control bytes as
 * \u00XX (other bytes as they are: the caller's text is UTF-8 or not). */
void sp_buf_add_json_str(struct sp_buf *b, const char *s);
void sp_buf_addu64(struct sp_buf *b, uint64_t v);
void sp_buf_addi64(struct sp_buf *b, int64_t v);
/* A count as folded text prints it: integers without a fraction, others
 * with up to 17 significant digits. */
void sp_buf_addnum(struct sp_buf *b, double v);
/* NUL-terminates without counting the NUL in len. */
const char *sp_buf_cstr(struct sp_buf *b);

/* Bump allocator for interned strings and other data that lives as long as
 * the profile. */
struct sp_arena {
	struct sp_arena_block *head;
	char *cur, *end;
	size_t total;
};
void sp_arena_init(struct sp_arena *a);
void sp_arena_release(struct sp_arena *a);
void *sp_arena_alloc(struct sp_arena *a, size_t n, size_t align);
char *sp_arena_strndup(struct sp_arena *a, const char *s, size_t n);

/* Errors: a message plus where (file, line or byte offset) it happened. */
struct sp_err {
	char msg[480];
	char where[256]; /* "FILE:LINE" or "FILE: offset N" or "" */
	int code;        /* 0, or SP_ERR_EMPTY: the input held nothing; SP_ERR_NOMATCH */
	int errnum;      /* the errno of the system call that failed, 0 when none did */
};
#define SP_ERR_EMPTY 1
#define SP_ERR_NOMATCH 2 /* a pattern matched nothing */
int sp_err_set(struct sp_err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int sp_err_at(struct sp_err *e, const char *file, uint64_t line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
int sp_err_off(struct sp_err *e, const char *file, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* As sp_err_set, and errnum: the errno of the system call that failed
 * (sp_err_set/at/off clear it). */
int sp_err_sys(struct sp_err *e, int errnum, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* "write error: REASON", errnum set: the writers' failed write. */
int sp_err_write(struct sp_err *e, int errnum);
/* The failure was a write to a pipe or socket whose reader has gone
 * (| head, a viewer that quit): EPIPE.  The one test every command uses to
 * end quietly on it. */
int sp_err_is_closed_pipe(const struct sp_err *e);

/* xxh3 64, inlined: interning hashes short strings on every input line. */
#define XXH_INLINE_ALL
#include <xxhash.h>
static inline uint64_t sp_hash(const void *p, size_t n) { return XXH3_64bits(p, n); }
static inline uint64_t sp_hash_seed(const void *p, size_t n, uint64_t seed)
{
	return XXH3_64bits_withSeed(p, n, seed);
}
static inline uint64_t sp_mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

/* Integer id map: 64-bit key -> 32-bit value, open addressing.  Key
 * UINT64_MAX is reserved.  Key and value share a 16-byte slot: a probe of a
 * map larger than the CPU's caches costs one cache miss, not two. */
struct sp_u64slot {
	uint64_t key;
	uint32_t val, pad;
};
struct sp_u64map {
	struct sp_u64slot *tab;
	size_t mask, used;
};
void sp_u64map_init(struct sp_u64map *m);
void sp_u64map_release(struct sp_u64map *m);
void sp_u64map_grow(struct sp_u64map *m);
/* Returns a pointer to the value slot; *found says whether it existed.  A new
 * slot's value is 0. */
static inline uint32_t *sp_u64map_slot(struct sp_u64map *m, uint64_t key, int *found)
{
	if (!m->tab || (m->used + 1) * 4 > (m->mask + 1) * 3)
		sp_u64map_grow(m);
	size_t i = sp_mix64(key) & m->mask;
	for (;;) {
		struct sp_u64slot *s = &m->tab[i];
		if (s->key == key) {
			*found = 1;
			return &s->val;
		}
		if (s->key == UINT64_MAX) {
			s->key = key;
			s->val = 0;
			m->used++;
			*found = 0;
			return &s->val;
		}
		i = (i + 1) & m->mask;
	}
}
static inline uint32_t sp_u64map_get(const struct sp_u64map *m, uint64_t key, int *found)
{
	if (!m->tab) {
		*found = 0;
		return 0;
	}
	size_t i = sp_mix64(key) & m->mask;
	for (;;) {
		const struct sp_u64slot *s = &m->tab[i];
		if (s->key == key) {
			*found = 1;
			return s->val;
		}
		if (s->key == UINT64_MAX) {
			*found = 0;
			return 0;
		}
		i = (i + 1) & m->mask;
	}
}

/* Decimal parsing helpers: return the number of bytes consumed, 0 if none. */
size_t sp_parse_u64(const char *s, const char *end, uint64_t *out);
/* Rewrite a half-demangled Rust legacy name in place ("_$LT$a..B$GT$::f::h0123456789abcdef"
 * -> "<a::B>::f"); other names are left alone.  Returns the new length. */
size_t sp_rust_tidy(char *s, size_t n);

/* Grow array a of *n zeroed elements of elem bytes so that index want is
 * in it (doubling, from 256), the new part zeroed; returns the array. */
void *sp_xgrow0(void *a, size_t *n, size_t want, size_t elem);
/* -t PATTERN (a thread name's extended regular expression) compiled into
 * *re: 0, or -1 with err "-t 'PATTERN': what regcomp says". */
int sp_thread_regex(regex_t *re, const char *pattern, struct sp_err *err);

/* CLOCK_MONOTONIC, in seconds and in nanoseconds. */
double sp_mono_s(void);
uint64_t sp_mono_ns(void);

/* A time budget for work done while a process is stopped: the CPU time of
 * the calling thread (what the work costs, whatever the machine's load)
 * and a cap on the wall-clock time (how long the process stands still on
 * a loaded machine).  All zero: no budget. */
struct sp_budget {
	uint64_t cpu_end;  /* CLOCK_THREAD_CPUTIME_ID ns, 0 none */
	uint64_t wall_end; /* CLOCK_MONOTONIC ns, 0 none */
};
/* CLOCK_THREAD_CPUTIME_ID: the calling thread's CPU time, ns. */
uint64_t sp_thread_cpu_ns(void);
/* From now on: cpu_ns of CPU time, wall_ns of wall-clock time at most. */
void sp_budget_start(struct sp_budget *b, uint64_t cpu_ns, uint64_t wall_ns);
/* Non-zero once either is spent. */
int sp_budget_spent(const struct sp_budget *b);
/* Write all n bytes to fd, through short writes and EINTR: 0, or -1 with
 * errno set. */
int sp_write_all(int fd, const void *p, size_t n);
/* An unlinked temporary file in $TMPDIR (else /tmp), read and written
 * through its descriptor, gone when it is closed: the descriptor, or -1
 * with err "cannot create a temporary file in DIR for WHY: REASON". */
int sp_tmpfile(const char *why, struct sp_err *err);
/* The file execvp(3) runs for cmd: cmd itself when it holds a '/', else
 * the first executable DIR/cmd along path (a $PATH value; NULL or empty:
 * /usr/local/bin:/usr/bin:/bin; an empty DIR is the current directory).
 * A malloc'd path, or NULL with err "CMD: command not found". */
char *sp_path_search(const char *cmd, const char *path, struct sp_err *err);

#endif
