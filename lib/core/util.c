/* util.c — buffers, arenas, errors, hashing. */
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static void oom(size_t n)
{
	fprintf(stderr, "stackpipe: out of memory allocating %zu bytes\n", n);
	abort();
}

void *sp_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

void *sp_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom(n * size);
	return p;
}

void *sp_xzalloc(size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		oom(SIZE_MAX);
	void *p = sp_xmalloc(n * size);
	memset(p, 0, n * size);
	return p;
}

void *sp_xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

char *sp_xstrndup(const char *s, size_t n)
{
	char *p = sp_xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

void sp_buf_init(struct sp_buf *b)
{
	b->p = NULL;
	b->len = b->cap = 0;
}

void sp_buf_release(struct sp_buf *b)
{
	free(b->p);
	sp_buf_init(b);
}

void sp_buf_grow(struct sp_buf *b, size_t extra)
{
	size_t want = b->len + extra + 1;
	if (want <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 64;
	while (cap < want)
		cap *= 2;
	b->p = sp_xrealloc(b->p, cap);
	b->cap = cap;
}

void sp_buf_addf(struct sp_buf *b, const char *fmt, ...)
{
	va_list ap, aq;
	sp_buf_grow(b, 64);
	va_start(ap, fmt);
	va_copy(aq, ap);
	size_t avail = b->cap - b->len;
	int n = vsnprintf(b->p + b->len, avail, fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n >= avail) {
		sp_buf_grow(b, (size_t)n + 1);
		vsnprintf(b->p + b->len, (size_t)n + 1, fmt, aq);
	}
	va_end(aq);
	if (n > 0)
		b->len += (size_t)n;
}

void sp_buf_addu64(struct sp_buf *b, uint64_t v)
{
	/* Two digits per division: writers of large JSON files (ptimeline)
	 * spend much of their time here. */
	static const char pairs[201] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
				       "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
				       "8081828384858687888990919293949596979899";
	char tmp[24];
	int i = 24;
	while (v >= 100) {
		unsigned r = (unsigned)(v % 100);
		v /= 100;
		tmp[--i] = pairs[2 * r + 1];
		tmp[--i] = pairs[2 * r];
	}
	if (v >= 10) {
		tmp[--i] = pairs[2 * v + 1];
		tmp[--i] = pairs[2 * v];
	} else {
		tmp[--i] = (char)('0' + v);
	}
	sp_buf_add(b, tmp + i, (size_t)(24 - i));
}

void sp_buf_addi64(struct sp_buf *b, int64_t v)
{
	if (v < 0) {
		sp_buf_addc(b, '-');
		sp_buf_addu64(b, (uint64_t)0 - (uint64_t)v);
	} else {
		sp_buf_addu64(b, (uint64_t)v);
	}
}

void sp_buf_addnum(struct sp_buf *b, double v)
{
	if (v == floor(v) && fabs(v) < 9.2e18) {
		sp_buf_addi64(b, (int64_t)v);
		return;
	}
	char tmp[40];
	/* Shortest representation that reads back the same. */
	for (int prec = 6; prec <= 17; prec++) {
		snprintf(tmp, sizeof tmp, "%.*g", prec, v);
		if (strtod(tmp, NULL) == v)
			break;
	}
	sp_buf_adds(b, tmp);
}

const char *sp_buf_cstr(struct sp_buf *b)
{
	sp_buf_grow(b, 1);
	b->p[b->len] = 0;
	return b->p;
}

struct sp_arena_block {
	struct sp_arena_block *next;
	size_t size;
	char data[];
};

void sp_arena_init(struct sp_arena *a)
{
	a->head = NULL;
	a->cur = a->end = NULL;
	a->total = 0;
}

void sp_arena_release(struct sp_arena *a)
{
	struct sp_arena_block *b = a->head;
	while (b) {
		struct sp_arena_block *n = b->next;
		free(b);
		b = n;
	}
	sp_arena_init(a);
}

void *sp_arena_alloc(struct sp_arena *a, size_t n, size_t align)
{
	uintptr_t c = ((uintptr_t)a->cur + (align - 1)) & ~(uintptr_t)(align - 1);
	if (!a->cur || c + n > (uintptr_t)a->end) {
		size_t sz = 64 * 1024;
		if (a->total > 1024 * 1024)
			sz = 1024 * 1024;
		if (sz < n + align)
			sz = n + align;
		struct sp_arena_block *b = sp_xmalloc(sizeof *b + sz);
		b->next = a->head;
		b->size = sz;
		a->head = b;
		a->total += sz;
		a->cur = b->data;
		a->end = b->data + sz;
		c = ((uintptr_t)a->cur + (align - 1)) & ~(uintptr_t)(align - 1);
	}
	a->cur = (char *)(c + n);
	return (void *)c;
}

char *sp_arena_strndup(struct sp_arena *a, const char *s, size_t n)
{
	char *p = sp_arena_alloc(a, n + 1, 1);
	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

static void err_vset(struct sp_err *e, int errnum, const char *fmt, va_list ap)
{
	vsnprintf(e->msg, sizeof e->msg, fmt, ap);
	e->where[0] = 0;
	e->code = 0;
	e->errnum = errnum;
}
/* err_vset with the caller's variable arguments after fmt. */
#define ERR_SET(e, errnum, fmt)                       \
	do {                                          \
		va_list ap;                           \
		va_start(ap, fmt);                    \
		err_vset(e, errnum, fmt, ap);         \
		va_end(ap);                           \
	} while (0)

int sp_err_set(struct sp_err *e, const char *fmt, ...)
{
	if (!e)
		return -1;
	ERR_SET(e, 0, fmt);
	return -1;
}

int sp_err_sys(struct sp_err *e, int errnum, const char *fmt, ...)
{
	if (!e)
		return -1;
	ERR_SET(e, errnum, fmt);
	return -1;
}

int sp_err_at(struct sp_err *e, const char *file, uint64_t line, const char *fmt, ...)
{
	if (!e)
		return -1;
	ERR_SET(e, 0, fmt);
	snprintf(e->where, sizeof e->where, "%s:%llu", file ? file : "-", (unsigned long long)line);
	return -1;
}

int sp_err_off(struct sp_err *e, const char *file, uint64_t off, const char *fmt, ...)
{
	if (!e)
		return -1;
	ERR_SET(e, 0, fmt);
	snprintf(e->where, sizeof e->where, "%s: offset %llu", file ? file : "-", (unsigned long long)off);
	return -1;
}

int sp_err_write(struct sp_err *e, int errnum) { return sp_err_sys(e, errnum, "write error: %s", strerror(errnum)); }

int sp_err_is_closed_pipe(const struct sp_err *e) { return e && e->errnum == EPIPE; }

void sp_u64map_init(struct sp_u64map *m)
{
	m->tab = NULL;
	m->mask = 0;
	m->used = 0;
}

void sp_u64map_release(struct sp_u64map *m)
{
	free(m->tab);
	sp_u64map_init(m);
}

void sp_u64map_grow(struct sp_u64map *m)
{
	struct sp_u64slot *old = m->tab;
	size_t ocap = old ? m->mask + 1 : 0;
	size_t cap = old ? ocap * 2 : 1024;
	m->tab = sp_xmalloc(cap * sizeof *m->tab);
	for (size_t i = 0; i < cap; i++)
		m->tab[i] = (struct sp_u64slot){ UINT64_MAX, 0, 0 };
	m->mask = cap - 1;
	for (size_t i = 0; i < ocap; i++) {
		if (old[i].key == UINT64_MAX)
			continue;
		size_t j = sp_mix64(old[i].key) & m->mask;
		while (m->tab[j].key != UINT64_MAX)
			j = (j + 1) & m->mask;
		m->tab[j] = old[i];
	}
	free(old);
}

size_t sp_parse_u64(const char *s, const char *end, uint64_t *out)
{
	const char *p = s;
	uint64_t v = 0;
	while (p < end && *p >= '0' && *p <= '9') {
		v = v * 10 + (uint64_t)(*p - '0');
		p++;
	}
	*out = v;
	return (size_t)(p - s);
}

/* Rust's legacy mangling, as perf and __cxa_demangle leave it:
 * "_$LT$core..str..Chars$LT$$u27$a$GT$$u20$as$u20$Iterator$GT$::next::h3192360e451206ea"
 * -> "<core::str::Chars<'a> as Iterator>::next" (as inferno and rustc-demangle
 * print it).  Only names that end in the "::h" + 16 hex digits hash are
 * touched.  The result is never longer; returns its length. */
size_t sp_rust_tidy(char *s, size_t n)
{
	if (n < 20 || memcmp(s + n - 19, "::h", 3))
		return n;
	for (size_t i = n - 16; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return n;
	n -= 19;
	static const struct { const char *esc; char c; } tab[] = {
		{ "$LT$", '<' }, { "$GT$", '>' }, { "$RF$", '&' }, { "$BP$", '*' }, { "$C$", ',' },
		{ "$SP$", '@' }, { "$LP$", '(' }, { "$RP$", ')' },
	};
	size_t i = 0, o = 0;
	if (n >= 2 && s[0] == '_' && s[1] == '$')
		i = 1; /* "_$LT$..." is how a name that starts with '<' is mangled */
	while (i < n) {
		char c = s[i];
		if (c == '.' && i + 1 < n && s[i + 1] == '.') {
			s[o++] = ':';
			s[o++] = ':';
			i += 2;
			continue;
		}
		if (c == '$') {
			size_t k, done = 0;
			for (k = 0; k < sizeof tab / sizeof *tab && !done; k++) {
				size_t l = strlen(tab[k].esc);
				if (i + l <= n && !memcmp(s + i, tab[k].esc, l)) {
					s[o++] = tab[k].c;
					i += l;
					done = 1;
				}
			}
			if (done)
				continue;
			/* $uXX$: a character by its hex code */
			if (i + 5 <= n && s[i + 1] == 'u') {
				size_t j = i + 2;
				unsigned v = 0;
				while (j < n && j < i + 8 && isxdigit((unsigned char)s[j])) {
					v = v * 16 + (unsigned)(isdigit((unsigned char)s[j]) ? s[j] - '0' : (s[j] | 32) - 'a' + 10);
					j++;
				}
				if (j < n && s[j] == '$' && j > i + 2 && v >= 0x20 && v < 0x7f) {
					s[o++] = (char)v;
					i = j + 1;
					continue;
				}
			}
		}
		s[o++] = c;
		i++;
	}
	return o;
}

void sp_buf_add_json_str(struct sp_buf *b, const char *s)
{
	sp_buf_addc(b, '"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			sp_buf_addc(b, '\\');
			sp_buf_addc(b, (char)c);
		} else if (c < 0x20) {
			sp_buf_addf(b, "\\u%04x", c);
		} else {
			sp_buf_addc(b, (char)c);
		}
	}
	sp_buf_addc(b, '"');
}

double sp_mono_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

uint64_t sp_mono_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

uint64_t sp_thread_cpu_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

void sp_budget_start(struct sp_budget *b, uint64_t cpu_ns, uint64_t wall_ns)
{
	b->cpu_end = cpu_ns ? sp_thread_cpu_ns() + cpu_ns : 0;
	b->wall_end = wall_ns ? sp_mono_ns() + wall_ns : 0;
}

int sp_budget_spent(const struct sp_budget *b)
{
	return (b->wall_end && sp_mono_ns() >= b->wall_end) || (b->cpu_end && sp_thread_cpu_ns() >= b->cpu_end);
}

int sp_write_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		ssize_t w = write(fd, c, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

int sp_tmpfile(const char *why, struct sp_err *err)
{
	static const char name[] = "/stackpipe-XXXXXX";
	const char *dir = getenv("TMPDIR");
	if (!dir || !*dir)
		dir = "/tmp";
	size_t n = strlen(dir);
	char *path = sp_xmalloc(n + sizeof name);
	memcpy(path, dir, n);
	memcpy(path + n, name, sizeof name);
	int fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0)
		sp_err_set(err, "cannot create a temporary file in %s for %s: %s", dir, why, strerror(errno));
	else
		unlink(path);
	free(path);
	return fd;
}

char *sp_path_search(const char *cmd, const char *path, struct sp_err *err)
{
	if (strchr(cmd, '/'))
		return sp_xstrndup(cmd, strlen(cmd));
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	char buf[PATH_MAX];
	for (const char *p = path;; p++) {
		const char *c = strchr(p, ':');
		size_t n = c ? (size_t)(c - p) : strlen(p);
		snprintf(buf, sizeof buf, "%.*s/%s", n ? (int)n : 1, n ? p : ".", cmd);
		if (access(buf, X_OK) == 0)
			return sp_xstrndup(buf, strlen(buf));
		if (!c)
			break;
		p = c;
	}
	sp_err_set(err, "%s: command not found", cmd);
	return NULL;
}

void *sp_xgrow0(void *a, size_t *n, size_t want, size_t elem)
{
	if (want < *n)
		return a;
	size_t m = *n ? *n : 256;
	while (m <= want)
		m *= 2;
	a = sp_xrealloc(a, m * elem);
	memset((char *)a + *n * elem, 0, (m - *n) * elem);
	*n = m;
	return a;
}

int sp_thread_regex(regex_t *re, const char *pattern, struct sp_err *err)
{
	int rc = regcomp(re, pattern, REG_EXTENDED | REG_NOSUB);
	if (!rc)
		return 0;
	char msg[256];
	regerror(rc, re, msg, sizeof msg);
	return sp_err_set(err, "-t '%s': %s", pattern, msg);
}
