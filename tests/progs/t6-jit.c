/* t6-jit.c — "JIT" code for pcollect tests: copies a small machine-code
 * loop (x86-64) into an anonymous executable mapping, names it in
 * /tmp/perf-PID.map as a JIT would (node --perf-basic-prof, python -X perf)
 * and runs it for SECONDS (argv[1], default 1).  With LATE (argv[2]) it
 * runs the code for LATE seconds before writing the map, as a JIT that
 * names code after it first ran.  Removes the map at exit, unless KEEP
 * (argv[3] is "keep"): then it prints the map's path on standard output
 * for the caller to remove (a collector slowed down by a busy machine may
 * look for the map only after the process exited). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* mov ecx, 0x100000; 1: dec ecx; jnz 1b; ret */
static const unsigned char code[] = { 0xb9, 0x00, 0x00, 0x10, 0x00, 0xff, 0xc9, 0x75, 0xfc, 0xc3 };

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

__attribute__((noinline)) void call_jit(void (*f)(void), double seconds)
{
	double t0 = now();
	while (now() - t0 < seconds)
		f();
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1, late = argc > 2 ? atof(argv[2]) : 0;
#if !defined(__x86_64__)
	fprintf(stderr, "t6-jit: x86-64 only\n");
	return 77;
#endif
	unsigned char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	memcpy(p, code, sizeof code);
	if (mprotect(p, 4096, PROT_READ | PROT_EXEC) < 0)
		return 1;
	if (late > 0)
		call_jit((void (*)(void))p, late);
	char path[64];
	snprintf(path, sizeof path, "/tmp/perf-%d.map", (int)getpid());
	FILE *f = fopen(path, "w");
	if (!f)
		return 1;
	fprintf(f, "%lx %zx jit_spin_loop\n", (unsigned long)(uintptr_t)p, sizeof code);
	fclose(f);
	call_jit((void (*)(void))p, seconds);
	if (argc > 3 && !strcmp(argv[3], "keep"))
		printf("%s\n", path);
	else
		unlink(path);
	return 0;
}
