/* libFuzzer target: the folded reader (see fuzz_reader.h). */
#define FUZZ_FORMAT sp_format_folded
#include "fuzz_reader.h"
