/* SPDX-License-Identifier: MIT */
/* Replays every file of the given corpus directories through the fuzz
 * target, so that `make check` runs the corpus without libFuzzer. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
	unsigned n = 0;
	for (int i = 1; i < argc; i++) {
		DIR *d = opendir(argv[i]);
		if (!d) {
			perror(argv[i]);
			return 1;
		}
		struct dirent *de;
		while ((de = readdir(d))) {
			if (de->d_name[0] == '.')
				continue;
			char path[4096];
			snprintf(path, sizeof(path), "%s/%s", argv[i], de->d_name);
			FILE *f = fopen(path, "rb");
			if (!f)
				continue;
			static uint8_t buf[70000];
			size_t len = fread(buf, 1, sizeof(buf), f);
			fclose(f);
			LLVMFuzzerTestOneInput(buf, len);
			n++;
		}
		closedir(d);
	}
	printf("replayed %u inputs\n", n);
	return n ? 0 : 1;
}
