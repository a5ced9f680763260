/* SPDX-License-Identifier: MIT */
/* Signing keys in the store (the "dnssec" table, store/weightdb.h) and
 * their private halves in the keystore directory.
 *
 *   "ZONE"      {"zone", "enabled", "algorithm", "enabled_at", "split",
 *                "roll"}
 *   "ZONE|TAG"  {"zone", "tag", "algorithm", "algorithm_name", "flags",
 *                "role", "state", "file", "public_key", "created",
 *                "published", "active", "inactive", "retired", "cds"}
 *
 * ZONE is the zone's name in presentation form, lowercase, without the
 * final dot; TAG the key tag in decimal.  "state" is "active" (in the
 * DNSKEY RRset, signing), "published" (in the DNSKEY RRset only) or
 * "retired" (neither; the record and its file are kept, and its tag is
 * not used again).  "role" is "csk" (one combined key: flags 257),
 * "ksk" (flags 257, signs the DNSKEY, CDS and CDNSKEY RRsets only) or
 * "zsk" (flags 256, signs everything else); "split" is true for a zone
 * enabled with a KSK and a ZSK, which its rollovers keep.  "cds": the
 * key's CDS and CDNSKEY are published (a KSK or CSK rollover, RFC 7344).
 * "roll" is the rollover in progress (dnssec/roll.h), absent between
 * two.  Times are unix seconds.  "file" is the PEM file's name inside
 * the keystore; "public_key" the DNSKEY's key field in base64, so that
 * the DS and the DNSKEY can be shown without the private key, and a
 * file holding another key is refused at load.
 *
 * Used by gslbctl (writes, in its audited transactions), by the
 * daemon's key loading (dnssec.c, reads) and by its rollovers
 * (roll.c, writes, audited as "dnssec"). */
#ifndef GSLB_DNSSEC_KEYDB_H
#define GSLB_DNSSEC_KEYDB_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "dnssec/key.h"
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

/** The DNSKEY flags of role @role: 256 for "zsk", 257 (SEP) for "ksk"
 * and "csk". */
uint16_t keydb_role_flags(const char *role);

/** Writes the private key of @k into @keystore (mode 0600, named as BIND
 * names it) and its record into @t, with @role and @state ("active":
 * signing from @now; "published": in the DNSKEY RRset only).  Refuses a
 * key tag the zone has already.  Returns the record (a new reference;
 * its "file" is the file written, which the caller removes when @t is
 * not committed) or NULL with the reason in @err. */
json_t *keydb_add(wdb_txn_t *t, const char *keystore, const char *zone,
                  const dnssec_key_t *k, const char *role, const char *state,
                  int64_t now, char *err, size_t errlen);

/** Generates a key of @alg with the flags of @role for @zone, with a key
 * tag that differs from those of the zone's other keys, and adds it as
 * keydb_add() does. */
json_t *keydb_keygen(wdb_txn_t *t, const char *keystore, const char *zone,
                     int alg, const char *role, const char *state, int64_t now,
                     char *err, size_t errlen);

/** The record of key @tag of @zone (a new reference), or NULL. */
json_t *keydb_key(wdb_txn_t *t, const char *zone, unsigned tag);

/** Stores key record @rec under its zone and tag.  Returns 0 or an
 * error of wdb_set(). */
int keydb_put(wdb_txn_t *t, json_t *rec);

/** Sets the state of key record @rec to @state from @now (the time goes
 * into "active", "inactive" when an active key goes back to published,
 * or "retired") and stores it. */
int keydb_set_state(wdb_txn_t *t, json_t *rec, const char *state, int64_t now);

/** Whether key record @rec is in the DNSKEY RRset (active or published). */
int keydb_live(json_t *rec);

#endif
