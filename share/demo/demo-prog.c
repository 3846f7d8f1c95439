/* demo-prog.c — the program behind share/demo/perf-demo.txt.gz: a small
 * "server" with two named worker threads.  parse_request() and
 * render_page() burn CPU in distinct call paths; compress() is reached from
 * two callers, so the flame graph shows it twice.  Re-record with
 * share/demo/record.sh. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static volatile unsigned long sink;

__attribute__((noinline)) static void checksum(int n)
{
	for (int i = 0; i < n * 400; i++)
		sink += (unsigned long)i * 2654435761u;
}

__attribute__((noinline)) static void compress(int n)
{
	for (int i = 0; i < n * 900; i++)
		sink ^= sink << 3 | (unsigned long)i;
	checksum(n / 2 + 1);
}

__attribute__((noinline)) static void tokenize(int n)
{
	for (int i = 0; i < n * 700; i++)
		sink += (unsigned long)(i % 7);
}

__attribute__((noinline)) static void parse_request(int n)
{
	tokenize(n);
	checksum(n);
}

__attribute__((noinline)) static void render_page(int n)
{
	for (int i = 0; i < n * 500; i++)
		sink += (unsigned long)i >> 2;
	compress(n);
}

__attribute__((noinline)) static void handle_request(int k)
{
	parse_request(k % 5 + 1);
	render_page(k % 3 + 1);
}

__attribute__((noinline)) static void flush_logs(int k) { compress(k % 4 + 1); }

static void *worker(void *arg)
{
	pthread_setname_np(pthread_self(), (const char *)arg);
	for (int k = 0; k < 40000; k++) {
		handle_request(k);
		if (k % 8 == 0)
			flush_logs(k);
	}
	return NULL;
}

int main(void)
{
	pthread_t a, b;
	pthread_create(&a, NULL, worker, "worker-1");
	pthread_create(&b, NULL, worker, "worker-2");
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("%lu\n", sink);
	return 0;
}
