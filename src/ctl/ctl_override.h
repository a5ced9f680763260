/* SPDX-License-Identifier: MIT */
/* gslbctl's side of a cluster member's local store (ctl_override.c): a
 * plain local write to it refused, the break-glass --local-override,
 * `cluster overrides list|push|drop`, and the check of the table against
 * etcd's in `cluster status`. */
#ifndef GSLB_CTL_OVERRIDE_H
#define GSLB_CTL_OVERRIDE_H

#include <jansson.h>
#include <stdint.h>

#include "cluster/cluster_conf.h"
#include "cluster/etcd.h"
#include "store/weightdb.h"

/** Set by --local-override: the write goes to this instance's store
 * only, as declared overrides (cluster/override.h). */
extern int ctl_local_override;

/** The cluster client and section (ctl_cluster.c); NULL / disabled in
 * standalone mode. */
etcd_t *ctl_cluster_etcd(void);
const cluster_conf_t *ctl_cluster_conf(void);

/** A write @t without the cluster (no cluster section, or -d): dies
 * with nothing written when the store is a cluster member's copy and @t
 * changes the cluster's table (unless the test-only escape
 * GSLBCTL_TEST_LOCAL_WRITE is set). */
void ctl_override_guard(wdb_txn_t *t);

/** With --local-override: before the command reads the store, dies
 * when etcd answers (the write goes through the cluster then).  Returns
 * 1 when it handled the sync (ctl_cluster_sync() does nothing more). */
int ctl_override_sync(void);

/** With --local-override: validates @t, records its changes as
 * overrides and commits it to the local store only, printing the
 * change.  Returns 1 when it took over @t, 0 without the option. */
int ctl_override_commit(wdb_txn_t *t, const char *what, const char *actor);

/** `cluster overrides [list|push|drop]`: returns the exit status. */
int ctl_cluster_overrides(int argc, char **argv);

/** For `cluster status`: the store's overrides ("overrides") into @out
 * and, when @etcd_up, whether its table differs from etcd's at its
 * revision ("diverged").  Returns 1 when it does. */
int ctl_cluster_check(json_t *out, int etcd_up);

/** Prints what ctl_cluster_check() put in @out. */
void ctl_cluster_check_print(json_t *out);

#endif
