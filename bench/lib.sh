# SPDX-License-Identifier: MIT
# bench/lib.sh: helpers shared by bench/run.sh and bench/gslb.sh (sourced,
# from the top of the tree; see docs/BENCHMARKS.md).
#
# Servers are started with setsid, so a server's session id is its pid and
# all its processes (nsd's children included) carry it.  SID[NAME] holds
# it; session_ticks sums utime+stime over the session; measure_run runs
# dnsperf pinned to $CLIENT_CPU and appends one CSV row.

HZ=$(getconf CLK_TCK)
declare -A SID PORT

die() { echo "bench: $*" >&2; exit 1; }

# med KEY1 KEY2 COLUMN: the median of COLUMN over the rows of $CSV whose
# first two columns are KEY1 and KEY2.
med() {
  awk -F, -v s="$1" -v p="$2" -v c="$3" '$1 == s && $2 == p { print $c }' "$CSV" |
    sort -g | awk '{ v[NR] = $1 } END {
      if (NR == 0) { print "nan"; exit }
      if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

subst() {  # subst TEMPLATE DIR PORT > FILE
  sed -e "s|@DIR@|$2|g" -e "s|@PORT@|$3|g" "$1"
}

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

# session_rss_kb: VmRSS summed over session $SID_Q.
session_rss_kb() {
  local p sum=0 v
  for p in $(session_pids); do
    v=$(awk '/^VmRSS:/ { print $2 }' "/proc/$p/status" 2>/dev/null || true)
    sum=$((sum + ${v:-0}))
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
  [ -z "${CPU_CG:-}" ] || cg_stop_all
}

# CPU accounting of start_server and measure_run: exact (cgroup v1
# cpuacct, bench/cpu.sh: one group per server, every thread counted in ns)
# when this runs as root with cpuacct mounted, else the tick-sampled
# utime+stime of /proc/PID/stat.  CPU_CLOCK says which (for env.txt);
# CPU_CLOCK=ticks forces the latter.
. "$(dirname "${BASH_SOURCE[0]}")/cpu.sh"
if [ "${CPU_CLOCK:-}" != ticks ] && cg_check 2>/dev/null; then
  CPU_CG=1 CPU_CLOCK=cpuacct
else
  CPU_CG= CPU_CLOCK=ticks
fi
trap cleanup EXIT
trap 'exit 130' INT TERM

# start_server NAME LOG READY-CMD... -- CMD...: starts CMD pinned to
# $SERVER_CPU in a session of its own, then runs READY-CMD (a shell
# function or command that succeeds once the server answers correctly)
# every 0.1 s for up to 10 s.
start_server() {
  local s=$1 log=$2 ready=() pid n ok= r
  shift 2
  while [ "$1" != -- ]; do ready+=("$1"); shift; done
  shift
  if [ -n "$CPU_CG" ]; then
    cg_create "$s" || die "cannot create cgroup $(cg_dir "$s")"
    ( cg_exec "$s" setsid taskset -c "$SERVER_CPU" "$@" ) > "$log" 2>&1 < /dev/null &
  else
    setsid taskset -c "$SERVER_CPU" "$@" > "$log" 2>&1 < /dev/null &
  fi
  pid=$!
  SID[$s]=$pid
  for n in $(seq 100); do
    "${ready[@]}" && { ok=1; break; }
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  [ -n "$ok" ] || { cat "$log" >&2; die "$s did not answer on port ${PORT[$s]}"; }
  # Session id must be the pid we hold (setsid did not fork).
  r=$(<"/proc/$pid/stat"); r=${r##*) }; set -- $r
  [ "$4" = "$pid" ] || die "$s: unexpected session id $4 for pid $pid"
}

# measure_run SERVER KEY RUN RAW DNSPERF-ARGS...: one dnsperf run against
# SERVER (pinned to $CLIENT_CPU, -l $DURATION -c $CLIENTS -T 1
# -q $OUTSTANDING -t 2) and one row "SERVER,KEY,RUN,qps,latency_ms,sent,
# completed,lost,server_cpu_s,server_cpu_us_per_query,client_cpu_s"
# appended to $CSV (and shown on stderr).  -t 2: give up on a query after
# 2 s, so that the run ends at most 2 s after DURATION.  `time` reports
# dnsperf's own CPU.
measure_run() {
  local s=$1 key=$2 run=$3 raw=$4 t0 t1 TIMEFORMAT='%3U %3S'
  shift 4
  SID_Q=${SID[$s]}
  kill -0 "$SID_Q" 2>/dev/null || die "$s (pid $SID_Q) died"
  if [ -n "$CPU_CG" ]; then t0=$(cg_usage "$s"); else t0=$(session_ticks); fi
  { time taskset -c "$CLIENT_CPU" dnsperf -s 127.0.0.1 -p "${PORT[$s]}" \
      -l "$DURATION" -c "$CLIENTS" -T 1 -q "$OUTSTANDING" -t 2 "$@" \
      > "$raw" 2>&1 ; } 2> "$raw.time" \
    || { cat "$raw" >&2; die "dnsperf failed against $s/$key"; }
  if [ -n "$CPU_CG" ]; then t1=$(cg_usage "$s"); else t1=$(session_ticks); fi
  local hz=$HZ
  [ -z "$CPU_CG" ] || hz=1000000000   # cpuacct counts ns
  awk -v s="$s" -v p="$key" -v r="$run" -v dt=$((t1 - t0)) -v hz="$hz" \
      -v ct="$(cat "$raw.time")" "$DNSPERF_AWK"'
    END {
      split(ct, c, " ")
      cpu = dt / hz
      per = done > 0 ? cpu * 1e6 / done : 0
      printf "%s,%s,%d,%.0f,%.3f,%d,%d,%d,%.2f,%.3f,%.2f\n", s, p, r, qps,
             lat * 1000, sent, done, lost, cpu, per, c[1] + c[2]
    }' "$raw" | tee -a "$CSV" >&2
}

CSV_HEADER=key1,key2,run,qps,avg_latency_ms,sent,completed,lost,server_cpu_s,server_cpu_us_per_query,client_cpu_s

# env_info NAME...: machine, versions and settings (for env.txt).
env_info() {
  local s
  echo "date: $(date -Is)"
  echo "nproc: $(nproc)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
  echo "kernel: $(uname -srm)"
  echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "server CPU clock: ${CPU_CLOCK:-ticks}"
  for s in "$@"; do
    case $s in
      gslbd*) echo "$s: $("$GSLBD" -V 2>&1 | head -1), binary $GSLBD, tree $(git describe --always --dirty 2>/dev/null || echo unknown)" ;;
      knotd) echo "knotd: $(knotd -V 2>&1 | head -1)" ;;
      nsd) echo "nsd: $(nsd -v 2>&1 | head -1)" ;;
      gdnsd*) echo "$s: $(dpkg-query -W -f '${Version}' gdnsd 2>/dev/null)" ;;
    esac
  done
  echo "dnsperf: $(dpkg-query -W -f '${Version}' dnsperf 2>/dev/null)"
}

# bench_zone: the small bench.test zone that the compare inputs serve
# beside the demo zone.
bench_zone() {
  cat <<EOZ
\$TTL 300
@       SOA ns1 hostmaster 1 3600 600 86400 300
        NS  ns1
ns1     A   192.0.2.53
static  A   192.0.2.80
EOZ
}

# compare_inputs OUT ZONE: the inputs of bench/compare.sh and
# bench/instr.sh in OUT: ZONE's zone without its DS (gdnsd refuses a DS
# at a delegation point, as in bench/run.sh), the GeoIP database
# (geo.mmdb), the static and mixed query files, and 288 distinct ECS
# /24s over the 400 GeoIP networks (the first 288 of gslbgen's shuffled
# list) for set.bench.test (geo-set) and www.bench.test (geo-pick), as
# text and wire files.
compare_inputs() {
  local out=$1 zone=$2 gen="python3 bench/gslbgen.py" q
  grep -v -E '^[^;]*[[:space:]]IN[[:space:]]+DS[[:space:]]' "zones/$zone.zone" > "$out/$zone.zone"
  $gen geo-src > "$out/geo.txt"
  perl bench/mmdb-continent.pl geoip/build-demo.pl "$out/geo.txt" "$out/geo.mmdb" > /dev/null
  echo "static.$zone A" > "$out/static.txt"
  printf '%s\n' "nx1.$zone A" "missing.$zone MX" "img.$zone A" "img.$zone AAAA" \
    "a.edge.$zone A" "x.y.edge.$zone A" "mail.$zone AAAA" "ns2.$zone AAAA" > "$out/mixed.txt"
  $gen geo-queries set.bench.test | head -288 > "$out/geo-set.txt"
  sed 's/^set\./www./' "$out/geo-set.txt" > "$out/geo-pick.txt"
  for q in geo-set geo-pick; do python3 bench/wireq.py < "$out/$q.txt" > "$out/$q.bin"; done
}

# compare_dir DIR OUT ZONE: DIR with the zone files of the compare inputs
# in OUT: ZONE.zone and bench.test.zone.
compare_dir() {
  mkdir -p "$1"
  cp "$2/$3.zone" "$1/"
  bench_zone > "$1/bench.test.zone"
}

# compare_gslbd DIR PORT OUT ZONE [EXTRA]: a one-worker gslbd on the
# inputs compare_inputs made in OUT, in DIR: ZONE and bench.test,
# gslbd.conf (listening on PORT, EXTRA appended) and a store with
# gslbgen's weight table applied by $GSLBCTL.
compare_gslbd() {
  local d=$1 port=$2 out=$3 zone=$4
  compare_dir "$d" "$out" "$zone"
  mkdir -p "$d/db"
  cat > "$d/gslbd.conf" <<EOC
server:
  listen: [ "127.0.0.1@$port" ]
  workers: 1
  identity: ""
  version: ""
  udp-max-payload: 1232
database:
  path: $d/db
zones:
  - name: $zone
    file: $zone.zone
  - name: bench.test
    file: bench.test.zone
geoip:
  database: $out/geo.mmdb
  region: [ region ]
  isp: [ isp ]
  edns-client-subnet: on
${5:-}
EOC
  python3 bench/gslbgen.py compare-json > "$d/table.json"
  # A new store: --create (builds from before it had the option create
  # without it).
  { "$GSLBCTL" -d "$d/db" --create apply "$d/table.json" ||
    "$GSLBCTL" -d "$d/db" apply "$d/table.json"; } > "$d/apply.log" 2>&1 ||
    { cat "$d/apply.log" >&2; die "$d: gslbctl apply failed"; }
}

# compare_knot_conf DIR PORT OUT ZONE WITH-GEOIP [MODULE]: knotd's
# configuration for the inputs of compare_inputs in OUT (the zone files
# in DIR), one worker of each kind, listening on PORT; with WITH-GEOIP
# set.bench.test comes from the geoip module (mode geodb, key
# [ region ]) on OUT/geo.mmdb; MODULE (say mod-onlinesign) is loaded
# for both zones, after the geoip module.
compare_knot_conf() {
  local d=$1 port=$2 out=$3 zone=$4 geo=$5 mod=${6:-}
  cat <<EOC
server:
    rundir: "$d"
    listen: 127.0.0.1@$port
    udp-workers: 1
    tcp-workers: 1
    background-workers: 1
    edns-client-subnet: on
database:
    storage: "$d"
log:
  - target: stderr
    any: warning
EOC
  [ -z "$geo" ] || cat <<EOC
mod-geoip:
  - id: geo
    config-file: "$d/geo.conf"
    ttl: 60
    mode: geodb
    geodb-file: "$out/geo.mmdb"
    geodb-key: [ region ]
EOC
  cat <<EOC
template:
  - id: default
    storage: "$d"
    semantic-checks: off
    zonefile-sync: -1
    zonefile-load: whole
    journal-content: none
    dnssec-signing: off
zone:
  - domain: $zone
    file: "$d/$zone.zone"
EOC
  [ -z "$mod" ] || echo "    module: $mod"
  echo "  - domain: bench.test"
  echo "    file: \"$d/bench.test.zone\""
  if [ -n "$geo" ] && [ -n "$mod" ]; then echo "    module: [ mod-geoip/geo, $mod ]"
  elif [ -n "$geo" ]; then echo "    module: mod-geoip/geo"
  elif [ -n "$mod" ]; then echo "    module: $mod"; fi
}

# summary_mode ARGS...: for `SCRIPT --summary DIR`, the script's
# summarise of DIR/results.csv, then exit (DIR relative to where the
# script was started).  Without --summary it returns.
summary_mode() {
  [ "${1:-}" = --summary ] || return 0
  local d=${2:-}
  case $d in /*) ;; *) d=$OLDPWD/$d ;; esac
  [ -f "$d/results.csv" ] || die "usage: $0 [--summary DIR]"
  summarise "$d/results.csv"
  exit 0
}

# compare_rounds: the measuring of bench/compare.sh and bench/dnssec.sh.
# For each placement SCPU:CCPU of $PLACEMENTS every server of $SERVERS
# is re-pinned to SCPU; then $RUNS rounds, in each every workload of
# $WORKLOADS against every server in turn that `takes SERVER WORKLOAD`
# accepts: `measure SERVER WORKLOAD PLACEMENT RUN SCPU CCPU` (both
# defined by the script).
compare_rounds() {
  local pl scpu ccpu s run w
  for pl in $PLACEMENTS; do
    scpu=${pl%:*} ccpu=${pl#*:}
    [ "$scpu" != "$ccpu" ] || die "placement $pl: server and dnsperf on the same CPU"
    for s in $SERVERS; do
      cg_pin "$s" "$scpu" || die "$s: cannot pin every thread to CPU $scpu"
    done
    echo "bench: placement $pl: servers on CPU $scpu, dnsperf on CPU $ccpu" >&2
    for run in $(seq "$RUNS"); do
      for w in $WORKLOADS; do
        for s in $SERVERS; do
          takes "$s" "$w" || continue
          measure "$s" "$w" "$pl" "$run" "$scpu" "$ccpu"
        done
      done
    done
  done
}

# compare_knobs: the defaults bench/compare.sh and bench/dnssec.sh share
# (after ROOT is set).
compare_knobs() {
  RUNS=${RUNS:-3}
  DURATION=${DURATION:-8}
  CLIENTS=${CLIENTS:-20}
  OUTSTANDING=${OUTSTANDING:-200}
  PLACEMENTS=${PLACEMENTS:-"0:1 1:0"}
  GSLBD=${GSLBD:-$ROOT/build/gslbd}
  GSLBCTL=${GSLBCTL:-$ROOT/build/gslbctl}
}
