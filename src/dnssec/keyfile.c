/* SPDX-License-Identifier: MIT */
/* Keys imported from files: PKCS#8 PEM, and BIND's private-key format
 * (dnssec-keygen's K*.private, v1.2 and v1.3), built with OpenSSL's EVP
 * API from the raw private key the file holds. */
#include "dnssec/key.h"
#include "dnssec/key_int.h"

#include <errno.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The EVP_PKEY of the P-256 private scalar @d (32 bytes): the public
 * point is computed (d·G) and both given to EVP_PKEY_fromdata(). */
static EVP_PKEY *p256_from_raw(const uint8_t *d)
{
	EVP_PKEY *p = NULL;
	EVP_PKEY_CTX *ctx = NULL;
	OSSL_PARAM_BLD *b = NULL;
	OSSL_PARAM *par = NULL;
	EC_GROUP *g = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1);
	EC_POINT *pt = g ? EC_POINT_new(g) : NULL;
	BIGNUM *bn = BN_bin2bn(d, 32, NULL);
	uint8_t pub[65];
	if (!pt || !bn || BN_is_zero(bn) ||
	    BN_cmp(bn, EC_GROUP_get0_order(g)) >= 0 ||
	    !EC_POINT_mul(g, pt, bn, NULL, NULL, NULL) ||
	    EC_POINT_point2oct(g, pt, POINT_CONVERSION_UNCOMPRESSED, pub,
	                       sizeof(pub), NULL) != sizeof(pub))
		goto out;
	b = OSSL_PARAM_BLD_new();
	if (!b ||
	    !OSSL_PARAM_BLD_push_utf8_string(b, OSSL_PKEY_PARAM_GROUP_NAME,
	                                     "prime256v1", 0) ||
	    !OSSL_PARAM_BLD_push_BN(b, OSSL_PKEY_PARAM_PRIV_KEY, bn) ||
	    !OSSL_PARAM_BLD_push_octet_string(b, OSSL_PKEY_PARAM_PUB_KEY, pub,
	                                      sizeof(pub)) ||
	    !(par = OSSL_PARAM_BLD_to_param(b)))
		goto out;
	ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
	if (!ctx || EVP_PKEY_fromdata_init(ctx) <= 0 ||
	    EVP_PKEY_fromdata(ctx, &p, EVP_PKEY_KEYPAIR, par) <= 0)
		p = NULL;
out:
	EVP_PKEY_CTX_free(ctx);
	OSSL_PARAM_free(par);
	OSSL_PARAM_BLD_free(b);
	BN_clear_free(bn);
	EC_POINT_free(pt);
	EC_GROUP_free(g);
	return p;
}

/* What one line of a BIND private-key file said. */
typedef struct bind_file {
	int format;                /* a Private-key-format: v1.x line seen */
	int alg, alg_line;
	uint8_t priv[64];
	int priv_len, priv_line;
} bind_file_t;

/* Trims the end of line @s (newline, spaces). */
static void rtrim(char *s)
{
	size_t l = strlen(s);
	while (l && (s[l - 1] == '\n' || s[l - 1] == '\r' || s[l - 1] == ' ' ||
	             s[l - 1] == '\t'))
		s[--l] = 0;
}

/* Reads line @ln (number @no) of @path into @b.  Returns 0 or -1 with
 * "FILE:LINE: reason" in @err. */
static int bind_line(const char *path, int no, char *ln, bind_file_t *b,
                     char *err, size_t errlen)
{
	rtrim(ln);
	char *v = strchr(ln, ':');
	if (!ln[0] || ln[0] == ';')
		return 0;
	if (!v) {
		snprintf(err, errlen, "%s:%d: not a \"Field: value\" line", path, no);
		return -1;
	}
	*v++ = 0;
	v += strspn(v, " \t");
	if (!strcmp(ln, "Private-key-format")) {
		if (strncmp(v, "v1.", 3)) {
			snprintf(err, errlen, "%s:%d: Private-key-format %s: only v1.x "
			         "is read", path, no, v);
			return -1;
		}
		b->format = 1;
	} else if (!strcmp(ln, "Algorithm")) {
		int a = atoi(v);
		if (a != DNSSEC_ALG_ECDSAP256 && a != DNSSEC_ALG_ED25519) {
			snprintf(err, errlen, "%s:%d: Algorithm %s is not served (13 "
			         "ECDSAP256SHA256 or 15 ED25519)", path, no, v);
			return -1;
		}
		b->alg = a;
		b->alg_line = no;
	} else if (!strcmp(ln, "PrivateKey")) {
		b->priv_len = dnssec_b64_decode(v, b->priv, sizeof(b->priv));
		b->priv_line = no;
		if (b->priv_len != 32) {
			snprintf(err, errlen, "%s:%d: PrivateKey is not the base64 of a "
			         "32-byte key", path, no);
			return -1;
		}
	}
	/* Created:, Publish:, Activate: ... are BIND's timing: ignored. */
	return 0;
}

/* The key of BIND private-key file @f (@path). */
static EVP_PKEY *bind_read(FILE *f, const char *path, int *alg, char *err,
                           size_t errlen)
{
	bind_file_t b = { 0 };
	char ln[1024];
	int no = 0;
	while (fgets(ln, sizeof(ln), f))
		if (bind_line(path, ++no, ln, &b, err, errlen))
			return NULL;
	const char *missing = !b.format ? "Private-key-format" :
	                      !b.alg ? "Algorithm" : !b.priv_len ? "PrivateKey" :
	                      NULL;
	if (missing) {
		snprintf(err, errlen, "%s: no %s line (a BIND private-key file has "
		         "Private-key-format, Algorithm and PrivateKey)", path, missing);
		return NULL;
	}
	EVP_PKEY *p = b.alg == DNSSEC_ALG_ED25519 ?
	    EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, b.priv, 32) :
	    p256_from_raw(b.priv);
	memset(b.priv, 0, sizeof(b.priv));
	if (!p)
		snprintf(err, errlen, "%s:%d: PrivateKey is not a valid %s key", path,
		         b.priv_line, dnssec_alg_mnemonic(b.alg));
	*alg = b.alg;
	return p;
}

dnssec_key_t *dnssec_key_import(const char *path, uint16_t flags, char *err,
                                size_t errlen)
{
	FILE *f = fopen(path, "re");
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	char head[32] = "";
	size_t n = fread(head, 1, sizeof(head) - 1, f);
	head[n] = 0;
	rewind(f);
	EVP_PKEY *p = NULL;
	int alg = 0;
	if (!strncmp(head, "-----BEGIN", 10)) {
		p = PEM_read_PrivateKey(f, NULL, NULL, NULL);
		if (!p)
			snprintf(err, errlen, "%s: not a PEM private key (%s)", path,
			         dnssec__ossl_err());
		else if (!(alg = dnssec__pkey_alg(p))) {
			snprintf(err, errlen, "%s: holds %s, not a key of algorithm 13 "
			         "(ECDSAP256SHA256) or 15 (ED25519)", path,
			         dnssec__pkey_desc(p));
			EVP_PKEY_free(p);
			p = NULL;
		}
	} else if (!strncmp(head, "Private-key-format:", 19)) {
		p = bind_read(f, path, &alg, err, errlen);
	} else {
		snprintf(err, errlen, "%s:1: neither a PEM private key nor BIND's "
		         "private-key format (Private-key-format: v1.3)", path);
	}
	fclose(f);
	if (!p)
		return NULL;
	dnssec_key_t *k = dnssec__key_new(p, alg, flags);
	if (!k)
		snprintf(err, errlen, "%s: cannot read its public key", path);
	return k;
}
