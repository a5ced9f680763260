/* SPDX-License-Identifier: MIT */
/* Providers' spending budgets (S3-6) as gslbctl budget and the HTTP
 * API list, set and delete them: one code path, so the checks and texts
 * are the same both ways.  The numbers are read by push_parse_real()
 * (health/push.h), as gslbctl's other steering options are, which is
 * why this lives here rather than in steer/.  The results are
 * store/edit.h's classes. */
#ifndef GSLB_BUDGET_EDIT_H
#define GSLB_BUDGET_EDIT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "store/edit.h"
#include "store/weightdb.h"

/** The inputs of budget set as given (text, NULL: not given). */
typedef struct budget_in {
	const char *limit, *alert, *period;
	int doc;                  /* named by document key ("limit"), else by
	                             gslbctl's option ("--limit") */
} budget_in_t;

/** Every budget, as `gslbctl --json budget list` prints it: provider ->
 * {limit, alert, period, spent, state}, spent and state as of @now.  A
 * new reference. */
json_t *budget_list_view(wdb_txn_t *t, uint32_t now);

/** Sets the budget of provider @name in @t from @in, over what it has
 * (a new one starts at period month, alert 80 %).  Returns WDB_EDIT_OK
 * with "budget set NAME" in @what, else WDB_EDIT_BAD or WDB_EDIT_STORE
 * with the reason in @err, whole ("budget set: --limit x: give a number
 * from 0 to 1e+15"), and the input it is about in *@field (a document
 * key, or NULL). */
int budget_set(wdb_txn_t *t, const char *name, const budget_in_t *in,
               char *what, size_t wlen, char *err, size_t errlen,
               const char **field);

/** Deletes the budget of provider @name in @t.  WDB_EDIT_OK with
 * "budget del NAME" in @what, WDB_EDIT_BAD (not a provider name),
 * WDB_EDIT_ABSENT ("budget del: provider NAME has no budget") or
 * WDB_EDIT_STORE, the reason whole in @err. */
int budget_delete(wdb_txn_t *t, const char *name, char *what, size_t wlen,
                  char *err, size_t errlen);

#endif
