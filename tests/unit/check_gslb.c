/* SPDX-License-Identifier: MIT */
/* The GSLB decision: which weight rows a client is tried against, for
 * every combination of known and unknown region and ISP and of the row
 * levels a service has (pure); then gslb_resolve() over a real LMDB store
 * and a real MaxMind DB in a temporary directory: the row chain's
 * fallback, the all-down modes, the ECS scope, IPv6 clients and sticky
 * clients (store_fixture.h describes the data). */
#include "common/conf.h"
#include "common/log.h"
#include "common/util.h"
#include "gslb/gslb.h"
#include "store_fixture.h"
#include "unit.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

/* The oracle, derived differently from gslb_chain(): substitute the
 * client's fields into the four documented keys (region, ISP),
 * (region, *), (*, ISP), (*, *), drop repeated keys, then drop the keys
 * whose shape the service has no row of.  The shape of a key is what it
 * holds, not the level it came from. */
static unsigned oracle(const char *reg, const char *isp, int flags,
                       gslb_row_t out[4])
{
	const char *k[4][2] = { { reg, isp }, { reg, "*" }, { "*", isp }, { "*", "*" } };
	unsigned n = 0;
	const char *seen[4][2];
	unsigned nseen = 0;
	for (int i = 0; i < 4; i++) {
		int dup = 0;
		for (unsigned j = 0; j < nseen; j++)
			if (!strcmp(seen[j][0], k[i][0]) && !strcmp(seen[j][1], k[i][1]))
				dup = 1;
		if (dup)
			continue;
		seen[nseen][0] = k[i][0], seen[nseen][1] = k[i][1], nseen++;
		int ar = !strcmp(k[i][0], "*"), ai = !strcmp(k[i][1], "*");
		gslb_row_t shape = ar ? (ai ? GSLB_ROW_DEFAULT : GSLB_ROW_ISP)
		                      : (ai ? GSLB_ROW_REGION : GSLB_ROW_REGION_ISP);
		int kind = shape == GSLB_ROW_REGION_ISP ? SVC_ROW_REGION_ISP :
		           shape == GSLB_ROW_REGION ? SVC_ROW_REGION :
		           shape == GSLB_ROW_ISP ? SVC_ROW_ISP : SVC_ROW_DEFAULT;
		if ((flags & SVC_ROW_KNOWN) && !(flags & kind))
			continue;
		out[n++] = shape;
	}
	return n;
}

/* All 4 known/unknown combinations x all 16 sets of row levels (and the
 * store without level flags, which tries every level). */
START_TEST(chain_every_combination)
{
	static const char *regs[2] = { "cn-gz", "*" }, *isps[2] = { "ctcc", "*" };
	static const int kinds[4] = { SVC_ROW_REGION_ISP, SVC_ROW_REGION,
	                              SVC_ROW_ISP, SVC_ROW_DEFAULT };
	int checked = 0;
	for (int r = 0; r < 2; r++)
		for (int i = 0; i < 2; i++)
			for (int set = 0; set <= 16; set++) {
				int flags = 0;
				if (set < 16) {
					flags = SVC_ROW_KNOWN;
					for (int b = 0; b < 4; b++)
						if (set & (1 << b))
							flags |= kinds[b];
				}
				gslb_row_t got[4], want[4];
				unsigned ng = gslb_chain(regs[r], isps[i], flags, got);
				unsigned nw = oracle(regs[r], isps[i], flags, want);
				char what[80];
				snprintf(what, sizeof(what), "region=%s isp=%s levels=%d",
				         regs[r], isps[i], set);
				ck_assert_msg(ng == nw, "%s: %u levels, want %u", what, ng, nw);
				for (unsigned j = 0; j < nw; j++)
					ck_assert_msg(got[j] == want[j], "%s: level %u is %s, want %s",
					              what, j, gslb_row_name(got[j]),
					              gslb_row_name(want[j]));
				checked++;
			}
	ck_assert_int_eq(checked, 4 * 17);
}
END_TEST

/* The defect this guards against: a City-only database (region known,
 * ISP unknown) and a service with a (region, *) row and a (*, *) row but
 * no (region, ISP) row must still try the (region, *) row first. */
START_TEST(chain_region_only_client)
{
	gslb_row_t c[4];
	int flags = SVC_ROW_KNOWN | SVC_ROW_REGION | SVC_ROW_DEFAULT;
	ck_assert_uint_eq(gslb_chain("cn-gz", "*", flags, c), 2);
	ck_assert_int_eq(c[0], GSLB_ROW_REGION);
	ck_assert_int_eq(c[1], GSLB_ROW_DEFAULT);
}
END_TEST

/* The reverse: ISP known, region unknown, (*, ISP) and (*, *) rows. */
START_TEST(chain_isp_only_client)
{
	gslb_row_t c[4];
	int flags = SVC_ROW_KNOWN | SVC_ROW_ISP | SVC_ROW_DEFAULT;
	ck_assert_uint_eq(gslb_chain("*", "cmcc", flags, c), 2);
	ck_assert_int_eq(c[0], GSLB_ROW_ISP);
	ck_assert_int_eq(c[1], GSLB_ROW_DEFAULT);
}
END_TEST

/* Both known: the documented order, all four. */
START_TEST(chain_full_order)
{
	gslb_row_t c[4];
	ck_assert_uint_eq(gslb_chain("cn-bj", "ctcc", 0, c), 4);
	ck_assert_int_eq(c[0], GSLB_ROW_REGION_ISP);
	ck_assert_int_eq(c[1], GSLB_ROW_REGION);
	ck_assert_int_eq(c[2], GSLB_ROW_ISP);
	ck_assert_int_eq(c[3], GSLB_ROW_DEFAULT);
	/* Nothing known: only the default row can match. */
	ck_assert_uint_eq(gslb_chain("*", "*", 0, c), 1);
	ck_assert_int_eq(c[0], GSLB_ROW_DEFAULT);
	/* A service with no default row and an unknown client: no level. */
	ck_assert_uint_eq(gslb_chain("*", "*", SVC_ROW_KNOWN | SVC_ROW_REGION_ISP, c), 0);
}
END_TEST

/* gslb_resolve() over a store and a MaxMind DB ------------------------ */

static char g_dir[PATH_MAX];
static conf_t *g_conf;
static geo_t *g_geo;
static weightdb_t *g_db;
static wdb_reader_t *g_reader;

static void store_setup(void)
{
	char err[512], p[PATH_MAX + 16];
	log_set_level(GSLB_LOG_ERR);
	ck_assert_int_eq(fx_mkdtemp(g_dir, "gslb"), 0);
	ck_assert_int_eq(fx_mmdb(g_dir, "test.mmdb", FX_GEO_SRC), 0);
	ck_assert_int_eq(fx_write(g_dir, "gslbd.conf", "zones: []\n"
	                          "geoip:\n  database: test.mmdb\n"), 0);
	snprintf(p, sizeof(p), "%s/gslbd.conf", g_dir);
	g_conf = conf_load(p, err, sizeof(err));
	ck_assert_msg(g_conf != NULL, "%s", err);
	g_geo = geo_open(g_conf, err, sizeof(err));
	ck_assert_msg(g_geo != NULL, "%s", err);
	g_db = fx_store(g_dir, FX_GSLB_JSON);
	ck_assert_ptr_nonnull(g_db);
	g_reader = wdb_reader_new(g_db);
	ck_assert_ptr_nonnull(g_reader);
}

static void store_teardown(void)
{
	wdb_reader_free(g_reader);
	weightdb_close(g_db);
	geo_close(g_geo);
	conf_free(g_conf);
	ck_assert_int_eq(fx_rmrf(g_dir), 0);
}

/* @ip as a socket address. */
static void sockaddr_of(const char *ip, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
	if (inet_pton(AF_INET, ip, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		return;
	}
	ck_assert_msg(inet_pton(AF_INET6, ip, &s6->sin6_addr) == 1, "%s", ip);
	s6->sin6_family = AF_INET6;
}

static uint64_t g_rng = 1;
static gslb_memo_t *g_memo;    /* resolve_client() passes it when set */

/* Resolves service @svc (below cdn.example.test) for the client located
 * by @c.  Returns gslb_resolve()'s code. */
static int resolve_client(const char *svc, uint16_t qtype,
                          const gslb_client_t *c, gslb_result_t *out)
{
	char name[256];
	snprintf(name, sizeof(name), "%s.cdn.example.test", svc);
	memset(out, 0xa5, sizeof(*out));
	int rc = gslb_resolve(g_reader, g_memo, g_geo, name, strlen(name), qtype, c,
	                      1700000000, &g_rng, out, NULL);
	wdb_reader_release(g_reader);
	return rc;
}

/* The same for a client (or resolver) at @ip without ECS. */
static int resolve(const char *svc, const char *ip, uint16_t qtype,
                   gslb_result_t *out)
{
	struct sockaddr_storage ss;
	gslb_client_t c;
	sockaddr_of(ip, &ss);
	gslb_client_from(&c, (struct sockaddr *)&ss, 0, NULL, 0);
	return resolve_client(svc, qtype, &c, out);
}

/* The id of the @i-th node picked, as a string. */
static const char *picked(const gslb_result_t *g, unsigned i)
{
	static char id[8][64];
	const plan_node_t *n = &g->plan.node[g->picked[i]];
	snprintf(id[i], sizeof(id[i]), "%.*s", (int)n->id_len, n->id);
	return id[i];
}

/* Asserts that @svc for a client at @ip answers from row @row with the
 * single node @node and ECS scope @scope. */
#define EXPECT(svc, ip, row_, node, scope_) do {                          \
		gslb_result_t g_;                                         \
		ck_assert_int_eq(resolve((svc), (ip), 1, &g_), 0);        \
		ck_assert_msg(g_.row == (row_) && g_.npicked == 1 &&      \
		              !strcmp(picked(&g_, 0), (node)) &&          \
		              g_.scope == (scope_),                       \
		              "%s from %s: row %s node %s scope %u, want " \
		              "%s %s %u", (svc), (ip), gslb_row_name(g_.row), \
		              g_.npicked ? picked(&g_, 0) : "-", g_.scope, \
		              gslb_row_name(row_), (node), (unsigned)(scope_)); \
	} while (0)

START_TEST(resolve_row_chain)
{
	/* cn-bj, ctcc: the (region, ISP) row; the /17 decided. */
	EXPECT("www", "36.110.1.1", GSLB_ROW_REGION_ISP, "bj-ct", 17);
	/* cn-bj, cucc: no such row, so (cn-bj, *). */
	EXPECT("www", "123.112.0.1", GSLB_ROW_REGION, "bj-any", 12);
	/* Region unknown, cucc: (*, cucc). */
	EXPECT("www", "112.64.0.1", GSLB_ROW_ISP, "cu", 14);
	/* us-west, ISP unknown, no us-west row: (*, *). */
	EXPECT("www", "198.51.100.7", GSLB_ROW_DEFAULT, "def", 24);
	/* cn-gd, ctcc: neither level has a row. */
	EXPECT("www", "14.16.0.1", GSLB_ROW_DEFAULT, "def", 12);
	/* Unknown to the database: (*, *), with the scope of the empty
	 * network around it, never 0 (a resolver would give everyone the
	 * "unknown" answer). */
	gslb_result_t g;
	ck_assert_int_eq(resolve("www", "8.8.8.8", 1, &g), 0);
	ck_assert_int_eq(g.row, GSLB_ROW_DEFAULT);
	ck_assert_str_eq(picked(&g, 0), "def");
	ck_assert_str_eq(g.geo.region, "*");
	ck_assert_uint_eq(g.scope, g.geo.prefix_len);
	ck_assert_uint_gt(g.scope, 0);
	ck_assert_uint_eq(g.ttl, 60);
	ck_assert_int_eq(g.short_ttl, 0);
	ck_assert_int_eq(g.failed_open, 0);
}
END_TEST

/* The worker's memo (S0-3: the answer is the row chain's, memo or not):
 * every service for clients of every location answers the same through
 * the memo as without it, from the second ask on out of the memo; a
 * change to the store is seen at once. */
START_TEST(resolve_memo)
{
	static const char *svcs[] = { "www", "fb", "fbnone", "open", "empty",
	                              "multi", "cdn", "short", "norows", "nosuch" };
	static const char *ips[] = { "36.110.1.1", "123.112.0.1", "112.64.0.1",
	                             "198.51.100.7", "14.16.0.1", "8.8.8.8",
	                             "2001:db8:1::1" };
	gslb_memo_t *m = gslb_memo_new();
	for (size_t i = 0; i < sizeof(svcs) / sizeof(*svcs); i++) {
		for (size_t k = 0; k < sizeof(ips) / sizeof(*ips); k++) {
			/* a: without the memo; b: fills it; c: from it. */
			gslb_result_t a, r[2];
			g_memo = NULL;
			int ra = resolve(svcs[i], ips[k], 1, &a);
			g_memo = m;
			int rb = resolve(svcs[i], ips[k], 1, &r[0]);
			uint64_t hits = gslb_memo_hits(m);
			int rc = resolve(svcs[i], ips[k], 1, &r[1]);
			g_memo = NULL;
			ck_assert_int_eq(ra, rb);
			ck_assert_int_eq(ra, rc);
			if (ra)
				continue;   /* not a service: the memo is not asked */
			ck_assert_msg(gslb_memo_hits(m) == hits + 1,
			              "%s from %s: the second ask missed", svcs[i], ips[k]);
			for (int x = 0; x < 2; x++) {
				const gslb_result_t *b = &r[x];
				ck_assert_int_eq(a.row, b->row);
				if (a.row == GSLB_ROW_NONE)
					continue;   /* no row: NODATA, no plan */
				ck_assert_msg(a.from_fallback == b->from_fallback &&
				              a.plan.n == b->plan.n && a.npicked == b->npicked &&
				              a.failed_open == b->failed_open &&
				              a.scope == b->scope && a.ttl == b->ttl,
				              "%s from %s: memo differs", svcs[i], ips[k]);
				for (unsigned j = 0; j < a.plan.n; j++)
					ck_assert(a.plan.node[j].weight == b->plan.node[j].weight &&
					          a.plan.node[j].flags == b->plan.node[j].flags &&
					          a.plan.node[j].id_len == b->plan.node[j].id_len &&
					          !memcmp(a.plan.node[j].id, b->plan.node[j].id,
					                  a.plan.node[j].id_len));
				for (unsigned j = 0; j < a.npicked; j++)
					ck_assert_str_eq(picked(&a, j), picked(b, j));
			}
		}
	}

	/* A commit makes a new snapshot: the memo's entry is not used. */
	g_memo = m;
	EXPECT("www", "36.110.1.1", GSLB_ROW_REGION_ISP, "bj-ct", 17);
	char err[512];
	ck_assert_msg(fx_apply(g_db, "test", "move", "{\"weights\": ["
	              FX_ROW("www", "cn-bj", "ctcc", "\"s1\": 100") "]}",
	              err, sizeof(err)) > 0, "%s", err);
	uint64_t before = gslb_memo_hits(m);
	EXPECT("www", "36.110.1.1", GSLB_ROW_REGION_ISP, "s1", 17);
	ck_assert_uint_eq(gslb_memo_hits(m), before);
	EXPECT("www", "36.110.1.1", GSLB_ROW_REGION_ISP, "s1", 17);
	ck_assert_uint_eq(gslb_memo_hits(m), before + 1);
	ck_assert_msg(fx_apply(g_db, "test", "back", "{\"weights\": ["
	              FX_ROW("www", "cn-bj", "ctcc", "\"bj-ct\": 100") "]}",
	              err, sizeof(err)) > 0, "%s", err);
	EXPECT("www", "36.110.1.1", GSLB_ROW_REGION_ISP, "bj-ct", 17);
	g_memo = NULL;
	gslb_memo_free(m);
}
END_TEST

/* The service memo: a query name's service record and key text are the
 * store's, a name that is no service is remembered as none, and both
 * follow a commit at once. */
START_TEST(service_memo)
{
	gslb_memo_t *m = gslb_memo_new();
	uint8_t wire[DNAME_MAXLEN + 1];
	char buf[DNAME_MAXLEN * 4 + 2];
	const char *key;
	size_t kl, wl = dname_from_str("www.cdn.example.test.", wire);
	svc_rec_t want, got;
	ck_assert_int_eq(wdb_service(g_reader, "www.cdn.example.test", 20, &want), 0);
	for (int i = 0; i < 2; i++) {
		uint64_t hits = gslb_memo_hits(m);
		memset(&got, 0xa5, sizeof(got));
		ck_assert_int_eq(gslb_service(g_reader, m, wire, wl, buf, sizeof(buf),
		                              &key, &kl, &got), 0);
		ck_assert_uint_eq(gslb_memo_hits(m), hits + (unsigned)i);
		ck_assert_uint_eq(kl, 20);
		ck_assert_mem_eq(key, "www.cdn.example.test", 20);
		ck_assert(got.ttl == want.ttl && got.short_ttl == want.short_ttl &&
		          got.flags == want.flags && got.all_down == want.all_down &&
		          got.answers == want.answers);
		wdb_reader_release(g_reader);
	}
	/* Not a service, twice: the second from the memo. */
	wl = dname_from_str("later.cdn.example.test.", wire);
	for (int i = 0; i < 2; i++) {
		uint64_t hits = gslb_memo_hits(m);
		ck_assert_int_eq(gslb_service(g_reader, m, wire, wl, buf, sizeof(buf),
		                              &key, &kl, &got), GSLB_ENOENT);
		ck_assert_uint_eq(gslb_memo_hits(m), hits + (unsigned)i);
		wdb_reader_release(g_reader);
	}
	/* Added: found at the next ask. */
	char err[512];
	ck_assert_msg(fx_apply(g_db, "test", "add", "{\"services\": ["
	              FX_SVC("later", "open", "") "]}", err, sizeof(err)) > 0,
	              "%s", err);
	ck_assert_int_eq(gslb_service(g_reader, m, wire, wl, buf, sizeof(buf),
	                              &key, &kl, &got), 0);
	ck_assert_mem_eq(key, "later.cdn.example.test", kl);
	wdb_reader_release(g_reader);
	/* Without a memo: the same, key in the caller's buffer. */
	ck_assert_int_eq(gslb_service(g_reader, NULL, wire, wl, buf, sizeof(buf),
	                              &key, &kl, &got), 0);
	ck_assert_ptr_eq(key, buf);
	ck_assert_str_eq(buf, "later.cdn.example.test");
	wdb_reader_release(g_reader);
	gslb_memo_free(m);
}
END_TEST

START_TEST(resolve_all_down)
{
	gslb_result_t g;
	/* fallback: the first row with a usable node answers. */
	EXPECT("fb", "36.110.1.1", GSLB_ROW_DEFAULT, "def", 17);
	ck_assert_int_eq(resolve("fb", "123.112.0.1", 1, &g), 0);
	ck_assert_int_eq(g.failed_open, 0);
	ck_assert_str_eq(picked(&g, 0), "def");
	/* ...a stopgap, with the short TTL (S0-11); the same default row
	 * reached because the client has no row of its own is not. */
	ck_assert_int_eq(g.from_fallback, 1);
	ck_assert_int_eq(g.short_ttl, 1);
	ck_assert_uint_eq(g.ttl, 10);
	ck_assert_int_eq(resolve("www", "8.8.8.8", 1, &g), 0);
	ck_assert_int_eq(g.row, GSLB_ROW_DEFAULT);
	ck_assert_int_eq(g.from_fallback, 0);
	ck_assert_int_eq(g.short_ttl, 0);
	ck_assert_uint_eq(g.ttl, 60);
	/* fallback with nothing usable anywhere: the client's own row, as
	 * if healthy. */
	ck_assert_int_eq(resolve("fbnone", "36.110.1.1", 1, &g), 0);
	ck_assert_int_eq(g.row, GSLB_ROW_REGION_ISP);
	ck_assert_int_eq(g.failed_open, 1);
	ck_assert_uint_eq(g.npicked, 1);
	ck_assert_str_eq(picked(&g, 0), "down-1");
	/* open: the first existing row answers, failing open. */
	ck_assert_int_eq(resolve("open", "36.110.1.1", 1, &g), 0);
	ck_assert_int_eq(g.row, GSLB_ROW_REGION_ISP);
	ck_assert_int_eq(g.failed_open, 1);
	ck_assert_str_eq(picked(&g, 0), "down-1");
	ck_assert_int_eq(resolve("open", "8.8.8.8", 1, &g), 0);
	ck_assert_int_eq(g.row, GSLB_ROW_DEFAULT);
	ck_assert_str_eq(picked(&g, 0), "def");
	ck_assert_int_eq(g.failed_open, 0);
	ck_assert_uint_eq(g.scope, g.geo.prefix_len);
	/* empty: the first existing row answers, with nothing. */
	ck_assert_int_eq(resolve("empty", "36.110.1.1", 1, &g), 0);
	ck_assert_int_eq(g.row, GSLB_ROW_REGION_ISP);
	ck_assert_uint_eq(g.npicked, 0);
	ck_assert_int_eq(g.failed_open, 0);
	/* ... decided by the client's network like any answer of the row
	 * (RFC 7871 §7.4): its scope, and the row's TTL. */
	ck_assert_uint_eq(g.scope, 17);
	ck_assert_int_eq(g.short_ttl, 0);
	ck_assert_uint_eq(g.ttl, 60);
	ck_assert_int_eq(g.from_fallback, 0);
	EXPECT("empty", "198.51.100.7", GSLB_ROW_DEFAULT, "def", 24);
	/* A service without rows: NODATA; a name that is no service. */
	ck_assert_int_eq(resolve("norows", "36.110.1.1", 1, &g), 0);
	ck_assert_int_eq(g.row, GSLB_ROW_NONE);
	ck_assert_uint_eq(g.npicked, 0);
	ck_assert_uint_eq(g.scope, 0);
	ck_assert_int_eq(g.short_ttl, 0);
	ck_assert_uint_eq(g.ttl, 60);
	/* A client row without a node of the asked family: NODATA with the
	 * scope of the network that chose the row. */
	ck_assert_int_eq(resolve("www", "123.112.0.1", 28, &g), 0);
	ck_assert_int_eq(g.row, GSLB_ROW_REGION);
	ck_assert_uint_eq(g.npicked, 0);
	ck_assert_uint_eq(g.scope, 12);
	ck_assert_uint_eq(g.ttl, 60);
	ck_assert_int_eq(resolve("nothing", "36.110.1.1", 1, &g), GSLB_ENOENT);
}
END_TEST

START_TEST(resolve_ecs_scope)
{
	gslb_client_t c;
	gslb_result_t g;
	struct sockaddr_storage resolver;
	sockaddr_of("198.51.100.7", &resolver);
	static const uint8_t bj[4] = { 36, 110, 1, 0 }, lo[4] = { 127, 0, 0, 1 };
	/* ECS locates the client, and the scope is the deciding prefix. */
	gslb_client_from(&c, (struct sockaddr *)&resolver, 1, bj, 24);
	ck_assert_int_eq(c.from_ecs, 1);
	ck_assert_int_eq(resolve_client("www", 1, &c, &g), 0);
	ck_assert_str_eq(picked(&g, 0), "bj-ct");
	ck_assert_uint_eq(g.scope, 17);
	/* Source prefix 0 or an unroutable address: the resolver's. */
	gslb_client_from(&c, (struct sockaddr *)&resolver, 1, bj, 0);
	ck_assert_int_eq(c.from_ecs, 0);
	ck_assert_int_eq(resolve_client("www", 1, &c, &g), 0);
	ck_assert_str_eq(picked(&g, 0), "def");
	ck_assert_uint_eq(g.scope, 24);
	gslb_client_from(&c, (struct sockaddr *)&resolver, 1, lo, 32);
	ck_assert_int_eq(c.from_ecs, 0);
	/* A service that answers everybody alike: scope 0. */
	gslb_client_from(&c, (struct sockaddr *)&resolver, 1, bj, 24);
	ck_assert_int_eq(resolve_client("multi", 1, &c, &g), 0);
	ck_assert_uint_eq(g.npicked, 3);
	ck_assert_uint_eq(g.scope, 0);
	ck_assert_int_eq(resolve_client("cdn", 1, &c, &g), 0);
	ck_assert_uint_eq(g.scope, 0);
	ck_assert(g.plan.node[g.picked[0]].flags & PLAN_CNAME);
	/* The short TTL while a node of the row is within its period. */
	ck_assert_int_eq(resolve_client("short", 1, &c, &g), 0);
	ck_assert_int_eq(g.short_ttl, 1);
	ck_assert_uint_eq(g.ttl, 5);
}
END_TEST

START_TEST(resolve_ipv6)
{
	gslb_result_t g;
	/* IPv6 clients: the database's IPv6 prefixes decide. */
	ck_assert_int_eq(resolve("www", "240e:e0::1", 28, &g), 0);
	ck_assert_int_eq(g.row, GSLB_ROW_REGION_ISP);
	ck_assert_str_eq(picked(&g, 0), "bj-ct");
	ck_assert_uint_eq(g.scope, 28);
	ck_assert_int_eq(resolve("www", "2001:db8:100::1", 28, &g), 0);
	ck_assert_int_eq(g.row, GSLB_ROW_DEFAULT);
	ck_assert_uint_eq(g.scope, 40);
	/* An IPv4-mapped address is an IPv4 client. */
	EXPECT("www", "::ffff:36.110.1.1", GSLB_ROW_REGION_ISP, "bj-ct", 17);
	/* AAAA picks only nodes with IPv6: (cn-bj, *) has none, so
	 * NODATA rather than a node without the family. */
	ck_assert_int_eq(resolve("www", "123.112.0.1", 28, &g), 0);
	ck_assert_int_eq(g.row, GSLB_ROW_REGION);
	ck_assert_uint_eq(g.npicked, 0);
	/* ECS of family 2. */
	gslb_client_t c;
	struct sockaddr_storage resolver;
	sockaddr_of("198.51.100.7", &resolver);
	static const uint8_t bj6[16] = { 0x24, 0x0e, 0x00, 0xe0 };
	gslb_client_from(&c, (struct sockaddr *)&resolver, 2, bj6, 56);
	ck_assert_int_eq(c.from_ecs, 1);
	ck_assert_int_eq(resolve_client("www", 28, &c, &g), 0);
	ck_assert_str_eq(picked(&g, 0), "bj-ct");
	ck_assert_uint_eq(g.scope, 28);
	/* ECS of family 2 with an IPv4-mapped address: located as the IPv4
	 * client, with the scope counted in the option's IPv6 bits (the
	 * IPv4 network's prefix plus the 96 mapped bits). */
	static const uint8_t mapped[16] = { [10] = 0xff, [11] = 0xff, 36, 110, 1, 0 };
	gslb_client_from(&c, (struct sockaddr *)&resolver, 2, mapped, 120);
	ck_assert_int_eq(c.from_ecs, 1);
	ck_assert_int_eq(c.mapped, 1);
	ck_assert_int_eq(resolve_client("www", 1, &c, &g), 0);
	ck_assert_str_eq(picked(&g, 0), "bj-ct");
	gslb_result_t g4;
	ck_assert_int_eq(resolve("www", "36.110.1.1", 1, &g4), 0);
	ck_assert_uint_eq(g.scope, g4.scope + 96);
	/* A mapped loopback address locates nobody: the resolver decides. */
	static const uint8_t mloop[16] = { [10] = 0xff, [11] = 0xff, 127, 0, 0, 1 };
	gslb_client_from(&c, (struct sockaddr *)&resolver, 2, mloop, 128);
	ck_assert_int_eq(c.from_ecs, 0);
}
END_TEST

START_TEST(resolve_sticky_scope)
{
	gslb_result_t g;
	char first[64], ip[64];
	/* Sticky without client rows: the scope is the sticky network. */
	ck_assert_int_eq(resolve("sticky", "36.110.1.1", 1, &g), 0);
	ck_assert_uint_eq(g.scope, GSLB_STICKY_V4);
	snprintf(first, sizeof(first), "%s", picked(&g, 0));
	/* The same /24 written IPv4-mapped in an ECS option of family 2:
	 * the same node, with the sticky network in IPv6 bits (/120), not
	 * the /56 of IPv6 space that would hold every IPv4 client. */
	{
		gslb_client_t mc;
		struct sockaddr_storage res;
		static const uint8_t m[16] = { [10] = 0xff, [11] = 0xff, 36, 110, 1, 0 };
		sockaddr_of("198.51.100.7", &res);
		gslb_client_from(&mc, (struct sockaddr *)&res, 2, m, 120);
		gslb_result_t gm;
		ck_assert_int_eq(resolve_client("sticky", 1, &mc, &gm), 0);
		ck_assert_uint_eq(gm.scope, 96 + GSLB_STICKY_V4);
		ck_assert_str_eq(picked(&gm, 0), first);
	}
	/* Every address of the /24 gets the same node, every time. */
	for (int i = 0; i < 256; i += 17) {
		snprintf(ip, sizeof(ip), "36.110.1.%d", i);
		ck_assert_int_eq(resolve("sticky", ip, 1, &g), 0);
		ck_assert_str_eq(picked(&g, 0), first);
	}
	ck_assert_int_eq(resolve("sticky", "2001:db8:100::1", 28, &g), 0);
	ck_assert_uint_eq(g.npicked, 0);  /* no node has IPv6 */
	ck_assert_int_eq(resolve("sticky", "2001:db8:100::1", 1, &g), 0);
	ck_assert_uint_eq(g.scope, GSLB_STICKY_V6);
	/* Different networks spread over the nodes. */
	int seen[4] = { 0 };
	for (int i = 0; i < 200; i++) {
		snprintf(ip, sizeof(ip), "14.%d.%d.1", 16 + i % 16, i);
		ck_assert_int_eq(resolve("sticky", ip, 1, &g), 0);
		seen[picked(&g, 0)[1] - '1'] = 1;
	}
	ck_assert_int_eq(seen[0] + seen[1] + seen[2] + seen[3], 4);
	/* With client rows: the wider of the geo prefix and the sticky
	 * network. */
	ck_assert_int_eq(resolve("stickyrow", "36.110.1.1", 1, &g), 0);
	ck_assert_int_eq(g.row, GSLB_ROW_REGION);
	ck_assert_uint_eq(g.scope, GSLB_STICKY_V4);
	ck_assert_int_eq(resolve("stickyrow", "240e:e0::1", 1, &g), 0);
	ck_assert_uint_eq(g.scope, GSLB_STICKY_V6);
}
END_TEST

static Suite *gslb_suite(void)
{
	Suite *s = suite_create("gslb");
	TCase *t = tcase_create("chain");
	tcase_add_test(t, chain_every_combination);
	tcase_add_test(t, chain_region_only_client);
	tcase_add_test(t, chain_isp_only_client);
	tcase_add_test(t, chain_full_order);
	suite_add_tcase(s, t);
	t = tcase_create("resolve");
	tcase_add_unchecked_fixture(t, store_setup, store_teardown);
	tcase_add_test(t, resolve_row_chain);
	tcase_add_test(t, resolve_memo);
	tcase_add_test(t, service_memo);
	tcase_add_test(t, resolve_all_down);
	tcase_add_test(t, resolve_ecs_scope);
	tcase_add_test(t, resolve_ipv6);
	tcase_add_test(t, resolve_sticky_scope);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(gslb_suite)
