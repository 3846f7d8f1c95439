/* t6-dllib.c — the library t6-dlopen.c loads mid-run (built -shared -fPIC
 * -O2 -fomit-frame-pointer): its functions must be named in the profile. */
#include <time.h>

static volatile double sink;

static double cpu_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

__attribute__((noinline)) void dl_inner_spin(double seconds)
{
	double t0 = cpu_now(), x = 1;
	while (cpu_now() - t0 < seconds)
		for (int i = 0; i < 20000; i++)
			x = x * 0.9999999 + 1.0 / (i + 2);
	sink += x;
}

__attribute__((noinline)) void dl_outer(double seconds)
{
	dl_inner_spin(seconds);
	sink += 1;
}
