/* t62-members.c — target of the struct member line probe (t6250): at the
 * PROBE line, conn points to a struct on the heap (conn->fd, conn->flags:
 * read from the live process), req is a struct in the frame (req.len:
 * memory in the stack copy) and rp points into the frame (rp->kind: the
 * stack copy).  Prints the values as the probe should record them, then
 * stays alive a moment so that the heap is still there when pcollect reads
 * the last hits. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct conn {
	int pad;
	int fd;
	short flags;
	long bytes;
};

struct req {
	long id;
	int len;
	unsigned char kind;
};

__attribute__((noinline)) void fill(struct req *r, long i)
{
	r->id = i;
	r->len = (int)(i * 37 % 1000) - 300;
	r->kind = (unsigned char)(i * 7 + 200);
}

__attribute__((noinline)) long serve(struct conn *conn, long i)
{
	struct req req;
	struct req *rp = &req;
	fill(&req, i);
	printf("serve conn->fd=%d conn->flags=%d req.len=%d rp->kind=%u\n", /* PROBE */
	       conn->fd, conn->flags, req.len, rp->kind);
	conn->bytes += req.len;
	return conn->bytes;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20;
	struct conn *c[4];
	for (int k = 0; k < 4; k++) {
		c[k] = calloc(1, sizeof *c[k]);
		c[k]->fd = 100 + k;
		c[k]->flags = (short)(-3 * k);
	}
	long t = 0;
	for (long i = 0; i < n; i++)
		t += serve(c[i % 4], i);
	fflush(stdout);
	usleep(300000);
	for (int k = 0; k < 4; k++)
		free(c[k]);
	return t == 7;
}
