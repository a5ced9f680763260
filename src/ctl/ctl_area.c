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

/* The region and ISP names known (store/apply.h): those a client can
 * be located in (the configured GeoIP database and CIDR file,
 * geo_names()) and those the store's nodes and rows already use.  Built
 * at the first check, before the command has written anything, so that
 * an apply's own new names are not their own proof. */
static wdb_area_known_t area_known;

static void area_add_geo(const char *name, void *arg)
{
	json_t **names = arg;
	json_object_set_new(*names, name, json_true());
	area_known.ngeo++;
}

static void area_names(wdb_txn_t *t, const char *cmd)
{
	if (area_known.names[0])
		return;
	wdb_area_known_init(t, &area_known);
	if (!ctl_conf)
		return;
	char err[600];
	geo_allow_compile(0);   /* names only: no location table */
	geo_t *g = geo_open(ctl_conf, err, sizeof(err));
	if (!g)
		ctl_die("%s: cannot read the geoip settings: %s", cmd, err);
	for (int f = 0; f < 2; f++)
		if (geo_names(g, f, area_add_geo, &area_known.names[f]))
			fprintf(stderr, "gslbctl: warning: %s: the GeoIP database cannot be "
			        "read whole; its %s names may be missing\n", cmd,
			        f ? "ISP" : "region");
	geo_close(g);
}

const wdb_area_known_t *ctl_area_known(wdb_txn_t *t, const char *cmd)
{
	area_names(t, cmd);
	return &area_known;
}

void ctl_apply_opts(wdb_apply_opts_t *op, int allow_special)
{
	*op = (wdb_apply_opts_t){
		.conf = ctl_conf, .probe_interval = ctl_hc.interval,
		.probe_timeout = ctl_hc.timeout, .allow_special = allow_special,
		.allow_unknown_location = ctl_allow_unknown_location,
	};
}

void ctl_warnings(json_t *warnings)
{
	size_t i;
	json_t *w;
	json_array_foreach(warnings, i, w)
		fprintf(stderr, "gslbctl: warning: %s\n", json_string_value(w));
}

int ctl_area_geo(wdb_txn_t *t, const char *cmd)
{
	area_names(t, cmd);
	return area_known.ngeo > 0;
}

void ctl_check_area(wdb_txn_t *t, const char *cmd, int isp, const char *v)
{
	if (strcmp(v, "*") == 0)
		return;
	area_names(t, cmd);
	wdb_apply_opts_t op;
	wdb_apply_err_t e;
	json_t *warnings = json_array();
	ctl_apply_opts(&op, 0);
	int rc = wdb_area_check(&op, &area_known, cmd, isp, v, warnings, &e);
	ctl_warnings(warnings);
	json_decref(warnings);
	if (rc)
		ctl_die("%s", e.msg);
}
