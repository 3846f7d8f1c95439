/* Unit tests of the sampling engine (lib/engine/collect.h), live and offline.
 *
 * A forked child of this test burns CPU in outer_fn -> middle_fn ->
 * inner_fn (noinline, built -O2 with the rest).  Its samples (user
 * registers + stack copies, as pcollect takes them) and the side-band
 * records go through two engines: a live one while the child runs, and a
 * copy of every record goes, after the child exited and was reaped, through
 * an offline engine (maps only from the records, as perf record
 * synthesizes them for a running process; no /proc).  Both must give the
 * same folded stacks, unwound through the three functions.  Then the
 * offline engine again with a locate callback that refuses this binary:
 * its frames are [unknown], nothing else changes.  Needs perf_event_open;
 * prints a skip line with the reason when it is not allowed. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collect.h"
#include "fold.h"
#include "perf_events.h"
#include "procmaps.h"
#include "profile.h"

#include "unit.h"

/* ---- the child's work ---- */

static volatile uint64_t sink_v;

__attribute__((noinline)) static uint64_t inner_fn(uint64_t x)
{
	for (int i = 0; i < 1000; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	sink_v = x;
	return x;
}

__attribute__((noinline)) static uint64_t middle_fn(uint64_t x)
{
	x = inner_fn(x) ^ 1;
	sink_v = x;
	return x + 1;
}

__attribute__((noinline)) static uint64_t outer_fn(uint64_t x)
{
	x = middle_fn(x) ^ 3;
	sink_v = x;
	return x + 2;
}

/* CPU time, not wall-clock time: on a loaded machine the child still gets
 * its samples' worth of CPU (~300 at 499 Hz). */
static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void burn(double seconds)
{
	double end = now_s() + seconds;
	uint64_t x = 1;
	while (now_s() < end)
		for (int i = 0; i < 100; i++)
			x = outer_fn(x);
}

/* ---- a copy of every record ---- */

enum { R_SAMPLE, R_COMM, R_MMAP, R_FORK, R_EXIT };

struct rec {
	int type;
	struct sp_perf_sample s; /* pointers below owned by the record */
	uint64_t *kernel, *user;
	uint8_t *stack;
	uint32_t pid, tid, ppid, ptid;
	char *str; /* comm or map path */
	int exec;
	struct sp_map m;
	uint64_t time;
};

struct tape {
	struct rec *r;
	size_t n, cap;
	struct sp_perf_handler live; /* the live engine's callbacks */
};

static struct rec *tape_add(struct tape *t, int type)
{
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 1024;
		t->r = sp_xrealloc(t->r, t->cap * sizeof *t->r);
	}
	struct rec *r = &t->r[t->n++];
	memset(r, 0, sizeof *r);
	r->type = type;
	return r;
}

static void *dup_bytes(const void *p, size_t n)
{
	void *q = sp_xcalloc(1, n ? n : 1);
	if (n)
		memcpy(q, p, n);
	return q;
}

static void t_sample(void *ctx, const struct sp_perf_sample *s)
{
	struct tape *t = ctx;
	struct rec *r = tape_add(t, R_SAMPLE);
	r->s = *s;
	r->kernel = dup_bytes(s->kernel, s->nkernel * sizeof *s->kernel);
	r->user = dup_bytes(s->user, s->nuser * sizeof *s->user);
	r->stack = dup_bytes(s->stack, s->stack_len);
	t->live.sample(t->live.ctx, s);
}

static void t_comm(void *ctx, uint32_t pid, uint32_t tid, const char *comm, int exec, uint64_t time)
{
	struct tape *t = ctx;
	struct rec *r = tape_add(t, R_COMM);
	r->pid = pid, r->tid = tid, r->exec = exec, r->time = time;
	r->str = sp_xstrndup(comm, strlen(comm));
	t->live.comm(t->live.ctx, pid, tid, comm, exec, time);
}

static void t_mmap(void *ctx, uint32_t pid, uint32_t tid, const struct sp_map *m, uint64_t time)
{
	struct tape *t = ctx;
	struct rec *r = tape_add(t, R_MMAP);
	r->pid = pid, r->tid = tid, r->time = time, r->m = *m;
	r->str = sp_xstrndup(m->path, strlen(m->path));
	r->m.path = r->str;
	t->live.mmap(t->live.ctx, pid, tid, m, time);
}

static void t_fork(void *ctx, uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid, uint64_t time)
{
	struct tape *t = ctx;
	struct rec *r = tape_add(t, R_FORK);
	r->pid = pid, r->ppid = ppid, r->tid = tid, r->ptid = ptid, r->time = time;
	t->live.fork(t->live.ctx, pid, ppid, tid, ptid, time);
}

static void t_exit(void *ctx, uint32_t pid, uint32_t tid, uint64_t time)
{
	struct tape *t = ctx;
	struct rec *r = tape_add(t, R_EXIT);
	r->pid = pid, r->tid = tid, r->time = time;
	t->live.exit(t->live.ctx, pid, tid, time);
}

static void replay(const struct tape *t, const struct sp_perf_handler *h)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct rec *r = &t->r[i];
		switch (r->type) {
		case R_SAMPLE: {
			struct sp_perf_sample s = r->s;
			s.kernel = r->kernel;
			s.user = r->user;
			s.stack = r->stack;
			h->sample(h->ctx, &s);
			break;
		}
		case R_COMM: h->comm(h->ctx, r->pid, r->tid, r->str, r->exec, r->time); break;
		case R_MMAP: h->mmap(h->ctx, r->pid, r->tid, &r->m, r->time); break;
		case R_FORK: h->fork(h->ctx, r->pid, r->ppid, r->tid, r->ptid, r->time); break;
		case R_EXIT: h->exit(h->ctx, r->pid, r->tid, r->time); break;
		}
	}
}

static void tape_free(struct tape *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->r[i].kernel);
		free(t->r[i].user);
		free(t->r[i].stack);
		free(t->r[i].str);
	}
	free(t->r);
}

/* ---- engines into folded text ---- */

struct run {
	struct sp_profile *p;
	struct sp_fold *fold;
	struct sp_collect *c;
	struct sp_perf_handler h;
};

static int run_new(struct run *r, int offline, int (*locate)(void *, int, const struct sp_map *, char *, size_t))
{
	static const char *const values[] = { "samples", "period" };
	struct sp_fold_opts fo = { SP_LABEL_COMM, 1, 1, "samples", 0 };
	struct sp_collect_opts co = { .callgraph = SP_CG_DWARF, .offline = offline, .no_kallsyms = offline,
				      .locate = locate };
	struct sp_err err;
	r->p = sp_profile_new();
	sp_profile_set_values(r->p, 2, values);
	r->fold = sp_fold_new(r->p, &fo);
	r->c = sp_collect_new(r->p, sp_fold_sink(r->fold), &co, &err);
	if (!r->c)
		return -1;
	sp_collect_handler(r->c, &r->h);
	return 0;
}

static char *run_folded(struct run *r)
{
	char *text = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&text, &n);
	struct sp_err err;
	sp_fold_write(r->fold, f, &err);
	fclose(f);
	return text;
}

static void run_free(struct run *r)
{
	sp_collect_free(r->c);
	sp_fold_free(r->fold);
	sp_profile_free(r->p);
}

static int refuse_self(void *ctx, int pid, const struct sp_map *m, char *buf, size_t n)
{
	char self[4096];
	ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
	if (k > 0) {
		self[k] = 0;
		if (!strcmp(self, m->path))
			return 0;
	}
	if (m->path[0] != '/')
		return 0; /* the vdso: not needed for this test */
	snprintf(buf, n, "%s", m->path);
	return 1;
}

/* Samples under outer_fn;middle_fn;inner_fn, and all samples. */
static void count(const char *folded, const char *path, long *deep, long *all)
{
	*deep = *all = 0;
	for (const char *l = folded; l && *l;) {
		const char *e = strchr(l, '\n');
		size_t len = e ? (size_t)(e - l) : strlen(l);
		const char *sp = memrchr(l, ' ', len);
		long v = sp ? atol(sp + 1) : 0;
		*all += v;
		char *line = sp_xstrndup(l, len);
		if (strstr(line, path))
			*deep += v;
		free(line);
		l = e ? e + 1 : l + len;
	}
}

/* System-wide, a process whose mapping records were lost (a full ring): a
 * sampled address outside its known maps has them read again from /proc,
 * once a second of sample time. */
static void lost_mmap(void)
{
	static const char *const values[] = { "samples", "period" };
	struct sp_fold_opts fo = { SP_LABEL_COMM, 1, 1, "samples", 0 };
	struct sp_collect_opts co = { .callgraph = SP_CG_FP, .system_wide = 1 };
	struct sp_err err;
	struct sp_profile *p = sp_profile_new();
	sp_profile_set_values(p, 2, values);
	struct sp_fold *fold = sp_fold_new(p, &fo);
	struct sp_collect *c = sp_collect_new(p, sp_fold_sink(fold), &co, &err);
	CHECK(c != NULL, "collect -a: an engine");
	if (!c)
		return;
	struct sp_perf_handler h;
	sp_collect_handler(c, &h);
	uint32_t pid = (uint32_t)getpid();
	/* an exec: the new image's mappings are to come as records, and do not */
	h.comm(h.ctx, pid, pid, "test_collect", 1, 1000);
	uint64_t user[2] = { (uint64_t)(uintptr_t)&middle_fn + 1, (uint64_t)(uintptr_t)&outer_fn + 1 };
	struct sp_perf_sample smp = { .pid = pid, .tid = pid, .time = 5000000000ull, .period = 1, .ip = user[0],
				      .user = user, .nuser = 2 };
	h.sample(h.ctx, &smp);
	smp.time += 1000; /* the same second: not read again */
	h.sample(h.ctx, &smp);
	char *text = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&text, &n);
	sp_fold_write(fold, f, &err);
	fclose(f);
	CHECK(text && strstr(text, "outer_fn;middle_fn 2"), "collect -a: an address outside the known maps is named "
	      "after /proc's maps are read again (%s)", text ? text : "");
	CHECK(sp_collect_stats(c)->maps_reread == 1, "collect -a: read again once in a second (%llu)",
	      (unsigned long long)sp_collect_stats(c)->maps_reread);
	free(text);
	sp_collect_free(c);
	sp_fold_free(fold);
	sp_profile_free(p);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	lost_mmap();
	int go[2];
	if (pipe(go) < 0)
		return 1;
	pid_t pid = fork();
	if (pid == 0) {
		char b;
		close(go[1]);
		prctl(PR_SET_NAME, "burner");
		if (read(go[0], &b, 1) != 1)
			_exit(1);
		burn(0.6);
		_exit(0);
	}
	close(go[0]);
	struct sp_perfev_opts po = { 499, SP_CG_DWARF, 16384, 0, 1 << 20, 0, 0, 0, 0 };
	struct sp_err err;
	memset(&err, 0, sizeof err);
	struct sp_perfev *ev = sp_perfev_new(&po, &err);
	if (!ev || sp_perfev_add_task(ev, pid, &err) != 0) {
		printf("skip - collect: live and offline engines # perf_event_open not usable here: %s\n", err.msg);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		sp_perfev_free(ev);
		return 0;
	}
	struct run live, off, refused;
	CHECK(run_new(&live, 0, NULL) == 0, "collect: a live engine");
	struct tape t;
	memset(&t, 0, sizeof t);
	t.live = live.h;
	struct sp_perf_handler th = { .ctx = &t, .sample = t_sample, .comm = t_comm, .mmap = t_mmap, .fork = t_fork, .exit = t_exit };
	/* What perf record synthesizes for a running process: its name and
	 * its executable mappings, as records. */
	t_comm(&t, (uint32_t)pid, (uint32_t)pid, "burner", 0, 0);
	struct sp_maps *maps = sp_maps_new();
	CHECK(sp_maps_load(maps, pid, 1, &err) == 0, "collect: the child's maps");
	for (size_t i = 0; i < sp_maps_count(maps); i++)
		t_mmap(&t, (uint32_t)pid, (uint32_t)pid, sp_maps_at(maps, i), 0);
	sp_maps_free(maps);
	sp_perfev_enable(ev);
	if (write(go[1], "x", 1) != 1)
		printf("# the child is gone already\n");
	close(go[1]);
	int status = 0;
	while (waitpid(pid, &status, WNOHANG) != pid) {
		sp_perfev_wait(ev, 50);
		sp_perfev_read(ev, &th, 0);
	}
	sp_perfev_disable(ev);
	sp_perfev_read(ev, &th, 1);
	sp_perfev_free(ev);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "collect: the child ran");

	/* The child is gone (reaped): nothing of it is left in /proc. */
	CHECK(kill(pid, 0) < 0 && errno == ESRCH, "collect: the child no longer exists for the offline run");
	CHECK(run_new(&off, 1, NULL) == 0, "collect: an offline engine");
	replay(&t, &off.h);
	char *a = run_folded(&live), *b = run_folded(&off);
	long deep, all, odeep, oall;
	count(a, "outer_fn;middle_fn;inner_fn", &deep, &all);
	count(b, "outer_fn;middle_fn;inner_fn", &odeep, &oall);
	if (getenv("SP_DEBUG"))
		printf("%s--\n%s", a, b);
	printf("# live: %ld of %ld samples under outer_fn;middle_fn;inner_fn; offline: %ld of %ld\n", deep, all, odeep,
	       oall);
	CHECK(all >= 50, "collect: the live engine wrote samples (>= 50)");
	CHECK(deep * 10 >= all * 8, "collect: >= 80%% of the live samples unwound through outer_fn;middle_fn;inner_fn");
	CHECK(a && b && !strcmp(a, b), "collect: offline replay gives the live engine's folded stacks exactly");
	CHECK(sp_collect_stats(off.c)->samples == sp_collect_stats(live.c)->samples,
	      "collect: offline and live count the same samples");

	CHECK(run_new(&refused, 1, refuse_self) == 0, "collect: an offline engine with a locate callback");
	replay(&t, &refused.h);
	char *c = run_folded(&refused);
	long rdeep, rall;
	count(c, "outer_fn", &rdeep, &rall);
	CHECK(rall == oall && rdeep == 0, "collect: a refused binary's frames are not named (no outer_fn)");
	if (getenv("SP_DEBUG"))
		printf("--refused\n%s", c);
	/* named by their module, as perf names a missing binary's frames */
	CHECK(c && strstr(c, ";[test_collect]"), "collect: a refused binary's frames are [test_collect]");

	struct sp_collect_opts bad = { .threads = "(" };
	struct sp_profile *p = sp_profile_new();
	CHECK(!sp_collect_new(p, NULL, &bad, &err) && strstr(err.msg, "-t '('"), "collect: a bad regex is an error");
	sp_profile_free(p);

	free(a);
	free(b);
	free(c);
	run_free(&live);
	run_free(&off);
	run_free(&refused);
	tape_free(&t);
	return failed;
}
