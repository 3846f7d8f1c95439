/* input.c — buffered, gzip-transparent input. */
#include "input.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define RAW_CHUNK (1u << 20)

struct sp_input {
	char *name;
	int fd, own_fd;
	int use_pread;
	uint64_t pos, end; /* pread position and end (0 = EOF) */
	const unsigned char *mem;
	size_t memlen, mempos;
	int eof_raw;       /* the raw source is exhausted */
	int failed;
	char errmsg[256];

	/* gzip */
	int gzip;
	z_stream zs;
	unsigned char *zbuf;
	size_t zlen;
	int zdone;         /* inflate reached the end of all members */

	/* decoded bytes: buf[start, len) unread */
	char *buf;
	size_t start, len, cap;
	int eof;           /* no more decoded bytes will come */
	uint64_t consumed; /* decoded bytes before buf[start] */
	uint64_t lineno;
	int is_regular;
	uint64_t size;
	int borrowed;      /* buf is the caller's memory (sp_input_mem): not freed */
};

static void fail(struct sp_input *in, const char *what, const char *detail)
{
	if (in->failed)
		return;
	in->failed = 1;
	snprintf(in->errmsg, sizeof in->errmsg, "%s%s%s", what, detail ? ": " : "", detail ? detail : "");
}

/* Read raw (possibly compressed) bytes into dst. */
static ssize_t raw_read(struct sp_input *in, void *dst, size_t n)
{
	if (in->eof_raw)
		return 0;
	if (in->mem) {
		size_t k = in->memlen - in->mempos;
		if (k > n)
			k = n;
		memcpy(dst, in->mem + in->mempos, k);
		in->mempos += k;
		if (!k)
			in->eof_raw = 1;
		return (ssize_t)k;
	}
	for (;;) {
		ssize_t r;
		if (in->use_pread) {
			if (in->end && in->pos >= in->end) {
				in->eof_raw = 1;
				return 0;
			}
			if (in->end && in->pos + n > in->end)
				n = (size_t)(in->end - in->pos);
			r = pread(in->fd, dst, n, (off_t)in->pos);
			if (r > 0)
				in->pos += (uint64_t)r;
		} else {
			r = read(in->fd, dst, n);
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			fail(in, "read error", strerror(errno));
			in->eof_raw = 1;
			return -1;
		}
		if (r == 0)
			in->eof_raw = 1;
		return r;
	}
}

/* The first buffer: a megabyte for files and pipes, less for a small
 * in-memory input (a fuzzer calls sp_input_mem thousands of times a second,
 * and a fresh megabyte each time costs more than the parsing). */
static size_t first_cap(const struct sp_input *in)
{
	if (in->mem && in->memlen < RAW_CHUNK / 2)
		return 64 * 1024 + 2 * in->memlen;
	return RAW_CHUNK;
}

static void make_room(struct sp_input *in, size_t want)
{
	if (in->start > 0 && (in->start == in->len || in->cap - in->len < want)) {
		memmove(in->buf, in->buf + in->start, in->len - in->start);
		in->consumed += in->start;
		in->len -= in->start;
		in->start = 0;
	}
	if (in->cap - in->len < want) {
		size_t cap = in->cap ? in->cap : first_cap(in);
		while (cap - in->len < want)
			cap *= 2;
		in->buf = sp_xrealloc(in->buf, cap);
		in->cap = cap;
	}
}

/* Append at least one more decoded byte to buf, unless at EOF.  Returns the
 * number of bytes added. */
static size_t fill(struct sp_input *in)
{
	if (in->eof)
		return 0;
	make_room(in, 64 * 1024);
	size_t room = in->cap - in->len;
	if (!in->gzip) {
		ssize_t r = raw_read(in, in->buf + in->len, room);
		if (r <= 0) {
			in->eof = 1;
			return 0;
		}
		in->len += (size_t)r;
		return (size_t)r;
	}
	for (;;) {
		if (in->zdone) {
			in->eof = 1;
			return 0;
		}
		if (in->zs.avail_in == 0) {
			ssize_t r = raw_read(in, in->zbuf, RAW_CHUNK);
			if (r < 0) {
				in->eof = 1;
				return 0;
			}
			if (r == 0) {
				fail(in, "truncated gzip data", NULL);
				in->eof = 1;
				return 0;
			}
			in->zs.next_in = in->zbuf;
			in->zs.avail_in = (uInt)r;
		}
		in->zs.next_out = (Bytef *)in->buf + in->len;
		in->zs.avail_out = (uInt)room;
		int rc = inflate(&in->zs, Z_NO_FLUSH);
		size_t got = room - in->zs.avail_out;
		in->len += got;
		if (rc == Z_STREAM_END) {
			/* Another member may follow (concatenated gzip files). */
			if (in->zs.avail_in == 0) {
				unsigned char c;
				ssize_t r = raw_read(in, &c, 1);
				if (r <= 0) {
					in->zdone = 1;
				} else {
					in->zbuf[0] = c;
					in->zs.next_in = in->zbuf;
					in->zs.avail_in = 1;
				}
			}
			if (!in->zdone)
				inflateReset(&in->zs);
		} else if (rc != Z_OK && rc != Z_BUF_ERROR) {
			fail(in, "gzip data is corrupt", in->zs.msg ? in->zs.msg : "inflate failed");
			in->eof = 1;
			return got;
		}
		if (got)
			return got;
	}
}

static struct sp_input *input_new(const char *name)
{
	struct sp_input *in = sp_xcalloc(1, sizeof *in);
	in->name = sp_xstrndup(name, strlen(name));
	in->fd = -1;
	return in;
}

/* Detect gzip from the first two raw bytes and set up inflate. */
static void detect(struct sp_input *in)
{
	make_room(in, first_cap(in));
	/* Read raw bytes straight into the decoded buffer first. */
	size_t have = 0;
	while (have < 2) {
		ssize_t r = raw_read(in, in->buf + in->len + have, in->cap - in->len - have);
		if (r <= 0)
			break;
		have += (size_t)r;
	}
	const unsigned char *b = (const unsigned char *)in->buf + in->len;
	if (have >= 2 && b[0] == 0x1f && b[1] == 0x8b) {
		in->gzip = 1;
		in->zbuf = sp_xmalloc(RAW_CHUNK > have ? RAW_CHUNK : have);
		memcpy(in->zbuf, b, have);
		if (inflateInit2(&in->zs, 15 + 32) != Z_OK) {
			fail(in, "cannot initialise zlib", NULL);
			in->eof = 1;
			return;
		}
		in->zs.next_in = in->zbuf;
		in->zs.avail_in = (uInt)have;
	} else {
		in->len += have;
		if (have == 0)
			in->eof = 1;
	}
}

struct sp_input *sp_input_fd(int fd, const char *name, uint64_t start, uint64_t end)
{
	struct sp_input *in = input_new(name);
	in->fd = fd;
	struct stat st;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		in->is_regular = 1;
		in->size = (uint64_t)st.st_size;
	}
#ifdef F_SETPIPE_SZ
	/* A pipe of 1 MB instead of 64 KB: the writer ("perf script", cat)
	 * and this reader wake each other 16 times less often, and on a
	 * virtual machine a context switch costs more than reading the
	 * bytes.  Beyond /proc/sys/fs/pipe-max-size it fails: no matter. */
	if (S_ISFIFO(st.st_mode) && fcntl(fd, F_GETPIPE_SZ) < (1 << 20))
		fcntl(fd, F_SETPIPE_SZ, 1 << 20);
#endif
	if (start || end) {
		in->use_pread = 1;
		in->pos = start;
		in->end = end;
	}
	detect(in);
	return in;
}

struct sp_input *sp_input_open(const char *path, struct sp_err *err)
{
	if (!strcmp(path, "-"))
		return sp_input_fd(0, "-", 0, 0);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		sp_err_set(err, "%s: %s", path, strerror(errno));
		return NULL;
	}
	struct stat st;
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		close(fd);
		sp_err_set(err, "%s: is a directory", path);
		return NULL;
	}
	struct sp_input *in = sp_input_fd(fd, path, 0, 0);
	in->own_fd = 1;
	return in;
}

struct sp_input *sp_input_mem(const void *p, size_t n, const char *name)
{
	struct sp_input *in = input_new(name);
	const unsigned char *b = p;
	if (n >= 2 && b[0] == 0x1f && b[1] == 0x8b) {
		in->mem = p;
		in->memlen = n;
		detect(in);
		return in;
	}
	/* Plain bytes are read in place, never copied: pfold's parallel path
	 * hands each worker chunks of a mapped file or of its read ring. */
	in->buf = (char *)p;
	in->len = in->cap = n;
	in->borrowed = 1;
	in->eof = in->eof_raw = 1;
	return in;
}

void sp_input_close(struct sp_input *in)
{
	if (!in)
		return;
	if (in->gzip)
		inflateEnd(&in->zs);
	if (in->own_fd)
		close(in->fd);
	free(in->zbuf);
	if (!in->borrowed)
		free(in->buf);
	free(in->name);
	free(in);
}

const char *sp_input_name(const struct sp_input *in) { return in->name; }
int sp_input_is_gzip(const struct sp_input *in) { return in->gzip; }

int sp_input_splittable(const struct sp_input *in, int *fd, uint64_t *size)
{
	if (!in->is_regular || in->gzip || in->use_pread || in->fd < 0)
		return 0;
	*fd = in->fd;
	*size = in->size;
	return 1;
}

int sp_input_peek(struct sp_input *in, size_t want, const char **p, size_t *n)
{
	while (in->len - in->start < want && fill(in))
		;
	*p = in->buf + in->start;
	*n = in->len - in->start;
	if (*n > want)
		*n = want;
	return in->failed ? -1 : 0;
}

const char *sp_input_line(struct sp_input *in, size_t *len)
{
	size_t scanned = 0;
	for (;;) {
		char *s = in->buf + in->start;
		size_t avail = in->len - in->start;
		char *nl = (char *)sp_find_nl(s + scanned, s + avail);
		if (nl) {
			*len = (size_t)(nl - s);
			in->start += *len + 1;
			in->lineno++;
			return s;
		}
		scanned = avail;
		if (!fill(in)) {
			s = in->buf + in->start;
			avail = in->len - in->start;
			if (avail == 0)
				return NULL;
			/* Last line without a newline. */
			*len = avail;
			in->start = in->len;
			in->lineno++;
			return s;
		}
	}
}

uint64_t sp_input_lineno(const struct sp_input *in) { return in->lineno; }

const char *sp_input_until_blank(struct sp_input *in, size_t max, size_t *len)
{
	size_t scanned = 0; /* bytes known to hold no "\n\n" start */
	for (;;) {
		const char *s = in->buf + in->start;
		size_t avail = in->len - in->start;
		if (avail && s[0] == '\n')
			return NULL;
		/* glibc's memmem is far slower here */
		const char *nl = sp_find_blank(s + scanned, s + avail);
		if (nl) {
			*len = (size_t)(nl - s) + 1;
			return s;
		}
		/* a pair may start at the last byte */
		scanned = avail > scanned + 1 ? avail - 1 : scanned;
		if (avail >= max || !fill(in))
			return NULL;
	}
}

void sp_input_consume(struct sp_input *in, size_t n, uint64_t lines)
{
	if (n > in->len - in->start)
		n = in->len - in->start;
	in->start += n;
	in->lineno += lines;
}

size_t sp_input_read(struct sp_input *in, void *dst, size_t n)
{
	size_t done = 0;
	while (done < n) {
		size_t avail = in->len - in->start;
		if (!avail && !in->gzip && !in->eof && n >= 64 * 1024) {
			/* a large read and nothing buffered: straight into dst, to
			 * its end, with no copy and no page of the input's own
			 * buffer touched */
			ssize_t r = raw_read(in, (char *)dst + done, n - done);
			if (r <= 0) {
				in->eof = 1;
				break;
			}
			in->consumed += (uint64_t)r;
			done += (size_t)r;
			continue;
		}
		if (!avail) {
			if (!fill(in))
				break;
			continue;
		}
		size_t k = n - done < avail ? n - done : avail;
		memcpy((char *)dst + done, in->buf + in->start, k);
		in->start += k;
		done += k;
	}
	return done;
}

uint64_t sp_input_offset(const struct sp_input *in) { return in->consumed + in->start; }

int sp_input_failed(const struct sp_input *in, struct sp_err *err)
{
	if (!in->failed)
		return 0;
	sp_err_set(err, "%s: %s", in->name, in->errmsg);
	return 1;
}
