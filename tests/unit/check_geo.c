/* SPDX-License-Identifier: MIT */
/* Client location: MaxMind DB paths and maps, the nets file, ECS scopes
 * and every geoip configuration error.
 *
 * The suite builds its own .mmdb at start with geoip/build-demo.pl (run
 * from the source tree, as tests/run.sh does; GSLB_SRCDIR overrides) in a
 * temporary directory, next to the configuration and nets files it
 * writes. */
#include "common/conf.h"
#include "gslb/geo.h"
#include "gslb/geo_int.h"
#include "unit.h"
#include "common/ytree.h"

#include <arpa/inet.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char g_dir[256];   /* short, so that paths built on it fit */

/* The test database.  36.110.128.0/17 splits 36.110.0.0/16, so both
 * halves come back as /17; 112.64.0.0/14 has an uppercase region to show
 * lowercasing; 203.0.113.0/24 has only an ASN. */
static const char g_src[] =
	"# test networks\n"
	"36.110.0.0/16      cn-bj    ctcc   4134   CN  BJ\n"
	"36.110.128.0/17    cn-tj    ctcc   4134   CN  TJ\n"
	"14.16.0.0/12       cn-gd    ctcc   4134   CN  GD\n"
	"120.196.0.0/14     cn-gd    cmcc   9808   CN  GD\n"
	"112.64.0.0/14      CN-SH    cucc   4837   CN  SH\n"
	"198.51.100.0/24    us-west  other  64500  US  CA\n"
	"203.0.113.0/24     -        -      64501\n"
	"2408:8400::/28     cn-gd    cucc   4837   CN  GD\n"
	"2001:db8:100::/40  us-west  other  64500  US  CA\n";

static void write_file(const char *name, const char *text)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/%s", g_dir, name);
	FILE *f = fopen(p, "w");
	ck_assert_msg(f != NULL, "cannot write %s", p);
	fputs(text, f);
	fclose(f);
}

static char g_gen_txt[PATH_MAX];

/* The next number of a fixed sequence (the generated database). */
static uint32_t gen_next(uint32_t *x)
{
	*x = *x * 1103515245u + 12345u;
	return *x >> 8;
}

/* Writes gen.txt (a build-demo.pl source of random networks, nested and
 * of every length) and gen.nets (random lines over the same space). */
static void write_generated(void)
{
	char p[PATH_MAX];
	snprintf(g_gen_txt, sizeof(g_gen_txt), "%s/gen.txt", g_dir);
	snprintf(p, sizeof(p), "%s/gen.nets", g_dir);
	FILE *f = fopen(g_gen_txt, "w"), *n = fopen(p, "w");
	ck_assert(f && n);
	static char seen[600][INET6_ADDRSTRLEN + 8];
	size_t nseen = 0;
	uint32_t x = 4242;
	for (int i = 0; i < 3000; i++) {
		FILE *o = i % 5 == 4 ? n : f;
		unsigned r = gen_next(&x) % 40, s = gen_next(&x) % 12;
		char net[INET6_ADDRSTRLEN + 8];
		if (i % 2) {
			unsigned len = 8 + gen_next(&x) % 25;
			uint32_t a = (gen_next(&x) << 8 ^ gen_next(&x)) % 0xe0000000u;
			a &= len ? ~0u << (32 - len) : 0;
			snprintf(net, sizeof(net), "%u.%u.%u.%u/%u", a >> 24, a >> 16 & 255,
			         a >> 8 & 255, a & 255, len);
		} else {
			unsigned len = 16 + gen_next(&x) % 113;
			uint8_t b[16] = { 0x20, 0x01, 0x0d, 0xb8 };
			for (int j = 4; j < 16; j++)  /* few bits: networks nest */
				b[j] = gen_next(&x) % 4 ? 0 : (uint8_t)gen_next(&x);
			if (len < 32)
				b[2] = b[3] = 0;
			for (unsigned k = len; k < 128; k++)
				b[k / 8] &= (uint8_t)~(0x80 >> (k % 8));
			char t[INET6_ADDRSTRLEN];
			inet_ntop(AF_INET6, b, t, sizeof(t));
			snprintf(net, sizeof(net), "%s/%u", t, len);
		}
		int dup = 0;
		for (size_t j = 0; o == n && j < nseen; j++)
			dup |= strcmp(seen[j], net) == 0;
		if (dup)
			continue;
		if (o == n && nseen < 600)
			strcpy(seen[nseen++], net);
		if (o == n)
			fprintf(n, "%s region=n%u%s\n", net, r, s < 6 ? " isp=x" : "");
		else
			fprintf(f, "%s r%u i%u %u\n", net, r, s, 64500 + s);
	}
	fclose(f);
	fclose(n);
}

static void setup(void)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(g_dir, sizeof(g_dir), "%s/gslbd-geo-XXXXXX",
	         tmp && *tmp ? tmp : "/tmp");
	ck_assert_msg(mkdtemp(g_dir) != NULL, "mkdtemp");
	write_file("test.txt", g_src);
	write_file("not.mmdb", "this is not a MaxMind DB\n");
	const char *src = getenv("GSLB_SRCDIR");
	char cmd[3 * PATH_MAX];
	snprintf(cmd, sizeof(cmd),
	         "perl %s/geoip/build-demo.pl %s/test.txt %s/test.mmdb",
	         src && *src ? src : ".", g_dir, g_dir);
	ck_assert_msg(system(cmd) == 0, "failed: %s", cmd);
	write_generated();
	snprintf(cmd, sizeof(cmd),
	         "perl %s/geoip/build-demo.pl %s/gen.txt %s/gen.mmdb",
	         src && *src ? src : ".", g_dir, g_dir);
	ck_assert_msg(system(cmd) == 0, "failed: %s", cmd);
}

static void teardown(void)
{
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g_dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", g_dir);
}

/* Writes gslbd.conf with @geoip as its geoip section (line 2 is
 * "geoip:", so the first key is on line 3) and loads it. */
static conf_t *load_conf(const char *geoip)
{
	char text[4096], err[512], p[PATH_MAX];
	snprintf(text, sizeof(text), "zones: []\n%s", geoip);
	write_file("gslbd.conf", text);
	snprintf(p, sizeof(p), "%s/gslbd.conf", g_dir);
	conf_t *c = conf_load(p, err, sizeof(err));
	ck_assert_msg(c != NULL, "conf_load: %s", err);
	return c;
}

static geo_t *open_geo(const char *geoip, conf_t **cp)
{
	char err[512];
	conf_t *c = load_conf(geoip);
	geo_t *g = geo_open(c, err, sizeof(err));
	ck_assert_msg(g != NULL, "geo_open: %s", err);
	*cp = c;
	return g;
}

static void close_geo(geo_t *g, conf_t *c)
{
	geo_close(g);
	conf_free(c);
}

static void look(const geo_t *g, const char *ip, geo_result_t *r)
{
	struct sockaddr_storage ss;
	memset(&ss, 0, sizeof(ss));
	struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
	if (inet_pton(AF_INET, ip, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
	} else {
		ck_assert_msg(inet_pton(AF_INET6, ip, &s6->sin6_addr) == 1,
		              "bad test address %s", ip);
		s6->sin6_family = AF_INET6;
	}
	memset(r, 0xa5, sizeof(*r));   /* every field must be written */
	r->want_network = 1;
	geo_source_t s = geo_lookup(g, (struct sockaddr *)&ss, r);
	ck_assert_int_eq(s, r->source);
	/* Without the network text, the compiled table answers: the same. */
	geo_result_t q;
	memset(&q, 0x5a, sizeof(q));
	q.want_network = 0;
	ck_assert_int_eq(geo_lookup(g, (struct sockaddr *)&ss, &q), s);
	ck_assert_msg(strcmp(q.region, r->region) == 0 && strcmp(q.isp, r->isp) == 0 &&
	              q.prefix_len == r->prefix_len && q.source == r->source,
	              "%s: compiled %s/%s/%u/%u, sources %s/%s/%u/%u", ip,
	              q.region, q.isp, q.prefix_len, q.source, r->region, r->isp,
	              r->prefix_len, r->source);
}

#define LOOK(g, ip, reg, isp_, len, src, net) do {                      \
		geo_result_t r_;                                        \
		look((g), (ip), &r_);                                   \
		ck_assert_msg(strcmp(r_.region, (reg)) == 0 &&          \
		              strcmp(r_.isp, (isp_)) == 0 &&            \
		              r_.prefix_len == (len) &&                 \
		              r_.source == (src) &&                     \
		              strcmp(r_.network, (net)) == 0,           \
		              "%s: got %s/%s len %u src %s net %s, "    \
		              "want %s/%s len %u src %s net %s", (ip),  \
		              r_.region, r_.isp, r_.prefix_len,         \
		              geo_source_str(r_.source), r_.network,    \
		              (reg), (isp_), (unsigned)(len),           \
		              geo_source_str(src), (net));              \
	} while (0)

/* geo_open must fail with an error starting "FILE:LINE: " and
 * containing @what; FILE is gslbd.conf unless @file is given. */
static void expect_err_in(conf_t *c, const char *file, int line,
                          const char *what)
{
	char err[512], want[PATH_MAX + 32];
	geo_t *g = geo_open(c, err, sizeof(err));
	ck_assert_msg(g == NULL, "geo_open accepted it");
	snprintf(want, sizeof(want), "%s:%d: ", file ? file : c->path, line);
	ck_assert_msg(strncmp(err, want, strlen(want)) == 0 &&
	              strstr(err, what) != NULL,
	              "got '%s', want '%s...%s'", err, want, what);
}

static void expect_err(const char *geoip, const char *file, int line,
                       const char *what)
{
	conf_t *c = load_conf(geoip);
	char path[PATH_MAX];
	if (file)
		snprintf(path, sizeof(path), "%s/%s", g_dir, file);
	expect_err_in(c, file ? path : NULL, line, what);
	conf_free(c);
}

/* A conf_t over a tree given as text, bypassing conf_load's own checks,
 * to reach the ones geo_open makes itself. */
static void expect_tree_err(const char *yaml, int line, const char *what)
{
	char err[512];
	conf_t c;
	memset(&c, 0, sizeof(c));
	c.path = "hand.conf";
	c.dir = g_dir;
	c.root = yaml_load_string(yaml, strlen(yaml), "hand.conf", err,
	                          sizeof(err));
	ck_assert_msg(c.root != NULL, "yaml: %s", err);
	expect_err_in(&c, NULL, line, what);
	ynode_free(c.root);
}

/* ---------------------------------------------------------- MMDB only */

START_TEST(mmdb_ipv4_default_paths)
{
	conf_t *c;
	geo_t *g = open_geo("geoip:\n  database: test.mmdb\n", &c);
	/* The /17 inside the /16 splits it: the netmask is the half's. */
	LOOK(g, "36.110.1.1", "cn-bj", "ctcc", 17, GEO_SRC_MMDB,
	     "36.110.0.0/17");
	LOOK(g, "36.110.200.1", "cn-tj", "ctcc", 17, GEO_SRC_MMDB,
	     "36.110.128.0/17");
	LOOK(g, "14.20.1.1", "cn-gd", "ctcc", 12, GEO_SRC_MMDB, "14.16.0.0/12");
	LOOK(g, "120.199.255.255", "cn-gd", "cmcc", 14, GEO_SRC_MMDB,
	     "120.196.0.0/14");
	/* Unmapped values are lowercased. */
	LOOK(g, "112.64.0.1", "cn-sh", "cucc", 14, GEO_SRC_MMDB,
	     "112.64.0.0/14");
	/* A record without the fields: "*" from the MMDB. */
	LOOK(g, "203.0.113.9", "*", "*", 24, GEO_SRC_MMDB, "203.0.113.0/24");
	ck_assert_int_eq(geo_use_ecs(g), 1);
	close_geo(g, c);
}
END_TEST

START_TEST(mmdb_ipv6_and_mapped)
{
	conf_t *c;
	geo_t *g = open_geo("geoip:\n  database: test.mmdb\n", &c);
	LOOK(g, "2408:8400::1", "cn-gd", "cucc", 28, GEO_SRC_MMDB,
	     "2408:8400::/28");
	LOOK(g, "2408:840f:ffff::1", "cn-gd", "cucc", 28, GEO_SRC_MMDB,
	     "2408:8400::/28");
	LOOK(g, "2001:db8:1ff:ffff::1", "us-west", "other", 40, GEO_SRC_MMDB,
	     "2001:db8:100::/40");
	/* IPv4-mapped: an IPv4 client, IPv4 prefix length and network. */
	LOOK(g, "::ffff:36.110.1.1", "cn-bj", "ctcc", 17, GEO_SRC_MMDB,
	     "36.110.0.0/17");
	LOOK(g, "::ffff:8.8.8.8", "*", "*", 6, GEO_SRC_NONE, "8.0.0.0/6");
	close_geo(g, c);
}
END_TEST

START_TEST(mmdb_unknown)
{
	conf_t *c;
	geo_t *g = open_geo("geoip:\n  database: test.mmdb\n", &c);
	/* Not in the database: the scope is the empty network's netmask
	 * (8.0.0.0/6 holds no record), never 0. */
	LOOK(g, "8.8.8.8", "*", "*", 6, GEO_SRC_NONE, "8.0.0.0/6");
	LOOK(g, "2a00::1", "*", "*", 5, GEO_SRC_NONE, "2800::/5");
	/* 36.111/16 sits next to 36.110/16. */
	LOOK(g, "36.111.0.1", "*", "*", 16, GEO_SRC_NONE, "36.111.0.0/16");
	close_geo(g, c);
}
END_TEST

START_TEST(no_geoip_section)
{
	conf_t *c = load_conf("");
	char err[256];
	geo_t *g = geo_open(c, err, sizeof(err));
	ck_assert_ptr_nonnull(g);
	/* The answer cannot depend on the client: scope 0. */
	LOOK(g, "36.110.1.1", "*", "*", 0, GEO_SRC_NONE, "0.0.0.0/0");
	LOOK(g, "2408:8400::1", "*", "*", 0, GEO_SRC_NONE, "::/0");
	ck_assert_int_eq(geo_use_ecs(g), 1);
	close_geo(g, c);

	/* An empty section is the same. */
	g = open_geo("geoip: {}\n", &c);
	LOOK(g, "36.110.1.1", "*", "*", 0, GEO_SRC_NONE, "0.0.0.0/0");
	close_geo(g, c);
}
END_TEST

START_TEST(custom_paths_and_maps)
{
	conf_t *c;
	geo_t *g = open_geo(
		"geoip:\n"
		"  database: test.mmdb\n"
		"  region: [ subdivisions, 0, iso_code ]\n"
		"  isp: [ autonomous_system_number ]\n"
		"  region-map: { BJ: cn-bj, GD: cn-gd, tj: CN-TJ }\n"
		"  isp-map: { \"4134\": ctcc, 9808: cmcc }\n", &c);
	LOOK(g, "36.110.1.1", "cn-bj", "ctcc", 17, GEO_SRC_MMDB,
	     "36.110.0.0/17");
	/* Map keys ignore case; map values are lowercased. */
	LOOK(g, "36.110.200.1", "cn-tj", "ctcc", 17, GEO_SRC_MMDB,
	     "36.110.128.0/17");
	LOOK(g, "120.196.0.1", "cn-gd", "cmcc", 14, GEO_SRC_MMDB,
	     "120.196.0.0/14");
	/* SH and 4837 are not in the maps: "*". */
	LOOK(g, "112.64.0.1", "*", "*", 14, GEO_SRC_MMDB, "112.64.0.0/14");
	/* No subdivisions at all, ASN 64501 not mapped. */
	LOOK(g, "203.0.113.1", "*", "*", 24, GEO_SRC_MMDB, "203.0.113.0/24");
	LOOK(g, "2408:8400::1", "cn-gd", "*", 28, GEO_SRC_MMDB,
	     "2408:8400::/28");
	close_geo(g, c);
}
END_TEST

START_TEST(paths_without_maps)
{
	conf_t *c;
	geo_t *g = open_geo(
		"geoip:\n"
		"  database: test.mmdb\n"
		"  region: [ country, iso_code ]\n"
		"  isp: [ autonomous_system_number ]\n", &c);
	/* Integers are written in decimal, strings lowercased. */
	LOOK(g, "36.110.1.1", "cn", "4134", 17, GEO_SRC_MMDB, "36.110.0.0/17");
	LOOK(g, "203.0.113.1", "*", "64501", 24, GEO_SRC_MMDB,
	     "203.0.113.0/24");
	close_geo(g, c);

	/* A path that ends on a map, an array, or goes nowhere: "*". */
	g = open_geo(
		"geoip:\n"
		"  database: test.mmdb\n"
		"  region: [ country ]\n"
		"  isp: [ subdivisions, 5, iso_code ]\n", &c);
	LOOK(g, "36.110.1.1", "*", "*", 17, GEO_SRC_MMDB, "36.110.0.0/17");
	close_geo(g, c);
	g = open_geo(
		"geoip:\n"
		"  database: test.mmdb\n"
		"  region: [ subdivisions ]\n"
		"  isp: [ no, such, key ]\n", &c);
	LOOK(g, "36.110.1.1", "*", "*", 17, GEO_SRC_MMDB, "36.110.0.0/17");
	close_geo(g, c);
}
END_TEST

START_TEST(empty_map_gives_star)
{
	conf_t *c;
	geo_t *g = open_geo(
		"geoip:\n"
		"  database: test.mmdb\n"
		"  isp-map: {}\n", &c);
	LOOK(g, "36.110.1.1", "cn-bj", "*", 17, GEO_SRC_MMDB,
	     "36.110.0.0/17");
	close_geo(g, c);
}
END_TEST

/* ---------------------------------------------------------- nets file */

/* The names geo_names() gives, as " a b c " (each once, in the order
 * found). */
static void name_add(const char *name, void *arg)
{
	char *set = arg, key[GEO_NAME_MAX + 2];
	snprintf(key, sizeof(key), " %s ", name);
	if (!strstr(set, key))
		strcat(set, key + 1);
}

static const char *names_of(const geo_t *g, int isp, char *set)
{
	strcpy(set, " ");
	ck_assert_int_eq(geo_names(g, isp, name_add, set), 0);
	return set;
}

START_TEST(knows_names)
{
	conf_t *c;
	char set[1000];
	write_file("k.nets", "10.0.0.0/8 region=ten\n10.1.0.0/16 isp=one\n");
	/* Maps for both fields: what the records give through them. */
	geo_t *g = open_geo(
		"geoip:\n"
		"  database: test.mmdb\n"
		"  nets: k.nets\n"
		"  region: [ subdivisions, 0, iso_code ]\n"
		"  isp: [ autonomous_system_number ]\n"
		"  region-map: { BJ: cn-bj, GD: cn-gd, XX: never }\n"
		"  isp-map: { \"4134\": ctcc }\n", &c);
	names_of(g, 0, set);
	ck_assert_msg(strstr(set, " cn-bj ") && strstr(set, " cn-gd ") && strstr(set, " ten "),
	              "regions: %s", set);
	/* A map entry that no record reaches, an unmapped value. */
	ck_assert_msg(!strstr(set, " never ") && !strstr(set, " tj ") && !strstr(set, "*"),
	              "regions: %s", set);
	names_of(g, 1, set);
	ck_assert_msg(strstr(set, " ctcc ") && strstr(set, " one "), "isps: %s", set);
	ck_assert_msg(!strstr(set, " 9808 ") && !strstr(set, " cn-bj "), "isps: %s", set);
	close_geo(g, c);
	/* No map: every value of the database, lowercased, both families. */
	g = open_geo("geoip:\n  database: test.mmdb\n", &c);
	names_of(g, 0, set);
	ck_assert_msg(strstr(set, " cn-bj ") && strstr(set, " cn-tj ") && strstr(set, " cn-gd ") &&
	              strstr(set, " cn-sh ") && strstr(set, " us-west ") &&
	              strlen(set) == strlen(" cn-bj cn-tj cn-gd cn-sh us-west "),
	              "regions: %s", set);
	names_of(g, 1, set);
	ck_assert_msg(strstr(set, " ctcc ") && strstr(set, " cmcc ") && strstr(set, " cucc ") &&
	              strstr(set, " other "), "isps: %s", set);
	ck_assert_msg(!strstr(set, " cn-bjj "), "isps: %s", set);
	close_geo(g, c);
	/* Only a nets file, or nothing: what it lists, nothing else. */
	g = open_geo("geoip:\n  nets: k.nets\n", &c);
	ck_assert_str_eq(names_of(g, 0, set), " ten ");
	ck_assert_str_eq(names_of(g, 1, set), " one ");
	close_geo(g, c);
	g = open_geo("geoip: {}\n", &c);
	ck_assert_str_eq(names_of(g, 0, set), " ");
	close_geo(g, c);
}
END_TEST

static const char g_nets[] =
	"# operator overrides\n"
	"\n"
	"36.110.0.0/16 region=nets-bj isp=nets-ct\n"
	"36.110.7.0/24 region=cn-sh          # isp from the MMDB\n"
	"1.2.3.0/24\tisp=x\n"
	"   10.0.0.0/8 region=ten\n"
	"10.1.0.0/16 region=ten-one\n"
	"198.51.100.128/25 region=*\n"
	"2001:db8:100:5::/64 region=V6net isp=v6isp\n"
	"192.0.2.7 region=host\n";

START_TEST(nets_override)
{
	write_file("test.nets", g_nets);
	conf_t *c;
	geo_t *g = open_geo(
		"geoip:\n"
		"  database: test.mmdb\n"
		"  nets: test.nets\n", &c);
	/* The /24 below splits the /16: 36.110.0.0/22 holds no other line. */
	LOOK(g, "36.110.1.1", "nets-bj", "nets-ct", 22, GEO_SRC_NETS,
	     "36.110.0.0/22");
	/* Longest prefix; the ISP comes from the MMDB, the scope is the
	 * larger of the two (24 > 17). */
	LOOK(g, "36.110.7.9", "cn-sh", "ctcc", 24, GEO_SRC_NETS,
	     "36.110.7.0/24");
	/* The MMDB does not know 1.2.3.4: region "*". */
	LOOK(g, "1.2.3.4", "*", "x", 24, GEO_SRC_NETS, "1.2.3.0/24");
	LOOK(g, "10.1.2.3", "ten-one", "*", 16, GEO_SRC_NETS, "10.1.0.0/16");
	/* 10.2.0.0/15 is the largest block in 10/8 clear of 10.1/16. */
	LOOK(g, "10.2.3.4", "ten", "*", 15, GEO_SRC_NETS, "10.2.0.0/15");
	LOOK(g, "10.200.0.1", "ten", "*", 9, GEO_SRC_NETS, "10.128.0.0/9");
	/* "*" decides: the MMDB's us-west is not used. */
	LOOK(g, "198.51.100.200", "*", "other", 25, GEO_SRC_NETS,
	     "198.51.100.128/25");
	/* The other half is the MMDB's, but the scope covers the nets line
	 * next to it: /25, not the MMDB's /24. */
	LOOK(g, "198.51.100.1", "us-west", "other", 25, GEO_SRC_MMDB,
	     "198.51.100.0/25");
	LOOK(g, "192.0.2.7", "host", "*", 32, GEO_SRC_NETS, "192.0.2.7/32");
	LOOK(g, "::ffff:10.1.0.1", "ten-one", "*", 16, GEO_SRC_NETS,
	     "10.1.0.0/16");
	LOOK(g, "2001:db8:100:5:1::1", "v6net", "v6isp", 64, GEO_SRC_NETS,
	     "2001:db8:100:5::/64");
	/* Next to the /64: the MMDB's /40 record, scope 64. */
	LOOK(g, "2001:db8:100:4::1", "us-west", "other", 64, GEO_SRC_MMDB,
	     "2001:db8:100:4::/64");
	close_geo(g, c);
}
END_TEST

START_TEST(nets_only)
{
	write_file("test.nets", g_nets);
	conf_t *c;
	geo_t *g = open_geo("geoip:\n  nets: test.nets\n", &c);
	LOOK(g, "36.110.7.9", "cn-sh", "*", 24, GEO_SRC_NETS, "36.110.7.0/24");
	/* 8.0.0.0/7 holds no line (10/8 is next). */
	LOOK(g, "8.8.8.8", "*", "*", 7, GEO_SRC_NONE, "8.0.0.0/7");
	LOOK(g, "2a00::1", "*", "*", 5, GEO_SRC_NONE, "2800::/5");
	close_geo(g, c);

	/* IPv4 lines only: nothing is known about IPv6 clients. */
	write_file("v4.nets", "10.0.0.0/8 region=ten\n");
	g = open_geo("geoip:\n  nets: v4.nets\n", &c);
	LOOK(g, "10.9.9.9", "ten", "*", 8, GEO_SRC_NETS, "10.0.0.0/8");
	LOOK(g, "11.0.0.1", "*", "*", 8, GEO_SRC_NONE, "11.0.0.0/8");
	LOOK(g, "2001:db8::1", "*", "*", 0, GEO_SRC_NONE, "::/0");
	close_geo(g, c);

	/* An empty nets file is fine. */
	write_file("empty.nets", "# nothing yet\n\n");
	g = open_geo("geoip:\n  nets: empty.nets\n", &c);
	LOOK(g, "10.9.9.9", "*", "*", 0, GEO_SRC_NONE, "0.0.0.0/0");
	close_geo(g, c);
}
END_TEST

START_TEST(nets_default_route)
{
	write_file("all.nets", "0.0.0.0/0 region=world\n::/0 isp=any\n");
	conf_t *c;
	geo_t *g = open_geo("geoip:\n  nets: all.nets\n", &c);
	LOOK(g, "8.8.8.8", "world", "*", 0, GEO_SRC_NETS, "0.0.0.0/0");
	LOOK(g, "2a00::1", "*", "any", 0, GEO_SRC_NETS, "::/0");
	close_geo(g, c);
}
END_TEST

START_TEST(nets_bad_lines)
{
	static const struct {
		const char *text;
		int line;
		const char *what;
	} cases[] = {
		{ "# c\n\nbogus region=a\n", 3, "'bogus': not an IPv4 or IPv6" },
		{ "10.0.0.1/8 region=a\n", 1, "bits set beyond the prefix" },
		{ "10.0.0.0/33 region=a\n", 1, "prefix length must be 0 to 32" },
		{ "2001:db8::/129 isp=a\n", 1, "prefix length must be 0 to 128" },
		{ "10.0.0.0/ region=a\n", 1, "prefix length" },
		{ "10.0.0.0/8x region=a\n", 1, "prefix length" },
		{ "10.0.0.0/8 color=red\n", 1, "expected region=NAME or isp=NAME" },
		{ "10.0.0.0/8 cn-bj\n", 1, "'cn-bj': expected region=NAME" },
		{ "\n10.0.0.0/8\n", 2, "needs region=NAME, isp=NAME or both" },
		{ "10.0.0.0/8 # region=a\n", 1, "needs region=NAME" },
		{ "10.0.0.0/8 region=a region=b\n", 1, "region= is given twice" },
		{ "10.0.0.0/8 region=\n", 1, "region='' is not a name" },
		{ "10.0.0.0/8 isp=a/b\n", 1, "isp='a/b' is not a name" },
		{ "10.0.0.0/8 isp=abcdefghijabcdefghijabcdefghijab\n", 1,
		  "is not a name" },
		{ "1.0.0.0/8 region=a\n10.0.0.0/8 region=a\n\n\n"
		  "10.0.0.0/8 isp=b\n", 5, "10.0.0.0/8 is already given on line 2" },
		{ "2001:db8::/32 region=a\n2001:DB8::/32 isp=b\n", 2,
		  "2001:db8::/32 is already given on line 1" },
		{ "::ffff:1.2.3.0/120 region=a\n", 1, "IPv4-mapped" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		write_file("bad.nets", cases[i].text);
		expect_err("geoip:\n  database: test.mmdb\n  nets: bad.nets\n",
		           "bad.nets", cases[i].line, cases[i].what);
	}
}
END_TEST

/* ------------------------------------------------------------- options */

START_TEST(ecs_switch)
{
	conf_t *c;
	geo_t *g = open_geo("geoip:\n  edns-client-subnet: off\n", &c);
	ck_assert_int_eq(geo_use_ecs(g), 0);
	close_geo(g, c);
	g = open_geo("geoip:\n  edns-client-subnet: on\n", &c);
	ck_assert_int_eq(geo_use_ecs(g), 1);
	close_geo(g, c);
	g = open_geo("geoip:\n  edns-client-subnet: false\n", &c);
	ck_assert_int_eq(geo_use_ecs(g), 0);
	close_geo(g, c);
	expect_err("geoip:\n  edns-client-subnet: maybe\n", NULL, 3,
	           "edns-client-subnet must be on or off");
	expect_err("geoip:\n  edns-client-subnet: [ on ]\n", NULL, 3,
	           "edns-client-subnet must be on or off");
}
END_TEST

/* ---------------------------------------------------------- conf errors */

START_TEST(err_unknown_key)
{
	/* conf_load checks the key names too... */
	char err[512], p[PATH_MAX];
	write_file("gslbd.conf", "zones: []\ngeoip:\n  database: x\n  "
	           "regoin: [ region ]\n");
	snprintf(p, sizeof(p), "%s/gslbd.conf", g_dir);
	ck_assert_ptr_null(conf_load(p, err, sizeof(err)));
	ck_assert_msg(strstr(err, ":4: unknown key 'regoin'") != NULL, "%s", err);
	/* ... and so does geo_open, before it opens anything. */
	expect_tree_err("zones: []\ngeoip:\n  database: nope.mmdb\n"
	                "  regoin: [ region ]\n", 4,
	                "unknown key 'regoin' in geoip");
	expect_tree_err("geoip: [ database ]\n", 1, "geoip must be a map");
}
END_TEST

START_TEST(err_bad_path)
{
	expect_err("geoip:\n  region: region\n", NULL, 3,
	           "geoip.region must be a list of keys");
	expect_err("geoip:\n  database: test.mmdb\n  isp: { a: b }\n", NULL, 4,
	           "geoip.isp must be a list of keys");
	expect_err("geoip:\n  region: []\n", NULL, 3,
	           "geoip.region needs 1 to 16 keys, not 0");
	expect_err("geoip:\n  region: [ a, b, c, d, e, f, g, h, i, j, k, l, m, "
	           "n, o, p, q ]\n", NULL, 3, "needs 1 to 16 keys, not 17");
	expect_err("geoip:\n  region:\n    - subdivisions\n    - [ 0 ]\n", NULL,
	           5, "geoip.region: key 2 must be a map key or an array index, "
	           "not a list");
	expect_err("geoip:\n  isp: [ { a: b } ]\n", NULL, 3,
	           "key 1 must be a map key or an array index, not a map");
	expect_err("geoip:\n  isp: [ a, \"\" ]\n", NULL, 3, "not empty");
}
END_TEST

START_TEST(err_bad_map)
{
	expect_err("geoip:\n  region-map: [ BJ, cn-bj ]\n", NULL, 3,
	           "geoip.region-map must be a map");
	expect_err("geoip:\n  isp-map: ctcc\n", NULL, 3,
	           "geoip.isp-map must be a map");
	expect_err("geoip:\n  isp-map:\n    \"4134\": [ ctcc ]\n", NULL, 4,
	           "the value of '4134' must be a name");
	expect_err("geoip:\n  region-map: { BJ: \"cn bj\" }\n", NULL, 3,
	           "'cn bj' is not a name");
	expect_err("geoip:\n  region-map:\n    BJ: \"\"\n", NULL, 4,
	           "'' is not a name");
	expect_err("geoip:\n  region-map:\n    BJ: cn-bj\n    bj: cn-bj2\n",
	           NULL, 5, "'bj' is given twice");
}
END_TEST

START_TEST(err_database)
{
	char want[PATH_MAX + 64];
	snprintf(want, sizeof(want), "geoip.database %s/nope.mmdb: ", g_dir);
	expect_err("geoip:\n  nets: x\n  database: nope.mmdb\n", NULL, 4, want);
	expect_err("geoip:\n  database: nope.mmdb\n", NULL, 3,
	           "No such file or directory");
	expect_err("geoip:\n  database: not.mmdb\n", NULL, 3,
	           "geoip.database");
	expect_tree_err("geoip:\n  database: [ a ]\n", 2,
	                "geoip.database must be a file name");
}
END_TEST

START_TEST(err_nets_file)
{
	char want[PATH_MAX + 64];
	snprintf(want, sizeof(want), "geoip.nets %s/missing.nets: No such file",
	         g_dir);
	expect_err("geoip:\n  database: test.mmdb\n  nets: missing.nets\n", NULL,
	           4, want);
	expect_err("geoip:\n  nets: [ a ]\n", NULL, 3,
	           "geoip.nets must be a file name");
}
END_TEST

/* Many lookups, as a smoke test that the hot path is sane (and, under
 * the sanitizers, clean). */
START_TEST(many_lookups)
{
	write_file("test.nets", g_nets);
	conf_t *c;
	geo_t *g = open_geo(
		"geoip:\n"
		"  database: test.mmdb\n"
		"  nets: test.nets\n"
		"  isp: [ autonomous_system_number ]\n"
		"  isp-map: { \"4134\": ctcc, \"4837\": cucc }\n", &c);
	struct sockaddr_in s4;
	memset(&s4, 0, sizeof(s4));
	s4.sin_family = AF_INET;
	unsigned known = 0;
	for (uint32_t i = 0; i < 200000; i++) {
		geo_result_t r = { .want_network = 1 };
		s4.sin_addr.s_addr = htonl(i * 2654435761u);
		geo_lookup(g, (struct sockaddr *)&s4, &r);
		ck_assert(r.prefix_len <= 32);
		known += r.source != GEO_SRC_NONE;
	}
	ck_assert_uint_gt(known, 0);

	/* network is the address masked to prefix_len, as inet_ntop writes
	 * it; sparse random IPv6 addresses exercise every "::" placement. */
	struct sockaddr_in6 s6;
	memset(&s6, 0, sizeof(s6));
	s6.sin6_family = AF_INET6;
	uint32_t x = 12345;
	for (int i = 0; i < 20000; i++) {
		geo_result_t r = { .want_network = 1 };
		uint8_t *b = s6.sin6_addr.s6_addr;
		for (int j = 0; j < 16; j++) {
			x = x * 1103515245u + 12345u;
			b[j] = (x >> 16 & 3) ? 0 : (uint8_t)(x >> 8);
		}
		if (i % 3 == 0)
			memcpy(b, "\x20\x01\x0d\xb8\x01\x00\x00\x05", 8);
		/* Skip ::/80: IPv4-mapped addresses are checked elsewhere, and
		 * inet_ntop writes ::/96 as "::1.2.3.4" where we keep RFC
		 * 5952's hex. */
		if (!memcmp(b, "\0\0\0\0\0\0\0\0\0\0", 10))
			continue;
		geo_lookup(g, (struct sockaddr *)&s6, &r);
		uint8_t m[16] = { 0 };
		for (unsigned k = 0; k < r.prefix_len; k++)
			m[k / 8] |= b[k / 8] & (0x80 >> (k % 8));
		char want[64], ab[INET6_ADDRSTRLEN];
		inet_ntop(AF_INET6, m, ab, sizeof(ab));
		snprintf(want, sizeof(want), "%s/%u", ab, r.prefix_len);
		ck_assert_str_eq(r.network, want);
	}
	close_geo(g, c);
}
END_TEST

/* Compares the compiled table of @gc with the sources of @gs (the same
 * configuration with compile: off) at @ss. */
static void same_at(const geo_t *gc, const geo_t *gs, const struct sockaddr *ss)
{
	geo_result_t a = { .want_network = 0 }, b = { .want_network = 0 };
	geo_lookup(gc, ss, &a);
	geo_lookup(gs, ss, &b);
	if (strcmp(a.region, b.region) || strcmp(a.isp, b.isp) ||
	    a.prefix_len != b.prefix_len || a.source != b.source) {
		char t[INET6_ADDRSTRLEN];
		inet_ntop(ss->sa_family, ss->sa_family == AF_INET ?
		          (const void *)&((const struct sockaddr_in *)ss)->sin_addr :
		          (const void *)&((const struct sockaddr_in6 *)ss)->sin6_addr,
		          t, sizeof(t));
		ck_abort_msg("%s: compiled %s/%s/%u/%u, sources %s/%s/%u/%u", t,
		             a.region, a.isp, a.prefix_len, a.source, b.region,
		             b.isp, b.prefix_len, b.source);
	}
}

/* Sets @b (16 bytes) to the IPv6 address @hi:@lo. */
static void put6(uint8_t *b, uint64_t hi, uint64_t lo)
{
	for (int j = 0; j < 8; j++) {
		b[j] = (uint8_t)(hi >> (56 - 8 * j));
		b[8 + j] = (uint8_t)(lo >> (56 - 8 * j));
	}
}

/* Compares @gc and @gs at both sides of IPv6 start @hi:@lo. */
static void same_around6(const geo_t *gc, const geo_t *gs, uint64_t hi,
                         uint64_t lo)
{
	struct sockaddr_in6 s6 = { .sin6_family = AF_INET6 };
	for (int d = -1; d <= 1; d++) {
		uint64_t h = hi, nlo = lo + (uint64_t)(int64_t)d;
		if (d < 0 && lo == 0)
			h--;
		else if (d > 0 && nlo == 0)
			h++;
		put6(s6.sin6_addr.s6_addr, h, nlo);
		same_at(gc, gs, (struct sockaddr *)&s6);
	}
}

/* The compiled table @gc gives what the sources @gs give on both sides
 * of every range start (the fine IPv6 ones too), and at @nrand random
 * addresses of each family (IPv6 ones sparse, or inside @pfx6, 8 bytes,
 * one in three). */
static void same_everywhere(const geo_t *gc, const geo_t *gs, int nrand,
                            const char *pfx6)
{
	struct sockaddr_in s4 = { .sin_family = AF_INET };
	for (uint32_t i = 0; i < (uint32_t)nrand; i++) {
		s4.sin_addr.s_addr = htonl(i * 2654435761u);
		same_at(gc, gs, (struct sockaddr *)&s4);
	}
	const geo_ctable_t *t4 = &gc->ct[0], *t6 = &gc->ct[1];
	for (size_t i = 0; i < t4->n; i++)
		for (int d = -1; d <= 1; d++) {
			s4.sin_addr.s_addr = htonl(t4->s4[i] + (uint32_t)d);
			same_at(gc, gs, (struct sockaddr *)&s4);
		}
	for (size_t i = 0; i < t6->n; i++)
		same_around6(gc, gs, t6->s6[i], 0);
	for (size_t k = 0; k < t6->ng; k++) {
		ck_assert_uint_lt(t6->foff[k], t6->foff[k + 1]);
		ck_assert_uint_eq(t6->flo[t6->foff[k]], 0);
		for (size_t i = t6->foff[k]; i < t6->foff[k + 1]; i++)
			same_around6(gc, gs, t6->fhi[k], t6->flo[i]);
	}
	ck_assert_uint_eq(t6->ng ? t6->foff[t6->ng] : 0, t6->nf);
	struct sockaddr_in6 s6 = { .sin6_family = AF_INET6 };
	uint8_t *b = s6.sin6_addr.s6_addr;
	uint32_t x = 777;
	for (int i = 0; i < nrand / 2; i++) {
		for (int j = 0; j < 16; j++) {
			x = x * 1103515245u + 12345u;
			b[j] = (x >> 16 & 3) && i % 3 != 1 ? 0 : (uint8_t)(x >> 8);
		}
		if (i % 3 == 0)
			memcpy(b, pfx6, 8);
		same_at(gc, gs, (struct sockaddr *)&s6);
	}
}

/* Opens @conf (a geoip section's keys) compiled into *@gc and not into
 * *@gs. */
static void open_pair(const char *conf, geo_t **gc, conf_t **cc, geo_t **gs,
                      conf_t **cs)
{
	char text[1024];
	snprintf(text, sizeof(text), "geoip:\n%s", conf);
	*gc = open_geo(text, cc);
	snprintf(text, sizeof(text), "geoip:\n%s  compile: off\n", conf);
	*gs = open_geo(text, cs);
	ck_assert_int_eq((*gc)->compiled, 1);
	ck_assert_int_eq((*gs)->compiled, 0);
}

/* The compiled table gives what the sources give, for random addresses
 * and on both sides of every range boundary, over several
 * configurations (database, CIDR file, both, maps). */
START_TEST(compiled_equals_sources)
{
	static const char *const confs[] = {
		"  database: test.mmdb\n",
		"  nets: test.nets\n",
		"  database: test.mmdb\n  nets: test.nets\n",
		"  database: test.mmdb\n  nets: test.nets\n"
		"  isp: [ autonomous_system_number ]\n"
		"  isp-map: { \"4134\": ctcc, \"4837\": cucc }\n",
	};
	write_file("test.nets", g_nets);
	for (size_t k = 0; k < sizeof(confs) / sizeof(confs[0]); k++) {
		conf_t *cc, *cs;
		geo_t *gc, *gs;
		open_pair(confs[k], &gc, &cc, &gs, &cs);
		ck_assert_uint_gt(gc->ct[0].n, 1);
		same_everywhere(gc, gs, 100000, "\x20\x01\x0d\xb8\x01\x00\x00\x05");
		close_geo(gc, cc);
		close_geo(gs, cs);
	}
}
END_TEST

/* The result index of range @i of @t, as the table stores it. */
static uint32_t res_index(const geo_ctable_t *t, size_t i)
{
	return t->r16 ? (t->r16[i] == UINT16_MAX ? GEO_RES_FINE : t->r16[i])
	              : t->r32[i];
}

/* The compact layout: ranges share their results, which share their
 * names; 16-bit indexes; IPv6 keyed by its high 64 bits, a /64 line one
 * range, ::/64 (IPv4 and IPv4-mapped inside) cut into fine ranges; the
 * lookups at range edges give what the sources give (LOOK). */
START_TEST(compiled_layout)
{
	write_file("test.nets", g_nets);
	conf_t *c;
	geo_t *g = open_geo("geoip:\n  database: test.mmdb\n  nets: test.nets\n", &c);
	const geo_ctable_t *t4 = &g->ct[0], *t6 = &g->ct[1];
	ck_assert_ptr_nonnull(t4->r16);
	ck_assert_ptr_null(t4->r32);
	ck_assert_ptr_nonnull(t6->r16);
	ck_assert_uint_eq(t4->s4[0], 0);
	ck_assert_uint_eq(t6->s6[0], 0);
	ck_assert_uint_lt(g->nres, t4->n + t6->n + t6->nf);
	/* Names are distinct, and the results use each of them. */
	for (size_t i = 0; i < g->nnames; i++)
		for (size_t j = 0; j < i; j++)
			ck_assert_str_ne(g->names[i], g->names[j]);
	for (size_t i = 0; i < g->nres; i++) {
		ck_assert_uint_lt(g->res[i].region, g->nnames);
		ck_assert_uint_lt(g->res[i].isp, g->nnames);
		for (size_t j = 0; j < i; j++)
			ck_assert(memcmp(&g->res[i], &g->res[j], sizeof(g->res[i])));
	}
	/* Range edges: the address before 36.110.0.0/16 of the CIDR file,
	 * its first (cut by the line of 36.110.7.0/24) and its last (cut by
	 * the database's /17 of cn-tj); a host line and its neighbour; the
	 * ends of both address spaces; a /64 line. */
	LOOK(g, "36.109.255.255", "*", "*", 15, GEO_SRC_NONE, "36.108.0.0/15");
	LOOK(g, "36.110.0.0", "nets-bj", "nets-ct", 22, GEO_SRC_NETS,
	     "36.110.0.0/22");
	LOOK(g, "36.110.255.255", "nets-bj", "nets-ct", 17, GEO_SRC_NETS,
	     "36.110.128.0/17");
	LOOK(g, "192.0.2.6", "*", "*", 32, GEO_SRC_NONE, "192.0.2.6/32");
	LOOK(g, "192.0.2.7", "host", "*", 32, GEO_SRC_NETS, "192.0.2.7/32");
	LOOK(g, "255.255.255.255", "*", "*", 3, GEO_SRC_NONE, "224.0.0.0/3");
	LOOK(g, "2001:db8:100:4:ffff:ffff:ffff:ffff", "us-west", "other", 64,
	     GEO_SRC_MMDB, "2001:db8:100:4::/64");
	LOOK(g, "2001:db8:100:5::", "v6net", "v6isp", 64, GEO_SRC_NETS,
	     "2001:db8:100:5::/64");
	LOOK(g, "2001:db8:100:5:ffff:ffff:ffff:ffff", "v6net", "v6isp", 64,
	     GEO_SRC_NETS, "2001:db8:100:5::/64");
	LOOK(g, "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "*", "*", 1,
	     GEO_SRC_NONE, "8000::/1");
	/* ::/64 holds IPv4 (::/96) and IPv4-mapped addresses: cut. */
	ck_assert_uint_eq(res_index(t6, 0), GEO_RES_FINE);
	ck_assert_uint_gt(t6->nf, 0);
	close_geo(g, c);
}
END_TEST

/* A generated database of random, nested networks of every length (IPv4
 * /8 to /32, IPv6 /16 to /128 around 2001:db8::/32) with a CIDR file of
 * random lines over it: the compiled table against the sources. */
START_TEST(compiled_equals_sources_generated)
{
	FILE *src = fopen(g_gen_txt, "r");
	ck_assert_ptr_nonnull(src);
	fclose(src);
	conf_t *cc, *cs;
	geo_t *gc, *gs;
	open_pair("  database: gen.mmdb\n  nets: gen.nets\n", &gc, &cc, &gs, &cs);
	ck_assert_uint_gt(gc->ct[0].n, 1000);
	ck_assert_uint_gt(gc->ct[1].nf, 100);
	same_everywhere(gc, gs, 200000, "\x20\x01\x0d\xb8\x00\x00\x00\x00");
	close_geo(gc, cc);
	close_geo(gs, cs);
	open_pair("  database: gen.mmdb\n", &gc, &cc, &gs, &cs);
	same_everywhere(gc, gs, 50000, "\x20\x01\x0d\xb8\x00\x00\x00\x00");
	close_geo(gc, cc);
	close_geo(gs, cs);
}
END_TEST

/* geoip.compile is on or off, nothing else. */
START_TEST(err_compile_value)
{
	expect_err("geoip:\n  database: test.mmdb\n  compile: maybe\n",
	           NULL, 4, "geoip.compile must be on or off");
}
END_TEST

static Suite *geo_suite(void)
{
	Suite *s = suite_create("geo");
	TCase *t = tcase_create("lookup");
	tcase_add_unchecked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 60);
	tcase_add_test(t, mmdb_ipv4_default_paths);
	tcase_add_test(t, mmdb_ipv6_and_mapped);
	tcase_add_test(t, mmdb_unknown);
	tcase_add_test(t, no_geoip_section);
	tcase_add_test(t, custom_paths_and_maps);
	tcase_add_test(t, paths_without_maps);
	tcase_add_test(t, empty_map_gives_star);
	tcase_add_test(t, knows_names);
	tcase_add_test(t, nets_override);
	tcase_add_test(t, nets_only);
	tcase_add_test(t, nets_default_route);
	tcase_add_test(t, nets_bad_lines);
	tcase_add_test(t, ecs_switch);
	tcase_add_test(t, err_unknown_key);
	tcase_add_test(t, err_bad_path);
	tcase_add_test(t, err_bad_map);
	tcase_add_test(t, err_database);
	tcase_add_test(t, err_nets_file);
	tcase_add_test(t, many_lookups);
	tcase_add_test(t, compiled_equals_sources);
	tcase_add_test(t, compiled_layout);
	tcase_add_test(t, compiled_equals_sources_generated);
	tcase_add_test(t, err_compile_value);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(geo_suite)
