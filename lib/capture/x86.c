/* x86.c — x86-64 instruction patterns at a function's start. */
#include <stdio.h>
#include <sys/types.h>

#include "x86.h"

uint64_t sp_x86_past_null_check(const uint8_t *b, size_t n)
{
	/* 48 85 ff: test %rdi,%rdi */
	if (n < 4 || b[0] != 0x48 || b[1] != 0x85 || b[2] != 0xff)
		return 0;
	if (b[3] == 0x74) /* je rel8: 2 bytes */
		return n >= 5 ? 5 : 0;
	if (b[3] == 0x0f && n >= 5 && b[4] == 0x84) /* je rel32: 6 bytes */
		return n >= 9 ? 9 : 0;
	return 0;
}

uint64_t sp_x86_file_past_null_check(const char *path, uint64_t off, uint64_t size)
{
	uint8_t b[9];
	FILE *f = fopen(path, "rb");
	if (!f)
		return 0;
	size_t n = fseeko(f, (off_t)off, SEEK_SET) == 0 ? fread(b, 1, sizeof b, f) : 0;
	fclose(f);
	if (n < sizeof b)
		return 0;
	uint64_t skip = sp_x86_past_null_check(b, n);
	return skip < size ? skip : 0;
}
