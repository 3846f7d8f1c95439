/* t6-zombie.c — main calls pthread_exit while a worker burns CPU in
 * burn_in_worker(): the process runs on with a zombie main thread, whose
 * /proc/PID/maps is empty.  Prints "ready" first. */
#include <pthread.h>
#include <stdio.h>

static volatile unsigned long sink;

__attribute__((noinline)) void burn_in_worker(void)
{
	for (;;)
		sink += sink * 3 + 1;
}

static void *worker(void *a)
{
	burn_in_worker();
	return a;
}

int main(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, worker, NULL))
		return 1;
	puts("ready");
	fflush(stdout);
	pthread_exit(NULL);
}
