/* SPDX-License-Identifier: MIT */
/* The health thread's statistics: histograms, names and publications. */
#include "health/hstats.h"
#include "common/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Probe durations: a loopback answer takes about a millisecond, a far
 * node a few hundred, and a probe times out after at most 60 s. */
static const double probe_le[] = { 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                   0.5, 1, 2.5, 5, 10 };
/* Reaction times: bounds at the figures to beat (S1-7: detection within
 * 8 s, switch within 30 s) and at the old ones (45 s, 120 s). */
static const double reaction_le[] = { 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30,
                                      45, 60, 120, 300 };
/* Latency of an area (S4-9): loopback and a near node in milliseconds,
 * a far one in hundreds, a path in trouble in seconds. */
static const double latency_le[] = { 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5,
                                     1, 2, 5 };
#define NLE(a) ((unsigned)(sizeof(a) / sizeof((a)[0])))

static void hist_init(hstats_hist_t *h, const double *le, unsigned nle)
{
	memset(h, 0, sizeof(*h));
	h->le = le;
	h->nle = nle;
}

void hstats_init(hstats_counters_t *c)
{
	memset(c, 0, sizeof(*c));
	for (int k = 0; k < HSTATS_KINDS; k++)
		hist_init(&c->probe_duration[k], probe_le, NLE(probe_le));
	for (int a = 0; a <= HSTATS_AREAS_MAX; a++)
		for (int k = 0; k < HSTATS_LAT_SOURCES; k++)
			hist_init(&c->area[a].latency[k], latency_le, NLE(latency_le));
	snprintf(c->area[HSTATS_AREAS_MAX].region, HSTATS_AREA_NAME, "other");
	snprintf(c->area[HSTATS_AREAS_MAX].isp, HSTATS_AREA_NAME, "other");
	hist_init(&c->detection, reaction_le, NLE(reaction_le));
	hist_init(&c->switch_time, reaction_le, NLE(reaction_le));
}

void hstats_observe(hstats_hist_t *h, double v)
{
	unsigned i = 0;
	while (i < h->nle && v > h->le[i])
		i++;
	h->bucket[i]++;
	h->count++;
	h->sum += v;
}

void hstats_latency(hstats_counters_t *c, const char *region, const char *isp,
                    int source, double v)
{
	unsigned a = 0;
	while (a < c->narea && (strcmp(c->area[a].region, region) != 0 ||
	                        strcmp(c->area[a].isp, isp) != 0))
		a++;
	if (a == c->narea && c->narea < HSTATS_AREAS_MAX &&
	    strlen(region) < HSTATS_AREA_NAME && strlen(isp) < HSTATS_AREA_NAME) {
		snprintf(c->area[a].region, HSTATS_AREA_NAME, "%s", region);
		snprintf(c->area[a].isp, HSTATS_AREA_NAME, "%s", isp);
		c->narea++;
	} else if (a == c->narea) {
		a = HSTATS_AREAS_MAX;
	}
	hstats_observe(&c->area[a].latency[source], v);
}

static const char *const states[HSTATS_SHOWN_STATES] = {
	"unknown", "up", "derated", "demoted", "stale", "unmonitored"
};

unsigned hstats_state_index(const char *name)
{
	for (unsigned i = 0; i < HSTATS_SHOWN_STATES; i++)
		if (name && strcmp(name, states[i]) == 0)
			return i;
	return 0;
}

const char *hstats_state_name(unsigned i)
{
	return i < HSTATS_SHOWN_STATES ? states[i] : states[0];
}

const char *hstats_kind_name(unsigned k)
{
	static const char *const kinds[HSTATS_KINDS] = { "tcp", "http", "https" };
	return k < HSTATS_KINDS ? kinds[k] : "tcp";
}

const char *hstats_fail_name(unsigned f)
{
	return f == HSTATS_FAIL_SLOW ? "slow" : probe_failure_name((probe_failure_t)f);
}

hstats_t *hstats_new(const hstats_counters_t *c, size_t nnode, size_t nwindow)
{
	hstats_t *s = xcalloc(1, sizeof(*s));
	s->refs = 1;
	s->c = *c;
	s->node = xcalloc(nnode ? nnode : 1, sizeof(*s->node));
	s->nnode = nnode;
	s->window = xcalloc(nwindow ? nwindow : 1, sizeof(*s->window));
	s->nwindow = nwindow;
	return s;
}

void hstats_put(hstats_t *s)
{
	if (!s || __atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL) > 0)
		return;
	free(s->node);
	free(s->window);
	free(s);
}
