/* unwind.c — libdwfl unwinding of a register set + stack copy.
 *
 * libdwfl's unwinder wants a "process" whose threads it can query: we give
 * it one (dwfl_attach_state) whose only thread is the sample being
 * unwound, with callbacks that answer register and memory reads from the
 * sample.  The Dwfl lives as long as the process, so modules and their
 * CFI are parsed once (perf's unwind-libdw.c starts a Dwfl per sample).
 */
#include "unwind.h"

#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/uio.h>
#include <string.h>
#include <unistd.h>


struct reported {
	struct sp_modfile *f;
	uint64_t bias;
	Dwarf_Addr start, end; /* as libdwfl placed it */
	const char *name;      /* libdwfl's copy */
	int keep;
};

struct sp_unwind {
	int pid;
	struct sp_elfmods *mods;
	Dwfl *dwfl;
	int attached, attach_failed;
	int eh_only; /* sp_unwind_no_debuginfo */
	uint64_t gen;
	struct reported *rep;
	size_t nrep, caprep;
	/* the sample being unwound */
	int tid;
	const uint64_t *regs;
	const uint8_t *stack;
	uint64_t sp, stack_len;
	unsigned flags;
	uint64_t *pcs, *sps;
	uint8_t *known;
	int n, max;
};

static char *debuginfo_path;
static const Dwfl_Callbacks dwfl_cbs = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = sp_elf_find_debuginfo,
	.debuginfo_path = &debuginfo_path,
};

/* No separate debug file: libdwfl looks for CFI in one only when a
 * frame's .eh_frame fails to unwind it (the end of a stack copy), and
 * opening one inflates its compressed sections, per process. */
static int no_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
			char **debuginfo_file_name)
{
	return -1;
}
/* The ELF of a module that report_new reported by its range (an eh_only
 * unwinder): a reference to its file's one descriptor (sp_modfile_elf),
 * so that the file is opened, mapped and its sections (.eh_frame among
 * them) read once for all the processes that map it; each module still
 * parses the CFI entries its unwinding uses. */
static int shared_elf(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base, char **file_name,
		      Elf **elfp)
{
	struct sp_modfile *f = *userdata;
	uint64_t start, end;
	Elf *e = f ? sp_modfile_elf(f, 0, &start, &end) : NULL;
	if (e && (*elfp = elf_begin(-1, ELF_C_READ_MMAP, e)))
		*file_name = sp_xstrndup(sp_modfile_path(f), strlen(sp_modfile_path(f)));
	return -1;
}
static const Dwfl_Callbacks dwfl_cbs_eh = {
	.find_elf = shared_elf,
	.find_debuginfo = no_debuginfo,
	.debuginfo_path = &debuginfo_path,
};

void sp_unwind_no_debuginfo(struct sp_unwind *u) { u->eh_only = 1; }

static pid_t cb_next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct sp_unwind *u = arg;
	if (*thread_argp)
		return 0;
	*thread_argp = u;
	return u->tid;
}

static bool cb_get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	struct sp_unwind *u = arg;
	if (tid != u->tid)
		return false;
	*thread_argp = u;
	return true;
}

static bool cb_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct sp_unwind *u = arg;
	if (addr >= u->sp && addr - u->sp + 8 <= u->stack_len) {
		memcpy(result, u->stack + (addr - u->sp), 8);
		return true;
	}
	if (u->flags & SP_UNWIND_LIVE) {
		struct iovec l = { result, 8 }, r = { (void *)(uintptr_t)addr, 8 };
		if (process_vm_readv(u->pid, &l, 1, &r, 1, 0) == 8)
			return true;
	}
	return false;
}

static bool cb_set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct sp_unwind *u = arg;
	Dwarf_Word r[SP_NREGS];
	for (int i = 0; i < SP_NREGS; i++)
		r[i] = u->regs[i];
	return dwfl_thread_state_registers(thread, 0, SP_NREGS, r);
}

static const Dwfl_Thread_Callbacks thread_cbs = {
	.next_thread = cb_next_thread,
	.get_thread = cb_get_thread,
	.memory_read = cb_memory_read,
	.set_initial_registers = cb_set_initial_registers,
};

struct sp_unwind *sp_unwind_new(int pid, struct sp_elfmods *mods)
{
	struct sp_unwind *u = sp_xcalloc(1, sizeof *u);
	u->pid = pid;
	u->mods = mods;
	return u;
}

void sp_unwind_free(struct sp_unwind *u)
{
	if (!u)
		return;
	if (u->dwfl)
		dwfl_end(u->dwfl);
	free(u->rep);
	free(u);
}

void *sp_unwind_dwfl(struct sp_unwind *u) { return u->dwfl; }

static struct reported *find_rep(struct sp_unwind *u, struct sp_modfile *f, uint64_t bias)
{
	for (size_t i = 0; i < u->nrep; i++)
		if (u->rep[i].f == f && u->rep[i].bias == bias)
			return &u->rep[i];
	return NULL;
}

static void report_new(struct sp_unwind *u, struct sp_modfile *f, uint64_t bias)
{
	Dwfl_Module *m;
	uint64_t lo, hi;
	if (u->eh_only) {
		/* Many processes map the same files (sp_unwind_no_debuginfo):
		 * a module by its range, its ELF the file's shared one
		 * (shared_elf), not each process's own copy of every file
		 * (an mmap, its page faults, the CFI sections read again). */
		if (!sp_modfile_elf(f, bias, &lo, &hi) || !(m = dwfl_report_module(u->dwfl, sp_modfile_name(f), lo, hi)))
			return;
	} else {
		int fd = dup(sp_modfile_fd(f));
		if (fd < 0)
			return;
		/* With add_p_vaddr, base is the load bias (runtime minus ELF address). */
		if (!(m = dwfl_report_elf(u->dwfl, sp_modfile_name(f), sp_modfile_path(f), fd, bias, true))) {
			close(fd);
			return;
		}
	}
	void **ud;
	Dwarf_Addr start, end;
	const char *name = dwfl_module_info(m, &ud, &start, &end, NULL, NULL, NULL, NULL);
	*ud = f;
	if (u->nrep == u->caprep) {
		u->caprep = u->caprep ? 2 * u->caprep : 16;
		u->rep = sp_xrealloc(u->rep, u->caprep * sizeof *u->rep);
	}
	u->rep[u->nrep++] = (struct reported){ f, bias, start, end, name, 1 };
}

static Elf *self;
static void open_self(void)
{
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && !(self = elf_begin(fd, ELF_C_READ_MMAP, NULL)))
		close(fd);
}
/* This executable's ELF, opened once and kept (NULL: libdwfl picks). */
static Elf *self_elf(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, open_self);
	return self;
}

void sp_unwind_sync(struct sp_unwind *u, const struct sp_maps *maps)
{
	if (sp_maps_generation(maps) == u->gen)
		return;
	u->gen = sp_maps_generation(maps);
	if (!u->dwfl && !(u->dwfl = dwfl_begin(u->eh_only ? &dwfl_cbs_eh : &dwfl_cbs)))
		return;
	/* Which (file, bias) pairs the maps want now. */
	size_t n = sp_maps_count(maps);
	struct { struct sp_modfile *f; uint64_t bias; } *want = sp_xcalloc(n ? n : 1, sizeof *want);
	size_t nw = 0;
	for (size_t i = 0; i < n; i++) {
		const struct sp_map *m = sp_maps_at(maps, i);
		uint64_t bias;
		struct sp_modfile *f;
		if (!(m->prot & 4 /* PROT_EXEC */) || !(f = sp_elfmods_get(u->mods, u->pid, m)) ||
		    sp_modfile_bias(f, m, &bias) < 0)
			continue;
		size_t j;
		for (j = 0; j < nw; j++)
			if (want[j].f == f && want[j].bias == bias)
				break;
		if (j == nw) {
			want[nw].f = f;
			want[nw].bias = bias;
			nw++;
		}
	}
	/* Modules are only ever added, unless a mapping was replaced: then
	 * report the whole list again (libdwfl drops what is not repeated). */
	int removed = 0;
	for (size_t i = 0; i < u->nrep; i++) {
		u->rep[i].keep = 0;
		for (size_t j = 0; j < nw; j++)
			if (want[j].f == u->rep[i].f && want[j].bias == u->rep[i].bias)
				u->rep[i].keep = 1;
		removed |= !u->rep[i].keep;
	}
	if (removed) {
		dwfl_report_begin(u->dwfl);
		size_t k = 0;
		for (size_t i = 0; i < u->nrep; i++) {
			if (!u->rep[i].keep)
				continue;
			/* Same name and range: libdwfl keeps the module it has. */
			dwfl_report_module(u->dwfl, u->rep[i].name, u->rep[i].start, u->rep[i].end);
			u->rep[k++] = u->rep[i];
		}
		u->nrep = k;
	} else {
		dwfl_report_begin_add(u->dwfl);
	}
	for (size_t j = 0; j < nw; j++)
		if (!find_rep(u, want[j].f, want[j].bias))
			report_new(u, want[j].f, want[j].bias);
	dwfl_report_end(u->dwfl, NULL, NULL);
	free(want);
	if (!u->attached && !u->attach_failed && u->nrep) {
		/* The architecture is x86-64 (the registers are): taken from our
		 * own executable, not from the first module libdwfl can open,
		 * which in a process caught amid an exec may be none of
		 * x86-64's (libdw then asserts on 0 registers). */
		if (dwfl_attach_state(u->dwfl, self_elf(), u->pid, &thread_cbs, u))
			u->attached = 1;
		else
			u->attach_failed = 1;
	}
}

static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct sp_unwind *u = arg;
	Dwarf_Addr pc;
	bool activation;
	if (!dwfl_frame_pc(state, &pc, &activation))
		return DWARF_CB_ABORT;
	if (pc == 0)
		return DWARF_CB_ABORT;
	/* A return address points after the call: look up the call itself. */
	if (u->sps) {
		static const unsigned kept[SP_UNWIND_KEPT] = { SP_REG_SP, 3, 6, 12, 13, 14, 15 };
		if (u->known)
			u->known[u->n] = 0;
		for (int k = 0; k < SP_UNWIND_KEPT; k++) {
			Dwarf_Word v = 0;
			int ok = dwfl_frame_reg(state, kept[k], &v) == 0;
			u->sps[u->n * SP_UNWIND_KEPT + k] = ok ? v : 0;
			if (ok && u->known)
				u->known[u->n] |= (uint8_t)(1u << k);
		}
	}
	u->pcs[u->n++] = activation ? pc : pc - 1;
	return u->n >= u->max ? DWARF_CB_ABORT : DWARF_CB_OK;
}

struct sp_unwind_result sp_unwind_stack(struct sp_unwind *u, int tid, const uint64_t regs[SP_NREGS],
					const void *stack, size_t stack_len, unsigned flags, uint64_t *pcs,
					int max)
{
	return sp_unwind_stack_sps(u, tid, regs, stack, stack_len, flags, pcs, NULL, NULL, max);
}

struct sp_unwind_result sp_unwind_stack_sps(struct sp_unwind *u, int tid, const uint64_t regs[SP_NREGS],
					    const void *stack, size_t stack_len, unsigned flags, uint64_t *pcs,
					    uint64_t *sps, uint8_t *known, int max)
{
	struct sp_unwind_result r = { 0, 0 };
	if (max < 1)
		return r;
	u->tid = tid;
	u->regs = regs;
	u->stack = stack;
	u->stack_len = stack ? stack_len : 0;
	u->sp = regs[SP_REG_SP];
	u->flags = flags;
	u->pcs = pcs;
	u->sps = sps;
	u->known = sps ? known : NULL;
	u->n = 0;
	u->max = max;
	if (u->attached) {
		int rc = dwfl_getthread_frames(u->dwfl, tid, frame_cb, u);
		/* -1 with frames: an error (memory outside the copy, no CFI)
		 * stopped the walk; a normal end is an undefined return address. */
		if (rc == -1 && u->n < max)
			r.truncated = 1;
	}
	if (u->n == 0) {
		pcs[0] = regs[SP_REG_IP];
		if (sps) {
			static const unsigned kept[SP_UNWIND_KEPT] = { SP_REG_SP, 3, 6, 12, 13, 14, 15 };
			for (int k = 0; k < SP_UNWIND_KEPT; k++)
				sps[k] = regs[kept[k]];
			if (known)
				known[0] = (1u << SP_UNWIND_KEPT) - 1;
		}
		u->n = 1;
		r.truncated = 1;
	}
	r.n = u->n;
	return r;
}
