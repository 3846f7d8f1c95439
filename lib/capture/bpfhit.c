/* bpfhit.c — the hit recorder of bpfhit.h: two maps and a program of 20 to
 * 60 instructions per probe, built here (no compiler, no library). */
#include "bpfhit.h"

#include <errno.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static long bpf(int cmd, union bpf_attr *a)
{
	return syscall(SYS_bpf, cmd, a, sizeof *a);
}

int sp_bpfhit_ncpu(void)
{
	/* "0-N" or "0-N,M-K": the highest CPU number + 1 */
	FILE *f = fopen("/sys/devices/system/cpu/possible", "re");
	char s[256];
	int n = 0;
	if (f && fgets(s, sizeof s, f)) {
		for (char *p = s; *p;) {
			char *e;
			long v = strtol(p, &e, 10);
			if (e == p)
				break;
			if (v + 1 > n)
				n = (int)v + 1;
			p = *e ? e + 1 : e;
		}
	}
	if (f)
		fclose(f);
	if (n <= 0) {
		long c = sysconf(_SC_NPROCESSORS_CONF);
		n = c > 0 ? (int)c : 1;
	}
	return n;
}

static int map_new(enum bpf_map_type type, unsigned value, unsigned n)
{
	union bpf_attr a;
	memset(&a, 0, sizeof a);
	a.map_type = type;
	a.key_size = 4;
	a.value_size = value;
	a.max_entries = n;
	return (int)bpf(BPF_MAP_CREATE, &a);
}

int sp_bpfhit_outmap(int ncpu) { return map_new(BPF_MAP_TYPE_PERF_EVENT_ARRAY, 4, (unsigned)ncpu); }

int sp_bpfhit_maps(int ncpu, unsigned nprobes, int *outmap, int *cntmap)
{
	*outmap = sp_bpfhit_outmap(ncpu);
	if (*outmap < 0)
		return -1;
	*cntmap = map_new(BPF_MAP_TYPE_PERCPU_ARRAY, 8, nprobes ? nprobes : 1);
	if (*cntmap < 0) {
		int e = errno;
		close(*outmap);
		*outmap = -1;
		errno = e;
		return -1;
	}
	return 0;
}

int sp_bpfhit_set_out(int outmap, int cpu, int fd)
{
	union bpf_attr a;
	memset(&a, 0, sizeof a);
	uint32_t k = (uint32_t)cpu, v = (uint32_t)fd;
	a.map_fd = (uint32_t)outmap;
	a.key = (uint64_t)(uintptr_t)&k;
	a.value = (uint64_t)(uintptr_t)&v;
	a.flags = BPF_ANY;
	return bpf(BPF_MAP_UPDATE_ELEM, &a) < 0 ? -1 : 0;
}

#define INSN(c, d, s, o, i) ((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })

/* struct pt_regs (x86-64): the offset of each DWARF register */
static const int16_t ptregs_off[17] = { 80, 96, 88, 40, 104, 112, 32, 152, 72, 64, 56, 48, 24, 16, 8, 0, 128 };

int sp_bpfhit_prog(int outmap, int cntmap, uint32_t idx, uint32_t regs, char *log, size_t nlog)
{
	/* the classic record: idx as raw data, the output event adds the rest */
	static const struct bpf_insn head[] = {
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, 5, 0, 0, 4),                /* r5: 4 bytes at r4 */
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, 4, 10, 0, 0),
		INSN(BPF_ALU64 | BPF_ADD | BPF_K, 4, 0, 0, -4),
	};
	struct bpf_insn prog[80];
	int n = 0, key = -4;
	prog[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_X, 6, 1, 0, 0);       /* r6: ctx, the user registers */
	if (!regs) {
		prog[n++] = INSN(BPF_ST | BPF_MEM | BPF_W, 10, 0, -4, (int32_t)idx); /* data and key: idx */
		memcpy(prog + n, head, sizeof head);
		n += (int)(sizeof head / sizeof *head);
	} else {
		/* compact, at r10 + key (4 mod 8, so that the time and the
		 * registers are aligned): idx, pid, tid, time, the registers,
		 * [SP]; idx is the counter's key too */
		int k = 0;
		for (int r = 0; r < 17; r++)
			k += (regs >> r) & 1;
		k += !!(regs & SP_BPFHIT_TOP);
		key = -20 - 8 * k;
		int j = 0;
		prog[n++] = INSN(BPF_ST | BPF_MEM | BPF_W, 10, 0, (int16_t)key, (int32_t)idx);
		prog[n++] = INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_get_current_pid_tgid);
		prog[n++] = INSN(BPF_STX | BPF_MEM | BPF_W, 10, 0, (int16_t)(key + 8), 0); /* tid: the low half */
		prog[n++] = INSN(BPF_ALU64 | BPF_RSH | BPF_K, 0, 0, 0, 32);
		prog[n++] = INSN(BPF_STX | BPF_MEM | BPF_W, 10, 0, (int16_t)(key + 4), 0); /* pid */
		prog[n++] = INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_ktime_get_ns); /* CLOCK_MONOTONIC */
		prog[n++] = INSN(BPF_STX | BPF_MEM | BPF_DW, 10, 0, (int16_t)(key + 12), 0);
		for (int r = 0; r < 17; r++)
			if ((regs >> r) & 1) {
				prog[n++] = INSN(BPF_LDX | BPF_MEM | BPF_DW, 0, 6, ptregs_off[r], 0);
				prog[n++] = INSN(BPF_STX | BPF_MEM | BPF_DW, 10, 0, (int16_t)(key + 20 + 8 * j++), 0);
			}
		if (regs & SP_BPFHIT_TOP) {
			/* the return address at an entry: probe_read_user zeroes
			 * its copy when the address is unreadable */
			prog[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_X, 1, 10, 0, 0);
			prog[n++] = INSN(BPF_ALU64 | BPF_ADD | BPF_K, 1, 0, 0, key + 20 + 8 * j++);
			prog[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_K, 2, 0, 0, 8);
			prog[n++] = INSN(BPF_LDX | BPF_MEM | BPF_DW, 3, 6, ptregs_off[7], 0);
			prog[n++] = INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_probe_read_user);
		}
		prog[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_X, 4, 10, 0, 0);
		prog[n++] = INSN(BPF_ALU64 | BPF_ADD | BPF_K, 4, 0, 0, key);
		prog[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_K, 5, 0, 0, 20 + 8 * j);
	}
	const struct bpf_insn tail[] = {
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, 1, 6, 0, 0),
		INSN(BPF_LD | BPF_DW | BPF_IMM, 2, BPF_PSEUDO_MAP_FD, 0, outmap),
		INSN(0, 0, 0, 0, 0),
		INSN(BPF_ALU | BPF_MOV | BPF_K, 3, 0, 0, -1),                 /* BPF_F_CURRENT_CPU (32 bits) */
		INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_perf_event_output),
		/* not counted: the output event is off (the trace is ending) */
		INSN(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 9, -EOPNOTSUPP),
		INSN(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD, 0, cntmap),
		INSN(0, 0, 0, 0, 0),
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, 2, 10, 0, 0),
		INSN(BPF_ALU64 | BPF_ADD | BPF_K, 2, 0, 0, key),
		INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem),  /* this CPU's counter */
		INSN(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 3, 0),
		INSN(BPF_LDX | BPF_MEM | BPF_DW, 1, 0, 0, 0),
		INSN(BPF_ALU64 | BPF_ADD | BPF_K, 1, 0, 0, 1),
		INSN(BPF_STX | BPF_MEM | BPF_DW, 0, 1, 0, 0),                 /* += 1, written or lost */
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0),                /* the anchor records nothing */
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};
	memcpy(prog + n, tail, sizeof tail);
	n += (int)(sizeof tail / sizeof *tail);
	union bpf_attr a;
	memset(&a, 0, sizeof a);
	a.prog_type = BPF_PROG_TYPE_KPROBE;
	a.insns = (uint64_t)(uintptr_t)prog;
	a.insn_cnt = (uint32_t)n;
	/* bpf_perf_event_output is for GPL-compatible programs; this one is
	 * offered under either licence. */
	a.license = (uint64_t)(uintptr_t)"Dual MIT/GPL";
	if (log && nlog)
		log[0] = 0;
	int fd = (int)bpf(BPF_PROG_LOAD, &a);
	if (fd < 0 && log && nlog) {
		/* again with the verifier's reasons (a log only with a level) */
		int e = errno;
		a.log_buf = (uint64_t)(uintptr_t)log;
		a.log_size = (uint32_t)nlog;
		a.log_level = 1;
		fd = (int)bpf(BPF_PROG_LOAD, &a);
		if (fd < 0)
			errno = e;
	}
	return fd;
}

uint64_t sp_bpfhit_count(int cntmap, int ncpu, uint32_t idx)
{
	uint64_t stackv[64], *v = ncpu <= 64 ? stackv : malloc((size_t)ncpu * sizeof *v);
	if (!v)
		return 0;
	union bpf_attr a;
	memset(&a, 0, sizeof a);
	a.map_fd = (uint32_t)cntmap;
	a.key = (uint64_t)(uintptr_t)&idx;
	a.value = (uint64_t)(uintptr_t)v;
	uint64_t n = 0;
	if (bpf(BPF_MAP_LOOKUP_ELEM, &a) == 0)
		for (int i = 0; i < ncpu; i++)
			n += v[i];
	if (v != stackv)
		free(v);
	return n;
}
