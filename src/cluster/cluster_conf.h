/* SPDX-License-Identifier: MIT */
/* The cluster section of gslbd.conf: where etcd is, under which prefix
 * this cluster keeps its data, and who this instance is.  No state: safe
 * on any thread.  See gslbd.conf(5) and docs/CLUSTER.md. */
#ifndef GSLB_CLUSTER_CONF_H
#define GSLB_CLUSTER_CONF_H

#include "common/conf.h"

#define CLUSTER_MAX_ENDPOINTS 16
#define CLUSTER_NAME_MAX 64

typedef struct cluster_conf {
	int enabled;               /* the section is present */
	char *endpoints[CLUSTER_MAX_ENDPOINTS]; /* "http://HOST:PORT", no '/' */
	size_t nendpoints;
	char prefix[256];          /* starts and ends with '/', default /gslbd/ */
	char name[CLUSTER_NAME_MAX]; /* this instance, required */
	char region[CLUSTER_NAME_MAX]; /* vantage.region, "" when not given */
	char isp[CLUSTER_NAME_MAX];    /* vantage.isp, "" when not given */
	unsigned quorum;           /* down views that take a node out; 0: a
	                              majority of the live views */
	unsigned lease_ttl;        /* seconds, default 5 */
	double timeout;            /* one request to etcd, seconds, default 2 */
	double verify_interval;    /* seconds between comparisons of the
	                              table with etcd's (cluster/verify.h),
	                              default 60; 0: never */
	unsigned log_keep;         /* records the cluster's change log keeps
	                              in etcd (cluster/clog.h), default 10000 */
	char *ca, *cert, *key;     /* tls.ca, tls.cert, tls.key (resolved) */
	char *user, *password;     /* etcd authentication, NULL: none */
} cluster_conf_t;

/** Reads the cluster section of @c into @o (zeroed, enabled 0 when the
 * section is absent).  Returns 0, or -1 with "FILE:LINE: reason" in
 * @err.  Free the strings with cluster_conf_free(). */
int cluster_conf_load(const conf_t *c, cluster_conf_t *o, char *err,
                      size_t errlen);

/** Frees the strings of @o (not @o itself). */
void cluster_conf_free(cluster_conf_t *o);

#endif
