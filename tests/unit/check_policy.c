/* SPDX-License-Identifier: MIT */
/* Answer plans and the pick: plan encode/decode round trips and malformed
 * plans (store/plan.h), the weighted draw, sticky rendezvous hashing
 * (S4-8), family filtering, fail-open picks and distinct answers
 * (gslb/policy.h).  Pure: no files, no store. */
#include "gslb/policy.h"
#include "store/plan.h"
#include "unit.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* Plan encoding ------------------------------------------------------- */

static json_t *g_nodes;   /* node id -> node object, for node_of() */

static json_t *node_of(const char *id, void *arg)
{
	(void)arg;
	return json_object_get(g_nodes, id);
}

/* Encodes row @row_text against the nodes of @nodes_text.  Returns 0 or
 * -1 (reason in @err); *@out is the caller's to free. */
static int encode(const char *nodes_text, const char *row_text, int shadow,
                  uint8_t **out, size_t *len, char *err, size_t errlen)
{
	json_error_t je;
	g_nodes = json_loads(nodes_text, 0, &je);
	ck_assert_msg(g_nodes != NULL, "nodes: %s", je.text);
	json_t *row = json_loads(row_text, 0, &je);
	ck_assert_msg(row != NULL, "row: %s", je.text);
	int rc = plan_encode(row, node_of, NULL, shadow, out, len, err, errlen);
	json_decref(row);
	json_decref(g_nodes);
	g_nodes = NULL;
	return rc;
}

static const plan_node_t *find_node(const plan_t *p, const char *id)
{
	for (unsigned i = 0; i < p->n; i++)
		if (p->node[i].id_len == strlen(id) &&
		    memcmp(p->node[i].id, id, p->node[i].id_len) == 0)
			return &p->node[i];
	return NULL;
}

static const char nodes_json[] =
	"{\"v4\": {\"addrs\": [\"192.0.2.1\", \"192.0.2.2\"], \"admin\": \"auto\","
	"          \"pool\": \"primary\", \"short_until\": 1700000000},"
	" \"dual\": {\"addrs\": [\"192.0.2.3\", \"2001:db8::3\"], \"admin\": \"auto\","
	"            \"pool\": \"primary\","
	"            \"health\": {\"effective_weight_pct\": 50,"
	"                         \"short_until\": 1800000000}},"
	" \"cdn\": {\"cname\": \"edge.other.example.\", \"addrs\": [],"
	"           \"admin\": \"auto\", \"pool\": \"primary\"},"
	" \"off\": {\"addrs\": [\"192.0.2.9\"], \"admin\": \"down\","
	"           \"pool\": \"primary\"},"
	" \"sick\": {\"addrs\": [\"2001:db8::9\"], \"admin\": \"auto\","
	"            \"pool\": \"primary\", \"health\": {\"usable\": false}}}";

static const char row_json[] =
	"{\"weights\": {\"v4\": 100, \"dual\": 80, \"cdn\": 7, \"off\": 10,"
	"              \"sick\": 20}}";

START_TEST(plan_round_trip)
{
	uint8_t *b;
	size_t len;
	char err[256];
	ck_assert_int_eq(encode(nodes_json, row_json, 0, &b, &len, err,
	                        sizeof(err)), 0);
	plan_t p;
	ck_assert_int_eq(plan_decode(b, len, &p), 0);
	ck_assert_uint_eq(p.n, 5);

	const plan_node_t *n = find_node(&p, "v4");
	ck_assert_ptr_nonnull(n);
	ck_assert_uint_eq(n->weight, 100);
	ck_assert_uint_eq(n->flags, PLAN_USABLE);
	ck_assert_uint_eq(n->idhash, plan_id_hash("v4", 2));
	ck_assert_uint_eq(n->n4, 2);
	ck_assert_uint_eq(n->n6, 0);
	ck_assert_uint_eq(n->cname_len, 0);
	ck_assert_uint_eq(n->short_until, 1700000000);
	static const uint8_t a4[8] = { 192, 0, 2, 1, 192, 0, 2, 2 };
	ck_assert_mem_eq(n->a4, a4, 8);

	/* Health halves the weight; its short-TTL deadline is the later. */
	n = find_node(&p, "dual");
	ck_assert_ptr_nonnull(n);
	ck_assert_uint_eq(n->weight, 40);
	ck_assert_uint_eq(n->flags, PLAN_USABLE);
	ck_assert_uint_eq(n->n4, 1);
	ck_assert_uint_eq(n->n6, 1);
	ck_assert_uint_eq(n->short_until, 1800000000);
	static const uint8_t a6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 3 };
	ck_assert_mem_eq(n->a6, a6, 16);

	n = find_node(&p, "cdn");
	ck_assert_ptr_nonnull(n);
	ck_assert_uint_eq(n->flags, PLAN_USABLE | PLAN_CNAME);
	ck_assert_uint_eq(n->weight, 7);
	ck_assert_uint_eq(n->n4 + n->n6, 0);
	static const uint8_t cname[] = "\x04" "edge" "\x05" "other"
	                               "\x07" "example";
	ck_assert_uint_eq(n->cname_len, sizeof(cname));
	ck_assert_mem_eq(n->cname, cname, sizeof(cname));

	/* Admin down and unhealthy: in the plan, not usable. */
	n = find_node(&p, "off");
	ck_assert_ptr_nonnull(n);
	ck_assert_uint_eq(n->flags & PLAN_USABLE, 0);
	n = find_node(&p, "sick");
	ck_assert_ptr_nonnull(n);
	ck_assert_uint_eq(n->flags & PLAN_USABLE, 0);
	ck_assert_uint_eq(n->n6, 1);
	ck_assert_uint_eq(policy_usable(&p), 3);

	/* Shadow mode (S2-9) leaves the health decisions out. */
	free(b);
	ck_assert_int_eq(encode(nodes_json, row_json, 1, &b, &len, err,
	                        sizeof(err)), 0);
	ck_assert_int_eq(plan_decode(b, len, &p), 0);
	ck_assert_uint_eq(find_node(&p, "dual")->weight, 80);
	ck_assert_uint_eq(find_node(&p, "dual")->short_until, 0);
	ck_assert_uint_eq(find_node(&p, "sick")->flags, PLAN_USABLE);
	ck_assert_uint_eq(find_node(&p, "off")->flags & PLAN_USABLE, 0);
	free(b);
}
END_TEST

START_TEST(plan_encode_rejects)
{
	uint8_t *b = NULL;
	size_t len;
	char err[256];
	ck_assert_int_eq(encode(nodes_json, "{\"weights\": {\"ghost\": 1}}", 0,
	                        &b, &len, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "unknown node 'ghost'"));
	ck_assert_int_eq(encode("{\"x\": {\"cname\": \"a..b\"}}",
	                        "{\"weights\": {\"x\": 1}}", 0, &b, &len, err,
	                        sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "bad CNAME"));
	/* More nodes than a plan holds. */
	char nodes[8192] = "{", row[8192] = "{\"weights\": {";
	for (int i = 0; i <= PLAN_MAX_NODES; i++) {
		char one[64];
		snprintf(one, sizeof(one), "%s\"n%d\": {\"addrs\": []}",
		         i ? "," : "", i);
		strcat(nodes, one);
		snprintf(one, sizeof(one), "%s\"n%d\": 1", i ? "," : "", i);
		strcat(row, one);
	}
	strcat(nodes, "}");
	strcat(row, "}}");
	ck_assert_int_eq(encode(nodes, row, 0, &b, &len, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "at most"));
}
END_TEST

START_TEST(plan_decode_rejects_malformed)
{
	uint8_t *b;
	size_t len;
	char err[256];
	ck_assert_int_eq(encode(nodes_json, row_json, 0, &b, &len, err,
	                        sizeof(err)), 0);
	plan_t p;
	uint8_t *c = malloc(len + 1);
	/* Every truncation. */
	for (size_t n = 0; n < len; n++) {
		memcpy(c, b, n);
		ck_assert_msg(plan_decode(c, n, &p) == -1, "%zu of %zu bytes", n, len);
	}
	/* Trailing garbage. */
	memcpy(c, b, len);
	c[len] = 0;
	ck_assert_int_eq(plan_decode(c, len + 1, &p), -1);
	/* An unknown version. */
	memcpy(c, b, len);
	c[0] = 0xff;
	ck_assert_int_eq(plan_decode(c, len, &p), -1);
	/* More nodes than a plan may hold. */
	memcpy(c, b, len);
	c[1] = PLAN_MAX_NODES + 1;
	ck_assert_int_eq(plan_decode(c, len, &p), -1);
	/* A node count that disagrees with the bytes. */
	c[1] = (uint8_t)(b[1] + 1);
	ck_assert_int_eq(plan_decode(c, len, &p), -1);
	c[1] = (uint8_t)(b[1] - 1);
	ck_assert_int_eq(plan_decode(c, len, &p), -1);
	/* The empty plan is valid. */
	uint8_t *e;
	size_t el;
	ck_assert_int_eq(encode("{}", "{\"weights\": {}}", 0, &e, &el, err,
	                        sizeof(err)), 0);
	ck_assert_int_eq(plan_decode(e, el, &p), 0);
	ck_assert_uint_eq(p.n, 0);
	free(e);
	free(c);
	free(b);
}
END_TEST

/* The pick ------------------------------------------------------------- */

static const uint8_t v4addr[4] = { 192, 0, 2, 1 };
static const uint8_t v6addr[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
static const uint8_t cname_wire[] = "\x03" "cdn" "\x07" "example";

/* Appends a node to @p: @fam 4, 6, 46 (both) or 0 (a CNAME node). */
static void add(plan_t *p, uint32_t idhash, uint32_t weight, int usable,
                int fam)
{
	plan_node_t *n = &p->node[p->n++];
	memset(n, 0, sizeof(*n));
	n->idhash = idhash;
	n->weight = weight;
	n->flags = usable ? PLAN_USABLE : 0;
	n->a4 = v4addr;
	n->a6 = v6addr;
	n->n4 = fam == 4 || fam == 46;
	n->n6 = fam == 6 || fam == 46;
	if (!fam) {
		n->flags |= PLAN_CNAME;
		n->cname = cname_wire;
		n->cname_len = sizeof(cname_wire);
	}
}

START_TEST(weighted_distribution)
{
	plan_t p = { 0 };
	add(&p, 1, 75, 1, 4);
	add(&p, 2, 25, 1, 4);
	uint64_t rng = 12345;
	unsigned count[2] = { 0 }, draws = 20000;
	for (unsigned i = 0; i < draws; i++) {
		uint8_t idx[1];
		ck_assert_uint_eq(policy_pick(&p, 1, 0, 0, 0, 0, &rng, idx), 1);
		count[idx[0]]++;
	}
	double share = 100.0 * count[0] / draws;
	ck_assert_msg(share > 72.0 && share < 78.0, "75%% node got %.1f%%", share);
	/* A weight of 0 never answers, not even failing open. */
	p.node[1].weight = 0;
	for (unsigned i = 0; i < 1000; i++) {
		uint8_t idx[2];
		ck_assert_uint_eq(policy_pick(&p, 2, 1, 0, 0, 0, &rng, idx), 1);
		ck_assert_uint_eq(idx[0], 0);
	}
}
END_TEST

/* The node (by id hash) a sticky client with @key gets. */
static uint32_t sticky_node(const plan_t *p, uint64_t key)
{
	uint8_t idx[1];
	uint64_t rng = 0;
	ck_assert_uint_eq(policy_pick(p, 1, 0, 1, key, 0, &rng, idx), 1);
	return p->node[idx[0]].idhash;
}

START_TEST(sticky_rendezvous)
{
	plan_t p = { 0 }, q = { 0 };
	for (uint32_t i = 1; i <= 5; i++)
		add(&p, 0x1000 + i * 7919, 100, 1, 4);
	/* The same plan without its third node. */
	for (unsigned i = 0; i < p.n; i++)
		if (i != 2)
			q.node[q.n++] = p.node[i];
	uint32_t gone = p.node[2].idhash;
	enum { KEYS = 4000 };
	unsigned on_gone = 0, moved = 0, per[5] = { 0 };
	for (uint64_t k = 0; k < KEYS; k++) {
		uint64_t key = k * 0x9E3779B97F4A7C15ull;
		uint32_t before = sticky_node(&p, key);
		/* The same key always gets the same node. */
		ck_assert_uint_eq(sticky_node(&p, key), before);
		for (unsigned i = 0; i < p.n; i++)
			per[i] += p.node[i].idhash == before;
		uint32_t after = sticky_node(&q, key);
		if (before == gone) {
			on_gone++;
			ck_assert_uint_ne(after, gone);
		} else if (after != before) {
			moved++;
		}
	}
	/* S4-8: only the removed node's clients move. */
	ck_assert_uint_eq(moved, 0);
	ck_assert_uint_gt(on_gone, 0);
	/* Equal weights: each node has about a fifth of the clients. */
	for (unsigned i = 0; i < 5; i++)
		ck_assert_msg(per[i] > KEYS / 5 * 8 / 10 && per[i] < KEYS / 5 * 12 / 10,
		              "node %u has %u of %d clients", i, per[i], KEYS);
	/* A node that stops being usable loses only its own clients too. */
	q = p;
	q.node[2].flags = 0;
	for (uint64_t k = 0; k < KEYS; k++) {
		uint64_t key = k * 0x9E3779B97F4A7C15ull;
		uint32_t before = sticky_node(&p, key);
		if (before != gone)
			ck_assert_uint_eq(sticky_node(&q, key), before);
	}
}
END_TEST

START_TEST(sticky_follows_weight)
{
	plan_t p = { 0 };
	add(&p, 11, 300, 1, 4);
	add(&p, 22, 100, 1, 4);
	unsigned heavy = 0, keys = 8000;
	for (uint64_t k = 0; k < keys; k++)
		heavy += sticky_node(&p, k * 0xD1B54A32D192ED03ull + 1) == 11;
	double share = 100.0 * heavy / keys;
	ck_assert_msg(share > 71.0 && share < 79.0, "75%% node got %.1f%%", share);
}
END_TEST

START_TEST(need_family)
{
	plan_t p = { 0 };
	add(&p, 1, 100, 1, 4);    /* IPv4 only */
	add(&p, 2, 100, 1, 6);    /* IPv6 only */
	add(&p, 3, 100, 1, 46);   /* both */
	add(&p, 4, 100, 1, 0);    /* CNAME: qualifies for either */
	uint64_t rng = 7;
	for (unsigned round = 0; round < 500; round++) {
		uint8_t idx[POLICY_MAX_ANSWERS];
		unsigned n = policy_pick(&p, 4, 0, round & 1, round, POLICY_NEED_V6,
		                         &rng, idx);
		ck_assert_uint_eq(n, 3);
		for (unsigned i = 0; i < n; i++)
			ck_assert_uint_ne(p.node[idx[i]].idhash, 1);
		n = policy_pick(&p, 4, 0, round & 1, round, POLICY_NEED_V4, &rng, idx);
		ck_assert_uint_eq(n, 3);
		for (unsigned i = 0; i < n; i++)
			ck_assert_uint_ne(p.node[idx[i]].idhash, 2);
		ck_assert_uint_eq(policy_pick(&p, 4, 0, 0, 0, 0, &rng, idx), 4);
	}
	/* No node has the family: nothing, not a wrong-family node. */
	plan_t v4only = { 0 };
	add(&v4only, 1, 100, 1, 4);
	uint8_t idx[1];
	ck_assert_uint_eq(policy_pick(&v4only, 1, 1, 0, 0, POLICY_NEED_V6, &rng,
	                              idx), 0);
}
END_TEST

START_TEST(fail_open_all)
{
	plan_t p = { 0 };
	add(&p, 1, 100, 0, 4);
	add(&p, 2, 100, 0, 4);
	uint64_t rng = 99;
	uint8_t idx[POLICY_MAX_ANSWERS];
	ck_assert_uint_eq(policy_usable(&p), 0);
	ck_assert_uint_eq(policy_pick(&p, 1, 0, 0, 0, 0, &rng, idx), 0);
	ck_assert_uint_eq(policy_pick(&p, 1, 0, 1, 42, 0, &rng, idx), 0);
	/* all: the unusable nodes answer as if healthy. */
	ck_assert_uint_eq(policy_pick(&p, 2, 1, 0, 0, 0, &rng, idx), 2);
	ck_assert_uint_eq(policy_pick(&p, 1, 1, 1, 42, 0, &rng, idx), 1);
	/* With one usable node, only it answers unless all is asked. */
	p.node[1].flags = PLAN_USABLE;
	for (unsigned i = 0; i < 200; i++) {
		ck_assert_uint_eq(policy_pick(&p, 2, 0, 0, 0, 0, &rng, idx), 1);
		ck_assert_uint_eq(idx[0], 1);
	}
}
END_TEST

START_TEST(distinct_answers)
{
	plan_t p = { 0 };
	for (uint32_t i = 0; i < 12; i++)
		add(&p, 100 + i, 1 + i * 10, 1, 4);
	uint64_t rng = 3;
	for (unsigned round = 0; round < 300; round++) {
		uint8_t idx[POLICY_MAX_ANSWERS];
		unsigned want = 1 + round % 12;
		unsigned n = policy_pick(&p, want, 0, round & 1, round * 31, 0, &rng,
		                         idx);
		/* Never more than asked, than there are, or than an answer
		 * holds. */
		unsigned exp = want < POLICY_MAX_ANSWERS ? want : POLICY_MAX_ANSWERS;
		ck_assert_uint_eq(n, exp);
		for (unsigned i = 0; i < n; i++)
			for (unsigned j = i + 1; j < n; j++)
				ck_assert_uint_ne(idx[i], idx[j]);
	}
	plan_t two = { 0 };
	add(&two, 1, 10, 1, 4);
	add(&two, 2, 10, 1, 4);
	uint8_t idx[POLICY_MAX_ANSWERS];
	ck_assert_uint_eq(policy_pick(&two, 5, 0, 0, 0, 0, &rng, idx), 2);
	ck_assert_uint_ne(idx[0], idx[1]);
	/* An empty plan picks nothing. */
	plan_t none = { 0 };
	ck_assert_uint_eq(policy_pick(&none, 1, 1, 0, 0, 0, &rng, idx), 0);
}
END_TEST

/* S4-10: a gray release in the plan and in the pick. */
START_TEST(release_plan_and_pick)
{
	uint8_t *b;
	size_t len;
	char err[256];
	ck_assert_int_eq(encode(nodes_json,
		"{\"weights\": {\"v4\": 100, \"dual\": 80},"
		" \"release\": {\"node\": \"dual\", \"bp\": 2500}}", 0, &b, &len, err,
		sizeof(err)), 0);
	plan_t p;
	ck_assert_int_eq(plan_decode(b, len, &p), 0);
	ck_assert_uint_eq(p.release_bp, 2500);
	ck_assert_uint_eq(p.release_slot, 2);   /* dual, the second node */
	ck_assert_uint_eq(p.node[1].flags & PLAN_RELEASE, PLAN_RELEASE);
	ck_assert_uint_eq(p.node[0].flags & PLAN_RELEASE, 0);
	ck_assert_uint_eq(b[2], (PLAN_HAS_RELEASE | 2500) >> 8);
	/* Where dual's flags are: its addresses follow its 17-byte header
	 * (the first node's starts after the 6-byte plan header). */
	size_t dual_flags = (size_t)(p.node[1].a4 - b) - 17 + 8;
	/* A share above every client, or a second release node, is
	 * malformed. */
	b[2] = (PLAN_HAS_RELEASE | 10001) >> 8;
	b[3] = (PLAN_HAS_RELEASE | 10001) & 0xff;
	ck_assert_int_eq(plan_decode(b, len, &p), -1);
	b[2] = (PLAN_HAS_RELEASE | 2500) >> 8;
	b[3] = (PLAN_HAS_RELEASE | 2500) & 0xff;
	b[6 + 8] |= PLAN_RELEASE;
	ck_assert_int_eq(plan_decode(b, len, &p), -1);
	/* The header's bit without a release node is malformed too. */
	b[6 + 8] &= (uint8_t)~PLAN_RELEASE;
	ck_assert_int_eq(plan_decode(b, len, &p), 0);
	b[dual_flags] &= (uint8_t)~PLAN_RELEASE;
	ck_assert_int_eq(plan_decode(b, len, &p), -1);
	free(b);
	/* No release: no slot, a zero share; a share without the header's
	 * release bit is malformed (the bytes were reserved). */
	ck_assert_int_eq(encode(nodes_json, row_json, 0, &b, &len, err, sizeof(err)), 0);
	ck_assert_int_eq(plan_decode(b, len, &p), 0);
	ck_assert_uint_eq(p.release_slot, 0);
	ck_assert_uint_eq(p.release_bp, 0);
	b[3] = 100;
	ck_assert_int_eq(plan_decode(b, len, &p), -1);
	free(b);
	/* A release whose node is not in the row: no release. */
	ck_assert_int_eq(encode(nodes_json,
		"{\"weights\": {\"v4\": 100}, \"release\": {\"node\": \"dual\", \"bp\": 100}}",
		0, &b, &len, err, sizeof(err)), 0);
	ck_assert_int_eq(plan_decode(b, len, &p), 0);
	ck_assert_uint_eq(p.release_slot, 0);
	free(b);

	/* The pick: clients below the share get the release node, the others
	 * never; widening keeps everyone already in. */
	plan_t q = { 0 };
	add(&q, 11, 50, 1, 4);
	add(&q, 22, 50, 1, 4);
	add(&q, 33, 1, 1, 4);
	q.release_slot = 3;
	static uint8_t in_at[4000];
	static const uint16_t shares[] = { 0, 100, 500, 2500, 5000, 10000 };
	for (unsigned s = 0; s < sizeof(shares) / sizeof(shares[0]); s++) {
		q.release_bp = shares[s];
		unsigned in = 0;
		for (uint64_t key = 0; key < 4000; key++) {
			uint8_t idx[2];
			uint64_t rng = key + 1;
			uint64_t k = key * 0x9E3779B97F4A7C15ull;
			unsigned n = policy_pick(&q, 2, 0, key & 1, k, 0, &rng, idx);
			ck_assert_uint_eq(n, 2);
			int got = idx[0] == 2 || idx[1] == 2;
			ck_assert_int_eq(got, policy_release_bucket(k, 33) < shares[s]);
			if (got) {
				ck_assert_uint_eq(idx[0], 2);   /* first */
				ck_assert_uint_ne(idx[1], 2);
				in++;
			}
			ck_assert_int_ge(got, in_at[key]);  /* never leaves */
			in_at[key] = (uint8_t)got;
		}
		double pct = 100.0 * in / 4000, want = shares[s] / 100.0;
		ck_assert_msg(pct >= want - 2 && pct <= want + 2, "share %.2f%%: %.2f%% in",
		              want, pct);
	}
	/* An unusable release node answers nobody; its clients get the
	 * others. */
	q.node[2].flags = 0;
	q.release_bp = 10000;
	for (uint64_t key = 0; key < 100; key++) {
		uint8_t idx[1];
		uint64_t rng = key + 1;
		ck_assert_uint_eq(policy_pick(&q, 1, 0, 0, key, 0, &rng, idx), 1);
		ck_assert_uint_ne(idx[0], 2);
	}
}
END_TEST

static Suite *policy_suite(void)
{
	Suite *s = suite_create("policy");
	TCase *t = tcase_create("plan");
	tcase_add_test(t, plan_round_trip);
	tcase_add_test(t, plan_encode_rejects);
	tcase_add_test(t, plan_decode_rejects_malformed);
	suite_add_tcase(s, t);
	t = tcase_create("pick");
	tcase_add_test(t, weighted_distribution);
	tcase_add_test(t, sticky_rendezvous);
	tcase_add_test(t, sticky_follows_weight);
	tcase_add_test(t, need_family);
	tcase_add_test(t, fail_open_all);
	tcase_add_test(t, distinct_answers);
	tcase_add_test(t, release_plan_and_pick);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(policy_suite)
