/* SPDX-License-Identifier: MIT */
/* Unannounced cutovers: the area detector (pure, see autocut.h). */
#include "health/autocut.h"

#include <string.h>

void autocut_conf_default(autocut_conf_t *c)
{
	c->on = 1;
	/* S0-1, S0-12: a cutover takes a share of a province's nodes
	 * (about 35 % in the seed's event) together; three nodes is the
	 * smallest group that two coincident noisy nodes cannot make. */
	c->min_nodes = 3;
	c->share = 0.5;
	/* A fall of ten points is half the width of the usable grade
	 * (60..80, S0-6): more than a healthy node's scores move between
	 * rounds, less than the first minute of S0-1's curve takes. */
	c->drop = 10;
	c->confirm = 2;                 /* S0-8: two degraded rounds */
	c->recover = 3;                 /* S0-8: three good rounds */
	c->derate = 0;
	c->max_open = 21600;
}

int autocut_conf_key(const conf_t *c, const char *k, const ynode_t *v,
                     autocut_conf_t *o, char *err, size_t errlen)
{
	if (strcmp(k, "auto") == 0)
		return conf_sbool(c, v, k, &o->on, err, errlen) ? -1 : 1;
	double share = -1;
	const conf_num_t keys[] = {
		CONF_NUM("auto-min-nodes", 2, 10000, &o->min_nodes),
		CONF_NUM("auto-share", 1, 100, &share),
		CONF_NUM("auto-drop", 1, 100, &o->drop),
		CONF_NUM("auto-confirm", 1, 100, &o->confirm),
		CONF_NUM("auto-recover", 1, 100, &o->recover),
		CONF_NUM("auto-derate", 1, 100, &o->derate),
		CONF_NUM("auto-max", 60, 30 * 86400.0, &o->max_open),
	};
	int rc = conf_snum_key(c, k, v, keys, sizeof(keys) / sizeof(keys[0]),
	                       err, errlen);
	if (rc == 1 && share >= 0)
		o->share = share / 100;
	return rc;
}

int autocut_node_falling(const autocut_conf_t *c, double score, double stable,
                         double usable, int out)
{
	if (out)
		return 1;
	if (score < 0)
		return 0;
	return score < usable || (stable >= 0 && score <= stable - c->drop);
}

#define STABLE_WEIGHT (1.0 / 16)

double autocut_stable(double stable, double score, int learn)
{
	if (score < 0)
		return stable;
	if (stable < 0)
		return score;
	return learn ? stable + (score - stable) * STABLE_WEIGHT : stable;
}

int autocut_area_falls(const autocut_conf_t *c, unsigned known,
                       unsigned falling)
{
	return known && falling >= c->min_nodes &&
	       (double)falling >= c->share * (double)known - 1e-9;
}

autocut_action_t autocut_step(const autocut_conf_t *c, autocut_area_t *a,
                              unsigned known, unsigned falling)
{
	if (!a->open) {
		a->ok_rounds = 0;
		a->falling_rounds = autocut_area_falls(c, known, falling) ?
		                    a->falling_rounds + 1 : 0;
		if (a->falling_rounds < c->confirm)
			return AUTOCUT_KEEP;
		a->open = 1;
		a->falling_rounds = 0;
		return AUTOCUT_OPEN;
	}
	a->ok_rounds = falling <= (c->min_nodes - 1) / 2 ? a->ok_rounds + 1 : 0;
	if (a->ok_rounds < c->recover)
		return AUTOCUT_KEEP;
	a->open = 0;
	a->ok_rounds = 0;
	return AUTOCUT_CLOSE;
}
