/* SPDX-License-Identifier: MIT */
/* Keys with OpenSSL's EVP API: generate, PEM in and out, DNSKEY, DS,
 * sign. */
#include "dnssec/key.h"
#include "dnssec/key_int.h"
#include "common/hash.h"
#include "common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <ldns/ldns.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct dnssec_key {
	EVP_PKEY *pkey;
	int alg;
	uint16_t flags;
	uint16_t tag;
	uint64_t id;
	size_t dnskey_len;
	uint8_t dnskey[DNSSEC_DNSKEY_MAX];
};

/* A thread's signing contexts: one per key it signed with lately, made
 * at the key's first signature and reused, so that a signature made
 * does not set a context up again (EVP_DigestSignInit() allocates the
 * key's EVP_PKEY_CTX and fetches the algorithm each time). */
#define MD_SLOTS 8

typedef struct md_slot {
	const dnssec_key_t *k;   /* compared with its id: a key freed and */
	uint64_t id;             /* another at its address differ by id */
	EVP_PKEY_CTX *pc;        /* ECDSA: signs a digest (holds the key) */
	EVP_MD_CTX *tmpl;        /* Ed25519: initialised, copied per use */
} md_slot_t;

struct dnssec_md {
	EVP_MD_CTX *ctx;
	EVP_MD *sha256;          /* fetched once */
	md_slot_t slot[MD_SLOTS];
	unsigned next;           /* the slot replaced next */
};

int dnssec_alg_parse(const char *s)
{
	if (!strcmp(s, "ecdsap256") || !strcmp(s, "ecdsap256sha256") ||
	    !strcmp(s, "13"))
		return DNSSEC_ALG_ECDSAP256;
	if (!strcmp(s, "ed25519") || !strcmp(s, "15"))
		return DNSSEC_ALG_ED25519;
	return 0;
}

const char *dnssec_alg_name(int alg)
{
	return alg == DNSSEC_ALG_ECDSAP256 ? "ecdsap256" :
	       alg == DNSSEC_ALG_ED25519 ? "ed25519" : "unknown";
}

const char *dnssec_alg_mnemonic(int alg)
{
	return alg == DNSSEC_ALG_ECDSAP256 ? "ECDSAP256SHA256" :
	       alg == DNSSEC_ALG_ED25519 ? "ED25519" : "unknown";
}

/* The library's last error, for a message. */
const char *dnssec__ossl_err(void)
{
	static __thread char buf[256];
	unsigned long e = ERR_get_error();
	if (!e)
		return "unknown error";
	ERR_error_string_n(e, buf, sizeof(buf));
	ERR_clear_error();
	return buf;
}

/* The algorithm @p is a key of, or 0. */
int dnssec__pkey_alg(EVP_PKEY *p)
{
	if (EVP_PKEY_is_a(p, "ED25519"))
		return DNSSEC_ALG_ED25519;
	if (EVP_PKEY_is_a(p, "EC")) {
		char group[64];
		size_t gl = 0;
		if (EVP_PKEY_get_utf8_string_param(p, OSSL_PKEY_PARAM_GROUP_NAME,
		                                   group, sizeof(group), &gl) &&
		    (!strcmp(group, "prime256v1") || !strcmp(group, "P-256")))
			return DNSSEC_ALG_ECDSAP256;
	}
	return 0;
}

/* A description of the key in @p, for the error that says it is not
 * what the store expects. */
const char *dnssec__pkey_desc(EVP_PKEY *p)
{
	if (EVP_PKEY_is_a(p, "ED25519"))
		return "Ed25519 (algorithm 15)";
	if (EVP_PKEY_is_a(p, "EC"))
		return "an EC key not on P-256";
	if (EVP_PKEY_is_a(p, "RSA"))
		return "RSA";
	if (EVP_PKEY_is_a(p, "ED448"))
		return "Ed448";
	return "of an unknown type";
}

static int key_finish(dnssec_key_t *k);

dnssec_key_t *dnssec__key_new(EVP_PKEY *p, int alg, uint16_t flags)
{
	dnssec_key_t *k = xcalloc(1, sizeof(*k));
	k->pkey = p;
	k->alg = alg;
	k->flags = flags;
	if (key_finish(k)) {
		dnssec_key_free(k);
		return NULL;
	}
	return k;
}

/* Fills the public parts of @k from its EVP_PKEY: DNSKEY rdata (RFC 4034
 * §2.1: flags, protocol 3, algorithm, key), key tag and id. */
static int key_finish(dnssec_key_t *k)
{
	uint8_t pub[80];
	size_t pl = 0;
	uint8_t *d = k->dnskey;
	if (k->alg == DNSSEC_ALG_ECDSAP256) {
		/* The uncompressed point 0x04||X||Y; DNSKEY holds X||Y
		 * (RFC 6605 §4). */
		if (!EVP_PKEY_get_octet_string_param(k->pkey,
		        OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, pub, sizeof(pub), &pl) ||
		    pl != 65 || pub[0] != 4)
			return -1;
		memmove(pub, pub + 1, 64);
		pl = 64;
	} else {
		pl = 32;
		if (!EVP_PKEY_get_raw_public_key(k->pkey, pub, &pl) || pl != 32)
			return -1;
	}
	wr16(d, k->flags);
	d[2] = 3;
	d[3] = (uint8_t)k->alg;
	memcpy(d + 4, pub, pl);
	k->dnskey_len = 4 + pl;
	k->tag = ldns_calc_keytag_raw(k->dnskey, k->dnskey_len);
	k->id = hash_fnv64(k->dnskey, k->dnskey_len);
	return 0;
}

dnssec_key_t *dnssec_key_generate(int alg, uint16_t flags, char *err,
                                  size_t errlen)
{
	EVP_PKEY *p = NULL;
	if (alg == DNSSEC_ALG_ECDSAP256)
		p = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	else if (alg == DNSSEC_ALG_ED25519)
		p = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
	else {
		snprintf(err, errlen, "algorithm %d is not served", alg);
		return NULL;
	}
	if (!p) {
		snprintf(err, errlen, "key generation failed: %s", dnssec__ossl_err());
		return NULL;
	}
	dnssec_key_t *k = dnssec__key_new(p, alg, flags);
	if (!k)
		snprintf(err, errlen, "cannot read the new public key: %s", dnssec__ossl_err());
	return k;
}

int dnssec_key_save(const dnssec_key_t *k, const char *path, char *err,
                    size_t errlen)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	FILE *f = fdopen(fd, "w");
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		close(fd);
		unlink(path);
		return -1;
	}
	int ok = PEM_write_PrivateKey(f, k->pkey, NULL, NULL, 0, NULL, NULL);
	if (fflush(f) || fsync(fileno(f)))
		ok = 0;
	if (fclose(f))
		ok = 0;
	if (!ok) {
		snprintf(err, errlen, "%s: cannot write the key: %s", path, dnssec__ossl_err());
		unlink(path);
		return -1;
	}
	return 0;
}

dnssec_key_t *dnssec_key_load(const char *path, int alg, uint16_t flags,
                              char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0) {
		snprintf(err, errlen, "key file %s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "key file %s: not a regular file", path);
		close(fd);
		return NULL;
	}
	/* A private key others can read is no longer private; one they can
	 * write is no longer ours. */
	if (st.st_mode & 077) {
		snprintf(err, errlen, "key file %s: mode %04o lets other users in; "
		         "chmod 600 %s", path, (unsigned)(st.st_mode & 07777), path);
		close(fd);
		return NULL;
	}
	if (geteuid() != 0 && st.st_uid != geteuid()) {
		snprintf(err, errlen, "key file %s: owned by uid %u, not by the "
		         "user gslbd runs as (uid %u)", path, (unsigned)st.st_uid,
		         (unsigned)geteuid());
		close(fd);
		return NULL;
	}
	FILE *f = fdopen(fd, "r");
	if (!f) {
		snprintf(err, errlen, "key file %s: %s", path, strerror(errno));
		close(fd);
		return NULL;
	}
	EVP_PKEY *p = PEM_read_PrivateKey(f, NULL, NULL, NULL);
	fclose(f);
	if (!p) {
		snprintf(err, errlen, "key file %s: not a PEM private key (%s)", path,
		         dnssec__ossl_err());
		return NULL;
	}
	int got = dnssec__pkey_alg(p);
	if (got != alg) {
		snprintf(err, errlen, "key file %s: holds %s, but the store says "
		         "algorithm %d (%s)", path,
		         got ? dnssec_alg_mnemonic(got) : dnssec__pkey_desc(p), alg,
		         dnssec_alg_mnemonic(alg));
		EVP_PKEY_free(p);
		return NULL;
	}
	dnssec_key_t *k = dnssec__key_new(p, alg, flags);
	if (!k)
		snprintf(err, errlen, "key file %s: cannot read its public key", path);
	return k;
}

void dnssec_key_free(dnssec_key_t *k)
{
	if (!k)
		return;
	EVP_PKEY_free(k->pkey);
	free(k);
}

int dnssec_key_alg(const dnssec_key_t *k) { return k->alg; }
uint16_t dnssec_key_flags(const dnssec_key_t *k) { return k->flags; }
uint16_t dnssec_key_tag(const dnssec_key_t *k) { return k->tag; }
uint64_t dnssec_key_id(const dnssec_key_t *k) { return k->id; }

const uint8_t *dnssec_key_dnskey(const dnssec_key_t *k, size_t *len)
{
	*len = k->dnskey_len;
	return k->dnskey;
}

int dnssec_ds_digest(const uint8_t *owner, const uint8_t *dnskey, size_t len,
                     uint8_t out[32])
{
	/* RFC 4034 §5.1.4: digest = SHA-256(owner | DNSKEY rdata). */
	uint8_t buf[256 + DNSSEC_DNSKEY_MAX];
	size_t ol = dname_len(owner, 255);
	if (!ol || len > DNSSEC_DNSKEY_MAX)
		return -1;
	memcpy(buf, owner, ol);
	memcpy(buf + ol, dnskey, len);
	unsigned dl = 0;
	if (!EVP_Digest(buf, ol + len, out, &dl, EVP_sha256(), NULL) || dl != 32)
		return -1;
	return 0;
}

size_t dnssec_b64_encode(const uint8_t *in, size_t n, char *out)
{
	return (size_t)EVP_EncodeBlock((unsigned char *)out, in, (int)n);
}

int dnssec_b64_decode(const char *in, uint8_t *out, size_t cap)
{
	size_t l = strlen(in);
	if (l % 4 || l / 4 * 3 > cap + 2)
		return -1;
	uint8_t tmp[512];
	if (l / 4 * 3 > sizeof(tmp))
		return -1;
	int n = EVP_DecodeBlock(tmp, (const unsigned char *)in, (int)l);
	if (n < 0)
		return -1;
	/* EVP_DecodeBlock counts the padding's bytes too. */
	for (size_t i = l; i > 0 && in[i - 1] == '='; i--)
		n--;
	if (n < 0 || (size_t)n > cap)
		return -1;
	memcpy(out, tmp, (size_t)n);
	return n;
}

dnssec_md_t *dnssec_md_new(void)
{
	dnssec_md_t *m = xcalloc(1, sizeof(*m));
	m->ctx = EVP_MD_CTX_new();
	m->sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
	if (!m->ctx || !m->sha256)
		abort();
	return m;
}

static void slot_clear(md_slot_t *s)
{
	EVP_PKEY_CTX_free(s->pc);
	EVP_MD_CTX_free(s->tmpl);
	memset(s, 0, sizeof(*s));
}

void dnssec_md_free(dnssec_md_t *m)
{
	if (!m)
		return;
	for (unsigned i = 0; i < MD_SLOTS; i++)
		slot_clear(&m->slot[i]);
	EVP_MD_CTX_free(m->ctx);
	EVP_MD_free(m->sha256);
	free(m);
}

/* The context of @k in @m, made (replacing the oldest) at its first
 * use.  NULL when the library fails. */
static md_slot_t *slot_of(dnssec_md_t *m, const dnssec_key_t *k)
{
	for (unsigned i = 0; i < MD_SLOTS; i++)
		if (m->slot[i].k == k && m->slot[i].id == k->id)
			return &m->slot[i];
	md_slot_t *s = &m->slot[m->next];
	m->next = (m->next + 1) % MD_SLOTS;
	slot_clear(s);
	int ok;
	if (k->alg == DNSSEC_ALG_ECDSAP256) {
		s->pc = EVP_PKEY_CTX_new_from_pkey(NULL, k->pkey, NULL);
		ok = s->pc && EVP_PKEY_sign_init(s->pc) > 0;
	} else {
		s->tmpl = EVP_MD_CTX_new();
		ok = s->tmpl && EVP_DigestSignInit(s->tmpl, NULL, NULL, NULL, k->pkey);
	}
	if (!ok) {
		slot_clear(s);
		ERR_clear_error();
		return NULL;
	}
	s->k = k;
	s->id = k->id;
	return s;
}

/* The INTEGER at *@p (DER, below @end) as 32 bytes, left-padded, into
 * @out; moves *@p past it.  0 or -1. */
static int der_int32(const uint8_t **p, const uint8_t *end, uint8_t *out)
{
	const uint8_t *q = *p;
	if (end - q < 2 || q[0] != 0x02 || q[1] > end - q - 2 || q[1] == 0)
		return -1;
	size_t n = q[1];
	q += 2;
	*p = q + n;
	while (n > 32 && *q == 0) {   /* the sign byte of a high bit */
		q++;
		n--;
	}
	if (n > 32)
		return -1;
	memset(out, 0, 32 - n);
	memcpy(out + 32 - n, q, n);
	return 0;
}

/* ECDSA-Sig-Value (RFC 3279: SEQUENCE of INTEGER r, s; short lengths
 * for P-256) to r||s, each 32 bytes (RFC 6605 §4).  0 or -1. */
static int der_to_rs(const uint8_t *der, size_t dl, uint8_t *sig)
{
	const uint8_t *p = der + 2, *end = der + dl;
	if (dl < 8 || der[0] != 0x30 || der[1] != dl - 2)
		return -1;
	return der_int32(&p, end, sig) || der_int32(&p, end, sig + 32) || p != end
	       ? -1 : 0;
}

size_t dnssec_key_sign(const dnssec_key_t *k, dnssec_md_t *m,
                       const uint8_t *data, size_t len, uint8_t *sig)
{
	md_slot_t *s = slot_of(m, k);
	if (!s)
		return 0;
	if (k->alg == DNSSEC_ALG_ED25519) {
		/* Ed25519 hashes inside: the initialised context, copied. */
		size_t sl = DNSSEC_SIG_MAX;
		int ok = EVP_MD_CTX_copy_ex(m->ctx, s->tmpl) &&
		         EVP_DigestSign(m->ctx, sig, &sl, data, len);
		/* The copy's key context goes (a free), so that the next
		 * ECDSA digest starts from a plain context. */
		EVP_MD_CTX_reset(m->ctx);
		if (!ok || sl != 64) {
			ERR_clear_error();
			return 0;
		}
		return sl;
	}
	/* ECDSA: SHA-256 of the data, signed by the key's context.
	 * OpenSSL gives DER (RFC 3279); RRSIG wants r||s. */
	uint8_t h[32], der[80];
	unsigned int hl = 0;
	size_t dl = sizeof(der);
	int ok = EVP_DigestInit_ex2(m->ctx, m->sha256, NULL) &&
	         EVP_DigestUpdate(m->ctx, data, len) &&
	         EVP_DigestFinal_ex(m->ctx, h, &hl) && hl == 32 &&
	         EVP_PKEY_sign(s->pc, der, &dl, h, sizeof(h)) > 0;
	if (!ok || der_to_rs(der, dl, sig)) {
		ERR_clear_error();
		return 0;
	}
	return 64;
}

int dnssec_key_verify(const dnssec_key_t *k, const uint8_t *data, size_t len,
                      const uint8_t *sig, size_t siglen)
{
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	const EVP_MD *md = k->alg == DNSSEC_ALG_ECDSAP256 ? EVP_sha256() : NULL;
	uint8_t der[80];
	const uint8_t *vs = sig;
	size_t vl = siglen;
	if (k->alg == DNSSEC_ALG_ECDSAP256) {
		if (siglen != 64) {
			EVP_MD_CTX_free(c);
			return 0;
		}
		ECDSA_SIG *es = ECDSA_SIG_new();
		BIGNUM *r = BN_bin2bn(sig, 32, NULL), *s = BN_bin2bn(sig + 32, 32, NULL);
		ECDSA_SIG_set0(es, r, s);
		unsigned char *p = der;
		int n = i2d_ECDSA_SIG(es, &p);
		ECDSA_SIG_free(es);
		vs = der;
		vl = n > 0 ? (size_t)n : 0;
	}
	int ok = EVP_DigestVerifyInit(c, NULL, md, NULL, k->pkey) == 1 &&
	         EVP_DigestVerify(c, vs, vl, data, len) == 1;
	EVP_MD_CTX_free(c);
	ERR_clear_error();
	return ok;
}
