/* symbols.c — module cache, symbol/inline/line look-up, JIT maps, kallsyms. */
#include "symbols.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

/* sp_unwind_dwfl: an address without maps is looked up in the modules the
 * process's unwinder reported.  unwind.c does not include this file: both
 * read ELF files through elfmod.h. */
#include "unwind.h"

/* What symbolising keeps per file of the module cache (by sp_modfile_index). */
struct filesyms {
	uint32_t module; /* string id of the file's name */
	uint32_t bare;   /* "[libz.so.1.2.13]": the name of its code without a symbol */
	struct sp_u64map memo; /* file address -> entry index + 1 */
	/* Without an unwinder's Dwfl (pcollect --call-graph none): the file
	 * reported offline, on its own, when first needed. */
	Dwfl *off;
	Dwfl_Module *offm;
	int off_tried;
	/* function symbols by start, as perf chooses them (symbol_at) */
	struct sp_psyms psyms;
	uint32_t *pname; /* per symbol: its interned name + 1, 0 until named */
	int psyms_built;
	/* A Go executable: Go's own table names its functions (gopclntab.h) */
	struct sp_gopcln *go;
	int go_tried;
	const char *go_why; /* a .gopclntab not read: why (static) */
};

struct entry {
	uint32_t off, n; /* frames in the pool */
	int go;          /* SP_GO_* of the address's function */
};

struct ksym {
	uint64_t addr;
	uint32_t name, len; /* in kbuf: names are interned when first sampled;
			     * len KSYM_LEN_LATER: up to the line's tab or end
			     * (a mapped copy: found at the first sample) */
};
#define KSYM_LEN_LATER UINT32_MAX

struct jitsym {
	uint64_t start, end;
	uint32_t frame;
	uint32_t ord; /* line number: of two entries at one address the later wins */
};

struct jitmap {
	int pid;
	struct jitsym *v;
	size_t n;
	off_t size;
	struct timespec mtime;
	uint64_t checked_ns;
};

/* One address range of a code scope that is a direct child of a unit (or
 * of a function, an inlined call, a block: any scope looked into). */
struct cu_range {
	Dwarf_Addr lo, hi; /* [lo, hi) */
	Dwarf_Addr maxhi;  /* the largest hi of this and every earlier range */
	uint32_t order;    /* the child's position among its parent's children */
	Dwarf_Die die;
};
struct cu_index {
	struct cu_range *v; /* by lo */
	size_t n;
	uint32_t first_other; /* position of the first child searched through
			       * (namespace, class, imported unit), UINT32_MAX none */
};

struct sp_symbols {
	struct sp_profile *p;
	struct sp_symbols_opts o;
	struct sp_elfmods *mods;
	struct filesyms **fs; /* by sp_modfile_index; each stays where it is
			       * (sp_symbols_file_psyms hands out its table) */
	size_t nfs;
	struct entry *ent;
	size_t nent, capent;
	uint32_t *pool;
	size_t npool, cappool;
	uint32_t one; /* a frame returned without the memo */
	/* kernel */
	int kloaded, khidden;
	struct ksym *ksyms;
	size_t nksyms;
	char *kbuf;      /* the names: read from /proc, or the cache copy mapped */
	size_t kmapped;  /* non-zero: kbuf is a mapping of this many bytes */
	char *kfile;     /* read instead of /proc/kallsyms (sp_symbols_kernel_file) */
	char *kref;      /* ... when its symbol kref */
	uint64_t kref_addr; /* is at kref_addr */
	uint32_t kmodule;
	struct sp_u64map kmemo;
	/* code the kernel made after boot (BPF programs, trampolines), named
	 * by a recording's KSYMBOL records: [addr, end) -> name id */
	struct kextra { uint64_t addr, end; uint32_t name; } *kx;
	size_t nkx, capkx;
	/* JIT maps, one per process that has one */
	struct jitmap *jits;
	size_t njits, capjits;
	struct sp_u64map jitidx; /* pid -> index + 1 (a build has hundreds of processes) */
	/* The mapping, file and load bias of recent look-ups, by the maps'
	 * generation (unique across all maps, bumped by every change): the
	 * addresses of a stack are mostly in one or two files. */
	struct mapcache {
		uint64_t gen, start, end, rbias;
		struct sp_modfile *of; /* NULL: no usable file */
		const struct sp_map *mp;
		int bias_ok;
	} mc[64];
	/* the frame of an address in no mapping: "[unknown]", no module */
	uint32_t nomap_frame; /* + 1, 0 before the first */
	uint32_t unknown_name;
	/* (module, name) -> the symbol's file address, for the names
	 * symbol_at gave (sp_symbols_symbol_start) */
	struct sp_u64map startidx; /* key -> index + 1 into starts */
	uint64_t *starts;
	size_t nstarts, capstarts;
	/* The code scopes directly under each compilation unit, function,
	 * inlined call or block looked into, by address (cu_index): a unit of
	 * thousands of functions, a function of hundreds of inlined calls, is
	 * searched once, not at every new address in it. */
	struct sp_u64map cuidx; /* the scope DIE's address -> index + 1 into cus */
	struct cu_index *cus;
	size_t ncus, capcus;
	int go_kind; /* resolve's last address: SP_GO_* */
};

static struct filesyms *fsyms(struct sp_symbols *s, const struct sp_modfile *f);

/* The cache's on_new: a file's names are interned when it is opened. */
static void new_file(void *ctx, struct sp_modfile *f) { fsyms(ctx, f); }

struct sp_symbols *sp_symbols_new(struct sp_profile *p, const struct sp_symbols_opts *o)
{
	struct sp_symbols *s = sp_xcalloc(1, sizeof *s);
	s->p = p;
	if (o)
		s->o = *o;
	struct sp_elfmods_opts mo = { s->o.offline, s->o.locate, s->o.locate_ctx, new_file, s };
	s->mods = sp_elfmods_new(&mo);
	sp_u64map_init(&s->kmemo);
	sp_u64map_init(&s->startidx);
	sp_u64map_init(&s->jitidx);
	sp_u64map_init(&s->cuidx);
	s->unknown_name = sp_str_intern(p, "[unknown]", 9);
	elf_version(EV_CURRENT);
	return s;
}

void sp_symbols_free(struct sp_symbols *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nfs; i++) {
		struct filesyms *f = s->fs[i];
		if (!f)
			continue;
		sp_u64map_release(&f->memo);
		sp_gopcln_free(f->go); /* before the Elf it reads */
		if (f->off)
			dwfl_end(f->off);
		sp_psyms_release(&f->psyms);
		free(f->pname);
		free(f);
	}
	free(s->fs);
	sp_elfmods_free(s->mods);
	sp_u64map_release(&s->kmemo);
	free(s->kx);
	sp_u64map_release(&s->startidx);
	free(s->starts);
	for (size_t i = 0; i < s->ncus; i++)
		free(s->cus[i].v);
	free(s->cus);
	sp_u64map_release(&s->cuidx);
	free(s->ent);
	free(s->pool);
	free(s->ksyms);
	if (s->kmapped)
		munmap(s->kbuf, s->kmapped);
	else
		free(s->kbuf);
	free(s->kfile);
	free(s->kref);
	for (size_t i = 0; i < s->njits; i++)
		free(s->jits[i].v);
	free(s->jits);
	sp_u64map_release(&s->jitidx);
	free(s);
}

/* Code without a symbol is named by its module, "[libz.so.1.2.13]", as
 * stackcollapse-perf.pl names perf's "[unknown] (/usr/lib/.../libz.so.1.2.13)":
 * one frame per module, so a library without symbols still shows as itself;
 * the vdso is "[[vdso]]", as they name "[unknown] ([vdso])". */
static uint32_t bare_name(struct sp_profile *p, const char *path)
{
	const char *b = strrchr(path, '/');
	b = b ? b + 1 : path;
	size_t n = strlen(b);
	if (!n)
		return sp_str_intern(p, "[unknown]", 9);
	char *t = sp_xcalloc(1, n + 3);
	t[0] = '[';
	memcpy(t + 1, b, n);
	t[n + 1] = ']';
	uint32_t id = sp_str_intern(p, t, n + 2);
	free(t);
	return id;
}

/* ---- the module cache (elfmod.h) ---- */

struct sp_elfmods *sp_symbols_mods(struct sp_symbols *s) { return s->mods; }

struct sp_modfile *sp_symbols_modfile(struct sp_symbols *s, int pid, const struct sp_map *m)
{
	return sp_elfmods_get(s->mods, pid, m);
}

/* Symbolising's data of file f, set up on first use. */
static struct filesyms *fsyms(struct sp_symbols *s, const struct sp_modfile *f)
{
	size_t i = sp_modfile_index(f);
	if (i >= s->nfs) {
		size_t n = s->nfs ? s->nfs : 32;
		while (n <= i)
			n *= 2;
		s->fs = sp_xrealloc(s->fs, n * sizeof *s->fs);
		memset(s->fs + s->nfs, 0, (n - s->nfs) * sizeof *s->fs);
		s->nfs = n;
	}
	struct filesyms *fs = s->fs[i];
	if (!fs) {
		const char *path = sp_modfile_name(f);
		fs = s->fs[i] = sp_xcalloc(1, sizeof *fs);
		fs->module = sp_str_intern(s->p, path, strlen(path));
		fs->bare = bare_name(s->p, path);
		sp_u64map_init(&fs->memo);
	}
	return fs;
}

/* ---- names ---- */


/* perf's spelling of a C++ function: demangled, without the parameter list,
 * qualifiers, clone suffix and return type ("ns::spin<unsigned long>"). */
static uint32_t intern_name(struct sp_symbols *s, const char *name)
{
	if (!name || !*name)
		return s->unknown_name;
	/* Versioned symbols ("clock_gettime@@GLIBC_2.17") lose the version. */
	const char *at = strchr(name, '@');
	size_t len = at && at != name ? (size_t)(at - name) : strlen(name);
	if (name[0] != '_' || name[1] != 'Z')
		return sp_str_intern(s->p, name, len);
	char *d = sp_demangle(name);
	if (!d) /* not demangled: the whole symbol, version and all */
		return sp_str_intern(s->p, name, strlen(name));
	size_t start;
	size_t n = sp_cxx_spelling(d, &start);
	uint32_t id = sp_str_intern(s->p, d + start, n - start);
	free(d);
	return id;
}

/* A PLT entry's name, "NAME@plt" with NAME spelt as intern_name spells
 * it ("@plt" alone when the relocation names no symbol). */
static uint32_t plt_name(struct sp_symbols *s, const char *name, size_t len)
{
	if (len <= 4)
		return sp_str_intern(s->p, name, len);
	char *t = sp_xstrndup(name, len - 4);
	const char *sp = sp_str(s->p, intern_name(s, t));
	free(t);
	size_t n = strlen(sp);
	char *u = sp_xcalloc(1, n + 5);
	memcpy(u, sp, n);
	memcpy(u + n, "@plt", 4);
	uint32_t id = sp_str_intern(s->p, u, n + 4);
	free(u);
	return id;
}

static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));
	if (!name)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
	if (!name)
		name = dwarf_diename(die);
	return name;
}

/* ---- the memo ---- */

static void pool_add(struct sp_symbols *s, uint32_t frame)
{
	if (s->npool == s->cappool) {
		s->cappool = s->cappool ? 2 * s->cappool : 1024;
		s->pool = sp_xrealloc(s->pool, s->cappool * sizeof *s->pool);
	}
	s->pool[s->npool++] = frame;
}

static uint32_t new_entry(struct sp_symbols *s, uint32_t off)
{
	if (s->nent == s->capent) {
		s->capent = s->capent ? 2 * s->capent : 1024;
		s->ent = sp_xrealloc(s->ent, s->capent * sizeof *s->ent);
	}
	s->ent[s->nent] = (struct entry){ off, (uint32_t)(s->npool - off), s->go_kind };
	return (uint32_t)++s->nent; /* index + 1 */
}

static uint32_t frame(struct sp_symbols *s, uint32_t name, uint32_t module, const char *file, int line,
		      unsigned kind)
{
	struct sp_frame f = { name, module, 0, 0, 0, (uint8_t)kind };
	if (s->o.lines && file) {
		f.file = sp_str_intern(s->p, file, strlen(file));
		f.line = line > 0 ? (uint32_t)line : 0;
	}
	return sp_frame_intern(s->p, &f);
}

/* Resolve pc (runtime) in module m into the pool: the inlined chain when
 * DWARF has one, else the symbol. */
/* ---- function symbols, as perf chooses them ----
 *
 * One sorted table per file, built at its first look-up (libdwfl's
 * dwfl_module_addrinfo scans the whole symbol table on every call).
 * perf's rules: function symbols of code sections and code labels of
 * sections whose name holds "text" (from .symtab, the debug file's, or
 * .dynsym), but not _init in .init (zero-sized, it would stretch over the
 * PLT stubs after it, which perf names NAME@plt; _fini in .fini perf does
 * name); an address outside every
 * symbol's [start, start + size) has no name ([unknown]); a zero-sized
 * symbol ends where the next begins; of several at one address perf keeps
 * a sized one over a zero-sized one, not weak over weak, global over local,
 * fewer leading underscores, the longer name, the first in the table.
 */
static int underscores(const char *n)
{
	int k = 0;
	while (n[k] == '_')
		k++;
	return k;
}

/* 1 when a is to be kept over b (same start). */
static int psym_better(const char *names, const struct sp_psym *a, const struct sp_psym *b)
{
	int za = a->end == a->start, zb = b->end == b->start;
	if (za != zb)
		return zb;
	int wa = a->bind == STB_WEAK, wb = b->bind == STB_WEAK;
	if (wa != wb)
		return wb;
	int ga = a->bind == STB_GLOBAL, gb = b->bind == STB_GLOBAL;
	if (ga != gb)
		return ga;
	int ua = underscores(names + a->name), ub = underscores(names + b->name);
	if (ua != ub)
		return ua < ub;
	if (a->len != b->len)
		return a->len > b->len;
	return a->idx < b->idx;
}

/* perf 6.1's PLT symbols (dso__synthesize_plt_symbols, learnt from its
 * behaviour and documentation of the ELF format): one per entry of
 * .rela.plt (or .rel.plt, linked to .dynsym), in table order, over .plt
 * from its second entry on, each .plt's sh_entsize long (the first entry
 * is the resolver's header), named "NAME@plt" after the relocation's
 * dynamic symbol ("@plt" when it has none, as IRELATIVE relocations), but
 * for entries a symbol of the file already covers.  perf
 * 6.1 knows neither .plt.sec nor .plt.got, and neither does this.  Appended
 * to t (unsorted); returns how many. */
static size_t psyms_plt(struct sp_psyms *t, struct sp_buf *names, Elf *elf)
{
	size_t shstrndx;
	if (!elf || !t->n || elf_getshdrstrndx(elf, &shstrndx) < 0)
		return 0;
	GElf_Shdr rel = { 0 }, pltsh = { 0 }, dsh = { 0 };
	Elf_Scn *relscn = NULL, *pltscn = NULL, *dynscn = NULL;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		const char *nm = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!nm)
			continue;
		if (!relscn && (!strcmp(nm, ".rela.plt") || !strcmp(nm, ".rel.plt")))
			relscn = scn, rel = sh;
		else if (!strcmp(nm, ".plt"))
			pltscn = scn, pltsh = sh;
		if (sh.sh_type == SHT_DYNSYM)
			dynscn = scn, dsh = sh;
	}
	if (!relscn || !pltscn || !dynscn || (rel.sh_type != SHT_RELA && rel.sh_type != SHT_REL) ||
	    rel.sh_link != elf_ndxscn(dynscn) || !rel.sh_entsize || !pltsh.sh_entsize)
		return 0;
	Elf_Data *rd = elf_getdata(relscn, NULL), *sd = elf_getdata(dynscn, NULL);
	Elf_Scn *strscn = elf_getscn(elf, dsh.sh_link);
	if (!rd || !sd || !strscn)
		return 0;
	size_t nrel = rel.sh_size / rel.sh_entsize, cap = t->n, added = 0, n0 = t->n;
	uint64_t at = pltsh.sh_addr + pltsh.sh_entsize;
	for (size_t i = 0; i < nrel; i++, at += pltsh.sh_entsize) {
		size_t symidx;
		if (rel.sh_type == SHT_RELA) {
			GElf_Rela r;
			if (!gelf_getrela(rd, (int)i, &r))
				break;
			symidx = GELF_R_SYM(r.r_info);
		} else {
			GElf_Rel r;
			if (!gelf_getrel(rd, (int)i, &r))
				break;
			symidx = GELF_R_SYM(r.r_info);
		}
		/* where a symbol of the file's own covers the entry, perf's
		 * look-up may meet that symbol first (a zero-sized one before
		 * .plt stretches over it; _init is not loaded, see
		 * sp_psyms_build) */
		struct sp_psyms own = { t->v, n0, NULL };
		if (sp_psyms_find(&own, at))
			continue;
		GElf_Sym sym;
		const char *nm = gelf_getsym(sd, (int)symidx, &sym) ? elf_strptr(elf, dsh.sh_link, sym.st_name) : NULL;
		if (!nm)
			nm = "";
		if (t->n == cap) {
			cap = 2 * cap;
			t->v = sp_xrealloc(t->v, cap * sizeof *t->v);
		}
		size_t len = strlen(nm);
		struct sp_psym *ps = &t->v[t->n++];
		memset(ps, 0, sizeof *ps);
		ps->start = at;
		ps->end = at + pltsh.sh_entsize;
		ps->name = (uint32_t)names->len;
		ps->len = (uint32_t)len + 4;
		ps->idx = UINT32_MAX;
		ps->bind = STB_GLOBAL;
		ps->plt = 1;
		sp_buf_add(names, nm, len);
		sp_buf_add(names, "@plt", 5);
		added++;
	}
	return added;
}

#define PSYM_LESS(a, b) ((a)->start < (b)->start || ((a)->start == (b)->start && (a)->idx < (b)->idx))
SP_RUNSORT(psym_runsort, struct sp_psym, PSYM_LESS)

/* t's symbols by (start, idx).  They come in idx order, so a stable sort
 * by start is that order: a radix sort of 11-bit digits of start - min
 * (three passes for 32 MB of code) where the merge sort would make a pass
 * per doubling of the runs of a large file's globals. */
static void psym_sort(struct sp_psyms *t)
{
	struct sp_psym *v = t->v, *tmp = sp_xmalloc(t->n * sizeof *tmp);
	size_t n = t->n;
	uint64_t lo = UINT64_MAX, hi = 0;
	int inorder = 1;
	for (size_t i = 0; i < n; i++) {
		lo = v[i].start < lo ? v[i].start : lo;
		hi = v[i].start > hi ? v[i].start : hi;
		inorder &= !i || v[i].idx > v[i - 1].idx;
	}
	enum { BITS = 11, B = 1 << BITS };
	int passes = 0;
	for (uint64_t r = hi - lo; r; r >>= BITS)
		passes++;
	if (n < 256 || !inorder || passes > 4) {
		if (psym_runsort(v, n, tmp) == tmp) { /* the sorted copy is the table */
			free(t->v);
			t->v = tmp;
		} else {
			free(tmp);
		}
		return;
	}
	size_t *count = sp_xmalloc(B * sizeof *count);
	struct sp_psym *src = v, *dst = tmp;
	for (int p = 0; p < passes; p++) {
		int sh = p * BITS;
		memset(count, 0, B * sizeof *count);
		for (size_t i = 0; i < n; i++)
			count[((src[i].start - lo) >> sh) & (B - 1)]++;
		size_t at = 0;
		for (size_t d = 0; d < B; d++) {
			size_t c = count[d];
			count[d] = at;
			at += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[count[((src[i].start - lo) >> sh) & (B - 1)]++] = src[i];
		struct sp_psym *x = src;
		src = dst;
		dst = x;
	}
	free(count);
	t->v = src;
	free(dst);
}

/* The walk's state while sp_psyms_build takes a file's function symbols. */
struct psyms_walk {
	struct sp_psyms *t;
	struct sp_buf names;
	size_t cap;
	void (*each)(void *ctx, const char *name, uint64_t start);
	void *ctx;
	/* what psyms_take decided for each section of elf, by index: 0 not
	 * yet, 1 none of its symbols, 2 functions, 3 functions and labels */
	Elf *elf;
	uint8_t *secok;
	size_t nsec;
};

/* What psyms_take takes from section shndx of elf (see there). */
static uint8_t section_ok(Elf *elf, size_t shndx)
{
	GElf_Shdr sh;
	size_t shstrndx;
	Elf_Scn *scn = elf ? elf_getscn(elf, shndx) : NULL;
	const char *secname = scn && gelf_getshdr(scn, &sh) && elf_getshdrstrndx(elf, &shstrndx) == 0
				      ? elf_strptr(elf, shstrndx, sh.sh_name)
				      : NULL;
	if (!secname || !strcmp(secname, ".init") || !(sh.sh_flags & SHF_EXECINSTR))
		return 1;
	return strstr(secname, "text") ? 3 : 2;
}

static int psyms_take(void *ctx, const struct sp_elfsym *y)
{
	struct psyms_walk *w = ctx;
	struct sp_psyms *t = w->t;
	Elf *elf = y->elf;
	int type = GELF_ST_TYPE(y->info);
	if (y->shndx == SHN_UNDEF || y->shndx == SHN_ABS)
		return 0;
	if (type != STT_NOTYPE && type != STT_FUNC && type != STT_GNU_IFUNC)
		return 0;
	/* Function symbols of any code section (perf names a sample in
	 * a library's .fini "_fini", the last symbol stretched to the
	 * next page), but not _init in .init: its zero size would
	 * stretch it over the .plt after it, where perf names the
	 * stubs NAME@plt.  Labels count in "*text*" sections only. */
	uint8_t ok;
	if (elf != w->elf) { /* the decisions are per file (a debug file's sections differ) */
		w->elf = elf;
		memset(w->secok, 0, w->nsec);
	}
	if (y->shndx < w->nsec) {
		if (!w->secok[y->shndx])
			w->secok[y->shndx] = section_ok(elf, y->shndx);
		ok = w->secok[y->shndx];
	} else {
		ok = section_ok(elf, y->shndx);
	}
	if (ok == 1 || (type == STT_NOTYPE && ok != 3))
		return 0;
	if (type == STT_NOTYPE) {
		/* assembly labels count, in code sections */
		int vis = GELF_ST_VISIBILITY(y->other);
		if (vis == STV_HIDDEN || vis == STV_INTERNAL)
			return 0;
	}
	if (w->each)
		w->each(w->ctx, y->name, y->value);
	if (t->n == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 1024;
		t->v = sp_xrealloc(t->v, w->cap * sizeof *t->v);
	}
	size_t len = strlen(y->name);
	struct sp_psym *ps = &t->v[t->n++];
	ps->start = y->value;
	ps->end = ps->start + y->size;
	ps->name = (uint32_t)w->names.len;
	ps->len = (uint32_t)len;
	ps->idx = (uint32_t)y->idx;
	ps->bind = (uint8_t)GELF_ST_BIND(y->info);
	ps->plt = 0;
	ps->aliased = 0;
	sp_buf_add(&w->names, y->name, len + 1);
	return 0;
}

void sp_psyms_build(struct sp_psyms *t, void *module, void (*each)(void *ctx, const char *name, uint64_t start),
		    void *ctx)
{
	Dwfl_Module *m = module;
	memset(t, 0, sizeof *t);
	Dwarf_Addr bias = 0;
	if (!dwfl_module_getelf(m, &bias))
		return;
	struct psyms_walk w = { t, SP_BUF_INIT, 0, each, ctx, NULL, NULL, 0 };
	w.nsec = 1024; /* the sections of most files; others are looked at each time */
	w.secok = sp_xcalloc(w.nsec, 1);
	sp_elf_symbols(NULL, m, 0, psyms_take, &w);
	free(w.secok);
	struct sp_buf names = w.names;
	t->names = names.p;
	if (!t->n)
		return;
	psym_sort(t);
	size_t k = 0;
	for (size_t i = 0; i < t->n; i++) {
		if (k && t->v[k - 1].start == t->v[i].start) {
			/* another name (not the same one from .dynsym and
			 * .symtab, nor another version of it) */
			const char *a = t->names + t->v[i].name, *b = t->names + t->v[k - 1].name;
			size_t la = strcspn(a, "@"), lb = strcspn(b, "@");
			uint8_t other = t->v[k - 1].aliased || la != lb || memcmp(a, b, la);
			if (psym_better(t->names, &t->v[i], &t->v[k - 1]))
				t->v[k - 1] = t->v[i];
			t->v[k - 1].aliased = other;
			continue;
		}
		t->v[k++] = t->v[i];
	}
	t->n = k;
	/* zero-sized symbols end where the next one starts */
	for (size_t i = 0; i + 1 < k; i++)
		if (t->v[i].end == t->v[i].start)
			t->v[i].end = t->v[i + 1].start;
	/* and the last one, as perf 6.1 ends it ("_fini" of a library) */
	if (t->v[k - 1].end == t->v[k - 1].start)
		t->v[k - 1].end = ((t->v[k - 1].start + 4095) & ~(uint64_t)4095) + 4096;
	Elf *elf = dwfl_module_getelf(m, &bias);
	size_t plt = psyms_plt(t, &names, elf);
	t->names = names.p;
	if (plt) { /* after the symbols' own, in address order */
		struct sp_psym *tmp = sp_xmalloc(t->n * sizeof *tmp);
		if (psym_runsort(t->v, t->n, tmp) == tmp) {
			free(t->v);
			t->v = tmp;
		} else {
			free(tmp);
		}
	}
}

const struct sp_psym *sp_psyms_find(const struct sp_psyms *t, uint64_t a)
{
	size_t lo = 0, hi = t->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (t->v[mid].start <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || a >= t->v[lo - 1].end)
		return NULL;
	return &t->v[lo - 1];
}

void sp_psyms_release(struct sp_psyms *t)
{
	free(t->v);
	free(t->names);
	memset(t, 0, sizeof *t);
}

/* Name id `name` of file fs starts at file address start (for
 * sp_symbols_symbol_start); the first start a name is given is kept. */
static void note_start(struct sp_symbols *s, const struct filesyms *fs, uint32_t name, uint64_t start)
{
	int found;
	uint32_t *slot = sp_u64map_slot(&s->startidx, (uint64_t)fs->module << 32 | name, &found);
	if (found)
		return;
	if (s->nstarts == s->capstarts) {
		s->capstarts = s->capstarts ? 2 * s->capstarts : 256;
		s->starts = sp_xrealloc(s->starts, s->capstarts * sizeof *s->starts);
	}
	s->starts[s->nstarts++] = start;
	*slot = (uint32_t)s->nstarts;
}

/* The function symbol at pc (string id), 0 when pc is in none; *aliased:
 * other symbols start where it does. */
static uint32_t symbol_at(struct sp_symbols *s, Dwfl_Module *m, struct sp_modfile *mf, uint64_t pc, int *aliased)
{
	Dwarf_Addr bias = 0;
	*aliased = 0;
	if (!dwfl_module_getelf(m, &bias))
		return 0;
	struct filesyms *fs = fsyms(s, mf);
	if (!fs->psyms_built) {
		sp_psyms_build(&fs->psyms, m, NULL, NULL);
		fs->psyms_built = 1;
	}
	const struct sp_psym *ps = sp_psyms_find(&fs->psyms, pc - bias);
	if (!ps)
		return 0;
	/* A function's name once, not once per address sampled in it
	 * (demangling is most of the cost). */
	size_t i = (size_t)(ps - fs->psyms.v);
	*aliased = ps->aliased;
	if (!fs->pname)
		fs->pname = sp_xcalloc(fs->psyms.n, sizeof *fs->pname);
	if (fs->pname[i])
		return fs->pname[i] - 1;
	uint32_t name = ps->plt ? plt_name(s, fs->psyms.names + ps->name, ps->len)
				: intern_name(s, fs->psyms.names + ps->name);
	fs->pname[i] = name + 1;
	note_start(s, fs, name, ps->start);
	return name;
}

const char *sp_dwarf_function(void *module, uint64_t pc)
{
	Dwfl_Module *m = module;
	Dwarf_Addr bias = 0;
	Dwarf_Die *cu = dwfl_module_addrdie(m, pc, &bias);
	Dwarf_Die *scopes = NULL;
	int ns = cu ? dwarf_getscopes(cu, pc - bias, &scopes) : 0;
	int i = 0;
	while (i < ns && dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine && dwarf_tag(&scopes[i]) != DW_TAG_subprogram)
		i++;
	Dwarf_Die fn;
	int have = 0;
	if (i < ns && dwarf_tag(&scopes[i]) == DW_TAG_subprogram) {
		fn = scopes[i];
		have = 1;
		Dwarf_Die c;
		Dwarf_Addr best = UINT64_MAX;
		if (dwarf_child(cu, &c) == 0) {
			do {
				Dwarf_Addr lo, hi;
				if (dwarf_tag(&c) != DW_TAG_subprogram || dwarf_haspc(&c, pc - bias) != 1 ||
				    dwarf_lowpc(&c, &lo) != 0 || dwarf_highpc(&c, &hi) != 0)
					continue;
				if (hi - lo <= best) {
					best = hi - lo;
					fn = c;
				}
			} while (dwarf_siblingof(&c, &c) == 0);
		}
	} else if (i < ns) {
		Dwarf_Die *chain = NULL;
		int nc = dwarf_getscopes_die(&scopes[i], &chain);
		for (int j = 0; j < nc; j++)
			if (dwarf_tag(&chain[j]) == DW_TAG_subprogram) {
				fn = chain[j];
				have = 1;
				break;
			}
		free(chain);
	}
	free(scopes);
	return have ? die_name(&fn) : NULL;
}

int sp_symbols_symbol_start(const struct sp_symbols *s, uint32_t module, uint32_t name, uint64_t *start)
{
	int found;
	uint32_t i = sp_u64map_get(&s->startidx, (uint64_t)module << 32 | name, &found);
	if (!found || !i)
		return 0;
	*start = s->starts[i - 1];
	return 1;
}

/* Scopes that may hold code but have no address ranges of their own:
 * searched through. */
static int container_tag(int tag)
{
	return tag == DW_TAG_namespace || tag == DW_TAG_class_type || tag == DW_TAG_structure_type ||
	       tag == DW_TAG_union_type || tag == DW_TAG_module || tag == DW_TAG_interface_type;
}

static int code_tag(int tag)
{
	return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine || tag == DW_TAG_lexical_block ||
	       tag == DW_TAG_entry_point || tag == DW_TAG_try_block || tag == DW_TAG_catch_block ||
	       tag == DW_TAG_with_stmt || tag == DW_TAG_common_block;
}

struct chain {
	Dwarf_Die *v;
	int n, cap;
};

static void chain_push(struct chain *c, const Dwarf_Die *d)
{
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 16;
		c->v = sp_xrealloc(c->v, (size_t)c->cap * sizeof *c->v);
	}
	c->v[c->n++] = *d;
}

static const struct cu_index *cu_index(struct sp_symbols *s, Dwarf_Die *cu);
static int cu_first_holding(const struct cu_index *x, Dwarf_Addr pc, Dwarf_Die *out);

/* The number of x's ranges starting at or before pc: they are [0, that). */
static size_t cu_upto(const struct cu_index *x, Dwarf_Addr pc)
{
	size_t lo = 0, hi = x->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (x->v[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Push, outermost first, the code scopes under parent that hold pc (one
 * path down), searching through namespaces and classes (and the partial
 * units a dwz'd file imports).  Returns 1 when a scope holding pc was
 * found.  The code scopes directly under parent come from its index
 * (cu_index): only a parent holding a namespace, class or imported unit
 * before them is walked child by child. */
static int chain_find(struct sp_symbols *s, struct chain *c, Dwarf_Die *parent, Dwarf_Addr pc, int depth)
{
	Dwarf_Die child;
	if (depth > 64)
		return 0;
	int r = cu_first_holding(cu_index(s, parent), pc, &child);
	if (r >= 0) {
		if (!r)
			return 0;
		chain_push(c, &child);
		chain_find(s, c, &child, pc, depth + 1);
		return 1;
	}
	if (dwarf_child(parent, &child) != 0)
		return 0;
	do {
		int tag = dwarf_tag(&child);
		if (code_tag(tag)) {
			if (dwarf_haspc(&child, pc) > 0) {
				chain_push(c, &child);
				chain_find(s, c, &child, pc, depth + 1);
				return 1;
			}
		} else if (container_tag(tag)) {
			if (chain_find(s, c, &child, pc, depth + 1))
				return 1;
		} else if (tag == DW_TAG_imported_unit) {
			Dwarf_Attribute a;
			Dwarf_Die unit;
			if (dwarf_formref_die(dwarf_attr(&child, DW_AT_import, &a), &unit) &&
			    chain_find(s, c, &unit, pc, depth + 1))
				return 1;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return 0;
}

/* The scopes of cu holding pc, innermost first (the compilation unit
 * last): what dwarf_getscopes and then dwarf_getscopes_die on its innermost
 * inlined instance give, in one walk of the unit instead of three.  The
 * caller frees *out.  Returns their number. */
#define CU_RANGE_LESS(a, b) ((a)->lo < (b)->lo || ((a)->lo == (b)->lo && (a)->order < (b)->order))
SP_RUNSORT(cu_range_runsort, struct cu_range, CU_RANGE_LESS)

/* Whether chain_find could find a code scope in the namespace, class,
 * struct or union d: a code scope with addresses in it, or an imported
 * unit (say yes to that), through the namespaces and classes it holds.  A
 * C struct of a header holds none: chain_find's walk finds nothing there. */
static int may_hold_code(Dwarf_Die *d, int depth)
{
	Dwarf_Die child;
	if (depth > 64 || dwarf_child(d, &child) != 0)
		return 0;
	do {
		int tag = dwarf_tag(&child);
		if (tag == DW_TAG_imported_unit)
			return 1;
		if (code_tag(tag)) {
			Dwarf_Addr base, lo, hi;
			ptrdiff_t off = 0;
			while ((off = dwarf_ranges(&child, off, &base, &lo, &hi)) > 0)
				if (lo < hi)
					return 1;
		} else if (container_tag(tag) && may_hold_code(&child, depth + 1)) {
			return 1;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return 0;
}

/* The index of cu's direct children: each code scope's address ranges (as
 * dwarf_haspc reads them), built by one walk of the unit's top level.  cu
 * is any scope: a unit, a function, an inlined call, a block. */
static const struct cu_index *cu_index(struct sp_symbols *s, Dwarf_Die *cu)
{
	uint64_t key = (uint64_t)(uintptr_t)cu->addr;
	int found;
	uint32_t i = sp_u64map_get(&s->cuidx, key, &found);
	if (found)
		return &s->cus[i - 1];
	struct cu_index x = { NULL, 0, UINT32_MAX };
	size_t cap = 0;
	Dwarf_Die child;
	uint32_t order = 0;
	if (dwarf_child(cu, &child) == 0) {
		do {
			int tag = dwarf_tag(&child);
			if (code_tag(tag)) {
				Dwarf_Addr base, lo, hi;
				ptrdiff_t off = 0;
				while ((off = dwarf_ranges(&child, off, &base, &lo, &hi)) > 0) {
					if (lo >= hi)
						continue;
					if (x.n == cap) {
						cap = cap ? 2 * cap : 64;
						x.v = sp_xrealloc(x.v, cap * sizeof *x.v);
					}
					x.v[x.n++] = (struct cu_range){ lo, hi, 0, order, child };
				}
			} else if ((tag == DW_TAG_imported_unit || (container_tag(tag) && may_hold_code(&child, 0))) &&
				   x.first_other == UINT32_MAX) {
				x.first_other = order;
			}
			order++;
		} while (dwarf_siblingof(&child, &child) == 0);
	}
	if (x.n) {
		struct cu_range *tmp = sp_xmalloc(x.n * sizeof *tmp);
		if (cu_range_runsort(x.v, x.n, tmp) == tmp) {
			free(x.v);
			x.v = tmp;
		} else {
			free(tmp);
		}
		for (size_t k = 0; k < x.n; k++)
			x.v[k].maxhi = k && x.v[k - 1].maxhi > x.v[k].hi ? x.v[k - 1].maxhi : x.v[k].hi;
	}
	if (s->ncus == s->capcus) {
		s->capcus = s->capcus ? 2 * s->capcus : 64;
		s->cus = sp_xrealloc(s->cus, s->capcus * sizeof *s->cus);
	}
	s->cus[s->ncus++] = x;
	*sp_u64map_slot(&s->cuidx, key, &found) = (uint32_t)s->ncus;
	return &s->cus[s->ncus - 1];
}

/* The first child of cu (in the unit's order) that chain_find's walk
 * would step into for pc, from the index: 1 and *out when it is a code
 * scope, 0 when none is, -1 when a namespace, class or imported unit
 * comes before (the walk searches through those: the caller walks). */
static int cu_first_holding(const struct cu_index *x, Dwarf_Addr pc, Dwarf_Die *out)
{
	size_t lo = cu_upto(x, pc);
	const struct cu_range *best = NULL;
	for (size_t k = lo; k-- > 0 && x->v[k].maxhi > pc;)
		if (pc < x->v[k].hi && (!best || x->v[k].order < best->order))
			best = &x->v[k];
	if (x->first_other != UINT32_MAX && (!best || x->first_other < best->order))
		return -1;
	if (!best)
		return 0;
	*out = best->die;
	return 1;
}

static int concrete_scopes(struct sp_symbols *s, Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die **out)
{
	struct chain c = { NULL, 0, 0 };
	chain_push(&c, cu);
	chain_find(s, &c, cu, pc, 0);
	for (int i = 0, j = c.n - 1; i < j; i++, j--) {
		Dwarf_Die t = c.v[i];
		c.v[i] = c.v[j];
		c.v[j] = t;
	}
	*out = c.v;
	return c.n;
}

/* pc in a Go executable: the functions Go's table gives (inlined calls
 * first, wrappers left out), 0 when it has none for pc. */
static int resolve_go(struct sp_symbols *s, Dwfl_Module *m, struct sp_modfile *mf, uint64_t pc)
{
	struct filesyms *fs = fsyms(s, mf);
	Dwarf_Addr bias = 0;
	Elf *elf = dwfl_module_getelf(m, &bias);
	if (!fs->go_tried) {
		fs->go_tried = 1;
		fs->go = sp_gopcln_open(elf, &fs->go_why);
	}
	struct sp_gofuncs g;
	if (!fs->go || !sp_gopcln_lookup(fs->go, pc - bias, &g))
		return 0;
	const char *file = NULL;
	int line = 0;
	if (s->o.lines) {
		Dwfl_Line *l = dwfl_module_getsrc(m, pc);
		if (l)
			file = dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL);
	}
	for (int i = 0; i < g.n; i++) {
		uint32_t nm = sp_str_intern(s->p, g.names[i], strlen(g.names[i]));
		pool_add(s, frame(s, nm, fs->module, i ? NULL : file, i ? 0 : line,
				  g.inlined[i] ? SP_KIND_INLINED : SP_KIND_NATIVE));
	}
	s->go_kind = g.kind;
	return 1;
}

/* sp_dwarf_function's answer from the scopes concrete_scopes gave for pc
 * (no second walk of the unit): the function holding the innermost
 * inlined call, or when there is none the smallest of the unit's
 * functions holding pc (the last of equal ones), NULL when none. */
static const char *function_of(struct sp_symbols *s, Dwarf_Die *cu, Dwarf_Die *scopes, int ns, Dwarf_Addr pc)
{
	int i = 0;
	while (i < ns && dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine && dwarf_tag(&scopes[i]) != DW_TAG_subprogram)
		i++;
	if (i == ns)
		return NULL;
	if (dwarf_tag(&scopes[i]) == DW_TAG_inlined_subroutine) {
		for (int j = i + 1; j < ns; j++)
			if (dwarf_tag(&scopes[j]) == DW_TAG_subprogram)
				return die_name(&scopes[j]);
		return NULL;
	}
	Dwarf_Die *fn = &scopes[i];
	const struct cu_index *x = cu_index(s, cu);
	size_t lo = cu_upto(x, pc);
	Dwarf_Addr best = 0;
	uint32_t best_order = 0;
	int have = 0;
	for (size_t k = lo; k-- > 0 && x->v[k].maxhi > pc;) {
		Dwarf_Die *d = &x->v[k].die;
		Dwarf_Addr flo, fhi;
		if (pc >= x->v[k].hi || dwarf_tag(d) != DW_TAG_subprogram || dwarf_lowpc(d, &flo) != 0 ||
		    dwarf_highpc(d, &fhi) != 0)
			continue;
		if (!have || fhi - flo < best || (fhi - flo == best && x->v[k].order > best_order)) {
			have = 1;
			best = fhi - flo;
			best_order = x->v[k].order;
			fn = d;
		}
	}
	return die_name(fn);
}

static void resolve(struct sp_symbols *s, Dwfl_Module *m, struct sp_modfile *mf, uint64_t pc)
{
	s->go_kind = SP_GO_NONE;
	if (resolve_go(s, m, mf, pc))
		return;
	int aliased;
	uint32_t symid = symbol_at(s, m, mf, pc, &aliased);
	Dwarf_Addr cbias = 0;
	Dwarf_Die *cu = NULL, *scopes = NULL;
	int ns = 0;
	if (!s->o.no_inline && (cu = dwfl_module_addrdie(m, pc, &cbias)))
		ns = concrete_scopes(s, cu, pc - cbias, &scopes);
	if (aliased && !s->o.no_inline) {
		/* Several names at one address: perf's choice among them
		 * (psym_better) is what it prints without inlined frames; with
		 * them (DWARF-unwound stacks) it prints DWARF's, as addr2line
		 * does: __libc_start_main_impl, not __libc_start_main;
		 * __memcpy_avx_unaligned_erms, not __memmove_... */
		const char *dn = cu ? function_of(s, cu, scopes, ns, pc - cbias) : NULL;
		if (dn && *dn) {
			Dwarf_Addr bias = 0;
			const struct sp_psym *ps = dwfl_module_getelf(m, &bias) ? sp_psyms_find(&fsyms(s, mf)->psyms, pc - bias) : NULL;
			symid = intern_name(s, dn);
			if (ps)
				note_start(s, fsyms(s, mf), symid, ps->start);
		}
	}
	const char *file = NULL;
	int line = 0;
	if (s->o.lines) {
		Dwfl_Line *l = dwfl_module_getsrc(m, pc);
		if (l)
			file = dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL);
	}
	size_t before = s->npool;
	if (!s->o.no_inline) {
		int i = 0;
		while (i < ns && dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine &&
		       dwarf_tag(&scopes[i]) != DW_TAG_subprogram)
			i++;
		if (i < ns && dwarf_tag(&scopes[i]) == DW_TAG_inlined_subroutine) {
			/* The concrete chain out to the containing function (as
			 * dwarf_getscopes_die gives it: eu-stack -i). */
			Dwarf_Die *chain = scopes + i;
			int nc = ns - i;
			Dwarf_Files *files = NULL;
			if (s->o.lines)
				dwarf_getsrcfiles(cu, &files, NULL);
			const char *cfile = file;
			int cline = line;
			for (int j = 0; j < nc; j++) {
				int tag = dwarf_tag(&chain[j]);
				if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
					continue;
				if (tag == DW_TAG_subprogram) {
					/* The containing function: the symbol table's name
					 * (clones such as foo.isra.0 keep their suffix). */
					uint32_t nm = symid ? symid : intern_name(s, die_name(&chain[j]));
					pool_add(s, frame(s, nm, fsyms(s, mf)->module, cfile, cline, SP_KIND_NATIVE));
					break;
				}
				pool_add(s, frame(s, intern_name(s, die_name(&chain[j])), fsyms(s, mf)->module, cfile, cline,
						  SP_KIND_INLINED));
				Dwarf_Attribute a;
				Dwarf_Word v;
				cfile = NULL;
				cline = 0;
				if (files && dwarf_formudata(dwarf_attr(&chain[j], DW_AT_call_file, &a), &v) == 0)
					cfile = dwarf_filesrc(files, v, NULL, NULL);
				if (dwarf_formudata(dwarf_attr(&chain[j], DW_AT_call_line, &a), &v) == 0)
					cline = (int)v;
			}
		} else if (i < ns && !symid) {
			/* No symbol (a static function of a stripped file whose
			 * DWARF was found by build id or debuglink): DWARF's name. */
			const char *dn = die_name(&scopes[i]);
			if (dn && *dn)
				symid = intern_name(s, dn);
		}
		free(scopes);
	}
	if (s->npool == before)
		pool_add(s, frame(s, symid ? symid : fsyms(s, mf)->bare, fsyms(s, mf)->module, file, line, SP_KIND_NATIVE));
}

/* ---- JIT maps (/tmp/perf-PID.map: "START SIZE NAME" in hex) ---- */

static int jit_cmp(const void *a, const void *b)
{
	const struct jitsym *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->ord < y->ord ? -1 : x->ord > y->ord;
}

static void jit_reload(struct sp_symbols *s, struct jitmap *j)
{
	char path[64];
	snprintf(path, sizeof path, "/tmp/perf-%d.map", j->pid);
	struct stat st;
	if (stat(path, &st) < 0)
		return;
	if (st.st_size == j->size && st.st_mtim.tv_sec == j->mtime.tv_sec && st.st_mtim.tv_nsec == j->mtime.tv_nsec)
		return;
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	j->size = st.st_size;
	j->mtime = st.st_mtim;
	size_t cap = j->n;
	j->n = 0;
	char *line = NULL;
	size_t lcap = 0;
	ssize_t len;
	uint32_t jit_module = sp_str_intern(s->p, "[JIT]", 5);
	while ((len = getline(&line, &lcap, f)) > 0) {
		if (line[len - 1] == '\n')
			line[--len] = 0;
		char *e1, *e2;
		uint64_t start = strtoull(line, &e1, 16);
		if (e1 == line || *e1 != ' ')
			continue;
		uint64_t size = strtoull(e1 + 1, &e2, 16);
		if (e2 == e1 + 1 || *e2 != ' ')
			continue;
		const char *name = e2 + 1;
		if (j->n == cap) {
			cap = cap ? 2 * cap : 256;
			j->v = sp_xrealloc(j->v, cap * sizeof *j->v);
		}
		struct sp_frame fr = { sp_str_intern(s->p, name, strlen(name)), jit_module, 0, 0, 0, SP_KIND_JIT };
		j->v[j->n] = (struct jitsym){ start, start + size, sp_frame_intern(s->p, &fr), (uint32_t)j->n };
		j->n++;
	}
	free(line);
	fclose(f);
	/* Sorted by start, later lines after earlier ones: the look-up takes
	 * the last entry starting at or below pc, so replaced code is named by
	 * its newest entry. */
	sp_sort(j->v, j->n, sizeof *j->v, jit_cmp);
}

static int jit_lookup(struct sp_symbols *s, int pid, uint64_t pc, uint32_t *out)
{
	int found;
	uint32_t *slot = sp_u64map_slot(&s->jitidx, (uint64_t)(uint32_t)pid, &found);
	if (!found) {
		if (s->njits == s->capjits) {
			s->capjits = s->capjits ? 2 * s->capjits : 16;
			s->jits = sp_xrealloc(s->jits, s->capjits * sizeof *s->jits);
		}
		memset(&s->jits[s->njits], 0, sizeof *s->jits);
		s->jits[s->njits].pid = pid;
		*slot = (uint32_t)++s->njits;
	}
	struct jitmap *j = &s->jits[*slot - 1];
	for (int attempt = 0; attempt < 2; attempt++) {
		size_t lo = 0, hi = j->n;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (j->v[mid].start <= pc)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo && pc < j->v[lo - 1].end) {
			*out = j->v[lo - 1].frame;
			return 1;
		}
		/* Not found: the map may have grown.  Look at most every 100 ms;
		 * offline (a recording, its processes gone) once, without a
		 * clock read for every address in no mapping. */
		if (attempt || (s->o.offline && j->checked_ns))
			break;
		uint64_t now = s->o.offline ? 1 : sp_mono_ns();
		if (!s->o.offline && now - j->checked_ns < 100000000u)
			break;
		j->checked_ns = now;
		jit_reload(s, j);
	}
	return 0;
}

/* ---- look-ups ---- */

static char *offline_debuginfo_path;
static const Dwfl_Callbacks offline_cbs = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = sp_elf_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &offline_debuginfo_path,
};

/* The module of f in a Dwfl of its own (symbols, DWARF, debug files found
 * as for the unwinder's), for look-ups without an unwinder. */
static Dwfl_Module *offline_module(struct sp_symbols *s, struct sp_modfile *mf)
{
	struct filesyms *f = fsyms(s, mf);
	if (f->off_tried)
		return f->offm;
	f->off_tried = 1;
	int fd = dup(sp_modfile_fd(mf));
	if (fd < 0 || !(f->off = dwfl_begin(&offline_cbs))) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	f->offm = dwfl_report_offline(f->off, sp_modfile_name(mf), sp_modfile_path(mf), fd); /* takes fd */
	dwfl_report_end(f->off, NULL, NULL);
	return f->offm;
}

/* The file's own module (symbols, DWARF), one per file for every process
 * that maps it: DWARF is read (and decompressed) once per file, not once
 * per process as through each process's unwinder. */
static const struct entry *resolve_offline(struct sp_symbols *s, struct sp_modfile *of, uint64_t vaddr,
					   const uint32_t **frames)
{
	int known;
	uint32_t ei = sp_u64map_get(&fsyms(s, of)->memo, vaddr, &known); /* first: most addresses are known */
	if (known && ei) {
		*frames = s->pool + s->ent[ei - 1].off;
		return &s->ent[ei - 1];
	}
	Dwfl_Module *om = offline_module(s, of);
	Dwarf_Addr obias = 0;
	if (!om || !dwfl_module_getelf(om, &obias))
		return NULL;
	int found;
	uint32_t *slot = sp_u64map_slot(&fsyms(s, of)->memo, vaddr, &found);
	if (!found) {
		uint32_t off = (uint32_t)s->npool;
		resolve(s, om, of, vaddr + obias);
		uint32_t e = new_entry(s, off);
		slot = sp_u64map_slot(&fsyms(s, of)->memo, vaddr, &found);
		*slot = e;
	}
	const struct entry *e = &s->ent[*slot - 1];
	*frames = s->pool + e->off;
	return e;
}

/* The usable file of the cache opened as path, NULL when none is. */
static struct sp_modfile *file_opened_as(struct sp_symbols *s, const char *path)
{
	for (size_t i = 0, n = sp_elfmods_count(s->mods); i < n; i++) {
		struct sp_modfile *f = sp_elfmods_at(s->mods, i);
		if (sp_modfile_fd(f) >= 0 && sp_modfile_path(f) && !strcmp(sp_modfile_path(f), path))
			return f;
	}
	return NULL;
}

void *sp_symbols_file_module(struct sp_symbols *s, const char *path)
{
	struct sp_modfile *f = file_opened_as(s, path);
	return f ? offline_module(s, f) : NULL;
}

const struct sp_psyms *sp_symbols_file_psyms(struct sp_symbols *s, const char *path)
{
	struct sp_modfile *f = file_opened_as(s, path);
	Dwfl_Module *m = f ? offline_module(s, f) : NULL;
	if (!m)
		return NULL;
	struct filesyms *fs = fsyms(s, f);
	if (!fs->psyms_built) {
		sp_psyms_build(&fs->psyms, m, NULL, NULL);
		fs->psyms_built = 1;
	}
	return &fs->psyms;
}

size_t sp_symbols_user(struct sp_symbols *s, struct sp_unwind *u, const struct sp_maps *maps, int pid,
		       uint64_t pc, const uint32_t **frames)
{
	return sp_symbols_user_go(s, u, maps, pid, pc, frames, NULL);
}

size_t sp_symbols_user_go(struct sp_symbols *s, struct sp_unwind *u, const struct sp_maps *maps, int pid,
			  uint64_t pc, const uint32_t **frames, int *go)
{
	const struct entry *e;
	if (go)
		*go = SP_GO_NONE;
	/* The mapping holding pc, its file and load bias: an address in no
	 * executable mapping (a broken frame-pointer chain into a file's data)
	 * is not code, as perf names it [unknown] too. */
	const struct sp_map *mp0 = NULL;
	struct sp_modfile *of = NULL;
	uint64_t rbias = 0;
	int bias_ok = 0;
	if (maps) {
		uint64_t gen = sp_maps_generation(maps);
		struct mapcache *c = &s->mc[(gen * 4 + (pc >> 21)) & 63];
		if (c->gen == gen && c->mp && pc >= c->start && pc < c->end) {
			mp0 = c->mp;
		} else if ((mp0 = sp_maps_find(maps, pc))) {
			c->gen = gen;
			c->mp = mp0;
			c->start = mp0->start;
			c->end = mp0->end;
			c->of = sp_symbols_modfile(s, pid, mp0);
			c->bias_ok = c->of && sp_modfile_bias(c->of, mp0, &c->rbias) == 0;
		}
		if (mp0) {
			of = c->of;
			rbias = c->rbias;
			bias_ok = c->bias_ok;
		}
	}
	if (of && bias_ok && (e = resolve_offline(s, of, pc - rbias, frames))) {
		if (go)
			*go = e->go;
		return e->n;
	}
	/* Without maps (a caller that has only the unwinder): the module of
	 * the process's Dwfl. */
	Dwfl *dwfl = u && !maps ? sp_unwind_dwfl(u) : NULL;
	Dwfl_Module *m = dwfl ? dwfl_addrmodule(dwfl, pc) : NULL;
	void **ud;
	struct sp_modfile *mf = NULL;
	if (m) {
		dwfl_module_info(m, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
		mf = *ud;
	}
	Dwarf_Addr bias = 0;
	if (mf && dwfl_module_getelf(m, &bias) && (e = resolve_offline(s, mf, pc - bias, frames))) {
		if (go)
			*go = e->go;
		return e->n;
	}
	/* No ELF module: JIT code named in /tmp/perf-PID.map, or unknown. */
	if (jit_lookup(s, pid, pc, &s->one)) {
		*frames = &s->one;
		return 1;
	}
	const struct sp_map *mp = mp0;
	if (!mp && s->nomap_frame) {
		s->one = s->nomap_frame - 1;
		*frames = &s->one;
		return 1;
	}
	struct sp_frame f = { s->unknown_name, 0, 0, 0, 0, SP_KIND_NATIVE };
	if (mp && mp->path[0]) {
		f.module = sp_str_intern(s->p, mp->path, strlen(mp->path));
		/* "[memfd:x (deleted)]", a file that is not ELF; not perf's
		 * "//anon" (JIT code that /tmp/perf-PID.map may name later:
		 * lib/engine/collect.c does not cache an [unknown] frame) */
		if (mp->path[0] == '/' && mp->path[1] != '/')
			f.name = bare_name(s->p, mp->path);
	}
	s->one = sp_frame_intern(s->p, &f);
	if (!mp)
		s->nomap_frame = s->one + 1;
	*frames = &s->one;
	return 1;
}

const char *sp_symbols_go_unread(const struct sp_symbols *s, size_t *i, const char **file)
{
	for (; *i < s->nfs; (*i)++) {
		const struct filesyms *fs = s->fs[*i];
		if (fs && fs->go_why) {
			*file = sp_str(s->p, fs->module);
			return s->fs[(*i)++]->go_why;
		}
	}
	return NULL;
}

/* The Go table of the file holding pc (named so far), and its load bias. */
static const struct sp_gopcln *go_table(struct sp_symbols *s, const struct sp_maps *maps, int pid, uint64_t pc,
					uint64_t *bias)
{
	const struct sp_map *mp = maps ? sp_maps_find(maps, pc) : NULL;
	struct sp_modfile *of = mp ? sp_symbols_modfile(s, pid, mp) : NULL;
	if (!of || sp_modfile_bias(of, mp, bias) < 0)
		return NULL;
	return fsyms(s, of)->go;
}

int sp_symbols_go_callee(struct sp_symbols *s, const struct sp_maps *maps, int pid, uint64_t ret, uint64_t *target)
{
	uint64_t bias, to;
	const struct sp_gopcln *t = go_table(s, maps, pid, ret, &bias);
	if (!t || !sp_gopcln_call_target(t, ret - bias, &to))
		return 0;
	*target = to + bias;
	return 1;
}

int sp_symbols_go_spdelta(struct sp_symbols *s, const struct sp_maps *maps, int pid, uint64_t pc, int64_t *delta)
{
	uint64_t bias;
	const struct sp_gopcln *t = go_table(s, maps, pid, pc, &bias);
	return t && sp_gopcln_spdelta(t, pc - bias, delta);
}

/* stable (as glibc's qsort, a merge sort, was): of several symbols at one
 * address the look-up takes the last listed */
#define KSYM_LESS(a, b) ((a)->addr < (b)->addr)
SP_RUNSORT(ksym_runsort, struct ksym, KSYM_LESS)

/* The 8 hex digits at p (any case) as a number, in a few word operations;
 * 0 when one is not a hex digit. */
static int hex8(const char *p, uint64_t *out)
{
	uint64_t x;
	memcpy(&x, p, 8);
	x = __builtin_bswap64(x); /* the first digit in the top byte */
	/* '0'-'9' are 0x30-0x39, 'A'-'F' 0x41-0x46, 'a'-'f' 0x61-0x66 */
	const uint64_t ones = 0x0101010101010101u;
	uint64_t letter = (x >> 6) & ones, low = x & 0x0f0f0f0f0f0f0f0fu, hi = x & 0xf0f0f0f0f0f0f0f0u;
	uint64_t digit_hi = ~letter & ones;
	/* a digit: high nibble 3, low 0-9; a letter: high nibble 4 or 6, low 1-6 */
	uint64_t bad = (hi ^ (digit_hi * 0x30) ^ (letter * 0x40)) & ~(letter * 0x20);
	uint64_t big = (low + ones * 6) & (ones * 0x10); /* low nibble > 9 */
	uint64_t zero = ((low + ones * 0x0f) & (ones * 0x10)) ^ (ones * 0x10); /* low nibble 0 */
	uint64_t lbad = (low + ones * 0x09) & (ones * 0x10);                 /* low nibble > 6 */
	if (bad || (big & (digit_hi * 0x10)) || ((zero | lbad) & (letter * 0x10)))
		return 0;
	x = low + 9 * letter;
	x = (x | x >> 4) & 0x00ff00ff00ff00ffu;
	x = (x | x >> 8) & 0x0000ffff0000ffffu;
	*out = (x | x >> 16) & 0xffffffffu;
	return 1;
}

/* The 16 hex digits at p, 0 when one is not. */
static int hex16(const char *p, uint64_t *out)
{
	uint64_t a, b;
	if (!hex8(p, &a) || !hex8(p + 8, &b))
		return 0;
	*out = a << 32 | b;
	return 1;
}

/* One line of /proc/kallsyms, "ffffffff81000000 T _stext\t[module]": a
 * text symbol's address and name into the table: the name copied into
 * names, or (names NULL) its offset from base. */
static void kallsyms_line(struct sp_symbols *s, const char *base, struct sp_buf *names, const char *p, const char *nl,
			  size_t *cap, uint64_t *nonzero)
{
	uint64_t addr = 0;
	const char *q = p;
	if (nl - p > 19 && p[16] == ' ' && hex16(p, &addr)) {
		q = p + 16; /* a 64-bit kernel's: 16 digits (most lines) */
	} else {
		for (; q < nl; q++) {
			unsigned c = (unsigned char)*q, v = c - '0';
			if (v > 9) {
				v = (c | 0x20) - 'a';
				if (v > 5)
					break;
				v += 10;
			}
			addr = addr << 4 | v;
		}
	}
	if (q + 3 >= nl || q[0] != ' ' || q[2] != ' ' || !(q[1] == 't' || q[1] == 'T' || q[1] == 'w' || q[1] == 'W'))
		return;
	const char *name = q + 3;
	if (addr)
		(*nonzero)++;
	if (s->nksyms == *cap) {
		*cap = *cap ? 2 * *cap : 65536;
		s->ksyms = sp_xrealloc(s->ksyms, *cap * sizeof *s->ksyms);
	}
	if (!names) { /* mapped: the name's end is looked for when it is sampled */
		s->ksyms[s->nksyms++] = (struct ksym){ addr, (uint32_t)(name - base), KSYM_LEN_LATER };
		return;
	}
	const char *ne = memchr(name, '\t', (size_t)(nl - name));
	if (!ne)
		ne = nl;
	size_t at = names->len;
	sp_buf_add(names, name, (size_t)(ne - name));
	s->ksyms[s->nksyms++] = (struct ksym){ addr, (uint32_t)at, (uint32_t)(ne - name) };
}

/* The name of k in kbuf and its length. */
static const char *ksym_name(const struct sp_symbols *s, const struct ksym *k, size_t *len)
{
	const char *nm = s->kbuf + k->name;
	if (k->len != KSYM_LEN_LATER) {
		*len = k->len;
		return nm;
	}
	const char *p = nm, *e = s->kbuf + s->kmapped;
	while (p < e && *p != '\t' && *p != '\n')
		p++;
	*len = (size_t)(p - nm);
	return nm;
}

/* The lines of [p, end) into the table (kallsyms_line); returns where an
 * incomplete last line starts (end with last set: that one too). */
static const char *kallsyms_lines(struct sp_symbols *s, const char *base, struct sp_buf *names, const char *p,
				  const char *end, int last, size_t *cap, uint64_t *nonzero)
{
#ifdef __SSE2__
	/* 64 bytes at a time: the newlines' positions as the bits of a word,
	 * a line for each (no branch per 16 bytes that mispredicts at every
	 * line's end) */
	const __m128i nlv = _mm_set1_epi8('\n');
	for (const char *b = p; end - b >= 64; b += 64) {
		uint64_t m = 0;
		for (int k = 0; k < 4; k++)
			m |= (uint64_t)(unsigned)_mm_movemask_epi8(
				     _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(b + 16 * k)), nlv))
			     << (16 * k);
		for (; m; m &= m - 1) {
			const char *at = b + __builtin_ctzll(m);
			kallsyms_line(s, base, names, p, at, cap, nonzero);
			p = at + 1;
		}
	}
#endif
	const char *nl;
	while ((nl = sp_find_nl(p, end))) {
		kallsyms_line(s, base, names, p, nl, cap, nonzero);
		p = nl + 1;
	}
	if (last && p < end) { /* a last line without its newline */
		kallsyms_line(s, base, names, p, end, cap, nonzero);
		p = end;
	}
	return p;
}

/* /proc/kallsyms has ~100k+ text symbols: it is read through one buffer,
 * the text symbols' addresses and names kept (not the whole text: 8 MB of
 * it).  The kernel formats it anew at every read (~35 ms), so a copy that
 * perf's build-id cache holds (sp_symbols_kernel_file) is mapped instead,
 * names left where they are.  Returns 0, or -1 when path cannot be read. */
static int read_kallsyms(struct sp_symbols *s, const char *path, uint64_t *nonzero)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t cap = 0;
	struct stat st;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && (uint64_t)st.st_size < UINT32_MAX) {
		/* a regular file (not /proc's, whose size reads as 0) */
		void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
		close(fd);
		if (m == MAP_FAILED)
			return -1;
		s->kbuf = m;
		s->kmapped = (size_t)st.st_size;
		/* room for the lines at once (some 44 bytes each): what is
		 * not used is never touched */
		cap = (size_t)st.st_size / 24 + 1;
		s->ksyms = sp_xrealloc(s->ksyms, cap * sizeof *s->ksyms);
		kallsyms_lines(s, m, NULL, m, s->kbuf + s->kmapped, 1, &cap, nonzero);
		return 0;
	}
	enum { BUFSZ = 256 << 10 };
	char *buf = sp_xmalloc(BUFSZ);
	struct sp_buf names = SP_BUF_INIT;
	sp_buf_grow(&names, 2 << 20);
	size_t have = 0;
	for (;;) {
		ssize_t r = read(fd, buf + have, BUFSZ - have);
		if (r <= 0) {
			kallsyms_lines(s, NULL, &names, buf, buf + have, 1, &cap, nonzero);
			break;
		}
		have += (size_t)r;
		const char *p = kallsyms_lines(s, NULL, &names, buf, buf + have, 0, &cap, nonzero);
		have = (size_t)(buf + have - p);
		if (have == BUFSZ) /* a line longer than the buffer: not kallsyms */
			have = 0;
		memmove(buf, p, have);
	}
	close(fd);
	free(buf);
	s->kbuf = names.p; /* owned now */
	return 0;
}

/* Forget what read_kallsyms read (a cache copy that is not this kernel's). */
static void drop_kallsyms(struct sp_symbols *s)
{
	if (s->kmapped)
		munmap(s->kbuf, s->kmapped);
	else
		free(s->kbuf);
	s->kbuf = NULL;
	s->kmapped = 0;
	s->nksyms = 0;
}

/* Non-zero when the table has symbol name at addr. */
static int ksym_at(const struct sp_symbols *s, const char *name, uint64_t addr)
{
	size_t n = strlen(name), len;
	for (size_t i = 0; i < s->nksyms; i++) {
		if (s->ksyms[i].addr != addr)
			continue;
		const char *nm = ksym_name(s, &s->ksyms[i], &len);
		if (len == n && !memcmp(nm, name, n))
			return 1;
	}
	return 0;
}

static void load_kallsyms(struct sp_symbols *s)
{
	s->kloaded = 1;
	s->kmodule = sp_str_intern(s->p, "[kernel.kallsyms]", 17);
	uint64_t nonzero = 0;
	/* the cache's copy when its reference symbol is where the recording
	 * saw it (the same kernel, the same address layout) */
	if (s->kfile && read_kallsyms(s, s->kfile, &nonzero) == 0 && !ksym_at(s, s->kref, s->kref_addr)) {
		drop_kallsyms(s);
		nonzero = 0;
	}
	if (!s->kbuf && read_kallsyms(s, "/proc/kallsyms", &nonzero) < 0) {
		s->khidden = 1;
		return;
	}
	if (!nonzero)
		s->khidden = 1;
	if (s->nksyms) { /* (in address order already, as the kernel lists them: no pass) */
		struct ksym *tmp = sp_xmalloc(s->nksyms * sizeof *tmp);
		if (ksym_runsort(s->ksyms, s->nksyms, tmp) == tmp) {
			free(s->ksyms);
			s->ksyms = tmp;
		} else {
			free(tmp);
		}
	}
}

size_t sp_symbols_kernel(struct sp_symbols *s, uint64_t pc, const uint32_t **frames)
{
	if (!s->kloaded)
		load_kallsyms(s);
	int found;
	uint64_t key = pc == UINT64_MAX ? pc - 1 : pc;
	uint32_t *slot = sp_u64map_slot(&s->kmemo, key, &found);
	if (!found) {
		size_t lo = 0, hi = s->khidden ? 0 : s->nksyms;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (s->ksyms[mid].addr <= pc)
				lo = mid + 1;
			else
				hi = mid;
		}
		/* no symbol: "[kernel.kallsyms]", as the perl names perf's */
		struct sp_frame fr = { s->kmodule, s->kmodule, 0, 0, 0, SP_KIND_KERNEL };
		size_t x = s->nkx;
		while (x > 0 && !(pc >= s->kx[x - 1].addr && pc < s->kx[x - 1].end))
			x--; /* the latest registered first: addresses are reused */
		if (x)
			fr.name = s->kx[x - 1].name;
		else if (lo) {
			size_t len;
			const char *nm = ksym_name(s, &s->ksyms[lo - 1], &len);
			fr.name = sp_str_intern(s->p, nm, len);
		}
		uint32_t id = sp_frame_intern(s->p, &fr);
		slot = sp_u64map_slot(&s->kmemo, key, &found);
		*slot = id;
	}
	s->one = *slot;
	*frames = &s->one;
	return 1;
}

void sp_symbols_kernel_add(struct sp_symbols *s, uint64_t addr, uint64_t len, const char *name)
{
	if (!len || addr + len < addr)
		return;
	if (s->nkx == s->capkx) {
		s->capkx = s->capkx ? 2 * s->capkx : 16;
		s->kx = sp_xrealloc(s->kx, s->capkx * sizeof *s->kx);
	}
	s->kx[s->nkx++] = (struct kextra){ addr, addr + len, sp_str_intern(s->p, name, strlen(name)) };
	/* addresses named before (by kallsyms, or an earlier program there)
	 * are named again: such records are few, mostly before the samples */
	if (s->kmemo.used) {
		sp_u64map_release(&s->kmemo);
		sp_u64map_init(&s->kmemo);
	}
}

void sp_symbols_load_kernel(struct sp_symbols *s)
{
	if (!s->kloaded)
		load_kallsyms(s);
}

int sp_symbols_kernel_hidden(const struct sp_symbols *s) { return s->khidden; }

void sp_symbols_kernel_file(struct sp_symbols *s, const char *path, const char *ref, uint64_t ref_addr)
{
	if (s->kloaded)
		return;
	free(s->kfile);
	free(s->kref);
	s->kfile = sp_xstrndup(path, strlen(path));
	s->kref = sp_xstrndup(ref, strlen(ref));
	s->kref_addr = ref_addr;
}
