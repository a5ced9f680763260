#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/gslbgen.py: inputs of bench/gslb.sh (see docs/BENCHMARKS.md).

    gslbgen.py geo-src          GeoIP source (geoip/build-demo.pl format):
                                400 /16s in 10 regions x 3 ISPs
    geo-json                    gslbctl apply table: www.bench.test, one
                                (region, *) row per region + (*, *)
    geo-gdnsd                   the equivalent gdnsd plugins stanza
                                (@MMDB@ left for the caller)
    geo-queries NAME            4000 "NAME A ECS" lines, one distinct /24
                                each, spread over the 400 networks
    compare-json                geo-json plus set.bench.test: the same
                                rows with weight 1 each and 3 answers,
                                i.e. every node of the region (bench/
                                compare.sh's "address set")
    compare-gdnsd               geo-gdnsd plus resource "set": the same
                                map onto multifo resources (every
                                address of the datacenter)
    compare-knot                knotd's mod-geoip file (geodb mode, key
                                [ region ]) for set.bench.test: the same
                                address sets (knotd cannot weight them,
                                and has no default for networks outside
                                the database)
    big-src                     1000 /20s, one per (region, ISP) of 100 x 10
    big-json ROWS               table of 1000 services s000..s999.big.test
                                with ROWS=1m: every (region, ISP) row each
                                (1,000,000 rows); ROWS=1k: one row each
                                (service i has combination i only)
    big-queries ROWS N          N query lines: a random service with a
                                random (1m) or its own (1k) combination
Everything is deterministic (fixed seeds).
"""
import random
import sys

REGIONS = [("cn-bj", "CN", "BJ"), ("cn-sh", "CN", "SH"), ("cn-gd", "CN", "GD"),
           ("cn-zj", "CN", "ZJ"), ("cn-js", "CN", "JS"), ("cn-sc", "CN", "SC"),
           ("cn-hb", "CN", "HB"), ("cn-he", "CN", "HE"),
           ("us-west", "US", "CA"), ("us-east", "US", "NY")]
ISPS = [("ctcc", 4134), ("cucc", 4837), ("cmcc", 9808)]
WEIGHTS = (3, 2, 1)
out = sys.stdout.write


def geo_net(i):
    return "%d.%d.0.0/16" % (11 + i // 200, i % 200), i % 10, (i // 10) % 3


def node_addr(r, k):
    return "192.0.2.%d" % (r * 3 + k + 1)


def geo_src():
    for i in range(400):
        net, r, s = geo_net(i)
        reg, cc, sub = REGIONS[r]
        out("%-16s %-8s %s %d %s %s\n" % (net, reg, ISPS[s][0], ISPS[s][1], cc, sub))


def geo_json(with_set=False):
    out('{\n "version": 1,\n "services": [\n  {"name": "www.bench.test", "ttl": 60, '
        '"short_ttl": 10, "answers": 1, "all_down": "open", "sticky": false}')
    if with_set:
        out(',\n  {"name": "set.bench.test", "ttl": 60, "short_ttl": 10, "answers": 3, '
            '"all_down": "open", "sticky": false}')
    out('\n ],\n "nodes": [\n')
    nodes = []
    for r, (reg, _, _) in enumerate(REGIONS):
        for k in range(3):
            nodes.append('  {"id": "%s-%d", "addrs": ["%s"], "region": "%s", "isp": "*", '
                         '"capacity": 10000, "pool": "primary", "admin": "auto"}'
                         % (reg, k, node_addr(r, k), reg))
    nodes.append('  {"id": "default", "addrs": ["192.0.2.250"], "region": "*", "isp": "*", '
                 '"capacity": 10000, "pool": "primary", "admin": "auto"}')
    out(",\n".join(nodes) + '\n ],\n "weights": [\n')
    rows = []
    for reg, _, _ in REGIONS:
        w = ", ".join('"%s-%d": %d' % (reg, k, WEIGHTS[k]) for k in range(3))
        rows.append('  {"service": "www.bench.test", "region": "%s", "isp": "*", '
                    '"weights": {%s}}' % (reg, w))
    rows.append('  {"service": "www.bench.test", "region": "*", "isp": "*", '
                '"weights": {"default": 1}}')
    if with_set:
        for reg, _, _ in REGIONS:
            w = ", ".join('"%s-%d": 1' % (reg, k) for k in range(3))
            rows.append('  {"service": "set.bench.test", "region": "%s", "isp": "*", '
                        '"weights": {%s}}' % (reg, w))
        rows.append('  {"service": "set.bench.test", "region": "*", "isp": "*", '
                    '"weights": {"default": 1}}')
    out(",\n".join(rows) + "\n ]\n}\n")


def geo_gdnsd(with_set=False):
    out("plugins => {\n")
    if with_set:
        out("  multifo => {\n")
        for r, (reg, _, _) in enumerate(REGIONS):
            out("    s-%s => { %s }\n" % (reg, ", ".join(
                "n%d = %s" % (k, node_addr(r, k)) for k in range(3))))
        out("    s-default => { n0 = 192.0.2.250 }\n  }\n")
    out("  weighted => {\n")
    for r, (reg, _, _) in enumerate(REGIONS):
        out("    w-%s => { %s }\n" % (reg, ", ".join(
            "n%d = [ %s, %d ]" % (k, node_addr(r, k), WEIGHTS[k]) for k in range(3))))
    out("    w-default => { n0 = [ 192.0.2.250, 1 ] }\n  }\n  geoip => {\n    maps => {\n"
        "      bench => {\n        geoip2_db => @MMDB@\n        datacenters => [ %s, default ]\n"
        "        map => {\n          default => [ default ]\n"
        % ", ".join(r[0] for r in REGIONS))
    byc = {}
    for reg, cc, sub in REGIONS:
        byc.setdefault(cc, []).append((sub, reg))
    for cc, cont in (("CN", "AS"), ("US", "NA")):
        out("          %s => { %s => { default => [ default ], %s } }\n" % (cont, cc, ", ".join(
            "%s => [ %s ]" % (sub, reg) for sub, reg in byc[cc])))
    out("        }\n      }\n    }\n    resources => {\n      www => {\n        map => bench\n"
        "        dcmap => { %s, default => %%weighted!w-default }\n      }\n"
        % ", ".join("%s => %%weighted!w-%s" % (r[0], r[0]) for r in REGIONS))
    if with_set:
        out("      set => {\n        map => bench\n"
            "        dcmap => { %s, default => %%multifo!s-default }\n      }\n"
            % ", ".join("%s => %%multifo!s-%s" % (r[0], r[0]) for r in REGIONS))
    out("    }\n  }\n}\n")


def compare_knot():
    out("set.bench.test:\n")
    for r, (reg, _, _) in enumerate(REGIONS):
        out('  - geo: "%s"\n    A: [ %s ]\n'
            % (reg, ", ".join(node_addr(r, k) for k in range(3))))


def geo_queries(name):
    lines = []
    for q in range(4000):
        net, _, _ = geo_net(q % 400)
        a, b = net.split(".")[:2]
        lines.append("%s A %s.%s.%d.0/24\n" % (name, a, b, q // 400 * 25))
    random.Random(1).shuffle(lines)
    out("".join(lines))


def big_combo(c):
    return "r%02d" % (c // 10), "i%d" % (c % 10)


def big_src():
    for c in range(1000):
        r, i = big_combo(c)
        out("10.%d.%d.0/20 %s %s %d CN\n" % (c // 10, (c % 10) * 16, r, i, 65000 + c % 10))


def big_json(rows):
    w = sys.stdout.write
    w('{\n "version": 1,\n "services": [\n')
    w(",\n".join('  {"name": "s%03d.big.test", "ttl": 60, "short_ttl": 10, "answers": 1, '
                 '"all_down": "open", "sticky": false}' % s for s in range(1000)))
    w('\n ],\n "nodes": [\n')
    w(",\n".join('  {"id": "n%02d", "addrs": ["198.51.100.%d"], "region": "*", "isp": "*", '
                 '"capacity": 10000, "pool": "primary", "admin": "auto"}' % (n, n + 1)
                 for n in range(100)))
    w('\n ],\n "weights": [\n')
    first = True
    for s in range(1000):
        buf = []
        for c in (range(1000) if rows == "1m" else (s,)):
            r, i = big_combo(c)
            a = (s * 7 + c) % 100
            b = (a + 1 + (s + c * 3) % 99) % 100
            buf.append('  {"service": "s%03d.big.test", "region": "%s", "isp": "%s", '
                       '"weights": {"n%02d": %d, "n%02d": %d}}'
                       % (s, r, i, a, 1 + (s + c) % 5, b, 1 + (s * c) % 3))
        w(("" if first else ",\n") + ",\n".join(buf))
        first = False
    w("\n ]\n}\n")


def big_queries(rows, n):
    rnd = random.Random(2)
    lines = []
    for _ in range(n):
        s = rnd.randrange(1000)
        c = rnd.randrange(1000) if rows == "1m" else s
        lines.append("s%03d.big.test A 10.%d.%d.0/24\n"
                     % (s, c // 10, (c % 10) * 16 + rnd.randrange(16)))
    out("".join(lines))


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    {"geo-src": geo_src, "geo-json": geo_json, "geo-gdnsd": geo_gdnsd,
     "compare-json": lambda: geo_json(True),
     "compare-gdnsd": lambda: geo_gdnsd(True), "compare-knot": compare_knot,
     "geo-queries": lambda: geo_queries(args[0]), "big-src": big_src,
     "big-json": lambda: big_json(args[0]),
     "big-queries": lambda: big_queries(args[0], int(args[1]))}[cmd]()
