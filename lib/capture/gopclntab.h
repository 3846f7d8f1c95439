/* gopclntab.h — Go's own function table (.gopclntab): the names Go gives
 * its functions, the functions inlined at an address, and which functions
 * are wrappers, as the runtime's traceback (and so net/http/pprof) reads
 * them.  It is in every Go executable, also one built with -ldflags=-s -w
 * (no symbols, no DWARF).
 *
 * Formats read: Go 1.16-1.17 (magic 0xfffffffa), 1.18-1.19 (0xfffffff0),
 * 1.20 and later (0xfffffff1); 64-bit little-endian files.  The inline
 * tree of 1.18 and later lies in go:func.*, found by its symbol or, in a
 * file without symbols, through runtime.firstmoduledata.
 */
#ifndef SP_GOPCLNTAB_H
#define SP_GOPCLNTAB_H

#include <gelf.h>
#include <stdint.h>

struct sp_gopcln;

#define SP_GO_MAXFRAMES 32

/* The functions at one address, innermost (the inlined callee) first, the
 * containing function last; wrappers (method value "-fm" wrappers, ABI
 * wrappers, "go" statement closures: funcID wrapper) are left out, as
 * Go's traceback leaves them out. */
struct sp_gofuncs {
	const char *names[SP_GO_MAXFRAMES]; /* in the table: valid while it is */
	int inlined[SP_GO_MAXFRAMES];       /* 1: an inlined call */
	int n;
	int kind; /* SP_GO_* of the containing function */
};

enum {
	SP_GO_NONE = -1, /* not Go code */
	SP_GO_NORMAL,
	SP_GO_SWITCH, /* runtime.systemstack, runtime.morestack: on to the goroutine */
	SP_GO_TOP,    /* runtime.mcall, mstart, rt0_go: where Go's traceback ends */
	SP_GO_EXIT,   /* runtime.goexit: the end, not shown (as Go's pprof) */
};

/* The table of elf (NULL when it has none).  *why, when set on NULL: why
 * a file with a .gopclntab cannot be read (a version or layout not known). */
struct sp_gopcln *sp_gopcln_open(Elf *elf, const char **why);
void sp_gopcln_free(struct sp_gopcln *t); /* NULL ok */
/* The functions at file address vaddr: 1 with *out set, 0 when vaddr is in
 * no function of the table. */
int sp_gopcln_lookup(const struct sp_gopcln *t, uint64_t vaddr, struct sp_gofuncs *out);
/* The function a direct call (CALL rel32) just before return address ret
 * (a file address) went to: 1 with *target its entry, 0 when the
 * instruction there is no such call or goes to no function's entry. */
int sp_gopcln_call_target(const struct sp_gopcln *t, uint64_t ret, uint64_t *target);
/* The size of the frame at file address vaddr (Go's pc-to-SP table): the
 * return address lies at SP + *delta.  1 with *delta set, else 0. */
int sp_gopcln_spdelta(const struct sp_gopcln *t, uint64_t vaddr, int64_t *delta);
/* The Go version family read: 116, 118 or 120. */
int sp_gopcln_version(const struct sp_gopcln *t);

#endif
