/* perf_records.h — the records a perf_event ring or a perf.data file
 * delivers, parsed: a sample, a uprobe hit, and the callbacks that receive
 * them (struct sp_perf_handler).  Both producers (perf_events.h, which opens
 * the events, and the perf.data reader, lib/engine/perf_data.h) and the
 * consumer (lib/engine/collect.h) share these, so the reader of a file does
 * not depend on perf_event_open.
 */
#ifndef SP_PERF_RECORDS_H
#define SP_PERF_RECORDS_H

#include <stdint.h>

#include "procmaps.h"

enum sp_callgraph {
	SP_CG_DWARF = 0, /* user registers + a copy of the user stack */
	SP_CG_FP,        /* the kernel's frame-pointer callchain */
	SP_CG_NONE,      /* the sampled instruction only */
};

/* x86-64 registers in DWARF numbering: rax rdx rcx rbx rsi rdi rbp rsp r8-r15 rip. */
#define SP_NREGS 17
#define SP_REG_SP 7
#define SP_REG_IP 16

struct sp_perf_sample {
	uint32_t pid, tid;
	uint64_t time;   /* CLOCK_MONOTONIC ns */
	uint64_t period; /* ns of CPU time this sample stands for */
	uint64_t ip;     /* the sampled instruction (kernel or user) */
	const uint64_t *kernel; /* kernel callchain, innermost first */
	uint32_t nkernel;
	const uint64_t *user;   /* SP_CG_FP: user callchain, innermost first */
	uint32_t nuser;
	int has_regs;           /* SP_CG_DWARF and a user context exists */
	uint64_t regs[SP_NREGS];
	const uint8_t *stack;   /* copy of [regs[SP_REG_SP], +stack_len) */
	uint64_t stack_len;
	int switch_out;         /* opts.offcpu: the context-switch event's sample */
};

/* A hit of a uprobe (sp_perfev_add_uprobe): its cookie, the thread, the
 * time on the samples' clock, and the user registers at the hit (at a
 * return probe: just after the return, regs[SP_REG_SP] = the entry's + 8). */
struct sp_perf_uprobe {
	uint32_t cookie;
	uint32_t pid, tid;
	uint64_t time;
	uint64_t ip;
	int has_regs;
	uint64_t regs[SP_NREGS];
	int has_top;      /* top: the 8 bytes at regs[SP_REG_SP]; at a
			   * function's entry, its return address */
	uint64_t top;
	const uint8_t *stack; /* copy of [regs[SP_REG_SP], +stack_len) */
	uint64_t stack_len;
};

struct sp_perf_handler {
	void *ctx;
	void (*sample)(void *ctx, const struct sp_perf_sample *s);
	/* exec: the comm changed because the process called exec. */
	void (*comm)(void *ctx, uint32_t pid, uint32_t tid, const char *comm, int exec, uint64_t time);
	void (*mmap)(void *ctx, uint32_t pid, uint32_t tid, const struct sp_map *m, uint64_t time);
	void (*fork)(void *ctx, uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid, uint64_t time);
	void (*exit)(void *ctx, uint32_t pid, uint32_t tid, uint64_t time);
	/* opts.offcpu: thread tid left the CPU (out; preempt: it was still
	 * runnable) or came back.  May be NULL. */
	void (*sched)(void *ctx, uint32_t pid, uint32_t tid, int out, int preempt, uint64_t time);
	/* A uprobe hit (any process: the caller filters by pid). */
	void (*uprobe)(void *ctx, const struct sp_perf_uprobe *u);
	void *uprobe_ctx; /* the uprobe callback's ctx */
	/* May be NULL.  Each sample as soon as it is read from the kernel,
	 * before it comes to sample, maybe in another thread
	 * (sp_perfev_set_early): what must be read from the target soon after
	 * the sample (Python frames) is not held up by the slow work on the
	 * samples before it (unwinding, symbols). */
	void (*early)(void *early_ctx, const struct sp_perf_sample *s);
	void *early_ctx;
};

#endif
