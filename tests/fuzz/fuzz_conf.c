/* SPDX-License-Identifier: MIT */
/* libFuzzer target: any bytes as gslbd.conf, read as `gslbd --check`
 * reads it: conf_load(), then the health, cutover and dnstap sections and
 * the geoip section (maps, paths, the nets file, the MaxMind DB).  Built by
 * `make fuzz`; the corpus (tests/fuzz/corpus-conf) is replayed by
 * `make check` through replay.c.
 *
 * The loader reads files, so each input is written to "gslbd.conf" in a
 * temporary directory made at the first input, next to a MaxMind DB
 * ("demo.mmdb", a copy of geoip/demo.mmdb when it can be read) and a
 * nets file ("nets.txt") for the geoip section to name; the directory is
 * removed at exit. */
#include "common/conf.h"
#include "common/log.h"
#include "common/ytree.h"
#include "dns/dnstap.h"
#include "gslb/geo.h"
#include "health/health.h"
#include "../unit/store_fixture.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[PATH_MAX];
static char file[PATH_MAX + 16];

static void cleanup(void)
{
	if (dir[0])
		fx_rmrf(dir);
}

/* Copies geoip/demo.mmdb (from the source tree: $GSLB_SRCDIR or the
 * current directory) into the directory; without it the geoip section is
 * still parsed, and the database fails to open. */
static void copy_mmdb(void)
{
	const char *src = getenv("GSLB_SRCDIR");
	char from[PATH_MAX], to[PATH_MAX + 16];
	snprintf(from, sizeof(from), "%s/geoip/demo.mmdb",
	         src && *src ? src : ".");
	snprintf(to, sizeof(to), "%s/demo.mmdb", dir);
	FILE *in = fopen(from, "rb"), *out = in ? fopen(to, "wb") : NULL;
	char buf[8192];
	size_t n;
	while (out && (n = fread(buf, 1, sizeof(buf), in)) > 0)
		fwrite(buf, 1, n, out);
	if (out)
		fclose(out);
	if (in)
		fclose(in);
}

static void setup(void)
{
	log_set_level(GSLB_LOG_ERR);
	if (fx_mkdtemp(dir, "fuzz-conf")) {
		fprintf(stderr, "fuzz: mkdtemp: %s\n", strerror(errno));
		abort();
	}
	atexit(cleanup);
	snprintf(file, sizeof(file), "%s/gslbd.conf", dir);
	copy_mmdb();
	if (fx_write(dir, "nets.txt", "10.0.0.0/8 region=lan isp=*\n"
	             "2001:db8::/32 isp=doc\n"))
		abort();
}

/* Whether a geoip file name leads outside the directory: "/dev/zero" as
 * the nets file would only measure the disk. */
static int outside(const conf_t *c, const char *key)
{
	const ynode_t *s = c->root ? ynode_get(c->root, "geoip") : NULL;
	const ynode_t *v = s && s->kind == YNODE_MAP ? ynode_get(s, key) : NULL;
	return v && v->kind == YNODE_SCALAR && strchr(v->value, '/');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!dir[0])
		setup();
	FILE *f = fopen(file, "wb");
	if (!f || fwrite(data, 1, size, f) != size || fclose(f))
		abort();
	char err[1024];
	conf_t *c = conf_load(file, err, sizeof(err));
	if (!c)
		return 0;
	health_conf_t hc;
	health_conf_load(c, &hc, err, sizeof(err));
	dnstap_conf_t dc;
	if (dnstap_conf_load(c, &dc, err, sizeof(err)) == 0)
		dnstap_conf_clear(&dc);
	if (!outside(c, "nets") && !outside(c, "database")) {
		geo_t *g = geo_open(c, err, sizeof(err));
		geo_close(g);
	}
	conf_free(c);
	return 0;
}
