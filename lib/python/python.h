/* python.h — the Python frames of an unmodified, running CPython, read
 * from outside with process_vm_readv: nothing is loaded into the target
 * and it is never stopped here (a caller that wants exact stacks stops the
 * thread itself).
 *
 * Detection looks at the executable mappings of the process (procmaps.h):
 * a libpython3.X, or an executable named python* with the interpreter
 * linked in (Debian's /usr/bin/python3).  The version comes from the
 * exported Py_Version (3.11+), else from the file name.  Supported: 3.8
 * to 3.13, from offset tables per minor version checked at run time
 * (3.13: against the interpreter's own _Py_DebugOffsets; all: the thread
 * list must hold together: each thread state points back at its
 * interpreter and names a thread of the process).  Anything else is
 * refused with one sentence, and the caller keeps its native frames.
 *
 * Frames are interned into the caller's profile: kind SP_KIND_PYTHON,
 * name = the code object's co_qualname (co_name before 3.11), file = co_filename
 * (relative to its sys.path entry, sp_python_set_full_filenames), line from the
 * PEP 626 location table (0 with lines off).  Code objects are cached by
 * address (name, file and line table read once), so a sample costs one
 * read per interpreter frame plus the thread-state reads.
 *
 * Ownership: an sp_python borrows the profile (which must outlive it) and
 * owns its caches.  Never prints.
 */
#ifndef SP_PYTHON_H
#define SP_PYTHON_H

#include <stddef.h>
#include <stdint.h>

#include "procmaps.h"
#include "profile.h"
#include "util.h"

enum sp_python_state {
	SP_PY_NOT = 0, /* no CPython in this process (yet) */
	SP_PY_READY,   /* frames can be read */
	SP_PY_WAITING, /* CPython found, not initialised yet: ask again later */
	SP_PY_REFUSED, /* a CPython this reader cannot read: err says why */
};

struct sp_python;

/* Looks for CPython in the executable mappings maps of process pid.
 * Returns a reader in state READY or WAITING, or NULL: *state (not NULL)
 * says NOT or REFUSED, and for REFUSED err holds one sentence. */
struct sp_python *sp_python_open(struct sp_profile *p, int pid, const struct sp_maps *maps, int lines,
				 enum sp_python_state *state, struct sp_err *err);
void sp_python_free(struct sp_python *py); /* NULL ok */

/* "3.12.1"; owned by py. */
const char *sp_python_version(const struct sp_python *py);
/* Whether the mappings hold an interpreter (a libpython, or an executable
 * named python*), as sp_python_open looks for it; path: whether a file's
 * name is one (python3, /usr/bin/python3.11).  Neither reads anything. */
int sp_python_in_maps(const struct sp_maps *maps);
int sp_python_named(const char *path);

/* A WAITING reader checks again whether the interpreter is up and its
 * layout validates.  Returns the new state (REFUSED: err says why). */
enum sp_python_state sp_python_check(struct sp_python *py, struct sp_err *err);

/* The sample's stack copy, for the frame the thread was running when it
 * was taken (3.11/3.12 keep the innermost frame pointer in a C local of
 * the eval loop: it is read from the copy rather than from live memory). */
struct sp_py_cstack {
	const uint8_t *data;
	uint64_t sp, len;
	const uint64_t *regs; /* the sample's registers (unwind.h's order), or NULL */
	uint64_t eval_end;    /* the end of the innermost eval-loop frame in the
			       * copy, 0 when the native stack has none */
	const uint64_t *eval_regs; /* its callee-saved registers as it had them
				    * (unwind.h's SP_UNWIND_KEPT - 1), or NULL */
	uint64_t time;             /* the sample's (pymerge.h's early reads), 0 none */
};

/* The Python frames of thread tid, innermost first, into fr[0..max):
 * frame ids of the profile.  entry[i] is 1 on the outermost frame of each
 * C-level call of the eval loop (one _PyEval_EvalFrameDefault native frame
 * runs fr[j..i] for the previous entry j-1), so groups can be matched with
 * the native frames.  cs may be NULL.  Returns the number of frames, 0
 * when the thread runs no Python code (or is not a Python thread), or -1
 * when the target's memory could not be read (the thread or process died,
 * or the frames changed under the reader). */
int sp_python_stack(struct sp_python *py, int tid, const struct sp_py_cstack *cs, uint32_t *fr, uint8_t *entry,
		    int max);

/* sp_python_stack in two steps, so that a thread's frames can be taken
 * as soon as a sample arrives and named later: sp_python_grab reads the
 * raw chain of thread tid's frames (three words a frame, at most max
 * frames into raw[0..3 max)) and nothing else, no code object, no
 * profile; returns the number of frames, 0 when tid runs no Python code
 * (or is not a Python thread, or has exited), -1 when the memory could
 * not be read.  sp_python_frames turns nraw raw frames into the frames
 * of sp_python_stack (and its anchors); returns their number. */
int sp_python_grab(struct sp_python *py, int tid, const struct sp_py_cstack *cs, uint64_t *raw, int max);
int sp_python_frames(struct sp_python *py, const uint64_t *raw, int nraw, uint32_t *fr, uint8_t *entry, int max);

/* After sp_python_stack: the addresses [*lo, *hi) that the eval loop
 * running frame i of that stack holds while it runs it: its next
 * instruction, inside the code object's bytecode.  So a sample's registers
 * and stack copy tell whether the frame read is the one the sample saw.
 * Returns 1 when the eval loop may keep it in a register or in its C
 * frame (3.11+, most often in the frame), 2 when only registers are to be
 * trusted (3.8-3.10: the eval frame's callee-saved registers; stale slots
 * of its C frame can hold older functions' pointers), 0 when unknown. */
int sp_python_anchor(const struct sp_python *py, int i, uint64_t *lo, uint64_t *hi);

/* The frame (a frame id of the profile, at its line) of the code object
 * read before whose bytecode holds instruction address instr, 0 when none
 * does (or it was freed since).  Names a sample's own innermost frame
 * from the next-instruction pointer its eval loop held. */
uint32_t sp_python_frame_at(struct sp_python *py, uint64_t instr);

/* File names are relative to the longest entry of the target's sys.path
 * they lie under ("json/encoder.py", as py-spy shows them) unless full is
 * set (the default: relative).  Set it before the first frame is read. */
void sp_python_set_full_filenames(struct sp_python *py, int full);

/* How many thread states the interpreter has (read at most every 200
 * ms), -1 when they cannot be counted. */
int sp_python_threads(struct sp_python *py);

/* The thread id holding the GIL, 0 when no thread holds it, -1 when it
 * cannot be told (the fields do not hold together).  Exact only while the
 * threads are stopped. */
int sp_python_gil_holder(struct sp_python *py);

/* The threading.Thread name of thread tid ("worker-1", "MainThread"), a
 * string id of the profile; 0 when it has none to read (not started by
 * threading, threading not imported, or the objects do not validate).
 * Read from threading._active (ident -> Thread) and each Thread's _name;
 * cached per thread, read again when a thread not seen before asks, and
 * every 2 s (renames).  fresh: read now (a snapshot). */
uint32_t sp_python_thread_name(struct sp_python *py, int tid, int fresh);

/* What a thread blocked in Python code waits for, as far as CPython
 * records it (read while the threads are stopped). */
enum sp_pywait_kind {
	SP_PYWAIT_NONE = 0,
	SP_PYWAIT_RLOCK, /* an RLock (_thread.RLock) held by another thread */
	SP_PYWAIT_JOIN,  /* Thread.join */
};
struct sp_python_wait {
	enum sp_pywait_kind kind;
	uint64_t obj;   /* the RLock, or the Thread joined */
	int owner;      /* the RLock's owner, the thread joined: tid; 0 unknown */
	uint64_t count; /* RLock: how many times its owner holds it */
	uint32_t name;  /* JOIN: the joined Thread's name; RLOCK: what the frames
			 * call the RLock (a local, self._lock, a global), 0 none
			 * (string ids) */
	char why[128];  /* owner 0: what is known */
};
/* RLOCK: an RLock held by another thread is referenced by the thread's
 * innermost Python frame (its locals or value stack: "with rl:" keeps
 * rl.__exit__ there), a candidate the caller confirms with the native
 * stack (rlock_acquire, or a futex wait where there are no symbols).
 * JOIN: the innermost frames are threading's Thread.join (3.13) or
 * _wait_for_tstate_lock (3.8-3.12), whose self is the Thread joined.
 * Returns 1 when w says something, else 0. */
int sp_python_wait(struct sp_python *py, int tid, struct sp_python_wait *w);

/* A thread asleep in the futex of a threading.Lock (_thread.lock, whose
 * semaphore is that futex: 3.8-3.13 with POSIX semaphores): the lock is
 * found among the objects its innermost frames refer to (a "with" keeps
 * lock.__exit__ on the value stack; lock.acquire() its self).  When the
 * frames that take it are threading's Condition.wait and what calls it
 * (Semaphore.acquire, Event.wait, Barrier.wait) or queue's Queue.get/put/
 * join, kind and obj are that object's.  Names are what a frame calls
 * the object: a local ("lock") or an attribute of one ("self._lock").
 * Returns 1 when found, else 0. */
struct sp_python_lockwait {
	uint32_t kind;      /* string id: "Lock", "Condition", "Semaphore", "Event", "Barrier", "Queue" */
	uint64_t obj;       /* the object of that kind */
	uint32_t obj_name;  /* its name in the frame that uses it, 0 none */
	uint64_t lock;      /* the _thread.lock waited for */
	uint32_t lock_name; /* its name, 0 none */
};
int sp_python_lock_wait(struct sp_python *py, int tid, uint64_t futex, struct sp_python_lockwait *lw);

/* The threading.Locks thread tid's frames (outside threading.py and
 * queue.py) refer to, itself or as the self of a bound method, innermost
 * first: "with lock:" blocks, code between lock.acquire() and
 * lock.release() (where the value stack or a local still holds it).  For
 * each, the frame's function and what it calls the lock (string ids, 0
 * none); the same lock may come twice (a variable, then a bound method).  Up to max into r; returns how many.  Read while the threads are
 * stopped. */
struct sp_python_ref {
	uint64_t obj;
	uint32_t where, name;
	uint8_t with; /* inside "with": lock.__exit__ on the value stack,
		       * not a variable only */
};
int sp_python_refs(struct sp_python *py, int tid, struct sp_python_ref *r, int max);

/* The local variables of a thread's Python frames, read while the threads
 * are stopped.  sp_python_slots copies what each frame's locals hold (the
 * object pointers of its locals, cells and free variables: one read a
 * frame, the 64 innermost frames, counted as sp_python_stack counts them)
 * to raw, at most *budget reads (decremented by those done); it returns
 * how many frames it copied (the rest: the budget), -1 none.  Then
 * sp_python_locals turns the copy (raw, len bytes) into frame i's
 * "name\0repr\0" pairs appended to out, off[i] = their offset in out + 1
 * (0: none), nvars[i] how many; returns the frames done (fewer than max
 * when sp_python_read_limit stopped it before a variable's name).  Names
 * come from the code objects; cells show their content; unbound locals
 * are left out.  Reprs are read from memory, no code runs: int, float,
 * str, bytes (64 characters), bool, None, tuple, list and dict with their
 * first 4 items and length (one level), classes "<class 'Name'>", other
 * objects "<Type at 0x...>", "<unreadable at 0x...>", and
 * "<not read at 0x...: budget>" where the read limit stopped it (counted
 * in sp_python_stats.not_read). */
int sp_python_slots(struct sp_python *py, int tid, struct sp_buf *raw, int max, uint64_t *budget);
int sp_python_locals(struct sp_python *py, const void *raw, size_t len, struct sp_buf *out, uint32_t *off,
		     uint16_t *nvars, int max);
/* From now on, read the target's memory at most reads times and not once
 * time is spent (reads 0, time NULL: no limit of that kind). */
void sp_python_read_limit(struct sp_python *py, uint64_t reads, const struct sp_budget *time);

struct sp_python_stats {
	uint64_t stacks, frames, reads, failed, code_objects, from_cstack;
	uint64_t not_read; /* values the read limit left unread (sp_python_locals) */
};
const struct sp_python_stats *sp_python_stats(const struct sp_python *py);

/* The PEP 626 location table (Objects/locations.md) of a code object:
 * the line of code unit addr, or -1.  Exposed for the unit tests. */
int sp_python_line(const uint8_t *table, size_t n, int firstline, int addr);

#endif
