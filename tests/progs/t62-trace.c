/* t62-trace.c — target of the --trace tests (t62*.sh).  Built -O2 without
 * frame pointers.  Every mode prints what the tests compare with the
 * trace: how many calls it made, the values it passed and got back, its
 * own clock_gettime measurements of each call.
 *
 *   threads N     main + 3 threads call work() N times each  -> "calls 4N"
 *   attach N GO   "ready", waits for the file GO (made once the tracer
 *                 says it traces), checks that work() is probed (its first
 *                 byte is the int3 a uprobe writes), then 'threads N' with
 *                 the threads created after the attach; "done"; waits until
 *                 the probe is gone, creates one more thread: "after ok"
 *   durations N   N calls of work(), every 20th ten times longer; prints
 *                 "own p50 NS p95 NS p99 NS" of its own per-call timings
 *   recur N       N calls of recur(5): 6N calls of recur
 *   longjmp N     N times: jumper(3) longjmps out of 4 frames; then
 *                 jumper_ok(2) returns normally through 3 frames
 *   args N        N calls of mix(a, b, c) printing "mix a b c = r"
 *   line N        2N inlined uses of count3(): "line ran K", the times its
 *                 LINE-PROBE statement ran
 */
#include <pthread.h>
#include <setjmp.h>
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

volatile double sink;

__attribute__((noinline)) void spin(long n)
{
	for (long i = 0; i < n; i++)
		sink += (double)i * 0.5;
}

__attribute__((noinline)) void work(long n) { spin(n); __asm__ volatile("" ::: "memory"); }

__attribute__((noinline)) int recur(int d)
{
	if (d == 0) {
		spin(1000);
		return 0;
	}
	int r = recur(d - 1);
	__asm__ volatile("" : "+r"(r));
	return r + 1;
}

static jmp_buf jb;
static int do_jump = 1;
__attribute__((noinline)) void jumper(int d)
{
	if (d == 0) {
		if (do_jump)
			longjmp(jb, 1);
		return;
	}
	jumper(d - 1);
	sink += d;
}
__attribute__((noinline)) void jumper_ok(int d)
{
	do_jump = 0;
	jumper(d);
	do_jump = 1;
}

__attribute__((noinline)) long mix(long a, long b, long c)
{
	__asm__ volatile("" ::: "memory");
	return a * b + c;
}

/* The line probe's target: a statement inlined twice into main (two
 * copies), run only when the branch is taken (a volatile store cannot be
 * made unconditional). */
volatile long hits3;
static long ran3;
static inline __attribute__((always_inline)) void count3(long i)
{
	if (i % 3 == 0)
		hits3 += i; /* LINE-PROBE */
}

static long calls_per_thread;
static void *thr(void *arg)
{
	long k = (long)arg;
	for (long i = 0; i < calls_per_thread; i++)
		work(2000 + k);
	return NULL;
}

static int run_threads(long n)
{
	pthread_t t[3];
	calls_per_thread = n;
	for (long i = 0; i < 3; i++) {
		int e = pthread_create(&t[i], NULL, thr, (void *)i);
		if (e) {
			printf("pthread_create: %s\n", strerror(e));
			return 1;
		}
	}
	thr((void *)3);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	printf("pthread_create ok\ncalls %ld\n", 4 * n);
	return 0;
}

static int probed(void) { return *(volatile unsigned char *)(uintptr_t)work == 0xcc; }

static int cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "threads";
	long n = argc > 2 ? atol(argv[2]) : 100;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(mode, "threads"))
		return run_threads(n);
	if (!strcmp(mode, "attach")) {
		printf("ready %d\n", (int)getpid());
		for (int i = 0; argc < 4 || access(argv[3], F_OK); i++) {
			if (i > 10000) {
				printf("timeout waiting for %s\n", argc > 3 ? argv[3] : "a go file");
				return 3;
			}
			usleep(1000);
		}
		if (!probed()) {
			printf("work() is not probed\n");
			return 3;
		}
		if (run_threads(n))
			return 1;
		printf("done\n");
		for (int i = 0; probed(); i++) {
			if (i > 20000) {
				printf("timeout waiting for the detach\n");
				return 3;
			}
			usleep(1000);
		}
		pthread_t t;
		calls_per_thread = 10;
		if (pthread_create(&t, NULL, thr, NULL)) {
			printf("after: pthread_create failed\n");
			return 1;
		}
		pthread_join(t, NULL);
		printf("after ok\n");
		return 0;
	}
	if (!strcmp(mode, "durations")) {
		uint64_t *d = malloc((size_t)n * sizeof *d);
		for (long i = 0; i < n; i++) {
			uint64_t t0 = now_ns();
			work(i % 20 == 7 ? 400000 : 40000);
			d[i] = now_ns() - t0;
		}
		qsort(d, (size_t)n, sizeof *d, cmp);
		printf("own p50 %llu p95 %llu p99 %llu\n", (unsigned long long)d[n * 50 / 100],
		       (unsigned long long)d[n * 95 / 100], (unsigned long long)d[n * 99 / 100]);
		free(d);
		return 0;
	}
	if (!strcmp(mode, "recur")) {
		for (long i = 0; i < n; i++)
			recur(5);
		printf("recur calls %ld\n", 6 * n);
		return 0;
	}
	if (!strcmp(mode, "longjmp")) {
		long jumped = 0;
		for (long i = 0; i < n; i++) {
			if (setjmp(jb) == 0)
				jumper(3);
			else
				jumped++;
			jumper_ok(2);
		}
		printf("jumped %ld\n", jumped);
		return 0;
	}
	if (!strcmp(mode, "args")) {
		long total = 0;
		for (long i = 0; i < n; i++) {
			long a = i + 1, b = -(i * 3), c = 1000 + i;
			long r = mix(a, b, c);
			printf("mix %ld %ld %ld = %ld\n", a, b, c, r);
			total += r;
		}
		return total == 42; /* keep the calls */
	}
	if (!strcmp(mode, "line")) {
		for (long i = 0; i < n; i++) {
			count3(i);
			ran3 += i % 3 == 0;
			count3(i * 7 + 1);
			ran3 += (i * 7 + 1) % 3 == 0;
		}
		printf("line ran %ld\n", ran3);
		return 0;
	}
	fprintf(stderr, "t62-trace: unknown mode %s\n", mode);
	return 2;
}
