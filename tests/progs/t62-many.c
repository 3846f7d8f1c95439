/* t62-many.c — targets of t6296 (tracing many threads, a hot loop).
 * Prints its own counts for the test to compare with the trace.
 *
 *   many N MS SECONDS  N threads, each calls tick() then sleeps MS ms, for
 *                      SECONDS; one more thread creates a short-lived
 *                      thread (one tick() call, then it exits) every 20 ms,
 *                      so threads are born and die while a tracer stops.
 *                      Prints "ready" once all run, "calls K" at the end.
 *   work ITERS CALLS   CPU-bound: CALLS calls of tick(), each after ITERS
 *                      iterations of a loop; prints "cpu S calls N", its
 *                      CPU time: the same work alone and traced gives the
 *                      share of the traced run's time that the probes took.
 *   leader N CALLS     N threads call tick() CALLS times each, 5 ms apart;
 *                      the main thread exits (pthread_exit) after 0.2 s and
 *                      the last thread to end prints "calls K".
 *   hot SECONDS        one thread calls tick() in a loop for SECONDS and
 *                      prints "progress T K" every 0.5 s: the calls made
 *                      in the half second that ended at T seconds.
 *   serve N MS US SECONDS  a server: N threads, each calls handle(), which
 *                      runs US microseconds of CPU, then sleeps MS ms
 *                      (sampled often enough to be in plive's table);
 *                      prints "ready", and "calls K" at the end.
 */
#include <pthread.h>
#include <sys/resource.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static unsigned long calls; /* atomic: the threads' counts, added at their end */
static __thread unsigned long my_calls;
static volatile int stop;
static long period_ms;

__attribute__((noinline)) long tick(long x)
{
	my_calls++;
	__asm__ volatile("" : "+r"(x));
	return x + 1;
}

static void sleep_ms(long ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&t, NULL);
}

static void *caller(void *arg)
{
	(void)arg;
	while (!stop) {
		tick(1);
		sleep_ms(period_ms);
	}
	__atomic_fetch_add(&calls, my_calls, __ATOMIC_RELAXED);
	return NULL;
}

static long spin_us;

/* serve: a request's work, spun on the CPU */
__attribute__((noinline)) long handle(long x)
{
	uint64_t end = now_ns() + (uint64_t)spin_us * 1000u;
	while (now_ns() < end)
		__asm__ volatile("" : "+r"(x));
	my_calls++;
	return x + 1;
}

static void *server(void *arg)
{
	long x = (long)(intptr_t)arg;
	while (!stop) {
		x = handle(x);
		sleep_ms(period_ms);
	}
	__atomic_fetch_add(&calls, my_calls, __ATOMIC_RELAXED);
	return NULL;
}

static void *once(void *arg)
{
	tick((long)(intptr_t)arg);
	__atomic_fetch_add(&calls, my_calls, __ATOMIC_RELAXED);
	return NULL;
}

static void *churn(void *arg)
{
	(void)arg;
	while (!stop) {
		pthread_t t;
		if (pthread_create(&t, NULL, once, NULL) == 0)
			pthread_join(t, NULL);
		sleep_ms(20);
	}
	return NULL;
}

static long lcalls;
static int lthreads;

/* leader: CALLS calls 5 ms apart; the last thread to end prints the count */
static void *lcaller(void *arg)
{
	(void)arg;
	long x = 0;
	for (long i = 0; i < lcalls; i++) {
		x = tick(x);
		sleep_ms(5);
	}
	__atomic_add_fetch(&calls, my_calls, __ATOMIC_RELAXED);
	if (__atomic_sub_fetch(&lthreads, 1, __ATOMIC_ACQ_REL) == 0) {
		printf("calls %lu\n", __atomic_load_n(&calls, __ATOMIC_RELAXED));
		fflush(stdout);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int serve = argc == 6 && !strcmp(argv[1], "serve");
	if ((argc == 5 && !strcmp(argv[1], "many")) || serve) {
		int n = atoi(argv[2]);
		period_ms = atol(argv[3]);
		spin_us = serve ? atol(argv[4]) : 0;
		double secs = atof(argv[serve ? 5 : 4]);
		pthread_t *t = calloc((size_t)n + 1, sizeof *t);
		pthread_attr_t a;
		pthread_attr_init(&a);
		pthread_attr_setstacksize(&a, 64 << 10);
		for (int i = 0; i < n; i++)
			if (pthread_create(&t[i], &a, serve ? server : caller, NULL)) {
				fprintf(stderr, "pthread_create failed at %d\n", i);
				return 1;
			}
		if (!serve) /* serve: no short-lived threads */
			pthread_create(&t[n], &a, churn, NULL);
		printf("ready\n");
		fflush(stdout);
		sleep_ms((long)(secs * 1000));
		stop = 1;
		for (int i = 0; i < n + !serve; i++)
			pthread_join(t[i], NULL);
		printf("calls %lu\n", __atomic_load_n(&calls, __ATOMIC_RELAXED));
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "hot")) {
		uint64_t t0 = now_ns(), end = t0 + (uint64_t)(atof(argv[2]) * 1e9), next = t0 + 500000000u;
		unsigned long last = 0;
		long x = 0;
		setvbuf(stdout, NULL, _IOLBF, 0);
		for (;;) {
			for (int i = 0; i < 256; i++)
				x = tick(x);
			uint64_t t = now_ns();
			if (t >= next) {
				unsigned long c = my_calls;
				printf("progress %.1f %lu\n", (double)(next - t0) / 1e9, c - last);
				last = c;
				next += 500000000u;
			}
			if (t >= end)
				break;
		}
		printf("calls %lu\n", my_calls);
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "leader")) {
		int n = atoi(argv[2]);
		lcalls = atol(argv[3]);
		lthreads = n;
		pthread_t t;
		for (int i = 0; i < n; i++)
			if (pthread_create(&t, NULL, lcaller, NULL))
				return 1;
		printf("ready\n");
		fflush(stdout);
		sleep_ms(200);
		pthread_exit(NULL);
	}
	if (argc == 4 && !strcmp(argv[1], "work")) {
		long iters = atol(argv[2]), n = atol(argv[3]), x = 0;
		struct timespec c0, c1;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
		for (long i = 0; i < n; i++) {
			for (long k = 0; k < iters; k++)
				__asm__ volatile("" : "+r"(x));
			x = tick(x);
		}
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
		struct rusage ru;
		getrusage(RUSAGE_SELF, &ru); /* one thread */
		printf("cpu %.4f calls %ld sys %.4f\n", (double)(c1.tv_sec - c0.tv_sec) + (double)(c1.tv_nsec - c0.tv_nsec) / 1e9,
		       n, (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6);
		return 0;
	}
	fprintf(stderr, "usage: t62-many many N MS SECONDS | serve N MS US SECONDS | leader N CALLS | work ITERS CALLS | hot SECONDS\n");
	return 2;
}
