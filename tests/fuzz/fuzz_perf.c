/* libFuzzer target: the perf reader (see fuzz_reader.h). */
#define FUZZ_FORMAT sp_format_perf
#include "fuzz_reader.h"
