#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/steerdrill.py: the multi-CDN steering drill (S3-3, S3-5, S3-6,
S3-8, S3-9).

Three CDN providers (cdn-a, cdn-b, cdn-c) serve four regions through the
REAL gslbd on loopback, configured with the real gslbctl.  Every
simulated step a measurement pipeline pushes, per provider and region,
the success rate and latency of that step (the true curve plus noise:
latency +-3 %, success +-0.3 points, from a seeded generator), the
engine evaluates once per step, and clients follow gslbd's answers:
every step, per region, QUERIES DNS queries with an ECS subnet of the
region go to the steered service and as many to a static twin (same
nodes, same operator weights, `--steering static`), and the answers'
shares decide where that step's requests and bytes go.  Failed requests,
mean latency and spend are the true curves weighted by those shares.

Time compression (docs/STEERING.md): one step of STEP real seconds
(--step, default 2; steer.interval) is one evaluation.  In scenarios 1,
2 and 4 a step is one simulated minute (factor 30 by default), and tau,
the windows and staleness keep their ratio to the interval (tau 5 steps,
windows 1/5/15 steps, stale 5 steps); scenario 3 runs a whole month in
180 steps of four simulated hours.  The change window of max-change is
counted in evaluations (60: one simulated hour), so it compresses with
the interval; scenario 3, whose steps are four hours, sets max-change to
100 (off), since no window of whole steps is an hour there.  A step that
starts late by more
than half a step marks its scenario as lagging (a machine too busy for
the compression).

Scenarios, each on a fresh daemon and store:
  1  provider B degrades in ap-south (success 99.5 % -> 95 % over 2
     simulated minutes): >= 90 % of B's share there has moved within 10
     simulated minutes, the other regions move less than 5 points;
  2  steady state, noise only, 2 simulated hours: <= 4 weight changes per
     row per hour and every share within 5 points of the ideal (the
     engine's target on the noise-free curves after a noise-free warm-up);
  3  budget: a month; cdn-a's price doubles mid-month; cdn-a's spend ends
     the month within its budget (130 % of a month at its opening share
     and price) and every region keeps success >= 98 %;
  4  static vs dynamic: failed requests and mean latency of the static
     twin and the steered service, side by side, on scenario 1's and
     scenario 3's traces (it runs with them);
  5  half score: eu-west served by a and b alone (c at weight 0); b's
     latency there steps to where its score is half a's: b ends with at
     most a sixth of eu-west, within 20 evaluations of the step;
  6  creep: b's latency in eu-west creeps from 35 to 155 ms over an
     hour, with the usual noise: b's share there never goes back up, and
     stays within 5 points of the engine's target at every step;
  7  feeder pauses: eu-west of a and b alone, b at half a's score from
     the start; the feed pauses for 4 steps (stale is 5): no share moves;
     then for 46: the row goes back to the operator's weights by at most
     max-step (10 points) an evaluation and within the change window's
     allowance (which b's fall used), not at once.
After each scenario, `gslbctl steer replay` recomputes every automatic
change from its recorded inputs: all must come out identical (S3-7).

Usage: python3 bench/steerdrill.py [--scenarios 1,2,3,5,6,7] [--seed 1]
                                   [--queries 100] [--port N] [--out DIR]
                                   [--step 2] [--build build] [--short]
--short shortens every phase (for tests/integ/test_steerdrill.sh; the
targets are checked on the shortened phases).  Output: bench/out/
steerdrill-DATE/ (per scenario: gslbd.conf, gslbd.log, the audit log,
the per-step series), results.md and results.json; the tables and one
PASS, FAIL or SHOWN line per target are printed.  Exit status 1 if a target
fails.  Standard library only.  Every process started here is stopped by
PID; all traffic is to 127.0.0.1.
"""
import argparse
import calendar
import json
import os
import random
import signal
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from drill import dns_query  # noqa: E402  (bench/drill.py)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GSLBD = os.path.join(ROOT, "build", "gslbd")
GSLBCTL = os.path.join(ROOT, "build", "gslbctl")
BUILD_MMDB = os.path.join(ROOT, "geoip", "build-demo.pl")

SVC = "video.mcdn.test"        # steered
TWIN = "twin.mcdn.test"        # static, the same rows
# region -> the /16 of its clients (ECS)
REGIONS = [("eu-west", "101.1"), ("us-east", "101.2"), ("ap-south", "101.3"),
           ("sa-east", "101.4")]
PROVIDERS = [("a", "cdn-a", "192.0.2.1", 0.010), ("b", "cdn-b", "192.0.2.2", 0.020),
             ("c", "cdn-c", "192.0.2.3", 0.015)]   # node, provider, addr, $/GB
# The true curves, flat: success % and latency ms per (node, region).
SUCCESS = {"a": [99.7, 99.6, 99.4, 99.5], "b": [99.5, 99.7, 99.5, 99.3],
           "c": [99.6, 99.5, 99.6, 98.8]}
LATENCY = {"a": [28, 45, 85, 70], "b": [35, 30, 60, 95], "c": [50, 40, 45, 80]}
REQS = 10000                  # requests per region per simulated minute
GB_PER_HOUR = 1000            # bytes served per region per simulated hour


def steer_conf(step, max_change=50):
    """The steer section, compressed: one evaluation per step of @step
    real seconds; tau, the windows and staleness keep their ratio to the
    interval (S3-3: tau 5 min, S3-9: windows 1/5/15 min, S2-7: stale
    5 min, for an interval of 1 min), and so does max-change's window of
    60 evaluations (S3-8)."""
    return """steer:
  interval: %d
  tau: %d
  windows: [%d, %d, %d]
  stale: %d
  min-step: 2
  max-step: 10
  max-change: %g
  floor: 5
""" % (step, 5 * step, step, 5 * step, 15 * step, 5 * step, max_change)


def load():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


class Daemon:
    """One gslbd with its store, configured for the drill."""

    def __init__(self, d, port, policy, step, max_change=50):
        self.d, self.port, self.step = d, port, step
        os.makedirs(d)
        with open(os.path.join(d, "geo.txt"), "w") as g:
            for name, net in REGIONS:
                g.write("%s.0.0/16 %s any 64500\n" % (net, name))
        subprocess.run(["perl", BUILD_MMDB, os.path.join(d, "geo.txt"),
                        os.path.join(d, "geo.mmdb")], check=True,
                       stdout=subprocess.DEVNULL)
        with open(os.path.join(d, "mcdn.zone"), "w") as z:
            z.write("$TTL 300\n@ SOA ns1 host 1 3600 600 86400 120\n"
                    "  NS ns1\nns1 A 192.0.2.53\n")
        with open(os.path.join(d, "gslbd.conf"), "w") as c:
            c.write("""server:
  listen: [ "127.0.0.1@%d" ]
  workers: 1
  identity: steerdrill.ns
database:
  path: db
zones:
  - name: mcdn.test
    file: mcdn.zone
geoip:
  database: geo.mmdb
  edns-client-subnet: on
%s""" % (port, steer_conf(step, max_change)))
        for svc in (SVC, TWIN):
            self.ctl("service", "add", svc, "--ttl", "1", "--short-ttl", "1",
                     "--answers", "1")
        self.ctl("service", "set", SVC, "--steering", "dynamic", "--policy", policy)
        for node, prov, addr, price in PROVIDERS:
            self.ctl("node", "add", node, "--addr", addr, "--provider", prov,
                     "--cost-per-gb", "%g" % price)
        for svc in (SVC, TWIN):
            for name, _ in REGIONS:
                self.ctl("weight", "set", svc, "--region", name,
                         *["%s=100" % p[0] for p in PROVIDERS])
        self.log = open(os.path.join(d, "gslbd.log"), "w")
        self.proc = subprocess.Popen([GSLBD, "-c", os.path.join(d, "gslbd.conf")],
                                     stdout=self.log, stderr=subprocess.STDOUT)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        for _ in range(100):
            if dns_query(self.sock, port, SVC, "101.1.0.0", timeout=0.2):
                break
            time.sleep(0.1)
        else:
            raise RuntimeError("gslbd did not answer on port %d" % port)

    def ctl(self, *args, check=True, json_out=False):
        r = subprocess.run([GSLBCTL, "-c", os.path.join(self.d, "gslbd.conf")] +
                           (["--json"] if json_out else []) + list(args),
                           capture_output=True, text=True, timeout=60)
        if check and r.returncode != 0:
            raise RuntimeError("gslbctl %s: %s" % (" ".join(args), r.stderr))
        return json.loads(r.stdout) if json_out else r.stdout

    def push(self, measurements, at, extra=()):
        """measurements: [(node, region, success, latency)], as the
        pipeline pushes them, dated @at, with the lines of extra (other
        pushes), in one gslbctl and one transaction."""
        lines = ["%s --region %s --at %d success=%.3f latency=%.2f" % (m[:2] + (at,) + m[2:])
                 for m in measurements]
        r = subprocess.run([GSLBCTL, "-c", os.path.join(self.d, "gslbd.conf"),
                            "metrics", "push", "--file", "-"],
                           input="\n".join(lines + list(extra)) + "\n",
                           capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            raise RuntimeError("gslbctl metrics push --file: %s" % r.stderr)

    def shares(self, svc, n):
        """Per region: the share of each node in n answers (0..1)."""
        by_addr = {p[2]: p[0] for p in PROVIDERS}
        out = []
        for r, (_, net) in enumerate(REGIONS):
            cnt = {p[0]: 0 for p in PROVIDERS}
            got = 0
            for i in range(n):
                a = dns_query(self.sock, self.port, svc,
                              "%s.%d.0" % (net, i % 250), timeout=1.0)
                if a and a[1] and a[1][0] in by_addr:
                    cnt[by_addr[a[1][0]]] += 1
                    got += 1
            out.append({k: v / got if got else 0 for k, v in cnt.items()})
        return out

    def engine(self):
        """Per region: {node: (applied share or None, target, smoothed
        score or None)} from steer show (None: the operator's weights are
        in force)."""
        rows = self.ctl("steer", "show", SVC, json_out=True)
        out = [None] * len(REGIONS)
        for row in rows:
            region = row["row"].split("|")[1]
            r = [x[0] for x in REGIONS].index(region)
            out[r] = {k: ((v["weight"] / 100.0) if row["steered"] else None,
                          v.get("target", 0) / 100.0, v.get("ema"))
                      for k, v in row["nodes"].items()}
        return out

    def steer_changes(self, since_id):
        """Audited changes of the engine per row key since audit id
        since_id, and the newest id."""
        recs = self.ctl("log", "--since", str(since_id + 1), json_out=True)["records"]
        per, last = {}, since_id
        for rec in recs:
            last = max(last, rec["id"])
            if rec.get("actor") != "gslbd:steer":
                continue
            for ch in rec.get("changes", []):
                if ch.get("kind") == "weight":
                    per[ch["key"]] = per.get(ch["key"], 0) + 1
        return per, last

    def last_id(self):
        recs = self.ctl("log", "--limit", "1", json_out=True)["records"]
        return recs[-1]["id"] if recs else 0

    def stop(self):
        with open(os.path.join(self.d, "audit.txt"), "w") as f:
            f.write(self.ctl("log", check=False))
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.log.close()
        self.sock.close()


class Trace:
    """The true curves with one scenario's events, and the noise."""

    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.event = None     # fn(node, region index, sim minute) -> success
        self.lat_event = None  # the same for latency

    def truth(self, node, r, minute):
        s, l = SUCCESS[node][r], float(LATENCY[node][r])
        if self.event:
            s = self.event(node, r, minute, s)
        if self.lat_event:
            l = self.lat_event(node, r, minute, l)
        return s, l

    def measured(self, minute, noise=True):
        out = []
        for node, _, _, _ in PROVIDERS:
            for r, (region, _) in enumerate(REGIONS):
                s, l = self.truth(node, r, minute)
                if noise:
                    s = min(100.0, s + self.rng.uniform(-0.3, 0.3))
                    l *= 1 + self.rng.uniform(-0.03, 0.03)
                out.append((node, region, s, l))
        return out


def outcome(trace, rec, key):
    """Failed requests and latency sum of the step of @rec, per region,
    for the answer shares of service @key ("dyn" or "static")."""
    reqs = REQS * rec["sim_min"]
    out = []
    for r in range(len(REGIONS)):
        failed = lat = 0.0
        for node, share in rec[key][r].items():
            s, l = trace.truth(node, r, rec["minute"])
            failed += share * reqs * (1 - s / 100)
            lat += share * reqs * l
        out.append((failed, lat))
    return out


class Clock:
    """Steps of @step real seconds, aligned to whole seconds."""

    def __init__(self, step):
        self.step = step
        self.t = int(time.time()) + 1

    def wait(self):
        """Waits for the next step; returns how late it starts (s).
        self.start is its scheduled start (whole seconds)."""
        left = self.t - time.time()
        if left > 0:
            time.sleep(left)
        self.start = self.t
        self.t += self.step
        return max(0.0, -left)


def run_steps(dm, trace, first, steps, sim_per_step, queries, noise=True,
              each=None, after=None, feed=True):
    """Runs steps; per step pushes the measurements (with the lines that
    each(step, minute) returns; nothing when @feed is false: the
    pipeline pauses), waits for the engine's evaluation, reads the
    answers of both services and the engine's shares, and passes the
    step's record to after().  Returns the list of step records."""
    clock, series = Clock(dm.step), []
    for k in range(first, first + steps):
        lag = clock.wait()
        minute = k * sim_per_step / 60
        extra = each(k, minute) if each else ()
        t0 = time.time()
        # Dated at the middle of the step it describes: gslbctl would
        # date it in whole seconds when it runs, and an evaluation during
        # a push (a large part of a compressed step) would then find the
        # shortest window empty (docs/STEERING.md).
        if feed:
            dm.push(trace.measured(minute, noise), clock.start + dm.step // 2, extra)
        t1 = time.time()
        # The engine evaluates once per step on the health thread: read
        # the answers in the second half of the step, after this step's
        # evaluation.
        time.sleep(max(0, t0 + dm.step / 2 - t1))
        t2 = time.time()
        rec = {"step": k, "minute": minute, "sim_min": sim_per_step / 60,
               "t": t0, "lag": lag, "push_s": t1 - t0,
               "load": load(), "dyn": dm.shares(SVC, queries),
               "static": dm.shares(TWIN, queries)}
        t3 = time.time()
        rec["engine"] = dm.engine()
        rec["dns_s"], rec["show_s"] = t3 - t2, time.time() - t3
        if after:
            after(rec)
        series.append(rec)
    return series


def share_of(engine_row, node):
    """The share of node in force in a row (the operator's third while
    the engine has not applied shares)."""
    v = engine_row[node][0]
    return 100.0 / len(PROVIDERS) if v is None else v


def totals(trace, series, key):
    """Requests, failed requests and mean latency of service @key over
    @series."""
    failed = lat = 0.0
    for rec in series:
        for f, l in outcome(trace, rec, key):
            failed += f
            lat += l
    n = sum(REQS * rec["sim_min"] for rec in series) * len(REGIONS)
    return n, failed, lat / n if n else 0


# ---------------------------------------------------------------------------
# Scenarios.  Each returns (results dict, [(target text, passed, figure)]).


def scenario1(dm, a):
    trace = Trace(a.seed)
    warm, before, after = (6, 2, 10) if a.short else (10, 5, 15)
    deg_r = 2                                   # ap-south
    start = warm + before                       # degradation starts (min)

    def event(node, r, minute, s):
        if node != "b" or r != deg_r or minute < start:
            return s
        return max(95.0, 99.5 - 4.5 * (minute - start) / 2)
    trace.event = event
    run_steps(dm, trace, 0, warm, 60, 10)
    series = run_steps(dm, trace, warm, before + after + 1, 60, a.queries)
    at0 = [rec for rec in series if rec["minute"] == start][0]
    b0 = share_of(at0["engine"][deg_r], "b")
    moved_at, b10 = None, None
    for rec in series:
        if rec["minute"] < start:
            continue
        b = share_of(rec["engine"][deg_r], "b")
        if moved_at is None and b0 - b >= 0.9 * b0:
            moved_at = rec["minute"] - start
        if rec["minute"] <= start + 10:
            b10 = b
    moved = (b0 - b10) / b0 * 100 if b0 else 0
    # dig's view: B's answers in ap-south over the last 3 simulated minutes.
    tail = [rec for rec in series if start + 7 <= rec["minute"] <= start + 10]
    dig_b = sum(rec["dyn"][deg_r]["b"] for rec in tail) / max(1, len(tail)) * 100
    others = 0.0
    for r in range(len(REGIONS)):
        if r == deg_r:
            continue
        for node in SUCCESS:
            ref = share_of(at0["engine"][r], node)
            for rec in series:
                if rec["minute"] >= start:
                    others = max(others, abs(share_of(rec["engine"][r], node) - ref))
    res = {"b_share_before": b0, "b_share_after_10min": b10, "moved_pct": moved,
           "minutes_to_90pct": moved_at, "dig_b_share_pct_last3": dig_b,
           "others_max_move_points": others, "series": series}
    targets = [
        ("S1 >= 90 % of B's ap-south share moved within 10 simulated min",
         moved >= 90, "%.1f %% moved (%.1f -> %.1f points), 90 %% after %s min; "
         "dig: B %.1f %% of answers in the last 3 min" %
         (moved, b0, b10, "%g" % moved_at if moved_at is not None else "never", dig_b)),
        ("S1 other regions unchanged (every share within 5 points)", others < 5,
         "largest move %.1f points" % others)]
    return trace, series, res, targets


def scenario2(dm, a):
    trace = Trace(a.seed)
    warm, minutes = (8, 30) if a.short else (12, 120)
    run_steps(dm, trace, 0, warm, 60, 10, noise=False)
    ideal = dm.engine()
    since = dm.last_id()
    series = run_steps(dm, trace, warm, minutes, 60, a.queries)
    per, _ = dm.steer_changes(since)
    hours = minutes / 60
    worst_rate = max([v / hours for k, v in per.items() if k.startswith(SVC)] + [0])
    dev = dig_dev = 0.0
    for r in range(len(REGIONS)):
        for node in SUCCESS:
            want = ideal[r][node][1]
            for rec in series:
                dev = max(dev, abs(share_of(rec["engine"][r], node) - want))
            avg = sum(rec["dyn"][r][node] for rec in series) / len(series) * 100
            dig_dev = max(dig_dev, abs(avg - want))
    res = {"ideal": [{k: v[1] for k, v in row.items()} for row in ideal],
           "changes_per_row": per, "hours": hours,
           "worst_changes_per_row_hour": worst_rate,
           "max_dev_points": dev, "dig_mean_dev_points": dig_dev}
    targets = [
        ("S2 <= 4 weight changes per row per hour", worst_rate <= 4,
         "worst row %.1f per hour (%s)" % (worst_rate, ", ".join(
             "%s %d" % (k.split("|")[1], v) for k, v in sorted(per.items())) or
             "no change")),
        ("S2 shares within 5 points of the ideal", dev <= 5,
         "largest deviation %.1f points at any step; dig's mean share %.1f "
         "points from it" % (dev, dig_dev))]
    return trace, series, res, targets


def month_frac(t, start, end):
    """The fraction of the budget the daemon pro-rates at t (as
    steer_budget_state(): at least one day's worth)."""
    return max((t - start) / (end - start), 86400 / (end - start))


def scenario3(dm, a):
    trace = Trace(a.seed)
    days = 30
    hours_per_step = 4
    steps = days * 24 // hours_per_step
    if a.short:
        steps //= 6
    warm = 10
    price = {p[0]: p[3] for p in PROVIDERS}
    run_steps(dm, trace, 0, warm, hours_per_step * 3600, 10, noise=False)
    opening = dm.engine()
    a_share = sum(share_of(opening[r], "a") for r in range(len(REGIONS))) / 100
    # A's budget: 130 % of a month at its opening share and price.
    sim_month = steps * hours_per_step
    limit = 1.3 * a_share * GB_PER_HOUR * sim_month * price["a"]
    dm.ctl("budget", "set", "cdn-a", "--limit", "%.2f" % limit, "--alert", "80")
    spend = {"dyn": 0.0, "static": 0.0}
    now = time.gmtime()
    m0 = calendar.timegm((now.tm_year, now.tm_mon, 1, 0, 0, 0))
    m1 = calendar.timegm((now.tm_year + now.tm_mon // 12, now.tm_mon % 12 + 1, 1, 0, 0, 0))
    state = {"doubled_at": None}

    def each(k, minute):
        i = k - warm            # steps into the month
        if i == steps // 2 and state["doubled_at"] is None:
            price["a"] *= 2
            dm.ctl("node", "set", "a", "--cost-per-gb", "%g" % price["a"])
            state["doubled_at"] = i
        # The billing pipeline: cdn-a's spend so far, mapped onto the
        # daemon's calendar month so that the pro-rated comparison is the
        # simulated month's (docs/STEERING.md).
        sim_frac = max(i / steps, 1 / days)
        real_frac = month_frac(time.time(), m0, m1)
        return ["--provider cdn-a spent=%.4f" % (spend["dyn"] * real_frac / sim_frac)]

    def account(rec):
        """The step's bytes go where its answers sent them."""
        for key in ("dyn", "static"):
            for r in range(len(REGIONS)):
                spend[key] += (rec[key][r]["a"] * GB_PER_HOUR * hours_per_step *
                               price["a"])
        rec["spend_a"] = dict(spend)
        rec["price_a"] = price["a"]
    series = run_steps(dm, trace, warm, steps, hours_per_step * 3600, a.queries,
                       each=each, after=account)
    worst = {"dyn": 100.0, "static": 100.0}
    for rec in series:
        for key in worst:
            for r in range(len(REGIONS)):
                ok = sum(rec[key][r][n] * trace.truth(n, r, 0)[0] for n in SUCCESS)
                worst[key] = min(worst[key], ok)
    res = {"limit": limit, "a_opening_share": a_share / len(REGIONS) * 100,
           "spend_dyn": spend["dyn"], "spend_static": spend["static"],
           "worst_region_success_dyn": worst["dyn"],
           "worst_region_success_static": worst["static"],
           "doubled_at_step": state["doubled_at"], "steps": steps}
    targets = [
        ("S3 cdn-a's month ends within its budget", spend["dyn"] <= limit,
         "spent %.0f of %.0f (%.0f %%); static weights: %.0f (%.0f %%)" %
         (spend["dyn"], limit, spend["dyn"] / limit * 100, spend["static"],
          spend["static"] / limit * 100)),
        ("S3 every region keeps success >= 98 %", worst["dyn"] >= 98,
         "worst region-step %.2f %% (static: %.2f %%)" % (worst["dyn"], worst["static"]))]
    return trace, series, res, targets


# Scenarios 5 to 7: how shares follow scores (docs/STEERING.md, "From
# scores to shares").  eu-west is region 0.
LIVE = (0.5, 0.45, 0.05)      # --policy live: success, latency, cost
SIXTH = 100.0 / 6


def live_score(success, latency, cost, max_cost):
    """The engine's score of a node under `live` (steer.c score())."""
    ns = min(1.0, max(0.0, (success - 95) / (99.9 - 95)))
    nl = min(1.0, max(0.0, (200 - latency) / (200 - 20)))
    return LIVE[0] * ns + LIVE[1] * nl + LIVE[2] * (1 - cost / max_cost)


def half_latency(r):
    """b's latency in region @r at which its score is half a's."""
    price = {p[0]: p[3] for p in PROVIDERS}
    top = max(price.values())
    half = live_score(SUCCESS["a"][r], LATENCY["a"][r], price["a"], top) / 2
    rest = live_score(SUCCESS["b"][r], 200, price["b"], top)
    return 200 - 180 * (half - rest) / LIVE[1]


def two_node_rows(dm):
    """eu-west served by a and b alone (c at weight 0), in both services."""
    for svc in (SVC, TWIN):
        dm.ctl("weight", "set", svc, "--region", REGIONS[0][0], "a=100", "b=100", "c=0")


def share2(engine_row, node):
    """The share in force of @node in a row of a and b at 100, c at 0."""
    v = engine_row[node][0]
    return v if v is not None else (50.0 if node in ("a", "b") else 0.0)


def scenario5(dm, a):
    trace = Trace(a.seed)
    two_node_rows(dm)
    warm, after = (6, 16) if a.short else (10, 25)
    lat = half_latency(0)
    trace.lat_event = lambda node, r, minute, l: (
        lat if node == "b" and r == 0 and minute >= warm else l)
    run_steps(dm, trace, 0, warm, 60, 10)
    series = run_steps(dm, trace, warm, after, 60, a.queries)
    first = first_t = None
    for rec in series:
        k = rec["step"] - warm + 1        # evaluations that saw the step
        row = rec["engine"][0]
        if first_t is None and row["b"][1] <= SIXTH:
            first_t = k
        if first is None and share2(row, "b") <= SIXTH:
            first = k
    stays = first is not None and all(
        share2(rec["engine"][0], "b") <= SIXTH for rec in series
        if rec["step"] - warm + 1 >= first)
    end = series[-1]["engine"][0]
    ratio = (end["b"][2] / end["a"][2]) if end["a"][2] and end["b"][2] else 0
    dig_b = sum(rec["dyn"][0]["b"] for rec in series[-5:]) / 5 * 100
    res = {"latency_b": lat, "evals_to_sixth": first, "evals_target_sixth": first_t,
           "b_end": share2(end, "b"), "b_target_end": end["b"][1],
           "smoothed_ratio_end": ratio, "dig_b_last5_pct": dig_b}
    targets = [
        ("S5 b, at half a's score, ends with at most a sixth of eu-west",
         share2(end, "b") <= SIXTH,
         "b %.1f %% (target %.1f %%; smoothed scores %.3f and %.3f, ratio %.2f); "
         "dig: b %.1f %% of answers in the last 5 steps, the static twin 50 %%" %
         (share2(end, "b"), end["b"][1], end["a"][2] or 0, end["b"][2] or 0, ratio,
          dig_b)),
        ("S5 at most a sixth within 20 evaluations of the step, and stays",
         first is not None and first <= 20 and stays,
         "b's latency %d -> %.0f ms; its target at a sixth after %s evaluations, "
         "its share after %s" % (LATENCY["b"][0], lat, first_t, first))]
    return trace, series, res, targets


def scenario6(dm, a):
    trace = Trace(a.seed)
    warm, creep = (6, 30) if a.short else (10, 60)
    rate = 120.0 / creep                  # ms per simulated minute
    trace.lat_event = lambda node, r, minute, l: (
        l + rate * min(creep, max(0, minute - warm)) if node == "b" and r == 0 else l)
    run_steps(dm, trace, 0, warm, 60, 10)
    series = run_steps(dm, trace, warm, creep + 1, 60, a.queries)
    b = [share_of(rec["engine"][0], "b") for rec in series]
    ups = sum(1 for x, y in zip(b, b[1:]) if y > x + 1e-9)
    downs = sum(1 for x, y in zip(b, b[1:]) if y < x - 1e-9)
    gap = max(abs(share_of(rec["engine"][0], "b") - rec["engine"][0]["b"][1])
              for rec in series)
    dig = [sum(rec["dyn"][0]["b"] for rec in series[i:i + 10]) / 10 * 100
           for i in (0, len(series) - 10)]
    res = {"b_start": b[0], "b_end": b[-1], "ups": ups, "downs": downs,
           "max_gap_points": gap, "dig_b_first_last10": dig, "b_series": b}
    targets = [
        ("S6 a creeping latency never sends b's share back up", ups == 0,
         "%d moves down, %d up: %.1f -> %.1f points over %d simulated minutes "
         "(latency %d -> %d ms); dig: b %.1f %% of answers in the first 10 steps, "
         "%.1f %% in the last 10" % (downs, ups, b[0], b[-1], creep, LATENCY["b"][0],
                                     LATENCY["b"][0] + 120, dig[0], dig[1])),
        ("S6 b's share within 5 points of the engine's target at every step",
         gap <= 5, "largest gap %.1f points" % gap)]
    return trace, series, res, targets


def scenario7(dm, a):
    trace = Trace(a.seed)
    two_node_rows(dm)
    lat = half_latency(0)
    trace.lat_event = lambda node, r, minute, l: lat if node == "b" and r == 0 else l
    # The long pause outlasts the change window (60 evaluations) that
    # b's fall opened, whose allowance the way back shares.
    warm, fed, short, long_ = (10, 4, 4, 50) if a.short else (16, 6, 4, 46)
    run_steps(dm, trace, 0, warm, 60, a.queries)
    ref = {n: share2(dm.engine()[0], n) for n in ("a", "b")}
    k = warm
    s1 = run_steps(dm, trace, k, short, 60, a.queries, feed=False)
    s2 = run_steps(dm, trace, k + short, fed, 60, a.queries)
    s3 = run_steps(dm, trace, k + short + fed, long_, 60, a.queries, feed=False)
    kept = max(abs(share2(rec["engine"][0], n) - ref[n]) for rec in s1 + s2
               for n in ("a", "b"))
    back = [share2(rec["engine"][0], "b") for rec in s3]
    prev = share2(s2[-1]["engine"][0], "b")
    steps = [y - x for x, y in zip([prev] + back, back)]
    moves = [d for d in steps if abs(d) > 1e-9]
    first = next((i + 1 for i, d in enumerate(steps) if abs(d) > 1e-9), None)
    released = s3[-1]["engine"][0]["b"][0] is None
    dig = ["%.0f" % (rec["dyn"][0]["b"] * 100) for rec in s3]
    res = {"ref": ref, "kept_max_move": kept, "return_moves": moves,
           "first_move_step": first, "released": released, "b_return": back,
           "dig_b_return_pct": dig}
    targets = [
        ("S7 a pause of the feed shorter than stale keeps the shares", kept < 1e-9,
         "largest move %.2f points in %d steps without a push and %d after it "
         "(b at %.1f %%)" % (kept, short, fed, ref["b"])),
        ("S7 after stale, back to the operator's weights by at most max-step an "
         "evaluation, within the change window", released and len(moves) >= 2 and
         max(abs(d) for d in moves) <= 10.01,
         "b %s %% (moves of %s points, the first %s steps after the last push); "
         "dig: b %s %% of answers per step" % (
             " -> ".join("%.1f" % x for x in [prev] + [x for x, d in zip(back, steps)
                                                       if abs(d) > 1e-9]),
             ", ".join("%.1f" % d for d in moves), first,
             " ".join(dig)))]
    return trace, series_of(s1, s2, s3), res, targets


def series_of(*parts):
    out = []
    for p in parts:
        out += p
    return out


def replay(dm, sc):
    """S3-7: every automatic change of the scenario, recomputed by
    `steer replay` from its recorded inputs, comes out identical."""
    out = dm.ctl("steer", "replay", SVC, check=False, json_out=True)
    same = sum(1 for d in out if d.get("result") == "identical")
    decided = sum(1 for d in out if "shares" in d)
    return ("S%s replay: every automatic change recomputes identically" % sc,
            decided > 0 and same == decided,
            "%d decisions replayed, %d identical" % (decided, same))


def side_by_side(name, trace, series):
    n, fs, ls = totals(trace, series, "static")
    n, fd, ld = totals(trace, series, "dyn")
    return {"trace": name, "requests": n, "failed_static": fs, "failed_dyn": fd,
            "latency_static": ls, "latency_dyn": ld}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scenarios", default="1,2,3,5,6,7")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--queries", type=int, default=100,
                    help="DNS queries per region and service per step")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--out", default="")
    ap.add_argument("--short", action="store_true")
    ap.add_argument("--step", type=int, default=2,
                    help="real seconds per step (steer.interval)")
    ap.add_argument("--build", default="build",
                    help="the build directory holding gslbd and gslbctl")
    a = ap.parse_args()
    global GSLBD, GSLBCTL
    GSLBD = os.path.join(ROOT, a.build, "gslbd")
    GSLBCTL = os.path.join(ROOT, a.build, "gslbctl")
    # A TERM (a test's timeout) still stops the daemon of the scenario.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    for b in (GSLBD, GSLBCTL):
        if not os.access(b, os.X_OK):
            sys.exit("steerdrill: %s missing: run make" % b)
    out = a.out or os.path.join(ROOT, "bench", "out",
                                time.strftime("steerdrill-%Y%m%d-%H%M%S"))
    os.makedirs(out, exist_ok=True)
    random.seed(a.seed)       # dns_query's ids
    load0 = load()
    results, targets, sbs = {}, [], []
    policies = {"1": "live", "2": "live", "3": "vod", "5": "live", "6": "live",
                "7": "live"}
    for sc in a.scenarios.split(","):
        port = a.port
        if not port:
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
            s.close()
        dm = Daemon(os.path.join(out, "scenario%s" % sc), port, policies[sc],
                    a.step, 100 if sc == "3" else 50)
        t0 = time.time()
        try:
            trace, series, res, tg = {"1": scenario1, "2": scenario2,
                                      "3": scenario3, "5": scenario5,
                                      "6": scenario6, "7": scenario7}[sc](dm, a)
            tg.append(replay(dm, sc))
        finally:
            dm.stop()
        res["real_seconds"] = round(time.time() - t0)
        res["load_end"] = load()
        med = lambda k: sorted(x[k] for x in series)[len(series) // 2]
        res["steps"] = len(series)
        res["worst_lag_s"] = max(x["lag"] for x in series)
        res["median_push_dns_show_s"] = [med("push_s"), med("dns_s"), med("show_s")]
        res["load_start"] = series[0]["load"]
        if sc in ("1", "3"):
            sbs.append(side_by_side({"1": "scenario 1 (B degrades in ap-south)",
                                     "3": "scenario 3 (a month, cdn-a's price "
                                          "doubles)"}[sc], trace, series))
        with open(os.path.join(out, "scenario%s" % sc, "series.json"), "w") as f:
            json.dump(series, f)
        res.pop("series", None)
        results[sc] = res
        targets += tg
    for s in sbs:
        targets.append(("S4 static vs dynamic: %s" % s["trace"], None,
                        "failed %.0f vs %.0f, mean latency %.1f vs %.1f ms" %
                        (s["failed_static"], s["failed_dyn"], s["latency_static"],
                         s["latency_dyn"])))
    lines = ["# steerdrill: seed %d, load %.2f at the start, %.2f at the end%s" %
             (a.seed, load0, load(), " (short)" if a.short else ""), "",
             "| target | result | figures |", "|---|---|---|"]
    word = {True: "PASS", False: "FAIL", None: "SHOWN"}
    for text, ok, fig in targets:
        lines.append("| %s | %s | %s |" % (text, word[ok], fig))
    lines += ["", "| scenario | steps | real s | worst lag of a step | median push / "
              "DNS / steer show s | load at start, end |", "|---|--:|--:|--:|--:|--:|"]
    for sc, res in results.items():
        lines.append("| %s | %d | %d | %.2f s%s | %s | %.2f, %.2f |" % (
            sc, res["steps"], res["real_seconds"], res["worst_lag_s"],
            " (lagging)" if res["worst_lag_s"] > a.step / 2 else "",
            " / ".join("%.2f" % x for x in res["median_push_dns_show_s"]),
            res["load_start"], res["load_end"]))
    if sbs:
        lines += ["", "| trace | requests | failed, static | failed, dynamic | "
                  "mean latency, static | mean latency, dynamic |",
                  "|---|--:|--:|--:|--:|--:|"]
        for s in sbs:
            lines.append("| %s | %d | %.0f (%.3f %%) | %.0f (%.3f %%) | %.1f ms | %.1f ms |" %
                         (s["trace"], s["requests"], s["failed_static"],
                          s["failed_static"] / s["requests"] * 100, s["failed_dyn"],
                          s["failed_dyn"] / s["requests"] * 100, s["latency_static"],
                          s["latency_dyn"]))
    text = "\n".join(lines) + "\n"
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write(text)
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump({"seed": a.seed, "short": a.short, "load_start": load0,
                   "results": results, "side_by_side": sbs,
                   "targets": [{"target": t, "pass": ok, "figures": fig}
                               for t, ok, fig in targets]}, f, indent=1)
    print(text)
    for t, ok, fig in targets:
        print("%s %s: %s" % (word[ok], t, fig))
    print("steerdrill: output in %s" % out, file=sys.stderr)
    return 0 if all(ok is not False for _, ok, _ in targets) else 1


if __name__ == "__main__":
    sys.exit(main())
