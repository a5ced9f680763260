/* SPDX-License-Identifier: MIT */
/* The rollovers' driver in the daemon, and the DS query to the parent.
 *
 * It runs on the main thread's once-a-second timer (daemon/retention.c),
 * not on the health thread: every step is a store write, a key file and
 * a reload of the keys, which are the main thread's work already (it
 * reloads when "dnssecgen" moves), while the health thread's loop times
 * probes, and a key generation or a DS query there would show up as
 * probe latency.  The DS query blocks the main thread for 1 s at most
 * per server, only while a KSK or CSK rollover waits for the parent, and
 * at most every ds-check-interval; queries are answered by the worker
 * threads meanwhile. */
#include "dnssec/roll.h"
#include "dnssec/keydb.h"
#include "common/log.h"
#include "common/util.h"

#include <limits.h>
#include <ldns/ldns.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* When the parent was last asked for a zone's DS, and when a step last
 * failed: kept in memory, not in the store, where each would be a
 * commit and a reload. */
#define ROLL_ZONES_MAX 256
typedef struct zone_slot {
	char zone[256];
	int64_t checked;
	int64_t failed;
} zone_slot_t;
static zone_slot_t g_slots[ROLL_ZONES_MAX];

/* A step that failed (a keystore gslbd cannot write, say) is tried
 * again after this long, not every second: one warning a minute. */
#define ROLL_RETRY 60

static zone_slot_t *zone_slot(const char *zone)
{
	for (int i = 0; i < ROLL_ZONES_MAX; i++) {
		if (!g_slots[i].zone[0])
			snprintf(g_slots[i].zone, sizeof(g_slots[i].zone), "%s", zone);
		if (!strcmp(g_slots[i].zone, zone))
			return &g_slots[i];
	}
	return NULL;
}

/* Whether DS record @rr is the DS (digest type 2) of DNSKEY @dk (@dl
 * bytes) of tag @tag, whose digest is @dg. */
static int ds_match(const ldns_rr *rr, unsigned tag, const uint8_t *dk,
                    const uint8_t dg[32])
{
	if (ldns_rr_rd_count(rr) < 4)
		return 0;
	const ldns_rdf *d = ldns_rr_rdf(rr, 3);
	return ldns_rdf2native_int16(ldns_rr_rdf(rr, 0)) == tag &&
	       ldns_rdf2native_int8(ldns_rr_rdf(rr, 1)) == dk[3] &&
	       ldns_rdf2native_int8(ldns_rr_rdf(rr, 2)) == 2 &&
	       ldns_rdf_size(d) == 32 && !memcmp(ldns_rdf_data(d), dg, 32);
}

/* A resolver for parent-server @spec ("ADDR" or "ADDR@PORT"), asked
 * without recursion, or NULL. */
static ldns_resolver *parent_resolver(const char *spec)
{
	char addr[128];
	snprintf(addr, sizeof(addr), "%s", spec);
	char *at = strchr(addr, '@');
	unsigned port = 53;
	if (at) {
		*at = 0;
		port = (unsigned)atoi(at + 1);
	}
	ldns_rdf *a = ldns_rdf_new_frm_str(strchr(addr, ':') ? LDNS_RDF_TYPE_AAAA :
	                                   LDNS_RDF_TYPE_A, addr);
	if (!a || !port || port > 65535) {
		ldns_rdf_deep_free(a);
		return NULL;
	}
	ldns_resolver *r = ldns_resolver_new();
	ldns_resolver_push_nameserver(r, a);
	ldns_rdf_deep_free(a);
	ldns_resolver_set_port(r, (uint16_t)port);
	ldns_resolver_set_recursive(r, false);
	return r;
}

/* Asks @r for the DS of @zone: 1 with the TTL when it holds the DS of
 * @tag, 0 when not, -1 when it did not answer. */
static int ask(ldns_resolver *r, const char *zone, unsigned tag,
               const uint8_t *dk, const uint8_t dg[32], uint32_t *ttl)
{
	ldns_resolver_set_timeout(r, (struct timeval){ .tv_sec = 1 });
	ldns_resolver_set_retry(r, 1);
	ldns_rdf *name = ldns_dname_new_frm_str(zone);
	ldns_pkt *pkt = NULL;
	uint16_t flags = ldns_resolver_recursive(r) ? LDNS_RD : 0;
	ldns_status st = name ? ldns_resolver_send(&pkt, r, name, LDNS_RR_TYPE_DS,
	                                           LDNS_RR_CLASS_IN, flags) :
	                 LDNS_STATUS_ERR;
	ldns_rdf_deep_free(name);
	if (st != LDNS_STATUS_OK || !pkt) {
		ldns_pkt_free(pkt);
		return -1;
	}
	int found = 0;
	ldns_rr_list *l = ldns_pkt_rr_list_by_type(pkt, LDNS_RR_TYPE_DS,
	                                           LDNS_SECTION_ANSWER);
	for (size_t i = 0; l && i < ldns_rr_list_rr_count(l); i++) {
		ldns_rr *rr = ldns_rr_list_rr(l, i);
		if (ds_match(rr, tag, dk, dg)) {
			found = 1;
			*ttl = ldns_rr_ttl(rr);
		}
	}
	ldns_rr_list_deep_free(l);
	ldns_pkt_free(pkt);
	return found;
}

int roll_ds_lookup(const dnssec_conf_t *c, const char *zone, json_t *key,
                   uint32_t *ttl, char *err, size_t errlen)
{
	uint8_t dk[DNSSEC_DNSKEY_MAX], owner[256], low[256], dg[32];
	size_t dl = keydb_dnskey(key, dk);
	unsigned tag = (unsigned)json_integer_value(json_object_get(key, "tag"));
	if (!dl || !dname_from_str(zone, owner)) {
		snprintf(err, errlen, "zone %s: key %u: an incomplete record", zone,
		         tag);
		return -1;
	}
	dname_copy_lower(low, owner);
	if (dnssec_ds_digest(low, dk, dl, dg)) {
		snprintf(err, errlen, "zone %s: key %u: no DS digest", zone, tag);
		return -1;
	}
	unsigned n = c->nparents ? c->nparents : 1;
	for (unsigned i = 0; i < n; i++) {
		ldns_resolver *r = NULL;
		if (c->nparents)
			r = parent_resolver(c->parents[i]);
		else if (ldns_resolver_new_frm_file(&r, NULL) != LDNS_STATUS_OK)
			r = NULL;
		if (!r)
			continue;
		int got = ask(r, zone, tag, dk, dg, ttl);
		ldns_resolver_deep_free(r);
		if (got >= 0)
			return got;
	}
	snprintf(err, errlen, "zone %s: no parent server answered the DS query "
	         "(dnssec: parent-servers)", zone);
	return -1;
}

/* Commits @t with @what, or logs why not.  Returns 0 or -1. */
static roll_commit_fn g_commit;   /* NULL: the local store */
static void *g_commit_arg;

void roll_set_commit(roll_commit_fn fn, void *arg)
{
	g_commit = fn;
	g_commit_arg = arg;
}

/* Commits step @what of @zone: 0, 1 when the store is behind the last
 * step written (roll_commit_fn), or -1, logged. */
static int commit(wdb_txn_t *t, const char *zone, const char *what)
{
	char err[512];
	int rc = g_commit ? g_commit(g_commit_arg, t, what, err, sizeof(err))
	                  : wdb_commit(t, what, err, sizeof(err)) < 0 ? -1 : 0;
	if (rc > 0)
		return 1;
	if (rc < 0) {
		log_warning("dnssec: zone %s: rollover step not stored: %s", zone, err);
		return -1;
	}
	log_info("%s", what);
	return 0;
}

/* The DS check of @zone's rollover @p: a step when the parent has it. */
static void ds_check(weightdb_t *db, const dnssec_conf_t *dc, const char *zone,
                     const roll_plan_t *p, int64_t now)
{
	char err[512];
	wdb_txn_t *t = wdb_begin_read(db);
	json_t *key = t ? keydb_key(t, zone, p->new_tag) : NULL;
	if (t)
		wdb_abort(t);
	uint32_t ttl = 0;
	int got = key ? roll_ds_lookup(dc, zone, key, &ttl, err, sizeof(err)) : -1;
	json_decref(key);
	if (got < 0 && key)
		log_warning("dnssec: %s", err);
	if (got <= 0)
		return;
	char what[512];
	t = wdb_begin(db, "dnssec", err, sizeof(err));
	if (!t) {
		log_warning("dnssec: zone %s: %s", zone, err);
		return;
	}
	if (roll_ds_seen(t, zone, ttl, now, what, sizeof(what))) {
		wdb_abort(t);
		return;
	}
	commit(t, zone, what);
}

/* The plan of @zone in @t at @now; ROLL_NONE for a zone not signed. */
static void plan_in(wdb_txn_t *t, const dnssec_conf_t *dc, const char *zone,
                    int64_t now, int64_t checked, roll_plan_t *p)
{
	json_t *zr = keydb_zone(t, zone);
	json_t *keys = keydb_keys(t, zone);
	if (zr && json_is_true(json_object_get(zr, "enabled")))
		roll_plan(dc, zr, keys, now, checked, p);
	else
		memset(p, 0, sizeof(*p));
	json_decref(zr);
	json_decref(keys);
}

/* Runs the step due of zone @zone. */
static void zone_tick(weightdb_t *db, const dnssec_conf_t *dc,
                      const char *zone, int64_t now)
{
	zone_slot_t *slot = zone_slot(zone);
	if (slot && slot->failed && now - slot->failed < ROLL_RETRY)
		return;
	wdb_txn_t *t = wdb_begin_read(db);
	if (!t)
		return;
	roll_plan_t p;
	plan_in(t, dc, zone, now, slot ? slot->checked : 0, &p);
	wdb_abort(t);
	if (p.action == ROLL_DS_CHECK) {
		if (slot)
			slot->checked = now;
		ds_check(db, dc, zone, &p, now);
		return;
	}
	if (p.action == ROLL_NONE)
		return;
	char err[512] = "", what[512] = "";
	t = wdb_begin(db, "dnssec", err, sizeof(err));
	if (!t) {
		log_warning("dnssec: zone %s: %s", zone, err);
		return;
	}
	/* Planned again in the write transaction: another process on the
	 * store (a --replace taking over) may have taken the step since. */
	roll_plan_t again;
	plan_in(t, dc, zone, now, 0, &again);
	if (again.action != p.action || again.old_tag != p.old_tag ||
	    again.new_tag != p.new_tag) {
		wdb_abort(t);
		return;
	}
	char made[PATH_MAX];
	if (roll_apply(t, dc->keystore, zone, &p, now, what, sizeof(what), made,
	               sizeof(made), err, sizeof(err)) == 0) {
		int rc = commit(t, zone, what);
		if (rc == 0) {
			if (slot)
				slot->failed = 0;
			return;
		}
		if (made[0])
			unlink(made);    /* a key the store does not know */
		if (rc > 0)
			return;          /* planned again once the store caught up */
		snprintf(err, sizeof(err), "the commit was refused");
	} else {
		wdb_abort(t);
	}
	if (slot)
		slot->failed = now;
	log_warning("dnssec: zone %s: rollover step '%s' failed (tried again in "
	            "%d s): %s", zone, roll_step_name(p.action), ROLL_RETRY, err);
}

void roll_tick(weightdb_t *db, const conf_t *c, int64_t now)
{
	dnssec_conf_t dc;
	char err[512];
	if (!db || dnssec_conf_load(c, &dc, err, sizeof(err)))
		return;
	/* A rollover under way goes on when the lifetimes are set to 0:
	 * they only decide when the next one starts. */
	if (dc.keystore)
		for (size_t i = 0; i < c->nzones; i++)
			zone_tick(db, &dc, c->zones[i].name, now);
	dnssec_conf_clear(&dc);
}
