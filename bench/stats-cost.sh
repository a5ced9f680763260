#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/stats-cost.sh: what the statistics endpoint costs the query path
# (`make bench-stats`; docs/BENCHMARKS.md, "Statistics cost").
#
# Two gslbd servers up for the whole run, the same configuration, weight
# store and GeoIP database, one worker each: "gslbd" without a stats
# section, "gslbd_stats" with one (so the query threads also keep the
# per-node answer tallies) and scraped once a second while it is
# measured.  bench/compare.sh does the work: each server in a cpuacct
# group of its own, every thread pinned to the server CPU, dnsperf pinned
# to the other; within each round every workload runs against both
# servers in turn, so a burst of noise from other work on the machine
# lands on both.  Server CPU per answered query = the group's
# cpuacct.usage delta (ns, exact) / completed queries.
#
# Workloads: static (static A, no EDNS: only the always-on counters) and
# geo-pick (ECS -> GeoIP -> weighted pick of one node: every answer also
# goes into the tally).
#
# Knobs (passed on to bench/compare.sh): RUNS (7), DURATION (8), CLIENTS,
# OUTSTANDING, PLACEMENTS ("0:1 1:0"), WORKLOADS ("static geo-pick"),
# SCRAPE (1), BASE_PORT (15580), CG_PREFIX (gslbd-statscost-).
#
# Output: bench/out/stats-cost-YYYYmmdd-HHMMSS/ (bench/out/
# stats-cost-latest): compare.sh's files plus stats-cost.md, the median
# per workload and placement with stats off and on and their ratio.
# `bench/stats-cost.sh --summary DIR` prints it again.
set -euo pipefail
cd "$(dirname "$0")/.."

summarise() {  # summarise CSV
  python3 - "$1" <<'EOF'
import csv, os, re, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
env = os.path.join(os.path.dirname(sys.argv[1]), "env.txt")
m = re.search(r"SCRAPE=(\S+)", open(env).read()) if os.path.exists(env) else None
dur = re.search(r"DURATION=(\d+)", open(env).read()) if os.path.exists(env) else None
scrape = ("every %s s, at most %d a run" % (m.group(1), int(dur.group(1)) // int(m.group(1)) + 2)
          if m and dur else "scraped while measured")
runs = {}
for r in rows:
    runs.setdefault((r["workload"], r["placement"], r["server"]), []).append(
        float(r["server_us_per_query"]))
wls = sorted({k[0] for k in runs}, key=["static", "geo-pick"].index)
places = sorted({k[1] for k in runs})
n = max(int(r["run"]) for r in rows)
print("Server CPU per answered query (µs), stats off (`gslbd`) and on "
      "(`gslbd_stats`, scraped %s): median of %d interleaved "
      "runs per placement (server CPU:dnsperf CPU); cost = on ÷ off − 1." % (scrape, n))
print()
print("| workload | placement | off: runs (µs) | on: runs (µs) | off median | on median | cost |")
print("|---|---|---|---|--:|--:|--:|")
mean = {}
for w in wls:
    for p in places:
        off, on = runs.get((w, p, "gslbd"), []), runs.get((w, p, "gslbd_stats"), [])
        if not off or not on:
            continue
        mo, mn = statistics.median(off), statistics.median(on)
        mean.setdefault(w, []).append(mn / mo - 1)
        print("| %s | %s | %s | %s | %.3f | %.3f | %+.1f %% |" % (
            w, p, " ".join("%.2f" % x for x in off), " ".join("%.2f" % x for x in on),
            mo, mn, 100 * (mn / mo - 1)))
print()
for w in wls:
    c = mean.get(w, [])
    if c:
        print("%s: cost %+.1f %% (mean of the %d placement(s))" % (w, 100 * sum(c) / len(c), len(c)))
EOF
}

if [ "${1:-}" = --summary ]; then
  [ -f "${2:-}/results.csv" ] || { echo "usage: $0 [--summary DIR]" >&2; exit 2; }
  summarise "$2/results.csv"
  exit 0
fi

export RUNS=${RUNS:-7} DURATION=${DURATION:-8} SERVERS="gslbd gslbd_stats"
export WORKLOADS=${WORKLOADS:-"static geo-pick"} OUT_NAME=stats-cost
export BASE_PORT=${BASE_PORT:-15580} CG_PREFIX=${CG_PREFIX:-gslbd-statscost-}
bench/compare.sh
OUT=bench/out/$(readlink bench/out/stats-cost-latest)
{ echo "# bench/stats-cost.sh, $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo
  echo "RUNS=$RUNS DURATION=$DURATION, load $(cut -d' ' -f1-3 /proc/loadavg) at the end"
  echo
  summarise "$OUT/results.csv"; } > "$OUT/stats-cost.md"
cat "$OUT/stats-cost.md"
