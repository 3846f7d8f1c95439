/* gopclntab.c — Go's function table: names, inline tree, wrappers.
 *
 * The layout (Go's runtime/symtab.go and cmd/link's pcln.go):
 *   header: magic, 0, 0, minLC, ptrSize, nfunc, nfiles, [textStart (1.18+)],
 *           then the offsets (from the header) of funcnametab, cutab,
 *           filetab, pctab and the function table
 *   function table: nfunc + 1 pairs (entry, offset of the _func record);
 *           1.18+: two uint32 (entry from textStart); 1.16: two words
 *   _func:  entry, nameoff, args, deferreturn, pcsp, pcfile, pcln, npcdata,
 *           [cuOffset], [startLine (1.20+)], funcID, flag, _, nfuncdata,
 *           then npcdata uint32 pc-value table offsets (from pctab) and
 *           nfuncdata funcdata (1.18+: uint32 from go:func.*; 1.16:
 *           pointers)
 *   pc-value table: pairs of varints (zig-zag value delta, pc delta *
 *           minLC), the value starting at -1, ended by a 0 value delta
 *   inline tree (funcdata 3, indexed by pcdata 2): 1.16-1.19 {parent
 *           int16, funcID uint8, _, file, line, nameoff, parentPc int32};
 *           1.20+ {funcID uint8, _[3], nameoff, parentPc, startLine int32}
 */
#include "gopclntab.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

struct sp_gopcln {
	int ver;       /* 116, 118, 120 */
	int minlc;
	uint64_t nfunc;
	uint64_t text; /* the entries' base (1.18+) */
	const uint8_t *hdr, *end;
	const uint8_t *names, *pctab, *ftab;
	/* funcdata of 1.18+: offsets from go:func.* (gofunc, at address
	 * gofunc_addr); 1.16: pointers, read through sec */
	uint64_t gofunc_addr;
	int have_gofunc;
	/* the file's allocated sections, to read an address */
	struct sec {
		uint64_t addr, size;
		const uint8_t *d;
	} *secs;
	size_t nsecs;
	int wrapper; /* funcID of wrappers, -1 unknown */
};

static uint64_t le(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int i = n; i-- > 0;)
		v = v << 8 | p[i];
	return v;
}

/* The bytes at address a (n of them), NULL when no section holds them. */
static const uint8_t *at(const struct sp_gopcln *t, uint64_t a, uint64_t n)
{
	for (size_t i = 0; i < t->nsecs; i++)
		if (a >= t->secs[i].addr && a - t->secs[i].addr <= t->secs[i].size &&
		    n <= t->secs[i].size - (a - t->secs[i].addr))
			return t->secs[i].d + (a - t->secs[i].addr);
	return NULL;
}

static int in(const struct sp_gopcln *t, const uint8_t *p, size_t n)
{
	return p >= t->hdr && p <= t->end && (size_t)(t->end - p) >= n;
}

/* The _func record of function i, NULL when out of the section. */
static const uint8_t *func_rec(const struct sp_gopcln *t, uint64_t i, uint64_t *entry)
{
	int w = t->ver >= 118 ? 4 : 8;
	const uint8_t *e = t->ftab + i * 2 * w;
	if (!in(t, e, 2 * (size_t)w))
		return NULL;
	*entry = (t->ver >= 118 ? t->text : 0) + le(e, w);
	const uint8_t *f = t->ftab + le(e + w, w);
	return in(t, f, 48) ? f : NULL;
}

static uint64_t entry_of(const struct sp_gopcln *t, uint64_t i)
{
	int w = t->ver >= 118 ? 4 : 8;
	const uint8_t *e = t->ftab + i * 2 * w;
	return in(t, e, (size_t)w) ? (t->ver >= 118 ? t->text : 0) + le(e, w) : UINT64_MAX;
}

/* Fields of a _func record. */
struct func {
	uint64_t entry;
	const uint8_t *rec;
	uint32_t nameoff, pcsp, npcdata, nfuncdata;
	int funcid;
	const uint8_t *pcdata; /* npcdata uint32 */
	const uint8_t *funcdata;
};

static int func_read(const struct sp_gopcln *t, uint64_t i, struct func *f)
{
	f->rec = func_rec(t, i, &f->entry);
	if (!f->rec)
		return 0;
	const uint8_t *r = f->rec;
	int base = t->ver >= 118 ? 4 : 8; /* entryoff / entry */
	f->nameoff = (uint32_t)le(r + base, 4);
	f->pcsp = (uint32_t)le(r + base + 12, 4);
	f->npcdata = (uint32_t)le(r + base + 24, 4);
	int idoff = t->ver >= 120 ? base + 36 : t->ver >= 118 ? base + 32 : base + 28;
	f->funcid = r[idoff];
	f->nfuncdata = r[idoff + 3];
	f->pcdata = r + idoff + 4;
	if (f->npcdata > 64 || f->nfuncdata > 64 || !in(t, f->pcdata, 4 * (size_t)f->npcdata))
		return 0;
	f->funcdata = f->pcdata + 4 * f->npcdata;
	if (t->ver < 118) /* pointers, aligned */
		f->funcdata = t->hdr + (((size_t)(f->funcdata - t->hdr) + 7) & ~(size_t)7);
	return 1;
}

static const char *name_at(const struct sp_gopcln *t, uint32_t off)
{
	const uint8_t *p = t->names + off;
	if (!in(t, p, 1) || !memchr(p, 0, (size_t)(t->end - p)))
		return NULL;
	return (const char *)p;
}

static int varint(const uint8_t **p, const uint8_t *end, uint32_t *v)
{
	uint32_t r = 0;
	for (int s = 0; s < 35; s += 7) {
		if (*p >= end)
			return 0;
		uint8_t b = *(*p)++;
		r |= (uint32_t)(b & 0x7f) << s;
		if (!(b & 0x80)) {
			*v = r;
			return 1;
		}
	}
	return 0;
}

/* The value of pc-value table off (from pctab) at pc, -1 when none. */
static int32_t pcvalue(const struct sp_gopcln *t, uint32_t off, uint64_t entry, uint64_t pc)
{
	if (!off)
		return -1;
	const uint8_t *p = t->pctab + off;
	if (!in(t, p, 1))
		return -1;
	uint32_t val = UINT32_MAX; /* -1, in unsigned arithmetic: a bad table wraps, no overflow */
	uint64_t cur = entry;
	for (int first = 1;; first = 0) {
		uint32_t uv, pd;
		if (!varint(&p, t->end, &uv) || (uv == 0 && !first))
			return -1;
		val += (uv >> 1) ^ (0u - (uv & 1));
		if (!varint(&p, t->end, &pd))
			return -1;
		cur += (uint64_t)pd * (uint64_t)t->minlc;
		if (pc < cur)
			return (int32_t)val;
	}
}

/* The address of go:func.* (1.18+): its symbol, or the field of
 * runtime.firstmoduledata, found as the word that points at the header in
 * a writable section, whose text field is the header's textStart. */
static int find_gofunc(struct sp_gopcln *t, Elf *elf, uint64_t hdr_addr)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		size_t n = d && sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
		for (size_t i = 0; i < n; i++) {
			GElf_Sym sym;
			const char *nm;
			if (gelf_getsym(d, (int)i, &sym) && (nm = elf_strptr(elf, sh.sh_link, sym.st_name)) &&
			    (!strcmp(nm, "go:func.*") || !strcmp(nm, "go.func.*"))) {
				t->gofunc_addr = sym.st_value;
				return 1;
			}
		}
	}
	const int textw = 22, gofw = t->ver >= 120 ? 40 : 38; /* words into moduledata (1.20 added covctrs) */
	for (size_t i = 0; i < t->nsecs; i++) {
		const uint8_t *d = t->secs[i].d;
		for (uint64_t o = 0; o + (uint64_t)(gofw + 1) * 8 <= t->secs[i].size; o += 8)
			if (le(d + o, 8) == hdr_addr && le(d + o + (uint64_t)textw * 8, 8) == t->text) {
				t->gofunc_addr = le(d + o + (uint64_t)gofw * 8, 8);
				return at(t, t->gofunc_addr, 1) != NULL;
			}
	}
	return 0;
}

struct sp_gopcln *sp_gopcln_open(Elf *elf, const char **why)
{
	*why = NULL;
	size_t shstr;
	if (!elf || elf_getshdrstrndx(elf, &shstr) != 0)
		return NULL;
	GElf_Ehdr eh;
	if (!gelf_getehdr(elf, &eh))
		return NULL;
	Elf_Scn *scn = NULL, *pcln = NULL, *text = NULL;
	size_t nalloc = 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *nm;
		if (!gelf_getshdr(scn, &sh) || !(nm = elf_strptr(elf, shstr, sh.sh_name)))
			continue;
		if (!strcmp(nm, ".gopclntab"))
			pcln = scn;
		else if (!strcmp(nm, ".text"))
			text = scn;
		if ((sh.sh_flags & SHF_ALLOC) && sh.sh_type == SHT_PROGBITS)
			nalloc++;
	}
	if (!pcln)
		return NULL;
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB) {
		*why = "not a 64-bit little-endian file";
		return NULL;
	}
	Elf_Data *d = elf_getdata(pcln, NULL);
	GElf_Shdr psh;
	gelf_getshdr(pcln, &psh);
	if (!d || !d->d_buf || d->d_size < 64) {
		*why = "its .gopclntab is empty";
		return NULL;
	}
	struct sp_gopcln *t = sp_xcalloc(1, sizeof *t);
	t->hdr = d->d_buf;
	t->end = t->hdr + d->d_size;
	uint32_t magic = (uint32_t)le(t->hdr, 4);
	t->ver = magic == 0xfffffffaU ? 116 : magic == 0xfffffff0U ? 118 : magic == 0xfffffff1U ? 120 : 0;
	t->minlc = t->hdr[6];
	if (!t->ver || t->hdr[4] || t->hdr[5] || t->hdr[7] != 8 || !t->minlc) {
		*why = t->ver ? "an unexpected .gopclntab header" : "a .gopclntab of a Go version not known here (before 1.16?)";
		free(t);
		return NULL;
	}
	t->nfunc = le(t->hdr + 8, 8);
	const uint8_t *o = t->hdr + 24;
	if (t->ver >= 118) {
		t->text = le(o, 8);
		o += 8;
		if (!t->text && text) { /* a position-independent file: relocated at run time */
			GElf_Shdr sh;
			if (gelf_getshdr(text, &sh))
				t->text = sh.sh_addr;
		}
	}
	uint64_t fno = le(o, 8), pco = le(o + 24, 8), fto = le(o + 32, 8);
	if (fno >= d->d_size || pco >= d->d_size || fto >= d->d_size || t->nfunc > d->d_size / 8) {
		*why = "a .gopclntab whose offsets run past it";
		free(t);
		return NULL;
	}
	t->names = t->hdr + fno;
	t->pctab = t->hdr + pco;
	t->ftab = t->hdr + fto;
	t->secs = sp_xcalloc(nalloc ? nalloc : 1, sizeof *t->secs);
	scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *sd;
		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC) || sh.sh_type != SHT_PROGBITS ||
		    !(sd = elf_getdata(scn, NULL)) || !sd->d_buf || t->nsecs >= nalloc)
			continue;
		t->secs[t->nsecs++] = (struct sec){ sh.sh_addr, sd->d_size, sd->d_buf };
	}
	if (t->ver >= 118)
		t->have_gofunc = find_gofunc(t, elf, psh.sh_addr);
	/* The wrappers' funcID differs by version: that of the method value
	 * wrappers ("-fm"), which are wrappers in every version. */
	t->wrapper = -1;
	for (uint64_t i = 0; i < t->nfunc && t->wrapper < 0; i++) {
		struct func f;
		const char *nm;
		size_t n;
		if (func_read(t, i, &f) && (nm = name_at(t, f.nameoff)) && (n = strlen(nm)) > 3 &&
		    !strcmp(nm + n - 3, "-fm") && f.funcid)
			t->wrapper = f.funcid;
	}
	if (t->wrapper < 0 && t->ver >= 118) /* none: funcID_wrapper of 1.18 to 1.2x */
		t->wrapper = 21;
	return t;
}

void sp_gopcln_free(struct sp_gopcln *t)
{
	if (!t)
		return;
	free(t->secs);
	free(t);
}

int sp_gopcln_version(const struct sp_gopcln *t) { return t->ver; }

static int kind_of(const char *nm)
{
	static const struct {
		const char *name;
		int kind;
	} k[] = { { "runtime.systemstack", SP_GO_SWITCH }, { "runtime.morestack", SP_GO_SWITCH },
		  { "runtime.mcall", SP_GO_TOP },          { "runtime.mstart", SP_GO_TOP },
		  { "runtime.rt0_go", SP_GO_TOP },         { "runtime.goexit", SP_GO_EXIT } };
	for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
		if (!strcmp(nm, k[i].name))
			return k[i].kind;
	return SP_GO_NORMAL;
}

/* The function holding vaddr: 1 with *f read, else 0. */
static int func_at(const struct sp_gopcln *t, uint64_t vaddr, struct func *f)
{
	/* the last function whose entry is <= vaddr (entry nfunc is the end) */
	uint64_t lo = 0, hi = t->nfunc;
	if (!t->nfunc || vaddr < entry_of(t, 0) || vaddr >= entry_of(t, t->nfunc))
		return 0;
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (entry_of(t, mid) <= vaddr)
			lo = mid;
		else
			hi = mid;
	}
	return func_read(t, lo, f);
}

int sp_gopcln_spdelta(const struct sp_gopcln *t, uint64_t vaddr, int64_t *delta)
{
	struct func f;
	if (!func_at(t, vaddr, &f))
		return 0;
	int32_t d = pcvalue(t, f.pcsp, f.entry, vaddr);
	if (d < 0 || d > (1 << 24))
		return 0;
	*delta = d;
	return 1;
}

int sp_gopcln_lookup(const struct sp_gopcln *t, uint64_t vaddr, struct sp_gofuncs *out)
{
	struct func f;
	const char *nm;
	if (!func_at(t, vaddr, &f) || !(nm = name_at(t, f.nameoff)))
		return 0;
	out->n = 0;
	out->kind = kind_of(nm);
	/* inlined calls at vaddr, innermost first */
	uint64_t tree = 0;
	int sz = t->ver >= 120 ? 16 : 20;
	if (f.npcdata > 2 && f.nfuncdata > 3) {
		if (t->ver >= 118) {
			uint32_t off = (uint32_t)le(f.funcdata + 3 * 4, 4);
			if (off != UINT32_MAX && t->have_gofunc)
				tree = t->gofunc_addr + off;
		} else {
			tree = le(f.funcdata + 3 * 8, 8);
		}
	}
	uint32_t inl = tree ? (uint32_t)le(f.pcdata + 2 * 4, 4) : 0;
	uint64_t pc = vaddr;
	for (int guard = 0; inl && guard < SP_GO_MAXFRAMES - 1; guard++) {
		int32_t ix = pcvalue(t, inl, f.entry, pc);
		const uint8_t *c = ix >= 0 ? at(t, tree + (uint64_t)ix * (uint64_t)sz, (uint64_t)sz) : NULL;
		if (!c)
			break;
		int id = t->ver >= 120 ? c[0] : c[2];
		uint32_t noff = (uint32_t)le(c + (t->ver >= 120 ? 4 : 12), 4);
		uint32_t ppc = (uint32_t)le(c + (t->ver >= 120 ? 8 : 16), 4);
		const char *in_nm = name_at(t, noff);
		if (!in_nm)
			break;
		if (id != t->wrapper) {
			out->names[out->n] = in_nm;
			out->inlined[out->n++] = 1;
		}
		pc = f.entry + ppc;
	}
	/* A wrapper is left out as Go's traceback leaves it out: an address
	 * in one may have no frame at all. */
	if (f.funcid != t->wrapper) {
		out->names[out->n] = nm;
		out->inlined[out->n++] = 0;
	}
	return 1;
}

int sp_gopcln_call_target(const struct sp_gopcln *t, uint64_t ret, uint64_t *target)
{
	const uint8_t *c = ret >= 5 ? at(t, ret - 5, 5) : NULL;
	if (!c || c[0] != 0xe8) /* CALL rel32 */
		return 0;
	uint64_t to = ret + (uint64_t)(int64_t)(int32_t)(uint32_t)le(c + 1, 4);
	uint64_t lo = 0, hi = t->nfunc;
	while (lo < hi) { /* a function's entry */
		uint64_t mid = lo + (hi - lo) / 2, e = entry_of(t, mid);
		if (e == to) {
			*target = to;
			return 1;
		}
		if (e < to)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}
