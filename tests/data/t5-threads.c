/* t5-threads.c — the program recorded into t5-perf-threads.txt.gz (see
 * t5-record.sh): three named threads with different call paths; "sleeper"
 * alternates work and sleep, so its time line has idle gaps. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) static void spin(int n)
{
	for (int i = 0; i < n * 1000; i++)
		sink += (unsigned long)i * i;
}
__attribute__((noinline)) static void tokenize(int n) { spin(n); }
__attribute__((noinline)) static void parse(int n) { tokenize(n); spin(n / 2); }
__attribute__((noinline)) static void checksum(int n) { spin(n); }
__attribute__((noinline)) static void compress(int n) { checksum(n); spin(n); }
__attribute__((noinline)) static void nap(void)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	nanosleep(&ts, NULL);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *parser(void *a)
{
	pthread_setname_np(pthread_self(), "parser");
	for (double end = now() + 1.2; now() < end;)
		parse(300);
	return a;
}
static void *compressor(void *a)
{
	pthread_setname_np(pthread_self(), "compressor");
	for (double end = now() + 1.2; now() < end;)
		compress(200);
	return a;
}
static void *sleeper(void *a)
{
	pthread_setname_np(pthread_self(), "sleeper");
	for (double end = now() + 1.2; now() < end;) {
		for (double e2 = now() + 0.02; now() < e2;)
			spin(100);
		nap();
	}
	return a;
}

int main(void)
{
	pthread_t t[3];
	pthread_create(&t[0], NULL, parser, NULL);
	pthread_create(&t[1], NULL, compressor, NULL);
	pthread_create(&t[2], NULL, sleeper, NULL);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	printf("%lu\n", sink);
	return 0;
}
