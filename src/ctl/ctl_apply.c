/* SPDX-License-Identifier: MIT */
/* gslbctl export and apply: the whole weight table as one JSON document,
 * and making the store equal to such a document in one audited change
 * (the checks and the write: store/apply.h, shared with the HTTP API). */
#include "ctl/ctl.h"
#include "store/apply.h"
#include "store/change.h"
#include "store/keys.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The operator's part of each stored object of one kind, into an array
 * (export) or an object by key (apply's view of the store). */
typedef struct {
	int kind;
	json_t *out;
} doc_collect_t;

static int doc_collect(const char *key, json_t *val, void *arg)
{
	doc_collect_t *c = arg;
	json_t *v = wdb_doc_object(c->kind, val);
	if (json_is_array(c->out))
		json_array_append_new(c->out, v);
	else
		json_object_set_new(c->out, key, v);
	return 0;
}

/* The objects of kind @k as a document holds them, in @out (an array or
 * an object). */
static void doc_read(wdb_txn_t *t, int k, json_t *out)
{
	doc_collect_t c = { k, out };
	wdb_each(t, (wdb_kind_t)k, NULL, doc_collect, &c);
}

static json_t *export_all(wdb_txn_t *t)
{
	json_t *out = json_pack("{s:i}", "version", WDB_FORMAT_VERSION);
	/* The steering engine's shares are derived, not the operator's
	 * table: wdb_doc_object() leaves them out. */
	for (int k = 0; k < 3; k++) {
		json_t *list = json_array();
		doc_read(t, k, list);
		json_object_set_new(out, wdb_doc_lists[k], list);
	}
	return out;
}

int ctl_cmd_export(int argc, char **argv)
{
	ctl_no_more_args("export", argc, argv, 0);
	wdb_txn_t *t = ctl_begin_read();
	json_t *all = export_all(t);
	wdb_abort(t);
	ctl_print_json(all);
	json_decref(all);
	return 0;
}

/* Prints one key of @diff's list @what of kind @k as a line "  SIGN
 * KIND NAME" to @f; a weight row as "SERVICE REGION/ISP". */
static void print_key(FILE *f, char sign, int k, const char *key)
{
	static const char *const kind[] = { "service", "node", "weight" };
	wdb_row_parts_t p;
	if (k == WDB_WEIGHT && wdb_row_split(key, strlen(key), &p) == 0)
		fprintf(f, "  %c weight %.*s %.*s/%.*s\n", sign, (int)p.svc_len, p.svc,
		        (int)p.region_len, p.region, (int)p.isp_len, p.isp);
	else
		fprintf(f, "  %c %s %s\n", sign, kind[k], key);
}

/* Prints the lines of @diff under @what ("added"...) with @sign. */
static void print_diff_part(FILE *f, json_t *diff, const char *what, char sign)
{
	for (int k = 0; k < 3; k++) {
		size_t i;
		json_t *key;
		json_array_foreach(json_object_get(json_object_get(diff, what),
		                                   wdb_doc_lists[k]), i, key)
			print_key(f, sign, k, json_string_value(key));
	}
}

/* Reads @path ("-": standard input) into @want (kind -> {store key:
 * object}), validated and with the defaults filled in (store/apply.h);
 * dies naming the first problem, and the document as @file. */
static void apply_read(const wdb_apply_opts_t *op, const char *path,
                       const char *file, json_t *want[3])
{
	json_error_t je;
	json_t *in = strcmp(path, "-") == 0 ? json_loadf(stdin, 0, &je)
	                                    : json_load_file(path, 0, &je);
	if (!in && je.line > 0)
		ctl_die("apply: %s:%d: %s", file, je.line, je.text);
	if (!in)
		ctl_die("apply: %s", je.text);
	wdb_apply_err_t e;
	if (wdb_apply_read(op, in, file, want, &e))
		ctl_die("%s", e.msg);
	json_decref(in);
}

int ctl_cmd_apply(int argc, char **argv)
{
	int dry = 0, force = 0, allow_special = 0;
	const char *file = NULL;
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--dry-run") == 0)
			dry = 1;
		else if (strcmp(argv[i], "--force") == 0)
			force = 1;
		else if (strcmp(argv[i], "--allow-special") == 0)
			allow_special = 1;
		else if (strncmp(argv[i], "--", 2) == 0)
			ctl_usage_die("apply: unknown option '%s'", argv[i]);
		else if (file)
			ctl_usage_die("apply: unexpected argument '%s' (give one FILE)", argv[i]);
		else
			file = argv[i];
	}
	if (!file)
		ctl_usage_die("apply: give one FILE (JSON, as written by export; - for "
		    "standard input)");
	json_t *want[3];
	const char *path = file;
	if (strcmp(path, "-") == 0)
		file = ctl_stdin_name();
	wdb_apply_opts_t op;
	wdb_apply_err_t e;
	ctl_apply_opts(&op, allow_special);
	apply_read(&op, path, file, want);
	wdb_txn_t *t = dry ? ctl_begin_read() : ctl_begin();
	json_t *have = json_object(), *wdoc = json_object();
	for (int k = 0; k < 3; k++) {
		json_t *h = json_object();
		doc_read(t, k, h);
		json_object_set_new(have, wdb_doc_lists[k], h);
		json_object_set_new(wdoc, wdb_doc_lists[k], want[k]);
	}
	json_t *diff = wdb_table_diff(have, wdoc);
	size_t nadd = wdb_diff_count(diff, "added"), nchg = wdb_diff_count(diff, "changed"),
	       ndel = wdb_diff_count(diff, "deleted");
	char why[1000];
	int risky = wdb_diff_needs_force(diff, json_object_size(json_object_get(have, "weights")),
	                                 why, sizeof(why));
	json_t *warnings = json_array();
	int rc = wdb_apply_check_areas(&op, ctl_area_known(t, "apply"), file, diff,
	                               want, warnings, &e);
	ctl_warnings(warnings);
	json_decref(warnings);
	if (rc)
		ctl_die("%s", e.msg);
	if (dry) {
		wdb_abort(t);
		printf("apply %s: would add %zu, change %zu, delete %zu object(s)%s%s; "
		       "--dry-run: nothing was written\n", file, nadd, nchg, ndel,
		       risky && !force ? "; needs --force: it deletes " : "", risky && !force ? why : "");
		print_diff_part(stdout, diff, "added", '+');
		print_diff_part(stdout, diff, "changed", '~');
		print_diff_part(stdout, diff, "deleted", '-');
		/* The exit code of the apply it shows: refused without --force. */
		if (risky && !force)
			ctl_exit(1);
	} else if (risky && !force) {
		/* A truncated download or the wrong file must not empty the
		 * table: say what would go and change nothing. */
		fprintf(stderr, "gslbctl: apply: %s would delete %s; nothing was changed (check the file, "
		        "or give --force). It would delete:\n", file, why);
		print_diff_part(stderr, diff, "deleted", '-');
		ctl_exit(1);
	} else if (!nadd && !nchg && !ndel) {
		wdb_abort(t);
		printf("apply: the store already equals %s; nothing to change\n", file);
	} else {
		/* Make the store equal to the file (store/apply.h). */
		if (wdb_apply_write(ctl_db, t, diff, want, &e))
			ctl_die("%s", e.msg);
		char what[1200];
		snprintf(what, sizeof(what), "apply %s (+%zu ~%zu -%zu)", file, nadd, nchg, ndel);
		ctl_commit(t, what);
	}
	json_decref(diff);
	json_decref(have);
	json_decref(wdoc);
	return 0;
}
