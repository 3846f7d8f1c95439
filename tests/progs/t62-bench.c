/* t62-bench.c — target of tests/bench/trace-bench.sh.
 *   cost N        N back-to-back calls of tick(): ns of CPU time per call
 *   rate HZ SEC   fixed CPU work (SEC seconds by a quick calibration,
 *                 less on a loaded machine), calling tick() HZ times per
 *                 calibrated second; prints its own elapsed
 *                 and CPU time, so a probe's cost shows as a slowdown */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(clockid_t c)
{
	struct timespec t;
	clock_gettime(c, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

volatile long sink;
__attribute__((noinline)) long tick(long x, long y)
{
	__asm__ volatile("" ::: "memory");
	return x + y;
}

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "cost")) {
		long n = atol(argv[2]), acc = 0;
		/* CPU time: on a shared machine elapsed time counts other work;
		 * a probe's trap is charged to the process as system time */
		double t0 = now(CLOCK_PROCESS_CPUTIME_ID);
		for (long i = 0; i < n; i++)
			acc = tick(acc, i);
		double t1 = now(CLOCK_PROCESS_CPUTIME_ID);
		sink = acc;
		printf("cost %.1f ns per call\n", (t1 - t0) * 1e9 / (double)n);
		return 0;
	}
	if (argc > 3 && !strcmp(argv[1], "rate")) {
		long hz = atol(argv[2]);
		double sec = atof(argv[3]);
		/* calibrate: iterations of the work loop per second */
		double c0 = now(CLOCK_THREAD_CPUTIME_ID);
		long it = 0;
		while (now(CLOCK_THREAD_CPUTIME_ID) - c0 < 0.05)
			for (int k = 0; k < 1000; k++, it++)
				sink += k;
		long per_call = (long)((double)it / 0.05 / (double)hz);
		long calls = (long)((double)hz * sec);
		double e0 = now(CLOCK_MONOTONIC), p0 = now(CLOCK_PROCESS_CPUTIME_ID);
		for (long i = 0; i < calls; i++) {
			for (long k = 0; k < per_call; k++)
				sink += k;
			sink = tick(sink, i);
		}
		printf("elapsed %.4f cpu %.4f calls %ld\n", now(CLOCK_MONOTONIC) - e0,
		       now(CLOCK_PROCESS_CPUTIME_ID) - p0, calls);
		return 0;
	}
	fprintf(stderr, "usage: t62-bench cost N | rate HZ SECONDS\n");
	return 2;
}
