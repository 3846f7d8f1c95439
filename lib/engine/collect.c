/* collect.c — the sampling engine (see collect.h): threads, processes and
 * their unwinders, the whole-stack cache, and the dispatch of a raw sample
 * to the right unwinding (kernel callchain, user frame-pointer chain, or
 * libdwfl on registers plus a stack copy). */
#include <dirent.h>
#include <fcntl.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect.h"
#include "unwind.h"

#define MAX_PCS 256
/* Stacks of fewer addresses are not cached whole: a look-up costs a hash,
 * two or three cache misses and, when it misses, an entry that grows the
 * cache; a short stack resolves through the per-address memos in little
 * more.  A frame-pointer recording of a build (shallow stacks: gcc has no
 * frame pointers, 176k distinct ones in 268k samples) took 25 % more CPU
 * with every stack cached than with none. */
#define MIN_CACHED 12

struct thr {
	int pid, tid;
	uint32_t name;   /* string id */
	uint32_t id;     /* profile thread id for (pid, tid, name) */
	int keep;        /* the thread filter matched the current name */
	uint32_t pyname; /* its threading.Thread name (string id), 0 none */
	uint32_t pyid;   /* profile thread id for (pid, tid, pyname) */
	int pykeep;      /* the thread filter matched pyname */
};

struct stack_ent {
	uint64_t hash, serial, gen;
	uint32_t nk, n; /* kernel pcs, all pcs */
	uint32_t off;   /* pcs in the arena */
	uint32_t node;
};

struct sp_collect {
	struct sp_collect_opts o;
	/* sp_collect_set_stack_fix: return addresses in a stopped thread's
	 * copy that return probes replaced, put back */
	int (*fix)(void *ctx, int tid, uint64_t sp, const uint8_t *stack, uint64_t len, uint8_t *buf,
		   uint64_t *tramp);
	void *fix_ctx;  /* fix: 1 fixed into buf, 0 nothing to fix; *tramp the trampoline, 0 unknown */
	uint8_t *fixbuf;
	struct sp_profile *p;
	struct sp_sink *sink;
	struct sp_symbols *syms;
	struct sp_procs *procs;
	regex_t re;
	int have_re;
	uint32_t event;
	uint32_t kernel_frame; /* no_kallsyms: the one kernel frame */
	uint32_t unknown;      /* the string "[unknown]" */
	/* threads by tid */
	struct thr *thr;
	size_t nthr, capthr;
	struct sp_u64map thridx; /* tid -> index + 1 */
	/* whole-stack cache */
	struct stack_ent *ents;
	size_t nents, capents;
	struct sp_u64map stackidx; /* hash -> index + 1 */
	uint64_t *pcarena;
	size_t npc, cappc;
	uint32_t *fr;
	size_t capfr;
	struct sp_pymerge *py; /* NULL: no Python step */
	uint32_t eval;         /* "_PyEval_EvalFrameDefault" */
	struct sp_collect_stats st;
	/* opts.system_wide: pid -> 1 when its maps are known (read from /proc,
	 * or all of them seen as records: after an exec, or forked from a
	 * known process), 2 when /proc could not give them */
	struct sp_u64map known;
	/* opts.system_wide: pid -> the second (of sample time, + 1) its maps
	 * were last read again for an address outside them (sw_missed) */
	struct sp_u64map reread;
	int write_failed;
	struct sp_err werr;
};

static void free_unwind(void *u) { sp_unwind_free(u); }

struct sp_collect *sp_collect_new(struct sp_profile *p, struct sp_sink *sink, const struct sp_collect_opts *o,
				  struct sp_err *err)
{
	struct sp_collect *c = sp_xcalloc(1, sizeof *c);
	c->o = *o;
	c->p = p;
	c->sink = sink;
	if (o->threads) {
		if (sp_thread_regex(&c->re, o->threads, err) < 0) {
			free(c);
			return NULL;
		}
		c->have_re = 1;
	}
	c->o.threads = NULL; /* not kept: the caller's string */
	const char *ev = o->event ? o->event : "cpu-clock";
	c->o.event = NULL;
	c->event = sp_str_intern(p, ev, strlen(ev));
	struct sp_symbols_opts so = { o->lines, o->no_inline, o->offline, o->locate, o->locate_ctx };
	c->syms = sp_symbols_new(p, &so);
	c->unknown = sp_str_intern(p, "[unknown]", 9); /* the symbols' own: interned there already */
	c->procs = sp_procs_new(free_unwind);
	sp_u64map_init(&c->thridx);
	sp_u64map_init(&c->stackidx);
	sp_u64map_init(&c->known);
	sp_u64map_init(&c->reread);
	if (o->python != SP_PY_OFF && !o->offline)
		c->py = sp_pymerge_new(p, o->python, o->python_lines, o->python_full_filenames);
	c->eval = sp_str_intern(p, "_PyEval_EvalFrameDefault", 24);
	if (o->no_kallsyms) {
		struct sp_frame f = { sp_str_intern(p, "[kernel.kallsyms]", 17), sp_str_intern(p, "[kernel.kallsyms]", 17),
				      0, 0, 0, SP_KIND_KERNEL };
		c->kernel_frame = sp_frame_intern(p, &f);
	}
	return c;
}

void sp_collect_set_stack_fix(struct sp_collect *c,
			      int (*fix)(void *ctx, int tid, uint64_t sp, const uint8_t *stack, uint64_t len,
					 uint8_t *buf, uint64_t *tramp),
			      void *ctx)
{
	c->fix = fix;
	c->fix_ctx = ctx;
}

void sp_collect_free(struct sp_collect *c)
{
	if (!c)
		return;
	sp_pymerge_free(c->py);
	sp_procs_free(c->procs); /* the unwinders first: they use the symbols' files */
	sp_symbols_free(c->syms);
	sp_u64map_release(&c->thridx);
	sp_u64map_release(&c->stackidx);
	sp_u64map_release(&c->known);
	sp_u64map_release(&c->reread);
	free(c->fixbuf);
	free(c->thr);
	free(c->ents);
	free(c->pcarena);
	free(c->fr);
	if (c->have_re)
		regfree(&c->re);
	free(c);
}

void sp_collect_set_event(struct sp_collect *c, uint32_t event) { c->event = event; }

void sp_collect_load_kernel(struct sp_collect *c)
{
	if (!c->o.no_kallsyms)
		sp_symbols_load_kernel(c->syms);
}

void sp_collect_kernel_file(struct sp_collect *c, const char *path, const char *ref, uint64_t ref_addr)
{
	if (!c->o.no_kallsyms)
		sp_symbols_kernel_file(c->syms, path, ref, ref_addr);
}

void sp_collect_kernel_symbol(struct sp_collect *c, uint64_t addr, uint64_t len, const char *name)
{
	if (!c->o.no_kallsyms)
		sp_symbols_kernel_add(c->syms, addr, len, name);
}

int sp_collect_kernel_hidden(const struct sp_collect *c)
{
	return !c->o.no_kallsyms && sp_symbols_kernel_hidden(c->syms);
}

struct sp_symbols *sp_collect_symbols(struct sp_collect *c) { return c->syms; }

const struct sp_collect_stats *sp_collect_stats(struct sp_collect *c)
{
	c->st.threads = c->nthr;
	c->st.kept_threads = 0;
	for (size_t i = 0; i < c->nthr; i++)
		c->st.kept_threads += c->thr[i].keep != 0;
	c->st.processes = sp_procs_count(c->procs);
	c->st.stacks = c->nents;
	return &c->st;
}

const char *sp_collect_thread(const struct sp_collect *c, size_t i, int *kept)
{
	if (i >= c->nthr)
		return NULL;
	if (kept)
		*kept = c->thr[i].keep;
	return sp_str(c->p, c->thr[i].name);
}

struct sp_pymerge *sp_collect_python(struct sp_collect *c) { return c->py; }

int sp_collect_error(const struct sp_collect *c, struct sp_err *err)
{
	if (c->write_failed && err)
		*err = c->werr;
	return c->write_failed;
}

/* ---- threads ---- */

static struct thr *thread_get(struct sp_collect *c, int tid)
{
	int found;
	uint32_t i = sp_u64map_get(&c->thridx, (uint64_t)(uint32_t)tid, &found);
	return found && i ? &c->thr[i - 1] : NULL;
}

static void thread_set(struct sp_collect *c, int pid, int tid, const char *name)
{
	struct thr *t = thread_get(c, tid);
	if (!t) {
		if (c->nthr == c->capthr) {
			c->capthr = c->capthr ? 2 * c->capthr : 64;
			c->thr = sp_xrealloc(c->thr, c->capthr * sizeof *c->thr);
		}
		t = &c->thr[c->nthr++];
		memset(t, 0, sizeof *t);
		int found;
		*sp_u64map_slot(&c->thridx, (uint64_t)(uint32_t)tid, &found) = (uint32_t)c->nthr;
	}
	t->pid = pid;
	t->tid = tid;
	t->name = sp_str_intern(c->p, name, strlen(name));
	/* A renamed thread is a new (pid, tid, name) in the profile: the
	 * stream writes a THREAD record for it before its next sample. */
	t->id = sp_thread_intern(c->p, pid, tid, t->name);
	t->keep = !c->have_re || regexec(&c->re, name, 0, NULL, 0) == 0;
}

/* A thread's name from /proc when live, "[TID]" otherwise. */
static void read_comm(const struct sp_collect *c, int pid, int tid, char *out, size_t n)
{
	out[0] = 0;
	if (!c->o.offline) {
		char path[96];
		snprintf(path, sizeof path, "/proc/%d/task/%d/comm", pid, tid);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			ssize_t r = read(fd, out, n - 1);
			close(fd);
			if (r > 0) {
				out[r] = 0;
				out[strcspn(out, "\n")] = 0;
			}
		}
	}
	if (!out[0])
		snprintf(out, n, "[%d]", tid);
}

void sp_collect_add_task(struct sp_collect *c, int pid, int tid)
{
	char name[64];
	read_comm(c, pid, tid, name, sizeof name);
	thread_set(c, pid, tid, name);
}

uint32_t sp_collect_thread_id(struct sp_collect *c, int pid, int tid)
{
	struct thr *t = thread_get(c, tid);
	if (!t) {
		sp_collect_add_task(c, pid, tid);
		t = thread_get(c, tid);
	}
	return t && t->keep ? t->id : 0;
}

void sp_collect_refresh_task(struct sp_collect *c, int pid, int tid)
{
	char name[64];
	struct thr *t = thread_get(c, tid);
	if (c->o.offline)
		return;
	read_comm(c, pid, tid, name, sizeof name);
	char gone[32];
	snprintf(gone, sizeof gone, "[%d]", tid);
	if (!strcmp(name, gone)) {
		if (t)
			return; /* exited: keep the name we had */
		/* exited before we looked: a thread starts with its process's name */
		if (pid != tid)
			sp_collect_refresh_task(c, pid, pid);
		struct thr *main_t = thread_get(c, pid);
		if (main_t)
			snprintf(name, sizeof name, "%s", sp_str(c->p, main_t->name));
	}
	if (!t || strcmp(sp_str(c->p, t->name), name))
		thread_set(c, pid, tid, name);
}

int sp_collect_load_maps(struct sp_collect *c, int pid, int tid, struct sp_err *err)
{
	if (c->o.offline) {
		sp_err_set(err, "process %d: an offline collection has no /proc maps", pid);
		return -1;
	}
	return sp_maps_load(sp_procs_get(c->procs, pid, 1)->maps, tid, 1, err);
}

/* ---- system-wide: processes that ran before the records began ---- */

static void set_known(struct sp_collect *c, int pid, uint32_t v)
{
	int found;
	*sp_u64map_slot(&c->known, (uint64_t)(uint32_t)pid, &found) = v;
}

/* The maps of process pr, read from /proc at its first sample with a user
 * stack when no record told them.  Returns 0 when they are known, -1 when
 * the process was gone (counted once). */
static int sw_maps(struct sp_collect *c, struct sp_proc *pr)
{
	int found;
	uint32_t *k = sp_u64map_slot(&c->known, (uint64_t)(uint32_t)pr->pid, &found);
	if (found && *k)
		return *k == 1 ? 0 : -1;
	struct sp_err e;
	/* Mappings seen as records meanwhile are in /proc's list too. */
	if (sp_maps_load(pr->maps, pr->pid, 1, &e) == 0) {
		*k = 1;
		c->st.maps_read++;
		return 0;
	}
	*k = 2;
	c->st.unresolved++;
	return -1;
}

/* A sampled user address outside every mapping of a process whose maps are
 * known: a mapping's record was lost (a full ring) or is still to come.
 * /proc's list, which holds it, is read again, at most once a second (of
 * sample time) a process. */
static void sw_missed(struct sp_collect *c, struct sp_proc *pr, uint64_t time)
{
	int found;
	uint32_t sec = (uint32_t)(time / 1000000000u) + 1;
	uint32_t *at = sp_u64map_slot(&c->reread, (uint64_t)(uint32_t)pr->pid, &found);
	if (found && *at == sec)
		return;
	*at = sec;
	struct sp_err e;
	if (sp_maps_load(pr->maps, pr->pid, 1, &e) == 0)
		c->st.maps_reread++;
}

int sp_collect_load_all(struct sp_collect *c)
{
	DIR *d = opendir("/proc");
	if (!d)
		return 0;
	struct dirent *de;
	struct sp_err e;
	int n = 0;
	while ((de = readdir(d))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		int pid = atoi(de->d_name);
		if (sp_maps_load(sp_procs_get(c->procs, pid, 1)->maps, pid, 1, &e) == 0) {
			set_known(c, pid, 1);
			n++;
		}
	}
	closedir(d);
	c->st.maps_read += (uint64_t)n;
	return n;
}

/* ---- record handlers ---- */

static void h_comm(void *ctx, uint32_t pid, uint32_t tid, const char *comm, int exec, uint64_t time)
{
	struct sp_collect *c = ctx;
	if (exec)
		sp_procs_exec(c->procs, (int)pid);
	if (exec && c->o.system_wide)
		set_known(c, (int)pid, 1); /* the new image's mappings follow as records */
	if (exec && c->py)
		sp_pymerge_exit(c->py, (int)pid); /* a new image: its reader, and its seized threads, go */
	thread_set(c, (int)pid, (int)tid, comm);
}

static void h_mmap(void *ctx, uint32_t pid, uint32_t tid, const struct sp_map *m, uint64_t time)
{
	struct sp_collect *c = ctx;
	if (!(m->prot & 4)) /* PROT_EXEC: only code matters */
		return;
	sp_maps_add(sp_procs_get(c->procs, (int)pid, 1)->maps, m);
}

static void h_fork(void *ctx, uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid, uint64_t time)
{
	struct sp_collect *c = ctx;
	if (pid != ppid)
		sp_procs_fork(c->procs, (int)ppid, (int)pid);
	if (pid != ppid && c->o.system_wide) {
		/* A child of a process never read from /proc has its maps
		 * unknown too: they are read at its first sample. */
		int found;
		uint32_t k = sp_u64map_get(&c->known, (uint64_t)ppid, &found);
		set_known(c, (int)pid, found && k == 1);
	}
	/* A new thread or process starts with its creator's name. */
	struct thr *parent = thread_get(c, (int)ptid);
	char name[64];
	if (parent)
		snprintf(name, sizeof name, "%s", sp_str(c->p, parent->name));
	else
		read_comm(c, (int)pid, (int)tid, name, sizeof name);
	thread_set(c, (int)pid, (int)tid, name);
}

static void h_exit(void *ctx, uint32_t pid, uint32_t tid, uint64_t time)
{
	struct sp_collect *c = ctx;
	/* The process is gone: free its unwinder (libdwfl state, DWARF) but
	 * keep its maps, in case a late sample still needs them. */
	if (pid == tid) {
		struct sp_proc *pr = sp_procs_get(c->procs, (int)pid, 0);
		if (pr && pr->user) {
			sp_unwind_free(pr->user);
			pr->user = NULL;
		}
		if (c->py)
			sp_pymerge_exit(c->py, (int)pid);
	}
}

static void add_frame(struct sp_collect *c, size_t *n, uint32_t f)
{
	if (*n == c->capfr) {
		c->capfr = c->capfr ? 2 * c->capfr : 256;
		c->fr = sp_xrealloc(c->fr, c->capfr * sizeof *c->fr);
	}
	c->fr[(*n)++] = f;
}

/* The stack node of the addresses pcs[0..n): nk kernel addresses (innermost
 * first), then the user ones (innermost first).  Whole stacks are cached by
 * their addresses, so a repeated stack costs one hash. */
static uint32_t stack_node(struct sp_collect *c, struct sp_proc *pr, struct sp_unwind *u, const uint64_t *pcs,
			   uint32_t nk, uint32_t n)
{
	/* A kernel-only stack names the same in every process: one entry for
	 * all of them. */
	int user = n > nk && pr;
	uint64_t gen = user ? sp_maps_generation(pr->maps) : 0, serial = user ? pr->serial : 0;
	uint64_t h = 0, key = 0;
	int cached = n >= MIN_CACHED;
	if (cached) {
		h = sp_hash_seed(pcs, n * sizeof *pcs, sp_mix64(serial * 0x9E3779B97F4A7C15ULL ^ gen) ^ nk);
		key = h == UINT64_MAX ? h - 1 : h;
	}
	for (; cached;) {
		int found;
		uint32_t idx = sp_u64map_get(&c->stackidx, key, &found); /* no insertion: see unnamed */
		if (!found)
			break;
		const struct stack_ent *e = &c->ents[idx - 1];
		if (e->hash == h && e->serial == serial && e->gen == gen && e->nk == nk && e->n == n &&
		    !memcmp(c->pcarena + e->off, pcs, n * sizeof *pcs))
			return e->node;
		key = sp_mix64(key + 1);
		if (key == UINT64_MAX)
			key--;
	}
	/* Frames root first: user outermost .. user leaf, then kernel. */
	size_t nf = 0;
	int unnamed = 0;
	for (uint32_t i = n; i-- > nk;) {
		const uint32_t *f;
		size_t k = sp_symbols_user(c->syms, u, pr ? pr->maps : NULL, pr ? pr->pid : -1, pcs[i], &f);
		if (k == 1 && cached && !unnamed && sp_frame_get(c->p, f[0])->name == c->unknown) {
			/* Unnamed: in an ELF file that stays so; in anonymous
			 * memory ("//anon") a JIT may name it later.  An address
			 * in no mapping (a broken frame-pointer chain) stays
			 * unnamed until the maps change, which the cache key
			 * already covers (their generation). */
			const struct sp_map *mp = pr ? sp_maps_find(pr->maps, pcs[i]) : NULL;
			unnamed = mp && !sp_symbols_modfile(c->syms, pr->pid, mp); /* f stays valid */
		}
		while (k--)
			add_frame(c, &nf, f[k]);
	}
	for (uint32_t i = nk; i-- > 0;) {
		const uint32_t *f = &c->kernel_frame;
		if (!c->o.no_kallsyms)
			sp_symbols_kernel(c->syms, pcs[i], &f);
		add_frame(c, &nf, f[0]);
	}
	uint32_t node = 0;
	for (size_t i = 0; i < nf; i++)
		node = sp_node_intern(c->p, node, c->fr[i]);
	/* Code outside any file (JIT) may be named later, when the JIT writes
	 * /tmp/perf-PID.map: such a stack is not cached, or its first
	 * [unknown] would stay for the whole run. */
	if (unnamed || !cached)
		return node;
	if (c->nents == c->capents) {
		c->capents = c->capents ? 2 * c->capents : 1024;
		c->ents = sp_xrealloc(c->ents, c->capents * sizeof *c->ents);
	}
	if (c->npc + n > c->cappc) {
		while (c->npc + n > c->cappc)
			c->cappc = c->cappc ? 2 * c->cappc : 8192;
		c->pcarena = sp_xrealloc(c->pcarena, c->cappc * sizeof *c->pcarena);
	}
	memcpy(c->pcarena + c->npc, pcs, n * sizeof *pcs);
	c->ents[c->nents] = (struct stack_ent){ h, serial, gen, nk, n, (uint32_t)c->npc, node };
	c->npc += n;
	c->nents++;
	int found;
	*sp_u64map_slot(&c->stackidx, key, &found) = (uint32_t)c->nents;
	return node;
}

/* The end of the innermost eval-loop frame in the stack copy: the stack
 * pointer of its caller (the copy's end when it has none, or the unwinder
 * does not know it), 0 when the user stack pcs[nk..n) has no eval frame.
 * What the eval loop holds at the sample (its frame and instruction
 * pointers) lies below it or in the registers (pymerge.h). */
static uint64_t eval_end(struct sp_collect *c, struct sp_proc *pr, struct sp_unwind *u, const uint64_t *pcs,
			 const uint64_t *sps, uint32_t nk, uint32_t n, struct sp_py_cstack *cs)
{
	for (uint32_t i = nk; i < n; i++) {
		const uint32_t *f;
		size_t k = sp_symbols_user(c->syms, u, pr->maps, pr->pid, pcs[i], &f);
		if (!k || sp_frame_get(c->p, f[k - 1])->name != c->eval)
			continue;
		uint64_t end = cs->sp + cs->len, next = i + 1 < n ? sps[(i + 1) * SP_UNWIND_KEPT] : 0;
		if (next > cs->sp && next < end)
			end = next;
		cs->eval_regs = sps + i * SP_UNWIND_KEPT + 1;
		return end;
	}
	return 0;
}

/* Go's stacks, as Go's traceback walks them (gopclntab.h): the unwinder
 * reads the sample's stack copy, which for code on the system stack (g0:
 * the scheduler, the garbage collector, systemstack's callees) holds g0's
 * frames only, and what lies above them is stale.  A stack ends at
 * runtime.goexit (not shown, as in Go's profiles), mcall, mstart and
 * rt0_go; at systemstack and morestack it goes on in the goroutine's
 * frames, which the kernel walked for the same sample by frame pointers
 * (Go keeps them; s->user, innermost first, [0] the sampled instruction):
 * its entries after the return address into the switch.  The function
 * that called the switch has no frame record of its own there (the
 * kernel's chain goes from the switch to that function's caller): it is
 * the target of the direct call before the next return address, when
 * that is one.  Without the chain the stack ends at the switch.  Returns
 * the new n. */
static uint32_t go_stack(struct sp_collect *c, struct sp_proc *pr, struct sp_unwind *u, uint64_t *pcs,
			 uint32_t nk, uint32_t n, int truncated, const struct sp_perf_sample *s)
{
	const uint32_t *f;
	int go_leaf, go_root;
	sp_symbols_user_go(c->syms, u, pr->maps, pr->pid, pcs[nk], &f, &go_leaf);
	sp_symbols_user_go(c->syms, u, pr->maps, pr->pid, pcs[n - 1], &f, &go_root);
	if (go_leaf == SP_GO_NONE && go_root == SP_GO_NONE)
		return n;
	/* Only the sampled pc (a file without CFI: built with -ldflags=-w):
	 * Go's own way, each frame's size from its table, through the stack
	 * copy. */
	if (n == nk + 1 && truncated && go_leaf != SP_GO_NONE && s->has_regs) {
		uint64_t base = s->regs[SP_REG_SP], sp = base, ra;
		int64_t d, next;
		int ok = sp_symbols_go_spdelta(c->syms, pr->maps, pr->pid, pcs[nk], &d);
		/* a return address into Go code (its frame size known) only */
		while (ok && n < MAX_PCS && sp + (uint64_t)d + 8 <= base + s->stack_len) {
			memcpy(&ra, s->stack + (sp + (uint64_t)d - base), 8);
			if (!ra || !sp_symbols_go_spdelta(c->syms, pr->maps, pr->pid, ra, &next))
				break;
			pcs[n++] = ra - 1;
			sp += (uint64_t)d + 8;
			d = next;
		}
		truncated = n == nk + 1;
	}
	int spliced = 0;
	for (uint32_t i = nk; i < n; i++) {
		int go;
		sp_symbols_user_go(c->syms, u, pr->maps, pr->pid, pcs[i], &f, &go);
		if (go == SP_GO_EXIT)
			return i;
		if (go == SP_GO_TOP)
			return i + 1;
		/* A switch, or where the unwinder stopped in Go code (a file
		 * without CFI: built with -ldflags=-w): on along the chain. */
		int stopped = truncated && i == n - 1 && go != SP_GO_NONE;
		if ((go != SP_GO_SWITCH && !stopped) || spliced)
			continue;
		uint32_t m = i + 1;
		uint64_t want = i == nk && go != SP_GO_SWITCH ? pcs[i] : pcs[i] + 1; /* [0] is the sampled pc */
		for (uint32_t j = i == nk ? 0 : 1; j < s->nuser; j++)
			if (s->user[j] == want) {
				uint64_t callee;
				if (go == SP_GO_SWITCH && j + 1 < s->nuser && m < MAX_PCS &&
				    sp_symbols_go_callee(c->syms, pr->maps, pr->pid, s->user[j + 1], &callee))
					pcs[m++] = callee;
				for (j++; j < s->nuser && m < MAX_PCS; j++)
					pcs[m++] = s->user[j] - 1;
				if (go == SP_GO_SWITCH)
					c->st.go_switches++;
				break;
			}
		n = m;
		spliced = 1;
	}
	return n;
}

static void h_sample(void *ctx, const struct sp_perf_sample *s)
{
	struct sp_collect *c = ctx;
	struct thr *t = thread_get(c, (int)s->tid);
	if (!t) {
		/* A thread we have not heard of (created while attaching, or a
		 * recording that starts in its midst). */
		if (c->o.system_wide && !s->tid)
			thread_set(c, 0, 0, "swapper");
		else
			sp_collect_add_task(c, (int)s->pid, (int)s->tid);
		t = thread_get(c, (int)s->tid);
	}
	struct sp_proc *pr = sp_procs_get(c->procs, (int)s->pid, 1);
	if (c->o.system_wide && s->pid && (s->has_regs || s->nuser || s->ip < (1ULL << 63)) &&
	    sw_maps(c, pr) < 0)
		c->st.unresolved_samples++;
	else if (c->o.system_wide && s->pid && s->ip < (1ULL << 63) && !sp_maps_find(pr->maps, s->ip))
		sw_missed(c, pr, s->time);
	if (c->py && !c->o.system_wide) {
		/* A Python thread is named by its threading name (a root frame
		 * as the comm is), and the thread filter matches either.  Not
		 * system-wide: there the root is the process, as perf names it.
		 * The main thread keeps its comm as its root: its first samples
		 * (before the interpreter is found) and its last (after the
		 * threads are gone) cannot have its threading name, and a
		 * thread is one root; -t MainThread still selects it. */
		uint32_t pn = sp_pymerge_thread_name(c->py, pr->pid, pr->serial, pr->maps, (int)s->tid);
		if (pn != t->pyname) {
			t->pyname = pn;
			t->pyid = pn && t->tid != t->pid ? sp_thread_intern(c->p, t->pid, t->tid, pn) : 0;
			t->pykeep = pn && (!c->have_re || regexec(&c->re, sp_str(c->p, pn), 0, NULL, 0) == 0);
		}
	}
	if (!t->keep && !t->pykeep) {
		c->st.filtered++;
		return;
	}
	uint64_t pcs[MAX_PCS], sps[MAX_PCS * SP_UNWIND_KEPT];
	uint32_t n = 0, nk = 0;
	int truncated = 0;
	for (uint32_t i = 0; i < s->nkernel && n < MAX_PCS / 2; i++)
		pcs[n++] = i ? s->kernel[i] - 1 : s->kernel[i];
	nk = n;
	struct sp_unwind *u = NULL;
	enum sp_callgraph cg = c->o.callgraph;
	if (cg == SP_CG_DWARF) {
		if (!pr->user) {
			pr->user = sp_unwind_new(pr->pid, sp_symbols_mods(c->syms));
			if (c->o.system_wide)
				sp_unwind_no_debuginfo(pr->user);
		}
		u = pr->user;
		sp_unwind_sync(u, pr->maps);
	}
	/* Exact Python samples: the thread is stopped now and its stack
	 * copied with its Python frames (pymerge.h); that copy stands for the
	 * sample's.  The kernel frames of the sample go with it only when the
	 * thread is still in a system call. */
	struct sp_pystop_copy stopped;
	int exact = cg == SP_CG_DWARF && s->has_regs && c->py &&
		    sp_pymerge_stop(c->py, pr->pid, pr->serial, pr->maps, (int)s->tid, s->time, &stopped);
	if (exact && !stopped.in_syscall)
		n = nk = 0;
	uint64_t tramp = 0;
	if (exact && c->fix && stopped.len && stopped.len <= 65536) {
		if (!c->fixbuf)
			c->fixbuf = sp_xmalloc(65536);
		if (c->fix(c->fix_ctx, (int)s->tid, stopped.regs[SP_REG_SP], stopped.stack, stopped.len, c->fixbuf,
			   &tramp) > 0)
			stopped.stack = c->fixbuf;
	}
	if (cg == SP_CG_DWARF && s->has_regs) {
		/* flags 0: memory outside the stack copy is never read, live or not */
		struct sp_unwind_result r =
			exact ? sp_unwind_stack(u, (int)s->tid, stopped.regs, stopped.stack, stopped.len, 0, pcs + n,
						MAX_PCS - (int)n)
			      : sp_unwind_stack_sps(u, (int)s->tid, s->regs, s->stack, s->stack_len, 0, pcs + n,
						    c->py ? sps + n * SP_UNWIND_KEPT : NULL, NULL, MAX_PCS - (int)n);
		/* Unwinding the stop's copy ran into a return probe's trampoline
		 * that no entry read so far explains (its record is not read
		 * yet): the sample's own copy, fixed already, unwinds; the
		 * Python frames read at the stop go with it. */
		for (int k = 0; exact && tramp && k < r.n && s->stack_len; k++)
			if (pcs[n + (uint32_t)k] + 1 - tramp <= 4096) { /* a return address: pc - 1 */
				r = sp_unwind_stack(u, (int)s->tid, s->regs, s->stack, s->stack_len, 0, pcs + n,
						    MAX_PCS - (int)n);
				break;
			}
		n += (uint32_t)r.n;
		c->st.truncated += (uint64_t)r.truncated;
		truncated = r.truncated != 0;
		if (!exact && n > nk)
			n = go_stack(c, pr, u, pcs, nk, n, r.truncated, s);
	} else if (cg == SP_CG_FP && s->nuser) {
		for (uint32_t i = 0; i < s->nuser && n < MAX_PCS; i++)
			pcs[n++] = i ? s->user[i] - 1 : s->user[i];
	} else if (cg == SP_CG_DWARF && !s->has_regs && !nk) {
		c->st.no_user++; /* no user context: a kernel thread */
		return;
	} else if (!nk) {
		/* No callchain: the sampled instruction, user or kernel. */
		pcs[n++] = s->ip;
		if (s->ip >= (1ULL << 63))
			nk = n;
	}
	c->st.unwound_frames += n - nk;
	struct sp_sample smp;
	memset(&smp, 0, sizeof smp);
	smp.stack = stack_node(c, pr, u, pcs, nk, n);
	if (exact) {
		smp.stack = sp_pymerge_stopped(c->py, smp.stack, truncated);
	} else if (c->py) {
		struct sp_py_cstack cs = { s->has_regs ? s->stack : NULL, s->regs[SP_REG_SP], s->stack_len,
					   s->has_regs ? s->regs : NULL, 0, NULL, s->time };
		if (cs.data && cg == SP_CG_DWARF)
			cs.eval_end = eval_end(c, pr, u, pcs, sps, nk, n, &cs);
		smp.stack = sp_pymerge_sample(c->py, pr->pid, pr->serial, pr->maps, (int)s->tid, &cs, smp.stack,
					      truncated);
	}
	smp.thread = t->pyid ? t->pyid : t->id;
	smp.event = c->event;
	smp.time = s->time;
	smp.values[0] = 1;
	smp.values[1] = (double)s->period;
	if (c->write_failed)
		return;
	if (c->sink->sample && c->sink->sample(c->sink, c->p, &smp, &c->werr) < 0)
		c->write_failed = 1;
	c->st.samples++;
}

/* A read's samples before any is handled: their Python frames are taken
 * now (pymerge.h), not after the unwinding of the samples before them. */
static void h_early(void *ctx, const struct sp_perf_sample *s)
{
	struct sp_collect *c = ctx;
	struct sp_py_cstack cs = { s->has_regs ? s->stack : NULL, s->regs[SP_REG_SP], s->stack_len,
				   s->has_regs ? s->regs : NULL, 0, NULL, s->time };
	sp_pymerge_early(c->py, (int)s->pid, (int)s->tid, s->time, &cs);
}

void sp_collect_handler(struct sp_collect *c, struct sp_perf_handler *out)
{
	out->ctx = c;
	out->sample = h_sample;
	out->comm = h_comm;
	out->mmap = h_mmap;
	out->fork = h_fork;
	out->exit = h_exit;
	out->sched = NULL;
	out->early = c->py ? h_early : NULL;
	out->early_ctx = c;
}
