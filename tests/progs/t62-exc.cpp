// t62-exc.cpp — C++ target of t6220: exceptions thrown through a function
// that is traced (a return probe there would make the throw abort the
// program), and a method matched by its demangled name.  Prints
// "exc ok c=15 recv=N" when it ran to the end.
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace ns {
struct Conn {
	long got = 0;
	__attribute__((noinline)) long recv(long n);
};
long Conn::recv(long n)
{
	__asm__ volatile("" ::: "memory");
	got += n;
	return got;
}
} // namespace ns

__attribute__((noinline)) void thrower(int i)
{
	if (i % 2)
		throw std::runtime_error("odd");
}
__attribute__((noinline)) int middle(int i)
{
	thrower(i);
	__asm__ volatile("" ::: "memory");
	return i;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? std::atoi(argv[1]) : 10;
	int c = 0;
	for (int i = 0; i < n; i++) {
		try {
			c += middle(i);
		} catch (const std::exception &e) {
			c--;
		}
	}
	ns::Conn conn;
	for (int i = 0; i < n; i++)
		conn.recv(i);
	std::printf("exc ok c=%d recv=%d\n", c, n);
	return 0;
}
