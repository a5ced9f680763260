#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Drives gslbd's HTTP API for bench/api.sh, over one kept-alive HTTP
connection (standard library only), and prints one JSON object.

    apidrill.py patch HOST PORT TOKEN NODE N
        N PATCH /v1/nodes/NODE, drain and up in turn, one after the
        other: {"n", "p50_ms", "p99_ms", "max_ms"}
    apidrill.py batch HOST PORT TOKEN FILE N
        N POST /v1/metrics of the body in FILE: the same figures
    apidrill.py read HOST PORT TOKEN PATH SECONDS
        GET PATH for SECONDS, one after the other: {"n", "per_s"}
    apidrill.py writes HOST PORT TOKEN NODE RATE SECONDS
        PATCH drain and up in turn RATE times a second for SECONDS,
        paced: {"n", "per_s", "late"} (late: writes that could not keep
        the pace)

Every answer must be 200: anything else stops the drill with an error.
"""
import http.client
import json
import sys
import time


def conn(host, port):
    return http.client.HTTPConnection(host, int(port), timeout=30)


def request(c, method, path, token, body=None):
    hdr = {"Authorization": "Bearer " + token}
    if body is not None:
        hdr["Content-Type"] = "application/json"
    c.request(method, path, body=body, headers=hdr)
    r = c.getresponse()
    data = r.read()
    if r.status != 200:
        sys.exit("apidrill: %s %s: %d %s" % (method, path, r.status, data[:300]))
    return data


def pct(xs, p):
    xs = sorted(xs)
    if not xs:
        return float("nan")
    k = min(len(xs) - 1, max(0, int(round(p / 100.0 * len(xs) + 0.5)) - 1))
    return xs[k]


def lat_summary(ts):
    ms = [t * 1000 for t in ts]
    return {"n": len(ms), "p50_ms": round(pct(ms, 50), 3),
            "p99_ms": round(pct(ms, 99), 3), "max_ms": round(max(ms), 3)}


STATES = (b'{"admin": "drain"}', b'{"admin": "up"}')


def patch(host, port, token, node, n):
    c = conn(host, port)
    ts = []
    for i in range(int(n)):
        t0 = time.perf_counter()
        request(c, "PATCH", "/v1/nodes/" + node, token, STATES[i % 2])
        ts.append(time.perf_counter() - t0)
    return lat_summary(ts)


def batch(host, port, token, path, n):
    body = open(path, "rb").read()
    c = conn(host, port)
    ts = []
    for _ in range(int(n)):
        t0 = time.perf_counter()
        data = request(c, "POST", "/v1/metrics", token, body)
        ts.append(time.perf_counter() - t0)
    out = lat_summary(ts)
    out["pushed"] = json.loads(data)["pushed"]
    return out


def read(host, port, token, path, seconds):
    c = conn(host, port)
    n, end = 0, time.perf_counter() + float(seconds)
    t0 = time.perf_counter()
    while time.perf_counter() < end:
        request(c, "GET", path, token)
        n += 1
    return {"n": n, "per_s": round(n / (time.perf_counter() - t0), 1)}


def writes(host, port, token, node, rate, seconds):
    c = conn(host, port)
    step = 1.0 / float(rate)
    t0 = time.perf_counter()
    total = int(float(rate) * float(seconds))
    late = 0
    for i in range(total):
        due = t0 + i * step
        now = time.perf_counter()
        if now < due:
            time.sleep(due - now)
        elif now > due + step:
            late += 1
        request(c, "PATCH", "/v1/nodes/" + node, token, STATES[i % 2])
    return {"n": total, "per_s": round(total / (time.perf_counter() - t0), 2),
            "late": late}


def main(argv):
    cmds = {"patch": (patch, 5), "batch": (batch, 5), "read": (read, 5),
            "writes": (writes, 6)}
    if len(argv) < 2 or argv[1] not in cmds or len(argv) - 2 != cmds[argv[1]][1]:
        sys.exit(__doc__)
    print(json.dumps(cmds[argv[1]][0](*argv[2:])))


if __name__ == "__main__":
    main(sys.argv)
