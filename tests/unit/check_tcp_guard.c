/* SPDX-License-Identifier: MIT */
/* The TCP front end's guard against connection hoarding (S1-12): sources
 * masked to their prefix, the per-source count in its fixed table (with
 * deletions that keep every other source findable), the admission
 * verdict, the pressure mark and the shrunk idle time. */
#include "dns/tcp_guard.h"
#include "unit.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

static void src_of(const tcp_guard_t *g, const char *text, tcp_src_t *out)
{
	struct sockaddr_storage ss;
	memset(&ss, 0, sizeof(ss));
	if (strchr(text, ':')) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
		s6->sin6_family = AF_INET6;
		ck_assert_int_eq(inet_pton(AF_INET6, text, &s6->sin6_addr), 1);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
		s4->sin_family = AF_INET;
		ck_assert_int_eq(inet_pton(AF_INET, text, &s4->sin_addr), 1);
	}
	tcp_guard_source(g, (struct sockaddr *)&ss, out);
}

static int same_source(const tcp_guard_t *g, const char *a, const char *b)
{
	tcp_src_t x, y;
	src_of(g, a, &x);
	src_of(g, b, &y);
	return memcmp(&x, &y, sizeof(x)) == 0;
}

START_TEST(sources_by_prefix)
{
	tcp_guard_t *g = tcp_guard_new(10, 5, 32, 64);
	/* IPv4: each address its own source; a mapped peer is the same. */
	ck_assert(!same_source(g, "127.0.0.2", "127.0.0.3"));
	ck_assert(same_source(g, "127.0.0.2", "::ffff:127.0.0.2"));
	/* IPv6: one /64 is one source, the next /64 another. */
	ck_assert(same_source(g, "2001:db8:1:2::1", "2001:db8:1:2:ffff::9"));
	ck_assert(!same_source(g, "2001:db8:1:2::1", "2001:db8:1:3::1"));
	ck_assert(!same_source(g, "::ffff:10.0.0.1", "::10.0.0.1"));
	tcp_guard_free(g);
	g = tcp_guard_new(10, 5, 24, 56);
	ck_assert(same_source(g, "192.0.2.1", "192.0.2.254"));
	ck_assert(!same_source(g, "192.0.2.1", "192.0.3.1"));
	ck_assert(same_source(g, "2001:db8:1:200::1", "2001:db8:1:2ff::1"));
	ck_assert(!same_source(g, "2001:db8:1:200::1", "2001:db8:1:300::1"));
	tcp_guard_free(g);
}
END_TEST

/* The limit of one source: its connections over the share are refused,
 * the others of the same source stay counted, other sources go on. */
START_TEST(per_source_limit)
{
	tcp_guard_t *g = tcp_guard_new(100, 3, 32, 64);
	tcp_src_t a, b;
	src_of(g, "127.0.0.2", &a);
	src_of(g, "127.0.0.3", &b);
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(tcp_guard_verdict(g, &a, 0, 0), TCP_ADMIT);
		tcp_guard_add(g, &a);
	}
	ck_assert_int_eq(tcp_guard_verdict(g, &a, 0, 0), TCP_REFUSE_SOURCE);
	/* Refused before eviction: nobody makes room for it. */
	ck_assert_int_eq(tcp_guard_verdict(g, &a, 5, 0), TCP_REFUSE_SOURCE);
	ck_assert_uint_eq(tcp_guard_of(g, &a), 3);
	ck_assert_int_eq(tcp_guard_verdict(g, &b, 0, 0), TCP_ADMIT);
	tcp_guard_del(g, &a);
	ck_assert_uint_eq(tcp_guard_of(g, &a), 2);
	ck_assert_int_eq(tcp_guard_verdict(g, &a, 0, 0), TCP_ADMIT);
	tcp_guard_free(g);
	/* 0: no limit. */
	g = tcp_guard_new(100, 0, 32, 64);
	for (int i = 0; i < 99; i++)
		tcp_guard_add(g, &a);
	ck_assert_int_eq(tcp_guard_verdict(g, &a, 0, 0), TCP_ADMIT);
	tcp_guard_free(g);
}
END_TEST

/* The pressure mark at 90 %: a newcomer evicts a candidate whose source
 * holds more than one connection, even before the table is full; a
 * source's only connection only when the table is full; full and nobody
 * to evict is a refusal; below the mark nobody is evicted. */
START_TEST(pressure_verdict)
{
	ck_assert_uint_eq(tcp_guard_pressure_at(1000), 900);
	ck_assert_uint_eq(tcp_guard_pressure_at(50), 45);
	ck_assert_uint_eq(tcp_guard_pressure_at(4), 4);
	ck_assert_uint_eq(tcp_guard_pressure_at(1), 1);
	tcp_guard_t *g = tcp_guard_new(50, 0, 32, 64);
	tcp_src_t a;
	src_of(g, "127.0.0.2", &a);
	for (int i = 0; i < 44; i++)
		tcp_guard_add(g, &a);
	ck_assert(!tcp_guard_pressed(g));
	ck_assert_int_eq(tcp_guard_verdict(g, &a, 44, 0), TCP_ADMIT);
	ck_assert_uint_eq(tcp_guard_idle_ms(g, 10000), 10000);
	tcp_guard_add(g, &a);
	ck_assert(tcp_guard_pressed(g));
	ck_assert_int_eq(tcp_guard_verdict(g, &a, 45, 0), TCP_ADMIT_EVICT);
	ck_assert_int_eq(tcp_guard_verdict(g, &a, 2, 0), TCP_ADMIT_EVICT);
	ck_assert_int_eq(tcp_guard_verdict(g, &a, 1, 0), TCP_ADMIT);
	ck_assert_int_eq(tcp_guard_verdict(g, &a, 0, 0), TCP_ADMIT);
	ck_assert_uint_eq(tcp_guard_idle_ms(g, 10000), 1000);
	for (int i = 0; i < 5; i++)
		tcp_guard_add(g, &a);
	ck_assert_uint_eq(tcp_guard_open(g), 50);
	ck_assert_int_eq(tcp_guard_verdict(g, &a, 0, 0), TCP_REFUSE_FULL);
	ck_assert_int_eq(tcp_guard_verdict(g, &a, 1, 0), TCP_ADMIT_EVICT);
	ck_assert_int_eq(tcp_guard_verdict(g, &a, 50, 0), TCP_ADMIT_EVICT);
	for (int i = 0; i < 6; i++)
		tcp_guard_del(g, &a);
	ck_assert(!tcp_guard_pressed(g));
	ck_assert_uint_eq(tcp_guard_idle_ms(g, 10000), 10000);
	tcp_guard_free(g);
}
END_TEST

/* A full table of a hoarder's quiet connections (each asked once): a
 * newcomer evicts one of them rather than being refused or evicting the
 * lone connection of a client whose query is not read yet; a quiet
 * connection that is its source's only one is never evicted, and below
 * the limit no quiet connection is (S1-12). */
START_TEST(quiet_verdict)
{
	tcp_guard_t *g = tcp_guard_new(50, 0, 32, 64);
	tcp_src_t a;
	src_of(g, "127.0.0.2", &a);
	for (int i = 0; i < 49; i++)
		tcp_guard_add(g, &a);
	ck_assert_int_eq(tcp_guard_verdict(g, &a, 0, 49), TCP_ADMIT);
	tcp_guard_add(g, &a);
	ck_assert_int_eq(tcp_guard_verdict(g, &a, 0, 50), TCP_ADMIT_EVICT_QUIET);
	ck_assert_int_eq(tcp_guard_verdict(g, &a, 1, 50), TCP_ADMIT_EVICT_QUIET);
	ck_assert_int_eq(tcp_guard_verdict(g, &a, 1, 2), TCP_ADMIT_EVICT_QUIET);
	/* A hoarder's held connection goes before the new connection of a
	 * client that opens a few; the hoarder's own new one before its
	 * held one. */
	ck_assert_int_eq(tcp_guard_verdict(g, &a, 2, 50), TCP_ADMIT_EVICT_QUIET);
	ck_assert_int_eq(tcp_guard_verdict(g, &a, 50, 50), TCP_ADMIT_EVICT);
	ck_assert_int_eq(tcp_guard_verdict(g, &a, 50, 2), TCP_ADMIT_EVICT);
	ck_assert_int_eq(tcp_guard_verdict(g, &a, 0, 1), TCP_REFUSE_FULL);
	ck_assert_int_eq(tcp_guard_verdict(g, &a, 1, 1), TCP_ADMIT_EVICT);
	tcp_guard_free(g);
}
END_TEST

/* The victim: the candidate of the source with the most connections,
 * the oldest (first) of equals. */
START_TEST(eviction_pick)
{
	const unsigned one[] = { 1, 1, 1, 1 };
	const unsigned hoarder[] = { 1, 40, 1, 40, 2 };
	const unsigned last[] = { 3, 1, 1, 9 };
	ck_assert_uint_eq(tcp_guard_pick(one, 4), 0);
	ck_assert_uint_eq(tcp_guard_pick(hoarder, 5), 1);
	ck_assert_uint_eq(tcp_guard_pick(last, 4), 3);
	ck_assert_uint_eq(tcp_guard_pick(one, 0), 0);
}
END_TEST

START_TEST(shrunk_idle_and_share)
{
	ck_assert_uint_eq(tcp_guard_shrunk_ms(10000), 1000);
	ck_assert_uint_eq(tcp_guard_shrunk_ms(2000), TCP_PRESSURE_IDLE_MIN_MS);
	ck_assert_uint_eq(tcp_guard_shrunk_ms(300), 300);
	ck_assert_uint_eq(tcp_guard_share(100, 1), 100);
	ck_assert_uint_eq(tcp_guard_share(100, 3), 34);
	ck_assert_uint_eq(tcp_guard_share(0, 4), 0);
}
END_TEST

/* Many sources added and deleted in a mixed order: every count stays
 * right (a deletion in the open-addressed table must not hide a source
 * further along its run), and the table never fills. */
START_TEST(table_churn)
{
	enum { MAX = 300 };
	tcp_guard_t *g = tcp_guard_new(MAX, 0, 32, 64);
	static tcp_src_t s[MAX];
	static unsigned want[MAX];
	char text[64];
	for (int i = 0; i < MAX; i++) {
		snprintf(text, sizeof(text), "10.%d.%d.1", i / 250, i % 250);
		src_of(g, text, &s[i]);
	}
	uint64_t r = 12345;
	for (int round = 0; round < 20000; round++) {
		r = r * 6364136223846793005ull + 1442695040888963407ull;
		int i = (int)((r >> 33) % MAX);
		if (((r >> 20) & 1) && want[i]) {
			tcp_guard_del(g, &s[i]);
			want[i]--;
		} else if (tcp_guard_open(g) < MAX) {
			tcp_guard_add(g, &s[i]);
			want[i]++;
		}
		if (round % 997 == 0) {
			unsigned sum = 0;
			for (int k = 0; k < MAX; k++) {
				ck_assert_uint_eq(tcp_guard_of(g, &s[k]), want[k]);
				sum += want[k];
			}
			ck_assert_uint_eq(tcp_guard_open(g), sum);
		}
	}
	for (int k = 0; k < MAX; k++)
		while (want[k]--)
			tcp_guard_del(g, &s[k]);
	ck_assert_uint_eq(tcp_guard_open(g), 0);
	for (int k = 0; k < MAX; k++)
		ck_assert_uint_eq(tcp_guard_of(g, &s[k]), 0);
	tcp_guard_free(g);
}
END_TEST

START_TEST(counters)
{
	tcp_guard_t *g = tcp_guard_new(4, 1, 32, 64);
	tcp_guard_count(g, TCP_REFUSED_SOURCE);
	tcp_guard_count(g, TCP_REFUSED_SOURCE);
	tcp_guard_count(g, TCP_CLOSED_IDLE);
	ck_assert_uint_eq(tcp_guard_stat(g, TCP_REFUSED_SOURCE), 2);
	ck_assert_uint_eq(tcp_guard_stat(g, TCP_CLOSED_IDLE), 1);
	ck_assert_uint_eq(tcp_guard_stat(g, TCP_REFUSED_FULL), 0);
	tcp_guard_free(g);
}
END_TEST

static Suite *tcp_guard_suite(void)
{
	Suite *s = suite_create("tcp_guard");
	TCase *t = tcase_create("guard");
	tcase_add_test(t, sources_by_prefix);
	tcase_add_test(t, per_source_limit);
	tcase_add_test(t, pressure_verdict);
	tcase_add_test(t, quiet_verdict);
	tcase_add_test(t, eviction_pick);
	tcase_add_test(t, shrunk_idle_and_share);
	tcase_add_test(t, table_churn);
	tcase_add_test(t, counters);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(tcp_guard_suite)
