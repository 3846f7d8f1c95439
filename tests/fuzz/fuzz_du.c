/* libFuzzer target: the du reader, find -printf output (see fuzz_reader.h). */
#define FUZZ_FORMAT sp_format_du
#include "fuzz_reader.h"
