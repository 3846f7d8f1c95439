/* uprobe.h — what `pcollect --trace PROBE` probes: a probe spec parsed and
 * resolved to (binary, file offset) pairs from the binary's ELF symbol
 * table, ready for the uprobe PMU (perf_events.h, sp_perfev_add_uprobe).
 *
 * A spec is  [LIB:]FUNC[+OFF][:entry][(VALUE,...)]
 *  - FUNC: a function of the executable; a glob ('handle_*') matches up to
 *    SP_UPROBE_MAX_MATCH functions; C++ functions match by their demangled
 *    name, with or without the parameter list ('ns::Conn::recv').
 *  - LIB: a path (contains '/'), or a library name such as libc or
 *    libssl.so.3, looked up in the process's mappings (attach) or in the
 *    executable's DT_NEEDED list and the system library directories.
 *  - +OFF: a probe at that byte offset into the function: a point event
 *    (no return probe).  OFF must be 0 or the address of a DWARF line
 *    table row (an instruction boundary); others are refused.
 *  - :entry: entry only, no return probe.
 *  - FILE.c:LINE (FILE ending in a C/C++ source suffix): the addresses of
 *    that line from the executable's DWARF line table, every inlined copy;
 *    point events.  FILE.c:LINE(var,...) records local variables and
 *    parameters of integer type there (or one level of struct member:
 *    var.member of a struct in memory, var->member of a pointer), by their DWARF location at each
 *    address: a register, or memory at a register or the frame base (CFA)
 *    plus an offset, read from the stack copied with the hit; any other
 *    location is an error that says why.
 *  - VALUE: argN (N = 1..6, integer arguments by the x86-64 SysV ABI, read
 *    at entry) or ret (the return value, read at exit).
 *
 * Ownership: sp_uprobe_set owns its probes and strings; the library never
 * prints (a stripped binary is reported through set->stripped).
 */
#ifndef SP_UPROBE_H
#define SP_UPROBE_H

#include <stddef.h>
#include <stdint.h>

#include "util.h"

#define SP_UPROBE_MAX_MATCH 64  /* functions one glob may probe */
#define SP_UPROBE_MAX_VALUES 6  /* recorded values per probe */

/* Where a recorded value comes from. */
enum sp_uvalue {
	SP_UV_ARG = 0,  /* argument varg (SysV register) at entry */
	SP_UV_RET = 1,  /* rax at the exit */
	SP_UV_REG = 2,  /* a variable in DWARF register vreg */
	SP_UV_ADDR = 3, /* a variable's value: regs[vreg] + voff (DW_OP_breg, stack_value) */
	SP_UV_MEM = 4,  /* a variable in memory at regs[vreg] + voff (fbreg, breg), vsize bytes */
};

struct sp_uprobe {
	char *name;        /* the function as shown: demangled, no parameters;
			    * "FUNC+0x10" for an offset probe */
	char *path;        /* the binary, absolute */
	uint64_t vaddr;    /* the symbol's address in the ELF file */
	uint64_t offset;   /* file offset of the probed instruction */
	uint64_t size;     /* the function's size (0: unknown) */
	int ret;           /* also a return probe */
	int point;         /* a point event (FUNC+OFF), no call */
	int cxx_eh;        /* in a C++ binary with exception tables: a return
			    * probe would abort exceptions thrown through it */
	int nvalues;
	enum sp_uvalue vkind[SP_UPROBE_MAX_VALUES];
	int varg[SP_UPROBE_MAX_VALUES];       /* argument number 1..6 */
	char *vname[SP_UPROBE_MAX_VALUES];    /* "arg2", "ret", a variable */
	int vreg[SP_UPROBE_MAX_VALUES];       /* SP_UV_REG/ADDR/MEM: DWARF register */
	int64_t voff[SP_UPROBE_MAX_VALUES];
	int vsize[SP_UPROBE_MAX_VALUES];      /* bytes (1, 2, 4, 8) */
	int vsigned[SP_UPROBE_MAX_VALUES];
	/* VAR->MEMBER: the variable is a pointer (8 bytes where vkind says);
	 * the value is vsize bytes at that pointer + vmoff, read from the
	 * stack copy when it lies there, else from the live process. */
	int vderef[SP_UPROBE_MAX_VALUES];
	int64_t vmoff[SP_UPROBE_MAX_VALUES];
	unsigned stack_bytes;                 /* user stack to copy with each hit */
	const char *spec;  /* the --trace argument it came from (borrowed) */
};

struct sp_uprobe_set {
	struct sp_uprobe *v;
	size_t n, cap;
	/* A binary without .symtab: only its .dynsym functions could be
	 * matched.  Path of the first such binary (owned), NULL if none. */
	char *stripped;
	/* C++ binary with exception tables (.gcc_except_table) among the
	 * probed ones: its path (owned), NULL if none. */
	char *cxx_eh;
	/* Probes moved off an instruction the kernel cannot probe (a lock or
	 * es/cs/ss/ds prefix) to the next one of the same basic block: one
	 * line each naming both addresses, for the command to print.  NULL
	 * if none. */
	char *notes;
};

void sp_uprobe_set_init(struct sp_uprobe_set *s);
void sp_uprobe_set_release(struct sp_uprobe_set *s);

/* Resolve spec and append its probes to s.  exe: the executable (a path);
 * pid: the live process whose mappings name libraries, 0 in launch mode.
 * Returns the number of probes added, or -1 with err set: a malformed
 * spec, a missing function (the sentence names the nearest functions), a
 * glob matching more than SP_UPROBE_MAX_MATCH, an offset past the
 * function's end, a probe on an instruction the kernel cannot probe
 * (lock, es/cs/ss/ds prefixes) with no later instruction of its basic
 * block to stand for it (the sentence names the nearest that can be).
 * Such an instruction followed, in the same basic block, by one that can
 * be probed moves the probe there (same count; see set->notes). */
int sp_uprobe_resolve(struct sp_uprobe_set *s, const char *spec, const char *exe, int pid, struct sp_err *err);

/* The source lines of a function, for a line probe (FILE:LINE) on one of
 * them: the function resolved as sp_uprobe_resolve resolves spec (exe,
 * pid alike), then the DWARF line table rows inside it that start a
 * statement in the file of its first row (lines inlined from other files
 * are left out).  file gets that file's base name; lines[0..ret) the
 * distinct lines, ascending (at most max).  *path_out (optional) gets the
 * binary (owned by the caller).  Returns the number of lines or -1 with err
 * set (no such function, no DWARF line table, no rows in it). */
int sp_uprobe_func_lines(const char *spec, const char *exe, int pid, char *file, size_t nfile, int *lines, int max,
			 char **path_out, struct sp_err *err);

/* The registers a hit of u needs (bpfhit.h's SP_BPFHIT_REG bits, with
 * SP_BPFHIT_TOP: the return address at an entry with a return probe), for
 * sp_perfev_add_uprobe: SP, the arguments and variables of its values;
 * at_exit: SP, rax and its variables' registers.  args: every argument
 * register too (a reader of arguments of its own: --stacks --weight,
 * --live). */
uint32_t sp_uprobe_regs(const struct sp_uprobe *u, int at_exit, int args);
/* The x86-64 instruction at code (n bytes readable): its length, and in
 * *bad_prefix the prefix byte that keeps the kernel from probing it (lock
 * 0xf0; es, cs, ss, ds 0x26 0x2e 0x36 0x3e), 0 if none.  -1: not an
 * instruction this decoder knows (invalid in 64-bit mode, cut short). */
int sp_uprobe_insn(const uint8_t *code, size_t n, int *bad_prefix);

/* The kernel's cost of one uprobe hit on this machine, in ns: a probe on a
 * function of the running program itself, called with and without it.
 * A probed instruction the kernel cannot emulate costs more (a single
 * step: ~13 us instead of ~2 us on a VM), so this is a lower bound.
 * Returns 0, or -1 with err set (no uprobe PMU, no symbol table).
 * The probe's event stays open, disabled (its function is not called
 * again), in *fd, its tracefs name in tp[ntp] ("" for an event of the
 * uprobe PMU): closing it waits the kernel's grace periods (~0.1 s, and
 * the next probe's open waited behind it), so the caller closes it with
 * its other probes (sp_perfev_adopt_probe). */
int sp_uprobe_cost(double *ns, int *fd, char *tp, size_t ntp, struct sp_err *err);

#endif
