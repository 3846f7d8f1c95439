/* perf_data.h — reader of perf record's own file, perf.data.
 *
 * The format (linux tools/perf/Documentation/perf.data-file-format.txt):
 * in file mode a header with the magic "PERFILE2" points at the event
 * attributes, the data section (kernel and perf records) and the feature
 * sections after it (build ids, hostname, os release, cmdline, event
 * names).  In pipe mode (perf record -o -) a 16-byte header is followed by
 * records only: attributes and features come as HEADER_ATTR and
 * HEADER_FEATURE records, and the reader never seeks.
 *
 * The reader is registered as sp_format_perfdata (format.h).  Records are
 * delivered in time order the way perf does it: queued and flushed at each
 * FINISHED_ROUND up to the newest time of the round before.  Samples go
 * through an offline sampling engine: threads and their names from COMM
 * and FORK, maps from MMAP/MMAP2, frame-pointer callchains symbolised
 * directly, DWARF samples (user registers + a stack copy) unwound with
 * libdwfl, symbols from the binaries on disk when their build ids match
 * the recording (or from perf's ~/.debug build-id cache), kernel symbols
 * from /proc/kallsyms when the recording was made on the running kernel.
 */
#ifndef SP_PERF_DATA_H
#define SP_PERF_DATA_H

#include "format.h"

/* The score of a perf.data header at buf (file or pipe mode, either byte
 * order): 100, else 0. */
int sp_perfdata_probe(const char *buf, size_t n, int complete);

#endif
