/* SPDX-License-Identifier: MIT */
/* Response rate limiting (S1-12): the accounts, reading and truncating
 * our responses, and the tables' publication (the rrl section is
 * rrl_conf.c's).
 *
 * Thread safety: see rrl.h.  A table is touched by one thread only; the
 * published rrl_t is read under RCU by the UDP threads and written only
 * by the main thread, which frees the previous one after a grace period.
 *
 * Credit is counted in units rather than responses so that the rate can
 * be shared exactly by the threads of one listen address: a response
 * costs `share` units, a second earns `rate` units, so each of `share`
 * tables allows rate/share responses a second, fractions included. */
#include "dns/rrl.h"
#include "common/hash.h"
#include "common/log.h"
#include "common/util.h"
#include "dns/query.h"
#include "dns/zone.h"

#include <netinet/in.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
#include <urcu-qsbr.h>

/* Buckets an account's hash may occupy: four 16-byte buckets are one
 * 64-byte cache line, so a lookup touches one line, and four choices
 * keep a busy account from being evicted by one unlucky neighbour. */
#define RRL_WAYS 4

/* One account: 16 bytes (see RRL_WAYS). */
typedef struct rrl_bucket {
	uint32_t check;     /* the key's high half: which account this is */
	uint32_t time;      /* unix second of the last charge; 0 = empty */
	int32_t balance;    /* credit in units, floor..cap */
	uint8_t cls;        /* rrl_class_t */
	uint8_t slips;      /* drops since the last slip */
	uint16_t unused;
} rrl_bucket_t;

struct rrl_table {
	rrl_conf_t conf;    /* a copy; the exempt list is borrowed */
	uint64_t seed;
	uint32_t mask;      /* buckets - 1 */
	int32_t credit;     /* units earned a second: the rate */
	int32_t cost;       /* units a response costs: the share */
	int32_t cap;        /* most credit: one second's, and one response */
	int32_t floor;      /* deepest debt: window seconds of credit */
	rrl_bucket_t *b;
};

struct rrl {
	rrl_conf_t conf;          /* the tables borrow its exempt list */
	uint64_t gen;             /* set by rrl_publish(), never 0 */
	unsigned share;
	unsigned ntables;
	unsigned claimed;         /* atomic: tables handed out */
	rrl_table_t **tables;
};

/* The core ------------------------------------------------------------ */

rrl_table_t *rrl_table_new(const rrl_conf_t *rc, unsigned share,
                           uint64_t seed)
{
	rrl_table_t *t = xcalloc(1, sizeof(*t));
	t->conf = *rc;
	t->seed = seed;
	uint32_t size = RRL_WAYS;
	while (size < rc->table_size && size < RRL_TABLE_MAX)
		size <<= 1;
	t->mask = size - 1;
	if (!share)
		share = 1;
	t->credit = (int32_t)rc->rate;
	t->cost = (int32_t)share;
	/* At least one response's worth, or a rate below the share would
	 * never let a response through. */
	t->cap = t->credit > t->cost ? t->credit : t->cost;
	t->floor = -(int32_t)(rc->window * rc->rate);
	/* Aligned so that a group of RRL_WAYS buckets is one cache line. */
	size_t bytes = (size_t)size * sizeof(rrl_bucket_t);
	t->b = aligned_alloc(64, bytes);
	if (!t->b) {
		log_err("rrl: cannot allocate %zu bytes for a rate-limit table",
		        bytes);
		abort();
	}
	memset(t->b, 0, bytes);
	return t;
}

void rrl_table_free(rrl_table_t *t)
{
	if (!t)
		return;
	free(t->b);
	free(t);
}

rrl_verdict_t rrl_decide(rrl_table_t *t, rrl_class_t cls, uint64_t key,
                         uint32_t now)
{
	uint32_t group = (uint32_t)key & t->mask & ~(uint32_t)(RRL_WAYS - 1);
	rrl_bucket_t *g = t->b + group;
	uint32_t check = (uint32_t)(key >> 32);
	rrl_bucket_t *b = NULL, *victim = g;
	uint32_t victim_age = 0;
	for (unsigned i = 0; i < RRL_WAYS; i++) {
		rrl_bucket_t *x = &g[i];
		if (x->time && x->check == check && x->cls == (uint8_t)cls) {
			b = x;
			break;
		}
		/* An empty bucket, else the one charged longest ago. */
		uint32_t age = x->time ? now - x->time : UINT32_MAX;
		if (i == 0 || age > victim_age) {
			victim = x;
			victim_age = age;
		}
	}
	if (!b) {
		b = victim;
		b->check = check;
		b->cls = (uint8_t)cls;
		b->time = now;
		b->balance = t->cap;
		b->slips = 0;
	} else if (now != b->time) {
		/* A clock that went back earns nothing. */
		if (now > b->time) {
			int64_t bal = (int64_t)b->balance +
			              (int64_t)(now - b->time) * t->credit;
			b->balance = bal > t->cap ? t->cap : (int32_t)bal;
		}
		b->time = now;
	}
	b->balance -= t->cost;
	if (b->balance >= 0)
		return RRL_PASS;
	if (b->balance < t->floor)
		b->balance = t->floor;
	if (!t->conf.slip)
		return RRL_DROP;
	if (++b->slips >= t->conf.slip) {
		b->slips = 0;
		return RRL_SLIP;
	}
	return RRL_DROP;
}

int rrl_addr(const struct sockaddr *sa, rrl_net_t *o)
{
	memset(o, 0, sizeof(*o));
	if (sa->sa_family == AF_INET) {
		o->family = 4;
		o->len = 32;
		memcpy(o->addr, &((const struct sockaddr_in *)sa)->sin_addr, 4);
		return 0;
	}
	if (sa->sa_family == AF_INET6) {
		static const uint8_t mapped[12] = { [10] = 0xFF, [11] = 0xFF };
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
		const uint8_t *a = s6->sin6_addr.s6_addr;
		if (memcmp(a, mapped, sizeof(mapped)) == 0) {
			o->family = 4;
			o->len = 32;
			memcpy(o->addr, a + 12, 4);
		} else {
			o->family = 6;
			o->len = 128;
			memcpy(o->addr, a, 16);
		}
		return 0;
	}
	return -1;
}

/* Skips the RR at @p[*pos]; sets its TYPE and the first byte of its TTL
 * (the extended RCODE for OPT).  Returns 0, or -1 if it overruns. */
static int skip_rr(const uint8_t *p, size_t len, size_t *pos, uint16_t *type,
                   uint8_t *ttl0)
{
	if (dname_skip(p, len, pos) || *pos + 10 > len)
		return -1;
	*type = rd16(p + *pos);
	*ttl0 = p[*pos + 4];
	size_t end = *pos + 10 + rd16(p + *pos + 8);
	if (end > len)
		return -1;
	*pos = end;
	return 0;
}

/* Unpacks the name at @p[*pos] into @name in lowercase; 0 or -1. */
/* The eight bytes of @w with ASCII 'A'..'Z' made lowercase, at once
 * (SWAR): a byte's high bit in m is set where it lies in 'A'..'Z'. */
static int read_name(const uint8_t *p, size_t len, size_t *pos, uint8_t *name)
{
	size_t n = dname_unpack(p, len, pos, name);
	if (!n)
		return -1;
	/* Length bytes are < 'A', so lowercasing whole words is safe. */
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, name + i, 8);
		w = hash_lower8(w);
		memcpy(name + i, &w, 8);
	}
	for (; i < n; i++)
		name[i] = dname_lower[name[i]];
	return 0;
}

void rrl_classify(const uint8_t *r, size_t len, rrl_class_t *cls,
                  uint8_t *name, uint16_t *qtype)
{
	*cls = RRL_ERROR;
	name[0] = 0;
	*qtype = 0;
	if (len < 12)
		return;
	unsigned rcode = r[3] & 0xF;
	uint16_t qd = rd16(r + 4), an = rd16(r + 6), ns = rd16(r + 8),
	         ar = rd16(r + 10);
	if (rcode != RCODE_NOERROR && rcode != RCODE_NXDOMAIN)
		return;
	size_t pos = 12;
	uint16_t qt = 0;
	if (qd != 1 || read_name(r, len, &pos, name) || pos + 4 > len) {
		name[0] = 0;
		return;
	}
	qt = rd16(r + pos);
	pos += 4;
	uint16_t type;
	uint8_t ttl0;
	if (rcode == RCODE_NOERROR && (an || (r[2] & 0x02))) {
		/* Answers, or a whole answer too large for UDP (TC). */
		*cls = RRL_ANSWER;
		*qtype = qt;
		return;
	}
	for (unsigned i = 0; i < an; i++)
		if (skip_rr(r, len, &pos, &type, &ttl0))
			return;
	if (rcode == RCODE_NXDOMAIN) {
		/* Per zone: the SOA's owner.  Without one (a TC reply), the
		 * name that does not exist stands in for it. */
		*cls = RRL_NXDOMAIN;
		size_t p = pos;
		uint8_t owner[DNAME_MAXLEN + 1];
		if (ns && read_name(r, len, &p, owner) == 0 && p + 2 <= len &&
		    rd16(r + p) == RR_SOA)
			memcpy(name, owner, dname_len(owner, sizeof(owner)));
		return;
	}
	/* NOERROR without answers: a referral, or NODATA. */
	if (ns) {
		size_t p = pos;
		uint8_t owner[DNAME_MAXLEN + 1];
		if (!(r[2] & 0x04) && read_name(r, len, &p, owner) == 0 &&
		    p + 2 <= len && rd16(r + p) == RR_NS) {
			*cls = RRL_REFERRAL;
			memcpy(name, owner, dname_len(owner, sizeof(owner)));
			return;
		}
		*cls = RRL_NODATA;
		return;
	}
	/* Nothing in any section: NODATA, unless the OPT record carries
	 * an extended error (BADVERS). */
	for (unsigned i = 0; i < ar; i++) {
		if (skip_rr(r, len, &pos, &type, &ttl0)) {
			name[0] = 0;
			return;
		}
		if (type == RR_OPT && ttl0) {
			name[0] = 0;
			return;
		}
	}
	*cls = RRL_NODATA;
}

/* One step of rrl_key(): @h with the 64-bit word @w mixed in. */
static inline uint64_t key_mix(uint64_t h, uint64_t w)
{
	h = (h ^ w) * 0x9E3779B97F4A7C15ull;  /* 2^64 / golden ratio */
	return h ^ (h >> 32);
}

uint64_t rrl_key(uint64_t seed, rrl_class_t cls, const rrl_net_t *prefix,
                 const uint8_t *name, uint16_t qtype)
{
	/* A word at a time: the query path pays for this per response. */
	uint64_t h = key_mix(HASH_FNV64_INIT ^ seed,
	                     (uint64_t)cls | (uint64_t)prefix->family << 8 |
	                     (uint64_t)qtype << 16);
	uint64_t w[2];
	memcpy(w, prefix->addr, 16);
	h = key_mix(h, w[0]);
	if (prefix->family != 4)
		h = key_mix(h, w[1]);
	size_t n = dname_len(name, DNAME_MAXLEN + 1);
	if (!n)
		n = 1;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t x;
		memcpy(&x, name + i, 8);
		h = key_mix(h, x);
	}
	if (i < n) {
		uint64_t x = 0;
		memcpy(&x, name + i, n - i);
		h = key_mix(h, x);
	}
	h = key_mix(h, n);
	/* Avalanche (MurmurHash3's finaliser): the bucket comes from the
	 * low bits and the check from the high half. */
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h;
}

size_t rrl_slip(uint8_t *r, size_t len)
{
	if (len < 12)
		return len;
	size_t pos = 12, qend = 12;
	uint16_t qd = rd16(r + 4), an = rd16(r + 6), ns = rd16(r + 8),
	         ar = rd16(r + 10);
	size_t opt = 0, optlen = 0;
	uint16_t type;
	uint8_t ttl0;
	for (unsigned i = 0; i < qd; i++) {
		if (dname_skip(r, len, &pos) || pos + 4 > len)
			goto cut;
		pos += 4;
	}
	qend = pos;
	for (unsigned i = 0; i < (unsigned)an + ns; i++)
		if (skip_rr(r, len, &pos, &type, &ttl0))
			goto cut;
	for (unsigned i = 0; i < ar; i++) {
		size_t start = pos;
		if (skip_rr(r, len, &pos, &type, &ttl0))
			goto cut;
		if (type == RR_OPT) {
			opt = start;
			optlen = pos - start;
			break;
		}
	}
cut:
	r[2] |= 0x02;
	if (qend == 12)
		wr16(r + 4, 0);
	wr16(r + 6, 0);
	wr16(r + 8, 0);
	wr16(r + 10, optlen ? 1 : 0);
	if (optlen)
		memmove(r + qend, r + opt, optlen);
	return qend + optlen;
}

size_t rrl_badcookie(uint8_t *r, size_t len)
{
	size_t n = rrl_slip(r, len);
	if (n < 12 || rd16(r + 10) != 1 || rd16(r + 4) != 1)
		return n;
	size_t pos = 12;
	if (dname_skip(r, n, &pos) || pos + 4 + 11 > n)
		return n;
	pos += 4;
	/* The OPT record: root owner, TYPE, CLASS, then the TTL field whose
	 * first byte holds the upper eight bits of the RCODE. */
	if (r[pos] != 0 || rd16(r + pos + 1) != RR_OPT)
		return n;
	r[2] &= (uint8_t)~0x02;
	r[3] = (uint8_t)((r[3] & 0xF0) | (RCODE_BADCOOKIE & 0xF));
	r[pos + 5] = RCODE_BADCOOKIE >> 4;
	return n;
}

/* Whether the response to @sa, whose query's cookie was @cookie, is
 * never limited; if it may be, the client's prefix is left in @pfx. */
static int exempt(const rrl_table_t *t, const struct sockaddr *sa,
                  cookie_kind_t cookie, rrl_net_t *pfx)
{
	/* A valid server cookie proves the address (RFC 7873 §5.2.4). */
	if (cookie == COOKIE_VALID || rrl_addr(sa, pfx))
		return 1;
	for (size_t i = 0; i < t->conf.nexempt; i++)
		if (rrl_net_contains(&t->conf.exempt[i], pfx))
			return 1;
	rrl_net_mask(pfx, pfx->family == 4 ? t->conf.v4_prefix
	                                   : t->conf.v6_prefix);
	return 0;
}

/* Charges the account of (@pfx, @cls, @name, @qtype) and counts what
 * is to be done in @stats. */
static rrl_verdict_t charge(rrl_table_t *t, const rrl_net_t *pfx,
                            rrl_class_t cls, const uint8_t *name,
                            uint16_t qtype, uint32_t now,
                            cookie_kind_t cookie, uint64_t *stats)
{
	uint64_t key = rrl_key(t->seed, cls, pfx, name, qtype);
	switch (rrl_decide(t, cls, key, now)) {
	case RRL_PASS:
		return RRL_PASS;
	case RRL_SLIP:
		STAT_INC(stats, STAT_RRL_SLIPPED);
		/* A client cookie: BADCOOKIE with a fresh server cookie, as
		 * BIND does, so the resolver's retry over UDP is exempt. */
		if (cookie == COOKIE_CLIENT || cookie == COOKIE_INVALID) {
			STAT_INC(stats, STAT_BADCOOKIE);
			return RRL_BADCOOKIE;
		}
		return RRL_SLIP;
	default:
		STAT_INC(stats, STAT_RRL_DROPPED);
		return RRL_DROP;
	}
}

rrl_verdict_t rrl_charge(rrl_table_t *t, const struct sockaddr *sa,
                         rrl_class_t cls, const uint8_t *name, uint16_t qtype,
                         uint32_t now, cookie_kind_t cookie, uint64_t *stats)
{
	rrl_net_t pfx;
	if (exempt(t, sa, cookie, &pfx))
		return RRL_PASS;
	return charge(t, &pfx, cls, name, qtype, now, cookie, stats);
}

size_t rrl_filter(rrl_table_t *t, const struct sockaddr *sa, uint8_t *resp,
                  size_t len, uint32_t now, cookie_kind_t cookie,
                  uint64_t *stats)
{
	rrl_net_t pfx;
	if (exempt(t, sa, cookie, &pfx))
		return len;
	rrl_class_t cls;
	uint8_t name[DNAME_MAXLEN + 1];
	uint16_t qtype;
	rrl_classify(resp, len, &cls, name, &qtype);
	switch (charge(t, &pfx, cls, name, qtype, now, cookie, stats)) {
	case RRL_PASS:
		return len;
	case RRL_SLIP:
		return rrl_slip(resp, len);
	case RRL_BADCOOKIE:
		return rrl_badcookie(resp, len);
	default:
		return 0;
	}
}

/* Publication --------------------------------------------------------- */

static rrl_t *current;        /* RCU-protected; written by the main thread */
static uint64_t generation;   /* main thread only */

static uint64_t random_seed(void)
{
	uint64_t s;
	if (getrandom(&s, sizeof(s), GRND_NONBLOCK) == (ssize_t)sizeof(s))
		return s;
	return ((uint64_t)getpid() << 32) ^ (uint64_t)time(NULL) ^
	       (uint64_t)(uintptr_t)&s;
}

int rrl_load(const conf_t *c, unsigned share, unsigned ntables, rrl_t **out,
             char *err, size_t errlen)
{
	*out = NULL;
	rrl_conf_t rc;
	if (rrl_conf_load(c, &rc, err, errlen))
		return -1;
	if (!rc.rate || !ntables) {
		rrl_conf_clear(&rc);
		return 0;
	}
	rrl_t *r = xcalloc(1, sizeof(*r));
	r->conf = rc;
	r->share = share ? share : 1;
	r->ntables = ntables;
	r->tables = xcalloc(ntables, sizeof(*r->tables));
	uint64_t seed = random_seed();
	for (unsigned i = 0; i < ntables; i++)
		r->tables[i] = rrl_table_new(&r->conf, r->share, seed);
	*out = r;
	return 0;
}

void rrl_free(rrl_t *r)
{
	if (!r)
		return;
	for (unsigned i = 0; i < r->ntables; i++)
		rrl_table_free(r->tables[i]);
	free(r->tables);
	rrl_conf_clear(&r->conf);
	free(r);
}

void rrl_publish(rrl_t *r)
{
	if (r) {
		r->gen = ++generation;
		const rrl_conf_t *c = &r->conf;
		size_t mib = (size_t)r->ntables * c->table_size *
		             sizeof(rrl_bucket_t) >> 20;
		log_info("rate limiting: %u responses a second per client /%u "
		         "(IPv4) or /%u (IPv6) and response, %g on each UDP "
		         "thread of a listen address (%u workers); window "
		         "%u s, slip %u, %zu exempt prefixes; %u tables of %u "
		         "buckets (%zu MiB)", c->rate, c->v4_prefix,
		         c->v6_prefix, (double)c->rate / r->share, r->share,
		         c->window, c->slip, c->nexempt, r->ntables,
		         c->table_size, mib);
	}
	/* Release: the new one is whole before it can be seen; C11 atomics
	 * rather than rcu_xchg_pointer() so that ThreadSanitizer sees the
	 * ordering (the same instructions on x86-64). */
	rrl_t *old = __atomic_exchange_n(&current, r, __ATOMIC_ACQ_REL);
	if (old) {
		if (!r)
			log_info("rate limiting: off");
		synchronize_rcu();
		rrl_free(old);
	}
}

rrl_table_t *rrl_slot_table(rrl_slot_t *slot)
{
	rrl_t *r = __atomic_load_n(&current, __ATOMIC_ACQUIRE);
	if (!r)
		return NULL;
	if (r->gen != slot->gen) {
		unsigned i = __atomic_fetch_add(&r->claimed, 1,
		                                __ATOMIC_RELAXED);
		slot->gen = r->gen;
		slot->table = i < r->ntables ? r->tables[i] : NULL;
	}
	return slot->table;
}
