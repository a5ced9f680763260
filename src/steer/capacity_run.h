/* SPDX-License-Identifier: MIT */
/* The measured demand of static weight rows, which holds their nodes
 * within their capacities (S1-6, S4-3), run by steer_run() on the
 * health thread every steer.interval.
 *
 * A static row's answers follow the operator's weights; when a node
 * leaves the row its share goes to the others.  The plan of a row
 * holds each usable node at capacity x (100 - headroom) % of the row's
 * demand, gives the excess to the nodes below their ceiling and spills
 * what none can take to the next level of the row chain
 * (plan_capacity()).  It does so at once, in the transaction that takes
 * the node out, from the demand this run measured before.
 *
 * The record, in the weight row:
 *   "capacity": {"demand": D, "headroom": H, "measured": T, "at": T,
 *                "shares": {id: bp}}
 * D is what the whole row carries, in the unit of its nodes'
 * capacities: the pushed load (bandwidth, percent of capacity) of its
 * nodes with a capacity over the share of the row they carry
 * (steer_demand()), "measured" when; "shares" are the shares in force
 * (the plan's) since "at": a load pushed before "at" is the load of
 * other shares and is not read.  A row none of whose nodes has a
 * capacity has no record; one whose loads went stale longer than
 * steer.stale ago loses its demand (no ceiling). */
#ifndef GSLB_CAPACITY_RUN_H
#define GSLB_CAPACITY_RUN_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "steer/steer.h"
#include "store/weightdb.h"

/** Evaluates static weight row @key (@row) of service @svc in @t at
 * @now under @c (steer.headroom, or the service's "headroom").
 * Returns the row to write (a new reference) when its capacity record
 * changes, with what changed noted into @what (@size bytes, *@wl used),
 * or NULL when nothing does. */
json_t *capacity_run_row(wdb_txn_t *t, const steer_conf_t *c, uint32_t now,
                         const char *key, json_t *row, json_t *svc,
                         char *what, size_t size, size_t *wl);

#endif
