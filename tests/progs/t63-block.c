/* t63-block.c — target of tests/bench/offcpu-bench.sh: a program that
 * blocks often.  Two threads pass a byte back and forth over two pipes N
 * times (each round trip: two switches out, two wake-ups), then it prints
 * its elapsed and CPU time per round trip:
 *   t63-block N  ->  "roundtrip US us cpu US us"  */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int ab[2], ba[2];
static long n;

static double now(clockid_t c)
{
	struct timespec t;
	clock_gettime(c, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void *echo(void *arg)
{
	(void)arg;
	char c;
	for (long i = 0; i < n; i++)
		if (read(ab[0], &c, 1) != 1 || write(ba[1], &c, 1) != 1)
			exit(1);
	return NULL;
}

int main(int argc, char **argv)
{
	n = argc > 1 ? atol(argv[1]) : 10000;
	if (pipe(ab) < 0 || pipe(ba) < 0)
		return 1;
	pthread_t t;
	double e0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
	pthread_create(&t, NULL, echo, NULL);
	char c = 'x';
	for (long i = 0; i < n; i++)
		if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
			return 1;
	pthread_join(t, NULL);
	printf("roundtrip %.2f us cpu %.2f us\n", (now(CLOCK_MONOTONIC) - e0) * 1e6 / (double)n,
	       (now(CLOCK_PROCESS_CPUTIME_ID) - c0) * 1e6 / (double)n);
	return 0;
}
