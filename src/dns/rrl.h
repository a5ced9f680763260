/* SPDX-License-Identifier: MIT */
/* Response rate limiting (S1-12): UDP responses are counted per client
 * prefix and response class, and those over the configured rate are
 * dropped or, every slip-th time, sent truncated so that a real client
 * retries over TCP.  TCP is never limited.  DNS Cookies (dns/cookie.h)
 * change two things: a query with a valid server cookie of ours cannot
 * come from a spoofed address, so its response is never limited; and a
 * slip to a query that had a client cookie is a BADCOOKIE response with
 * a fresh server cookie instead of TC, so that a resolver retries over
 * UDP with it, one round trip, and is then exempt.
 *
 * The scheme is the credit account of the RRL design (as in BIND, Knot
 * and NSD): each (prefix, class, name) has an account that earns the rate
 * every second, up to one second's worth; every response that would be
 * sent debits it by one, whether it is sent or not; responses go out only
 * while the account is not negative, and the debt is bounded by window
 * seconds of credit, so a prefix that stops asking is answered again at
 * most window seconds later.
 *
 * Layers, from the pure core up:
 * - rrl_decide(): one account in a fixed-size table, PASS, DROP or SLIP;
 * - rrl_classify(), rrl_key(), rrl_slip(): reading and truncating our own
 *   response in wire format, so that an unsigned answer needs no hook;
 * - rrl_filter(): the whole decision for one UDP response, after it is
 *   written; rrl_charge(): the same decision before a signed answer is
 *   signed, from the class query_process() knows (dns/qsign.h), so that
 *   a flood with DO costs no signatures beyond the rate;
 * - rrl_t, rrl_publish(), rrl_slot_table(): the tables of all UDP threads
 *   for one configuration, published under RCU by the main thread.
 *
 * Thread safety: a rrl_table_t belongs to one thread (a UDP thread, or a
 * test); nothing in it is shared, so there are no locks and no atomics on
 * the query path.  A rrl_t is immutable once published, except the slot
 * counter that UDP threads take their table with (once per publication).
 * Invariants: table sizes are powers of two; a bucket with time 0 is
 * empty; nothing here allocates after rrl_new()/rrl_table_new(). */
#ifndef GSLB_RRL_H
#define GSLB_RRL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "common/conf.h"
#include "dns/cookie.h"

/** What to do with one response. */
typedef enum {
	RRL_PASS,    /* send it */
	RRL_DROP,    /* send nothing */
	RRL_SLIP,    /* send it truncated: TC=1, question and OPT only */
	RRL_BADCOOKIE, /* a slip to a query with a client cookie: BADCOOKIE,
	                  question and OPT only (rrl_charge() only) */
} rrl_verdict_t;

/** Response classes; each is counted separately. */
typedef enum {
	RRL_ANSWER,    /* NOERROR with answers: per (prefix, QNAME, QTYPE) */
	RRL_NODATA,    /* NOERROR, no answer: per (prefix, QNAME) */
	RRL_NXDOMAIN,  /* per (prefix, zone): random names share one account */
	RRL_REFERRAL,  /* per (prefix, delegation point) */
	RRL_ERROR,     /* FORMERR, SERVFAIL, REFUSED, ...: per prefix */
	RRL_NCLASS
} rrl_class_t;

/** An address or a prefix: @family 4 or 6, the first @len bits of
 * @addr count and the others are zero. */
typedef struct rrl_net {
	uint8_t family;
	uint8_t len;
	uint8_t addr[16];
} rrl_net_t;

/** The rrl section of gslbd.conf, validated. */
typedef struct rrl_conf {
	unsigned rate;        /* responses-per-second; 0 = off (default) */
	unsigned window;      /* seconds of debt, 1..3600, default 15 */
	unsigned slip;        /* 0..10, default 2 */
	unsigned v4_prefix;   /* 0..32, default 24 */
	unsigned v6_prefix;   /* 0..128, default 56 */
	unsigned table_size;  /* buckets per UDP thread, a power of two */
	rrl_net_t *exempt;    /* never limited; owned */
	size_t nexempt;
} rrl_conf_t;

/* The largest table a thread may have: 256 MiB of 16-byte buckets. */
#define RRL_TABLE_MAX (1u << 24)

/** Reads the rrl section of @c into @out (defaults where absent, and
 * all defaults without a section).  Returns 0, or -1 with
 * "FILE:LINE: reason" in @err and nothing to free.  On success the
 * caller owns @out's exempt list (rrl_conf_clear()). */
int rrl_conf_load(const conf_t *c, rrl_conf_t *out, char *err,
                  size_t errlen);

/** Frees what rrl_conf_load() allocated in @rc (not @rc itself). */
void rrl_conf_clear(rrl_conf_t *rc);

/** Parses "ADDR/LEN" or "ADDR" (a host) into @out, zeroing the bits
 * beyond LEN.  Returns 0 or GSLB_EINVAL. */
int rrl_net_parse(const char *text, rrl_net_t *out);

/* The core ------------------------------------------------------------ */

typedef struct rrl_table rrl_table_t;

/** Allocates a table of @rc->table_size buckets (rounded up to a power
 * of two, at least 4) for one thread.  Each response costs @share units
 * of credit and each second earns @rc->rate units, so that @share threads
 * between which the kernel spreads a prefix's queries each allow
 * rate/share responses per second.  @seed perturbs the hash of
 * rrl_filter() (0 in tests).  @rc is copied, but its exempt list is
 * borrowed and must outlive the table.  Free with rrl_table_free(). */
rrl_table_t *rrl_table_new(const rrl_conf_t *rc, unsigned share,
                           uint64_t seed);

/** Frees @t (NULL is fine). */
void rrl_table_free(rrl_table_t *t);

/** Charges one response of class @cls to the account @key (a hash from
 * rrl_key(), or any number in tests) at unix time @now (> 0, whole
 * seconds) and returns the verdict.  An account not in the table is
 * created with full credit, replacing the least recently used of the
 * few buckets its hash may use, so a full table forgets the quietest
 * accounts first and never fails. */
rrl_verdict_t rrl_decide(rrl_table_t *t, rrl_class_t cls, uint64_t key,
                         uint32_t now);

/** Reads the client address @sa (AF_INET or AF_INET6; an IPv4-mapped
 * IPv6 address counts as IPv4) into @out as a full-length rrl_net_t.
 * Returns 0, or -1 for another family. */
int rrl_addr(const struct sockaddr *sa, rrl_net_t *out);

/** Cuts @n down to its first @len bits (no-op if @len >= n->len). */
void rrl_net_mask(rrl_net_t *n, unsigned len);

/** Non-zero if address @a lies inside prefix @net (same family). */
int rrl_net_contains(const rrl_net_t *net, const rrl_net_t *a);

/** Classifies our response @resp of @len bytes.  Writes the class to
 * @cls, the name its account is kept by (lowercase, uncompressed wire;
 * the root name where the class has none) into @name (DNAME_MAXLEN + 1
 * bytes) and, for RRL_ANSWER, the QTYPE into @qtype (0 otherwise).
 * A response it cannot read is an RRL_ERROR. */
void rrl_classify(const uint8_t *resp, size_t len, rrl_class_t *cls,
                  uint8_t *name, uint16_t *qtype);

/** The account of class @cls for client prefix @prefix, name @name
 * (lowercase wire) and @qtype: a 64-bit hash seeded with @seed, a word
 * at a time. */
uint64_t rrl_key(uint64_t seed, rrl_class_t cls, const rrl_net_t *prefix,
                 const uint8_t *name, uint16_t qtype);

/** Truncates response @resp of @len bytes in place to a slip: TC set,
 * no answer, authority or additional records except the OPT record,
 * which is kept with its extended RCODE and options.  Returns the new
 * length. */
size_t rrl_slip(uint8_t *resp, size_t len);

/** Turns response @resp of @len bytes in place into BADCOOKIE (RCODE
 * 23, RFC 7873 §5.2.3): the question and the OPT record (with our
 * server cookie) only, TC clear.  Without an OPT record it is a slip
 * (rrl_slip()).  Returns the new length. */
size_t rrl_badcookie(uint8_t *resp, size_t len);

/** The whole decision for one UDP response @resp of @len bytes to
 * client @sa at time @now, whose query's cookie was @cookie: exempt
 * prefixes and valid server cookies pass; otherwise the response is
 * classified and charged.  Returns @len to send it as is, a smaller
 * length when it was cut into a slip (TC, or BADCOOKIE when the query
 * had a client cookie), or 0 to drop it; counts drops, slips and
 * BADCOOKIEs in @stats (STAT_RRL_*, STAT_BADCOOKIE of dns/query.h). */
size_t rrl_filter(rrl_table_t *t, const struct sockaddr *sa, uint8_t *resp,
                  size_t len, uint32_t now, cookie_kind_t cookie,
                  uint64_t *stats);

/** The decision for one UDP response not written yet, whose class
 * the caller knows (as rrl_classify() would read it): the query path
 * calls it before the first signature of a signed answer, so that
 * what is withheld costs no signing (S1-12).  Exempt prefixes and
 * valid server cookies pass; otherwise the account of (@sa's prefix,
 * @cls, @name, @qtype) is charged as rrl_filter() charges it.  Returns
 * RRL_PASS, RRL_DROP, RRL_SLIP or RRL_BADCOOKIE (a slip to a query
 * with a client cookie), counted in @stats as rrl_filter() counts. */
rrl_verdict_t rrl_charge(rrl_table_t *t, const struct sockaddr *sa,
                         rrl_class_t cls, const uint8_t *name, uint16_t qtype,
                         uint32_t now, cookie_kind_t cookie, uint64_t *stats);

/* Publication --------------------------------------------------------- */

typedef struct rrl rrl_t;

/* The largest table a thread may have: 256 MiB of 16-byte buckets. */
#define RRL_TABLE_MAX (1u << 24)

/** Reads the rrl section of @c and, when it limits (rate > 0) and
 * @ntables > 0, allocates @ntables tables (one per UDP thread) whose
 * rate is shared by @share threads (the workers, which the kernel
 * spreads one listen address's clients over).  Sets *@out to the new
 * object (owned by the caller until rrl_publish(); free with rrl_free())
 * or to NULL when rate limiting is off or @ntables is 0 (a check).
 * Returns 0, or -1 with "FILE:LINE: reason" in @err. */
int rrl_load(const conf_t *c, unsigned share, unsigned ntables, rrl_t **out,
             char *err, size_t errlen);

/** Frees @r, which must not be published (NULL is fine). */
void rrl_free(rrl_t *r);

/** Publishes @r (NULL: rate limiting off), taking ownership, and frees
 * the previous one after an RCU grace period.  Every UDP thread takes a
 * fresh table from it at its next batch, so a reload starts every
 * account afresh.  Main thread only. */
void rrl_publish(rrl_t *r);

/** A UDP thread's hold on the published tables; zero-initialise. */
typedef struct rrl_slot {
	uint64_t gen;           /* publication the table below belongs to */
	rrl_table_t *table;     /* this thread's table in it, or NULL */
} rrl_slot_t;

/** The calling UDP thread's table in the current publication, or NULL
 * when rate limiting is off.  Takes a table the first time a thread sees
 * a publication.  The caller must be RCU-online and may use the table
 * only until it goes offline. */
rrl_table_t *rrl_slot_table(rrl_slot_t *slot);

#endif
