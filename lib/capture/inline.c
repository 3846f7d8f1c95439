/* inline.c — expand inlined frames from DWARF, in-process with libdwfl.
 *
 * Each module (ELF file named by a frame's module string) is opened once, in
 * its own offline Dwfl, and its function symbols are indexed by name once.
 * Each distinct (frame, position) is expanded once; each distinct input
 * stack node once.  The position matters because every frame but the leaf
 * holds a return address, which may already belong to the next line or to an
 * outer scope; for those the address looked up is one byte earlier.
 */
#include "inline.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <stdlib.h>

#include "elfmod.h"

#define MAX_DEPTH 64 /* inlined functions kept per address */

/* How a frame sits in its stack. */
enum pos {
	POS_LEAF = 0,    /* the sampled instruction itself */
	POS_CALLER = 1,  /* a return address */
	POS_EXPANDED = 2 /* a caller whose inlined frames perf already printed */
};

struct sym {
	uint64_t hash;
	const char *name; /* in the module's ELF string table */
	Dwarf_Addr addr;  /* in the module's Dwfl address space */
	uint64_t size;
};

struct mod {
	Dwfl *dwfl;          /* NULL when the file could not be opened */
	Dwfl_Module *m;
	struct sym *syms;    /* sorted by hash, then address */
	size_t nsyms;
	/* C++ symbols under the names perf prints for them (built on the
	 * first miss); names owned here. */
	struct sym *cxx;
	size_t ncxx;
	int cxx_done;
};

struct expansion {
	uint32_t off, n; /* frame ids in in->ids */
};

struct sp_inline {
	struct sp_sink sink; /* first: the callbacks cast back to us */
	struct sp_sink *down;
	struct sp_profile *p;
	Dwfl_Callbacks cb;   /* must outlive every Dwfl */
	char *debuginfo_path;
	struct sp_u64map mod_of;   /* module string id -> mods index + 1 */
	struct mod *mods;
	size_t nmods, capmods;
	struct sp_u64map exp_of;   /* frame << 2 | pos -> exps index + 1 */
	struct expansion *exps;
	size_t nexps, capexps;
	uint32_t *ids;
	size_t nids, capids;
	struct sp_u64map node_of;  /* input node << 2 | pos -> output node */
	uint32_t *chain;
	size_t capchain;
	struct sp_buf tmp;
	uint64_t unreadable; /* modules that could not be opened */
};

static void add_id(struct sp_inline *in, uint32_t id)
{
	if (in->nids == in->capids) {
		in->capids = in->capids ? in->capids * 2 : 256;
		in->ids = sp_xrealloc(in->ids, in->capids * sizeof *in->ids);
	}
	in->ids[in->nids++] = id;
}

/* ---- modules and their symbols ---- */

static int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;
	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void index_symbols(struct mod *md)
{
	int n = dwfl_module_getsymtab(md->m);
	if (n <= 0)
		return;
	md->syms = sp_xmalloc((size_t)n * sizeof *md->syms);
	for (int i = 1; i < n; i++) { /* 0 is the null symbol */
		GElf_Sym s;
		GElf_Addr a;
		GElf_Word shndx;
		const char *name = dwfl_module_getsym_info(md->m, i, &s, &a, &shndx, NULL, NULL);
		if (!name || !*name || shndx == SHN_UNDEF)
			continue;
		int t = GELF_ST_TYPE(s.st_info);
		if (t != STT_FUNC && t != STT_GNU_IFUNC)
			continue;
		struct sym *y = &md->syms[md->nsyms++];
		y->hash = sp_hash(name, strlen(name));
		y->name = name;
		y->addr = a;
		y->size = s.st_size;
	}
	sp_sort(md->syms, md->nsyms, sizeof *md->syms, sym_cmp);
}

static struct mod *get_module(struct sp_inline *in, uint32_t module)
{
	int found;
	uint32_t *slot = sp_u64map_slot(&in->mod_of, module, &found);
	if (found)
		return &in->mods[*slot - 1];
	if (in->nmods == in->capmods) {
		in->capmods = in->capmods ? in->capmods * 2 : 16;
		in->mods = sp_xrealloc(in->mods, in->capmods * sizeof *in->mods);
	}
	struct mod *md = &in->mods[in->nmods++];
	*slot = (uint32_t)in->nmods;
	memset(md, 0, sizeof *md);
	const char *path = sp_str(in->p, module);
	md->dwfl = dwfl_begin(&in->cb);
	if (md->dwfl) {
		dwfl_report_begin(md->dwfl);
		md->m = dwfl_report_offline(md->dwfl, path, path, -1);
		dwfl_report_end(md->dwfl, NULL, NULL);
	}
	if (!md->m) {
		dwfl_end(md->dwfl);
		md->dwfl = NULL;
		in->unreadable++;
		return md;
	}
	index_symbols(md);
	return md;
}

/* Cut "(params) const [clone .isra.0]" off the end of a demangled name, as
 * perf does; 0 when there is no parameter list. */
static size_t cut_params(const char *d, size_t n)
{
	const char *c;
	while (n && d[n - 1] == ']' && (c = memmem(d, n, " [clone ", 8)))
		n = (size_t)(c - d);
	while (n && d[n - 1] != ')') /* " const", " &&" */
		if (d[--n] == ']' || d[n] == '(')
			return 0;
	int depth = 0;
	for (size_t i = n; i-- > 0;) {
		if (d[i] == ')')
			depth++;
		else if (d[i] == '(' && --depth == 0)
			return i;
	}
	return 0;
}

static void add_cxx(struct mod *md, size_t *cap, char *name, size_t n, Dwarf_Addr addr, uint64_t size)
{
	if (md->ncxx == *cap) {
		*cap = *cap ? *cap * 2 : 256;
		md->cxx = sp_xrealloc(md->cxx, *cap * sizeof *md->cxx);
	}
	struct sym *y = &md->cxx[md->ncxx++];
	y->hash = sp_hash(name, n);
	y->name = name; /* NUL-terminated at n by the caller */
	y->addr = addr;
	y->size = size;
}

/* perf prints C++ symbols demangled without parameters or return type
 * ("ns::A<int>::f"), which the ELF symbol table does not hold: the matching
 * names are made with the demangler (elfmod.h); without it C++ frames stay
 * unresolved. */
static void index_cxx(struct sp_inline *in, struct mod *md)
{
	md->cxx_done = 1;
	size_t cap = 0;
	for (size_t i = 0; i < md->nsyms; i++) {
		const struct sym *y = &md->syms[i];
		if (strncmp(y->name, "_Z", 2))
			continue;
		char *d = sp_demangle(y->name);
		if (!d)
			continue;
		size_t n = cut_params(d, strlen(d));
		if (!n) {
			free(d);
			continue;
		}
		d[n] = 0;
		add_cxx(md, &cap, d, n, y->addr, y->size);
		/* a function template also under its name without the
		 * return type */
		size_t sp = sp_cxx_name_start(d, n);
		if (sp && sp < n)
			add_cxx(md, &cap, sp_xstrndup(d + sp, n - sp), n - sp, y->addr, y->size);
	}
	sp_sort(md->cxx, md->ncxx, sizeof *md->cxx, sym_cmp);
}

/* The one function symbol called name (n bytes) that can hold offset off.
 * Returns 0 when there is none, or several at different addresses (two
 * static functions of the same name: perf's text cannot tell them apart). */
static int find_in(const struct sym *syms, size_t nsyms, const char *name, size_t n, uint64_t off, Dwarf_Addr *addr)
{
	uint64_t h = sp_hash(name, n);
	size_t lo = 0, hi = nsyms;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (syms[mid].hash < h)
			lo = mid + 1;
		else
			hi = mid;
	}
	int hits = 0;
	for (size_t i = lo; i < nsyms && syms[i].hash == h; i++) {
		const struct sym *y = &syms[i];
		if (strncmp(y->name, name, n) || y->name[n] || (y->size && off >= y->size))
			continue;
		if (hits && y->addr == *addr)
			continue; /* the same function under an alias */
		*addr = y->addr;
		hits++;
	}
	return hits == 1;
}

static int find_symbol(struct sp_inline *in, struct mod *md, const char *name, size_t n, uint64_t off,
		       Dwarf_Addr *addr)
{
	if (find_in(md->syms, md->nsyms, name, n, off, addr))
		return 1;
	if (!memmem(name, n, "::", 2) && !memchr(name, '<', n))
		return 0;
	if (!md->cxx_done)
		index_cxx(in, md);
	return find_in(md->cxx, md->ncxx, name, n, off, addr);
}

/* Names of the functions inlined at addr, innermost first.  dwarf_getscopes
 * continues from an inlined instance into its abstract origin and so loses
 * the function it was inlined into; dwarf_getscopes_die on the innermost
 * instance walks the concrete scopes instead. */
static int inline_names(Dwfl_Module *m, Dwarf_Addr addr, const char **names, int max)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu = dwfl_module_addrdie(m, addr, &bias);
	if (!cu)
		return 0;
	Dwarf_Die *scopes = NULL;
	int ns = dwarf_getscopes(cu, addr - bias, &scopes);
	int i = 0;
	for (; i < ns; i++) {
		int tag = dwarf_tag(&scopes[i]);
		if (tag == DW_TAG_inlined_subroutine || tag == DW_TAG_subprogram)
			break;
	}
	if (i >= ns || dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine) {
		free(scopes);
		return 0;
	}
	Dwarf_Die *concrete = NULL;
	int nc = dwarf_getscopes_die(&scopes[i], &concrete);
	free(scopes);
	int n = 0;
	for (int j = 0; j < nc && n < max; j++) {
		int tag = dwarf_tag(&concrete[j]);
		if (tag == DW_TAG_subprogram)
			break;
		if (tag != DW_TAG_inlined_subroutine)
			continue;
		Dwarf_Attribute a;
		const char *name = dwarf_formstring(dwarf_attr_integrate(&concrete[j], DW_AT_name, &a));
		names[n++] = name ? name : "??";
	}
	free(concrete);
	return n;
}

/* ---- frames ---- */

/* Length of name without a trailing "+0x<hex>", or n when there is none;
 * the offset goes to *off. */
static size_t split_offset(const char *name, size_t n, uint64_t *off)
{
	size_t i = n;
	while (i > 0 && ((name[i - 1] >= '0' && name[i - 1] <= '9') || (name[i - 1] >= 'a' && name[i - 1] <= 'f')))
		i--;
	if (i == n || i < 4 || n - i > 16 || memcmp(name + i - 3, "+0x", 3))
		return n;
	uint64_t v = 0;
	for (size_t j = i; j < n; j++)
		v = v << 4 | (uint64_t)(name[j] <= '9' ? name[j] - '0' : name[j] - 'a' + 10);
	*off = v;
	return i - 3;
}

/* Append to in->ids the frames that replace frame at position pos. */
static void expand_frame(struct sp_inline *in, uint32_t frame, enum pos pos)
{
	struct sp_profile *p = in->p;
	struct sp_frame fr = *sp_frame_get(p, frame);
	const char *name = sp_str(p, fr.name);
	size_t n = sp_str_len(p, fr.name);
	uint64_t off = 0;
	size_t base = split_offset(name, n, &off);
	if (base == n) {
		add_id(in, frame);
		return;
	}
	fr.name = sp_str_intern(p, name, base);
	add_id(in, sp_frame_intern(p, &fr));
	const char *mod = fr.module ? sp_str(p, fr.module) : "";
	if (fr.kind != SP_KIND_NATIVE || mod[0] != '/' || pos == POS_EXPANDED)
		return;
	struct mod *md = get_module(in, fr.module);
	Dwarf_Addr addr;
	if (!md->dwfl || !find_symbol(in, md, name, base, off, &addr))
		return;
	/* A return address: look at the call instruction before it. */
	addr += off - (pos == POS_CALLER && off > 0);
	const char *names[MAX_DEPTH];
	int k = inline_names(md->m, addr, names, MAX_DEPTH);
	for (int i = k; i-- > 0;) {
		struct sp_buf *t = &in->tmp;
		sp_buf_reset(t);
		sp_buf_adds(t, names[i]);
		/* The marker the perf reader gives the inlined parts of "a->b". */
		sp_buf_add(t, "_[i]", 4);
		struct sp_frame f = { 0 };
		f.name = sp_str_intern(p, t->p, t->len);
		f.module = fr.module;
		f.kind = SP_KIND_INLINED;
		add_id(in, sp_frame_intern(p, &f));
	}
}

static struct expansion expand(struct sp_inline *in, uint32_t frame, enum pos pos)
{
	int found;
	uint32_t v = sp_u64map_get(&in->exp_of, (uint64_t)frame << 2 | pos, &found);
	if (found)
		return in->exps[v - 1];
	struct expansion e;
	e.off = (uint32_t)in->nids;
	expand_frame(in, frame, pos);
	e.n = (uint32_t)(in->nids - e.off);
	if (in->nexps == in->capexps) {
		in->capexps = in->capexps ? in->capexps * 2 : 256;
		in->exps = sp_xrealloc(in->exps, in->capexps * sizeof *in->exps);
	}
	in->exps[in->nexps++] = e;
	*sp_u64map_slot(&in->exp_of, (uint64_t)frame << 2 | pos, &found) = (uint32_t)in->nexps;
	return e;
}

/* ---- stacks ---- */

/* The position of node's parent: perf's own "(inlined)" frames follow the
 * frame they were expanded from, which must then not be expanded again. */
static enum pos parent_pos(const struct sp_profile *p, uint32_t node)
{
	uint32_t frame = sp_node_get(p, node)->frame;
	return sp_frame_get(p, frame)->kind == SP_KIND_INLINED ? POS_EXPANDED : POS_CALLER;
}

/* The output node for input node at position pos.  Walks up to the nearest
 * ancestor already mapped, then interns the expanded frames downwards. */
static uint32_t map_node(struct sp_inline *in, uint32_t node, enum pos pos)
{
	struct sp_profile *p = in->p;
	int found;
	if (!node)
		return 0;
	uint32_t out = sp_u64map_get(&in->node_of, (uint64_t)node << 2 | pos, &found);
	if (found)
		return out;
	size_t k = 0;
	uint32_t cur = node;
	out = 0;
	for (;;) {
		if (k == in->capchain) {
			in->capchain = in->capchain ? in->capchain * 2 : 64;
			in->chain = sp_xrealloc(in->chain, in->capchain * sizeof *in->chain);
		}
		in->chain[k++] = cur;
		uint32_t parent = sp_node_get(p, cur)->parent;
		if (!parent)
			break;
		out = sp_u64map_get(&in->node_of, (uint64_t)parent << 2 | parent_pos(p, cur), &found);
		if (found)
			break;
		cur = parent;
	}
	for (size_t i = k; i-- > 0;) {
		uint32_t nd = in->chain[i];
		enum pos ps = i ? parent_pos(p, in->chain[i - 1]) : pos;
		struct expansion e = expand(in, sp_node_get(p, nd)->frame, ps);
		for (uint32_t j = 0; j < e.n; j++)
			out = sp_node_intern(p, out, in->ids[e.off + j]);
		*sp_u64map_slot(&in->node_of, (uint64_t)nd << 2 | ps, &found) = out;
	}
	return out;
}

/* ---- the sink ---- */

static int inline_sample(struct sp_sink *s, struct sp_profile *p, const struct sp_sample *smp, struct sp_err *err)
{
	struct sp_inline *in = (struct sp_inline *)s;
	if (!in->down->sample)
		return 0;
	struct sp_sample out = *smp;
	out.stack = map_node(in, smp->stack, POS_LEAF);
	return in->down->sample(in->down, p, &out, err);
}

static int inline_trace(struct sp_sink *s, struct sp_profile *p, const struct sp_trace *t, struct sp_err *err)
{
	struct sp_inline *in = (struct sp_inline *)s;
	if (!in->down->trace)
		return 0;
	struct sp_trace out = *t;
	out.stack = map_node(in, t->stack, POS_LEAF);
	return in->down->trace(in->down, p, &out, err);
}

static int inline_meta(struct sp_sink *s, struct sp_profile *p, struct sp_err *err)
{
	struct sp_inline *in = (struct sp_inline *)s;
	return in->down->meta ? in->down->meta(in->down, p, err) : 0;
}

static int inline_end_input(struct sp_sink *s, struct sp_profile *p, struct sp_err *err)
{
	struct sp_inline *in = (struct sp_inline *)s;
	return in->down->end_input ? in->down->end_input(in->down, p, err) : 0;
}

struct sp_inline *sp_inline_new(struct sp_profile *p, struct sp_sink *down)
{
	struct sp_inline *in = sp_xcalloc(1, sizeof *in);
	in->sink.sample = inline_sample;
	in->sink.trace = inline_trace;
	in->sink.meta = inline_meta;
	in->sink.end_input = inline_end_input;
	in->down = down;
	in->p = p;
	/* Offline: files by path; separate debug info through build-id and
	 * .gnu_debuglink in the standard places (/usr/lib/debug). */
	in->cb.find_elf = dwfl_build_id_find_elf;
	in->cb.find_debuginfo = sp_elf_find_debuginfo;
	in->cb.section_address = dwfl_offline_section_address;
	in->cb.debuginfo_path = &in->debuginfo_path;
	sp_u64map_init(&in->mod_of);
	sp_u64map_init(&in->exp_of);
	sp_u64map_init(&in->node_of);
	sp_buf_init(&in->tmp);
	return in;
}

struct sp_sink *sp_inline_sink(struct sp_inline *in) { return &in->sink; }

/* There is no warn hook yet: modules that could not be opened are only
 * counted (in->unreadable); their frames keep the name without offset. */
int sp_inline_finish(struct sp_inline *in, struct sp_err *err) { return 0; }

void sp_inline_free(struct sp_inline *in)
{
	if (!in)
		return;
	for (size_t i = 0; i < in->nmods; i++) {
		free(in->mods[i].syms);
		for (size_t j = 0; j < in->mods[i].ncxx; j++)
			free((char *)in->mods[i].cxx[j].name);
		free(in->mods[i].cxx);
		dwfl_end(in->mods[i].dwfl);
	}
	free(in->mods);
	sp_u64map_release(&in->mod_of);
	sp_u64map_release(&in->exp_of);
	sp_u64map_release(&in->node_of);
	free(in->exps);
	free(in->ids);
	free(in->chain);
	sp_buf_release(&in->tmp);
	free(in);
}
