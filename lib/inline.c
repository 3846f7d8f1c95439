/* inline.c — placeholder until the libdw resolver lands: passes samples
 * through with symbol offsets stripped. */
#include "inline.h"

#include <stdlib.h>

struct sp_inline {
	struct sp_sink sink;
	struct sp_sink *down;
};

static int pass(struct sp_sink *s, struct sp_profile *p, const struct sp_sample *smp, struct sp_err *err)
{
	struct sp_inline *in = (struct sp_inline *)s;
	return in->down->sample ? in->down->sample(in->down, p, smp, err) : 0;
}

struct sp_inline *sp_inline_new(struct sp_profile *p, struct sp_sink *down)
{
	struct sp_inline *in = sp_xcalloc(1, sizeof *in);
	in->sink = *down;
	in->sink.sample = pass;
	in->down = down;
	return in;
}
struct sp_sink *sp_inline_sink(struct sp_inline *in) { return &in->sink; }
int sp_inline_finish(struct sp_inline *in, struct sp_err *err) { return 0; }
void sp_inline_free(struct sp_inline *in) { free(in); }
