#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/gslb.sh: the GSLB benchmark of docs/BENCHMARKS.md ("GSLB answers").
#
# Same method as bench/run.sh (helpers in bench/lib.sh): every server runs
# in the foreground on its own loopback port, under setsid, pinned to CPU
# $SERVER_CPU with one worker; dnsperf runs on CPU $CLIENT_CPU; runs are
# interleaved round-robin; server CPU per answered query comes from a
# cgroup v1 cpuacct group per server (exact, every thread) when run as
# root, else from the tick-sampled utime+stime of /proc/PID/stat
# (env.txt says which: "server CPU clock").  UDP only.
#
# Servers (all up for the whole run):
#   gslbd       zone bench.test + weight store with www.bench.test: one
#               (region, *) row per region (3 nodes, weights 3:2:1) and a
#               (*, *) row; GeoIP database bench/out/DATE/geo.mmdb (400
#               networks, 10 regions x 3 ISPs, built by geoip/build-demo.pl)
#   gdnsd       the same zone, www.bench.test = DYNA geoip!www: a geoip map
#               on the same geo.mmdb (subdivision -> datacenter) whose
#               datacenters are weighted resources with the same addresses
#               and weights
#   gslbd-1k    zone big.test, store of 1000 services x 1 row (1,000 rows)
#   gslbd-1m    zone big.test, store of 1000 services x 1000 (region, ISP)
#               rows (1,000,000 rows), applied with `gslbctl apply`
#               (timed); GeoIP database big.mmdb (1000 /20s, one per
#               region/ISP pair)
#
# Query sets (bench/wireq.py builds dnsperf -B binary input, so that each
# query carries its own EDNS Client Subnet; dnsperf -E can only send one
# option for all queries):
#   static      static.bench.test A, with the 4000 ECS /24s of "gslb"
#   gslb        www.bench.test A, 4000 distinct ECS /24s over the 400
#               networks
#   gslb-1net   www.bench.test A, one ECS /24 (11.0.1.0/24) for all
#   big         1k: 50000 queries, random service with its own row's
#               networks; 1m: 50000 queries, random service x random
#               region/ISP (rows spread over the whole table)
#
# Knobs: RUNS (3), DURATION (15), CLIENTS (4), OUTSTANDING (100),
# BASE_PORT (15400), SERVER_CPU (0), CLIENT_CPU (1), GSLBD, GSLBCTL,
# PARTS ("geo big": which servers to run).
#
# Output: bench/out/gslb-YYYYmmdd-HHMMSS/ (inputs, configs, logs, raw,
# results.csv, apply.txt, memory.txt, summary.md); bench/out/gslb-latest.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
RUNS=${RUNS:-3}
DURATION=${DURATION:-15}
CLIENTS=${CLIENTS:-4}
OUTSTANDING=${OUTSTANDING:-100}
BASE_PORT=${BASE_PORT:-15400}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
GSLBD=${GSLBD:-$ROOT/build/gslbd}
GSLBCTL=${GSLBCTL:-$ROOT/build/gslbctl}
PARTS=${PARTS:-"geo big"}
. bench/lib.sh

# `bench/gslb.sh --summary DIR` reprints the tables of an earlier run.
if [ "${1:-}" = --summary ]; then
  d=${2:-}
  case $d in /*) ;; *) d=$OLDPWD/$d ;; esac
  [ -f "$d/results.csv" ] || die "usage: $0 [--summary DIR]"
  OUT=$(cd "$d" && pwd); CSV=$OUT/results.csv
  SUMMARY_ONLY=1
else
  SUMMARY_ONLY=
fi

summarise() {
  local s k
  echo "| server | queries | qps | avg latency (ms) | server CPU/query (us) | lost | server CPU (s) | dnsperf CPU (s) |"
  echo "|---|---|--:|--:|--:|--:|--:|--:|"
  awk -F, 'NR > 1 && !seen[$1 "," $2]++ { print $1, $2 }' "$CSV" | while read -r s k; do
    printf '| %s | %s | %.0f | %.3f | %.2f | %.0f | %.1f | %.1f |\n' "$s" "$k" \
      "$(med "$s" "$k" 4)" "$(med "$s" "$k" 5)" "$(med "$s" "$k" 10)" \
      "$(med "$s" "$k" 8)" "$(med "$s" "$k" 9)" "$(med "$s" "$k" 11)"
  done
  echo
  echo "Medians of $(awk -F, 'NR > 1 && $3 > n { n = $3 } END { print n }' "$CSV") runs each."
  ratio() {  # ratio LABEL S1 K1 S2 K2 TARGET
    awk -v a="$(med "$2" "$3" 10)" -v b="$(med "$4" "$5" 10)" -v l="$1" -v t="$6" \
      'BEGIN { if (a != "nan" && b != "nan" && b > 0)
                 printf "%s: %.2f (target %s)\n", l, a / b, t }'
  }
  ratio "gslbd GSLB (4000 ECS nets) / gslbd static, CPU per query" gslbd gslb gslbd static "<= 1.10"
  ratio "gslbd GSLB (1 ECS net) / gslbd static, CPU per query" gslbd gslb-1net gslbd static "-"
  ratio "gslbd GSLB / gdnsd geoip+weighted, CPU per query" gslbd gslb gdnsd gslb "< 1"
  ratio "gslbd static / gdnsd static, CPU per query" gslbd static gdnsd static "-"
  ratio "gslbd 1,000,000 rows / 1,000 rows, CPU per query" gslbd-1m big gslbd-1k big "<= 1.10"
  [ -f "$OUT/apply.txt" ] && { echo; cat "$OUT/apply.txt"; }
  [ -f "$OUT/memory.txt" ] && { echo; cat "$OUT/memory.txt"; }
  return 0
}
if [ -n "$SUMMARY_ONLY" ]; then summarise; exit 0; fi

for t in dnsperf dig taskset setsid gdnsd perl python3; do
  command -v "$t" >/dev/null || die "$t not found"
done
[ -x "$GSLBD" ] && [ -x "$GSLBCTL" ] || die "gslbd/gslbctl not built (run make)"
[ "$(nproc)" -ge 2 ] || die "needs 2 CPUs (server on one, dnsperf on another)"

OUT=$ROOT/bench/out/gslb-$(date +%Y%m%d-%H%M%S)
mkdir -p "$OUT/raw"
ln -sfn "$(basename "$OUT")" "$ROOT/bench/out/gslb-latest"
GEN="python3 $ROOT/bench/gslbgen.py"
WIREQ="python3 $ROOT/bench/wireq.py"
has_part() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }
SERVERS=
has_part geo && SERVERS="gslbd gdnsd"
has_part big && SERVERS="$SERVERS gslbd-1k gslbd-1m"
i=0
for s in $SERVERS; do i=$((i + 1)); PORT[$s]=$((BASE_PORT + i)); done

{ env_info $SERVERS
  echo "settings: RUNS=$RUNS DURATION=$DURATION CLIENTS=$CLIENTS OUTSTANDING=$OUTSTANDING SERVER_CPU=$SERVER_CPU CLIENT_CPU=$CLIENT_CPU"
} > "$OUT/env.txt"

mmdb() {  # mmdb SOURCE OUT: geoip/build-demo.pl plus a continent (gdnsd)
  perl bench/mmdb-continent.pl geoip/build-demo.pl "$1" "$2" > /dev/null
}

gslbd_conf() {  # gslbd_conf DIR PORT ZONE MMDB
  cat > "$1/gslbd.conf" <<EOC
server:
  listen: [ "127.0.0.1@$2" ]
  workers: 1
  identity: ""
  version: ""
  udp-max-payload: 1232
database:
  path: $1/db
zones:
  - name: $3
    file: $3.zone
geoip:
  database: $4
  region: [ region ]
  isp: [ isp ]
  edns-client-subnet: on
EOC
}

zone() {  # zone NAME > FILE
  cat <<EOZ
\$TTL 300
@       SOA ns1 hostmaster 1 3600 600 86400 300
        NS  ns1
ns1     A   192.0.2.53
static  A   192.0.2.80
EOZ
}

# apply_timed NAME DIR JSON: gslbctl apply, wall time into apply.txt.
apply_timed() {
  local t0 t1
  mkdir -p "$2/db"
  t0=$(date +%s.%N)
  { "$GSLBCTL" -d "$2/db" --create apply "$3" || "$GSLBCTL" -d "$2/db" apply "$3"; } \
    > "$2/apply.log" 2>&1 || { cat "$2/apply.log" >&2; die "$1: apply failed"; }
  t1=$(date +%s.%N)
  awk -v n="$1" -v a="$t0" -v b="$t1" -v f="$(basename "$3")" -v sz="$(du -sh "$3" | cut -f1)" \
    -v db="$(du -sh "$2/db/data.mdb" | cut -f1)" \
    'BEGIN { printf "%s: gslbctl apply %s (%s) took %.1f s; data.mdb %s\n", n, f, sz, b - a, db }' \
    | tee -a "$OUT/apply.txt" >&2
}

# --- inputs ----------------------------------------------------------------
echo "bench: generating inputs in $OUT" >&2
if has_part geo; then
  $GEN geo-src > "$OUT/geo.txt"
  mmdb "$OUT/geo.txt" "$OUT/geo.mmdb"
  $GEN geo-queries www.bench.test > "$OUT/gslb.txt"
  sed 's/^www\./static./' "$OUT/gslb.txt" > "$OUT/static.txt"
  echo "www.bench.test A 11.0.1.0/24" > "$OUT/gslb-1net.txt"
  for q in gslb static gslb-1net; do $WIREQ < "$OUT/$q.txt" > "$OUT/$q.bin"; done

  d=$OUT/gslbd; mkdir -p "$d"
  zone > "$d/bench.test.zone"
  gslbd_conf "$d" "${PORT[gslbd]}" bench.test "$OUT/geo.mmdb"
  $GEN geo-json > "$OUT/geo.json"
  apply_timed gslbd "$d" "$OUT/geo.json"

  d=$OUT/gdnsd; mkdir -p "$d/zones" "$d/run" "$d/state"
  { zone; echo "www 60 DYNA geoip!www"; } > "$d/zones/bench.test"
  { cat <<EOC
options => {
  listen => { 127.0.0.1:${PORT[gdnsd]} => { udp_threads = 1, tcp_threads = 1 } }
  run_dir = "$d/run"
  state_dir = "$d/state"
}
EOC
    $GEN geo-gdnsd | sed "s|@MMDB@|$OUT/geo.mmdb|"; } > "$d/config"
fi
if has_part big; then
  $GEN big-src > "$OUT/big.txt"
  mmdb "$OUT/big.txt" "$OUT/big.mmdb"
  for rows in 1k 1m; do
    d=$OUT/gslbd-$rows; mkdir -p "$d"
    zone > "$d/big.test.zone"
    gslbd_conf "$d" "${PORT[gslbd-$rows]}" big.test "$OUT/big.mmdb"
    $GEN big-json $rows > "$d/table.json"
    apply_timed "gslbd-$rows" "$d" "$d/table.json"
    $GEN big-queries $rows 50000 > "$OUT/big-$rows.txt"
    $WIREQ < "$OUT/big-$rows.txt" > "$OUT/big-$rows.bin"
  done
fi

# --- start and check -------------------------------------------------------
static_ok() {
  local a
  a=$(dig +short +tries=1 +time=1 @127.0.0.1 -p "${PORT[$1]}" "static.$2" A 2>/dev/null || true)
  [ "$a" = 192.0.2.80 ]
}
for s in $SERVERS; do
  case $s in
    gslbd) start_server "$s" "$OUT/$s/log" static_ok "$s" bench.test -- \
             "$GSLBD" -c "$OUT/$s/gslbd.conf" -w 1 ;;
    gdnsd) start_server "$s" "$OUT/$s/log" static_ok "$s" bench.test -- \
             gdnsd -c "$OUT/$s" start ;;
    gslbd-*) start_server "$s" "$OUT/$s/log" static_ok "$s" big.test -- \
             "$GSLBD" -c "$OUT/$s/gslbd.conf" -w 1 ;;
  esac
  echo "bench: $s pid ${SID[$s]} serving on 127.0.0.1@${PORT[$s]} (CPU $SERVER_CPU)" >&2
done

# Answers before measuring.  ask SERVER NAME ECS: "ADDRS|SCOPE".
ask() {
  local o
  o=$(dig +tries=1 +time=2 @127.0.0.1 -p "${PORT[$1]}" "$2" A +subnet="$3")
  printf '%s|%s\n' "$(printf '%s\n' "$o" | awk '$4 == "A" && $1 !~ /^;/ { print $5 }' | sort | tr '\n' ' ')" \
    "$(printf '%s\n' "$o" | sed -n 's/.*CLIENT-SUBNET: [^ ]*\/\([0-9]*\)$/\1/p')"
}
check() {  # check SERVER NAME ECS REGEX-OF-ASK-OUTPUT
  local a
  a=$(ask "$1" "$2" "$3")
  [[ $a =~ ^$4$ ]] || die "$1: $2 +subnet=$3: got '$a', want /$4/"
  echo "bench: check $1 $2 +subnet=$3 -> $a" >&2
}
if has_part geo; then
  for s in gslbd gdnsd; do
    # 11.0/16 is cn-bj (192.0.2.1-3), 11.1/16 cn-sh (.4-.6), 11.8/16
    # us-west (.25-.27), 13.0/16 unknown (default 192.0.2.250).
    check $s www.bench.test 11.0.1.0/24 '192\.0\.2\.[123] \|16'
    check $s www.bench.test 11.1.9.0/24 '192\.0\.2\.[456] \|16'
    check $s www.bench.test 12.18.3.0/24 '192\.0\.2\.(2[5-7]) \|16'
    check $s www.bench.test 13.0.0.0/24 '192\.0\.2\.250 \|[0-9]+'
    check $s static.bench.test 11.0.1.0/24 '192\.0\.2\.80 \|0'
  done
  # Weights 3:2:1 over 600 answers from each server (within 5 points).
  for s in gslbd gdnsd; do
    for n in $(seq 600); do echo "www.bench.test A +subnet=11.0.$((n % 250)).0/24"; done > "$OUT/w.batch"
    dig @127.0.0.1 -p "${PORT[$s]}" +short +tries=1 -f "$OUT/w.batch" | sort | uniq -c |
      awk -v s="$s" '{ n[$2] = $1; t += $1 } END {
        a = n["192.0.2.1"] / t; b = n["192.0.2.2"] / t; c = n["192.0.2.3"] / t
        printf "bench: %s weights over %d answers: %.2f %.2f %.2f (want .50 .33 .17)\n", s, t, a, b, c
        if (t != 600 || a < .45 || a > .55 || b < .28 || b > .38 || c < .12 || c > .22) exit 1 }' >&2 ||
      die "$s: weights off"
  done
fi
if has_part big; then
  # 10.12.48.0/20 is (r12, i3): row 123 of every service in the 1m
  # table, the only row of s123 in the 1k table.
  for rows in 1k 1m; do
    s=gslbd-$rows
    check $s s123.big.test 10.12.49.0/24 '198\.51\.100\.[0-9]+ \|20'
    e=$("$GSLBCTL" -c "$OUT/$s/gslbd.conf" explain s123.big.test --client 10.12.49.0/24)
    [[ $e == *"region=r12 isp=i3 network=10.12.48.0/20"* && $e =~ row\ +region,isp ]] ||
      die "$s: explain does not show row (r12, i3): $e"
  done
  check gslbd-1m s999.big.test 10.99.144.0/24 '198\.51\.100\.[0-9]+ \|20'
  check gslbd-1m s000.big.test 10.0.0.0/24 '198\.51\.100\.[0-9]+ \|20'
  # Every query of a sample is answered with one address by both.
  for rows in 1k 1m; do
    head -200 "$OUT/big-$rows.txt" | awk '{ print $1, $2, "+subnet=" $3 }' > "$OUT/b.batch"
    n=$(dig @127.0.0.1 -p "${PORT[gslbd-$rows]}" +short +tries=1 -f "$OUT/b.batch" | grep -c '^198\.51\.100\.')
    [ "$n" = 200 ] || die "gslbd-$rows: $n of 200 sample queries answered"
  done
fi

# --- warm up ---------------------------------------------------------------
# One unmeasured pass over each big query set: the first touch of a
# 341 MB map's pages is page faults, not lookups, and would land on the
# first measured run alone.
if has_part big; then
  for rows in 1k 1m; do
    taskset -c "$CLIENT_CPU" dnsperf -s 127.0.0.1 -p "${PORT[gslbd-$rows]}" -m udp -B \
      -d "$OUT/big-$rows.bin" -n 1 -c "$CLIENTS" -q "$OUTSTANDING" -t 2 \
      > "$OUT/raw/warmup-$rows.txt" 2>&1 || die "warm-up of gslbd-$rows failed"
  done
fi

# --- measure ---------------------------------------------------------------
CSV=$OUT/results.csv
echo "server,queries,run,qps,avg_latency_ms,sent,completed,lost,server_cpu_s,server_cpu_us_per_query,client_cpu_s" > "$CSV"
MEM=$OUT/memory.raw
: > "$MEM"
for run in $(seq "$RUNS"); do
  jobs=()
  has_part geo && jobs+=("gslbd static" "gslbd gslb" "gslbd gslb-1net" "gdnsd static" "gdnsd gslb")
  has_part big && jobs+=("gslbd-1k big" "gslbd-1m big")
  for j in "${jobs[@]}"; do
    set -- $j
    s=$1 k=$2 f=$OUT/$2.bin
    [ "$k" = big ] && f=$OUT/big-${s#gslbd-}.bin
    measure_run "$s" "$k" "$run" "$OUT/raw/$s-$k-$run.txt" -m udp -B -d "$f"
    SID_Q=${SID[$s]}
    echo "$s $run $(session_rss_kb)" >> "$MEM"
  done
done
{
  echo "| server | VmRSS after each of its dnsperf runs (MiB) | VmHWM (MiB) | data.mdb |"
  echo "|---|---|--:|--:|"
  for s in $SERVERS; do
    case $s in gdnsd) db=- ;; *) db=$(du -sh "$OUT/$s/db/data.mdb" | cut -f1) ;; esac
    SID_Q=${SID[$s]}
    hwm=$(awk '/^VmHWM:/ { printf "%.0f", $2 / 1024 }' "/proc/$SID_Q/status")
    printf '| %s | %s | %s | %s |\n' "$s" \
      "$(awk -v s="$s" '$1 == s { printf "%s%.0f", sep, $3 / 1024; sep = ", " }' "$MEM")" "$hwm" "$db"
  done
} > "$OUT/memory.txt"

SUM=$OUT/summary.md
summarise > "$SUM"
cat "$SUM"
echo "bench: raw results in $OUT" >&2
