#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/releasedrill.py: the gray release drill (S4-10).

Runs gray releases against the REAL gslbd on loopback, time compressed
(a step of --every seconds, 4 by default, for the 10 minutes an operator
would give one), and measures the targets of docs/STEERING.md:

  * "widen": a release of node new over steps 1,5,25,50,100 with the guard
    success>=99 while a metrics agent pushes new's success (99.3..99.99,
    noisy) every --push-every seconds.  Round after round, a client
    sends, for each of --clients networks (ECS /24s 10.x.y.0), --asks
    queries; the drill records which networks got new.  Measured: each
    step's lateness against its schedule (the controller's own times),
    the share of networks in the release against the step, networks that
    left the release while it widened (must be 0), networks outside that
    got new (a network given new in some but not all of its queries of a
    round: must be 0; the service is not sticky, so a network that could
    get new from the weighted draw would show it).
  * "rollback" (--rollbacks times): a release over the same steps; once
    it stands at 25 %, the agent pushes success 97 (below the guard).
    Measured: from the push returning to the controller's rollback (its
    own time, whole seconds), to the last answer that named new and to
    the end of the first round in which no network got new (by DNS),
    against one evaluation (1 s); answers with new after that round
    (must be 0).

Output: bench/out/releasedrill-YYYYmmdd-HHMMSS/ (configuration, gslbd log,
audit log, results.json) and a markdown table on stdout.

Usage: [GSLBD=PATH GSLBCTL=PATH] python3 bench/releasedrill.py [--every 4]
           [--clients 1000] [--asks 3] [--push-every 0.5] [--rollbacks 5]
           [--port 47950] [--seed 1]

Standard library only (the DNS client is bench/drill.py's).  Every
process started here is stopped by PID.
"""
import argparse
import json
import os
import random
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from drill import dns_query  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# GSLBD and GSLBCTL in the environment name other binaries (a private
# copy, so that a rebuild during the drill cannot change what it runs).
GSLBD = os.environ.get("GSLBD", os.path.join(ROOT, "build", "gslbd"))
GSLBCTL = os.environ.get("GSLBCTL", os.path.join(ROOT, "build", "gslbctl"))
NEW = "192.0.2.9"
STEPS = "1,5,25,50,100"
EVAL_S = 1.0          # the controller's evaluation interval (release_run.h)


class Drill:
    def __init__(self, a, out):
        self.a = a
        self.out = out
        self.conf = os.path.join(out, "gslbd.conf")
        self.success = 99.9
        self.noisy = True
        self.stop = False
        self.lock = threading.Lock()   # one push at a time, in order
        self.round_s = []
        self.last_new = 0.0   # when a query last got new
        self.rng = random.Random(a.seed)
        self.nets = ["10.%d.%d.0" % (i // 250, i % 250) for i in range(a.clients)]

    def ctl(self, *args, check=True):
        r = subprocess.run([GSLBCTL, "-c", self.conf] + list(args),
                           capture_output=True, text=True, timeout=30)
        if check and r.returncode != 0:
            raise RuntimeError("gslbctl %s: %s" % (" ".join(args), r.stderr))
        return r.stdout

    def release(self):
        return json.loads(self.ctl("--json", "release", "show",
                                   "www.gslb.test"))["release"]

    def setup(self):
        with open(os.path.join(self.out, "z.zone"), "w") as z:
            z.write("$TTL 300\n@ SOA ns1 host 1 3600 600 86400 120\n"
                    "  NS ns1\nns1 A 192.0.2.53\n")
        with open(self.conf, "w") as c:
            c.write('server:\n  listen: [ "127.0.0.1@%d" ]\n  workers: 2\n'
                    '  identity: drill.ns\ndatabase:\n  path: db\n'
                    'zones:\n  - name: gslb.test\n    file: z.zone\n'
                    % self.a.port)
        self.ctl("service", "add", "www.gslb.test", "--ttl", "30")
        for n, ip in (("a", "192.0.2.1"), ("b", "192.0.2.2"), ("new", NEW)):
            self.ctl("node", "add", n, "--addr", ip)
        self.ctl("weight", "set", "www.gslb.test", "a=50", "b=50", "new=50")
        log = open(os.path.join(self.out, "gslbd.log"), "w")
        self.gslbd = subprocess.Popen([GSLBD, "-c", self.conf], stdout=log,
                                      stderr=subprocess.STDOUT)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        for _ in range(200):
            if self.gslbd.poll() is not None:
                raise RuntimeError("gslbd exited; see %s/gslbd.log" % self.out)
            if dns_query(self.sock, self.a.port, "www.gslb.test", "10.0.0.0",
                         timeout=0.1):
                break
            time.sleep(0.05)
        else:
            raise RuntimeError("gslbd does not answer")
        self.agent = threading.Thread(target=self.push_loop, daemon=True)
        self.agent.start()

    def push_loop(self):
        # The CDN's log pipeline: new's success, with noise while good.
        while not self.stop:
            with self.lock:
                v = self.success
                if self.noisy:
                    v = round(self.rng.uniform(99.3, 99.99), 2)
                self.ctl("metrics", "push", "new", "success=%g" % v, check=False)
            time.sleep(self.a.push_every)

    def round(self):
        """One round: {network: number of its asks answered with new}."""
        t0 = time.time()
        got = {}
        for net in self.nets:
            n = 0
            for _ in range(self.a.asks):
                r = dns_query(self.sock, self.a.port, "www.gslb.test", net)
                if r and NEW in r[1]:
                    n += 1
                    self.last_new = time.time()
            got[net] = n
        self.round_s.append(time.time() - t0)
        return got

    def run_widen(self):
        self.success, self.noisy = 99.9, True
        self.ctl("release", "start", "www.gslb.test", "--node", "new",
                 "--steps", STEPS, "--every", "%ds" % self.a.every,
                 "--guard", "success>=99")
        steps, left, mixed, prev_in = {}, 0, 0, set()
        shares = {}
        limit = time.time() + self.a.every * 8 + 30
        while time.time() < limit:
            rel = self.release()
            got = self.round()
            after = self.release()
            pct, state = rel["percent"], rel["state"]
            steps.setdefault(pct, rel["since_unix"])
            if state != "running" or after["percent"] != pct:
                if state == "completed":
                    break
                continue   # the step changed during the round
            now_in = {n for n, k in got.items() if k == self.a.asks}
            mixed += sum(1 for k in got.values() if 0 < k < self.a.asks)
            left += len(prev_in - now_in)
            prev_in = now_in
            shares.setdefault(pct, []).append(100.0 * len(now_in) / len(self.nets))
        rel = self.release()
        steps.setdefault(rel["percent"], rel["since_unix"])
        order = sorted(steps)
        late = [steps[b] - steps[a] - self.a.every for a, b in zip(order, order[1:])]
        return {
            "state": rel["state"],
            "steps_seen": order,
            "step_lateness_s": late,
            "share_by_step": {str(k): round(sum(v) / len(v), 2) for k, v in shares.items()},
            "networks_that_left": left,
            "outside_given_new": mixed,
        }

    def run_rollback(self):
        with self.lock:
            self.success, self.noisy = 99.9, True
        # A good figure newer than the last bad one before the start.
        time.sleep(2 * self.a.push_every + 1)
        self.ctl("release", "start", "www.gslb.test", "--node", "new",
                 "--steps", STEPS, "--every", "%ds" % self.a.every,
                 "--guard", "success>=99")
        limit = time.time() + self.a.every * 4 + 30
        while self.release()["percent"] < 25 and time.time() < limit:
            time.sleep(0.2)
        with self.lock:
            self.noisy, self.success = False, 97
            self.ctl("metrics", "push", "new", "success=97")
            pushed = time.time()
        first_empty, after = None, 0
        while time.time() < pushed + 10:
            got = self.round()
            t = time.time()
            if first_empty is None:
                if not any(got.values()):
                    first_empty = t
            else:
                after += sum(got.values())
                if t > first_empty + 2:
                    break
        rel = self.release()
        return {
            "state": rel["state"],
            "rolled_back_from": 25,
            "controller_lag_s": rel["since_unix"] - int(pushed),
            "dns_lag_s": round(first_empty - pushed, 2) if first_empty else None,
            "last_new_s": round(self.last_new - pushed, 2),
            "given_new_after": after,
            "reason": rel["reason"],
        }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--every", type=int, default=4)
    ap.add_argument("--clients", type=int, default=1000)
    ap.add_argument("--asks", type=int, default=3)
    ap.add_argument("--push-every", type=float, default=0.5)
    ap.add_argument("--rollbacks", type=int, default=5)
    ap.add_argument("--port", type=int, default=47950)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    random.seed(a.seed)
    out = os.path.join(ROOT, "bench", "out",
                       time.strftime("releasedrill-%Y%m%d-%H%M%S"))
    os.makedirs(out)
    d = Drill(a, out)
    res = {"args": vars(a), "load_start": os.getloadavg()[0],
           "binaries": [GSLBD, GSLBCTL]}
    try:
        d.setup()
        res["widen"] = d.run_widen()
        res["rollback"] = [d.run_rollback() for _ in range(a.rollbacks)]
        with open(os.path.join(out, "audit.log"), "w") as f:
            f.write(d.ctl("log", "--limit", "1000"))
    finally:
        d.stop = True
        if getattr(d, "gslbd", None):
            d.gslbd.terminate()
            d.gslbd.wait(timeout=10)
    res["load_end"] = os.getloadavg()[0]
    res["round_s"] = round(sum(d.round_s) / max(len(d.round_s), 1), 2)
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(res, f, indent=2)
    w = res["widen"]
    print("| figure | target | measured |\n|---|---|---|")
    print("| widen: steps reached | 1,5,25,50,100 | %s (%s) |"
          % (",".join("%g" % s for s in w["steps_seen"]), w["state"]))
    print("| widen: lateness of each step (s) | <= %.0f (one evaluation) | %s |"
          % (EVAL_S, ", ".join("%+d" % x for x in w["step_lateness_s"])))
    print("| widen: share of networks in, by step (%%) | the step | %s |"
          % ", ".join("%s: %.1f" % kv for kv in w["share_by_step"].items()))
    print("| widen: networks that left while widening | 0 | %d |" % w["networks_that_left"])
    print("| widen: networks outside given new | 0 | %d |" % w["outside_given_new"])
    rb = res["rollback"]
    print("| rollback: controller lag after the push (s, %d runs) | <= 1 evaluation | %s |"
          % (len(rb), ", ".join(str(r["controller_lag_s"]) for r in rb)))
    print("| rollback: last answer with new, after the push (s) | <= 1 evaluation | %s |"
          % ", ".join(str(r["last_new_s"]) for r in rb))
    print("| rollback: end of the first round without new (s) | - | %s |"
          % ", ".join(str(r["dns_lag_s"]) for r in rb))
    print("| rollback: answers with new after that | 0 | %d |"
          % sum(r["given_new_after"] for r in rb))
    print("\na round (%d networks x %d asks) took %.2f s on average; load average "
          "%.1f at the start, %.1f at the end; output in %s"
          % (a.clients, a.asks, res["round_s"], res["load_start"], res["load_end"],
             os.path.relpath(out, ROOT)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
