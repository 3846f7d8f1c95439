/* libFuzzer target: the cProfile/pstats reader (formats/cprofile.c) must
 * never crash, hang or leak on any bytes, both as a reader (stacks rebuilt
 * from caller edges, then folded) and as preport's table.  Seeds
 * (corpus/fuzz_cprofile): `python -m cProfile -o` of tests/progs/t53-calls.py
 * under Python 3.8 and 3.13, and a dict whose callers are call counts. */
#include <stdint.h>
#include <stdio.h>

#include "cprofile.h"
#include "fold.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sp_input *in = sp_input_mem(data, size, "fuzz");
	struct sp_profile *p = sp_profile_new();
	struct sp_fold_opts fo = { .label = SP_LABEL_TID };
	struct sp_fold *f = sp_fold_new(p, &fo);
	struct sp_read_opts o = { 0 };
	struct sp_err err;
	FILE *out = fopen("/dev/null", "w");
	if (sp_format_cprofile.read(in, p, sp_fold_sink(f), &o, &err) == 0 && out)
		sp_fold_write(f, out, &err);
	sp_input_close(in);
	in = sp_input_mem(data, size, "fuzz");
	struct sp_cprofile_report_opts ro = { size & 7, size & 1, (size & 2) != 0 };
	if (out)
		sp_cprofile_report(in, out, &ro, &err);
	if (out)
		fclose(out);
	sp_fold_free(f);
	sp_profile_free(p);
	sp_input_close(in);
	return 0;
}
