/* SPDX-License-Identifier: MIT */
/* The region and ISP checks of store/apply.h: the names known, the check
 * of one name with its hint, and the check of what a difference adds or
 * changes. */
#include "store/apply.h"
#include "store/apply_int.h"
#include "store/change.h"
#include "common/util.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int area_of_record(const char *key, json_t *v, void *arg)
{
	(void)key;
	wdb_area_known_t *k = arg;
	for (int f = 0; f < 2; f++) {
		const char *s = json_string_value(json_object_get(v, f ? "isp" : "region"));
		if (s && strcmp(s, "*") != 0)
			json_object_set_new(k->names[f], s, json_true());
	}
	return 0;
}

void wdb_area_known_init(wdb_txn_t *t, wdb_area_known_t *k)
{
	k->names[0] = json_object();
	k->names[1] = json_object();
	k->ngeo = 0;
	wdb_each(t, WDB_NODE, NULL, area_of_record, k);
	wdb_each(t, WDB_WEIGHT, NULL, area_of_record, k);
}

void wdb_area_known_free(wdb_area_known_t *k)
{
	json_decref(k->names[0]);
	json_decref(k->names[1]);
	k->names[0] = k->names[1] = NULL;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Writes into @buf the known names of @known nearest to @v: "did you
 * mean cn-bj?" when some are a typo away (one edit in a short name, two
 * in a longer one), else "known: " and the first few in order. */
static void area_hint(json_t *known, const char *v, char *buf, size_t size)
{
	size_t n = json_object_size(known), k = 0;
	if (!n) {
		snprintf(buf, size, "none is known");
		return;
	}
	const char **names = xcalloc(n, sizeof(*names));
	unsigned *dist = xcalloc(n, sizeof(*dist));
	const char *name;
	json_t *x;
	json_object_foreach(known, name, x)
		names[k++] = name;
	qsort(names, n, sizeof(*names), name_cmp);
	unsigned best = UINT_MAX;
	for (size_t i = 0; i < n; i++) {
		dist[i] = util_edit_distance(v, names[i]);
		best = dist[i] < best ? dist[i] : best;
	}
	int typo = best <= (strlen(v) < 5 ? 1u : 2u);
	size_t shown = 0, len = (size_t)snprintf(buf, size, "%s",
	                                         typo ? "did you mean " : "known: ");
	for (size_t i = 0; i < n && shown < (typo ? 3u : 8u) && len < size; i++) {
		if (typo && dist[i] != best)
			continue;
		len += (size_t)snprintf(buf + len, size - len, "%s%s",
		                        shown ? (typo ? " or " : ", ") : "", names[i]);
		shown++;
	}
	if (len < size && typo)
		snprintf(buf + len, size - len, "?");
	else if (len < size && n > shown)
		snprintf(buf + len, size - len, " and %zu more", n - shown);
	free(names);
	free(dist);
}

/* Appends a warning to @warnings. */
__attribute__((format(printf, 2, 3)))
static void warn(json_t *warnings, const char *fmt, ...)
{
	char buf[1600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	json_array_append_new(warnings, json_string(buf));
}

int wdb_area_check(const wdb_apply_opts_t *op, const wdb_area_known_t *k,
                   const char *cmd, int isp, const char *v, json_t *warnings,
                   wdb_apply_err_t *e)
{
	if (strcmp(v, "*") == 0 || json_object_get(k->names[isp], v))
		return 0;
	const char *opt = isp ? "--isp" : "--region", *field = isp ? "ISP" : "region";
	if (!op->conf) {
		warn(warnings, "%s: %s %s: no node has that %s, and without -c the geoip "
		     "settings are not known", cmd, opt, v, isp ? "isp" : "region");
		return 0;
	}
	/* Without a GeoIP database or CIDR file that names any location,
	 * there is nothing to tell a typo from a new name by. */
	if (!k->ngeo) {
		warn(warnings, "%s: %s %s: no node or row has that %s, and the geoip "
		     "settings name no location to check it against", cmd, opt, v, field);
		return 0;
	}
	/* A name no lookup can give makes a row no client ever reaches: a
	 * typo such as cn-bjj.  Unless the operator says it is meant (a
	 * database about to be deployed gives it). */
	if (op->allow_unknown_location) {
		warn(warnings, "%s: %s %s: no client is located in that %s yet; kept "
		     "(--allow-unknown-location)", cmd, opt, v, field);
		return 0;
	}
	char hint[700];
	area_hint(k->names[isp], v, hint, sizeof(hint));
	return wdb__apply_fail(e, WDB_EDIT_BAD, isp ? "isp" : "region",
	                       "%s: %s %s: no client is located in that %s: the "
	                       "GeoIP database, the CIDR file and the store's nodes "
	                       "and rows do not know it (%s); give "
	                       "--allow-unknown-location if it is meant, for a "
	                       "database about to be deployed", cmd, opt, v, field,
	                       hint);
}

int wdb_apply_check_areas(const wdb_apply_opts_t *op, const wdb_area_known_t *k,
                          const char *file, json_t *diff, json_t *want[3],
                          json_t *warnings, wdb_apply_err_t *e)
{
	static const char *const parts[] = { "added", "changed" };
	for (int kind = k->ngeo > 0 ? 1 : 2; kind < 3; kind++)
		for (int p = 0; p < 2; p++) {
			size_t i;
			json_t *key;
			json_array_foreach(json_object_get(json_object_get(diff, parts[p]),
			                                   wdb_doc_lists[kind]), i, key) {
				json_t *o = json_object_get(want[kind], json_string_value(key));
				char cmd[1500];
				if (kind == 1)
					snprintf(cmd, sizeof(cmd), "apply %s: node %s", file,
					         json_string_value(key));
				else
					snprintf(cmd, sizeof(cmd), "apply %s: weight row %s", file,
					         json_string_value(json_object_get(o, "service")));
				for (int f = 0; f < 2; f++) {
					const char *v = json_string_value(
						json_object_get(o, f ? "isp" : "region"));
					if (v && wdb_area_check(op, k, cmd, f, v, warnings, e))
						return e->cls;
				}
			}
		}
	return 0;
}
