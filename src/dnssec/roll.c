/* SPDX-License-Identifier: MIT */
/* The rollover state machine and its steps as store writes. */
#include "dnssec/roll.h"
#include "dnssec/keydb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static json_int_t ival(json_t *o, const char *k)
{
	return json_integer_value(json_object_get(o, k));
}

static const char *sval(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

static unsigned lifetime(const dnssec_conf_t *c, const char *role)
{
	return !strcmp(role, "zsk") ? c->zsk_lifetime :
	       !strcmp(role, "ksk") ? c->ksk_lifetime :
	       !strcmp(role, "csk") ? c->csk_lifetime : 0;
}

const char *roll_step_name(roll_action_t a)
{
	switch (a) {
	case ROLL_START: return "start the rollover";
	case ROLL_SWITCH: return "switch signing to the new key";
	case ROLL_CDS: return "publish the new key's CDS and CDNSKEY";
	case ROLL_DS_CHECK: return "ask the parent for the new key's DS";
	case ROLL_WITHDRAW: return "withdraw the old key";
	default: return "none";
	}
}

/* No rollover in progress: the key whose lifetime ends first. */
static void plan_start(const dnssec_conf_t *c, json_t *keys, int64_t now,
                       roll_plan_t *p)
{
	size_t i;
	json_t *k;
	json_array_foreach(keys, i, k) {
		const char *role = sval(k, "role");
		unsigned life = lifetime(c, role);
		if (!life || strcmp(sval(k, "state"), "active"))
			continue;
		int64_t due = (int64_t)ival(k, "active") + life;
		if (p->step && due >= p->at)
			continue;
		p->step = ROLL_START;
		p->kind = !strcmp(role, "zsk") ? "zsk" : !strcmp(role, "ksk") ?
		          "ksk" : "csk";
		p->old_tag = (unsigned)ival(k, "tag");
		p->at = due;
	}
	if (p->step && now >= p->at)
		p->action = p->step;
}

void roll_plan(const dnssec_conf_t *c, json_t *zone, json_t *keys,
               int64_t now, int64_t ds_checked, roll_plan_t *p)
{
	memset(p, 0, sizeof(*p));
	json_t *r = json_object_get(zone, "roll");
	if (!json_is_object(r)) {
		plan_start(c, keys, now, p);
		return;
	}
	const char *phase = sval(r, "phase");
	int64_t since = (int64_t)ival(r, "since");
	p->kind = !strcmp(sval(r, "kind"), "zsk") ? "zsk" :
	          !strcmp(sval(r, "kind"), "ksk") ? "ksk" : "csk";
	p->old_tag = (unsigned)ival(r, "old");
	p->new_tag = (unsigned)ival(r, "new");
	if (!strcmp(phase, "publish")) {
		/* The new DNSKEY in every cache before anything it signs. */
		p->step = ROLL_SWITCH;
		p->at = since + c->dnskey_ttl + c->publish_safety;
	} else if (!strcmp(phase, "retire")) {
		/* Answers signed by the old ZSK out of every cache. */
		p->step = ROLL_WITHDRAW;
		p->at = since + c->max_zone_ttl + c->retire_safety;
	} else if (!strcmp(phase, "propagate")) {
		/* The DNSKEY RRset with the new key in every cache, and for a
		 * CSK every answer with its signature too, before the parent
		 * is asked to point at it alone. */
		unsigned wait = c->dnskey_ttl;
		if (!strcmp(p->kind, "csk") && c->max_zone_ttl > wait)
			wait = c->max_zone_ttl;
		p->step = ROLL_CDS;
		p->at = since + wait + c->publish_safety;
	} else if (!strcmp(phase, "ds")) {
		p->step = ROLL_DS_CHECK;
		p->at = ds_checked ? ds_checked + c->ds_check_interval : since;
	} else if (!strcmp(phase, "ds-ttl")) {
		/* The old DS out of every cache. */
		p->step = ROLL_WITHDRAW;
		p->at = since + (int64_t)ival(r, "ds_ttl") + c->retire_safety;
	} else {
		return;          /* a phase of a later gslbd: left alone */
	}
	if (now >= p->at)
		p->action = p->step;
}

/* Sets the zone record's "roll" (NULL: deletes it) and stores it. */
static int set_roll(wdb_txn_t *t, const char *zone, json_t *roll)
{
	json_t *z = keydb_zone(t, zone);
	if (!z)
		return -1;
	if (roll)
		json_object_set(z, "roll", roll);
	else
		json_object_del(z, "roll");
	int rc = wdb_set(t, WDB_DNSSEC, zone, z);
	json_decref(z);
	return rc;
}

/* Sets the state of key @tag of @zone (and its "cds": @cds 1 set, 0
 * clear, -1 kept). */
static int key_state(wdb_txn_t *t, const char *zone, unsigned tag,
                     const char *state, int cds, int64_t now, char *err,
                     size_t errlen)
{
	json_t *k = keydb_key(t, zone, tag);
	if (!k) {
		snprintf(err, errlen, "zone %s: key %u of the rollover is gone",
		         zone, tag);
		return -1;
	}
	if (cds == 1)
		json_object_set_new(k, "cds", json_true());
	else if (cds == 0)
		json_object_del(k, "cds");
	int rc = state ? keydb_set_state(t, k, state, now) : keydb_put(t, k);
	json_decref(k);
	if (rc)
		snprintf(err, errlen, "zone %s: cannot store key %u", zone, tag);
	return rc;
}

/* ROLL_START: the successor of the old key, of its role and algorithm;
 * a ZSK published, a KSK or CSK signing beside the old one. */
static int start(wdb_txn_t *t, const char *ks, const char *zone,
                 const roll_plan_t *p, int64_t now, char *what, size_t wsize,
                 char *made, size_t msize, char *err, size_t errlen)
{
	json_t *old = keydb_key(t, zone, p->old_tag);
	if (!old) {
		snprintf(err, errlen, "zone %s: key %u is gone", zone, p->old_tag);
		return -1;
	}
	int zsk = !strcmp(p->kind, "zsk");
	json_t *nk = keydb_keygen(t, ks, zone, (int)ival(old, "algorithm"),
	                          sval(old, "role"), zsk ? "published" : "active",
	                          now, err, errlen);
	json_decref(old);
	if (!nk)
		return -1;
	unsigned tag = (unsigned)ival(nk, "tag");
	char *path = keydb_path(ks, sval(nk, "file"));
	snprintf(made, msize, "%s", path);
	free(path);
	json_decref(nk);
	json_t *roll = json_pack("{s:s, s:s, s:i, s:i, s:I}", "kind", p->kind,
	                         "phase", zsk ? "publish" : "propagate",
	                         "old", (int)p->old_tag, "new", (int)tag,
	                         "since", (json_int_t)now);
	int rc = set_roll(t, zone, roll);
	json_decref(roll);
	if (rc) {
		snprintf(err, errlen, "zone %s: cannot store the rollover", zone);
		unlink(made);
		made[0] = 0;
		return -1;
	}
	snprintf(what, wsize, "dnssec rollover %s %s: key %u %s (succeeds %u)",
	         p->kind, zone, tag, zsk ? "published" : "signs beside the old key",
	         p->old_tag);
	return 0;
}

/* Moves the rollover of @zone to @phase from @now. */
static int phase(wdb_txn_t *t, const char *zone, const char *ph, int64_t now)
{
	json_t *z = keydb_zone(t, zone);
	json_t *r = json_object_get(z, "roll");
	int rc = -1;
	if (json_is_object(r)) {
		json_object_set_new(r, "phase", json_string(ph));
		json_object_set_new(r, "since", json_integer(now));
		rc = wdb_set(t, WDB_DNSSEC, zone, z);
	}
	json_decref(z);
	return rc;
}

int roll_apply(wdb_txn_t *t, const char *keystore, const char *zone,
               const roll_plan_t *p, int64_t now, char *what, size_t wsize,
               char *made, size_t msize, char *err, size_t errlen)
{
	int rc = 0;
	if (msize)
		made[0] = 0;
	err[0] = 0;
	switch (p->action) {
	case ROLL_START:
		return start(t, keystore, zone, p, now, what, wsize, made, msize, err,
		             errlen);
	case ROLL_SWITCH:
		rc = key_state(t, zone, p->new_tag, "active", -1, now, err, errlen) ||
		     key_state(t, zone, p->old_tag, "published", -1, now, err, errlen) ||
		     phase(t, zone, "retire", now);
		snprintf(what, wsize, "dnssec rollover zsk %s: key %u signs, key %u "
		         "stays published", zone, p->new_tag, p->old_tag);
		break;
	case ROLL_CDS:
		rc = key_state(t, zone, p->new_tag, NULL, 1, now, err, errlen) ||
		     phase(t, zone, "ds", now);
		snprintf(what, wsize, "dnssec rollover %s %s: CDS and CDNSKEY of key "
		         "%u published", p->kind, zone, p->new_tag);
		break;
	case ROLL_WITHDRAW:
		rc = key_state(t, zone, p->old_tag, "retired", 0, now, err, errlen) ||
		     (strcmp(p->kind, "zsk") &&
		      key_state(t, zone, p->new_tag, NULL, 0, now, err, errlen)) ||
		     set_roll(t, zone, NULL);
		snprintf(what, wsize, "dnssec rollover %s %s: key %u withdrawn, key "
		         "%u alone", p->kind, zone, p->old_tag, p->new_tag);
		break;
	default:
		snprintf(err, errlen, "zone %s: no step to apply", zone);
		return -1;
	}
	if (rc && !err[0])
		snprintf(err, errlen, "zone %s: cannot store the rollover", zone);
	return rc ? -1 : 0;
}

int roll_ds_seen(wdb_txn_t *t, const char *zone, uint32_t ttl, int64_t now,
                 char *what, size_t wsize)
{
	json_t *z = keydb_zone(t, zone);
	json_t *r = json_object_get(z, "roll");
	int rc = -1;
	/* Only while the DS is waited for (another process may have seen
	 * it first). */
	if (json_is_object(r) && !strcmp(sval(r, "phase"), "ds")) {
		json_object_set_new(r, "phase", json_string("ds-ttl"));
		json_object_set_new(r, "since", json_integer(now));
		json_object_set_new(r, "ds_ttl", json_integer(ttl));
		rc = wdb_set(t, WDB_DNSSEC, zone, z);
		snprintf(what, wsize, "dnssec rollover %s %s: the parent serves the "
		         "DS of key %lld (TTL %u)", sval(r, "kind"), zone,
		         (long long)ival(r, "new"), ttl);
	}
	json_decref(z);
	return rc;
}
