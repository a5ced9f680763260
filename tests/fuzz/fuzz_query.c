/* SPDX-License-Identifier: MIT */
/* libFuzzer target: any bytes as a query to query_process() against the
 * demo zone (or GSLB_FUZZ_CONF's zones), with a weight store and a
 * MaxMind DB, over UDP from an IPv4 resolver and over TCP from an IPv6
 * one, so that ECS, plans and picks are reached.  Built by `make fuzz`;
 * the corpus is replayed by `make check` through replay.c.
 *
 * The store and the database are built once, at the first input, in a
 * temporary directory that is removed at once: LMDB and libmaxminddb keep
 * their open files mapped, so nothing is left behind even by a crash. */
#include "common/conf.h"
#include "common/log.h"
#include "dns/query.h"
#include "dns/snapshot.h"
#include "gslb/geo.h"
#include "store/weightdb.h"
#include "../unit/store_fixture.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static snapshot_t *snap;
static weightdb_t *db;
static qctx_t q;
static uint8_t out_buf[65535];

static void die(const char *what, const char *err)
{
	fprintf(stderr, "fuzz: %s: %s\n", what, err);
	abort();
}

/* Replaces the snapshot's client location with one over the fixtures'
 * MaxMind DB, so that every configuration fuzzed gets the same GSLB
 * data.  Without perl's MaxMind writer the configuration's own geoip
 * section stays. */
static void fixture_geo(const char *dir)
{
	char err[1024], path[PATH_MAX + 16];
	if (fx_mmdb(dir, "test.mmdb", FX_GEO_SRC) ||
	    fx_write(dir, "geo.conf", "zones: []\ngeoip:\n  database: test.mmdb\n")) {
		fprintf(stderr, "fuzz: no fixture MaxMind DB; keeping the "
		        "configuration's geoip section\n");
		return;
	}
	snprintf(path, sizeof(path), "%s/geo.conf", dir);
	conf_t *c = conf_load(path, err, sizeof(err));
	if (!c)
		die(path, err);
	geo_t *g = geo_open(c, err, sizeof(err));
	if (!g)
		die(path, err);
	conf_free(c);
	geo_close(snap->geo);
	snap->geo = g;
}

static void setup(void)
{
	char err[1024], dir[PATH_MAX];
	const char *path = getenv("GSLB_FUZZ_CONF");
	log_set_level(GSLB_LOG_ERR);
	conf_t *c = conf_load(path ? path : "zones/gslbd.conf", err, sizeof(err));
	if (!c)
		die("configuration", err);
	unsigned failed;
	snap = snapshot_build(c, NULL, &failed, err, sizeof(err));
	if (!snap)
		die("snapshot", err);
	/* DNS Cookies as the daemon has them (on unless the configuration
	 * says otherwise, with a generated secret). */
	cookie_set_t *cs;
	if (cookie_load(c, &cs, err, sizeof(err)))
		die("cookies", err);
	cookie_publish(cs);
	q.cookies = cookie_mac_new();
	conf_free(c);

	if (fx_mkdtemp(dir, "fuzz"))
		die("mkdtemp", strerror(errno));
	fixture_geo(dir);
	db = fx_store(dir, FX_GSLB_JSON);
	if (!db)
		die("weight store", dir);
	q.wdb = wdb_reader_new(db);
	if (!q.wdb)
		die("weight store", "no reader");
	if (fx_rmrf(dir))
		die("cannot remove", dir);
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
	if (!snap)
		setup();
	/* The resolvers sit in networks of the fixture database, so that
	 * queries without ECS reach client rows too. */
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6 };
	inet_pton(AF_INET, "36.110.1.53", &sin.sin_addr);
	inet_pton(AF_INET6, "240e:e0::53", &sin6.sin6_addr);
	client_t udp = { (struct sockaddr *)&sin, 0 };
	client_t tcp = { (struct sockaddr *)&sin6, 1 };
	q.snap = snap;
	/* The same input always draws the same nodes. */
	q.now = 1700000000;
	q.rng = 1;
	size_t n = query_process(&q, &udp, data, size, out, 4096);
	wdb_reader_release(q.wdb);
	check(data, n, 4096);
	/* Over UDP no reply exceeds udp-max-payload (or 512 without EDNS). */
	if (n > 512 && n > snap->udp_max_payload)
		abort();
	n = query_process(&q, &tcp, data, size, out, sizeof(out_buf));
	wdb_reader_release(q.wdb);
	check(data, n, sizeof(out_buf));
	return 0;
}
