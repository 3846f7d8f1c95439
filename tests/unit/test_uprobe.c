/* Unit tests of lib/capture/uprobe.c's instruction decoder (sp_uprobe_insn): the
 * lengths of instructions gcc emits (checked against objdump's reading of
 * the same bytes) and the prefixes the kernel refuses to probe. */
#include <stdint.h>
#include <stdio.h>

#include "uprobe.h"

#include "unit.h"

struct tc {
	const char *what;
	uint8_t b[16];
	int n, len, bad;
};

int main(void)
{
	static const struct tc t[] = {
		{ "lock addl $0x1,0x2db8(%rip)", { 0xf0, 0x83, 0x05, 0xb8, 0x2d, 0, 0, 0x01 }, 8, 8, 0xf0 },
		{ "mov %edi,0x2db6(%rip)", { 0x89, 0x3d, 0xb6, 0x2d, 0, 0 }, 6, 6, 0 },
		{ "endbr64", { 0xf3, 0x0f, 0x1e, 0xfa }, 4, 4, 0 },
		{ "cs nopw 0x0(%rax,%rax,1)", { 0x2e, 0x66, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0 }, 10, 10, 0x2e },
		{ "notrack jmp *%rax", { 0x3e, 0xff, 0xe0 }, 3, 3, 0x3e },
		{ "movabs $imm64,%rax", { 0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8 }, 10, 10, 0 },
		{ "push %rbp", { 0x55 }, 1, 1, 0 },
		{ "call rel32", { 0xe8, 0, 0, 0, 0 }, 5, 5, 0 },
		{ "vmovdqu (%rsi),%ymm0", { 0xc5, 0xfe, 0x6f, 0x06 }, 4, 4, 0 },
		{ "sub $0x18,%rsp", { 0x48, 0x83, 0xec, 0x18 }, 4, 4, 0 },
		{ "test $0x1,%dil", { 0x40, 0xf6, 0xc7, 0x01 }, 4, 4, 0 },
		{ "testl $imm32,(%rax)", { 0xf7, 0x00, 1, 2, 3, 4 }, 6, 6, 0 },
		{ "jne rel8", { 0x75, 0x13 }, 2, 2, 0 },
		{ "jg rel32", { 0x0f, 0x8f, 0, 0, 0, 0 }, 6, 6, 0 },
		{ "lea 0x1(%rdi),%eax", { 0x8d, 0x47, 0x01 }, 3, 3, 0 },
		{ "mov 0x8(%rsp,%rbx,4),%eax", { 0x8b, 0x44, 0x9c, 0x08 }, 4, 4, 0 },
		{ "lock cmpxchg %ecx,(%rdx)", { 0xf0, 0x0f, 0xb1, 0x0a }, 4, 4, 0xf0 },
		{ "lock xadd %eax,0x10(%rbx)", { 0xf0, 0x0f, 0xc1, 0x43, 0x10 }, 5, 5, 0xf0 },
		{ "fs mov %fs:0x28,%rax", { 0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0, 0, 0 }, 9, 9, 0 },
		{ "pshufd $0x0,%xmm1,%xmm0", { 0x66, 0x0f, 0x70, 0xc1, 0x00 }, 5, 5, 0 },
		{ "ret", { 0xc3 }, 1, 1, 0 },
		{ "mov $imm16,%ax", { 0x66, 0xb8, 1, 2 }, 4, 4, 0 },
		{ "cut short: lock add without its immediate", { 0xf0, 0x83, 0x05, 0xb8, 0x2d, 0, 0 }, 7, -1, 0 },
		{ "invalid in 64-bit mode: push %es", { 0x06 }, 1, -1, 0 },
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		int bad = -1;
		int len = sp_uprobe_insn(t[i].b, (size_t)t[i].n, &bad);
		if (t[i].len < 0)
			CHECK(len < 0, "%s: not decoded", t[i].what);
		else
			CHECK(len == t[i].len && bad == t[i].bad, "%s: %d bytes, refused prefix 0x%x (got %d, 0x%x)",
			      t[i].what, t[i].len, t[i].bad, len, bad);
	}
	return failed;
}
