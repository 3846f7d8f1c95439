/* input.h — buffered input from files, stdin or a byte range, with gzip
 * decompressed transparently (detected by its magic, several members ok).
 *
 * Lines are returned as pointers into the input's own buffer, valid until the
 * next call; no allocation per line.  Offsets are of the uncompressed bytes.
 */
#ifndef SP_INPUT_H
#define SP_INPUT_H

#include "util.h"

struct sp_input;

/* path "-" is stdin.  NULL on error (err filled). */
struct sp_input *sp_input_open(const char *path, struct sp_err *err);
/* Wrap an open descriptor; reads [start, end) with pread (end 0 = to EOF)
 * when start or end is given, else read().  The input does not close fd. */
struct sp_input *sp_input_fd(int fd, const char *name, uint64_t start, uint64_t end);
/* Wrap a memory buffer (fuzzers, tests).  The bytes are not copied. */
struct sp_input *sp_input_mem(const void *p, size_t n, const char *name);
void sp_input_close(struct sp_input *in);

const char *sp_input_name(const struct sp_input *in);
int sp_input_is_gzip(const struct sp_input *in);
/* File descriptor and whether it is a plain regular file (splittable). */
int sp_input_splittable(const struct sp_input *in, int *fd, uint64_t *size);

/* Look at the next `want` bytes without consuming them; *n may be smaller at
 * EOF.  Returns 0, or -1 on a read error. */
int sp_input_peek(struct sp_input *in, size_t want, const char **p, size_t *n);

/* The next line without its '\n' (a trailing '\r' is kept).  Returns NULL at
 * EOF or on error (check sp_input_failed). */
const char *sp_input_line(struct sp_input *in, size_t *len);
uint64_t sp_input_lineno(const struct sp_input *in); /* of the last line returned */

/* The unread bytes up to the next blank line: *len covers whole lines up to
 * and including the '\n' that precedes an empty line ("\n\n").  NULL when
 * the unread data starts with the blank line or none comes within max
 * bytes.  Nothing is consumed. */
const char *sp_input_until_blank(struct sp_input *in, size_t max, size_t *len);
/* Consume n bytes holding `lines` newlines (after sp_input_until_blank). */
void sp_input_consume(struct sp_input *in, size_t n, uint64_t lines);

/* Raw bytes: copies up to n bytes, returns how many (less only at EOF or
 * error). */
size_t sp_input_read(struct sp_input *in, void *dst, size_t n);
uint64_t sp_input_offset(const struct sp_input *in); /* next unread byte */

/* Non-zero after a read or decompression error; err gets the message. */
int sp_input_failed(const struct sp_input *in, struct sp_err *err);

#endif
