/* SPDX-License-Identifier: MIT */
/* Cluster mode's pure parts: the cluster section (defaults, every value,
 * errors naming file and line, absent = standalone), base64 and the
 * range end of a prefix, the answers' 64-bit fields, the key layout
 * in etcd, the signing key files' layout, puts and writes, and the
 * quorum verdict over the instances' views (S4-6). */
#include "cluster/clog.h"
#include "cluster/cluster_conf.h"
#include "cluster/etcd.h"
#include "cluster/keyfiles.h"
#include "cluster/quorum.h"
#include "cluster/sync.h"
#include "health/verdict.h"
#include "common/conf.h"
#include "common/log.h"
#include "unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[] = "/tmp/check_cluster-XXXXXX";
static char path[256];

static void setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/gslbd.conf", dir);
	log_set_level(GSLB_LOG_ERR);
}

static void teardown(void)
{
	remove(path);
	remove(dir);
}

#define ZONES "zones:\n  - name: example.test\n    file: example.test.zone\n"

/* Loads ZONES + @text and its cluster section into @o: 0 or -1. */
static int load(const char *text, cluster_conf_t *o, char *err, size_t errlen)
{
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(ZONES, f);
	fputs(text, f);
	fclose(f);
	err[0] = 0;
	conf_t *c = conf_load(path, err, errlen);
	ck_assert_msg(c != NULL, "conf_load: %s", err);
	int rc = cluster_conf_load(c, o, err, errlen);
	conf_free(c);
	return rc;
}

static void expect_error(const char *text, int line, const char *what)
{
	char err[1024], want[512];
	cluster_conf_t o;
	ck_assert_msg(load(text, &o, err, sizeof(err)) == -1, "accepted:\n%s", text);
	snprintf(want, sizeof(want), "%s:%d: ", path, line);
	ck_assert_msg(strncmp(err, want, strlen(want)) == 0,
	              "error '%s' does not start with '%s'", err, want);
	ck_assert_msg(strstr(err, what) != NULL, "error '%s' lacks '%s'", err, what);
}

START_TEST(absent_is_standalone)
{
	char err[512];
	cluster_conf_t o;
	ck_assert_int_eq(load("", &o, err, sizeof(err)), 0);
	ck_assert_int_eq(o.enabled, 0);
	ck_assert_uint_eq(o.nendpoints, 0);
}
END_TEST

START_TEST(defaults_and_values)
{
	char err[512];
	cluster_conf_t o;
	ck_assert_int_eq(load("cluster:\n  etcd: http://127.0.0.1:2379/\n  name: ns1\n",
	                      &o, err, sizeof(err)), 0);
	ck_assert_int_eq(o.enabled, 1);
	ck_assert_uint_eq(o.nendpoints, 1);
	ck_assert_str_eq(o.endpoints[0], "http://127.0.0.1:2379");
	ck_assert_str_eq(o.prefix, "/gslbd/");
	ck_assert_uint_eq(o.quorum, 0);
	ck_assert_uint_eq(o.lease_ttl, 5);
	ck_assert(o.timeout == 2);
	ck_assert(o.verify_interval == 60);
	ck_assert_uint_eq(o.log_keep, 10000);
	ck_assert_str_eq(o.region, "");
	cluster_conf_free(&o);
	ck_assert_int_eq(load("cluster:\n"
	                      "  etcd: [ \"https://a:2379\", \"https://b:2379\" ]\n"
	                      "  prefix: /dns/prod/\n"
	                      "  name: ns2\n"
	                      "  vantage: { region: cn-bj, isp: ctcc }\n"
	                      "  quorum: 2\n"
	                      "  lease-ttl: 10\n"
	                      "  timeout: 0.5\n"
	                      "  verify-interval: 0\n"
	                      "  log-keep: 500\n"
	                      "  tls: { ca: ca.pem, cert: c.pem, key: k.pem }\n"
	                      "  user: gslbd\n"
	                      "  password: secret\n", &o, err, sizeof(err)), 0);
	ck_assert_uint_eq(o.nendpoints, 2);
	ck_assert_str_eq(o.prefix, "/dns/prod/");
	ck_assert_str_eq(o.name, "ns2");
	ck_assert_str_eq(o.region, "cn-bj");
	ck_assert_str_eq(o.isp, "ctcc");
	ck_assert_uint_eq(o.quorum, 2);
	ck_assert_uint_eq(o.lease_ttl, 10);
	ck_assert(o.timeout == 0.5);
	ck_assert(o.verify_interval == 0);
	ck_assert_uint_eq(o.log_keep, 500);
	ck_assert_ptr_nonnull(strstr(o.ca, dir));   /* relative to the file */
	ck_assert_str_eq(o.user, "gslbd");
	ck_assert_str_eq(o.password, "secret");
	cluster_conf_free(&o);
}
END_TEST

START_TEST(errors)
{
	expect_error("cluster:\n  name: ns1\n", 5, "etcd is required");
	expect_error("cluster:\n  etcd: http://a:1\n", 5, "name is required");
	expect_error("cluster:\n  etcd: ftp://a:1\n  name: x\n", 5, "must be http://HOST:PORT");
	expect_error("cluster:\n  etcd: []\n  name: x\n", 5, "1 to 16 endpoints");
	expect_error("cluster:\n  etcd: http://a:1\n  name: \"n s\"\n", 6, "name 'n s'");
	expect_error("cluster:\n  etcd: http://a:1\n  name: x\n  prefix: gslbd\n", 7,
	             "must start and end with '/'");
	expect_error("cluster:\n  etcd: http://a:1\n  name: x\n  lease-ttl: 1\n", 7,
	             "cluster.lease-ttl must be a number from 2 to 600");
	expect_error("cluster:\n  etcd: http://a:1\n  name: x\n  log-keep: 5\n", 7,
	             "cluster.log-keep (records) must be a number from 10 to 100000");
	expect_error("cluster:\n  etcd: http://a:1\n  name: x\n  quorum: half\n", 7,
	             "cluster.quorum");
	expect_error("cluster:\n  etcd: http://a:1\n  name: x\n  colour: red\n", 7, "colour");
	expect_error("cluster:\n  etcd: http://a:1\n  name: x\n  vantage: { city: bj }\n", 7,
	             "city");
	expect_error("cluster:\n  etcd: http://a:1\n  name: x\n  user: u\n", 5,
	             "user and password go together");
	expect_error("cluster:\n  etcd: http://a:1\n  name: x\n  tls: { cert: c.pem }\n", 7,
	             "tls.cert and tls.key go together");
}
END_TEST

START_TEST(base64)
{
	static const char *const plain[] = { "", "a", "ab", "abc", "abcd",
	                                     "/gslbd/config/weight/www|*|*" };
	static const char *const enc[] = { "", "YQ==", "YWI=", "YWJj", "YWJjZA==",
	                                   "L2dzbGJkL2NvbmZpZy93ZWlnaHQvd3d3fCp8Kg==" };
	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) {
		char *b = etcd_b64(plain[i], strlen(plain[i]));
		ck_assert_str_eq(b, enc[i]);
		size_t n;
		char *p = etcd_unb64(b, &n);
		ck_assert_uint_eq(n, strlen(plain[i]));
		ck_assert_str_eq(p, plain[i]);
		free(b);
		free(p);
	}
	ck_assert_ptr_null(etcd_unb64("a!b=", NULL));
	char *end = etcd_prefix_end_b64("/gslbd/");
	char *p = etcd_unb64(end, NULL);
	ck_assert_str_eq(p, "/gslbd0");
	free(end);
	free(p);
}
END_TEST

START_TEST(answers)
{
	json_t *j = json_loads("{\"a\": \"12345678901\", \"b\": 7, \"kv\": "
	                       "{\"key\": \"YQ==\", \"mod_revision\": \"9\"}}", 0, NULL);
	ck_assert_int_eq(etcd_int(j, "a"), 12345678901LL);
	ck_assert_int_eq(etcd_int(j, "b"), 7);
	ck_assert_int_eq(etcd_int(j, "missing"), 0);
	etcd_kv_t kv;
	ck_assert_int_eq(etcd_kv_parse(json_object_get(j, "kv"), &kv), 0);
	ck_assert_str_eq(kv.key, "a");
	ck_assert_str_eq(kv.value, "");   /* an empty value is left out */
	ck_assert_int_eq(kv.mod_rev, 9);
	ck_assert_int_eq(kv.version, 0);
	etcd_kv_clear(&kv);
	json_decref(j);
}
END_TEST

START_TEST(key_layout)
{
	char k[256];
	cluster_key(k, sizeof(k), "/g/", WDB_WEIGHT, "www.x|*|*");
	ck_assert_str_eq(k, "/g/config/weight/www.x|*|*");
	wdb_kind_t kind;
	const char *key;
	ck_assert_int_eq(cluster_parse_key("/g/", k, &kind, &key), 1);
	ck_assert_int_eq(kind, WDB_WEIGHT);
	ck_assert_str_eq(key, "www.x|*|*");
	/* The elected instance's decisions are table keys; the views are
	 * not. */
	ck_assert_int_eq(cluster_parse_key("/g/", "/g/config/health/n1", &kind, &key), 1);
	ck_assert_int_eq(kind, WDB_HEALTH);
	ck_assert_int_eq(cluster_parse_key("/g/", "/g/health/n1/ns1", &kind, &key), 0);
	ck_assert_int_eq(cluster_parse_key("/g/", "/g/members/ns1", &kind, &key), 0);
	ck_assert_int_eq(cluster_parse_key("/g/", "/h/config/node/n1", &kind, &key), 0);
	ck_assert_int_eq(cluster_parse_key("/g/", "/g/config/node/", &kind, &key), 0);
	ck_assert(cluster_kind_shared(WDB_CUTOVER));
	ck_assert(cluster_kind_shared(WDB_HEALTH));
	ck_assert(cluster_kind_shared(WDB_BUDGET));
	ck_assert(cluster_kind_shared(WDB_STEER));
	ck_assert(!cluster_kind_shared(WDB_STEERIN));
	ck_assert(!cluster_kind_shared(WDB_STATUS));
	ck_assert(!cluster_kind_shared(WDB_METRICS));
	/* The signing keys' records are table objects. */
	ck_assert(cluster_kind_shared(WDB_DNSSEC));
	ck_assert_int_eq(cluster_parse_key("/g/", "/g/config/dnssec/z.test|123", &kind,
	                                   &key), 1);
	ck_assert_int_eq(kind, WDB_DNSSEC);
	ck_assert_str_eq(key, "z.test|123");
}
END_TEST

/* The key files through etcd: their keys, the puts a change makes (the
 * files its dnssec records name, nothing else), and the writes into a
 * keystore (0600, the same bytes left alone, bad names refused). */
START_TEST(key_files)
{
	const char *file;
	ck_assert_int_eq(cluster_keyfile_key("/g/", "/g/keystore/Kz.+015+00123.pem", &file), 1);
	ck_assert_str_eq(file, "Kz.+015+00123.pem");
	ck_assert_int_eq(cluster_keyfile_key("/g/", "/g/keystore/../x", &file), 0);
	ck_assert_int_eq(cluster_keyfile_key("/g/", "/g/keystore/a/b", &file), 0);
	ck_assert_int_eq(cluster_keyfile_key("/g/", "/g/keystore/", &file), 0);
	ck_assert_int_eq(cluster_keyfile_key("/g/", "/h/keystore/k.pem", &file), 0);
	ck_assert_int_eq(cluster_keyfile_key("/g/", "/g/config/dnssec/z", &file), 0);
	char ks[300], fp[400], err[512], buf[64];
	snprintf(ks, sizeof(ks), "%s/keys", dir);
	ck_assert_int_eq(mkdir(ks, 0700), 0);
	ck_assert_int_eq(cluster_keyfile_write(ks, "k1.pem", "PEM1", 4, err, sizeof(err)), 1);
	ck_assert_int_eq(cluster_keyfile_write(ks, "k1.pem", "PEM1", 4, err, sizeof(err)), 0);
	snprintf(fp, sizeof(fp), "%s/k1.pem", ks);
	struct stat st;
	ck_assert_int_eq(stat(fp, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0600);
	ck_assert_int_eq(cluster_keyfile_write(ks, "k1.pem", "PEM2!", 5, err, sizeof(err)), 1);
	FILE *f = fopen(fp, "r");
	size_t n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	ck_assert_int_eq(n, 5);
	ck_assert_int_eq(memcmp(buf, "PEM2!", 5), 0);
	ck_assert_int_eq(cluster_keyfile_write(ks, "../k.pem", "x", 1, err, sizeof(err)), -1);
	ck_assert_int_eq(cluster_keyfile_write(ks, "k2.pem", "", 0, err, sizeof(err)), -1);
	/* The puts: the file of the dnssec record, not the zone record's
	 * (no file) nor another kind's. */
	json_t *ch = json_pack("[{s:s, s:s, s:{s:s}}, {s:s, s:s, s:{s:b}},"
	                       " {s:s, s:s, s:{s:s}}]",
	                       "kind", "dnssec", "key", "z|1", "after", "file", "k1.pem",
	                       "kind", "dnssec", "key", "z", "after", "enabled", 1,
	                       "kind", "node", "key", "n", "after", "file", "k1.pem");
	json_t *ops = json_array();
	ck_assert_int_eq(cluster_keyfile_ops("/g/", ks, ch, ops, err, sizeof(err)), 0);
	ck_assert_int_eq(json_array_size(ops), 1);
	json_t *put = json_object_get(json_array_get(ops, 0), "request_put");
	size_t kl = 0, vl = 0;
	char *k = etcd_unb64(json_string_value(json_object_get(put, "key")), &kl);
	char *v = etcd_unb64(json_string_value(json_object_get(put, "value")), &vl);
	ck_assert_str_eq(k, "/g/keystore/k1.pem");
	ck_assert_str_eq(v, "PEM2!");
	free(k);
	free(v);
	/* A record whose file is not in the keystore: refused, naming it. */
	json_object_set_new(json_object_get(json_array_get(ch, 0), "after"), "file",
	                    json_string("gone.pem"));
	ck_assert_int_eq(cluster_keyfile_ops("/g/", ks, ch, ops, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "gone.pem"));
	/* ... unless the record named it before (a retire): in etcd since,
	 * left out; a record that named another file is still refused. */
	json_t *c0 = json_array_get(ch, 0);
	json_object_set_new(c0, "before", json_pack("{s:s}", "file", "other.pem"));
	ck_assert_int_eq(cluster_keyfile_ops("/g/", ks, ch, ops, err, sizeof(err)), -1);
	json_object_set_new(c0, "before", json_pack("{s:s}", "file", "gone.pem"));
	ck_assert_int_eq(cluster_keyfile_ops("/g/", ks, ch, ops, err, sizeof(err)), 0);
	ck_assert_int_eq(json_array_size(ops), 1);
	json_decref(ch);
	json_decref(ops);
	unlink(fp);
	rmdir(ks);
}
END_TEST

/* The views {instance: view} of @spec, "ns1=demoted ns2=up:50 ...". */
static json_t *views_of(const char *spec)
{
	json_t *v = json_object();
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", spec);
	for (char *sp, *tok = strtok_r(buf, " ", &sp); tok; tok = strtok_r(NULL, " ", &sp)) {
		char *eq = strchr(tok, '='), *colon = strchr(tok, ':');
		*eq = 0;
		if (colon)
			*colon = 0;
		json_object_set_new(v, tok, json_pack("{s:s, s:i}", "state", eq + 1,
		                    "pct", colon ? atoi(colon + 1) : 100));
	}
	return v;
}

static void combine(const char *spec, unsigned quorum, health_combined_t *out)
{
	json_t *v = views_of(spec);
	cluster_combine(v, quorum, out);
	json_decref(v);
}

/* S4-6: out when a quorum of the live vantages with a verdict see the
 * node down (default a majority); down from fewer, it stays in as
 * partial with the failing vantages listed. */
START_TEST(quorum_verdict)
{
	health_combined_t c;
	combine("ns1=up ns2=up ns3=up", 0, &c);
	ck_assert_int_eq(c.state, VERDICT_UP);
	ck_assert_uint_eq(c.views, 3);
	ck_assert_uint_eq(c.down, 0);
	ck_assert_uint_eq(c.quorum, 2);
	ck_assert_str_eq(c.failing, "");
	/* One of three: partial, in at full weight. */
	combine("ns1=up ns3=demoted ns2=up", 0, &c);
	ck_assert_int_eq(c.state, VERDICT_UP);
	ck_assert_uint_eq(c.down, 1);
	ck_assert_uint_eq(c.pct, 100);
	ck_assert_str_eq(c.failing, "ns3");
	/* Two of three: out, both named in order. */
	combine("ns3=demoted ns2=up ns1=demoted", 0, &c);
	ck_assert_int_eq(c.state, VERDICT_DEMOTED);
	ck_assert_uint_eq(c.down, 2);
	ck_assert_str_eq(c.failing, "ns1 ns3");
	/* A vantage without a verdict does not count: 1 of 2 is no
	 * majority of 2. */
	combine("ns1=demoted ns2=up ns3=unknown", 0, &c);
	ck_assert_int_eq(c.state, VERDICT_UP);
	ck_assert_uint_eq(c.views, 2);
	ck_assert_uint_eq(c.quorum, 2);
	/* The last live vantage decides alone. */
	combine("ns1=demoted", 0, &c);
	ck_assert_int_eq(c.state, VERDICT_DEMOTED);
	/* A configured quorum; above the number of views it means all. */
	combine("ns1=demoted ns2=up ns3=up", 1, &c);
	ck_assert_int_eq(c.state, VERDICT_DEMOTED);
	combine("ns1=demoted ns2=demoted ns3=up", 3, &c);
	ck_assert_int_eq(c.state, VERDICT_UP);
	ck_assert_str_eq(c.failing, "ns1 ns2");
	combine("ns1=demoted ns2=demoted", 5, &c);
	ck_assert_int_eq(c.state, VERDICT_DEMOTED);
	ck_assert_uint_eq(c.quorum, 2);
	/* The weight of a node that stays in: the median of the others',
	 * the lower middle of an even count. */
	combine("ns1=derated:50 ns2=up ns3=derated:50", 0, &c);
	ck_assert_int_eq(c.state, VERDICT_DERATED);
	ck_assert_uint_eq(c.pct, 50);
	combine("ns1=derated:50 ns2=up ns3=demoted", 0, &c);
	ck_assert_int_eq(c.state, VERDICT_DERATED);
	ck_assert_uint_eq(c.pct, 50);
	combine("ns1=up ns2=up:100 ns3=derated:70", 0, &c);
	ck_assert_int_eq(c.state, VERDICT_UP);
	/* Nobody has a verdict. */
	combine("ns1=unknown", 0, &c);
	ck_assert_int_eq(c.state, VERDICT_UNKNOWN);
	cluster_combine(NULL, 0, &c);
	ck_assert_int_eq(c.state, VERDICT_UNKNOWN);
	ck_assert_uint_eq(c.views, 0);
}
END_TEST

/* What gslbctl, the log and /healthz say when etcd fails: no member
 * answering is "unreachable"; at most half answering without a leader is
 * "no quorum", naming them; more than half without a leader is an
 * election under way. */
/* The put of a record @rec into the log: its key and decoded value. */
static json_t *log_put(json_t *rec, char *key, size_t keylen)
{
	json_t *op = cluster_log_op("/p/", rec);
	json_t *put = json_object_get(op, "request_put");
	size_t n;
	char *k = etcd_unb64(json_string_value(json_object_get(put, "key")), &n);
	snprintf(key, keylen, "%s", k);
	free(k);
	char *v = etcd_unb64(json_string_value(json_object_get(put, "value")), &n);
	json_t *got = json_loadb(v, n, 0, NULL);
	free(v);
	json_decref(op);
	return got;
}

START_TEST(log_record)
{
	char k1[128], k2[128];
	/* The revision names the record: a local id is not sent. */
	json_t *got = log_put(json_pack("{s:i, s:s, s:[{s:s, s:s, s:n, s:{s:i}}]}", "id", 7,
	    "what", "node add a", "changes", "kind", "node", "key", "a", "before",
	    "after", "w", 1), k1, sizeof(k1));
	ck_assert_ptr_null(json_object_get(got, "id"));
	ck_assert_str_eq(json_string_value(json_object_get(got, "what")), "node add a");
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(json_array_get(
	    json_object_get(got, "changes"), 0), "after"), "w")), 1);
	ck_assert_ptr_null(json_object_get(got, "objects_left_out"));
	json_decref(got);
	ck_assert_int_eq(strncmp(k1, "/p/log/", 7), 0);
	ck_assert_uint_eq(strlen(k1), 7 + 16);
	/* Too large: which objects changed, not the objects. */
	char *big = malloc(CLUSTER_LOG_RECORD_MAX + 2);
	memset(big, 'x', CLUSTER_LOG_RECORD_MAX + 1);
	big[CLUSTER_LOG_RECORD_MAX + 1] = 0;
	got = log_put(json_pack("{s:s, s:[{s:s, s:s, s:n, s:{s:s}}]}", "what", "apply",
	    "changes", "kind", "node", "key", "a", "before", "after", "big", big),
	    k2, sizeof(k2));
	free(big);
	ck_assert(json_is_true(json_object_get(got, "objects_left_out")));
	json_t *c = json_array_get(json_object_get(got, "changes"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(c, "key")), "a");
	ck_assert_ptr_null(json_object_get(c, "after"));
	json_decref(got);
	/* Two records never share a key. */
	ck_assert_str_ne(k1, k2);
	/* The decisions' smaller limit. */
	json_t *op = cluster_log_op_max("/p/", json_pack("{s:s, s:[{s:s, s:s, s:{s:i}}]}",
	    "what", "steer x", "changes", "kind", "weight", "key", "s|*|*", "after", "w", 1), 10);
	size_t n;
	char *v = etcd_unb64(json_string_value(json_object_get(json_object_get(op,
	    "request_put"), "value")), &n);
	got = json_loadb(v, n, 0, NULL);
	free(v);
	json_decref(op);
	ck_assert(json_is_true(json_object_get(got, "objects_left_out")));
	json_decref(got);
}
END_TEST

START_TEST(health_text)
{
	char out[400];
	etcd_health_t h = { 3, 0, 0, "" };
	ck_assert_str_eq(etcd_health_state(&h), "unreachable");
	etcd_health_text(&h, "x: Couldn't connect", out, sizeof(out));
	ck_assert_str_eq(out, "etcd is unreachable: x: Couldn't connect");
	h = (etcd_health_t){ 3, 1, 0, "e1" };
	ck_assert_str_eq(etcd_health_state(&h), "no-quorum");
	etcd_health_text(&h, "timed out", out, sizeof(out));
	ck_assert_str_eq(out, "no quorum: 1 of 3 members answer (e1)");
	/* Two of four is no majority either. */
	h = (etcd_health_t){ 4, 2, 0, "e1, e2" };
	ck_assert_str_eq(etcd_health_state(&h), "no-quorum");
	h = (etcd_health_t){ 3, 2, 0, "e1, e2" };
	ck_assert_str_eq(etcd_health_state(&h), "no-leader");
	etcd_health_text(&h, "no leader", out, sizeof(out));
	ck_assert_str_eq(out, "no leader: 2 of 3 members answer (e1, e2), electing: no leader");
	h = (etcd_health_t){ 3, 3, 1, "e1, e2, e3" };
	ck_assert_str_eq(etcd_health_state(&h), "up");
	etcd_health_text(&h, "key too large", out, sizeof(out));
	ck_assert_str_eq(out, "etcd failed: key too large");
}
END_TEST

static Suite *cluster_suite(void)
{
	Suite *s = suite_create("cluster");
	TCase *t = tcase_create("cluster");
	tcase_add_unchecked_fixture(t, setup, teardown);
	tcase_add_test(t, absent_is_standalone);
	tcase_add_test(t, defaults_and_values);
	tcase_add_test(t, errors);
	tcase_add_test(t, base64);
	tcase_add_test(t, answers);
	tcase_add_test(t, key_layout);
	tcase_add_test(t, key_files);
	tcase_add_test(t, quorum_verdict);
	tcase_add_test(t, health_text);
	tcase_add_test(t, log_record);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(cluster_suite)
