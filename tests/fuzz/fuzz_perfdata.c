/* fuzz_perfdata.c — the perf.data reader must never crash, hang or leak on
 * any input (file mode and pipe mode), and folding what it read must work.
 * Seeds: small recordings made here (tests/fuzz/corpus/perfdata). */
#define FUZZ_FORMAT sp_format_perfdata
#include "fuzz_reader.h"
