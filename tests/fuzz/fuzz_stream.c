/* libFuzzer target: the binary stream reader must never crash, hang or leak
 * on any bytes; what it reads is folded and written again as a stream. */
#include <stdint.h>
#include <stdio.h>

#include "fold.h"
#include "stream.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sp_input *in = sp_input_mem(data, size, "fuzz");
	struct sp_profile *p = sp_profile_new();
	struct sp_fold_opts fo = { .label = SP_LABEL_TID, .annotate_kernel = 1 };
	struct sp_fold *f = sp_fold_new(p, &fo);
	struct sp_err err;
	if (sp_stream_read(in, p, sp_fold_sink(f), &err) == 0) {
		FILE *out = fopen("/dev/null", "w");
		if (out) {
			sp_fold_write(f, out, &err);
			fclose(out);
		}
	}
	sp_fold_free(f);
	sp_profile_free(p);
	sp_input_close(in);
	return 0;
}
