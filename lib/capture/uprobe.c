/* uprobe.c — probe specs resolved to binary file offsets (see uprobe.h). */
#include "uprobe.h"

#include <ctype.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <gelf.h>
#include <glob.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "bpfhit.h"
#include "elfmod.h"
#include "tracefs.h"

void sp_uprobe_set_init(struct sp_uprobe_set *s) { memset(s, 0, sizeof *s); }

static void probe_release(struct sp_uprobe *u)
{
	free(u->name);
	free(u->path);
	for (int k = 0; k < u->nvalues; k++)
		free(u->vname[k]);
}

void sp_uprobe_set_release(struct sp_uprobe_set *s)
{
	for (size_t i = 0; i < s->n; i++)
		probe_release(&s->v[i]);
	free(s->v);
	free(s->stripped);
	free(s->cxx_eh);
	free(s->notes);
	memset(s, 0, sizeof *s);
}

/* ---- the spec ---- */

struct spec {
	char *lib;      /* NULL: the executable */
	char *func;
	uint64_t off;
	int has_off, entry_only;
	char *file;     /* a line probe FILE:LINE: the source file */
	int line;
	int nvalues;
	enum sp_uvalue vkind[SP_UPROBE_MAX_VALUES];
	int varg[SP_UPROBE_MAX_VALUES];
	char *vname[SP_UPROBE_MAX_VALUES];
	int vars;       /* the values are variable names (a line probe) */
};

static void spec_release(struct spec *p)
{
	free(p->file);
	free(p->lib);
	free(p->func);
	for (int i = 0; i < p->nvalues; i++)
		free(p->vname[i]);
}

/* "(arg1,ret)" at the end of s[0..n): the values.  Returns 1 when the list
 * holds only value names, 0 when the parentheses are something else (a
 * C++ parameter list), -1 with err set for a bad value name. */
static int parse_values(struct spec *p, const char *s, size_t n, const char *whole, struct sp_err *err)
{
	const char *c = s;
	const char *e = s + n;
	while (c < e) {
		const char *comma = memchr(c, ',', (size_t)(e - c));
		const char *t = comma ? comma : e;
		while (c < t && isspace((unsigned char)*c))
			c++;
		size_t len = (size_t)(t - c);
		while (len && isspace((unsigned char)c[len - 1]))
			len--;
		int arg = 0;
		if (p->vars) {
			/* VAR, VAR.MEMBER or VAR->MEMBER: one level of member. */
			size_t i = 0, sep = 0;
			while (i < len && (isalnum((unsigned char)c[i]) || c[i] == '_'))
				i++;
			if (i && i < len && (c[i] == '.' || (c[i] == '-' && i + 1 < len && c[i + 1] == '>'))) {
				sep = i;
				i += c[i] == '.' ? 1 : 2;
				size_t m = i;
				while (i < len && (isalnum((unsigned char)c[i]) || c[i] == '_'))
					i++;
				if (i == m)
					i = len + 1;
			}
			if (!len)
				return sp_err_set(err, "--trace '%s': an empty variable name", whole);
			if (i != len || !i || isdigit((unsigned char)c[0]) || (sep && isdigit((unsigned char)c[sep + (c[sep] == '.' ? 1 : 2)])))
				return sp_err_set(err, "--trace '%s': '%.*s' is not a variable name, VAR.MEMBER or "
						  "VAR->MEMBER (one level of struct member)", whole, (int)len, c);
		} else if (len == 4 && c[0] == 'a' && c[1] == 'r' && c[2] == 'g' && c[3] >= '1' && c[3] <= '6')
			arg = c[3] - '0';
		else if (!(len == 3 && !memcmp(c, "ret", 3)))
			return p->nvalues ? sp_err_set(err, "--trace '%s': cannot record '%.*s': values are arg1..arg6 "
						       "and ret", whole, (int)len, c)
					  : 0;
		if (p->nvalues == SP_UPROBE_MAX_VALUES)
			return sp_err_set(err, "--trace '%s': at most %d values per probe", whole, SP_UPROBE_MAX_VALUES);
		p->vkind[p->nvalues] = p->vars ? SP_UV_REG : arg ? SP_UV_ARG : SP_UV_RET;
		p->varg[p->nvalues] = arg;
		p->vname[p->nvalues] = sp_xstrndup(c, len);
		p->nvalues++;
		c = comma ? comma + 1 : e;
	}
	return 1;
}

static int parse_spec(struct spec *p, const char *s, struct sp_err *err)
{
	memset(p, 0, sizeof *p);
	size_t n = strlen(s);
	if (!n)
		return sp_err_set(err, "--trace needs a function, not an empty string");
	/* Values: a final "(...)" holding value names only; after FILE.c:LINE,
	 * variable names. */
	if (s[n - 1] == ')') {
		const char *open = memchr(s, '(', n);
		if (open) {
			const char *colon = open;
			while (colon > s && colon[-1] != ':')
				colon--;
			int digits = colon > s && colon < open;
			for (const char *c = colon; c < open && digits; c++)
				digits = isdigit((unsigned char)*c);
			p->vars = digits && colon - 1 > s && memchr(s, '.', (size_t)(colon - 1 - s));
			int rc = parse_values(p, open + 1, (size_t)(s + n - 1 - open - 1), s, err);
			if (rc < 0)
				return -1;
			if (rc > 0)
				n = (size_t)(open - s);
		}
	}
	if (n > 6 && !memcmp(s + n - 6, ":entry", 6) && s[n - 7] != ':') {
		p->entry_only = 1;
		n -= 6;
	}
	/* LIB: — the first ':' that is not part of a C++ "::". */
	size_t start = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] != ':')
			continue;
		if (i + 1 < n && s[i + 1] == ':') {
			i++;
			continue;
		}
		if (!i)
			return sp_err_set(err, "--trace '%s': nothing before ':' (want LIB:FUNC)", s);
		p->lib = sp_xstrndup(s, i);
		start = i + 1;
		break;
	}
	/* +OFF */
	const char *plus = NULL;
	for (size_t i = start; i < n; i++)
		if (s[i] == '+')
			plus = s + i;
	if (plus && plus + 1 < s + n && isdigit((unsigned char)plus[1])) {
		char buf[32];
		size_t len = (size_t)(s + n - plus - 1);
		if (len >= sizeof buf)
			return sp_err_set(err, "--trace '%s': the offset is too long", s);
		memcpy(buf, plus + 1, len);
		buf[len] = 0;
		char *end;
		errno = 0;
		unsigned long long v = strtoull(buf, &end, 0);
		if (errno || *end)
			return sp_err_set(err, "--trace '%s': '+%s' is not an offset (decimal or 0x hex)", s, buf);
		p->off = v;
		p->has_off = 1;
		n = (size_t)(plus - s);
	}
	if (n <= start)
		return sp_err_set(err, "--trace '%s': no function name", s);
	p->func = sp_xstrndup(s + start, n - start);
	/* FILE.c:LINE — a line probe in the executable (a '+' in it is no
	 * offset: "x.c:12" never has one) */
	static const char *const src[] = { ".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".C" };
	int digits = !p->has_off && !p->entry_only && *p->func;
	for (const char *c = p->func; *c && digits; c++)
		digits = isdigit((unsigned char)*c);
	for (size_t i = 0; p->lib && digits && i < sizeof src / sizeof *src; i++) {
		size_t ll = strlen(p->lib), sl = strlen(src[i]);
		if (ll > sl && !strcmp(p->lib + ll - sl, src[i])) {
			p->file = p->lib;
			p->lib = NULL;
			p->line = atoi(p->func);
			break;
		}
	}
	if (p->vars && !p->file)
		return sp_err_set(err, "--trace '%s': variables are recorded at a line (FILE.c:LINE(var)); "
				  "a function records arg1..arg6 and ret", s);
	if (p->has_off) {
		for (int i = 0; i < p->nvalues; i++)
			if (p->vkind[i] == SP_UV_RET)
				return sp_err_set(err, "--trace '%s': a probe at an offset has no return value", s);
	}
	return 0;
}

/* ---- libraries ---- */

/* A file name is the library `lib` when it equals it or continues with
 * '.' or '-' ("libc" is libc.so.6 and libc-2.36.so, not libcap.so.2). */
static int lib_matches(const char *path, const char *lib)
{
	const char *b = strrchr(path, '/');
	b = b ? b + 1 : path;
	size_t n = strlen(lib);
	return !strncmp(b, lib, n) && (!b[n] || b[n] == '.' || b[n] == '-');
}

static char *lib_from_maps(int pid, const char *lib)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/maps", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return NULL;
	char line[PATH_MAX + 128];
	char *found = NULL;
	while (!found && fgets(line, sizeof line, f)) {
		char *slash = strchr(line, '/');
		if (!slash)
			continue;
		slash[strcspn(slash, "\n")] = 0;
		if (lib_matches(slash, lib))
			found = realpath(slash, NULL);
	}
	fclose(f);
	return found;
}

static const char *const lib_dirs[] = {
	"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64",
	"/lib", "/usr/lib", "/usr/local/lib",
};

/* The executable's DT_NEEDED entry that is `lib`, found in the system's
 * library directories; else any LIB.so* there. */
static char *lib_from_disk(const char *exe, const char *lib)
{
	char *found = NULL;
	int fd = open(exe, O_RDONLY | O_CLOEXEC);
	Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	Elf_Scn *scn = NULL;
	while (e && !found && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && !found && sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Dyn dyn;
			if (!gelf_getdyn(d, (int)i, &dyn) || dyn.d_tag != DT_NEEDED)
				continue;
			const char *name = elf_strptr(e, sh.sh_link, dyn.d_un.d_val);
			if (!name || !lib_matches(name, lib))
				continue;
			for (size_t k = 0; k < sizeof lib_dirs / sizeof *lib_dirs && !found; k++) {
				char p[PATH_MAX];
				snprintf(p, sizeof p, "%s/%s", lib_dirs[k], name);
				if (access(p, R_OK) == 0)
					found = realpath(p, NULL);
			}
		}
	}
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
	for (size_t k = 0; k < sizeof lib_dirs / sizeof *lib_dirs && !found; k++) {
		char pat[PATH_MAX];
		snprintf(pat, sizeof pat, "%s/%s.so*", lib_dirs[k], lib);
		glob_t g;
		if (glob(pat, 0, NULL, &g) == 0 && g.gl_pathc)
			found = realpath(g.gl_pathv[0], NULL);
		globfree(&g);
	}
	return found;
}

/* ---- symbols ---- */

struct fsym {
	const char *raw;   /* in the ELF string table */
	char *dem;         /* demangled without parameters (owned), or NULL */
	char *full;        /* demangled with parameters (owned), or NULL */
	uint64_t value, size;
};

struct symtab {
	int fd;
	Elf *e;
	struct fsym *v;
	size_t n, cap;
	int stripped, cxx_eh, cxx;
};

/* "ns::A::f(int) const" -> "ns::A::f": cut at the '(' that opens the
 * outermost parameter list (templates and operator() aside, good enough
 * to name a probe). */
static char *cut_params(const char *d)
{
	int angle = 0;
	size_t n = strlen(d);
	for (size_t i = 0; i < n; i++) {
		if (d[i] == '<')
			angle++;
		else if (d[i] == '>' && angle)
			angle--;
		else if (d[i] == '(' && !angle && i && !(i >= 8 && !strncmp(d + i - 8, "operator", 8)))
			return sp_xstrndup(d, i);
	}
	return sp_xstrndup(d, n);
}

static void symtab_release(struct symtab *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->v[i].dem);
		free(t->v[i].full);
	}
	free(t->v);
	if (t->e)
		elf_end(t->e);
	if (t->fd >= 0)
		close(t->fd);
}

/* One function symbol of the table into t (sp_elf_symbols' callback). */
static int take_sym(void *ctx, const struct sp_elfsym *y)
{
	struct symtab *t = ctx;
	int type = GELF_ST_TYPE(y->info);
	if ((type != STT_FUNC && type != STT_GNU_IFUNC) || !y->value || y->shndx == SHN_UNDEF)
		return 0;
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 1024;
		t->v = sp_xrealloc(t->v, t->cap * sizeof *t->v);
	}
	struct fsym *f = &t->v[t->n++];
	f->raw = y->name;
	f->dem = f->full = NULL;
	f->value = y->value;
	f->size = y->size;
	char *full = sp_demangle(y->name);
	if (full) {
		f->full = full;
		f->dem = cut_params(full);
		t->cxx = 1;
	}
	return 0;
}

/* The function symbols of path's .symtab (.dynsym when it has none). */
static int symtab_open(struct symtab *t, const char *path, struct sp_err *err)
{
	memset(t, 0, sizeof *t);
	elf_version(EV_CURRENT);
	t->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (t->fd < 0)
		return sp_err_set(err, "%s: %s", path, strerror(errno));
	t->e = elf_begin(t->fd, ELF_C_READ, NULL);
	if (!t->e || elf_kind(t->e) != ELF_K_ELF)
		return sp_err_set(err, "%s: not an ELF file", path);
	size_t shstr;
	if (elf_getshdrstrndx(t->e, &shstr) < 0)
		shstr = 0;
	t->stripped = 1;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(t->e, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		const char *sname = shstr ? elf_strptr(t->e, shstr, sh.sh_name) : NULL;
		if (sname && !strcmp(sname, ".gcc_except_table"))
			t->cxx_eh = 1;
		if (sh.sh_type == SHT_SYMTAB)
			t->stripped = 0;
	}
	sp_elf_symbols(t->e, NULL, SP_ELFSYM_DYNSYM_ELSE, take_sym, t);
	return 0;
}

/* vaddr -> file offset through the PT_LOAD segment holding it. */
static int file_offset(Elf *e, uint64_t vaddr, uint64_t *off)
{
	size_t n;
	if (elf_getphdrnum(e, &n) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_filesz) {
			*off = vaddr - ph.p_vaddr + ph.p_offset;
			return 0;
		}
	}
	return -1;
}

static int is_glob(const char *s) { return strpbrk(s, "*?[") != NULL; }

static int sym_matches(const struct fsym *f, const char *pat, int glob)
{
	if (glob)
		return !fnmatch(pat, f->raw, 0) || (f->dem && !fnmatch(pat, f->dem, 0)) ||
		       (f->full && !fnmatch(pat, f->full, 0));
	return !strcmp(pat, f->raw) || (f->dem && !strcmp(pat, f->dem)) || (f->full && !strcmp(pat, f->full));
}

/* Edit distance, capped: for "did you mean". */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 128 || lb > 128)
		return (size_t)-1;
	size_t row[129];
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
			size_t v = diag + cost;
			if (row[j] + 1 < v)
				v = row[j] + 1;
			if (row[j - 1] + 1 < v)
				v = row[j - 1] + 1;
			row[j] = v;
			diag = up;
		}
	}
	return row[lb];
}

static void nearest(const struct symtab *t, const char *pat, struct sp_buf *out)
{
	const char *best[3] = { NULL, NULL, NULL };
	size_t bd[3] = { (size_t)-1, (size_t)-1, (size_t)-1 };
	for (size_t i = 0; i < t->n; i++) {
		const char *name = t->v[i].dem ? t->v[i].dem : t->v[i].raw;
		size_t d = distance(pat, name);
		/* a name that contains the pattern is near, whatever its length */
		if (strstr(name, pat))
			d = d < 2 ? d : 2;
		int dup = 0;
		for (int k = 0; k < 3; k++)
			dup |= best[k] && !strcmp(best[k], name);
		if (dup)
			continue;
		for (int k = 0; k < 3; k++) {
			if (d < bd[k]) {
				for (int m = 2; m > k; m--) {
					bd[m] = bd[m - 1];
					best[m] = best[m - 1];
				}
				bd[k] = d;
				best[k] = name;
				break;
			}
		}
	}
	for (int k = 0; k < 3 && best[k]; k++) {
		sp_buf_adds(out, k ? ", " : "");
		sp_buf_adds(out, best[k]);
	}
}

static void add_probe(struct sp_uprobe_set *s, const struct spec *p, const char *spec, const char *path,
		      const char *name, uint64_t vaddr, uint64_t off, uint64_t size)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 16;
		s->v = sp_xrealloc(s->v, s->cap * sizeof *s->v);
	}
	struct sp_uprobe *u = &s->v[s->n++];
	memset(u, 0, sizeof *u);
	struct sp_buf b = SP_BUF_INIT;
	sp_buf_adds(&b, name);
	if (p->has_off) {
		char x[32];
		snprintf(x, sizeof x, "+0x%llx", (unsigned long long)p->off);
		sp_buf_adds(&b, x);
	}
	sp_buf_cstr(&b);
	u->name = b.p;
	u->path = sp_xstrndup(path, strlen(path));
	u->vaddr = vaddr + p->off;
	u->offset = off + p->off;
	u->size = size;
	u->point = p->has_off;
	u->ret = !p->entry_only && !p->has_off;
	u->nvalues = p->nvalues;
	for (int i = 0; i < p->nvalues; i++) {
		u->vkind[i] = p->vkind[i];
		u->varg[i] = p->varg[i];
		u->vname[i] = sp_xstrndup(p->vname[i], strlen(p->vname[i]));
	}
	u->spec = spec;
}

/* "--trace 'SPEC': " before an error message. */
static void err_prefix_spec(struct sp_err *err, const char *spec)
{
	char msg[sizeof err->msg];
	snprintf(msg, sizeof msg, "%s", err->msg);
	sp_err_set(err, "--trace '%s': %s", spec, msg);
}

/* A source file name from DWARF is `want` when equal, or when it ends
 * with "/want". */
static int file_matches(const char *name, const char *want)
{
	size_t n = strlen(name), w = strlen(want);
	return n >= w && !strcmp(name + n - w, want) && (n == w || name[n - w - 1] == '/');
}

/* The base type of a variable: its size and signedness; 0 or -1 (err). */
static int var_type(Dwarf_Die *var, const char *what, int *size, int *sgn, struct sp_err *err)
{
	Dwarf_Attribute ta;
	Dwarf_Die type, peeled;
	if (!dwarf_attr_integrate(var, DW_AT_type, &ta) || !dwarf_formref_die(&ta, &type) ||
	    dwarf_peel_type(&type, &peeled) != 0)
		return sp_err_set(err, "cannot read %s: its type is unknown", what);
	int tag = dwarf_tag(&peeled);
	Dwarf_Word enc = DW_ATE_unsigned;
	Dwarf_Attribute ea;
	if (tag == DW_TAG_base_type && dwarf_attr(&peeled, DW_AT_encoding, &ea))
		dwarf_formudata(&ea, &enc);
	int sz = dwarf_bytesize(&peeled);
	if ((tag != DW_TAG_base_type && tag != DW_TAG_pointer_type && tag != DW_TAG_enumeration_type) ||
	    enc == DW_ATE_float || !(sz == 1 || sz == 2 || sz == 4 || sz == 8))
		return sp_err_set(err, "cannot read %s: it is not an integer or a pointer", what);
	*size = sz;
	*sgn = enc == DW_ATE_signed || enc == DW_ATE_signed_char;
	return 0;
}

/* MEMBER of the struct that var (a DIE with a type) is (arrow = 0) or
 * points to (arrow = 1): its offset, size and signedness; 0 or -1 (err). */
static int member_of(Dwarf_Die *var, int arrow, const char *member, const char *what, int64_t *moff, int *size,
		     int *sgn, struct sp_err *err)
{
	Dwarf_Attribute ta;
	Dwarf_Die type, st;
	if (!dwarf_attr_integrate(var, DW_AT_type, &ta) || !dwarf_formref_die(&ta, &type) ||
	    dwarf_peel_type(&type, &st) != 0)
		return sp_err_set(err, "cannot read %s: its type is unknown", what);
	if (arrow) {
		if (dwarf_tag(&st) != DW_TAG_pointer_type)
			return sp_err_set(err, "cannot read %s: '->' needs a pointer to a struct, and it is not a "
					  "pointer (use '.')", what);
		if (!dwarf_attr_integrate(&st, DW_AT_type, &ta) || !dwarf_formref_die(&ta, &type) ||
		    dwarf_peel_type(&type, &st) != 0)
			return sp_err_set(err, "cannot read %s: it points to void or an unknown type", what);
	} else if (dwarf_tag(&st) == DW_TAG_pointer_type)
		return sp_err_set(err, "cannot read %s: it is a pointer: use '->'", what);
	int tag = dwarf_tag(&st);
	if (tag != DW_TAG_structure_type && tag != DW_TAG_union_type && tag != DW_TAG_class_type)
		return sp_err_set(err, "cannot read %s: it is not a struct, union or class", what);
	if (dwarf_hasattr(&st, DW_AT_declaration))
		return sp_err_set(err, "cannot read %s: its struct is only declared in this compilation unit", what);
	Dwarf_Die m;
	if (dwarf_child(&st, &m) == 0) {
		do {
			const char *name = dwarf_diename(&m);
			if (dwarf_tag(&m) != DW_TAG_member || !name || strcmp(name, member))
				continue;
			Dwarf_Attribute la;
			Dwarf_Word off = 0;
			if (dwarf_hasattr(&m, DW_AT_bit_size) || dwarf_hasattr(&m, DW_AT_data_bit_offset))
				return sp_err_set(err, "cannot read %s: it is a bit-field", what);
			if (dwarf_attr_integrate(&m, DW_AT_data_member_location, &la) && dwarf_formudata(&la, &off) != 0)
				return sp_err_set(err, "cannot read %s: its member offset is a location expression, "
						  "not a constant", what);
			*moff = (int64_t)off;
			return var_type(&m, what, size, sgn, err);
		} while (dwarf_siblingof(&m, &m) == 0);
	}
	return sp_err_set(err, "cannot read %s: its struct has no member %s", what, member);
}

/* A location expression resolve_var can read: a register, a register plus
 * an offset (value or memory), the frame base plus an offset. */
static int loc_readable(const Dwarf_Op *ex, size_t len)
{
	if (!len || len > 2)
		return 0;
	uint8_t op = ex[0].atom;
	if (len == 2 && (ex[1].atom != DW_OP_stack_value || !((op >= DW_OP_breg0 && op <= DW_OP_breg16) ||
							      op == DW_OP_bregx)))
		return 0;
	return (op >= DW_OP_reg0 && op <= DW_OP_reg16) || (op == DW_OP_regx && ex[0].number <= 16) ||
	       (op >= DW_OP_breg0 && op <= DW_OP_breg16) || (op == DW_OP_bregx && ex[0].number <= 16) ||
	       op == DW_OP_fbreg;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* The lines of the source file at address a where a line probe would find
 * the variable with location la readable: lines whose probe address (the
 * first is_stmt row of a run of that line) lies in a range of its location
 * list with a readable expression.  Appended to out as "12, 14-16"; nothing
 * when there are none. */
static void avail_lines(Dwarf_Die *cu, Dwarf_Attribute *la, Dwarf_Addr a, struct sp_buf *out)
{
	enum { MAXR = 256, MAXL = 512 };
	Dwarf_Addr lo[MAXR], hi[MAXR], base, start, end;
	Dwarf_Op *ex;
	size_t len, nr = 0;
	ptrdiff_t off = 0;
	while (nr < MAXR && (off = dwarf_getlocations(la, off, &base, &start, &end, &ex, &len)) > 0)
		if (start < end && loc_readable(ex, len)) {
			lo[nr] = start;
			hi[nr++] = end;
		}
	Dwarf_Line *at = dwarf_getsrc_die(cu, a);
	const char *want = at ? dwarf_linesrc(at, NULL, NULL) : NULL;
	Dwarf_Lines *lines;
	size_t nl;
	if (!nr || !want || dwarf_getsrclines(cu, &lines, &nl) != 0)
		return;
	int got[MAXL], ng = 0, prev_line = -1;
	for (size_t i = 0; i < nl && ng < MAXL; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		int ln;
		bool stmt = false, endseq = false;
		Dwarf_Addr la_;
		const char *src = l ? dwarf_linesrc(l, NULL, NULL) : NULL;
		if (!l || !src || dwarf_lineno(l, &ln) || dwarf_lineaddr(l, &la_) || dwarf_lineendsequence(l, &endseq)) {
			prev_line = -1;
			continue;
		}
		dwarf_linebeginstatement(l, &stmt);
		int same = !endseq && !strcmp(src, want);
		if (same && stmt && ln != prev_line)
			for (size_t r = 0; r < nr; r++)
				if (la_ >= lo[r] && la_ < hi[r]) {
					got[ng++] = ln;
					break;
				}
		prev_line = same ? ln : -1;
	}
	qsort(got, (size_t)ng, sizeof *got, cmp_int);
	char x[32];
	for (int i = 0, first = 1; i < ng;) {
		int j = i;
		while (j + 1 < ng && got[j + 1] <= got[j] + 1)
			j++;
		if (got[j] == got[i])
			snprintf(x, sizeof x, "%s%d", first ? "" : ", ", got[i]);
		else
			snprintf(x, sizeof x, "%s%d-%d", first ? "" : ", ", got[i], got[j]);
		sp_buf_adds(out, x);
		first = 0;
		i = j + 1;
	}
}

/* Where variable k of probe u lives at address a: a register, a register
 * plus an offset (its value or its address), or the frame base plus an
 * offset; the frame base must be the CFA, found from the CFI at a. */
static int resolve_var(Dwarf *dw, Dwarf_CFI *cfi, Dwarf_Addr a, struct sp_uprobe *u, int k, const char *where,
		       struct sp_err *err)
{
	char what[160], var[128];
	snprintf(what, sizeof what, "%s at %s", u->vname[k], where);
	/* VAR, VAR.MEMBER, VAR->MEMBER (parse_values checked the form) */
	snprintf(var, sizeof var, "%s", u->vname[k]);
	size_t vl = strcspn(var, ".-");
	int member = var[vl] ? (var[vl] == '.' ? 1 : 2) : 0;
	const char *mname = var + vl + member;
	var[vl] = 0;
	Dwarf_Die cu, *scopes = NULL;
	if (!dwarf_addrdie(dw, a, &cu))
		return sp_err_set(err, "cannot read %s: no DWARF for address 0x%llx", what, (unsigned long long)a);
	int ns = dwarf_getscopes(&cu, a, &scopes);
	Dwarf_Die found, *fn = NULL;
	int have = 0;
	for (int i = 0; i < ns && !have; i++) {
		Dwarf_Die c;
		if (dwarf_child(&scopes[i], &c) != 0)
			continue;
		do {
			int tag = dwarf_tag(&c);
			const char *name = dwarf_diename(&c);
			if ((tag == DW_TAG_variable || tag == DW_TAG_formal_parameter) && name && !strcmp(name, var)) {
				found = c;
				have = 1;
				break;
			}
		} while (dwarf_siblingof(&c, &c) == 0);
	}
	for (int i = 0; i < ns; i++)
		if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram)
			fn = &scopes[i];
	int rc = 0;
	Dwarf_Attribute la;
	Dwarf_Op *ex;
	size_t len;
	if (!have) {
		rc = sp_err_set(err, "cannot read %s: no variable or parameter %s is in scope there", what, var);
		goto out;
	}
	if (member) {
		if ((rc = member_of(&found, member == 2, mname, what, &u->vmoff[k], &u->vsize[k], &u->vsigned[k],
				    err)) < 0)
			goto out;
	} else if ((rc = var_type(&found, what, &u->vsize[k], &u->vsigned[k], err)) < 0)
		goto out;
	if (!dwarf_attr_integrate(&found, DW_AT_location, &la) || dwarf_getlocation_addr(&la, a, &ex, &len, 1) < 1) {
		struct sp_buf lines = SP_BUF_INIT;
		if (dwarf_attr_integrate(&found, DW_AT_location, &la))
			avail_lines(&cu, &la, a, &lines);
		sp_buf_cstr(&lines);
		if (lines.len)
			rc = sp_err_set(err, "cannot read %s: it is optimised out there; lines where a probe can "
					"read it: %s", what, lines.p);
		else
			rc = sp_err_set(err, "cannot read %s: it is optimised out there%s", what,
					dwarf_hasattr_integrate(&found, DW_AT_const_value)
						? ": the compiler made it a constant, with no location"
						: ", and at every line (no location a line probe can read)");
		sp_buf_release(&lines);
		goto out;
	}
	uint8_t op = len ? ex[0].atom : 0;
	if (len == 1 && op >= DW_OP_reg0 && op <= DW_OP_reg16) {
		u->vkind[k] = SP_UV_REG;
		u->vreg[k] = op - DW_OP_reg0;
	} else if (len == 1 && op == DW_OP_regx && ex[0].number <= 16) {
		u->vkind[k] = SP_UV_REG;
		u->vreg[k] = (int)ex[0].number;
	} else if ((len == 1 || (len == 2 && ex[1].atom == DW_OP_stack_value)) && op >= DW_OP_breg0 &&
		   op <= DW_OP_breg16) {
		u->vkind[k] = len == 2 ? SP_UV_ADDR : SP_UV_MEM;
		u->vreg[k] = op - DW_OP_breg0;
		u->voff[k] = (int64_t)ex[0].number;
	} else if ((len == 1 || (len == 2 && ex[1].atom == DW_OP_stack_value)) && op == DW_OP_bregx &&
		   ex[0].number <= 16) {
		u->vkind[k] = len == 2 ? SP_UV_ADDR : SP_UV_MEM;
		u->vreg[k] = (int)ex[0].number;
		u->voff[k] = (int64_t)ex[0].number2;
	} else if (len == 1 && op == DW_OP_fbreg) {
		Dwarf_Attribute fa;
		Dwarf_Op *fex, *cfa;
		size_t flen, ncfa;
		Dwarf_Frame *frame = NULL;
		if (!fn || !dwarf_attr_integrate(fn, DW_AT_frame_base, &fa) || dwarf_getlocation(&fa, &fex, &flen) != 0 ||
		    flen != 1 || fex[0].atom != DW_OP_call_frame_cfa) {
			rc = sp_err_set(err, "cannot read %s: its frame base is not the CFA", what);
			goto out;
		}
		int reg = -1;
		int64_t off = 0;
		if (cfi && dwarf_cfi_addrframe(cfi, a, &frame) == 0 && dwarf_frame_cfa(frame, &cfa, &ncfa) == 0 &&
		    ncfa == 1) {
			if (cfa[0].atom >= DW_OP_breg0 && cfa[0].atom <= DW_OP_breg16) {
				reg = cfa[0].atom - DW_OP_breg0;
				off = (int64_t)cfa[0].number;
			} else if (cfa[0].atom == DW_OP_bregx && cfa[0].number <= 16) {
				reg = (int)cfa[0].number;
				off = (int64_t)cfa[0].number2;
			}
		}
		free(frame);
		if (reg < 0) {
			rc = sp_err_set(err, "cannot read %s: no call frame information gives its frame base there", what);
			goto out;
		}
		u->vkind[k] = SP_UV_MEM;
		u->vreg[k] = reg;
		u->voff[k] = off + (int64_t)ex[0].number;
	} else {
		rc = sp_err_set(err, "cannot read %s: its location (DW_OP 0x%x%s) is not a register, a register "
				"plus an offset or the frame base plus an offset", what, op, len > 1 ? ", ..." : "");
		goto out;
	}
	if (member == 1) {
		/* a struct: its member is memory at the struct's address + offset */
		if (u->vkind[k] != SP_UV_MEM) {
			rc = sp_err_set(err, "cannot read %s: the struct %s is in registers there, not in memory",
					what, var);
			goto out;
		}
		u->voff[k] += u->vmoff[k];
	} else if (member == 2)
		u->vderef[k] = 1;
	if (u->vkind[k] == SP_UV_MEM) {
		/* The stack copy starts at SP: enough of it for this variable. */
		int64_t need = u->vreg[k] == 7 ? u->voff[k] + (u->vderef[k] ? 8 : u->vsize[k]) : 2048;
		if (need > 8192)
			need = 8192;
		if (need > (int64_t)u->stack_bytes)
			u->stack_bytes = (unsigned)((need + 7) & ~7);
	}
out:
	free(scopes);
	return rc;
}

/* FILE:LINE: the addresses where that line's code begins, in every CU and
 * every inlined copy (a line table row of that line that does not continue
 * a row of the same line).  Returns the number of probes added or -1. */
static int resolve_line(struct sp_uprobe_set *s, const struct spec *p, const char *spec, const char *path,
			Elf *e, struct sp_err *err)
{
	Dwarf *dw = dwarf_begin_elf(e, DWARF_C_READ, NULL);
	if (!dw)
		return sp_err_set(err, "--trace '%s': %s has no DWARF line table (build it with -g)", spec, path);
	Dwarf_CFI *cfi = dwarf_getcfi_elf(e);
	int added = 0, file_seen = 0, below = 0, above = 0;
	char name[64];
	snprintf(name, sizeof name, "%s:%d", p->file, p->line);
	Dwarf_Off off = 0, next;
	size_t hsize;
	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		Dwarf_Lines *lines;
		size_t nl;
		if (dwarf_offdie(dw, off + hsize, &cu) && dwarf_getsrclines(&cu, &lines, &nl) == 0) {
			int prev_same = 0;
			for (size_t i = 0; i < nl; i++) {
				Dwarf_Line *l = dwarf_onesrcline(lines, i);
				int ln;
				bool stmt = false, end = false;
				Dwarf_Addr a;
				const char *src = l ? dwarf_linesrc(l, NULL, NULL) : NULL;
				if (!l || !src || dwarf_lineno(l, &ln) || dwarf_lineaddr(l, &a) || dwarf_lineendsequence(l, &end))
					continue;
				dwarf_linebeginstatement(l, &stmt);
				int here = !end && file_matches(src, p->file);
				file_seen |= here;
				if (here && ln < p->line && ln > below)
					below = ln;
				if (here && ln > p->line && (!above || ln < above))
					above = ln;
				int same = here && ln == p->line;
				if (same && stmt && !prev_same) {
					uint64_t fo;
					int dup = 0;
					for (size_t k = s->n - (size_t)added; k < s->n && !dup; k++)
						dup = s->v[k].vaddr == a;
					if (!dup && file_offset(e, a, &fo) == 0) {
						struct spec q = *p;
						q.has_off = 1; /* a point */
						q.off = 0;
						add_probe(s, &q, spec, path, name, a, fo, 0);
						struct sp_uprobe *u = &s->v[s->n - 1];
						free(u->name);
						u->name = sp_xstrndup(name, strlen(name));
						added++;
						for (int k = 0; k < u->nvalues; k++) {
							if (resolve_var(dw, cfi, a, u, k, name, err) < 0) {
								err_prefix_spec(err, spec);
								if (cfi)
									dwarf_cfi_end(cfi);
								dwarf_end(dw);
								return -1;
							}
						}
					}
				}
				prev_same = same && !end;
			}
		}
		off = next;
	}
	if (cfi)
		dwarf_cfi_end(cfi);
	dwarf_end(dw);
	if (!added) {
		if (!file_seen)
			return sp_err_set(err, "--trace '%s': no source file %s in the DWARF of %s", spec, p->file, path);
		char near[96] = "";
		if (below && above)
			snprintf(near, sizeof near, "; nearest lines with code: %d, %d", below, above);
		else if (below || above)
			snprintf(near, sizeof near, "; nearest line with code: %d", below ? below : above);
		return sp_err_set(err, "--trace '%s': no code at %s:%d (a comment, a declaration, or optimised "
				  "away)%s", spec, p->file, p->line, near);
	}
	return added;
}

/* FUNC+OFF must start an instruction.  Decoding x86-64 instruction
 * lengths is not done here: an offset is accepted when it is the address of
 * a row of the DWARF line table (a row starts an instruction), refused
 * otherwise, naming the nearest row offsets.  *dw is opened on first use
 * (NULL: no DWARF).  Returns 0 or -1 with err set. */
static int check_boundary(Elf *e, Dwarf **dw, int *dw_tried, const char *spec, const char *path, const char *fn,
			  uint64_t start, uint64_t size, uint64_t off, struct sp_err *err)
{
	if (!off)
		return 0;
	if (!*dw_tried) {
		*dw = dwarf_begin_elf(e, DWARF_C_READ, NULL);
		*dw_tried = 1;
	}
	Dwarf_Die cu;
	Dwarf_Lines *lines;
	size_t nl;
	if (!*dw || !dwarf_addrdie(*dw, start, &cu) || dwarf_getsrclines(&cu, &lines, &nl) != 0)
		return sp_err_set(err, "--trace '%s': cannot check that offset %llu into %s is an instruction "
				  "boundary: %s has no DWARF line table for it (build it with -g); only %s+0 is "
				  "accepted there", spec, (unsigned long long)off, fn, path, fn);
	uint64_t want = start + off, below = 0, above = 0;
	int has_below = 0, has_above = 0;
	for (size_t i = 0; i < nl; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		Dwarf_Addr a;
		bool endseq = false;
		if (!l || dwarf_lineaddr(l, &a) || dwarf_lineendsequence(l, &endseq) || endseq)
			continue;
		if (a == want)
			return 0;
		if (a >= start && a < want && (!has_below || a > below)) {
			below = a;
			has_below = 1;
		}
		if (a > want && (!size || a < start + size) && (!has_above || a < above)) {
			above = a;
			has_above = 1;
		}
	}
	char near[96];
	if (has_below && has_above)
		snprintf(near, sizeof near, "; the nearest are +%llu and +%llu", (unsigned long long)(below - start),
			 (unsigned long long)(above - start));
	else if (has_below || has_above)
		snprintf(near, sizeof near, "; the nearest is +%llu",
			 (unsigned long long)((has_below ? below : above) - start));
	else
		near[0] = 0;
	return sp_err_set(err, "--trace '%s': offset %llu into %s is not the start of a line's code in the DWARF "
			  "line table, so it may not be an instruction boundary: refused%s", spec,
			  (unsigned long long)off, fn, near);
}

/* ---- where the kernel can place a probe ---- */

/* One x86-64 instruction, decoded as far as a probe needs: its length,
 * the prefix the kernel refuses to probe (lock; es, cs, ss, ds segment
 * overrides: arch/x86/kernel/uprobes.c is_prefix_bad), and where it may
 * send control (a direct branch's target, an indirect jump, the end of a
 * basic block). */
struct insn {
	int len;
	int bad_prefix;   /* 0, or the refused prefix byte */
	int branch;       /* a jump, call or return: control may leave the straight line */
	int has_target;   /* a direct jump's or call's target */
	uint64_t target;
	int indirect;     /* jmp *x: jump tables may land anywhere in the function */
};

/* Operand bytes of one-byte opcodes: bit 0x80 ModRM; low bits the
 * immediate: 1 imm8, 2 imm16, 3 imm16/32 (z), 4 imm32/64 (mov r, imm),
 * 5 moffs (8 bytes), 6 imm16 + imm8 (enter); 0x40 invalid in 64-bit. */
#define M 0x80
#define BAD 0x40
static const uint8_t op1[256] = {
	/* 00 */ M, M, M, M, 1, 3, BAD, BAD, M, M, M, M, 1, 3, BAD, 0,
	/* 10 */ M, M, M, M, 1, 3, BAD, BAD, M, M, M, M, 1, 3, BAD, BAD,
	/* 20 */ M, M, M, M, 1, 3, 0, BAD, M, M, M, M, 1, 3, 0, BAD,
	/* 30 */ M, M, M, M, 1, 3, 0, BAD, M, M, M, M, 1, 3, 0, BAD,
	/* 40 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	/* 50 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	/* 60 */ BAD, BAD, BAD, M, 0, 0, 0, 0, 3, M | 3, 1, M | 1, 0, 0, 0, 0,
	/* 70 */ 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	/* 80 */ M | 1, M | 3, BAD, M | 1, M, M, M, M, M, M, M, M, M, M, M, M,
	/* 90 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, BAD, 0, 0, 0, 0, 0,
	/* a0 */ 5, 5, 5, 5, 0, 0, 0, 0, 1, 3, 0, 0, 0, 0, 0, 0,
	/* b0 */ 1, 1, 1, 1, 1, 1, 1, 1, 4, 4, 4, 4, 4, 4, 4, 4,
	/* c0 */ M | 1, M | 1, 2, 0, BAD, BAD, M | 1, M | 3, 6, 0, 2, 0, 0, 1, BAD, 0,
	/* d0 */ M, M, M, M, BAD, BAD, BAD, 0, M, M, M, M, M, M, M, M,
	/* e0 */ 1, 1, 1, 1, 1, 1, 1, 1, 3, 3, BAD, 1, 0, 0, 0, 0,
	/* f0 */ 0, 0, 0, 0, 0, 0, M, M, 0, 0, 0, 0, 0, 0, M, M,
};

/* Two-byte opcodes (0f xx): which have a ModRM byte. */
static int op2_modrm(uint8_t b)
{
	switch (b) {
	case 0x05: case 0x06: case 0x07: case 0x08: case 0x09: case 0x0b: case 0x0e:
	case 0x30: case 0x31: case 0x32: case 0x33: case 0x34: case 0x35: case 0x37:
	case 0x77: case 0xa0: case 0xa1: case 0xa2: case 0xa8: case 0xa9: case 0xaa:
		return 0;
	default:
		return !(b >= 0x80 && b <= 0x8f) && !(b >= 0xc8 && b <= 0xcf);
	}
}

static int op2_imm8(uint8_t b)
{
	return (b >= 0x70 && b <= 0x73) || b == 0xa4 || b == 0xac || b == 0xba || b == 0xc2 || (b >= 0xc4 && b <= 0xc6) ||
	       b == 0x0f;
}

/* ModRM, SIB and displacement bytes from p (n left).  -1 if cut short. */
static int modrm_len(const uint8_t *p, size_t n, int *reg)
{
	if (n < 1)
		return -1;
	int mod = p[0] >> 6, rm = p[0] & 7, len = 1;
	*reg = (p[0] >> 3) & 7;
	if (mod == 3)
		return 1;
	if (rm == 4) {
		if (n < 2)
			return -1;
		len++;
		if (mod == 0 && (p[1] & 7) == 5)
			len += 4;
	} else if (mod == 0 && rm == 5) {
		len += 4; /* rip-relative */
	}
	len += mod == 1 ? 1 : mod == 2 ? 4 : 0;
	return (size_t)len <= n ? len : -1;
}

static int64_t rel(const uint8_t *p, int bytes)
{
	if (bytes == 1)
		return (int8_t)p[0];
	int32_t v;
	memcpy(&v, p, 4);
	return v;
}

/* Decode the instruction at p (n bytes readable), at address addr.
 * Returns 0, or -1 when it is not one this decoder knows. */
static int decode(const uint8_t *p, size_t n, uint64_t addr, struct insn *in)
{
	memset(in, 0, sizeof *in);
	size_t i = 0;
	int opsize16 = 0, rexw = 0;
	for (; i < n && i < 14; i++) {
		uint8_t b = p[i];
		if (b == 0xf0 || b == 0x26 || b == 0x2e || b == 0x36 || b == 0x3e) {
			if (!in->bad_prefix)
				in->bad_prefix = b;
		} else if (b == 0x66) {
			opsize16 = 1;
		} else if (b != 0x64 && b != 0x65 && b != 0x67 && b != 0xf2 && b != 0xf3) {
			break;
		}
	}
	if (i < n && (p[i] & 0xf0) == 0x40) {
		rexw = (p[i] & 8) != 0;
		i++;
	}
	if (i >= n)
		return -1;
	uint8_t op = p[i++];
	int reg = 0, m;
	if (op == 0x0f) {
		if (i >= n)
			return -1;
		uint8_t op2 = p[i++];
		if (op2 == 0x38 || op2 == 0x3a) {
			if (i >= n)
				return -1;
			i++; /* the third opcode byte */
			if ((m = modrm_len(p + i, n - i, &reg)) < 0)
				return -1;
			i += (size_t)m + (op2 == 0x3a);
		} else if (op2 >= 0x80 && op2 <= 0x8f) {
			if (i + 4 > n)
				return -1;
			in->branch = in->has_target = 1;
			in->target = addr + i + 4 + (uint64_t)rel(p + i, 4);
			i += 4;
		} else {
			if (op2_modrm(op2)) {
				if ((m = modrm_len(p + i, n - i, &reg)) < 0)
					return -1;
				i += (size_t)m;
			}
			i += op2_imm8(op2);
			if (op2 == 0x05 || op2 == 0x07 || op2 == 0x0b)
				in->branch = 1; /* syscall, sysret, ud2 */
		}
	} else if (op == 0xc4 || op == 0xc5 || op == 0x62) {
		/* VEX (2 or 3 bytes) or EVEX (4): the map picks the opcode table. */
		size_t vlen = op == 0xc5 ? 1 : op == 0xc4 ? 2 : 3;
		if (i + vlen >= n)
			return -1;
		int map = op == 0xc5 ? 1 : p[i] & (op == 0x62 ? 3 : 0x1f);
		i += vlen;
		uint8_t vop = p[i++];
		if (!(map == 1 && vop == 0x77)) { /* vzeroupper, vzeroall: no ModRM */
			if ((m = modrm_len(p + i, n - i, &reg)) < 0)
				return -1;
			i += (size_t)m + (map == 3 || (map == 1 && op2_imm8(vop)));
		}
	} else {
		uint8_t a = op1[op];
		if (a & BAD)
			return -1;
		if (a & M) {
			if ((m = modrm_len(p + i, n - i, &reg)) < 0)
				return -1;
			i += (size_t)m;
		}
		int imm = a & 7;
		size_t ib = imm == 1 ? 1 : imm == 2 ? 2 : imm == 3 ? (opsize16 ? 2 : 4) : imm == 4 ? (rexw ? 8 : opsize16 ? 2 : 4)
			  : imm == 5 ? 8 : imm == 6 ? 3 : 0;
		if ((op == 0xf6 || op == 0xf7) && reg < 2)
			ib = op == 0xf6 ? 1 : opsize16 ? 2 : 4; /* test r/m, imm */
		if (i + ib > n)
			return -1;
		if ((op >= 0x70 && op <= 0x7f) || (op >= 0xe0 && op <= 0xe3) || op == 0xeb || op == 0xe8 || op == 0xe9) {
			in->branch = in->has_target = 1;
			in->target = addr + i + ib + (uint64_t)rel(p + i, (int)ib);
		}
		if (op == 0xc2 || op == 0xc3 || op == 0xca || op == 0xcb || op == 0xcf || op == 0xcc || op == 0xcd ||
		    op == 0xf4)
			in->branch = 1;
		if (op == 0xff && reg >= 2 && reg <= 5) {
			in->branch = 1;
			in->indirect = reg >= 4;
		}
		i += ib;
	}
	if (i > n || i > 15)
		return -1;
	in->len = (int)i;
	return 0;
}
#undef M
#undef BAD

int sp_uprobe_func_lines(const char *spec, const char *exe, int pid, char *file, size_t nfile, int *lines, int max,
			 char **path_out, struct sp_err *err)
{
	struct sp_uprobe_set s;
	sp_uprobe_set_init(&s);
	file[0] = 0;
	if (path_out)
		*path_out = NULL;
	if (sp_uprobe_resolve(&s, spec, exe, pid, err) < 0) {
		sp_uprobe_set_release(&s);
		return -1;
	}
	if (!s.n || s.v[0].point || !s.v[0].size) {
		sp_uprobe_set_release(&s);
		return sp_err_set(err, "%s: not one function of known size", spec);
	}
	uint64_t lo = s.v[0].vaddr, hi = lo + s.v[0].size;
	char *path = sp_xstrndup(s.v[0].path, strlen(s.v[0].path));
	sp_uprobe_set_release(&s);
	elf_version(EV_CURRENT);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	Dwarf *dw = e ? dwarf_begin_elf(e, DWARF_C_READ, NULL) : NULL;
	int n = 0;
	char src0[PATH_MAX] = "";
	Dwarf_Die cu;
	Dwarf_Lines *tab;
	size_t nl;
	if (dw && dwarf_addrdie(dw, lo, &cu) && dwarf_getsrclines(&cu, &tab, &nl) == 0) {
		/* the file: of the row at (or first after) the function's start */
		Dwarf_Addr best = 0;
		for (size_t i = 0; i < nl; i++) {
			Dwarf_Line *l = dwarf_onesrcline(tab, i);
			Dwarf_Addr a;
			const char *src = l ? dwarf_linesrc(l, NULL, NULL) : NULL;
			if (src && dwarf_lineaddr(l, &a) == 0 && a >= lo && a < hi && (!src0[0] || a < best)) {
				best = a;
				snprintf(src0, sizeof src0, "%s", src);
			}
		}
		for (size_t i = 0; i < nl && src0[0]; i++) {
			Dwarf_Line *l = dwarf_onesrcline(tab, i);
			Dwarf_Addr a;
			int ln;
			bool stmt = false, end = false;
			const char *src = l ? dwarf_linesrc(l, NULL, NULL) : NULL;
			if (!src || dwarf_lineaddr(l, &a) || dwarf_lineno(l, &ln) || a < lo || a >= hi ||
			    strcmp(src, src0) || ln <= 0)
				continue;
			dwarf_linebeginstatement(l, &stmt);
			dwarf_lineendsequence(l, &end);
			if (!stmt || end)
				continue;
			int dup = 0;
			for (int k = 0; k < n && !dup; k++)
				dup = lines[k] == ln;
			if (!dup && n < max)
				lines[n++] = ln;
		}
	}
	int have_dw = dw != NULL;
	if (dw)
		dwarf_end(dw);
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
	if (!n) {
		sp_err_set(err, have_dw ? "%s: no DWARF line rows inside it in %s" :
				"%s: %s has no DWARF line table (build it with -g)", spec, path);
		free(path);
		return -1;
	}
	qsort(lines, (size_t)n, sizeof *lines, cmp_int);
	const char *base = strrchr(src0, '/');
	snprintf(file, nfile, "%s", base ? base + 1 : src0);
	if (path_out)
		*path_out = path;
	else
		free(path);
	return n;
}

int sp_uprobe_insn(const uint8_t *code, size_t n, int *bad_prefix)
{
	struct insn in;
	if (decode(code, n, 0, &in) < 0)
		return -1;
	*bad_prefix = in.bad_prefix;
	return in.len;
}

static const char *prefix_name(int b)
{
	switch (b) {
	case 0xf0: return "lock-prefixed";
	case 0x26: return "es-prefixed";
	case 0x2e: return "cs-prefixed";
	case 0x36: return "ss-prefixed";
	default: return "ds-prefixed";
	}
}

/* "(work+0x10)" or "(work+0x10, t.c:33)" for address a of function f. */
static void where(Dwarf *dw, const struct fsym *f, uint64_t a, char *out, size_t n)
{
	int len = snprintf(out, n, "(%s+0x%llx", f->dem ? f->dem : f->raw, (unsigned long long)(a - f->value));
	Dwarf_Die cu;
	Dwarf_Line *l;
	int ln;
	if (dw && len > 0 && (size_t)len < n && dwarf_addrdie(dw, a, &cu) && (l = dwarf_getsrc_die(&cu, a)) &&
	    dwarf_lineno(l, &ln) == 0) {
		const char *src = dwarf_linesrc(l, NULL, NULL);
		const char *base = src ? strrchr(src, '/') : NULL;
		len += snprintf(out + len, n - (size_t)len, ", %s:%d", base ? base + 1 : src ? src : "?", ln);
	}
	if (len > 0 && (size_t)len + 1 < n)
		memcpy(out + len, ")", 2);
}

/* Probe u: on an instruction the kernel refuses, move it to the next
 * instruction of the same basic block (one note in s->notes), or refuse
 * (-1, err set).  Decodes the function holding it from its start, for its
 * instruction boundaries and the targets of its direct jumps. */
static int place(struct sp_uprobe_set *s, struct sp_uprobe *u, const struct symtab *t, Dwarf **dw, int *dw_tried,
		 struct sp_err *err)
{
	const struct fsym *f = NULL;
	for (size_t i = 0; i < t->n && !f; i++)
		if (u->vaddr >= t->v[i].value && u->vaddr < t->v[i].value + (t->v[i].size ? t->v[i].size : 1))
			f = &t->v[i];
	uint64_t foff;
	if (!f || !f->size || f->size > (1u << 20) || file_offset(t->e, f->value, &foff) < 0)
		return 0; /* nothing to decode: the kernel's answer at open decides */
	uint8_t *code = sp_xmalloc(f->size + 16);
	memset(code, 0, f->size + 16);
	int rc = 0;
	if (pread(t->fd, code, f->size, (off_t)foff) != (ssize_t)f->size)
		goto out;
	/* Boundaries (bit per byte) and jump targets inside the function. */
	uint8_t *starts = sp_xcalloc(f->size, 1), *targets = sp_xcalloc(f->size, 1);
	int indirect = 0, decoded = 1;
	for (uint64_t o = 0; o < f->size;) {
		struct insn in;
		if (decode(code + o, f->size - o, f->value + o, &in) < 0) {
			decoded = 0;
			break;
		}
		starts[o] = 1;
		indirect |= in.indirect;
		if (in.has_target && in.target >= f->value && in.target < f->value + f->size)
			targets[in.target - f->value] = 1;
		o += (uint64_t)in.len;
	}
	uint64_t at = u->vaddr - f->value;
	struct insn in;
	if (decode(code + at, f->size - at, u->vaddr, &in) < 0 || !in.bad_prefix)
		goto done; /* probeable, or unknown to us: the kernel decides */
	if (!*dw_tried) {
		*dw = dwarf_begin_elf(t->e, DWARF_C_READ, NULL);
		*dw_tried = 1;
	}
	char from[160], to[160];
	where(*dw, f, u->vaddr, from, sizeof from);
	/* Walk on while control cannot leave or enter the straight line. */
	const char *why = NULL;
	uint64_t o = at;
	struct insn cur = in;
	char whybuf[96];
	for (;;) {
		uint64_t next = o + (uint64_t)cur.len;
		if (!decoded || !starts[at]) {
			why = "its function could not be decoded to find its basic block";
		} else if (indirect) {
			why = "its function jumps through a table, which may land on any instruction";
		} else if (u->nvalues) {
			why = "the values to record are read at that address";
		} else if (cur.branch) {
			why = "it is a jump";
		} else if (next >= f->size) {
			why = "it is the function's last instruction";
		} else if (targets[next]) {
			snprintf(whybuf, sizeof whybuf, "a jump lands on the next instruction, at 0x%llx",
				 (unsigned long long)(f->value + next));
			why = whybuf;
		}
		if (why)
			break;
		if (decode(code + next, f->size - next, f->value + next, &cur) < 0) {
			why = "the next instruction could not be decoded";
			break;
		}
		o = next;
		if (!cur.bad_prefix)
			break;
	}
	if (!why) {
		uint64_t moved = (f->value + o) - u->vaddr;
		where(*dw, f, f->value + o, to, sizeof to);
		struct sp_buf b = SP_BUF_INIT;
		if (s->notes)
			sp_buf_adds(&b, s->notes);
		char line[600];
		snprintf(line, sizeof line, "probe %s: moved from 0x%llx %s to 0x%llx %s: the kernel cannot probe the "
			 "%s instruction there, and the next one is in the same basic block (no jump in or out "
			 "between them), so the count is the same\n", u->name, (unsigned long long)u->vaddr, from,
			 (unsigned long long)(f->value + o), to, prefix_name(in.bad_prefix));
		sp_buf_adds(&b, line);
		free(s->notes);
		s->notes = sp_xstrndup(sp_buf_cstr(&b), b.len);
		sp_buf_release(&b);
		u->vaddr += moved;
		u->offset += moved;
		goto done;
	}
	/* The nearest instructions the kernel can probe, before and after. */
	char near[400] = "";
	size_t nl = 0;
	int found_before = 0, found_after = 0;
	uint64_t prev = 0, nxt = 0;
	for (uint64_t k = 0; k < f->size && decoded; k++) {
		struct insn q;
		if (!starts[k] || k == at || decode(code + k, f->size - k, f->value + k, &q) < 0 || q.bad_prefix)
			continue;
		if (k < at)
			prev = k, found_before = 1;
		else if (!found_after)
			nxt = k, found_after = 1;
	}
	if (found_before) {
		where(*dw, f, f->value + prev, to, sizeof to);
		nl += (size_t)snprintf(near + nl, sizeof near - nl, "0x%llx %s", (unsigned long long)(f->value + prev), to);
	}
	if (found_after) {
		where(*dw, f, f->value + nxt, to, sizeof to);
		snprintf(near + nl, sizeof near - nl, "%s0x%llx %s", nl ? ", " : "", (unsigned long long)(f->value + nxt), to);
	}
	rc = sp_err_set(err, "--trace '%s': the kernel cannot probe the %s instruction at 0x%llx %s, and no later "
			"instruction can stand for it: %s%s%s", u->spec, prefix_name(in.bad_prefix),
			(unsigned long long)u->vaddr, from, why, near[0] ? "; nearby instructions it can probe: " : "",
			near);
done:
	free(starts);
	free(targets);
out:
	free(code);
	return rc;
}

int sp_uprobe_resolve(struct sp_uprobe_set *s, const char *spec, const char *exe, int pid, struct sp_err *err)
{
	Dwarf *dw = NULL;
	int dw_tried = 0;
	struct spec p;
	struct symtab t;
	char *path = NULL;
	int added = -1;
	t.fd = -1;
	t.e = NULL;
	t.v = NULL;
	t.n = 0;
	if (parse_spec(&p, spec, err) < 0)
		goto out;
	elf_version(EV_CURRENT);
	if (!p.lib) {
		if (!(path = realpath(exe, NULL))) {
			sp_err_set(err, "--trace '%s': %s: %s", spec, exe, strerror(errno));
			goto out;
		}
	} else if (strchr(p.lib, '/')) {
		if (!(path = realpath(p.lib, NULL))) {
			sp_err_set(err, "--trace '%s': %s: %s", spec, p.lib, strerror(errno));
			goto out;
		}
	} else {
		path = pid ? lib_from_maps(pid, p.lib) : NULL;
		if (!path)
			path = lib_from_disk(exe, p.lib);
		if (!path) {
			sp_err_set(err, "--trace '%s': no library '%s' %s (give its path instead)", spec, p.lib,
				   pid ? "is mapped by the process or installed" : "is needed by the program or installed");
			goto out;
		}
	}
	if (symtab_open(&t, path, err) < 0)
		goto out;
	size_t first = s->n;
	if (p.file) {
		added = resolve_line(s, &p, spec, path, t.e, err);
		goto place;
	}
	if (t.stripped && !s->stripped)
		s->stripped = sp_xstrndup(path, strlen(path));
	int glob = is_glob(p.func);
	size_t matched = 0;
	for (size_t i = 0; i < t.n; i++) {
		const struct fsym *f = &t.v[i];
		if (!sym_matches(f, p.func, glob))
			continue;
		/* Aliases (malloc, __libc_malloc) are one function: probe it once. */
		int dup = 0;
		for (size_t k = first; k < s->n && !dup; k++)
			dup = s->v[k].vaddr - p.off == f->value && !strcmp(s->v[k].path, path);
		if (dup)
			continue;
		if (++matched > SP_UPROBE_MAX_MATCH) {
			size_t total = matched;
			for (size_t k = i + 1; k < t.n; k++)
				total += sym_matches(&t.v[k], p.func, glob);
			sp_err_set(err, "--trace '%s' matches %zu or more functions in %s, more than the limit of %d: "
				   "narrow the pattern", spec, total, path, SP_UPROBE_MAX_MATCH);
			goto out;
		}
		if (p.has_off && f->size && p.off >= f->size) {
			sp_err_set(err, "--trace '%s': offset %llu is past the end of %s (%llu bytes)", spec,
				   (unsigned long long)p.off, f->dem ? f->dem : f->raw, (unsigned long long)f->size);
			goto out;
		}
		if (p.has_off && check_boundary(t.e, &dw, &dw_tried, spec, path, f->dem ? f->dem : f->raw, f->value,
						f->size, p.off, err) < 0)
			goto out;
		uint64_t off;
		if (file_offset(t.e, f->value + p.off, &off) < 0) {
			sp_err_set(err, "--trace '%s': %s in %s is not in a loaded segment", spec, f->raw, path);
			goto out;
		}
		add_probe(s, &p, spec, path, f->dem ? f->dem : f->raw, f->value, off - p.off, f->size);
	}
	if (!matched) {
		struct sp_buf b = SP_BUF_INIT;
		nearest(&t, p.func, &b);
		sp_buf_cstr(&b);
		sp_err_set(err, "--trace '%s': no function %s in %s%s%s%s", spec, p.func, path,
			   t.stripped ? " (stripped: only its dynamic symbols are known)" : "",
			   b.len ? "; nearest: " : "", b.len ? b.p : "");
		sp_buf_release(&b);
		s->n = first;
		goto out;
	}
	/* uretprobes replace the return address: an exception thrown through
	 * the probed frame then finds no unwind entry and std::terminate
	 * ends the target.  C++ code with exception tables is at risk. */
	if (t.cxx_eh && t.cxx) {
		for (size_t k = first; k < s->n; k++)
			s->v[k].cxx_eh = 1;
		if (!s->cxx_eh)
			s->cxx_eh = sp_xstrndup(path, strlen(path));
	}
	added = (int)matched;
place:
	/* Where the kernel cannot probe: moved within the basic block, or refused. */
	for (size_t k = first; added > 0 && k < s->n; k++) {
		if (place(s, &s->v[k], &t, &dw, &dw_tried, err) < 0) {
			while (s->n > first) /* its probes are not kept */
				probe_release(&s->v[--s->n]);
			added = -1;
		}
	}
out:
	if (dw)
		dwarf_end(dw);
	spec_release(&p);
	symtab_release(&t);
	free(path);
	return added;
}

/* ---- cost per hit ---- */

/* The function sp_uprobe_cost probes: small, not inlined, not folded. */
__attribute__((noinline, used)) int sp_uprobe_calibration_target(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x + 1;
}

static double time_calls(int n)
{
	volatile int acc = 0;
	uint64_t a = sp_mono_ns();
	for (int i = 0; i < n; i++)
		acc = sp_uprobe_calibration_target(acc);
	return (double)(sp_mono_ns() - a);
}

int sp_uprobe_cost(double *ns, int *fdp, char *tpp, size_t ntp, struct sp_err *err)
{
	*fdp = -1;
	tpp[0] = 0;
	struct sp_uprobe_set s;
	sp_uprobe_set_init(&s);
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0) {
		sp_uprobe_set_release(&s);
		return sp_err_set(err, "/proc/self/exe: %s", strerror(errno));
	}
	self[n] = 0;
	if (sp_uprobe_resolve(&s, "sp_uprobe_calibration_target:entry", self, 0, err) < 0) {
		sp_uprobe_set_release(&s);
		return -1;
	}
	int type = -1;
	FILE *f = fopen("/sys/bus/event_source/devices/uprobe/type", "re");
	if (f) {
		if (fscanf(f, "%d", &type) != 1)
			type = -1;
		fclose(f);
	}
	struct perf_event_attr a;
	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.type = (uint32_t)type;
	a.config1 = (uint64_t)(uintptr_t)s.v[0].path;
	a.config2 = s.v[0].offset;
	/* A tracefs uprobe when we may: closing a PMU one waits ~80 ms. */
	char tp[64];
	int tp_id = getenv("SP_UPROBE_PMU") ? -1 : sp_tracefs_uprobe_new(s.v[0].path, s.v[0].offset, 0, tp, sizeof tp);
	if (tp_id >= 0) {
		a.type = PERF_TYPE_TRACEPOINT;
		a.config = (uint64_t)tp_id;
	}
	a.disabled = 1;
	a.exclude_kernel = 1;
	/* The base is timed before the event exists: once it is open, the
	 * breakpoint is in the code even while the event is disabled. */
	/* Rounds of N calls, the fastest round kept: a round in which this
	 * thread was preempted (a loaded machine) is longer, never shorter. */
	enum { N = 100, ROUNDS = 7 };
	double base = time_calls(N); /* also warms the code */
	for (int r = 0; r < ROUNDS; r++) {
		double t = time_calls(N);
		base = t < base ? t : base;
	}
	long fd = type < 0 && tp_id < 0 ? -1 : syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	sp_uprobe_set_release(&s);
	if (fd < 0) {
		int e = errno;
		if (tp_id >= 0)
			sp_tracefs_uprobe_del(tp);
		return sp_err_set(err, "cannot open a uprobe on pcollect itself: %s", strerror(e));
	}
	ioctl((int)fd, PERF_EVENT_IOC_ENABLE, 0);
	double probed = time_calls(N);
	for (int r = 1; r < ROUNDS; r++) {
		double t = time_calls(N);
		probed = t < probed ? t : probed;
	}
	ioctl((int)fd, PERF_EVENT_IOC_DISABLE, 0);
	uint64_t hits = 0;
	if (read((int)fd, &hits, sizeof hits) != (ssize_t)sizeof hits)
		hits = 0;
	*fdp = (int)fd;
	if (tp_id >= 0)
		snprintf(tpp, ntp, "%s", tp);
	if (!hits)
		return sp_err_set(err, "the calibration probe was never hit");
	/* per hit: hits per call from the kernel's count */
	*ns = (probed - base) / ((double)N * (double)hits / (double)(N * ROUNDS));
	if (*ns < 0)
		*ns = 0;
	return 0;
}

uint32_t sp_uprobe_regs(const struct sp_uprobe *u, int at_exit, int args)
{
	/* SysV arguments 1-6: rdi rsi rdx rcx r8 r9 (DWARF numbers) */
	static const int arg_dwarf[7] = { -1, 5, 4, 1, 2, 8, 9 };
	uint32_t m = SP_BPFHIT_REG(7);
	if (at_exit)
		m |= SP_BPFHIT_REG(0);
	else if (u->ret)
		m |= SP_BPFHIT_TOP;
	if (args && !at_exit)
		for (int a = 1; a <= 6; a++)
			m |= SP_BPFHIT_REG(arg_dwarf[a]);
	for (int k = 0; k < u->nvalues; k++) {
		/* a variable's register is read at either end */
		if (!at_exit && u->vkind[k] == SP_UV_ARG && u->varg[k] >= 1 && u->varg[k] <= 6)
			m |= SP_BPFHIT_REG(arg_dwarf[u->varg[k]]);
		else if (u->vkind[k] >= SP_UV_REG)
			m |= u->vreg[k] >= 0 && u->vreg[k] <= 16 ? SP_BPFHIT_REG(u->vreg[k]) : 0x1ffffu;
	}
	return m;
}
