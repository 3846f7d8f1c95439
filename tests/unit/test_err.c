/* test_err.c — errno carried in sp_err (util.h): set by sp_err_sys and
 * sp_err_write, cleared by sp_err_set, and set by the stream writer when
 * its reader has gone (a pipe whose read end is closed), which
 * sp_err_is_closed_pipe recognises. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "stream.h"
#include "unit.h"
#include "util.h"

int main(void)
{
	struct sp_err e;
	sp_err_write(&e, EPIPE);
	CHECK(sp_err_is_closed_pipe(&e) && e.errnum == EPIPE, "sp_err_write(EPIPE): a closed pipe");
	CHECK(!strcmp(e.msg, "write error: Broken pipe"), "its message: write error: REASON (%s)", e.msg);
	sp_err_set(&e, "something else");
	CHECK(!sp_err_is_closed_pipe(&e) && e.errnum == 0, "sp_err_set clears errnum");
	sp_err_write(&e, ENOSPC);
	CHECK(!sp_err_is_closed_pipe(&e) && e.errnum == ENOSPC, "ENOSPC: a write error, not a closed pipe");
	sp_err_at(&e, "f", 3, "bad");
	CHECK(e.errnum == 0 && !strcmp(e.where, "f:3"), "sp_err_at clears errnum");
	sp_err_sys(&e, EPIPE, "%s", "x");
	CHECK(sp_err_is_closed_pipe(&e) && !strcmp(e.msg, "x"), "sp_err_sys: the message as given, errnum set");
	CHECK(!sp_err_is_closed_pipe(NULL), "NULL: not a closed pipe");

	/* The stream writer into a pipe nobody reads. */
	signal(SIGPIPE, SIG_IGN);
	int fd[2];
	CHECK(pipe(fd) == 0, "a pipe");
	close(fd[0]);
	FILE *f = fdopen(fd[1], "w");
	struct sp_profile *p = sp_profile_new();
	struct sp_stream_writer *w = sp_stream_writer_new(f, p);
	sp_meta_add(p, "source", "test_err");
	memset(&e, 0, sizeof e);
	int rc = sp_stream_writer_finish(w, &e);
	CHECK(rc < 0 && sp_err_is_closed_pipe(&e), "the stream writer on a closed pipe: a closed pipe (%s)", e.msg);
	CHECK(!strcmp(e.msg, "write error: Broken pipe"), "its message unchanged (%s)", e.msg);
	sp_stream_writer_free(w);
	sp_profile_free(p);
	fclose(f);
	return failed;
}
