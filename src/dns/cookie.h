/* SPDX-License-Identifier: MIT */
/* DNS Cookies (RFC 7873) with the interoperable server cookie of
 * RFC 9018: version 1, three reserved bytes, a 32-bit timestamp and an
 * 8-byte SipHash-2-4 of (client cookie | version | reserved | timestamp |
 * client address) under a 16-byte secret.  SipHash comes from OpenSSL's
 * EVP_MAC "SIPHASH".
 *
 * Layers:
 * - the cookies section (cookie_conf_load()) and the secret file
 *   (cookie_secret_read());
 * - cookie_mac_t, one per query thread: an EVP_MAC context per accepted
 *   secret, keyed once when the secrets change, then re-initialised with
 *   the stored key for every cookie (EVP_MAC_init() without a key, which
 *   allocates nothing);
 * - cookie_check(): the whole decision for one COOKIE option;
 * - cookie_load(), cookie_publish(), cookie_tick(): the secrets in use,
 *   published under RCU by the main thread; cookie_sync() re-keys a
 *   thread's contexts when a new publication appears.
 *
 * Thread safety: a cookie_mac_t belongs to one thread.  The publication
 * is written by the main thread only and read by the query threads while
 * RCU-online; nothing on the query path locks or allocates.
 *
 * The secrets are an input: from the secret file (which a cluster
 * member can be given by whatever shares it), or, in cluster mode, the
 * one shared through etcd (cluster/cookie_share.c, cookie_offer()), or
 * generated at start and rotated here when there is neither. */
#ifndef GSLB_COOKIE_H
#define GSLB_COOKIE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "common/conf.h"

#define COOKIE_SECRET_LEN 16  /* RFC 9018 §4.4: SipHash-2-4's key */
#define COOKIE_KEYS 2         /* the current secret and the previous one */
#define COOKIE_OUT_LEN 24     /* client cookie (8) + our server cookie (16) */

/** What a query's COOKIE option was. */
typedef enum {
	COOKIE_NONE,       /* no option, or cookies off */
	COOKIE_CLIENT,     /* a client cookie only */
	COOKIE_VALID,      /* with a server cookie of ours, in its lifetime */
	COOKIE_INVALID,    /* with a server cookie we did not make, or expired */
	COOKIE_MALFORMED,  /* a length other than 8 or 16..40 (FORMERR) */
} cookie_kind_t;

/** The cookies section of gslbd.conf, validated. */
typedef struct cookie_conf {
	int enable;           /* cookies.enable, default on */
	char *secret_file;    /* cookies.secret-file, resolved; NULL: generated */
	unsigned rotate;      /* cookies.rotate, seconds, default 86400 */
} cookie_conf_t;

/** Reads the cookies section of @c into @o (defaults where absent).
 * Returns 0 (the caller frees with cookie_conf_clear()), or -1 with
 * "FILE:LINE: reason" in @err and nothing to free. */
int cookie_conf_load(const conf_t *c, cookie_conf_t *o, char *err,
                     size_t errlen);

/** Frees what cookie_conf_load() allocated in @o (not @o itself). */
void cookie_conf_clear(cookie_conf_t *o);

/** The secrets in use: key[0] makes server cookies; all @n are accepted. */
typedef struct cookie_keys {
	uint8_t key[COOKIE_KEYS][COOKIE_SECRET_LEN];
	unsigned n;
} cookie_keys_t;

/** Reads the secret file @path: one secret of 32 hex digits a line, the
 * first making cookies, a second (optional) still accepted; empty lines
 * and lines starting with '#' are skipped.  The file must be a regular
 * file that neither group nor others can read or write (0600 or
 * tighter).  Returns 0, or -1 with "PATH: reason" in @err. */
int cookie_secret_read(const char *path, cookie_keys_t *out, char *err,
                       size_t errlen);

/* The per-thread core ------------------------------------------------- */

typedef struct cookie_mac cookie_mac_t;

/** Allocates one thread's SipHash contexts (keyed by cookie_mac_key() or
 * cookie_sync()).  Aborts when OpenSSL has no SIPHASH (start-up only).
 * Free with cookie_mac_free(). */
cookie_mac_t *cookie_mac_new(void);

/** Frees @m (NULL is fine). */
void cookie_mac_free(cookie_mac_t *m);

/** Keys @m's contexts with @k (allocates nothing).  @k->n = 0 leaves
 * cookies off for @m. */
void cookie_mac_key(cookie_mac_t *m, const cookie_keys_t *k);

/** Writes into @out (16 bytes) the server cookie for client cookie
 * @client (8 bytes), timestamp @ts, client address @ip (@iplen 4 or 16)
 * under @m's secret @key (0: current), reserved bytes zero. */
void cookie_make(cookie_mac_t *m, unsigned key, const uint8_t *client,
                 uint32_t ts, const uint8_t *ip, size_t iplen, uint8_t *out);

/** The decision for the COOKIE option @opt of @len bytes (8 or 16..40)
 * from address @ip (@iplen 4 or 16) at unix time @now: returns its kind
 * and writes into @out (COOKIE_OUT_LEN bytes) the option of the reply,
 * the client cookie and a server cookie: the one presented when it is
 * valid, made with the current secret and younger than half an hour
 * (RFC 9018 §4.3), else a fresh one.  A server cookie is valid when it
 * is 16 bytes of version 1, its timestamp at most an hour old and at
 * most five minutes ahead, and its hash that of one accepted secret. */
cookie_kind_t cookie_check(cookie_mac_t *m, const uint8_t *opt, size_t len,
                           const uint8_t *ip, size_t iplen, uint32_t now,
                           uint8_t *out);

/** The address bytes of @sa for the hash (an IPv4-mapped IPv6 address
 * counts as IPv4): returns 4 or 16 with them in @ip, or 0 for another
 * family. */
size_t cookie_addr(const struct sockaddr *sa, uint8_t *ip);

/* Publication --------------------------------------------------------- */

typedef struct cookie_set cookie_set_t;

/** Reads the cookies section of @c and its secrets: the secret file's,
 * or the running generated ones (generated now at the first load), so
 * that a reload does not invalidate the cookies handed out.  Sets *@out
 * to a new object (owned until cookie_publish()).  Returns 0, or -1
 * with the reason in @err.  Main thread only. */
int cookie_load(const conf_t *c, cookie_set_t **out, char *err,
                size_t errlen);

/** Frees @s, which must not be published (NULL is fine). */
void cookie_free(cookie_set_t *s);

/** Publishes @s (taking ownership) and frees the previous set after an
 * RCU grace period.  Main thread only. */
void cookie_publish(cookie_set_t *s);

/** Rotates generated secrets whose lifetime (cookies.rotate) is over at
 * unix time @now: a new current secret, the old one still accepted.
 * Call about once a second.  Main thread only. */
void cookie_tick(uint32_t now);

/* Cluster mode ---------------------------------------------------------- */

/** Cluster mode is on (@on): generated secrets are no longer rotated here
 * (the cluster's elected instance rotates the shared one), and what the
 * cluster offers replaces them.  Main thread, before the first tick. */
void cookie_shared(int on);

/** Offers the cluster's secrets @k (key[0] current, key[1] previous) of
 * generation @gen: cookie_tick() publishes them at its next call, unless
 * a secret file is configured (the file wins).  Any thread. */
void cookie_offer(const cookie_keys_t *k, uint64_t gen);

/** A copy of the secrets in use into @out: 0, or -1 before the first
 * publication.  Any thread (not the query path: it locks). */
int cookie_current(cookie_keys_t *out);

/** The cluster's generation of the secrets in use (published), 0 when
 * they are not the cluster's.  Any thread. */
uint64_t cookie_shared_gen(void);

/** Re-keys @m when the published secrets changed since its last call.
 * Returns 1 when cookies are on, 0 when they are off (nothing
 * published, or cookies.enable off).  The caller is RCU-online. */
int cookie_sync(cookie_mac_t *m);

#endif
