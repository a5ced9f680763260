/* SPDX-License-Identifier: MIT */
/* gslbctl steer replay: the steering and nearest decisions recorded in
 * the audit log computed again from their recorded inputs, each said
 * identical or different (S3-7). */
#include "ctl/ctl_steer.h"
#include "steer/nearest_run.h"
#include "health/push.h"
#include "steer/steer_run.h"

#include <stdio.h>
#include <string.h>

/* A time: RFC 3339 (with Z or an offset) or unix seconds; dies
 * otherwise. */
static uint32_t parse_when(const char *cmd, const char *opt, const char *v)
{
	char err[400];
	uint32_t t;
	if (push_parse_time(cmd, opt, v, &t, err, sizeof(err)))
		ctl_die("%s", err);
	return t;
}

typedef struct {
	const char *prefix;
	uint32_t from, to;
	unsigned seen, differ, old;
	json_t *out;
} replay_t;

/* Adds replayed decision @aid of row @key at @now to @r: whether the
 * shares @got[0..@n) of nodes @ids equal the recorded ones @rec_out
 * ({id: bp}). */
static void replay_add(replay_t *r, int64_t aid, uint32_t now, const char *key,
                       json_t *rec_out, unsigned n, const char *const *ids,
                       const uint32_t *got)
{
	json_t *shares = json_object();
	int same = json_object_size(rec_out) == n;
	for (unsigned k = 0; k < n; k++) {
		json_t *was = json_object_get(rec_out, ids[k]);
		same &= json_is_integer(was) && json_integer_value(was) == got[k];
		json_object_set_new(shares, ids[k], json_pack("{s:I, s:I}", "recorded",
			json_integer_value(was), "replayed", (json_int_t)got[k]));
	}
	r->seen++;
	r->differ += !same;
	json_array_append_new(r->out, json_pack("{s:I, s:I, s:s, s:s, s:o}",
		"change", (json_int_t)aid, "at", (json_int_t)now, "row", key,
		"result", same ? "identical" : "different", "shares", shares));
}

/* Replays nearest decision @d of row @key (change @aid, record @rec).
 * A nearest change recorded without its inputs is counted and listed
 * as not replayable, never passed over. */
static void replay_nearest(replay_t *r, int64_t aid, json_t *rec, const char *key, json_t *d)
{
	nearest_conf_t c;
	nearest_row_t was, row;
	uint32_t now;
	int hard;
	unsigned n;
	static nearest_in_t in[STEER_MAX_NODES];
	static nearest_out_t out[STEER_MAX_NODES];
	if (!d || nearest_decision_read(d, &c, &now, &hard, &was, &n, in)) {
		r->old++;
		json_array_append_new(r->out, json_pack("{s:I, s:s, s:s, s:s}", "change",
			(json_int_t)aid, "time", json_string_value(json_object_get(rec, "time")),
			"row", key, "result", "not replayable (recorded without its inputs)"));
		return;
	}
	if ((r->from && now < r->from) || (r->to && now > r->to))
		return;
	nearest_step(&c, n, in, &was, hard, &row, out);
	/* The recorded shares are those of the nodes still in the row. */
	json_t *rec_out = json_object_get(d, "out");
	const char *ids[STEER_MAX_NODES];
	uint32_t got[STEER_MAX_NODES];
	unsigned m = 0;
	for (unsigned k = 0; k < n; k++)
		if (json_object_get(rec_out, in[k].id)) {
			ids[m] = in[k].id;
			got[m++] = out[k].share;
		}
	replay_add(r, aid, now, key, rec_out, m, ids, got);
}

static int replay_one(int64_t aid, json_t *rec, void *arg)
{
	replay_t *r = arg;
	size_t i;
	json_t *ch;
	json_array_foreach(json_object_get(rec, "changes"), i, ch) {
		const char *kind = json_string_value(json_object_get(ch, "kind"));
		const char *key = json_string_value(json_object_get(ch, "key"));
		if (!kind || strcmp(kind, "weight") != 0 || !key ||
		    strncmp(key, r->prefix, strlen(r->prefix)) != 0)
			continue;
		json_t *after = json_object_get(json_object_get(ch, "after"), "steer");
		json_t *before = json_object_get(json_object_get(ch, "before"), "steer");
		json_t *d = json_object_get(after, "decision");
		if (json_object_get(after, "mode")) {
			replay_nearest(r, aid, rec, key, d);
			continue;
		}
		if (!d) {
			/* Back to the operator's weights (stale inputs, or
			 * steering turned off). */
			if (before && json_object_get(ch, "after") != json_null()) {
				json_array_append_new(r->out, json_pack("{s:I, s:s, s:s, s:s}",
					"change", (json_int_t)aid, "time",
					json_string_value(json_object_get(rec, "time")), "row", key,
					"result", "operator's weights"));
			}
			continue;
		}
		steer_conf_t c;
		steer_policy_t p;
		uint32_t now;
		unsigned n;
		static steer_in_t in[STEER_MAX_NODES];
		static steer_out_t out[STEER_MAX_NODES];
		if (steer_decision_read(d, &c, &p, &now, &n, in))
			continue;
		if ((r->from && now < r->from) || (r->to && now > r->to))
			continue;
		steer_step(&c, &p, now, n, in, out);
		const char *ids[STEER_MAX_NODES];
		uint32_t got[STEER_MAX_NODES];
		for (unsigned k = 0; k < n; k++) {
			ids[k] = in[k].id;
			got[k] = out[k].share;
		}
		replay_add(r, aid, now, key, json_object_get(d, "out"), n, ids, got);
	}
	return 0;
}

int ctl_steer_replay(int argc, char **argv)
{
	if (argc < 1)
		ctl_die("steer replay: usage: steer replay SERVICE [--from TIME] [--to TIME]");
	char svc[1100];
	ctl_service_name(argv[0], svc, sizeof(svc));
	replay_t r = { NULL, 0, 0, 0, 0, 0, json_array() };
	for (int i = 1; i < argc; i++) {
		if (i + 1 >= argc)
			ctl_die("steer replay: %s needs a value", argv[i]);
		if (strcmp(argv[i], "--from") == 0)
			r.from = parse_when("steer replay", "--from", argv[++i]);
		else if (strcmp(argv[i], "--to") == 0)
			r.to = parse_when("steer replay", "--to", argv[++i]);
		else
			ctl_die("steer replay: unknown option '%s'", argv[i]);
	}
	char prefix[1200];
	wdb_row_prefix(prefix, sizeof(prefix), svc);
	r.prefix = prefix;
	int rc = wdb_audit_each(ctl_db, 0, replay_one, &r);
	if (rc < 0)
		ctl_die("steer replay: cannot read the audit log: %s", wdb_strerror(rc));
	if (ctl_json) {
		ctl_print_json(r.out);
	} else {
		size_t i;
		json_t *e;
		json_array_foreach(r.out, i, e) {
			printf("change %lld  %s  %s", json_integer_value(json_object_get(e, "change")),
			       json_string_value(json_object_get(e, "row")),
			       json_string_value(json_object_get(e, "result")));
			const char *id;
			json_t *s;
			json_object_foreach(json_object_get(e, "shares"), id, s)
				printf("  %s %.2f%%", id,
				       json_integer_value(json_object_get(s, "replayed")) / 100.0);
			printf("\n");
		}
		printf("%u decision(s) replayed, %u identical, %u different", r.seen,
		       r.seen - r.differ, r.differ);
		if (r.old)
			printf("; %u nearest decision(s) not replayable (recorded without their "
			       "inputs)", r.old);
		printf("\n");
	}
	json_decref(r.out);
	return r.differ ? 1 : 0;
}
