/* t7-asof.c — values that change all the time, for pcollect --snapshot
 * --locals (t7040): the main thread blocks in read(2) with a pointer to a
 * heap struct that a second thread rewrites without pause (a number, and
 * the same number as text in a heap string), while that thread's own
 * counter lives on its stack.  Read while the threads are stopped, the
 * three agree (within the one step the writer may be in); read after,
 * they do not.  Also bad memory: a pointer into a mapped page that cannot
 * be read, and a string that runs into such a page without ending.
 * Prints "ready"; the writer stops after 20 s at most (it must not keep a
 * CPU busy if the test dies). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

struct counter {
	long n;
	char *text;
};

static int fds[2];

__attribute__((noinline)) static void *writer(void *arg)
{
	struct counter *c = arg;
	time_t end = time(NULL) + 20;
	for (long i = 0;; i++) {
		c->n = i;
		snprintf(c->text, 24, "%ld", i);
		if ((i & 0xfffff) == 0 && time(NULL) > end)
			return NULL;
	}
}

__attribute__((noinline)) static int wait_on(struct counter *c, const char *guarded, const char *edge)
{
	char buf[8];
	return (int)read(fds[0], buf, sizeof buf) + (c->n > 0) + (guarded != 0) + (edge != 0); /* blocks */
}

int main(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	/* two pages: the second cannot be read */
	char *m = mmap(NULL, 2 * (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED || pipe(fds) < 0)
		return 1;
	memset(m + pg - 8, 'y', 8); /* "yyyyyyyy" up to the unreadable page, no end */
	mprotect(m + pg, (size_t)pg, PROT_NONE);
	struct counter *c = malloc(sizeof *c);
	if (!c || !(c->text = malloc(24)))
		return 1;
	c->n = 0;
	strcpy(c->text, "0");
	pthread_t t;
	if (pthread_create(&t, NULL, writer, c) != 0)
		return 1;
	printf("ready\n");
	fflush(stdout);
	return wait_on(c, m + pg + 16, m + pg - 8);
}
