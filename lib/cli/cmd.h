/* cmd.h — what every command shares: the program name, error printing in
 * the one house format ("prog: FILE:LINE: what is wrong"), the options
 * several commands parse (-f, -O, --partial, counts), and the wrapper
 * that flushes and checks stdout after the command ran, so a full disk or an
 * I/O error never passes as success.  EPIPE (a reader such as `head` went
 * away) ends the command quietly with status 0.
 *
 * Exit status everywhere: 0 ok, 1 negative result (where a command has
 * one), 2 error or usage.
 *
 * This is the commands' layer of the library: unlike the rest of lib/ and
 * formats/, its functions print (to stderr, in the commands' name).
 */
#ifndef SP_CMD_H
#define SP_CMD_H

#include <getopt.h>
#include <stdio.h>

#include "format.h"
#include "util.h"

#define SP_EXIT_OK 0
#define SP_EXIT_NEGATIVE 1
#define SP_EXIT_ERROR 2

extern const char *sp_prog;

/* Runs fn(argc, argv) as the command `name` and returns the exit status. */
int sp_cmd_run(const char *name, int (*fn)(int, char **), int argc, char **argv);

void sp_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints an sp_err: "prog: WHERE: MSG" or "prog: MSG". */
void sp_error_e(const struct sp_err *e);
/* Usage error, to stderr: one line of reason (none when fmt is NULL:
 * getopt already said what was wrong), the synopsis's first line and a
 * hint to run --help; returns 2. */
int sp_usage_error(const char *synopsis, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* --version: "NAME (stackpipe) VERSION" on stdout; returns 0. */
#define SP_VERSION "0.2.0"
int sp_version(void);
/* The options every reading command shares (stackpipe(7)); getopt_long
 * values above 255 are the commands' own. */
#define SP_OPT_PARTIAL 1000
#define SP_LONGOPTS_COMMON { "version", no_argument, NULL, 'V' }, { "partial", no_argument, NULL, SP_OPT_PARTIAL }
/* -f VAL, an input format's name (format.h) into *out, else a usage error
 * (printed: "unknown format 'VAL' (known: ...MORE)") and -1. */
int sp_opt_format(const char *synopsis, const char *val, const char *more, const char **out);
/* The summary after reading: "N bad line(s) skipped" when o counted any. */
void sp_print_bad_lines(const struct sp_read_opts *o);
/* -O VAL: "folded", "stream" (or "binary"), and with pprof "pprof", into
 * *out; else a usage error (printed) and -1. */
int sp_opt_output(const char *synopsis, const char *val, int pprof, enum sp_output *out);
/* Parses a non-negative integer option value or prints an error. */
int sp_opt_uint(const char *opt, const char *val, unsigned long *out);
/* Warnings about bad input lines (an sp_read_opts.warn callback; ctx is a
 * struct sp_warnings, or NULL for one shared count): the first 100 are
 * printed, then one line saying more follow; quiet drops them.  Errors
 * that are not about a line are always printed. */
struct sp_warnings {
	int quiet;
	uint64_t shown;
};
void sp_print_warning(void *ctx, const struct sp_err *e);
/* -o FILE that never destroys what FILE held when the command fails.
 * The output goes to a temporary file in FILE's directory (so the final
 * rename is atomic), which sp_outfile_close(o, 1) renames over FILE with
 * FILE's old permissions (or 0666 & ~umask); sp_outfile_close(o, 0), or a
 * failed write, removes the temporary and leaves FILE as it was.  NULL or
 * "-" is standard output (sp_cmd_run checks it).  A path that is not a
 * regular file (/dev/null, a FIFO) or whose directory cannot take a
 * temporary file is written in place.  With SP_OUT_SIGNALS, SIGINT, SIGTERM
 * and SIGHUP remove the temporary before the command dies of them (for
 * commands that do not handle those signals themselves).  Errors are
 * printed (this is command plumbing); the functions return 0 or -1. */
#define SP_OUT_SIGNALS 1
#define SP_OUT_IN_PLACE 2 /* write FILE directly (a stream read while it grows) */
struct sp_outfile {
	FILE *f;          /* write here */
	const char *path; /* the user's name; NULL for standard output */
	char *tmp;        /* the temporary's name (owned), NULL when in place */
	char *target;     /* what the temporary replaces: path, or where its symlink points (owned) */
};
int sp_outfile_open(struct sp_outfile *o, const char *path, int flags);
/* Flushes and checks every write, then keeps (ok) or discards the output.
 * Returns -1 after printing "write error on FILE: ..." when ok and a write
 * failed (the temporary is removed then too). */
int sp_outfile_close(struct sp_outfile *o, int ok);
/* Prints a failure of writing to o: "write error on NAME: reason" when the
 * stream's error flag says the output failed, otherwise err as it is. */
void sp_outfile_error(const struct sp_outfile *o, const struct sp_err *err);

/* Refuses to write binary data to a terminal; returns -1 after an error. */
int sp_check_binary_stdout(FILE *out);

#endif
