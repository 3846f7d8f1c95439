/* procmaps.h — the address space of one process: which file is mapped
 * where.  Filled from /proc/PID/maps at attach time and from perf's
 * MMAP2 records afterwards (so it stays right after the process exited),
 * copied on fork and cleared on exec.
 *
 * Ownership: an sp_maps owns its entries and their path strings; pointers
 * returned by sp_maps_find/sp_maps_at stay valid until the next change of
 * that sp_maps.
 */
#ifndef SP_PROCMAPS_H
#define SP_PROCMAPS_H

#include <stdint.h>

#include "util.h"

struct sp_map {
	uint64_t start, end; /* [start, end) */
	uint64_t pgoff;      /* file offset of start */
	uint64_t ino;        /* 0 when unknown */
	uint32_t maj, min;   /* device of the file */
	uint32_t prot;       /* PROT_READ|PROT_WRITE|PROT_EXEC */
	const char *path;    /* "" for anonymous memory; "[vdso]", "[stack]" ... */
};

struct sp_maps;

struct sp_maps *sp_maps_new(void);
void sp_maps_free(struct sp_maps *m); /* NULL ok */
/* A copy, for a forked child. */
struct sp_maps *sp_maps_clone(const struct sp_maps *m);
/* Forget everything (the process called exec). */
void sp_maps_clear(struct sp_maps *m);
/* Add a mapping; whatever it overlaps is cut away, as mmap(2) does. */
void sp_maps_add(struct sp_maps *m, const struct sp_map *map);
/* Add the mappings listed in /proc/PID/maps (only executable ones when
 * exec_only).  Returns 0, or -1 with err set. */
int sp_maps_load(struct sp_maps *m, int pid, int exec_only, struct sp_err *err);
const struct sp_map *sp_maps_find(const struct sp_maps *m, uint64_t addr);
size_t sp_maps_count(const struct sp_maps *m);
const struct sp_map *sp_maps_at(const struct sp_maps *m, size_t i);
/* Bumped by every change: users that derived state from the maps (the
 * unwinder's module list) compare it to know when to refresh. */
uint64_t sp_maps_generation(const struct sp_maps *m);

/* The processes of a run, by pid: each has its maps and one pointer the
 * user attaches (pcollect: its unwinder), freed with free_user when the
 * process calls exec, is removed, or the table is freed. */
struct sp_proc {
	int pid;
	struct sp_maps *maps;
	void *user;
	uint64_t serial; /* unique per process image (a new one after exec) */
};

struct sp_procs;

struct sp_procs *sp_procs_new(void (*free_user)(void *));
void sp_procs_free(struct sp_procs *t); /* NULL ok */
/* The process pid; created (with empty maps) when create is set.  The
 * pointer is valid until the next sp_procs_get/_fork/_remove. */
struct sp_proc *sp_procs_get(struct sp_procs *t, int pid, int create);
/* pid was forked from ppid: it starts with a copy of ppid's maps. */
struct sp_proc *sp_procs_fork(struct sp_procs *t, int ppid, int pid);
/* pid called exec: empty maps, user data freed. */
void sp_procs_exec(struct sp_procs *t, int pid);
void sp_procs_remove(struct sp_procs *t, int pid);
size_t sp_procs_count(const struct sp_procs *t);

/* The process (thread group) of thread tid, from /proc; tid when unknown. */
int sp_proc_tgid(int tid);

/* /proc/PID/stat (tid <= 0) or /proc/PID/task/TID/stat read into buf:
 * the text after the command name's closing ')' (" S PPID ..."; the name
 * may hold anything), or NULL. */
const char *sp_proc_stat(int pid, int tid, char *buf, size_t size);

#endif
