/* fuzz_reader.h — one libFuzzer target per text reader: the reader must
 * never crash, hang or leak on any input, and folding what it read must
 * work too.  A target defines FUZZ_FORMAT (an sp_format) and includes this.
 * (Not a target itself: the Makefile builds the .c files of tests/fuzz only.) */
#include <stdint.h>
#include <stdio.h>

#include "fold.h"
#include "format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sp_input *in = sp_input_mem(data, size, "fuzz");
	struct sp_profile *p = sp_profile_new();
	struct sp_fold_opts fo = { .label = SP_LABEL_TID, .annotate_kernel = 1, .annotate_jit = 1 };
	struct sp_fold *f = sp_fold_new(p, &fo);
	struct sp_read_opts o = { .addrs = (size & 1) != 0 };
	struct sp_err err;
	if (FUZZ_FORMAT.read(in, p, sp_fold_sink(f), &o, &err) == 0) {
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
