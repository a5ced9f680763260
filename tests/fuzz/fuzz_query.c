/* SPDX-License-Identifier: MIT */
/* libFuzzer target: any bytes as a query to query_process() against the
 * demo zone, over UDP and over TCP limits.  Built by `make fuzz`; the
 * corpus is replayed by `make check` through replay.c. */
#include "dns/query.h"
#include "dns/snapshot.h"
#include "common/conf.h"
#include "common/log.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <netinet/in.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static snapshot_t *snap;
static uint8_t out_buf[65535];

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

/* Invariants of every reply: within the buffer, a whole header, the
 * query's ID with QR set, and counts no larger than the bytes can hold. */
static void check(const uint8_t *in, size_t n, size_t cap)
{
	if (n == 0)
		return;
	if (n > cap || n < 12 || out_buf[0] != in[0] || out_buf[1] != in[1] ||
	    !(out_buf[2] & 0x80))
		abort();
	unsigned rrs = 0;
	for (int i = 6; i < 12; i += 2)
		rrs += (unsigned)(out_buf[i] << 8 | out_buf[i + 1]);
	if ((size_t)rrs * 11 > n) /* an RR takes at least 11 bytes */
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *out = out_buf;
	static qctx_t q;
	if (!snap)
		setup();
	struct sockaddr_in sin = { .sin_family = AF_INET };
	client_t udp = { (struct sockaddr *)&sin, 0 };
	client_t tcp = { (struct sockaddr *)&sin, 1 };
	q.snap = snap;
	size_t n = query_process(&q, &udp, data, size, out, 4096);
	check(data, n, 4096);
	/* Over UDP no reply exceeds udp-max-payload (or 512 without EDNS). */
	if (n > 512 && n > snap->udp_max_payload)
		abort();
	n = query_process(&q, &tcp, data, size, out, sizeof(out_buf));
	check(data, n, sizeof(out_buf));
	return 0;
}
