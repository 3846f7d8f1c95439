/* t62-bystander.c — for t6290-trace-target.sh: a process nobody traces
 * that calls malloc and free in a loop.
 *   t62-bystander MS: loops for MS milliseconds of wall time, then prints
 *   "mallocs N", the number of malloc calls made. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 1000;
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	unsigned long n = 0;
	for (;;) {
		for (int i = 0; i < 1000; i++) {
			char *p = malloc(64 + (size_t)(i & 255));
			p[0] = 1;
			sink += (unsigned long)p[0];
			free(p);
		}
		n += 1000;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 >= ms)
			break;
	}
	printf("mallocs %lu\n", n);
	return 0;
}
