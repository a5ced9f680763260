/* SPDX-License-Identifier: MIT */
/* Service resolution: geo -> row chain -> weighted pick -> TTL, scope. */
#include "gslb/gslb.h"
#include "common/util.h"
#include "common/hash.h"

#include <netinet/in.h>
#include <string.h>

/* Addresses that cannot locate a client: an ECS option carrying one is
 * ignored and the resolver's address is used instead. */
static int routable4(const uint8_t *a)
{
	return !(a[0] == 0 || a[0] == 127 || (a[0] == 169 && a[1] == 254) ||
	         a[0] >= 224);
}

static int routable6(const uint8_t *a)
{
	static const uint8_t zero[16];
	if (memcmp(a, zero, 15) == 0 && (a[15] == 0 || a[15] == 1))
		return 0;                         /* :: and ::1 */
	if (a[0] == 0xfe && (a[1] & 0xc0) == 0x80)
		return 0;                         /* link-local */
	return a[0] != 0xff;                  /* multicast */
}

void gslb_client_from(gslb_client_t *c, const struct sockaddr *src,
                      unsigned ecs_family, const uint8_t *ecs_addr,
                      unsigned ecs_source)
{
	memset(c, 0, sizeof(*c));
	if (ecs_family && ecs_source > 0) {
		if (ecs_family == 1 && routable4(ecs_addr)) {
			struct sockaddr_in *s = (struct sockaddr_in *)&c->addr;
			s->sin_family = AF_INET;
			memcpy(&s->sin_addr, ecs_addr, 4);
			c->from_ecs = 1;
			return;
		}
		/* ::ffff:a.b.c.d is an IPv4 client written in IPv6: judged by
		 * its IPv4 address, and located as IPv4 by geo. */
		static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };
		int mapped = ecs_family == 2 && memcmp(ecs_addr, v4mapped, 12) == 0;
		if (ecs_family == 2 && (mapped ? routable4(ecs_addr + 12)
		                               : routable6(ecs_addr))) {
			struct sockaddr_in6 *s = (struct sockaddr_in6 *)&c->addr;
			s->sin6_family = AF_INET6;
			memcpy(&s->sin6_addr, ecs_addr, 16);
			c->from_ecs = 1;
			c->mapped = (uint8_t)mapped;
			return;
		}
	}
	if (src && src->sa_family == AF_INET) {
		memcpy(&c->addr, src, sizeof(struct sockaddr_in));
	} else if (src && src->sa_family == AF_INET6) {
		memcpy(&c->addr, src, sizeof(struct sockaddr_in6));
		c->mapped = IN6_IS_ADDR_V4MAPPED(
			&((const struct sockaddr_in6 *)src)->sin6_addr);
	}
}

/* The sticky key: the client's /24 or /56, hashed. */
static uint64_t sticky_key(const gslb_client_t *c, uint8_t *bits)
{
	const uint8_t *a;
	unsigned n;
	if (c->addr.ss_family == AF_INET6 && c->mapped) {
		/* The IPv4 /24 inside the mapped address: ::ffff:a.b.c.0/120. */
		a = (const uint8_t *)&((const struct sockaddr_in6 *)&c->addr)->sin6_addr + 12;
		n = GSLB_STICKY_V4 / 8;
		*bits = 96 + GSLB_STICKY_V4;
	} else if (c->addr.ss_family == AF_INET6) {
		a = (const uint8_t *)&((const struct sockaddr_in6 *)&c->addr)->sin6_addr;
		n = GSLB_STICKY_V6 / 8;
		*bits = GSLB_STICKY_V6;
	} else {
		a = (const uint8_t *)&((const struct sockaddr_in *)&c->addr)->sin_addr;
		n = GSLB_STICKY_V4 / 8;
		*bits = GSLB_STICKY_V4;
	}
	return hash_fnv64(a, n);
}

const char *gslb_row_name(gslb_row_t row)
{
	switch (row) {
	case GSLB_ROW_REGION_ISP: return "region,isp";
	case GSLB_ROW_REGION: return "region,*";
	case GSLB_ROW_ISP: return "*,isp";
	case GSLB_ROW_DEFAULT: return "*,*";
	default: return "none";
	}
}

unsigned gslb_chain(const char *region, const char *isp, int svc_flags,
                    gslb_row_t out[4])
{
	int reg = strcmp(region, "*") != 0, is = strcmp(isp, "*") != 0;
	/* Each level with its key's real shape: a level whose named field is
	 * unknown is the same key as a later, wider level, so only the
	 * levels whose every named field is known are looked up. */
	static const struct { gslb_row_t row; int need_reg, need_isp, kind; } lv[4] = {
		{ GSLB_ROW_REGION_ISP, 1, 1, SVC_ROW_REGION_ISP },
		{ GSLB_ROW_REGION, 1, 0, SVC_ROW_REGION },
		{ GSLB_ROW_ISP, 0, 1, SVC_ROW_ISP },
		{ GSLB_ROW_DEFAULT, 0, 0, SVC_ROW_DEFAULT },
	};
	unsigned n = 0;
	for (int i = 0; i < 4; i++) {
		if ((lv[i].need_reg && !reg) || (lv[i].need_isp && !is))
			continue;
		if ((svc_flags & SVC_ROW_KNOWN) && !(svc_flags & lv[i].kind))
			continue;
		out[n++] = lv[i].row;
	}
	return n;
}

/* Starts the trail of a resolution: the client and the chain, every
 * level not looked at yet.  Out of line: workers never call it. */
__attribute__((cold, noinline))
static void trail_start(gslb_trail_t *t, const gslb_client_t *c,
                        const gslb_row_t *chain, unsigned nchain)
{
	memset(t, 0, sizeof(*t));
	t->resolved = 1;
	t->client = *c;
	t->nchain = (uint8_t)nchain;
	memcpy(t->chain, chain, nchain * sizeof(*chain));
}

/* The row that answers: the first of the chain that exists (open and
 * empty services), or the first that still has a usable node (fallback),
 * its plan in out->plan.  Returns 0 when the service has no row of the
 * chain at all. */
static int find_row(wdb_reader_t *r, const char *name, size_t len,
                    const gslb_client_t *c, gslb_result_t *out,
                    gslb_trail_t *trail)
{
	const char *reg = out->geo.region, *isp = out->geo.isp;
	gslb_row_t chain[4];
	unsigned nchain = gslb_chain(reg, isp, out->svc.flags, chain);
	if (trail)
		trail_start(trail, c, chain, nchain);
	int fallback = out->svc.all_down == SVC_ALL_DOWN_FALLBACK;
	gslb_row_t first = GSLB_ROW_NONE, chosen = GSLB_ROW_NONE;
	out->from_fallback = 0;
	for (unsigned i = 0; i < nchain && chosen == GSLB_ROW_NONE; i++) {
		int by_reg = chain[i] == GSLB_ROW_REGION_ISP || chain[i] == GSLB_ROW_REGION;
		int by_isp = chain[i] == GSLB_ROW_REGION_ISP || chain[i] == GSLB_ROW_ISP;
		const uint8_t *d;
		size_t dl;
		plan_t *p = first == GSLB_ROW_NONE ? &out->plan : &out->spare;
		if (wdb_plan(r, name, len, by_reg ? reg : "*", by_isp ? isp : "*",
		             &d, &dl) ||
		    plan_decode(d, dl, p)) {
			if (trail)
				trail->level[i] = GSLB_LEVEL_NO_ROW;
			continue;
		}
		if (first == GSLB_ROW_NONE)
			first = chain[i];
		/* open and empty: the first existing row answers; fallback:
		 * the first row that still has a usable node. */
		if (!fallback || policy_usable(p)) {
			chosen = chain[i];
			if (p != &out->plan)
				out->plan = *p;
			out->from_fallback = first != chosen;
		}
		if (trail)
			trail->level[i] = chosen == GSLB_ROW_NONE ? GSLB_LEVEL_NO_USABLE
			                                          : GSLB_LEVEL_ANSWERED;
	}
	if (first == GSLB_ROW_NONE)
		return 0; /* a service without rows: NODATA */
	if (chosen == GSLB_ROW_NONE) {
		chosen = first; /* fallback found nothing usable: see below */
		for (unsigned i = 0; trail && i < nchain; i++)
			if (chain[i] == first)
				trail->level[i] = GSLB_LEVEL_ANSWERED;
	}
	out->row = chosen;
	return 1;
}

/* The memo ---------------------------------------------------------- */

/* Which row answers a service for a location, and that row's decoded
 * plan, depend only on the store's snapshot, the service name and the
 * (region, ISP) pair; each query would otherwise build up to four row
 * keys, look them up and decode the plan.  A worker keeps the last
 * results in a direct-mapped table, valid for the snapshot (LMDB
 * transaction id) they were read in: plan_node_t points into the map,
 * which the reader's cache (weightdb.c, "Readers") shows stays valid
 * while renewing gives the same id.  Names longer than MEMO_NAME and rows
 * of more than MEMO_NODES nodes are resolved without it. */
#define MEMO_SLOTS 256
#define MEMO_NAME 96
#define MEMO_NODES 8

typedef struct {
	size_t txnid;                  /* 0: empty */
	uint64_t hash;
	uint8_t len;
	uint8_t has_row;               /* 0: the service has no row (NODATA) */
	uint8_t row;                   /* gslb_row_t */
	uint8_t from_fallback;
	uint8_t n, release_slot;
	uint16_t release_bp, spill_bp;
	char name[MEMO_NAME];
	char region[GEO_NAME_MAX];
	char isp[GEO_NAME_MAX];
	plan_node_t node[MEMO_NODES];
} memo_slot_t;

/* The service a query name is, or that it is none: the name's key text
 * (dname_to_str()) and its service record, by lowercase wire name. */
typedef struct {
	size_t txnid;                  /* 0: empty */
	uint64_t hash;
	uint8_t wlen, klen;
	uint8_t found;                 /* 0: not a service */
	svc_rec_t svc;
	uint8_t wire[MEMO_NAME];
	char key[MEMO_NAME];
} memo_svc_t;

struct gslb_memo {
	memo_slot_t slot[MEMO_SLOTS];
	memo_svc_t svc[MEMO_SLOTS];
	uint64_t hits;
};

gslb_memo_t *gslb_memo_new(void)
{
	return xcalloc(1, sizeof(gslb_memo_t));
}

void gslb_memo_free(gslb_memo_t *m)
{
	free(m);
}

uint64_t gslb_memo_hits(const gslb_memo_t *m)
{
	return m->hits;
}

static memo_slot_t *memo_slot(gslb_memo_t *m, const char *name, size_t len,
                              const geo_result_t *g, uint64_t *hash)
{
	uint64_t h = (hash_words(name, len, 0) ^ g->lochash) * 0x9E3779B97F4A7C15ull;
	*hash = h;
	return &m->slot[h >> 56 & (MEMO_SLOTS - 1)];
}

/* Fills @out's row, plan and fallback mark from @m's entry for @name at
 * the location in out->geo.  Returns -1 on a miss, else find_row()'s. */
static int memo_get(gslb_memo_t *m, size_t txnid, const char *name,
                    size_t len, gslb_result_t *out)
{
	uint64_t h;
	const memo_slot_t *s = memo_slot(m, name, len, &out->geo, &h);
	if (s->txnid != txnid || s->hash != h || s->len != len ||
	    memcmp(s->name, name, len) != 0 ||
	    strcmp(s->region, out->geo.region) != 0 ||
	    strcmp(s->isp, out->geo.isp) != 0)
		return -1;
	m->hits++;
	if (!s->has_row)
		return 0;
	out->row = (gslb_row_t)s->row;
	out->from_fallback = s->from_fallback;
	out->plan.n = s->n;
	out->plan.release_slot = s->release_slot;
	out->plan.release_bp = s->release_bp;
	out->plan.spill_bp = s->spill_bp;
	memcpy(out->plan.node, s->node, s->n * sizeof(s->node[0]));
	return 1;
}

static void memo_put(gslb_memo_t *m, size_t txnid, const char *name,
                     size_t len, const gslb_result_t *out, int has_row)
{
	if (len > MEMO_NAME || (has_row && out->plan.n > MEMO_NODES))
		return;
	uint64_t h;
	memo_slot_t *s = memo_slot(m, name, len, &out->geo, &h);
	s->txnid = txnid;
	s->hash = h;
	s->len = (uint8_t)len;
	memcpy(s->name, name, len);
	memcpy(s->region, out->geo.region, sizeof(s->region));
	memcpy(s->isp, out->geo.isp, sizeof(s->isp));
	s->has_row = (uint8_t)has_row;
	if (!has_row)
		return;
	s->row = (uint8_t)out->row;
	s->from_fallback = out->from_fallback;
	s->n = out->plan.n;
	s->release_slot = out->plan.release_slot;
	s->release_bp = out->plan.release_bp;
	s->spill_bp = out->plan.spill_bp;
	memcpy(s->node, out->plan.node, out->plan.n * sizeof(s->node[0]));
}

int gslb_service(wdb_reader_t *r, gslb_memo_t *memo, const uint8_t *wire,
                 size_t wlen, char *buf, size_t bufsize, const char **key,
                 size_t *klen, svc_rec_t *svc)
{
	memo_svc_t *s = NULL;
	size_t txnid = 0;
	uint64_t h = 0;
	if (memo && wlen <= MEMO_NAME && (txnid = wdb_reader_begin(r))) {
		h = hash_words(wire, wlen, 0);
		s = &memo->svc[(h * 0x9E3779B97F4A7C15ull) >> 56 & (MEMO_SLOTS - 1)];
		if (s->txnid == txnid && s->hash == h && s->wlen == wlen &&
		    memcmp(s->wire, wire, wlen) == 0) {
			memo->hits++;
			if (!s->found)
				return GSLB_ENOENT;
			*key = s->key;
			*klen = s->klen;
			*svc = s->svc;
			return 0;
		}
	}
	dname_to_str(wire, buf, bufsize);
	size_t kl = strlen(buf);
	if (kl > 1)
		buf[--kl] = 0; /* no final dot */
	*key = buf;
	*klen = kl;
	int rc = wdb_service(r, buf, kl, svc);
	if (s && (rc == 0 || rc == GSLB_ENOENT) && kl <= MEMO_NAME) {
		s->txnid = txnid;
		s->hash = h;
		s->wlen = (uint8_t)wlen;
		memcpy(s->wire, wire, wlen);
		s->klen = (uint8_t)kl;
		memcpy(s->key, buf, kl);
		s->found = rc == 0;
		if (rc == 0)
			s->svc = *svc;
	}
	return rc;
}

int gslb_resolve(wdb_reader_t *r, gslb_memo_t *memo, const geo_t *geo,
                 const char *name, size_t len, uint16_t qtype,
                 const gslb_client_t *c, uint32_t now, uint64_t *rng,
                 gslb_result_t *out, gslb_trail_t *trail)
{
	int rc = wdb_service(r, name, len, &out->svc);
	if (rc)
		return rc;
	return gslb_resolve_svc(r, memo, geo, name, len, qtype, c, now, rng,
	                        out, trail);
}

/* How long and for which clients the answer of @out may be kept: its
 * TTL and ECS scope.  Every result of gslb_resolve_svc() goes through
 * here, addresses, CNAME and NODATA alike: a resolver caches an empty
 * answer by the same scope and for no longer than an address (RFC 7871
 * §7.4, S4-11), so whatever decides the one decides the other.  @has_row:
 * out->plan holds the answering row.  @sbits: the client network the
 * pick depended on (sticky, release), 0 when it did not. */
static void answer_cache(gslb_result_t *out, const gslb_client_t *c,
                         uint32_t now, int has_row, uint8_t sbits)
{
	/* The short TTL while anything in the row is moving: a node of it
	 * demoted, restored, derated, draining or gray-switching within the
	 * settle period (S0-11, S1-8), so resolvers follow the change soon;
	 * an all-down-empty NODATA of a row that has just gone down too. */
	out->short_ttl = 0;
	for (unsigned i = 0; has_row && i < out->plan.n; i++)
		if (out->plan.node[i].short_until > now)
			out->short_ttl = 1;
	/* An answer from a fallback row because the client's own rows are
	 * empty is a stopgap (S0-9, S0-11): the nodes it names may be far
	 * away, and the client's row may serve again soon (a restored or
	 * re-enabled node, a promoted standby).  Resolvers must not keep it
	 * for the long TTL. */
	if (has_row && out->from_fallback)
		out->short_ttl = 1;
	out->ttl = out->short_ttl ? out->svc.short_ttl : out->svc.ttl;
	/* ECS scope (RFC 7871 §7.2.1): the prefix that decided the answer;
	 * 0 when the service answers everybody alike.  Which row answers
	 * (or that none does) depends on the client's network whenever the
	 * service has client rows, so the scope does not depend on whether
	 * the row gave an address. */
	out->scope = 0;
	if (out->svc.flags & SVC_CLIENT_ROWS)
		out->scope = out->geo.prefix_len;
	/* A mapped client's network was found as IPv4 (0..32 bits); in the
	 * IPv6 option it came in, that network is ::ffff:0:0/96 plus those
	 * bits, so a /16 is scope /112, not /16 of IPv6 space. */
	if (c->mapped && c->from_ecs && (out->svc.flags & SVC_CLIENT_ROWS))
		out->scope = (uint8_t)(out->scope + 96);
	if (sbits > out->scope)
		out->scope = sbits;
}

/* The pick from the answering row in out->plan: none when every node is
 * down and the service fails closed, else the service's number of nodes
 * that can answer @qtype.  *@sbits: the client network the pick depends
 * on (sticky, release), left alone when it depends on none. */
static void pick_nodes(gslb_result_t *out, const gslb_client_t *c,
                       uint16_t qtype, uint64_t *rng, uint8_t *sbits)
{
	int all = 0;
	if (!policy_usable(&out->plan)) {
		if (out->svc.all_down == SVC_ALL_DOWN_EMPTY)
			return; /* fail closed: NODATA */
		/* open, or fallback with no usable node anywhere in the
		 * chain: answer from the client's row as if all were healthy
		 * rather than send nothing. */
		all = 1;
		out->failed_open = 1;
	}
	int sticky = (out->svc.flags & SVC_STICKY) != 0;
	/* A gray release (S4-10) splits the row's clients by the same key
	 * as the sticky pick, so its answers vary by that network too. */
	int by_key = sticky || out->plan.release_slot != 0;
	uint64_t key = by_key ? sticky_key(c, sbits) : 0;
	out->client_key = key;
	unsigned want = out->svc.answers ? out->svc.answers : 1;
	/* Only nodes that can answer the asked type are candidates, so an
	 * AAAA query never draws a node without IPv6 when another node of
	 * the row has one. */
	unsigned need = qtype == 1 ? POLICY_NEED_V4 : qtype == 28 ? POLICY_NEED_V6 : 0;
	out->npicked = (uint8_t)policy_pick(&out->plan, want, all, sticky, key,
	                                    need, rng, out->picked);
	if (!out->npicked && !all && by_key && out->plan.release_slot &&
	    out->svc.all_down != SVC_ALL_DOWN_EMPTY) {
		/* S4-10: the release node was the row's only usable node and
		 * this client is outside the release: the row is all down for
		 * it, so it fails open like any all-down row. */
		out->failed_open = 1;
		out->npicked = (uint8_t)policy_pick(&out->plan, want, 1, sticky, key,
		                                    need, rng, out->picked);
	}
}

/* S1-6, S4-3: the answering row cannot carry all of its clients within
 * its nodes' capacities: the share of its plan's spill goes to the next
 * level of the chain that has a usable node, the rest stays.  Which
 * clients spill is drawn like the pick: by the sticky key for sticky
 * services (a client keeps its level while the spill holds), else at
 * random.  The answer of a spilled client is a stopgap like a fallback
 * one (short TTL).  The memo keeps the client's own row; this walk runs
 * only for a spilled client of a row over its capacity, never for the
 * others. */
static void spill(wdb_reader_t *r, const char *name, size_t len,
                  const gslb_client_t *c, uint64_t *rng, gslb_result_t *out,
                  gslb_trail_t *trail, uint8_t *sbits)
{
	const char *reg = out->geo.region, *isp = out->geo.isp;
	gslb_row_t chain[4];
	unsigned nchain = gslb_chain(reg, isp, out->svc.flags, chain), i = 0;
	while (i < nchain && chain[i] != out->row)
		i++;
	if (trail) {
		trail->spill_level = (uint8_t)i;
		trail->spill_bp = out->plan.spill_bp;
	}
	uint32_t draw;
	if (out->svc.flags & SVC_STICKY)
		draw = policy_release_bucket(sticky_key(c, sbits), 0x5b111u);
	else
		draw = (uint32_t)(policy_random(rng) % PLAN_RELEASE_ALL);
	if (draw >= out->plan.spill_bp)
		return;
	for (unsigned k = i + 1; k < nchain; k++) {
		int by_reg = chain[k] == GSLB_ROW_REGION_ISP || chain[k] == GSLB_ROW_REGION;
		int by_isp = chain[k] == GSLB_ROW_REGION_ISP || chain[k] == GSLB_ROW_ISP;
		const uint8_t *d;
		size_t dl;
		if (wdb_plan(r, name, len, by_reg ? reg : "*", by_isp ? isp : "*", &d, &dl) ||
		    plan_decode(d, dl, &out->spare) || !policy_usable(&out->spare))
			continue;
		if (trail) {
			trail->level[i] = GSLB_LEVEL_SPILLED;
			trail->level[k] = GSLB_LEVEL_ANSWERED;
		}
		out->plan = out->spare;
		out->row = chain[k];
		out->spilled = 1;
		out->from_fallback = 1;
		return;
	}
}

int gslb_resolve_svc(wdb_reader_t *r, gslb_memo_t *memo, const geo_t *geo,
                     const char *name, size_t len, uint16_t qtype,
                     const gslb_client_t *c, uint32_t now, uint64_t *rng,
                     gslb_result_t *out, gslb_trail_t *trail)
{
	/* The network text is formatted only for a trail (explain). */
	out->geo.want_network = trail != NULL;
	geo_lookup(geo, (const struct sockaddr *)&c->addr, &out->geo);
	out->row = GSLB_ROW_NONE;
	out->npicked = 0;
	out->failed_open = 0;
	out->from_fallback = 0;
	out->client_key = 0;
	/* The memo serves the workers; explain records the walk itself. */
	size_t txnid = memo && !trail && out->geo.lochash ? wdb_reader_txnid(r) : 0;
	int use_memo = txnid != 0;
	int found = use_memo ? memo_get(memo, txnid, name, len, out) : -1;
	if (found < 0) {
		found = find_row(r, name, len, c, out, trail);
		if (use_memo)
			memo_put(memo, txnid, name, len, out, found);
	}
	uint8_t sbits = 0;
	out->spilled = 0;
	if (found && out->plan.spill_bp)
		spill(r, name, len, c, rng, out, trail, &sbits);
	if (found)
		pick_nodes(out, c, qtype, rng, &sbits);
	answer_cache(out, c, now, found, sbits);
	return 0;
}
