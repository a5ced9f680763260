/* SPDX-License-Identifier: MIT */
/* gslbctl's check of the region and ISP names a command gives: a name
 * no client can be located in is a typo until the operator says it is
 * meant (--allow-unknown-location), with the known names nearest to it
 * as the hint. */
#include "ctl/ctl.h"
#include "common/util.h"
#include "gslb/geo.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ctl_allow_unknown_location;

/* The region [0] and ISP [1] names known, as keys: those a client can be
 * located in (the configured GeoIP database and CIDR file, geo_names())
 * and those the store's nodes and rows already use.  Built at the first
 * check, before the command has written anything, so that an apply's
 * own new names are not their own proof. */
static json_t *area_known[2];
static int area_geo;   /* how many names the geoip sources gave */

static void area_add(const char *name, void *arg)
{
	json_object_set_new(arg, name, json_true());
}

static void area_add_geo(const char *name, void *arg)
{
	area_add(name, arg);
	area_geo++;
}

static int area_of_record(const char *key, json_t *v, void *arg)
{
	(void)key;
	json_t **known = arg;
	for (int f = 0; f < 2; f++) {
		const char *s = json_string_value(json_object_get(v, f ? "isp" : "region"));
		if (s && strcmp(s, "*") != 0)
			area_add(s, known[f]);
	}
	return 0;
}

static void area_names(wdb_txn_t *t, const char *cmd)
{
	if (area_known[0])
		return;
	area_known[0] = json_object();
	area_known[1] = json_object();
	wdb_each(t, WDB_NODE, NULL, area_of_record, area_known);
	wdb_each(t, WDB_WEIGHT, NULL, area_of_record, area_known);
	if (!ctl_conf)
		return;
	char err[600];
	geo_allow_compile(0);   /* names only: no location table */
	geo_t *g = geo_open(ctl_conf, err, sizeof(err));
	if (!g)
		ctl_die("%s: cannot read the geoip settings: %s", cmd, err);
	for (int f = 0; f < 2; f++)
		if (geo_names(g, f, area_add_geo, area_known[f]))
			fprintf(stderr, "gslbctl: warning: %s: the GeoIP database cannot be "
			        "read whole; its %s names may be missing\n", cmd,
			        f ? "ISP" : "region");
	geo_close(g);
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

int ctl_area_geo(wdb_txn_t *t, const char *cmd)
{
	area_names(t, cmd);
	return area_geo > 0;
}

void ctl_check_area(wdb_txn_t *t, const char *cmd, int isp, const char *v)
{
	if (strcmp(v, "*") == 0)
		return;
	area_names(t, cmd);
	if (json_object_get(area_known[isp], v))
		return;
	const char *opt = isp ? "--isp" : "--region", *field = isp ? "ISP" : "region";
	if (!ctl_conf) {
		fprintf(stderr, "gslbctl: warning: %s: %s %s: no node has that %s, and "
		        "without -c the geoip settings are not known\n", cmd, opt, v,
		        isp ? "isp" : "region");
		return;
	}
	/* Without a GeoIP database or CIDR file that names any location,
	 * there is nothing to tell a typo from a new name by. */
	if (!area_geo) {
		fprintf(stderr, "gslbctl: warning: %s: %s %s: no node or row has that %s, "
		        "and the geoip settings name no location to check it against\n",
		        cmd, opt, v, field);
		return;
	}
	/* A name no lookup can give makes a row no client ever reaches: a
	 * typo such as cn-bjj.  Unless the operator says it is meant (a
	 * database about to be deployed gives it). */
	if (ctl_allow_unknown_location) {
		fprintf(stderr, "gslbctl: warning: %s: %s %s: no client is located in that "
		        "%s yet; kept (--allow-unknown-location)\n", cmd, opt, v, field);
		return;
	}
	char hint[700];
	area_hint(area_known[isp], v, hint, sizeof(hint));
	ctl_die("%s: %s %s: no client is located in that %s: the GeoIP database, the "
	        "CIDR file and the store's nodes and rows do not know it (%s); give "
	        "--allow-unknown-location if it is meant, for a database about to be "
	        "deployed", cmd, opt, v, field, hint);
}
