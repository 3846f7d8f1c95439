/* elfmod.c — the module cache, build ids, the demangler, symbol-table walks. */
#include "elfmod.h"

#include <dlfcn.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "util.h"

struct seg {
	uint64_t vaddr, offset, filesz;
};

struct sp_modfile {
	uint64_t key;
	size_t index; /* in the cache's order */
	char *name;   /* the mapped path */
	char *path;   /* what opens it */
	int fd;       /* -1: unusable (not ELF, cannot open) */
	struct seg *segs;
	size_t nsegs;
	/* A live file's modification time when opened (ns, 0 not kept): one
	 * rewritten in place (the same device and inode) is another file. */
	int64_t mtime;
	/* sp_modfile_elf: one descriptor for every process's unwinder */
	Elf *uelf;
	int uelf_tried;
	uint64_t lo, hi; /* its loadable range at bias 0, as libdwfl computes it */
};

struct sp_elfmods {
	struct sp_elfmods_opts o;
	struct sp_modfile **files;
	size_t nfiles, capfiles;
	struct sp_u64map filemap; /* key -> index + 1 */
	/* the vdso image, as a file */
	int vdso_fd, vdso_tried;
};

struct sp_elfmods *sp_elfmods_new(const struct sp_elfmods_opts *o)
{
	struct sp_elfmods *s = sp_xcalloc(1, sizeof *s);
	if (o)
		s->o = *o;
	sp_u64map_init(&s->filemap);
	s->vdso_fd = -1;
	elf_version(EV_CURRENT);
	return s;
}

void sp_elfmods_free(struct sp_elfmods *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nfiles; i++) {
		struct sp_modfile *f = s->files[i];
		if (f->fd >= 0)
			close(f->fd);
		free(f->name);
		free(f->path);
		free(f->segs);
		if (f->uelf)
			elf_end(f->uelf);
		free(f);
	}
	free(s->files);
	sp_u64map_release(&s->filemap);
	if (s->vdso_fd >= 0)
		close(s->vdso_fd);
	free(s);
}

size_t sp_elfmods_count(const struct sp_elfmods *s) { return s->nfiles; }
struct sp_modfile *sp_elfmods_at(const struct sp_elfmods *s, size_t i) { return s->files[i]; }

size_t sp_modfile_index(const struct sp_modfile *f) { return f->index; }
const char *sp_modfile_name(const struct sp_modfile *f) { return f->name; }
int sp_modfile_fd(const struct sp_modfile *f) { return f->fd; }
const char *sp_modfile_path(const struct sp_modfile *f) { return f->path; }

/* ---- the module cache ---- */

int sp_modfile_bias(const struct sp_modfile *f, const struct sp_map *m, uint64_t *bias)
{
	for (size_t i = 0; i < f->nsegs; i++) {
		const struct seg *g = &f->segs[i];
		uint64_t off0 = g->offset & ~(uint64_t)0xfff;
		if (m->pgoff >= off0 && m->pgoff < g->offset + (g->filesz ? g->filesz : 1)) {
			/* start maps file offset pgoff, which the segment puts at
			 * vaddr + (pgoff - offset). */
			*bias = m->start - m->pgoff - g->vaddr + g->offset;
			return 0;
		}
	}
	return -1;
}

void *sp_modfile_elf(struct sp_modfile *f, uint64_t bias, uint64_t *start, uint64_t *end)
{
	if (!f->uelf_tried) {
		f->uelf_tried = 1;
		Elf *e = f->fd >= 0 ? elf_begin(f->fd, ELF_C_READ_MMAP, NULL) : NULL;
		size_t phnum = 0;
		int have = 0;
		if (e && elf_kind(e) == ELF_K_ELF && elf_getphdrnum(e, &phnum) == 0) {
			/* libdwfl's range of a module reported at a bias: from the
			 * first PT_LOAD's page down to the last one's end */
			GElf_Phdr ph;
			for (size_t i = 0; i < phnum && !have; i++)
				if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD) {
					f->lo = ph.p_vaddr & -ph.p_align;
					have = 1;
				}
			for (size_t i = phnum; have && i-- > 0;)
				if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_vaddr + ph.p_memsz > 0) {
					f->hi = ph.p_vaddr + ph.p_memsz;
					have = 2;
					break;
				}
		}
		if (have == 2 && f->hi > f->lo) {
			f->uelf = e;
		} else if (e) {
			elf_end(e);
		}
	}
	if (!f->uelf)
		return NULL;
	*start = bias + f->lo;
	*end = bias + f->hi;
	return f->uelf;
}

/* The vdso is the same image in every process: write ours to a memfd so
 * that libdwfl can read it like a file. */
static int vdso_fd(struct sp_elfmods *s)
{
	if (s->vdso_tried)
		return s->vdso_fd;
	s->vdso_tried = 1;
	uintptr_t base = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
	if (!base)
		return -1;
	FILE *f = fopen("/proc/self/maps", "re");
	if (!f)
		return -1;
	char line[512];
	uint64_t lo, hi, size = 0;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "%" SCNx64 "-%" SCNx64, &lo, &hi) == 2 && lo == base) {
			size = hi - lo;
			break;
		}
	fclose(f);
	if (!size)
		return -1;
	int fd = memfd_create("vdso", MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	if (write(fd, (const void *)base, size) != (ssize_t)size) {
		close(fd);
		return -1;
	}
	return s->vdso_fd = fd;
}

static int read_segs(struct sp_modfile *f)
{
	Elf *elf = elf_begin(f->fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return -1;
	size_t phnum;
	int rc = -1;
	if (elf_kind(elf) == ELF_K_ELF && elf_getphdrnum(elf, &phnum) == 0) {
		f->segs = sp_xcalloc(phnum ? phnum : 1, sizeof *f->segs);
		for (size_t i = 0; i < phnum; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD)
				f->segs[f->nsegs++] = (struct seg){ ph.p_vaddr, ph.p_offset, ph.p_filesz };
		}
		rc = f->nsegs ? 0 : -1;
	}
	elf_end(elf);
	return rc;
}

/* The modification time of open file fd in ns (never 0: 1 when unknown). */
static int64_t mtime_of(int fd)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return 1;
	int64_t t = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	return t ? t : 1;
}

/* Open the file as it was mapped: the path when it is still the same file
 * (device and inode), else the process's map_files link. */
static int open_mapped(int pid, const struct sp_map *m, const char *path, int offline, char **opened)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd >= 0 && (!m->ino || (fstat(fd, &st) == 0 && st.st_ino == m->ino &&
				    major(st.st_dev) == m->maj && minor(st.st_dev) == m->min))) {
		*opened = sp_xstrndup(path, strlen(path));
		return fd;
	}
	if (fd >= 0)
		close(fd);
	if (offline)
		return -1; /* the process is gone: no map_files */
	char mf[96];
	snprintf(mf, sizeof mf, "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, pid, m->start, m->end);
	fd = open(mf, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		*opened = sp_xstrndup(mf, strlen(mf));
	return fd;
}

struct sp_modfile *sp_elfmods_get(struct sp_elfmods *s, int pid, const struct sp_map *m)
{
	const char *path = m->path;
	size_t n = strlen(path);
	int vdso = !strcmp(path, "[vdso]");
	if (!vdso && path[0] != '/')
		return NULL; /* anonymous, [heap], [stack], JIT code */
	uint64_t key;
	if (m->ino && !vdso)
		key = sp_mix64(m->ino ^ ((uint64_t)m->maj << 52) ^ ((uint64_t)m->min << 32));
	else
		key = sp_hash(path, n);
	if (key == UINT64_MAX)
		key--;
	for (;;) {
		int found;
		uint32_t *slot = sp_u64map_slot(&s->filemap, key, &found);
		if (!found)
			break;
		struct sp_modfile *f = s->files[*slot - 1];
		if (!strcmp(f->name, path) && !(f->mtime && f->mtime != mtime_of(f->fd)))
			return f->fd >= 0 ? f : NULL;
		/* a collision, the same inode under another name, or the file
		 * rewritten since it was opened */
		key = sp_mix64(key + 1);
		if (key == UINT64_MAX)
			key--;
	}
	struct sp_modfile *f = sp_xcalloc(1, sizeof *f);
	f->key = key;
	f->name = sp_xstrndup(path, n);
	f->fd = -1;
	f->index = s->nfiles;
	char buf[4096];
	int how = 0;
	buf[0] = 0;
	if (s->o.offline && s->o.locate)
		how = s->o.locate(s->o.locate_ctx, pid, m, buf, sizeof buf);
	if (how == 1 && buf[0]) {
		buf[sizeof buf - 1] = 0;
		f->fd = open(buf, O_RDONLY | O_CLOEXEC);
		if (f->fd >= 0)
			f->path = sp_xstrndup(buf, strlen(buf));
	} else if (vdso && (!s->o.offline || !s->o.locate || how == 2)) {
		int fd = vdso_fd(s);
		if (fd >= 0) {
			f->fd = dup(fd);
			char pp[64];
			snprintf(pp, sizeof pp, "/proc/self/fd/%d", f->fd);
			f->path = sp_xstrndup(pp, strlen(pp));
		}
	} else if (!(s->o.offline && s->o.locate)) {
		/* A file deleted since it was mapped is listed as "PATH (deleted)". */
		char *clean = sp_xstrndup(path, n);
		if (n > 10 && !strcmp(clean + n - 10, " (deleted)"))
			clean[n - 10] = 0;
		f->fd = open_mapped(pid, m, clean, s->o.offline, &f->path);
		free(clean);
	}
	if (f->fd >= 0 && read_segs(f) < 0) {
		close(f->fd);
		f->fd = -1;
	}
	if (f->fd >= 0 && m->ino && !vdso && !s->o.offline)
		f->mtime = mtime_of(f->fd);
	if (s->nfiles == s->capfiles) {
		s->capfiles = s->capfiles ? 2 * s->capfiles : 32;
		s->files = sp_xrealloc(s->files, s->capfiles * sizeof *s->files);
	}
	s->files[s->nfiles++] = f;
	int found;
	*sp_u64map_slot(&s->filemap, key, &found) = (uint32_t)s->nfiles;
	if (s->o.on_new)
		s->o.on_new(s->o.on_new_ctx, f);
	return f->fd >= 0 ? f : NULL;
}

/* ---- build ids ---- */

int sp_elf_build_id(const char *path, uint8_t out[20], size_t *len)
{
	/* non-blocking, regular files only: a recorded path may name a FIFO */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -1;
	}
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	int rc = -1;
	if (e) {
		const void *id;
		ssize_t n = dwelf_elf_gnu_build_id(e, &id);
		*len = 0;
		if (n > 0) {
			*len = (size_t)n > 20 ? 20 : (size_t)n;
			memcpy(out, id, *len);
		}
		rc = 0;
		elf_end(e);
	}
	close(fd);
	return rc;
}

/* ---- the demangler ---- */

/* libstdc++ is loaded for the first mangled name only: a profile of C
 * programs never maps it.  The handle stays open for the process's life. */
static char *(*cxa_demangle)(const char *, char *, size_t *, int *);
static pthread_once_t demangler_once = PTHREAD_ONCE_INIT;

static void load_demangler(void)
{
	void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
	if (h)
		*(void **)&cxa_demangle = dlsym(h, "__cxa_demangle");
}

/* The names demangled lately, by hash (direct-mapped): a profile names a
 * function through its engine and again as perf spells it (perf.data),
 * and __cxa_demangle costs some 10,000 instructions a name. */
enum { DEMANGLED = 4096 };
static struct demangled {
	uint64_t h;
	char *name, *d; /* d NULL: not a name __cxa_demangle takes */
} demangled[DEMANGLED];
static pthread_mutex_t demangled_lock = PTHREAD_MUTEX_INITIALIZER;

char *sp_demangle(const char *name)
{
	if (name[0] != '_' || name[1] != 'Z')
		return NULL;
	pthread_once(&demangler_once, load_demangler);
	if (!cxa_demangle)
		return NULL;
	size_t n = strlen(name);
	uint64_t h = sp_hash(name, n);
	struct demangled *c = &demangled[h % DEMANGLED];
	char *d = NULL;
	int hit = 0;
	pthread_mutex_lock(&demangled_lock);
	if (c->name && c->h == h && !strcmp(c->name, name)) {
		hit = 1;
		d = c->d ? sp_xstrndup(c->d, strlen(c->d)) : NULL;
	}
	pthread_mutex_unlock(&demangled_lock);
	if (hit)
		return d;
	int status = -1;
	d = cxa_demangle(name, NULL, NULL, &status);
	if (status) {
		free(d);
		d = NULL;
	}
	char *keep = sp_xstrndup(name, n), *keepd = d ? sp_xstrndup(d, strlen(d)) : NULL;
	pthread_mutex_lock(&demangled_lock);
	char *old = c->name, *oldd = c->d;
	c->h = h;
	c->name = keep;
	c->d = keepd;
	pthread_mutex_unlock(&demangled_lock);
	free(old);
	free(oldd);
	return d;
}

size_t sp_cxx_name_start(const char *d, size_t n)
{
	/* A template function's return type ends at the last space outside
	 * <> and () before the name (and before "operator"). */
	const char *op = memmem(d, n, "operator", 8);
	size_t lim = op ? (size_t)(op - d) : n, start = 0;
	int depth = 0;
	for (size_t j = 0; j < lim; j++) {
		if (d[j] == '<' || d[j] == '(')
			depth++;
		else if ((d[j] == '>' || d[j] == ')') && depth > 0)
			depth--;
		else if (d[j] == ' ' && !depth)
			start = j + 1;
	}
	return start;
}

/* perf's spelling of a demangled C++ (or Rust) name, in place: Rust legacy
 * names repaired, no clone suffix, parameter list, qualifiers or return type.
 * Returns the end of the name; *startp gets its start. */
size_t sp_cxx_spelling(char *d, size_t *startp)
{
	size_t n = strlen(d);
	n = sp_rust_tidy(d, n); /* Rust legacy names: <a::B>::f, no hash */
	d[n] = 0;
	const char *c;
	while (n && d[n - 1] == ']' && (c = memmem(d, n, " [clone ", 8)))
		n = (size_t)(c - d);
	size_t end = n;
	while (end && d[end - 1] != ')')
		end--;
	if (end) {
		int depth = 0;
		for (size_t i = end; i-- > 0;) {
			if (d[i] == ')')
				depth++;
			else if (d[i] == '(' && --depth == 0) {
				n = i;
				break;
			}
		}
	}
	*startp = sp_cxx_name_start(d, n);
	return n;
}

/* ---- separate debug files ---- */

/* Non-zero when pre + dir + post + "/" + name names a regular file. */
static int debug_file_at(const char *pre, const char *dir, size_t dlen, const char *post, const char *name)
{
	char path[4096];
	struct stat st;
	size_t n = (size_t)snprintf(path, sizeof path, "%s%.*s%s/%s", pre, (int)dlen, dir, post, name);
	return n < sizeof path && stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int sp_elf_find_debuginfo(struct Dwfl_Module *mod, void **userdata, const char *modname, uint64_t base,
			  const char *file_name, const char *debuglink_file, uint32_t debuglink_crc,
			  char **debuginfo_file_name)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	int worth = urls && *urls;
	const unsigned char *bits = NULL;
	GElf_Addr vaddr;
	int blen = dwfl_module_build_id(mod, &bits, &vaddr);
	if (!worth && blen > 1 && blen <= 64) {
		char rest[2 * 64 + 8];
		for (int i = 1; i < blen; i++)
			snprintf(rest + 2 * (i - 1), 3, "%02x", bits[i]);
		snprintf(rest + 2 * (blen - 1), 7, ".debug");
		char first[3];
		snprintf(first, sizeof first, "%02x", bits[0]);
		worth = debug_file_at("/usr/lib/debug/.build-id/", first, 2, "", rest);
	}
	if (!worth && file_name) {
		const char *slash = strrchr(file_name, '/');
		const char *dir = slash ? file_name : ".";
		size_t dlen = slash ? (size_t)(slash - file_name) : 1;
		char own[1024];
		const char *name = debuglink_file;
		if (!name && (size_t)snprintf(own, sizeof own, "%s.debug", slash ? slash + 1 : file_name) < sizeof own)
			name = own;
		/* beside the file, in its .debug/, under /usr/lib/debug */
		worth = name && (debug_file_at("", dir, dlen, "", name) || debug_file_at("", dir, dlen, "/.debug", name) ||
				 debug_file_at("/usr/lib/debug", dir, dlen, "", name));
	}
	if (!worth)
		return -1;
	return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file, debuglink_crc,
					    debuginfo_file_name);
}

/* ---- symbol tables ---- */

static size_t module_symbols(Dwfl_Module *m, int (*fn)(void *ctx, const struct sp_elfsym *s), void *ctx)
{
	Dwarf_Addr bias = 0;
	if (!dwfl_module_getelf(m, &bias))
		return 0;
	int n = dwfl_module_getsymtab(m);
	size_t calls = 0;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		Elf *elf = NULL;
		const char *nm = dwfl_module_getsym_info(m, i, &sym, &addr, &shndx, &elf, NULL);
		if (!nm || !*nm)
			continue;
		struct sp_elfsym s = { nm, addr - bias, sym.st_size, sym.st_info, sym.st_other, shndx, (size_t)i, elf, 0 };
		calls++;
		if (fn(ctx, &s))
			break;
	}
	return calls;
}

/* The symbols of table scn; *stop set when fn asked to stop. */
static size_t table_symbols(Elf *e, Elf_Scn *scn, const GElf_Shdr *sh, int (*fn)(void *ctx, const struct sp_elfsym *s),
			    void *ctx, int *stop)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	if (!d || !sh->sh_entsize)
		return 0;
	size_t n = sh->sh_size / sh->sh_entsize, calls = 0;
	for (size_t i = 1; i < n && !*stop; i++) {
		GElf_Sym sym;
		if (!gelf_getsym(d, (int)i, &sym))
			continue;
		const char *nm = elf_strptr(e, sh->sh_link, sym.st_name);
		if (!nm || !*nm)
			continue;
		struct sp_elfsym s = { nm, sym.st_value, sym.st_size, sym.st_info, sym.st_other,
				       sym.st_shndx, i, e, sh->sh_type == SHT_DYNSYM };
		calls++;
		*stop = fn(ctx, &s);
	}
	return calls;
}

size_t sp_elf_symbols(void *elf, void *module, unsigned which, int (*fn)(void *ctx, const struct sp_elfsym *s),
		      void *ctx)
{
	if (module)
		return module_symbols(module, fn, ctx);
	Elf *e = elf;
	if (!e)
		return 0;
	int has_symtab = 0, stop = 0;
	GElf_Shdr sh;
	if (which & SP_ELFSYM_DYNSYM_ELSE)
		for (Elf_Scn *scn = NULL; !has_symtab && (scn = elf_nextscn(e, scn));)
			has_symtab = gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB;
	size_t calls = 0;
	for (Elf_Scn *scn = NULL; !stop && (scn = elf_nextscn(e, scn));) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		int want = sh.sh_type == SHT_SYMTAB ? (which & (SP_ELFSYM_SYMTAB | SP_ELFSYM_DYNSYM_ELSE)) != 0
			 : sh.sh_type == SHT_DYNSYM ? (which & SP_ELFSYM_DYNSYM) || ((which & SP_ELFSYM_DYNSYM_ELSE) && !has_symtab)
						    : 0;
		if (want)
			calls += table_symbols(e, scn, &sh, fn, ctx, &stop);
	}
	return calls;
}
