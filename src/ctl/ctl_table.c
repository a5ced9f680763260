/* SPDX-License-Identifier: MIT */
/* gslbctl service, node and weight: the weight table the daemon answers
 * from.  Each change is one audited transaction; the store rebuilds the
 * plans it touches in the same transaction (store/weightdb.h). */
#include "ctl/ctl.h"
#include "common/num.h"
#include "ctl/ctl_steer.h"
#include "common/util.h"
#include "gslb/policy.h"
#include "probe/probe.h"
#include "store/plan.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* service ----------------------------------------------------------- */

static const char *const profile_set[] = { "probe", "four", "default", NULL };
static const char *const table_subs[] = { "add", "set", "del", "show", NULL };

/* Whether @v is a member of the NULL-terminated @set. */
static int is_sub(const char *v, const char *const *set)
{
	for (; *set; set++)
		if (strcmp(v, *set) == 0)
			return 1;
	return 0;
}

/* A service as the read commands show it (gslbctl(8), JSON OUTPUT):
 * every field present, defaults spelled out. */
static json_t *service_view(json_t *s)
{
	json_t *v = json_object();
	static const char *const keys[] = { "name", "ttl", "short_ttl", "answers",
	                                    "all_down", "max_failure_rate", "probe_budget", NULL };
	for (const char *const *k = keys; *k; k++)
		json_object_set_new(v, *k, ctl_field(s, *k));
	json_object_set_new(v, "sticky", json_boolean(json_is_true(json_object_get(s, "sticky"))));
	json_object_set_new(v, "shadow", json_boolean(json_is_true(json_object_get(s, "shadow"))));
	const char *pf = json_string_value(json_object_get(s, "profile"));
	json_object_set_new(v, "profile", json_string(pf ? pf : "default"));
	json_object_set_new(v, "score_weights", ctl_score_view(s));
	return v;
}

static int service_list(void)
{
	json_t *views = ctl_list(WDB_SERVICE, service_view);
	size_t i;
	json_t *s;
	if (ctl_json) {
		ctl_emit(json_pack("{s:o}", "services", views));
		return 0;
	}
	printf("%-36s %6s %6s %7s %-8s %-6s %-6s %s\n", "SERVICE", "TTL",
	       "SHORT", "ANSWERS", "ALL-DOWN", "STICKY", "SHADOW", "PROFILE");
	json_array_foreach(views, i, s)
		printf("%-36s %6lld %6lld %7lld %-8s %-6s %-6s %s\n",
		       json_string_value(json_object_get(s, "name")),
		       json_integer_value(json_object_get(s, "ttl")),
		       json_integer_value(json_object_get(s, "short_ttl")),
		       json_integer_value(json_object_get(s, "answers")),
		       json_string_value(json_object_get(s, "all_down")),
		       json_is_true(json_object_get(s, "sticky")) ? "yes" : "no",
		       json_is_true(json_object_get(s, "shadow")) ? "yes" : "no",
		       json_string_value(json_object_get(s, "profile")));
	json_decref(views);
	return 0;
}

/* Commits delete @rc of store/edit.h (its words @what, or its reason
 * @err): the same guards and texts as the API's DELETE. */
static int commit_del(wdb_txn_t *t, int rc, const char *what, const char *err)
{
	if (rc == WDB_EDIT_STORE)
		ctl_die("%s; nothing was changed", err);
	if (rc)
		ctl_die("%s", err);
	ctl_commit(t, what);
	return 0;
}

/* Deletes service @name (@old, which it takes) in @t, its rows with it. */
static int service_del(wdb_txn_t *t, const char *name, json_t *old)
{
	char what[1200], err[1400];
	json_decref(old);
	return commit_del(t, wdb_service_delete(t, name, what, sizeof(what), err,
	                                        sizeof(err)), what, err);
}

/* Applies the options of `service add|set` (@argc at @argv, after the
 * name) to the service object @s. */
static void service_opts(json_t *s, const char *sub, int argc, char **argv)
{
	for (int i = 0; i < argc; i++) {
		const char *o = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(o, "--sticky") == 0) {
			json_object_set_new(s, "sticky", json_true());
			continue;
		}
		if (strcmp(o, "--no-sticky") == 0) {
			json_object_set_new(s, "sticky", json_false());
			continue;
		}
		if (strcmp(o, "--shadow") == 0 || strcmp(o, "--no-shadow") == 0) {
			/* S2-9: health verdicts are computed and logged but do
			 * not change this service's answers. */
			json_object_set_new(s, "shadow", json_boolean(o[2] == 's'));
			continue;
		}
		if (!v)
			ctl_die("service %s: %s needs a value", sub, o);
		i++;
		if (strcmp(o, "--profile") == 0) {
			/* The score profile of the nodes this service uses
			 * (S0-6 or S2-2); "default" follows health.profile. */
			if (strcmp(ctl_one_of(o, v, profile_set), "default") == 0)
				json_object_del(s, "profile");
			else
				json_object_set_new(s, "profile", json_string(v));
		} else if (strcmp(o, "--ttl") == 0)
			json_object_set_new(s, "ttl", json_integer(ctl_parse_num(o, v, 0, 604800)));
		else if (strcmp(o, "--short-ttl") == 0)
			json_object_set_new(s, "short_ttl", json_integer(ctl_parse_num(o, v, 0, 604800)));
		else if (strcmp(o, "--answers") == 0)
			json_object_set_new(s, "answers",
			                    json_integer(ctl_parse_num(o, v, 1, POLICY_MAX_ANSWERS)));
		else if (strcmp(o, "--max-failure-rate") == 0) {
			/* The service's SLA on the pushed failure rate, in
			 * percent (S3-5); "default" follows
			 * health.failure-rate. */
			static const num_range_t pct = { 0, 100, 0, NULL, NULL };
			double fr;
			if (strcmp(v, "default") == 0)
				json_object_del(s, "max_failure_rate");
			else if (num_parse(v, &pct, &fr, NULL))
				ctl_die("service %s: --max-failure-rate %s: give a percentage "
				        "from 0 to 100, or default", sub, v);
			else
				json_object_set_new(s, "max_failure_rate", json_real(fr));
		} else if (strcmp(o, "--all-down") == 0)
			json_object_set_new(s, "all_down", json_string(ctl_one_of(o, v, ctl_all_down_set)));
		else if (!ctl_steer_service_opt(s, sub, o, v) && !ctl_score_service_opt(s, sub, o, v))
			ctl_usage_die("service %s: unknown option '%s'", sub, o);
	}
}

/* What `service` and `node` share: their names, their views and the
 * fields that show prints, and their deletes. */
typedef struct {
	const char *what;                 /* "service" or "node" */
	const char *name_is;              /* "service name", "node id" */
	int (*list)(void);
	json_t *(*view)(json_t *);
	const char *const *keys;          /* show's fields */
	int (*del)(wdb_txn_t *t, const char *name, json_t *old);
} object_cmd_t;

/* `service|node SUB ...` up to the name: list done here (its status in
 * *@rc, returns 1); otherwise SUB checked and its name present
 * (returns 0). */
static int object_head(const object_cmd_t *o, int argc, char **argv, int *rc)
{
	char cmd[32];
	if (argc < 1)
		ctl_die("%s: missing subcommand (add, set, del, show, list)", o->what);
	const char *sub = argv[0];
	if (strcmp(sub, "list") == 0) {
		snprintf(cmd, sizeof(cmd), "%s list", o->what);
		ctl_no_more_args(cmd, argc, argv, 1);
		*rc = o->list();
		return 1;
	}
	if (!is_sub(sub, table_subs))
		ctl_usage_die("%s: unknown subcommand '%s' (add, set, del, show, list)",
		              o->what, sub);
	if (argc < 2)
		ctl_die("%s %s: missing %s", o->what, sub, o->name_is);
	return 0;
}

/* `service|node SUB NAME` with the stored object @old (NULL: none) in
 * @t: show and del done here (their status in *@rc, returns -1); for
 * add and set, @old checked absent or present (returns whether SUB is
 * add). */
static int object_sub(const object_cmd_t *o, wdb_txn_t *t, const char *sub,
                      const char *name, json_t *old, int argc, char **argv,
                      int *rc)
{
	char cmd[32];
	snprintf(cmd, sizeof(cmd), "%s %s", o->what, sub);
	if (strcmp(sub, "show") == 0) {
		ctl_no_more_args(cmd, argc, argv, 2);
		if (!old)
			ctl_die("%s %s does not exist", o->what, name);
		wdb_abort(t);
		*rc = ctl_show(o->what, o->view(old), o->keys);
		json_decref(old);
		return -1;
	}
	if (strcmp(sub, "del") == 0) {
		ctl_no_more_args(cmd, argc, argv, 2);
		*rc = o->del(t, name, old);
		return -1;
	}
	int add = strcmp(sub, "add") == 0;
	if (!add && strcmp(sub, "set") != 0)
		ctl_usage_die("%s: unknown subcommand '%s'", o->what, sub);
	if (add && old)
		ctl_die("%s %s already exists (use '%s set')", o->what, name, o->what);
	if (!add && !old)
		ctl_die("%s %s does not exist (use '%s add')", o->what, name, o->what);
	return add;
}

int ctl_cmd_service(int argc, char **argv)
{
	static const char *const keys[] = { "name", "ttl", "short_ttl", "answers",
		"all_down", "sticky", "shadow", "profile", "score_weights", "max_failure_rate",
		"probe_budget", NULL };
	static const object_cmd_t o = { "service", "service name", service_list,
	                                service_view, keys, service_del };
	int rc;
	if (object_head(&o, argc, argv, &rc))
		return rc;
	const char *sub = argv[0];
	char name[1100];
	ctl_service_name(argv[1], name, sizeof(name));
	wdb_txn_t *t = strcmp(sub, "show") == 0 ? ctl_begin_read() : ctl_begin();
	json_t *old = wdb_get(t, WDB_SERVICE, name);
	int add = object_sub(&o, t, sub, name, old, argc, argv, &rc);
	if (add < 0)
		return rc;
	if (add)
		ctl_check_unclaimed("service add", name);
	json_t *s = old ? json_deep_copy(old) : json_pack("{s:s, s:i, s:i, s:i, s:s, s:b, s:b}",
		"name", name, "ttl", 30, "short_ttl", 10, "answers", 1,
		"all_down", "open", "sticky", 0, "shadow", 0);
	json_decref(old);
	service_opts(s, sub, argc - 2, argv + 2);
	char cmd[32];
	snprintf(cmd, sizeof(cmd), "service %s", sub);
	ctl_nearest_check(s, cmd);
	if (json_integer_value(json_object_get(s, "short_ttl")) >
	    json_integer_value(json_object_get(s, "ttl")))
		ctl_die("service %s: --short-ttl %lld is longer than --ttl %lld", name,
		    json_integer_value(json_object_get(s, "short_ttl")),
		    json_integer_value(json_object_get(s, "ttl")));
	ctl_set(t, WDB_SERVICE, name, s);
	json_decref(s);
	char what[1200];
	snprintf(what, sizeof(what), "service %s %s", sub, name);
	ctl_commit(t, what);
	return 0;
}

/* node ------------------------------------------------------------- */

static void print_node_row(json_t *n)
{
	char addrs[512];
	ctl_join(json_object_get(n, "addrs"), addrs, sizeof(addrs));
	const char *cname = json_string_value(json_object_get(n, "cname"));
	printf("%-20s %-10s %-8s %-8s %-6s %8lld  %s\n",
	       json_string_value(json_object_get(n, "id")),
	       json_string_value(json_object_get(n, "region")),
	       json_string_value(json_object_get(n, "isp")),
	       json_string_value(json_object_get(n, "pool")),
	       json_string_value(json_object_get(n, "admin")),
	       json_integer_value(json_object_get(n, "capacity")),
	       cname ? cname : addrs);
}

/* A node as the read commands show it (gslbctl(8), JSON OUTPUT). */
static json_t *node_view(json_t *n)
{
	json_t *v = json_object();
	static const char *const keys[] = { "id", "cname", "region", "isp",
	                                    "capacity", "pool", "admin", "probe_budget", NULL };
	for (const char *const *k = keys; *k; k++)
		json_object_set_new(v, *k, ctl_field(n, *k));
	json_t *a = json_object_get(n, "addrs"), *p = json_object_get(n, "probes");
	json_object_set_new(v, "addrs", json_is_array(a) ? json_incref(a) : json_array());
	json_object_set_new(v, "probes", json_is_array(p) ? json_incref(p) : json_array());
	json_int_t su = json_integer_value(json_object_get(n, "short_until"));
	ctl_set_time(v, "short_until", su > time(NULL) ? su : 0);
	return v;
}

static int node_list(void)
{
	json_t *views = ctl_list(WDB_NODE, node_view);
	size_t i;
	json_t *n;
	if (ctl_json) {
		ctl_emit(json_pack("{s:o}", "nodes", views));
		return 0;
	}
	printf("%-20s %-10s %-8s %-8s %-6s %8s  %s\n", "NODE", "REGION",
	       "ISP", "POOL", "ADMIN", "CAPACITY", "ADDRESSES");
	json_array_foreach(views, i, n)
		print_node_row(n);
	json_decref(views);
	return 0;
}

/* Deletes node @id (@old, which it takes) in @t, unless a row names it. */
static int node_del(wdb_txn_t *t, const char *id, json_t *old)
{
	char what[300], err[1400];
	json_decref(old);
	return commit_del(t, wdb_node_delete(t, id, what, sizeof(what), err,
	                                     sizeof(err)), what, err);
}

/* --allow-special was given: addresses no client can use are kept (a
 * lab). */
static int allow_special;

/* Appends --addr @v of node @id to *@addrs (created on first use). */
static void node_addr(const char *id, const char *v, json_t **addrs)
{
	struct in6_addr a6;
	struct in_addr a4;
	if (inet_pton(AF_INET, v, &a4) != 1 && inet_pton(AF_INET6, v, &a6) != 1)
		ctl_die("node %s: --addr %s is not an IPv4 or IPv6 address", id, v);
	ctl_check_addr(id, v, *addrs, allow_special);
	if (!*addrs)
		*addrs = json_array();
	size_t fam = 0, j;
	json_t *a;
	int v6 = strchr(v, ':') != NULL;
	json_array_foreach(*addrs, j, a)
		fam += (strchr(json_string_value(a), ':') != NULL) == v6;
	if (fam >= PLAN_MAX_ADDRS)
		ctl_die("node %s: at most %d addresses per family", id, PLAN_MAX_ADDRS);
	json_array_append_new(*addrs, json_string(v));
}

/* Appends --probe @v of node @id, in canonical form, to *@probes. */
static void node_probe(const char *id, const char *v, json_t **probes)
{
	probe_spec_t ps;
	char perr[300], text[700];
	if (probe_parse(v, ctl_hc.interval, ctl_hc.timeout, &ps, perr, sizeof(perr)))
		ctl_die("node %s: --probe: %s", id, perr);
	probe_format(&ps, text, sizeof(text));
	if (!*probes)
		*probes = json_array();
	if (json_array_size(*probes) >= 3)
		ctl_die("node %s: at most 3 probes per node", id);
	json_array_append_new(*probes, json_string(text));
}

/* The options of `node add|set` that set one field of node @n (@o with
 * value @v); --addr, --probe and --cname collect into the caller's
 * lists, the others change @n at once. */
static void node_opt(json_t *n, const char *sub, const char *id, const char *o,
                     const char *v, json_t **addrs, json_t **probes,
                     const char **cname)
{
	if (strcmp(o, "--addr") == 0) {
		node_addr(id, v, addrs);
	} else if (strcmp(o, "--cname") == 0) {
		uint8_t w[256];
		if (!dname_from_str(v, w) || w[0] == 0)
			ctl_die("node %s: --cname %s is not a valid domain name", id, v);
		*cname = v;
	} else if (strcmp(o, "--region") == 0) {
		if (!ctl_valid_word(v, 0))
			ctl_die("node %s: --region %s: use a short lowercase name like cn-bj", id, v);
		json_object_set_new(n, "region", json_string(v));
	} else if (strcmp(o, "--isp") == 0) {
		if (!ctl_valid_word(v, 0))
			ctl_die("node %s: --isp %s: use a short lowercase name like ctcc", id, v);
		json_object_set_new(n, "isp", json_string(v));
	} else if (strcmp(o, "--capacity") == 0) {
		json_object_set_new(n, "capacity",
		                    json_integer(ctl_parse_num(o, v, 0, 1000000000)));
	} else if (strcmp(o, "--pool") == 0) {
		json_object_set_new(n, "pool", json_string(ctl_one_of(o, v, ctl_pool_set)));
	} else if (strcmp(o, "--admin") == 0) {
		char err[200];
		if (wdb_node_admin(n, o, v, time(NULL), ctl_hc.settle, err, sizeof(err)))
			ctl_die("%s", err);
	} else if (strcmp(o, "--probe") == 0) {
		node_probe(id, v, probes);
	} else if (!ctl_steer_node_opt(n, id, o, v) && !ctl_probe_budget_opt(n, "node", o, v)) {
		ctl_usage_die("node %s: unknown option '%s'", sub, o);
	}
}

/* Applies the options of `node add|set` (@argc at @argv, after the id)
 * to node object @n and checks that it can answer. */
static void node_opts(json_t *n, const char *sub, const char *id, int argc,
                      char **argv)
{
	json_t *addrs = NULL, *probes = NULL;
	const char *cname = NULL;
	for (int i = 0; i < argc; i++)   /* before the --addr it allows */
		allow_special |= strcmp(argv[i], "--allow-special") == 0;
	for (int i = 0; i < argc; i++) {
		const char *o = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(o, "--no-probes") == 0) {
			json_object_set_new(n, "probes", json_array());
			continue;
		}
		if (strcmp(o, "--allow-special") == 0)
			continue;
		if (!v)
			ctl_die("node %s: %s needs a value", sub, o);
		i++;
		node_opt(n, sub, id, o, v, &addrs, &probes, &cname);
	}
	if (addrs && cname)
		ctl_die("node %s: give either --addr or --cname, not both", id);
	if (probes)
		json_object_set_new(n, "probes", probes);
	if (addrs) {
		json_object_set_new(n, "addrs", addrs);
		json_object_set_new(n, "cname", json_null());
	} else if (cname) {
		char buf[1100];
		uint8_t w[256];
		dname_from_str(cname, w);
		dname_to_str(w, buf, sizeof(buf));
		json_object_set_new(n, "cname", json_string(buf));
		json_object_set_new(n, "addrs", json_array());
	}
	if (!json_array_size(json_object_get(n, "addrs")) &&
	    !json_is_string(json_object_get(n, "cname")))
		ctl_die("node %s: needs --addr IP (repeatable) or --cname TARGET", id);
}

int ctl_cmd_node(int argc, char **argv)
{
	static const char *const keys[] = { "id", "addrs", "cname", "region", "isp",
		"capacity", "pool", "admin", "probe_budget", "probes", "short_until", NULL };
	static const object_cmd_t o = { "node", "node id", node_list, node_view,
	                                keys, node_del };
	int rc;
	if (object_head(&o, argc, argv, &rc))
		return rc;
	const char *sub = argv[0];
	const char *id = argv[1];
	if (!ctl_valid_node_id(id))
		ctl_die("node id '%s': use 1 to 63 letters, digits, '-', '_' or '.'", id);
	wdb_txn_t *t = strcmp(sub, "show") == 0 ? ctl_begin_read() : ctl_begin();
	json_t *old = wdb_get(t, WDB_NODE, id);
	int add = object_sub(&o, t, sub, id, old, argc, argv, &rc);
	if (add < 0)
		return rc;
	json_t *n = old ? json_deep_copy(old) : json_pack("{s:s, s:[], s:n, s:s, s:s, s:i, s:s, s:s}",
		"id", id, "addrs", "cname", "region", "*", "isp", "*", "capacity", 0,
		"pool", "primary", "admin", "auto");
	node_opts(n, sub, id, argc - 2, argv + 2);
	/* Where the node is: a name clients are located in, when the geoip
	 * sources name any (a node set that leaves it alone does not check
	 * it again). */
	for (int f = 0; f < 2; f++) {
		const char *k = f ? "isp" : "region";
		const char *v = json_string_value(json_object_get(n, k));
		if (v && !json_equal(json_object_get(old, k), json_object_get(n, k)) &&
		    ctl_area_geo(t, add ? "node add" : "node set"))
			ctl_check_area(t, add ? "node add" : "node set", f, v);
	}
	json_decref(old);
	ctl_set(t, WDB_NODE, id, n);
	json_decref(n);
	char what[300];
	snprintf(what, sizeof(what), "node %s %s", sub, id);
	ctl_commit(t, what);
	return 0;
}

/* weight ----------------------------------------------------------- */

static void row_opts(const char *cmd, int *i, int argc, char **argv,
                     const char **region, const char **isp)
{
	while (*i < argc && strncmp(argv[*i], "--", 2) == 0) {
		const char *o = argv[*i];
		if (*i + 1 >= argc)
			ctl_die("%s: %s needs a value", cmd, o);
		const char *v = argv[*i + 1];
		if (strcmp(o, "--region") == 0) {
			if (!ctl_valid_word(v, 1))
				ctl_die("%s: --region %s: use a short lowercase name or *", cmd, v);
			*region = v;
		} else if (strcmp(o, "--isp") == 0) {
			if (!ctl_valid_word(v, 1))
				ctl_die("%s: --isp %s: use a short lowercase name or *", cmd, v);
			*isp = v;
		} else {
			ctl_usage_die("%s: unknown option '%s'", cmd, o);
		}
		*i += 2;
	}
}

/* A weight row as the read commands show it (gslbctl(8), JSON
 * OUTPUT): the weights as a list, in the order they were set. */
static json_t *row_view(json_t *row)
{
	json_t *ws = json_array();
	const char *id;
	json_t *w;
	json_object_foreach(json_object_get(row, "weights"), id, w)
		json_array_append_new(ws, json_pack("{s:s, s:O}", "node", id, "weight", w));
	return json_pack("{s:o, s:o, s:o, s:o}", "service", ctl_field(row, "service"),
	                 "region", ctl_field(row, "region"), "isp", ctl_field(row, "isp"),
	                 "weights", ws);
}

static void print_rows(json_t *views)
{
	printf("%-36s %-10s %-8s %s\n", "SERVICE", "REGION", "ISP", "WEIGHTS");
	size_t i, k;
	json_t *r, *w;
	json_array_foreach(views, i, r) {
		printf("%-36s %-10s %-8s ",
		       json_string_value(json_object_get(r, "service")),
		       json_string_value(json_object_get(r, "region")),
		       json_string_value(json_object_get(r, "isp")));
		json_array_foreach(json_object_get(r, "weights"), k, w)
			printf("%s%s=%lld", k ? " " : "",
			       json_string_value(json_object_get(w, "node")),
			       json_integer_value(json_object_get(w, "weight")));
		putchar('\n');
	}
}

/* weight list [SERVICE] and weight show SERVICE [--region R] [--isp I]. */
static int weight_read(int argc, char **argv)
{
	int show = strcmp(argv[0], "show") == 0;
	char name[1100], prefix[1300] = "";
	const char *region = "*", *isp = "*";
	if (show && argc < 2)
		ctl_die("weight show: missing service name");
	if (argc > 1) {
		ctl_service_name(argv[1], name, sizeof(name));
		wdb_row_prefix(prefix, sizeof(prefix), name);
	}
	int i = 2;
	if (show)
		row_opts("weight show", &i, argc, argv, &region, &isp);
	if (i < argc)
		ctl_die("weight %s: unexpected argument '%s'", argv[0], argv[i]);
	wdb_txn_t *t = ctl_begin_read();
	json_t *all;
	if (show) {
		wdb_row_key(prefix, sizeof(prefix), name, region, isp);
		json_t *row = wdb_get(t, WDB_WEIGHT, prefix);
		if (!row)
			ctl_die("weight row %s --region %s --isp %s does not exist", name, region, isp);
		all = json_array();
		json_array_append_new(all, row);
	} else {
		all = json_array();
		wdb_each(t, WDB_WEIGHT, *prefix ? prefix : NULL, ctl_collect_value, all);
	}
	wdb_abort(t);
	json_t *views = ctl_views(all, row_view);
	json_decref(all);
	if (ctl_json)
		ctl_emit(show ? json_pack("{s:O}", "row", json_array_get(views, 0))
		              : json_pack("{s:O}", "rows", views));
	else
		print_rows(views);
	json_decref(views);
	return 0;
}

int ctl_cmd_weight(int argc, char **argv)
{
	if (argc < 1)
		ctl_die("weight: missing subcommand (set, del, show, list)");
	const char *sub = argv[0];
	if (strcmp(sub, "list") == 0 || strcmp(sub, "show") == 0) {
		if (strcmp(sub, "list") == 0)
			ctl_no_more_args("weight list", argc, argv, 2);
		return weight_read(argc, argv);
	}
	int set = strcmp(sub, "set") == 0;
	if (!set && strcmp(sub, "del") != 0)
		ctl_usage_die("weight: unknown subcommand '%s' (set, del, list)", sub);
	if (argc < 2)
		ctl_die("weight %s: missing service name", sub);
	char name[1100];
	ctl_service_name(argv[1], name, sizeof(name));
	const char *region = "*", *isp = "*";
	int i = 2;
	row_opts("weight", &i, argc, argv, &region, &isp);
	wdb_txn_t *t = ctl_begin();
	json_t *svc = wdb_get(t, WDB_SERVICE, name);
	if (!svc)
		ctl_die("service %s does not exist (add it with 'service add')", name);
	json_decref(svc);
	char key[1300];
	wdb_row_key(key, sizeof(key), name, region, isp);
	char what[1500];
	if (!set) {
		ctl_no_more_args("weight del", argc, argv, i);
		char err[1400];
		return commit_del(t, wdb_weight_delete(t, key, what, sizeof(what), err,
		                                       sizeof(err)), what, err);
	}
	if (i >= argc)
		ctl_die("weight set: give at least one NODE=WEIGHT");
	ctl_check_area(t, "weight set", 0, region);
	ctl_check_area(t, "weight set", 1, isp);
	json_t *weights = json_object();
	for (; i < argc; i++) {
		char *eq = strchr(argv[i], '=');
		if (!eq)
			ctl_die("weight set: '%s' is not NODE=WEIGHT", argv[i]);
		*eq = 0;
		const char *id = argv[i];
		if (!ctl_valid_node_id(id))
			ctl_die("weight set: '%s' is not a valid node id", id);
		char opt[100];
		snprintf(opt, sizeof(opt), "weight of %s", id);
		long w = ctl_parse_num(opt, eq + 1, 0, 1000000);
		json_t *node = wdb_get(t, WDB_NODE, id);
		if (!node)
			ctl_die("weight set: node %s does not exist (add it with 'node add')", id);
		json_decref(node);
		if (json_object_get(weights, id))
			ctl_die("weight set: node %s is given twice", id);
		if (json_object_size(weights) >= PLAN_MAX_NODES)
			ctl_die("weight set: at most %d nodes per row", PLAN_MAX_NODES);
		json_object_set_new(weights, id, json_integer(w));
	}
	json_t *row = json_pack("{s:s, s:s, s:s, s:o}", "service", name,
	                        "region", region, "isp", isp, "weights", weights);
	ctl_set(t, WDB_WEIGHT, key, row);
	json_decref(row);
	snprintf(what, sizeof(what), "weight set %s region=%s isp=%s", name, region, isp);
	ctl_commit(t, what);
	return 0;
}

