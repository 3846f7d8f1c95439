/* tracefs.c — shared uprobe definitions (see tracefs.h). */
#include "tracefs.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static const char *dir;   /* the tracefs in use, NULL before the first look */
static int looked, mounted, live;
static unsigned next_id;

static const char *find_dir(void)
{
	static const char *const dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char p[96];
	for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
		snprintf(p, sizeof p, "%s/uprobe_events", dirs[i]);
		if (access(p, W_OK) == 0)
			return dirs[i];
	}
	/* Not mounted: mount it for as long as our events live. */
	if (geteuid() == 0 && mount("nodev", dirs[0], "tracefs", 0, NULL) == 0) {
		snprintf(p, sizeof p, "%s/uprobe_events", dirs[0]);
		if (access(p, W_OK) == 0) {
			mounted = 1;
			return dirs[0];
		}
		umount2(dirs[0], MNT_DETACH);
	}
	return NULL;
}

static int append(const char *line)
{
	char p[96];
	snprintf(p, sizeof p, "%s/uprobe_events", dir);
	int fd = open(p, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t n = strlen(line);
	int rc = write(fd, line, n) == (ssize_t)n ? 0 : -1;
	close(fd);
	return rc;
}

/* Events of a pcollect that died without deleting them (its PID gone). */
static void sweep(void)
{
	char p[96], line[4096];
	snprintf(p, sizeof p, "%s/uprobe_events", dir);
	FILE *f = fopen(p, "re");
	char *gone = NULL;
	size_t ngone = 0;
	while (f && fgets(line, sizeof line, f)) {
		int pid;
		char ev[64];
		if (sscanf(line, "%*c:stackpipe_%d/%63[A-Za-z0-9_]", &pid, ev) != 2 || pid <= 0 ||
		    !(kill(pid, 0) < 0 && errno == ESRCH))
			continue;
		char del[128];
		int n = snprintf(del, sizeof del, "-:stackpipe_%d/%s\n", pid, ev);
		gone = realloc(gone, ngone + (size_t)n + 1);
		if (!gone)
			break;
		memcpy(gone + ngone, del, (size_t)n + 1);
		ngone += (size_t)n;
	}
	if (f)
		fclose(f);
	for (char *l = gone, *e; l && *l; l = e + 1) {
		e = strchr(l, '\n');
		*e = 0;
		append(l);
	}
	free(gone);
}

int sp_tracefs_uprobe_new(const char *path, uint64_t offset, int ret, char *name, size_t nname)
{
	/* tracefs splits its commands at white space */
	if (strpbrk(path, " \t\n") || strlen(path) > 3000)
		return -1;
	pthread_mutex_lock(&lock);
	if (!looked) {
		looked = 1;
		dir = find_dir();
		if (dir)
			sweep();
	}
	int id = -1;
	if (dir) {
		unsigned k = next_id++;
		snprintf(name, nname, "stackpipe_%d/%c%u", (int)getpid(), ret ? 'r' : 'p', k);
		char cmd[3200];
		snprintf(cmd, sizeof cmd, "%c:%s %s:0x%llx\n", ret ? 'r' : 'p', name, path, (unsigned long long)offset);
		if (append(cmd) == 0) {
			char p[160];
			snprintf(p, sizeof p, "%s/events/%s/id", dir, name);
			FILE *f = fopen(p, "re");
			if (!f || fscanf(f, "%d", &id) != 1)
				id = -1;
			if (f)
				fclose(f);
			if (id < 0) {
				snprintf(cmd, sizeof cmd, "-:%s\n", name);
				append(cmd);
			} else {
				live++;
			}
		}
	}
	pthread_mutex_unlock(&lock);
	return id;
}

void sp_tracefs_uprobe_del(const char *name)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "-:%s\n", name);
	pthread_mutex_lock(&lock);
	if (dir) {
		append(cmd);
		if (live && !--live && mounted && umount2(dir, MNT_DETACH) == 0) {
			mounted = 0;
			looked = 0;
			dir = NULL;
		}
	}
	pthread_mutex_unlock(&lock);
}

int sp_tracefs_uprobe_handoff(const char *name, char *file, size_t nfile, char *line, size_t nline)
{
	pthread_mutex_lock(&lock);
	int rc = -1;
	if (dir && !mounted) {
		snprintf(file, nfile, "%s/uprobe_events", dir);
		snprintf(line, nline, "-:%s\n", name);
		live--;
		rc = 0;
	}
	pthread_mutex_unlock(&lock);
	return rc;
}
