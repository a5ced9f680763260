/* SPDX-License-Identifier: MIT */
/* Changes of the operator's table that gslbctl and the HTTP API both
 * make: one code path, so the checks and their error texts are the
 * same whichever way a change comes.  Pure functions on the JSON
 * objects the store keeps; the caller writes the result with wdb_set()
 * in its own transaction. */
#ifndef GSLB_STORE_EDIT_H
#define GSLB_STORE_EDIT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "store/weightdb.h"

/** A node's admin states, NULL-terminated: auto, up, down, drain. */
extern const char *const wdb_admin_set[];

/** Sets node object @n's admin state to @admin at time @now: when the
 * state changes, the node's rows carry the short TTL for @settle
 * seconds ("short_until").  @opt names the input in the error ("--admin"
 * on gslbctl's command line, "admin" in a document).  Returns 0, or -1
 * with "OPT VALUE: not a valid choice" in @err and @n unchanged. */
int wdb_node_admin(json_t *n, const char *opt, const char *admin, int64_t now,
                   double settle, char *err, size_t errlen);

/** Sets @key of @obj to the unix time @t as RFC 3339 UTC
 * ("2026-12-01T02:00:00Z") and @key_unix to @t, both null when @t is 0
 * or less (never set): how gslbctl's --json and the API show a time. */
void wdb_json_time(json_t *obj, const char *key, int64_t t);

/** What the deletes below, the checks of store/apply.h and the other
 * changes shared with the API return. */
enum {
	WDB_EDIT_OK = 0,
	WDB_EDIT_ABSENT,     /* nothing of that name */
	WDB_EDIT_REFUSED,    /* a guard: something still names it */
	WDB_EDIT_STORE,      /* the write failed */
	WDB_EDIT_BAD,        /* input wrong in itself, malformed or missing */
};

/** Deletes service @name in @t, and its weight rows with it.  Returns
 * WDB_EDIT_OK with the audit's words ("service del NAME") in @what, or
 * another WDB_EDIT_ with the reason in @err ("service NAME does not
 * exist"); the caller commits or aborts @t. */
int wdb_service_delete(wdb_txn_t *t, const char *name, char *what, size_t wlen,
                       char *err, size_t errlen);

/** Deletes node @id in @t, unless a weight row names it
 * (WDB_EDIT_REFUSED: "node ID is used by weight row(s) [...]; remove it
 * there first").  As wdb_service_delete() otherwise. */
int wdb_node_delete(wdb_txn_t *t, const char *id, char *what, size_t wlen,
                    char *err, size_t errlen);

/** Deletes weight row @key ("SERVICE|REGION|ISP") in @t.  As
 * wdb_service_delete(); absent: "weight row SERVICE --region REGION
 * --isp ISP does not exist". */
int wdb_weight_delete(wdb_txn_t *t, const char *key, char *what, size_t wlen,
                      char *err, size_t errlen);

#endif
