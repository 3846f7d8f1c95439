/* unit.h — the unit tests' one harness: each check prints "ok - NAME" or
 * "not ok - NAME (file:line)"; main returns `failed`.  NAME is a printf
 * format with its arguments. */
#ifndef SP_UNIT_H
#define SP_UNIT_H
#include <stdarg.h>
#include <stdio.h>

static int failed;

__attribute__((format(printf, 4, 5), unused)) static void unit_check(int ok, const char *file, int line,
								       const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs(ok ? "ok - " : "not ok - ", stdout);
	vprintf(fmt, ap);
	va_end(ap);
	if (ok)
		putchar('\n');
	else
		printf(" (%s:%d)\n", file, line);
	if (!ok)
		failed = 1;
}

#define CHECK(cond, ...) unit_check(!!(cond), __FILE__, __LINE__, __VA_ARGS__)
#endif
