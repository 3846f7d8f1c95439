// t014-tmpl.cpp — a template function whose name has '(' inside its
// template arguments ("apply<int (*)(int)>"), for t0140.
#include <cstdio>
#include <ctime>

static volatile unsigned long sink;

static int twice(int x) { return 2 * x; }

template <typename F> __attribute__((noinline)) void apply(F f, int n)
{
	for (int i = 0; i < n; i++)
		sink += (unsigned long)f(i);
}

int main()
{
	std::time_t end = std::time(nullptr) + 1;
	while (std::time(nullptr) < end)
		apply(twice, 100000);
	return 0;
}
