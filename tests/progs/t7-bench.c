/* t7-bench.c — a target that measures how long it was stopped, for
 * tests/bench/snapshot-bench.sh.
 *
 *   t7-bench N      N threads: main plus N-1 sleeping in a condition variable
 *
 * Main wakes every 100 us and records the largest gap between two
 * wake-ups.  On SIGUSR1 it prints "gap US" (the largest gap since the last
 * SIGUSR1, in microseconds) and starts a new measurement; SIGTERM ends it.
 * A tool that stops the whole process stops main too, so the gap is how
 * long the process stood still (plus about one tick).  Prints "ready" when
 * all threads run. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static volatile sig_atomic_t report;

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

__attribute__((noinline)) static void sleeper_wait(void)
{
	pthread_mutex_lock(&m);
	for (;;)
		pthread_cond_wait(&cv, &m);
}

static void *sleeper(void *a)
{
	pthread_setname_np(pthread_self(), "sleeper");
	sleeper_wait();
	return a;
}

static void on_usr1(int sig) { report = sig; }

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;
	signal(SIGUSR1, on_usr1);
	pthread_t t;
	for (int i = 0; i < n - 1; i++)
		pthread_create(&t, NULL, sleeper, NULL);
	printf("ready\n");
	fflush(stdout);
	struct timespec d = { 0, 100000 };
	long long last = now_ns(), maxgap = 0;
	for (;;) {
		nanosleep(&d, NULL);
		long long now = now_ns();
		if (now - last > maxgap)
			maxgap = now - last;
		last = now;
		if (report) {
			report = 0;
			printf("gap %lld\n", maxgap / 1000);
			fflush(stdout);
			maxgap = 0;
			last = now_ns();
		}
	}
}
