/* Unit tests of perf's symbol choice (sp_psyms_build, lib/capture/symbols.c) on a
 * real library of the machine, libm.so.6, as perf 6.1 names its code:
 * a PLT entry "NAME@plt", nothing named _init over .init/.plt, and _fini
 * (a zero-sized last symbol, in .fini) stretched to the next page, as
 * perf names a sample there (seen in a CI run: a page fault in
 * __run_exit_handlers -> libm's _fini).  _fini is in the debug file only
 * (libc6-dbg); without it that check prints a skip line saying so.  And
 * libc's aliases: perf's choice without inlined frames, DWARF's with them. */
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols.h"

#include "unit.h"

static const char *const libm_paths[] = { "/lib/x86_64-linux-gnu/libm.so.6", "/usr/lib/x86_64-linux-gnu/libm.so.6",
					  "/lib64/libm.so.6", NULL };

/* The address and size of section name of path's ELF; 0 when absent. */
static int section(const char *path, const char *name, uint64_t *addr, uint64_t *size, uint64_t *entsize)
{
	int fd = open(path, O_RDONLY), found = 0;
	if (fd < 0)
		return 0;
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	size_t shstrndx;
	if (e && elf_getshdrstrndx(e, &shstrndx) == 0)
		for (Elf_Scn *scn = NULL; !found && (scn = elf_nextscn(e, scn));) {
			GElf_Shdr sh;
			const char *nm;
			if (gelf_getshdr(scn, &sh) && (nm = elf_strptr(e, shstrndx, sh.sh_name)) && !strcmp(nm, name)) {
				*addr = sh.sh_addr, *size = sh.sh_size, *entsize = sh.sh_entsize;
				found = 1;
			}
		}
	if (e)
		elf_end(e);
	close(fd);
	return found;
}

static const char *name_at(const struct sp_psyms *t, uint64_t a)
{
	const struct sp_psym *ps = sp_psyms_find(t, a);
	return ps ? t->names + ps->name : NULL;
}

/* 1 when the module's symbol table (the debug file's when it has one)
 * holds name; its value into *value (may be NULL). */
static int find_symbol(Dwfl_Module *m, const char *name, uint64_t *value)
{
	int n = dwfl_module_getsymtab(m);
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		const char *nm = dwfl_module_getsym(m, i, &sym, NULL);
		if (nm && !strcmp(nm, name)) {
			if (value)
				*value = sym.st_value;
			return 1;
		}
	}
	return 0;
}
static int has_symbol(Dwfl_Module *m, const char *name) { return find_symbol(m, name, NULL); }

static const char *const libc_paths[] = { "/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6",
					  "/lib64/libc.so.6", NULL };

/* Several names at one address of libc (its debug file, libc6-dbg):
 * perf's choice without inlined frames (choose_best_symbol: the longer
 * __memmove_avx_unaligned_erms of two locals), marked aliased, and
 * DWARF's function there, the name perf prints for DWARF-unwound stacks
 * (addr2line's: __memcpy_avx_unaligned_erms; __libc_start_main_impl). */
static void libc_aliases(const Dwfl_Callbacks *cb)
{
	const char *path = NULL;
	for (int i = 0; libc_paths[i] && !path; i++)
		if (access(libc_paths[i], R_OK) == 0)
			path = libc_paths[i];
	Dwfl *dwfl = path ? dwfl_begin(cb) : NULL;
	Dwfl_Module *m = dwfl ? dwfl_report_offline(dwfl, "libc", path, -1) : NULL;
	if (dwfl)
		dwfl_report_end(dwfl, NULL, NULL);
	uint64_t mv = 0, lsm = 0;
	if (!m || !find_symbol(m, "__memmove_avx_unaligned_erms", &mv) || !find_symbol(m, "__libc_start_main_impl", &lsm)) {
		printf("skip - libc's aliases # no libc.so.6 with its debug file (libc6-dbg)\n");
		if (dwfl)
			dwfl_end(dwfl);
		return;
	}
	struct sp_psyms t = { 0 };
	sp_psyms_build(&t, m, NULL, NULL);
	Dwarf_Addr bias = 0;
	dwfl_module_getelf(m, &bias);
	const struct sp_psym *ps = sp_psyms_find(&t, mv - bias);
	const char *n = ps ? t.names + ps->name : "no symbol";
	CHECK(ps && !strcmp(n, "__memmove_avx_unaligned_erms") && ps->aliased,
	      "libc: perf's choice without inlined frames, __memmove_avx_unaligned_erms, aliased (got %s)", n);
	const char *d = sp_dwarf_function(m, mv + 16);
	CHECK(d && !strcmp(d, "__memcpy_avx_unaligned_erms"), "libc: DWARF's function there, as addr2line: "
	      "__memcpy_avx_unaligned_erms (got %s)", d ? d : "none");
	d = sp_dwarf_function(m, lsm + 16);
	CHECK(d && !strcmp(d, "__libc_start_main_impl"), "libc: DWARF's __libc_start_main_impl (got %s)", d ? d : "none");
	ps = sp_psyms_find(&t, lsm - bias);
	CHECK(ps && ps->aliased, "libc: __libc_start_main's address is aliased");
	sp_psyms_release(&t);
	dwfl_end(dwfl);
}

int main(void)
{
	elf_version(EV_CURRENT);
	const char *path = NULL;
	for (int i = 0; libm_paths[i] && !path; i++)
		if (access(libm_paths[i], R_OK) == 0)
			path = libm_paths[i];
	if (!path) {
		printf("skip - perf's symbol choice on libm.so.6 # no libm.so.6 in the usual places\n");
		return 0;
	}
	static char *debuginfo_path = NULL;
	static const Dwfl_Callbacks cb = {
		.find_elf = dwfl_build_id_find_elf,
		.find_debuginfo = dwfl_standard_find_debuginfo,
		.section_address = dwfl_offline_section_address,
		.debuginfo_path = &debuginfo_path,
	};
	Dwfl *dwfl = dwfl_begin(&cb);
	Dwfl_Module *m = dwfl ? dwfl_report_offline(dwfl, "libm", path, -1) : NULL;
	CHECK(m, "libdwfl opens %s", path);
	if (!m)
		return failed;
	dwfl_report_end(dwfl, NULL, NULL);
	struct sp_psyms t = { 0 };
	sp_psyms_build(&t, m, NULL, NULL);
	CHECK(t.n > 100, "%s: %zu function symbols", path, t.n);

	uint64_t a, sz, ent;
	if (section(path, ".init", &a, &sz, &ent)) {
		const char *n = name_at(&t, a);
		CHECK(!n || strcmp(n, "_init"), ".init: not named _init (got %s)", n ? n : "no name");
	}
	if (section(path, ".plt", &a, &sz, &ent) && ent && sz >= 2 * ent) {
		const char *n = name_at(&t, a + ent + 4);
		size_t l = n ? strlen(n) : 0;
		CHECK(l > 4 && !strcmp(n + l - 4, "@plt"), "the first .plt entry is named NAME@plt (got %s)",
		      n ? n : "no name");
	}
	if (!section(path, ".fini", &a, &sz, &ent))
		printf("skip - _fini of libm.so.6 # %s has no .fini section\n", path);
	else if (!has_symbol(m, "_fini"))
		printf("skip - _fini of libm.so.6 # no symbol _fini: the debug file (libc6-dbg) is not installed\n");
	else {
		const char *n = name_at(&t, a + 4), *past = name_at(&t, a + sz);
		CHECK(n && !strcmp(n, "_fini"), ".fini+4: named _fini as perf names it (got %s)", n ? n : "no name");
		CHECK(past && !strcmp(past, "_fini"), "past .fini's end, same page: still _fini (got %s)",
		      past ? past : "no name");
	}
	sp_psyms_release(&t);
	dwfl_end(dwfl);
	libc_aliases(&cb);
	return failed;
}
