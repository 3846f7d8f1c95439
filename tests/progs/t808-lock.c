/* t808-lock.c — for t8081-plive-line-lock.sh: a line probe from plive on a
 * line whose code begins with a lock-prefixed add (the kernel cannot probe
 * it: pcollect moves the probe to the next instruction of the same basic
 * block, and says so).  step() runs in a loop; its LOCKLINE runs once per
 * call.  Every second the program prints "lock N rate R/s" (N: the line's
 * runs so far, R: in the last second), and prints "ready" first. */
#include <stdio.h>
#include <time.h>

static unsigned long nlock;
static volatile unsigned long flag, nafter;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) unsigned long step(unsigned long i)
{
	flag = i;
	__atomic_add_fetch(&nlock, 1, __ATOMIC_RELAXED); /* LOCKLINE */
	flag = i + 1;
	nafter++;
	unsigned long x = i;
	for (unsigned long k = 0; k < 40000; k++)
		x = x * 2654435761u + k;
	return x;
}

int main(void)
{
	printf("ready\n");
	fflush(stdout);
	double next = now_s() + 1;
	unsigned long last = 0;
	for (unsigned long i = 0;; i++) {
		flag ^= step(i);
		if ((i & 63) == 0 && now_s() >= next) {
			unsigned long n = __atomic_load_n(&nlock, __ATOMIC_RELAXED);
			printf("lock %lu rate %lu/s\n", n, n - last);
			fflush(stdout);
			last = n;
			next += 1;
		}
	}
}
