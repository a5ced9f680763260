#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/instr.sh: instructions per answered query in gslbd's own code,
# counted exactly by callgrind (docs/BENCHMARKS.md, "Instructions per
# query").  CPU time on a shared two-core machine moves by tens of
# percent with the neighbours; an instruction count does not, so this is
# how the query path's own cost is compared between builds.  It says
# nothing about the kernel's share (the sockets), which bench/compare.sh
# measures.
#
# gslbd (one worker) runs under valgrind --tool=callgrind with the inputs
# of bench/compare.sh (the same generated GeoIP database, weight table and
# queries); after start-up the counters are zeroed, dnsperf sends N
# queries of one workload at a low rate, and the counters are dumped.
# Per workload it prints the instructions of query_process() (parsing,
# zone, GSLB, writing the answer) and of the UDP thread as a whole
# (query_process plus receiving and sending), each divided by the
# queries answered, and the top functions.
#
#   bench/instr.sh [BUILD ...]     default: build/gslbd
#   WORKLOADS="static mixed geo-set geo-pick"  N=10000 (queries a workload)
#   CONF_EXTRA="rrl: ..."   appended to gslbd's configuration (to count
#                           what a feature costs: run with and without)
#   DNSSEC=1                signs both zones online (a P-256 key each, in
#                           a keystore of the run's own); with
#                           DNSPERF_EXTRA="-D" (DO) the answers are
#                           signed, from the signature cache once warm;
#                           the ECS queries then carry DO themselves
#   DNSPERF_EXTRA="-E 10:0123456789abcdef"  more dnsperf arguments (here an
#                           EDNS COOKIE option with a client cookie in
#                           every query, to count what cookies cost)
#   CLUSTER_BUILDS="2"      the builds (by position) that run in cluster
#                           mode: one etcd member is started on loopback
#                           (the two ports after the bench's), each such
#                           build gets a cluster section with a prefix of
#                           its own, and its table is applied through
#                           etcd.  The same binary twice compares cluster
#                           mode off and on in one run:
#                           CLUSTER_BUILDS=2 bench/instr.sh build/gslbd build/gslbd
#   STEERING="static dynamic"  runs every build once per mode, in the same
#                           run: "dynamic" turns on the steering engine
#                           for www.bench.test and set.bench.test, pushes
#                           a success and latency for every node, and
#                           counts only once every row answers with the
#                           engine's shares (default: static)
#
# Output: bench/out/instr-DATE/ (summary.md, callgrind files).  Port
# 15480 (INSTRPORT=N or PORT=N for another).  Every process started here is
# stopped by PID.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
. bench/lib.sh
WORKLOADS=${WORKLOADS:-"static mixed geo-set geo-pick"}
N=${N:-10000}
PORT=${INSTRPORT:-${PORT:-15480}}
BUILDS=("$@")
[ ${#BUILDS[@]} -gt 0 ] || BUILDS=("$ROOT/build/gslbd")
for t in valgrind callgrind_annotate callgrind_control dnsperf dig perl python3; do
  command -v "$t" >/dev/null || { echo "instr: $t not found" >&2; exit 1; }
done
OUT=$ROOT/bench/out/instr-$(date +%Y%m%d-%H%M%S)
mkdir -p "$OUT"
GEN="python3 $ROOT/bench/gslbgen.py"
ZONE=cdn.example.test
PID=
EPID=
cleanup() {
  [ -z "$PID" ] || { kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; }
  [ -z "$EPID" ] || { kill "$EPID" 2>/dev/null || true; wait "$EPID" 2>/dev/null || true; }
}
trap cleanup EXIT
if [ -n "${CLUSTER_BUILDS:-}" ]; then
  command -v etcd >/dev/null || { echo "instr: etcd not found" >&2; exit 1; }
  EP=http://127.0.0.1:$((PORT + 1))
  etcd --name i1 --data-dir "$OUT/etcd" --listen-client-urls "$EP" --advertise-client-urls "$EP" \
    --listen-peer-urls "http://127.0.0.1:$((PORT + 2))" \
    --initial-advertise-peer-urls "http://127.0.0.1:$((PORT + 2))" \
    --initial-cluster "i1=http://127.0.0.1:$((PORT + 2))" \
    --max-txn-ops 200000 --max-request-bytes 67108864 > "$OUT/etcd.log" 2>&1 &
  EPID=$!
  for _ in $(seq 100); do
    ETCDCTL_API=3 etcdctl --endpoints="$EP" put /probe x > /dev/null 2>&1 && break
    sleep 0.1
  done
fi

# The inputs of bench/compare.sh.
compare_inputs "$OUT" "$ZONE"
# Signed, the binary ECS queries carry DO too (dnsperf's -D does not
# reach -B messages).
if [ "${DNSSEC:-0}" != 0 ]; then
  for q in geo-set geo-pick; do python3 bench/wireq.py --do < "$OUT/$q.txt" > "$OUT/$q.bin"; done
fi
$GEN compare-json > "$OUT/table.json"
bench_zone > "$OUT/bench.test.zone"

STEERING=${STEERING:-static}
# The steering engine's section for the dynamic mode: an evaluation every
# second, and inputs that stay fresh for the whole run (valgrind is slow).
STEER_CONF="steer:
  interval: 1
  stale: 86400
  windows: [ 86400 ]"
# steered CTL...: whether every row of both services with more than one
# node (a single node's share cannot move) answers with the engine's
# shares.
steered() {
  local s
  for s in www.bench.test set.bench.test; do
    "$@" --json steer show $s 2>/dev/null | python3 -c '
import json, sys
sys.exit(0 if all(r["steered"] for r in json.load(sys.stdin)
                  if len(r["nodes"]) > 1) else 1)' || return 1
  done
}

echo "| build | workload | query_process / query | UDP thread / query |" > "$OUT/summary.md"
echo "|---|---|--:|--:|" >> "$OUT/summary.md"
b=0
for bin in "${BUILDS[@]}"; do
  b=$((b + 1))
  for mode in $STEERING; do
    if [ "$STEERING" = static ]; then label=b$b; else label="b$b $mode"; fi
    d=$OUT/${label// /-}; mkdir -p "$d/db"
    cl=
    case " ${CLUSTER_BUILDS:-} " in
      *" $b "*) cl="cluster:
  etcd: [ \"$EP\" ]
  prefix: /instr-${label// /-}/
  name: instr$b" ;;
    esac
    # In cluster mode the table goes into etcd and the store, as an
    # operator moves a table to a cluster.
    if [ -n "$cl" ]; then ctl=("$(dirname "$bin")/gslbctl" -c "$d/gslbd.conf")
    else ctl=("$(dirname "$bin")/gslbctl" -d "$d/db"); fi
    echo "$bin ($(cd "$(dirname "$bin")" && git rev-parse --short HEAD 2>/dev/null || echo '?'))${cl:+, cluster mode}" > "$d/build.txt"
    cat > "$d/gslbd.conf" <<EOC
server:
  listen: [ "127.0.0.1@$PORT" ]
  workers: 1
  identity: ""
  version: ""
database:
  path: $d/db
zones:
  - name: $ZONE
    file: $OUT/$ZONE.zone
  - name: bench.test
    file: $OUT/bench.test.zone
geoip:
  database: $OUT/geo.mmdb
  region: [ region ]
  isp: [ isp ]
${CONF_EXTRA:-}
$([ "${DNSSEC:-0}" = 0 ] || printf 'dnssec:\n  keystore: %s\n' "$d/keys")
$([ "$mode" = static ] || echo "$STEER_CONF")
$cl
EOC
    # A new store: --create (builds from before it had the option create
    # without it).
    if [ -n "$cl" ]; then
      "${ctl[@]}" apply "$OUT/table.json" > /dev/null
    else
      "${ctl[@]}" --create apply "$OUT/table.json" > /dev/null 2>&1 ||
        "${ctl[@]}" apply "$OUT/table.json" > /dev/null
    fi
    if [ "${DNSSEC:-0}" != 0 ]; then
      mkdir -p -m 700 "$d/keys"
      for z in $ZONE bench.test; do
        "$(dirname "$bin")/gslbctl" -c "$d/gslbd.conf" --offline dnssec enable $z > /dev/null
      done
    fi
    if [ "$mode" = dynamic ]; then
      for s in www.bench.test set.bench.test; do
        "${ctl[@]}" service set $s --steering dynamic --policy live > /dev/null
      done
      # Every node measured, for all its rows: in each row (nodes
      # REGION-0, -1, -2, weights 3, 2, 1) the heaviest node is the
      # slowest, so that the engine's shares differ from the weights.
      "${ctl[@]}" --json node list | python3 -c '
import json, sys
for n in sorted(x["id"] for x in json.load(sys.stdin)["nodes"]):
    k = int(n[-1]) % 3 if n[-1].isdigit() else 1
    print("%s success=%s latency=%d" % (n, ("99.0", "99.5", "99.9")[k], (150, 60, 20)[k]))' |
        "${ctl[@]}" metrics push --file - > /dev/null
    fi
    for w in $WORKLOADS; do
      case $w in
        static|mixed) args=(-d "$OUT/$w.txt") ;;
        *) args=(-B -d "$OUT/$w.bin") ;;
      esac
      lines=$(case $w in static) echo 1 ;; mixed) echo 8 ;; *) echo 288 ;; esac)
      valgrind --tool=callgrind --callgrind-out-file="$d/cg.$w" --dump-instr=no \
        "$bin" -c "$d/gslbd.conf" -w 1 > "$d/valgrind-$w.log" 2>&1 &
      PID=$!
      for _ in $(seq 200); do
        dig +time=1 +tries=1 @127.0.0.1 -p $PORT static.$ZONE > /dev/null 2>&1 && break
        sleep 0.3
      done
      if [ "$mode" = dynamic ]; then
        for _ in $(seq 120); do steered "${ctl[@]}" && break; sleep 0.5; done
        steered "${ctl[@]}" || { echo "instr: the engine did not steer every row" >&2; exit 1; }
      fi
      callgrind_control -z "$PID" > /dev/null
      read -ra extra <<<"${DNSPERF_EXTRA:-}"
      # dnsperf refuses -D with -B: the binary queries carry DO themselves.
      if [ "${args[0]}" = -B ]; then
        f=(); for a in ${extra[@]+"${extra[@]}"}; do [ "$a" = -D ] || f+=("$a"); done
        extra=(${f[@]+"${f[@]}"})
      fi
      dnsperf -s 127.0.0.1 -p $PORT -n $(( (N + lines - 1) / lines )) -Q 3000 -c 1 -q 20 \
        "${args[@]}" ${extra[@]+"${extra[@]}"} > "$d/dnsperf-$w.txt" 2>&1
      done_q=$(awk '/Queries completed:/ { print $3 }' "$d/dnsperf-$w.txt")
      callgrind_control -d "$PID" > /dev/null
      sleep 1
      kill "$PID"; wait "$PID" 2>/dev/null || true; PID=
      f=$(ls "$d/cg.$w".* | sort | tail -1)
      callgrind_annotate --inclusive=yes "$f" > "$d/annotate-$w.txt" 2>/dev/null
      # The first (largest, inclusive) line of the function: callgrind
      # also lists the parts inlined from other files on lines of their own.
      ir() { awk -v fn="$1" '$0 ~ fn { gsub(",", "", $1); print $1; exit }' "$d/annotate-$w.txt"; }
      qp=$(ir ':query_process( |$)')
      ut=$(ir ':udp_main( |$)')
      printf '| %s | %s | %d | %d |\n' "$label" "$w" $((qp / done_q)) $((ut / done_q)) >> "$OUT/summary.md"
    done
  done
done
for i in $(seq $b); do echo "b$i: $(cat "$OUT"/b$i*/build.txt | head -1)" >> "$OUT/summary.md"; done
cat "$OUT/summary.md"
echo "instr: output in $OUT" >&2
