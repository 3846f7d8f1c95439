// t11-cxxfn.cpp — C++ names with parentheses inside template arguments:
// std::function<int (int, int)>::operator() calls a lambda that spins.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
static volatile unsigned long sink;
__attribute__((noinline)) static int spin(int a, int b)
{
	for (int i = 0; i < 200000; i++)
		sink += (unsigned long)(i * a + b);
	return (int)sink;
}
int main(int argc, char **argv)
{
	double d = argc > 1 ? atof(argv[1]) : 0.5;
	std::function<int(int, int)> f = [](int a, int b) { return spin(a, b); };
	auto t0 = std::chrono::steady_clock::now();
	int r = 0;
	while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < d)
		r += f(r & 7, 3);
	printf("%d\n", r);
	return 0;
}
