/* pprof.h — pprof profiles (profile.proto, gzipped) in and out.
 *
 * Writer: a sink that aggregates samples by (stack, thread) and, at
 * sp_pprof_writer_finish, writes one gzipped profile.proto message: sample
 * types from the profile's value columns, one location per distinct frame,
 * functions (name, file), mappings (the frames' modules), per-sample labels
 * thread/tid/pid and "tag" (pmerge --tag's root frame), time_nanos and
 * duration_nanos from the sample times, period_type/period, and the
 * metadata as "key=value" comments.  Memory grows with the number of
 * distinct (stack, thread) pairs.
 *
 * Reader: sp_format_pprof (format.h), gzipped or not (sp_input unzips),
 * including Go's runtime/pprof profiles.  Errors name the byte offset of the
 * uncompressed protobuf.
 */
#ifndef SP_PPROF_H
#define SP_PPROF_H

#include <stdio.h>

#include "format.h"

struct sp_pprof_writer;

/* The writer reads ids from p and writes to out (not closed) at finish. */
struct sp_pprof_writer *sp_pprof_writer_new(FILE *out, struct sp_profile *p);
struct sp_sink *sp_pprof_writer_sink(struct sp_pprof_writer *w);
/* Encode, gzip and write the profile.  Returns 0 or -1 (write error). */
int sp_pprof_writer_finish(struct sp_pprof_writer *w, struct sp_err *err);
void sp_pprof_writer_free(struct sp_pprof_writer *w);

/* Read one pprof profile (o->value picks a sample type by index or name;
 * without it every type is read, the default one first unless it is the
 * "period" column, which folded output picks by name). */
int sp_pprof_read(struct sp_input *in, struct sp_profile *p, struct sp_sink *sink, struct sp_read_opts *o,
		  struct sp_err *err);

#endif
