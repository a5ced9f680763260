/* SPDX-License-Identifier: MIT */
/* bench/geolook.c: geo_lookup() speed, the median of RUNS rounds of N
 * lookups of pseudo-random addresses (IPv4 over 1.0.0.0-223.255.255.255,
 * IPv6 inside 2400::/12 where bench/mmdb-big.py puts its networks), with
 * the table compiled as the configuration says.  Linked against
 * libgslbd.a:
 *   cc -O2 -Isrc -Ibuild/gen bench/geolook.c build/libgslbd.a \
 *      $(LIBS) -o build/geolook
 *   build/geolook gslbd.conf [N [RUNS]]
 * prints "compiled C v4 X ns v6 Y ns" and the load time. */
#include "common/conf.h"
#include "gslb/geo.h"

#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static int dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* One round of @n lookups of family @f: ns a lookup. */
static double round_ns(const geo_t *g, int f, long n, uint64_t *sink)
{
	struct sockaddr_in s4 = { .sin_family = AF_INET };
	struct sockaddr_in6 s6 = { .sin6_family = AF_INET6 };
	uint64_t x = 88172645463325252ull;
	double t0 = now();
	for (long i = 0; i < n; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		geo_result_t r = { .want_network = 0 };
		if (f == 4) {
			uint32_t a = (uint32_t)(0x01000000u + x % 0xdf000000u);
			s4.sin_addr.s_addr = htonl(a);
			geo_lookup(g, (struct sockaddr *)&s4, &r);
		} else {
			uint8_t *b = s6.sin6_addr.s6_addr;
			b[0] = 0x24;
			b[1] = (uint8_t)(x >> 8 & 0x0f);
			for (int j = 2; j < 16; j++)
				b[j] = (uint8_t)(x >> (j * 4));
			geo_lookup(g, (struct sockaddr *)&s6, &r);
		}
		*sink += r.prefix_len + (unsigned char)r.region[0];
	}
	return (now() - t0) * 1e9 / n;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s gslbd.conf [N [RUNS]]\n", argv[0]);
		return 2;
	}
	long n = argc > 2 ? atol(argv[2]) : 2000000;
	int runs = argc > 3 ? atoi(argv[3]) : 5;
	char err[512];
	conf_t *c = conf_load(argv[1], err, sizeof(err));
	if (!c) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	double t0 = now();
	geo_t *g = geo_open(c, err, sizeof(err));
	if (!g) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	printf("load %.2f s\n", now() - t0);
	uint64_t sink = 0;
	for (int f = 4; f <= 6; f += 2) {
		double v[64];
		for (int i = 0; i < runs && i < 64; i++)
			v[i] = round_ns(g, f, n, &sink);
		qsort(v, (size_t)runs, sizeof(v[0]), dcmp);
		printf("IPv%d median %.1f ns a lookup (%d rounds of %ld)\n", f,
		       v[runs / 2], runs, n);
	}
	fprintf(stderr, "(%llu)\n", (unsigned long long)sink);
	geo_close(g);
	conf_free(c);
	return 0;
}
