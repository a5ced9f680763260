/* SPDX-License-Identifier: MIT */
/* Keys beyond one CSK: BIND private-key files imported (the examples of
 * RFC 6605 §6.1 and RFC 8080 §6, whose key tags and DNSKEYs are known),
 * their errors naming file and line, what each role signs, and the
 * rollover state machine: its steps in order, each due only after its
 * wait, and the store records each step leaves. */
#include "common/util.h"
#include "dnssec/dnssec.h"
#include "dnssec/key.h"
#include "dnssec/keydb.h"
#include "dnssec/roll.h"
#include "store_fixture.h"
#include "unit.h"

#include <string.h>

static char g_dir[PATH_MAX];

/* Writes @text into file @name of a new temporary directory; returns
 * the file's path (static). */
static const char *key_file(const char *name, const char *text)
{
	static char path[PATH_MAX + 64];
	ck_assert_int_eq(fx_mkdtemp(g_dir, "keyfile"), 0);
	ck_assert_int_eq(fx_write(g_dir, name, text), 0);
	snprintf(path, sizeof(path), "%s/%s", g_dir, name);
	return path;
}

/* The key of BIND file @text, checked against the known tag and DNSKEY
 * key field (base64). */
static void import_known(const char *text, uint16_t tag, const char *pub)
{
	char err[512] = "";
	dnssec_key_t *k = dnssec_key_import(key_file("K.private", text),
	                                    DNSSEC_FLAGS_CSK, err, sizeof(err));
	ck_assert_msg(k != NULL, "%s", err);
	ck_assert_uint_eq(dnssec_key_tag(k), tag);
	size_t l;
	const uint8_t *d = dnssec_key_dnskey(k, &l);
	char b64[128];
	dnssec_b64_encode(d + 4, l - 4, b64);
	ck_assert_str_eq(b64, pub);
	/* It signs, and its own public key verifies it. */
	dnssec_md_t *m = dnssec_md_new();
	uint8_t sig[DNSSEC_SIG_MAX];
	size_t sl = dnssec_key_sign(k, m, (const uint8_t *)"abc", 3, sig);
	ck_assert_uint_eq(sl, 64);
	ck_assert_int_eq(dnssec_key_verify(k, (const uint8_t *)"abc", 3, sig, sl), 1);
	dnssec_md_free(m);
	dnssec_key_free(k);
	fx_rmrf(g_dir);
}

START_TEST(import_bind_ecdsa_rfc6605)
{
	import_known("Private-key-format: v1.2\n"
	             "Algorithm: 13 (ECDSAP256SHA256)\n"
	             "PrivateKey: GU6SnQ/Ou+xC5RumuIUIuJZteXT2z0O/ok1s38Et6mQ=\n",
	             55648, "GojIhhXUN/u4v54ZQqGSnyhWJwaubCvTmeexv7bR6edbkrSqQpF64cYb"
	             "cB7wNcP+e+MAnLr+Wi9xMWyQLc8NAA==");
}
END_TEST

START_TEST(import_bind_ed25519_rfc8080)
{
	import_known("Private-key-format: v1.3\n"
	             "Algorithm: 15 (ED25519)\n"
	             "PrivateKey: ODIyNjAzODQ2MjgwODAxMjI2NDUxOTAyMDQxNDIyNjI=\n"
	             "Created: 20260101000000\n",
	             3613, "l02Woi0iS8Aa25FQkUd9RMzZHJpBoRQwAQEX1SxZJA4=");
}
END_TEST

/* Import of @text fails with an error holding @want. */
static void import_fails(const char *text, const char *want)
{
	char err[512] = "";
	dnssec_key_t *k = dnssec_key_import(key_file("bad.private", text),
	                                    DNSSEC_FLAGS_CSK, err, sizeof(err));
	ck_assert_ptr_null(k);
	ck_assert_msg(strstr(err, want) != NULL, "'%s' lacks '%s'", err, want);
	fx_rmrf(g_dir);
}

START_TEST(import_errors_name_file_and_line)
{
	import_fails("Private-key-format: v1.3\nAlgorithm: 8 (RSASHA256)\n",
	             "bad.private:2: Algorithm 8 (RSASHA256) is not served");
	import_fails("Private-key-format: v1.3\nAlgorithm: 13\n; x\nPrivateKey: AAAA\n",
	             "bad.private:4: PrivateKey is not the base64 of a 32-byte key");
	import_fails("Private-key-format: v1.3\nAlgorithm: 13\n",
	             "bad.private: no PrivateKey line");
	import_fails("Private-key-format: v1.3\nPrivateKey: "
	             "GU6SnQ/Ou+xC5RumuIUIuJZteXT2z0O/ok1s38Et6mQ=\n",
	             "bad.private: no Algorithm line");
	/* A P-256 scalar of zero is no key. */
	import_fails("Private-key-format: v1.3\nAlgorithm: 13\nPrivateKey: "
	             "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n",
	             "bad.private:3: PrivateKey is not a valid ECDSAP256SHA256 key");
	import_fails("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
	             "bad.private: not a PEM private key");
	import_fails("\n", "bad.private:1: neither a PEM private key nor BIND");
}
END_TEST

START_TEST(roles)
{
	ck_assert_uint_eq(dnssec_role_use("csk"), DNSSEC_USE_KEYSET | DNSSEC_USE_ZONE);
	ck_assert_uint_eq(dnssec_role_use("ksk"), DNSSEC_USE_KEYSET);
	ck_assert_uint_eq(dnssec_role_use("zsk"), DNSSEC_USE_ZONE);
	ck_assert_uint_eq(dnssec_role_use("sep"), 0);
	ck_assert_uint_eq(dnssec_role_use(NULL), 0);
	/* DNSKEY, CDS, CDNSKEY: the key set; everything else: the zone. */
	ck_assert_uint_eq(dnssec_type_use(48), DNSSEC_USE_KEYSET);
	ck_assert_uint_eq(dnssec_type_use(59), DNSSEC_USE_KEYSET);
	ck_assert_uint_eq(dnssec_type_use(60), DNSSEC_USE_KEYSET);
	ck_assert_uint_eq(dnssec_type_use(1), DNSSEC_USE_ZONE);
	ck_assert_uint_eq(dnssec_type_use(47), DNSSEC_USE_ZONE);
	ck_assert_uint_eq(dnssec_type_use(43), DNSSEC_USE_ZONE);
	ck_assert_uint_eq(keydb_role_flags("zsk"), 256);
	ck_assert_uint_eq(keydb_role_flags("ksk"), 257);
	ck_assert_uint_eq(keydb_role_flags("csk"), 257);
}
END_TEST

/* The settings of the state machine's tests: lifetimes 100 s, DNSKEY TTL
 * 10, margins 5 and 7, zone TTL 20, DS checks every 30 s. */
static dnssec_conf_t conf(void)
{
	dnssec_conf_t c = { 0 };
	c.zsk_lifetime = c.csk_lifetime = c.ksk_lifetime = 100;
	c.dnskey_ttl = 10;
	c.publish_safety = 5;
	c.retire_safety = 7;
	c.max_zone_ttl = 20;
	c.ds_check_interval = 30;
	c.keystore = g_dir;
	return c;
}

START_TEST(plan_start_by_lifetime)
{
	dnssec_conf_t c = conf();
	json_t *zone = json_pack("{s:s, s:b}", "zone", "x.test", "enabled", 1);
	json_t *keys = json_pack("[{s:i, s:s, s:s, s:i}, {s:i, s:s, s:s, s:i},"
	                         " {s:i, s:s, s:s, s:i}]",
	                         "tag", 1, "role", "ksk", "state", "active", "active", 1000,
	                         "tag", 2, "role", "zsk", "state", "active", "active", 950,
	                         "tag", 3, "role", "zsk", "state", "retired", "active", 10);
	roll_plan_t p;
	roll_plan(&c, zone, keys, 1049, 0, &p);
	/* The ZSK's lifetime ends first (950 + 100); nothing due yet. */
	ck_assert_int_eq(p.action, ROLL_NONE);
	ck_assert_int_eq(p.step, ROLL_START);
	ck_assert_str_eq(p.kind, "zsk");
	ck_assert_uint_eq(p.old_tag, 2);
	ck_assert_int_eq(p.at, 1050);
	roll_plan(&c, zone, keys, 1050, 0, &p);
	ck_assert_int_eq(p.action, ROLL_START);
	/* A lifetime of 0 never rolls. */
	c.zsk_lifetime = 0;
	roll_plan(&c, zone, keys, 1050, 0, &p);
	ck_assert_int_eq(p.action, ROLL_NONE);
	ck_assert_str_eq(p.kind, "ksk");
	ck_assert_int_eq(p.at, 1100);
	c.ksk_lifetime = 0;
	roll_plan(&c, zone, keys, 5000, 0, &p);
	ck_assert_int_eq(p.step, ROLL_NONE);
	json_decref(zone);
	json_decref(keys);
}
END_TEST

/* The plan of @db's zone x.test at @now. */
static roll_plan_t plan_at(weightdb_t *db, const dnssec_conf_t *c, int64_t now,
                           int64_t checked)
{
	wdb_txn_t *t = wdb_begin_read(db);
	json_t *z = keydb_zone(t, "x.test"), *k = keydb_keys(t, "x.test");
	wdb_abort(t);
	roll_plan_t p;
	roll_plan(c, z, k, now, checked, &p);
	json_decref(z);
	json_decref(k);
	return p;
}

/* The next step of @db's zone is @step, due at @at: not at @at - 1. */
static roll_plan_t due_at(weightdb_t *db, const dnssec_conf_t *c,
                          roll_action_t step, int64_t at, int64_t checked)
{
	roll_plan_t p = plan_at(db, c, at - 1, checked);
	ck_assert_int_eq(p.action, ROLL_NONE);
	ck_assert_int_eq(p.step, step);
	ck_assert_int_eq(p.at, at);
	p = plan_at(db, c, at, checked);
	ck_assert_int_eq(p.action, step);
	return p;
}

/* Applies @p at @now in its own transaction. */
static void apply(weightdb_t *db, const roll_plan_t *p, int64_t now)
{
	char err[512] = "", what[512] = "";
	wdb_txn_t *t = wdb_begin(db, "dnssec", err, sizeof(err));
	ck_assert_ptr_nonnull(t);
	char made[PATH_MAX] = "x";
	ck_assert_msg(roll_apply(t, g_dir, "x.test", p, now, what, sizeof(what),
	                         made, sizeof(made), err, sizeof(err)) == 0, "%s",
	              err);
	/* Only the start writes a key file, into the keystore. */
	if (p->action == ROLL_START)
		ck_assert_int_eq(strncmp(made, g_dir, strlen(g_dir)), 0);
	else
		ck_assert_str_eq(made, "");
	ck_assert_msg(wdb_commit(t, what, err, sizeof(err)) > 0, "%s", err);
}

/* The state of key @tag of x.test. */
static const char *state_of(weightdb_t *db, unsigned tag, int *cds)
{
	static char st[32];
	wdb_txn_t *t = wdb_begin_read(db);
	json_t *k = keydb_key(t, "x.test", tag);
	wdb_abort(t);
	ck_assert_ptr_nonnull(k);
	snprintf(st, sizeof(st), "%s", json_string_value(json_object_get(k, "state")));
	if (cds)
		*cds = json_is_true(json_object_get(k, "cds"));
	json_decref(k);
	return st;
}

/* A store with zone x.test and one active key of @role from time 1000. */
static weightdb_t *roll_store(const char *role, unsigned *tag)
{
	ck_assert_int_eq(fx_mkdtemp(g_dir, "roll"), 0);
	char err[512] = "", path[PATH_MAX + 8];
	snprintf(path, sizeof(path), "%s/db", g_dir);
	weightdb_t *db = weightdb_open(path, err, sizeof(err));
	ck_assert_msg(db != NULL, "%s", err);
	wdb_txn_t *t = wdb_begin(db, "test", err, sizeof(err));
	json_t *z = json_pack("{s:s, s:b}", "zone", "x.test", "enabled", 1);
	wdb_set(t, WDB_DNSSEC, "x.test", z);
	json_decref(z);
	json_t *k = keydb_keygen(t, g_dir, "x.test", DNSSEC_ALG_ED25519, role,
	                         "active", 1000, err, sizeof(err));
	ck_assert_msg(k != NULL, "%s", err);
	*tag = (unsigned)json_integer_value(json_object_get(k, "tag"));
	json_decref(k);
	ck_assert_int_gt(wdb_commit(t, "test", err, sizeof(err)), 0);
	return db;
}

START_TEST(zsk_prepublication)
{
	dnssec_conf_t c = conf();
	unsigned old;
	weightdb_t *db = roll_store("zsk", &old);
	roll_plan_t p = plan_at(db, &c, 1100, 0);
	ck_assert_int_eq(p.action, ROLL_START);
	apply(db, &p, 1100);
	p = plan_at(db, &c, 1100, 0);
	unsigned nw = p.new_tag;
	ck_assert_uint_ne(nw, 0);
	ck_assert_uint_eq(p.old_tag, old);
	ck_assert_str_eq(state_of(db, nw, NULL), "published");
	ck_assert_str_eq(state_of(db, old, NULL), "active");
	/* Switch after DNSKEY TTL + publish-safety: 1100 + 10 + 5. */
	p = due_at(db, &c, ROLL_SWITCH, 1115, 0);
	apply(db, &p, 1115);
	ck_assert_str_eq(state_of(db, nw, NULL), "active");
	ck_assert_str_eq(state_of(db, old, NULL), "published");
	/* Withdraw after max-zone-ttl + retire-safety: 1115 + 20 + 7. */
	p = due_at(db, &c, ROLL_WITHDRAW, 1142, 0);
	apply(db, &p, 1142);
	ck_assert_str_eq(state_of(db, old, NULL), "retired");
	ck_assert_str_eq(state_of(db, nw, NULL), "active");
	/* Done; the next one is planned by the new key's activation. */
	p = plan_at(db, &c, 1142, 0);
	ck_assert_int_eq(p.step, ROLL_START);
	ck_assert_uint_eq(p.old_tag, nw);
	ck_assert_int_eq(p.at, 1215);
	weightdb_close(db);
	fx_rmrf(g_dir);
}
END_TEST

START_TEST(csk_double_signature_waits_for_the_ds)
{
	dnssec_conf_t c = conf();
	unsigned old;
	int cds;
	weightdb_t *db = roll_store("csk", &old);
	roll_plan_t p = plan_at(db, &c, 1100, 0);
	ck_assert_str_eq(p.kind, "csk");
	apply(db, &p, 1100);
	p = plan_at(db, &c, 1100, 0);
	unsigned nw = p.new_tag;
	ck_assert_str_eq(state_of(db, nw, &cds), "active");     /* both sign */
	ck_assert_int_eq(cds, 0);
	ck_assert_str_eq(state_of(db, old, NULL), "active");
	/* CDS after max(DNSKEY TTL, zone TTL) + publish-safety: 1100 + 25. */
	p = due_at(db, &c, ROLL_CDS, 1125, 0);
	apply(db, &p, 1125);
	ck_assert_str_eq(state_of(db, nw, &cds), "active");
	ck_assert_int_eq(cds, 1);
	/* DS checks: at once, then every ds-check-interval; never a
	 * withdrawal while the parent does not serve the DS. */
	p = plan_at(db, &c, 1125, 0);
	ck_assert_int_eq(p.action, ROLL_DS_CHECK);
	due_at(db, &c, ROLL_DS_CHECK, 1155, 1125);
	ck_assert_int_eq(plan_at(db, &c, 99999, 99990).step, ROLL_DS_CHECK);
	char err[512] = "", what[512];
	wdb_txn_t *t = wdb_begin(db, "dnssec", err, sizeof(err));
	ck_assert_int_eq(roll_ds_seen(t, "x.test", 60, 1160, what, sizeof(what)), 0);
	ck_assert_int_gt(wdb_commit(t, what, err, sizeof(err)), 0);
	/* Withdraw after the DS TTL + retire-safety: 1160 + 60 + 7. */
	p = due_at(db, &c, ROLL_WITHDRAW, 1227, 0);
	apply(db, &p, 1227);
	ck_assert_str_eq(state_of(db, old, &cds), "retired");
	ck_assert_str_eq(state_of(db, nw, &cds), "active");
	ck_assert_int_eq(cds, 0);                  /* CDS gone with it */
	weightdb_close(db);
	fx_rmrf(g_dir);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("dnssec_roll");
	TCase *k = tcase_create("keys");
	tcase_add_test(k, import_bind_ecdsa_rfc6605);
	tcase_add_test(k, import_bind_ed25519_rfc8080);
	tcase_add_test(k, import_errors_name_file_and_line);
	tcase_add_test(k, roles);
	suite_add_tcase(s, k);
	TCase *r = tcase_create("roll");
	tcase_add_test(r, plan_start_by_lifetime);
	tcase_add_test(r, zsk_prepublication);
	tcase_add_test(r, csk_double_signature_waits_for_the_ds);
	suite_add_tcase(s, r);
	return s;
}

UNIT_MAIN(suite)
