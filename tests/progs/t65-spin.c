/* t65-spin.c — burns the CPU until killed, 75 % of it in spin_hot and
 * 25 % in spin_cold (pcollect -a tests: a known function's share). */
#include <stdio.h>
static volatile unsigned long sink;
__attribute__((noinline)) static void spin_hot(void) { for (int i = 0; i < 300000; i++) sink += (unsigned long)i * i; }
__attribute__((noinline)) static void spin_cold(void) { for (int i = 0; i < 100000; i++) sink += (unsigned long)i * i; }
__attribute__((noinline)) static void spin_round(void) { spin_hot(); spin_cold(); }
int main(void)
{
	printf("ready\n");
	fflush(stdout);
	for (;;)
		spin_round();
}
