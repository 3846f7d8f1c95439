/* perf_events.c — perf_event_open set-up, mmap rings, record parsing. */
#include "perf_events.h"
#include "bpfhit.h"
#include "keeper.h"
#include "procmaps.h"
#include "tracefs.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <sched.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* perf's user register numbers (asm/perf_regs.h, x86): AX BX CX DX SI DI
 * BP SP IP = 0..8, R8..R15 = 16..23.  A sample carries them in bit order. */
#define ENOTSUPP_ERRNO 524 /* the kernel's ENOTSUPP, not in userspace errno.h */
#define REGS_MASK (0x1ffULL | (0xffULL << 16))

struct ring {
	int fd;          /* the event that owns the ring; -1 before the first */
	struct perf_event_mmap_page *meta;
	uint8_t *data;
	size_t size;     /* data area, a power of two */
	int hup;         /* its event's thread exited: poll says so forever */
	int probe;       /* a ring of uprobe events (rings[ncpu..3*ncpu-1]); 2: compact (bpfhit.h) */
	uint64_t drawn_at; /* follow: when its CPU's next sample was drawn (redraw_period), 0: not this pass */
	uint64_t draw_t[2]; /* ... the times of its last two draws, newest first */
	int taken[2];       /* ... whether a sample after each was kept */
	/* The ring's records, copied out by the drainer thread; consumed by
	 * sp_perfev_read.  Chunks are never moved: the consumer reads them
	 * without the lock up to a length it took under the lock. */
	struct chunk *qhead, *qtail;
	size_t qpos;     /* consumer offset in qhead */
};

/* Records are copied whole into chunks; one never spans two. */
#define CHUNK_BYTES (4u << 20)
#define MAX_SPARE 1
struct chunk {
	struct chunk *next;
	size_t len; /* committed bytes (under the lock for the tail chunk) */
	uint8_t data[];
};

/* A uprobe to open on each followed thread (sp_perfev_add_uprobe). */
struct uprobe_def {
	char *path;
	uint64_t offset;
	int ret;
	uint32_t cookie;
	unsigned stack_bytes;
	uint32_t regs;      /* the registers its hits need (bpfhit.h's SP_BPFHIT_REG, TOP) */
	uint64_t delivered; /* its records read */
	int tp_id;          /* its tracefs event (tracefs.h), or -1: the uprobe PMU */
	char tp_name[64];
	int off;            /* closed by sp_perfev_close_probe: opened on no thread */
	uint64_t fired_closed; /* the hits its closed events had counted */
};

struct sp_perfev {
	struct sp_perfev_opts o;
	struct perf_event_attr attr;
	struct perf_event_attr cs_attr; /* opts.offcpu: the context-switch event */
	int ncpu;
	int nrings;      /* 3*ncpu: per CPU a ring of samples, one of uprobe hits,
			  * and one of the hits that copy less stack (bpfhit.h) */
	struct ring *rings;
	struct sp_u64map probe_ids; /* uprobe event id -> cookie + 1 (under idlock) */
	pthread_mutex_t idlock;
	int *pfds;                  /* the uprobe events (also in fds) */
	uint32_t *pfd_def;          /* each one's probe (index in udefs) */
	int *pfd_tid;               /* bpf: the thread an anchor is on, -1 once it exited; else 0 */
	size_t npfds;
	struct uprobe_def *udefs;   /* the probes, opened per followed thread */
	size_t nudefs;
	int uprobe_type, uprobe_retbit;
	int uprobes_on;             /* sp_perfev_enable_uprobes was called */
	/* Hits through bpfhit.h: 1 on (the probe events are anchors, one per
	 * probe and process; the probe rings are CPU-wide output events), -1
	 * refused (per-thread events, why in bpf_why), 0 not tried yet. */
	int bpf;
	int bpf_outmap[2], bpf_cntmap, bpf_ncpu; /* [1]: the largest stacks; [0]: the others, or -1 */
	int *bpf_progs;             /* per probe (udefs) */
	int *bpf_carrier;           /* per probe: the anchor its program is attached to, or -1 */
	unsigned char *bpf_kept;    /* per probe: its carrier is an event on the keeper (keeper.h) */
	int keeper;                 /* the keeper's socket, -1: none */
	pid_t keeper_pid;
	int adopt_fd;               /* sp_perfev_adopt_probe: -1 none */
	char adopt_tp[64];
	char bpf_why[256];
	struct sp_u64map probe_tids; /* threads whose probes are open; bpf: processes -> anchored threads */
	struct sp_u64map anchor_pid; /* bpf: anchored thread -> its process */
	/* Events are opened by the main thread and by a holder of new threads
	 * (sp_perfev_add_task_probes) at once: fds, rings and the maps above. */
	pthread_mutex_t openlock;
	int *fds;
	size_t nfds, capfds;
	struct pollfd *pfd;
	struct sp_u64map tids; /* threads already followed */
	struct sp_perfev_stats st;
	int enabled;
	/* The drainer: a thread that empties the rings into the chunk queues
	 * as fast as the kernel fills them, so that a slow moment of the
	 * consumer (loading a large library's DWARF) loses no samples. */
	pthread_t drainer;
	int started;
	int cpu_wide; /* sp_perfev_add_cpus: rings per CPU that never hang up */
	int follow;   /* sp_perfev_follow_cpus: per CPU, the followed processes' records only */
	struct sp_u64map fpids; /* follow: the processes followed (pid -> index in fsince + 1) */
	uint64_t *fsince;       /* ... each one's records from this time on (ns) */
	int follow_exec;        /* follow, launch mode: the first process is followed from its exec */
	uint64_t dither;        /* follow: the state of the sampling periods' random draws (xorshift) */
	double late_ns;         /* ... the mean delay from a sample to the next draw (ns) */
	int no_draw;            /* ... the kernel refused a drawn period: fixed periods */
	size_t nfsince, capfsince;
	int *cfds;              /* the task-clock counters of the followed threads */
	size_t ncfds, capcfds;
	int count_failed;       /* a counter could not be opened: no count */
	int stop;               /* atomic: the drainer should end */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	uint64_t drained_until; /* every record older than this is queued */
	uint64_t read_until;    /* every record older than this was handed out */
	uint64_t appended;      /* bumped by each drain pass that queued data */
	uint64_t seen;          /* appended, as of the last sp_perfev_wait */
	size_t queued;          /* bytes in the queues */
	/* A consumed chunk kept for the drainer's next one (MAX_SPARE): a new
	 * 4 MiB chunk is a fresh mapping, each of its pages faulted in as
	 * records fill it (2-4 faults per DWARF sample's stack copy). */
	struct chunk *spare;
	int nspare;
	size_t max_queued;
	uint64_t dropped;       /* samples the drainer dropped: queues full */
	uint64_t probe_dropped; /* uprobe hits the drainer dropped */
	int all_hup;
	struct sp_perf_handler early; /* its early callback: each sample as it is drained */
};

static long perf_event_open(struct perf_event_attr *a, int pid, int cpu)
{
	return syscall(SYS_perf_event_open, a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static int read_int_file(const char *path, int def)
{
	FILE *f = fopen(path, "re");
	int v = def;
	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = def;
		fclose(f);
	}
	return v;
}

struct sp_perfev *sp_perfev_new(const struct sp_perfev_opts *o, struct sp_err *err)
{
	(void)0; /* freq 0: uprobes only, no sampling */
	/* Above the kernel's limit perf_event_open fails: ask for the limit
	 * instead, and say so in the stats. */
	int maxrate = read_int_file("/proc/sys/kernel/perf_event_max_sample_rate", 0);
	unsigned freq = maxrate > 0 && o->freq > (unsigned)maxrate ? (unsigned)maxrate : o->freq;
	if (o->callgraph == SP_CG_DWARF && (o->stack_bytes < 8 || o->stack_bytes > 65528)) {
		sp_err_set(err, "the stack copy must be between 8 and 65528 bytes, not %u", o->stack_bytes);
		return NULL;
	}
	struct sp_perfev *ev = sp_xcalloc(1, sizeof *ev);
	ev->o = *o;
	ev->o.freq = freq;
	ev->st.freq = freq;
	long n = sysconf(_SC_NPROCESSORS_CONF);
	ev->ncpu = n > 0 ? (int)n : 1;
	ev->nrings = 3 * ev->ncpu;
	ev->rings = sp_xcalloc((size_t)ev->nrings, sizeof *ev->rings);
	for (int i = 0; i < ev->nrings; i++) {
		ev->rings[i].fd = -1;
		ev->rings[i].probe = i >= ev->ncpu;
	}
	sp_u64map_init(&ev->tids);
	sp_u64map_init(&ev->fpids);
	sp_u64map_init(&ev->probe_ids);
	sp_u64map_init(&ev->probe_tids);
	sp_u64map_init(&ev->anchor_pid);
	ev->keeper = -1;
	ev->adopt_fd = -1;
	pthread_mutex_init(&ev->lock, NULL);
	pthread_mutex_init(&ev->idlock, NULL);
	pthread_mutex_init(&ev->openlock, NULL);
	pthread_cond_init(&ev->cond, NULL);
	ev->max_queued = (size_t)1 << 30;

	struct perf_event_attr *a = &ev->attr;
	a->size = sizeof *a;
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_CPU_CLOCK;
	a->freq = 1;
	a->sample_freq = freq;
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD;
	if (o->callgraph == SP_CG_FP) {
		a->sample_type |= PERF_SAMPLE_CALLCHAIN;
	} else if (o->callgraph == SP_CG_DWARF) {
		a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		a->sample_regs_user = REGS_MASK;
		a->sample_stack_user = o->stack_bytes & ~7u;
		/* The user frame-pointer chain too: a Go stack on the system
		 * stack goes on in the goroutine's frames, which the stack copy
		 * does not hold (lib/engine/collect.c, go_stack). */
		a->sample_type |= PERF_SAMPLE_CALLCHAIN;
	}
	if (!o->kernel) {
		a->exclude_kernel = 1;
		a->exclude_callchain_kernel = 1;
	}
	a->exclude_hv = 1;
	if (!freq) {
		/* -F 0: no samples, but the records of the target's mappings,
		 * names and threads (a dummy event), which unwind the probes'
		 * stack copies and say which threads exist. */
		a->config = PERF_COUNT_SW_DUMMY;
		a->freq = 0;
		a->sample_period = 0;
		a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD;
		a->sample_regs_user = 0;
		a->sample_stack_user = 0;
		a->exclude_callchain_user = 0;
	}
	a->mmap = a->mmap2 = a->comm = a->task = 1;
	a->sample_id_all = 1;
	a->inherit = 1;
	a->disabled = 1;
	a->enable_on_exec = o->enable_on_exec ? 1 : 0;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	/* Wake up when a quarter of the ring (at most 512 KiB: 32 DWARF samples)
	 * is full, so the ring has room while we catch up; the caller polls with a
	 * timeout as well, so a quiet target is still read regularly. */
	a->watermark = 1;
	a->wakeup_watermark = (uint32_t)(o->ring_bytes / 4 > (512u << 10) ? (512u << 10) : o->ring_bytes / 4);
	if (o->wakeup_each) {
		/* At every sample, not at every record: a watermark of one
		 * byte woke the reader at each mmap, comm, fork and exit
		 * record too (many of them system-wide, where every process
		 * started makes dozens; they are read with the next sample). */
		a->watermark = 0;
		a->wakeup_watermark = 0;
		a->wakeup_events = 1;
	}
	if (o->offcpu) {
		/* Every switch out is a sample (period 1; cpu-clock turns its
		 * frequency into a period of 1e9/freq ns, never 1, which is how
		 * the two events' samples are told apart in one ring).  Its
		 * regs/stack are the user context the thread slept in. */
		struct perf_event_attr *c = &ev->cs_attr;
		*c = *a;
		c->config = PERF_COUNT_SW_CONTEXT_SWITCHES;
		c->freq = 0;
		c->sample_period = 1;
		c->context_switch = 1;
		c->exclude_kernel = 0; /* a switch is a kernel-mode event */
		if (o->offcpu == 2)
			c->mmap = c->mmap2 = c->comm = c->task = 0; /* cpu-clock's records say it */
	}
	return ev;
}

static void stop_drainer(struct sp_perfev *ev);
static void adopted_close(struct sp_perfev *ev);

/* The BPF programs of the first nprogs probes, the output and count maps
 * closed; the per-probe arrays freed. */
static void bpf_release(struct sp_perfev *ev, size_t nprogs)
{
	for (size_t i = 0; i < nprogs; i++) {
		close(ev->bpf_progs[i]);
		if (ev->bpf_kept[i] && ev->bpf_carrier[i] >= 0)
			close(ev->bpf_carrier[i]);
	}
	for (int i = 0; i < 2; i++)
		if (ev->bpf_outmap[i] >= 0)
			close(ev->bpf_outmap[i]);
	close(ev->bpf_cntmap);
	free(ev->bpf_progs);
	free(ev->bpf_carrier);
	free(ev->bpf_kept);
	ev->bpf_progs = ev->bpf_carrier = NULL;
	ev->bpf_kept = NULL;
}

/* The carriers and the tracefs definitions handed to the keeper, which
 * closes and deletes them once its socket is closed, at the end of
 * sp_perfev_free (keeper.h): the anchors closed here before that are not
 * the last events of their uprobes, and their close does not wait.  What
 * it did not take stays here. */
static void keeper_handoff(struct sp_perfev *ev)
{
	if (ev->keeper < 0)
		return;
	char file[96], line[128];
	file[0] = line[0] = 0;
	if (ev->adopt_fd >= 0 && (!ev->adopt_tp[0] || sp_tracefs_uprobe_handoff(ev->adopt_tp, file, sizeof file, line,
										  sizeof line) == 0) &&
	    sp_keeper_give(ev->keeper, ev->adopt_fd, file, line) == 0) {
		close(ev->adopt_fd);
		ev->adopt_fd = -1;
		ev->adopt_tp[0] = 0; /* the keeper deletes it */
	}
	for (size_t d = 0; d < ev->nudefs; d++) {
		struct uprobe_def *u = &ev->udefs[d];
		int fd = ev->bpf_kept && ev->bpf_kept[d] ? ev->bpf_carrier[d] : -1;
		/* (a tracefs this process mounted: closed and deleted here) */
		if (fd < 0 || u->tp_id < 0 || sp_tracefs_uprobe_handoff(u->tp_name, file, sizeof file, line, sizeof line) < 0 ||
		    sp_keeper_give(ev->keeper, fd, file, line) < 0)
			continue;
		close(fd); /* the keeper's copy is the last */
		ev->bpf_carrier[d] = -1;
		u->tp_id = -1; /* the keeper deletes it */
	}
}

static void *close_main(void *arg)
{
	close((int)(intptr_t)arg);
	return NULL;
}

/* The probe events closed at once, each from a thread of its own: closing
 * the last event of a tracefs uprobe waits for the kernel's grace periods
 * (its unregistering, and the BPF program's detach), outside any lock for
 * the BPF program: waited one after the other they made most of a stop
 * (0.02-0.12 s each).  Their fds in fds become -1.  Up to 64 threads; the
 * rest, and any a thread could not be made for, are closed here. */
static void close_probes(struct sp_perfev *ev)
{
	pthread_t th[64];
	int nth = 0;
	for (size_t i = 0; i < ev->npfds; i++) {
		int fd = ev->pfds[i];
		for (size_t k = 0; k < ev->nfds; k++)
			if (ev->fds[k] == fd) {
				ev->fds[k] = -1;
				break;
			}
		if (nth < 64 && pthread_create(&th[nth], NULL, close_main, (void *)(intptr_t)fd) == 0)
			nth++;
		else
			close(fd);
	}
	for (int i = 0; i < nth; i++)
		pthread_join(th[i], NULL);
	ev->npfds = 0;
}

void sp_perfev_free(struct sp_perfev *ev)
{
	if (!ev)
		return;
	stop_drainer(ev);
	keeper_handoff(ev);
	close_probes(ev);
	for (size_t i = 0; i < ev->nfds; i++)
		if (ev->fds[i] >= 0)
			close(ev->fds[i]);
	for (size_t i = 0; i < ev->ncfds; i++)
		close(ev->cfds[i]);
	free(ev->cfds);
	if (ev->bpf > 0)
		bpf_release(ev, ev->nudefs);
	else {
		free(ev->bpf_progs);
		free(ev->bpf_carrier);
		free(ev->bpf_kept);
	}
	free(ev->fsince);
	sp_u64map_release(&ev->fpids);
	for (int i = 0; i < ev->nrings; i++) {
		if (ev->rings[i].meta)
			munmap(ev->rings[i].meta, ev->rings[i].size + (size_t)sysconf(_SC_PAGESIZE));
		for (struct chunk *c = ev->rings[i].qhead, *nx; c; c = nx) {
			nx = c->next;
			free(c);
		}
	}
	for (struct chunk *c = ev->spare, *nx; c; c = nx) {
		nx = c->next;
		free(c);
	}
	adopted_close(ev);
	/* After the munmaps: a ring's mapping holds its event open. */
	for (size_t i = 0; i < ev->nudefs; i++)
		if (ev->udefs[i].tp_id >= 0)
			sp_tracefs_uprobe_del(ev->udefs[i].tp_name);
	if (ev->keeper >= 0)
		close(ev->keeper); /* the keeper takes it from here */
	pthread_mutex_destroy(&ev->lock);
	pthread_mutex_destroy(&ev->idlock);
	pthread_mutex_destroy(&ev->openlock);
	pthread_cond_destroy(&ev->cond);
	for (size_t i = 0; i < ev->nudefs; i++)
		free(ev->udefs[i].path);
	free(ev->udefs);
	sp_u64map_release(&ev->probe_tids);
	sp_u64map_release(&ev->anchor_pid);
	free(ev->rings);
	free(ev->fds);
	free(ev->pfd);
	sp_u64map_release(&ev->tids);
	sp_u64map_release(&ev->probe_ids);
	free(ev->pfds);
	free(ev->pfd_def);
	free(ev->pfd_tid);
	free(ev);
}

/* What the user sees when perf_event_open says no: a sentence with the fix. */
static int open_error(struct sp_perfev *ev, int e, int tid, struct sp_err *err)
{
	int paranoid = read_int_file("/proc/sys/kernel/perf_event_paranoid", 2);
	switch (e) {
	case EACCES:
	case EPERM:
		if (geteuid() == 0)
			return sp_err_set(err, "the kernel refused to sample thread %d even for root "
					  "(a security module or a container's seccomp policy forbids "
					  "perf_event_open)", tid);
		if (paranoid > 2)
			return sp_err_set(err, "sampling is not permitted: kernel.perf_event_paranoid is %d; "
					  "run as root, or allow it with: sudo sysctl kernel.perf_event_paranoid=2",
					  paranoid);
		return sp_err_set(err, "not permitted to sample thread %d: it must belong to you and be "
				  "traceable by you (ptrace; see kernel.yama.ptrace_scope), or run as root "
				  "(kernel.perf_event_paranoid is %d)", tid, paranoid);
	case ENOENT:
	case ENODEV:
	case EOPNOTSUPP:
		return sp_err_set(err, "this kernel has no cpu-clock sampling event (perf_event_open: %s)",
				  strerror(e));
	case ENOSYS:
		return sp_err_set(err, "this kernel was built without perf events (CONFIG_PERF_EVENTS)");
	case EMFILE:
	case ENFILE:
		return sp_err_set(err, "too many open files: each thread needs one file per CPU "
				  "(raise the limit with ulimit -n)");
	case EINVAL:
		return sp_err_set(err, "the kernel rejected the sampling settings for thread %d (-F %u%s): %s",
				  tid, ev->o.freq, ev->o.callgraph == SP_CG_DWARF ? ", dwarf stack copy" : "",
				  strerror(e));
	default:
		return sp_err_set(err, "cannot sample thread %d: perf_event_open: %s", tid, strerror(e));
	}
}

static int map_ring(struct sp_perfev *ev, struct ring *r, int fd, struct sp_err *err)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t pages = 1;
	/* A uprobe hit is ~200 bytes: 2 MiB hold 10,000, drained every 10 ms. */
	size_t want = r->probe ? (ev->o.probe_ring_bytes ? ev->o.probe_ring_bytes : 2u << 20) : ev->o.ring_bytes;
	while (pages * 2 * page <= want)
		pages *= 2;
	/* Users other than root are limited by kernel.perf_event_mlock_kb:
	 * halve the ring until it fits. */
	for (;;) {
		void *m = mmap(NULL, (pages + 1) * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (m != MAP_FAILED) {
			r->fd = fd;
			r->meta = m;
			r->data = (uint8_t *)m + page;
			r->size = pages * page;
			return 0;
		}
		if ((errno != EPERM && errno != ENOMEM) || pages <= 4)
			return sp_err_set(err, "cannot map the sample buffer (%zu KiB): %s; "
					  "see kernel.perf_event_mlock_kb", pages * page / 1024, strerror(errno));
		pages /= 2;
	}
}

static void add_fd(struct sp_perfev *ev, int fd)
{
	if (ev->nfds == ev->capfds) {
		ev->capfds = ev->capfds ? 2 * ev->capfds : 64;
		ev->fds = sp_xrealloc(ev->fds, ev->capfds * sizeof *ev->fds);
	}
	ev->fds[ev->nfds++] = fd;
}

/* Event fd (opened on one CPU) is ours to close, and writes into ring r:
 * the ring's first event maps it, the others redirect into it. */
static int attach_ring(struct sp_perfev *ev, struct ring *r, int fd, int cpu, struct sp_err *err)
{
	add_fd(ev, fd);
	if (r->fd < 0 && r->probe) {
		/* A probe ring belongs to an event of pcollect's own that records
		 * nothing, so that every probe event can be closed (a probe
		 * stopped over its budget) while the ring lives on. */
		struct perf_event_attr a;
		memset(&a, 0, sizeof a);
		a.size = sizeof a;
		a.type = PERF_TYPE_SOFTWARE;
		a.config = PERF_COUNT_SW_DUMMY;
		a.exclude_kernel = 1;
		a.watermark = 1;
		a.wakeup_watermark = 256u << 10;
		a.use_clockid = 1; /* a ring has one clock */
		a.clockid = CLOCK_MONOTONIC;
		long own = perf_event_open(&a, getpid(), cpu);
		if (own >= 0) {
			add_fd(ev, (int)own);
			if (map_ring(ev, r, (int)own, err) < 0)
				return -1;
		}
	}
	if (r->fd < 0)
		return map_ring(ev, r, fd, err);
	if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, r->fd) < 0)
		return sp_err_set(err, "cannot share the %s buffer of CPU %d: %s", r->probe ? "uprobe" : "sample", cpu,
				  strerror(errno));
	return 0;
}

/* A sampling (or context-switch) event opened on cpu into that CPU's ring,
 * counting at once when sampling is already on. */
static int add_event(struct sp_perfev *ev, int fd, int cpu, struct sp_err *err)
{
	if (attach_ring(ev, &ev->rings[cpu], fd, cpu, err) < 0)
		return -1;
	if (ev->enabled)
		ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	return 0;
}

/* Close the fds opened since first, for a thread that could not be
 * followed on every CPU (it exited meanwhile), except those that became a
 * ring's own (the first event opened on a CPU maps its ring, and every later
 * event is redirected into that fd): closed, its number could be reused by
 * the next open and the redirects would go to another file.  Kept, such an
 * event of an exited thread records nothing and holds the ring. */
static void unwind_fds(struct sp_perfev *ev, size_t first)
{
	size_t keep = first;
	for (size_t i = first; i < ev->nfds; i++) {
		int owner = 0;
		for (int c = 0; c < ev->nrings && !owner; c++)
			owner = ev->rings[c].fd == ev->fds[i];
		if (owner)
			ev->fds[keep++] = ev->fds[i];
		else
			close(ev->fds[i]);
	}
	ev->nfds = keep;
}

static int add_task_locked(struct sp_perfev *ev, int tid, uint32_t *slot, struct sp_err *err);

/* follow: process pid is followed from time since on (once followed,
 * the earliest since stays). */
static void follow_pid(struct sp_perfev *ev, uint32_t pid, uint64_t since)
{
	int found;
	uint32_t *slot = sp_u64map_slot(&ev->fpids, pid, &found);
	if (found)
		return;
	if (ev->nfsince == ev->capfsince) {
		ev->capfsince = ev->capfsince ? 2 * ev->capfsince : 16;
		ev->fsince = sp_xrealloc(ev->fsince, ev->capfsince * sizeof *ev->fsince);
	}
	ev->fsince[ev->nfsince++] = since;
	*slot = (uint32_t)ev->nfsince;
}

/* The process of thread tid (/proc/TID/status), 0 when it is gone. */
static int tgid_of(int tid)
{
	char path[64], line[128];
	snprintf(path, sizeof path, "/proc/%d/status", tid);
	FILE *f = fopen(path, "re");
	int tgid = 0;
	if (!f)
		return 0;
	while (fgets(line, sizeof line, f))
		if (!strncmp(line, "Tgid:", 5)) {
			tgid = atoi(line + 5);
			break;
		}
	fclose(f);
	return tgid;
}

/* A task-clock counter on thread tid, inherited by the threads and
 * processes it creates (a counting event with inherit and cpu -1 needs no
 * ring): the CPU time the kernel gives the followed threads, sampled or
 * not.  It counts what the sampling events count: from the exec in launch
 * mode, else from now (or sp_perfev_enable). */
static void add_counter(struct sp_perfev *ev, int tid)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.inherit = 1;
	a.disabled = !ev->enabled;
	a.enable_on_exec = ev->attr.enable_on_exec;
	a.exclude_hv = 1;
	long fd = perf_event_open(&a, tid, -1);
	if (fd < 0 && (errno == EACCES || errno == EPERM)) {
		a.exclude_kernel = 1; /* task-clock counts kernel time all the same */
		fd = perf_event_open(&a, tid, -1);
	}
	if (fd < 0) {
		ev->count_failed += errno != ESRCH;
		return;
	}
	if (ev->ncfds == ev->capcfds) {
		ev->capcfds = ev->capcfds ? 2 * ev->capcfds : 16;
		ev->cfds = sp_xrealloc(ev->cfds, ev->capcfds * sizeof *ev->cfds);
	}
	ev->cfds[ev->ncfds++] = (int)fd;
}

int sp_perfev_add_task(struct sp_perfev *ev, int tid, struct sp_err *err)
{
	int found;
	uint32_t *slot = sp_u64map_slot(&ev->tids, (uint64_t)tid, &found);
	if (found)
		return 0;
	*slot = 1;
	pthread_mutex_lock(&ev->openlock);
	int rc;
	if (ev->follow) {
		/* The events of every CPU see it already: follow its process. */
		int pid = tgid_of(tid);
		if (pid > 0) {
			/* The rings hold samples of it taken before now (the
			 * events run from sp_perfev_follow_cpus on): not ours.
			 * A launched command is held before its exec: until its
			 * exec's COMM record it runs pcollect's code (per thread,
			 * enable_on_exec starts there). */
			int at_exec = ev->follow_exec && !ev->nfsince;
			follow_pid(ev, (uint32_t)pid, at_exec ? UINT64_MAX : sp_mono_ns());
			ev->st.tasks++;
		}
		rc = pid > 0 ? 0 : 1;
	} else {
		rc = add_task_locked(ev, tid, slot, err);
	}
	if (rc == 0 && ev->o.freq)
		add_counter(ev, tid);
	pthread_mutex_unlock(&ev->openlock);
	if (rc == 0 && ev->nudefs)
		rc = sp_perfev_add_task_probes(ev, tid, err);
	return rc;
}

static int add_task_locked(struct sp_perfev *ev, int tid, uint32_t *slot, struct sp_err *err)
{
	size_t first = ev->nfds;
	/* Per CPU: the sampling event (cpu-clock, or the context-switch event
	 * for --off-cpu), then with --wall the context-switch event too. */
	for (int cpu = 0; cpu < ev->ncpu; cpu++) {
		for (int k = 0; k < (ev->o.offcpu == 2 ? 2 : 1); k++) {
			struct perf_event_attr *a = k || ev->o.offcpu == 1 ? &ev->cs_attr : &ev->attr;
			long fd = perf_event_open(a, tid, cpu);
			if (fd < 0 && (errno == EACCES || errno == EPERM) && a == &ev->attr && !a->exclude_kernel) {
				/* Kernel sampling is not allowed: go on in user mode. */
				a->exclude_kernel = 1;
				a->exclude_callchain_kernel = 1;
				if (a->exclude_callchain_user)
					a->sample_type &= ~(uint64_t)PERF_SAMPLE_CALLCHAIN;
				a->exclude_callchain_user = 0;
				ev->st.kernel_denied = 1;
				fd = perf_event_open(a, tid, cpu);
			}
			if (fd < 0 && errno == ENODEV && !k)
				break; /* an offline CPU */
			if (fd < 0 && !ev->o.freq && (errno == EACCES || errno == EPERM) && !a->exclude_kernel) {
				a->exclude_kernel = 1; /* -F 0: the dummy event samples nothing anyway */
				fd = perf_event_open(a, tid, cpu);
			}
			if (fd < 0) {
				int e = errno;
				unwind_fds(ev, first);
				if (e == ESRCH) {
					*slot = 0; /* not followed; keep the key, it is harmless */
					return 1;
				}
				if (a == &ev->attr)
					return open_error(ev, e, tid, err);
				return sp_err_set(err, "cannot follow the context switches of thread %d: "
						  "perf_event_open: %s%s", tid, strerror(e),
						  e == EACCES || e == EPERM ? " (off-CPU profiling needs kernel "
						  "sampling: root, or kernel.perf_event_paranoid <= 1)" : "");
			}
			if (add_event(ev, (int)fd, cpu, err) < 0)
				return -1;
		}
	}
	if (ev->nfds == first)
		return sp_err_set(err, "no CPU could sample thread %d", tid);
	ev->st.tasks++;
	return 0;
}

/* More threads mean more files: one per thread and CPU. */
static void raise_nofile(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int sp_perfev_add_process(struct sp_perfev *ev, int pid, void (*on_task)(void *ctx, int pid, int tid), void *ctx,
			  struct sp_err *err)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", pid);
	raise_nofile();
	int total = 0;
	/* A thread created while we were opening events for the others is not
	 * inherited by anyone yet: list again until nothing is new. */
	for (int round = 0; round < 20; round++) {
		DIR *d = opendir(path);
		if (!d) {
			if (errno == ENOENT)
				return sp_err_set(err, "no process %d", pid);
			return sp_err_set(err, "%s: %s", path, strerror(errno));
		}
		int added = 0;
		struct dirent *de;
		while ((de = readdir(d))) {
			if (de->d_name[0] < '0' || de->d_name[0] > '9')
				continue;
			int tid = atoi(de->d_name);
			int found;
			sp_u64map_get(&ev->tids, (uint64_t)tid, &found);
			if (found)
				continue;
			int rc = sp_perfev_add_task(ev, tid, err);
			if (rc < 0) {
				closedir(d);
				return -1;
			}
			if (rc == 0) {
				added++;
				if (on_task)
					on_task(ctx, pid, tid);
			}
		}
		closedir(d);
		total += added;
		if (!added)
			break;
	}
	if (!total)
		return sp_err_set(err, "no process %d", pid);
	return total;
}

int sp_perfev_follow_cpus(struct sp_perfev *ev, struct sp_err *err)
{
	if (ev->o.offcpu || ev->nudefs || !ev->o.freq || ev->nfds)
		return sp_err_set(err, "per-CPU sampling takes CPU samples only, before any thread is added");
	struct perf_event_attr keep = ev->attr;
	/* The idle task is not a target: no sample, no wake-up for it; but
	 * where each sample draws the time of the next (redraw_period), an
	 * idle CPU's samples are drawn too: left at one draw, an idle CPU's
	 * timer would tick at that period, and a thread woken there would
	 * wait half of it for its first sample, not a whole mean period
	 * (short wakeups on idle CPUs oversampled). */
	ev->attr.exclude_idle = !ev->o.wakeup_each;
	if (sp_perfev_add_cpus(ev, err) < 0) {
		for (size_t i = 0; i < ev->nfds; i++)
			close(ev->fds[i]);
		ev->nfds = 0;
		for (int i = 0; i < ev->nrings; i++)
			if (ev->rings[i].meta) {
				munmap(ev->rings[i].meta, ev->rings[i].size + (size_t)sysconf(_SC_PAGESIZE));
				ev->rings[i].meta = NULL;
				ev->rings[i].fd = -1;
			}
		ev->attr = keep;
		ev->cpu_wide = 0;
		ev->st.tasks = 0;
		return 1;
	}
	ev->follow = 1;
	ev->follow_exec = keep.enable_on_exec;
	ev->st.tasks = 0;
	ev->st.per_cpu = 1;
	sp_perfev_enable(ev);
	return 0;
}

int sp_perfev_add_cpus(struct sp_perfev *ev, struct sp_err *err)
{
	/* A CPU-wide event sees every task: inheritance means nothing there,
	 * and the events count from sp_perfev_enable, not from an exec. */
	ev->attr.inherit = 0;
	ev->attr.enable_on_exec = 0;
	if (ev->o.offcpu || ev->nudefs)
		return sp_err_set(err, "system-wide sampling takes CPU samples only");
	ev->cpu_wide = 1;
	raise_nofile();
	pthread_mutex_lock(&ev->openlock);
	int rc = 0;
	for (int cpu = 0; cpu < ev->ncpu && !rc; cpu++) {
		long fd = perf_event_open(&ev->attr, -1, cpu);
		if (fd < 0 && errno == ENODEV)
			continue; /* an offline CPU */
		if (fd < 0) {
			int e = errno;
			int paranoid = read_int_file("/proc/sys/kernel/perf_event_paranoid", 2);
			if ((e == EACCES || e == EPERM) && geteuid() != 0)
				rc = sp_err_set(err, "sampling every process needs root, CAP_PERFMON or "
						"kernel.perf_event_paranoid <= 0 (it is %d): run as root, or allow it "
						"with: sudo sysctl kernel.perf_event_paranoid=0", paranoid);
			else if (e == EACCES || e == EPERM)
				rc = sp_err_set(err, "the kernel refused system-wide sampling even for root (a "
						"security module or a container's seccomp policy forbids "
						"perf_event_open)");
			else
				rc = open_error(ev, e, -1, err);
			break;
		}
		rc = add_event(ev, (int)fd, cpu, err);
	}
	if (!rc && !ev->nfds)
		rc = sp_err_set(err, "no CPU could be sampled");
	if (!rc)
		ev->st.tasks = (unsigned)ev->nfds;
	pthread_mutex_unlock(&ev->openlock);
	return rc;
}

static int uprobe_pmu(int *type, int *retbit)
{
	*type = read_int_file("/sys/bus/event_source/devices/uprobe/type", -1);
	*retbit = 0;
	FILE *f = fopen("/sys/bus/event_source/devices/uprobe/format/retprobe", "re");
	if (f) {
		if (fscanf(f, "config:%d", retbit) != 1)
			*retbit = 0;
		fclose(f);
	}
	return *type >= 0 ? 0 : -1;
}

int sp_perfev_add_uprobe(struct sp_perfev *ev, const char *path, uint64_t offset, int ret, uint32_t cookie,
			 unsigned stack_bytes, uint32_t regs, struct sp_err *err)
{
	if (!ev->nudefs && uprobe_pmu(&ev->uprobe_type, &ev->uprobe_retbit) < 0)
		return sp_err_set(err, "this kernel has no uprobe PMU (/sys/bus/event_source/devices/uprobe: "
				  "CONFIG_UPROBE_EVENTS): cannot trace");
	raise_nofile();
	ev->udefs = sp_xrealloc(ev->udefs, (ev->nudefs + 1) * sizeof *ev->udefs);
	struct uprobe_def *d = &ev->udefs[ev->nudefs++];
	*d = (struct uprobe_def){ sp_xstrndup(path, strlen(path)), offset, ret, cookie, stack_bytes, regs, 0, -1, "", 0, 0 };
	/* One tracefs uprobe shared by the events of every thread and CPU:
	 * closing them then waits for one grace period, not one each. */
	if (!getenv("SP_UPROBE_PMU"))
		d->tp_id = sp_tracefs_uprobe_new(path, offset, ret, d->tp_name, sizeof d->tp_name);
	if (d->tp_id >= 0)
		ev->st.probe_shared++;
	return 0;
}

static void push_pfd(struct sp_perfev *ev, int fd, size_t d, int tid)
{
	ev->pfds = sp_xrealloc(ev->pfds, (ev->npfds + 1) * sizeof *ev->pfds);
	ev->pfd_def = sp_xrealloc(ev->pfd_def, (ev->npfds + 1) * sizeof *ev->pfd_def);
	ev->pfd_tid = sp_xrealloc(ev->pfd_tid, (ev->npfds + 1) * sizeof *ev->pfd_tid);
	ev->pfd_def[ev->npfds] = (uint32_t)d;
	ev->pfd_tid[ev->npfds] = tid;
	ev->pfds[ev->npfds++] = fd;
}

/* Open probe d on thread tid and CPU cpu, writing into that CPU's probe
 * ring.  Returns the fd, or -1 with errno set. */
static int open_uprobe(struct sp_perfev *ev, const struct uprobe_def *d, int tid, int cpu, struct sp_err *err)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	if (d->tp_id >= 0) {
		a.type = PERF_TYPE_TRACEPOINT;
		a.config = (uint64_t)d->tp_id;
	} else {
		a.type = (uint32_t)ev->uprobe_type;
		a.config = d->ret ? 1ULL << ev->uprobe_retbit : 0;
		a.config1 = (uint64_t)(uintptr_t)d->path;
		a.config2 = d->offset;
	}
	a.sample_period = 1;
	a.disabled = !ev->uprobes_on; /* all probes start together: sp_perfev_enable_uprobes */
	/* 8 bytes of stack: at an entry, the return address, which a return
	 * probe replaces with the kernel's trampoline while the call runs; the
	 * samples' stacks get it back (sp_tracer_fix_stack). */
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_REGS_USER |
			PERF_SAMPLE_STACK_USER;
	a.sample_regs_user = REGS_MASK;
	a.sample_stack_user = d->stack_bytes > 8 ? (d->stack_bytes + 7) & ~7u : 8; /* more for variables in memory */
	a.use_clockid = 1;
	a.clockid = CLOCK_MONOTONIC;
	a.watermark = 1;
	a.wakeup_watermark = 256u << 10;
	long fd = perf_event_open(&a, tid, cpu);
	if (fd < 0)
		return -1;
	if (attach_ring(ev, &ev->rings[ev->ncpu + cpu], (int)fd, cpu, err) < 0) {
		errno = 0;
		return -1;
	}
	push_pfd(ev, (int)fd, (size_t)(d - ev->udefs), 0);
	ev->st.probe_events = (unsigned)ev->npfds;
	if (ev->st.probe_events > ev->st.probe_events_max)
		ev->st.probe_events_max = ev->st.probe_events;
	uint64_t id;
	if (ioctl((int)fd, PERF_EVENT_IOC_ID, &id) < 0) {
		sp_err_set(err, "uprobe event id: %s", strerror(errno));
		errno = 0;
		return -1;
	}
	int found;
	pthread_mutex_lock(&ev->idlock);
	*sp_u64map_slot(&ev->probe_ids, id, &found) = (uint32_t)(d - ev->udefs) + 1;
	pthread_mutex_unlock(&ev->idlock);
	return (int)fd;
}

/* Why probe d could not be opened on thread tid (errno e): 1 when the
 * thread is gone, else -1 with err set. */
static int probe_err(const struct uprobe_def *d, int tid, int e, struct sp_err *err)
{
	if (e == 0)
		return -1; /* err set */
	if (e == ESRCH)
		return 1;
	if (e == EACCES || e == EPERM)
		return sp_err_set(err, "tracing needs uprobe events: run as root or with CAP_PERFMON "
				  "(or sudo sysctl kernel.perf_event_paranoid=-1)");
	if (e == ENOTSUPP_ERRNO)
		return sp_err_set(err, "the kernel cannot probe the instruction at offset 0x%llx of %s "
				  "(ENOTSUPP: an instruction it refuses to single-step)",
				  (unsigned long long)d->offset, d->path);
	if (e == ENOENT || e == EINVAL)
		return sp_err_set(err, "the kernel refused a %sprobe at offset 0x%llx of %s: %s", d->ret ? "return " : "",
				  (unsigned long long)d->offset, d->path, strerror(e));
	return sp_err_set(err, "cannot trace thread %d: perf_event_open: %s", tid, strerror(e));
}

/* Hits through bpfhit.h when every probe is a tracefs uprobe and the
 * kernel takes the programs: 0, or -1 (bpf_why says why: per-thread
 * events then).  Under openlock, before the first probe event. */
static int bpf_setup(struct sp_perfev *ev)
{
	if (ev->bpf)
		return ev->bpf > 0 ? 0 : -1;
	ev->bpf = -1;
	if (getenv("SP_UPROBE_PERTHREAD")) {
		snprintf(ev->bpf_why, sizeof ev->bpf_why, "SP_UPROBE_PERTHREAD is set");
		return -1;
	}
	/* Two sets of output events when some probes need a stack copy
	 * (an entry with --stacks: 4 KiB, a variable in memory) and others
	 * do not: an output event's samples are all of one kind.  A probe
	 * that needs no copy writes a compact record (bpfhit.h: the
	 * registers it needs, 48-64 bytes for an entry or a return, against
	 * ~210 with all of them and 8 bytes of stack); the others get every
	 * register and the largest copy.  SP_BPFHIT_FULL=1: no compact
	 * records (to compare). */
	int full = getenv("SP_BPFHIT_FULL") != NULL, ncompact = 0;
	unsigned stack = 8;
	for (size_t i = 0; i < ev->nudefs; i++) {
		if (ev->udefs[i].tp_id < 0) {
			snprintf(ev->bpf_why, sizeof ev->bpf_why, "a probe is not a tracefs uprobe");
			return -1;
		}
		if (!full && ev->udefs[i].regs && ev->udefs[i].stack_bytes <= 8)
			ncompact++;
		else if (ev->udefs[i].stack_bytes > stack)
			stack = ev->udefs[i].stack_bytes;
	}
	/* set 1, and set 0 when there are two (the compact one) */
	int nsets = ncompact && (size_t)ncompact < ev->nudefs ? 2 : 1;
	int compact[2] = { 1, (size_t)ncompact == ev->nudefs };
	ev->bpf_ncpu = sp_bpfhit_ncpu();
	if (ev->bpf_ncpu < ev->ncpu)
		ev->bpf_ncpu = ev->ncpu;
	ev->bpf_outmap[0] = -1;
	if (sp_bpfhit_maps(ev->bpf_ncpu, (unsigned)ev->nudefs, &ev->bpf_outmap[1], &ev->bpf_cntmap) < 0) {
		snprintf(ev->bpf_why, sizeof ev->bpf_why, "no BPF maps: %s", strerror(errno));
		return -1;
	}
	if (nsets == 2 && (ev->bpf_outmap[0] = sp_bpfhit_outmap(ev->bpf_ncpu)) < 0) {
		snprintf(ev->bpf_why, sizeof ev->bpf_why, "no BPF maps: %s", strerror(errno));
		close(ev->bpf_outmap[1]);
		close(ev->bpf_cntmap);
		return -1;
	}
	ev->bpf_progs = sp_xcalloc(ev->nudefs, sizeof *ev->bpf_progs);
	ev->bpf_carrier = sp_xcalloc(ev->nudefs, sizeof *ev->bpf_carrier);
	ev->bpf_kept = sp_xcalloc(ev->nudefs, 1);
	size_t made = 0;
	char log[512];
	int fail = 0;
	for (; made < ev->nudefs; made++) {
		const struct uprobe_def *d = &ev->udefs[made];
		int small = !full && d->regs && d->stack_bytes <= 8;
		int set = nsets == 1 || !small;
		ev->bpf_carrier[made] = -1;
		ev->bpf_progs[made] = sp_bpfhit_prog(ev->bpf_outmap[set], ev->bpf_cntmap, (uint32_t)made,
						     small ? d->regs | SP_BPFHIT_REG(SP_REG_SP) : 0, log, sizeof log);
		if (ev->bpf_progs[made] < 0) {
			char *nl = strchr(log, '\n');
			if (nl)
				*nl = 0;
			snprintf(ev->bpf_why, sizeof ev->bpf_why, "the kernel refused the BPF program: %s%s%.120s",
				 strerror(errno), log[0] ? ": " : "", log);
			break;
		}
	}
	/* The output events, one per CPU (and set), own the probe rings:
	 * a classic set's samples carry the registers and stack of the hit
	 * (the program's context); a compact set's, what the program wrote. */
	struct perf_event_attr a;
	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_BPF_OUTPUT;
	a.sample_period = 1;
	a.use_clockid = 1;
	a.clockid = CLOCK_MONOTONIC;
	a.watermark = 1;
	a.wakeup_watermark = 256u << 10;
	int outs = 0;
	for (int set = 2 - nsets; set < 2 && made == ev->nudefs && !fail; set++) {
		/* compact: the program writes the pid, tid and time itself
		 * (perf's own cost 0.1-0.15 us each per hit here) */
		a.sample_type = PERF_SAMPLE_RAW;
		if (!compact[set])
			a.sample_type |= PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_REGS_USER |
					 PERF_SAMPLE_STACK_USER;
		a.sample_regs_user = compact[set] ? 0 : REGS_MASK;
		a.sample_stack_user = compact[set] ? 0 : (stack + 7) & ~7u;
		for (int cpu = 0; cpu < ev->ncpu && !fail; cpu++) {
			long fd = perf_event_open(&a, -1, cpu);
			if (fd < 0 && errno == ENODEV)
				continue; /* offline */
			struct sp_err e;
			memset(&e, 0, sizeof e);
			struct ring *r = &ev->rings[(set ? 1 : 2) * ev->ncpu + cpu];
			if (fd < 0 || r->fd >= 0 || (add_fd(ev, (int)fd), map_ring(ev, r, (int)fd, &e) < 0) ||
			    sp_bpfhit_set_out(ev->bpf_outmap[set], cpu, (int)fd) < 0) {
				snprintf(ev->bpf_why, sizeof ev->bpf_why, "no BPF output event on CPU %d: %.120s", cpu,
					 fd < 0 ? strerror(errno) : r->fd != (int)fd ? "its ring is taken" : e.msg[0] ? e.msg : strerror(errno));
				fail = 1; /* a ring already made stays: per-thread events write into it */
			}
			outs += !fail;
		}
	}
	if (made < ev->nudefs || fail) {
		bpf_release(ev, made);
		return -1;
	}
	ev->bpf = 1;
	ev->st.probe_bpf = 1;
	for (int set = 0; set < 2; set++)
		for (int cpu = 0; cpu < ev->ncpu && compact[set] && set >= 2 - nsets; cpu++)
			ev->rings[(set ? 1 : 2) * ev->ncpu + cpu].probe = 2; /* parse_compact */
	/* the programs' carriers on a keeper (keeper.h); without one, on
	 * anchors (and the stop waits for the grace periods) */
	if (!getenv("SP_UPROBE_NOKEEPER") && ev->nudefs <= SP_KEEPER_MAX)
		ev->keeper_pid = sp_keeper_start(&ev->keeper);
	ev->st.probe_outputs = (unsigned)outs;
	return 0;
}

/* Attach probe d's program to its first anchor, once the probes run: the
 * kernel keeps a tracepoint's programs in one list, so a second anchor's
 * copy would record each hit twice. */
static void bpf_carry(struct sp_perfev *ev, size_t d)
{
	if (!ev->uprobes_on || ev->bpf_carrier[d] >= 0 || ev->udefs[d].off)
		return;
	if (ev->keeper >= 0) {
		/* on the keeper: an event of the probe on its only thread */
		struct perf_event_attr a;
		memset(&a, 0, sizeof a);
		a.size = sizeof a;
		a.type = PERF_TYPE_TRACEPOINT;
		a.config = (uint64_t)ev->udefs[d].tp_id;
		a.sample_period = 1;
		a.disabled = 1;
		long fd = perf_event_open(&a, ev->keeper_pid, -1);
		if (fd >= 0 && ioctl((int)fd, PERF_EVENT_IOC_SET_BPF, ev->bpf_progs[d]) == 0) {
			ev->bpf_carrier[d] = (int)fd;
			ev->bpf_kept[d] = 1;
			ev->st.probe_kept++;
			ev->st.probe_events++;
			if (ev->st.probe_events > ev->st.probe_events_max)
				ev->st.probe_events_max = ev->st.probe_events;
			return;
		}
		if (fd >= 0)
			close((int)fd);
	}
	for (size_t i = 0; i < ev->npfds; i++)
		if (ev->pfd_def[i] == d) {
			if (ioctl(ev->pfds[i], PERF_EVENT_IOC_SET_BPF, ev->bpf_progs[d]) == 0)
				ev->bpf_carrier[d] = ev->pfds[i];
			return;
		}
}

/* BPF: the anchors of tid's process, one per probe on each of ANCHORS of
 * its threads (the kernel traps the process of an event's thread while that
 * thread lives: when one exits, the others keep the breakpoints in, and
 * another thread is anchored, bpf_check).  Two were not enough: threads
 * that end together (t62-many leader: three threads of 100 calls) took
 * both anchors within one 10 ms check, and the next hit, finding no
 * living anchor, took the breakpoint out (1 call of 300 lost in 1 run of
 * 8).  count: a thread followed. */
#define ANCHORS 3
static int bpf_task_probes(struct sp_perfev *ev, int tid, int count, struct sp_err *err)
{
	int pid = tgid_of(tid);
	if (pid <= 0)
		return 1;
	int found;
	uint32_t n = sp_u64map_get(&ev->probe_tids, (uint64_t)pid, &found);
	int on = 0;
	for (size_t i = 0; i < ev->npfds && !on; i++)
		on = ev->pfd_tid[i] == tid;
	if (n >= ANCHORS || on) {
		ev->st.probe_tasks += count; /* a thread of a process traced already */
		return 0;
	}
	size_t first = ev->nfds, firstp = ev->npfds;
	int rc = 0;
	for (size_t i = 0; i < ev->nudefs && !rc; i++) {
		const struct uprobe_def *d = &ev->udefs[i];
		if (d->off)
			continue;
		struct perf_event_attr a;
		memset(&a, 0, sizeof a);
		a.size = sizeof a;
		a.type = PERF_TYPE_TRACEPOINT;
		a.config = (uint64_t)d->tp_id;
		a.sample_period = 1;
		a.disabled = 1; /* the program records; the anchor never does */
		long fd = perf_event_open(&a, tid, -1);
		if (fd < 0) {
			rc = probe_err(d, tid, errno, err);
			break;
		}
		add_fd(ev, (int)fd);
		push_pfd(ev, (int)fd, i, tid);
		bpf_carry(ev, i);
	}
	if (rc) {
		for (size_t i = first; i < ev->nfds; i++)
			close(ev->fds[i]);
		ev->nfds = first;
		ev->npfds = firstp;
		if (rc == 1 && n > 0)
			rc = 0; /* gone, but its process has its anchor */
	} else {
		*sp_u64map_slot(&ev->probe_tids, (uint64_t)pid, &found) = n + 1;
		*sp_u64map_slot(&ev->anchor_pid, (uint64_t)tid, &found) = (uint32_t)pid;
		ev->st.probe_tasks += count;
		ev->st.probe_procs += n == 0;
	}
	ev->st.probe_events = (unsigned)ev->npfds + ev->st.probe_outputs + ev->st.probe_kept;
	if (ev->st.probe_events > ev->st.probe_events_max)
		ev->st.probe_events_max = ev->st.probe_events;
	return rc;
}

/* Thread tid of process pid has not exited (state neither Z nor X). */
static int task_running(int pid, int tid)
{
	char buf[256];
	const char *e = sp_proc_stat(pid, tid, buf, sizeof buf);
	return e && e[1] == ' ' && e[2] && e[2] != 'Z' && e[2] != 'X';
}

/* BPF: an anchor whose thread exited (its event hangs up) no longer keeps
 * the breakpoints in its process: the process's other threads are
 * anchored until it has ANCHORS again.  The dead anchor stays open until the
 * end: closed, it took the breakpoints out of its process here although
 * another anchor lived (t62-lead: 174 of 900 calls traced; open: 900).
 * Under openlock. */
static void bpf_check(struct sp_perfev *ev)
{
	/* (an event without a ring always polls as hung up: /proc says) */
	for (size_t i = 0; i < ev->npfds; i++) {
		int tid = ev->pfd_tid[i], found;
		if (tid <= 0)
			continue;
		int pid = (int)sp_u64map_get(&ev->anchor_pid, (uint64_t)tid, &found);
		if (!found || task_running(pid, tid))
			continue;
		for (size_t j = 0; j < ev->npfds; j++)
			if (ev->pfd_tid[j] == tid)
				ev->pfd_tid[j] = -1;
		uint32_t *c = sp_u64map_slot(&ev->probe_tids, (uint64_t)pid, &found);
		if (found && *c)
			(*c)--;
		ev->st.probe_reanchored++;
		/* anchor live threads of the process, up to ANCHORS */
		char path[64];
		snprintf(path, sizeof path, "/proc/%d/task", pid);
		DIR *d = opendir(path);
		struct dirent *de;
		while (d && (de = readdir(d))) {
			int t = atoi(de->d_name);
			sp_u64map_get(&ev->anchor_pid, (uint64_t)t, &found);
			if (t <= 0 || found || !task_running(pid, t))
				continue; /* anchored before, or exited (a leader stays a zombie) */
			struct sp_err err;
			memset(&err, 0, sizeof err);
			bpf_task_probes(ev, t, 0, &err);
			if (sp_u64map_get(&ev->probe_tids, (uint64_t)pid, &found) >= ANCHORS)
				break;
		}
		if (d)
			closedir(d);
	}
}

int sp_perfev_add_task_probes(struct sp_perfev *ev, int tid, struct sp_err *err)
{
	if (!ev->nudefs)
		return 0;
	pthread_mutex_lock(&ev->openlock);
	int bpf = bpf_setup(ev);
	if (ev->keeper < 0)
		adopted_close(ev); /* no keeper to take it: now, not at the end */
	if (bpf == 0) {
		int rc = bpf_task_probes(ev, tid, 1, err);
		pthread_mutex_unlock(&ev->openlock);
		return rc;
	}
	int found, rc = 0;
	uint32_t *slot = sp_u64map_slot(&ev->probe_tids, (uint64_t)tid, &found);
	if (found && *slot) {
		pthread_mutex_unlock(&ev->openlock);
		return 0;
	}
	*slot = 1;
	size_t first = ev->nfds;
	for (size_t i = 0; i < ev->nudefs && !rc; i++) {
		const struct uprobe_def *d = &ev->udefs[i];
		for (int cpu = 0; cpu < ev->ncpu && !d->off; cpu++) {
			if (open_uprobe(ev, d, tid, cpu, err) >= 0)
				continue;
			int e = errno;
			if (e == ENODEV)
				continue; /* an offline CPU */
			rc = probe_err(d, tid, e, err);
			if (rc == 1)
				*slot = 0;
			break;
		}
	}
	if (rc) {
		/* Keep the fds that own a ring (see unwind_fds); drop the ids of
		 * the events closed: their numbers are not reused for ids. */
		unwind_fds(ev, first);
		size_t keep = 0;
		for (size_t i = 0; i < ev->npfds; i++) {
			int open_ = 0;
			for (size_t k = 0; k < ev->nfds && !open_; k++)
				open_ = ev->fds[k] == ev->pfds[i];
			if (open_) {
				ev->pfd_def[keep] = ev->pfd_def[i];
				ev->pfd_tid[keep] = ev->pfd_tid[i];
				ev->pfds[keep++] = ev->pfds[i];
			}
		}
		ev->npfds = keep;
		ev->st.probe_events = (unsigned)keep;
	} else {
		ev->st.probe_tasks++;
	}
	pthread_mutex_unlock(&ev->openlock);
	return rc;
}

/* The adopted probe closed and deleted here. */
static void adopted_close(struct sp_perfev *ev)
{
	if (ev->adopt_fd >= 0)
		close(ev->adopt_fd);
	if (ev->adopt_tp[0])
		sp_tracefs_uprobe_del(ev->adopt_tp);
	ev->adopt_fd = -1;
	ev->adopt_tp[0] = 0;
}

void sp_perfev_adopt_probe(struct sp_perfev *ev, int fd, const char *tp)
{
	ev->adopt_fd = fd;
	snprintf(ev->adopt_tp, sizeof ev->adopt_tp, "%s", tp);
}

const char *sp_perfev_probe_why(const struct sp_perfev *ev) { return ev->bpf < 0 ? ev->bpf_why : NULL; }

int sp_perfev_probe_counts(struct sp_perfev *ev, uint32_t cookie, uint64_t *fired, uint64_t *delivered)
{
	size_t d = 0;
	while (d < ev->nudefs && ev->udefs[d].cookie != cookie)
		d++;
	if (d == ev->nudefs)
		return -1;
	/* Each event counts its hits (sample_period 1: every hit overflows
	 * and writes a record, or fails to when the ring is full). */
	uint64_t n = 0;
	pthread_mutex_lock(&ev->openlock);
	if (ev->bpf > 0) {
		/* the program counts every hit, the lost ones too */
		*fired = sp_bpfhit_count(ev->bpf_cntmap, ev->bpf_ncpu, (uint32_t)d);
		*delivered = ev->udefs[d].delivered;
		pthread_mutex_unlock(&ev->openlock);
		return 0;
	}
	n = ev->udefs[d].fired_closed;
	for (size_t i = 0; i < ev->npfds; i++) {
		uint64_t v;
		if (ev->pfd_def[i] == d && read(ev->pfds[i], &v, sizeof v) == (ssize_t)sizeof v)
			n += v;
	}
	pthread_mutex_unlock(&ev->openlock);
	*fired = n;
	*delivered = ev->udefs[d].delivered;
	return 0;
}

int sp_perfev_close_probe(struct sp_perfev *ev, uint32_t cookie)
{
	size_t d = 0;
	while (d < ev->nudefs && ev->udefs[d].cookie != cookie)
		d++;
	if (d == ev->nudefs)
		return -1;
	pthread_mutex_lock(&ev->openlock);
	struct uprobe_def *u = &ev->udefs[d];
	u->off = 1;
	int closed = 0;
	size_t keep = 0;
	for (size_t i = 0; i < ev->npfds; i++) {
		int fd = ev->pfds[i], owner = 0;
		for (int c = 0; c < ev->nrings && !owner; c++)
			owner = ev->rings[c].fd == fd;
		if (ev->pfd_def[i] != d || owner) {
			ev->pfd_def[keep] = ev->pfd_def[i];
			ev->pfd_tid[keep] = ev->pfd_tid[i];
			ev->pfds[keep++] = fd;
			continue;
		}
		uint64_t v;
		if (read(fd, &v, sizeof v) == (ssize_t)sizeof v)
			u->fired_closed += v;
		for (size_t k = 0; k < ev->nfds; k++)
			if (ev->fds[k] == fd) {
				ev->fds[k] = ev->fds[--ev->nfds];
				break;
			}
		close(fd);
		closed++;
	}
	ev->npfds = keep;
	ev->st.probe_events = (unsigned)keep + ev->st.probe_outputs + ev->st.probe_kept;
	if (ev->bpf > 0 && !ev->bpf_kept[d])
		ev->bpf_carrier[d] = -1; /* a carrier on the keeper stays, handed over at the end */
	pthread_mutex_unlock(&ev->openlock);
	return closed;
}

void sp_perfev_enable_uprobes(struct sp_perfev *ev)
{
	pthread_mutex_lock(&ev->openlock);
	ev->uprobes_on = 1;
	for (size_t i = 0; i < ev->npfds; i++)
		ioctl(ev->pfds[i], PERF_EVENT_IOC_ENABLE, 0);
	for (size_t d = 0; ev->bpf > 0 && d < ev->nudefs; d++)
		bpf_carry(ev, d);
	pthread_mutex_unlock(&ev->openlock);
}

int sp_perfev_enable(struct sp_perfev *ev)
{
	pthread_mutex_lock(&ev->openlock);
	ev->enabled = 1;
	ev->uprobes_on = 1;
	for (size_t i = 0; i < ev->nfds; i++)
		ioctl(ev->fds[i], PERF_EVENT_IOC_ENABLE, 0);
	for (size_t d = 0; ev->bpf > 0 && d < ev->nudefs; d++)
		bpf_carry(ev, d);
	for (size_t i = 0; i < ev->ncfds; i++)
		ioctl(ev->cfds[i], PERF_EVENT_IOC_ENABLE, 0);
	pthread_mutex_unlock(&ev->openlock);
	return 0;
}

int sp_perfev_disable(struct sp_perfev *ev)
{
	pthread_mutex_lock(&ev->openlock);
	ev->enabled = 0;
	for (size_t i = 0; i < ev->nfds; i++)
		ioctl(ev->fds[i], PERF_EVENT_IOC_DISABLE, 0);
	for (size_t i = 0; i < ev->ncfds; i++)
		ioctl(ev->cfds[i], PERF_EVENT_IOC_DISABLE, 0);
	pthread_mutex_unlock(&ev->openlock);
	stop_drainer(ev);
	return 0;
}

/* ---- the drainer ---- */

static void parse_sample(struct sp_perfev *ev, const struct perf_event_header *h, const struct sp_perf_handler *hd,
			 int early);

void sp_perfev_set_early(struct sp_perfev *ev, void (*early)(void *ctx, const struct sp_perf_sample *s), void *ctx)
{
	ev->early.early_ctx = ctx;
	ev->early.early = early;
}

/* Copy every complete record of ring r into its queue and free the ring's
 * space.  Runs in the drainer thread, or in the caller once the drainer
 * stopped.  Returns the number of bytes queued. */
/* follow (per CPU), with a wakeup at every sample (wakeup_each): each CPU's
 * next sample comes at a random time, memoryless (an exponential draw,
 * shifted by 1/32 of the period), drawn when the drainer wakes for the
 * last one.  At a fixed period, the drainer woken by each sample runs, and
 * preempts, at the same phase of the period every time, and its own CPU
 * time is never sampled: it went to the tasks around it (t35-pool at
 * -F 499: its processes 86-117 % of their time on the CPU by the
 * scheduler's switches; the totals 78-103 % of the kernel's count).  Drawn
 * from the drainer's wakeup on, what it and its reactions do is sampled
 * like anything else.  The draw's mean is the period less the mean delay
 * from a sample to the draw, so that a busy CPU is still sampled once a
 * period on average. */
static void redraw_period(struct sp_perfev *ev, struct ring *r, uint64_t now)
{
	double p = 1e9 / ev->o.freq;
	uint64_t x = ev->dither ? ev->dither : now | 1;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	ev->dither = x;
	double u = ((double)(x >> 11) + 0.5) / 9007199254740992.0; /* (0, 1) */
	double shift = p / 32, mean = p - ev->late_ns - shift;
	if (mean < p / 4)
		mean = p / 4;
	uint64_t np = (uint64_t)(shift - mean * log(u));
	if (ioctl(r->fd, PERF_EVENT_IOC_PERIOD, &np) < 0) {
		/* The kernel took no draw: the period stays as it was, every
		 * sample kept, no more draws. */
		ev->no_draw = 1;
		for (int i = 0; i < ev->ncpu; i++)
			ev->rings[i].draw_t[0] = ev->rings[i].draw_t[1] = 0;
		return;
	}
	ev->st.draws++;
	r->drawn_at = now;
	r->draw_t[1] = r->draw_t[0];
	r->taken[1] = r->taken[0];
	r->draw_t[0] = now;
	r->taken[0] = 0;
}

/* follow, drawn: whether the sample at time t is a second one after the
 * same draw.  The kernel's timer goes on at the drawn period until the
 * next draw; a short draw fired again before the drainer drew the next
 * (a burst at that period, 5-10 % more samples at -F 499): only the
 * first sample after each draw is kept. */
static int refired(struct sp_perfev *ev, struct ring *r, uint64_t t)
{
	int k = t >= r->draw_t[0] ? 0 : t >= r->draw_t[1] ? 1 : -1;
	if (k < 0 || !r->draw_t[k])
		return 0;
	if (!r->taken[k]) {
		r->taken[k] = 1;
		return 0;
	}
	ev->st.refired++;
	return 1;
}

/* follow: the delay from the ring's newest sample, at time last, to the
 * draw that followed it, into the running mean. */
static void draw_delay(struct sp_perfev *ev, struct ring *r, uint64_t last)
{
	double p = 1e9 / ev->o.freq;
	if (r->drawn_at >= last && r->drawn_at - last < (uint64_t)p) {
		double late = (double)(r->drawn_at - last);
		ev->late_ns = ev->late_ns > 0 ? ev->late_ns + (late - ev->late_ns) / 64 : late;
	}
	r->drawn_at = 0;
}

static size_t drain_ring(struct sp_perfev *ev, struct ring *r)
{
	uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->meta->data_tail;
	size_t queued = 0, dropped = 0;
	uint64_t last = 0; /* follow: the time of the ring's newest sample */
	pthread_mutex_lock(&ev->lock);
	size_t before = ev->queued;
	pthread_mutex_unlock(&ev->lock);
	struct chunk *c = r->qtail; /* only this thread changes qtail */
	size_t len = c ? c->len : 0; /* uncommitted end of the tail chunk */
	while (tail < head) {
		size_t off = tail & (r->size - 1);
		struct perf_event_header hdr;
		size_t first = r->size - off;
		if (first >= sizeof hdr) {
			memcpy(&hdr, r->data + off, sizeof hdr);
		} else {
			memcpy(&hdr, r->data + off, first);
			memcpy((char *)&hdr + first, r->data, sizeof hdr - first);
		}
		if (hdr.size < sizeof hdr)
			break; /* never happens; do not loop for ever if it does */
		tail += hdr.size;
		if (before + queued + hdr.size > ev->max_queued) {
			/* The consumer is far behind: drop, and say so. */
			if (hdr.type == PERF_RECORD_SAMPLE)
				dropped++;
			continue;
		}
		if (!c || len + hdr.size > CHUNK_BYTES) {
			pthread_mutex_lock(&ev->lock);
			struct chunk *n = ev->spare;
			if (n) {
				ev->spare = n->next;
				ev->nspare--;
			}
			pthread_mutex_unlock(&ev->lock);
			if (!n)
				n = sp_xmalloc(sizeof *n + CHUNK_BYTES);
			n->next = NULL;
			n->len = 0;
			pthread_mutex_lock(&ev->lock);
			if (c)
				c->len = len;
			if (r->qtail)
				r->qtail->next = n;
			else
				r->qhead = n;
			r->qtail = n;
			pthread_mutex_unlock(&ev->lock);
			c = n;
			len = 0;
		}
		if (first > hdr.size)
			first = hdr.size;
		memcpy(c->data + len, r->data + off, first);
		memcpy(c->data + len + first, r->data, hdr.size - first);
		if (r->draw_t[0] && hdr.type == PERF_RECORD_SAMPLE && hdr.size >= sizeof hdr + 24) {
			uint64_t t;
			memcpy(&t, c->data + len + sizeof hdr + 16, 8); /* IP, pid/tid, time */
			if (refired(ev, r, t))
				continue; /* not kept: the next record overwrites it */
		}
		/* Not handed to the reader yet (c->len is not updated): the
		 * record stays put while the early callback reads it. */
		if (ev->early.early && hdr.type == PERF_RECORD_SAMPLE && !r->probe && hdr.size >= sizeof hdr + 32)
			parse_sample(ev, (const struct perf_event_header *)(c->data + len), &ev->early, 1);
		if (ev->follow && hdr.type == PERF_RECORD_SAMPLE && !r->probe && hdr.size >= sizeof hdr + 24)
			memcpy(&last, c->data + len + sizeof hdr + 16, 8); /* IP, pid/tid, time */
		len += hdr.size;
		queued += hdr.size;
	}
	__atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
	if (last && r->drawn_at)
		draw_delay(ev, r, last);
	pthread_mutex_lock(&ev->lock);
	if (c)
		c->len = len;
	ev->queued += queued;
	*(r->probe ? &ev->probe_dropped : &ev->dropped) += dropped;
	pthread_mutex_unlock(&ev->lock);
	return queued;
}

/* One pass over every ring; afterwards every record older than the
 * instant the pass started is queued. */
static void drain_all(struct sp_perfev *ev)
{
	uint64_t t = sp_mono_ns();
	size_t q = 0;
	if (ev->follow && ev->o.wakeup_each && !ev->no_draw)
		for (int i = 0; i < ev->ncpu; i++) {
			struct ring *r = &ev->rings[i];
			if (r->fd >= 0 && __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE) != r->meta->data_tail)
				redraw_period(ev, r, t);
		}
	for (int i = 0; i < ev->nrings; i++)
		if (ev->rings[i].fd >= 0)
			q += drain_ring(ev, &ev->rings[i]);
	pthread_mutex_lock(&ev->lock);
	ev->drained_until = t;
	/* The reader waits for new records (or its own timeout): woken for
	 * nothing, it would only wait again, two context switches each pass.
	 * System-wide (-a, not following processes) nothing reads as it
	 * goes: the reader's own 50 ms rounds suffice, not a round at every
	 * sample the drainer is woken for (Python's early reads happen here,
	 * in the drainer, and stay as they are). */
	if (q && !(ev->cpu_wide && !ev->follow)) {
		ev->appended++;
		pthread_cond_broadcast(&ev->cond);
	}
	pthread_mutex_unlock(&ev->lock);
}

static void *drainer_main(void *arg)
{
	struct sp_perfev *ev = arg;
	struct pollfd *pfd = sp_xcalloc((size_t)ev->nrings, sizeof *pfd);
	int *map = sp_xcalloc((size_t)ev->nrings, sizeof *map);
	/* Early reads (Python frames) must follow the samples closely: on a
	 * busy machine a woken drainer waited 2-20 ms for a CPU, and a short
	 * thread had exited by then.  So it runs at the lowest real-time
	 * priority, where allowed (CAP_SYS_NICE): it sleeps in poll, and
	 * each wakeup only copies records and reads a few words of the
	 * sampled thread.  Not per CPU for the whole machine (-a). */
	if (ev->early.early && (!ev->cpu_wide || ev->follow)) {
		struct sched_param sp = { .sched_priority = 1 };
		ev->st.early_rt = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) == 0 ? 1 : -1;
	}
	unsigned passes = 0;
	while (!__atomic_load_n(&ev->stop, __ATOMIC_ACQUIRE)) {
		int n = 0;
		for (int i = 0; i < ev->nrings; i++) {
			if (ev->rings[i].fd < 0 || ev->rings[i].hup)
				continue;
			pfd[n].fd = ev->rings[i].fd;
			pfd[n].events = POLLIN;
			pfd[n].revents = 0;
			map[n++] = i;
		}
		/* A ring whose owning event hung up (its thread exited) is still
		 * written by the events sharing it, but polling it would return at
		 * once for ever: it is only read, on the timeout. */
		/* Per CPU (-a), no ring hangs up, and the reader's rounds are
		 * 50 ms: a pass every 10 ms would copy for nothing, 100 times
		 * a second on an idle machine. */
		/* Early reads without a wakeup at each sample (--off-cpu, --wall:
		 * a sample at every switch; pcollect asks for a wakeup each only
		 * where the target is a Python): a pass every millisecond. */
		int ms = ev->early.early && ev->o.offcpu && !ev->o.wakeup_each ? 1 : ev->cpu_wide ? 50 : 10;
		if (poll(n ? pfd : NULL, (nfds_t)n, ms) > 0)
			for (int i = 0; i < n; i++)
				if (pfd[i].revents & (POLLHUP | POLLERR))
					ev->rings[map[i]].hup = 1;
		/* Probe rings belong to no thread: they never hang up. */
		int live = 0;
		for (int i = 0; i < ev->ncpu; i++)
			live |= ev->rings[i].fd >= 0 && !ev->rings[i].hup;
		if (!live) {
			pthread_mutex_lock(&ev->lock);
			ev->all_hup = 1;
			pthread_mutex_unlock(&ev->lock);
		}
		/* An anchor's thread exited: until another thread of its
		 * process is anchored, the first hit there takes the breakpoint
		 * out (the kernel's filter no longer matches) and the calls are
		 * lost (t6296 leader: 1-4 of 300 when the last anchored thread
		 * ended before the others).  Looked at every pass (10 ms) for a
		 * few anchors, every 5th for many processes (a /proc read each). */
		if (__atomic_load_n(&ev->bpf, __ATOMIC_RELAXED) > 0) {
			pthread_mutex_lock(&ev->openlock);
			if (++passes % 5 == 0 || ev->npfds <= 16)
				bpf_check(ev);
			pthread_mutex_unlock(&ev->openlock);
		}
		drain_all(ev);
	}
	free(pfd);
	free(map);
	return NULL;
}

static void start_drainer(struct sp_perfev *ev)
{
	if (ev->started)
		return;
	/* Signals are for the main thread: its waits return on them. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	__atomic_store_n(&ev->stop, 0, __ATOMIC_RELEASE);
	if (pthread_create(&ev->drainer, NULL, drainer_main, ev) == 0)
		ev->started = 1;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void stop_drainer(struct sp_perfev *ev)
{
	if (!ev->started)
		return;
	__atomic_store_n(&ev->stop, 1, __ATOMIC_RELEASE);
	pthread_join(ev->drainer, NULL);
	ev->started = 0;
}

int sp_perfev_wait(struct sp_perfev *ev, int timeout_ms)
{
	start_drainer(ev);
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += timeout_ms / 1000;
	until.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&ev->lock);
	while (ev->appended == ev->seen && ev->started)
		if (pthread_cond_timedwait(&ev->cond, &ev->lock, &until) != 0)
			break;
	ev->seen = ev->appended;
	int hup = ev->all_hup;
	pthread_mutex_unlock(&ev->lock);
	return hup;
}

/* ---- reading ---- */

/* The consumer's view of one queue for a round: up to end_len of end. */
struct qview {
	struct chunk *c, *end;
	size_t pos, end_len;
};

static const struct perf_event_header *qpeek(struct qview *v)
{
	for (;;) {
		if (!v->c)
			return NULL;
		size_t lim = v->c == v->end ? v->end_len : v->c->len;
		if (v->pos < lim)
			return (const void *)(v->c->data + v->pos);
		if (v->c == v->end)
			return NULL;
		v->c = v->c->next;
		v->pos = 0;
	}
}

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

/* Every record but a sample ends with sample_id: pid, tid, time (the sample
 * type fields TID|TIME that sample_id_all appends). */
static uint64_t rec_time(const struct perf_event_header *h, int probe)
{
	const uint8_t *p = (const uint8_t *)h;
	if (h->type == PERF_RECORD_SAMPLE)
		return h->size >= 32 ? rd64(p + 24) : 0;
	if (probe)
		return 0; /* a probe ring's LOST record: no time, count it at once */
	if (h->size < sizeof *h + 16)
		return 0;
	return rd64(p + h->size - 8);
}

/* early: the sample goes to hd->early (sp_perf_handler), nothing counted. */
static void parse_sample(struct sp_perfev *ev, const struct perf_event_header *h, const struct sp_perf_handler *hd,
			 int early)
{
	const uint8_t *p = (const uint8_t *)(h + 1), *end = (const uint8_t *)h + h->size;
	struct sp_perf_sample s;
	uint64_t st = ev->attr.sample_type;
	memset(&s, 0, sizeof s);
	if (end - p < 32)
		return;
	s.ip = rd64(p);
	s.pid = rd32(p + 8);
	s.tid = rd32(p + 12);
	s.time = rd64(p + 16);
	s.period = rd64(p + 24);
	p += 32;
	if (st & PERF_SAMPLE_CALLCHAIN) {
		if (end - p < 8)
			return;
		uint64_t nr = rd64(p);
		p += 8;
		if (nr > (uint64_t)(end - p) / 8)
			return;
		const uint64_t *ips = (const uint64_t *)p;
		p += nr * 8;
		/* Context markers (PERF_CONTEXT_KERNEL, _USER) split the chain. */
		int ctx = 0; /* 1 kernel, 2 user */
		for (uint64_t i = 0; i < nr; i++) {
			if (ips[i] >= (uint64_t)PERF_CONTEXT_MAX) {
				ctx = ips[i] == (uint64_t)PERF_CONTEXT_KERNEL ? 1 : ips[i] == (uint64_t)PERF_CONTEXT_USER ? 2 : 0;
				if (ctx == 1)
					s.kernel = ips + i + 1;
				else if (ctx == 2)
					s.user = ips + i + 1;
				continue;
			}
			if (ctx == 1)
				s.nkernel++;
			else if (ctx == 2)
				s.nuser++;
		}
	}
	if (st & PERF_SAMPLE_REGS_USER) {
		if (end - p < 8)
			return;
		uint64_t abi = rd64(p);
		p += 8;
		if (abi != PERF_SAMPLE_REGS_ABI_NONE) {
			if (end - p < 17 * 8)
				return;
			uint64_t r[17];
			memcpy(r, p, sizeof r);
			p += sizeof r;
			/* perf order AX BX CX DX SI DI BP SP IP R8..R15 -> DWARF order */
			s.regs[0] = r[0];
			s.regs[1] = r[3];
			s.regs[2] = r[2];
			s.regs[3] = r[1];
			s.regs[4] = r[4];
			s.regs[5] = r[5];
			s.regs[6] = r[6];
			s.regs[7] = r[7];
			for (int i = 0; i < 8; i++)
				s.regs[8 + i] = r[9 + i];
			s.regs[16] = r[8];
			s.has_regs = 1;
		}
	}
	if (st & PERF_SAMPLE_STACK_USER) {
		if (end - p < 8)
			return;
		uint64_t size = rd64(p);
		p += 8;
		if (size) {
			if ((uint64_t)(end - p) < size + 8)
				return;
			uint64_t dyn = rd64(p + size);
			s.stack = p;
			s.stack_len = dyn < size ? dyn : size;
		}
	}
	s.switch_out = ev->o.offcpu == 1 || (ev->o.offcpu == 2 && s.period == 1);
	if (early) {
		hd->early(hd->early_ctx, &s);
		return;
	}
	ev->st.samples++;
	if (!s.switch_out)
		ev->st.sampled_ns += s.period;
	if (hd->sample)
		hd->sample(hd->ctx, &s);
}

/* A compact hit (bpfhit.h): RAW alone, of idx, pid, tid, time, the
 * registers of its probe's mask and the word at SP when asked. */
static void parse_compact(struct sp_perfev *ev, const struct perf_event_header *h, const struct sp_perf_handler *hd)
{
	const uint8_t *p = (const uint8_t *)(h + 1), *end = (const uint8_t *)h + h->size;
	if (end - p < 24)
		return;
	uint32_t raw = rd32(p);
	const uint8_t *q = p + 4;
	if (raw < 20 || (size_t)(end - q) < raw)
		return;
	uint32_t idx = rd32(q);
	if (idx >= ev->nudefs)
		return;
	const struct uprobe_def *d = &ev->udefs[idx];
	uint32_t regs = d->regs | SP_BPFHIT_REG(SP_REG_SP);
	int n = __builtin_popcount(regs & (SP_BPFHIT_TOP - 1)), top = !!(regs & SP_BPFHIT_TOP);
	if (raw != 8u * (uint32_t)(n + top) + 20)
		return;
	struct sp_perf_uprobe u;
	memset(&u, 0, sizeof u);
	ev->udefs[idx].delivered++;
	u.cookie = d->cookie;
	u.pid = rd32(q + 4);
	u.tid = rd32(q + 8);
	u.time = rd64(q + 12);
	q += 20;
	for (int r = 0; r < SP_NREGS && r < 17; r++)
		if ((regs >> r) & 1) {
			u.regs[r] = rd64(q);
			q += 8;
		}
	u.has_regs = 1;
	u.ip = u.regs[SP_REG_IP];
	if (top) {
		u.top = rd64(q);
		u.has_top = 1;
		u.stack = q;
		u.stack_len = 8;
	}
	ev->st.probe_hits++;
	if (hd->uprobe)
		hd->uprobe(hd->uprobe_ctx, &u);
}

/* A uprobe hit: IP, TID, TIME, ID, REGS_USER (sp_perfev_add_uprobe). */
static void parse_uprobe(struct sp_perfev *ev, const struct perf_event_header *h, const struct sp_perf_handler *hd)
{
	const uint8_t *p = (const uint8_t *)(h + 1), *end = (const uint8_t *)h + h->size;
	struct sp_perf_uprobe u;
	memset(&u, 0, sizeof u);
	if (end - p < 48)
		return;
	u.ip = rd64(p);
	u.pid = rd32(p + 8);
	u.tid = rd32(p + 12);
	u.time = rd64(p + 16);
	int found = 0;
	uint32_t c = 0;
	if (ev->bpf > 0) {
		/* bpfhit.h: RAW (4 bytes: the probe) where ID would be */
		found = rd32(p + 24) == 4;
		c = rd32(p + 28) + 1;
	} else {
		pthread_mutex_lock(&ev->idlock);
		c = sp_u64map_get(&ev->probe_ids, rd64(p + 24), &found);
		pthread_mutex_unlock(&ev->idlock);
	}
	if (!found || !c || c > ev->nudefs)
		return;
	ev->udefs[c - 1].delivered++;
	u.cookie = ev->udefs[c - 1].cookie;
	uint64_t abi = rd64(p + 32);
	p += 40;
	if (abi != PERF_SAMPLE_REGS_ABI_NONE && end - p >= 17 * 8) {
		uint64_t r[17];
		memcpy(r, p, sizeof r);
		/* perf order AX BX CX DX SI DI BP SP IP R8..R15 -> DWARF order */
		u.regs[0] = r[0];
		u.regs[1] = r[3];
		u.regs[2] = r[2];
		u.regs[3] = r[1];
		u.regs[4] = r[4];
		u.regs[5] = r[5];
		u.regs[6] = r[6];
		u.regs[7] = r[7];
		for (int i = 0; i < 8; i++)
			u.regs[8 + i] = r[9 + i];
		u.regs[16] = r[8];
		u.has_regs = 1;
		p += sizeof r;
	}
	if (end - p >= 8) {
		uint64_t size = rd64(p);
		p += 8;
		uint64_t dyn = size && (uint64_t)(end - p) >= size + 8 ? rd64(p + size) : 0;
		if (dyn > size)
			dyn = size;
		if (dyn >= 8) {
			u.top = rd64(p);
			u.has_top = 1;
			u.stack = p;
			u.stack_len = dyn;
		}
	}
	ev->st.probe_hits++;
	if (hd->uprobe)
		hd->uprobe(hd->uprobe_ctx, &u);
}

/* follow: process pid is followed at time t. */
static int followed_at(const struct sp_perfev *ev, uint32_t pid, uint64_t t)
{
	int found;
	uint32_t i = sp_u64map_get(&ev->fpids, pid, &found);
	return found && t >= ev->fsince[i - 1];
}

/* follow: a process followed from its exec (follow_exec) is followed from
 * time t, its exec's COMM record, on. */
static void exec_seen(struct sp_perfev *ev, uint32_t pid, uint64_t t)
{
	int found;
	uint32_t i = sp_u64map_get(&ev->fpids, pid, &found);
	if (found && ev->fsince[i - 1] == UINT64_MAX)
		ev->fsince[i - 1] = t;
}

/* follow: whether record h (body p, len bytes) is of a followed process.
 * A process forked by a followed one is followed from its FORK record on
 * (the records come in time order), as inheritance follows it. */
static int followed(struct sp_perfev *ev, const struct perf_event_header *h, const uint8_t *p, size_t len)
{
	uint32_t pid;
	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		if (len < 24)
			return 0;
		pid = rd32(p + 8);
		break;
	case PERF_RECORD_FORK:
		if (len < 8)
			return 0;
		if (!followed_at(ev, rd32(p + 4), rec_time(h, 0)))
			return 0;
		follow_pid(ev, rd32(p), 0);
		return 1;
	case PERF_RECORD_COMM:
		if (len < 4)
			return 0;
		pid = rd32(p);
		if (h->misc & PERF_RECORD_MISC_COMM_EXEC)
			exec_seen(ev, pid, rec_time(h, 0));
		break;
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_EXIT:
		if (len < 4)
			return 0;
		pid = rd32(p);
		break;
	default:
		return 1; /* LOST, THROTTLE: the rings' own */
	}
	/* Only samples are held to the time the process was added: its
	 * mappings and names are needed whenever they were made. */
	return followed_at(ev, pid, h->type == PERF_RECORD_SAMPLE ? rec_time(h, 0) : UINT64_MAX);
}

static void dispatch(struct sp_perfev *ev, const struct perf_event_header *h, const struct sp_perf_handler *hd,
		     int probe)
{
	const uint8_t *p = (const uint8_t *)(h + 1);
	size_t len = h->size - sizeof *h;
	ev->st.records++;
	if (probe) {
		if (h->type == PERF_RECORD_SAMPLE && probe == 2)
			parse_compact(ev, h, hd);
		else if (h->type == PERF_RECORD_SAMPLE)
			parse_uprobe(ev, h, hd);
		else if (h->type == PERF_RECORD_LOST && len >= 16)
			ev->st.probe_lost += rd64(p + 8);
		return;
	}
	if (ev->follow && !followed(ev, h, p, len))
		return;
	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		parse_sample(ev, h, hd, 0);
		break;
	case PERF_RECORD_MMAP2:
		if (len >= 64 && hd->mmap) {
			struct sp_map m;
			m.start = rd64(p + 8);
			m.end = m.start + rd64(p + 16);
			m.pgoff = rd64(p + 24);
			if (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
				m.maj = m.min = 0;
				m.ino = 0;
			} else {
				m.maj = rd32(p + 32);
				m.min = rd32(p + 36);
				m.ino = rd64(p + 40);
			}
			m.prot = rd32(p + 56);
			/* The name is NUL-padded to 8 bytes, then sample_id follows. */
			const char *name = (const char *)p + 64;
			m.path = memchr(name, 0, len - 64) ? name : "";
			hd->mmap(hd->ctx, rd32(p), rd32(p + 4), &m, rec_time(h, 0));
		}
		break;
	case PERF_RECORD_COMM:
		if (len >= 9 && hd->comm) {
			const char *name = (const char *)p + 8;
			if (memchr(name, 0, len - 8))
				hd->comm(hd->ctx, rd32(p), rd32(p + 4), name, !!(h->misc & PERF_RECORD_MISC_COMM_EXEC),
					 rec_time(h, 0));
		}
		break;
	case PERF_RECORD_FORK:
		if (len >= 24 && hd->fork)
			hd->fork(hd->ctx, rd32(p), rd32(p + 4), rd32(p + 8), rd32(p + 12), rd64(p + 16));
		break;
	case PERF_RECORD_EXIT:
		if (len >= 24 && hd->exit)
			hd->exit(hd->ctx, rd32(p), rd32(p + 8), rd64(p + 16));
		break;
	case PERF_RECORD_SWITCH:
		/* no body: the sample_id (pid, tid, time) only */
		if (len >= 16 && hd->sched)
			hd->sched(hd->ctx, rd32(p + len - 16), rd32(p + len - 12), !!(h->misc & PERF_RECORD_MISC_SWITCH_OUT),
				  !!(h->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT), rd64(p + len - 8));
		break;
	case PERF_RECORD_LOST:
		if (len >= 16)
			ev->st.lost += rd64(p + 8);
		break;
	case PERF_RECORD_LOST_SAMPLES:
		if (len >= 8)
			ev->st.lost += rd64(p);
		break;
	case PERF_RECORD_THROTTLE:
		ev->st.throttled++;
		break;
	default:
		break;
	}
}

uint64_t sp_perfev_read(struct sp_perfev *ev, const struct sp_perf_handler *hd, int final)
{
	if (final)
		stop_drainer(ev);
	else
		start_drainer(ev);
	if (!ev->started)
		drain_all(ev); /* no drainer (stopped, or could not start): do it here */
	uint64_t limit = final ? UINT64_MAX : 0;
	struct qview *v = sp_xcalloc((size_t)ev->nrings, sizeof *v);
	pthread_mutex_lock(&ev->lock);
	if (!final)
		limit = ev->drained_until;
	for (int i = 0; i < ev->nrings; i++) {
		struct ring *r = &ev->rings[i];
		v[i] = (struct qview){ r->qhead, r->qtail, r->qpos, r->qtail ? r->qtail->len : 0 };
	}
	pthread_mutex_unlock(&ev->lock);
	ev->read_until = limit;

	/* Merge the queues by timestamp (each is in time order already), up to
	 * the instant before which everything has been queued. */
	const struct perf_event_header **next = sp_xcalloc((size_t)ev->nrings, sizeof *next);
	uint64_t *times = sp_xcalloc((size_t)ev->nrings, sizeof *times);
	for (int i = 0; i < ev->nrings; i++)
		if ((next[i] = qpeek(&v[i])))
			times[i] = rec_time(next[i], ev->rings[i].probe);
	uint64_t n = 0;
	size_t consumed = 0;
	for (;;) {
		int best = -1;
		for (int i = 0; i < ev->nrings; i++)
			if (next[i] && times[i] <= limit && (best < 0 || times[i] < times[best]))
				best = i;
		if (best < 0)
			break;
		dispatch(ev, next[best], hd, ev->rings[best].probe);
		n++;
		v[best].pos += next[best]->size;
		consumed += next[best]->size;
		if ((next[best] = qpeek(&v[best])))
			times[best] = rec_time(next[best], ev->rings[best].probe);
	}
	/* Hand the consumed chunks back. */
	pthread_mutex_lock(&ev->lock);
	for (int i = 0; i < ev->nrings; i++) {
		struct ring *r = &ev->rings[i];
		if (!v[i].c)
			continue; /* was empty: nothing consumed */
		while (r->qhead != v[i].c) {
			struct chunk *c = r->qhead;
			r->qhead = c->next;
			if (ev->nspare < MAX_SPARE) {
				c->next = ev->spare;
				ev->spare = c;
				ev->nspare++;
			} else {
				free(c);
			}
		}
		r->qpos = v[i].pos;
	}
	ev->queued -= consumed;
	ev->st.lost += ev->dropped;
	ev->st.probe_lost += ev->probe_dropped;
	ev->dropped = ev->probe_dropped = 0;
	pthread_mutex_unlock(&ev->lock);
	free(v);
	free(next);
	free(times);
	return n;
}

uint64_t sp_perfev_counted_ns(struct sp_perfev *ev)
{
	if (ev->count_failed || !ev->ncfds)
		return 0;
	uint64_t sum = 0;
	pthread_mutex_lock(&ev->openlock);
	for (size_t i = 0; i < ev->ncfds; i++) {
		uint64_t v;
		if (read(ev->cfds[i], &v, sizeof v) == (ssize_t)sizeof v)
			sum += v;
	}
	pthread_mutex_unlock(&ev->openlock);
	return sum;
}

uint64_t sp_perfev_read_until(const struct sp_perfev *ev) { return ev->read_until; }

const struct sp_perfev_stats *sp_perfev_stats(const struct sp_perfev *ev) { return &ev->st; }
