/* libFuzzer target: psvg --cp's palette map ("NAME->rgb(R,G,B)" lines).
 * sp_palette_read reads a path, so the input goes to a file in a private
 * directory (under /dev/shm when there is one).  What it accepts is written
 * back with sp_palette_write and must read again with no bad line. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "svg.h"

static char in_path[256], out_path[256];

static void setup(void)
{
	static char dir[64];
	if (*in_path)
		return;
	snprintf(dir, sizeof dir, "%s/sp-fuzz-palette.XXXXXX", access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
	if (!mkdtemp(dir))
		abort();
	snprintf(in_path, sizeof in_path, "%s/in", dir);
	snprintf(out_path, sizeof out_path, "%s/palette.map", dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	setup();
	FILE *fp = fopen(in_path, "w");
	if (!fp || fwrite(data, 1, size, fp) != size || fclose(fp) != 0)
		abort();
	struct sp_palette *pal = sp_palette_new();
	uint64_t bad = 0;
	struct sp_err err;
	if (sp_palette_read(pal, in_path, &bad, &err) == 0) {
		if (sp_palette_write(pal, out_path, &err) < 0)
			abort();
		struct sp_palette *again = sp_palette_new();
		uint64_t bad2 = 0;
		if (sp_palette_read(again, out_path, &bad2, &err) < 0 || bad2 != 0) {
			fprintf(stderr, "the palette written back does not read: %llu bad lines\n",
				(unsigned long long)bad2);
			abort();
		}
		sp_palette_free(again);
	}
	sp_palette_free(pal);
	return 0;
}
