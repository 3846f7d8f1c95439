/* t7-locals.c — a program that hangs with known values in several frames,
 * for pcollect --snapshot --locals (t7020): ints, a char *, a struct
 * passed by pointer, an enum, an array, a double; and bad ones: pointers
 * into nowhere, a string without its end.  It prints "ready" and
 * then blocks forever in read(2) on a pipe nobody writes. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

enum color { RED, GREEN, BLUE };

struct req {
	int id;
	long len;
	const char *path;
};

static int fds[2];
static char many[100]; /* 'x' everywhere: a string without its end */

__attribute__((noinline)) static int wait_input(int fd, int retries)
{
	char buf[16];
	int tries = retries * 2;
	ssize_t n = read(fd, buf, sizeof buf); /* blocks */
	return (int)n + tries;
}

__attribute__((noinline)) static int handle(struct req *r, enum color c, const char *who)
{
	int counts[5] = { 10, 20, 30, 40, 50 };
	double ratio = 0.25 * r->id;
	int got = wait_input(fds[0], 3);
	return got + counts[c] + (int)ratio + (int)strlen(who);
}

__attribute__((noinline)) static int serve(int port)
{
	struct req rq = { 7, 512, "/srv/data.bin" };
	char label[8] = "server";
	const char *gone = (const char *)0xdead000;
	struct req *lost = (struct req *)0xdead100;
	char *endless = many;
	int rc = handle(&rq, BLUE, "alice");
	return rc + port + label[0] + (gone != 0) + (lost != 0) + endless[1];
}

int main(void)
{
	memset(many, 'x', sizeof many);
	if (pipe(fds) < 0)
		return 1;
	printf("ready\n");
	fflush(stdout);
	return serve(8080);
}
