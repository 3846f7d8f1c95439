/* inline.c — target of t0300-inline: the work of a noinline function is done
 * by a static always-inline helper, so it shows only with inline expansion. */
#include <stdlib.h>

static volatile unsigned long sink;

static inline __attribute__((always_inline)) void burn_inl(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i * i;
}

__attribute__((noinline)) void work_noinline(unsigned long n) { burn_inl(n); }

int main(int argc, char **argv)
{
	unsigned long reps = argc > 1 ? strtoul(argv[1], NULL, 10) : 40;
	for (unsigned long k = 0; k < reps; k++)
		work_noinline(10000000);
	return 0;
}
