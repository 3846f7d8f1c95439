/* perf.h — extras of the perf script reader used by pfold's parallel path. */
#ifndef SP_PERF_H
#define SP_PERF_H

#include "util.h"

/* The event name of the first sample in buf (perf script text), copied into
 * out; NULL when there is none. */
const char *sp_perf_first_event(const char *buf, size_t n, struct sp_buf *out);

#endif
