/* heap.c — see heap.h.
 *
 * Why: psvg touches some 4 bytes of fresh memory per byte of folded input,
 * as arrays that double.  In 4 KiB pages that cost a third or more of its
 * time (4,900 page faults for a 5.8 MB file, the pages zeroed one by one,
 * TLB misses after); in 2 MiB pages a few hundred faults remain. */
#include "heap.h"

#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/mman.h>
#include <unistd.h>

void sp_heap_prepare(size_t want)
{
#if defined(M_TOP_PAD) && defined(M_MMAP_THRESHOLD) && defined(MADV_HUGEPAGE) /* glibc on Linux */
	const size_t huge = (size_t)2 << 20;
	if (want < 4 * huge)
		return;
	if (want > ((size_t)1 << 30))
		want = (size_t)1 << 30;
	mallopt(M_MMAP_THRESHOLD, 32 << 20); /* glibc's maximum */
	mallopt(M_TRIM_THRESHOLD, INT32_MAX);
	mallopt(M_TOP_PAD, (int)want);
	char *lo = sbrk(0);
	void *volatile grow = malloc(huge); /* sbrk by huge + want, all left free (volatile: kept) */
	free(grow);
	char *hi = sbrk(0);
	if (lo == (char *)-1 || hi == (char *)-1 || hi - lo < (ptrdiff_t)(2 * huge))
		return;
	uintptr_t a = ((uintptr_t)lo + huge - 1) & ~(uintptr_t)(huge - 1), b = (uintptr_t)hi & ~(uintptr_t)(huge - 1);
	if (b > a)
		madvise((void *)a, b - a, MADV_HUGEPAGE); /* advice: a failure costs only speed */
#else
	(void)want;
#endif
}


size_t sp_heap_input_bytes(char **files, int nfiles, size_t pipe_bytes)
{
	size_t n = 0;
	for (int i = 0; i < nfiles; i++) {
		struct stat st;
		if (strcmp(files[i], "-") ? stat(files[i], &st) == 0 && S_ISREG(st.st_mode)
					  : fstat(0, &st) == 0 && S_ISREG(st.st_mode))
			n += (size_t)st.st_size;
		else
			n += pipe_bytes;
	}
	return n;
}
