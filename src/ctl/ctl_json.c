/* SPDX-License-Identifier: MIT */
/* The output of gslbctl's read commands: one JSON document per command
 * with --json (the shapes of gslbctl(8), JSON OUTPUT), the field listing
 * of the `show` commands otherwise, and the time fields both share.
 *
 * Every document is an object whose "format" says which version of the
 * shapes it follows; a field is only ever added within a version, never
 * renamed, removed or retyped. */
#include "ctl/ctl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The version of the documented shapes.  Raise it only when a field
 * changes its name, type or meaning; adding a field keeps it. */
#define CTL_JSON_FORMAT 1

void ctl_utc(int64_t t, char *buf, size_t size)
{
	time_t tt = (time_t)t;
	struct tm tm;
	if (!gmtime_r(&tt, &tm) ||
	    !strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, size, "%lld", (long long)t);
}

int64_t ctl_parse_utc(const char *s)
{
	struct tm tm;
	memset(&tm, 0, sizeof(tm));
	const char *end = s ? strptime(s, "%Y-%m-%dT%H:%M:%S", &tm) : NULL;
	if (!end || (*end && strcmp(end, "Z") != 0))
		return 0;
	return (int64_t)timegm(&tm);
}

void ctl_set_time(json_t *obj, const char *key, int64_t t)
{
	wdb_json_time(obj, key, t);
}

json_t *ctl_field(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);
	return v ? json_incref(v) : json_null();
}

void ctl_emit(json_t *doc)
{
	json_object_set_new(doc, "format", json_integer(CTL_JSON_FORMAT));
	ctl_set_time(doc, "generated", (int64_t)time(NULL));
	ctl_print_json(doc);
	json_decref(doc);
}

/* Writes @v as one value of a field listing: strings bare, arrays
 * joined by commas, null as "-". */
static void print_value(json_t *v)
{
	if (!v || json_is_null(v)) {
		fputs("-", stdout);
	} else if (json_is_string(v)) {
		fputs(json_string_value(v), stdout);
	} else if (json_is_array(v)) {
		size_t i;
		json_t *e;
		if (!json_array_size(v))
			fputs("-", stdout);
		json_array_foreach(v, i, e) {
			if (i)
				fputs(", ", stdout);
			print_value(e);
		}
	} else if (json_is_true(v) || json_is_false(v)) {
		fputs(json_is_true(v) ? "yes" : "no", stdout);
	} else {
		char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
		fputs(s ? s : "?", stdout);
		free(s);
	}
}

void ctl_print_fields(json_t *obj, const char *const *keys)
{
	for (; *keys; keys++) {
		printf("%-16s ", *keys);
		print_value(json_object_get(obj, *keys));
		putchar('\n');
	}
}

int ctl_show(const char *key, json_t *view, const char *const *keys)
{
	if (ctl_json) {
		ctl_emit(json_pack("{s:o}", key, view));
		return 0;
	}
	ctl_print_fields(view, keys);
	json_decref(view);
	return 0;
}

json_t *ctl_views(json_t *arr, json_t *(*view)(json_t *))
{
	json_t *out = json_array();
	size_t i;
	json_t *e;
	json_array_foreach(arr, i, e)
		json_array_append_new(out, view(e));
	return out;
}

const char *ctl_join(json_t *arr, char *buf, size_t size)
{
	size_t i;
	json_t *e;
	*buf = 0;
	json_array_foreach(arr, i, e) {
		size_t l = strlen(buf);
		snprintf(buf + l, size - l, "%s%s", l ? "," : "", json_string_value(e));
	}
	return buf;
}

json_t *ctl_list(wdb_kind_t kind, json_t *(*view)(json_t *))
{
	wdb_txn_t *t = ctl_begin_read();
	json_t *all = json_array();
	wdb_each(t, kind, NULL, ctl_collect_value, all);
	wdb_abort(t);
	json_t *views = ctl_views(all, view);
	json_decref(all);
	return views;
}
