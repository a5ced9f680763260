/* SPDX-License-Identifier: MIT */
/* Key metadata in the store, private keys in the keystore. */
#include "dnssec/keydb.h"
#include "dnssec/key.h"
#include "common/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

json_t *keydb_key(wdb_txn_t *t, const char *zone, unsigned tag);

json_t *keydb_zone(wdb_txn_t *t, const char *zone)
{
	return wdb_get(t, WDB_DNSSEC, zone);
}

static int collect_key(const char *key, json_t *val, void *arg)
{
	(void)key;
	json_array_append(arg, val);
	return 0;
}

json_t *keydb_keys(wdb_txn_t *t, const char *zone)
{
	json_t *a = json_array();
	char prefix[300];
	snprintf(prefix, sizeof(prefix), "%s|", zone);
	wdb_each(t, WDB_DNSSEC, prefix, collect_key, a);
	return a;
}

static int collect_zone(const char *key, json_t *val, void *arg)
{
	if (!strchr(key, '|'))
		json_array_append(arg, val);
	return 0;
}

json_t *keydb_zones(wdb_txn_t *t)
{
	json_t *a = json_array();
	wdb_each(t, WDB_DNSSEC, NULL, collect_zone, a);
	return a;
}

char *keydb_path(const char *keystore, const char *file)
{
	size_t n = strlen(keystore) + strlen(file) + 2;
	char *p = xmalloc(n);
	snprintf(p, n, "%s/%s", keystore, file);
	return p;
}

size_t keydb_dnskey(json_t *rec, uint8_t *out)
{
	const char *pub = json_string_value(json_object_get(rec, "public_key"));
	json_int_t flags = json_integer_value(json_object_get(rec, "flags"));
	json_int_t alg = json_integer_value(json_object_get(rec, "algorithm"));
	if (!pub || flags <= 0 || flags > 65535 || alg <= 0 || alg > 255)
		return 0;
	int n = dnssec_b64_decode(pub, out + 4, DNSSEC_DNSKEY_MAX - 4);
	if (n <= 0)
		return 0;
	wr16(out, (uint16_t)flags);
	out[2] = 3;
	out[3] = (uint8_t)alg;
	return 4 + (size_t)n;
}

int keydb_ds(json_t *rec, const char *zone, char *out, size_t size)
{
	uint8_t dk[DNSSEC_DNSKEY_MAX], owner[256], low[256], dg[32];
	size_t dl = keydb_dnskey(rec, dk);
	if (!dl || !dname_from_str(zone, owner))
		return -1;
	dname_copy_lower(low, owner);
	if (dnssec_ds_digest(low, dk, dl, dg))
		return -1;
	char hex[65];
	for (int i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02X", dg[i]);
	snprintf(out, size, "%s. IN DS %u %u 2 %s", zone,
	         (unsigned)json_integer_value(json_object_get(rec, "tag")),
	         (unsigned)dk[3], hex);
	return 0;
}

/* Whether @zone has a key of tag @tag in @t already (a retired one
 * too: its tag may still be in caches). */
static int tag_used(wdb_txn_t *t, const char *zone, unsigned tag)
{
	json_t *j = keydb_key(t, zone, tag);
	json_decref(j);
	return j != NULL;
}

/* The tag of @zone's key of public key @pub (base64), or 0. */
static unsigned pub_used(wdb_txn_t *t, const char *zone, const char *pub)
{
	json_t *keys = keydb_keys(t, zone);
	unsigned tag = 0;
	size_t i;
	json_t *k;
	json_array_foreach(keys, i, k)
		if (!tag && !strcmp(pub, json_string_value(json_object_get(k,
		                    "public_key")) ?: ""))
			tag = (unsigned)json_integer_value(json_object_get(k, "tag"));
	json_decref(keys);
	return tag;
}

uint16_t keydb_role_flags(const char *role)
{
	return role && !strcmp(role, "zsk") ? DNSSEC_FLAGS_ZSK : DNSSEC_FLAGS_CSK;
}

json_t *keydb_add(wdb_txn_t *t, const char *keystore, const char *zone,
                  const dnssec_key_t *k, const char *role, const char *state,
                  int64_t now, char *err, size_t errlen)
{
	unsigned tag = dnssec_key_tag(k);
	int alg = dnssec_key_alg(k);
	if (tag_used(t, zone, tag)) {
		snprintf(err, errlen, "zone %s has a key of tag %u already", zone, tag);
		return NULL;
	}
	size_t dl;
	const uint8_t *dk = dnssec_key_dnskey(k, &dl);
	char pub[100];
	dnssec_b64_encode(dk + 4, dl - 4, pub);
	/* The same key under other flags has another tag, but is the same
	 * key: one record of it a zone. */
	unsigned other = pub_used(t, zone, pub);
	if (other) {
		snprintf(err, errlen, "zone %s has this key already, as key %u", zone,
		         other);
		return NULL;
	}
	/* BIND's naming (K<zone>.+<alg>+<tag>), which operators know. */
	char file[300];
	snprintf(file, sizeof(file), "K%s.+%03d+%05u.pem", zone, alg, tag);
	char *path = keydb_path(keystore, file);
	int rc = dnssec_key_save(k, path, err, errlen);
	free(path);
	if (rc)
		return NULL;
	int active = !strcmp(state, "active");
	json_t *rec = json_pack("{s:s, s:i, s:i, s:s, s:i, s:s, s:s, s:s, s:s, "
	                        "s:I, s:I}",
	                        "zone", zone, "tag", (int)tag, "algorithm", alg,
	                        "algorithm_name", dnssec_alg_name(alg),
	                        "flags", (int)dnssec_key_flags(k), "role", role,
	                        "state", state, "file", file,
	                        "public_key", pub,
	                        "created", (json_int_t)now,
	                        "published", (json_int_t)now);
	if (active)
		json_object_set_new(rec, "active", json_integer(now));
	char key[300];
	snprintf(key, sizeof(key), "%s|%u", zone, tag);
	if (wdb_set(t, WDB_DNSSEC, key, rec)) {
		snprintf(err, errlen, "zone %s: cannot store the key record", zone);
		path = keydb_path(keystore, file);
		unlink(path);
		free(path);
		json_decref(rec);
		return NULL;
	}
	return rec;
}

json_t *keydb_keygen(wdb_txn_t *t, const char *keystore, const char *zone,
                     int alg, const char *role, const char *state, int64_t now,
                     char *err, size_t errlen)
{
	dnssec_key_t *k = NULL;
	/* Two keys of a zone with one tag would make validators try both;
	 * a new one is drawn instead (1 in 65536 per key). */
	for (int tries = 0; tries < 16; tries++) {
		k = dnssec_key_generate(alg, keydb_role_flags(role), err, errlen);
		if (!k)
			return NULL;
		if (!tag_used(t, zone, dnssec_key_tag(k)))
			break;
		dnssec_key_free(k);
		k = NULL;
	}
	if (!k) {
		snprintf(err, errlen, "zone %s: no free key tag", zone);
		return NULL;
	}
	json_t *rec = keydb_add(t, keystore, zone, k, role, state, now, err, errlen);
	dnssec_key_free(k);
	return rec;
}

json_t *keydb_key(wdb_txn_t *t, const char *zone, unsigned tag)
{
	char k[300];
	snprintf(k, sizeof(k), "%s|%u", zone, tag);
	return wdb_get(t, WDB_DNSSEC, k);
}

int keydb_put(wdb_txn_t *t, json_t *rec)
{
	char k[300];
	snprintf(k, sizeof(k), "%s|%u",
	         json_string_value(json_object_get(rec, "zone")),
	         (unsigned)json_integer_value(json_object_get(rec, "tag")));
	return wdb_set(t, WDB_DNSSEC, k, rec);
}

int keydb_set_state(wdb_txn_t *t, json_t *rec, const char *state, int64_t now)
{
	json_object_set_new(rec, "state", json_string(state));
	/* The time each state was entered; "inactive": when a published
	 * key stopped signing. */
	const char *when = !strcmp(state, "active") ? "active" :
	                   !strcmp(state, "retired") ? "retired" : "inactive";
	if (strcmp(state, "published") ||
	    json_object_get(rec, "active"))
		json_object_set_new(rec, when, json_integer(now));
	return keydb_put(t, rec);
}

int keydb_live(json_t *rec)
{
	const char *st = json_string_value(json_object_get(rec, "state"));
	return st && (!strcmp(st, "active") || !strcmp(st, "published"));
}
