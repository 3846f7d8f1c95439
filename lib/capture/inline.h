/* inline.h — expand inlined frames from DWARF, in-process with libdw
 * (pfold --inline), instead of spawning addr2line per address.
 *
 * An sp_inline is a sink placed in front of another sink.  Frames whose
 * module is an ELF file on disk and whose name still carries perf's symbol
 * offset ("func+0x1f", as the perf reader leaves it when inline_frames is
 * set) are resolved: the symbol's address in the file plus the offset gives
 * a file address, whose DWARF scopes give the chain of inlined functions.
 * The frame is replaced by the real function (kind native) followed by the
 * functions inlined into it (kind inlined), outermost first.  Frames that
 * cannot be resolved keep their name with the offset stripped.  Results are
 * cached per frame id, so each distinct frame is resolved once.
 */
#ifndef SP_INLINE_H
#define SP_INLINE_H

#include "profile.h"

struct sp_inline;

struct sp_inline *sp_inline_new(struct sp_profile *p, struct sp_sink *down);
struct sp_sink *sp_inline_sink(struct sp_inline *in);
/* Reports modules that could not be opened (once each) through warn, if
 * set.  Returns 0. */
int sp_inline_finish(struct sp_inline *in, struct sp_err *err);
void sp_inline_free(struct sp_inline *in); /* NULL ok */

#endif
