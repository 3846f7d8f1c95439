/* pd-threads.c — target of t0120-perfdata: named threads (one renamed
 * half-way), frame pointers kept or not by the test's flags, work done by
 * an always-inline helper under noinline functions.  Argument: the
 * iterations per thread (default 400). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile unsigned long sink;
static unsigned long reps = 400;

__attribute__((noinline)) static void spin(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i * i;
}
static inline __attribute__((always_inline)) void hot(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink ^= i;
	spin(n / 2);
}
__attribute__((noinline)) void step_a(unsigned long n) { hot(n); }
__attribute__((noinline)) void step_b(unsigned long n) { spin(n); }

static void *worker(void *arg)
{
	const char *name = arg;
	pthread_setname_np(pthread_self(), name);
	for (unsigned long k = 0; k < reps; k++) {
		if (k == reps / 2 && !strcmp(name, "pd-one"))
			pthread_setname_np(pthread_self(), "pd-renamed");
		step_a(200000);
		step_b(100000);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		reps = strtoul(argv[1], NULL, 10);
	pthread_t t[2];
	pthread_create(&t[0], NULL, worker, "pd-one");
	pthread_create(&t[1], NULL, worker, "pd-two");
	worker("pd-main");
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	printf("%lu\n", sink);
	return 0;
}
