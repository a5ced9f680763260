#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the seed corpus of the query fuzzer (tests/fuzz/corpus): valid
queries of many types, EDNS with ECS/NSID/cookie, TSIG, GSLB queries with
ECS of both families for the services of the fuzzer's weight store, and
the malformed shapes the parser must survive (truncated headers, label
loops, oversize labels, bad pointers, garbage OPT, several OPTs, huge
counts).  Standard
library only; test_malformed.sh imports it to send the same packets.

    tests/fuzz/gen_corpus.py [DIR]     (default: tests/fuzz/corpus)

The committed corpus is these seeds plus what libFuzzer found, minimized
with `build/fuzz_query -merge=1 NEW_DIR OLD_DIRS...` against the demo zone
and against tests/fuzz/zones/fuzz.conf (GSLB_FUZZ_CONF); seeds whose
coverage others already give were dropped there, so write new seeds to a
scratch directory and merge them rather than into the corpus directly.
"""
import os
import struct
import sys

ZONE = "cdn.example.test"


# The wire form of a presentation name, shared with the integration tests.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'integ'))
from dnsraw import name_wire as name  # noqa: E402


def header(qid=0x1234, flags=0x0100, qd=1, an=0, ns=0, ar=0):
    return struct.pack("!HHHHHH", qid, flags, qd, an, ns, ar)


def question(qname, qtype=1, qclass=1):
    return (qname if isinstance(qname, bytes) else name(qname)) + \
        struct.pack("!HH", qtype, qclass)


def opt(payload=1232, version=0, do=0, options=b"", ext=0):
    ttl = ext << 24 | version << 16 | (0x8000 if do else 0)
    return b"\0" + struct.pack("!HHIH", 41, payload, ttl, len(options)) + options


def option(code, data):
    return struct.pack("!HH", code, len(data)) + data


def ecs(family=1, source=24, scope=0, addr=b"\xc6\x33\x64"):
    return option(8, struct.pack("!HBB", family, source, scope) + addr)


def query(qname, qtype=1, qclass=1, flags=0x0100, ar=b"", nar=None, qid=0x1234):
    if nar is None:
        nar = 1 if ar else 0
    return header(qid, flags, 1, 0, 0, nar) + question(qname, qtype, qclass) + ar


def tsig(key="key.example", alg="hmac-sha256", mac=b"\x01" * 32, orig=0x1234):
    rd = name(alg) + struct.pack("!HIH", 0, 1700000000, 300)
    rd += struct.pack("!H", len(mac)) + mac + struct.pack("!HHH", orig, 0, 0)
    return name(key) + struct.pack("!HHIH", 250, 255, 0, len(rd)) + rd


def seeds():
    """Yields (file name, packet bytes)."""
    z = ZONE
    for t, qtype in [("a", 1), ("ns", 2), ("cname", 5), ("soa", 6),
                     ("ptr", 12), ("mx", 15), ("txt", 16), ("aaaa", 28),
                     ("srv", 33), ("ds", 43), ("dnskey", 48), ("caa", 257),
                     ("any", 255), ("axfr", 252), ("ixfr", 251),
                     ("maila", 254), ("type65000", 65000), ("opt", 41),
                     ("tsig", 250), ("type0", 0)]:
        yield "valid-%s" % t, query("static." + z, qtype)
    yield "apex-soa", query(z, 6)
    yield "apex-mx", query(z, 15)
    yield "srv", query("_dns._udp." + z, 33)
    yield "cname", query("img." + z, 1)
    yield "cname-mixed-case", query("IMG.Cdn.Example.TEST", 1)
    yield "wildcard", query("x.edge." + z, 1)
    yield "wildcard-deep", query("a.b.edge." + z, 1)
    yield "ent-nodata", query("ent.path." + z, 16)
    yield "nxdomain", query("nothing." + z, 1)
    yield "referral", query("www.lab." + z, 1)
    yield "ds-at-cut", query("lab." + z, 43)
    yield "refused-outside", query("example.org", 1)
    yield "root", query(".", 2)
    yield "chaos-id", query("id.server", 16, 3)
    yield "chaos-version", query("version.bind", 16, 3)
    yield "class-hs", query("static." + z, 1, 4)
    yield "class-any", query("static." + z, 1, 255)
    yield "opcode-notify", query(z, 6, flags=0x2400)
    yield "opcode-status", query(z, 6, flags=0x1000)
    yield "opcode-15", query(z, 6, flags=0x7800)
    yield "all-flags", query("static." + z, 1, flags=0x7fff & ~0x7800)
    yield "response", query("static." + z, 1, flags=0x8100)
    # EDNS
    yield "edns-plain", query("static." + z, 1, ar=opt())
    yield "edns-do", query("static." + z, 1, ar=opt(do=1))
    yield "edns-small", query("static." + z, 1, ar=opt(payload=100))
    yield "edns-big", query("static." + z, 255, ar=opt(payload=65535))
    yield "edns-v1", query("static." + z, 1, ar=opt(version=1))
    yield "edns-extrcode", query("static." + z, 1, ar=opt(ext=0xff))
    yield "edns-nsid", query("static." + z, 1, ar=opt(options=option(3, b"")))
    yield "edns-cookie", query("static." + z, 1,
                               ar=opt(options=option(10, b"\x11" * 8)))
    yield "edns-cookie-full", query("static." + z, 1,
                                    ar=opt(options=option(10, b"\x22" * 24)))
    yield "edns-cookie-40", query("static." + z, 1,
                                  ar=opt(options=option(10, b"\x44" * 40)))
    yield "edns-cookie-short", query("static." + z, 1,
                                     ar=opt(options=option(10, b"\x55" * 9)))
    yield "edns-cookie-twice", query("static." + z, 1, ar=opt(
        options=option(10, b"\x66" * 8) + option(10, b"\x77" * 3)))
    yield "edns-cookie-v1", query("static." + z, 1, ar=opt(
        version=1, options=option(10, b"\x88" * 8)))
    yield "edns-ecs4", query("static." + z, 1, ar=opt(options=ecs()))
    yield "edns-ecs6", query("static." + z, 28, ar=opt(
        options=ecs(2, 56, 0, b"\x20\x01\x0d\xb8\x00\x00\x01")))
    yield "edns-ecs0", query("static." + z, 1, ar=opt(options=ecs(1, 0, 0, b"")))
    yield "edns-ecs-badfam", query("static." + z, 1,
                                   ar=opt(options=ecs(3, 24, 0, b"\1\2\3")))
    yield "edns-ecs-scope", query("static." + z, 1,
                                  ar=opt(options=ecs(1, 24, 8, b"\1\2\3")))
    yield "edns-ecs-short", query("static." + z, 1, ar=opt(options=option(8, b"\0")))
    yield "edns-ecs-twice", query("static." + z, 1, ar=opt(options=ecs() + ecs()))
    yield "edns-all", query("static." + z, 1, ar=opt(
        do=1, options=option(3, b"") + ecs() + option(10, b"\x33" * 8) +
        option(65001, b"xyz")))
    yield "edns-two-opts", query("static." + z, 1, ar=opt() + opt(), nar=2)
    yield "edns-opt-owner", query("static." + z, 1,
                                  ar=b"\x01a" + opt()[0:])  # owner "a" + root
    yield "edns-opt-rdlen-lies", query("static." + z, 1,
                                       ar=b"\0" + struct.pack("!HHIH", 41, 1232, 0, 200))
    yield "edns-opt-short", query("static." + z, 1, ar=b"\0\0\x29\x04")
    yield "edns-opt-garbage", query("static." + z, 1, ar=opt(
        options=b"\xff\xff\xff\xff\x00\x01"))
    yield "edns-opt-optlen-lies", query("static." + z, 1, ar=opt(
        options=struct.pack("!HH", 3, 40) + b"ab"))
    yield "edns-ar-count-lies", query("static." + z, 1, ar=opt(), nar=5)
    # TSIG
    yield "tsig", query("static." + z, 1, ar=tsig())
    yield "tsig-edns", query("static." + z, 1, ar=opt() + tsig(), nar=2)
    yield "tsig-not-last", query("static." + z, 1, ar=tsig() + opt(), nar=2)
    yield "tsig-short-rdata", query("static." + z, 1, ar=name("k") +
                                    struct.pack("!HHIH", 250, 255, 0, 3) + b"\1a\0")
    yield "tsig-compressed", query("static." + z, 1, ar=b"\xc0\x0c" +
                                   tsig()[len(name("key.example")):])
    # Headers and questions
    yield "empty", b""
    yield "hdr-1", b"\x12"
    yield "hdr-11", header()[:11]
    yield "hdr-only", header(qd=0)
    yield "hdr-qd1-noq", header()
    yield "qd0", header(qd=0) + question("static." + z)
    yield "qd2", header(qd=2) + question("static." + z) + question(z)
    yield "qd-65535", header(qd=65535) + question("static." + z)
    yield "counts-huge", header(qd=1, an=65535, ns=65535, ar=65535) + \
        question("static." + z)
    yield "an-garbage", header(an=1) + question("static." + z) + b"\xff" * 20
    yield "ns-record", header(ns=1) + question(z, 6) + name(z) + \
        struct.pack("!HHIH", 2, 1, 60, 4) + b"\2ns\xc0\x0c"
    yield "q-truncated-name", header() + name("static." + z)[:8]
    yield "q-no-type", header() + name("static." + z)
    yield "q-half-type", header() + name("static." + z) + b"\0"
    yield "q-no-class", header() + name("static." + z) + b"\0\1"
    yield "q-pointer", header() + b"\xc0\x0c\0\1\0\1"
    yield "q-pointer-self-loop", header() + b"\x01a\xc0\x0c\0\1\0\1"
    yield "q-pointer-forward", header() + b"\xc0\x0e\x01a\0\0\1\0\1"
    yield "q-pointer-oob", header() + b"\xff\xff\0\1\0\1"
    yield "q-label-64", header() + b"\x40" + b"a" * 64 + b"\0\0\1\0\1"
    yield "q-label-0x80", header() + b"\x80abc\0\0\1\0\1"
    yield "q-name-256", header() + (b"\x3f" + b"a" * 63) * 4 + b"\0\0\1\0\1"
    yield "q-name-255", header() + (b"\x3f" + b"a" * 63) * 3 + b"\x3d" + \
        b"b" * 61 + b"\0\0\1\0\1"
    yield "q-many-labels", header() + b"\x01a" * 127 + b"\0\0\1\0\1"
    yield "q-binary-label", header() + b"\x04\0\xff.\\" + name(z) + b"\0\1\0\1"
    yield "q-trailing-garbage", query("static." + z, 1) + b"\xde\xad\xbe\xef"
    # Additional-section names with pointer tricks.
    q = header(ar=1) + question("static." + z)
    yield "ar-pointer-loop", q + b"\xc0" + bytes([len(q)]) + \
        struct.pack("!HHIH", 41, 1232, 0, 0)
    yield "ar-pointer-chain", q + b"\xc0\x0c" + struct.pack("!HHIH", 1, 1, 0, 4) + \
        b"\1\2\3\4"
    yield "ar-pointer-oob", q + b"\xc0\xff" + struct.pack("!HHIH", 1, 1, 0, 0)
    yield "ar-rdlen-lies", q + b"\0" + struct.pack("!HHIH", 1, 1, 0, 65535)


# The GSLB services of the fuzzer's weight store (tests/unit/store_fixture.h)
# and client networks of its MaxMind DB.
SERVICES = ["www", "fb", "fbnone", "open", "empty", "sticky", "stickyrow",
            "multi", "cdn", "short", "gw.edge", "path", "norows"]
ECS_BJ = ecs(1, 24, 0, b"\x24\x6e\x01")               # 36.110.1.0/24
ECS_BJ6 = ecs(2, 56, 0, b"\x24\x0e\x00\xe0\0\0\0")  # 240e:e0::/56


def gslb_seeds():
    """GSLB queries: every service with ECS of both families, and the ECS
    shapes that decide whose address locates the client."""
    z = ZONE
    for svc in SERVICES:
        yield "gslb-%s-a-ecs" % svc, query(svc + "." + z, 1, ar=opt(options=ECS_BJ))
        yield "gslb-%s-aaaa-ecs6" % svc, query(svc + "." + z, 28,
                                               ar=opt(options=ECS_BJ6))
    w = "www." + z
    yield "gslb-noedns", query(w, 1)
    yield "gslb-any-ecs", query(w, 255, ar=opt(options=ECS_BJ))
    yield "gslb-txt-ecs", query(w, 16, ar=opt(options=ECS_BJ))
    yield "gslb-ecs-cucc", query(w, 1, ar=opt(options=ecs(1, 24, 0, b"\x70\x40\x09")))
    yield "gslb-ecs-uswest", query(w, 1, ar=opt(options=ecs(1, 24, 0, b"\xc6\x33\x64")))
    yield "gslb-ecs-32", query(w, 1, ar=opt(options=ecs(1, 32, 0, b"\x24\x6e\x01\x07")))
    yield "gslb-ecs-src0", query(w, 1, ar=opt(options=ecs(1, 0, 0, b"")))
    yield "gslb-ecs-loopback", query(w, 1, ar=opt(options=ecs(1, 8, 0, b"\x7f")))
    yield "gslb-ecs6-linklocal", query(w, 28, ar=opt(options=ecs(2, 16, 0, b"\xfe\x80")))
    yield "gslb-ecs6-128", query(w, 28, ar=opt(options=ecs(
        2, 128, 0, b"\x20\x01\x0d\xb8\x01" + b"\0" * 11)))
    yield "gslb-ecs-scope-set", query(w, 1, ar=opt(options=ecs(1, 24, 24, b"\x24\x6e\x01")))
    yield "gslb-mixed-case", query("WwW.CDN.example.TEST", 1, ar=opt(options=ECS_BJ))
    yield "gslb-tcp-big", query("multi." + z, 255, ar=opt(payload=65535, options=ECS_BJ))


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "corpus")
    os.makedirs(d, exist_ok=True)
    n = 0
    for fname, pkt in list(seeds()) + list(gslb_seeds()):
        with open(os.path.join(d, "seed-" + fname), "wb") as f:
            f.write(pkt)
        n += 1
    print("wrote %d seeds to %s" % (n, d))


if __name__ == "__main__":
    main()
