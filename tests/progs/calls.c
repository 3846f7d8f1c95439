/* calls.c — N calls of handle(k) on two named threads, for ptimeline.
 *
 * Threads "worker-a" and "worker-b" each make half of the N calls.  Call k
 * burns 200 us of thread CPU time, every 20th (k % 20 == 7) 3 ms: a known
 * 5 % of slow calls.  handle calls inner() (so traced calls nest when both
 * are traced) and returns k * 2.  With "sleep" (calls N sleep) inner
 * sleeps 1 ms instead (off the CPU, for --off-cpu/--wall).  Prints "calls N"
 * at the end. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile unsigned long sink;

static double cpu_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

__attribute__((noinline)) static void burn(double us)
{
	double end = cpu_us() + us;
	while (cpu_us() < end)
		for (int i = 0; i < 200; i++)
			sink += (unsigned long)i * 2654435761u;
}

static int sleeping;

__attribute__((noinline)) void inner(int k)
{
	if (sleeping) {
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
		return;
	}
	burn(k % 20 == 7 ? 3000 : 200);
}

__attribute__((noinline)) int handle(int k)
{
	inner(k);
	return k * 2;
}

static int ncalls;

static void *worker(void *arg)
{
	int first = (int)(long)arg;
	pthread_setname_np(pthread_self(), first ? "worker-b" : "worker-a");
	for (int k = first; k < ncalls; k += 2)
		sink += (unsigned long)handle(k);
	return NULL;
}

int main(int argc, char **argv)
{
	ncalls = argc > 1 ? atoi(argv[1]) : 2000;
	sleeping = argc > 2 && !strcmp(argv[2], "sleep");
	pthread_t a, b;
	pthread_create(&a, NULL, worker, (void *)0L);
	pthread_create(&b, NULL, worker, (void *)1L);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("calls %d\n", ncalls);
	return 0;
}
