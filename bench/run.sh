#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/run.sh: the dnsperf comparison of gslbd, knotd, nsd and gdnsd that
# docs/BENCHMARKS.md records (`make bench` runs it).
#
# Every server serves the same copy of zones/cdn.example.test.zone on its
# own unprivileged loopback port, as a foreground process started here and
# pinned with taskset to CPU $SERVER_CPU with one UDP and one TCP worker.
# dnsperf runs pinned to CPU $CLIENT_CPU.  The servers run side by side for
# the whole benchmark (idle ones cost nothing) and the runs are interleaved
# round-robin, so that noise on this shared machine falls on all servers
# alike rather than on whichever one happened to run during a burst.
#
# For each run we record dnsperf's qps, average latency and answered
# (completed) queries, and the server's CPU time: as root, the delta of a
# cgroup v1 cpuacct group per server (exact, every thread and child: nsd
# forks a main and a server child); otherwise the tick-sampled utime+stime
# deltas of /proc/PID/stat summed over every process of the server's
# session (setsid puts each server in a session of its own).  CPU per
# answered query is that delta divided by the queries dnsperf saw
# answered; env.txt names the clock ("server CPU clock").
#
# Knobs (environment): RUNS (3), DURATION (20 s per run), CLIENTS (4
# dnsperf clients, i.e. source ports or TCP connections), OUTSTANDING
# (100), BASE_PORT (15300), SERVERS ("gslbd knotd nsd gdnsd"), PROTOS
# ("udp tcp"), SERVER_CPU (0), CLIENT_CPU (1), DNSPERF_OPTS (extra flags,
# e.g. "-e" for EDNS0), GSLBD (build/gslbd).
#
# Output: bench/out/YYYYmmdd-HHMMSS/ (configs, logs, raw dnsperf output,
# results.csv, summary.md), and bench/out/latest pointing at it.  The
# markdown table is also printed on stdout.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
RUNS=${RUNS:-3}
DURATION=${DURATION:-20}
CLIENTS=${CLIENTS:-4}
OUTSTANDING=${OUTSTANDING:-100}
BASE_PORT=${BASE_PORT:-15300}
SERVERS=${SERVERS:-"gslbd knotd nsd gdnsd"}
PROTOS=${PROTOS:-"udp tcp"}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
DNSPERF_OPTS=${DNSPERF_OPTS:-}
GSLBD=${GSLBD:-$ROOT/build/gslbd}
ZONE=cdn.example.test
ZONESRC=$ROOT/zones/$ZONE.zone
. bench/lib.sh

# `bench/run.sh --summary DIR` reprints the table of an earlier run.
SUMMARY_ONLY=
if [ "${1:-}" = --summary ]; then
  d=${2:-}
  case $d in /*) ;; *) d=$OLDPWD/$d ;; esac   # relative to the caller
  [ -f "$d/results.csv" ] || die "usage: $0 [--summary DIR]"
  SUMMARY_ONLY=$(cd "$d" && pwd)
fi

if [ -z "$SUMMARY_ONLY" ]; then
for t in dnsperf dig taskset setsid knotd nsd gdnsd; do
  command -v "$t" >/dev/null || die "$t not found (Debian: dnsperf, \
bind9-dnsutils, util-linux, knot, nsd, gdnsd)"
done
[ -x "$GSLBD" ] || die "$GSLBD not built (run make)"
[ "$(nproc)" -ge 2 ] || die "needs 2 CPUs (server on one, dnsperf on another)"
fi

# --- summary helpers -----------------------------------------------------
# Medians over the runs of each server and transport: med (bench/lib.sh).
has() { case " $SERVERS $PROTOS " in *" $1 "*) return 0 ;; esac; return 1; }

summarise() {
  local proto s
  echo "| server | proto | qps | avg latency (ms) | server CPU/query (us) | lost | server CPU (s) | dnsperf CPU (s) |"
  echo "|---|---|--:|--:|--:|--:|--:|--:|"
  for proto in $PROTOS; do
    for s in $SERVERS; do
      printf '| %s | %s | %.0f | %.3f | %.2f | %.0f | %.1f | %.1f |\n' "$s" "$proto" \
        "$(med "$s" "$proto" 4)" "$(med "$s" "$proto" 5)" "$(med "$s" "$proto" 10)" \
        "$(med "$s" "$proto" 8)" "$(med "$s" "$proto" 9)" "$(med "$s" "$proto" 11)"
    done
  done
  echo
  echo "Medians of $(awk -F, 'NR > 1 && $3 > n { n = $3 } END { print n }' "$CSV") runs per server and transport."
  if has gslbd && has knotd; then
    for proto in $PROTOS; do
      awk -v a="$(med gslbd "$proto" 10)" -v b="$(med knotd "$proto" 10)" -v p="$proto" \
        'BEGIN { if (b > 0) printf "gslbd/knotd server CPU per query (%s): %.2f\n", p, a / b }'
    done
  fi
  if has gslbd && has gdnsd && has tcp; then
    awk -v a="$(med gslbd tcp 4)" -v b="$(med gdnsd tcp 4)" \
      'BEGIN { if (b > 0) printf "gslbd/gdnsd TCP qps: %.2f\n", a / b }'
  fi
}

if [ -n "$SUMMARY_ONLY" ]; then
  CSV=$SUMMARY_ONLY/results.csv
  SERVERS=$(awk -F, 'NR > 1 && !seen[$1]++ { printf "%s ", $1 }' "$CSV")
  PROTOS=$(awk -F, 'NR > 1 && !seen[$2]++ { printf "%s ", $2 }' "$CSV")
  summarise
  exit 0
fi

OUT=$ROOT/bench/out/$(date +%Y%m%d-%H%M%S)
mkdir -p "$OUT/raw"
ln -sfn "$(basename "$OUT")" "$ROOT/bench/out/latest"

# --- zone and configs ----------------------------------------------------
# gdnsd cannot hold a DS record at a delegation point ("can only have NS
# and/or address records"), in any syntax, so the benchmark zone is the demo
# zone without its DS line, and every server loads this same copy.  No query
# in the mix asks for the DS.
BZONE=$OUT/$ZONE.zone
grep -v -E '^[^;]*[[:space:]]IN[[:space:]]+DS[[:space:]]' "$ZONESRC" > "$BZONE"

i=0
for s in $SERVERS; do
  i=$((i + 1))
  PORT[$s]=$((BASE_PORT + i))
  d=$OUT/$s
  mkdir -p "$d"
  case $s in
    gslbd)
      cp "$BZONE" "$d/"
      subst bench/gslbd.conf.in "$d" "${PORT[$s]}" > "$d/gslbd.conf"
      CMD_gslbd=("$GSLBD" -c "$d/gslbd.conf" -l "127.0.0.1@${PORT[$s]}" -w 1)
      ;;
    knotd)
      cp "$BZONE" "$d/"
      subst bench/knot.conf.in "$d" "${PORT[$s]}" > "$d/knot.conf"
      CMD_knotd=(knotd -c "$d/knot.conf")
      ;;
    nsd)
      cp "$BZONE" "$d/"
      subst bench/nsd.conf.in "$d" "${PORT[$s]}" > "$d/nsd.conf"
      CMD_nsd=(nsd -d -c "$d/nsd.conf")
      ;;
    gdnsd)
      mkdir -p "$d/zones" "$d/run" "$d/state"
      cp "$BZONE" "$d/zones/$ZONE"
      subst bench/gdnsd.config.in "$d" "${PORT[$s]}" > "$d/config"
      CMD_gdnsd=(gdnsd -c "$d" start)
      ;;
    *) die "unknown server $s" ;;
  esac
done

# The query mix: 16 lines, replayed in order by dnsperf.  10 answers
# (A, AAAA, MX, TXT, NS at and below the apex), 2 CNAMEs (img -> static,
# answered with the chased target by all but gdnsd, which returns the CNAME
# alone), 4 NXDOMAINs.
Q=$OUT/queries.txt
cat > "$Q" <<EOF
static.$ZONE A
static.$ZONE AAAA
ns1.$ZONE A
ns1.$ZONE AAAA
ns2.$ZONE A
mail.$ZONE A
$ZONE MX
$ZONE TXT
$ZONE NS
static.$ZONE A
img.$ZONE A
img.$ZONE AAAA
www.$ZONE A
nx1.$ZONE AAAA
missing.$ZONE MX
nope.static.$ZONE A
EOF

# --- machine and versions ------------------------------------------------
{
  env_info $SERVERS
  echo "settings: RUNS=$RUNS DURATION=$DURATION CLIENTS=$CLIENTS OUTSTANDING=$OUTSTANDING SERVER_CPU=$SERVER_CPU CLIENT_CPU=$CLIENT_CPU DNSPERF_OPTS='$DNSPERF_OPTS'"
} > "$OUT/env.txt"

# --- start and check -----------------------------------------------------
static_ok() {  # the server answers `static A` (start_server's READY-CMD)
  local a
  a=$(dig +short +tries=1 +time=1 @127.0.0.1 -p "${PORT[$1]}" "static.$ZONE" A 2>/dev/null || true)
  [ "$a" = 192.0.2.80 ]
}
for s in $SERVERS; do
  declare -n cmd="CMD_$s"
  start_server "$s" "$OUT/$s/log" static_ok "$s" -- "${cmd[@]}"
  unset -n cmd
  # Check each server answers correctly over both transports.
  for t in +notcp +tcp; do
    a=$(dig +short "$t" @127.0.0.1 -p "${PORT[$s]}" "static.$ZONE" AAAA)
    [ "$a" = 2001:db8::80 ] || die "$s: bad AAAA answer over $t: '$a'"
    st=$(dig "$t" @127.0.0.1 -p "${PORT[$s]}" "nx1.$ZONE" A | sed -n 's/.*status: \([A-Z]*\),.*/\1/p')
    [ "$st" = NXDOMAIN ] || die "$s: expected NXDOMAIN over $t, got '$st'"
  done
  echo "bench: $s pid ${SID[$s]} serving on 127.0.0.1@${PORT[$s]} (CPU $SERVER_CPU)" >&2
done

# --- measure -------------------------------------------------------------
CSV=$OUT/results.csv
echo "server,proto,run,qps,avg_latency_ms,sent,completed,lost,server_cpu_s,server_cpu_us_per_query,client_cpu_s" > "$CSV"

for run in $(seq "$RUNS"); do
  for proto in $PROTOS; do
    for s in $SERVERS; do
      measure_run "$s" "$proto" "$run" "$OUT/raw/$s-$proto-$run.txt" \
        -m "$proto" -d "$Q" $DNSPERF_OPTS
    done
  done
done

# --- summarise -----------------------------------------------------------
SUM=$OUT/summary.md
summarise > "$SUM"
cat "$SUM"
echo "bench: raw results in $OUT" >&2
