/* SPDX-License-Identifier: MIT */
/* What key.c shares with keyfile.c (the imports). */
#ifndef GSLB_DNSSEC_KEY_INT_H
#define GSLB_DNSSEC_KEY_INT_H

#include <openssl/evp.h>

#include "dnssec/key.h"

/** A key of @p (which it takes), or NULL (and @p freed) when its public
 * key cannot be read. */
dnssec_key_t *dnssec__key_new(EVP_PKEY *p, int alg, uint16_t flags);
/** The algorithm @p is a key of (13 or 15), or 0. */
int dnssec__pkey_alg(EVP_PKEY *p);
/** What @p is, for an error ("RSA", "Ed448" ...). */
const char *dnssec__pkey_desc(EVP_PKEY *p);
/** OpenSSL's last error as text (and the error queue cleared). */
const char *dnssec__ossl_err(void);

#endif
