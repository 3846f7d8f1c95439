/* t64-alloc.c — for t6400-alloc.sh: mallocs known byte totals from two
 * functions under main, 3:1 in bytes, and frees them.
 *   t64-alloc N SIZE: big_allocs mallocs 3*N blocks of SIZE bytes, then
 *   small_allocs N blocks of SIZE bytes, each freed in turn; prints the
 *   calls and bytes of each.  noinline: the functions stay in the stacks.
 *   t64-alloc N SIZE PAUSE_US: the same, sleeping PAUSE_US microseconds
 *   after every 50 calls (a tracer's ring then drains between bursts). */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static long pause_us;

static volatile unsigned long sink;

__attribute__((noinline)) static void one(size_t size)
{
	char *p = malloc(size);
	if (!p)
		exit(1);
	p[0] = 1;
	sink += (unsigned long)p[0];
	free(p);
}

__attribute__((noinline)) void big_allocs(long n, size_t size)
{
	for (long i = 0; i < n; i++) {
		one(size);
		if (pause_us && i % 50 == 49)
			usleep((useconds_t)pause_us);
	}
}

__attribute__((noinline)) void small_allocs(long n, size_t size)
{
	for (long i = 0; i < n; i++) {
		one(size);
		if (pause_us && i % 50 == 49)
			usleep((useconds_t)pause_us);
	}
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	size_t size = argc > 2 ? (size_t)atol(argv[2]) : 1000;
	pause_us = argc > 3 ? atol(argv[3]) : 0;
	big_allocs(3 * n, size);
	small_allocs(n, size);
	printf("big_allocs calls %ld bytes %lu\n", 3 * n, (unsigned long)(3 * n * (long)size));
	printf("small_allocs calls %ld bytes %lu\n", n, (unsigned long)(n * (long)size));
	return 0;
}
