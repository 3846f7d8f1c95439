/* elfmod.h — ELF files as the capture side reads them: the module cache
 * that symbolising (symbols.h) and unwinding (unwind.h) share, build ids,
 * the C++/Rust demangler, and one walk over a file's symbol table.
 *
 * The module cache holds one sp_modfile per ELF file (by device and inode),
 * opened once for every process of a run.  A file deleted or replaced on
 * disk since it was mapped is opened through /proc/PID/map_files instead;
 * the vdso is taken from this process's own (the kernel maps the same image
 * everywhere).  Offline (a recording: the processes are gone) a locate
 * callback may choose the file of a mapping.
 */
#ifndef SP_ELFMOD_H
#define SP_ELFMOD_H

#include <stddef.h>
#include <stdint.h>

#include "procmaps.h"

struct sp_modfile;

struct sp_elfmods_opts {
	/* Never open /proc/PID/map_files.  locate (may be NULL) chooses the
	 * file of a mapping: it writes a path into buf and returns 1, returns
	 * 2 for this machine's vdso, or returns 0 to refuse the mapping;
	 * without it a path is used when its device and inode match the
	 * mapping's (or the mapping has none), and the vdso is this
	 * machine's. */
	int offline;
	int (*locate)(void *ctx, int pid, const struct sp_map *m, char *buf, size_t n);
	void *locate_ctx;
	/* Called with every file the cache creates, usable or not, as it is
	 * created (may be NULL): the symbols name it then, so names are
	 * interned in the order files are first seen, by whichever user. */
	void (*on_new)(void *ctx, struct sp_modfile *f);
	void *on_new_ctx;
};

struct sp_elfmods;

struct sp_elfmods *sp_elfmods_new(const struct sp_elfmods_opts *o);
void sp_elfmods_free(struct sp_elfmods *c); /* NULL ok */

/* The ELF file behind mapping m of process pid, opened and cached; NULL for
 * anonymous memory or a file that cannot be opened or is not ELF (the
 * failure is cached too). */
struct sp_modfile *sp_elfmods_get(struct sp_elfmods *c, int pid, const struct sp_map *m);
/* The files opened so far, usable or not, in the order they were first
 * asked for: sp_elfmods_at(c, i) for i < sp_elfmods_count(c). */
size_t sp_elfmods_count(const struct sp_elfmods *c);
struct sp_modfile *sp_elfmods_at(const struct sp_elfmods *c, size_t i);

/* f's position in that order: a caller keeps its own per-file data in an
 * array by it. */
size_t sp_modfile_index(const struct sp_modfile *f);
/* The name frames and modules are reported under (the mapped path). */
const char *sp_modfile_name(const struct sp_modfile *f);
/* An open descriptor of the file, owned by the cache (dup it to keep it);
 * -1 when the file is unusable. */
int sp_modfile_fd(const struct sp_modfile *f);
/* The path that opens it (the mapped path or a /proc/PID/map_files link). */
const char *sp_modfile_path(const struct sp_modfile *f);
/* The load bias of the file given where m maps it (runtime address minus
 * ELF virtual address).  Returns 0, or -1 when m does not map a loadable
 * segment. */
int sp_modfile_bias(const struct sp_modfile *f, const struct sp_map *m, uint64_t *bias);
/* The file's one libelf descriptor (an Elf *, typed void * so that this
 * header needs no libelf.h), opened on first use and shared: a caller
 * keeps its own reference (elf_begin(-1, ELF_C_READ_MMAP, it)).  *start
 * and *end: the range libdwfl gives the file loaded at bias.  NULL when
 * the file has no loadable segment. */
void *sp_modfile_elf(struct sp_modfile *f, uint64_t bias, uint64_t *start, uint64_t *end);

/* libdwfl's find_debuginfo callback (Dwfl_Callbacks): dwfl_standard_find_
 * debuginfo when a separate debug file is there to be found in the
 * standard places (/usr/lib/debug/.build-id/xx/yyyy.debug, the
 * .gnu_debuglink name, or NAME.debug, beside the file, in its .debug/ or
 * under /usr/lib/debug), or when DEBUGINFOD_URLS is set; else -1 at once.
 * The standard one asks debuginfod then, which loads libdebuginfod and
 * libcurl's thirty libraries (~35 million instructions, ~250 system
 * calls) once per process even with no server to ask. */
struct Dwfl_Module;
int sp_elf_find_debuginfo(struct Dwfl_Module *mod, void **userdata, const char *modname, uint64_t base,
			  const char *file_name, const char *debuglink_file, uint32_t debuglink_crc,
			  char **debuginfo_file_name);

/* The GNU build id of the regular file at path, up to 20 bytes, into out
 * (*len = 0 when the file has none).  Returns 0, or -1 when path is not a
 * readable regular ELF file (a FIFO is not opened for reading). */
int sp_elf_build_id(const char *path, uint8_t out[20], size_t *len);

/* name demangled by libstdc++'s __cxa_demangle (C++ and Rust legacy
 * "_ZN...17h<hash>E" names), malloc'd; NULL when name is not a mangled
 * name or libstdc++ cannot be loaded.  Loaded once per process, on the
 * first mangled name; safe from several threads. */
char *sp_demangle(const char *name);

/* Where the name of demangled function d[0, n) (its parameter list already
 * cut) starts: after a template function's return type ("unsigned long
 * ns::f<int>" -> "ns::f<int>"); 0 when it has none. */
size_t sp_cxx_name_start(const char *d, size_t n);
/* perf's spelling of a demangled C++ (or Rust) name, in place: Rust legacy
 * names repaired, no clone suffix, parameter list, qualifiers or return
 * type.  Returns the end of the name; *start gets its start.  The engine
 * names frames this way. */
size_t sp_cxx_spelling(char *demangled, size_t *start);

/* One symbol of a walk (sp_elf_symbols): its table entry, name, index in
 * its table, the section it is defined in, and value as a file virtual
 * address. */
struct sp_elfsym {
	const char *name;
	uint64_t value, size;
	unsigned char info, other; /* st_info, st_other */
	uint32_t shndx;
	size_t idx;
	void *elf;   /* the Elf * holding the symbol's section */
	int dynamic; /* from .dynsym */
};

enum {
	SP_ELFSYM_SYMTAB = 1,     /* .symtab */
	SP_ELFSYM_DYNSYM = 2,     /* .dynsym */
	SP_ELFSYM_DYNSYM_ELSE = 4 /* .dynsym when the file has no .symtab */
};

/* Call fn for every named symbol of the tables `which` asks for (flags
 * above) of elf (an Elf *), in section and table order; index 0 of each
 * table is skipped.  When module (a Dwfl_Module *) is given instead of
 * elf, the symbols are libdwfl's for it (the debug file's .symtab, the
 * file's own, or .dynsym, whichever libdwfl chose) and `which` is
 * ignored.  fn returns non-zero to stop.  Returns the number of symbols
 * fn was called with. */
size_t sp_elf_symbols(void *elf, void *module, unsigned which, int (*fn)(void *ctx, const struct sp_elfsym *s),
		      void *ctx);

#endif
