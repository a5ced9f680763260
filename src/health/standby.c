/* SPDX-License-Identifier: MIT */
/* Standby promotion (S0-9, S0-10, S1-6): a primary out of its rows gets
 * a healthy standby of the same rows in its place, and the standby goes
 * back to the pool when the primary serves again; what a promotion
 * changed is logged so that a failed commit undoes it whole.
 *
 * Thread safety: health thread only. */
#include "config.h"
#include "health/health_int.h"
#include "common/log.h"
#include "common/util.h"

#include <stdio.h>
#include <string.h>

typedef struct {
	health_t *h;
	hnode_t *demoted;
	hnode_t *pick;
} standby_t;

static int in_rows(json_t *rows, const char *key)
{
	size_t i;
	json_t *k;
	json_array_foreach(rows, i, k)
		if (strcmp(json_string_value(k), key) == 0)
			return 1;
	return 0;
}

/* Whether primary @n is out only because the steering engine took it
 * out for the SLA in some rows (S3-5). */
static int sla_only(const health_t *h, const hnode_t *n)
{
	return n->sla_rows && health__decided(h, n) != VERDICT_DEMOTED &&
	       strcmp(n->admin, "down") != 0 && strcmp(n->admin, "drain") != 0;
}

/* S0-9, S0-10, S1-6: a row that loses a primary gets a healthy standby of
 * the same row, with capacity for the load it takes over; a primary out
 * for the SLA only loses the rows the engine took it out of (S3-5). */
static int find_standby(const char *key, json_t *row, void *arg)
{
	standby_t *s = arg;
	json_t *w = json_object_get(row, "weights");
	if (!json_object_get(w, s->demoted->id))
		return 0;
	if (sla_only(s->h, s->demoted) && !in_rows(s->demoted->sla_rows, key))
		return 0;
	const char *id;
	json_t *v;
	json_object_foreach(w, id, v) {
		hnode_t *c = health__find_node(s->h, id, NULL);
		if (!c || c == s->demoted || strcmp(c->pool, "standby") != 0 ||
		    c->promoted || health__decided(s->h, c) == VERDICT_DEMOTED ||
		    health__decided(s->h, c) == VERDICT_UNKNOWN ||
		    strcmp(c->admin, "down") == 0 || strcmp(c->admin, "drain") == 0)
			continue;
		double usable_cap = (double)c->capacity * (100 - s->h->c.standby_headroom) / 100;
		if (s->demoted->capacity > 0 && usable_cap < (double)s->demoted->capacity) {
			log_info("standby %s cannot take over %s: capacity %ld, needs %ld + %.0f%% headroom",
			         c->id, s->demoted->id, c->capacity, s->demoted->capacity,
			         s->h->c.standby_headroom);
			continue;
		}
		s->pick = c;
		return 1;
	}
	(void)key;
	return 0;
}

/* Whether primary @n is out of the answers: demoted by health, taken
 * out by its operator (admin down or drain), or by the steering engine
 * for the SLA (S3-5).  Either way its row loses it, and a standby takes
 * its place (S0-9, S0-11). */
static int primary_out(const health_t *h, const hnode_t *n)
{
	return health__decided(h, n) == VERDICT_DEMOTED || strcmp(n->admin, "down") == 0 ||
	       strcmp(n->admin, "drain") == 0 || n->sla_rows;
}

void health__steer_sla(health_t *h, json_t *sla)
{
	for (size_t i = 0; i < h->n; i++) {
		hnode_t *n = h->node[i];
		json_t *rows = json_object_get(sla, n->id);
		if ((!rows && !n->sla_rows) || (rows && n->sla_rows && json_equal(rows, n->sla_rows)))
			continue;
		if (rows)
			log_info("node %s: out for the SLA in %zu row(s) of steered services",
			         n->id, json_array_size(rows));
		else
			log_info("node %s: back within the SLA in every steered row", n->id);
		json_decref(n->sla_rows);
		n->sla_rows = rows ? json_incref(rows) : NULL;
		n->changed = 1;
	}
}

static void undo_save(health_undo_log_t *l, hnode_t *n)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 8;
		l->u = xrealloc(l->u, l->cap * sizeof(*l->u));
	}
	health_undo_t *u = &l->u[l->n++];
	u->n = n;
	u->promoted = n->promoted;
	u->changed = n->changed;
	memcpy(u->promoted_for, n->promoted_for, sizeof(u->promoted_for));
	u->since = n->v.since;
	u->moved_at = n->v.moved_at;
}

/* Newest first, so a node saved twice ends as it was. */
void health__undo_apply(health_undo_log_t *l)
{
	for (size_t i = l->n; i-- > 0;) {
		health_undo_t *u = &l->u[i];
		u->n->promoted = u->promoted;
		u->n->changed = u->changed;
		memcpy(u->n->promoted_for, u->promoted_for, sizeof(u->promoted_for));
		u->n->v.since = u->since;
		u->n->v.moved_at = u->moved_at;
	}
}

void health__repool(health_t *h, wdb_txn_t *t, health_undo_log_t *undo)
{
	for (size_t i = 0; i < h->n; i++) {
		hnode_t *n = h->node[i];
		if (!n->changed || strcmp(n->pool, "primary") != 0)
			continue;
		int has = 0;
		for (size_t k = 0; k < h->n && !has; k++)
			has = h->node[k]->promoted && strcmp(h->node[k]->promoted_for, n->id) == 0;
		if (primary_out(h, n)) {
			if (has)
				continue; /* one standby per primary, retries included */
			standby_t s = { h, n, NULL };
			wdb_each(t, WDB_WEIGHT, NULL, find_standby, &s);
			if (s.pick) {
				undo_save(undo, s.pick);
				s.pick->promoted = 1;
				snprintf(s.pick->promoted_for, sizeof(s.pick->promoted_for), "%s", n->id);
				s.pick->v.since = s.pick->v.moved_at = health__wall();
				s.pick->changed = 1;
				h->promotions_pending++;
				log_info("node %s: standby promoted in place of %s (%s)", s.pick->id,
				         n->id, health__decided(h, n) == VERDICT_DEMOTED ? "demoted" :
				         sla_only(h, n) ? "below the SLA" : n->admin);
				health__note(h, "standby %s promoted for %s%s", s.pick->id, n->id,
				             sla_only(h, n) ? " (below the SLA)" : "");
			}
		} else if (has) {
			/* The primary is back: its standby returns to the pool. */
			for (size_t k = 0; k < h->n; k++) {
				hnode_t *sb = h->node[k];
				if (sb->promoted && strcmp(sb->promoted_for, n->id) == 0) {
					undo_save(undo, sb);
					sb->promoted = 0;
					sb->promoted_for[0] = 0;
					sb->v.since = sb->v.moved_at = health__wall();
					sb->changed = 1;
					log_info("node %s: back to standby, %s serves again", sb->id, n->id);
					health__note(h, "standby %s released (%s serves again)", sb->id, n->id);
				}
			}
		}
	}
}
