/* t6-dlopen.c — loads a library with dlopen after it has been running for
 * a while and spends most of its time in it: t6-dlopen LIBRARY [SECONDS].
 * The library is mapped after sampling started, so its symbols must come
 * from following the process's new mappings (PERF_RECORD_MMAP2). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile double sink;

__attribute__((noinline)) void before_dlopen(double seconds)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 100000; i++)
			sink += 1.0 / (i + 1);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: t6-dlopen LIBRARY [SECONDS]\n");
		return 2;
	}
	double seconds = argc > 2 ? atof(argv[2]) : 1;
	before_dlopen(seconds / 5);
	void *h = dlopen(argv[1], RTLD_NOW);
	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	void (*f)(double) = (void (*)(double))dlsym(h, "dl_outer");
	if (!f)
		return 1;
	f(seconds);
	return 0;
}
