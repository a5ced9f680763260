/* SPDX-License-Identifier: MIT */
/* The health settings of services and nodes: a service's own score
 * weights (S2-2, `service set --score-weights`), whose one rule of what a
 * valid set is lives in score_weights_named() and which the health thread
 * reads with health__service_weights(); and the probe budget of a node or
 * service (S1-3, `--probe-budget`).  Their checks in `apply`, their text
 * in `show`. */
#include "ctl/ctl.h"
#include "health/score.h"
#include "common/num.h"

#include <stdio.h>
#include <string.h>

/* The weights of text @v ("network=40,service=20,load=25,stability=15"
 * or the probe profile's loss, latency, connect, jitter) as the service
 * record keeps them, {dimension: weight}; dies naming what is wrong. */
static json_t *parse_score_weights(const char *sub, const char *v)
{
	static const num_range_t pct = { 0, 100, 0, NULL, NULL };
	char buf[256], *save = NULL;
	const char *names[4];
	double vals[4], w[4];
	unsigned n = 0;
	score_profile_t pf;
	snprintf(buf, sizeof(buf), "%s", v);
	json_t *o = json_object();
	for (char *p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(p, '=');
		if (!eq || n == 4 || num_parse(eq + 1, &pct, &vals[n], NULL))
			ctl_die("service %s: --score-weights %s: give the four dimensions of "
			        "one profile with a weight of 0 to 100 each, as "
			        "network=A,service=B,load=C,stability=D or "
			        "loss=A,latency=B,connect=C,jitter=D", sub, v);
		*eq = 0;
		names[n] = p;
		json_object_set_new(o, p, json_real(vals[n++]));
	}
	if (score_weights_named(names, vals, n, &pf, w))
		ctl_die("service %s: --score-weights %s: name each dimension of one profile "
		        "once (network, service, load, stability, or loss, latency, connect, "
		        "jitter), with weights that do not add up to 0", sub, v);
	return o;
}

int ctl_probe_budget_opt(json_t *obj, const char *what, const char *o, const char *v)
{
	static const num_range_t bps = { 1, 1e12, 0, NULL, NULL };
	double b;
	if (strcmp(o, "--probe-budget") != 0)
		return 0;
	if (strcmp(v, "default") == 0)
		json_object_del(obj, "probe_budget");
	else if (num_parse(v, &bps, &b, NULL))
		ctl_die("%s: --probe-budget %s: give bytes per second (1 or more), or "
		        "default", what, v);
	else
		json_object_set_new(obj, "probe_budget", json_real(b));
	return 1;
}

int ctl_score_service_opt(json_t *s, const char *sub, const char *o, const char *v)
{
	if (ctl_probe_budget_opt(s, "service", o, v))
		return 1;
	if (strcmp(o, "--score-weights") != 0)
		return 0;
	if (strcmp(v, "default") == 0)
		json_object_del(s, "score_weights");
	else
		json_object_set_new(s, "score_weights", parse_score_weights(sub, v));
	return 1;
}

/* A service's stored score_weights @w as its profile *@pf and the four
 * weights in that profile's order (@out): 0, or -1 when @w is not four
 * weights of one profile (a value not a number counts as out of range). */
static int stored_weights(json_t *w, score_profile_t *pf, double out[4])
{
	const char *names[4];
	double vals[4];
	unsigned n = 0;
	const char *k;
	json_t *v;
	if (json_is_object(w) && json_object_size(w) == 4)
		json_object_foreach(w, k, v) {
			names[n] = k;
			vals[n++] = json_is_number(v) ? json_number_value(v) : -1;
		}
	return n == 4 && !score_weights_named(names, vals, n, pf, out) ? 0 : -1;
}

json_t *ctl_score_view(json_t *s)
{
	score_profile_t pf;
	double out[4];
	if (stored_weights(json_object_get(s, "score_weights"), &pf, out))
		return json_string("default");
	/* In the profile's order, as health.weights-four lists them. */
	char buf[256] = "";
	for (int i = 0; i < 4; i++) {
		size_t l = strlen(buf);
		snprintf(buf + l, sizeof(buf) - l, "%s%s=%g", i ? "," : "",
		         score_dimension_name(pf, i), out[i]);
	}
	return json_string(buf);
}
