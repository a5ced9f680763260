/* SPDX-License-Identifier: MIT */
/* Replays every file of the given corpus directories (or the given
 * files, to reproduce one input) through the fuzz target, so that
 * `make check` runs the corpus without libFuzzer. */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Runs the target on the contents of @path; returns 1 if it was read. */
static int replay_file(const char *path)
{
	static uint8_t buf[70000];
	FILE *f = fopen(path, "rb");
	if (!f)
		return 0;
	size_t len = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	LLVMFuzzerTestOneInput(buf, len);
	return 1;
}

int main(int argc, char **argv)
{
	unsigned n = 0;
	for (int i = 1; i < argc; i++) {
		DIR *d = opendir(argv[i]);
		if (!d && errno == ENOTDIR) {
			n += (unsigned)replay_file(argv[i]);
			continue;
		}
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
			n += (unsigned)replay_file(path);
		}
		closedir(d);
	}
	printf("replayed %u inputs\n", n);
	return n ? 0 : 1;
}
