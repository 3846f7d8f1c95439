/* t64-live.c — for t6410-live.sh and t6411-weights.sh: known bytes through
 * each allocator.
 *   t64-live live N SIZE: leak_a mallocs 3*N blocks of SIZE bytes and
 *   keeps them; leak_b callocs N blocks of SIZE/2 and reallocs each to
 *   SIZE, and keeps them; tidy mallocs, callocs and reallocs 4*N blocks
 *   and frees every one.  Live at the end: 3:1 in bytes, leak_a and
 *   leak_b only (under leak_b, realloc's stack: the block's last size).
 *   t64-live weights N SIZE: via_calloc callocs N blocks of 4 x SIZE/4,
 *   via_realloc reallocs N 16-byte blocks to SIZE, via_mmap maps N
 *   anonymous regions of 2*SIZE (all freed).
 *   t64-live loop SECONDS SIZE: prints "ready", then every 10 ms leaks a
 *   block of SIZE bytes from leak_a and allocates and frees 3 from tidy,
 *   for SECONDS (attach tests).
 *   t64-live cost N: N back-to-back malloc(64) + free pairs (for
 *   tests/bench/trace-bench.sh): ns of CPU time per pair.
 * Prints what it did, one line per function: NAME calls C bytes B.
 * noinline: the functions stay in the stacks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static void *volatile keep;

static void *need(void *p)
{
	if (!p) {
		perror("t64-live");
		exit(1);
	}
	keep = p;
	return p;
}

__attribute__((noinline)) void leak_a(long n, size_t size)
{
	for (long i = 0; i < n; i++)
		((char *)need(malloc(size)))[0] = 1;
}

__attribute__((noinline)) void leak_b(long n, size_t size)
{
	for (long i = 0; i < n; i++) {
		char *p = need(calloc(1, size / 2));
		need(realloc(p, size));
	}
}

__attribute__((noinline)) void tidy(long n, size_t size)
{
	for (long i = 0; i < n; i++) {
		char *a = need(malloc(size)), *b = need(calloc(2, size)), *c = need(malloc(8));
		c = need(realloc(c, size * 3));
		free(a);
		free(b);
		free(c);
	}
}

__attribute__((noinline)) void via_calloc(long n, size_t size)
{
	for (long i = 0; i < n; i++)
		free(need(calloc(4, size / 4)));
}

__attribute__((noinline)) void via_realloc(long n, size_t size)
{
	for (long i = 0; i < n; i++)
		free(need(realloc(need(malloc(16)), size)));
}

__attribute__((noinline)) void via_mmap(long n, size_t size)
{
	for (long i = 0; i < n; i++) {
		void *p = mmap(NULL, 2 * size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			need(NULL);
		munmap(p, 2 * size);
	}
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "live";
	long n = argc > 2 ? atol(argv[2]) : 1000;
	size_t size = argc > 3 ? (size_t)atol(argv[3]) : 1000;
	if (!strcmp(mode, "loop")) {
		printf("ready\n");
		fflush(stdout);
		for (long i = 0; i < n * 100; i++) {
			leak_a(1, size);
			tidy(1, size);
			usleep(10000);
		}
	} else if (!strcmp(mode, "cost")) {
		/* CPU time: a probe's trap is charged to the process as system time */
		struct timespec t0, t1;
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
		for (long i = 0; i < n; i++)
			free(need(malloc(64)));
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
		printf("cost %.1f ns per call\n",
		       ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / (double)n);
	} else if (!strcmp(mode, "live")) {
		leak_a(3 * n, size);
		leak_b(n, size);
		tidy(n, size);
		printf("leak_a calls %ld bytes %lu\n", 3 * n, (unsigned long)(3 * n) * size);
		printf("leak_b calls %ld bytes %lu\n", n, (unsigned long)n * size);
		printf("tidy calls %ld bytes 0\n", n);
	} else {
		via_calloc(n, size);
		via_realloc(n, size);
		via_mmap(n, size);
		printf("via_calloc calls %ld bytes %lu\n", n, (unsigned long)n * (size / 4 * 4));
		printf("via_realloc calls %ld bytes %lu\n", n, (unsigned long)n * size);
		printf("via_mmap calls %ld bytes %lu\n", n, (unsigned long)n * 2 * size);
	}
	return 0;
}
