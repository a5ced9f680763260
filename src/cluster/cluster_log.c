/* SPDX-License-Identifier: MIT */
/* The daemon's reads of the cluster's change log (cluster_log_get() of
 * cluster.h), for the HTTP API: on the main thread, through the client
 * of its writes, with their bounded wait. */
#include "cluster/cluster.h"
#include "cluster/clog.h"
#include "common/util.h"

#include <stdio.h>

#include "cluster/cluster_int.h"

int cluster_log_get(cluster_t *c, int64_t rev, long newest, json_t **recs,
                    char *err, size_t errlen)
{
	char why[sizeof(c->etcd_why)], msg[1024];
	*recs = NULL;
	/* While the cluster threads know etcd fails: at once, as a write
	 * is refused, rather than after every member's timeout. */
	cluster__known_failure(c, why, sizeof(why));
	if (*why) {
		snprintf(err, errlen, "%s", why);
		return GSLB_EIO;
	}
	etcd_t *e = cluster__writer(c);
	int rc = cluster_log_read_part(e, c->cc.prefix, rev, newest, recs, msg,
	                               sizeof(msg));
	if (rc)
		cluster_etcd_why(e, rc, msg, "etcd refused the read: ", err, errlen);
	return rc;
}
