/* stream.h — the stackpipe binary stream (spec: formats/stream.md,
 * stackpipe-stream(5)).
 *
 * Writer: streams records as samples arrive, defining strings, frames,
 * nodes and threads the first time a sample refers to them, so a reader can
 * consume the stream while it is being written.  sp_stream_writer_finish
 * writes the trailer (counts + xxh64 checksum).
 *
 * Reader: reads one stream, or several concatenated ones (their union), into
 * a profile, remapping each stream's ids to the profile's, and pushes samples
 * and trace events into a sink.  Errors are fatal and name the byte offset.
 */
#ifndef SP_STREAM_H
#define SP_STREAM_H

#include <stdio.h>

#include "format.h"

struct sp_stream_writer;

/* The writer reads ids from p and writes to out (not closed by the writer).
 * Metadata and value names present in p at the time of the first record are
 * written in the header; later sp_meta_add calls are written when the sink's
 * meta callback runs. */
struct sp_stream_writer *sp_stream_writer_new(FILE *out, struct sp_profile *p);
struct sp_sink *sp_stream_writer_sink(struct sp_stream_writer *w);
/* Flush buffered records to the FILE (and fflush it) so readers see them. */
int sp_stream_writer_flush(struct sp_stream_writer *w, struct sp_err *err);
/* Write the trailer and flush.  Returns 0 or -1 (write error). */
int sp_stream_writer_finish(struct sp_stream_writer *w, struct sp_err *err);
void sp_stream_writer_free(struct sp_stream_writer *w);
/* The distinct stacks of the samples written so far. */
uint64_t sp_stream_writer_stacks(const struct sp_stream_writer *w);

/* Read every stream in `in` (concatenated streams read as their union). */
int sp_stream_read(struct sp_input *in, struct sp_profile *p, struct sp_sink *sink,
		   struct sp_err *err);
/* The same with reading options (o may be NULL).  With o->partial, a
 * stream cut short (no trailer: a collector killed, a disk full) is not
 * refused: its complete records are used and one warning through o->warn
 * says where it was cut.  Corruption (a bad checksum, a malformed record)
 * is an error either way. */
struct sp_read_opts;
int sp_stream_read_opts(struct sp_input *in, struct sp_profile *p, struct sp_sink *sink,
			struct sp_read_opts *o, struct sp_err *err);

#endif
