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
# (completed) queries, and the server's CPU time: the utime+stime deltas of
# /proc/PID/stat, which cover all threads, summed over every process of the
# server's session (nsd forks a main and a server child; setsid puts each
# server in a session of its own).  CPU per answered query is that delta
# divided by the queries dnsperf saw answered.
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
HZ=$(getconf CLK_TCK)

die() { echo "bench: $*" >&2; exit 1; }

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
# Medians over the runs of each server and transport.
med() {  # med SERVER PROTO COLUMN
  awk -F, -v s="$1" -v p="$2" -v c="$3" '$1 == s && $2 == p { print $c }' "$CSV" |
    sort -g | awk '{ v[NR] = $1 } END {
      if (NR == 0) { print "nan"; exit }
      if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
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

# --- process bookkeeping -------------------------------------------------
# We start each server with setsid, so its session id is its pid; all its
# processes (nsd's children included) carry that session id.

declare -A SID PORT

# session_pids: the pids of every live process in session $SID_Q.
session_pids() {
  local f l r
  for f in /proc/[0-9]*/stat; do
    { l=$(<"$f"); } 2>/dev/null || continue
    r=${l##*) }              # skip "pid (comm) ", comm may hold spaces
    set -- $r
    if [ "$4" = "$SID_Q" ]; then f=${f#/proc/}; echo "${f%/stat}"; fi
  done
}

# session_ticks: utime+stime (clock ticks) summed over session $SID_Q.
session_ticks() {
  local f l r sum=0
  for f in /proc/[0-9]*/stat; do
    { l=$(<"$f"); } 2>/dev/null || continue
    r=${l##*) }
    set -- $r
    # After "comm": $1 state $2 ppid $3 pgrp $4 session ... $12 utime
    # $13 stime (fields 14 and 15 of proc(5)).
    if [ "$4" = "$SID_Q" ]; then sum=$((sum + ${12} + ${13})); fi
  done
  echo "$sum"
}

stop_server() {
  local s=$1 p n
  [ -n "${SID[$s]:-}" ] || return 0
  SID_Q=${SID[$s]}
  for p in $(session_pids); do kill -TERM "$p" 2>/dev/null || true; done
  for n in $(seq 50); do
    [ -z "$(session_pids)" ] && break
    sleep 0.1
  done
  for p in $(session_pids); do kill -KILL "$p" 2>/dev/null || true; done
  unset "SID[$s]"
}

cleanup() {
  local s
  for s in "${!SID[@]}"; do stop_server "$s"; done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- zone and configs ----------------------------------------------------
# gdnsd cannot hold a DS record at a delegation point ("can only have NS
# and/or address records"), in any syntax, so the benchmark zone is the demo
# zone without its DS line, and every server loads this same copy.  No query
# in the mix asks for the DS.
BZONE=$OUT/$ZONE.zone
grep -v -E '^[^;]*[[:space:]]IN[[:space:]]+DS[[:space:]]' "$ZONESRC" > "$BZONE"

subst() {  # subst TEMPLATE DIR PORT > FILE
  sed -e "s|@DIR@|$2|g" -e "s|@PORT@|$3|g" "$1"
}

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
  echo "date: $(date -Is)"
  echo "nproc: $(nproc)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
  echo "kernel: $(uname -srm)"
  echo "gslbd: $("$GSLBD" -V 2>&1 | head -1), binary $GSLBD, tree $(git describe --always --dirty 2>/dev/null || echo unknown)"
  echo "knotd: $(knotd -V 2>&1 | head -1)"
  echo "nsd: $(nsd -v 2>&1 | head -1)"
  echo "gdnsd: $(dpkg-query -W -f '${Version}' gdnsd 2>/dev/null)"
  echo "dnsperf: $(dpkg-query -W -f '${Version}' dnsperf 2>/dev/null)"
  echo "settings: RUNS=$RUNS DURATION=$DURATION CLIENTS=$CLIENTS OUTSTANDING=$OUTSTANDING SERVER_CPU=$SERVER_CPU CLIENT_CPU=$CLIENT_CPU DNSPERF_OPTS='$DNSPERF_OPTS'"
} > "$OUT/env.txt"

# --- start and check -----------------------------------------------------
for s in $SERVERS; do
  declare -n cmd="CMD_$s"
  setsid taskset -c "$SERVER_CPU" "${cmd[@]}" > "$OUT/$s/log" 2>&1 < /dev/null &
  pid=$!
  unset -n cmd
  SID[$s]=$pid
  ok=
  for n in $(seq 100); do
    a=$(dig +short +tries=1 +time=1 @127.0.0.1 -p "${PORT[$s]}" "static.$ZONE" A 2>/dev/null || true)
    [ "$a" = 192.0.2.80 ] && { ok=1; break; }
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  [ -n "$ok" ] || { cat "$OUT/$s/log" >&2; die "$s did not answer on port ${PORT[$s]}"; }
  # Session id must be the pid we hold (setsid did not fork).
  r=$(<"/proc/$pid/stat"); r=${r##*) }; set -- $r
  [ "$4" = "$pid" ] || die "$s: unexpected session id $4 for pid $pid"
  # Check each server answers correctly over both transports.
  for t in +notcp +tcp; do
    a=$(dig +short "$t" @127.0.0.1 -p "${PORT[$s]}" "static.$ZONE" AAAA)
    [ "$a" = 2001:db8::80 ] || die "$s: bad AAAA answer over $t: '$a'"
    st=$(dig "$t" @127.0.0.1 -p "${PORT[$s]}" "nx1.$ZONE" A | sed -n 's/.*status: \([A-Z]*\),.*/\1/p')
    [ "$st" = NXDOMAIN ] || die "$s: expected NXDOMAIN over $t, got '$st'"
  done
  echo "bench: $s pid $pid serving on 127.0.0.1@${PORT[$s]} (CPU $SERVER_CPU)" >&2
done

# --- measure -------------------------------------------------------------
CSV=$OUT/results.csv
echo "server,proto,run,qps,avg_latency_ms,sent,completed,lost,server_cpu_s,server_cpu_us_per_query,client_cpu_s" > "$CSV"

TIMEFORMAT='%3U %3S'
for run in $(seq "$RUNS"); do
  for proto in $PROTOS; do
    for s in $SERVERS; do
      raw=$OUT/raw/$s-$proto-$run.txt
      SID_Q=${SID[$s]}
      kill -0 "$SID_Q" 2>/dev/null || die "$s (pid $SID_Q) died; see $OUT/$s/log"
      t0=$(session_ticks)
      # -t 2: give up on a query after 2 s, so that the run ends at most
      # 2 s after DURATION.  `time` reports dnsperf's own CPU.
      { time taskset -c "$CLIENT_CPU" dnsperf -s 127.0.0.1 -p "${PORT[$s]}" \
          -m "$proto" -d "$Q" -l "$DURATION" -c "$CLIENTS" -T 1 \
          -q "$OUTSTANDING" -t 2 $DNSPERF_OPTS > "$raw" 2>&1 ; } 2> "$raw.time" \
        || { cat "$raw" >&2; die "dnsperf failed against $s/$proto"; }
      t1=$(session_ticks)
      awk -v s="$s" -v p="$proto" -v r="$run" -v dt=$((t1 - t0)) -v hz="$HZ" \
          -v ct="$(cat "$raw.time")" '
        /Queries sent:/      { sent = $3 }
        /Queries completed:/ { done = $3 }
        /Queries lost:/      { lost = $3 }
        /Queries per second:/{ qps = $4 }
        /Average Latency/    { lat = $4 }
        END {
          split(ct, c, " ")
          cpu = dt / hz
          per = done > 0 ? cpu * 1e6 / done : 0
          printf "%s,%s,%d,%.0f,%.3f,%d,%d,%d,%.2f,%.3f,%.2f\n", s, p, r, qps,
                 lat * 1000, sent, done, lost, cpu, per, c[1] + c[2]
        }' "$raw" | tee -a "$CSV" >&2
    done
  done
done

# --- summarise -----------------------------------------------------------
SUM=$OUT/summary.md
summarise > "$SUM"
cat "$SUM"
echo "bench: raw results in $OUT" >&2
