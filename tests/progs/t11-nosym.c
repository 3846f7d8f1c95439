/* t11-nosym.c — static functions that only a symbol table names (the test
 * strips the binary and gives the table back through a debug file or
 * MiniDebugInfo), and qsort, whose merge sort is static inside libc. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static volatile unsigned long sink;
__attribute__((noinline)) static void hidden_spin(void) { for (int i = 0; i < 100000; i++) sink += (unsigned long)i * i; }
__attribute__((noinline)) static void hidden_outer(void) { hidden_spin(); }
static int cmp(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }
int main(int argc, char **argv)
{
	double d = argc > 1 ? atof(argv[1]) : 0.5;
	int sort = argc > 2;
	static int v[4096];
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		if (sort) {
			for (int i = 0; i < 4096; i++)
				v[i] = (i * 7919) % 4096;
			qsort(v, 4096, sizeof *v, cmp);
		} else {
			hidden_outer();
		}
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9 < d);
	printf("%lu %d\n", sink, v[1]);
	return 0;
}
