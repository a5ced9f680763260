/* SPDX-License-Identifier: MIT */
/* Announcing and withdrawing cutover windows, shared by gslbctl and the
 * HTTP API (cutover_edit.h). */
#include "health/cutover_edit.h"
#include "common/num.h"
#include "health/push.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const impact_set[] = { "low", "medium", "high", NULL };

/* An input's name: gslbctl's option or the document's key. */
typedef enum { IN_REGION, IN_ISP, IN_NODE, IN_START, IN_END, IN_IMPACT,
               IN_DERATE, IN_PREWARM } input_t;

static const char *const opt_names[] = { "--region", "--isp", "--node",
	"--start", "--end", "--impact", "--derate", "--prewarm" };
static const char *const doc_names[] = { "region", "isp", "nodes", "start",
	"end", "impact", "derate_pct", "prewarm_pct" };

static const char *name_of(const cutover_add_t *in, input_t i)
{
	return in->doc ? doc_names[i] : opt_names[i];
}

/* Sets the reason and the input it is about; returns @rc. */
__attribute__((format(printf, 6, 7)))
static int fail(int rc, char *err, size_t errlen, const char **field,
                const char *fname, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	*field = fname;
	return rc;
}

/* Whole number @v of input @i in [@min, @max] into *@out, or -1. */
static int whole(const char *v, long min, long max, long *out)
{
	const num_range_t r = { (double)min, (double)max, NUM_WHOLE, NULL, NULL };
	double n;
	if (num_parse(v, &r, &n, NULL))
		return -1;
	*out = (long)n;
	return 0;
}

static int has_region(const char *key, json_t *node, void *arg)
{
	(void)key;
	const char *r = json_string_value(json_object_get(node, "region"));
	return r && strcmp(r, arg) == 0;
}

static int collect_value(const char *key, json_t *val, void *arr)
{
	(void)key;
	json_array_append(arr, val);
	return 0;
}

/* The settled window: area, times and derating level. */
typedef struct {
	const char *region, *isp, *impact;
	long derate, prewarm;
	time_t start, end;
	unsigned level;
} settled_t;

/* Checks the inputs one by one (the order of gslbctl's options). */
static int check_inputs(wdb_txn_t *t, const cutover_add_t *in, settled_t *s,
                        char *err, size_t errlen, const char **field)
{
#define FAIL(rc, i, ...) fail(rc, err, errlen, field, doc_names[i], __VA_ARGS__)
	if (in->region && !push_valid_word(in->region, 0))
		return FAIL(WDB_EDIT_BAD, IN_REGION, "%s %s: use a short lowercase name "
		            "like cn-gd", name_of(in, IN_REGION), in->region);
	if (in->isp && !push_valid_word(in->isp, 1))
		return FAIL(WDB_EDIT_BAD, IN_ISP, "%s %s: use a short lowercase name "
		            "like ctcc", name_of(in, IN_ISP), in->isp);
	size_t i;
	json_t *n;
	json_array_foreach(in->nodes, i, n) {
		const char *id = json_string_value(n);
		if (!id)
			return FAIL(WDB_EDIT_BAD, IN_NODE, "%s: must be node ids (strings)",
			            name_of(in, IN_NODE));
		json_t *o = wdb_get(t, WDB_NODE, id);
		if (!o)
			return FAIL(WDB_EDIT_REFUSED, IN_NODE, "%s %s: no such node",
			            name_of(in, IN_NODE), id);
		json_decref(o);
	}
	if (in->impact) {
		s->impact = NULL;
		for (const char *const *m = impact_set; *m; m++)
			if (strcmp(in->impact, *m) == 0)
				s->impact = *m;
		if (!s->impact)
			return FAIL(WDB_EDIT_BAD, IN_IMPACT, "%s %s: not a valid choice",
			            name_of(in, IN_IMPACT), in->impact);
	}
	if (in->derate && whole(in->derate, 1, 100, &s->derate))
		return FAIL(WDB_EDIT_BAD, IN_DERATE, "%s %s: must be a whole number "
		            "from 1 to 100", name_of(in, IN_DERATE), in->derate);
	if (in->prewarm && whole(in->prewarm, 0, 100, &s->prewarm))
		return FAIL(WDB_EDIT_BAD, IN_PREWARM, "%s %s: must be a whole number "
		            "from 0 to 100", name_of(in, IN_PREWARM), in->prewarm);
	return WDB_EDIT_OK;
}

/* Checks the inputs together and settles the area, the times and the
 * derating level. */
static int check_window(wdb_txn_t *t, const cutover_conf_t *c,
                        const cutover_add_t *in, time_t now, cutover_area_fn area,
                        void *area_arg, settled_t *s, char *err, size_t errlen, const char **field)
{
	size_t nn = json_array_size(in->nodes);
	/* S0-2: a cutover is announced with its affected area. */
	if (!in->region && !nn)
		return FAIL(WDB_EDIT_BAD, IN_REGION, "%s or %s is required: the area "
		            "the cutover affects", name_of(in, IN_REGION),
		            name_of(in, IN_NODE));
	s->region = in->region ? in->region : "*"; /* the listed nodes are the area */
	if (!in->start || !in->end)
		return FAIL(WDB_EDIT_BAD, in->start ? IN_END : IN_START, "%s and %s are "
		            "required (RFC 3339 with offset)", name_of(in, IN_START),
		            name_of(in, IN_END));
	if (cutover_parse_time(in->start, &s->start))
		return FAIL(WDB_EDIT_BAD, IN_START, "%s %s: use RFC 3339 with an offset, "
		            "e.g. 2026-12-01T02:00+08:00", name_of(in, IN_START), in->start);
	if (cutover_parse_time(in->end, &s->end))
		return FAIL(WDB_EDIT_BAD, IN_END, "%s %s: use RFC 3339 with an offset, "
		            "e.g. 2026-12-01T05:00+08:00", name_of(in, IN_END), in->end);
	if (s->end <= s->start)
		return FAIL(WDB_EDIT_BAD, IN_END, "the window ends (%s) before it "
		            "starts (%s)", in->end, in->start);
	if (s->end <= now)
		return FAIL(WDB_EDIT_REFUSED, IN_END, "the window ends in the past (%s)",
		            in->end);
	if (in->impact && in->derate)
		return FAIL(WDB_EDIT_BAD, IN_DERATE, "give %s or %s, not both",
		            name_of(in, IN_IMPACT), name_of(in, IN_DERATE));
	s->level = in->derate ? (unsigned)s->derate :
	           c->impact[s->impact ? (strcmp(s->impact, "low") == 0 ? 0 :
	                     strcmp(s->impact, "medium") == 0 ? 1 : 2) : 1];
	if (!nn && !wdb_each(t, WDB_NODE, NULL, has_region, (void *)s->region))
		return FAIL(WDB_EDIT_REFUSED, IN_REGION, "%s %s: no node is in that "
		            "region", name_of(in, IN_REGION), s->region);
	if (area && in->isp && area(area_arg, t, "cutover add", 1, in->isp, err, errlen)) {
		*field = doc_names[IN_ISP];
		return WDB_EDIT_BAD;
	}
	return WDB_EDIT_OK;
}

/* Overlaps: the same scope at overlapping times must agree.  Returns
 * WDB_EDIT_OK, with the id of the very same window in @same (else "")
 * and the highest window number in use in *@maxid, or WDB_EDIT_REFUSED. */
static int check_overlaps(wdb_txn_t *t, const settled_t *s, json_t *nodes,
                          char *same, size_t slen, unsigned *maxid,
                          char *err, size_t errlen, const char **field)
{
	json_t *all = json_array(), *w;
	wdb_each(t, WDB_CUTOVER, NULL, collect_value, all);
	size_t i;
	int rc = WDB_EDIT_OK;
	*maxid = 0;
	*same = '\0';
	json_array_foreach(all, i, w) {
		const char *wid = json_string_value(json_object_get(w, "id"));
		if (wid && wid[0] == 'c' && (unsigned)atoi(wid + 1) > *maxid)
			*maxid = (unsigned)atoi(wid + 1);
		if (rc || *same ||
		    strcmp(json_string_value(json_object_get(w, "region")) ?: "", s->region) ||
		    strcmp(json_string_value(json_object_get(w, "isp")) ?: "", s->isp) ||
		    !json_equal(json_object_get(w, "nodes"), nodes))
			continue;
		time_t ws = (time_t)json_integer_value(json_object_get(w, "start"));
		time_t we = (time_t)json_integer_value(json_object_get(w, "end"));
		if (we <= s->start || ws >= s->end)
			continue;
		if (ws == s->start && we == s->end &&
		    json_integer_value(json_object_get(w, "derate_pct")) == s->level &&
		    json_integer_value(json_object_get(w, "prewarm_pct")) == s->prewarm) {
			snprintf(same, slen, "%s", wid ? wid : "");
			continue;
		}
		rc = fail(WDB_EDIT_REFUSED, err, errlen, field, NULL, "overlaps window "
		          "%s (%s .. %s) for the same area with different settings; "
		          "change or delete that one", wid,
		          json_string_value(json_object_get(w, "start_text")),
		          json_string_value(json_object_get(w, "end_text")));
	}
	json_decref(all);
	return rc;
}

int cutover_window_add(wdb_txn_t *t, const cutover_conf_t *c,
                       const cutover_add_t *in, time_t now, cutover_area_fn area,
                       void *area_arg, char *id, size_t idlen, char *what, size_t wlen,
                       char *err, size_t errlen, const char **field)
{
	settled_t s = { .isp = in->isp ? in->isp : "*", .derate = -1,
	                .prewarm = c->prewarm };
	*field = NULL;
	*what = '\0';
	json_t *nodes = in->nodes ? json_incref(in->nodes) : json_array();
	unsigned maxid;
	char same[32] = "";
	int rc = check_inputs(t, in, &s, err, errlen, field);
	if (!rc)
		rc = check_window(t, c, in, now, area, area_arg, &s, err, errlen, field);
	if (!rc)
		rc = check_overlaps(t, &s, nodes, same, sizeof(same), &maxid, err,
		                    errlen, field);
	if (rc || *same) {
		if (*same) {
			snprintf(id, idlen, "%s", same);
			snprintf(err, errlen, "the same window exists already as %s; "
			         "nothing to change", same);
		}
		json_decref(nodes);
		return rc;
	}
	/* Never the id of a window deleted or rolled back since. */
	snprintf(id, idlen, "c%llu", (unsigned long long)wdb_cutover_next_id(t, maxid));
	json_t *win = json_pack("{s:s, s:s, s:s, s:o, s:I, s:I, s:s, s:s, s:i, s:i, s:s, s:s}",
		"id", id, "region", s.region, "isp", s.isp, "nodes", nodes,
		"start", (json_int_t)s.start, "end", (json_int_t)s.end,
		"start_text", in->start, "end_text", in->end, "derate_pct", (int)s.level,
		"prewarm_pct", (int)s.prewarm,
		"impact", s.impact ? s.impact : (in->derate ? "custom" : "medium"),
		"note", in->note ? in->note : "");
	int wrc = wdb_set(t, WDB_CUTOVER, id, win);
	json_decref(win);
	if (wrc) {
		snprintf(err, errlen, "writing %s: %s; nothing was changed", id,
		         wdb_strerror(wrc));
		return WDB_EDIT_STORE;
	}
	snprintf(what, wlen, "cutover add %s region=%s isp=%s %s..%s derate %u%%",
	         id, s.region, s.isp, in->start, in->end, s.level);
	return WDB_EDIT_OK;
#undef FAIL
}

int cutover_window_delete(wdb_txn_t *t, const char *id, char *what,
                          size_t wlen, char *err, size_t errlen)
{
	json_t *w = wdb_get(t, WDB_CUTOVER, id);
	if (!w) {
		snprintf(err, errlen, "cutover %s does not exist", id);
		return WDB_EDIT_ABSENT;
	}
	json_decref(w);
	int rc = wdb_set(t, WDB_CUTOVER, id, NULL);
	if (rc) {
		snprintf(err, errlen, "deleting %s: %s; nothing was changed", id,
		         wdb_strerror(rc));
		return WDB_EDIT_STORE;
	}
	snprintf(what, wlen, "cutover del %s", id);
	return WDB_EDIT_OK;
}

json_t *cutover_window_view(const cutover_conf_t *c, json_t *w, time_t now)
{
	json_t *v = json_object();
	static const char *const keys[] = { "id", "region", "isp", "start_text",
		"end_text", "derate_pct", "prewarm_pct", "impact", "note", NULL };
	for (const char *const *k = keys; *k; k++) {
		json_t *f = json_object_get(w, *k);
		json_object_set_new(v, *k, f ? json_incref(f) : json_null());
	}
	/* Opened by the health thread for an unannounced cutover. */
	json_object_set_new(v, "auto", json_boolean(json_is_true(json_object_get(w, "auto"))));
	json_t *n = json_object_get(w, "nodes");
	json_object_set_new(v, "nodes", json_is_array(n) ? json_incref(n) : json_array());
	wdb_json_time(v, "start", json_integer_value(json_object_get(w, "start")));
	wdb_json_time(v, "end", json_integer_value(json_object_get(w, "end")));
	json_object_set_new(v, "phase", json_string(cutover_phase_name(
		cutover_window_phase(c, w, now))));
	return v;
}
