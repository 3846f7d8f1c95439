/* heap.h — one process-wide setting of the allocator for a command about to
 * build large arrays. */
#ifndef SP_HEAP_H
#define SP_HEAP_H

#include <stddef.h>

/* Prepare the heap for about want bytes of arrays that grow by doubling:
 * large blocks stay on the heap (no mmap per array, no munmap when one
 * moves), freed memory is kept for reuse, and the next want bytes of heap
 * are grown at once and marked MADV_HUGEPAGE, so the kernel backs them with
 * 2 MiB pages when it can.  Only speed depends on it: where the advice is
 * refused (or under a sanitizer's allocator) nothing else changes.  Below
 * 8 MiB nothing is done.  Call it once, before the big allocations. */
void sp_heap_prepare(size_t want);

/* The bytes of the input files ("-": standard input), a file that is not a
 * regular file (a pipe) counting as pipe_bytes: what a command sizes its
 * sp_heap_prepare by. */
size_t sp_heap_input_bytes(char **files, int nfiles, size_t pipe_bytes);

#endif
