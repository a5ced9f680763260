/* SPDX-License-Identifier: MIT */
/* gslbctl's side of nearest steering: the service options
 * (--switch-margin, --headroom), their checks in `service set` and
 * `apply`, and the nearest view of a row for explain, `steer show` and
 * status (S4-1, S4-3, S4-5). */
#include "ctl/ctl_steer.h"
#include "common/num.h"
#include "steer/nearest_run.h"
#include "steer/steer_edit.h"
#include "store/plan.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A headroom "20%" or "20" into *@out; returns 0 or -1. */
static int parse_headroom(const char *v, double *out)
{
	static const char *const pct[] = { "%", NULL };
	static const num_range_t r = { 0, 90, 0, pct, NULL };
	return num_parse(v, &r, out, NULL) ? -1 : 0;
}

int ctl_nearest_service_opt(json_t *s, const char *sub, const char *o, const char *v)
{
	if (strcmp(o, "--switch-margin") == 0) {
		double m;
		int ms;
		if (nearest_margin_parse(v, &m, &ms))
			ctl_die("service %s: --switch-margin %s: give a percentage below 100 "
			        "(15%%) or a time up to 10000 ms (10ms)", sub, v);
		json_object_set_new(s, "switch_margin", json_string(v));
	} else if (strcmp(o, "--headroom") == 0) {
		double h;
		if (parse_headroom(v, &h))
			ctl_die("service %s: --headroom %s: give a percentage from 0 to 90 (20%%)",
			        sub, v);
		json_object_set_new(s, "headroom", json_real(h));
	} else {
		return 0;
	}
	return 1;
}

void ctl_nearest_check(json_t *s, const char *what)
{
	if (nearest_service_on(s))
		return;
	const char *name = json_string_value(json_object_get(s, "name"));
	if (json_object_get(s, "switch_margin") || json_object_get(s, "headroom"))
		ctl_die("%s: service %s: switch margin and headroom go with nearest steering "
		        "(--steering nearest)", what, name ? name : "?");
}

json_t *ctl_nearest_row(wdb_txn_t *t, const char *key, json_t *svc)
{
	return nearest_row_view(t, &ctl_hc.steer, key, svc);
}

void ctl_nearest_print(json_t *st)
{
	printf("steering  nearest, switch margin %s, headroom %.0f%%\n",
	       json_string_value(json_object_get(st, "switch_margin")),
	       json_number_value(json_object_get(st, "headroom")));
	printf("          row %s: %s; last evaluation: %s", json_string_value(json_object_get(st, "row")),
	       json_is_true(json_object_get(st, "steered")) ? "nearest shares in force" :
	       "operator's weights in force", json_string_value(json_object_get(st, "verdict")));
	if (json_object_get(st, "reason"))
		printf(": %s", json_string_value(json_object_get(st, "reason")));
	printf("\n");
	printf("  %-14s %5s %4s %9s %9s %6s %6s %7s  %s\n", "NODE", "BASE", "RANK", "LATENCY",
	       "SMOOTHED", "LOAD%", "CAP%", "SHARE%", "LIMITS");
	const char *id;
	json_t *n;
	json_object_foreach(json_object_get(st, "nodes"), id, n) {
		char lat[16] = "-", ema[16] = "-", load[16] = "-", rank[8] = "-";
		if (json_is_number(json_object_get(n, "latency")))
			snprintf(lat, sizeof(lat), "%.1f", json_number_value(json_object_get(n, "latency")));
		if (json_is_number(json_object_get(n, "ema")))
			snprintf(ema, sizeof(ema), "%.1f", json_number_value(json_object_get(n, "ema")));
		if (json_is_number(json_object_get(n, "load")))
			snprintf(load, sizeof(load), "%.0f", json_number_value(json_object_get(n, "load")));
		if (json_integer_value(json_object_get(n, "rank")))
			snprintf(rank, sizeof(rank), "%lld", json_integer_value(json_object_get(n, "rank")));
		printf("  %-14s %5lld %4s %9s %9s %6s %6.0f ", id,
		       json_integer_value(json_object_get(n, "base")), rank, lat, ema, load,
		       100 * json_number_value(json_object_get(n, "cap")));
		if (json_is_true(json_object_get(st, "steered")))
			printf("%7.2f", json_integer_value(json_object_get(n, "weight")) / 100.0);
		else
			printf("%7s", "-");
		printf("  %s", json_string_value(json_object_get(n, "limits_text")));
		/* Where the latency came from (S4-6): pushed, or the probes
		 * of the vantages in the row's region. */
		const char *src = json_string_value(json_object_get(n, "source"));
		if (src)
			printf("; latency %s", src);
		printf("\n");
	}
}
