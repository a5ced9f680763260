#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# bench/mmdb-big.py: writes a source file for geoip/build-demo.pl with many
# networks (a stand-in for a full GeoIP database, which the build machine
# does not have): IPv4 networks of /16 to /28 and IPv6 networks of /29 to
# /64 (and a few /96..), walked upwards through the address space with
# gaps, each with one of REGIONS regions and ISPS ISPs.
#   python3 bench/mmdb-big.py [V4 [V6 [REGIONS [ISPS [SEED]]]]] > big.txt
#   perl geoip/build-demo.pl big.txt big.mmdb
import random
import sys

a = [int(x) for x in sys.argv[1:]]
v4, v6, regions, isps, seed = (a + [400000, 150000, 3000, 2000, 1][len(a):])[:5]
rnd = random.Random(seed)


def rec():
    return "r%d i%d %d" % (rnd.randrange(regions), rnd.randrange(isps),
                           64496 + rnd.randrange(1000))


addr = 1 << 24                       # from 1.0.0.0
for _ in range(v4):
    plen = rnd.choice((16, 18, 19, 20, 20, 21, 22, 22, 23, 24, 24, 24, 24,
                       24, 25, 26, 27, 28))
    size = 1 << (32 - plen)
    addr = (addr + size - 1) // size * size
    if addr + size >= 224 << 24:
        break
    print("%d.%d.%d.%d/%d %s" % (addr >> 24, addr >> 16 & 255, addr >> 8 & 255,
                                 addr & 255, plen, rec()))
    addr += size * rnd.choice((1, 1, 1, 2, 3))

addr = 0x2400 << 112
for _ in range(v6):
    plen = rnd.choice((29, 32, 32, 36, 40, 44, 48, 48, 48, 48, 56, 64, 96, 120))
    size = 1 << (128 - plen)
    addr = (addr + size - 1) // size * size
    h = "%032x" % addr
    print("%s/%d %s" % (":".join(h[i:i + 4] for i in range(0, 32, 4)), plen,
                        rec()))
    addr += size * rnd.choice((1, 1, 2, 5))
