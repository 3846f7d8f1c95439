/* pcollect --trace PROBE: resolve the probes, attach them, watch the hit
 * rate against the overhead budget, say what happened. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "pcollect.h"
#include "procmaps.h"
#include "snapshot.h"
#include "x86.h"

#define SP_HIT_STACK 4096 /* --stacks: bytes of stack per hit by default */

static struct coll *sample_coll; /* the callbacks' pcollect (their ctx is the engine's) */

/* The executable to probe: the process's (attach), or COMMAND found
 * through PATH as execvp will find it (launch).  Returns a malloc'd path
 * or NULL (err set). */
static char *find_exe(int pid, const char *cmd, struct sp_err *err)
{
	char buf[PATH_MAX];
	if (pid) {
		snprintf(buf, sizeof buf, "/proc/%d/exe", pid);
		char *p = realpath(buf, NULL);
		if (!p)
			sp_err_set(err, "%s: %s", buf, strerror(errno));
		return p;
	}
	return sp_path_search(cmd, getenv("PATH"), err);
}

int pcollect_trace_setup(struct coll *c, const char *cmd)
{
	struct sp_err err;
	memset(&err, 0, sizeof err);
	sp_uprobe_set_init(&c->probes);
	char *exe = find_exe(c->o.pid, cmd, &err);
	if (!exe) {
		sp_error_e(&err);
		return -1;
	}
	for (size_t i = 0; i < c->o.ntraces; i++) {
		size_t before = c->probes.n;
		int n = sp_uprobe_resolve(&c->probes, c->o.traces[i], exe, c->o.pid, &err);
		if (n < 0 && c->o.live) {
			/* --live: the executable's own allocator (static), else libc's. */
			char spec[32];
			snprintf(spec, sizeof spec, "libc:%s", c->o.traces[i]);
			n = sp_uprobe_resolve(&c->probes, spec, exe, c->o.pid, &err);
		}
		if (c->o.live && n > 0) {
			static const enum sp_hit_role roles[] = { SP_HIT_MALLOC, SP_HIT_CALLOC, SP_HIT_REALLOC,
								  SP_HIT_FREE };
			for (size_t k = before; k < c->probes.n; k++) {
				/* The return gives the block: a return probe even in
				 * C++ code (the allocator does not throw); free's entry
				 * needs no stack. */
				c->probes.v[k].ret = roles[i] != SP_HIT_FREE;
				/* free(NULL) is nothing to the live view: free's
				 * probe goes past its NULL check, an instruction
				 * the kernel emulates instead of single-stepping. */
				if (roles[i] == SP_HIT_FREE)
					c->probes.v[k].offset += sp_x86_file_past_null_check(
						c->probes.v[k].path, c->probes.v[k].offset, c->probes.v[k].size);
				c->probes.v[k].stack_bytes = roles[i] == SP_HIT_FREE ? 8 : c->probes.v[k].stack_bytes;
				sp_hitstacks_role(c->s->hs, k, roles[i]);
			}
		}
		if (n < 0) {
			sp_error_e(&err);
			free(exe);
			return -1;
		}
		if (!c->o.quiet && strpbrk(c->o.traces[i], "*?[")) {
			struct sp_buf b = SP_BUF_INIT;
			for (size_t k = before; k < c->probes.n && k < before + 8; k++) {
				sp_buf_adds(&b, k > before ? ", " : "");
				sp_buf_adds(&b, c->probes.v[k].name);
			}
			sp_error("--trace '%s': %d function%s (%s%s)", c->o.traces[i], n, n == 1 ? "" : "s",
				 sp_buf_cstr(&b), n > 8 ? ", ..." : "");
			sp_buf_release(&b);
		}
	}
	free(exe);
	for (const char *l = c->probes.notes, *e; !c->o.quiet && l && *l; l = e + 1) {
		e = strchr(l, '\n');
		if (!e)
			break;
		sp_error("%.*s", (int)(e - l), l);
	}
	if (!c->o.quiet && c->probes.stripped)
		sp_error("%s has no symbol table (stripped): only its exported functions (.dynsym) can be traced",
			 c->probes.stripped);
	if (c->probes.cxx_eh && !c->o.trace_returns) {
		/* A uretprobe hijacks the return address; an exception thrown
		 * through that frame finds no unwind entry and std::terminate
		 * ends the program. */
		int any = 0;
		for (size_t i = 0; i < c->probes.n; i++)
			if (c->probes.v[i].cxx_eh && c->probes.v[i].ret) {
				c->probes.v[i].ret = 0;
				any = 1;
			}
		if (any && !c->o.quiet)
			sp_error("%s is C++ with exception tables: return probes are off (an exception thrown "
				 "through a probed call would abort the program); entries only, no durations. "
				 "--trace-returns turns them on for code that does not throw", c->probes.cxx_eh);
	}
	for (size_t i = 0; i < c->probes.n; i++) {
		struct sp_uprobe *u = &c->probes.v[i];
		/* --stacks: the stack to unwind, 4 KiB unless --call-graph dwarf,BYTES
		 * says: a hit's record is that big, and a hot allocator fills the ring. */
		unsigned want = c->o.stack_set || c->o.stack_bytes < SP_HIT_STACK ? c->o.stack_bytes : SP_HIT_STACK;
		if (c->s->hs && u->stack_bytes < want && !(c->o.live && !u->ret))
			u->stack_bytes = want;
		/* the registers each hit carries: what its values and the
		 * --stacks/--live reader use */
		if (sp_perfev_add_uprobe(c->s->ev, u->path, u->offset, 0, (uint32_t)(2 * i), u->stack_bytes,
					 sp_uprobe_regs(u, 0, c->s->hs != NULL), &err) < 0 ||
		    (u->ret && sp_perfev_add_uprobe(c->s->ev, u->path, u->offset, 1, (uint32_t)(2 * i + 1), 8,
						    sp_uprobe_regs(u, 1, 0), &err) < 0)) {
			sp_error_e(&err);
			return -1;
		}
	}
	/* What one hit costs here, for the overhead warning.  Its probe is
	 * closed with the others (by the keeper, as root: no wait). */
	int cfd;
	char ctp[64];
	if (sp_uprobe_cost(&c->hit_ns, &cfd, ctp, sizeof ctp, &err) < 0)
		c->hit_ns = 0;
	sp_perfev_adopt_probe(c->s->ev, cfd, ctp);
	return 0;
}

/* The holder's thread: a new thread or child of the target, stopped
 * before its first instruction. */
static void arm_new(void *ctx, int pid, int tid)
{
	struct coll *c = ctx;
	(void)pid;
	struct sp_err err;
	memset(&err, 0, sizeof err);
	if (sp_perfev_add_task_probes(c->s->ev, tid, &err) < 0 && !__atomic_fetch_add(&c->arm_failed, 1, __ATOMIC_RELAXED))
		c->arm_err = err;
}

int pcollect_trace_hold(struct coll *c, int pid)
{
	if (!c->o.ntraces || c->tid)
		return 0;
	/* Exact Python samples seize threads and wait for them in this
	 * thread: two tracers of one thread cannot be.  New threads then get
	 * their probes when their FORK record is read (a few ms late). */
	if (pcollect_python_exact(c))
		return 0;
	struct sp_err err;
	memset(&err, 0, sizeof err);
	if (!(c->hold = sp_hold_new(arm_new, c))) {
		sp_error("cannot start the thread that holds new threads: %s", strerror(errno));
		return -1;
	}
	if (sp_hold_attach(c->hold, pid, &err) < 0) {
		/* Traced already (a debugger, strace): trace anyway, new
		 * threads a little late. */
		if (!c->o.quiet)
			sp_error("%s: threads the target creates from now on get their probes when pcollect sees "
				 "them, a few ms late (their first calls may be missed)", err.msg);
		sp_hold_free(c->hold);
		c->hold = NULL;
	}
	return 0;
}

void pcollect_trace_unhold(struct coll *c) { sp_hold_stop(c->hold); }

/* A new thread or process of the target: its probes, if no holder opened
 * them before it ran; a child's hits are the target's. */
static void traced_fork(void *ctx, uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid, uint64_t time)
{
	struct coll *c = sample_coll;
	if (c->s->tracer)
		sp_tracer_add_pid(c->s->tracer, (int)pid);
	struct sp_err err;
	memset(&err, 0, sizeof err);
	if (sp_perfev_add_task_probes(c->s->ev, (int)tid, &err) < 0 && !c->arm_failed++)
		c->arm_err = err;
	if (c->engine_fork)
		c->engine_fork(ctx, pid, ppid, tid, ptid, time);
}

/* The engine's sample callback, behind the tracer's stack fix-up. */
static void (*engine_sample)(void *ctx, const struct sp_perf_sample *s);

static void fixed_sample(void *ctx, const struct sp_perf_sample *s)
{
	struct coll *c = sample_coll;
	if (c->s->tracer && s->has_regs && s->stack_len &&
	    sp_tracer_fix_stack(c->s->tracer, (int)s->tid, s->regs[SP_REG_SP], s->stack, s->stack_len, c->stackbuf)) {
		struct sp_perf_sample f = *s;
		f.stack = c->stackbuf;
		engine_sample(ctx, &f);
		return;
	}
	engine_sample(ctx, s);
}

/* --stacks: the hit to the tracer (trace events, open calls), then its
 * stack, with the return addresses fixed, to the engine as a sample. */
static void stacks_hit(void *ctx, const struct sp_perf_uprobe *u)
{
	struct coll *c = ctx;
	size_t probe = u->cookie / 2;
	uint64_t before = sp_tracer_probe_hits(c->s->tracer, probe);
	sp_tracer_hit(c->s->tracer, u);
	if (sp_tracer_probe_hits(c->s->tracer, probe) == before)
		return; /* another process's */
	const uint8_t *stack = NULL;
	if (u->has_regs && u->stack_len && u->stack_len <= 65536 &&
	    sp_tracer_fix_stack(c->s->tracer, (int)u->tid, u->regs[SP_REG_SP], u->stack, u->stack_len, c->stackbuf))
		stack = c->stackbuf;
	sp_hitstacks_hit(c->s->hs, &c->engine_hd, u, stack);
}

/* Every hit read: counted per thread (the budget's cost per thread), then
 * handed on. */
static void counted_hit(void *ctx, const struct sp_perf_uprobe *u)
{
	struct coll *c = ctx;
	int found;
	(*sp_u64map_slot(&c->tid_hits, u->tid, &found))++;
	c->inner_hit(c->inner_ctx, u);
}

void pcollect_trace_handler(struct coll *c, struct sp_perf_handler *hd)
{
	hd->uprobe = sp_tracer_hit;
	hd->uprobe_ctx = c->s->tracer;
	if (!c->s->tracer)
		return;
	if (c->s->hs) {
		c->engine_hd = *hd;
		hd->uprobe = stacks_hit;
		hd->uprobe_ctx = c;
	}
	c->inner_hit = hd->uprobe;
	c->inner_ctx = hd->uprobe_ctx;
	hd->uprobe = counted_hit;
	hd->uprobe_ctx = c;
	engine_sample = hd->sample;
	sample_coll = c;
	c->engine_fork = hd->fork;
	hd->fork = traced_fork;
	c->stackbuf = sp_xmalloc(65536);
	hd->sample = fixed_sample;
}

static int fix_stopped(void *ctx, int tid, uint64_t sp, const uint8_t *stack, uint64_t len, uint8_t *buf,
		       uint64_t *tramp)
{
	struct coll *c = ctx;
	if (!c->tramp_known) {
		/* The kernel's trampoline of return probes is the first slot of
		 * the [uprobes] page it maps at the process's first hit. */
		char path[64], line[256];
		snprintf(path, sizeof path, "/proc/%d/maps", tid);
		FILE *f = fopen(path, "re");
		unsigned long long lo;
		while (f && fgets(line, sizeof line, f))
			if (strstr(line, "[uprobes]") && sscanf(line, "%llx-", &lo) == 1) {
				sp_tracer_set_trampoline(c->s->tracer, lo);
				c->tramp_known = 1;
			}
		if (f)
			fclose(f);
	}
	*tramp = sp_tracer_trampoline(c->s->tracer);
	return sp_tracer_fix_stack(c->s->tracer, tid, sp, stack, len, buf);
}

void pcollect_trace_start(struct coll *c, int pid)
{
	/* --live: the calls pair the returns and fix stacks, but millions of
	 * malloc calls are not written as trace events. */
	static struct sp_sink no_events;
	c->s->tracer = sp_tracer_new(c->s->p, c->o.live ? &no_events : c->s->sink, c->s->eng, &c->probes, pid);
	sp_tracer_set_sampling(c->s->tracer, c->o.freq > 0);
	sp_collect_set_stack_fix(c->s->eng, fix_stopped, c);
	sp_perfev_enable_uprobes(c->s->ev);
	c->trace_started = sp_mono_s();
	c->trace_pid = pid;
	/* -p: the target's system time per second before the probes (its
	 * own system calls), from the attach on */
	struct sp_proc_info pi;
	if (c->attach_t0 > 0 && c->trace_started > c->attach_t0 + 0.05 && sp_proc_info(pid, &pi) == 0 &&
	    pi.sys_ns >= c->attach_sys0)
		c->sys_before = (double)(pi.sys_ns - c->attach_sys0) / 1e9 / (c->trace_started - c->attach_t0);
	if (c->o.verbose) {
		const struct sp_perfev_stats *ps = sp_perfev_stats(c->s->ev);
		sp_error("tracing %zu probe%s in process %d", c->probes.n, c->probes.n == 1 ? "" : "s", pid);
		if (c->attach_t0 > 0)
			sp_error("probes attached in %.3f s: %u events in %u threads, %s", c->trace_started - c->attach_t0,
				 ps->probe_events, ps->probe_tasks, ps->probe_bpf ? "sharing one tracefs uprobe per probe, "
				 "one event per probe and process and one per CPU (a BPF program records every thread's hits)"
				 : ps->probe_shared ? "sharing one tracefs uprobe per probe, events per thread and CPU"
				 : "each its own uprobe (the uprobe PMU: closing each waits a grace period)");
		if (sp_perfev_probe_why(c->s->ev))
			sp_error("probes per thread: %s", sp_perfev_probe_why(c->s->ev));
	}
	c->trace_t0 = 0;
}

/* Thread tid's system time (clock ticks, /proc/PID/task/TID/stat), or -1. */
static long thread_stime(int pid, int tid)
{
	char buf[512];
	const char *e = sp_proc_stat(pid, tid, buf, sizeof buf);
	unsigned long st;
	if (!e || sscanf(e + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %lu", &st) != 1)
		return -1;
	return (long)st;
}

/* The largest share of a thread's time its hits took over the last dt s,
 * over the time it was not waiting for a CPU (run_delay of
 * /proc/TID/schedstat): on a loaded machine a thread that runs a quarter
 * of the time and traps all of it has lost all its progress, not a
 * quarter.  The traps' time: the thread's system time, as much of it as
 * its hits can explain (at most twice the calibrated hit each: its own
 * system calls are not the probes'), else its hits read times per_hit.
 * Why: the calibration, a few hundred calls timed at start, varied from
 * 11 to 55 us per hit here under load while the kernel's count of the
 * traps' time stayed within 15 % of the slowdown the target measured
 * (t6296, a CPU-bound target).  At most 1. */
static double thread_cost(struct coll *c, double per_hit, double dt)
{
	double cal = c->hit_ns > 0 ? c->hit_ns : 2000;
	static long hz;
	if (!hz)
		hz = sysconf(_SC_CLK_TCK) > 0 ? sysconf(_SC_CLK_TCK) : 100;
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", c->trace_pid);
	DIR *d = c->trace_pid ? opendir(path) : NULL;
	double worst = 0;
	struct dirent *de;
	while (d && (de = readdir(d))) {
		int tid = atoi(de->d_name);
		if (tid <= 0)
			continue;
		int found, f0;
		uint32_t h = sp_u64map_get(&c->tid_hits, (uint64_t)tid, &found);
		uint32_t *h0 = sp_u64map_slot(&c->tid_hits0, (uint64_t)tid, &f0);
		uint32_t dh = h - *h0;
		*h0 = h;
		char sp[96];
		snprintf(sp, sizeof sp, "/proc/%d/task/%d/schedstat", c->trace_pid, tid);
		FILE *f = fopen(sp, "re");
		unsigned long long run = 0, delay = 0;
		if (f) {
			if (fscanf(f, "%llu %llu", &run, &delay) != 2)
				delay = 0;
			fclose(f);
		}
		uint32_t *d0 = sp_u64map_slot(&c->tid_delay0, (uint64_t)tid, &found);
		uint32_t ddelay = found ? (uint32_t)(delay / 1000) - *d0 : 0; /* us */
		*d0 = (uint32_t)(delay / 1000);
		long st = thread_stime(c->trace_pid, tid);
		int fs;
		uint32_t *s0 = sp_u64map_slot(&c->tid_stime0, (uint64_t)tid, &fs);
		long dst = fs && st >= 0 && (uint32_t)st >= *s0 ? (long)((uint32_t)st - *s0) : -1;
		*s0 = st >= 0 ? (uint32_t)st : 0;
		if (!dh || !f0)
			continue;
		double own = dt - (double)ddelay / 1e6;
		if (own < 0.02 * dt)
			own = 0.02 * dt;
		double x = (double)dh * per_hit / 1e9 / own;
		if (dst >= 0) {
			double sys = (double)dst / (double)hz, cap = 2 * (double)dh * cal / 1e9;
			x = (sys < cap ? sys : cap) / own;
		}
		worst = x > worst ? x : worst;
	}
	if (d)
		closedir(d);
	return worst > 1 ? 1 : worst;
}

/* Every half second: the cost of the probes to the target, measured: the
 * hits read per second times the cost of one hit calibrated here
 * (sp_uprobe_cost), never more than the CPU time the target itself used
 * meanwhile (the traps run on its threads: at most 100 % per thread).
 * Over the budget for a second, the hottest probe is stopped (its events
 * closed, so its breakpoint leaves the target) and that is said, with when
 * and the cost; its counts from then on are a lower bound (metadata
 * trace-stopped, "PROBE SECONDS", which preport --latency shows). */
static void budget_check(struct coll *c, double now, double min_dt)
{
	if (!c->s->tracer)
		return;
	uint64_t hits = sp_tracer_stats(c->s->tracer)->hits;
	struct sp_proc_info pi;
	int have = c->trace_pid && sp_proc_info(c->trace_pid, &pi) == 0;
	uint64_t cpu = have ? pi.cpu_ns : 0, sys = have ? pi.sys_ns : 0;
	if (!c->probe_h0) {
		c->probe_h0 = sp_xcalloc(c->probes.n + 1, sizeof *c->probe_h0);
		c->stopped = sp_xcalloc(c->probes.n + 1, sizeof *c->stopped);
	}
	if (!c->trace_t0) {
		c->trace_t0 = now;
		c->trace_h0 = hits;
		c->trace_cpu0 = cpu;
		c->trace_sys0 = sys;
		for (size_t i = 0; i < c->probes.n; i++)
			c->probe_h0[i] = sp_tracer_probe_hits(c->s->tracer, i);
		thread_cost(c, 0, 1); /* each thread's counts so far */
		return;
	}
	double dt = now - c->trace_t0;
	if (dt < min_dt || dt <= 0)
		return;
	double rate = (double)(hits - c->trace_h0) / dt;
	double cost = c->hit_ns > 0 ? c->hit_ns : 2000; /* ns; the notes' emulated-instruction cost */
	double share = rate * cost / 1e9;
	/* The traps run in the kernel on the target's threads: its system
	 * time, less what it used before the probes (its own system calls),
	 * measures what a calibration on another instruction misses (a
	 * single-stepped instruction, return probes, a loaded machine). */
	if (sys && c->trace_sys0 && sys >= c->trace_sys0) {
		double kshare = (double)(sys - c->trace_sys0) / 1e9 / dt - c->sys_before;
		/* but only as much as the hits can explain: at most twice the
		 * calibrated hit (an entry probe: a return probe traps twice).
		 * On this loaded VM the system time per hit read varied from 1
		 * to 20 times the calibration between runs of one target. */
		if (kshare > 2 * share)
			kshare = 2 * share;
		if (kshare > share)
			share = kshare;
	}
	if (cpu && c->trace_cpu0 && cpu >= c->trace_cpu0 && share > (double)(cpu - c->trace_cpu0) / 1e9 / dt)
		share = (double)(cpu - c->trace_cpu0) / 1e9 / dt;
	/* The cost of a hit here: the calibration's, or the target's system
	 * time per hit read when that is more. */
	double per_hit = cost;
	if (hits > c->trace_h0 && share * 1e9 * dt / (double)(hits - c->trace_h0) > per_hit)
		per_hit = share * 1e9 * dt / (double)(hits - c->trace_h0);
	double worst = thread_cost(c, per_hit, dt);
	/* (0: no thread left to measure, the target's end) */
	if (hits > c->trace_h0 && worst > 0) {
		c->cost_sum += worst * dt;
		c->cost_dt += dt;
		c->cost_hit = per_hit;
	}
	/* the hottest probe still on, and its rate */
	size_t hot = c->probes.n;
	double hot_rate = -1;
	for (size_t i = 0; i < c->probes.n; i++) {
		uint64_t h = sp_tracer_probe_hits(c->s->tracer, i);
		double r = (double)(h - c->probe_h0[i]) / dt;
		c->probe_h0[i] = h;
		if (!c->stopped[i] && r > hot_rate) {
			hot_rate = r;
			hot = i;
		}
	}
	c->trace_t0 = now;
	c->trace_h0 = hits;
	c->trace_cpu0 = cpu;
	c->trace_sys0 = sys;
	/* A note above 1 % (or the budget, when lower); the probe stopped
	 * above the budget. */
	int over = c->o.trace_budget > 0 && worst > c->o.trace_budget;
	double note = c->o.trace_budget > 0 && c->o.trace_budget < 0.01 ? c->o.trace_budget : 0.01;
	c->over_s = over ? c->over_s + dt : 0;
	if (share > note && !c->budget_warned && !c->o.quiet)
		sp_error("tracing costs the target about %.1f%% of a CPU (%.0f hits/s at %.1f us per hit%s), above %g%%: "
			 "trace fewer or less frequent functions%s", 100 * share, rate, cost / 1e3,
			 c->hit_ns > 0 ? " measured here" : "", 100 * note, c->o.trace_budget > 0 ?
			 " (a probe is stopped above the budget, --trace-budget)" : "");
	c->budget_warned |= share > note;
	if (c->over_s < 1.0 || hot == c->probes.n || min_dt < 0.5)
		return;
	/* Over the budget for a second: stop the hottest probe. */
	c->stopped[hot] = 1;
	sp_perfev_close_probe(c->s->ev, (uint32_t)(2 * hot));
	sp_perfev_close_probe(c->s->ev, (uint32_t)(2 * hot + 1));
	double at = now - c->trace_started;
	char v[600];
	snprintf(v, sizeof v, "%s %.1f", c->probes.v[hot].name, at);
	sp_meta_add(c->s->p, "trace-stopped", v);
	c->trace_meta = 1;
	if (!c->o.quiet)
		sp_error("probe %s stopped at %.1f s: tracing took %.0f%% of a traced thread's time for %.1f s, above the "
			 "%g%% budget (%.0f hits/s read, %.0f of them this probe's, at %.1f us per hit: %.1f%% of a CPU); its "
			 "counts from then on are a lower bound (--trace-budget=PERCENT raises the budget, none lifts it)",
			 c->probes.v[hot].name, at, 100 * worst, c->over_s, 100 * c->o.trace_budget, rate, hot_rate,
			 per_hit / 1e3, 100 * share);
	c->over_s = 0;
}

void pcollect_trace_tick(struct coll *c, double now) { budget_check(c, now, 0.5); }

void pcollect_trace_finish(struct coll *c)
{
	/* A target that ran less than the tick's half second is judged on
	 * what it ran. */
	uint64_t now_ns = sp_mono_ns();
	budget_check(c, (double)now_ns / 1e9, 0.01);
	if (!c->s->tracer)
		return;
	if (c->o.live && !c->s->write_failed && sp_hitstacks_finish(c->s->hs, now_ns, &c->s->werr) < 0)
		c->s->write_failed = 1;
	const struct sp_tracer_stats *st = sp_tracer_stats(c->s->tracer);
	const struct sp_perfev_stats *ps = sp_perfev_stats(c->s->ev);
	/* Lost hits, per probe: the kernel's count of each probe's hits
	 * against the records read.  Said, and kept in the stream's metadata
	 * (key trace-lost, "PROBE N"). */
	double secs = (double)now_ns / 1e9 - c->trace_started;
	uint64_t all_lost = 0;
	for (size_t i = 0; i < c->probes.n; i++) {
		uint64_t fired = 0, got = 0, f, d;
		for (uint32_t k = 0; k < 2; k++)
			if (sp_perfev_probe_counts(c->s->ev, (uint32_t)(2 * i + k), &f, &d) == 0) {
				fired += f;
				got += d;
			}
		if (fired <= got)
			continue;
		all_lost += fired - got;
		char v[600];
		snprintf(v, sizeof v, "%s %llu", c->probes.v[i].name, (unsigned long long)(fired - got));
		sp_meta_add(c->s->p, "trace-lost", v);
		if (!c->o.quiet)
			sp_error("probe %s: %llu of its %llu hits lost: its trace buffer was full (%.0f hits/s over "
				 "%.1f s; --buffer=MIB enlarges it%s)", c->probes.v[i].name,
				 (unsigned long long)(fired - got), (unsigned long long)fired,
				 secs > 0 ? (double)fired / secs : 0, secs, c->s->hs ? ", --call-graph dwarf,BYTES copies "
				 "less stack per hit" : "");
	}
	if (all_lost || c->trace_meta)
		c->s->sink->meta(c->s->sink, c->s->p, &c->s->werr);
	(void)ps;
	if (!c->o.quiet) {
		/* A probe that recorded nothing says so: a line never run, a
		 * function not called, or (said above) threads left untraced. */
		for (size_t i = 0; i < c->probes.n; i++)
			if (!sp_tracer_probe_hits(c->s->tracer, i))
				sp_error("probe %s: 0 hits", c->probes.v[i].name);
		if (c->arm_failed)
			sp_error("%lu new threads or processes of the target run untraced: %s", c->arm_failed,
				 c->arm_err.msg);
		if (st->orphans)
			sp_error("%llu returns without their entry (calls begun before the probes were attached) "
				 "were left out", (unsigned long long)st->orphans);
	}
	if (c->o.verbose) {
		sp_error("traced %zu probes: %llu hits, %llu entries, %llu exits, %llu point events, %llu calls left "
			 "by longjmp or an exception, %llu still open at the end, %llu hits of other processes",
			 c->probes.n, (unsigned long long)st->hits, (unsigned long long)st->entries,
			 (unsigned long long)st->exits, (unsigned long long)st->points,
			 (unsigned long long)st->abandoned, (unsigned long long)st->open,
			 (unsigned long long)st->foreign);
		if (c->hit_ns > 0)
			sp_error("a probe hit costs at least %.2f us here", c->hit_ns / 1e3);
		if (c->cost_dt > 0)
			sp_error("tracing took %.0f%% of the busiest traced thread's time (its hits at %.1f us each, over "
				 "the time it was not waiting for a CPU; averaged over %.1f s)",
				 100 * c->cost_sum / c->cost_dt, c->cost_hit / 1e3, c->cost_dt);
		sp_error("probes open in %u threads, %u perf events at most (%s); %lu new threads and processes held "
			 "until their probes were open%s", ps->probe_tasks, ps->probe_events_max,
			 ps->probe_bpf ? "per probe on three threads of each process, and per CPU for the output: a BPF "
					 "program records the hits" : "per thread, CPU and probe", sp_hold_count(c->hold), c->hold ? "" : " (none held: "
			 "--python-sampling=exact or -p TID; new threads get their probes when pcollect sees them)");
		if (ps->probe_reanchored)
			sp_error("%u anchoring threads exited: other threads of their processes anchor the probes",
				 ps->probe_reanchored);
		if (c->o.live) {
			const struct sp_hitstacks_stats *h = sp_hitstacks_stats(c->s->hs);
			sp_error("--live: %llu blocks allocated and recorded, %llu freed, %llu live at the end "
				 "(%llu bytes); %llu frees of blocks not recorded, %llu allocator calls without "
				 "their return", (unsigned long long)h->allocs, (unsigned long long)h->frees,
				 (unsigned long long)h->live, (unsigned long long)h->live_bytes,
				 (unsigned long long)h->unknown, (unsigned long long)h->unpaired);
		}
	}
}

void pcollect_trace_release(struct coll *c)
{
	sp_hold_free(c->hold);
	c->hold = NULL;
	sp_uprobe_set_release(&c->probes);
	free(c->probe_h0);
	sp_u64map_release(&c->tid_hits);
	sp_u64map_release(&c->tid_hits0);
	sp_u64map_release(&c->tid_delay0);
	sp_u64map_release(&c->tid_stime0);
	free(c->stopped);
	free(c->o.traces);
	free(c->stackbuf);
}
