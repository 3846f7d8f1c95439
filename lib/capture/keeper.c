/* keeper.c — the keeper process of keeper.h. */
#include "keeper.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>


struct msg {
	char file[96];
	char line[128];
};

/* Every fd but keep closed (close_range where the kernel has it). */
static void close_others(int keep)
{
#ifdef SYS_close_range
	if ((keep == 0 || syscall(SYS_close_range, 0u, (unsigned)keep - 1, 0u) == 0) &&
	    syscall(SYS_close_range, (unsigned)keep + 1, ~0u, 0u) == 0)
		return;
#endif
	struct rlimit rl;
	long max = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (1u << 20) ? (long)rl.rlim_cur : 1 << 20;
	for (long fd = 0; fd < max; fd++)
		if (fd != keep)
			close((int)fd);
}

/* The child: only system calls (the parent has threads: no malloc, no
 * stdio after fork). */
static void keeper_main(int sock, long hold_ms)
{
	/* it ends when its parent's socket does, not on a terminal's signal */
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_IGN;
	for (int s = 1; s < 32; s++)
		if (s != SIGKILL && s != SIGSTOP && s != SIGCHLD)
			sigaction(s, &sa, NULL);
	setsid();
	prctl(PR_SET_NAME, "pcollect-keep"); /* ps tells it from pcollect */
	close_others(sock);
	static int fds[SP_KEEPER_MAX];
	static struct msg m[SP_KEEPER_MAX];
	int n = 0;
	for (;;) {
		struct msg cur;
		char cbuf[CMSG_SPACE(sizeof(int))];
		struct iovec iov = { &cur, sizeof cur };
		struct msghdr h;
		memset(&h, 0, sizeof h);
		h.msg_iov = &iov;
		h.msg_iovlen = 1;
		h.msg_control = cbuf;
		h.msg_controllen = sizeof cbuf;
		ssize_t r = recvmsg(sock, &h, MSG_WAITALL);
		if (r < 0 && errno == EINTR)
			continue;
		if (r != (ssize_t)sizeof cur)
			break; /* the parent exited (or closed its end) */
		int fd = -1;
		struct cmsghdr *c = CMSG_FIRSTHDR(&h);
		if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
			memcpy(&fd, CMSG_DATA(c), sizeof fd);
		if (n == SP_KEEPER_MAX) { /* not given by sp_keeper_give */
			if (fd >= 0)
				close(fd);
			continue;
		}
		cur.file[sizeof cur.file - 1] = cur.line[sizeof cur.line - 1] = 0;
		fds[n] = fd;
		m[n++] = cur;
	}
	if (hold_ms > 0) {
		struct timespec t = { hold_ms / 1000, (hold_ms % 1000) * 1000000L };
		while (nanosleep(&t, &t) < 0 && errno == EINTR)
			;
	}
	/* the grace periods, then the definitions (no longer in use) */
	for (int i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	for (int i = 0; i < n; i++) {
		if (!m[i].file[0] || !m[i].line[0])
			continue;
		int fd = open(m[i].file, O_WRONLY | O_APPEND | O_CLOEXEC);
		if (fd >= 0) {
			if (write(fd, m[i].line, strlen(m[i].line)) < 0) {
				/* in use still (another tracer's event): a later
				 * pcollect's sweep removes it */
			}
			close(fd);
		}
	}
	_exit(0);
}

pid_t sp_keeper_start(int *sock)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -1;
	/* Not this process's child but its grandchild: a child alive keeps
	 * waitpid(-1) from saying ECHILD, and the holder of new threads waits
	 * for its threads until it does (hold.c: 3 s at a 500-thread stop). */
	const char *hold = getenv("SP_KEEPER_HOLD_MS");
	long hold_ms = hold ? atol(hold) : 0;
	pid_t mid = fork();
	if (mid == 0) {
		if (fork() == 0) {
			pid_t me = getpid();
			if (write(sv[1], &me, sizeof me) == (ssize_t)sizeof me)
				keeper_main(sv[1], hold_ms);
		}
		_exit(0);
	}
	close(sv[1]);
	if (mid < 0) {
		close(sv[0]);
		return -1;
	}
	/* reaped here, or by the holder's waitpid(-1) (hold.c) first */
	while (waitpid(mid, NULL, 0) < 0 && errno == EINTR)
		;
	pid_t pid = -1;
	ssize_t r;
	while ((r = read(sv[0], &pid, sizeof pid)) < 0 && errno == EINTR)
		;
	if (r != (ssize_t)sizeof pid || pid <= 0) {
		close(sv[0]);
		return -1;
	}
	*sock = sv[0];
	return pid;
}

int sp_keeper_give(int sock, int fd, const char *file, const char *line)
{
	struct msg cur;
	memset(&cur, 0, sizeof cur);
	if (strlen(file) >= sizeof cur.file || strlen(line) >= sizeof cur.line) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(cur.file, file, strlen(file));
	memcpy(cur.line, line, strlen(line));
	char cbuf[CMSG_SPACE(sizeof(int))];
	memset(cbuf, 0, sizeof cbuf);
	struct iovec iov = { &cur, sizeof cur };
	struct msghdr h;
	memset(&h, 0, sizeof h);
	h.msg_iov = &iov;
	h.msg_iovlen = 1;
	if (fd >= 0) {
		h.msg_control = cbuf;
		h.msg_controllen = sizeof cbuf;
		struct cmsghdr *c = CMSG_FIRSTHDR(&h);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof fd);
	}
	ssize_t r;
	while ((r = sendmsg(sock, &h, MSG_NOSIGNAL)) < 0 && errno == EINTR)
		;
	return r == (ssize_t)sizeof cur ? 0 : -1;
}
