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

/** A node's admin states, NULL-terminated: auto, up, down, drain. */
extern const char *const wdb_admin_set[];

/** Sets node object @n's admin state to @admin at time @now: when the
 * state changes, the node's rows carry the short TTL for @settle
 * seconds ("short_until").  @opt names the input in the error ("--admin"
 * on gslbctl's command line, "admin" in a document).  Returns 0, or -1
 * with "OPT VALUE: not a valid choice" in @err and @n unchanged. */
int wdb_node_admin(json_t *n, const char *opt, const char *admin, int64_t now,
                   double settle, char *err, size_t errlen);

#endif
