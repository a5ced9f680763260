/* SPDX-License-Identifier: MIT */
/* gslbctl's steering commands and the hooks through which the metrics,
 * node, service and explain commands reach them (ctl_steer.c). */
#ifndef GSLB_CTL_STEER_H
#define GSLB_CTL_STEER_H

#include "ctl/ctl.h"

/** Applies node option @o (value @v) to node @n if it is a steering
 * option (--provider, --cost-per-gb).  Returns 1 if it was, 0 if not;
 * dies on a bad value. */
int ctl_steer_node_opt(json_t *n, const char *id, const char *o, const char *v);

/** Applies service option @o (value @v) to service @s if it is a
 * steering option (--steering, --policy, --weights, --sla).  Returns 1
 * if it was, 0 if not; dies on a bad value. */
int ctl_steer_service_opt(json_t *s, const char *sub, const char *o, const char *v);

/** The rollback of change @id, audit record @rec, written by the
 * steering engine (S3-8): each row it moved gets back the shares it had
 * before (the engine's, or the operator's weights) and a pin that keeps
 * the engine away until `steer unpin`, in one audited change that undoes
 * @id.  With @dry, prints what it would write and writes nothing.  Dies
 * when a row's operator weights changed since (nothing is written).
 * Returns the exit status. */
int ctl_steer_rollback(json_t *rec, int64_t id, int dry);

/** budget set|del|list. */
int ctl_cmd_budget(int argc, char **argv);

/** steer show SERVICE | steer replay SERVICE [--from T] [--to T] |
 * steer unpin SERVICE [--region R] [--isp I]. */
int ctl_cmd_steer(int argc, char **argv);

/** `steer replay SERVICE [--from TIME] [--to TIME]`: replays the
 * recorded decisions of SERVICE's rows; returns 1 if one differs
 * (ctl_replay.c). */
int ctl_steer_replay(int argc, char **argv);

/** The steering view of weight row @key in @t (the engine's last
 * evaluation, the shares in force, budgets): a new object, or NULL when
 * the row's service does not steer. */
json_t *ctl_steer_row(wdb_txn_t *t, const char *key);

/** Prints a view of ctl_steer_row() as text. */
void ctl_steer_print(json_t *st);

/** Applies service option @o (value @v) to service @s if it is a
 * nearest option (--switch-margin, --headroom).  Returns 1 if it was, 0
 * if not; dies on a bad value (ctl_nearest.c). */
int ctl_nearest_service_opt(json_t *s, const char *sub, const char *o, const char *v);

/** Dies, naming command @what, when service @s has nearest settings but
 * does not steer to the nearest node. */
void ctl_nearest_check(json_t *s, const char *what);


/** The nearest view of weight row @key of nearest service @svc in @t:
 * the last evaluation's choice, reason and per-node figures, and the
 * shares in force.  A new object. */
json_t *ctl_nearest_row(wdb_txn_t *t, const char *key, json_t *svc);

/** Prints a view of ctl_nearest_row() as text. */
void ctl_nearest_print(json_t *st);

#endif
