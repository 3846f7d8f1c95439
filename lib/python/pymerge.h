/* pymerge.h — Python frames merged into native stacks (the sampling
 * engine's Python step; python.h reads the frames).
 *
 * The merge rule: the Python frames of a thread fall into groups, one per
 * C-level call of the eval loop (python.h's entry marks); each native
 * _PyEval_EvalFrameDefault frame (with the frames inlined into it at the
 * same address) is replaced by its group, the k-th eval frame from the
 * root by the k-th group from the root.  When the counts disagree (the
 * Python frames were read after the sample, and the thread moved on), the
 * sample is counted in stats.disagree and merged as well as it can be:
 * from the root, groups without an eval frame dropped (never put under
 * native frames the sample does not show), eval frames without a group
 * kept as they are; a truncated native stack is matched from the leaf
 * instead, the outer groups standing in for the frames the stack copy did
 * not reach.  A thread asleep in the interpreter's take_gil (waiting for
 * the GIL) gets the leaf "[gil wait]" (kind synthetic) in place of
 * take_gil and what is under it.  On 3.11/3.12 a sample whose groups disagree with the frame
 * from the stack copy is read again from the live frame.  A non-blocking
 * sample's frames are then checked against the sample's own registers
 * and stack copy (python.h's anchors): merged at the innermost frame the
 * sample saw, or its innermost group marked "[python frame changed]"
 * when it saw none of them (counted in stats).
 *
 * Per process: CPython is looked for when the process is first sampled,
 * again when its executable mappings change (a libpython loaded later)
 * and after exec.  A process whose CPython cannot be read keeps its
 * native frames; the reason is queued for the caller to print once
 * (sp_pymerge_message).
 *
 * Ownership: borrows the profile; owns the readers and its caches.  Never
 * prints.
 */
#ifndef SP_PYMERGE_H
#define SP_PYMERGE_H

#include <stddef.h>
#include <stdint.h>

#include "procmaps.h"
#include "profile.h"
#include "pystop.h"
#include "python.h"

enum sp_pymode {
	SP_PY_OFF = 0,
	SP_PY_MERGED, /* Python frames in place of the eval loop's native frames */
	SP_PY_ONLY,   /* Python frames alone (native stack kept when there are none) */
};

struct sp_pymerge_stats {
	uint64_t samples;   /* samples of Python threads merged */
	uint64_t disagree;  /* of which eval-frame and group counts differed */
	uint64_t failed;    /* Python frames unreadable (the thread moved or died) */
	uint64_t processes; /* Python processes seen */
	uint64_t from_cstack;
	/* non-blocking samples checked against what the sample saw
	 * (sp_pymerge_sample) */
	uint64_t seen;      /* the innermost frame read is the sample's */
	uint64_t trimmed;   /* merged at an outer frame the sample saw */
	uint64_t changed;   /* no frame read is the sample's: marked
			     * "[python frame changed]" */
	uint64_t recovered; /* of which the sample's own innermost frame was
			     * named from its next instruction (under the mark) */
	uint64_t unchecked; /* no eval frame in the stack copy, or no anchor */
	/* exact mode (sp_pymerge_set_exact) */
	uint64_t exact;     /* samples taken from the stopped thread */
	uint64_t exact_disagree; /* of which the counts differed (a truncated stack) */
	uint64_t moved;     /* threads found off the CPU, or gone, at their stop:
			     * merged non-blocking from the sample's own copy */
	uint64_t delay_ns;  /* total time from the kernel's samples to the stops */
	/* early reads (sp_pymerge_early) */
	uint64_t early;        /* samples whose frames were taken early */
	uint64_t early_ns;     /* total time from the kernel's samples to those reads */
	uint64_t early_max_ns; /* the longest */
	uint64_t from_early;   /* samples merged with frames taken early */
	uint64_t early_busy;   /* not taken early: the readers were busy (read when handled) */
	uint64_t unmerged;     /* samples with eval-loop frames but no Python frames
				* to put there (the thread had exited, or its frames
				* could not be read): they keep _PyEval_EvalFrameDefault */
	uint64_t unmerged_failed; /* of which the frames could not be read */
};

struct sp_pymerge;

/* full_filenames: Python file names as the interpreter has them, not
 * relative to sys.path (python.h). */
struct sp_pymerge *sp_pymerge_new(struct sp_profile *p, enum sp_pymode mode, int lines, int full_filenames);
void sp_pymerge_free(struct sp_pymerge *m); /* NULL ok */

/* The stack node of a sample of thread tid of process pid (serial: its
 * image, procmaps.h), whose native stack is node; truncated: the native
 * unwinding stopped early.  cs: the sample's stack copy, or NULL. */
uint32_t sp_pymerge_sample(struct sp_pymerge *m, int pid, uint64_t serial, const struct sp_maps *maps, int tid,
			   const struct sp_py_cstack *cs, uint32_t node, int truncated);

/* As soon as a read of the kernel's records has them (perf_records.h's
 * early), before any is handled: the raw Python frames of the sample of
 * thread tid of process pid taken at time (cs: its stack copy, without
 * eval_end) are taken now, and sp_pymerge_sample of that sample (cs->time
 * = time) names and merges them instead of reading them then, many
 * milliseconds later when samples come in bursts (a short thread may be
 * gone by then).  Only processes already known as Python. */
void sp_pymerge_early(struct sp_pymerge *m, int pid, int tid, uint64_t time, const struct sp_py_cstack *cs);

/* The merge rule on arrays: native frames nat[0..nn) (root first) and
 * Python frames py[0..npy) (innermost first, entry marks as python.h
 * gives them) into *out (root first; *out, *src and *cap grown as
 * needed).  src (may be NULL): (*src)[i] = the index in nat of out[i], or
 * -2 - j for the Python frame py[j].  *disagree: 0 when the counts of eval frames and
 * Python groups agree, 1 when they differ, 2 when they differ on a native
 * stack cut short (its outer eval frames are missing, not wrong).  Returns the number of frames in *out. */
size_t sp_pymerge_frames(struct sp_profile *p, enum sp_pymode mode, const uint32_t *nat, size_t nn,
			 const uint32_t *py, const uint8_t *entry, int npy, int truncated, uint32_t **out,
			 int32_t **src, size_t *cap, int *disagree);

/* Exact samples (pystop.h): each sample of a thread of a Python process
 * stops the thread, copies its registers and stack and reads its Python
 * frames, then resumes it; stack_max: bytes of stack to copy.  why: NULL
 * when exact, else the reason it is not, said once per Python process. */
void sp_pymerge_set_exact(struct sp_pymerge *m, int exact, size_t stack_max, const char *why);
/* Exact mode: the stopper, NULL otherwise (for its poll and waitpid). */
struct sp_pystop *sp_pymerge_stopper(struct sp_pymerge *m);

/* Exact mode, for a sample (taken at time, CLOCK_MONOTONIC ns) of thread
 * tid of process pid: 1 when the thread was stopped, copied into *out
 * (valid until the next call) and resumed, its Python frames read while
 * it was stopped; the caller unwinds out and passes the node to
 * sp_pymerge_stopped.  0: take the sample's own stack to
 * sp_pymerge_sample (not a Python process, or the thread left the CPU or
 * exited since the sample, or ptrace was refused: a message says why). */
int sp_pymerge_stop(struct sp_pymerge *m, int pid, uint64_t serial, const struct sp_maps *maps, int tid,
		    uint64_t time, struct sp_pystop_copy *out);
uint32_t sp_pymerge_stopped(struct sp_pymerge *m, uint32_t node, int truncated);

/* The threading.Thread name of thread tid of process pid (python.h's
 * sp_python_thread_name), 0 when it has none. */
uint32_t sp_pymerge_thread_name(struct sp_pymerge *m, int pid, uint64_t serial, const struct sp_maps *maps, int tid);

/* The process exited or exec'd: its reader goes (exact mode: its
 * threads are let go). */
void sp_pymerge_exit(struct sp_pymerge *m, int pid);

/* The next queued message ("process 123: Python 3.9 is not supported
 * ..." or "process 123: Python 3.12.1"), NULL when none; valid until the
 * next call. */
const char *sp_pymerge_message(struct sp_pymerge *m);

const struct sp_pymerge_stats *sp_pymerge_stats(struct sp_pymerge *m);

#endif
