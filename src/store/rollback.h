/* SPDX-License-Identifier: MIT */
/* The undo of one audited change as a new change (S3-7, S3-8): what
 * gslbctl rollback and the HTTP API's rollback both write, decided by
 * the same checks with the same texts.  The caller writes the result
 * in its own transaction (wdb_set()), notes "undoes" and commits. */
#ifndef GSLB_STORE_ROLLBACK_H
#define GSLB_STORE_ROLLBACK_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "store/edit.h"
#include "store/weightdb.h"

/** The kind of an undo entry or audit change @c ("service", "node",
 * "weight", "cutover"), or -1 for another (a health record). */
int wdb_rollback_kind(json_t *c);

/** The undo of audit record @rec (change @id, called @noun: "change" or
 * "cluster revision" in the texts): a new list in *@undo of changes
 * {kind, key, before: as @t reads it now, after: restored}, newest
 * first.  Returns WDB_EDIT_OK, or WDB_EDIT_REFUSED with the reason in
 * @err ("change 7 changed nothing", "node a changed again after change
 * 7; roll back the later change first"...; without the "rollback: "
 * gslbctl puts before it) and *@undo NULL. */
int wdb_rollback_undo(wdb_txn_t *t, json_t *rec, int64_t id, const char *noun,
                      json_t **undo, char *err, size_t errlen);

/** Whether audit record @rec is a change of shares by the steering
 * engine, which is undone by pinning (wdb_rollback_pins()). */
int wdb_rollback_is_steer(json_t *rec);

/** The undo of the steering engine's change @rec (change @id): each
 * weight row it moved, as @t reads it, with the shares it had before
 * and a pin {"by": @user, "at": @now, "change": @id} that keeps the
 * engine from moving them again (S3-8), in the new object *@rows (row
 * key -> row).  Returns WDB_EDIT_OK, or WDB_EDIT_REFUSED with the
 * reason in @err and *@rows NULL. */
int wdb_rollback_pins(wdb_txn_t *t, json_t *rec, int64_t id, const char *user,
                      int64_t now, json_t **rows, char *err, size_t errlen);

#endif
