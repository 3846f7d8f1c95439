/* t806-slow: work() is called in a loop; 1 call in 10 (every 10th) takes
 * about 10 times longer (a distinct, longer loop).  Every second the
 * program prints its own figures for that second, measured around each
 * call with CLOCK_MONOTONIC:
 *   calls N rate R/s p50 X us p95 Y us at T s total C
 * (T: CLOCK_MONOTONIC, the clock of pcollect's timestamps; C: calls so far)
 * and, with a second argument FILE, every call as "END_NS DURATION_NS" in
 * FILE (flushed each second), for exact figures over any window; each
 * line ends with "N SCALED_NS": that call's scaled(n), timed around it.
 * so a test can compare plive's screen with them.  The fast body's length
 * varies a little per call (i % 7) so sampling cannot alias with it.
 * scaled(n), called by each work() with n = 1, 2, 3, takes n times as
 * long (latency by its argument).
 * Build -O2: noinline and distinct bodies keep work/fast/slow apart. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;
static unsigned long long scaled_ns; /* the last call of scaled, timed */
static unsigned long scaled_n;

static unsigned long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

__attribute__((noinline)) static unsigned long fast_path(unsigned long n)
{
	unsigned long x = 1;
	for (unsigned long i = 0; i < n; i++)
		x = x * 2654435761u + i;
	return x;
}

__attribute__((noinline)) static unsigned long slow_path(unsigned long n)
{
	unsigned long x = 7;
	for (unsigned long i = 0; i < n; i++)
		x = (x ^ (x >> 3)) + i * 40503u;
	return x;
}

/* its time grows with its argument: n x about 20 us */
__attribute__((noinline)) unsigned long scaled(unsigned long n)
{
	unsigned long x = n;
	for (unsigned long i = 0; i < n * 15000; i++)
		x = (x << 1) ^ (x >> 7) ^ i;
	return x;
}

__attribute__((noinline)) unsigned long work(unsigned long i)
{
	unsigned long r;
	/* not tail calls: work stays on the stacks of its samples */
	if (i % 10 == 9)
		r = slow_path(750000);
	else
		r = fast_path(60000 + (i % 7) * 600);
	sink ^= r;
	scaled_n = i % 3 + 1;
	unsigned long long a = now_ns();
	r += scaled(scaled_n);
	scaled_ns = now_ns() - a;
	return r + i;
}

static int cmp(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	long secs = argc > 1 ? atol(argv[1]) : 600;
	FILE *calls = argc > 2 ? fopen(argv[2], "w") : NULL;
	static unsigned long long d[1 << 20];
	size_t n = 0;
	unsigned long long t0 = now_ns(), tick = t0;
	unsigned long long total = 0;
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready\n");
	for (unsigned long i = 0;; i++) {
		unsigned long long a = now_ns();
		sink += work(i);
		unsigned long long b = now_ns();
		total++;
		if (calls)
			fprintf(calls, "%llu %llu %lu %llu\n", b, b - a, scaled_n, scaled_ns);
		if (n < sizeof d / sizeof d[0])
			d[n++] = b - a;
		if (b - tick >= 1000000000ull) {
			qsort(d, n, sizeof d[0], cmp);
			printf("calls %zu rate %.1f/s p50 %.1f us p95 %.1f us at %.6f s total %llu\n", n,
			       (double)n * 1e9 / (double)(b - tick), (double)d[n / 2] / 1e3, (double)d[n * 95 / 100] / 1e3,
			       (double)b / 1e9, total);
			n = 0;
			tick = b;
			if (calls)
				fflush(calls);
			if ((long)((b - t0) / 1000000000ull) >= secs)
				break;
		}
	}
	return 0;
}
