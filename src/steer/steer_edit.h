/* SPDX-License-Identifier: MIT */
/* The operator's release of pinned steering shares (S3-8): what gslbctl
 * steer unpin and the HTTP API both do, with one set of checks and
 * texts.  The results are store/edit.h's classes. */
#ifndef GSLB_STEER_EDIT_H
#define GSLB_STEER_EDIT_H

#include <jansson.h>
#include <stddef.h>

#include "store/edit.h"
#include "store/weightdb.h"

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
