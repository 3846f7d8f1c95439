/* symbols.h — from addresses to frames: ELF symbol tables and DWARF (via
 * libdwfl) for executables and shared libraries, with the chain of inlined
 * functions and, optionally, file:line; /tmp/perf-PID.map for JIT code;
 * /proc/kallsyms for the kernel.
 *
 * An sp_symbols is shared by every process of a run.  It owns:
 *  - the module cache (elfmod.h): one sp_modfile per ELF file, opened once.
 *  - a memo per file address, so each distinct code address is resolved
 *    once; results are frame ids interned in the profile given at creation.
 *
 * The per-process view (which file is mapped where, the libdwfl modules
 * used for unwinding) is an sp_unwind (unwind.h) plus an sp_maps
 * (procmaps.h); symbolising reuses the unwinder's modules, so every ELF
 * file is opened and parsed once per process at most.
 */
#ifndef SP_SYMBOLS_H
#define SP_SYMBOLS_H

#include "gopclntab.h"
#include "elfmod.h"
#include "procmaps.h"
#include "profile.h"

struct sp_unwind;

struct sp_symbols_opts {
	int lines;     /* file:line on frames (one frame per line, then) */
	int no_inline; /* do not expand inlined functions */
	/* Offline (a recording, the processes are gone): never open
	 * /proc/PID/map_files.  locate (may be NULL) chooses the file of a
	 * mapping: it writes a path into buf and returns 1, returns 2 for
	 * this machine's vdso, or returns 0 to refuse the mapping; without it a path is used when its device and
	 * inode match the mapping's (or the mapping has none), and the vdso is
	 * this machine's.  See collect.h. */
	int offline;
	int (*locate)(void *ctx, int pid, const struct sp_map *m, char *buf, size_t n);
	void *locate_ctx;
};

struct sp_symbols;

struct sp_symbols *sp_symbols_new(struct sp_profile *p, const struct sp_symbols_opts *o);
void sp_symbols_free(struct sp_symbols *s); /* NULL ok */

/* The module cache the symbols read files through (elfmod.h): unwinders
 * (unwind.h) of the same run share it. */
struct sp_elfmods *sp_symbols_mods(struct sp_symbols *s);
/* sp_elfmods_get on that cache. */
struct sp_modfile *sp_symbols_modfile(struct sp_symbols *s, int pid, const struct sp_map *m);

/* The frames at user address pc of process pid, innermost first (an
 * inlined callee before the function it was inlined into).  pc is a lookup
 * address: the return address minus one for callers (sp_unwind_stack gives
 * those).  maps (may be NULL) gives the mapping, its file and load bias;
 * the file is read once for all processes (its symbols and DWARF, in a
 * libdwfl module of its own).  u (may be NULL) is asked only without
 * maps.  *frames points into the memo and stays valid until the next call.
 * Returns >= 1, or 0 for an address in a Go wrapper (sp_symbols_user_go). */
size_t sp_symbols_user(struct sp_symbols *s, struct sp_unwind *u, const struct sp_maps *maps, int pid,
		       uint64_t pc, const uint32_t **frames);
/* sp_symbols_user, and in *go what Go's traceback does at pc (SP_GO_* of
 * gopclntab.h: a stack switch, its top, goexit), SP_GO_NONE outside Go.
 * In Go code the result may be 0: an address in a wrapper, which Go's
 * profiles leave out. */
size_t sp_symbols_user_go(struct sp_symbols *s, struct sp_unwind *u, const struct sp_maps *maps, int pid,
			  uint64_t pc, const uint32_t **frames, int *go);
/* The Go executables named so far whose function table (.gopclntab) could
 * not be read, one a call: from *i on (0 at first), the next one's path in
 * *file (owned by s) and why (a static string); NULL when no more.  Their
 * code is named from their symbols, as for C. */
const char *sp_symbols_go_unread(const struct sp_symbols *s, size_t *i, const char **file);
/* In Go code named so far: the function that the direct call before
 * return address ret (of process pid) went to, 1 with *target its entry
 * address, else 0. */
int sp_symbols_go_callee(struct sp_symbols *s, const struct sp_maps *maps, int pid, uint64_t ret, uint64_t *target);
/* In Go code named so far: the frame size at pc (the return address is at
 * SP + *delta), 1 with *delta set, else 0. */
int sp_symbols_go_spdelta(struct sp_symbols *s, const struct sp_maps *maps, int pid, uint64_t pc, int64_t *delta);
/* The libdwfl module (a Dwfl_Module *) sp_symbols_user reads for the file
 * opened as path (what a locate callback chose), NULL when no file seen so
 * far was opened from path.  Owned by s. */
void *sp_symbols_file_module(struct sp_symbols *s, const char *path);
/* The file's function symbols as perf chooses them (see sp_psyms_build),
 * for the file opened as path; NULL as for sp_symbols_file_module.  Owned
 * by s. */
const struct sp_psyms *sp_symbols_file_psyms(struct sp_symbols *s, const char *path);
/* The file address of the symbol that gave frames of module (string id)
 * the name (string id) name: 1 with *start set, 0 when sp_symbols_user
 * named no frame so from a symbol table. */
int sp_symbols_symbol_start(const struct sp_symbols *s, uint32_t module, uint32_t name, uint64_t *start);
/* The frame of kernel address pc (from /proc/kallsyms, loaded on first
 * use).  Returns 1. */
size_t sp_symbols_kernel(struct sp_symbols *s, uint64_t pc, const uint32_t **frames);
/* Name kernel code [addr, addr + len) (a BPF program or trampoline that a
 * recording's KSYMBOL record announced, as perf names it); the latest
 * added wins where they overlap. */
void sp_symbols_kernel_add(struct sp_symbols *s, uint64_t addr, uint64_t len, const char *name);
/* Read /proc/kallsyms now (it takes the kernel ~0.1 s to print), rather
 * than at the first kernel frame. */
void sp_symbols_load_kernel(struct sp_symbols *s);
/* Read the kernel's symbols from path (a copy of /proc/kallsyms that
 * perf's build-id cache keeps) rather than from /proc/kallsyms, when the
 * copy has symbol ref at ref_addr (the recording's kernel, laid out as
 * then); else /proc/kallsyms after all.  Before the first kernel frame. */
void sp_symbols_kernel_file(struct sp_symbols *s, const char *path, const char *ref, uint64_t ref_addr);
/* Non-zero when /proc/kallsyms hides addresses (kernel frames then show as
 * [unknown]); valid after the first sp_symbols_kernel. */
int sp_symbols_kernel_hidden(const struct sp_symbols *s);

/* A file's function symbols as perf chooses them, by start: function
 * symbols and code labels (from .symtab, the debug file's, or .dynsym),
 * then the entries of .plt named after .rela.plt as perf 6.1 synthesizes
 * them ("memcpy@plt"; "@plt" for an IRELATIVE one); an
 * address outside every symbol's [start, start + size) has no name; a
 * zero-sized symbol ends where the next begins; of several at one address
 * perf keeps a sized one over a zero-sized one, not weak over weak, global
 * over local, fewer leading underscores, the longer name, the first in the
 * table.  Addresses are file virtual addresses. */
struct sp_psym {
	uint64_t start, end;
	uint32_t name, len; /* in the table's names */
	uint32_t idx;       /* in the ELF symbol table */
	uint8_t bind;
	uint8_t plt; /* a PLT entry, named "NAME@plt" as perf 6.1 names it */
	uint8_t aliased; /* other symbols start at the same address (perf's choice kept) */
};
struct sp_psyms {
	struct sp_psym *v;
	size_t n;
	char *names;
};
/* Build t (caller-owned, released with sp_psyms_release) from the symbol
 * table of module (a Dwfl_Module *).  each (may be NULL) is called with
 * every function symbol taken, before the choice among those at one
 * address. */
void sp_psyms_build(struct sp_psyms *t, void *module, void (*each)(void *ctx, const char *name, uint64_t start),
		    void *ctx);
/* The symbol holding file address a, NULL when none does. */
const struct sp_psym *sp_psyms_find(const struct sp_psyms *t, uint64_t a);
void sp_psyms_release(struct sp_psyms *t);

/* The function DWARF says holds pc (an address as module's Dwfl takes
 * it), as perf names a frame of a DWARF-unwound stack (through addr2line,
 * inlined calls and all): the function an inlined call is in; of several
 * subprograms over pc (assembler CUs list one per alias) the narrowest,
 * the last of equals.  Its linkage name (mangled, as the symbol table
 * spells it) or name; NULL when DWARF has none.  module: a Dwfl_Module *. */
const char *sp_dwarf_function(void *module, uint64_t pc);

#endif
