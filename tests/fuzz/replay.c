/*
 * replay — runs a fuzz target over files and directories of inputs without libFuzzer,
 * so `make check` replays the corpus (every malformed file, sample and plan) through
 * every loader with whatever compiler and sanitizers the build uses.
 */
#include "config.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fileio.h"
#include "fuzz.h"

static int replay_file(const char *path)
{
	struct err e = ERR_INIT;
	size_t len;
	char *data = fileio_read(path, &len, &e);

	if (!data) {
		fprintf(stderr, "replay: %s\n", e.msg);
		return -1;
	}
	LLVMFuzzerTestOneInput((const uint8_t *)data, len);
	free(data);
	return 0;
}

int main(int argc, char **argv)
{
	long n = 0;

	for (int i = 1; i < argc; i++) {
		struct stat st;
		DIR *dir;
		struct dirent *de;

		if (stat(argv[i], &st) != 0 || !S_ISDIR(st.st_mode)) {
			if (replay_file(argv[i]) < 0)
				return 1;
			n++;
			continue;
		}
		dir = opendir(argv[i]);
		if (!dir)
			return 1;
		while ((de = readdir(dir))) {
			char p[4096];

			if (de->d_name[0] == '.')
				continue;
			snprintf(p, sizeof(p), "%s/%s", argv[i], de->d_name);
			if (stat(p, &st) == 0 && S_ISREG(st.st_mode)) {
				if (replay_file(p) < 0) {
					closedir(dir);
					return 1;
				}
				n++;
			}
		}
		closedir(dir);
	}
	printf("replayed %ld inputs\n", n);
	return 0;
}
