/* SPDX-License-Identifier: MIT */
/* The store's upkeep on the main loop: retention, room for health
 * decisions, and the flush to disk, once a second. */
#include "daemon/daemon_int.h"
#include "common/log.h"
#include "common/util.h"
#include "dns/cookie.h"
#include "dnssec/dnssec.h"
#include "dnssec/roll.h"

#include <time.h>

static uint32_t g_history_keep;   /* health.history-keep, seconds */
static uint32_t g_input_keep;     /* steer.input-keep, seconds (0: all) */
static uint32_t g_spend_keep;     /* steer.spend-keep, seconds (0: all) */
int g_trim_due = 1;               /* trim at the next second (main loop) */
/* The retention settings of the health and steer sections (trim_store()). */
void daemon__keep_set(const health_conf_t *hc)
{
	g_history_keep = (uint32_t)hc->history_keep;
	g_input_keep = (uint32_t)hc->steer.input_keep;
	g_spend_keep = (uint32_t)hc->steer.spend_keep;
}

/* Retention: audit records older than database.audit-keep (S3-7),
 * score history older than health.history-keep (S2-10), pushed steering
 * inputs not pushed again for steer.input-keep and spend records of
 * budget periods that ended steer.spend-keep ago (S3-6) leave the store
 * every TRIM_EVERY seconds and right after a reload, in a write
 * transaction of their own (so that a full store, whose other writes
 * fail, can still make room), at most TRIM_BATCH records at a time: a
 * backlog (after lowering a keep setting) goes a batch a second, never
 * in one long transaction that would hold back the health thread's
 * writes.  With nothing to delete nothing is committed. */
#define TRIM_EVERY 10
#define TRIM_BATCH 20000
static void trim_store(void)
{
	static uint32_t last;
	uint32_t now = (uint32_t)time(NULL);
	if (!g_trim_due && now - last < TRIM_EVERY)
		return;
	last = now;
	uint32_t keep = g_conf->db_audit_keep;
	wdb_trim_t w = {
		.audit_before = keep && keep < now ? now - keep : 0,
		.history_before = g_history_keep < now ? now - g_history_keep : 0,
		.inputs_before = g_input_keep && g_input_keep < now ? now - g_input_keep : 0,
		.spend_before = g_spend_keep && g_spend_keep < now ? now - g_spend_keep : 0,
		.now = now,
	};
	int n = weightdb_trim(g_db, &w, TRIM_BATCH);
	g_trim_due = n == TRIM_BATCH;
	if (n < 0 && n != GSLB_ENOSPC)
		log_warning("database: cannot trim: %s", wdb_strerror(n));
}

/* Room for health decisions (S0-8, S4-4: a demotion must reach the
 * answers in its normal time whatever the audit log holds): checked
 * every second, the trim past the high-water mark goes oldest first
 * (weightdb_make_room()), a batch a second like the retention. */
static void make_room(void)
{
	wdb_room_t r;
	int n = weightdb_make_room(g_db, TRIM_BATCH, 0, &r);
	char msg[512];
	if (n > 0)
		log_warning("database %s: %s", g_conf->db_path,
		            wdb_room_msg(&r, msg, sizeof(msg)));
	else if (n < 0 && n != GSLB_ENOSPC)
		log_warning("database: cannot make room: %s", wdb_strerror(n));
}

/* The health thread commits without fsync; the disk catches up here,
 * off its loop, once a second. */
void daemon__on_sync(uv_timer_t *t)
{
	trim_store();
	make_room();
	/* Key rollovers: a step committed here is loaded just below.  In a
	 * cluster only the elected instance rolls, and its steps go to etcd
	 * (cluster/keyroll.c), reaching this store through the watch; a
	 * process handing over leaves them to its successor. */
	if (!g_draining && (!g_cluster || cluster_elected(g_cluster)))
		roll_tick(g_db, g_conf, (int64_t)time(NULL));
	if (dnssec_store_changed()) {
		log_info("dnssec: signing keys changed in the store");
		daemon__reload();
	}
	cookie_tick((uint32_t)time(NULL));
	if (weightdb_sync(g_db))
		log_warning("database: cannot flush to disk");
}
