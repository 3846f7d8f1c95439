/* pcollect.h — the parts of the pcollect command (cmd/pcollect.c and the
 * files of cmd/pcollect/), not a library header. */
#ifndef SP_CMD_PCOLLECT_H
#define SP_CMD_PCOLLECT_H

#include <stdint.h>
#include <sys/types.h>

#include "collect.h"
#include "perfev.h"
#include "stream.h"

struct opts {
	int pid;
	unsigned freq;
	double duration;
	const char *output;
	const char *threads;
	enum sp_callgraph cg;
	unsigned stack_bytes;
	int lines, no_inline, no_kernel, quiet, verbose, no_rename;
	unsigned long buffer_mib;
	enum sp_pymode python; /* --python */
	int python_nolines;    /* --python-lines=no */
};

struct coll {
	struct opts o;
	struct sp_profile *p;
	struct sp_sink *sink;
	struct sp_stream_writer *w;
	struct sp_collect *eng;
	struct sp_perfev *ev;
	int tid;          /* -p TID: that thread only (o.pid is its process) */
	uint64_t cpu0_ns; /* the target's CPU time when sampling started */
	int write_failed;
	struct sp_err werr;
};

/* target.c: -p's process or thread.  check: it exists and is not a
 * zombie; a thread id sets c->tid and o.pid to its process (0, or -1 after
 * an error message).  gone: it exited.  explain_empty: why no sample. */
int pcollect_check_target(struct coll *c);
int pcollect_target_gone(const struct coll *c);
void pcollect_explain_empty(struct coll *c, double seconds);

/* launch.c: COMMAND started, waiting for one byte on go before its exec. */
struct child {
	pid_t pid;
	int go;   /* write end: one byte lets the child exec */
	int errp; /* read end: the child's errno if exec failed, EOF if it worked */
};

/* stdout_to_stderr: the stream goes to our standard output, so the
 * command's own output goes to standard error. */
int pcollect_spawn(struct child *ch, char **argv, int stdout_to_stderr);
/* pcollect's exit status for the command's wait status. */
int pcollect_exit_code(int status);

/* The value of -p: a process or thread id, or -1 when it is not one (the
 * caller says so once, as a usage error). */
int pcollect_pid(const char *s);

/* python.c: print the Python step's messages (not with -q); its counts
 * as stream metadata at the end; with -v, its summary line. */
void pcollect_python_messages(struct coll *c);
void pcollect_python_meta(struct coll *c);
void pcollect_python_summary(struct coll *c);

/* pcollect --snapshot with pcollect's argv; returns the exit status. */
int pcollect_snapshot(int argc, char **argv);

#endif
