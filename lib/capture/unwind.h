/* unwind.h — unwinding a thread's user stack from a register set and a
 * copy of its stack, with libdwfl's CFI unwinder (.eh_frame, .debug_frame;
 * no frame pointers needed), as perf --call-graph dwarf does.
 *
 * One sp_unwind per process (address space), kept for the whole run: the
 * libdwfl modules (ELF files, their CFI) are reported once from the
 * process's maps and reused by every sample.  The same unwinder serves
 * perf samples (a register set and stack copy per sample), snapshots of a
 * stopped thread (live reads allowed) and readers of recorded raw samples.
 *
 * Registers are x86-64 in DWARF numbering: rax rdx rcx rbx rsi rdi rbp rsp
 * r8..r15 rip (perf_events.h converts perf's order).
 */
#ifndef SP_UNWIND_H
#define SP_UNWIND_H

#include <stddef.h>
#include <stdint.h>

#include "elfmod.h"
#include "perf_records.h"
#include "procmaps.h"

struct sp_unwind;

/* mods opens the ELF files (shared by all processes); pid names the process
 * (for live reads and /proc/PID/map_files). */
struct sp_unwind *sp_unwind_new(int pid, struct sp_elfmods *mods);
void sp_unwind_free(struct sp_unwind *u); /* NULL ok */

/* Before the first sync: CFI from the ELF files themselves (.eh_frame,
 * and .debug_frame when the file has it), never from a separate debug
 * file.  With many processes each unwinder would open (and inflate) the
 * same debug files again: a system-wide collector's choice.  Names still
 * come from the debug files (symbols.h's tables are shared). */
void sp_unwind_no_debuginfo(struct sp_unwind *u);

/* Report the ELF files of maps to libdwfl.  Cheap when maps did not change
 * since the last call (by generation). */
void sp_unwind_sync(struct sp_unwind *u, const struct sp_maps *maps);

enum {
	SP_UNWIND_LIVE = 1, /* read memory outside the copy from the live process */
};

struct sp_unwind_result {
	int n;          /* pcs written */
	int truncated;  /* unwinding stopped with an error before the outermost frame */
};

/* Unwind thread tid from regs and the copy [regs[SP_REG_SP], +stack_len).
 * pcs[0] is the interrupted instruction, pcs[1..] return addresses minus
 * one (addresses inside the call instruction, for symbol and line look-up).
 * Always writes at least pcs[0]. */
struct sp_unwind_result sp_unwind_stack(struct sp_unwind *u, int tid, const uint64_t regs[SP_NREGS],
					const void *stack, size_t stack_len, unsigned flags, uint64_t *pcs,
					int max);

/* The same, and (when sps is not NULL) SP_UNWIND_KEPT registers of each
 * frame i at sps[i * SP_UNWIND_KEPT ...]: its stack pointer (the frame of
 * pcs[i] spans [sp of i, sp of i+1)), then the callee-saved rbx rbp r12
 * r13 r14 r15 as that frame had them; 0 where the unwinder does not know.
 * known (NULL: not wanted; with sps only): bit k of known[i] is set when
 * sps[i * SP_UNWIND_KEPT + k] is known (a register may hold 0). */
#define SP_UNWIND_KEPT 7
struct sp_unwind_result sp_unwind_stack_sps(struct sp_unwind *u, int tid, const uint64_t regs[SP_NREGS],
					    const void *stack, size_t stack_len, unsigned flags, uint64_t *pcs,
					    uint64_t *sps, uint8_t *known, int max);

/* The libdwfl session of this process (NULL before the first module),
 * typed void* so that this header needs no libdwfl.h. */
void *sp_unwind_dwfl(struct sp_unwind *u);

#endif
