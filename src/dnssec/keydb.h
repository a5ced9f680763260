/* SPDX-License-Identifier: MIT */
/* Signing keys in the store (the "dnssec" table, store/weightdb.h) and
 * their private halves in the keystore directory.
 *
 *   "ZONE"      {"zone", "enabled", "algorithm", "enabled_at"}
 *   "ZONE|TAG"  {"zone", "tag", "algorithm", "algorithm_name", "flags",
 *                "role", "state", "file", "public_key", "created",
 *                "published", "active"}
 *
 * ZONE is the zone's name in presentation form, lowercase, without the
 * final dot; TAG the key tag in decimal.  "state" is "active" (in the
 * DNSKEY RRset, signing) or "published" (in the DNSKEY RRset only);
 * "role" is "csk" (one combined key: flags 257).  Rollovers will add
 * states and roles without changing these fields.  Times are unix
 * seconds.  "file" is the PEM file's name inside the keystore;
 * "public_key" the DNSKEY's key field in base64, so that the DS and the
 * DNSKEY can be shown without the private key, and a file holding
 * another key is refused at load.
 *
 * Used by gslbctl (writes, in its audited transactions) and by the
 * daemon's key loading (dnssec.c, reads). */
#ifndef GSLB_DNSSEC_KEYDB_H
#define GSLB_DNSSEC_KEYDB_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "store/weightdb.h"

/** The signing record of @zone (a new reference), or NULL. */
json_t *keydb_zone(wdb_txn_t *t, const char *zone);

/** The key records of @zone, in the order of their store keys (a new
 * array). */
json_t *keydb_keys(wdb_txn_t *t, const char *zone);

/** Every zone record of the store (a new array). */
json_t *keydb_zones(wdb_txn_t *t);

/** The path of key file @file in @keystore (the caller frees it). */
char *keydb_path(const char *keystore, const char *file);

/** The DNSKEY rdata of key record @rec into @out (DNSSEC_DNSKEY_MAX
 * bytes).  Returns its length, or 0 when the record is incomplete. */
size_t keydb_dnskey(json_t *rec, uint8_t *out);

/** The DS record (digest type 2) of key record @rec for zone @zone, in
 * presentation form ("ZONE. IN DS TAG ALG 2 HEX"), into @out (@size
 * bytes, 200 suffice).  Returns 0 or -1. */
int keydb_ds(json_t *rec, const char *zone, char *out, size_t size);

/** Generates a key of @alg for @zone, writes its private key into
 * @keystore (mode 0600) and its record into @t as active from @now.
 * The key tag differs from those of the zone's other keys.  Returns the
 * record (a new reference; its "file" is the file written, which the
 * caller removes when @t is not committed) or NULL with the reason in
 * @err. */
json_t *keydb_keygen(wdb_txn_t *t, const char *keystore, const char *zone,
                     int alg, int64_t now, char *err, size_t errlen);

#endif
