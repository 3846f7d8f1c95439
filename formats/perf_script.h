/* perf_script.h — extras of the perf script reader used by pfold's parallel path. */
#ifndef SP_PERF_SCRIPT_H
#define SP_PERF_SCRIPT_H

#include "util.h"

/* The event name of the first sample in buf (perf script text), copied into
 * out; NULL when there is none. */
const char *sp_perf_first_event(const char *buf, size_t n, struct sp_buf *out);

/* A function name of perf script tidied as stackcollapse-perf.pl does
 * (arguments dropped, ';' to ':', quotes dropped; Rust legacy names
 * repaired; with java, Java's leading 'L' of a class dropped), into out.
 * The perf.data reader names frames so too. */
void sp_perf_tidy_name(const char *f, size_t n, int java, struct sp_buf *out);

/* A perf script reader that keeps its caches across inputs: pfold's
 * parallel path feeds each worker's reader one chunk after another (whole
 * samples each).  p, sink and o are borrowed and must outlive the reader.
 * sp_perf_reader_feed reads in to its end and flushes the last sample;
 * returns 0 or -1 (err filled).  It does not call sink->end_input. */
struct sp_profile;
struct sp_sink;
struct sp_read_opts;
struct sp_input;
struct sp_perf_reader;
struct sp_perf_reader *sp_perf_reader_new(struct sp_profile *p, struct sp_sink *sink, struct sp_read_opts *o);
int sp_perf_reader_feed(struct sp_perf_reader *r, struct sp_input *in, struct sp_err *err);
void sp_perf_reader_free(struct sp_perf_reader *r);

#endif
