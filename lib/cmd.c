/* cmd.c — shared command plumbing. */
#include "cmd.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

const char *sp_prog = "stackpipe";

void sp_error(const char *fmt, ...)
{
	va_list ap;
	fflush(stdout);
	fprintf(stderr, "%s: ", sp_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void sp_error_e(const struct sp_err *e)
{
	if (e->where[0])
		fprintf(stderr, "%s: %s: %s\n", sp_prog, e->where, e->msg);
	else
		fprintf(stderr, "%s: %s\n", sp_prog, e->msg);
}

int sp_usage_error(const char *synopsis, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s: ", sp_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n%s", synopsis);
	return SP_EXIT_ERROR;
}

int sp_opt_uint(const char *opt, const char *val, unsigned long *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(val, &end, 10);
	if (errno || end == val || *end || val[0] == '-') {
		sp_error("%s: not a non-negative integer: '%s'", opt, val);
		return -1;
	}
	*out = v;
	return 0;
}

int sp_check_binary_stdout(FILE *out)
{
	if (out == stdout && isatty(STDOUT_FILENO)) {
		sp_error("refusing to write the binary stream to a terminal; pipe it into another "
			 "command (| pfold) or use -o FILE");
		return -1;
	}
	return 0;
}

int sp_cmd_run(const char *name, int (*fn)(int, char **), int argc, char **argv)
{
	sp_prog = name;
	static char obuf[1 << 16];
	setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
	int rc = fn(argc, argv);
	/* Check that everything written to stdout really got out. */
	errno = 0;
	if (fflush(stdout) != 0 || ferror(stdout)) {
		if (errno == EPIPE)
			return rc;
		sp_error("write error on standard output: %s", errno ? strerror(errno) : "unknown error");
		return SP_EXIT_ERROR;
	}
	if (fclose(stdout) != 0 && errno != EPIPE && errno != EBADF) {
		sp_error("write error on standard output: %s", strerror(errno));
		return SP_EXIT_ERROR;
	}
	return rc;
}

void sp_print_warning(void *ctx, const struct sp_err *e)
{
	static struct sp_warnings shared;
	struct sp_warnings *w = ctx ? ctx : &shared;
	if (e->where[0] && w->quiet)
		return;
	if (e->where[0] && ++w->shown > 100) {
		if (w->shown == 101)
			sp_error("more bad lines follow; not printing them (see the summary)");
		return;
	}
	sp_error_e(e);
}
