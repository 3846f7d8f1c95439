/* pcollect's several targets: -p PID,PID... (or -p repeated) and
 * --children (the processes the targets had forked before pcollect
 * attached).  The first pid stays o.pid and goes through the one-process
 * path of cmd/pcollect.c; this file adds the others beside it, and keeps
 * the set of processes whose end ends the collection.
 *
 * Children forked after the attach need nothing here: the sampling events
 * are opened with inherit=1 (lib/capture/perf_events.h), so the kernel copies them into
 * every thread and process a followed thread creates, at no cost until
 * they sample, and a PERF_RECORD_FORK names the new process.  That is
 * cheaper than a second follower: lib/capture/hold.c's ptrace holder stops every
 * new thread (two context switches and a waitpid per clone) and is needed
 * only where inheritance cannot be used (uprobes, --trace): for a
 * command that forks many short processes it is hundreds of times slower
 * than inheritance.  What inheritance cannot reach are the processes that
 * exist already: those are found by walking the ppid tree of /proc once,
 * before any event is
 * opened (so a child that appears after that inherits its parent's events
 * and is never opened twice, which would count its samples twice). */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cmd.h"
#include "procmaps.h"
#include "snapshot.h"
#include "pcollect.h"

struct pc_targets {
	int *pid; /* o.pids, then (--children) the descendants found at attach */
	size_t n, listed;
	/* The processes whose end is waited for: the targets, and with
	 * --children each process they fork (FORK records); 1 while alive. */
	struct sp_u64map live;
	size_t nlive;
	double next_check;
	double gone_at; /* when none was left alive (0: some are) */
	uint64_t gone_ns; /* the same instant on the records' clock */
	void (*fork)(void *ctx, uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid, uint64_t time);
	void (*exit)(void *ctx, uint32_t pid, uint32_t tid, uint64_t time);
	int children;
	uint64_t *cpu0; /* each pid's CPU time (ns) when scanned, for pcollect_targets_who */
};

/* The record callbacks' targets (one collection per run), and the -p
 * list: kept here so that an early return of the command, which does not
 * free them, leaves them reachable. */
static struct pc_targets *the;
static int *pid_list;

int pcollect_pids_opt(struct opts *o, const char *arg)
{
	const char *s = arg;
	char one[32];
	do {
		size_t len = strcspn(s, ",");
		if (len >= sizeof one)
			return -1;
		memcpy(one, s, len);
		one[len] = 0;
		int pid = pcollect_pid(one);
		if (pid < 0)
			return -1;
		o->pids = pid_list = sp_xrealloc(o->pids, (o->npids + 1) * sizeof *o->pids);
		o->pids[o->npids++] = pid;
		s += len;
	} while (*s++ == ',');
	o->pid = o->pids[0];
	return 0;
}

static int dead(char state) { return state == 'Z' || state == 'X'; }

/* Each listed pid: a live process pcollect may sample (perf_event_open's
 * check is ptrace's read access: /proc/PID/exe is refused alike). */
int pcollect_targets_check(struct coll *c)
{
	for (size_t i = 0; i < c->o.npids; i++) {
		int pid = c->o.pids[i];
		struct sp_proc_info pi;
		for (size_t j = 0; j < i; j++)
			if (c->o.pids[j] == pid) {
				sp_error("-p: process %d is given twice", pid);
				return -1;
			}
		if (sp_proc_info(pid, &pi) < 0) {
			sp_error("no process %d", pid);
			return -1;
		}
		if (sp_proc_tgid(pid) != pid) {
			sp_error("%d is a thread of process %d, not a process: with several -p targets give "
				 "process ids", pid, sp_proc_tgid(pid));
			return -1;
		}
		if (dead(pi.state) && sp_snap_live_tid(pid) == pid) {
			sp_error("process %d (%s) is a zombie: it has exited and its parent has not yet collected "
				 "its exit status; there is nothing left to sample", pid, pi.comm);
			return -1;
		}
		char path[64], link[16];
		snprintf(path, sizeof path, "/proc/%d/exe", pid);
		if (readlink(path, link, sizeof link) < 0 && (errno == EACCES || errno == EPERM)) {
			sp_error("cannot attach to process %d (%s): permission denied (another user's process: "
				 "sampling it needs root, CAP_PERFMON or ptrace access to it)", pid, pi.comm);
			return -1;
		}
	}
	return 0;
}

/* The parent pid from /proc/PID/stat (field 4, after the comm). */
static int ppid_of(int pid)
{
	char buf[512];
	const char *r = sp_proc_stat(pid, 0, buf, sizeof buf);
	int ppid;
	if (!r || sscanf(r + 1, " %*c %d", &ppid) != 1)
		return -1;
	return ppid;
}

static int listed(const struct pc_targets *t, int pid)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->pid[i] == pid)
			return 1;
	return 0;
}

/* Before any event is opened: the targets, and with --children every
 * process below them (children of children too) that runs now. */
void pcollect_targets_scan(struct coll *c, int launched)
{
	struct pc_targets *t = sp_xcalloc(1, sizeof *t);
	c->tg = the = t;
	t->children = c->o.children;
	sp_u64map_init(&t->live);
	if (launched) {
		t->pid = sp_xmalloc(sizeof *t->pid);
		t->pid[t->n++] = launched;
	} else {
		t->pid = sp_xmalloc(c->o.npids * sizeof *t->pid);
		for (size_t i = 0; i < c->o.npids; i++)
			t->pid[t->n++] = c->o.pids[i];
		t->pid[0] = c->o.pid; /* -p TID --children: its process's children */
	}
	t->listed = t->n;
	if (c->o.children && !launched) {
		/* The ppid of each process, once; then rounds of "whose parent
		 * is in the set" until nothing is added (a tree of any depth). */
		int (*pp)[2] = NULL;
		size_t np = 0, cap = 0;
		DIR *d = opendir("/proc");
		struct dirent *de;
		while (d && (de = readdir(d))) {
			char *end;
			long pid = strtol(de->d_name, &end, 10);
			if (*end || pid <= 0)
				continue;
			int ppid = ppid_of((int)pid);
			if (ppid <= 0)
				continue;
			if (np == cap) {
				cap = cap ? 2 * cap : 256;
				pp = sp_xrealloc(pp, cap * sizeof *pp);
			}
			pp[np][0] = (int)pid;
			pp[np++][1] = ppid;
		}
		if (d)
			closedir(d);
		for (int added = 1; added;) {
			added = 0;
			for (size_t i = 0; i < np; i++)
				if (listed(t, pp[i][1]) && !listed(t, pp[i][0])) {
					t->pid = sp_xrealloc(t->pid, (t->n + 1) * sizeof *t->pid);
					t->pid[t->n++] = pp[i][0];
					added = 1;
				}
		}
		free(pp);
	}
	int found;
	t->cpu0 = sp_xcalloc(t->n, sizeof *t->cpu0);
	for (size_t i = 0; i < t->n; i++) {
		struct sp_proc_info pi;
		*sp_u64map_slot(&t->live, (uint64_t)t->pid[i], &found) = 1;
		if (sp_proc_info(t->pid[i], &pi) == 0)
			t->cpu0[i] = pi.cpu_ns;
	}
	t->nlive = t->n;
}

/* For "no samples": every target named ("processes 12, 34 and the 2
 * children of them found at the start"), into b; returns how many of
 * them still run, and their CPU time since the scan in *cpu_s. */
int pcollect_targets_who(struct coll *c, struct sp_buf *b, double *cpu_s)
{
	struct pc_targets *t = c->tg;
	int alive = 0;
	uint64_t ns = 0;
	sp_buf_adds(b, t->listed == 1 ? "process " : "processes ");
	for (size_t i = 0; i < t->n; i++) {
		struct sp_proc_info pi;
		if (i < t->listed) {
			char one[32];
			snprintf(one, sizeof one, "%s%d", !i ? "" : i + 1 < t->listed ? ", " : " and ", t->pid[i]);
			sp_buf_adds(b, one);
		}
		if (sp_proc_info(t->pid[i], &pi) == 0 && !(pi.state == 'Z' || pi.state == 'X')) {
			alive++;
			if (pi.cpu_ns > t->cpu0[i])
				ns += pi.cpu_ns - t->cpu0[i];
		}
	}
	if (t->n > t->listed) {
		char more[96];
		snprintf(more, sizeof more, " (and the %zu process%s below %s found at the start)", t->n - t->listed,
			 t->n - t->listed == 1 ? "" : "es", t->listed == 1 ? "it" : "them");
		sp_buf_adds(b, more);
	}
	*cpu_s = (double)ns / 1e9;
	return alive;
}

static void on_task(void *ctx, int pid, int tid) { sp_collect_add_task(ctx, pid, tid); }

/* After the first target was added: the others (a process gone meanwhile
 * is skipped, unless it is a listed one: then nothing has started yet). */
int pcollect_targets_attach(struct coll *c, struct sp_err *err)
{
	struct pc_targets *t = c->tg;
	for (size_t i = 1; i < t->n; i++) {
		int n = sp_perfev_add_process(c->s->ev, t->pid[i], on_task, c->s->eng, err);
		if (n < 0 && (i < t->listed || kill(t->pid[i], 0) == 0))
			return -1;
	}
	return 0;
}

/* After sampling is enabled: the mappings of the others (the first's are
 * loaded by cmd/pcollect.c). */
void pcollect_targets_load_maps(struct coll *c)
{
	struct pc_targets *t = c->tg;
	struct sp_err err;
	for (size_t i = 1; i < t->n; i++) {
		memset(&err, 0, sizeof err);
		sp_collect_load_maps(c->s->eng, t->pid[i], sp_snap_live_tid(t->pid[i]), &err); /* gone: no maps */
	}
}

static void set_live(struct pc_targets *t, int pid, int alive)
{
	int found;
	uint32_t *slot = sp_u64map_slot(&t->live, (uint64_t)pid, &found);
	if (!found)
		*slot = 0;
	if (*slot != (uint32_t)alive) {
		*slot = (uint32_t)alive;
		t->nlive += alive ? 1 : (size_t)-1;
	}
}

static void tg_fork(void *ctx, uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid, uint64_t time)
{
	struct pc_targets *t = the;
	int found;
	/* A new process of a followed one, alive or not by now: a FORK record
	 * may come after its parent's EXIT record (taken on another CPU, and
	 * written into its ring a moment later), as for sh -c 'prog &'. */
	sp_u64map_get(&t->live, ppid, &found);
	if (pid == tid && pid != ppid && found)
		set_live(t, (int)pid, 1);
	if (t->fork)
		t->fork(ctx, pid, ppid, tid, ptid, time);
}

static void tg_exit(void *ctx, uint32_t pid, uint32_t tid, uint64_t time)
{
	struct pc_targets *t = the;
	int found;
	sp_u64map_get(&t->live, pid, &found);
	if (pid == tid && found)
		set_live(t, (int)pid, 0);
	if (t->exit)
		t->exit(ctx, pid, tid, time);
}

/* With --children, each process the targets fork joins the set waited for. */
void pcollect_targets_handler(struct coll *c, struct sp_perf_handler *hd)
{
	struct pc_targets *t = c->tg;
	if (!t->children)
		return;
	t->fork = hd->fork;
	t->exit = hd->exit;
	hd->fork = tg_fork;
	hd->exit = tg_exit;
}

/* Every process waited for has exited (EXIT records say so as they come;
 * /proc is asked a few times a second for what they may miss: a process
 * whose main thread exited first, a record lost). */
int pcollect_targets_gone(struct coll *c, double now)
{
	struct pc_targets *t = c->tg;
	if (t->nlive) {
		if (now < t->next_check)
			return 0;
		t->next_check = now + 0.25;
		size_t alive = 0;
		for (size_t i = 0; t->live.tab && i <= t->live.mask; i++) {
			struct sp_u64slot *s = &t->live.tab[i];
			if (s->key == UINT64_MAX || !s->val)
				continue;
			int pid = (int)s->key;
			struct sp_proc_info pi;
			if (sp_proc_info(pid, &pi) < 0 || (dead(pi.state) && sp_snap_live_tid(pid) == pid))
				s->val = 0;
			else
				alive++;
		}
		t->nlive = alive;
		if (alive) {
			t->gone_at = 0;
			return 0;
		}
	}
	/* None left, as far as the records read so far tell: a process forked
	 * just before its parent ended (sh -c 'prog &') is known from its FORK
	 * record, which the rings may hand out a round or more later (more so on
	 * a slow or loaded machine, or sampling per CPU, where every process's
	 * records pass through them).  The end is when every record taken
	 * before now has been read and none named a new process (a quiet half
	 * second at least, 5 s at most). */
	if (!t->gone_at) {
		t->gone_at = now;
		t->gone_ns = sp_mono_ns();
	}
	return (now - t->gone_at >= 0.5 && sp_perfev_read_until(c->s->ev) > t->gone_ns) || now - t->gone_at >= 5;
}

/* The stream's metadata: the pids sampled from the start. */
void pcollect_targets_meta(struct coll *c)
{
	struct pc_targets *t = c->tg;
	if (t->n < 2 && !t->children)
		return;
	struct sp_buf b = SP_BUF_INIT;
	char num[16];
	for (size_t i = 0; i < t->n; i++) {
		snprintf(num, sizeof num, "%s%d", i ? "," : "", t->pid[i]);
		sp_buf_adds(&b, num);
	}
	sp_meta_add(c->s->p, "pids", sp_buf_cstr(&b));
	if (t->children)
		sp_meta_add(c->s->p, "children", "yes");
	sp_buf_release(&b);
}

void pcollect_targets_free(struct coll *c)
{
	free(pid_list);
	pid_list = c->o.pids = NULL;
	struct pc_targets *t = c->tg;
	if (!t)
		return;
	sp_u64map_release(&t->live);
	free(t->pid);
	free(t->cpu0);
	free(t);
	c->tg = the = NULL;
}
