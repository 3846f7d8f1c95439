/* collect.h — the sampling engine: raw samples (a kernel callchain, a user
 * callchain or user registers plus a copy of the user stack) and the
 * side-band records of a run (COMM, MMAP/MMAP2, FORK, EXIT) in, profile
 * samples out into a sink.  It keeps the table of threads (names, the -t
 * filter), the address space of each process (procmaps.h), one unwinder
 * per process (unwind.h) and a cache of whole stacks, so that a repeated
 * stack costs one hash and no unwinding of its frames' names.
 *
 * Its input is perf_events.h's struct sp_perf_handler: sp_collect_handler fills
 * the callbacks, and whoever produces records calls them — pcollect's live
 * perf_event rings (perf_events.h), or a reader of recorded perf.data.  Records
 * must come in time order per process (a thread's MMAP2 before its later
 * samples), as both sources deliver them.
 *
 * Two modes (sp_collect_opts.offline):
 *  - live (pcollect): the processes are running; thread names missing from
 *    the records are read from /proc, a binary replaced on disk since it
 *    was mapped is opened through /proc/PID/map_files.
 *  - offline (a recording): nothing is read from /proc.  Maps come only
 *    from MMAP/MMAP2 records, memory only from each sample's stack copy,
 *    binaries are opened from disk by path.  Which file stands for a
 *    mapping is the caller's call (opts.locate: e.g. a build-id check, or
 *    perf's build-id cache); by default a path is used when its device and
 *    inode match the record's (or the record has none), and the vdso is
 *    this machine's (the same image for the same kernel).  A mapping whose
 *    file is refused gets frames named "[unknown]" with the mapping's path
 *    as module, as perf names them.
 *
 * Samples carry two values, values[0] = 1 (a count) and values[1] = the
 * sample's period: give the profile two value columns ("samples",
 * "period", sp_profile_set_values) before the first sample.
 *
 * Ownership: the engine borrows the profile and the sink (both must
 * outlive it); it owns its symbol tables, maps, unwinders and caches.
 * Frame, node, string and thread ids it produces live in the profile.
 * The library never prints: problems are counted (sp_collect_stats) and a
 * sink error is kept for sp_collect_error.
 */
#ifndef SP_COLLECT_H
#define SP_COLLECT_H

#include <stdint.h>

#include "perf_records.h"
#include "procmaps.h"
#include "pymerge.h"
#include "profile.h"
#include "symbols.h"
#include "util.h"

struct sp_collect_opts {
	enum sp_callgraph callgraph; /* what the samples carry */
	int lines;                   /* file:line on frames */
	int no_inline;               /* no inlined-function frames */
	const char *threads;         /* keep only threads whose name matches this
				      * extended regex; NULL keeps all */
	const char *event;           /* event name of the samples ("cpu-clock" if NULL) */
	int offline;                 /* see above: no /proc, no live memory */
	int no_kallsyms;             /* do not name kernel frames from this machine's
				      * /proc/kallsyms (a recording of another kernel):
				      * they become "[kernel.kallsyms]" */
	/* Offline: the file to open for mapping m of process pid (m->path is
	 * the recorded path, "[vdso]" for the vdso).  Write a NUL-terminated path
	 * into buf (size n) and return 1 to use it, return 2 (for "[vdso]") to
	 * use this machine's vdso, or return 0 to refuse the
	 * mapping (its frames are named "[unknown]").  NULL: the default rule
	 * above.  Called once per distinct file. */
	int (*locate)(void *ctx, int pid, const struct sp_map *m, char *buf, size_t n);
	void *locate_ctx;
	/* Live only: Python frames of CPython processes (pymerge.h), and
	 * whether they carry line numbers. */
	enum sp_pymode python;
	int python_lines;
	int python_full_filenames; /* Python file names not relative to sys.path */
	/* Live only: the records are those of every process of the machine
	 * (sp_perfev_add_cpus).  A process that was running before them is
	 * read from /proc/PID/maps by sp_collect_load_all, or else when it is
	 * first sampled with a user stack; one that is gone by then is
	 * counted in stats.unresolved, its frames "[unknown]".  The idle
	 * task (pid 0) is named "swapper", as perf names it. */
	int system_wide;
};

struct sp_collect_stats {
	uint64_t samples;        /* written to the sink */
	uint64_t filtered;       /* dropped by the thread filter */
	uint64_t truncated;      /* unwinding stopped before the outermost frame */
	uint64_t no_user;        /* dwarf samples with neither user registers nor
				  * kernel frames (kernel threads): dropped */
	uint64_t unwound_frames; /* user addresses of the written samples */
	uint64_t threads;        /* threads seen */
	uint64_t kept_threads;   /* of which the thread filter kept (last name) */
	uint64_t processes;
	uint64_t stacks;         /* distinct stacks (the cache's entries) */
	/* opts.system_wide: processes whose maps /proc could not give (gone
	 * before their first sample was read), and their samples */
	uint64_t unresolved, unresolved_samples;
	uint64_t maps_read;      /* processes whose maps were read from /proc */
	uint64_t maps_reread;    /* ... read again: a sampled address was in none */
	uint64_t go_switches;    /* Go stacks continued past the switch to the
				  * system stack by the kernel's frame-pointer chain */
};

struct sp_collect;

/* A new engine writing samples of profile p into sink.  Returns NULL with
 * err set when an option is wrong (the -t regex: err says why). */
struct sp_collect *sp_collect_new(struct sp_profile *p, struct sp_sink *sink, const struct sp_collect_opts *o,
				  struct sp_err *err);
void sp_collect_free(struct sp_collect *c); /* NULL ok */

/* Fill out's callbacks (and ctx) so that records go into c. */
void sp_collect_handler(struct sp_collect *c, struct sp_perf_handler *out);

/* The event name id (a string of the profile) of the samples from now on:
 * a recording with several events sets it before each sample. */
void sp_collect_set_event(struct sp_collect *c, uint32_t event);

/* Live only.  A thread found while attaching (or seen in a sample before
 * any record named it): its name is read from /proc. */
void sp_collect_add_task(struct sp_collect *c, int pid, int tid);
/* Exact Python samples copy the stopped thread's stack themselves: fix
 * (lib/engine/trace_events.h's sp_tracer_fix_stack) puts back into that copy the return
 * addresses that return probes replaced with their trampoline, as it does
 * for the kernel's copies; returns 1 when buf (64 KiB) holds the fixed
 * copy, 0 when there was nothing to fix, and sets *tramp to the address of
 * the trampoline (0 unknown): an unwind of the stop's copy that meets it
 * takes the sample's own copy instead. */
void sp_collect_set_stack_fix(struct sp_collect *c,
			      int (*fix)(void *ctx, int tid, uint64_t sp, const uint8_t *stack, uint64_t len,
					 uint8_t *buf, uint64_t *tramp),
			      void *ctx);
/* Live only.  The executable mappings of process pid from /proc/TID/maps
 * (tid: a live thread of pid).  Returns 0, or -1 with err set. */
int sp_collect_load_maps(struct sp_collect *c, int pid, int tid, struct sp_err *err);

/* Live, opts.system_wide: read the maps of every process now, as perf
 * record -a does when it starts (after the events are enabled: what is
 * mapped later arrives as records), so that a process that exits soon
 * after is still named.  One that this misses is read at its first
 * sample.  Returns the number of processes read. */
int sp_collect_load_all(struct sp_collect *c);

/* Read /proc/kallsyms now rather than at the first kernel frame (it takes
 * the kernel ~0.1 s to print it: not in the midst of sampling). */
void sp_collect_load_kernel(struct sp_collect *c);
/* Kernel symbols from a copy of /proc/kallsyms: sp_symbols_kernel_file. */
void sp_collect_kernel_file(struct sp_collect *c, const char *path, const char *ref, uint64_t ref_addr);
/* Kernel code named by a KSYMBOL record: sp_symbols_kernel_add. */
void sp_collect_kernel_symbol(struct sp_collect *c, uint64_t addr, uint64_t len, const char *name);
/* Non-zero when kernel addresses were hidden (kernel.kptr_restrict). */
int sp_collect_kernel_hidden(const struct sp_collect *c);

/* The engine's symbol tables (owned by c): a reader naming frames its own
 * way reads the same files through them (sp_symbols_file_module). */
struct sp_symbols *sp_collect_symbols(struct sp_collect *c);
/* The profile's thread id of (pid, tid) now, for trace events that go with
 * the samples: a thread not seen yet is added (live: named from /proc).
 * 0 when the thread filter drops it. */
uint32_t sp_collect_thread_id(struct sp_collect *c, int pid, int tid);
/* Live only.  Re-read the name of a running thread from /proc (a thread
 * named before its exec, with no COMM record to follow: no sampling). */
void sp_collect_refresh_task(struct sp_collect *c, int pid, int tid);

const struct sp_collect_stats *sp_collect_stats(struct sp_collect *c);
/* Thread i (0 .. stats.threads-1, in the order first seen): its current
 * name (owned by the profile) and whether the thread filter keeps it;
 * NULL past the end. */
const char *sp_collect_thread(const struct sp_collect *c, size_t i, int *kept);

/* The Python step (NULL when opts.python is off or offline), for its
 * messages and stats. */
struct sp_pymerge *sp_collect_python(struct sp_collect *c);

/* Non-zero once the sink failed (the samples after it are dropped, and
 * the caller should stop); *err (may be NULL) gets the sink's error. */
int sp_collect_error(const struct sp_collect *c, struct sp_err *err);

#endif
