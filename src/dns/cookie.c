/* SPDX-License-Identifier: MIT */
/* DNS Cookies: the cookies section, the secrets, the RFC 9018 server
 * cookie and the secrets' publication.
 *
 * Thread safety: see cookie.h.  The published set is immutable; the
 * main thread swaps it and frees the old one after a grace period. */
#include "dns/cookie.h"
#include "common/log.h"
#include "common/util.h"
#include "common/ytree.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <urcu-qsbr.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>

/* RFC 9018 §4.3: a server cookie is good for an hour, may come from a
 * clock up to five minutes ahead, and is re-issued once older than half
 * an hour, so that a resolver always holds one with time left. */
#define COOKIE_MAX_AGE 3600
#define COOKIE_MAX_AHEAD 300
#define COOKIE_REISSUE 1800

/* Generated secrets live at least as long as a cookie (an hour), so
 * that the previous secret, still accepted, covers every cookie made
 * before a rotation; at most a year. */
#define COOKIE_ROTATE_MIN 3600u
#define COOKIE_ROTATE_MAX (365u * 86400u)
#define COOKIE_ROTATE_DEFAULT 86400u

/* Configuration ------------------------------------------------------- */

int cookie_conf_load(const conf_t *c, cookie_conf_t *o, char *err,
                     size_t errlen)
{
	memset(o, 0, sizeof(*o));
	o->enable = 1;
	o->rotate = COOKIE_ROTATE_DEFAULT;
	const ynode_t *s = c->root ? ynode_get(c->root, "cookies") : NULL;
	if (!s)
		return 0;
	static const char *const keys[] = { "enable", "secret-file", "rotate",
	                                    NULL };
	if (conf_skeys(c, s, "cookies", keys, err, errlen))
		return -1;
	for (size_t i = 0; i < s->n; i++) {
		const char *k = s->keys[i]->value;
		const ynode_t *v = s->items[i];
		if (strcmp(k, "rotate") == 0) {
			char *end = NULL;
			unsigned long r = 0;
			if (v->kind == YNODE_SCALAR && v->value[0] >= '0' &&
			    v->value[0] <= '9') {
				errno = 0;
				r = strtoul(v->value, &end, 10);
			}
			if (!end || *end || errno || r < COOKIE_ROTATE_MIN ||
			    r > COOKIE_ROTATE_MAX) {
				conf_sfail(c, v, err, errlen, "cookies.rotate must be a "
				           "whole number of seconds from %u to %u",
				           COOKIE_ROTATE_MIN, COOKIE_ROTATE_MAX);
				goto fail;
			}
			o->rotate = (unsigned)r;
		} else if (strcmp(k, "enable") == 0) {
			if (conf_sbool(c, v, "cookies.enable", &o->enable, err, errlen))
				goto fail;
		} else if (strcmp(k, "secret-file") == 0) {
			if (v->kind != YNODE_SCALAR || !v->value[0]) {
				conf_sfail(c, v, err, errlen,
				           "cookies.secret-file: a file name is needed");
				goto fail;
			}
			free(o->secret_file);
			o->secret_file = conf_path(c, v->value);
		}
	}
	return 0;
fail:
	cookie_conf_clear(o);
	return -1;
}

void cookie_conf_clear(cookie_conf_t *o)
{
	free(o->secret_file);
	o->secret_file = NULL;
}

static int hexval(int ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* Reads one secret of 32 hex digits from @line (trailing blanks allowed).
 * Returns 0 or -1. */
static int parse_secret(const char *line, uint8_t *key)
{
	for (size_t i = 0; i < COOKIE_SECRET_LEN; i++) {
		int hi = hexval(line[2 * i]), lo = hi < 0 ? -1 : hexval(line[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return -1;
		key[i] = (uint8_t)(hi << 4 | lo);
	}
	for (const char *p = line + 2 * COOKIE_SECRET_LEN; *p; p++)
		if (*p != ' ' && *p != '\t' && *p != '\r' && *p != '\n')
			return -1;
	return 0;
}

int cookie_secret_read(const char *path, cookie_keys_t *out, char *err,
                       size_t errlen)
{
	memset(out, 0, sizeof(*out));
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "%s: cannot open the cookie secret: %s", path,
		         strerror(errno));
		return -1;
	}
	struct stat st;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: the cookie secret is not a regular file",
		         path);
		close(fd);
		return -1;
	}
	if (st.st_mode & 077) {
		snprintf(err, errlen, "%s: the cookie secret is open to group or "
		         "others (mode %03o); chmod 600 it", path,
		         (unsigned)(st.st_mode & 0777));
		close(fd);
		return -1;
	}
	FILE *f = fdopen(fd, "r");
	char line[256];
	int n = 0, rc = 0;
	while (fgets(line, sizeof(line), f)) {
		n++;
		const char *p = line;
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p || *p == '\n' || *p == '\r' || *p == '#')
			continue;
		if (out->n == COOKIE_KEYS) {
			snprintf(err, errlen, "%s:%d: at most %d secrets (the current "
			         "one, then the previous one)", path, n, COOKIE_KEYS);
			rc = -1;
			break;
		}
		if (parse_secret(p, out->key[out->n])) {
			snprintf(err, errlen, "%s:%d: a secret is 32 hex digits "
			         "(16 bytes)", path, n);
			rc = -1;
			break;
		}
		out->n++;
	}
	fclose(f);
	if (!rc && !out->n) {
		snprintf(err, errlen, "%s: no secret in the file", path);
		rc = -1;
	}
	explicit_bzero(line, sizeof(line));
	if (rc)
		explicit_bzero(out, sizeof(*out));
	return rc;
}

/* The per-thread core ------------------------------------------------- */

struct cookie_mac {
	EVP_MAC_CTX *ctx[COOKIE_KEYS];  /* keyed with keys.key[i] */
	unsigned n;                     /* keyed contexts; 0: cookies off */
	uint64_t gen;                   /* publication they were keyed from */
};

cookie_mac_t *cookie_mac_new(void)
{
	cookie_mac_t *m = xcalloc(1, sizeof(*m));
	EVP_MAC *mac = EVP_MAC_fetch(NULL, "SIPHASH", NULL);
	if (!mac) {
		log_err("cookies: OpenSSL offers no SIPHASH MAC");
		abort();
	}
	for (unsigned i = 0; i < COOKIE_KEYS; i++)
		if (!(m->ctx[i] = EVP_MAC_CTX_new(mac))) {
			log_err("cookies: cannot create a SipHash context");
			abort();
		}
	EVP_MAC_free(mac);  /* the contexts hold their own reference */
	return m;
}

void cookie_mac_free(cookie_mac_t *m)
{
	if (!m)
		return;
	for (unsigned i = 0; i < COOKIE_KEYS; i++)
		EVP_MAC_CTX_free(m->ctx[i]);
	free(m);
}

void cookie_mac_key(cookie_mac_t *m, const cookie_keys_t *k)
{
	/* SipHash-2-4 with an 8-byte output (RFC 9018 §4.4); the size must
	 * be set with the key, as it changes SipHash's initial state. */
	size_t size = 8;
	OSSL_PARAM p[] = {
		OSSL_PARAM_construct_size_t(OSSL_MAC_PARAM_SIZE, &size),
		OSSL_PARAM_construct_end(),
	};
	m->n = 0;
	for (unsigned i = 0; i < k->n && i < COOKIE_KEYS; i++) {
		if (!EVP_MAC_init(m->ctx[i], k->key[i], COOKIE_SECRET_LEN, p)) {
			log_err("cookies: cannot key SipHash");
			return;
		}
		m->n = i + 1;
	}
}

/* The 8-byte hash of @in (@len bytes) under secret @key of @m. */
static void mac8(cookie_mac_t *m, unsigned key, const uint8_t *in, size_t len,
                 uint8_t *out)
{
	EVP_MAC_CTX *ctx = m->ctx[key];
	size_t outl = 0;
	/* Without a key, EVP_MAC_init() restores the state the key set. */
	if (!EVP_MAC_init(ctx, NULL, 0, NULL) || !EVP_MAC_update(ctx, in, len) ||
	    !EVP_MAC_final(ctx, out, &outl, 8) || outl != 8)
		memset(out, 0, 8); /* never matches a real hash by chance alone */
}

/* The hash input: client cookie (8), version, reserved (3), timestamp
 * (4), address (4 or 16). */
static size_t hash_input(uint8_t *buf, const uint8_t *client,
                         const uint8_t *vrt, const uint8_t *ip, size_t iplen)
{
	memcpy(buf, client, 8);
	memcpy(buf + 8, vrt, 8);
	memcpy(buf + 16, ip, iplen);
	return 16 + iplen;
}

void cookie_make(cookie_mac_t *m, unsigned key, const uint8_t *client,
                 uint32_t ts, const uint8_t *ip, size_t iplen, uint8_t *out)
{
	uint8_t buf[32];
	out[0] = 1;             /* version */
	out[1] = out[2] = out[3] = 0;
	wr32(out + 4, ts);
	size_t n = hash_input(buf, client, out, ip, iplen);
	mac8(m, key, buf, n, out + 8);
}

cookie_kind_t cookie_check(cookie_mac_t *m, const uint8_t *opt, size_t len,
                           const uint8_t *ip, size_t iplen, uint32_t now,
                           uint8_t *out)
{
	if (len != 8 && (len < 16 || len > 40))
		return COOKIE_MALFORMED;
	memcpy(out, opt, 8);
	cookie_kind_t kind = COOKIE_CLIENT;
	if (len > 8) {
		kind = COOKIE_INVALID;
		const uint8_t *sc = opt + 8;
		/* Serial arithmetic: the age across the wrap of 2^32. */
		int32_t age = (int32_t)(now - rd32(sc + 4));
		if (len == 24 && sc[0] == 1 && age <= COOKIE_MAX_AGE &&
		    age >= -COOKIE_MAX_AHEAD) {
			uint8_t buf[32], h[8];
			size_t n = hash_input(buf, opt, sc, ip, iplen);
			for (unsigned k = 0; k < m->n; k++) {
				mac8(m, k, buf, n, h);
				if (memcmp(h, sc + 8, 8) == 0) {
					kind = COOKIE_VALID;
					if (k == 0 && age <= COOKIE_REISSUE) {
						memcpy(out + 8, sc, 16);
						return kind;
					}
					break;
				}
			}
		}
	}
	cookie_make(m, 0, opt, now, ip, iplen, out + 8);
	return kind;
}

size_t cookie_addr(const struct sockaddr *sa, uint8_t *ip)
{
	if (sa->sa_family == AF_INET) {
		memcpy(ip, &((const struct sockaddr_in *)sa)->sin_addr, 4);
		return 4;
	}
	if (sa->sa_family == AF_INET6) {
		const uint8_t *a = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;
		static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		                                    0xff, 0xff };
		if (memcmp(a, mapped, 12) == 0) {
			memcpy(ip, a + 12, 4);
			return 4;
		}
		memcpy(ip, a, 16);
		return 16;
	}
	return 0;
}

/* Publication --------------------------------------------------------- */

struct cookie_set {
	cookie_conf_t conf;
	cookie_keys_t keys;
	uint64_t gen;           /* set by cookie_publish(), never 0 */
	uint32_t born;          /* when keys.key[0] was generated or taken
	                           from the cluster; 0: a file's */
	uint64_t shared;        /* the cluster's generation of the keys; 0:
	                           not the cluster's */
};

static cookie_set_t *current;  /* RCU-protected; written by the main thread */
static uint64_t generation;    /* main thread only */

/* The cluster's side (cookie_offer(), cookie_current()), under offer_mu:
 * the keys last offered and not yet taken, and a copy of the keys in
 * use, for threads that are no RCU readers. */
static pthread_mutex_t offer_mu = PTHREAD_MUTEX_INITIALIZER;
static cookie_keys_t offer_keys, used_keys;
static uint64_t offer_gen;     /* 0: nothing pending */
static int shared_mode;        /* atomic: cookie_shared() */
static uint64_t used_gen;      /* atomic: the cluster's generation of the
                                  keys in use, 0: not the cluster's */

static void generate(uint8_t *key)
{
	if (getrandom(key, COOKIE_SECRET_LEN, 0) != COOKIE_SECRET_LEN) {
		log_err("cookies: cannot read random bytes for a secret");
		abort();
	}
}

int cookie_load(const conf_t *c, cookie_set_t **out, char *err,
                size_t errlen)
{
	*out = NULL;
	cookie_set_t *s = xcalloc(1, sizeof(*s));
	if (cookie_conf_load(c, &s->conf, err, errlen)) {
		free(s);
		return -1;
	}
	const cookie_set_t *cur = __atomic_load_n(&current, __ATOMIC_ACQUIRE);
	if (s->conf.secret_file) {
		if (cookie_secret_read(s->conf.secret_file, &s->keys, err, errlen)) {
			cookie_conf_clear(&s->conf);
			free(s);
			return -1;
		}
	} else if (cur && cur->born) {
		s->keys = cur->keys;   /* keep the generated or shared secrets */
		s->born = cur->born;
		s->shared = cur->shared;
	} else {
		generate(s->keys.key[0]);
		s->keys.n = 1;
		s->born = (uint32_t)time(NULL);
	}
	*out = s;
	return 0;
}

void cookie_free(cookie_set_t *s)
{
	if (!s)
		return;
	cookie_conf_clear(&s->conf);
	explicit_bzero(s, sizeof(*s));
	free(s);
}

void cookie_publish(cookie_set_t *s)
{
	s->gen = ++generation;
	cookie_set_t *old = __atomic_exchange_n(&current, s, __ATOMIC_ACQ_REL);
	if (!old || old->conf.enable != s->conf.enable ||
	    memcmp(&old->keys, &s->keys, sizeof(s->keys)))
		log_info("cookies: %s, %s secret%s", s->conf.enable ? "on" : "off",
		         s->shared ? "cluster" : s->born ? "generated" : "file",
		         s->keys.n > 1 ? ", the previous one still accepted" : "");
	pthread_mutex_lock(&offer_mu);
	used_keys = s->keys;
	pthread_mutex_unlock(&offer_mu);
	__atomic_store_n(&used_gen, s->shared, __ATOMIC_RELAXED);
	if (old) {
		synchronize_rcu();
		cookie_free(old);
	}
}

/* Publishes the keys the cluster offered, if any are pending and no
 * secret file is configured (a file wins); 1 when it did. */
static int take_offer(const cookie_set_t *cur, uint32_t now)
{
	cookie_keys_t k;
	pthread_mutex_lock(&offer_mu);
	uint64_t gen = offer_gen;
	k = offer_keys;
	offer_gen = 0;
	pthread_mutex_unlock(&offer_mu);
	if (!gen || !cur->born)
		return 0;
	if (cur->shared == gen && !memcmp(&cur->keys, &k, sizeof(k)))
		return 0;
	cookie_set_t *s = xcalloc(1, sizeof(*s));
	s->conf = cur->conf;
	s->conf.secret_file = NULL;
	s->keys = k;
	s->born = now ? now : 1;
	s->shared = gen;
	log_notice("cookies: the cluster's secret of generation %llu in use",
	           (unsigned long long)gen);
	cookie_publish(s);
	return 1;
}

void cookie_shared(int on)
{
	__atomic_store_n(&shared_mode, on, __ATOMIC_RELAXED);
}

void cookie_offer(const cookie_keys_t *k, uint64_t gen)
{
	pthread_mutex_lock(&offer_mu);
	offer_keys = *k;
	offer_gen = gen ? gen : 1;
	pthread_mutex_unlock(&offer_mu);
}

int cookie_current(cookie_keys_t *out)
{
	pthread_mutex_lock(&offer_mu);
	*out = used_keys;
	pthread_mutex_unlock(&offer_mu);
	return out->n ? 0 : -1;
}

uint64_t cookie_shared_gen(void)
{
	return __atomic_load_n(&used_gen, __ATOMIC_RELAXED);
}

void cookie_tick(uint32_t now)
{
	const cookie_set_t *cur = __atomic_load_n(&current, __ATOMIC_ACQUIRE);
	if (cur && take_offer(cur, now))
		return;
	/* Shared secrets are rotated by the cluster's elected instance; a
	 * clock set back waits for the lifetime to pass again. */
	if (!cur || !cur->born || __atomic_load_n(&shared_mode, __ATOMIC_RELAXED) ||
	    now < cur->born || now - cur->born < cur->conf.rotate)
		return;
	cookie_set_t *s = xcalloc(1, sizeof(*s));
	s->conf = cur->conf;
	s->conf.secret_file = NULL;
	memcpy(s->keys.key[1], cur->keys.key[0], COOKIE_SECRET_LEN);
	generate(s->keys.key[0]);
	s->keys.n = 2;
	s->born = now;
	cookie_publish(s);
}

int cookie_sync(cookie_mac_t *m)
{
	const cookie_set_t *s = __atomic_load_n(&current, __ATOMIC_ACQUIRE);
	if (!s || !s->conf.enable)
		return 0;
	if (s->gen != m->gen) {
		cookie_mac_key(m, &s->keys);
		m->gen = s->gen;
	}
	return m->n > 0;
}
