/* python.c — reader of CPython 3.11–3.13 frames from outside (python.h).
 *
 * Path through the target's memory: _PyRuntime (an exported symbol) →
 * interpreters.head → threads.head → PyThreadState.next …; a thread state
 * gives its native thread id and its innermost _PyInterpreterFrame
 * (3.11/3.12 through tstate->cframe->current_frame, 3.13 directly); frames
 * are chained by .previous.  Offsets were read from each version's DWARF
 * (pyenv's 3.11.7, 3.12.1, 3.13.0) and agree with the headers of those
 * versions; 3.13 takes them from _Py_DebugOffsets at run time. */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "python.h"

#include "elfmod.h"

/* Byte offsets of the fields the reader needs, per minor version. */
struct pyoff {
	uint32_t rt_interp_head;   /* _PyRuntimeState.interpreters.head */
	uint32_t is_threads_head;  /* PyInterpreterState.threads.head */
	uint32_t ts_next, ts_interp, ts_native_tid;
	uint32_t ts_cframe;        /* 3.11/3.12: tstate->cframe, 0 = none */
	uint32_t cf_current_frame; /* _PyCFrame.current_frame */
	uint32_t ts_current_frame; /* 3.13 */
	uint32_t fr_code, fr_previous, fr_instr, fr_is_entry /* 3.11, 0 = none */, fr_owner;
	uint32_t co_filename, co_qualname, co_linetable, co_firstlineno, co_code_adaptive;
	uint32_t ascii_size, compact_size, str_state, str_length;
	uint32_t bytes_size, bytes_sval;
	/* the GIL (struct _gil_runtime_state: last_holder +8, locked +16):
	 * 3.11 inside _PyRuntime at rt_gil; 3.12+ a pointer at is_gil of the
	 * interpreter (DWARF of pyenv's builds) */
	uint32_t rt_gil, is_gil;
	/* 3.8-3.10: a chain of PyFrameObject (f_back), one C-level eval call
	 * per frame; the thread id through the pthread_t in ts_thread_id */
	int old;          /* 0, or the line table's kind: 1 co_lnotab (3.8, 3.9), 2 co_linetable (3.10) */
	uint32_t ts_frame, ts_thread_id, fo_back, fo_code, fo_lasti;
	/* Objects (thread names, lock owners; DWARF of the same builds):
	 * sys.modules of the interpreter (3.12+: imports.modules), the
	 * thread's ident (pthread_t), the keys a class's instances share,
	 * a frame's first local slot, and the code object's slot counts
	 * (3.11+: co_nlocalsplus; before, the frame's f_valuestack tells). */
	uint32_t is_modules, ts_ident, ht_cached_keys, fr_locals, co_nlocalsplus, co_stacksize;
};

/* glibc's struct pthread: the kernel thread id at this offset on x86-64
 * (2.36: checked with DWARF of libc6-dbg).  Only used for 3.8-3.10, whose
 * thread states keep the pthread_t and not the thread id; every value
 * read is checked against /proc/PID/task. */
#define PTHREAD_TID 720

/* 3.8, 3.9, 3.10: from DWARF of pyenv's 3.8.18, 3.9.18, 3.10.13.  Before
 * 3.11 a code object has no co_qualname: co_name stands in. */
static const struct pyoff off38 = {
	.rt_interp_head = 32, .is_threads_head = 8, .ts_next = 8, .ts_interp = 16,
	.old = 1, .ts_frame = 24, .ts_thread_id = 176, .fo_back = 24, .fo_code = 32, .fo_lasti = 104,
	.co_filename = 104, .co_qualname = 112, .co_linetable = 120, .co_firstlineno = 40,
	.ascii_size = 48, .compact_size = 72, .str_state = 32, .str_length = 16, .bytes_size = 16, .bytes_sval = 32,
	.rt_gil = 1152,
	.is_modules = 56, .ts_ident = 176, .ht_cached_keys = 872, .fr_locals = 360, .co_stacksize = 32,
};
static const struct pyoff off39 = {
	.rt_interp_head = 32, .is_threads_head = 8, .ts_next = 8, .ts_interp = 16,
	.old = 1, .ts_frame = 24, .ts_thread_id = 176, .fo_back = 24, .fo_code = 32, .fo_lasti = 104,
	.co_filename = 104, .co_qualname = 112, .co_linetable = 120, .co_firstlineno = 40,
	.ascii_size = 48, .compact_size = 72, .str_state = 32, .str_length = 16, .bytes_size = 16, .bytes_sval = 32,
	.rt_gil = 352,
	.is_modules = 856, .ts_ident = 176, .ht_cached_keys = 864, .fr_locals = 360, .co_stacksize = 32,
};
static const struct pyoff off310 = {
	.rt_interp_head = 32, .is_threads_head = 8, .ts_next = 8, .ts_interp = 16,
	.old = 2, .ts_frame = 24, .ts_thread_id = 176, .fo_back = 24, .fo_code = 32, .fo_lasti = 96,
	.co_filename = 104, .co_qualname = 112, .co_linetable = 120, .co_firstlineno = 40,
	.ascii_size = 48, .compact_size = 72, .str_state = 32, .str_length = 16, .bytes_size = 16, .bytes_sval = 32,
	.rt_gil = 352,
	.is_modules = 856, .ts_ident = 176, .ht_cached_keys = 872, .fr_locals = 352, .co_stacksize = 32,
};

static const struct pyoff off311 = {
	.rt_interp_head = 40, .is_threads_head = 16, .ts_next = 8, .ts_interp = 16, .ts_native_tid = 160,
	.ts_cframe = 56, .cf_current_frame = 8,
	.fr_code = 32, .fr_previous = 48, .fr_instr = 56, .fr_is_entry = 68, .fr_owner = 69,
	.co_filename = 112, .co_qualname = 128, .co_linetable = 136, .co_firstlineno = 72, .co_code_adaptive = 184,
	.ascii_size = 48, .compact_size = 72, .str_state = 32, .str_length = 16, .bytes_size = 16, .bytes_sval = 32,
	.rt_gil = 360,
	.is_modules = 888, .ts_ident = 152, .ht_cached_keys = 872, .fr_locals = 72, .co_nlocalsplus = 76,
	.co_stacksize = 68,
};
static const struct pyoff off312 = {
	.rt_interp_head = 40, .is_threads_head = 72, .ts_next = 8, .ts_interp = 16, .ts_native_tid = 144,
	.ts_cframe = 56, .cf_current_frame = 0,
	.fr_code = 0, .fr_previous = 8, .fr_instr = 56, .fr_owner = 70,
	.co_filename = 112, .co_qualname = 128, .co_linetable = 136, .co_firstlineno = 68, .co_code_adaptive = 192,
	.ascii_size = 40, .compact_size = 56, .str_state = 32, .str_length = 16, .bytes_size = 16, .bytes_sval = 32,
	.is_gil = 384,
	.is_modules = 944, .ts_ident = 136, .ht_cached_keys = 880, .fr_locals = 72, .co_nlocalsplus = 72,
	.co_stacksize = 64,
};
/* 3.13.0's table, checked against _Py_DebugOffsets (which wins). */
static const struct pyoff off313 = {
	.rt_interp_head = 632, .is_threads_head = 7344, .ts_next = 8, .ts_interp = 16, .ts_native_tid = 160,
	.ts_current_frame = 72,
	.fr_code = 0, .fr_previous = 8, .fr_instr = 56, .fr_owner = 70,
	.co_filename = 112, .co_qualname = 128, .co_linetable = 136, .co_firstlineno = 68, .co_code_adaptive = 200,
	.ascii_size = 40, .compact_size = 56, .str_state = 32, .str_length = 16, .bytes_size = 16, .bytes_sval = 32,
	.is_gil = 16,
	.is_modules = 7656, .ts_ident = 152, .ht_cached_keys = 880, .fr_locals = 72, .co_nlocalsplus = 72,
	.co_stacksize = 64,
};

#define FRAME_OWNED_BY_CSTACK 3 /* 3.12+: the shim frame of a C-level eval call */
#define FRAME_BYTES 72          /* every field above lies in the first 72 bytes */
#define CODE_BYTES 216          /* every code-object field above, and ob_type */
#define MAX_DEPTH 4096

struct code {
	uint32_t name, file; /* string ids */
	int firstline;
	int nlocalsplus, stacksize; /* slots of a frame running it (3.11+; before: stacksize only) */
	uint64_t qual_ptr, file_ptr;  /* the str objects it was read from */
	uint32_t epoch;               /* checked against the target in this epoch */
	uint32_t lt_off, lt_len; /* line table in py->lt */
	uint32_t ncode;          /* 3.11+: code units at co_code_adaptive;
				  * 3.8-3.10: bytes of bytecode at bc */
	uint64_t bc;
	uint64_t addr;           /* the code object */
};
#define CO_CODE_OLD 48 /* 3.8-3.10: PyCodeObject.co_code (DWARF of pyenv's builds) */

struct sp_python {
	struct sp_profile *p;
	int pid, lines;
	int major, minor, micro;
	char version[24];
	struct pyoff o;
	uint64_t runtime, code_type; /* addresses in the target */
	struct sp_u64map codeidx;    /* code address -> index + 1 */
	struct code *codes;
	size_t ncodes, capcodes;
	struct sp_buf lt;            /* line tables */
	struct sp_u64map frameidx;   /* (code, line) -> frame id + 1 */
	struct sp_u64map tsidx;      /* tid -> slot in ts[] + 1 */
	uint64_t *ts;
	size_t nts, capts;
	enum sp_python_state state;
	int dbg_done; /* 3.13: _Py_DebugOffsets read */
	struct sp_python_stats st;
	uint64_t lim_reads;               /* sp_python_read_limit */
	struct sp_budget lim_time;
	int limited;
	uint64_t refused;                 /* reads the limit refused */
	struct sp_buf strbuf;
	/* threading names: thread i of names[] is (tid, string id); tid ->
	 * index + 1 in nameidx, valid when names[i].tid matches */
	struct { int tid; uint32_t name; } *names;
	size_t nnames, capnames;
	struct sp_u64map nameidx;
	struct sp_u64map seen;  /* tids asked for since the last periodic read */
	uint64_t names_at;      /* CLOCK_MONOTONIC ns of the last read, 0 never */
	uint64_t active;        /* threading._active, 0 not found yet */
	uint32_t epoch;         /* CLOCK_MONOTONIC / 100 ms: cached code objects
				 * are checked again once per epoch */
	struct sp_u64map typecls; /* type address -> class + 1 (enum tcls) */
	struct sp_buf scratch;
	/* the last stack read: per frame, the range of addresses the eval
	 * loop running it holds (sp_python_anchor) */
	uint64_t *anc;
	size_t capanc;
	/* file names: relative to the longest sys.path entry (unless full) */
	int full;
	char **syspath;
	size_t nsyspath;
	uint64_t syspath_at; /* CLOCK_MONOTONIC ns of the last read, 0 never */
	int nthreads;        /* thread states, as of nthreads_at (0 never) */
	uint32_t *bysc;      /* code indexes sorted by bytecode start */
	size_t nbysc;        /* codes sorted (== ncodes when current) */
	uint64_t nthreads_at;
	uint64_t *raw; /* sp_python_stack's raw frames (MAX_DEPTH) */
};
#define NTHREADS_REREAD_NS 200000000ull

/* ---- target memory ---- */

/* May the next read go ahead?  (sp_python_read_limit) */
static int rd_allowed(struct sp_python *py)
{
	if (!py->limited)
		return 1;
	if (!py->lim_reads || sp_budget_spent(&py->lim_time)) {
		py->refused++;
		return 0;
	}
	py->lim_reads--;
	return 1;
}

static int rd(struct sp_python *py, uint64_t addr, void *buf, size_t n)
{
	struct iovec l = { buf, n }, r = { (void *)(uintptr_t)addr, n };
	py->st.reads++;
	if (!addr || !rd_allowed(py))
		return -1;
	return process_vm_readv(py->pid, &l, 1, &r, 1, 0) == (ssize_t)n ? 0 : -1;
}

/* 3.11+ frames lie one after the other in the thread's data stack, the
 * older ones below: the frame at addr and up to WIN_BELOW bytes below it
 * (not past a page that cannot be read) are copied in one read, and the
 * next frames are found in that copy.  A Python stack cost a read per
 * frame (16 for a request handler under http.server): the most of
 * pcollect --wall's CPU on a thread-per-request server (issue 35). */
#define WIN_PAGE 4096u
#define WIN_BELOW (2 * WIN_PAGE)
struct fwin {
	uint64_t lo, hi; /* the target's [lo, hi) is in b + (lo - base) */
	uint64_t base;
	uint8_t b[WIN_BELOW + WIN_PAGE + FRAME_BYTES];
};

static const uint8_t *frame_at(struct sp_python *py, struct fwin *w, uint64_t addr)
{
	/* (a torn chain's pointer may be anything: no sum may wrap) */
	if (addr >= w->lo && addr < w->hi && w->hi - addr >= FRAME_BYTES)
		return w->b + (addr - w->base);
	py->st.reads++;
	w->lo = w->hi = 0;
	if (addr < WIN_BELOW + WIN_PAGE || addr > UINT64_MAX - WIN_PAGE || !rd_allowed(py))
		return NULL;
	/* The frame first (it must be read whole), then down to each page
	 * boundary below: the read stops at the first that fails. */
	uint64_t pf = addr & ~(uint64_t)(WIN_PAGE - 1);
	w->base = pf - WIN_BELOW;
	struct iovec l[4], r[4];
	uint64_t at[4];
	int n = 0;
	l[n] = (struct iovec){ w->b + (addr - w->base), FRAME_BYTES };
	r[n] = (struct iovec){ (void *)(uintptr_t)addr, FRAME_BYTES };
	at[n++] = addr;
	for (uint64_t top = addr, bot = pf < addr ? pf : pf - WIN_PAGE; bot >= w->base; top = bot, bot -= WIN_PAGE) {
		l[n] = (struct iovec){ w->b + (bot - w->base), top - bot };
		r[n] = (struct iovec){ (void *)(uintptr_t)bot, top - bot };
		at[n++] = bot;
	}
	ssize_t got = process_vm_readv(py->pid, l, (unsigned long)n, r, (unsigned long)n, 0);
	if (got < (ssize_t)FRAME_BYTES)
		return NULL;
	w->hi = addr + FRAME_BYTES;
	w->lo = addr;
	for (int i = 0; i < n && got >= (ssize_t)r[i].iov_len; i++) {
		got -= (ssize_t)r[i].iov_len;
		w->lo = at[i];
	}
	return w->b + (addr - w->base);
}

static int rd64(struct sp_python *py, uint64_t addr, uint64_t *v)
{
	return rd(py, addr, v, sizeof *v);
}

static uint64_t get64(const uint8_t *b, uint32_t off)
{
	uint64_t v;
	memcpy(&v, b + off, sizeof v);
	return v;
}

/* ---- the interpreter's ELF file ---- */

struct elfsyms {
	uint64_t runtime, version, code_type; /* symbol values, 0 = absent */
	uint64_t bias_vaddr;                  /* vaddr of the mapped file offset */
	int ok;
	int table; /* the walk: 1 in .dynsym, 0 in .symtab */
};

/* The interpreter's symbols (sp_elf_symbols' callback): when one table
 * had the two needed (.dynsym comes first), the next is not read. */
static int take_interp_sym(void *ctx, const struct sp_elfsym *y)
{
	struct elfsyms *es = ctx;
	if (y->dynamic != es->table && es->runtime && es->code_type)
		return 1;
	es->table = y->dynamic;
	const char *nm = y->name;
	if (!y->value || y->shndx == SHN_UNDEF || (nm[0] != '_' && nm[0] != 'P'))
		return 0;
	if (!strcmp(nm, "_PyRuntime"))
		es->runtime = y->value;
	else if (!strcmp(nm, "Py_Version"))
		es->version = y->value;
	else if (!strcmp(nm, "PyCode_Type"))
		es->code_type = y->value;
	return 0;
}

/* Symbol values of file path, and the vaddr that file offset pgoff is
 * loaded at (to turn symbol values into addresses of this mapping). */
static void elf_lookup(const char *path, uint64_t pgoff, struct elfsyms *es)
{
	memset(es, 0, sizeof *es);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	size_t np = 0;
	if (!e || elf_kind(e) != ELF_K_ELF || elf_getphdrnum(e, &np) != 0)
		goto out;
	for (size_t i = 0; i < np; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_offset <= pgoff &&
		    pgoff < ph.p_offset + ph.p_filesz) {
			es->bias_vaddr = ph.p_vaddr + (pgoff - ph.p_offset);
			es->ok = 1;
			break;
		}
	}
	if (es->ok)
		sp_elf_symbols(e, NULL, SP_ELFSYM_DYNSYM | SP_ELFSYM_SYMTAB, take_interp_sym, es);
out:
	if (e)
		elf_end(e);
	close(fd);
}

/* The interpreter's file among the mappings: a libpython, or an
 * executable called python*.  Returns the mapping, or NULL. */
static const struct sp_map *find_interp(const struct sp_maps *maps, int *is_lib)
{
	const struct sp_map *exe = NULL;
	for (size_t i = 0; i < sp_maps_count(maps); i++) {
		const struct sp_map *m = sp_maps_at(maps, i);
		const char *b = strrchr(m->path, '/');
		b = b ? b + 1 : m->path;
		if (!strncmp(b, "libpython", 9)) {
			*is_lib = 1;
			return m;
		}
		if (!exe && !strncmp(b, "python", 6))
			exe = m;
	}
	*is_lib = 0;
	return exe;
}

int sp_python_in_maps(const struct sp_maps *maps)
{
	int is_lib;
	return find_interp(maps, &is_lib) != NULL;
}

int sp_python_named(const char *path)
{
	const char *b = strrchr(path, '/');
	b = b ? b + 1 : path;
	return !strncmp(b, "python", 6) || !strncmp(b, "libpython", 9);
}

/* "X.Y" from a name like libpython3.11.so.1.0 or python3.11. */
static int version_from_name(const char *path, int *major, int *minor)
{
	const char *b = strrchr(path, '/');
	b = b ? b + 1 : path;
	b += !strncmp(b, "lib", 3) ? 9 : 6;
	if (b[0] < '0' || b[0] > '9' || b[1] != '.' || b[2] < '0' || b[2] > '9')
		return -1;
	*major = b[0] - '0';
	*minor = atoi(b + 2);
	return 0;
}

/* 3.13+: the offsets from _Py_DebugOffsets at the start of _PyRuntime
 * (3.13's layout: Include/internal/pycore_runtime.h), compared with the
 * shipped table.  Returns 0, or -1 with err set. */
static int debug_offsets_313(struct sp_python *py, struct sp_err *err)
{
	uint64_t d[72];
	if (rd(py, py->runtime, d, sizeof d) < 0)
		return sp_err_set(err, "cannot read _PyRuntime of Python %s", py->version);
	if (memcmp(d, "xdebugpy", 8))
		return sp_err_set(err, "Python %s has no _Py_DebugOffsets cookie at _PyRuntime: layout unknown",
				  py->version);
	if ((d[1] >> 16) != (uint64_t)(py->major << 8 | py->minor))
		return sp_err_set(err, "Python %s: _Py_DebugOffsets is of version %#llx", py->version,
				  (unsigned long long)d[1]);
	if (d[2])
		return sp_err_set(err, "Python %s is a free-threaded build: not supported", py->version);
	/* Indices into 3.13's struct _Py_DebugOffsets (all uint64_t). */
	struct pyoff o = py->o;
	o.rt_interp_head = (uint32_t)d[5];
	o.is_threads_head = (uint32_t)d[9];
	o.ts_next = (uint32_t)d[21];
	o.ts_interp = (uint32_t)d[22];
	o.ts_current_frame = (uint32_t)d[23];
	o.ts_native_tid = (uint32_t)d[25];
	o.is_modules = (uint32_t)d[11];
	o.ts_ident = (uint32_t)d[24];
	o.fr_previous = (uint32_t)d[29];
	o.fr_code = (uint32_t)d[30];
	o.fr_instr = (uint32_t)d[31];
	o.fr_owner = (uint32_t)d[33];
	o.co_filename = (uint32_t)d[35];
	o.co_qualname = (uint32_t)d[37];
	o.co_linetable = (uint32_t)d[38];
	o.co_firstlineno = (uint32_t)d[39];
	o.co_code_adaptive = (uint32_t)d[43];
	o.bytes_size = (uint32_t)d[65];
	o.bytes_sval = (uint32_t)d[66];
	o.str_state = (uint32_t)d[68];
	o.str_length = (uint32_t)d[69];
	o.ascii_size = (uint32_t)d[70];
	if (o.fr_owner + 1 > FRAME_BYTES || o.fr_instr + 8 > FRAME_BYTES || o.co_code_adaptive > CODE_BYTES ||
	    o.co_linetable + 8 > CODE_BYTES || o.co_qualname + 8 > CODE_BYTES)
		return sp_err_set(err, "Python %s: _Py_DebugOffsets gives offsets this reader does not expect",
				  py->version);
	py->o = o; /* where they differ from the table, the run-time values win */
	py->dbg_done = 1;
	return 0;
}

struct sp_python *sp_python_open(struct sp_profile *p, int pid, const struct sp_maps *maps, int lines,
				 enum sp_python_state *state, struct sp_err *err)
{
	*state = SP_PY_NOT;
	int is_lib;
	const struct sp_map *m = find_interp(maps, &is_lib);
	if (!m)
		return NULL;
	char path[4200];
	snprintf(path, sizeof path, "%s", m->path);
	struct elfsyms es;
	elf_lookup(path, m->pgoff, &es);
	if (!es.ok) {
		/* Replaced on disk since it was mapped, or in another mount
		 * namespace: the mapping itself. */
		snprintf(path, sizeof path, "/proc/%d/map_files/%llx-%llx", pid, (unsigned long long)m->start,
			 (unsigned long long)m->end);
		elf_lookup(path, m->pgoff, &es);
	}
	if (!es.ok || (!es.runtime && !is_lib))
		return NULL; /* a program called python* that is not CPython */
	struct sp_python *py = sp_xcalloc(1, sizeof *py);
	py->p = p;
	py->pid = pid;
	py->lines = lines;
	uint64_t bias = m->start - es.bias_vaddr;
	py->runtime = es.runtime ? bias + es.runtime : 0;
	py->code_type = es.code_type ? bias + es.code_type : 0;
	sp_u64map_init(&py->codeidx);
	sp_u64map_init(&py->frameidx);
	sp_u64map_init(&py->tsidx);
	sp_buf_init(&py->lt);
	sp_buf_init(&py->strbuf);
	sp_buf_init(&py->scratch);
	sp_u64map_init(&py->nameidx);
	sp_u64map_init(&py->seen);
	sp_u64map_init(&py->typecls);
	uint64_t hex = 0;
	if (es.version && rd(py, bias + es.version, &hex, 4) == 0 && (hex >> 24) == 3) {
		py->major = (int)(hex >> 24) & 0xff;
		py->minor = (int)(hex >> 16) & 0xff;
		py->micro = (int)(hex >> 8) & 0xff;
		snprintf(py->version, sizeof py->version, "%d.%d.%d", py->major, py->minor, py->micro);
	} else if (version_from_name(m->path, &py->major, &py->minor) == 0) {
		snprintf(py->version, sizeof py->version, "%d.%d", py->major, py->minor);
	} else {
		snprintf(py->version, sizeof py->version, "of unknown version");
	}
	*state = SP_PY_REFUSED;
	if (py->major == 3 && py->minor == 8)
		py->o = off38;
	else if (py->major == 3 && py->minor == 9)
		py->o = off39;
	else if (py->major == 3 && py->minor == 10)
		py->o = off310;
	else if (py->major == 3 && py->minor == 11)
		py->o = off311;
	else if (py->major == 3 && py->minor == 12)
		py->o = off312;
	else if (py->major == 3 && py->minor == 13)
		py->o = off313;
	else {
		sp_err_set(err, "Python %s is not supported (3.8 to 3.13 are): native frames only",
			   py->version);
		sp_python_free(py);
		return NULL;
	}
	if (!py->runtime || !py->code_type) {
		sp_err_set(err, "Python %s in %s exports no _PyRuntime or PyCode_Type: native frames only",
			   py->version, m->path);
		sp_python_free(py);
		return NULL;
	}
	py->state = SP_PY_WAITING;
	if (sp_python_check(py, err) == SP_PY_REFUSED) {
		sp_python_free(py);
		return NULL;
	}
	*state = py->state;
	return py;
}

void sp_python_free(struct sp_python *py)
{
	if (!py)
		return;
	sp_u64map_release(&py->codeidx);
	sp_u64map_release(&py->frameidx);
	sp_u64map_release(&py->tsidx);
	sp_buf_release(&py->lt);
	sp_buf_release(&py->strbuf);
	sp_buf_release(&py->scratch);
	sp_u64map_release(&py->nameidx);
	sp_u64map_release(&py->seen);
	sp_u64map_release(&py->typecls);
	free(py->names);
	free(py->codes);
	free(py->anc);
	free(py->raw);
	free(py->bysc);
	for (size_t i = 0; i < py->nsyspath; i++)
		free(py->syspath[i]);
	free(py->syspath);
	free(py->ts);
	free(py);
}

const char *sp_python_version(const struct sp_python *py) { return py->version; }
const struct sp_python_stats *sp_python_stats(const struct sp_python *py) { return &py->st; }

/* The kernel thread id of thread state ts, or 0. */
static uint64_t ts_tid(struct sp_python *py, uint64_t ts)
{
	uint64_t v = 0, pt;
	if (!py->o.old) {
		if (rd64(py, ts + py->o.ts_native_tid, &v) < 0)
			return 0;
		return v;
	}
	int32_t tid = 0;
	if (rd64(py, ts + py->o.ts_thread_id, &pt) < 0 || rd(py, pt + PTHREAD_TID, &tid, 4) < 0 || tid <= 0)
		return 0;
	return (uint64_t)tid;
}

/* Is tid a thread of the process? */
static int is_task(int pid, uint64_t tid)
{
	char path[64];
	if (!tid || tid > 0x7fffffff)
		return 0;
	snprintf(path, sizeof path, "/proc/%d/task/%llu", pid, (unsigned long long)tid);
	return access(path, F_OK) == 0;
}

enum sp_python_state sp_python_check(struct sp_python *py, struct sp_err *err)
{
	if (py->state != SP_PY_WAITING)
		return py->state;
	/* _Py_DebugOffsets is initialised data: readable before start-up. */
	if (py->minor >= 13 && !py->dbg_done && debug_offsets_313(py, err) < 0)
		return py->state = SP_PY_REFUSED;
	uint64_t interp, ts;
	if (rd64(py, py->runtime + py->o.rt_interp_head, &interp) < 0)
		return sp_err_set(err, "cannot read the memory of Python %s: native frames only", py->version),
		       py->state = SP_PY_REFUSED;
	if (!interp || rd64(py, interp + py->o.is_threads_head, &ts) < 0 || !ts)
		return SP_PY_WAITING; /* not started yet */
	/* The thread list must hold together: each state points back at the
	 * interpreter, and one names a live thread of the process. */
	int live = 0, k;
	for (k = 0; ts && k < 4096; k++) {
		uint64_t back = 0, tid, next = 0;
		if (rd64(py, ts + py->o.ts_interp, &back) < 0 || back != interp || rd64(py, ts + py->o.ts_next, &next) < 0)
			break;
		tid = ts_tid(py, ts);
		live += is_task(py->pid, tid);
		ts = next;
	}
	if (ts)
		return sp_err_set(err, "the memory layout of Python %s does not validate (its thread list does not "
				       "hold together): native frames only", py->version),
		       py->state = SP_PY_REFUSED;
	/* A list of threads none of which lives: a child right after fork
	 * (its parent's thread states until PyOS_AfterFork_Child). */
	if (!live)
		return SP_PY_WAITING;
	return py->state = SP_PY_READY;
}

/* ---- code objects ---- */

/* A str object's text, UTF-8, into py->strbuf: 0, or -1 when obj is not
 * a str this reader can read. */
static int str_text(struct sp_python *py, uint64_t obj)
{
	uint8_t h[256];
	sp_buf_reset(&py->strbuf);
	if (rd(py, obj, h, sizeof h) < 0 && rd(py, obj, h, py->o.compact_size + 8) < 0)
		return -1;
	int64_t len;
	uint32_t state;
	memcpy(&len, h + py->o.str_length, 8);
	memcpy(&state, h + py->o.str_state, 4);
	unsigned kind = (state >> 2) & 7, compact = (state >> 5) & 1, ascii = (state >> 6) & 1;
	if (!compact || len < 0 || len > 65536 || (kind != 1 && kind != 2 && kind != 4))
		return -1;
	uint64_t start = ascii ? py->o.ascii_size : py->o.compact_size;
	size_t nb = (size_t)len * kind;
	uint8_t *data;
	uint8_t *heap = NULL;
	if (start + nb <= sizeof h) {
		data = h + start;
	} else {
		data = heap = sp_xmalloc(nb ? nb : 1);
		if (rd(py, obj + start, data, nb) < 0) {
			free(heap);
			return -1;
		}
	}
	for (int64_t i = 0; i < len; i++) {
		uint32_t c;
		if (kind == 1)
			c = data[i];
		else if (kind == 2)
			c = (uint32_t)data[2 * i] | (uint32_t)data[2 * i + 1] << 8;
		else
			memcpy(&c, data + 4 * i, 4);
		if (c < 0x80) {
			sp_buf_addc(&py->strbuf, (char)c);
		} else if (c < 0x800) {
			sp_buf_addc(&py->strbuf, (char)(0xc0 | c >> 6));
			sp_buf_addc(&py->strbuf, (char)(0x80 | (c & 63)));
		} else if (c < 0x10000) {
			sp_buf_addc(&py->strbuf, (char)(0xe0 | c >> 12));
			sp_buf_addc(&py->strbuf, (char)(0x80 | ((c >> 6) & 63)));
			sp_buf_addc(&py->strbuf, (char)(0x80 | (c & 63)));
		} else {
			sp_buf_addc(&py->strbuf, (char)(0xf0 | (c >> 18 & 7)));
			sp_buf_addc(&py->strbuf, (char)(0x80 | ((c >> 12) & 63)));
			sp_buf_addc(&py->strbuf, (char)(0x80 | ((c >> 6) & 63)));
			sp_buf_addc(&py->strbuf, (char)(0x80 | (c & 63)));
		}
	}
	free(heap);
	sp_buf_addc(&py->strbuf, 0);
	py->strbuf.len--;
	return 0;
}

/* A str object's text, interned ("?" when it cannot be read). */
static uint32_t read_str(struct sp_python *py, uint64_t obj)
{
	if (str_text(py, obj) < 0)
		return sp_str_intern(py->p, "?", 1);
	return sp_str_intern(py->p, py->strbuf.p, py->strbuf.len);
}

static uint64_t dict_get(struct sp_python *py, uint64_t d, const char *s);
static uint64_t type_flags(struct sp_python *py, uint64_t obj, uint64_t *type);
#define TPF_LIST (1UL << 25)
#define SYSPATH_REREAD_NS 1000000000ull
#define SYSPATH_MAX 256
#define SYSPATH_RETRY_NS 20000000ull

/* sys.path of the interpreter, read anew into py->syspath (kept as it was
 * when it cannot be read). */
static void syspath_read(struct sp_python *py)
{
	uint64_t interp, mods, mod, md, list, h[4];
	py->syspath_at = sp_mono_ns();
	if (rd64(py, py->runtime + py->o.rt_interp_head, &interp) < 0 || !interp ||
	    rd64(py, interp + py->o.is_modules, &mods) < 0 || !(mod = dict_get(py, mods, "sys")) ||
	    rd64(py, mod + 16, &md) < 0 || !(list = dict_get(py, md, "path")) ||
	    !(type_flags(py, list, NULL) & TPF_LIST) || rd(py, list, h, sizeof h) < 0)
		return;
	int64_t n = (int64_t)h[2];
	if (n < 0 || n > SYSPATH_MAX)
		return;
	uint64_t items[SYSPATH_MAX];
	if (n && rd(py, h[3], items, (size_t)n * 8) < 0)
		return;
	for (size_t i = 0; i < py->nsyspath; i++)
		free(py->syspath[i]);
	py->nsyspath = 0;
	if (!py->syspath)
		py->syspath = sp_xmalloc(SYSPATH_MAX * sizeof *py->syspath);
	for (int64_t i = 0; i < n; i++) {
		if (str_text(py, items[i]) < 0 || py->strbuf.len < 2 || py->strbuf.p[0] != '/')
			continue; /* "" (the working directory) and relative entries: not used */
		size_t len = py->strbuf.len;
		while (len > 1 && py->strbuf.p[len - 1] == '/')
			len--;
		py->syspath[py->nsyspath++] = sp_xstrndup(py->strbuf.p, len);
	}
}

/* File name file (a string id) relative to the longest sys.path entry it
 * lies under, as py-spy shows it ("json/encoder.py"); itself when it lies
 * under none, or full names are asked for. */
static uint32_t short_file(struct sp_python *py, uint32_t file)
{
	if (py->full)
		return file;
	if (!py->syspath_at || sp_mono_ns() - py->syspath_at > SYSPATH_REREAD_NS)
		syspath_read(py);
	const char *f = sp_str(py->p, file);
	size_t best = 0;
	for (int again = 0; again < 2 && !best; again++) {
		/* under no entry: sys.path may have grown since (the script's
		 * folder is put first just before the script runs) */
		if (again && sp_mono_ns() - py->syspath_at > SYSPATH_RETRY_NS)
			syspath_read(py);
		else if (again)
			break;
		for (size_t i = 0; i < py->nsyspath; i++) {
			size_t n = strlen(py->syspath[i]);
			if (n > best && !strncmp(f, py->syspath[i], n) && f[n] == '/' && f[n + 1])
				best = n;
		}
	}
	if (!best)
		return file;
	return sp_str_intern(py->p, f + best + 1, strlen(f + best + 1));
}

/* The cached code object at addr, read on first sight; NULL when addr is
 * not a code object (or cannot be read). */
static const struct code *code_get(struct sp_python *py, uint64_t addr)
{
	int found;
	uint32_t i = sp_u64map_get(&py->codeidx, addr, &found);
	if (found && i && py->codes[i - 1].epoch == py->epoch)
		return &py->codes[i - 1];
	uint8_t b[CODE_BYTES];
	if (rd(py, addr, b, sizeof b) < 0 || get64(b, 8) != py->code_type)
		return NULL; /* not cached: a frame being set up may hold anything */
	if (found && i) {
		/* Seen in an earlier epoch: the same code object still, or one
		 * made at the address of a freed one (start-up compiles and
		 * frees code: a stale entry named frames "<module> (<string>)") */
		struct code *o = &py->codes[i - 1];
		int32_t fl;
		memcpy(&fl, b + py->o.co_firstlineno, 4);
		if (o->qual_ptr == get64(b, py->o.co_qualname) && o->file_ptr == get64(b, py->o.co_filename) &&
		    o->firstline == fl) {
			o->epoch = py->epoch;
			return o;
		}
	}
	struct code c;
	memset(&c, 0, sizeof c);
	c.epoch = py->epoch;
	c.addr = addr;
	c.qual_ptr = get64(b, py->o.co_qualname);
	c.file_ptr = get64(b, py->o.co_filename);
	c.name = read_str(py, get64(b, py->o.co_qualname));
	c.file = short_file(py, read_str(py, get64(b, py->o.co_filename)));
	int64_t units = (int64_t)get64(b, 16); /* ob_size: code units (3.11+) */
	c.ncode = !py->o.old && units > 0 && units < (1 << 24) ? (uint32_t)units : 0;
	if (py->o.old) {
		/* 3.8-3.10: the bytecode is the bytes object co_code */
		uint64_t cc = get64(b, CO_CODE_OLD), nb = 0;
		if (cc && rd64(py, cc + py->o.bytes_size, &nb) == 0 && nb > 0 && nb < (1 << 24)) {
			c.bc = cc + py->o.bytes_sval;
			c.ncode = (uint32_t)nb;
		}
	}
	int32_t first;
	memcpy(&first, b + py->o.co_firstlineno, 4);
	c.firstline = first;
	int32_t nl = 0, ss = 0;
	if (py->o.co_nlocalsplus)
		memcpy(&nl, b + py->o.co_nlocalsplus, 4);
	memcpy(&ss, b + py->o.co_stacksize, 4);
	c.nlocalsplus = nl >= 0 && nl < 65536 ? nl : 0;
	c.stacksize = ss >= 0 && ss < 65536 ? ss : 0;
	uint64_t lt = get64(b, py->o.co_linetable);
	int64_t ltn = 0;
	c.lt_off = (uint32_t)py->lt.len;
	if (py->lines && lt && rd(py, lt + py->o.bytes_size, &ltn, 8) == 0 && ltn > 0 && ltn < (1 << 22)) {
		sp_buf_grow(&py->lt, (size_t)ltn);
		if (rd(py, lt + py->o.bytes_sval, py->lt.p + py->lt.len, (size_t)ltn) == 0) {
			py->lt.len += (size_t)ltn;
			c.lt_len = (uint32_t)ltn;
		}
	}
	if (py->ncodes == py->capcodes) {
		py->capcodes = py->capcodes ? 2 * py->capcodes : 256;
		py->codes = sp_xrealloc(py->codes, py->capcodes * sizeof *py->codes);
	}
	py->codes[py->ncodes++] = c;
	*sp_u64map_slot(&py->codeidx, addr, &found) = (uint32_t)py->ncodes;
	py->st.code_objects++;
	return &py->codes[py->ncodes - 1];
}

static unsigned uvar(const uint8_t **p, const uint8_t *e)
{
	unsigned v = 0, sh = 0;
	uint8_t b;
	do {
		if (*p >= e || sh > 30)
			return 0;
		b = *(*p)++;
		v |= (unsigned)(b & 63) << sh;
		sh += 6;
	} while (b & 64);
	return v;
}

static int svar(const uint8_t **p, const uint8_t *e)
{
	unsigned u = uvar(p, e);
	return u & 1 ? -(int)(u >> 1) : (int)(u >> 1);
}

int sp_python_line(const uint8_t *t, size_t n, int firstline, int addr)
{
	const uint8_t *p = t, *e = t + n;
	int line = firstline, cur = 0;
	while (p < e) {
		uint8_t b = *p++;
		if (!(b & 0x80))
			return -1; /* lost sync: not a location table */
		int code = (b >> 3) & 15, len = (b & 7) + 1, ln = line, none = 0;
		if (code == 15) {
			none = 1;
		} else if (code == 14) {
			ln += svar(&p, e);
			uvar(&p, e);
			uvar(&p, e);
			uvar(&p, e);
		} else if (code == 13) {
			ln += svar(&p, e);
		} else if (code >= 10) {
			ln += code - 10;
			p += 2;
		} else {
			p += 1;
		}
		if (!none)
			line = ln;
		if (addr >= cur && addr < cur + len)
			return none ? -1 : line;
		cur += len;
	}
	return -1;
}

/* 3.8/3.9 co_lnotab (byte offsets, signed line steps) and 3.10's
 * co_linetable (byte-offset steps; a line step of -128: no line): the
 * line of the instruction at byte offset addr, or -1. */
static int old_line(const uint8_t *t, size_t n, int kind, int line, int addr)
{
	if (kind == 1) {
		int a = 0;
		for (size_t i = 0; i + 1 < n; i += 2) {
			a += t[i];
			if (a > addr)
				break;
			line += (int8_t)t[i + 1];
		}
		return line;
	}
	int start = 0, cur = -1;
	for (size_t i = 0; i + 1 < n; i += 2) {
		int end = start + t[i];
		if ((int8_t)t[i + 1] != -128) {
			line += (int8_t)t[i + 1];
			cur = line;
		} else {
			cur = -1;
		}
		if (addr >= start && addr < end)
			return cur;
		start = end;
	}
	return -1;
}

/* The frame id of code c at instruction pointer instr (3.11+), or at
 * f_lasti = instr (3.8-3.10). */
static uint32_t frame_of(struct sp_python *py, uint64_t addr, const struct code *c, uint64_t instr)
{
	int line = 0;
	if (py->lines && py->o.old) {
		int32_t lasti = (int32_t)instr;
		line = c->firstline > 0 ? c->firstline : 0;
		if (lasti >= 0 && c->lt_len) {
			int l = old_line((const uint8_t *)py->lt.p + c->lt_off, c->lt_len, py->o.old, c->firstline,
					 py->o.old == 2 ? 2 * lasti : lasti);
			if (l > 0)
				line = l;
		}
	} else if (py->lines) {
		int64_t lasti = ((int64_t)instr - (int64_t)(addr + py->o.co_code_adaptive)) / 2;
		line = c->firstline > 0 ? c->firstline : 0;
		if (lasti >= 0 && lasti < (1 << 24) && c->lt_len) {
			int l = sp_python_line((const uint8_t *)py->lt.p + c->lt_off, c->lt_len, c->firstline, (int)lasti);
			if (l > 0)
				line = l;
		}
	}
	/* by the code's entry, not its address: an address can be reused */
	uint64_t key = (uint64_t)(c - py->codes) | ((uint64_t)(line & 0xfffff) << 44);
	int found, cacheable = line < 0xfffff;
	if (cacheable) {
		uint32_t id = sp_u64map_get(&py->frameidx, key, &found);
		if (found)
			return id - 1;
	}
	struct sp_frame f = { c->name, 0, c->file, (uint32_t)line, 0, SP_KIND_PYTHON };
	uint32_t id = sp_frame_intern(py->p, &f);
	if (cacheable)
		*sp_u64map_slot(&py->frameidx, key, &found) = id + 1;
	return id;
}

/* ---- threads ---- */

/* The thread state of tid: cached, checked by one read, else found by a
 * walk of the thread list.  0 when tid is not a Python thread. */
static uint64_t tstate_of(struct sp_python *py, int tid)
{
	int found;
	uint32_t i = sp_u64map_get(&py->tsidx, (uint64_t)(uint32_t)tid, &found);
	if (found && i && ts_tid(py, py->ts[i - 1]) == (uint64_t)tid)
		return py->ts[i - 1];
	uint64_t interp, ts = 0;
	if (rd64(py, py->runtime + py->o.rt_interp_head, &interp) < 0 || !interp ||
	    rd64(py, interp + py->o.is_threads_head, &ts) < 0)
		return 0;
	for (int k = 0; ts && k < 4096; k++) {
		if (ts_tid(py, ts) == (uint64_t)tid)
			break;
		if (rd64(py, ts + py->o.ts_next, &ts) < 0)
			return 0;
	}
	if (!ts)
		return 0;
	if (!found || !i) {
		if (py->nts == py->capts) {
			py->capts = py->capts ? 2 * py->capts : 16;
			py->ts = sp_xrealloc(py->ts, py->capts * sizeof *py->ts);
		}
		py->ts[py->nts++] = ts;
		*sp_u64map_slot(&py->tsidx, (uint64_t)(uint32_t)tid, &found) = (uint32_t)py->nts;
	} else {
		py->ts[i - 1] = ts;
	}
	return ts;
}

/* The anchor range of frame i of the stack being read. */
static void anc_put(struct sp_python *py, int i, uint64_t lo, uint64_t hi)
{
	if ((size_t)i >= py->capanc) {
		py->capanc = py->capanc ? 2 * py->capanc : 256;
		while ((size_t)i >= py->capanc)
			py->capanc *= 2;
		py->anc = sp_xrealloc(py->anc, 2 * py->capanc * sizeof *py->anc);
	}
	py->anc[2 * i] = lo;
	py->anc[2 * i + 1] = hi;
}

int sp_python_anchor(const struct sp_python *py, int i, uint64_t *lo, uint64_t *hi)
{
	if (i < 0 || (size_t)i >= py->capanc || !py->anc[2 * i + 1])
		return 0;
	*lo = py->anc[2 * i];
	*hi = py->anc[2 * i + 1];
	return py->o.old ? 2 : 1;
}

void sp_python_set_full_filenames(struct sp_python *py, int full) { py->full = full; }

/* The raw frame chain (sp_python_grab): per frame its code object, its
 * next instruction (3.8-3.10: f_lasti) and these flags. */
#define RAW_ENTRY 1 /* the outermost frame of a C-level eval call (3.8-3.11) */
#define RAW_SHIM 2  /* 3.12+: the shim frame of a C-level eval call */

/* 3.8-3.10: the PyFrameObject chain from tstate->frame; every frame is
 * one C-level call of the eval loop. */
static int grab_old(struct sp_python *py, uint64_t ts, uint64_t *raw, int max)
{
	uint64_t cur;
	uint8_t b[112];
	int n = 0;
	if (rd64(py, ts + py->o.ts_frame, &cur) < 0)
		return -1;
	for (; cur && n < max; n++) {
		if (rd(py, cur, b, sizeof b) < 0)
			return -1;
		int32_t lasti;
		memcpy(&lasti, b + py->o.fo_lasti, 4);
		raw[3 * n] = get64(b, py->o.fo_code);
		raw[3 * n + 1] = (uint64_t)(uint32_t)lasti;
		raw[3 * n + 2] = RAW_ENTRY;
		cur = get64(b, py->o.fo_back);
	}
	return cur && max >= MAX_DEPTH ? -1 : n; /* a cycle: frames changed under the reader */
}

int sp_python_grab(struct sp_python *py, int tid, const struct sp_py_cstack *cs, uint64_t *raw, int max)
{
	if (py->state != SP_PY_READY)
		return 0;
	if (max > MAX_DEPTH)
		max = MAX_DEPTH;
	uint64_t ts = tstate_of(py, tid), cur = 0;
	if (!ts)
		return 0;
	if (py->o.old) {
		int n = grab_old(py, ts, raw, max);
		py->st.failed += (uint64_t)(n < 0);
		return n;
	}
	if (py->o.ts_cframe) {
		uint64_t cf;
		if (rd64(py, ts + py->o.ts_cframe, &cf) < 0)
			goto fail;
		uint64_t at = cf + py->o.cf_current_frame;
		if (cs && cs->data && at >= cs->sp && at + 8 <= cs->sp + cs->len) {
			/* The eval loop's _PyCFrame is a C local: as of the sample. */
			memcpy(&cur, cs->data + (at - cs->sp), 8);
			py->st.from_cstack++;
		} else if (rd64(py, at, &cur) < 0) {
			goto fail;
		}
	} else if (rd64(py, ts + py->o.ts_current_frame, &cur) < 0) {
		goto fail;
	}
	int n = 0;
	struct fwin w;
	w.lo = w.hi = 0;
	for (; cur && n < max; n++) {
		const uint8_t *b = frame_at(py, &w, cur);
		if (!b)
			goto fail;
		raw[3 * n] = get64(b, py->o.fr_code);
		raw[3 * n + 1] = get64(b, py->o.fr_instr);
		raw[3 * n + 2] = (py->minor >= 12 && b[py->o.fr_owner] == FRAME_OWNED_BY_CSTACK ? RAW_SHIM : 0) |
				 (py->o.fr_is_entry && b[py->o.fr_is_entry] ? RAW_ENTRY : 0);
		cur = get64(b, py->o.fr_previous);
	}
	if (cur && max >= MAX_DEPTH)
		goto fail; /* a cycle: frames changed under the reader */
	return n;
fail:
	py->st.failed++;
	return -1;
}

int sp_python_frames(struct sp_python *py, const uint64_t *raw, int nraw, uint32_t *fr, uint8_t *entry, int max)
{
	py->epoch = (uint32_t)(sp_mono_ns() / 100000000u) + 1;
	int n = 0;
	for (int i = 0; i < nraw && n < max; i++) {
		uint64_t code = raw[3 * i], instr = raw[3 * i + 1], fl = raw[3 * i + 2];
		if (fl & RAW_SHIM) {
			if (n)
				entry[n - 1] = 1;
			continue;
		}
		const struct code *c = code_get(py, code);
		if (!c)
			continue; /* a frame being set up, or not a code object */
		if (py->o.old) {
			fr[n] = frame_of(py, code, c, instr);
			/* the eval call running it holds its next instruction */
			anc_put(py, n, c->bc, c->bc && c->ncode ? c->bc + c->ncode + 2 : 0);
		} else {
			if (instr < code + py->o.co_code_adaptive)
				continue; /* incomplete: it has not started running yet */
			fr[n] = frame_of(py, code, c, instr);
			/* the eval loop running it holds its next instruction */
			uint64_t lo = code + py->o.co_code_adaptive;
			anc_put(py, n, lo, c->ncode ? lo + 2 * (uint64_t)c->ncode + 2 : 0);
		}
		entry[n] = (fl & RAW_ENTRY) != 0;
		n++;
	}
	if (n)
		entry[n - 1] = 1;
	py->st.stacks++;
	py->st.frames += (uint64_t)n;
	return n;
}

int sp_python_stack(struct sp_python *py, int tid, const struct sp_py_cstack *cs, uint32_t *fr, uint8_t *entry,
		    int max)
{
	if (!py->raw)
		py->raw = sp_xmalloc(3 * MAX_DEPTH * sizeof *py->raw);
	int n = sp_python_grab(py, tid, cs, py->raw, MAX_DEPTH);
	return n > 0 ? sp_python_frames(py, py->raw, n, fr, entry, max) : n;
}

static const struct sp_python *sort_py; /* for bc_cmp: qsort has no context */

static uint64_t bc_lo(const struct sp_python *py, const struct code *c)
{
	return py->o.old ? c->bc : c->addr + py->o.co_code_adaptive;
}

static int bc_cmp(const void *a, const void *b)
{
	uint64_t x = bc_lo(sort_py, &sort_py->codes[*(const uint32_t *)a]);
	uint64_t y = bc_lo(sort_py, &sort_py->codes[*(const uint32_t *)b]);
	return x < y ? -1 : x > y;
}

uint32_t sp_python_frame_at(struct sp_python *py, uint64_t instr)
{
	if (py->state != SP_PY_READY || !py->ncodes)
		return 0;
	if (py->nbysc != py->ncodes) {
		py->bysc = sp_xrealloc(py->bysc, py->ncodes * sizeof *py->bysc);
		for (size_t i = 0; i < py->ncodes; i++)
			py->bysc[i] = (uint32_t)i;
		sort_py = py;
		qsort(py->bysc, py->ncodes, sizeof *py->bysc, bc_cmp);
		py->nbysc = py->ncodes;
	}
	/* the last code starting at or below instr */
	size_t lo = 0, hi = py->nbysc;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (bc_lo(py, &py->codes[py->bysc[mid]]) <= instr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return 0;
	const struct code *c = &py->codes[py->bysc[lo - 1]];
	uint64_t start = bc_lo(py, c);
	if (!c->ncode || instr >= start + (py->o.old ? c->ncode : 2 * (uint64_t)c->ncode))
		return 0;
	uint64_t addr = c->addr;
	if (!(c = code_get(py, addr)) || bc_lo(py, c) != start)
		return 0; /* freed since, or another code object there now */
	/* 3.8/3.9: f_lasti in bytes; 3.10: in code units; 3.11+: the pointer */
	uint64_t at = py->o.old == 1 ? instr - start : py->o.old == 2 ? (instr - start) / 2 : instr;
	return frame_of(py, addr, c, at);
}

int sp_python_threads(struct sp_python *py)
{
	uint64_t now = sp_mono_ns();
	if (py->nthreads_at && now - py->nthreads_at < NTHREADS_REREAD_NS)
		return py->nthreads;
	uint64_t interp, ts = 0;
	int n = 0;
	py->nthreads_at = now;
	if (rd64(py, py->runtime + py->o.rt_interp_head, &interp) < 0 || !interp ||
	    rd64(py, interp + py->o.is_threads_head, &ts) < 0)
		return py->nthreads = -1;
	for (; ts && n < 4096; n++)
		if (rd64(py, ts + py->o.ts_next, &ts) < 0)
			return py->nthreads = -1;
	return py->nthreads = n;
}

int sp_python_gil_holder(struct sp_python *py)
{
	if (py->state != SP_PY_READY)
		return -1;
	uint64_t interp, gil, holder, ts, v;
	int32_t locked;
	if (rd64(py, py->runtime + py->o.rt_interp_head, &interp) < 0 || !interp)
		return -1;
	if (py->o.rt_gil)
		gil = py->runtime + py->o.rt_gil;
	else if (!py->o.is_gil || rd64(py, interp + py->o.is_gil, &gil) < 0)
		return -1;
	if (rd64(py, gil + 8, &holder) < 0 || rd(py, gil + 16, &locked, 4) < 0 || (locked != 0 && locked != 1))
		return -1;
	if (!locked)
		return 0;
	/* The holder must be one of the interpreter's thread states. */
	if (rd64(py, interp + py->o.is_threads_head, &ts) < 0)
		return -1;
	for (int k = 0; ts && k < 4096; k++) {
		if (ts == holder)
			return (v = ts_tid(py, ts)) && v < 0x7fffffff ? (int)v : -1;
		if (rd64(py, ts + py->o.ts_next, &ts) < 0)
			return -1;
	}
	return -1;
}

/* ---- objects: dicts, instance attributes, ints ----
 *
 * Thread names and lock owners are read from Python objects, whose
 * layout changed more than the frames': a dict's keys table (3.8-3.10:
 * dk_size and 24-byte entries; 3.11+: log2 sizes and a kind, 16-byte
 * entries for str-only keys), and where an instance keeps its attributes
 * (3.8-3.10: a dict at tp_dictoffset; 3.11: values at obj-32 or a dict at
 * obj-24; 3.12: one word at obj-24, the values - 1 or a dict; 3.13: values inline after the
 * object, or a dict at obj-24).  Every value is checked by its type's
 * flags before it is used. */

#define TPF_INLINE_VALUES (1UL << 2) /* 3.13 */
#define TPF_MANAGED_DICT (1UL << 4)  /* 3.11+ */
#define TPF_LONG (1UL << 24)
#define TPF_UNICODE (1UL << 28)
#define TPF_DICT (1UL << 29)
#define MAX_ENTRIES 4096

/* The flags of obj's type (its address in *type); 0 when unreadable. */
static uint64_t type_flags(struct sp_python *py, uint64_t obj, uint64_t *type)
{
	uint64_t t = 0, fl = 0;
	if (!obj || rd64(py, obj + 8, &t) < 0 || !t || rd64(py, t + 168, &fl) < 0)
		return 0;
	if (type)
		*type = t;
	return fl;
}

/* Is obj a compact str equal to s?  One read for a key that differs (a
 * dict lookup compares many); the type is checked on a match. */
static int str_eq(struct sp_python *py, uint64_t obj, const char *s)
{
	size_t n = strlen(s);
	uint8_t h[128];
	if (py->o.ascii_size + n > sizeof h || rd(py, obj, h, py->o.ascii_size + n) < 0)
		return 0;
	int64_t len;
	uint32_t state;
	memcpy(&len, h + py->o.str_length, 8);
	memcpy(&state, h + py->o.str_state, 4);
	return len == (int64_t)n && ((state >> 5) & 3) == 3 /* compact, ascii */ &&
	       !memcmp(h + py->o.ascii_size, s, n) && (type_flags(py, obj, NULL) & TPF_UNICODE);
}

/* A dict's keys table, its entries read into py->scratch. */
struct dkeys {
	int64_t n;        /* entries */
	int esize, koff;  /* entry size; the key's offset in it (the value follows) */
	int hashed;       /* entries start with the key's hash */
	const uint8_t *e; /* the entries (in py->scratch) */
};

static int keys_read(struct sp_python *py, uint64_t keys, struct dkeys *k)
{
	uint8_t h[40];
	uint64_t at;
	memset(k, 0, sizeof *k);
	if (!keys || rd(py, keys, h, sizeof h) < 0)
		return -1;
	if (py->o.old) {
		int64_t size = (int64_t)get64(h, 8);
		k->n = (int64_t)get64(h, 32);
		if (size < 8 || size > (1 << 24) || (size & (size - 1)))
			return -1;
		int ix = size <= 0xff ? 1 : size <= 0xffff ? 2 : 4;
		at = keys + 40 + (uint64_t)(size * ix);
		k->esize = 24, k->koff = 8, k->hashed = 1;
	} else {
		unsigned log2size = h[8], log2ix = h[9], kind = h[10];
		k->n = (int64_t)get64(h, 24);
		if (log2size < 3 || log2size > 24 || log2ix > 27 || kind > 2)
			return -1;
		at = keys + 32 + ((uint64_t)1 << log2ix);
		k->hashed = kind == 0;
		k->esize = k->hashed ? 24 : 16;
		k->koff = k->hashed ? 8 : 0;
	}
	if (k->n < 0 || k->n > MAX_ENTRIES)
		return -1;
	sp_buf_reset(&py->scratch);
	sp_buf_grow(&py->scratch, (size_t)k->n * (size_t)k->esize + 1);
	if (k->n && rd(py, at, py->scratch.p, (size_t)k->n * (size_t)k->esize) < 0)
		return -1;
	k->e = (const uint8_t *)py->scratch.p;
	return 0;
}

/* The value of str key s among keys (values: a split table's values, 0
 * for a combined one); 0 when absent. */
static uint64_t keys_get(struct sp_python *py, uint64_t keys, uint64_t values, const char *s)
{
	struct dkeys k;
	if (keys_read(py, keys, &k) < 0)
		return 0;
	for (int64_t i = 0; i < k.n; i++) {
		const uint8_t *e = k.e + i * k.esize;
		uint64_t key = get64(e, (uint32_t)k.koff), v = get64(e, (uint32_t)k.koff + 8);
		if (!key)
			continue; /* a deleted entry */
		/* str_eq reuses no buffer of k's: k.e stays valid */
		if (!str_eq(py, key, s))
			continue;
		if (values && rd64(py, values + 8 * (uint64_t)i, &v) < 0)
			return 0;
		return v;
	}
	return 0;
}

/* Where the values of a split table start, given ma_values. */
static uint64_t values_start(const struct sp_python *py, uint64_t values)
{
	return values && py->minor >= 13 ? values + 8 : values;
}

/* d[s] for a dict d with str keys; 0 when absent or not a dict. */
static uint64_t dict_get(struct sp_python *py, uint64_t d, const char *s)
{
	uint8_t h[48];
	if (!(type_flags(py, d, NULL) & TPF_DICT) || rd(py, d, h, sizeof h) < 0)
		return 0;
	return keys_get(py, get64(h, 32), values_start(py, get64(h, 40)), s);
}

/* Where obj's instance attributes are: a keys table and its values (a
 * split table, inline values), or a dict (*dict).  Returns -1 when it has
 * none or they cannot be read. */
static int attr_table(struct sp_python *py, uint64_t obj, uint64_t *keys, uint64_t *values, uint64_t *dict)
{
	uint64_t type = 0, fl = type_flags(py, obj, &type), w = 0;
	*keys = *values = *dict = 0;
	if (!fl)
		return -1;
	if (py->minor >= 11 && (fl & TPF_MANAGED_DICT)) {
		if (rd64(py, obj - 24, &w) < 0)
			return -1;
		if (py->minor == 12 && (w & 1)) { /* tagged (values - 1): the values, not a dict */
			*values = w + 1;
			return rd64(py, type + py->o.ht_cached_keys, keys);
		}
		if (w) {
			*dict = w;
			return 0;
		}
		uint64_t v = 0;
		if (py->minor == 11 && rd64(py, obj - 32, &v) == 0 && v) {
			*values = v;
			return rd64(py, type + py->o.ht_cached_keys, keys);
		}
		if (py->minor >= 13 && (fl & TPF_INLINE_VALUES)) {
			int64_t basic;
			uint8_t hdr[4];
			if (rd(py, type + 32, &basic, 8) < 0 || basic < 16 || basic > 4096 ||
			    rd(py, obj + (uint64_t)basic, hdr, 4) < 0 || !hdr[3] /* valid */)
				return -1;
			*values = obj + (uint64_t)basic + 8;
			return rd64(py, type + py->o.ht_cached_keys, keys);
		}
		return -1;
	}
	int64_t off = 0;
	if (rd(py, type + 288, &off, 8) < 0 || off <= 0 || off > 4096 || rd64(py, obj + (uint64_t)off, &w) < 0 || !w)
		return -1;
	*dict = w;
	return 0;
}

/* The instance attribute s of obj (its __dict__ or its inline values);
 * 0 when it has none or it cannot be read. */
static uint64_t attr_get(struct sp_python *py, uint64_t obj, const char *s)
{
	uint64_t keys, values, dict;
	if (attr_table(py, obj, &keys, &values, &dict) < 0)
		return 0;
	return dict ? dict_get(py, dict, s) : keys_get(py, keys, values, s);
}

/* An int object's value (small ones: up to two 30-bit digits). */
static int long_get(struct sp_python *py, uint64_t obj, int64_t *v)
{
	uint8_t b[32];
	if (!(type_flags(py, obj, NULL) & TPF_LONG) || rd(py, obj, b, sizeof b) < 0)
		return -1;
	uint64_t tag = get64(b, 16);
	int64_t nd, neg;
	if (py->minor >= 12) {
		nd = (int64_t)(tag >> 3), neg = (tag & 3) == 2;
	} else {
		nd = (int64_t)tag < 0 ? -(int64_t)tag : (int64_t)tag, neg = (int64_t)tag < 0;
	}
	if (nd > 2)
		return -1;
	uint32_t d0, d1;
	memcpy(&d0, b + 24, 4);
	memcpy(&d1, b + 28, 4);
	int64_t x = nd == 0 ? 0 : nd == 1 ? (int64_t)(d0 & 0x3fffffff) : (int64_t)(d0 & 0x3fffffff) | (int64_t)(d1 & 0x3fffffff) << 30;
	*v = neg ? -x : x;
	return 0;
}

/* ---- threading: names and idents ---- */

/* The thread id of the thread whose threading ident (pthread_t) is
 * ident, from the thread states; 0 when none. */
static int ident_tid(struct sp_python *py, uint64_t ident)
{
	uint64_t interp, ts = 0, v;
	if (!ident || rd64(py, py->runtime + py->o.rt_interp_head, &interp) < 0 || !interp ||
	    rd64(py, interp + py->o.is_threads_head, &ts) < 0)
		return 0;
	for (int k = 0; ts && k < 4096; k++) {
		if (rd64(py, ts + py->o.ts_ident, &v) < 0)
			return 0;
		if (v == ident) {
			v = ts_tid(py, ts);
			return v && v < 0x7fffffff ? (int)v : 0;
		}
		if (rd64(py, ts + py->o.ts_next, &ts) < 0)
			return 0;
	}
	return 0;
}

/* The thread id of a threading.Thread object: its _native_id (3.8+),
 * else its _ident through the thread states; checked against /proc.
 * 0 when it has not started, has ended, or does not validate. */
static int thread_obj_tid(struct sp_python *py, uint64_t th, uint64_t ident)
{
	int64_t v = 0;
	uint64_t o = attr_get(py, th, "_native_id");
	if (o && long_get(py, o, &v) == 0 && v > 0 && v < 0x7fffffff && is_task(py->pid, (uint64_t)v))
		return (int)v;
	if (!ident && (o = attr_get(py, th, "_ident")) && long_get(py, o, &v) == 0 && v > 0)
		ident = (uint64_t)v;
	int t = ident_tid(py, ident);
	return t && is_task(py->pid, (uint64_t)t) ? t : 0;
}

/* The threading module's dict of running threads (ident -> Thread):
 * threading._active, the same object for the life of the module, so its
 * address is kept (and checked to be a dict still). */
static uint64_t threading_active(struct sp_python *py)
{
	uint64_t interp, mods, mod, md;
	if (py->active && (type_flags(py, py->active, NULL) & TPF_DICT))
		return py->active;
	if (rd64(py, py->runtime + py->o.rt_interp_head, &interp) < 0 || !interp ||
	    rd64(py, interp + py->o.is_modules, &mods) < 0)
		return 0;
	mod = dict_get(py, mods, "threading");
	if (!mod || rd64(py, mod + 16, &md) < 0) /* PyModuleObject.md_dict */
		return 0;
	return py->active = dict_get(py, md, "_active");
}

/* Read every running Thread's name anew.  forget: the periodic read, after
 * which every thread may ask for a read once more.  A read for a thread
 * asked for the first time keeps the others' marks: a thread-per-request
 * server's samples of two exited threads, handled in turn, made a read of
 * every name at nearly each sample (two thirds of pcollect --wall's reads
 * of the target, issue 35). */
static void names_read(struct sp_python *py, int forget)
{
	py->names_at = sp_mono_ns();
	py->nnames = 0;
	if (forget) {
		sp_u64map_release(&py->seen);
		sp_u64map_init(&py->seen);
	}
	uint64_t active = threading_active(py);
	uint8_t h[48];
	struct dkeys k;
	if (!active || rd(py, active, h, sizeof h) < 0 || get64(h, 40) /* split: not this dict */ ||
	    keys_read(py, get64(h, 32), &k) < 0 || !k.hashed)
		return;
	/* The entries, copied: reading the threads reuses the scratch. */
	size_t ne = (size_t)k.n;
	uint64_t *ent = sp_xmalloc((ne ? ne : 1) * 2 * sizeof *ent);
	for (size_t i = 0; i < ne; i++) {
		ent[2 * i] = get64(k.e + i * 24, 0);       /* hash(ident) == ident */
		ent[2 * i + 1] = get64(k.e + i * 24, 16);  /* the Thread */
	}
	for (size_t i = 0; i < ne; i++) {
		uint64_t th = ent[2 * i + 1], nm;
		if (!th || !(nm = attr_get(py, th, "_name")) || !(type_flags(py, nm, NULL) & TPF_UNICODE))
			continue;
		int tid = thread_obj_tid(py, th, ent[2 * i]);
		if (!tid)
			continue;
		uint32_t name = read_str(py, nm);
		if (!sp_str_len(py->p, name) || !strcmp(sp_str(py->p, name), "?"))
			continue;
		if (py->nnames == py->capnames) {
			py->capnames = py->capnames ? 2 * py->capnames : 16;
			py->names = sp_xrealloc(py->names, py->capnames * sizeof *py->names);
		}
		py->names[py->nnames].tid = tid;
		py->names[py->nnames].name = name;
		int found;
		*sp_u64map_slot(&py->nameidx, (uint64_t)(uint32_t)tid, &found) = (uint32_t)++py->nnames;
	}
	free(ent);
}

#define NAMES_REREAD_NS 2000000000ull /* renames are seen within 2 s */
#define NAMES_UNNAMED_NS 100000000ull /* an unnamed thread asks again after 100 ms */

uint32_t sp_python_thread_name(struct sp_python *py, int tid, int fresh)
{
	if (py->state != SP_PY_READY)
		return 0;
	int found;
	uint64_t key = (uint64_t)(uint32_t)tid;
	if (fresh || !py->names_at || sp_mono_ns() - py->names_at > NAMES_REREAD_NS) {
		names_read(py, 1);
	} else {
		/* A thread not named at the last read: perhaps new.  Read again
		 * at its first sample since that read, and then at most every
		 * 100 ms: its first samples may come before threading lists it
		 * (pthread's start), and it would stay unnamed for 2 s. */
		uint32_t *seen = sp_u64map_slot(&py->seen, key, &found);
		int first = !found;
		*seen = 1;
		uint32_t i = sp_u64map_get(&py->nameidx, key, &found);
		if ((!found || !i || i > py->nnames || py->names[i - 1].tid != tid) &&
		    (first || sp_mono_ns() - py->names_at > NAMES_UNNAMED_NS)) {
			names_read(py, 0); /* the other threads' marks kept */
		}
	}
	uint32_t i = sp_u64map_get(&py->nameidx, key, &found);
	return found && i && i <= py->nnames && py->names[i - 1].tid == tid ? py->names[i - 1].name : 0;
}

/* ---- what a blocked thread waits for (snapshots) ---- */

enum tcls { T_OTHER = 0, T_RLOCK, T_CFUNC, T_METHOD, T_LOCK, T_CELL, T_TUPLE };

/* The class of a type, by its tp_name (cached by address). */
static int type_cls(struct sp_python *py, uint64_t type)
{
	int found;
	uint32_t *slot = sp_u64map_slot(&py->typecls, type, &found);
	if (found)
		return (int)*slot - 1;
	char nm[32];
	uint64_t at = 0, refused = py->refused;
	int cls = T_OTHER;
	memset(nm, 0, sizeof nm);
	if (rd64(py, type + 24, &at) == 0 && at && (rd(py, at, nm, 28) == 0 || rd(py, at, nm, 14) == 0)) {
		nm[sizeof nm - 1] = 0;
		cls = !strcmp(nm, "_thread.RLock") ? T_RLOCK : !strcmp(nm, "builtin_function_or_method") ? T_CFUNC
			: !strcmp(nm, "method") ? T_METHOD : !strcmp(nm, "_thread.lock") ? T_LOCK
			: !strcmp(nm, "cell") ? T_CELL : !strcmp(nm, "tuple") ? T_TUPLE : T_OTHER;
	}
	if (py->refused != refused)
		return cls; /* the read limit: not known, not kept */
	slot = sp_u64map_slot(&py->typecls, type, &found); /* the map may have grown */
	*slot = (uint32_t)cls + 1;
	return cls;
}

/* The innermost Python frames of thread ts: their addresses and code. */
static int py_frames(struct sp_python *py, uint64_t ts, uint64_t *fa, const struct code **cc, int max)
{
	uint64_t cur = 0;
	int n = 0;
	if (py->o.old) {
		if (rd64(py, ts + py->o.ts_frame, &cur) < 0)
			return -1;
	} else if (py->o.ts_cframe) {
		uint64_t cf;
		if (rd64(py, ts + py->o.ts_cframe, &cf) < 0 || rd64(py, cf + py->o.cf_current_frame, &cur) < 0)
			return -1;
	} else if (rd64(py, ts + py->o.ts_current_frame, &cur) < 0) {
		return -1;
	}
	uint8_t b[112];
	for (int depth = 0; cur && depth < 64 && n < max; depth++) {
		uint64_t code, at = cur;
		if (py->o.old) {
			if (rd(py, cur, b, sizeof b) < 0)
				return -1;
			code = get64(b, py->o.fo_code);
			cur = get64(b, py->o.fo_back);
		} else {
			if (rd(py, cur, b, FRAME_BYTES) < 0)
				return -1;
			code = get64(b, py->o.fr_code);
			cur = get64(b, py->o.fr_previous);
			if ((py->minor >= 12 && b[py->o.fr_owner] == FRAME_OWNED_BY_CSTACK) ||
			    get64(b, py->o.fr_instr) < code + py->o.co_code_adaptive)
				continue;
		}
		const struct code *c = code_get(py, code);
		if (!c)
			continue;
		fa[n] = at;
		cc[n] = c;
		n++;
	}
	return n;
}

#define MAX_SLOTS 256

/* A frame's slots (locals, cells, then the value stack, live or stale)
 * into slots[]; returns how many. */
static int frame_slots(struct sp_python *py, uint64_t fa, const struct code *c, uint64_t *slots)
{
	uint64_t first = fa + py->o.fr_locals;
	int64_t n;
	if (py->o.old) {
		uint64_t vs = 0;
		if (rd64(py, fa + 64, &vs) < 0 || vs < first || vs - first > 8 * 65536)
			return 0;
		n = (int64_t)((vs - first) / 8) + c->stacksize;
	} else {
		n = (int64_t)c->nlocalsplus + c->stacksize;
	}
	if (n > MAX_SLOTS)
		n = MAX_SLOTS;
	if (n <= 0 || rd(py, first, slots, (size_t)n * 8) < 0)
		return 0;
	return (int)n;
}

/* An RLock held by another thread than self (an ident): obj itself, or
 * the self of a bound method (a "with" statement keeps rl.__exit__ on the
 * value stack).  Fills w, returns 1. */
static int rlock_of(struct sp_python *py, uint64_t obj, uint64_t self, struct sp_python_wait *w)
{
	uint64_t type = 0;
	for (int hop = 0; hop < 2 && obj; hop++) {
		if (!type_flags(py, obj, &type))
			return 0;
		int cls = type_cls(py, type);
		if (cls == T_CFUNC || cls == T_METHOD) {
			if (rd64(py, obj + 24, &obj) < 0) /* m_self, im_self */
				return 0;
			continue;
		}
		if (cls != T_RLOCK)
			return 0;
		uint64_t b[5];
		if (rd(py, obj, b, sizeof b) < 0 || !b[4] || b[3] == self) /* rlock_owner +24, rlock_count +32 */
			return 0;
		w->kind = SP_PYWAIT_RLOCK;
		w->obj = obj;
		w->count = b[4];
		w->owner = ident_tid(py, b[3]);
		if (!w->owner)
			snprintf(w->why, sizeof w->why, "held by thread ident 0x%llx, which is not a Python thread of the "
				 "process (it exited holding the lock)", (unsigned long long)b[3]);
		return 1;
	}
	return 0;
}

static uint32_t local_name(struct sp_python *py, uint64_t fa, const struct code *c, uint64_t obj);

static int code_is(struct sp_python *py, const struct code *c, const char *qual, const char *name)
{
	const char *n = sp_str(py->p, c->name), *f = sp_str(py->p, c->file);
	size_t fl = strlen(f);
	return (!strcmp(n, qual) || !strcmp(n, name)) && fl >= 12 && !strcmp(f + fl - 12, "threading.py");
}

int sp_python_wait(struct sp_python *py, int tid, struct sp_python_wait *w)
{
	memset(w, 0, sizeof *w);
	if (py->state != SP_PY_READY)
		return 0;
	uint64_t ts = tstate_of(py, tid), self = 0, fa[4];
	const struct code *cc[4];
	if (!ts || rd64(py, ts + py->o.ts_ident, &self) < 0)
		return 0;
	int n = py_frames(py, ts, fa, cc, 4);
	if (n <= 0)
		return 0;
	/* Thread.join: self of the join frame (3.13: Thread.join waits on
	 * its handle) or of _wait_for_tstate_lock (3.8-3.12), innermost. */
	for (int i = 0; i < n && i < 2; i++) {
		if (!code_is(py, cc[i], "Thread.join", "join") &&
		    !code_is(py, cc[i], "Thread._wait_for_tstate_lock", "_wait_for_tstate_lock"))
			continue;
		uint64_t th = 0, nm;
		if (rd64(py, fa[i] + py->o.fr_locals, &th) < 0 || !th || !(nm = attr_get(py, th, "_name")) ||
		    !(type_flags(py, nm, NULL) & TPF_UNICODE))
			return 0; /* not a Thread as expected */
		w->kind = SP_PYWAIT_JOIN;
		w->obj = th;
		w->name = read_str(py, nm);
		w->owner = thread_obj_tid(py, th, 0);
		if (!w->owner)
			snprintf(w->why, sizeof w->why, "a thread that is no longer running (it has exited or is exiting)");
		return 1;
	}
	/* RLock.acquire: an RLock held by another thread among the innermost
	 * frame's slots. */
	uint64_t slots[MAX_SLOTS];
	int ns = frame_slots(py, fa[0], cc[0], slots);
	for (int i = ns; i-- > 0;) /* the value stack first */
		if (slots[i] && rlock_of(py, slots[i], self, w)) {
			for (int f = 0; f < n && !w->name; f++)
				w->name = local_name(py, fa[f], cc[f], w->obj);
			return 1;
		}
	return 0;
}

/* ---- plain locks in snapshots: threading.Lock, Condition, Semaphore,
 * Event, queue.Queue (sp_python_lock_wait) ---- */

/* The class (enum tcls) of obj's type; T_OTHER when unreadable. */
static int cls_of(struct sp_python *py, uint64_t obj)
{
	uint64_t type = 0;
	return type_flags(py, obj, &type) ? type_cls(py, type) : T_OTHER;
}

/* obj itself, the self of a bound method (obj.__exit__ that a "with"
 * statement keeps on the value stack, obj.acquire being called), or the
 * content of a cell (a variable of an enclosing function). */
static uint64_t self_of(struct sp_python *py, uint64_t obj, int *bound)
{
	uint64_t self = 0;
	int cls = cls_of(py, obj);
	if (bound)
		*bound = 0;
	if ((cls == T_CFUNC || cls == T_METHOD) && rd64(py, obj + 24, &self) == 0) {
		/* lock.__exit__, which only a "with" keeps: m_ml->ml_name (a
		 * stale lock.acquire may linger in a value stack's dead slots) */
		uint64_t ml = 0, nm = 0;
		char name[9];
		if (bound && cls == T_CFUNC && rd64(py, obj + 16, &ml) == 0 && ml && rd64(py, ml, &nm) == 0 && nm &&
		    rd(py, nm, name, sizeof name) == 0 && !memcmp(name, "__exit__", 9))
			*bound = 1;
		return self;
	}
	if (cls == T_CELL && rd64(py, obj + 16, &self) == 0) /* a closure's variable */
		return self;
	return obj;
}

static int key_of(struct sp_python *py, uint64_t keys, uint64_t values, uint64_t value, struct sp_buf *b);
static uint32_t slot_name_of(struct sp_python *py, uint64_t fa, const struct code *c, uint64_t obj);
static int dict_name_of(struct sp_python *py, uint64_t d, uint64_t value, struct sp_buf *b);

/* The key under which obj's instance attributes hold value, into b;
 * 0 when none. */
static int attr_name_of(struct sp_python *py, uint64_t obj, uint64_t value, struct sp_buf *b)
{
	uint64_t keys, values, dict;
	if (attr_table(py, obj, &keys, &values, &dict) < 0)
		return 0;
	return dict ? dict_name_of(py, dict, value, b) : key_of(py, keys, values, value, b);
}

/* The str key under which dict d holds value, into b; 0 when none. */
static int dict_name_of(struct sp_python *py, uint64_t d, uint64_t value, struct sp_buf *b)
{
	uint8_t h[48];
	if (!(type_flags(py, d, NULL) & TPF_DICT) || rd(py, d, h, sizeof h) < 0)
		return 0;
	return key_of(py, get64(h, 32), values_start(py, get64(h, 40)), value, b);
}

/* The str key of keys (values: a split table's) whose value is value,
 * into b; 0 when none. */
static int key_of(struct sp_python *py, uint64_t keys, uint64_t values, uint64_t value, struct sp_buf *b)
{
	struct dkeys k;
	if (keys_read(py, keys, &k) < 0)
		return 0;
	uint64_t key = 0;
	for (int64_t i = 0; i < k.n && !key; i++) {
		const uint8_t *e = k.e + i * k.esize;
		uint64_t v = get64(e, (uint32_t)k.koff + 8);
		if (values && rd64(py, values + 8 * (uint64_t)i, &v) < 0)
			return 0;
		if (v == value)
			key = get64(e, (uint32_t)k.koff);
	}
	if (!key || !(type_flags(py, key, NULL) & TPF_UNICODE))
		return 0;
	uint32_t s = read_str(py, key);
	sp_buf_adds(b, sp_str(py->p, s));
	return 1;
}

/* The name (a str object) of slot i of a frame running code: 3.11+ one
 * tuple, co_localsplusnames (+96); 3.8-3.10 co_varnames (+72), then
 * co_cellvars (+88) and co_freevars (+80), as f_localsplus lays them out
 * (offsets from pyenv's builds, the same in Debian's).  0 when none. */
static uint64_t slot_name(struct sp_python *py, uint64_t code, int i)
{
	static const uint32_t old[] = { 72, 88, 80 }, new11[] = { 96 };
	const uint32_t *offs = py->minor >= 11 ? new11 : old;
	int nt = py->minor >= 11 ? 1 : 3;
	for (int k = 0; k < nt; k++) {
		uint64_t t = 0, nm = 0;
		int64_t n = 0;
		if (rd64(py, code + offs[k], &t) < 0 || !t || cls_of(py, t) != T_TUPLE || rd(py, t + 16, &n, 8) < 0 ||
		    n < 0 || n > MAX_SLOTS)
			return 0;
		if (i < n)
			return rd64(py, t + 24 + 8 * (uint64_t)i, &nm) == 0 && (type_flags(py, nm, NULL) & TPF_UNICODE) ? nm : 0;
		i -= (int)n;
	}
	return 0;
}

/* The globals dict of frame fa (PyFrameObject.f_globals before 3.11,
 * _PyInterpreterFrame.f_globals after: offsets of pyenv's builds). */
static uint64_t frame_globals(struct sp_python *py, uint64_t fa)
{
	uint64_t g = 0;
	uint32_t at = py->o.old ? 48 : py->minor == 11 ? 8 : 24;
	return rd64(py, fa + at, &g) == 0 ? g : 0;
}

/* The name frame fa (running code cc) knows obj by, the nearest first: a
 * local ("lock"), an attribute of a local ("self._lock"), or a global of
 * its module ("LOCK_IN"); a string id, 0 when none. */
static uint32_t local_name(struct sp_python *py, uint64_t fa, const struct code *c, uint64_t obj)
{
	uint32_t id = slot_name_of(py, fa, c, obj);
	if (id)
		return id;
	struct sp_buf b = SP_BUF_INIT;
	if (dict_name_of(py, frame_globals(py, fa), obj, &b))
		id = sp_str_intern(py->p, b.p, b.len);
	sp_buf_release(&b);
	return id;
}

/* local_name's locals and their attributes. */
static uint32_t slot_name_of(struct sp_python *py, uint64_t fa, const struct code *c, uint64_t obj)
{
	uint64_t code = 0, slots[MAX_SLOTS];
	if (rd64(py, fa + (py->o.old ? py->o.fo_code : py->o.fr_code), &code) < 0 || !code)
		return 0;
	int ns = frame_slots(py, fa, c, slots);
	struct sp_buf b = SP_BUF_INIT;
	uint32_t id = 0;
	for (int pass = 0; pass < 2 && !id; pass++)
		for (int i = 0; i < ns && !id; i++) {
			uint64_t v = slots[i], nm;
			if (!v || (cls_of(py, v) == T_CELL && rd64(py, v + 16, &v) < 0) || !v || (pass == 0 && v != obj) ||
			    !(nm = slot_name(py, code, i)))
				continue;
			sp_buf_reset(&b);
			sp_buf_adds(&b, sp_str(py->p, read_str(py, nm)));
			if (pass == 1) {
				sp_buf_addc(&b, '.');
				if (!attr_name_of(py, v, obj, &b))
					continue;
			}
			id = sp_str_intern(py->p, b.p, b.len);
		}
	sp_buf_release(&b);
	return id;
}

/* Code of threading.py or queue.py: frames that take locks on behalf of
 * the objects they implement. */
/* Whether path f names the file base: "base" (relative to its sys.path
 * entry, the default naming) or ".../base". */
static int file_is(const char *f, const char *base)
{
	size_t fl = strlen(f), bl = strlen(base);
	return fl >= bl && !strcmp(f + fl - bl, base) && (fl == bl || f[fl - bl - 1] == '/');
}

static int in_threading(struct sp_python *py, const struct code *c)
{
	const char *f = sp_str(py->p, c->file);
	return file_is(f, "threading.py") || file_is(f, "queue.py");
}

#define LOCK_FRAMES 8

int sp_python_lock_wait(struct sp_python *py, int tid, uint64_t futex, struct sp_python_lockwait *lw)
{
	memset(lw, 0, sizeof *lw);
	if (py->state != SP_PY_READY || !futex)
		return 0;
	uint64_t ts = tstate_of(py, tid), fa[LOCK_FRAMES], slots[MAX_SLOTS];
	const struct code *cc[LOCK_FRAMES];
	if (!ts)
		return 0;
	int n = py_frames(py, ts, fa, cc, LOCK_FRAMES);
	/* The _thread.lock whose semaphore (lock_lock, +16) is the futex,
	 * among the innermost frames' objects, the value stack first. */
	int at = -1;
	for (int f = 0; f < n && f < 3 && at < 0; f++) {
		int ns = frame_slots(py, fa[f], cc[f], slots);
		for (int i = ns; i-- > 0 && at < 0;) {
			uint64_t o = slots[i] ? self_of(py, slots[i], NULL) : 0, sem = 0;
			if (o && cls_of(py, o) == T_LOCK && rd64(py, o + 16, &sem) == 0 && sem == futex) {
				lw->lock = o;
				at = f;
			}
		}
	}
	if (at < 0)
		return 0;
	lw->kind = sp_str_intern(py->p, "Lock", 4);
	lw->obj = lw->lock;
	lw->lock_name = lw->obj_name = local_name(py, fa[at], cc[at], lw->lock);
	/* A Lock taken inside threading's or queue's own code stands for the
	 * object whose method waits: Condition.wait's waiter lock, and what
	 * calls Condition.wait (a Semaphore, an Event, a Queue): the self of
	 * each such frame, outwards, named by its class. */
	for (int f = at; f < n && in_threading(py, cc[f]); f++) {
		uint64_t self = 0, type = 0, tn = 0;
		char nm[24];
		if (frame_slots(py, fa[f], cc[f], slots) < 1 || !(self = slots[0]) || self == lw->lock ||
		    !type_flags(py, self, &type) || rd64(py, type + 24, &tn) < 0 || !tn || rd(py, tn, nm, sizeof nm) < 0)
			break;
		nm[sizeof nm - 1] = 0;
		static const char *const known[] = { "Condition", "Semaphore", "BoundedSemaphore", "Event", "Barrier",
						     "Queue", "LifoQueue", "PriorityQueue" };
		size_t k = 0;
		while (k < sizeof known / sizeof known[0] && strcmp(nm, known[k]))
			k++;
		if (k == sizeof known / sizeof known[0]) /* Thread.run calling lock.acquire, ... */
			break;
		lw->kind = sp_str_intern(py->p, nm, strlen(nm));
		lw->obj = self;
		lw->obj_name = 0;
		for (int g = f + 1; g < n && !lw->obj_name; g++)
			lw->obj_name = local_name(py, fa[g], cc[g], self);
	}
	return 1;
}

int sp_python_refs(struct sp_python *py, int tid, struct sp_python_ref *r, int max)
{
	uint64_t ts = tstate_of(py, tid), fa[LOCK_FRAMES * 4], slots[MAX_SLOTS];
	const struct code *cc[LOCK_FRAMES * 4];
	if (py->state != SP_PY_READY || !ts)
		return 0;
	int n = py_frames(py, ts, fa, cc, LOCK_FRAMES * 4), k = 0;
	for (int f = 0; f < n && k < max; f++) {
		/* threading's and queue's own frames hold the locks they wait
		 * for: not a sign of holding them */
		if (in_threading(py, cc[f]))
			continue;
		int ns = frame_slots(py, fa[f], cc[f], slots);
		for (int i = ns; i-- > 0 && k < max;) {
			int bound;
			uint64_t o = slots[i] ? self_of(py, slots[i], &bound) : 0;
			if (!o || cls_of(py, o) != T_LOCK)
				continue;
			r[k].obj = o;
			r[k].with = (uint8_t)bound;
			r[k].where = cc[f]->name;
			r[k].name = local_name(py, fa[f], cc[f], o);
			k++;
		}
	}
	return k;
}

/* ---- local variables (pcollect --snapshot --locals) ---- */

#define TPF_TUPLE (1UL << 26)
#define TPF_BYTES (1UL << 27)
#define REPR_STR 64  /* characters of a str or bytes shown */
#define REPR_ITEMS 4 /* items of a tuple, list or dict shown */

/* The name of type (tp_name), into nm. */
static void type_name(struct sp_python *py, uint64_t type, char *nm, size_t n)
{
	uint64_t at = 0;
	memset(nm, 0, n);
	if (rd64(py, type + 24, &at) < 0 || !at || (rd(py, at, nm, n - 1) < 0 && rd(py, at, nm, 16) < 0))
		snprintf(nm, n, "?");
	nm[n - 1] = 0;
	for (size_t i = 0; nm[i]; i++)
		if ((unsigned char)nm[i] < 32 || (unsigned char)nm[i] >= 127)
			nm[i] = '?';
}

static void repr_bytes(struct sp_buf *out, const uint8_t *b, size_t n, char quote)
{
	sp_buf_addc(out, quote);
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = b[i];
		if (ch == (unsigned char)quote || ch == '\\')
			sp_buf_addf(out, "\\%c", ch);
		else if (ch == '\n')
			sp_buf_adds(out, "\\n");
		else if (ch < 32 || ch == 127 || (quote == '\'' && ch >= 128))
			sp_buf_addf(out, "\\x%02x", ch);
		else
			sp_buf_addc(out, (char)ch);
	}
	sp_buf_addc(out, quote);
}

/* A short repr of obj, read from memory without running code: int,
 * float, str, bytes, bool, None, tuple/list/dict with their first items
 * and length (one level), else "<Type at 0x...>". */
static void repr(struct sp_python *py, uint64_t obj, int depth, struct sp_buf *out)
{
	uint64_t type = 0, fl = type_flags(py, obj, &type);
	char nm[48];
	if (!fl) {
		sp_buf_addf(out, "<unreadable at 0x%llx>", (unsigned long long)obj);
		return;
	}
	type_name(py, type, nm, sizeof nm);
	if (fl & (1UL << 31)) { /* a class (Py_TPFLAGS_TYPE_SUBCLASS): its name */
		type_name(py, obj, nm, sizeof nm);
		sp_buf_addf(out, "<class '%s'>", nm);
		return;
	}
	if (!strcmp(nm, "NoneType")) {
		sp_buf_adds(out, "None");
		return;
	}
	if (fl & TPF_LONG) {
		int64_t v;
		if (long_get(py, obj, &v) < 0)
			sp_buf_addf(out, "<%s at 0x%llx: a big int>", nm, (unsigned long long)obj);
		else if (!strcmp(nm, "bool"))
			sp_buf_adds(out, v ? "True" : "False");
		else
			sp_buf_addf(out, "%lld", (long long)v);
		return;
	}
	if (!strcmp(nm, "float")) {
		double d;
		if (rd(py, obj + 16, &d, 8) < 0)
			sp_buf_addf(out, "<unreadable at 0x%llx>", (unsigned long long)obj);
		else
			sp_buf_addf(out, "%.17g", d);
		return;
	}
	if (fl & TPF_UNICODE) {
		if (str_text(py, obj) < 0) {
			sp_buf_addf(out, "<%s at 0x%llx>", nm, (unsigned long long)obj);
			return;
		}
		size_t n = py->strbuf.len, cut = n;
		/* REPR_STR characters, not bytes: a cut inside UTF-8 would break it */
		size_t chars = 0;
		for (size_t i = 0; i < n; i++)
			if (((unsigned char)py->strbuf.p[i] & 0xc0) != 0x80 && chars++ == REPR_STR)
				cut = i;
		repr_bytes(out, (const uint8_t *)py->strbuf.p, cut, '\'');
		if (cut < n)
			sp_buf_addf(out, "... (%zu characters)", chars);
		return;
	}
	if (fl & TPF_BYTES) {
		int64_t n = 0;
		uint8_t b[REPR_STR];
		if (rd(py, obj + py->o.bytes_size, &n, 8) < 0 || n < 0 ||
		    rd(py, obj + py->o.bytes_sval, b, (size_t)(n < REPR_STR ? n : REPR_STR)) < 0) {
			sp_buf_addf(out, "<unreadable at 0x%llx>", (unsigned long long)obj);
			return;
		}
		sp_buf_addc(out, 'b');
		repr_bytes(out, b, (size_t)(n < REPR_STR ? n : REPR_STR), '\'');
		if (n > REPR_STR)
			sp_buf_addf(out, "... (%lld bytes)", (long long)n);
		return;
	}
	if (fl & (TPF_TUPLE | TPF_LIST)) {
		int tuple = (fl & TPF_TUPLE) != 0;
		int64_t n = 0;
		uint64_t items = obj + 24, it[REPR_ITEMS];
		if (rd(py, obj + 16, &n, 8) < 0 || n < 0 || (!tuple && rd64(py, obj + 24, &items) < 0)) {
			sp_buf_addf(out, "<unreadable at 0x%llx>", (unsigned long long)obj);
			return;
		}
		sp_buf_adds(out, tuple ? "(" : "[");
		int k = n < REPR_ITEMS ? (int)n : REPR_ITEMS;
		if (depth > 0 && n) {
			sp_buf_adds(out, "...");
		} else if (k && rd(py, items, it, (size_t)k * 8) < 0) {
			sp_buf_addf(out, "<unreadable at 0x%llx>", (unsigned long long)items);
		} else {
			for (int i = 0; i < k; i++) {
				if (i)
					sp_buf_adds(out, ", ");
				repr(py, it[i], depth + 1, out);
			}
			if (n > k)
				sp_buf_adds(out, ", ...");
			else if (tuple && n == 1)
				sp_buf_addc(out, ',');
		}
		sp_buf_adds(out, tuple ? ")" : "]");
		if (n > k || (depth > 0 && n))
			sp_buf_addf(out, " (%lld items)", (long long)n);
		return;
	}
	if (fl & TPF_DICT) {
		uint8_t h[48];
		struct dkeys k;
		if (rd(py, obj, h, sizeof h) < 0) {
			sp_buf_addf(out, "<unreadable at 0x%llx>", (unsigned long long)obj);
			return;
		}
		int64_t used = (int64_t)get64(h, 16);
		uint64_t values = values_start(py, get64(h, 40));
		if (depth > 0 || !used) {
			sp_buf_adds(out, used ? "{...}" : "{}");
			if (used)
				sp_buf_addf(out, " (%lld items)", (long long)used);
			return;
		}
		if (keys_read(py, get64(h, 32), &k) < 0) {
			sp_buf_addf(out, "<dict at 0x%llx: unreadable>", (unsigned long long)obj);
			return;
		}
		/* the entries out of py->scratch first: a key's repr reads str */
		uint64_t kv[2 * REPR_ITEMS];
		int m = 0;
		for (int64_t i = 0; i < k.n && m < REPR_ITEMS; i++) {
			const uint8_t *e = k.e + i * k.esize;
			uint64_t key = get64(e, (uint32_t)k.koff), v = get64(e, (uint32_t)k.koff + 8);
			if (values && rd64(py, values + 8 * (uint64_t)i, &v) < 0)
				v = 0;
			if (!key || !v)
				continue;
			kv[2 * m] = key;
			kv[2 * m + 1] = v;
			m++;
		}
		sp_buf_addc(out, '{');
		for (int i = 0; i < m; i++) {
			if (i)
				sp_buf_adds(out, ", ");
			repr(py, kv[2 * i], depth + 1, out);
			sp_buf_adds(out, ": ");
			repr(py, kv[2 * i + 1], depth + 1, out);
		}
		if (used > m)
			sp_buf_adds(out, ", ...");
		sp_buf_addc(out, '}');
		if (used > m)
			sp_buf_addf(out, " (%lld items)", (long long)used);
		return;
	}
	sp_buf_addf(out, "<%s at 0x%llx>", nm, (unsigned long long)obj);
}

void sp_python_read_limit(struct sp_python *py, uint64_t reads, const struct sp_budget *time)
{
	py->limited = reads || time;
	py->lim_reads = reads ? reads : UINT64_MAX;
	memset(&py->lim_time, 0, sizeof py->lim_time);
	if (time)
		py->lim_time = *time;
}

int sp_python_slots(struct sp_python *py, int tid, struct sp_buf *raw, int max, uint64_t *budget)
{
	uint64_t start = py->st.reads;
	enum { NF = 64 };
	uint64_t ts = tstate_of(py, tid), fa[NF], slots[MAX_SLOTS];
	const struct code *cc[NF];
	if (py->state != SP_PY_READY || !ts)
		return -1;
	int n = py_frames(py, ts, fa, cc, max < NF ? max : NF), f = 0;
	for (; f < n && py->st.reads - start < *budget; f++) {
		int ns = frame_slots(py, fa[f], cc[f], slots);
		/* only the locals, cells and free variables: not the value stack */
		int nl = py->o.old ? ns : (cc[f]->nlocalsplus < ns ? cc[f]->nlocalsplus : ns);
		uint64_t h[2] = { cc[f]->addr, (uint64_t)(nl > 0 ? nl : 0) };
		sp_buf_add(raw, h, sizeof h);
		if (nl > 0)
			sp_buf_add(raw, slots, (size_t)nl * 8);
	}
	uint64_t used = py->st.reads - start;
	*budget = used >= *budget ? 0 : *budget - used;
	return f;
}

int sp_python_locals(struct sp_python *py, const void *raw, size_t len, struct sp_buf *out, uint32_t *off,
		     uint16_t *nvars, int max)
{
	const uint8_t *p = raw, *e = p + len;
	int f = 0;
	for (; f < max && (size_t)(e - p) >= 16; f++) {
		uint64_t h[2], v, nm;
		memcpy(h, p, sizeof h);
		p += 16;
		if (h[1] > (uint64_t)(e - p) / 8)
			break;
		off[f] = 0;
		nvars[f] = 0;
		size_t at = out->len;
		uint64_t refused = py->refused;
		for (uint64_t i = 0; i < h[1]; i++) {
			memcpy(&v, p + 8 * i, 8);
			nm = v ? slot_name(py, h[0], (int)i) : 0;
			int cell = nm && cls_of(py, v) == T_CELL;
			if (!nm || (cell && (rd64(py, v + 16, &v) < 0 || !v)) || str_text(py, nm) < 0) {
				if (py->refused == refused)
					continue; /* unbound, the value stack (3.8-3.10), an empty cell */
				/* the read limit: the frame's other variables are not read */
				sp_buf_adds(out, "...");
				sp_buf_addc(out, 0);
				sp_buf_addf(out, "<not read at 0x%llx: budget>", (unsigned long long)v);
				sp_buf_addc(out, 0);
				py->st.not_read++;
				nvars[f]++;
				off[f] = (uint32_t)at + 1;
				return f + 1;
			}
			sp_buf_add(out, py->strbuf.p, py->strbuf.len);
			sp_buf_addc(out, 0);
			size_t vat = out->len;
			repr(py, v, 0, out);
			if (py->refused != refused) {
				/* cut short by the read limit: said, not guessed */
				out->len = vat;
				sp_buf_addf(out, "<not read at 0x%llx: budget>", (unsigned long long)v);
				py->st.not_read++;
				refused = py->refused;
			}
			sp_buf_addc(out, 0);
			if (nvars[f] < 65535)
				nvars[f]++;
		}
		p += 8 * h[1];
		if (nvars[f])
			off[f] = (uint32_t)at + 1;
	}
	return f;
}
