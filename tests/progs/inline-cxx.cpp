// inline-cxx.cpp — C++ target of t0300-inline: perf prints the function
// demangled ("ns::spin<unsigned long>"), the ELF symbol table has it mangled.
#include <cstdlib>

namespace ns {
struct Acc {
	volatile unsigned long v = 0;
	inline __attribute__((always_inline)) void step(unsigned long i) { v += i * i; }
};
template <class T> __attribute__((noinline)) T spin(Acc &a, T n)
{
	for (T i = 0; i < n; i++)
		a.step(i);
	return a.v;
}
} // namespace ns

int main(int argc, char **argv)
{
	unsigned long reps = argc > 1 ? strtoul(argv[1], nullptr, 10) : 40;
	ns::Acc a;
	for (unsigned long k = 0; k < reps; k++)
		ns::spin<unsigned long>(a, 10000000);
	return 0;
}
