/* SPDX-License-Identifier: MIT */
/* Gray releases as gslbctl release and the HTTP API show and change
 * them (S4-10): the view of a release, what its guards observe now, and
 * the operator's state changes (pause, resume, abort), one code path so
 * that the checks and their texts are the same both ways.  The results
 * are store/edit.h's classes. */
#ifndef GSLB_RELEASE_EDIT_H
#define GSLB_RELEASE_EDIT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "steer/steer.h"
#include "store/edit.h"
#include "store/weightdb.h"

/** The release @rel of service @svc as `gslbctl --json release list`
 * shows it.  A new reference. */
json_t *release_view(const char *svc, json_t *rel);

/** The views of the releases of service @svc ("" or NULL: every
 * service), read in @t: a new array. */
json_t *release_views(wdb_txn_t *t, const char *svc);

/** What the guards of release @rel see at @now, from the inputs the
 * controller reads (@c): a new array of {guard, value, holds} or
 * {guard, value: null, holds: null, missing: TEXT}. */
json_t *release_observed(wdb_txn_t *t, const steer_conf_t *c, json_t *rel,
                         uint32_t now);

/** The inputs of a new release, as given (text; NULL: not given). */
typedef struct release_start_in {
	const char *node, *region, *isp, *steps, *every, *weight;
	json_t *guards;               /* their texts, borrowed; NULL: none */
	int doc;                      /* named by document key ("steps"), else
	                                 by gslbctl's option ("--steps") */
} release_start_in_t;

/** Starts a release of @in->node in service @name in @t at @now (S4-10),
 * joining the rows with @in->weight when given.  Returns WDB_EDIT_OK
 * with "release start NAME node NODE at P% (...)" in @what, or
 * WDB_EDIT_BAD (an input malformed or missing), WDB_EDIT_ABSENT (no such
 * service), WDB_EDIT_REFUSED (no such node, a guard it cannot keep,
 * another release running, no row or none holding the node) or
 * WDB_EDIT_STORE, with the reason in @err (without the "release start: "
 * gslbctl puts before it) and the input in *@field. */
int release_start(wdb_txn_t *t, const char *name, const release_start_in_t *in,
                  uint32_t now, char *what, size_t wlen, char *err,
                  size_t errlen, const char **field);

/** Pauses, resumes or aborts (@sub) the release of service @name in @t
 * at @now.  Returns WDB_EDIT_OK with "release SUB NAME node NODE" in
 * @what, or WDB_EDIT_ABSENT ("service NAME does not exist", "service
 * NAME has no release"), WDB_EDIT_REFUSED (its state does not allow it:
 * "the release of NAME is done, not running") or WDB_EDIT_STORE, with
 * the reason in @err (without the "release SUB: " gslbctl puts before
 * it). */
int release_set_state(wdb_txn_t *t, const char *sub, const char *name,
                      uint32_t now, char *what, size_t wlen, char *err,
                      size_t errlen);

#endif
