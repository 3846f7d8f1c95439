/* pcollect COMMAND: start the command so that it is sampled from its
 * first instruction, and its exit status as pcollect's. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd.h"
#include "pcollect.h"

/* stdout_to_stderr: the stream goes to our standard output, so the
 * command's own output must not: it goes to standard error instead. */
int pcollect_spawn(struct child *ch, char **argv, int stdout_to_stderr)
{
	int go[2], er[2];
	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(er, O_CLOEXEC) < 0)
		return -1;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(go[1]);
		close(er[0]);
		char b;
		/* Wait until the sampling events are open: then the command is
		 * sampled from its first instruction (enable_on_exec). */
		if (read(go[0], &b, 1) != 1)
			_exit(127);
		signal(SIGPIPE, SIG_DFL);
		if (stdout_to_stderr && dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
			_exit(126);
		execvp(argv[0], argv);
		int e = errno;
		if (write(er[1], &e, sizeof e) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(er[1]);
	ch->pid = pid;
	ch->go = go[1];
	ch->errp = er[0];
	return 0;
}

int pcollect_exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return SP_EXIT_ERROR;
}
