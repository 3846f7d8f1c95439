/* demo-prog.c — the program behind share/demo/perf-demo.txt.gz: a small
 * "server" with two named worker threads and a logger thread.
 *
 *   worker-1, worker-2:  handle_request -> parse_request -> tokenize, checksum
 *                        handle_request -> render_page -> compress -> checksum
 *                        flush_logs -> compress -> checksum
 *   logger:              log_loop -> format_line, and write(2) to /dev/null
 *                        (kernel frames under the syscall)
 *
 * compress() and checksum() are reached through several callers, so a flame
 * graph shows them more than once.  Re-record with share/demo/record.sh;
 * tests/bench/bench.sh also records it with --call-graph dwarf. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile unsigned long sink;
static volatile int stop;

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
	for (int k = 0; k < 60000; k++) {
		handle_request(k);
		if (k % 8 == 0)
			flush_logs(k);
	}
	return NULL;
}

__attribute__((noinline)) static int format_line(char *buf, int k)
{
	int n = 0;
	for (int i = 0; i < 48; i++)
		buf[n++] = (char)('a' + (k * 31 + i * 7) % 26);
	buf[n++] = '\n';
	return n;
}

__attribute__((noinline)) static void log_loop(int fd)
{
	char buf[64];
	for (int k = 0; !stop; k++) {
		int n = format_line(buf, k);
		if (write(fd, buf, (size_t)n) < 0)
			break;
	}
}

static void *logger(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "logger");
	int fd = open("/dev/null", O_WRONLY);
	if (fd >= 0) {
		log_loop(fd);
		close(fd);
	}
	return NULL;
}

int main(void)
{
	pthread_t a, b, l;
	pthread_create(&a, NULL, worker, "worker-1");
	pthread_create(&b, NULL, worker, "worker-2");
	pthread_create(&l, NULL, logger, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	stop = 1;
	pthread_join(l, NULL);
	printf("%lu\n", sink);
	return 0;
}
