/* slowreq.c — a "server" whose request handler is slow on a known fraction
 * of calls, for pfilter --slow/--fast and pdiff --split tests.
 *
 * Thread "server" handles NREQ requests.  Request k is slow when
 * k % 20 == 7 (exactly 5%): handle_request -> parse_request (1 ms of CPU),
 * then slow_path (30 ms) or fast_path (4 ms).  Between requests,
 * between_requests burns 3 ms outside handle_request, so consecutive calls
 * are told apart in sampled data.  A thread "idler" burns in idle_loop
 * meanwhile.  Work is measured in thread CPU time, so the number of
 * cpu-clock samples per phase does not depend on the machine's load.
 * Prints "requests N slow M". */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#define NREQ 200

static volatile unsigned long sink;
static volatile int done;

static double cpu_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) static void spin(double ms)
{
	double end = cpu_ms() + ms;
	while (cpu_ms() < end)
		for (int i = 0; i < 2000; i++)
			sink += (unsigned long)i * 2654435761u;
}

__attribute__((noinline)) static void parse_request(void) { spin(1); }
__attribute__((noinline)) static void fast_path(void) { spin(4); }
__attribute__((noinline)) static void slow_path(void) { spin(30); }
__attribute__((noinline)) static void between_requests(void) { spin(3); }

__attribute__((noinline)) void handle_request(int k)
{
	parse_request();
	if (k % 20 == 7)
		slow_path();
	else
		fast_path();
}

__attribute__((noinline)) static void idle_loop(void)
{
	while (!done)
		spin(1);
}

static void *idler(void *a)
{
	pthread_setname_np(pthread_self(), "idler");
	idle_loop();
	return a;
}

int main(void)
{
	pthread_t t;
	pthread_setname_np(pthread_self(), "server");
	pthread_create(&t, NULL, idler, NULL);
	int slow = 0;
	for (int k = 0; k < NREQ; k++) {
		between_requests();
		handle_request(k);
		slow += k % 20 == 7;
	}
	between_requests();
	done = 1;
	pthread_join(t, NULL);
	printf("requests %d slow %d\n", NREQ, slow);
	return 0;
}
