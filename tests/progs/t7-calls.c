/* t7-calls.c — threads blocked in different system calls, for the
 * snapshot test of how each call's arguments are printed.  Each thread is
 * named after its call; the main thread prints "ready" once all are
 * started and then waits in pause().  FIFO (argv[1]) is a FIFO path that
 * nobody writes: the "openat" thread blocks opening it. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char *fifo;
static int pipes[3][2];

static void *t_openat(void *a)
{
	(void)a;
	pthread_setname_np(pthread_self(), "openat");
	int fd = open(fifo, O_RDONLY | O_CLOEXEC);
	return (void *)(long)fd;
}

static void *t_poll(void *a)
{
	(void)a;
	pthread_setname_np(pthread_self(), "poll");
	struct pollfd p[3] = { { pipes[0][0], POLLIN, 0 }, { pipes[1][0], POLLIN, 0 }, { pipes[2][0], POLLIN, 0 } };
	return (void *)(long)poll(p, 3, -1);
}

static void *t_epoll(void *a)
{
	(void)a;
	pthread_setname_np(pthread_self(), "epoll");
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event e = { EPOLLIN, { 0 } };
	epoll_ctl(ep, EPOLL_CTL_ADD, pipes[0][0], &e);
	struct epoll_event out[16];
	return (void *)(long)epoll_wait(ep, out, 16, -1);
}

static void *t_nanosleep(void *a)
{
	(void)a;
	pthread_setname_np(pthread_self(), "nanosleep");
	struct timespec ts = { 3600, 250000000 };
	return (void *)(long)syscall(SYS_nanosleep, &ts, NULL);
}

static void *t_accept(void *a)
{
	(void)a;
	pthread_setname_np(pthread_self(), "accept");
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sin = { AF_INET, 0, { htonl(INADDR_LOOPBACK) }, { 0 } };
	bind(s, (struct sockaddr *)&sin, sizeof sin);
	listen(s, 1);
	return (void *)(long)syscall(SYS_accept, s, NULL, NULL);
}

static void *t_recvfrom(void *a)
{
	(void)a;
	pthread_setname_np(pthread_self(), "recvfrom");
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sin = { AF_INET, 0, { htonl(INADDR_LOOPBACK) }, { 0 } };
	bind(s, (struct sockaddr *)&sin, sizeof sin);
	char buf[512];
	return (void *)(long)recvfrom(s, buf, sizeof buf, 0, NULL, NULL);
}

static void *t_select(void *a)
{
	(void)a;
	pthread_setname_np(pthread_self(), "select");
	fd_set r;
	FD_ZERO(&r);
	FD_SET(pipes[1][0], &r);
	struct timeval tv = { 3600, 500 };
	return (void *)(long)select(pipes[1][0] + 1, &r, NULL, NULL, &tv);
}

int main(int argc, char **argv)
{
	fifo = argc > 1 ? argv[1] : "/nonexistent";
	for (int i = 0; i < 3; i++)
		if (pipe2(pipes[i], O_CLOEXEC) < 0)
			return 1;
	void *(*fns[])(void *) = { t_openat, t_poll, t_epoll, t_nanosleep, t_accept, t_recvfrom, t_select };
	pthread_t t;
	for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
		if (pthread_create(&t, NULL, fns[i], NULL))
			return 1;
	usleep(200000); /* the threads reach their calls */
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
