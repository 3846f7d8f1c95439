/* t62-spawn.c — for t6290-trace-target.sh: threads and a child created
 * after the tracer attached, each calling work() from its first lines.
 *   t62-spawn WAIT_MS THREADS CALLS [fork]: prints "ready", sleeps WAIT_MS,
 *   then starts THREADS threads that call work() CALLS times each (all of
 *   them, then joined), then with "fork" a child process that calls it
 *   CALLS times; prints "calls N", the number of work() calls made. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;
static long calls;

__attribute__((noinline)) void work(long i)
{
	sink += (unsigned long)i;
	__asm__ volatile("" ::: "memory");
}

static void *thread_main(void *arg)
{
	(void)arg;
	for (long i = 0; i < calls; i++)
		work(i);
	return NULL;
}

int main(int argc, char **argv)
{
	long wait_ms = argc > 1 ? atol(argv[1]) : 0;
	int nthreads = argc > 2 ? atoi(argv[2]) : 2;
	calls = argc > 3 ? atol(argv[3]) : 1000;
	int do_fork = argc > 4 && !strcmp(argv[4], "fork");
	printf("ready\n");
	fflush(stdout);
	struct timespec ts = { wait_ms / 1000, (wait_ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
	pthread_t *t = calloc((size_t)nthreads, sizeof *t);
	for (int i = 0; i < nthreads; i++)
		if (pthread_create(&t[i], NULL, thread_main, NULL) != 0)
			return 1;
	for (int i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	long total = nthreads * calls;
	if (do_fork) {
		pid_t pid = fork();
		if (pid == 0) {
			thread_main(NULL);
			_exit(0);
		}
		int st;
		if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
			return 1;
		total += calls;
	}
	printf("calls %ld\n", total);
	return 0;
}
