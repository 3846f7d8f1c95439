/* procmaps.c — a sorted array of non-overlapping mappings. */
#include "procmaps.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct sp_maps {
	struct sp_map *v;
	size_t n, cap;
	uint64_t gen;
};

static uint64_t next_gen = 1; /* generations are unique across all maps */

struct sp_maps *sp_maps_new(void)
{
	struct sp_maps *m = sp_xcalloc(1, sizeof *m);
	m->gen = next_gen++;
	return m;
}

static void free_paths(struct sp_maps *m)
{
	for (size_t i = 0; i < m->n; i++)
		free((char *)m->v[i].path);
}

void sp_maps_free(struct sp_maps *m)
{
	if (!m)
		return;
	free_paths(m);
	free(m->v);
	free(m);
}

struct sp_maps *sp_maps_clone(const struct sp_maps *m)
{
	struct sp_maps *c = sp_maps_new();
	c->cap = c->n = m->n;
	c->v = sp_xcalloc(c->cap, sizeof *c->v);
	for (size_t i = 0; i < m->n; i++) {
		c->v[i] = m->v[i];
		c->v[i].path = sp_xstrndup(m->v[i].path, strlen(m->v[i].path));
	}
	return c;
}

void sp_maps_clear(struct sp_maps *m)
{
	free_paths(m);
	m->n = 0;
	m->gen = next_gen++;
}

static void insert_at(struct sp_maps *m, size_t i, const struct sp_map *e)
{
	if (m->n == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 32;
		m->v = sp_xrealloc(m->v, m->cap * sizeof *m->v);
	}
	memmove(m->v + i + 1, m->v + i, (m->n - i) * sizeof *m->v);
	m->v[i] = *e;
	m->n++;
}

void sp_maps_add(struct sp_maps *m, const struct sp_map *map)
{
	if (map->end <= map->start)
		return;
	/* Cut the overlapped parts of existing entries. */
	for (size_t i = 0; i < m->n;) {
		struct sp_map *e = &m->v[i];
		if (e->end <= map->start || e->start >= map->end) {
			i++;
			continue;
		}
		if (e->start < map->start && e->end > map->end) {
			/* The new mapping punches a hole: split in two. */
			struct sp_map tail = *e;
			tail.pgoff += map->end - e->start;
			tail.start = map->end;
			tail.path = sp_xstrndup(e->path, strlen(e->path));
			e->end = map->start;
			insert_at(m, i + 1, &tail);
			i += 2;
		} else if (e->start < map->start) {
			e->end = map->start;
			i++;
		} else if (e->end > map->end) {
			e->pgoff += map->end - e->start;
			e->start = map->end;
			i++;
		} else {
			free((char *)e->path);
			memmove(e, e + 1, (m->n - i - 1) * sizeof *e);
			m->n--;
		}
	}
	size_t lo = 0, hi = m->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (m->v[mid].start < map->start)
			lo = mid + 1;
		else
			hi = mid;
	}
	struct sp_map e = *map;
	e.path = sp_xstrndup(map->path ? map->path : "", map->path ? strlen(map->path) : 0);
	insert_at(m, lo, &e);
	m->gen = next_gen++;
}

int sp_maps_load(struct sp_maps *m, int pid, int exec_only, struct sp_err *err)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/maps", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return sp_err_set(err, "%s: %s", path, strerror(errno));
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	while ((len = getline(&line, &cap, f)) > 0) {
		uint64_t start, end, off, ino;
		unsigned maj, min;
		char perms[8];
		int pos = 0;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %" SCNu64 " %n", &start, &end, perms,
			   &off, &maj, &min, &ino, &pos) < 7)
			continue;
		if (line[len - 1] == '\n')
			line[--len] = 0;
		struct sp_map e = { start, end, off, ino, maj, min, 0, pos ? line + pos : "" };
		if (perms[0] == 'r')
			e.prot |= PROT_READ;
		if (perms[1] == 'w')
			e.prot |= PROT_WRITE;
		if (perms[2] == 'x')
			e.prot |= PROT_EXEC;
		if (exec_only && !(e.prot & PROT_EXEC))
			continue;
		sp_maps_add(m, &e);
	}
	free(line);
	fclose(f);
	return 0;
}

const struct sp_map *sp_maps_find(const struct sp_maps *m, uint64_t addr)
{
	size_t lo = 0, hi = m->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (m->v[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < m->n && m->v[lo].start <= addr)
		return &m->v[lo];
	return NULL;
}

size_t sp_maps_count(const struct sp_maps *m) { return m->n; }
const struct sp_map *sp_maps_at(const struct sp_maps *m, size_t i) { return &m->v[i]; }
uint64_t sp_maps_generation(const struct sp_maps *m) { return m->gen; }

/* ---- the process table ---- */

struct sp_procs {
	struct sp_proc *v;
	size_t n, cap;
	struct sp_u64map idx; /* pid -> index + 1 */
	void (*free_user)(void *);
	uint64_t serial;
};

struct sp_procs *sp_procs_new(void (*free_user)(void *))
{
	struct sp_procs *t = sp_xcalloc(1, sizeof *t);
	sp_u64map_init(&t->idx);
	t->free_user = free_user;
	return t;
}

static void drop_user(struct sp_procs *t, struct sp_proc *pr)
{
	if (pr->user && t->free_user)
		t->free_user(pr->user);
	pr->user = NULL;
}

void sp_procs_free(struct sp_procs *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++) {
		drop_user(t, &t->v[i]);
		sp_maps_free(t->v[i].maps);
	}
	free(t->v);
	sp_u64map_release(&t->idx);
	free(t);
}

struct sp_proc *sp_procs_get(struct sp_procs *t, int pid, int create)
{
	int found;
	/* Index 0 means absent: removed pids keep their key (no delete). */
	uint32_t i = sp_u64map_get(&t->idx, (uint64_t)(uint32_t)pid, &found);
	if (found && i)
		return &t->v[i - 1];
	if (!create)
		return NULL;
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 16;
		t->v = sp_xrealloc(t->v, t->cap * sizeof *t->v);
	}
	struct sp_proc *pr = &t->v[t->n++];
	pr->pid = pid;
	pr->maps = sp_maps_new();
	pr->user = NULL;
	pr->serial = ++t->serial;
	*sp_u64map_slot(&t->idx, (uint64_t)(uint32_t)pid, &found) = (uint32_t)t->n;
	return pr;
}

struct sp_proc *sp_procs_fork(struct sp_procs *t, int ppid, int pid)
{
	sp_procs_remove(t, pid); /* a recycled pid */
	struct sp_proc *pr = sp_procs_get(t, pid, 1);
	struct sp_proc *parent = sp_procs_get(t, ppid, 0);
	if (parent) {
		struct sp_maps *c = sp_maps_clone(parent->maps);
		sp_maps_free(pr->maps);
		pr->maps = c;
	}
	return pr;
}

void sp_procs_exec(struct sp_procs *t, int pid)
{
	struct sp_proc *pr = sp_procs_get(t, pid, 1);
	drop_user(t, pr);
	sp_maps_clear(pr->maps);
	pr->serial = ++t->serial;
}

void sp_procs_remove(struct sp_procs *t, int pid)
{
	int found;
	uint32_t *slot = sp_u64map_slot(&t->idx, (uint64_t)(uint32_t)pid, &found);
	if (!found || !*slot)
		return;
	uint32_t i = *slot - 1;
	*slot = 0;
	struct sp_proc *pr = &t->v[i];
	drop_user(t, pr);
	sp_maps_free(pr->maps);
	/* Move the last entry into the hole and fix its index. */
	t->n--;
	if (i != t->n) {
		t->v[i] = t->v[t->n];
		*sp_u64map_slot(&t->idx, (uint64_t)(uint32_t)t->v[i].pid, &found) = i + 1;
	}
}

size_t sp_procs_count(const struct sp_procs *t) { return t->n; }

const char *sp_proc_stat(int pid, int tid, char *buf, size_t size)
{
	char path[64];
	if (tid > 0)
		snprintf(path, sizeof path, "/proc/%d/task/%d/stat", pid, tid);
	else
		snprintf(path, sizeof path, "/proc/%d/stat", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	ssize_t r = read(fd, buf, size - 1);
	close(fd);
	if (r <= 0)
		return NULL;
	buf[r] = 0;
	return strrchr(buf, ')');
}

int sp_proc_tgid(int tid)
{
	char path[64], buf[4096];
	snprintf(path, sizeof path, "/proc/%d/status", tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC), tgid = tid;
	ssize_t r = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (r > 0) {
		buf[r] = 0;
		const char *t = strstr(buf, "\nTgid:");
		if (t)
			tgid = atoi(t + 7);
	}
	return tgid > 0 ? tgid : tid;
}
