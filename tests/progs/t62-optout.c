/* t62-optout.c — target of the optimised-out variable check (t6260): at
 * -O2, x lives in a register from its computation to its last use (the
 * USED line) and is gone after (the GONE line: the call clobbered the
 * register and nothing needs x any more). */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) long compute(long n) { return n * n + 3; }

__attribute__((noinline)) long work(long n)
{
	long x = compute(n);
	printf("x=%ld\n", x); /* USED */
	long y = compute(n + 1);
	printf("y=%ld\n", y); /* GONE */
	return y;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 3;
	return work(n) == 7;
}
