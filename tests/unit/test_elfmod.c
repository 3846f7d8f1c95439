/* Unit tests of lib/capture/elfmod.c: the demangler (a C++ and a Rust
 * legacy name), the symbol-table walk (over this test's own executable,
 * whose addresses it knows, and /bin/true's .dynsym), the module cache's
 * load bias, and build ids (read against the note the loader mapped). */
#include <elf.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elfmod.h"

#include "unit.h"

/* A function of this file the walk must find, at its address. */
__attribute__((noinline, used)) int elfmod_probe_fn(int x) { return x * 3 + 1; }

struct want {
	const char *name;
	uint64_t value;
	int type, found, dynamic, seen;
	size_t stop_after; /* stop the walk after this many symbols, 0 never */
};

static int look(void *ctx, const struct sp_elfsym *y)
{
	struct want *w = ctx;
	w->seen++;
	if (y->dynamic)
		w->dynamic++;
	if (w->name && !strcmp(y->name, w->name)) {
		w->found++;
		w->value = y->value;
		w->type = GELF_ST_TYPE(y->info);
	}
	return w->stop_after && (size_t)w->seen >= w->stop_after;
}

/* The GNU build id of this program as the loader mapped it (its PT_NOTE),
 * read without libelf. */
struct note_want {
	uint8_t id[64];
	size_t len;
};

static int own_note(struct dl_phdr_info *info, size_t size, void *ctx)
{
	struct note_want *w = ctx;
	if (info->dlpi_name && info->dlpi_name[0])
		return 0; /* the executable is listed first, with no name */
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr), *e = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= e) {
			const ElfW(Nhdr) *nh = (const void *)p;
			const uint8_t *name = p + sizeof *nh;
			const uint8_t *desc = name + ((nh->n_namesz + 3) & ~3u);
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && !memcmp(name, "GNU", 4) &&
			    nh->n_descsz <= sizeof w->id) {
				memcpy(w->id, desc, nh->n_descsz);
				w->len = nh->n_descsz;
				return 1;
			}
			p = desc + ((nh->n_descsz + 3) & ~3u);
		}
	}
	return 1;
}

static void test_demangle(void)
{
	char *d = sp_demangle("_ZN2ns3fooIiEEvT_");
	CHECK(d && !strcmp(d, "void ns::foo<int>(int)"), "C++: _ZN2ns3fooIiEEvT_ is 'void ns::foo<int>(int)' (got '%s')",
	      d ? d : "(null)");
	free(d);
	d = sp_demangle("_ZN4core3fmt5write17h0123456789abcdefE");
	CHECK(d && !strcmp(d, "core::fmt::write::h0123456789abcdef"),
	      "Rust legacy: core::fmt::write::h0123456789abcdef (got '%s')", d ? d : "(null)");
	free(d);
	char sp[] = "void ns::foo<int>(int) const [clone .isra.0]";
	size_t start = 99, end = sp_cxx_spelling(sp, &start);
	CHECK(start == 5 && end == 17 && !strncmp(sp + start, "ns::foo<int>", end - start),
	      "perf's spelling: 'ns::foo<int>' of '%s' (got [%zu, %zu))", "void ns::foo<int>(int) const [clone .isra.0]",
	      start, end);
	const char *rt = "std::pair<int, int> ns::operator<< <int>";
	CHECK(sp_cxx_name_start(rt, strlen(rt)) == 20, "the return type of '%s' ends at 20 (got %zu)", rt,
	      sp_cxx_name_start(rt, strlen(rt)));
	CHECK(sp_cxx_name_start("ns::f", 5) == 0, "no return type: the name starts at 0");
	const char *ta = "int ns::f<unsigned long>";
	CHECK(sp_cxx_name_start(ta, strlen(ta)) == 4, "a blank inside template arguments is not the return type's end "
						       "('%s': 4, got %zu)", ta, sp_cxx_name_start(ta, strlen(ta)));
	d = sp_demangle("main");
	CHECK(!d, "an unmangled name is not demangled");
	free(d);
	d = sp_demangle("_Z");
	CHECK(!d, "a broken mangled name ('_Z') gives NULL");
	free(d);
}

static void test_walk_self(void)
{
	elf_version(EV_CURRENT);
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	CHECK(e, "this test's executable opens with libelf");
	if (!e)
		return;
	struct want w = { "elfmod_probe_fn", 0, 0, 0, 0, 0, 0 };
	size_t n = sp_elf_symbols(e, NULL, SP_ELFSYM_SYMTAB, look, &w);
	CHECK(w.found == 1 && w.type == STT_FUNC, ".symtab: elfmod_probe_fn found once, a function (%d times, of %zu)",
	      w.found, n);
	CHECK(n > 0 && (size_t)w.seen == n && !w.dynamic, ".symtab only: %zu symbols, none from .dynsym", n);

	/* The value plus the load bias the module cache computes is where the
	 * function runs. */
	struct sp_maps *maps = sp_maps_new();
	struct sp_err err;
	const struct sp_map *mp = sp_maps_load(maps, getpid(), 1, &err) == 0
					  ? sp_maps_find(maps, (uint64_t)(uintptr_t)elfmod_probe_fn)
					  : NULL;
	struct sp_map m = mp ? *mp : (struct sp_map){ 0 };
	struct sp_elfmods *c = sp_elfmods_new(NULL);
	struct sp_modfile *f = mp ? sp_elfmods_get(c, getpid(), &m) : NULL;
	uint64_t bias = 0;
	int biased = f && sp_modfile_bias(f, &m, &bias) == 0;
	CHECK(biased && w.value + bias == (uint64_t)(uintptr_t)elfmod_probe_fn,
	      "value %#" PRIx64 " + bias %#" PRIx64 " is the function's address %p", w.value, bias,
	      (void *)elfmod_probe_fn);
	CHECK(f && sp_modfile_index(f) == 0 && sp_elfmods_count(c) == 1 && sp_elfmods_at(c, 0) == f &&
		      sp_elfmods_get(c, getpid(), &m) == f && sp_elfmods_count(c) == 1,
	      "the cache: one file, index 0, the same asked twice");
	sp_elfmods_free(c);
	sp_maps_free(maps);

	struct want one = { NULL, 0, 0, 0, 0, 0, 1 };
	CHECK(sp_elf_symbols(e, NULL, SP_ELFSYM_SYMTAB | SP_ELFSYM_DYNSYM, look, &one) == 1 && one.seen == 1,
	      "a callback returning non-zero stops the walk after one symbol");

	/* The same symbol through libdwfl's table of the file. */
	static char *debuginfo_path;
	static const Dwfl_Callbacks cb = {
		.find_elf = dwfl_build_id_find_elf,
		.find_debuginfo = dwfl_standard_find_debuginfo,
		.section_address = dwfl_offline_section_address,
		.debuginfo_path = &debuginfo_path,
	};
	Dwfl *dw = dwfl_begin(&cb);
	Dwfl_Module *mod = NULL;
	if (dw) {
		dwfl_report_begin(dw);
		mod = dwfl_report_offline(dw, "self", "/proc/self/exe", -1);
		dwfl_report_end(dw, NULL, NULL);
	}
	struct want viad = { "elfmod_probe_fn", 0, 0, 0, 0, 0, 0 };
	if (mod)
		sp_elf_symbols(NULL, mod, 0, look, &viad);
	CHECK(mod && viad.found == 1 && viad.value == w.value,
	      "libdwfl's table: the same symbol at the same file address (%#" PRIx64 ")", viad.value);
	if (dw)
		dwfl_end(dw);
	elf_end(e);
	close(fd);
}

static void test_walk_true(void)
{
	const char *path = "/bin/true";
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	if (!e) {
		printf("skip - /bin/true's .dynsym # %s cannot be read as ELF\n", path);
		if (fd >= 0)
			close(fd);
		return;
	}
	struct want all = { NULL, 0, 0, 0, 0, 0, 0 };
	size_t nsym = sp_elf_symbols(e, NULL, SP_ELFSYM_SYMTAB, look, &all);
	struct want dyn = { "exit", 0, 0, 0, 0, 0, 0 };
	size_t ndyn = sp_elf_symbols(e, NULL, SP_ELFSYM_DYNSYM, look, &dyn);
	CHECK(ndyn > 0 && dyn.dynamic == (int)ndyn && dyn.found == 1,
	      "%s: .dynsym has %zu symbols, all marked dynamic, 'exit' among them", path, ndyn);
	struct want els = { NULL, 0, 0, 0, 0, 0, 0 };
	size_t nels = sp_elf_symbols(e, NULL, SP_ELFSYM_DYNSYM_ELSE, look, &els);
	if (nsym)
		CHECK(nels == nsym && !els.dynamic, "%s has .symtab: DYNSYM_ELSE walks it (%zu), not .dynsym", path, nels);
	else
		CHECK(nels == ndyn && els.dynamic == (int)ndyn, "%s has no .symtab: DYNSYM_ELSE walks .dynsym (%zu of %zu)",
		      path, nels, ndyn);
	elf_end(e);
	close(fd);
}

static void test_build_id(void)
{
	struct note_want nw = { { 0 }, 0 };
	dl_iterate_phdr(own_note, &nw);
	uint8_t id[20];
	size_t len = 99;
	int rc = sp_elf_build_id("/proc/self/exe", id, &len);
	if (!nw.len) {
		printf("skip - build id of this test # linked without a GNU build id note\n");
	} else {
		CHECK(rc == 0 && len == (nw.len > 20 ? 20 : nw.len) && !memcmp(id, nw.id, len),
		      "this test's build id as its loaded note says (%zu bytes)", len);
	}
	char tmpl[] = "/tmp/test_elfmod.XXXXXX";
	int tfd = mkstemp(tmpl);
	if (tfd >= 0) {
		(void)!write(tfd, "not an ELF file\n", 16);
		close(tfd);
		len = 99;
		rc = sp_elf_build_id(tmpl, id, &len);
		CHECK(rc == 0 && len == 0, "a text file: no build id (rc %d, len %zu)", rc, len);
		unlink(tmpl);
		CHECK(mkfifo(tmpl, 0600) == 0 && sp_elf_build_id(tmpl, id, &len) == -1,
		      "a FIFO is refused, without blocking");
		unlink(tmpl);
	}
	CHECK(sp_elf_build_id("/nonexistent/elfmod", id, &len) == -1, "a missing file: -1");
}

int main(void)
{
	CHECK(elfmod_probe_fn(2) == 7, "the probe function runs");
	test_demangle();
	test_walk_self();
	test_walk_true();
	test_build_id();
	return failed;
}
