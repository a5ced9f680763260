/* SPDX-License-Identifier: MIT */
/* Announcing and withdrawing cutover windows (S0-2): the checks and the
 * change that gslbctl cutover and the HTTP API both make, so that their
 * error texts are the same whichever way a window comes, and the view of
 * a window that both show.  The checks need the times and levels of
 * health/cutover.h, which the store below may not include, so they live
 * here rather than in store/edit.h; the results are store/edit.h's
 * classes. */
#ifndef GSLB_CUTOVER_EDIT_H
#define GSLB_CUTOVER_EDIT_H

#include <jansson.h>
#include <stddef.h>
#include <time.h>

#include "health/cutover.h"
#include "store/edit.h"
#include "store/weightdb.h"

/** The inputs of a new window, as given: NULL for one not given.  Every
 * value is text, as on gslbctl's command line, so that a number out of
 * range is reported in the same words both ways. */
typedef struct cutover_add {
	const char *region, *isp, *start, *end, *impact, *note;
	const char *derate, *prewarm;
	json_t *nodes;            /* array of node ids, borrowed; NULL: none */
	int doc;                  /* inputs are named by document key
	                             ("derate_pct"), else by gslbctl's option
	                             ("--derate") */
} cutover_add_t;

/** Checks the region (@isp 0) or ISP (@isp 1) name @v that command
 * @cmd gives against the locations clients can be in (@arg is the
 * caller's).  Returns 0, or -1 with the reason in @err (gslbctl's
 * check ends the process instead). */
typedef int (*cutover_area_fn)(void *arg, wdb_txn_t *t, const char *cmd,
                               int isp, const char *v, char *err,
                               size_t errlen);

/** Checks new window @in against @c (the impact levels, the default
 * pre-warm share), the time @now and the store as @t reads it, and
 * writes it in @t under a fresh id (never one deleted or rolled back
 * since).  @area, when not NULL, checks the ISP name as well (called
 * with @area_arg; a refusal is WDB_EDIT_BAD with its reason).
 *
 * Returns WDB_EDIT_OK with the id in @id and the audit's words ("cutover
 * add c3 region=...") in @what; when the very same window exists, OK
 * with its id in @id, "" in @what and "the same window exists already
 * as c1; nothing to change" in @err, and nothing written.  Else
 * WDB_EDIT_BAD (an input is malformed or missing), WDB_EDIT_REFUSED (a
 * guard: no such node, no node in the region, the window is over or
 * overlaps another) or WDB_EDIT_STORE, with the reason in @err (without
 * the "cutover add: " gslbctl puts before it) and the input it is about
 * in *@field (a document key, NULL for none).  The caller commits or
 * aborts @t. */
int cutover_window_add(wdb_txn_t *t, const cutover_conf_t *c,
                       const cutover_add_t *in, time_t now, cutover_area_fn area,
                       void *area_arg, char *id, size_t idlen, char *what, size_t wlen,
                       char *err, size_t errlen, const char **field);

/** Deletes window @id in @t.  Returns WDB_EDIT_OK with "cutover del ID"
 * in @what, WDB_EDIT_ABSENT ("cutover ID does not exist") or
 * WDB_EDIT_STORE with the reason in @err. */
int cutover_window_delete(wdb_txn_t *t, const char *id, char *what,
                          size_t wlen, char *err, size_t errlen);

/** Window @w as gslbctl's read commands and the API show it (gslbctl(8),
 * JSON OUTPUT), with its phase at @now.  A new reference. */
json_t *cutover_window_view(const cutover_conf_t *c, json_t *w, time_t now);

#endif
