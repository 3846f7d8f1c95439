/* t65-spin.c — burns the CPU until killed, three quarters of its iterations in spin_hot
 * one quarter in spin_cold (pcollect -a tests: a known function's share).  Each
 * round's length is drawn at random (spin_hot 3 n iterations, spin_cold n,
 * n from 20,000 to 180,000), so a sampling rate cannot lock onto the
 * rounds' phase; the two loops do different work, so -O2's identical code
 * folding cannot merge them. */
#include <stdio.h>
static volatile unsigned long sink;
__attribute__((noinline)) static void spin_hot(unsigned n)
{
	for (unsigned i = 0; i < 3 * n; i++)
		sink += (unsigned long)i * i;
}
__attribute__((noinline)) static void spin_cold(unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		sink ^= (unsigned long)i * i + 7;
}
static unsigned long rng = 88172645463325252UL;
__attribute__((noinline)) static void spin_round(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	unsigned n = 20000 + (unsigned)(rng % 160001);
	spin_hot(n);
	spin_cold(n);
}
int main(void)
{
	printf("ready\n");
	fflush(stdout);
	for (;;)
		spin_round();
}
