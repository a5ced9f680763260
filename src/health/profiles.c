/* SPDX-License-Identifier: MIT */
/* Score profiles and weights per service (S2-2), and the regional load
 * that shifts the four profile's weights (S2-6): which configurations
 * each node is scored under, and its score as the lowest of them. */
#include "config.h"
#include "health/health_int.h"
#include "common/log.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

/* Score profiles per service (S2-2: selectable per service).  A node is
 * scored under the profile of every service whose rows name it, and the
 * lowest of those scores decides its state: health is per node, and a
 * node that one service's profile finds degraded is degraded for the
 * service that asked the stricter question.  Nodes in no row, or only in
 * rows of services on the default, use health.profile. */
typedef struct {
	health_t *h;
	json_t *svc;                 /* service name -> profile bit */
	json_t *fr;                  /* service name -> max failure rate */
	json_t *sw;                  /* service name -> [profile, w0..w3] */
	json_t *pb;                  /* service name -> probe budget, B/s */
} profiles_t;

/* S2-2: the weights service @svc names for itself ("score_weights":
 * {dimension: weight}) into @w with their profile; 0, or -1 for none. */
int health__service_weights(json_t *svc, score_profile_t *pf, double w[4])
{
	json_t *o = json_object_get(svc, "score_weights");
	const char *names[4];
	double vals[4];
	unsigned n = 0;
	const char *k;
	json_t *v;
	if (!json_is_object(o) || json_object_size(o) != 4)
		return -1;
	json_object_foreach(o, k, v) {
		names[n] = k;
		vals[n++] = json_is_number(v) ? json_number_value(v) : -1;
	}
	return score_weights_named(names, vals, n, pf, w);
}

static int collect_profile(const char *key, json_t *svc, void *arg)
{
	profiles_t *p = arg;
	const char *pf = json_string_value(json_object_get(svc, "profile"));
	unsigned bit = 1u << (pf && strcmp(pf, "four") == 0 ? SCORE_PROFILE_FOUR :
	                      pf && strcmp(pf, "probe") == 0 ? SCORE_PROFILE_PROBE :
	                      p->h->c.score.profile);
	score_profile_t wpf;
	double w[4];
	if (!health__service_weights(svc, &wpf, w)) {
		/* Its own weights replace the profile's global ones. */
		json_object_set_new(p->sw, key, json_pack("[i, f, f, f, f]", (int)wpf, w[0],
		                                          w[1], w[2], w[3]));
		bit = 0;
	}
	json_object_set_new(p->svc, key, json_integer(bit));
	/* S3-5: a service's own failure-rate SLA (service set
	 * --max-failure-rate). */
	json_t *fr = json_object_get(svc, "max_failure_rate");
	if (json_is_number(fr))
		json_object_set_new(p->fr, key, json_real(json_number_value(fr)));
	/* S1-3: a service's probe budget (service set --probe-budget). */
	json_t *pb = json_object_get(svc, "probe_budget");
	if (json_is_number(pb) && json_number_value(pb) > 0)
		json_object_set_new(p->pb, key, json_real(json_number_value(pb)));
	return 0;
}

/* Adds the service weights @sw ([profile, w0..w3]) to those @n is
 * scored under, once. */
static void add_wset(hnode_t *n, json_t *sw)
{
	score_profile_t pf = (score_profile_t)json_integer_value(json_array_get(sw, 0));
	double w[4];
	for (int i = 0; i < 4; i++)
		w[i] = json_number_value(json_array_get(sw, (size_t)i + 1));
	for (unsigned k = 0; k < n->nwsets; k++)
		if (n->wset[k].profile == pf && memcmp(n->wset[k].w, w, sizeof(w)) == 0)
			return;
	if (n->nwsets == HEALTH_MAX_WSETS) {
		log_warning("node %s: more than %d services with weights of their own "
		            "use it: the others' weights are not scored", n->id,
		            HEALTH_MAX_WSETS);
		return;
	}
	n->wset[n->nwsets].profile = pf;
	memcpy(n->wset[n->nwsets++].w, w, sizeof(w));
}

static int row_profiles(const char *key, json_t *row, void *arg)
{
	profiles_t *p = arg;
	wdb_row_parts_t parts;
	if (wdb_row_split(key, strlen(key), &parts))
		return 0;
	char svc[1100];
	snprintf(svc, sizeof(svc), "%.*s", (int)parts.svc_len, parts.svc);
	unsigned bit = (unsigned)json_integer_value(json_object_get(p->svc, svc));
	json_t *frj = json_object_get(p->fr, svc);
	json_t *pbj = json_object_get(p->pb, svc);
	const char *id;
	json_t *v;
	json_t *sw = json_object_get(p->sw, svc);
	json_object_foreach(json_object_get(row, "weights"), id, v) {
		hnode_t *n = health__find_node(p->h, id, NULL);
		if (!n)
			continue;
		n->profiles |= bit;
		if (sw)
			add_wset(n, sw);
		/* S1-3: the strictest probe budget of its services. */
		double pb = json_number_value(pbj);
		if (pbj && (n->budget_svc <= 0 || pb < n->budget_svc))
			n->budget_svc = pb;
		/* A node shared by services answers to the strictest. */
		double fr = json_real_value(frj);
		if (frj && (n->fr_limit <= 0 || fr < n->fr_limit))
			n->fr_limit = fr;
	}
	return 0;
}

void health__sync_profiles(health_t *h, wdb_txn_t *t)
{
	profiles_t p = { h, json_object(), json_object(), json_object(), json_object() };
	unsigned global = 1u << h->c.score.profile, any_other = 0;
	wdb_each(t, WDB_SERVICE, NULL, collect_profile, &p);
	const char *k;
	json_t *v;
	json_object_foreach(p.svc, k, v)
		any_other |= (unsigned)json_integer_value(v) & ~global;
	for (size_t i = 0; i < h->n; i++) {
		h->node[i]->profiles = 0;
		h->node[i]->nwsets = 0;
		h->node[i]->budget_svc = 0;
		h->node[i]->fr_limit = 0;
	}
	/* With every service on the global profile, weights and failure-rate
	 * limit there is nothing to map, and a large table is not walked. */
	if (any_other || json_object_size(p.fr) || json_object_size(p.sw) ||
	    json_object_size(p.pb))
		wdb_each(t, WDB_WEIGHT, NULL, row_profiles, &p);
	json_decref(p.svc);
	json_decref(p.fr);
	json_decref(p.sw);
	json_decref(p.pb);
}

/* S2-6 dynamic weights: "during a regional degradation every node's load
 * score drops together and the score stops discriminating: raise the
 * service and stability weights for that region".  A region is in
 * regional load when at least REGION_MIN_NODES of its nodes have fresh
 * load metrics and REGION_LOAD_SHARE of those score below REGION_LOAD_LOW
 * on the load dimension; its nodes are then scored (four profile) with
 * half the load weight, the other half going in equal parts to service
 * and stability. */
#define REGION_MIN_NODES 3
#define REGION_LOAD_SHARE 0.75
#define REGION_LOAD_LOW 0.5

/* The score configuration of node @n under profile @pf: health's own,
 * or with a service's weights @w (S2-2; NULL: the global ones), with the
 * S2-6 weights when the node's region is in regional load. */
score_config_t health__profile_config(const health_t *h, const hnode_t *n, int pf,
                                     const double *w)
{
	score_config_t c = h->c.score;
	c.profile = (score_profile_t)pf;
	if (w)
		memcpy(pf == SCORE_PROFILE_FOUR ? c.w_four : c.w_probe, w, sizeof(c.w_four));
	if (pf == SCORE_PROFILE_FOUR && n->region_loaded) {
		double moved = c.w_four[2] / 2;
		c.w_four[2] -= moved;
		c.w_four[1] += moved / 2;
		c.w_four[3] += moved / 2;
	}
	return c;
}

/* Recomputes which regions are in regional load; once a second. */
void health__region_load(health_t *h)
{
	uint32_t now = (uint32_t)time(NULL);
	json_t *count = json_object();          /* region -> [known, low] */
	for (size_t i = 0; i < h->n; i++) {
		hnode_t *n = h->node[i];
		const uint32_t *mt = n->metrics.time;
		if (strcmp(n->region, "*") == 0 ||
		    !(mt[METRIC_BANDWIDTH] | mt[METRIC_CPU] | mt[METRIC_MEMORY] | mt[METRIC_DISK]))
			continue;                       /* no region, or no load metric */
		score_config_t c = health__profile_config(h, n, SCORE_PROFILE_FOUR, NULL);
		score_result_t r;
		score_evaluate(&c, NULL, 0, &n->metrics, now, &r);
		if (r.dim[2] < 0)
			continue;                       /* no fresh load metric */
		json_t *e = json_object_get(count, n->region);
		if (!e) {
			e = json_pack("[i, i]", 0, 0);
			json_object_set_new(count, n->region, e);
		}
		json_array_set_new(e, 0, json_integer(json_integer_value(json_array_get(e, 0)) + 1));
		if (r.dim[2] < REGION_LOAD_LOW)
			json_array_set_new(e, 1, json_integer(json_integer_value(json_array_get(e, 1)) + 1));
	}
	json_t *loaded = json_object();
	const char *reg;
	json_t *e;
	/* S2-6: a region under low load weighs service and stability more. */
	json_object_foreach(count, reg, e) {
		json_int_t known = json_integer_value(json_array_get(e, 0));
		json_int_t low = json_integer_value(json_array_get(e, 1));
		if (known >= REGION_MIN_NODES && low >= REGION_LOAD_SHARE * (double)known) {
			json_object_set_new(loaded, reg, json_true());
			if (!json_object_get(h->loaded, reg))
				log_info("region %s: load low on %lld of %lld nodes: service and "
				         "stability weigh more in its scores", reg,
				         (long long)low, (long long)known);
		}
	}
	json_object_foreach(h->loaded, reg, e)
		if (!json_object_get(loaded, reg))
			log_info("region %s: regional load is over, normal weights", reg);
	json_decref(h->loaded);
	h->loaded = loaded;
	json_decref(count);
	for (size_t i = 0; i < h->n; i++)
		h->node[i]->region_loaded = json_object_get(loaded, h->node[i]->region) != NULL;
}

/* The node's score under every profile it is asked for; the lowest
 * counts (see health__sync_profiles()).  An unknown result (no fresh input) yields
 * to a known one. */
void health__node_score(health_t *h, const hnode_t *n, const score_sample_t *s,
                       unsigned k, uint32_t now, score_result_t *out)
{
	unsigned mask = n->profiles || n->nwsets ? n->profiles : 1u << h->c.score.profile;
	int have = 0;
	/* The profiles with the global weights, then each service's own
	 * weights (S2-2). */
	for (unsigned j = 0; j < 2 + n->nwsets; j++) {
		int pf = j < 2 ? (int)j : (int)n->wset[j - 2].profile;
		if (j < 2 && !(mask & (1u << pf)))
			continue;
		score_config_t c = health__profile_config(h, n, pf, j < 2 ? NULL : n->wset[j - 2].w);
		score_result_t r;
		score_evaluate(&c, s, k, &n->metrics, now, &r);
		if (!have || (out->unknown && !r.unknown) ||
		    (!r.unknown && r.score < out->score))
			*out = r;
		have = 1;
	}
}

const char *health__profile_text(health_t *h, const hnode_t *n)
{
	unsigned mask = n->profiles || n->nwsets ? n->profiles : 1u << h->c.score.profile;
	static const char *const names[2][4] = {
		{ "", "probe", "four", "probe+four" },
		{ "service weights", "probe+service weights", "four+service weights",
		  "probe+four+service weights" },
	};
	return names[n->nwsets > 0][mask & 3];
}

