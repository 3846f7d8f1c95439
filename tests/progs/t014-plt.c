/* t014-plt.c — PLT stubs for tests/cmd/t0140-perfdata-paths.sh.  Built as
 * a shared library without start files (-DLIB -nostartfiles: no _init
 * before its .plt, as libc) whose plt_loop calls the exported plt_inner
 * through the library's own PLT, and as a program calling plt_loop for
 * argv[1] seconds: a good share of the samples land in "plt_inner@plt". */
#ifdef LIB
__attribute__((noinline)) int plt_inner(int x)
{
	return x + 1;
}

int plt_loop(int n, int x)
{
	for (int i = 0; i < n; i++)
		x = plt_inner(x);
	return x;
}
#else
#include <stdlib.h>
#include <time.h>

int plt_loop(int n, int x);

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1;
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int x = 0;
	do {
		x = plt_loop(1000000, x);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	return x == 0;
}
#endif
