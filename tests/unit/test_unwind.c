/* test_unwind.c — what a system-wide collector shares between processes
 * (lib/capture/symbols.c's files, lib/capture/unwind.c's modules), checked on real files:
 *  - one file mapped at two load addresses (two processes, ASLR): one
 *    cached file, one shared ELF descriptor, each process's unwinder
 *    placing the module at its own address, and an address in it named
 *    the same function in both;
 *  - a file rewritten in place (same device and inode, new contents and
 *    time) is not the cached one; another file at the same path (a new
 *    inode) neither. */
#include <fcntl.h>
#include <elfutils/libdwfl.h>
#include <dlfcn.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "collect.h"
#include "procmaps.h"
#include "profile.h"
#include "symbols.h"
#include "unwind.h"
#include "unit.h"

/* Our mapping of the executable file holding addr (from /proc/self/maps). */
static int mapping_of(uintptr_t addr, struct sp_map *out, char *path, size_t n)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[1024];
	int ok = 0;
	while (f && !ok && fgets(line, sizeof line, f)) {
		unsigned long lo, hi, off, ino;
		unsigned maj, min;
		char perm[8];
		int pos = 0;
		if (sscanf(line, "%lx-%lx %7s %lx %x:%x %lu %n", &lo, &hi, perm, &off, &maj, &min, &ino, &pos) < 7 ||
		    addr < lo || addr >= hi || perm[2] != 'x')
			continue;
		snprintf(path, n, "%s", line + pos);
		path[strcspn(path, "\n")] = 0;
		*out = (struct sp_map){ lo, hi, off, ino, maj, min, 5, path };
		ok = 1;
	}
	if (f)
		fclose(f);
	return ok;
}

static const char *name_at(struct sp_profile *p, struct sp_symbols *s, struct sp_maps *maps, uint64_t pc)
{
	const uint32_t *fr;
	size_t k = sp_symbols_user(s, NULL, maps, getpid(), pc, &fr);
	return k ? sp_str(p, sp_frame_get(p, fr[k - 1])->name) : "(none)";
}

static int copy_file(const char *from, const char *to, int flags)
{
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | flags, 0644);
	char buf[65536];
	ssize_t r;
	int ok = in >= 0 && out >= 0;
	while (ok && (r = read(in, buf, sizeof buf)) > 0)
		ok = write(out, buf, (size_t)r) == r;
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return ok ? 0 : -1;
}

int main(void)
{
	elf_version(EV_CURRENT);
	struct sp_profile *p = sp_profile_new();
	struct sp_symbols_opts so = { 0 };
	struct sp_symbols *s = sp_symbols_new(p, &so);

	/* ---- one file at two load addresses ---- */
	void *fn = dlsym(RTLD_DEFAULT, "getpid");
	struct sp_map m1;
	char path[512];
	CHECK(fn && mapping_of((uintptr_t)fn, &m1, path, sizeof path), "libc's getpid and its mapping (%s)", path);
	if (!fn || !m1.path)
		return failed;
	/* The second process: the same file 256 MiB higher (page-aligned, as
	 * ASLR places it). */
	const uint64_t shift = 256ull << 20;
	struct sp_map m2 = m1;
	m2.start += shift;
	m2.end += shift;
	struct sp_maps *maps1 = sp_maps_new(), *maps2 = sp_maps_new();
	sp_maps_add(maps1, &m1);
	sp_maps_add(maps2, &m2);
	struct sp_modfile *f1 = sp_symbols_modfile(s, getpid(), &m1), *f2 = sp_symbols_modfile(s, getpid(), &m2);
	CHECK(f1 && f1 == f2, "one file at two addresses: one cached file");
	uint64_t b1 = 0, b2 = 0, lo1 = 0, hi1 = 0, lo2 = 0, hi2 = 0;
	int biased = f1 && sp_modfile_bias(f1, &m1, &b1) == 0 && sp_modfile_bias(f1, &m2, &b2) == 0;
	CHECK(biased && b2 - b1 == shift, "the load biases differ by the shift (%#llx, %#llx)", (unsigned long long)b1,
	      (unsigned long long)b2);
	void *e1 = f1 ? sp_modfile_elf(f1, b1, &lo1, &hi1) : NULL, *e2 = f1 ? sp_modfile_elf(f1, b2, &lo2, &hi2) : NULL;
	CHECK(e1 && e1 == e2 && lo2 - lo1 == shift && hi2 - hi1 == shift && lo1 <= m1.start && hi1 >= m1.end,
	      "one ELF descriptor, its range placed at each bias");
	uint64_t pc1 = (uintptr_t)fn, pc2 = pc1 + shift;
	const char *n1 = name_at(p, s, maps1, pc1), *n2 = name_at(p, s, maps2, pc2);
	CHECK(strstr(n1, "getpid") && !strcmp(n1, n2), "getpid named at both addresses (%s, %s)", n1, n2);
	/* The unwinders of the two processes (as -a makes them): each module
	 * where its process has it, both on the one descriptor. */
	struct sp_unwind *u1 = sp_unwind_new(getpid(), sp_symbols_mods(s)), *u2 = sp_unwind_new(getpid(), sp_symbols_mods(s));
	sp_unwind_no_debuginfo(u1);
	sp_unwind_no_debuginfo(u2);
	sp_unwind_sync(u1, maps1);
	sp_unwind_sync(u2, maps2);
	Dwfl_Module *d1 = sp_unwind_dwfl(u1) ? dwfl_addrmodule(sp_unwind_dwfl(u1), pc1) : NULL;
	Dwfl_Module *d2 = sp_unwind_dwfl(u2) ? dwfl_addrmodule(sp_unwind_dwfl(u2), pc2) : NULL;
	Dwarf_Addr eb1 = 0, eb2 = 0;
	Elf *el1 = d1 ? dwfl_module_getelf(d1, &eb1) : NULL, *el2 = d2 ? dwfl_module_getelf(d2, &eb2) : NULL;
	CHECK(el1 && el1 == el2 && el1 == (Elf *)e1, "each unwinder's module of it: the one shared ELF");
	CHECK(el1 && eb1 == b1 && eb2 == b2, "... at each process's own bias (%#llx, %#llx)", (unsigned long long)eb1,
	      (unsigned long long)eb2);
	/* libdwfl's CFI of the module: a frame at getpid in each. */
	Dwarf_Addr cb1 = 0, cb2 = 0;
	Dwarf_CFI *c1 = d1 ? dwfl_module_eh_cfi(d1, &cb1) : NULL, *c2 = d2 ? dwfl_module_eh_cfi(d2, &cb2) : NULL;
	Dwarf_Frame *fr1 = NULL, *fr2 = NULL;
	CHECK(c1 && c2 && dwarf_cfi_addrframe(c1, pc1 - cb1, &fr1) == 0 && dwarf_cfi_addrframe(c2, pc2 - cb2, &fr2) == 0,
	      "the CFI of getpid found in both processes");
	free(fr1);
	free(fr2);
	sp_unwind_free(u1);
	sp_unwind_free(u2);

	/* ---- a file rewritten in place, and a new file at its path ---- */
	char dir[] = "/tmp/sp-unwind-XXXXXX";
	if (!mkdtemp(dir)) {
		printf("skip - a rewritten file # mkdtemp: cannot create a directory in /tmp\n");
		return failed;
	}
	char lib[600], other[600];
	snprintf(lib, sizeof lib, "%s/lib.so", dir);
	snprintf(other, sizeof other, "%s/other.so", dir);
	struct stat st;
	int copied = copy_file(m1.path, lib, O_TRUNC) == 0 && stat(lib, &st) == 0;
	CHECK(copied, "a copy of %s", m1.path);
	if (copied) {
		struct sp_map c = m1;
		c.path = lib;
		c.ino = st.st_ino;
		c.maj = major(st.st_dev);
		c.min = minor(st.st_dev);
		struct sp_modfile *a = sp_symbols_modfile(s, getpid(), &c);
		CHECK(a && a == sp_symbols_modfile(s, getpid(), &c), "the copy: one cached file, asked twice");
		/* In place: the same inode, another ELF file's bytes, another time. */
		struct timespec old[2] = { { 0, UTIME_OMIT }, { 1000000000, 0 } };
		struct stat st2;
		int rewrote = copy_file("/proc/self/exe", lib, O_TRUNC) == 0 && utimensat(AT_FDCWD, lib, old, 0) == 0 &&
			      stat(lib, &st2) == 0 && st2.st_ino == st.st_ino;
		CHECK(rewrote, "rewritten in place (inode %lu kept)", (unsigned long)st.st_ino);
		struct sp_modfile *b = sp_symbols_modfile(s, getpid(), &c);
		CHECK(b && b != a, "rewritten: not the cached file");
		CHECK(b && b == sp_symbols_modfile(s, getpid(), &c), "... and the new one cached, asked again");
		/* Replaced: a new inode at the same path. */
		int moved = copy_file(m1.path, other, O_TRUNC) == 0 && rename(other, lib) == 0 && stat(lib, &st2) == 0 &&
			    st2.st_ino != st.st_ino;
		CHECK(moved, "replaced by a rename (a new inode)");
		c.ino = st2.st_ino;
		struct sp_modfile *r = sp_symbols_modfile(s, getpid(), &c);
		CHECK(r && r != a && r != b, "replaced: another cached file");
		unlink(lib);
	}
	rmdir(dir);
	sp_maps_free(maps1);
	sp_maps_free(maps2);
	sp_symbols_free(s);
	sp_profile_free(p);
	return failed;
}
