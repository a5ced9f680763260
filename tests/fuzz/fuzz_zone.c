/* SPDX-License-Identifier: MIT */
/* libFuzzer target: any bytes as the master file of zone
 * cdn.example.test, loaded with zone_load() and, when it loads, looked up
 * at every name it holds.  Built by `make fuzz`; the corpus
 * (tests/fuzz/corpus-zone) is replayed by `make check` through replay.c.
 *
 * The loader reads files, so each input is written to "zone" in a
 * temporary directory made at the first input, next to "inc.zone" for
 * $INCLUDE; the directory is removed at exit. */
#include "common/log.h"
#include "common/util.h"
#include "dns/zone.h"
#include "../unit/store_fixture.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[PATH_MAX];
static char file[PATH_MAX + 16];
static uint8_t apex[DNAME_MAXLEN + 1];

static void cleanup(void)
{
	if (dir[0])
		fx_rmrf(dir);
}

static void setup(void)
{
	log_set_level(GSLB_LOG_ERR);
	if (fx_mkdtemp(dir, "fuzz-zone")) {
		fprintf(stderr, "fuzz: mkdtemp: %s\n", strerror(errno));
		abort();
	}
	atexit(cleanup);
	snprintf(file, sizeof(file), "%s/zone", dir);
	if (fx_write(dir, "inc.zone", "inc 300 IN A 192.0.2.7\n"
	             "inc IN TXT \"included\"\n") ||
	    !dname_from_str("cdn.example.test", apex))
		abort();
}

/* Whether the input may include files outside the directory: the
 * loader follows $INCLUDE, and "$INCLUDE /dev/zero" would only measure
 * the disk. */
static int leaves_dir(const uint8_t *data, size_t size)
{
	return memmem(data, size, "$INCLUDE", 8) && memchr(data, '/', size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!dir[0])
		setup();
	if (leaves_dir(data, size))
		return 0;
	FILE *f = fopen(file, "wb");
	if (!f || fwrite(data, 1, size, f) != size || fclose(f))
		abort();
	char err[1024];
	zone_t *z = zone_load(apex, file, err, sizeof(err));
	if (!z)
		return 0;
	/* Every node of the table is found again by its own name. */
	size_t seen = 0;
	for (uint32_t i = 0; i <= z->mask; i++)
		for (const znode_t *n = z->table[i]; n; n = n->next, seen++) {
			size_t len = dname_len(n->name, DNAME_MAXLEN + 1);
			if (len != n->namelen ||
			    zone_find(z, n->name, len, dname_hash(n->name)) != n)
				abort();
			for (uint16_t k = 0; k < n->nrrsets; k++)
				if (znode_rrset(n, n->rrsets[k].type) == NULL)
					abort();
		}
	if (seen != z->nnodes || !z->soa)
		abort();
	zone_free(z);
	return 0;
}
