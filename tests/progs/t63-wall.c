/* t63-wall: known wall-clock shares for pcollect --off-cpu/--wall
 * (tests/cmd/t6300): each round of the main thread spends 50 % asleep in
 * nanosleep under wait_disk, 30 % blocked on a mutex a helper thread holds
 * under wait_lock, and 20 % computing under compute.  Usage: t63-wall
 * [ROUNDS] (default 10 rounds of 200 ms).  Prints "ready" on standard output
 * once its threads run; at the end, on standard error, the main thread's
 * rounds in ns ("main-ns N") and the time each function really took
 * ("phases-ns DISK LOCK COMPUTE"). */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static sem_t go, locked;
static volatile unsigned long sink;

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void sleep_ms(int ms)
{
	struct timespec t = { ms / 1000, (long)(ms % 1000) * 1000000 };
	nanosleep(&t, NULL);
}

static void *helper(void *arg)
{
	(void)arg;
	for (;;) {
		sem_wait(&go);
		pthread_mutex_lock(&mu);
		sem_post(&locked);
		sleep_ms(60);
		pthread_mutex_unlock(&mu);
	}
	return NULL;
}

__attribute__((noinline)) void wait_disk(void) { sleep_ms(100); }

__attribute__((noinline)) void wait_lock(void)
{
	sem_post(&go);
	sem_wait(&locked);
	pthread_mutex_lock(&mu); /* held for 60 ms by the helper */
	pthread_mutex_unlock(&mu);
}

__attribute__((noinline)) void compute(void)
{
	double end = now() + 0.040;
	while (now() < end)
		for (int i = 0; i < 1000; i++)
			sink += (unsigned long)i * i;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 10;
	sem_init(&go, 0, 0);
	sem_init(&locked, 0, 0);
	pthread_t t;
	pthread_create(&t, NULL, helper, NULL);
	pthread_setname_np(t, "helper");
	printf("ready\n");
	fflush(stdout);
	double t0 = now(), ph[3] = { 0, 0, 0 };
	for (int r = 0; r < rounds; r++) {
		double a = now();
		wait_disk();
		double b = now();
		wait_lock();
		double c = now();
		compute();
		ph[0] += b - a;
		ph[1] += c - b;
		ph[2] += now() - c;
	}
	fprintf(stderr, "main-ns %.0f\n", (now() - t0) * 1e9);
	/* the shares as they happened: a loaded machine stretches sleeps and
	 * the end of compute's spin */
	fprintf(stderr, "phases-ns %.0f %.0f %.0f\n", ph[0] * 1e9, ph[1] * 1e9, ph[2] * 1e9);
	return 0;
}
