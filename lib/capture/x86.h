/* x86.h — the few x86-64 instruction patterns the probes look for in a
 * function's first bytes. */
#ifndef SP_X86_H
#define SP_X86_H

#include <stddef.h>
#include <stdint.h>

/* A function that starts `test %rdi,%rdi; je/jz REL` (glibc's free: its
 * NULL check): the offset of the instruction after the jump, where the
 * argument is known non-NULL and still in rdi; 0 when the code (n bytes
 * at code) is not that or is too short to tell.  A probe on `test` is
 * single-stepped by the kernel, one past it is emulated. */
uint64_t sp_x86_past_null_check(const uint8_t *code, size_t n);

/* The same, read from the file at path: the function at file offset off,
 * size bytes long (0 when the file cannot be read or the jump would leave
 * the function). */
uint64_t sp_x86_file_past_null_check(const char *path, uint64_t off, uint64_t size);

#endif
