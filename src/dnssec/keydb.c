/* SPDX-License-Identifier: MIT */
/* Key metadata in the store, private keys in the keystore. */
#include "dnssec/keydb.h"
#include "dnssec/key.h"
#include "common/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* Whether @zone has a key of tag @tag in @t already. */
static int tag_used(wdb_txn_t *t, const char *zone, unsigned tag)
{
	char k[300];
	snprintf(k, sizeof(k), "%s|%u", zone, tag);
	json_t *j = wdb_get(t, WDB_DNSSEC, k);
	json_decref(j);
	return j != NULL;
}

json_t *keydb_keygen(wdb_txn_t *t, const char *keystore, const char *zone,
                     int alg, int64_t now, char *err, size_t errlen)
{
	dnssec_key_t *k = NULL;
	/* Two keys of a zone with one tag would make validators try both;
	 * a new one is drawn instead (1 in 65536 per key). */
	for (int tries = 0; tries < 16; tries++) {
		k = dnssec_key_generate(alg, DNSSEC_FLAGS_CSK, err, errlen);
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
	unsigned tag = dnssec_key_tag(k);
	size_t dl;
	const uint8_t *dk = dnssec_key_dnskey(k, &dl);
	char pub[100];
	dnssec_b64_encode(dk + 4, dl - 4, pub);
	/* BIND's naming (K<zone>.+<alg>+<tag>), which operators know. */
	char file[300];
	snprintf(file, sizeof(file), "K%s.+%03d+%05u.pem", zone, alg, tag);
	char *path = keydb_path(keystore, file);
	int rc = dnssec_key_save(k, path, err, errlen);
	free(path);
	dnssec_key_free(k);
	if (rc)
		return NULL;
	json_t *rec = json_pack("{s:s, s:i, s:i, s:s, s:i, s:s, s:s, s:s, s:s, "
	                        "s:I, s:I, s:I}",
	                        "zone", zone, "tag", (int)tag, "algorithm", alg,
	                        "algorithm_name", dnssec_alg_name(alg),
	                        "flags", DNSSEC_FLAGS_CSK, "role", "csk",
	                        "state", "active", "file", file,
	                        "public_key", pub,
	                        "created", (json_int_t)now,
	                        "published", (json_int_t)now,
	                        "active", (json_int_t)now);
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
