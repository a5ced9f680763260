/* SPDX-License-Identifier: MIT */
/* The HTTP API's tokens: made by `gslbctl api token add`, shown once,
 * kept in the store (WDB_APITOKEN, key: the token's name) only as the
 * SHA-256 of the token, with its role, creation, expiry and revocation
 * times.  A request's token is hashed and compared with every stored
 * hash in constant time (CRYPTO_memcmp), so neither the hash nor the
 * time taken tells how much of a guess was right.  A token is never
 * logged: only its name is, and only its name goes into the audit.
 *
 * A token is "gslbd_" followed by 64 hex digits (32 random bytes). */
#ifndef GSLB_API_TOKEN_H
#define GSLB_API_TOKEN_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "store/weightdb.h"

#define API_TOKEN_PREFIX "gslbd_"
#define API_TOKEN_LEN (6 + 64)          /* the text, without its NUL */
#define API_TOKEN_NAME_MAX 63

/* What a token may do, each level all of the one below: read reads;
 * operate drains, undrains and pushes metrics; admin changes anything. */
typedef enum { API_ROLE_NONE = 0, API_ROLE_READ, API_ROLE_OPERATE,
               API_ROLE_ADMIN } api_role_t;

/** The role named @s ("read", "operate", "admin"), API_ROLE_NONE for
 * any other text. */
api_role_t api_role_parse(const char *s);
/** The name of @r ("read"...). */
const char *api_role_name(api_role_t r);

/** Whether @s is a token name: 1 to 63 letters, digits, '-', '_', '.'. */
int api_token_name_ok(const char *s);

/** Makes a new random token into @out (API_TOKEN_LEN + 1 bytes).
 * Returns 0, or -1 when the system gives no randomness. */
int api_token_make(char *out);

/** The SHA-256 of @tok in hex into @hex (65 bytes). */
void api_token_hash(const char *tok, char *hex);

/** The stored record of a new token @tok: {"role", "hash", "created",
 * "expires" (0: never)}.  A new reference. */
json_t *api_token_record(const char *tok, api_role_t role, int64_t created,
                         int64_t expires);

/** Finds token @tok among the stored ones (read in @t) at time @now:
 * returns its role with its name copied to @name (API_TOKEN_NAME_MAX +
 * 1 bytes), or API_ROLE_NONE with the reason in @why ("unknown token",
 * "token ci revoked", "token ci expired").  Every stored hash is
 * compared, in constant time, whichever matches. */
api_role_t api_token_find(wdb_txn_t *t, const char *tok, int64_t now,
                          char *name, char *why, size_t whylen);

#endif
