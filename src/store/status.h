/* SPDX-License-Identifier: MIT */
/* The health view of the table: what gslbctl status and the HTTP API's
 * GET /v1/health show of each node and each weight row. */
#ifndef GSLB_STORE_STATUS_H
#define GSLB_STORE_STATUS_H

#include <jansson.h>

#include "store/weightdb.h"

/** {"nodes": [...], "rows": [...]} of store @db as @t reads it: each
 * node (with @service not "", only those its rows name) with its admin
 * state, pool, health decision and live status records and their
 * summary (state, score, reason, state_since); each weight row of
 * @service (every row with "") with its nodes' configured and effective
 * weights from the plans the server reads, and a nearest row's choice. */
json_t *wdb_status_view(weightdb_t *db, wdb_txn_t *t, const char *service);

#endif
