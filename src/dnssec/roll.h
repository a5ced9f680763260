/* SPDX-License-Identifier: MIT */
/* Automatic key rollovers: the state machine (pure: records and a time
 * in, the step due and the time of the next one out), its steps as
 * store writes, and the daemon's driver, which runs them from the main
 * thread's once-a-second timer and asks the parent zone for the DS.
 *
 * A ZSK rolls by pre-publication (RFC 6781 §4.1.1.1): the new key is
 * published, after the DNSKEY TTL and publish-safety it signs instead of
 * the old one, which stays in the DNSKEY RRset for max-zone-ttl and
 * retire-safety (signatures by it still in caches), then is withdrawn.
 * A KSK or a CSK rolls by double signature (RFC 6781 §4.1.2): the new
 * key signs beside the old one; once the DNSKEY RRset (and, for a CSK,
 * the zone's data with both signatures) can be in every cache, its CDS
 * and CDNSKEY are published (RFC 7344, RFC 8078); once the parent
 * serves its DS and that DS's TTL and retire-safety have passed, the
 * old key is withdrawn and the CDS and CDNSKEY with it.
 *
 * The zone record's "roll" holds the rollover in progress:
 *   {"kind": "zsk"|"ksk"|"csk", "phase": PHASE, "old": TAG, "new": TAG,
 *    "since": TIME, "ds_ttl": SECONDS}
 * PHASE is "publish", then "retire" (ZSK); "propagate", "ds", "ds-ttl"
 * (KSK, CSK).  The times of the steps are computed from "since" and the
 * dnssec section, so a changed setting applies to a rollover under
 * way. */
#ifndef GSLB_DNSSEC_ROLL_H
#define GSLB_DNSSEC_ROLL_H

#include <jansson.h>
#include <stdint.h>

#include "dnssec/dnssec.h"
#include "store/weightdb.h"

typedef enum {
	ROLL_NONE = 0,     /* nothing due now */
	ROLL_START,        /* a key is due: make its successor */
	ROLL_SWITCH,       /* ZSK: the new key signs, the old one only stays */
	ROLL_CDS,          /* KSK, CSK: publish the new key's CDS, CDNSKEY */
	ROLL_DS_CHECK,     /* KSK, CSK: ask the parent for the new DS */
	ROLL_WITHDRAW,     /* the old key leaves the DNSKEY RRset */
} roll_action_t;

typedef struct roll_plan {
	roll_action_t action;      /* the step due at the time given */
	roll_action_t step;        /* the next step (due or not); ROLL_NONE:
	                              no rollover planned */
	const char *kind;          /* "zsk", "ksk", "csk" */
	unsigned old_tag, new_tag; /* new_tag: 0 before the start */
	int64_t at;                /* when the next step is due (for DS
	                              checks: the earliest one) */
} roll_plan_t;

/** The step of zone record @zone (with key records @keys) due at @now
 * under @c, and the next one.  A rollover starts for the oldest active
 * key of a role whose lifetime (zsk-, ksk-, csk-lifetime; 0: never) has
 * passed since it became active.  @ds_checked is when the parent was
 * last asked for the DS (0: never).  Pure. */
void roll_plan(const dnssec_conf_t *c, json_t *zone, json_t *keys,
               int64_t now, int64_t ds_checked, roll_plan_t *p);

/** The name of step @a, as status shows it ("switch signing"). */
const char *roll_step_name(roll_action_t a);

/** Applies step @p->action (not ROLL_DS_CHECK; ROLL_START makes the
 * key, into @keystore) to @zone's records in @t at @now; for the DS
 * seen, call roll_ds_seen().  Writes a line for the audit into @what,
 * and the path of a key file it wrote into @made (@msize bytes; "" for
 * none), which the caller removes when @t is not committed.  Returns
 * 0, or -1 with the reason in @err (and no file left). */
int roll_apply(wdb_txn_t *t, const char *keystore, const char *zone,
               const roll_plan_t *p, int64_t now, char *what, size_t wsize,
               char *made, size_t msize, char *err, size_t errlen);

/** The parent serves the new key's DS with TTL @ttl: the rollover of
 * @zone waits that TTL and retire-safety before the withdrawal.
 * Returns 0, or -1 when @zone's rollover is not waiting for its DS. */
int roll_ds_seen(wdb_txn_t *t, const char *zone, uint32_t ttl, int64_t now,
                 char *what, size_t wsize);

/** The daemon's driver, once a second on the main thread: for every
 * signed zone of @c in @db, runs the step due (each in an audited
 * transaction of actor "dnssec"; its commit makes the daemon reload
 * the keys) and asks the parent for the DS when it is waited for, at
 * most every ds-check-interval.  Logs what it did and why it could
 * not. */
void roll_tick(weightdb_t *db, const conf_t *c, int64_t now);

/** Where a step's transaction goes instead of the local commit (cluster
 * mode: @fn takes @t, validated and not committed, writes its changes
 * to etcd and aborts it, returning 0 when written, 1 when @t does not
 * hold the last step written yet (planned on a store the watch has not
 * brought up to date: nothing written, the next tick plans again), -1
 * with @err when refused; the local store gets them through the
 * watch).  NULL: committed locally.  Main thread, set before the first
 * roll_tick(). */
typedef int (*roll_commit_fn)(void *arg, wdb_txn_t *t, const char *what,
                              char *err, size_t errlen);
void roll_set_commit(roll_commit_fn fn, void *arg);

/** Asks the parent of @zone (dnssec.parent-servers, else the resolvers
 * of resolv.conf, with a 1 s timeout) whether it serves the DS (digest
 * type 2) of key record @key.  Returns 1 with the DS RRset's TTL in
 * *@ttl, 0 when it does not, -1 with the reason in @err when no server
 * answered. */
int roll_ds_lookup(const dnssec_conf_t *c, const char *zone, json_t *key,
                   uint32_t *ttl, char *err, size_t errlen);

#endif
