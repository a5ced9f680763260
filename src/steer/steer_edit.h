/* SPDX-License-Identifier: MIT */
/* The operator's release of pinned steering shares (S3-8): what gslbctl
 * steer unpin and the HTTP API both do, with one set of checks and
 * texts.  The results are store/edit.h's classes. */
#ifndef GSLB_STEER_EDIT_H
#define GSLB_STEER_EDIT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "steer/steer.h"
#include "store/edit.h"
#include "store/weightdb.h"

/** Weight row @key as `gslbctl --json steer show` shows it: for a
 * service that steers dynamically (or in shadow), the engine's last
 * evaluation, each node's inputs, target and share in force, limits and
 * budget as of @now, and the pin; for one that steers to the nearest
 * node, nearest_row_view().  NULL when the row's service does not
 * steer.  @sc is the steer section.  A new reference. */
json_t *steer_row_view(wdb_txn_t *t, const steer_conf_t *sc, const char *key,
                       uint32_t now);

/** Weight row @key of service @svc (a nearest-steered one) as `gslbctl
 * --json steer show` shows it: the nearest engine's verdict and each
 * node's rank, latency, load and share.  A new reference. */
json_t *nearest_row_view(wdb_txn_t *t, const steer_conf_t *sc, const char *key,
                         json_t *svc);

/** Every weight row of service @svc as steer_row_view() shows it, in
 * the new array *@rows.  Returns WDB_EDIT_OK, WDB_EDIT_ABSENT ("service
 * SVC does not exist") or WDB_EDIT_REFUSED ("service SVC does not steer
 * (service set SVC --steering dynamic|shadow|nearest)") with the reason
 * in @err (without the "steer show: " gslbctl puts before it). */
int steer_service_view(wdb_txn_t *t, const steer_conf_t *sc, const char *svc,
                       uint32_t now, json_t **rows, char *err, size_t errlen);

/** Takes the pin off the weight rows of service @svc in @t: row
 * (@region, @isp) when either is given (NULL: "*"), else every row of
 * the service that has one, so that the engine steers them again.
 * Returns WDB_EDIT_OK with the keys unpinned in the new array *@keys and
 * "steer unpin KEY, KEY" in @what; WDB_EDIT_ABSENT ("service SVC does
 * not exist"), WDB_EDIT_REFUSED ("row SVC --region R --isp I is not
 * pinned", "service SVC has no pinned row") or WDB_EDIT_STORE, with the
 * reason in @err (without the "steer unpin: " gslbctl puts before it)
 * and *@keys NULL. */
int steer_unpin_rows(wdb_txn_t *t, const char *svc, const char *region,
                     const char *isp, json_t **keys, char *what, size_t wlen,
                     char *err, size_t errlen);

#endif
