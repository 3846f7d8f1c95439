/* cmd.c — shared command plumbing. */
#include "cmd.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *sp_prog = "stackpipe";

/* Messages quote input (a bad line, a frame name): its control bytes are
 * written as \xNN so they cannot drive the terminal.  Newlines and tabs
 * are the messages' own. */
static void put_escaped(const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if ((c < 32 && c != '\n' && c != '\t') || c == 127)
			fprintf(stderr, "\\x%02x", c);
		else
			fputc(c, stderr);
	}
}

void sp_error(const char *fmt, ...)
{
	char small[1024], *msg = small;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(small, sizeof small, fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof small && (msg = malloc((size_t)n + 1))) {
		va_start(ap, fmt);
		vsnprintf(msg, (size_t)n + 1, fmt, ap);
		va_end(ap);
	} else if (!msg) {
		msg = small;
	}
	fflush(stdout);
	fprintf(stderr, "%s: ", sp_prog);
	put_escaped(msg);
	fputc('\n', stderr);
	if (msg != small)
		free(msg);
}

void sp_error_e(const struct sp_err *e)
{
	fprintf(stderr, "%s: ", sp_prog);
	if (e->where[0]) {
		put_escaped(e->where);
		fputs(": ", stderr);
	}
	put_escaped(e->msg);
	fputc('\n', stderr);
}

int sp_usage_error(const char *synopsis, const char *fmt, ...)
{
	va_list ap;
	if (fmt) {
		fprintf(stderr, "%s: ", sp_prog);
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fputc('\n', stderr);
	}
	const char *nl = strchr(synopsis, '\n');
	fprintf(stderr, "%.*s\nTry '%s --help' for more information.\n", nl ? (int)(nl - synopsis) : (int)strlen(synopsis),
		synopsis, sp_prog);
	return SP_EXIT_ERROR;
}

int sp_version(void)
{
	printf("%s (stackpipe) %s\n", sp_prog, SP_VERSION);
	return SP_EXIT_OK;
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

int sp_opt_format(const char *synopsis, const char *val, const char *more, const char **out)
{
	if (!sp_format_find(val)) {
		sp_usage_error(synopsis, "unknown format '%s' (known: %s%s)", val, sp_format_names(), more ? more : "");
		return -1;
	}
	*out = val;
	return 0;
}

void sp_print_bad_lines(const struct sp_read_opts *o)
{
	if (o->bad_lines)
		sp_error("%llu bad line%s skipped", (unsigned long long)o->bad_lines, o->bad_lines == 1 ? "" : "s");
}

int sp_opt_output(const char *synopsis, const char *val, int pprof, enum sp_output *out)
{
	enum sp_output k = pprof && !strcmp(val, "pprof") ? SP_OUT_PPROF : sp_opt_encoding(val);
	if (k == SP_OUT_AUTO) {
		sp_usage_error(synopsis, "-O: output format is folded%s stream%s, not '%s'", pprof ? "," : " or",
			       pprof ? " or pprof" : "", val);
		return -1;
	}
	*out = k;
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

/* The temporary that a deadly signal must remove (one -o per command). */
static char *volatile sig_tmp;

static void on_deadly(int sig)
{
	char *t = sig_tmp;
	if (t)
		unlink(t);
	signal(sig, SIG_DFL);
	raise(sig);
}

int sp_outfile_open(struct sp_outfile *o, const char *path, int flags)
{
	memset(o, 0, sizeof *o);
	if (!path || !strcmp(path, "-")) {
		o->f = stdout;
		return 0;
	}
	o->path = path;
	struct stat st;
	int exists = stat(path, &st) == 0;
	if (!(flags & SP_OUT_IN_PLACE) && (!exists || S_ISREG(st.st_mode))) {
		/* The temporary goes beside the real file (a symlink is kept). */
		char *real = exists ? realpath(path, NULL) : NULL;
		char *copy = strdup(real ? real : path);
		const char *dir = copy ? dirname(copy) : NULL;
		const char *base = real ? strrchr(real, '/') + 1 : path;
		if (!real && strrchr(path, '/'))
			base = strrchr(path, '/') + 1;
		char *tmp = NULL;
		if (dir && asprintf(&tmp, "%s/.%s.XXXXXX", dir, base) < 0)
			tmp = NULL;
		free(copy);
		int fd = tmp ? mkostemp(tmp, O_CLOEXEC) : -1;
		if (fd >= 0) {
			mode_t mode;
			if (exists) {
				mode = st.st_mode & 07777;
			} else {
				mode_t mask = umask(0);
				umask(mask);
				mode = 0666 & ~mask;
			}
			if (fchmod(fd, mode) == 0 && (o->f = fdopen(fd, "w"))) {
				o->tmp = tmp;
				o->target = real ? real : strdup(path);
				if (flags & SP_OUT_SIGNALS) {
					sig_tmp = tmp;
					int sigs[] = { SIGINT, SIGTERM, SIGHUP };
					for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
						signal(sigs[i], on_deadly);
				}
				return 0;
			}
			close(fd);
			unlink(tmp);
		}
		free(real);
		free(tmp);
		/* No temporary possible (a read-only directory): in place. */
	}
	if (!(o->f = fopen(path, "w"))) {
		sp_error("%s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

int sp_outfile_close(struct sp_outfile *o, int ok)
{
	if (!o->f || o->f == stdout) {
		o->f = NULL;
		return 0;
	}
	int rc = 0;
	errno = 0;
	int bad = fflush(o->f) != 0 || ferror(o->f);
	int e = errno;
	if (fclose(o->f) != 0 && !bad) {
		bad = 1;
		e = errno;
	}
	o->f = NULL;
	if (ok && bad) {
		sp_error("write error on %s: %s", o->path, e ? strerror(e) : "an earlier write failed");
		ok = 0;
		rc = -1;
	}
	if (o->tmp) {
		if (ok && (!o->target || rename(o->tmp, o->target) != 0)) {
			sp_error("cannot rename the output to %s: %s (it is in %s)", o->path, strerror(errno), o->tmp);
			rc = -1;
		} else if (!ok) {
			unlink(o->tmp);
		}
		if (sig_tmp == o->tmp)
			sig_tmp = NULL;
		free(o->tmp);
		free(o->target);
		o->tmp = o->target = NULL;
	}
	return rc;
}

void sp_outfile_error(const struct sp_outfile *o, const struct sp_err *err)
{
	if (o->f && ferror(o->f)) {
		const char *why = strstr(err->msg, "write error: ");
		sp_error("write error on %s%s%s", o->path ? o->path : "standard output", why ? ": " : "",
			 why ? why + 13 : "");
	} else {
		sp_error_e(err);
	}
}

int sp_cmd_run(const char *name, int (*fn)(int, char **), int argc, char **argv)
{
	sp_prog = name;
	if (argc > 0) /* getopt's messages name the command as ours do */
		argv[0] = (char *)name;
	static char obuf[1 << 16];
	setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
	int rc = fn(argc, argv);
	/* Check that everything written to stdout really got out. */
	struct sp_err e;
	errno = 0;
	if (fflush(stdout) != 0 || ferror(stdout)) {
		sp_err_write(&e, errno);
		if (sp_err_is_closed_pipe(&e))
			return rc;
		/* A command that failed has said why (its write error included). */
		if (rc != SP_EXIT_OK)
			return rc;
		if (e.errnum)
			sp_error("write error on standard output: %s", strerror(e.errnum));
		else
			sp_error("write error on standard output");
		return SP_EXIT_ERROR;
	}
	if (fclose(stdout) != 0 && errno != EBADF) {
		sp_err_write(&e, errno);
		if (!sp_err_is_closed_pipe(&e)) {
			sp_error("write error on standard output: %s", strerror(e.errnum));
			return SP_EXIT_ERROR;
		}
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
