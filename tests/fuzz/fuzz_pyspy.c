/* libFuzzer target: the pyspy reader (see fuzz_reader.h). */
#define FUZZ_FORMAT sp_format_pyspy
#include "fuzz_reader.h"
