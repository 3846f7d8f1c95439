/* t66-shortthr.c — a thread-per-request server without the network: each
 * "request" is served by a new thread that burns a CPU time drawn at random
 * between MIN_MS and MAX_MS of its own CPU clock (handle_request), two
 * requests at a time, for SECONDS seconds.  A per-thread sampler whose
 * period starts afresh in each new thread never samples a thread that runs
 * less than one period; the drawn lengths keep a rate from locking onto
 * the requests' phase.  Prints "ready" when serving, and at the end
 * "cpu SECONDS requests N" with its getrusage user+system CPU time (every
 * thread, joined ones included): the truth a profile is compared with.
 *   usage: t66-shortthr SECONDS [MIN_MS MAX_MS]
 * Built at -O2 too: the burn's result is kept in a volatile. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

static volatile unsigned long sink;

static double thread_cpu(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void handle_request(double ms)
{
	double until = thread_cpu() + ms / 1e3;
	unsigned long x = sink;
	while (thread_cpu() < until)
		for (unsigned i = 0; i < 2000; i++)
			x = x * 6364136223846793005UL + i;
	sink = x;
}

static void *serve(void *arg)
{
	handle_request(*(double *)arg);
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3, lo = argc > 3 ? atof(argv[2]) : 1, hi = argc > 3 ? atof(argv[3]) : 8;
	unsigned long rng = 88172645463325252UL, n = 0;
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	printf("ready\n");
	fflush(stdout);
	do {
		pthread_t th[2];
		double ms[2];
		for (int k = 0; k < 2; k++) {
			rng ^= rng << 13;
			rng ^= rng >> 7;
			rng ^= rng << 17;
			ms[k] = lo + (hi - lo) * (double)(rng % 10007) / 10006.0;
			if (pthread_create(&th[k], NULL, serve, &ms[k]) != 0)
				return 1;
		}
		for (int k = 0; k < 2; k++)
			pthread_join(th[k], NULL);
		n += 2;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("cpu %.4f requests %lu\n",
	       (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
		       (double)ru.ru_stime.tv_usec / 1e6, n);
	return 0;
}
