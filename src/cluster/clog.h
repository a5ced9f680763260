/* SPDX-License-Identifier: MIT */
/* The cluster's change log: each change's audit record travels with the
 * change, in the same etcd transaction, under PREFIX "log/" + a random
 * name; the record's create revision is the change's revision, which
 * names it on every instance (`gslbctl log`, `rollback`).  The elected
 * instance keeps the log to cluster.log-keep records, oldest out first.
 * No state: safe on any thread with its own etcd client. */
#ifndef GSLB_CLUSTER_CLOG_H
#define GSLB_CLUSTER_CLOG_H

#include <jansson.h>
#include <stdint.h>

#include "cluster/etcd.h"

/* A record larger than this keeps which objects it changed, not the
 * objects: etcd takes 1.5 MiB a request by default, and the change's
 * own objects are in the same request. */
#define CLUSTER_LOG_RECORD_MAX (256 * 1024)
/* The same for the elected instance's decisions, written often: the
 * objects are in every store's own log. */
#define CLUSTER_LOG_AUTO_MAX (16 * 1024)

/** The put of audit record @rec (taken) into the cluster's log under
 * @prefix, as an etcd transaction operation; over CLUSTER_LOG_RECORD_MAX
 * bytes (@max for cluster_log_op_max()) without the objects. */
json_t *cluster_log_op(const char *prefix, json_t *rec);
json_t *cluster_log_op_max(const char *prefix, json_t *rec, size_t max);

/** The cluster's log, oldest first, into *@recs (new array): each record
 * with "id" and "revision" set to its revision.  Returns 0 or the error
 * of the request (the reason in @err). */
int cluster_log_read(etcd_t *e, const char *prefix, json_t **recs, char *err,
                     size_t errlen);

/** Part of the cluster's log, as cluster_log_read() gives it, in one
 * request within @e's usual time limit (not a bulk one: the daemon's
 * main thread waits for it): the record of revision @rev alone when
 * @rev > 0 (an empty array when there is none), else the newest @newest
 * records (all when 0), oldest first.  Returns 0 or the request's
 * error. */
int cluster_log_read_part(etcd_t *e, const char *prefix, int64_t rev,
                          long newest, json_t **recs, char *err, size_t errlen);

/** Deletes the oldest records beyond the newest @keep, at most 1,000 a
 * call; their number in *@gone.  Returns 0 or the request's error. */
int cluster_log_trim(etcd_t *e, const char *prefix, unsigned keep, unsigned *gone,
                     char *err, size_t errlen);

#endif
