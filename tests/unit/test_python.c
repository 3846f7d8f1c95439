/* Unit tests of the CPython reader (lib/python/python.h) on real interpreters:
 * for each installed CPython 3.8 to 3.13 (pyenv's) and Debian's
 * /usr/bin/python3, a child blocked in os.read on a pipe, three calls
 * deep: its main thread's frames must read exactly h:3, g:5, f:7,
 * <module>:9 (a blocked thread does not move, so the read is exact), with
 * the entry marks of one C-level eval call; with lines off, line 0.  Then
 * the reader after the child died: -1, no crash.  A process that is not
 * Python: no reader, nothing to say.  Interpreters that are not installed
 * get a skip line with the reason. */
#include <fcntl.h>
#include <glob.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "procmaps.h"
#include "profile.h"
#include "python.h"

#include "unit.h"

static const char prog[] = "import os\n"
			   "def h():\n"
			   "    return os.read(0, 1)\n"
			   "def g():\n"
			   "    return h()\n"
			   "def f():\n"
			   "    return g()\n"
			   "print('ready', flush=True)\n"
			   "f()\n";

/* Start python on prog, blocked in read(2) of its stdin (*in: the write
 * end): ready once /proc/PID/syscall shows read (0) on fd 0. */
static pid_t start(const char *py, const char *script, int *in)
{
	int a[2];
	if (pipe(a) < 0)
		return -1;
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(a[0], 0);
		close(a[1]);
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 1);
		execl(py, py, script, (char *)NULL);
		_exit(127);
	}
	close(a[0]);
	*in = a[1];
	char path[64], buf[64];
	snprintf(path, sizeof path, "/proc/%d/syscall", (int)pid);
	for (int i = 0; i < 500; i++) {
		FILE *f = fopen(path, "r");
		size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
		if (f)
			fclose(f);
		buf[n] = 0;
		if (!strncmp(buf, "0 0x0 ", 6))
			return pid;
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(a[1]);
	return -1;
}

static void one(const char *label, const char *py, const char *script)
{
	int in;
	pid_t pid = start(py, script, &in);
	if (pid < 0) {
		CHECK(0, "%s: start %s", label, py);
		return;
	}
	struct sp_profile *p = sp_profile_new();
	struct sp_maps *m = sp_maps_new();
	struct sp_err err;
	memset(&err, 0, sizeof err);
	enum sp_python_state st;
	struct sp_python *r = NULL;
	if (sp_maps_load(m, pid, 1, &err) == 0)
		r = sp_python_open(p, pid, m, 1, &st, &err);
	CHECK(r && st == SP_PY_READY, "%s: CPython found and its layout validates (%s; state %d, %zu maps)", label,
	      r ? sp_python_version(r) : err.msg, (int)st, sp_maps_count(m));
	CHECK(sp_python_in_maps(m), "%s: sp_python_in_maps says Python (pcollect's wakeup each, issue 35)", label);
	if (r) {
		uint32_t fr[64];
		uint8_t en[64];
		int n = sp_python_stack(r, pid, NULL, fr, en, 64);
		char got[512] = "";
		size_t o = 0;
		for (int i = 0; i < n && o < sizeof got - 64; i++) {
			const struct sp_frame *f = sp_frame_get(p, fr[i]);
			o += (size_t)snprintf(got + o, sizeof got - o, "%s%s:%u%s", i ? " " : "", sp_str(p, f->name),
					      f->line, en[i] ? "*" : "");
		}
		/* before 3.11 every Python call is a C-level call of the eval loop */
		const char *want = strstr(label, "3.8") || strstr(label, "3.9") || strstr(label, "3.10")
					   ? "h:3* g:5* f:7* <module>:9*"
					   : "h:3 g:5 f:7 <module>:9*";
		CHECK(!strcmp(got, want), "%s: blocked thread reads %s (got '%s')", label, want, got);
		/* the script's folder is sys.path[0]: its name alone */
		const struct sp_frame *f = n > 0 ? sp_frame_get(p, fr[0]) : NULL;
		const char *base = strrchr(script, '/') ? strrchr(script, '/') + 1 : script;
		CHECK(f && f->kind == SP_KIND_PYTHON && !strcmp(sp_str(p, f->file), base),
		      "%s: frames are of kind python, file = the script relative to sys.path ('%s', got '%s')", label,
		      base, f ? sp_str(p, f->file) : "");
		/* a second read comes from the caches: the same frame ids */
		uint32_t fr2[64];
		int n2 = sp_python_stack(r, pid, NULL, fr2, en, 64);
		CHECK(n2 == n && !memcmp(fr, fr2, (size_t)n * sizeof *fr), "%s: a second read gives the same frames",
		      label);
		CHECK(sp_python_stack(r, 1, NULL, fr, en, 64) == 0, "%s: a thread id of another process: no frames",
		      label);
		struct sp_profile *p2 = sp_profile_new();
		struct sp_python *r2 = sp_python_open(p2, pid, m, 0, &st, &err);
		int n3 = r2 ? sp_python_stack(r2, pid, NULL, fr, en, 64) : -2;
		CHECK(n3 == 4 && sp_frame_get(p2, fr[0])->line == 0, "%s: lines off: line 0", label);
		sp_python_free(r2);
		sp_profile_free(p2);
	}
	close(in);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	if (r) {
		uint32_t fr[8];
		uint8_t en[8];
		int n = sp_python_stack(r, pid, NULL, fr, en, 8);
		CHECK(n <= 0, "%s: the process died: no frames, no crash (%d)", label, n);
	}
	sp_python_free(r);
	sp_maps_free(m);
	sp_profile_free(p);
}

int main(void)
{
	char script[] = "/tmp/test_python_XXXXXX.py";
	int fd = mkstemps(script, 3);
	if (fd < 0 || write(fd, prog, sizeof prog - 1) != (ssize_t)(sizeof prog - 1)) {
		printf("not ok - write the test script\n");
		return 1;
	}
	close(fd);
	const char *root = getenv("PYENV_ROOT");
	char pat[512];
	static const char *const mins[] = { "3.8", "3.9", "3.10", "3.11", "3.12", "3.13" };
	for (int i = 0; i < 6; i++) {
		snprintf(pat, sizeof pat, "%s/versions/%s.*/bin/python3", root ? root : "/root/.pyenv", mins[i]);
		glob_t g;
		if (glob(pat, 0, NULL, &g) == 0 && g.gl_pathc) {
			one(mins[i], g.gl_pathv[g.gl_pathc - 1], script);
			globfree(&g);
		} else {
			printf("skip - python %s # not installed (%s)\n", mins[i], pat);
		}
	}
	if (access("/usr/bin/python3.11", X_OK) == 0)
		one("debian 3.11", "/usr/bin/python3.11", script);
	else
		printf("skip - debian python3 # /usr/bin/python3.11 is not installed\n");
	unlink(script);

	/* Not Python: sleep(1). */
	pid_t pid = fork();
	if (pid == 0) {
		execl("/bin/sleep", "sleep", "5", (char *)NULL);
		_exit(127);
	}
	usleep(100000);
	struct sp_profile *p = sp_profile_new();
	struct sp_maps *m = sp_maps_new();
	struct sp_err err;
	memset(&err, 0, sizeof err);
	enum sp_python_state st = SP_PY_READY;
	struct sp_python *r = NULL;
	if (sp_maps_load(m, pid, 1, &err) == 0)
		r = sp_python_open(p, pid, m, 1, &st, &err);
	CHECK(!r && st == SP_PY_NOT, "not Python (sleep): no reader, state NOT");
	CHECK(!sp_python_in_maps(m), "not Python (sleep): sp_python_in_maps says no");
	CHECK(sp_python_named("python3") && sp_python_named("/usr/bin/python3.11") &&
	      !sp_python_named("/usr/bin/sleep") && !sp_python_named("/opt/python3/bin/node"),
	      "sp_python_named: python3, /usr/bin/python3.11 yes; sleep, /opt/python3/bin/node no");
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	sp_maps_free(m);
	sp_profile_free(p);
	return failed;
}
