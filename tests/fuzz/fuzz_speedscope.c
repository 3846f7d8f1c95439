/* libFuzzer target: the speedscope reader (see fuzz_reader.h). */
#define FUZZ_FORMAT sp_format_speedscope
#include "fuzz_reader.h"
