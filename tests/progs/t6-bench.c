/* t6-bench.c — fixed work for pcollect's overhead benchmark: ITERS rounds
 * (argv[1], default 3000) of a 14-deep call chain (10 levels of recursion,
 * an inlined function, two leaf loops), built -O2 -g -fomit-frame-pointer.
 * Prints its own elapsed and CPU time ("elapsed SECONDS cpu SECONDS") on
 * stderr, so the benchmark compares the work itself, not process start-up;
 * on a shared machine the CPU time is the steadier of the two (the time
 * the kernel spends taking samples is charged to the sampled thread). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__attribute__((noinline)) double leaf_a(int n)
{
	double s = 0;
	for (int i = 1; i < n; i++)
		s += 1.0 / i;
	return s;
}

__attribute__((noinline)) double leaf_b(int n)
{
	double s = 0;
	for (int i = 1; i < n; i++)
		s += (i & 1) ? 1.0 / ((double)i * i) : -1.0 / ((double)i * i);
	return s;
}

static inline double mid_inline(int n) { return leaf_a(n) + leaf_b(n / 2); }
__attribute__((noinline)) double mid(int n) { return mid_inline(n) * 0.5; }

__attribute__((noinline)) double rec(int depth, int n)
{
	if (depth == 0)
		return mid(n);
	return rec(depth - 1, n) + 1e-9 * depth;
}

__attribute__((noinline)) double top(int iters, int n)
{
	double acc = 0;
	for (int k = 0; k < iters; k++)
		acc += rec(10, n);
	return acc;
}

int main(int argc, char **argv)
{
	int iters = argc > 1 ? atoi(argv[1]) : 3000;
	struct timespec t0, t1, c0, c1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
	double r = top(iters, 100000);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
	fprintf(stderr, "result %g elapsed %.6f cpu %.6f\n", r,
		(double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
		(double)(c1.tv_sec - c0.tv_sec) + (double)(c1.tv_nsec - c0.tv_nsec) / 1e9);
	return 0;
}
