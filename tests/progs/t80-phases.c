/* t80-phases.c — a target for plive and the heat map: burns CPU in
 * phase_one for ARG1 seconds (default 3), then in phase_two for ever (or
 * ARG2 seconds).  With "bursts" as ARG1: every 2 s a 0.4 s burst in
 * burst_work, idle (sleeping) in between, for ARG2 seconds.  Prints
 * "ready" once running. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The work is in each function itself, so it is the leaf of the samples. */
#define SPIN(until) \
	while (now() < (until)) \
		for (int i = 0; i < 200000; i++) \
			sink += (unsigned long)i * (unsigned long)i
__attribute__((noinline)) void phase_one(double until) { SPIN(until); }
__attribute__((noinline)) void phase_two(double until) { SPIN(until); }
__attribute__((noinline)) void burst_work(double until) { SPIN(until); }

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc > 1 && !strcmp(argv[1], "bursts")) {
		double t0 = now(), len = argc > 2 ? atof(argv[2]) : 10;
		printf("ready\n");
		while (now() < t0 + len) {
			double start = now();
			burst_work(start + 0.4);
			double rest = start + 2 - now();
			if (rest > 0)
				usleep((useconds_t)(rest * 1e6));
		}
		return 0;
	}
	double one = argc > 1 ? atof(argv[1]) : 4, two = argc > 2 ? atof(argv[2]) : 1e9;
	printf("ready\n");
	double t0 = now();
	phase_one(t0 + one);
	phase_two(t0 + one + two);
	return 0;
}
