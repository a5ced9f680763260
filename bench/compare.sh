#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/compare.sh: server CPU per answered query, gslbd against knotd,
# gdnsd and a bare UDP reflector (the floor), measured exactly with cgroup
# v1 cpuacct (`make bench-compare`; method in docs/BENCHMARKS.md,
# "Server CPU per answered query, exact").
#
# Servers, each with one worker, all up for the whole benchmark, each in
# a cpuacct group of its own (bench/cpu.sh) and pinned, every thread, to
# the server CPU of the current placement; dnsperf runs in a group of its
# own on the other CPU:
#   gslbd      zones cdn.example.test and bench.test; weight store with
#              www.bench.test (weighted pick of one node) and set.bench.test
#              (every node of the region); GeoIP database geo.mmdb (built
#              as bench/gslb.sh builds it)
#   knotd      both zones; set.bench.test from its geoip module (geodb mode,
#              key [ region ]) on the same geo.mmdb
#   gdnsd      both zones; www and set as DYNA geoip! resources on the same
#              geo.mmdb, onto weighted and multifo resources
#   reflector  bench/reflector.c: recvmmsg, set QR, sendmmsg; it answers
#              every UDP workload by echoing the query
#   gslbd_base (only when named in SERVERS) the gslbd build GSLBD_BASE on
#              the same inputs: two builds compared in one run
#   gslbd_rrl  (only when named in SERVERS) gslbd as above with response
#              rate limiting on, loopback not exempt, at RRL_RATE
#              (1000000) responses a second: every response is charged to
#              its account, and no account reaches the limit, so the
#              difference to gslbd is what the accounting costs
#   gslbd_stats  (only when named in SERVERS) gslbd as above with the
#              statistics endpoint on (stats.listen at BASE_PORT+9),
#              scraped every SCRAPE seconds (curl, on the dnsperf CPU)
#              while it is measured: bench/stats-cost.sh sets it against
#              gslbd
#
# Workloads (dnsperf -c $CLIENTS -q $OUTSTANDING -T 1 -t 2 -l $DURATION):
#   static     static.cdn.example.test A, no EDNS, UDP
#   mixed      NXDOMAIN, CNAME, wildcard and NODATA queries, no EDNS, UDP
#   tcp        static.cdn.example.test A over TCP, $CLIENTS connections
#              (not the reflector)
#   geo-set    set.bench.test A with EDNS Client Subnet, 288 distinct /24s
#              over the GeoIP networks: GeoIP -> region -> all its nodes
#   geo-pick   www.bench.test A, the same 288 ECS /24s: GeoIP -> region ->
#              one node by weight (3:2:1)
# knotd's geoip module answers a location with a fixed RRset (mode geodb)
# or picks by weight whatever the location (mode weighted), never both:
# knotd takes no part in geo-pick.  The module is packaged apart (Debian:
# knot-module-geoip); without it knotd skips geo-set too.
#
# Placements: PLACEMENTS="0:1 1:0" (server CPU:dnsperf CPU); every server
# is re-pinned at the start of each.  Within a placement, RUNS rounds; in
# each round every workload is run against every server in turn
# (round-robin), so a burst of noise does not land on one server alone.
#
# Per run: dnsperf's qps, latency, completed and lost queries; the
# server group's cpuacct.usage delta (ns, every thread, exact); the share
# of it spent on the server CPU (cpuacct.usage_percpu), which shows a
# server that escaped its CPU; dnsperf's CPU (its own group).
# Server CPU per answered query = usage delta / completed queries.
#
# Knobs: RUNS (3), DURATION (8), CLIENTS (20), OUTSTANDING (200),
# BASE_PORT (15500; the servers use BASE_PORT+1..7 and gslbd_stats's
# endpoint BASE_PORT+9: any base from 1024 to 65500, away from the ports
# of a test run going on beside it), SERVERS ("gslbd knotd gdnsd
# reflector"; add gslbd_rrl, gslbd_stats), RRL_RATE, WORKLOADS ("static
# mixed tcp geo-set geo-pick"), PLACEMENTS ("0:1 1:0"), SCRAPE (1), GSLBD,
# GSLBCTL, OUT_NAME (compare), CG_PREFIX (bench/cpu.sh).
#
# Output: bench/out/OUT_NAME-YYYYmmdd-HHMMSS/ (bench/out/OUT_NAME-latest):
# results.csv (one row per run), summary.md (the tables), env.txt, raw/
# (dnsperf output), inputs, configurations and server logs.
# `bench/compare.sh --summary DIR` prints the tables again.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
BASE_PORT=${BASE_PORT:-15500}
SERVERS=${SERVERS:-"gslbd knotd gdnsd reflector"}
WORKLOADS=${WORKLOADS:-"static mixed tcp geo-set geo-pick"}
RRL_RATE=${RRL_RATE:-1000000}
SCRAPE=${SCRAPE:-1}
OUT_NAME=${OUT_NAME:-compare}
ZONE=cdn.example.test
. bench/lib.sh
compare_knobs
. bench/cpu.sh

# --- summary ---------------------------------------------------------------
summarise() {  # summarise CSV
  python3 - "$1" "$ROOT/bench" <<'EOF'
import os, re, sys
sys.path.insert(0, sys.argv[2])
from cgsum import Runs, fmt as f
env = os.path.join(os.path.dirname(sys.argv[1]), "env.txt")
m = re.search(r"CLIENTS=(\d+)", open(env).read()) if os.path.exists(env) else None
WL = {"static": "static A, no EDNS",
      "mixed": "mixed static (NXDOMAIN, CNAME, wildcard, NODATA)",
      "tcp": "TCP, static A, %s connections" % (m.group(1) if m else "CLIENTS"),
      "geo-set": "ECS → GeoIP → address set (288 subnets)",
      "geo-pick": "ECS → GeoIP → weighted pick of one node (288 subnets)"}
R = Runs(sys.argv[1], ["gslbd", "gslbd_base", "gslbd_rrl", "gslbd_stats", "knotd", "gdnsd", "reflector"], list(WL))
servers, wls, places, runs, nruns, per_query = R.servers, R.wls, R.places, R.runs, R.nruns, R.per_query
print("Server CPU per answered query, gslbd ÷ peer (lower is better). Each "
      "figure: per placement the median of %d run(s), then the mean of the "
      "%d placement(s) (server CPU:dnsperf CPU = %s)." % (nruns, len(places), ", ".join(places)))
print()
peers = [s for s in servers if s != "gslbd"]
print("| workload | " + " | ".join("÷ " + s for s in peers) + " |")
print("|---|" + "--:|" * len(peers))
for w in wls:
    g = per_query("gslbd", w)
    cells = []
    for s in peers:
        b = per_query(s, w)
        cells.append(f(g / b) if g is not None and b else "—")
    print("| %s | %s |" % (WL.get(w, w), " | ".join(cells)))
print()
notes = []
if "reflector" in servers and "tcp" in wls:
    notes.append("reflector, TCP: the reflector is UDP only.")
if "knotd" in servers and "geo-pick" in wls:
    notes.append("knotd, weighted pick: knotd's geoip module answers a location with a "
                 "fixed RRset (mode geodb) or picks by weight whatever the location "
                 "(mode weighted), never both.")
if "knotd" in servers and "geo-set" in wls and not runs.get(("knotd", "geo-set", places[0])):
    notes.append("knotd, address set: knotd ran without its geoip module "
                 "(Debian: knot-module-geoip).")
for n in notes:
    print("— " + n)
if notes:
    print()
print("Absolute server CPU per answered query (µs), mean of the placements:")
print()
print("| workload | " + " | ".join(servers) + " |")
print("|---|" + "--:|" * len(servers))
for w in wls:
    print("| %s | %s |" % (WL.get(w, w), " | ".join(f(per_query(s, w)) for s in servers)))
print()
R.per_run()
EOF
}

summary_mode "$@"

# --- checks ------------------------------------------------------------------
for t in dnsperf dig taskset setsid gcc perl python3; do
  command -v "$t" >/dev/null || die "$t not found"
done
has() { case " $SERVERS " in *" $1 "*) return 0 ;; esac; return 1; }
has knotd && { command -v knotd >/dev/null || die "knotd not found"; }
has gdnsd && { command -v gdnsd >/dev/null || die "gdnsd not found"; }
{ has gslbd || has gslbd_rrl || has gslbd_base || has gslbd_stats; } && { [ -x "$GSLBD" ] && [ -x "$GSLBCTL" ] || die "gslbd/gslbctl not built (run make)"; }
has gslbd_stats && { command -v curl >/dev/null || die "curl not found"; }
[ "$(nproc)" -ge 2 ] || die "needs 2 CPUs (server on one, dnsperf on the other)"
cg_check || exit 1
[[ $BASE_PORT =~ ^[0-9]+$ ]] && [ "$BASE_PORT" -ge 1024 ] && [ "$BASE_PORT" -le 65500 ] ||
  die "BASE_PORT must be a port from 1024 to 65500 (servers use BASE_PORT+1..7, stats BASE_PORT+9)"
STATS_PORT=$((BASE_PORT + 9))

OUT=$ROOT/bench/out/$OUT_NAME-$(date +%Y%m%d-%H%M%S)
mkdir -p "$OUT/raw"
ln -sfn "$(basename "$OUT")" "$ROOT/bench/out/$OUT_NAME-latest"

# Stop everything this script started (each server's group, dnsperf's
# group) on any exit.
trap cg_stop_all EXIT
trap 'exit 130' INT TERM

i=0
for s in $SERVERS; do i=$((i + 1)); PORT[$s]=$((BASE_PORT + i)); done

{ env_info $SERVERS
  echo "settings: RUNS=$RUNS DURATION=$DURATION CLIENTS=$CLIENTS OUTSTANDING=$OUTSTANDING PLACEMENTS='$PLACEMENTS' WORKLOADS='$WORKLOADS' SERVERS='$SERVERS' SCRAPE=$SCRAPE"
  echo "knot-module-geoip: $(dpkg-query -W -f '${Version}' knot-module-geoip 2>/dev/null || echo none)"
  echo "cpu accounting: cgroup v1 cpuacct ($CG_ROOT)"
} > "$OUT/env.txt"

# --- inputs ----------------------------------------------------------------
echo "bench: generating inputs in $OUT" >&2
GEN="python3 $ROOT/bench/gslbgen.py"
compare_inputs "$OUT" "$ZONE"

if has reflector; then
  mkdir -p "$OUT/bin"; gcc -O2 -Wall -o "$OUT/bin/reflector" bench/reflector.c || die "cannot build the reflector"
fi
# gslbd_setup NAME [EXTRA]: gslbd as server NAME, EXTRA appended to its
# configuration (gslbd_rrl: rate limiting on, with a limit no client of
# the benchmark reaches, so that every answer pays for its bucket).
gslbd_setup() {
  local n=$1 d=$OUT/$1
  compare_gslbd "$d" "${PORT[$n]}" "$OUT" "$ZONE" "${2:-}"
  declare -g -a "CMD_$n=(\"\$GSLBD\" -c \"\$d/gslbd.conf\" -w 1)"
}
has gslbd && gslbd_setup gslbd
# gslbd_base: another build of gslbd (GSLBD_BASE) on the same inputs, to
# compare two builds in one run.
has gslbd_base && GSLBD=$GSLBD_BASE GSLBCTL=$(dirname "$GSLBD_BASE")/gslbctl gslbd_setup gslbd_base
has gslbd_rrl && gslbd_setup gslbd_rrl "rrl:
  responses-per-second: $RRL_RATE
  window: 2000
  slip: 2
  exempt: []"
has gslbd_stats && gslbd_setup gslbd_stats "stats:
  listen: [ \"127.0.0.1@$STATS_PORT\" ]"
KNOT_GEO=
if has knotd; then
  d=$OUT/knotd; compare_dir "$d" "$OUT" "$ZONE"
  $GEN compare-knot > "$d/geo.conf"
  knot_conf() { compare_knot_conf "$d" "${PORT[knotd]}" "$OUT" "$ZONE" "$1"; }
  # knotd's geoip module is a package of its own (Debian:
  # knot-module-geoip); without it knotd runs the other workloads.
  knot_conf 1 > "$d/knot.conf"
  if knotc -c "$d/knot.conf" conf-check > "$d/conf-check.log" 2>&1; then
    KNOT_GEO=1
  else
    echo "bench: knotd without its geoip module (see $d/conf-check.log): no knotd geo-set" >&2
    knot_conf "" > "$d/knot.conf"
  fi
  CMD_knotd=(knotd -c "$d/knot.conf")
fi
if has gdnsd; then
  d=$OUT/gdnsd; mkdir -p "$d/zones" "$d/run" "$d/state"
  cp "$OUT/$ZONE.zone" "$d/zones/$ZONE"
  { bench_zone; echo "www 60 DYNA geoip!www"; echo "set 60 DYNA geoip!set"; } > "$d/zones/bench.test"
  { cat <<EOC
options => {
  listen => { 127.0.0.1:${PORT[gdnsd]} => { udp_threads = 1, tcp_threads = 1 } }
  run_dir = "$d/run"
  state_dir = "$d/state"
}
EOC
    $GEN compare-gdnsd | sed "s|@MMDB@|$OUT/geo.mmdb|"; } > "$d/config"
  CMD_gdnsd=(gdnsd -c "$d" start)
fi
if has reflector; then
  mkdir -p "$OUT/reflector"
  CMD_reflector=("$OUT/bin/reflector" "127.0.0.1@${PORT[reflector]}")
fi

# --- start and check -------------------------------------------------------
first_place=${PLACEMENTS%% *}
SCPU=${first_place%:*}
ready() {  # ready SERVER: answers static A (the reflector: any answer)
  local o
  o=$(dig +tries=1 +time=1 @127.0.0.1 -p "${PORT[$1]}" "static.$ZONE" A 2>/dev/null || true)
  if [ "$1" = reflector ]; then [[ $o == *"status: NOERROR"* ]]
  else [[ $o == *$'\t192.0.2.80'* ]]; fi
}
for s in $SERVERS; do
  declare -n cmd="CMD_$s"
  cg_create "$s" || die "cannot create cgroup $(cg_dir "$s")"
  # The subshell joins the group, then becomes setsid, then taskset, then
  # the server (exec all along: one pid, already in the group).
  ( cg_exec "$s" setsid taskset -c "$SCPU" "${cmd[@]}" ) > "$OUT/$s/log" 2>&1 < /dev/null &
  pid=$!
  unset -n cmd
  ok=
  for _ in $(seq 100); do
    ready "$s" && { ok=1; break; }
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  [ -n "$ok" ] || { cat "$OUT/$s/log" >&2; die "$s did not answer on port ${PORT[$s]}"; }
  echo "bench: $s pid $pid ($(wc -l < "$(cg_dir "$s")/tasks") threads) on 127.0.0.1@${PORT[$s]}" >&2
done

ask() {  # ask SERVER NAME [ECS]: the sorted A addresses
  dig +tries=1 +time=2 @127.0.0.1 -p "${PORT[$1]}" "$2" A ${3:+"+subnet=$3"} |
    awk '$4 == "A" && $1 !~ /^;/ { print $5 }' | sort -V | tr '\n' ' '
}
status() {  # status SERVER NAME TYPE +notcp|+tcp
  dig "$4" +tries=1 +time=2 @127.0.0.1 -p "${PORT[$1]}" "$2" "$3" |
    sed -n 's/.*status: \([A-Z]*\),.*/\1/p'
}
for s in $SERVERS; do
  [ "$s" = reflector ] && continue
  for t in +notcp +tcp; do
    [ "$(status "$s" "static.$ZONE" A $t)" = NOERROR ] || die "$s: static A over $t"
    [ "$(status "$s" "nx1.$ZONE" A $t)" = NXDOMAIN ] || die "$s: nx1 A over $t is not NXDOMAIN"
  done
  [ "$(ask "$s" "a.edge.$ZONE")" = "192.0.2.99 " ] || die "$s: wildcard"
  [ "$(status "$s" "mail.$ZONE" AAAA +notcp)" = NOERROR ] || die "$s: NODATA"
  case $s:$KNOT_GEO in
    gslbd:*|gslbd_rrl:*|gslbd_base:*|gslbd_stats:*|gdnsd:*|knotd:1)
      a=$(ask "$s" set.bench.test 11.0.1.0/24)
      [ "$a" = "192.0.2.1 192.0.2.2 192.0.2.3 " ] || die "$s: set.bench.test for 11.0.1.0/24: '$a'"
      a=$(ask "$s" set.bench.test 12.18.3.0/24)
      [ "$a" = "192.0.2.25 192.0.2.26 192.0.2.27 " ] || die "$s: set.bench.test for 12.18.3.0/24: '$a'"
      [ "$s" = knotd ] && { echo "bench: $s answers as expected" >&2; continue; }
      a=$(ask "$s" www.bench.test 11.1.9.0/24)
      [[ $a =~ ^192\.0\.2\.[456]\ $ ]] || die "$s: www.bench.test for 11.1.9.0/24: '$a'"
      a=$(ask "$s" www.bench.test 13.0.0.0/24)
      [ "$a" = "192.0.2.250 " ] || die "$s: www.bench.test default: '$a'"
      ;;
  esac
  echo "bench: $s answers as expected" >&2
done
# Every one of the 288 ECS subnets gets an answer of the right size (set:
# 3 addresses, www: 1).
for s in gslbd gslbd_base gslbd_rrl gslbd_stats gdnsd knotd; do
  has "$s" || continue
  qs="set:3 www:1"
  case $s:$KNOT_GEO in knotd:1) qs=set:3 ;; knotd:) continue ;; esac
  for q in $qs; do
    awk -v n="${q%:*}" '{ print n ".bench.test A +subnet=" $3 }' "$OUT/geo-set.txt" > "$OUT/check.batch"
    c=$(dig @127.0.0.1 -p "${PORT[$s]}" +tries=1 +time=2 +noall +answer -f "$OUT/check.batch" |
      awk '$4 == "A" { n++ } END { print n + 0 }')
    [ "$c" = $((288 * ${q#*:})) ] ||
      die "$s: ${q%:*}.bench.test: $c addresses in the answers to 288 check queries, want $((288 * ${q#*:}))"
  done
done

# --- measure -----------------------------------------------------------------
CSV=$OUT/results.csv
echo "server,workload,placement,run,qps,avg_latency_ms,sent,completed,lost,server_cpu_ns,server_us_per_query,on_server_cpu,client_cpu_s" > "$CSV"
cg_create dnsperf || die "cannot create cgroup $(cg_dir dnsperf)"

takes() {  # takes SERVER WORKLOAD: whether SERVER runs WORKLOAD
  case $1:$2 in
    reflector:tcp|knotd:geo-pick) return 1 ;;
    knotd:geo-set) [ -n "$KNOT_GEO" ] || return 1 ;;
  esac
  return 0
}

measure() {  # measure SERVER WORKLOAD PLACEMENT RUN SCPU CCPU
  local s=$1 w=$2 pl=$3 run=$4 scpu=$5 ccpu=$6 raw args line
  raw=$OUT/raw/$s-$w-${pl/:/-}-$run.txt
  case $w in
    static) args=(-m udp -d "$OUT/static.txt") ;;
    mixed) args=(-m udp -d "$OUT/mixed.txt") ;;
    tcp) args=(-m tcp -d "$OUT/static.txt") ;;
    geo-set|geo-pick) args=(-m udp -B -d "$OUT/$w.bin") ;;
  esac
  [ -n "$(cg_procs "$s")" ] || die "$s died"
  local scraper=
  if [ "$s" = gslbd_stats ]; then
    # A Prometheus server's scrapes, at most DURATION / SCRAPE + 2 of
    # them; the rendering is the server's CPU, curl's is not.
    ( for _ in $(seq $(( DURATION / SCRAPE + 2 ))); do
        curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$STATS_PORT/metrics" || true
        sleep "$SCRAPE"
      done ) < /dev/null &
    scraper=$!
    taskset -p -c "$ccpu" "$scraper" > /dev/null 2>&1 || true
  fi
  line=$(cg_measure "$s" "$scpu" "$ccpu" "$raw" -s 127.0.0.1 -p "${PORT[$s]}" \
      -l "$DURATION" -c "$CLIENTS" -T 1 -q "$OUTSTANDING" -t 2 "${args[@]}") ||
    { cat "$raw" >&2; die "dnsperf failed against $s/$w"; }
  if [ -n "$scraper" ]; then
    kill "$scraper" 2>/dev/null || true
    wait "$scraper" 2>/dev/null || true
  fi
  echo "$s,$w,$pl,$run,$line" | tee -a "$CSV" >&2
}

compare_rounds

{ echo "memory (VmRSS at the end, KiB):"
  for s in $SERVERS; do echo "  $s $(cg_rss_kb "$s")"; done; } >> "$OUT/env.txt"
cg_stop_all
trap - EXIT

SUM=$OUT/summary.md
{ echo "# bench/compare.sh, $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo
  echo "RUNS=$RUNS DURATION=$DURATION CLIENTS=$CLIENTS OUTSTANDING=$OUTSTANDING, load $(cut -d' ' -f1-3 /proc/loadavg) at the end"
  echo
  summarise "$CSV"; } > "$SUM"
cat "$SUM"
echo "bench: raw results in $OUT" >&2
