/* t62-locals.c — target of the line probe with variables (t6200): at the
 * PROBE line, k is a parameter and len a local (registers at -O2), sum a
 * volatile local (in the frame: the frame base is the CFA).  Prints
 * "handle k=K len=L sum=S" for each call, as the probe should record them. */
#include <stdio.h>

struct req {
	int fd;
	long len;
};

__attribute__((noinline)) long handle(struct req *r, long k)
{
	long len = r->len * k;
	volatile long sum = 0;
	for (int i = 0; i < 3; i++)
		sum += len + i;
	printf("handle k=%ld len=%ld sum=%ld\n", k, len, (long)sum); /* PROBE */
	return sum;
}

int main(void)
{
	long t = 0;
	for (long k = 1; k <= 20; k++) {
		struct req r = { (int)(k + 2), 100 - 7 * k };
		t += handle(&r, k);
	}
	return t == 7;
}
