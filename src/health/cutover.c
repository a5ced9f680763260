/* SPDX-License-Identifier: MIT */
/* Cutover windows: phases and their effect on a node (pure functions). */
#include "health/cutover.h"
#include "common/util.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cutover_conf_load(const conf_t *c, cutover_conf_t *o, char *err,
                      size_t errlen)
{
	o->notice = 86400;
	o->prewarm_lead = 3600;
	o->ramp = 600;
	o->impact[0] = 70;
	o->impact[1] = 60;
	o->impact[2] = 50;
	o->prewarm = 35;
	/* S0-11: five minutes is more than the long TTLs of S1-8 and S3-4
	 * (30-60 s) several times over, so every resolver holds a short-TTL
	 * answer when the window opens. */
	o->short_ttl_lead = 300;
	o->confirm_rounds = 2;
	autocut_conf_default(&o->autocut);
	const ynode_t *s = ynode_get(c->root, "cutover");
	if (!s)
		return 0;
	static const char *const keys[] = { "notice", "prewarm-lead", "ramp",
		"impact-low", "impact-medium", "impact-high", "prewarm",
		"short-ttl-lead", "confirm-rounds", "auto", "auto-min-nodes",
		"auto-share", "auto-drop", "auto-confirm", "auto-recover",
		"auto-derate", "auto-max", NULL };
	if (conf_skeys(c, s, "cutover", keys, err, errlen))
		return -1;
	for (size_t i = 0; i < s->n; i++) {
		const char *k = s->keys[i]->value;
		const ynode_t *v = s->items[i];
		double d;
		int ak = autocut_conf_key(c, k, v, &o->autocut, err, errlen);
		if (ak < 0)
			return -1;
		if (ak)
			continue;
		if (strncmp(k, "impact-", 7) == 0 || strcmp(k, "prewarm") == 0) {
			if (conf_snumber(c, v, k, strcmp(k, "prewarm") == 0 ? 0 : 1, 100,
			                 &d, err, errlen))
				return -1;
			if (strcmp(k, "prewarm") == 0)
				o->prewarm = (unsigned)d;
			else
				o->impact[strcmp(k, "impact-low") == 0 ? 0 :
				          strcmp(k, "impact-medium") == 0 ? 1 : 2] = (unsigned)d;
			continue;
		}
		if (strcmp(k, "confirm-rounds") == 0) {
			if (conf_snumber(c, v, k, 1, 100, &d, err, errlen))
				return -1;
			o->confirm_rounds = (unsigned)d;
			continue;
		}
		if (conf_snumber(c, v, k, 0, 30 * 86400.0, &d, err, errlen))
			return -1;
		if (strcmp(k, "notice") == 0)
			o->notice = d;
		else if (strcmp(k, "prewarm-lead") == 0)
			o->prewarm_lead = d;
		else if (strcmp(k, "short-ttl-lead") == 0)
			o->short_ttl_lead = d;
		else
			o->ramp = d;
	}
	return 0;
}

/* The offset as RFC 3339 writes it: "Z" or "+hh:mm" / "-hh:mm".  strptime's
 * %z also reads "+hhmm", "+hh" and leading blanks, which cutover times
 * never accepted, and knows only an upper-case Z. */
static int offset_form(const char *p)
{
	if ((*p == 'Z' || *p == 'z') && !p[1])
		return 1;
	return (*p == '+' || *p == '-') && isdigit((unsigned char)p[1]) &&
	       isdigit((unsigned char)p[2]) && p[3] == ':' &&
	       isdigit((unsigned char)p[4]) && isdigit((unsigned char)p[5]) &&
	       !p[6];
}

int cutover_parse_time(const char *s, time_t *out)
{
	struct tm tm;
	memset(&tm, 0, sizeof(tm));
	const char *p = strptime(s, "%Y-%m-%dT%H:%M", &tm);
	if (!p)
		return -1;
	/* Seconds are optional, and two digits when given (%S alone would
	 * take one). */
	if (*p == ':' && !(isdigit((unsigned char)p[1]) &&
	                   isdigit((unsigned char)p[2]) &&
	                   (p = strptime(p, ":%S", &tm))))
		return -1;
	if (!offset_form(p))
		return -1; /* an offset is required: no guessing of zones */
	if (strptime(*p == 'z' ? "Z" : p, "%z", &tm) == NULL)
		return -1;
	/* timegm() ignores tm_gmtoff (and resets it): take the offset off
	 * by hand. */
	long off = tm.tm_gmtoff;
	*out = timegm(&tm) - off;
	return 0;
}

int cutover_fast_probe(const cutover_effect_t *e)
{
	return e->phase == CUT_IN_WINDOW;
}

/* S0-8 in a window: an announced cutover is known trouble, not noise, so
 * the operator may ask for fewer confirmations there (cutover.
 * confirm-rounds).  Outside a window, and for the standbys and the
 * unaffected nodes of a window's rows, health.demote-after holds. */
unsigned cutover_confirm_rounds(const cutover_conf_t *c,
                                const cutover_effect_t *e, unsigned normal)
{
	return e->in_window && c->confirm_rounds ? c->confirm_rounds : normal;
}

/* S0-7, S0-8 in a window: the confirmations of a degraded sample follow at
 * once rather than one fast interval later.  Bounded: a node whose samples
 * stay degraded without the rounds confirming it (a score that wanders
 * around usable) falls back to the fast interval after @need extra
 * rounds, so the probes never run back to back for long. */
int cutover_extra_probe(const cutover_effect_t *e, int demoted,
                        int sample_degraded, unsigned extra, unsigned need)
{
	return e->in_window && !demoted && sample_degraded && extra < need;
}

const char *cutover_phase_name(cutover_phase_t p)
{
	static const char *const n[] = { "none", "announced", "pre-derated",
	                                  "in-window", "ramp", "done" };
	return n[p];
}

int cutover_affects(json_t *w, const char *id, const char *region,
                    const char *isp)
{
	json_t *nodes = json_object_get(w, "nodes");
	if (json_array_size(nodes)) {
		size_t i;
		json_t *n;
		json_array_foreach(nodes, i, n)
			if (strcmp(json_string_value(n) ?: "", id) == 0)
				return 1;
		return 0;
	}
	const char *r = json_string_value(json_object_get(w, "region"));
	const char *s = json_string_value(json_object_get(w, "isp"));
	if (!r || strcmp(r, region) != 0)
		return 0;
	return !s || strcmp(s, "*") == 0 || strcmp(s, isp) == 0;
}

cutover_phase_t cutover_window_phase(const cutover_conf_t *c, json_t *w,
                                     time_t now)
{
	time_t start = (time_t)json_integer_value(json_object_get(w, "start"));
	time_t end = (time_t)json_integer_value(json_object_get(w, "end"));
	if (now >= end + (time_t)c->ramp)
		return CUT_DONE;
	if (now >= end)
		return CUT_RAMP;
	if (now >= start)
		return CUT_IN_WINDOW;
	if (now >= start - (time_t)c->notice)
		return CUT_PREDERATED;
	return CUT_ANNOUNCED;
}

/* Rounds a percentage down to a step of 5, so that a ramp changes the
 * plans at most twenty times rather than every second. */
static unsigned step5(double pct)
{
	if (pct >= 100)
		return 100;
	if (pct <= 0)
		return 0;
	return (unsigned)(pct / 5) * 5;
}

void cutover_effect(const cutover_conf_t *c, json_t *windows, const char *id,
                    const char *region, const char *isp, int standby,
                    int in_affected_row, time_t now, cutover_effect_t *out)
{
	memset(out, 0, sizeof(*out));
	out->weight_pct = 100;
	size_t i;
	json_t *w;
	json_array_foreach(windows, i, w) {
		cutover_phase_t ph = cutover_window_phase(c, w, now);
		time_t start = (time_t)json_integer_value(json_object_get(w, "start"));
		time_t end = (time_t)json_integer_value(json_object_get(w, "end"));
		int affected = cutover_affects(w, id, region, isp);
		if (ph == CUT_DONE) {
			/* The settle period may outlast the ramp (S0-11). */
			uint32_t su = (uint32_t)(end + (time_t)c->settle);
			if (affected && (time_t)su > now && su > out->short_until)
				out->short_until = su;
			continue;
		}
		unsigned level = (unsigned)json_integer_value(json_object_get(w, "derate_pct"));
		unsigned prewarm = (unsigned)json_integer_value(json_object_get(w, "prewarm_pct"));
		if (affected && !standby) {
			unsigned pct = 100;
			if (ph == CUT_PREDERATED || ph == CUT_IN_WINDOW)
				pct = level; /* S0-3 */
			else if (ph == CUT_RAMP)
				pct = step5(level + (100.0 - level) *
				            (double)(now - end) / (c->ramp > 0 ? c->ramp : 1));
			if (pct < out->weight_pct)
				out->weight_pct = pct;
		} else if (standby && (affected || in_affected_row)) {
			/* S0-4: the standby's share grows to prewarm % over the
			 * lead before the start, holds through the window and
			 * fades over the ramp after it. */
			double f = 0;
			if (ph == CUT_IN_WINDOW)
				f = 1;
			else if (ph == CUT_PREDERATED && now >= start - (time_t)c->prewarm_lead)
				f = c->prewarm_lead > 0 ?
				    1 - (double)(start - now) / c->prewarm_lead : 1;
			else if (ph == CUT_RAMP)
				f = 1 - (double)(now - end) / (c->ramp > 0 ? c->ramp : 1);
			unsigned pw = step5(prewarm * f);
			if (pw > out->prewarm_pct)
				out->prewarm_pct = pw;
		} else {
			continue;
		}
		if (ph > out->phase || out->phase == CUT_NONE) {
			out->phase = ph;
			snprintf(out->window, sizeof(out->window), "%s",
			         json_string_value(json_object_get(w, "id")) ?: "");
		}
		if (affected && !standby && ph == CUT_IN_WINDOW)
			out->in_window = 1;
		/* Short TTL for the affected nodes' rows from short-ttl-lead
		 * before the start, through the window and for the settle
		 * period after it (S0-11, S1-8): resolvers then hold answers
		 * naming an affected node for the short TTL only when its
		 * first degraded samples come. */
		if (affected && (ph == CUT_IN_WINDOW || ph == CUT_RAMP ||
		                 now >= start - (time_t)c->short_ttl_lead)) {
			uint32_t su = (uint32_t)(end + (time_t)c->settle);
			if (su > out->short_until)
				out->short_until = su;
		}
	}
}
