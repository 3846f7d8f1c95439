/* t6-shares.c — a target for pcollect tests with known shares.  Built
 * -O2 -g -fomit-frame-pointer: no frame pointers to lean on.
 *
 * Two named threads burn CPU for SECONDS (argv[1], default 1): "hot-worker"
 * runs hot_loop() for 3 units of work each time "cold-worker" runs
 * cold_loop() for 1, so of the sampled CPU time about 75% is in hot_loop
 * under hot_caller, and 25% in cold_loop under cold_caller.  Work is
 * measured in thread CPU time, so the shares hold on a loaded machine.
 * blend() is always inlined into hot_loop: DWARF shows it as an inlined
 * frame.  With argv[2] = "wait" it prints "ready" and then blocks on stdin
 * for ever (attach tests). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile double sink;
static double seconds = 1;

static double cpu_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static inline __attribute__((always_inline)) double blend(double x, int i)
{
	return x * 0.999999 + (double)(i & 7) * 1e-9;
}

__attribute__((noinline)) void hot_loop(double budget)
{
	double t0 = cpu_now(), x = 1;
	while (cpu_now() - t0 < budget)
		for (int i = 0; i < 20000; i++)
			x = blend(x, i) + 1.0 / (i + 1);
	sink += x;
}

__attribute__((noinline)) void cold_loop(double budget)
{
	double t0 = cpu_now(), x = 1;
	while (cpu_now() - t0 < budget)
		for (int i = 0; i < 20000; i++)
			x = x * 1.000001 + 1.0 / (i + 3);
	sink += x;
}

/* The volatile stores after the calls keep them from becoming tail calls
 * (a jump would leave the caller out of the stack). */
__attribute__((noinline)) void hot_caller(double total)
{
	hot_loop(total * 0.75);
	sink += 1;
}

__attribute__((noinline)) void cold_caller(double total)
{
	cold_loop(total * 0.25);
	sink += 1;
}

static void *hot(void *a)
{
	pthread_setname_np(pthread_self(), "hot-worker");
	hot_caller(seconds);
	return a;
}

static void *cold(void *a)
{
	pthread_setname_np(pthread_self(), "cold-worker");
	cold_caller(seconds);
	return a;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		seconds = atof(argv[1]);
	int wait = argc > 2 && !strcmp(argv[2], "wait");
	if (wait) {
		printf("ready %d\n", getpid());
		fflush(stdout);
		/* Attach tests: loop for ever, so there is always work to sample. */
		for (;;) {
			pthread_t a, b;
			pthread_create(&a, NULL, hot, NULL);
			pthread_create(&b, NULL, cold, NULL);
			pthread_join(a, NULL);
			pthread_join(b, NULL);
		}
	}
	pthread_t a, b;
	pthread_create(&a, NULL, hot, NULL);
	pthread_create(&b, NULL, cold, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	return 0;
}
