/* t62-lock.c — for t6292-trace-place.sh: probes on instructions the kernel
 * cannot probe (lock-prefixed).
 *   t62-lock N [WAIT_MS]: prints "ready", sleeps WAIT_MS, then calls
 *   counted() N times and maybe() N times (every other one takes the
 *   branch); prints the counts it made, and calls joined() N times.
 *   - counted() begins with a lock-prefixed add (a function probe there
 *     must move to the next instruction);
 *   - the line marked LOCKLINE is a lone lock-prefixed add followed by
 *     straight-line code (a line probe moves);
 *   - joined() begins with a lock-prefixed add whose next instruction is
 *     a jump target (no instruction can stand for it: refused). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int ncounted, nlock, njoin, nafter;
static volatile int flag;

__attribute__((noinline)) void counted(int i)
{
	__atomic_add_fetch(&ncounted, 1, __ATOMIC_RELAXED);
	flag = i;
}

__attribute__((noinline)) void maybe(int i)
{
	flag = i;
	__atomic_add_fetch(&nlock, 1, __ATOMIC_RELAXED); /* LOCKLINE */
	flag = i + 1;
	nafter++;
	flag = i + 2;
}

/* joined(n): njoin += 1, then a loop of n turns that jumps back to the
 * instruction right after the lock-prefixed add. */
void joined(int n);
__asm__(".text\n.globl joined\n.type joined, @function\njoined:\n"
	"\tlock addl $1, njoin(%rip)\n"
	"1:\tdecl %edi\n\tjg 1b\n\tret\n.size joined, .-joined\n");

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	long wait_ms = argc > 2 ? atol(argv[2]) : 0;
	printf("ready\n");
	fflush(stdout);
	struct timespec ts = { wait_ms / 1000, (wait_ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
	for (long i = 0; i < n; i++) {
		counted((int)i);
		maybe((int)i);
		joined(2);
	}
	printf("counted %d lock %d join %d\n", ncounted, nlock, njoin);
	return 0;
}
