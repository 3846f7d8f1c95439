/* t015-server.c — the stand-in "./server" and "./prog" of the man pages'
 * EXAMPLES (t0156): three threads, "server" (main), "worker-1" and
 * "worker-2", call handle_request(id, n) in a loop (parse_request, a
 * malloc of n bytes, a slow path on every 20th call) and sleep 1 ms between
 * requests (off-CPU time, "[blocked]").  Runs for the seconds in
 * $SERVER_SECONDS (default 3); other arguments (--bench) are ignored.
 * Prints "ready" when its threads run. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;
static volatile int done;

__attribute__((noinline)) static void spin(long n)
{
	for (long i = 0; i < n; i++)
		sink += (unsigned long)i * 2654435761u;
}

__attribute__((noinline)) static void parse_request(long n) { spin(n); }
__attribute__((noinline)) static void slow_path(long n) { spin(8 * n); }

__attribute__((noinline)) int handle_request(int id, long n)
{
	char *buf = malloc((size_t)n);
	if (!buf)
		return -1;
	memset(buf, id, (size_t)n);
	parse_request(n * 10);
	if (id % 20 == 7)
		slow_path(n * 10);
	sink += (unsigned long)buf[n - 1];
	free(buf);
	return 0;
}

static void *worker(void *arg)
{
	for (int id = 0; !done; id++) {
		handle_request(id, 20000 + (long)(id % 5) * 1000);
		usleep(1000);
	}
	return arg;
}

int main(void)
{
	const char *s = getenv("SERVER_SECONDS");
	double secs = s ? atof(s) : 3;
	pthread_setname_np(pthread_self(), "server");
	pthread_t t[2];
	for (int i = 0; i < 2; i++) {
		char name[16];
		snprintf(name, sizeof name, "worker-%d", i + 1);
		pthread_create(&t[i], NULL, worker, NULL);
		pthread_setname_np(t[i], name);
	}
	printf("ready\n");
	fflush(stdout);
	/* the main thread serves too, until the time is up */
	struct timespec t0, now;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int id = 1;; id += 2) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((double)(now.tv_sec - t0.tv_sec) + (double)(now.tv_nsec - t0.tv_nsec) / 1e9 >= secs)
			break;
		handle_request(id, 20000);
		usleep(1000);
	}
	done = 1;
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	return 0;
}
