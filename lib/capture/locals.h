/* locals.h — the parameters and local variables of a native frame, from
 * DWARF (`pcollect --snapshot --locals`): the scopes that contain the
 * frame's pc (dwarf_getscopes), each variable's location expression
 * evaluated with the registers the unwinder recovered for that frame
 * (unwind.h: all of them in the innermost frame, the stack pointer and
 * the callee-saved ones in the others) and memory from the thread's stack
 * copy or, outside it, from the process within a byte budget.
 *
 * Values are short text as a debugger shows them: numbers, enumerators by
 * name, pointers with their address (and for char * the string, bounded),
 * structs one level deep, the first elements of arrays, "<optimized out>"
 * where DWARF gives no location at that pc, "<unreadable at 0x...>" for
 * memory that cannot be read.  Nothing here stops, prints or exits.
 */
#ifndef SP_LOCALS_H
#define SP_LOCALS_H

#include <stddef.h>
#include <stdint.h>

#include "util.h"

/* Where memory comes from: the stack copy first, then the live process
 * (process_vm_readv) while budget lasts and, when time is set, until it is
 * spent (the threads are stopped while it is read).
 * skipped counts reads the budget refused (the caller says so); the value
 * shows "<not read at 0x...: budget>". */
struct sp_locals_mem {
	int pid;
	const uint8_t *stack; /* copy of [stack_lo, stack_lo + stack_len) */
	uint64_t stack_lo;
	size_t stack_len;
	size_t budget;        /* bytes the live process may still be read for */
	struct sp_budget time; /* after it nothing more is read (zero: none) */
	size_t skipped;       /* reads not done for lack of budget */
	size_t reads;         /* reads of the live process done */
};

/* One frame's registers, DWARF numbering 0..16 (rip = 16); known has bit
 * n set when register n is valid; cfa 0 = unknown. */
struct sp_locals_regs {
	uint64_t r[17];
	uint32_t known;
	uint64_t cfa;
};

/* The variables of the frame at pc (an address in the process; for a
 * caller's frame the return address minus one) in the Dwfl * dwfl.  The
 * scopes containing pc are split at each function or inlined function:
 * group 0 is the innermost (the inlined function pc is in, or the
 * function), group 1 the one it was inlined into, and so on.  The
 * variables of group `group` are appended to out as "name\0value\0"
 * pairs.  Returns the number of variables appended; *ngroups (optional)
 * gets the number of groups (0: no DWARF for pc). */
int sp_locals_frame(void *dwfl, uint64_t pc, int group, const struct sp_locals_regs *regs, struct sp_locals_mem *m,
		    struct sp_buf *out, int *ngroups);

/* Load ahead what sp_locals_frame and sp_locals_function need of every
 * module dwfl knows (its DWARF, the table from addresses to compilation
 * units, its ELF symbols), so that frames are read quickly while the
 * threads are stopped.  Cheap once done. */
void sp_locals_prepare(void *dwfl);
/* The ELF symbol pc is in, NULL unknown (quick once prepared). */
const char *sp_locals_function(void *dwfl, uint64_t pc);

#endif
