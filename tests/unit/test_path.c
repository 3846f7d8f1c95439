/* test_path.c — sp_path_search (util.h) on made-up PATHs over a temporary
 * directory: a/tool not executable, b/tool and c/tool executable. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unit.h"
#include "util.h"

static char dir[] = "/tmp/sp-test-path-XXXXXX";

static void make(const char *sub, mode_t mode)
{
	char p[256];
	snprintf(p, sizeof p, "%s/%s", dir, sub);
	mkdir(p, 0700);
	snprintf(p, sizeof p, "%s/%s/tool", dir, sub);
	FILE *f = fopen(p, "w");
	if (f)
		fclose(f);
	chmod(p, mode);
}

static int is(char *got, const char *want)
{
	int ok = got && !strcmp(got, want);
	if (!ok)
		printf("# got %s, want %s\n", got ? got : "NULL", want);
	free(got);
	return ok;
}

int main(void)
{
	struct sp_err err;
	char path[512], want[256], cwd[256];
	if (!mkdtemp(dir) || !getcwd(cwd, sizeof cwd)) {
		printf("not ok - a temporary directory\n");
		return 1;
	}
	make("a", 0600);
	make("b", 0700);
	make("c", 0700);
	snprintf(path, sizeof path, "%s/a:%s/b:%s/c", dir, dir, dir);
	snprintf(want, sizeof want, "%s/b/tool", dir);
	CHECK(is(sp_path_search("tool", path, &err), want), "the first executable along PATH (a/tool is not)");
	snprintf(path, sizeof path, "%s/c:%s/b", dir, dir);
	snprintf(want, sizeof want, "%s/c/tool", dir);
	CHECK(is(sp_path_search("tool", path, &err), want), "PATH's order decides");
	snprintf(path, sizeof path, "%s/a", dir);
	CHECK(!sp_path_search("tool", path, &err) && !strcmp(err.msg, "tool: command not found"),
	      "not executable anywhere: NULL, \"tool: command not found\" (%s)", err.msg);
	CHECK(!sp_path_search("nothere", path, &err), "a name in no directory: NULL");
	CHECK(is(sp_path_search("./x/y", path, &err), "./x/y"), "a name with a '/': itself, unsearched");
	snprintf(want, sizeof want, "%s/b", dir);
	CHECK(chdir(want) == 0, "into b");
	snprintf(path, sizeof path, "%s/a:", dir);
	CHECK(is(sp_path_search("tool", path, &err), "./tool"), "an empty last entry is the current directory");
	snprintf(path, sizeof path, ":%s/c", dir);
	CHECK(is(sp_path_search("tool", path, &err), "./tool"), "an empty first entry: the same, before c");
	CHECK(!sp_path_search("tool", "/nonexistent-sp", &err), "a PATH of a missing directory: NULL");
	if (chdir(cwd) != 0)
		return 1;
	const char *sh = access("/usr/local/bin/sh", X_OK) == 0 ? "/usr/local/bin/sh"
			 : access("/usr/bin/sh", X_OK) == 0 ? "/usr/bin/sh" : "/bin/sh";
	CHECK(is(sp_path_search("sh", "", &err), sh), "an empty PATH searches /usr/local/bin:/usr/bin:/bin (%s)", sh);
	CHECK(is(sp_path_search("sh", NULL, &err), sh), "no PATH: the same");
	char rm[600];
	snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
	if (system(rm) != 0)
		return 1;
	return failed;
}
