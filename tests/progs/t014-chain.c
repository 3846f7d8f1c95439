/* t014-chain.c — stacks for tests/cmd/t0140-perfdata-paths.sh.  Built twice
 * with STAGE 1 and 2 (-no-pie): the same code at the same addresses under
 * other names; stage 1 burns, then execs stage 2 (argv[1]) in the same
 * process, whose maps then change under the same addresses.  Deep (20
 * frames) and shallow (2 frames) stacks both. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#if STAGE == 1
#define DEEP deep_first
#define SHALLOW shallow_first
#define SPIN spin_first
#else
#define DEEP deep_second
#define SHALLOW shallow_second
#define SPIN spin_second
#endif

static volatile unsigned long sink;

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

__attribute__((noinline)) void SPIN(int n)
{
	for (int i = 0; i < n; i++)
		sink += (unsigned long)i * 2654435761u;
}

__attribute__((noinline)) void DEEP(int depth)
{
	if (depth > 0)
		DEEP(depth - 1);
	else
		SPIN(20000);
	sink++; /* not a tail call */
}

__attribute__((noinline)) void SHALLOW(void)
{
	SPIN(20000);
	sink++;
}

int main(int argc, char **argv)
{
	double end = now() + 0.4;
	while (now() < end) {
		DEEP(20);
		SHALLOW();
	}
	if (argc > 1) {
		execv(argv[1], (char *[]){ argv[1], NULL });
		perror("execv");
		return 1;
	}
	return 0;
}
