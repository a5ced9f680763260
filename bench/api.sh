#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/api.sh: what the HTTP API costs and what it costs the query path
# (docs/BENCHMARKS.md, "HTTP API").  Run it under
# `flock /tmp/gslbd-bench.lock bench/api.sh`.
#
# One gslbd (one worker; every thread pinned to CPU $SCPU, in a cgroup
# v1 cpuacct group of its own when there is one), a store of one
# service www.bench.test (answers 1) and NODES nodes in its (*, *) row,
# the API on 127.0.0.1 in plain HTTP (loopback; TLS only adds its
# handshake once per kept-alive connection), rate limit out of the way.
# The clients (bench/apidrill.py, one kept-alive connection each, and
# dnsperf) are pinned to CPU $CCPU.  Each of RUNS rounds measures:
#
#   patch    PATCHES sequential PATCH /v1/nodes/n2 (drain and up in
#            turn): the client's p50 and p99 latency (a commit each:
#            the plans of the row rebuilt, the audit record appended)
#   batch    BATCHES sequential POST /v1/metrics of 1,000 samples (half
#            health metrics, half steering inputs): p50 and p99
#   reads    GET /v1/nodes and GET /v1/status for READ_S seconds each:
#            requests a second, and the server's CPU per request
#   dns      DURATION-second dnsperf runs of www.bench.test A, without
#            (off) and with (on) a steady stream of WRITE_RATE PATCHes
#            a second, in turn: the query threads' CPU per answered
#            query (every thread but the main one, which serves the
#            API, from /proc/PID/task/TID/schedstat, ns), and the whole
#            server's (cpuacct, or the sum of schedstat without it)
#
# The figures are medians over the rounds; on a shared machine the
# ratios (dns on ÷ off) are what to quote.
#
# Needs: gslbd and gslbctl built, python3, dnsperf; root and cgroup v1
# cpuacct for the whole server's exact CPU (schedstat alone otherwise).
# Knobs: RUNS (5), DURATION (8), PATCHES (400), BATCHES (30), READ_S
# (4), WRITE_RATE (20), NODES (20), CLIENTS (10), OUTSTANDING (100),
# SCPU (0), CCPU (1), BASE_PORT (9150: DNS, API at +1), GSLBD, GSLBCTL.
# Output: bench/out/api-YYYYmmdd-HHMMSS/ (bench/out/api-latest):
# results.csv (one row per round and measurement), env.txt, api.md;
# `bench/api.sh --summary DIR` prints api.md again.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
. bench/cpu.sh

# summarise CSV: the median of each measurement over the rounds, and
# the ratios of the query path's CPU with API writes to without.
summarise() {
  python3 - "$1" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
by = {}
for r in rows:
    by.setdefault(r["what"], []).append(float(r["value"]))
unit = {r["what"]: r["unit"] for r in rows}
med = {k: statistics.median(v) for k, v in by.items()}
print("| measurement | median | runs |")
print("|---|--:|---|")
for k in by:
    print("| %s | %.4g %s | %s |" % (k, med[k], unit[k], " ".join("%g" % x for x in by[k])))
print()
for k in ("query_threads_ns_per_q", "server_ns_per_q"):
    on, off = by.get("dns_on_" + k), by.get("dns_off_" + k)
    if on and off:
        per = [a / b for a, b in zip(on, off)]
        print("%s, on / off: median of the rounds' ratios %.3f (per round: %s; "
              "ratio of the medians %.3f)" % (k, statistics.median(per),
              " ".join("%.3f" % x for x in per),
              statistics.median(on) / statistics.median(off)))
EOF
}

if [ "${1:-}" = --summary ]; then
  [ -f "${2:-}/results.csv" ] || { echo "usage: $0 [--summary DIR]" >&2; exit 2; }
  summarise "$2/results.csv"
  exit 0
fi

RUNS=${RUNS:-5} DURATION=${DURATION:-8} PATCHES=${PATCHES:-400}
BATCHES=${BATCHES:-30} READ_S=${READ_S:-4} WRITE_RATE=${WRITE_RATE:-20}
NODES=${NODES:-20} CLIENTS=${CLIENTS:-10} OUTSTANDING=${OUTSTANDING:-100}
SCPU=${SCPU:-0} CCPU=${CCPU:-1} BASE_PORT=${BASE_PORT:-9150}
GSLBD=${GSLBD:-$ROOT/build/gslbd} GSLBCTL=${GSLBCTL:-$ROOT/build/gslbctl}
CG_PREFIX=${CG_PREFIX:-gslbd-api-}
PORT=$BASE_PORT APORT=$((BASE_PORT + 1))
command -v dnsperf >/dev/null || { echo "bench: needs dnsperf" >&2; exit 1; }
[ -x "$GSLBD" ] && [ -x "$GSLBCTL" ] || { echo "bench: build gslbd first (make)" >&2; exit 1; }

OUT=bench/out/api-$(date -u +%Y%m%d-%H%M%S)
mkdir -p "$OUT"
ln -sfn "$(basename "$OUT")" bench/out/api-latest
T=$(mktemp -d /tmp/gslbd-bench-api.XXXXXX)
PID=
CG=
cleanup() {
  [ -z "$PID" ] || kill "$PID" 2>/dev/null || true
  [ -z "$PID" ] || wait "$PID" 2>/dev/null || true
  [ -z "$CG" ] || cg_stop_all
  rm -rf "$T"
}
trap cleanup EXIT

cat > "$T/z.zone" <<'EOZ'
$TTL 300
@   SOA ns1 host 1 3600 600 86400 120
    NS  ns1
ns1 A   192.0.2.53
EOZ
cat > "$T/gslbd.conf" <<EOC
server:
  listen: [ "127.0.0.1@$PORT" ]
  workers: 1
  identity: ""
  version: ""
database:
  path: db
zones:
  - name: bench.test
    file: z.zone
api:
  listen: [ "127.0.0.1@$APORT" ]
  rate: 100000
EOC
CTL() { "$GSLBCTL" --offline -c "$T/gslbd.conf" "$@"; }
CTL service add www.bench.test --ttl 30 --answers 1 >/dev/null
w=""
for i in $(seq "$NODES"); do
  # n1 and n2 also in the (cn-gz, ctcc) row that the steering inputs
  # of the batch are for.
  loc=()
  [ "$i" -gt 2 ] || loc=(--region cn-gz --isp ctcc)
  CTL node add "n$i" --addr "192.0.2.$i" "${loc[@]}" >/dev/null
  w+=" n$i=10"
done
# shellcheck disable=SC2086
CTL weight set www.bench.test $w >/dev/null
CTL weight set www.bench.test --region cn-gz --isp ctcc n1=10 n2=10 >/dev/null
OT=$(CTL api token add bench --role operate | awk '/^token /{ print $3 }')
python3 - "$T/batch.json" <<'EOF'
import json, sys
s = []
for i in range(1000):
    if i % 2:
        s.append({"node": "n1", "region": "cn-gz", "isp": "ctcc", "success": 90 + i % 10,
                  "latency": 10 + i % 50})
    else:
        s.append({"node": "n%d" % (1 + i % 20), "loss": (i % 30) / 10, "rtt_ms": 20 + i % 40})
json.dump({"samples": s}, open(sys.argv[1], "w"))
EOF
echo "www.bench.test A" > "$T/q.txt"

if cg_check 2>/dev/null; then
  CG=1
  cg_create server
  cg_create dnsperf
  ( cd "$T" && cg_exec server "$GSLBD" -c gslbd.conf ) > "$T/gslbd.log" 2>&1 &
else
  ( cd "$T" && exec "$GSLBD" -c gslbd.conf ) > "$T/gslbd.log" 2>&1 &
fi
PID=$!
for _ in $(seq 100); do
  dig @127.0.0.1 -p "$PORT" +time=1 +tries=1 www.bench.test A +short 2>/dev/null | grep -q . && break
  kill -0 "$PID" 2>/dev/null || { cat "$T/gslbd.log" >&2; exit 1; }
  sleep 0.1
done
for t in /proc/"$PID"/task/*; do taskset -p -c "$SCPU" "${t##*/}" >/dev/null; done

# tasks_ns [main|rest]: the scheduler's run time (ns) of the main thread
# or of every other thread of gslbd.
tasks_ns() {
  local t sum=0 v
  for t in /proc/"$PID"/task/*; do
    if [ "$1" = main ] && [ "${t##*/}" != "$PID" ]; then continue; fi
    if [ "$1" = rest ] && [ "${t##*/}" = "$PID" ]; then continue; fi
    read -r v _ < "$t/schedstat" 2>/dev/null || continue
    sum=$((sum + v))
  done
  echo "$sum"
}
total_ns() { if [ -n "$CG" ]; then cg_usage server; else echo $(($(tasks_ns main) + $(tasks_ns rest))); fi; }
drill() { taskset -c "$CCPU" python3 bench/apidrill.py "$@"; }
js() { python3 -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }

CSV=$OUT/results.csv
echo "run,what,value,unit" > "$CSV"
row() { echo "$1,$2,$3,$4" >> "$CSV"; echo "run $1: $2 = $3 $4" >&2; }
{ echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo -)"
  echo "RUNS=$RUNS DURATION=$DURATION PATCHES=$PATCHES BATCHES=$BATCHES READ_S=$READ_S"
  echo "WRITE_RATE=$WRITE_RATE NODES=$NODES CLIENTS=$CLIENTS OUTSTANDING=$OUTSTANDING SCPU=$SCPU CCPU=$CCPU"
  echo "cpu accounting: $([ -n "$CG" ] && echo cpuacct || echo schedstat)"
  echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
  echo "dnsperf: $(dpkg-query -W -f '${Version}' dnsperf 2>/dev/null || echo -)"
  echo "libmicrohttpd: $(dpkg-query -W -f '${Version}' libmicrohttpd12t64 2>/dev/null ||
    dpkg-query -W -f '${Version}' libmicrohttpd12 2>/dev/null || echo -)"; } > "$OUT/env.txt"

dns_run() { # run off|on
  local wp= m0 r0 m1 r1 raw=$T/dnsperf-$1-$2.txt done
  if [ "$2" = on ]; then
    drill writes 127.0.0.1 "$APORT" "$OT" n2 "$WRITE_RATE" "$((DURATION + 2))" > "$T/writes.json" &
    wp=$!
    sleep 0.5
  fi
  m0=$(tasks_ns main); r0=$(tasks_ns rest); t0=$(total_ns)
  taskset -c "$CCPU" dnsperf -s 127.0.0.1 -p "$PORT" -d "$T/q.txt" -l "$DURATION" \
    -c "$CLIENTS" -T 1 -q "$OUTSTANDING" -t 2 > "$raw" 2>&1
  m1=$(tasks_ns main); r1=$(tasks_ns rest); t1=$(total_ns)
  [ -z "$wp" ] || wait "$wp"
  done=$(awk '/Queries completed:/ { print $3 }' "$raw")
  row "$1" "dns_${2}_qps" "$(awk '/Queries per second:/ { print $4 }' "$raw")" qps
  row "$1" "dns_${2}_query_threads_ns_per_q" "$(( (r1 - r0) / done ))" ns
  row "$1" "dns_${2}_server_ns_per_q" "$(( (t1 - t0) / done ))" ns
  row "$1" "dns_${2}_main_thread_ms" "$(( (m1 - m0) / 1000000 ))" ms
  [ -z "$wp" ] || row "$1" "dns_on_writes_per_s" "$(js per_s < "$T/writes.json")" "/s"
}

for run in $(seq "$RUNS"); do
  o=$(drill patch 127.0.0.1 "$APORT" "$OT" n2 "$PATCHES")
  row "$run" patch_p50 "$(js p50_ms <<<"$o")" ms
  row "$run" patch_p99 "$(js p99_ms <<<"$o")" ms
  o=$(drill batch 127.0.0.1 "$APORT" "$OT" "$T/batch.json" "$BATCHES")
  [ "$(js pushed <<<"$o")" = 1000 ] || { echo "bench: batch: $o" >&2; exit 1; }
  row "$run" batch1000_p50 "$(js p50_ms <<<"$o")" ms
  row "$run" batch1000_p99 "$(js p99_ms <<<"$o")" ms
  for p in nodes status; do
    m0=$(tasks_ns main)
    o=$(drill read 127.0.0.1 "$APORT" "$OT" "/v1/$p" "$READ_S")
    m1=$(tasks_ns main)
    row "$run" "get_${p}_per_s" "$(js per_s <<<"$o")" "/s"
    row "$run" "get_${p}_main_us_per_req" "$(( (m1 - m0) / 1000 / $(js n <<<"$o") ))" "us"
  done
  # off and on in turn, the order swapped every round.
  if [ $((run % 2)) = 1 ]; then dns_run "$run" off; dns_run "$run" on
  else dns_run "$run" on; dns_run "$run" off; fi
done
kill -0 "$PID" || { echo "bench: gslbd died" >&2; exit 1; }

summarise "$CSV" > "$OUT/api.md"
{ cat "$OUT/env.txt"; echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)"; echo; cat "$OUT/api.md"; }
