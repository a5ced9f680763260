/* SPDX-License-Identifier: MIT */
/* The quorum verdict over the instances' views of a node (see quorum.h;
 * S4-6: a per-vantage matrix, never one global boolean). */
#include "cluster/quorum.h"
#include "health/verdict.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_uint(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
	return x < y ? -1 : x > y;
}

void cluster_combine(const json_t *views, unsigned quorum,
                     health_combined_t *out)
{
	memset(out, 0, sizeof(*out));
	out->state = VERDICT_UNKNOWN;
	out->pct = 100;
	unsigned pcts[HEALTH_COMBINED_MAX], npct = 0;
	const char *inst;
	json_t *v;
	/* jansson iterates objects in insertion order; the failing list is
	 * sorted below so that every instance words it alike. */
	const char *failing[HEALTH_COMBINED_MAX];
	json_object_foreach((json_t *)views, inst, v) {
		verdict_state_t s = verdict_state_parse(
			json_string_value(json_object_get(v, "state")));
		if (s == VERDICT_UNKNOWN || out->views == HEALTH_COMBINED_MAX)
			continue;
		out->views++;
		if (s == VERDICT_DEMOTED) {
			failing[out->down++] = inst;
			continue;
		}
		json_int_t p = json_integer_value(json_object_get(v, "pct"));
		pcts[npct++] = p < 0 ? 0 : p > 100 ? 100 : (unsigned)p;
	}
	if (!out->views)
		return;
	for (unsigned i = 1; i < out->down; i++)
		for (unsigned j = i; j > 0 && strcmp(failing[j - 1], failing[j]) > 0; j--) {
			const char *t = failing[j];
			failing[j] = failing[j - 1];
			failing[j - 1] = t;
		}
	size_t l = 0;
	for (unsigned i = 0; i < out->down && l < sizeof(out->failing) - 1; i++)
		l += (size_t)snprintf(out->failing + l, sizeof(out->failing) - l, "%s%s",
		                      i ? " " : "", failing[i]);
	unsigned q = quorum ? quorum : out->views / 2 + 1;
	if (q > out->views)
		q = out->views;
	out->quorum = q;
	if (out->down >= q) {
		out->state = VERDICT_DEMOTED;
		out->pct = 0;
		return;
	}
	/* The weight of a node that stays in: the median of the views that
	 * keep it (the lower middle of an even count, the cautious side). */
	qsort(pcts, npct, sizeof(pcts[0]), cmp_uint);
	out->pct = pcts[(npct - 1) / 2];
	out->state = out->pct < 100 ? VERDICT_DERATED : VERDICT_UP;
}
