/* SPDX-License-Identifier: MIT */
/* DNSSEC keys: generation, the PEM files of the keystore, the DNSKEY
 * record, key tag and DS digest, and signing.  Every cryptographic step
 * is OpenSSL's EVP API (key tag: ldns); nothing here is hand-written.
 *
 * Thread safety: a loaded key is immutable and may sign on any number of
 * threads at once, each with its own dnssec_md_t (OpenSSL allows
 * concurrent use of one EVP_PKEY for signing). */
#ifndef GSLB_DNSSEC_KEY_H
#define GSLB_DNSSEC_KEY_H

#include <stddef.h>
#include <stdint.h>

/* The algorithms served (RFC 8624 §3.1: both MUST for validators). */
enum {
	DNSSEC_ALG_ECDSAP256 = 13,     /* ECDSA P-256 with SHA-256, RFC 6605 */
	DNSSEC_ALG_ED25519 = 15,       /* Ed25519, RFC 8080 */
};

/* DNSKEY flags: Zone Key (bit 7) and Secure Entry Point (bit 15); a
 * combined signing key (CSK) has both (RFC 4034 §2.1.1, RFC 6781). */
#define DNSSEC_FLAGS_CSK 257
#define DNSSEC_FLAGS_ZSK 256

/* Both algorithms make 64-byte signatures (r||s, or R||S). */
#define DNSSEC_SIG_MAX 64
/* A DNSKEY rdata: flags, protocol, algorithm and a 64-byte key at most. */
#define DNSSEC_DNSKEY_MAX (4 + 64)

typedef struct dnssec_key dnssec_key_t;
/** A thread's signing contexts (an EVP_MD_CTX, and one context per key
 * it signed with lately), made once per thread. */
typedef struct dnssec_md dnssec_md_t;

/** The algorithm number of name @s ("ecdsap256", "ed25519", or the
 * number itself), or 0 when it is none we serve. */
int dnssec_alg_parse(const char *s);
/** The name of algorithm @alg as gslbctl prints it ("ecdsap256"). */
const char *dnssec_alg_name(int alg);
/** The mnemonic of RFC 8624 ("ECDSAP256SHA256", "ED25519"). */
const char *dnssec_alg_mnemonic(int alg);

/** Generates a new key of @alg with DNSKEY flags @flags.  Returns it (the
 * caller frees it with dnssec_key_free()) or NULL with the reason in
 * @err. */
dnssec_key_t *dnssec_key_generate(int alg, uint16_t flags, char *err,
                                  size_t errlen);

/** Writes the private key of @k as PKCS#8 PEM to a new file @path, mode
 * 0600 (it must not exist yet).  Returns 0 or -1 with the reason in
 * @err. */
int dnssec_key_save(const dnssec_key_t *k, const char *path, char *err,
                    size_t errlen);

/** Loads the key of PEM file @path, which the store says is of @alg with
 * @flags.  Refuses, naming the file, a missing or unreadable file, one
 * that others may read or write (mode & 077), one owned by another user
 * than the one running (root may read any), and a key of another
 * algorithm.  Returns the key or NULL with the reason in @err. */
dnssec_key_t *dnssec_key_load(const char *path, int alg, uint16_t flags,
                              char *err, size_t errlen);

/** Reads the private key of file @path for an import: PKCS#8 PEM, or
 * BIND's private-key format (Private-key-format: v1.x, Algorithm: 13
 * or 15, PrivateKey: base64 of the raw key; other fields ignored), and
 * gives it DNSKEY flags @flags.  Returns the key or NULL with the
 * reason, naming the file and the line, in @err: a file of neither
 * form, a field missing, another algorithm, a malformed key. */
dnssec_key_t *dnssec_key_import(const char *path, uint16_t flags, char *err,
                                size_t errlen);

void dnssec_key_free(dnssec_key_t *k);

int dnssec_key_alg(const dnssec_key_t *k);
uint16_t dnssec_key_flags(const dnssec_key_t *k);
/** The key tag (RFC 4034 Appendix B) of the key's DNSKEY record. */
uint16_t dnssec_key_tag(const dnssec_key_t *k);
/** The DNSKEY rdata of @k (*@len bytes); owned by @k. */
const uint8_t *dnssec_key_dnskey(const dnssec_key_t *k, size_t *len);
/** A number that tells this key from every other one (a hash of its
 * public key), so that caches keyed by it never mix two keys that share
 * a key tag. */
uint64_t dnssec_key_id(const dnssec_key_t *k);

/** The SHA-256 digest of a DS record (digest type 2, RFC 4509) of the
 * DNSKEY rdata @dnskey (@len bytes) owned by @owner (lowercase wire
 * name) into @out.  Returns 0 or -1. */
int dnssec_ds_digest(const uint8_t *owner, const uint8_t *dnskey, size_t len,
                     uint8_t out[32]);

/** Base64 of @n bytes at @in into @out (4 * ((n + 2) / 3) + 1 bytes),
 * as DNSKEY records are written.  Returns the text's length. */
size_t dnssec_b64_encode(const uint8_t *in, size_t n, char *out);
/** The bytes of base64 text @in into @out (@cap bytes).  Returns their
 * number, or -1 when @in is not base64 or does not fit. */
int dnssec_b64_decode(const char *in, uint8_t *out, size_t cap);

dnssec_md_t *dnssec_md_new(void);
void dnssec_md_free(dnssec_md_t *m);

/** Signs @len bytes at @data with @k into @sig (DNSSEC_SIG_MAX bytes), in
 * the form RRSIG records carry (RFC 6605 §4: r||s; RFC 8080 §3).
 * Returns the signature length, or 0 on a failure of the library.
 * OpenSSL allocates inside (DESIGN-NOTES, "DNSSEC"). */
size_t dnssec_key_sign(const dnssec_key_t *k, dnssec_md_t *m,
                       const uint8_t *data, size_t len, uint8_t *sig);

/** Verifies @sig over @data with @k: 1 good, 0 bad (for the tests). */
int dnssec_key_verify(const dnssec_key_t *k, const uint8_t *data, size_t len,
                      const uint8_t *sig, size_t siglen);

#endif
