/* SPDX-License-Identifier: MIT */
/* libFuzzer target: any bytes as a query to query_process() against the
 * demo zone, over UDP and over TCP limits.  Built by `make fuzz`; the
 * corpus is replayed by `make check` through replay.c. */
#include "query.h"
#include "snapshot.h"
#include "conf.h"
#include "log.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <netinet/in.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static snapshot_t *snap;

static void setup(void)
{
	char err[1024];
	const char *path = getenv("GSLB_FUZZ_CONF");
	conf_t *c = conf_load(path ? path : "zones/gslbd.conf", err, sizeof(err));
	if (!c) {
		fprintf(stderr, "fuzz: %s\n", err);
		abort();
	}
	unsigned failed;
	log_set_level(GSLB_LOG_ERR);
	snap = snapshot_build(c, NULL, &failed, err, sizeof(err));
	if (!snap) {
		fprintf(stderr, "fuzz: %s\n", err);
		abort();
	}
	conf_free(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t out[65535];
	static qctx_t q;
	if (!snap)
		setup();
	struct sockaddr_in sin = { .sin_family = AF_INET };
	client_t udp = { (struct sockaddr *)&sin, 0 };
	client_t tcp = { (struct sockaddr *)&sin, 1 };
	q.snap = snap;
	size_t n = query_process(&q, &udp, data, size, out, 4096);
	if (n > 4096 || (n && n < 12))
		abort();
	n = query_process(&q, &tcp, data, size, out, sizeof(out));
	if (n > sizeof(out) || (n && n < 12))
		abort();
	return 0;
}
