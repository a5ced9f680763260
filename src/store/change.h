/* SPDX-License-Identifier: MIT */
/* The operator's table as one document, and the audit log read as a
 * history of changes: pure functions on JSON, with no store access, so
 * that gslbctl's export/apply, log and rollback decide by rules that are
 * unit-tested on their own.
 *
 * A table is an object {"services": {KEY: OBJ}, "nodes": {...},
 * "weights": {...}} keyed by store key (weightdb.h).  An audit record is
 * what wdb_audit_each() gives: id, time, actor, what, changes, and, in
 * records written since they were kept, user, host and undoes. */
#ifndef GSLB_STORE_CHANGE_H
#define GSLB_STORE_CHANGE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* The "version" of the document export writes and apply reads.  A
 * change of the meaning of a key, or a key that an older gslbctl must
 * not drop silently, raises it. */
#define WDB_FORMAT_VERSION 1

/* An apply or rollback that would delete more than this share of the
 * weight rows (in percent), or any service, needs --force: a truncated
 * or wrong file must not empty the table by accident. */
#define WDB_DELETE_SHARE_PCT 10

/** The three lists of a table document and of a table, in the order
 * services, nodes, weights (the order of wdb_kind_t). */
extern const char *const wdb_doc_lists[3];

/** Checks the shape of document @doc (an apply file): an object whose
 * "version" is WDB_FORMAT_VERSION, with no key but version, services,
 * nodes and weights; each of those a list of objects holding only the
 * keys of their kind.  Values are not checked here.  Returns 0, or -1
 * with "PATH: reason" in @err (e.g. "nodes[2].adress: unknown key").
 * A missing list is an empty one: {"version": 1} alone passes, and the
 * delete guard (wdb_diff_needs_force()) is what keeps it from emptying
 * the table. */
int wdb_doc_check(json_t *doc, char *err, size_t errlen);

/** The operator's part of stored object @o of list @kind (0 services,
 * 1 nodes, 2 weights): a new object holding only the keys a document may
 * hold (wdb_doc_check()).  What the daemon keeps in the same record, the
 * steering engine's shares and a pin of them in a weight row, is left
 * out: export writes this, and apply compares it, so an export applied
 * again finds nothing to change (S3-8). */
json_t *wdb_doc_object(int kind, json_t *o);

/** The difference that makes table @have equal to table @want: a new
 * object {"added": L, "changed": L, "deleted": L}, each L an object
 * {"services": [KEY...], "nodes": [...], "weights": [...]} with the
 * keys in key order.  The caller owns it. */
json_t *wdb_table_diff(json_t *have, json_t *want);

/** The number of keys that @diff lists under @what ("added", "changed"
 * or "deleted"), all kinds together. */
size_t wdb_diff_count(json_t *diff, const char *what);

/** Whether @diff deletes so much that it needs --force: any service, or
 * more than WDB_DELETE_SHARE_PCT % of the @rows weight rows there are.
 * When it does, writes what it deletes to @why ("services a.example,
 * b.example and 3 of 10 weight rows", "3 of 10 weight rows"). */
int wdb_diff_needs_force(json_t *diff, size_t rows, char *why, size_t whylen);

/** Whether audit record @rec was written by gslbctl as @user (the
 * record's "user", or for older records the actor "gslbctl:USER"); a
 * @user "api:NAME" names the changes made through the HTTP API with
 * token NAME (their actor), gslbctl --server's included. */
int wdb_audit_by_user(json_t *rec, const char *user);

/** Whether audit record @rec is an automatic change: written by the
 * daemon itself (the health thread's decisions and cutover phases, actor
 * "health"; the steering engine's shares, "gslbd:steer"; any other
 * "gslbd:" actor), not by an operator through gslbctl. */
int wdb_audit_automatic(json_t *rec);

/** The change a rollback record @rec undoes (its "undoes", or for older
 * records "rollback ID" in its what), or 0 when it is no rollback. */
int64_t wdb_audit_undoes(json_t *rec);

/** The change a bare rollback of @user undoes, from the audit records
 * @recs (a list, oldest first): the newest record written by gslbctl as
 * @user that changed the operator's table, is not itself a rollback, and
 * is not undone -- a record is undone when a rollback of it exists that
 * is not undone in turn.  Health decisions are never chosen.  Returns
 * its id, or 0 when there is none. */
int64_t wdb_rollback_pick(json_t *recs, const char *user);

/** Writes one line that says what audit record @rec changed into @out
 * (@size bytes, cut with "..." when longer): for each object written,
 * "node set he-cu-2 admin=down", "weight set www.example.test cn-bj/ANY
 * a=10 b=5" (ANY being the wildcard), "service del x.example.test"..., joined with "; ", the
 * record's own words first for an apply or a rollback, and "(N more)"
 * after the first few.  A health decision worded by the health thread
 * ("health: b demoted ...") is given as worded. */
void wdb_change_summary(json_t *rec, char *out, size_t size);

#endif
