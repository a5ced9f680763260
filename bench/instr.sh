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
#
# Output: bench/out/instr-DATE/ (summary.md, callgrind files).  Port
# 15480, or PORT.  Every process started here is stopped by PID.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
. bench/lib.sh
WORKLOADS=${WORKLOADS:-"static mixed geo-set geo-pick"}
N=${N:-10000}
PORT=${PORT:-15480}
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
cleanup() { [ -z "$PID" ] || { kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; }; }
trap cleanup EXIT

# The inputs of bench/compare.sh.
compare_inputs "$OUT" "$ZONE"
$GEN compare-json > "$OUT/table.json"
bench_zone > "$OUT/bench.test.zone"

echo "| build | workload | query_process / query | UDP thread / query |" > "$OUT/summary.md"
echo "|---|---|--:|--:|" >> "$OUT/summary.md"
b=0
for bin in "${BUILDS[@]}"; do
  b=$((b + 1))
  d=$OUT/b$b; mkdir -p "$d/db"
  echo "$bin ($(cd "$(dirname "$bin")" && git rev-parse --short HEAD 2>/dev/null || echo '?'))" > "$d/build.txt"
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
EOC
  # A new store: --create (builds from before it had the option create
  # without it).
  "$(dirname "$bin")/gslbctl" -d "$d/db" --create apply "$OUT/table.json" > /dev/null 2>&1 ||
    "$(dirname "$bin")/gslbctl" -d "$d/db" apply "$OUT/table.json" > /dev/null
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
    callgrind_control -z "$PID" > /dev/null
    dnsperf -s 127.0.0.1 -p $PORT -n $(( (N + lines - 1) / lines )) -Q 3000 -c 1 -q 20 \
      "${args[@]}" > "$d/dnsperf-$w.txt" 2>&1
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
    printf '| %s | %s | %d | %d |\n' "b$b" "$w" $((qp / done_q)) $((ut / done_q)) >> "$OUT/summary.md"
  done
done
for i in $(seq $b); do echo "b$i: $(cat "$OUT/b$i/build.txt")" >> "$OUT/summary.md"; done
cat "$OUT/summary.md"
echo "instr: output in $OUT" >&2
