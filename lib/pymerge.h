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
 * from the stack copy is read again from the live frame.
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
};

struct sp_pymerge;

struct sp_pymerge *sp_pymerge_new(struct sp_profile *p, enum sp_pymode mode, int lines);
void sp_pymerge_free(struct sp_pymerge *m); /* NULL ok */

/* The stack node of a sample of thread tid of process pid (serial: its
 * image, procmaps.h), whose native stack is node; truncated: the native
 * unwinding stopped early.  cs: the sample's stack copy, or NULL. */
uint32_t sp_pymerge_sample(struct sp_pymerge *m, int pid, uint64_t serial, const struct sp_maps *maps, int tid,
			   const struct sp_py_cstack *cs, uint32_t node, int truncated);

/* The merge rule on arrays: native frames nat[0..nn) (root first) and
 * Python frames py[0..npy) (innermost first, entry marks as python.h
 * gives them) into *out (root first; *out, *src and *cap grown as
 * needed).  src (may be NULL): (*src)[i] = the index in nat of out[i], -1
 * for a Python frame.  *disagree: the counts of eval frames and Python
 * groups differ.  Returns the number of frames in *out. */
size_t sp_pymerge_frames(struct sp_profile *p, enum sp_pymode mode, const uint32_t *nat, size_t nn,
			 const uint32_t *py, const uint8_t *entry, int npy, int truncated, uint32_t **out,
			 int32_t **src, size_t *cap, int *disagree);

/* The threading.Thread name of thread tid of process pid (python.h's
 * sp_python_thread_name), 0 when it has none. */
uint32_t sp_pymerge_thread_name(struct sp_pymerge *m, int pid, uint64_t serial, const struct sp_maps *maps, int tid);

/* The process exited: its reader goes. */
void sp_pymerge_exit(struct sp_pymerge *m, int pid);

/* The next queued message ("process 123: Python 3.9 is not supported
 * ..." or "process 123: Python 3.12.1"), NULL when none; valid until the
 * next call. */
const char *sp_pymerge_message(struct sp_pymerge *m);

const struct sp_pymerge_stats *sp_pymerge_stats(struct sp_pymerge *m);

#endif
