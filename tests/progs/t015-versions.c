/* t015-versions.c — one program in two versions, for t0155 (pdiff and
 * pmerge of ./v1 against ./v2): -DV=1 spends about 2/3 of its time in
 * parse() and 1/3 in render(); -DV=2 the other way round.  Runs argv[1]
 * seconds of CPU time (default 1). */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) static void spin(long n)
{
	for (long i = 0; i < n; i++)
		sink += (unsigned long)i * (unsigned long)i;
}

/* sink++ after the call: no tail call, so parse and render stay on the stack */
__attribute__((noinline)) void parse(void) { spin(V == 1 ? 200000 : 100000); sink++; }
__attribute__((noinline)) void render(void) { spin(V == 1 ? 100000 : 200000); sink++; }

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1;
	while ((double)clock() / CLOCKS_PER_SEC < secs) {
		parse();
		render();
	}
	return 0;
}
