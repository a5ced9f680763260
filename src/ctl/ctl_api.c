/* SPDX-License-Identifier: MIT */
/* gslbctl api token add|list|revoke: the HTTP API's tokens (api/token.h).
 * A new token is printed once; the store keeps only its hash. */
#include "api/token.h"
#include "common/num.h"
#include "ctl/ctl.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

/* --expires 90d, 12h, 30m or 3600s: seconds from now. */
static int64_t parse_expires(const char *v)
{
	static const char *const units[] = { "s", "m", "h", "d", NULL };
	static const double scale[] = { 1, 60, 3600, 86400 };
	const num_range_t r = { 1, 10.0 * 365 * 86400, NUM_WHOLE, units, scale };
	double secs;
	int unit;
	if (!v || num_parse(v, &r, &secs, &unit) || unit < 0)
		ctl_die("--expires %s: a duration like 90d, 12h, 30m or 3600s, at most "
		        "10 years", v ? v : "");
	return (int64_t)secs;
}

static int token_add(int argc, char **argv)
{
	if (argc < 1)
		ctl_usage_die("api token add: NAME --role read|operate|admin [--expires 90d]");
	const char *name = argv[0];
	if (!api_token_name_ok(name))
		ctl_die("token name '%s': use 1 to 63 letters, digits, '-', '_' or '.'", name);
	api_role_t role = API_ROLE_NONE;
	int64_t expires = 0, now = time(NULL);
	for (int i = 1; i < argc; i += 2) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(argv[i], "--role") == 0 && v) {
			if ((role = api_role_parse(v)) == API_ROLE_NONE)
				ctl_die("--role %s: not a valid choice", v);
		} else if (strcmp(argv[i], "--expires") == 0) {
			expires = now + parse_expires(v);
		} else {
			ctl_usage_die("api token add: unknown option '%s'", argv[i]);
		}
	}
	if (role == API_ROLE_NONE)
		ctl_die("api token add %s: needs --role read|operate|admin", name);
	char tok[API_TOKEN_LEN + 1];
	if (api_token_make(tok))
		ctl_die("api token add: the system gives no random bytes");
	wdb_txn_t *t = ctl_begin();
	json_t *old = wdb_get(t, WDB_APITOKEN, name);
	if (old && !json_integer_value(json_object_get(old, "revoked")))
		ctl_die("api token %s: exists; revoke it first", name);
	json_decref(old);
	json_t *rec = api_token_record(tok, role, now, expires);
	ctl_set(t, WDB_APITOKEN, name, rec);
	json_decref(rec);
	char what[128];
	snprintf(what, sizeof(what), "api token add %s", name);
	/* The only time the token is shown: with --json in the commit's
	 * document, one object. */
	if (ctl_json)
		ctl_commit_also(json_pack("{s:s, s:s}", "name", name, "token", tok));
	ctl_commit(t, what);
	if (!ctl_json)
		printf("token %s: %s\n(shown only now: the store keeps its hash)\n", name, tok);
	memset(tok, 0, sizeof(tok));
	return 0;
}

static int token_revoke(int argc, char **argv)
{
	ctl_no_more_args("api token revoke", argc, argv, 1);
	if (argc < 1)
		ctl_usage_die("api token revoke: NAME");
	wdb_txn_t *t = ctl_begin();
	json_t *rec = wdb_get(t, WDB_APITOKEN, argv[0]);
	if (!rec)
		ctl_die("api token %s: no such token", argv[0]);
	if (!json_integer_value(json_object_get(rec, "revoked"))) {
		json_object_set_new(rec, "revoked", json_integer(time(NULL)));
		ctl_set(t, WDB_APITOKEN, argv[0], rec);
	}
	json_decref(rec);
	char what[128];
	snprintf(what, sizeof(what), "api token revoke %s", argv[0]);
	ctl_commit(t, what);
	return 0;
}

static void put_time(json_t *o, const char *k, json_int_t v, char *buf, size_t size)
{
	if (!v) {
		snprintf(buf, size, "-");
		json_object_set_new(o, k, json_null());
		return;
	}
	time_t tt = (time_t)v;
	struct tm tm;
	gmtime_r(&tt, &tm);
	strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
	json_object_set_new(o, k, json_string(buf));
}

static int each_token(const char *key, json_t *val, void *arg)
{
	char c[32], e[32], r[32];
	json_t *o = json_pack("{s:s, s:O}", "name", key, "role", json_object_get(val, "role"));
	put_time(o, "created", json_integer_value(json_object_get(val, "created")), c, sizeof(c));
	put_time(o, "expires", json_integer_value(json_object_get(val, "expires")), e, sizeof(e));
	put_time(o, "revoked", json_integer_value(json_object_get(val, "revoked")), r, sizeof(r));
	if (ctl_json)
		json_array_append(arg, o);
	else
		printf("%-24s %-8s %-21s %-21s %s\n", key,
		       json_string_value(json_object_get(val, "role")), c, e, r);
	json_decref(o);
	return 0;
}

static int token_list(int argc, char **argv)
{
	ctl_no_more_args("api token list", argc, argv, 0);
	wdb_txn_t *t = ctl_begin_read();
	json_t *arr = json_array();
	if (!ctl_json)
		printf("%-24s %-8s %-21s %-21s %s\n", "NAME", "ROLE", "CREATED", "EXPIRES",
		       "REVOKED");
	wdb_each(t, WDB_APITOKEN, NULL, each_token, arr);
	wdb_abort(t);
	if (ctl_json)
		ctl_emit(json_pack("{s:o}", "tokens", arr));
	else
		json_decref(arr);
	return 0;
}

int ctl_cmd_api(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[0], "token") != 0)
		ctl_usage_die("api: use api token add|list|revoke");
	if (strcmp(argv[1], "add") == 0)
		return token_add(argc - 2, argv + 2);
	if (strcmp(argv[1], "list") == 0)
		return token_list(argc - 2, argv + 2);
	if (strcmp(argv[1], "revoke") == 0)
		return token_revoke(argc - 2, argv + 2);
	ctl_usage_die("api token: unknown subcommand '%s'", argv[1]);
}
