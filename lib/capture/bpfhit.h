/* bpfhit.h — uprobe hits of every thread of a process, through one perf
 * event per probe and process and one output event per CPU.
 *
 * Why: a perf event of a uprobe records the hits of its own thread only,
 * so tracing needed one event per thread, CPU and probe (25,600 for 200
 * threads on 64 CPUs with entry and return probes: past the open-file
 * limit).  The kernel writes a probe's breakpoint into the processes of
 * the threads that have an event on it, and every hit there runs the BPF
 * programs attached to that tracepoint before looking for an event of the
 * running thread (kernel/trace/trace_uprobe.c: __uprobe_perf_func).  So
 * one event per probe on one thread of each traced process (an anchor: it
 * records nothing) with a program attached that counts the hit and writes
 * a record into this CPU's output event (bpf_perf_event_output, from the
 * user registers of the hit: the record carries the registers and the
 * stack as the probe's own event would).  Threads created later trap and
 * are recorded without a new event.  Needs root (or CAP_BPF and
 * CAP_PERFMON).
 */
#ifndef SP_BPFHIT_H
#define SP_BPFHIT_H

#include <stddef.h>
#include <stdint.h>

/* The CPUs a per-CPU map has a value for (/sys/devices/system/cpu/possible). */
int sp_bpfhit_ncpu(void);

/* The maps: an array of ncpu output events, and per-CPU hit counters for
 * nprobes probes.  Returns 0, or -1 with errno set. */
int sp_bpfhit_maps(int ncpu, unsigned nprobes, int *outmap, int *cntmap);

/* Another array of ncpu output events (the fd, or -1 with errno set). */
int sp_bpfhit_outmap(int ncpu);

/* Output event fd (PERF_COUNT_SW_BPF_OUTPUT, pid -1) is CPU cpu's. */
int sp_bpfhit_set_out(int outmap, int cpu, int fd);

/* The program of probe idx: writes a sample into this CPU's output event,
 * counts the hit in cntmap[idx] (written or lost to a full ring; not while
 * the output event is disabled), and returns 0 (the anchor event records
 * nothing).  regs 0: the sample's raw data is idx (4 bytes), the output
 * event adds the registers and stack (PERF_SAMPLE_REGS_USER, STACK_USER).
 * Else a compact record (an output event of RAW alone): the raw data is
 * idx (4 bytes), the pid and tid (4 each), the time (8, CLOCK_MONOTONIC:
 * bpf_ktime_get_ns), then the registers of regs (SP_BPFHIT_REG bits,
 * DWARF numbers 0-16, 8 bytes each, lowest first) and the 8 bytes at SP
 * when regs has SP_BPFHIT_TOP (0 when unreadable): 20 + 8 x n bytes, so
 * that the pid, tid and time lie where a sample of IP, TID and TIME has
 * them.  Returns its fd, or -1 with errno set and the kernel's verifier
 * log in log[nlog]. */
#define SP_BPFHIT_REG(dwarf) (1u << (dwarf))
#define SP_BPFHIT_TOP (1u << 17)
int sp_bpfhit_prog(int outmap, int cntmap, uint32_t idx, uint32_t regs, char *log, size_t nlog);

/* Probe idx's hits, all CPUs. */
uint64_t sp_bpfhit_count(int cntmap, int ncpu, uint32_t idx);

#endif
