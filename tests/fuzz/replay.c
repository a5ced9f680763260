/* SPDX-License-Identifier: MIT */
/* Replays every file of the given corpus directories (or the given
 * files, to reproduce one input) through the fuzz target, so that
 * `make check` runs the corpus without libFuzzer.
 *
 * With GSLB_FUZZ_MUTATE=N it then runs N inputs more, each a corpus
 * input changed by a few random edits (bytes flipped, set, inserted,
 * deleted, copied, or another input spliced in), from the seed
 * GSLB_FUZZ_SEED (default 1): a short fuzzing run without libFuzzer,
 * the same inputs for the same seed and corpus, so that a failure is
 * reproduced by running it again. */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_MAX_INPUT 70000
#define MAX_KEPT 4096

/* The inputs replayed, kept for the mutations. */
static uint8_t *kept[MAX_KEPT];
static size_t kept_len[MAX_KEPT];
static unsigned nkept;

/* Runs the target on the contents of @path; returns 1 if it was read. */
static int replay_file(const char *path)
{
	static uint8_t buf[FUZZ_MAX_INPUT];
	FILE *f = fopen(path, "rb");
	if (!f)
		return 0;
	size_t len = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	LLVMFuzzerTestOneInput(buf, len);
	if (nkept < MAX_KEPT && (kept[nkept] = malloc(len ? len : 1))) {
		memcpy(kept[nkept], buf, len);
		kept_len[nkept++] = len;
	}
	return 1;
}

static uint64_t rng;

/* xorshift64*: a fixed sequence for a seed. */
static uint64_t next(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 2685821657736338717ULL;
}

static size_t below(size_t n)
{
	return n ? (size_t)(next() % n) : 0;
}

/* Bytes that parsers treat specially. */
static const char special[] = "\n\r\0\"{}[]:,/%|*-=\\ 0123456789eE.+";

/* One random edit of @buf (@*len bytes of at most FUZZ_MAX_INPUT). */
static void edit(uint8_t *buf, size_t *len)
{
	size_t n = *len, at = below(n + 1), k = 1 + below(8);
	switch (below(7)) {
	case 0:   /* flip a bit */
		if (n)
			buf[below(n)] ^= (uint8_t)(1u << below(8));
		break;
	case 1:   /* set a byte to a special one */
		if (n)
			buf[below(n)] = (uint8_t)special[below(sizeof(special) - 1)];
		break;
	case 2:   /* insert random bytes */
		if (n + k <= FUZZ_MAX_INPUT) {
			memmove(buf + at + k, buf + at, n - at);
			for (size_t i = 0; i < k; i++)
				buf[at + i] = (uint8_t)(below(2) ? next() :
				              (uint64_t)special[below(sizeof(special) - 1)]);
			*len = n + k;
		}
		break;
	case 3:   /* delete bytes */
		if (at < n) {
			k = k > n - at ? n - at : k;
			memmove(buf + at, buf + at + k, n - at - k);
			*len = n - k;
		}
		break;
	case 4: { /* copy a chunk of itself elsewhere */
		uint8_t chunk[64];
		if (!n)
			break;
		size_t from = below(n), m = n - from;
		m = 1 + below(m < sizeof(chunk) ? m : sizeof(chunk));
		memcpy(chunk, buf + from, m);
		if (n + m <= FUZZ_MAX_INPUT) {
			memmove(buf + at + m, buf + at, n - at);
			memcpy(buf + at, chunk, m);
			*len = n + m;
		}
		break;
	}
	case 5: { /* splice in a part of another input */
		unsigned o = (unsigned)below(nkept);
		size_t from = below(kept_len[o]), m = kept_len[o] - from;
		m = m > 64 ? 1 + below(64) : m;
		if (at + m <= FUZZ_MAX_INPUT) {
			memcpy(buf + at, kept[o] + from, m);
			*len = at + m > n ? at + m : n;
		}
		break;
	}
	default:  /* truncate */
		*len = at;
		break;
	}
}

/* @count mutated inputs from the kept ones. */
static void mutate(unsigned long count)
{
	static uint8_t buf[FUZZ_MAX_INPUT];
	for (unsigned long i = 0; i < count && nkept; i++) {
		unsigned o = (unsigned)below(nkept);
		size_t len = kept_len[o];
		memcpy(buf, kept[o], len);
		for (size_t e = 1 + below(4); e; e--)
			edit(buf, &len);
		LLVMFuzzerTestOneInput(buf, len);
	}
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
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
		/* In name order: the same inputs kept in the same order
		 * for the mutations. */
		struct dirent *de;
		char **names = NULL;
		size_t nn = 0;
		while ((de = readdir(d))) {
			if (de->d_name[0] == '.')
				continue;
			names = realloc(names, (nn + 1) * sizeof(*names));
			names[nn++] = strdup(de->d_name);
		}
		closedir(d);
		if (nn)
			qsort(names, nn, sizeof(*names), by_name);
		for (size_t j = 0; j < nn; j++) {
			char path[4096];
			snprintf(path, sizeof(path), "%s/%s", argv[i], names[j]);
			n += (unsigned)replay_file(path);
			free(names[j]);
		}
		free(names);
	}
	printf("replayed %u inputs\n", n);
	const char *m = getenv("GSLB_FUZZ_MUTATE"), *seed = getenv("GSLB_FUZZ_SEED");
	unsigned long count = m ? strtoul(m, NULL, 10) : 0;
	if (count && n) {
		rng = seed && *seed ? strtoull(seed, NULL, 10) : 1;
		rng = rng ? rng : 1;
		printf("mutating %lu inputs from seed %llu\n", count, (unsigned long long)rng);
		fflush(stdout);
		mutate(count);
		printf("mutated %lu inputs\n", count);
	}
	for (unsigned j = 0; j < nkept; j++)
		free(kept[j]);
	return n ? 0 : 1;
}
