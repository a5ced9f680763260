#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/drill.py: the cutover drill (S0-1, S0-5, S0-12, S0-13).

Reproduces the seed operator's ISP cutover against the REAL gslbd on
loopback, with time compressed by FACTOR (default 10: one simulated minute
is 6 real seconds).  Every duration that belongs to the model or to the
operator's configuration is compressed by the same factor: the degradation
curve, probe intervals, TTLs, settle, gray watch, pre-warm lead and ramp.
Two things are not compressed: network latencies (they are properties of a
path, not durations of the event) and the 24 h notice (see docs/DRILL.md).

Pieces (see docs/DRILL.md for the model):
  * node servers: one child process (this script with --serve) serving one
    real HTTP listener per node on 127.0.0.1; an affected node answers a
    probe 503 with its current failure probability (S0-1 curve), delays a
    good answer by its degradation latency, and refuses connections (the
    listener is closed) while it is unavailable;
  * gslbd: the real daemon, configured by gslbctl, probing those servers;
  * resolvers: RESOLVERS caches, each with its own ECS /24 inside cn-gd of
    geoip/demo.mmdb, re-querying gslbd (UDP, 127.0.0.1) when the TTL of
    the cached answer expires;
  * clients: RPS requests per simulated second spread evenly over the
    resolvers; a request goes to the node of its resolver's cached answer
    and fails with that node's current failure probability (expected
    values, so the failure rate itself has no sampling noise); a good
    request's latency is a base (12..42 ms, P99 42 ms) plus the node's
    degradation latency;
  * a metrics agent (the CDN's log pipeline, S1-2/S2-2): every
    METRICS_EVERY simulated seconds, one `gslbctl metrics push --file -`
    batch with, for each node, the failure rate and loss of the last interval (with the sampling
    noise of SAMPLE requests) and the median RTT;
  * a probe resolver without cache asks gslbd every simulated second for
    probe.drill.test, a service whose cn-gd row holds exactly the affected
    nodes (answers 8, all-down empty), so every answer lists every
    affected node still in the answers: that is how "left the answers" is
    measured.

Runs: "announced" (cutover added ahead with pre-derate and pre-warm) and
"unannounced" (no cutover entry, only the health thread reacts).  Output:
bench/out/drill-YYYYmmdd-HHMMSS/ (configs, gslbd logs, audit logs,
results.json, results.md) and a markdown table on stdout.

Usage: python3 bench/drill.py [--factor 10] [--runs announced,unannounced]
                              [--nodes 20] [--affected 7] [--derate 55]
                              [--prewarm 35] [--rps 1000] [--resolvers 48]
                              [--seed 1 | --seeds 1-10] [--burn 0.9]
                              [--metrics-every 10] [--sample 500]

--seeds runs every run for each seed of a list ("1-10", "1,4,7-9") and
prints, per run, the median and the worst of each figure over the seeds,
with the per-seed table (with the metrics agent's worst lag behind its
schedule and the 1-minute load average at the start and end of the
window).  A run in which the simulation itself fell behind (the metrics
agent by more than two rounds, or the traffic loop by more than 10
simulated seconds) is marked invalid and left out of the medians.  --burn SHARE runs one CPU burner per core beside
the drill, each busy for SHARE of every 10 ms (a reproducible "busy
machine"; 0.9 puts the load average near the core count), stopped with
the drill.
GSLBD and GSLBCTL in the environment name the binaries (default build/).
Standard library only.  Every process started here is stopped by PID.
"""
import argparse
import json
import math
import os
import random
import select
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# GSLBD and GSLBCTL in the environment name other binaries (a copy, so
# that a rebuild during a long run does not pull them away).
GSLBD = os.environ.get("GSLBD", os.path.join(ROOT, "build", "gslbd"))
GSLBCTL = os.environ.get("GSLBCTL", os.path.join(ROOT, "build", "gslbctl"))
MMDB = os.path.join(ROOT, "geoip", "demo.mmdb")

# The event, in simulated seconds from the start of the cutover window.
WINDOW = 600          # the window: 10 simulated minutes (report interval)
RECOVER = 540         # the ISP work is done: affected nodes healthy again
PRE = 460             # simulated seconds simulated before the window
POST = 60             # and after it

# ---------------------------------------------------------------------------
# The S0-1 curve.  Node parameters: cross = the simulated second at which
# its success rate falls below 60 % (spread over 100..170 s, i.e. inside
# S0-1's 90..180 s), down = the second from which it refuses connections
# (the first three affected nodes, 190..230 s: "some fully unavailable after
# 180 s"), None for the others.


def node_params(n_affected):
    out = []
    for i in range(n_affected):
        cross = 100.0 + (70.0 * i / (n_affected - 1) if n_affected > 1 else 0)
        down = 190.0 + 20.0 * i if i < 3 else None
        out.append({"cross": cross, "down": down})
    return out


def fail_prob(p, t):
    """Failure probability of an affected node at simulated time t (p is
    its node_params entry, None for an unaffected node)."""
    if p is None or t < 0 or t >= RECOVER:
        return 0.0
    if p["down"] is not None and t >= p["down"]:
        return 1.0
    c = p["cross"]
    if t < 60:                     # loss 0.1 % -> 2 %
        return 0.001 + 0.019 * t / 60
    if t < 90:                     # latency and loss grow: success 98 -> 88 %
        return 0.02 + 0.10 * (t - 60) / 30
    if t < c:                      # partial outage: success 88 % -> 60 % at c
        return 0.12 + 0.28 * (t - 90) / (c - 90)
    return min(0.55, 0.40 + 0.15 * (t - c) / 60)   # then down to 45 %


def unavailable(p, t):
    return (p is not None and p["down"] is not None and
            p["down"] <= t < RECOVER)


def deg_latency_ms(p, t):
    """Degradation latency (S0-1: 30 ms -> 200 ms), reaching 200 ms when
    the node crosses 60 %."""
    if p is None or t < 0 or t >= RECOVER:
        return 0.0
    return 30.0 + 170.0 * min(1.0, t / p["cross"])


# ---------------------------------------------------------------------------
# --serve: the node HTTP servers (child process).


def serve_main(spec_file):
    with open(spec_file) as f:
        spec = json.load(f)
    t0, factor, deadline = spec["t0"], spec["factor"], spec["deadline"]
    nodes = spec["nodes"]          # [{"id", "params" or None}]
    stop = threading.Event()
    ports = {}
    lock = threading.Lock()

    def sim_now():
        return (time.time() - t0) * factor

    def handle(conn, p, rng):
        try:
            conn.settimeout(5)
            conn.recv(4096)
            t = sim_now()
            with lock:
                bad = rng.random() < fail_prob(p, t)
            if bad:
                status, body = "503 Service Unavailable", b"sick\n"
            else:
                d = deg_latency_ms(p, t)
                if d:
                    time.sleep(d / 1000.0)
                status, body = "200 OK", b"healthy\n"
            conn.sendall(("HTTP/1.1 %s\r\nContent-Length: %d\r\n"
                          "Connection: close\r\n\r\n" % (status, len(body))
                          ).encode() + body)
        except OSError:
            pass
        finally:
            conn.close()

    def listen(port):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", port))
        s.listen(64)
        s.settimeout(0.05)
        return s

    def run(node, sock, seed):
        p = node["params"]
        rng = random.Random(seed)
        port = sock.getsockname()[1]
        while not stop.is_set() and time.time() < deadline:
            if unavailable(p, sim_now()):
                if sock:
                    sock.close()    # connections refused from now on
                    sock = None
                time.sleep(0.02)
                continue
            if sock is None:
                sock = listen(port)
            try:
                c, _ = sock.accept()
            except socket.timeout:
                continue
            except OSError:
                continue
            threading.Thread(target=handle, args=(c, p, rng),
                             daemon=True).start()
        if sock:
            sock.close()

    threads = []
    for k, node in enumerate(nodes):
        s = listen(node["port"])
        ports[node["id"]] = s.getsockname()[1]
        th = threading.Thread(target=run, args=(node, s, spec["seed"] * 1000 + k),
                              daemon=True)
        threads.append(th)
    tmp = spec["ports"] + ".tmp"
    with open(tmp, "w") as f:
        json.dump(ports, f)
    os.rename(tmp, spec["ports"])
    for th in threads:
        th.start()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    while not stop.is_set() and time.time() < deadline:
        time.sleep(0.2)
    stop.set()
    for th in threads:
        th.join(1)


# ---------------------------------------------------------------------------
# DNS over UDP with EDNS Client Subnet, standard library only.


def dns_query(sock, port, name, ecs_net, ecs_len=24, timeout=1.0):
    """Returns (ttl, [addresses]) of the A answer, or None on timeout."""
    qid = random.getrandbits(16)
    hdr = struct.pack(">HHHHHH", qid, 0, 1, 0, 0, 1)
    qname = b"".join(bytes([len(l)]) + l.encode() for l in name.split(".")) + b"\0"
    addr = socket.inet_aton(ecs_net)[:(ecs_len + 7) // 8]
    ecs = struct.pack(">HBB", 1, ecs_len, 0) + addr
    opt = struct.pack(">HH", 8, len(ecs)) + ecs
    msg = hdr + qname + struct.pack(">HH", 1, 1) + b"\0" + \
        struct.pack(">HHIH", 41, 1232, 0, len(opt)) + opt
    try:
        sock.sendto(msg, ("127.0.0.1", port))
    except OSError:
        return None
    end = time.time() + timeout
    while True:
        left = end - time.time()
        if left <= 0:
            return None
        r, _, _ = select.select([sock], [], [], left)
        if not r:
            return None
        try:
            data = sock.recv(4096)
        except OSError:        # ICMP port unreachable: not up yet
            return None
        if len(data) >= 12 and struct.unpack(">H", data[:2])[0] == qid:
            break
    an = struct.unpack(">H", data[6:8])[0]
    off = 12

    def skip_name(o):
        while True:
            l = data[o]
            if l == 0:
                return o + 1
            if l & 0xC0 == 0xC0:
                return o + 2
            o += 1 + l

    off = skip_name(off) + 4
    ttl, addrs = None, []
    for _ in range(an):
        off = skip_name(off)
        typ, _cls, t, rdl = struct.unpack(">HHIH", data[off:off + 10])
        off += 10
        if typ == 1 and rdl == 4:
            addrs.append(socket.inet_ntoa(data[off:off + 4]))
            ttl = t if ttl is None else min(ttl, t)
        off += rdl
    return (ttl if ttl is not None else 0), addrs


# ---------------------------------------------------------------------------
# The drill.


class Drill:
    def __init__(self, a, outdir):
        self.a = a
        self.out = outdir
        self.f = a.factor
        self.procs = []

    def real(self, sim_s):
        return sim_s / self.f

    def ctl(self, d, *args, check=True, stdin=None):
        r = subprocess.run([GSLBCTL, "-c", os.path.join(d, "gslbd.conf")] +
                           list(args), capture_output=True, text=True,
                           timeout=30, input=stdin)
        if check and r.returncode != 0:
            raise RuntimeError("gslbctl %s: %s" % (" ".join(args), r.stderr))
        return r.stdout

    def stop(self, p):
        if p.poll() is None:
            p.terminate()
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(5)

    def free_port(self, kind=socket.SOCK_DGRAM):
        s = socket.socket(socket.AF_INET, kind)
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        return port

    def conf(self):
        """The operator's configuration, compressed (real seconds)."""
        f = self.f
        return {
            "ttl": max(1, round(30 / f)),          # S1-8: 30 s
            "short_ttl": max(1, round(10 / f)),    # S0-11: 10 s
            "interval": 60 / f,                    # S0-7: 60 s normally
            "fast_interval": 10 / f,               # S0-7: 10 s in a window
            "timeout": 0.5,                        # a network wait: not compressed
            "demote_after": 2,                     # S0-8
            "restore_after": 3,                    # S0-8
            "settle": 300 / f,                     # 5 min of short TTLs
            "gray_watch": 120 / f,                 # S1-10: 2 min
            "notice": 300 / f,                     # see DRILL.md
            "prewarm_lead": 300 / f,
            "ramp": 600 / f,                       # 10 min (default)
            "short_ttl_lead": 300 / f,             # default: 5 min
            "confirm_rounds": 2,                   # default (S0-8's count)
        }

    def run(self, name, announced):
        a, f = self.a, self.f
        c = self.conf()
        d = os.path.join(self.out, name)
        os.makedirs(d)
        port = self.free_port()
        with open(os.path.join(d, "drill.zone"), "w") as z:
            z.write("$TTL 300\n@ SOA ns1 host 1 3600 600 86400 120\n"
                    "  NS ns1\nns1 A 192.0.2.53\n")
        with open(os.path.join(d, "gslbd.conf"), "w") as cf:
            cf.write("""server:
  listen: [ "127.0.0.1@%d" ]
  workers: 2
  identity: drill.ns
database:
  path: db
zones:
  - name: drill.test
    file: drill.zone
geoip:
  database: %s
  edns-client-subnet: on
health:
  interval: %g
  timeout: %g
  fast-interval: %g
  demote-after: %d
  restore-after: %d
  settle: %g
  gray-watch: %g
cutover:
  notice: %g
  prewarm-lead: %g
  ramp: %g
  short-ttl-lead: %g
  confirm-rounds: %d
  auto-derate: %d
""" % (port, MMDB, c["interval"], c["timeout"], c["fast_interval"],
                c["demote_after"], c["restore_after"], c["settle"],
                c["gray_watch"], c["notice"], c["prewarm_lead"], c["ramp"],
                c["short_ttl_lead"], c["confirm_rounds"], a.derate))

        # Nodes: cn-gd primaries (the first AFFECTED on ctcc, the ISP under
        # cutover, the rest on cmcc/cucc), cn-gx primaries (the
        # neighbouring region, default row) and cn-gx standbys in the
        # cn-gd row (S0-4, S0-9).
        params = node_params(a.affected)
        nodes = []
        for i in range(a.nodes):
            aff = i < a.affected
            nodes.append({"id": "gd%02d" % (i + 1), "addr": "192.0.2.%d" % (i + 1),
                          "region": "cn-gd",
                          "isp": "ctcc" if aff else ("cmcc" if i % 2 else "cucc"),
                          "pool": "primary", "params": params[i] if aff else None})
        for i in range(4):
            nodes.append({"id": "gx%02d" % (i + 1), "addr": "192.0.2.%d" % (101 + i),
                          "region": "cn-gx", "isp": "cucc", "pool": "primary",
                          "params": None})
        for i in range(a.standby):
            nodes.append({"id": "sb%02d" % (i + 1), "addr": "192.0.2.%d" % (201 + i),
                          "region": "cn-gx", "isp": "cucc", "pool": "standby",
                          "params": None})
        self.nodes = nodes
        by_addr = {n["addr"]: n for n in nodes}
        affected = [n for n in nodes if n["params"]]

        ports = {n["id"]: self.free_port(socket.SOCK_STREAM) for n in nodes}
        self.ctl(d, "service", "add", "www.drill.test", "--ttl", str(c["ttl"]),
                 "--short-ttl", str(c["short_ttl"]))
        self.ctl(d, "service", "add", "probe.drill.test", "--ttl", "0",
                 "--short-ttl", "0", "--answers", "8", "--all-down", "empty")
        for n in nodes:
            self.ctl(d, "node", "add", n["id"], "--addr", n["addr"],
                     "--region", n["region"], "--isp", n["isp"],
                     "--pool", n["pool"], "--allow-unknown-location", "--probe",
                     "http://127.0.0.1:%d/health expect=200 match=healthy" %
                     ports[n["id"]])
        gd = [n for n in nodes if n["region"] == "cn-gd"]
        sb = [n for n in nodes if n["pool"] == "standby"]
        gx = [n for n in nodes if n["region"] == "cn-gx" and n["pool"] == "primary"]
        self.ctl(d, "weight", "set", "www.drill.test", "--region", "cn-gd",
                 *["%s=100" % n["id"] for n in gd + sb])
        self.ctl(d, "weight", "set", "www.drill.test",
                 *["%s=100" % n["id"] for n in gx + sb])
        self.ctl(d, "weight", "set", "probe.drill.test", "--region", "cn-gd",
                 *["%s=100" % n["id"] for n in affected])

        # The timeline (real epoch): t0 = window start, fixed only once
        # the store is set up (a few dozen gslbctl runs, slow on a busy
        # machine), so that the whole pre-window part is simulated.
        start = time.time()
        t0 = math.ceil(start + 10 + self.real(PRE))
        end_real = t0 + self.real(WINDOW + POST)
        spec = os.path.join(d, "serve.json")
        with open(spec, "w") as sf:
            json.dump({"t0": t0, "factor": f, "deadline": end_real + 20,
                       "seed": a.seed, "ports": os.path.join(d, "ports.json"),
                       "nodes": [{"id": n["id"], "params": n["params"],
                                  "port": ports[n["id"]]} for n in nodes]}, sf)
        srv = subprocess.Popen([sys.executable, os.path.abspath(__file__),
                                "--serve", spec],
                               stdout=open(os.path.join(d, "serve.log"), "w"),
                               stderr=subprocess.STDOUT)
        self.procs.append(srv)
        for _ in range(600):
            if os.path.exists(os.path.join(d, "ports.json")):
                break
            time.sleep(0.05)
        else:
            raise RuntimeError("the node servers did not start; see %s/serve.log" % d)

        qs = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        for attempt in range(3):
            log = open(os.path.join(d, "gslbd.log"), "w")
            g = subprocess.Popen([GSLBD, "-c", os.path.join(d, "gslbd.conf")],
                                 stdout=log, stderr=subprocess.STDOUT)
            self.procs.append(g)
            time.sleep(0.3)
            if g.poll() is None or "already served" not in open(log.name).read():
                break
            # The free port was taken between the probe and gslbd's
            # bind (other work on the machine): another one.
            new = self.free_port()
            conf = open(os.path.join(d, "gslbd.conf")).read()
            with open(os.path.join(d, "gslbd.conf"), "w") as cf:
                cf.write(conf.replace("127.0.0.1@%d" % port, "127.0.0.1@%d" % new))
            port = new
        for _ in range(300):
            if g.poll() is not None:
                raise RuntimeError("gslbd exited; see %s/gslbd.log" % d)
            if dns_query(qs, port, "www.drill.test", "14.16.0.0", timeout=0.1):
                break
            time.sleep(0.05)
        else:
            raise RuntimeError("gslbd does not answer")
        # The first simulated second the run can honour: normally
        # -PRE + 20; later on a machine too busy to start in time.
        started_at = (time.time() - t0) * f
        if started_at > -PRE + 20:
            print("drill: warning: gslbd answered only at %+.0f simulated s "
                  "(planned %+d)" % (started_at, -PRE + 20), flush=True)

        # Resolvers: /24s inside cn-gd (14.16.0.0/12 ctcc, 120.196.0.0/14
        # cmcc in geoip/demo.txt), half on each.
        resolvers = []
        for k in range(a.resolvers):
            net = ("14.16.%d.0" % k) if k % 2 == 0 else ("120.196.%d.0" % k)
            resolvers.append({"net": net, "exp": 0.0, "node": None, "queries": 0})
        per_res = a.rps / a.resolvers   # requests per simulated second each

        # The probe resolver (no cache): presence of each affected node.
        presence = []               # (sim t, set of affected addrs present)
        stop_probe = threading.Event()

        def prober():
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            while not stop_probe.is_set():
                now = time.time()
                r = dns_query(s, port, "probe.drill.test", "14.16.200.0",
                              timeout=0.5)
                if r is not None:
                    presence.append(((now - t0) * f, set(r[1])))
                time.sleep(max(0, self.real(1) - (time.time() - now)))

        pth = threading.Thread(target=prober, daemon=True)
        pth.start()

        # The metrics agent (S1-2, S2-2): every METRICS_EVERY simulated
        # seconds each node's access statistics are pushed with gslbctl,
        # as a CDN's log pipeline would: the request failure rate and the
        # loss over the last interval (the curve's mean failure
        # probability with the sampling noise of SAMPLE requests) and the
        # median request RTT (27 ms + degradation latency).
        stop_agent = threading.Event()
        pushes = [0]
        agent_lag = [0.0]           # worst lag behind schedule in the window

        def agent():
            rng = random.Random(a.seed * 7919 + (1 if announced else 2))
            ev = a.metrics_every
            nxt = math.ceil((time.time() - t0) * f / ev) * ev
            while not stop_agent.is_set():
                wait = t0 + self.real(nxt) - time.time()
                if wait > 0 and stop_agent.wait(wait):
                    break
                now_sim = (time.time() - t0) * f
                if 0 <= now_sim <= WINDOW:
                    # How far behind its schedule the agent runs while
                    # the window is on (a busy machine slows the push).
                    agent_lag[0] = max(agent_lag[0], now_sim - nxt)
                batch = []
                for n in nodes:
                    p = n["params"]
                    m = sum(fail_prob(p, nxt - k) for k in range(int(ev))) / int(ev)
                    if m > 0:
                        m += rng.gauss(0, math.sqrt(m * (1 - m) / a.sample))
                    m = min(1.0, max(0.0, m))
                    rtt = 27 + sum(deg_latency_ms(p, nxt - k)
                                   for k in range(int(ev))) / int(ev)
                    batch.append("%s loss=%.3f failure_rate=%.3f rtt_ms=%.0f\n" %
                                 (n["id"], 100 * m, 100 * m, rtt))
                # One gslbctl run and one transaction per round, as a
                # pipeline would batch it.
                self.ctl(d, "metrics", "push", "--file", "-", check=False,
                         stdin="".join(batch))
                pushes[0] += len(batch)
                nxt += ev

        ath = None
        if a.metrics_every > 0:
            ath = threading.Thread(target=agent, daemon=True)
            ath.start()

        def at(ep):
            return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ep))

        cut_added = None
        buckets = {}                # minute index -> [requests, failures]
        lat = {}                    # latency ms (rounded) -> expected count
        node_req = {}               # node id -> requests in the window
        ttl_seen = {}
        base = [12 + 30.3 * (k + 0.5) / 31 for k in range(31)]   # P99 ~ 42 ms
        queries = 0
        t_sim = -PRE + 20
        lag_max = 0.0
        load = []                   # 1-min load average at the start and end
        while t_sim < WINDOW + POST:
            target = t0 + self.real(t_sim)
            now = time.time()
            if now < target:
                time.sleep(target - now)
            else:
                lag_max = max(lag_max, now - target)
            if announced and cut_added is None and t_sim >= -400:
                self.ctl(d, "cutover", "add", "--region", "cn-gd", "--isp", "ctcc",
                         "--start", at(t0), "--end", at(t0 + self.real(WINDOW)),
                         "--derate", str(a.derate), "--prewarm", str(a.prewarm),
                         "--note", "drill")
                cut_added = t_sim
            now = time.time()
            for r in resolvers:
                if now >= r["exp"]:
                    ans = dns_query(qs, port, "www.drill.test", r["net"])
                    queries += 1
                    r["queries"] += 1
                    if ans and ans[1]:
                        r["node"] = by_addr.get(ans[1][0])
                        r["exp"] = now + ans[0]
                        ttl_seen[ans[0]] = ttl_seen.get(ans[0], 0) + 1
                    else:
                        r["exp"] = now + 1   # SERVFAIL/timeout: retry later
                n = r["node"]
                if n is None:
                    continue
                p = n["params"]
                fp = fail_prob(p, t_sim)
                b = buckets.setdefault(math.floor(t_sim / 60), [0.0, 0.0])
                b[0] += per_res
                b[1] += per_res * fp
                if 0 <= t_sim < WINDOW:
                    node_req[n["id"]] = node_req.get(n["id"], 0) + per_res
                    ok = per_res * (1 - fp)
                    if ok > 0:
                        dl = deg_latency_ms(p, t_sim)
                        w = ok / len(base)
                        for bl in base:
                            k = int(bl + dl + 0.5)
                            lat[k] = lat.get(k, 0) + w
            if t_sim in (0, WINDOW):
                load.append(round(os.getloadavg()[0], 1))
            t_sim += 1
        stop_probe.set()
        pth.join(2)
        stop_agent.set()
        if ath:
            ath.join(10)

        # Results.
        win = [buckets[m] for m in range(0, WINDOW // 60)]
        rates = [b[1] / b[0] if b[0] else 0 for b in win]
        tot_r = sum(b[0] for b in win)
        tot_f = sum(b[1] for b in win)

        def p99(h):
            total = sum(h.values())
            acc = 0
            for k in sorted(h):
                acc += h[k]
                if acc >= 0.99 * total:
                    return k
            return None

        pre_rate = [buckets[m][1] / buckets[m][0] for m in (-2, -1) if m in buckets]
        # Time from crossing 60 % to leaving the answers, per affected node.
        # A node absent at its crossing counts from its latest exit before
        # it (negative delay); otherwise from its first exit after it.
        # Re-entries: times it came back into the answers while still
        # degraded (before RECOVER).
        repool = []
        for n in affected:
            c_t = n["params"]["cross"]
            left = None
            last_exit = None
            back = 0
            was_in = True
            for ts, present in presence:
                if ts < 0:
                    continue
                inn = n["addr"] in present
                if was_in and not inn:
                    if ts <= c_t:
                        last_exit = ts
                    elif left is None:
                        left = ts
                if inn and not was_in and ts < RECOVER:
                    back += 1
                    if ts <= c_t:
                        last_exit = None
                was_in = inn
            if last_exit is not None:
                left = last_exit
            repool.append({"node": n["id"], "cross": c_t, "down": n["params"]["down"],
                           "left": left,
                           "delay": None if left is None else left - c_t,
                           "reentries": back})
        status = self.ctl(d, "--json", "status", check=False)
        with open(os.path.join(d, "status.json"), "w") as sf:
            sf.write(status)
        with open(os.path.join(d, "audit.log"), "w") as lf:
            lf.write(self.ctl(d, "log", check=False))
        with open(os.path.join(d, "cutover.txt"), "w") as lf:
            lf.write(self.ctl(d, "cutover", "list", check=False))
        self.stop(g)
        self.stop(srv)
        qs.close()
        with open(os.path.join(d, "presence.json"), "w") as pf:
            json.dump([[round(t, 1), sorted(s)] for t, s in presence], pf)
        standby_share = sum(node_req.get(n["id"], 0) for n in sb) / tot_r
        affected_share = sum(node_req.get(n["id"], 0) for n in affected) / tot_r
        return {
            "run": name,
            "announced": announced,
            "peak": max(rates),
            "peak_minute": rates.index(max(rates)),
            "mean": tot_f / tot_r,
            "per_minute": rates,
            "pre_window_rate": max(pre_rate) if pre_rate else None,
            "p99_ms": p99(lat),
            "repool": repool,
            "affected_share": affected_share,
            "standby_share": standby_share,
            "dns_queries": queries,
            "ttls_seen": ttl_seen,
            "max_loop_lag_s": round(lag_max, 3),
            "metric_pushes": pushes[0],
            "metrics_lag_max_s": round(agent_lag[0], 1),
            # A run measures gslbd only while the simulation keeps its
            # schedule: the metrics agent within two rounds, the traffic
            # loop within 10 simulated s.  Otherwise it is reported, but
            # marked and left out of the medians.
            "valid": (agent_lag[0] <= 2 * max(a.metrics_every, 0) and
                      lag_max * f <= 10),
            "loadavg": load,
            "started_at_s": round(started_at),
            "gslbd_rc": g.returncode,
        }


def fmt_pct(x):
    return "%.2f %%" % (100 * x)


def table(results, factor):
    lines = ["| run | failure peak (1-min) | failure mean (window) | "
             "crossing -> out of answers (max / median) | late (> 20 s) | "
             "P99 latency | affected share | standby share |",
             "|---|---|---|---|---|---|---|---|"]
    for r in results:
        ds = [x["delay"] for x in r["repool"] if x["delay"] is not None]
        never = sum(1 for x in r["repool"] if x["delay"] is None)
        late = sum(1 for x in ds if x > 20) + never
        ds.sort()
        med = ds[len(ds) // 2] if ds else None
        rp = ("%+.0f s / %+.0f s" % (max(ds), med)) if ds else "n/a"
        if never:
            rp += " (%d never)" % never
        lines.append("| %s | %s (minute %d) | %s | %s | %d of %d | %d ms | %s | %s |" % (
            r["run"], fmt_pct(r["peak"]), r["peak_minute"], fmt_pct(r["mean"]),
            rp, late, len(r["repool"]), r["p99_ms"], fmt_pct(r["affected_share"]),
            fmt_pct(r["standby_share"])))
    lines.append("")
    lines.append("Metrics agent, worst lag behind its schedule in the window "
                 "(simulated s): " + ", ".join(
                     "%s %s" % (r["run"], r.get("metrics_lag_max_s")) for r in results))
    lines.append("")
    lines.append("Simulated time (factor %g: 1 simulated minute = %g real s)." %
                 (factor, 60 / factor))
    lines.append("")
    lines.append("Per node, crossing 60 % -> out of the answers (simulated s; "
                 "negative: left before crossing):")
    lines.append("")
    hdr = "| node | crosses at | refuses from |" + "".join(
        " %s |" % r["run"] for r in results)
    lines.append(hdr)
    lines.append("|---|---|---|" + "---|" * len(results))
    for i, x in enumerate(results[0]["repool"]):
        row = "| %s | %.0f s | %s |" % (x["node"], x["cross"],
                                        "%.0f s" % x["down"] if x["down"] else "-")
        for r in results:
            y = r["repool"][i]
            if y["delay"] is None:
                row += " never |"
            else:
                row += " %+.0f s%s |" % (y["delay"], " (%d re-entries)" % y["reentries"]
                                         if y["reentries"] else "")
        lines.append(row)
    lines.append("")
    lines.append("Failure rate per simulated minute of the window:")
    lines.append("")
    lines.append("| run |" + "".join(" %d |" % m for m in range(WINDOW // 60)))
    lines.append("|---|" + "---|" * (WINDOW // 60))
    for r in results:
        lines.append("| %s |" % r["run"] + "".join(" %.2f %% |" % (100 * x)
                                                   for x in r["per_minute"]))
    return "\n".join(lines)


def parse_seeds(text):
    """ "1-3,7" -> [1, 2, 3, 7] """
    seeds = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        seeds.extend(range(int(lo), int(hi or lo) + 1))
    if not seeds:
        raise ValueError("no seed in %r" % text)
    return seeds


def burn_main(share, limit):
    """One burner: busy for share of every 10 ms, for at most limit s."""
    end = time.time() + limit
    busy, idle = 0.01 * share, 0.01 * (1 - share)
    while time.time() < end:
        t = time.time() + busy
        while time.time() < t:
            pass
        if idle > 0:
            time.sleep(idle)


def start_burners(share, limit):
    procs = []
    for cpu in range(os.cpu_count() or 1):
        procs.append(subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--burner",
             "%g:%g" % (share, limit)]))
    return procs


def key_figures(r):
    """The drill's figures for one run, as the summary compares them."""
    ds = [x["delay"] for x in r["repool"] if x["delay"] is not None]
    never = sum(1 for x in r["repool"] if x["delay"] is None)
    return {"peak": r["peak"], "mean": r["mean"],
            "worst_delay": max(ds) if ds else None,
            "late": sum(1 for x in ds if x > 20) + never}


def seeds_table(per_seed):
    """per_seed: [(seed, [result, ...])] -> markdown: per seed, then the
    median and worst over the seeds for each run."""
    runs = [r["run"] for r in per_seed[0][1]]
    lines = ["| seed |" + "".join(" %s peak | %s mean | %s late | %s agent lag | "
                                  "%s load |" % (n, n, n, n, n) for n in runs),
             "|---|" + "---|---|---|---|---|" * len(runs)]
    nvalid = [0] * len(runs)
    for seed, results in per_seed:
        row = "| %d |" % seed
        for i, r in enumerate(results):
            k = key_figures(r)
            ok = r.get("valid", True)
            nvalid[i] += ok
            row += " %s%s | %s | %d | %s s | %s |" % (
                fmt_pct(k["peak"]), "" if ok else " (invalid: lagged)",
                fmt_pct(k["mean"]), k["late"],
                r.get("metrics_lag_max_s"),
                " / ".join("%.1f" % x for x in r.get("loadavg", [])))
        lines.append(row)
    lines += ["", "Over the valid runs (the simulation kept its schedule): " +
              ", ".join("%s %d of %d" % (n, nvalid[i], len(per_seed))
                        for i, n in enumerate(runs)),
              "", "| run | peak median | peak worst | mean median | mean worst | "
              "crossing -> out, worst | seeds with a late node |", "|---|---|---|---|---|---|---|"]
    for i, n in enumerate(runs):
        ks = [key_figures(res[i]) for _, res in per_seed if res[i].get("valid", True)]
        if not ks:
            lines.append("| %s | no valid run |||||| " % n)
            continue
        peaks = sorted(k["peak"] for k in ks)
        means = sorted(k["mean"] for k in ks)
        delays = [k["worst_delay"] for k in ks if k["worst_delay"] is not None]
        lines.append("| %s | %s | %s | %s | %s | %s | %d of %d |" % (
            n, fmt_pct(peaks[len(peaks) // 2] if len(peaks) % 2 else
                       (peaks[len(peaks) // 2 - 1] + peaks[len(peaks) // 2]) / 2),
            fmt_pct(peaks[-1]),
            fmt_pct(means[len(means) // 2] if len(means) % 2 else
                    (means[len(means) // 2 - 1] + means[len(means) // 2]) / 2),
            fmt_pct(means[-1]),
            "%+.0f s" % max(delays) if delays else "n/a",
            sum(1 for k in ks if k["late"]), len(ks)))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--burner", help=argparse.SUPPRESS)
    ap.add_argument("--serve", help=argparse.SUPPRESS)
    ap.add_argument("--factor", type=float, default=10)
    ap.add_argument("--runs", default="announced,unannounced")
    ap.add_argument("--nodes", type=int, default=20)
    ap.add_argument("--affected", type=int, default=7)
    ap.add_argument("--standby", type=int, default=3)
    ap.add_argument("--derate", type=int, default=55)
    ap.add_argument("--prewarm", type=int, default=35)
    ap.add_argument("--rps", type=float, default=1000)
    ap.add_argument("--resolvers", type=int, default=48)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--seeds", help='run each seed of a list ("1-10")')
    ap.add_argument("--burn", type=float, default=0,
                    help="CPU burners beside the drill, busy this share (0..1)")
    ap.add_argument("--metrics-every", type=float, default=10,
                    help="simulated seconds between metric pushes; 0: none")
    ap.add_argument("--sample", type=int, default=500,
                    help="requests behind each pushed failure rate")
    a = ap.parse_args()
    if a.serve:
        serve_main(a.serve)
        return 0
    if a.burner:
        share, limit = (float(x) for x in a.burner.split(":"))
        burn_main(share, limit)
        return 0
    for b in (GSLBD, GSLBCTL):
        if not os.access(b, os.X_OK):
            sys.exit("%s missing: run make first" % b)
    if not 0 <= a.burn < 1:
        sys.exit("--burn takes a share from 0 to below 1")
    seeds = parse_seeds(a.seeds) if a.seeds else [a.seed]
    out = os.path.join(ROOT, "bench", "out",
                       time.strftime("drill-%Y%m%d-%H%M%S"))
    os.makedirs(out)
    print("drill: factor %g (1 simulated minute = %g real s), output %s" %
          (a.factor, 60 / a.factor, out), flush=True)
    burners = []
    if a.burn:
        # Bounded: the burners stop by themselves after the longest the
        # drill can take (each run is about 1120 simulated seconds).
        limit = len(seeds) * len(a.runs.split(",")) * (1200 / a.factor + 60)
        burners = start_burners(a.burn, limit)
        print("drill: %d CPU burners at %g %%" % (len(burners), 100 * a.burn),
              flush=True)
    per_seed = []
    try:
        for seed in seeds:
            a.seed = seed
            random.seed(seed)
            sd = os.path.join(out, "seed-%d" % seed) if a.seeds else out
            os.makedirs(sd, exist_ok=True)
            dr = Drill(a, sd)
            print("drill: seed %d, configuration (real seconds): %s" %
                  (seed, json.dumps(dr.conf())), flush=True)
            results = []
            try:
                for name in a.runs.split(","):
                    print("drill: seed %d run %s ..." % (seed, name), flush=True)
                    t = time.time()
                    results.append(dr.run(name, name == "announced"))
                    print("drill: seed %d run %s done in %.0f s" %
                          (seed, name, time.time() - t), flush=True)
            finally:
                for p in dr.procs:
                    dr.stop(p)
            with open(os.path.join(sd, "results.json"), "w") as f:
                json.dump({"args": vars(a), "conf": dr.conf(), "results": results},
                          f, indent=1)
            md = table(results, a.factor)
            with open(os.path.join(sd, "results.md"), "w") as f:
                f.write(md + "\n")
            print(md, flush=True)
            per_seed.append((seed, results))
    finally:
        for p in burners:
            if p.poll() is None:
                p.terminate()
                p.wait(5)
    if a.seeds:
        md = seeds_table(per_seed)
        with open(os.path.join(out, "seeds.md"), "w") as f:
            f.write("seeds %s, burn %g\n\n%s\n" % (a.seeds, a.burn, md))
        print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
