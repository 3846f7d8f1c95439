/* pcollect's target of -p: checked before sampling (a thread id, a
 * zombie), watched during it (gone?), and, when nothing was sampled, the
 * likely reason. */
#include <math.h>

#include "cmd.h"
#include "snapshot.h"
#include "pcollect.h"

static int dead(char state) { return state == 'Z' || state == 'X'; }

/* -p PID: it exists and is not a zombie; a thread id means that thread of
 * its process.  Returns 0, or -1 after saying what is wrong. */
int pcollect_check_target(struct coll *c)
{
	struct sp_proc_info pi;
	int pid = sp_proc_tgid(c->o.pid);
	if (sp_proc_info(pid, &pi) < 0) {
		sp_error("no process %d", c->o.pid);
		return -1;
	}
	if (pid != c->o.pid) {
		struct sp_proc_info ti;
		if (sp_proc_info(c->o.pid, &ti) < 0 || dead(ti.state)) {
			sp_error("thread %d of process %d (%s) has exited", c->o.pid, pid, pi.comm);
			return -1;
		}
		c->tid = c->o.pid;
		if (!c->o.quiet)
			sp_error("%d is a thread of process %d (%s): sampling thread %d (%s) only, and the threads "
				 "it creates (-p %d for the whole process)", c->tid, pid, pi.comm, c->tid, ti.comm, pid);
		c->o.pid = pid;
	}
	if (dead(pi.state) && sp_snap_live_tid(pid) == pid) {
		sp_error("process %d (%s) is a zombie: it has exited and its parent has not yet collected its "
			 "exit status; there is nothing left to sample", pid, pi.comm);
		return -1;
	}
	c->cpu0_ns = pi.cpu_ns;
	return 0;
}

/* The target exited (a zombie not yet reaped counts as gone). */
int pcollect_target_gone(const struct coll *c)
{
	struct sp_proc_info pi;
	if (c->o.all)
		return 0; /* the machine */
	if (c->tid)
		return sp_proc_info(c->tid, &pi) < 0 || dead(pi.state);
	if (sp_proc_info(c->o.pid, &pi) < 0)
		return 1;
	return dead(pi.state) && sp_snap_live_tid(c->o.pid) == c->o.pid;
}

/* No sample was written: say why it is likely so. */
void pcollect_explain_empty(struct coll *c, double seconds)
{
	const struct sp_collect_stats *cs = sp_collect_stats(c->s->eng);
	struct sp_proc_info pi;
	int alive = c->o.pid && sp_proc_info(c->tid ? c->tid : c->o.pid, &pi) == 0;
	/* who: the target(s) named, cpu: their CPU time while sampled */
	struct sp_buf who = SP_BUF_INIT;
	double cpu = alive ? (double)(pi.cpu_ns - c->cpu0_ns) / 1e9 : 0;
	int many = c->tg && (c->o.npids > 1 || c->o.children);
	if (many) {
		alive = pcollect_targets_who(c, &who, &cpu) > 0;
		pi.kthread = 0;
	} else if (c->o.pid) {
		char one[48];
		snprintf(one, sizeof one, "%s %d", c->tid ? "thread" : "process", c->tid ? c->tid : c->o.pid);
		sp_buf_adds(&who, one);
	}
	if (c->o.all) {
		sp_error("no samples in %.1f s of every process (-a)%s", seconds,
			 c->o.no_kernel || c->o.threads ? ": --no-kernel drops the idle task's and kernel threads' "
			 "samples, -t the threads whose names do not match" : "");
		sp_buf_release(&who);
		return;
	}
	if (c->o.threads && cs->threads && !cs->kept_threads) {
		struct sp_buf b = SP_BUF_INIT;
		size_t i;
		const char *name;
		for (i = 0; i < 8 && (name = sp_collect_thread(c->s->eng, i, NULL)); i++) {
			sp_buf_adds(&b, i ? ", " : "");
			sp_buf_adds(&b, name);
		}
		if (cs->threads > i)
			sp_buf_adds(&b, ", ...");
		sp_error("no samples: no thread matched -t '%s' (the %llu thread%s seen: %s)", c->o.threads,
			 (unsigned long long)cs->threads, cs->threads == 1 ? "" : "s", sp_buf_cstr(&b));
		sp_buf_release(&b);
	} else if (alive && pi.kthread) {
		sp_error("no samples: %d (%s) is a kernel thread: it has no user stack, and it did not run while "
			 "sampled%s", c->tid ? c->tid : c->o.pid, pi.comm,
			 c->o.no_kernel ? " (and --no-kernel drops kernel samples)" : "");
	} else if (cs->no_user) {
		sp_error("no samples: the %llu samples taken had no user stack (kernel threads) and kernel frames "
			 "are not available", (unsigned long long)cs->no_user);
	} else if (alive && cpu >= 1.0 / c->o.freq) {
		sp_error("no samples, though %s used %.3f s of CPU in %.1f s: %s threads were too short-lived "
			 "for -F %u (a thread is sampled after %.3f s of its own CPU time; a higher -F samples more)",
			 sp_buf_cstr(&who), cpu, seconds, many ? "their" : "its", c->o.freq, 1.0 / c->o.freq);
	} else if (alive) {
		sp_error("no samples: %s used %.3f s of CPU in %.1f s, less than one sample period at -F %u "
			 "(%.3f s): %s threads were blocked or idle, or too short-lived (a higher -F samples "
			 "more; pcollect --snapshot shows where threads wait)", sp_buf_cstr(&who), cpu < 0 ? 0 : cpu,
			 seconds, c->o.freq, 1.0 / c->o.freq, many ? "their" : "its");
	} else if (many) {
		sp_error("no samples: the %s ran too little CPU time for -F %u (%.3f s per sample per thread), "
			 "or their threads were too short-lived (a higher -F samples more)", sp_buf_cstr(&who),
			 c->o.freq, 1.0 / c->o.freq);
	} else {
		sp_error("no samples: the %s ran too little CPU time for -F %u (%.3f s per sample per thread), "
			 "or its threads were too short-lived (a higher -F samples more)",
			 c->o.pid ? "process" : "command", c->o.freq, 1.0 / c->o.freq);
	}
	sp_buf_release(&who);
}

int pcollect_per_cpu(struct coll *c)
{
	const struct opts *o = &c->o;
	struct sp_err err;
	int rc = 0;
	/* A thread alone (-p TID), off-CPU time and probes need events per
	 * thread; -a is per CPU already.  Per CPU, every process's samples are
	 * taken and read (then dropped): above 1000 Hz that costs the machine
	 * more than it gains (at 100 kHz the reader fell behind and kept none). */
	if (!o->per_thread && !o->all && !c->tid && o->freq && o->freq <= 1000 && !o->offcpu && !o->ntraces &&
	    !o->stacks && !o->live)
		rc = sp_perfev_follow_cpus(c->s->ev, &err);
	if (rc < 0) {
		sp_error_e(&err);
		return -1;
	}
	return 0;
}

void pcollect_cpu_account(struct coll *c, const char *who)
{
	const struct sp_perfev_stats *st = sp_perfev_stats(c->s->ev);
	uint64_t counted = sp_perfev_counted_ns(c->s->ev), sampled = st->sampled_ns;
	if (!counted || !c->o.freq || c->o.offcpu)
		return;
	char buf[32];
	snprintf(buf, sizeof buf, "%llu", (unsigned long long)sampled);
	sp_meta_add(c->s->p, "cpu-sampled-ns", buf);
	snprintf(buf, sizeof buf, "%llu", (unsigned long long)counted);
	sp_meta_add(c->s->p, "cpu-counted-ns", buf);
	double share = (double)sampled / (double)counted, period = 1e9 / c->o.freq;
	if (c->o.verbose)
		sp_error("CPU time: %.3f s sampled of %.3f s the kernel counted for %s (%.1f %%), sampled per %s%s",
			 (double)sampled / 1e9, (double)counted / 1e9, who, 100 * share,
			 st->per_cpu ? "CPU" : "thread", st->draws ? ", at random intervals" : "");
	if (c->o.verbose && st->draws)
		sp_error("per CPU: %llu sample intervals drawn at random (exponential, mean 1/%u s); %llu samples "
			 "dropped, the timer's second after one draw", (unsigned long long)st->draws, c->o.freq,
			 (unsigned long long)st->refired);
	/* Samples stand for whole periods: a few periods either way are
	 * chance, not a loss.  The count of samples in n periods of CPU time
	 * varies by about sqrt(n) (0.09 s of CPU at -F 99 gave 3 samples of
	 * the 9 expected once, under a load of 12 on 2 CPUs): a deficit
	 * within 3 of those plus 2 periods is not said. */
	double expect = (double)counted / period, miss = (double)(counted - sampled) / period;
	if (c->o.quiet || share >= 0.9 || sampled > counted || miss < 5 || miss < 3 * sqrt(expect) + 2)
		return;
	const char *fix = c->o.per_thread ? "without --per-thread, pcollect samples per CPU and counts them"
			  : c->tid || c->o.ntraces || c->o.stacks || c->o.live || c->o.freq > 1000
			  ? "a higher -F samples more of them"
			  : "sampling per CPU counts them: run as root, with CAP_PERFMON or kernel.perf_event_paranoid <= 0";
	if (!st->per_cpu)
		sp_error("%.0f %% of %s's CPU time (%.3f s of %.3f s counted by the kernel) was not sampled: it ran "
			 "in threads too short to sample at -F %u%s (per thread, a thread is sampled after %.1f ms of "
			 "its own CPU time); %s", 100 * (1 - share), who, (double)(counted - sampled) / 1e9,
			 (double)counted / 1e9, c->o.freq, st->kernel_denied ? ", or in the kernel (user mode only)" : "",
			 period / 1e6, fix);
	else
		sp_error("%.0f %% of %s's CPU time (%.3f s of %.3f s counted by the kernel) was not sampled%s",
			 100 * (1 - share), who, (double)(counted - sampled) / 1e9, (double)counted / 1e9,
			 st->lost || st->throttled ? ": samples were lost or throttled (said above)" : "");
}
