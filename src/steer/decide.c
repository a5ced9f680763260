/* SPDX-License-Identifier: MIT */
/* What steering and nearest steering share in deciding a row
 * (decide.h): the row walk, the common fields of recorded inputs and
 * the audit note. */
#include "steer/decide.h"
#include "store/keys.h"
#include "store/plan.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int steer_walk_begin(wdb_txn_t *t, const char *key, json_t *row, steer_walk_t *w)
{
	memset(w, 0, sizeof(*w));
	if (wdb_row_area(key, w->region, w->isp, sizeof(w->region)))
		return -1;
	w->weights = json_object_get(row, "weights");
	w->applied = plan_row_weights(row, 1);
	w->steered = w->applied != w->weights;
	w->state = wdb_get(t, WDB_STEER, key);
	return 0;
}

void steer_walk_end(steer_walk_t *w)
{
	json_decref(w->state);
	w->state = NULL;
}

unsigned steer_walk_nodes(const steer_walk_t *w, steer_walk_node_t *out)
{
	json_t *snodes = json_object_get(w->state, "nodes");
	unsigned n = 0;
	const char *id;
	json_t *v;
	json_object_foreach(w->weights, id, v) {
		if (n == STEER_MAX_NODES)
			break;
		steer_walk_node_t *x = &out[n++];
		x->id = id;
		x->base = (uint32_t)json_integer_value(v);
		x->applied = w->steered ?
		             (int32_t)json_integer_value(json_object_get(w->applied, id)) : -1;
		x->sn = json_object_get(snodes, id);
		json_t *ema = json_object_get(x->sn, "ema");
		x->has_ema = json_is_number(ema);
		x->ema = x->has_ema ? json_number_value(ema) : 0;
	}
	return n;
}

json_t *steer_decision_in(const char *id, uint32_t base, int32_t prev)
{
	return json_pack("{s:s, s:I, s:I}", "id", id, "base", (json_int_t)base,
	                 "prev", (json_int_t)prev);
}

int steer_decision_node(json_t *e, char *id, size_t size, uint32_t *base,
                        int32_t *prev)
{
	const char *s = json_string_value(json_object_get(e, "id"));
	if (!s)
		return -1;
	snprintf(id, size, "%s", s);
	*base = (uint32_t)json_integer_value(json_object_get(e, "base"));
	*prev = (int32_t)json_integer_value(json_object_get(e, "prev"));
	return 0;
}

void steer_note(char *buf, size_t size, size_t *len, const char *fmt, ...)
{
	if (*len >= size - 1)
		return;
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(buf + *len, size - *len, fmt, ap);
	va_end(ap);
	if (k > 0)
		*len += (size_t)k;
	if (*len >= size)
		*len = size - 1;
}
