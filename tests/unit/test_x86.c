/* test_x86.c — the NULL-check pattern at a function's start (x86.h), on
 * byte sequences and on a file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unit.h"
#include "util.h"
#include "x86.h"

int main(void)
{
	static const uint8_t je8[] = { 0x48, 0x85, 0xff, 0x74, 0x30, 0x55, 0x53, 0x48, 0x83 };
	static const uint8_t je32[] = { 0x48, 0x85, 0xff, 0x0f, 0x84, 0x10, 0x01, 0x00, 0x00, 0x55 };
	static const uint8_t rsi[] = { 0x48, 0x85, 0xf6, 0x74, 0x30, 0x55, 0x53, 0x48, 0x83 };
	static const uint8_t push[] = { 0x55, 0x48, 0x89, 0xe5, 0x48, 0x85, 0xff, 0x74, 0x30 };
	static const uint8_t jne[] = { 0x48, 0x85, 0xff, 0x75, 0x30, 0x55, 0x53, 0x48, 0x83 };
	CHECK(sp_x86_past_null_check(je8, sizeof je8) == 5, "test %%rdi,%%rdi; je rel8: the next instruction at 5");
	CHECK(sp_x86_past_null_check(je32, sizeof je32) == 9, "test %%rdi,%%rdi; je rel32: the next instruction at 9");
	CHECK(sp_x86_past_null_check(je32, 7) == 0, "je rel32 cut short: 0");
	CHECK(sp_x86_past_null_check(je8, 3) == 0, "test alone: 0");
	CHECK(sp_x86_past_null_check(rsi, sizeof rsi) == 0, "test %%rsi,%%rsi: 0");
	CHECK(sp_x86_past_null_check(push, sizeof push) == 0, "push %%rbp first: 0");
	CHECK(sp_x86_past_null_check(jne, sizeof jne) == 0, "test; jne: 0");

	struct sp_err err;
	int fd = sp_tmpfile("test_x86", &err);
	char path[64];
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	static const uint8_t pad[100];
	CHECK(fd >= 0 && write(fd, pad, sizeof pad) == sizeof pad && write(fd, je32, sizeof je32) == sizeof je32,
	      "a file with the pattern at offset 100");
	CHECK(sp_x86_file_past_null_check(path, 100, 64) == 9, "the file at 100: 9");
	CHECK(sp_x86_file_past_null_check(path, 100, 9) == 0, "a function of 9 bytes: no instruction after: 0");
	CHECK(sp_x86_file_past_null_check(path, 0, 64) == 0, "the file at 0 (zeros): 0");
	CHECK(sp_x86_file_past_null_check(path, 105, 64) == 0, "fewer than 9 bytes left: 0");
	CHECK(sp_x86_file_past_null_check("/nonexistent/x86", 0, 64) == 0, "no file: 0");
	close(fd);
	return failed;
}
