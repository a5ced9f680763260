#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/wireq.py: turn a text query list into dnsperf's binary input (-B).

dnsperf sends its EDNS options (-E code:value) with every query alike, so
it cannot give each query its own EDNS Client Subnet.  Its -B mode replays
pre-built DNS messages instead ("TCP-stream binary format": each message
preceded by its 2-byte length), which can carry any option.  This script
reads lines

    QNAME QTYPE [ADDR/PREFIX]

from stdin and writes one such message per line to stdout: RD clear,
EDNS0 (UDP payload 1232), and, when ADDR/PREFIX is given, an ECS option
(RFC 7871) with that source prefix, scope 0 and the address truncated to
the prefix's bytes.  With --do the OPT record has the DO bit set
(dnsperf's -D does not reach -B messages).  dnsperf sets the message id
itself.
"""
import ipaddress
import struct
import os
import sys

TYPES = {"A": 1, "NS": 2, "CNAME": 5, "SOA": 6, "MX": 15, "TXT": 16, "AAAA": 28}


# The wire form of a presentation name, shared with the integration tests.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', 'tests', 'integ'))
from dnsraw import name_wire as name  # noqa: E402


def message(qname, qtype, subnet, do=False):
    hdr = struct.pack("!HHHHHH", 0, 0, 1, 0, 0, 1)
    q = name(qname) + struct.pack("!HH", TYPES[qtype.upper()], 1)
    opts = b""
    if subnet:
        net = ipaddress.ip_network(subnet, strict=False)
        plen = net.prefixlen
        addr = net.network_address.packed[: (plen + 7) // 8]
        fam = 1 if net.version == 4 else 2
        data = struct.pack("!HBB", fam, plen, 0) + addr
        opts = struct.pack("!HH", 8, len(data)) + data
    opt = b"\0" + struct.pack("!HHIH", 41, 1232, 0x8000 if do else 0, len(opts)) + opts
    return hdr + q + opt


def main():
    out = sys.stdout.buffer
    do = sys.argv[1:] == ["--do"]
    if sys.argv[1:] and not do:
        sys.exit("usage: wireq.py [--do] < QUERIES > QUERIES.bin")
    n = 0
    for line in sys.stdin:
        f = line.split()
        if not f or f[0].startswith("#"):
            continue
        m = message(f[0], f[1], f[2] if len(f) > 2 else None, do)
        out.write(struct.pack("!H", len(m)) + m)
        n += 1
    if n == 0:
        sys.exit("wireq: no queries on stdin")


if __name__ == "__main__":
    main()
