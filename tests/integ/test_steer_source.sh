#!/bin/bash
# Steering inputs pulled from a real Prometheus (steer.sources): the test
# runs a small exporter of edge figures (node, region and ISP labels),
# Prometheus scrapes it every second, and gslbd evaluates PromQL queries
# against Prometheus's query API every second.  A node that turns slow
# in one region loses its share there, exactly as with pushed figures;
# steer show and explain say where the inputs came from; a health metric
# query fills the node's metrics; figures of a node the table does not
# have are refused and counted; with Prometheus stopped the source is
# down in /metrics and the log, the inputs are not zeroed but age, and
# the row goes back to the operator's weights once they are stale; with
# Prometheus back the source is up again.  Bad source settings stop the
# start naming the file and line.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/steer_lib.sh"

command -v prometheus >/dev/null || { echo "SKIP: prometheus not installed"; exit 77; }
SPORT=$((PORT + 1)) PPORT=$((PORT + 2)) XPORT=$((PORT + 3))
metric() { awk -v m="$2" '$1 == m { print $2 }' <<<"$1"; }
scrape() { curl -s "http://127.0.0.1:$SPORT/metrics"; }

# The exporter: serves $T/x/metrics, which the test rewrites.
mkdir -p "$T/x"
exporter() { # a-gz-latency b-gz-latency
	cat > "$T/x/metrics.new" <<EOF
# TYPE edge_success_ratio gauge
edge_success_ratio{node="a",region="cn-gz",isp="ctcc"} 0.999
edge_success_ratio{node="b",region="cn-gz",isp="ctcc"} 0.999
edge_success_ratio{node="a",region="cn-bj",isp="cucc"} 0.999
edge_success_ratio{node="b",region="cn-bj",isp="cucc"} 0.999
edge_success_ratio{node="ghost",region="cn-gz",isp="ctcc"} 0.5
# TYPE edge_latency_ms gauge
edge_latency_ms{node="a",region="cn-gz",isp="ctcc"} $1
edge_latency_ms{node="b",region="cn-gz",isp="ctcc"} $2
edge_latency_ms{node="a",region="cn-bj",isp="cucc"} 20
edge_latency_ms{node="b",region="cn-bj",isp="cucc"} 20
# TYPE edge_cpu_percent gauge
edge_cpu_percent{node="a"} 42
EOF
	mv "$T/x/metrics.new" "$T/x/metrics"
}
exporter 20 20
(cd "$T/x" && exec python3 -m http.server --bind 127.0.0.1 "$XPORT") >/dev/null 2>&1 &
XPID=$!
cat > "$T/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: edge
    static_configs:
      - targets: [ "127.0.0.1:$XPORT" ]
EOF
PROM=
start_prom() {
	prometheus --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/prom" \
		--web.listen-address="127.0.0.1:$PPORT" >>"$T/prometheus.log" 2>&1 &
	PROM=$!
}
stop_prom() { [ -z "$PROM" ] || { kill "$PROM"; wait "$PROM" 2>/dev/null; PROM=; }; }
start_prom

SOURCES="  sources:
    - name: edge
      url: http://127.0.0.1:$PPORT/
      interval: 1
      timeout: 0.5
      queries:
        success: 'edge_success_ratio * 100'
        latency: 'edge_latency_ms'
        cpu: 'edge_cpu_percent'"
steer_setup "stats:
  listen: [ \"127.0.0.1@$SPORT\" ]" "" 
printf '%s\n' "$SOURCES" >> "$T/gslbd.conf"
trap 'stop_prom; kill $XPID 2>/dev/null; wait $XPID 2>/dev/null; cleanup' EXIT

# Bad settings first: each stops --check with the file and line.
cp "$T/gslbd.conf" "$T/good.conf"
bad_conf() { # sed-expression expected-message what
	sed -e "$1" "$T/good.conf" > "$T/gslbd.conf"
	out=$("$GSLBD" -c "$T/gslbd.conf" --check 2>&1) && fail "$3: --check passed" ||
		expect_has "$out" "gslbd.conf:[0-9]+: .*$2" "$3: refused with file and line"
}
bad_conf "s/        cpu: /        warp: /" "unknown input 'warp'" "an unknown input"
bad_conf "s|url: http://|url: ftp://|" "must start with http:// or https://" "a URL of another scheme"
bad_conf "s/      timeout: 0.5/      timeout: 5/" "timeout \(5 s\) must be below interval" \
	"a timeout past the interval"
cp "$T/good.conf" "$T/gslbd.conf"

CTL service add www.gslb.test --ttl 30 --answers 1 >/dev/null
CTL node add a --addr 192.0.2.1 >/dev/null
CTL node add b --addr 192.0.2.2 >/dev/null
for r in "--region cn-gz --isp ctcc" "--region cn-bj --isp cucc"; do
	# shellcheck disable=SC2086
	CTL weight set www.gslb.test $r a=50 b=50 >/dev/null
done
CTL service set www.gslb.test --steering dynamic --weights success=0.2,latency=0.8,cost=0 >/dev/null
gslbd_start

source_up() { [ "$(metric "$(scrape)" 'gslbd_steer_source_up{source="edge"}')" = "$1" ]; }
wait_until 30 source_up 1 && ok "the source is up once Prometheus answers" ||
	fail "source not up: $(scrape | grep steer_source); $(tail -5 "$T/gslbd.log")"
expect_has "$(cat "$T/gslbd.log")" "steer source edge: 3 queries to http://127.0.0.1:$PPORT every 1 s" \
	"the log names the source at start"

# b turns slow in cn-gz: its share there falls, cn-bj stays even.
exporter 20 200
expect_b_slow_in_gz 30 "pulled latency"
out=$(CTL steer show www.gslb.test)
expect_has "$out" "^  b .*inputs from prometheus:edge" "steer show: b's inputs came from the source"
out=$(CTL explain www.gslb.test --client 101.6.1.1)
expect_has "$out" "^  b +50 +99\.90 +200\.0 .*inputs from prometheus:edge" \
	"explain: b's pulled inputs (success x 100, latency) and their source"
[ "$(steer_field gz b inputs_from)" = prometheus:edge ] && ok "--json: inputs_from" ||
	fail "--json inputs_from: '$(steer_field gz b inputs_from)'"

# The health metric query filled node a's metrics record.
mdb_dump -p -s metrics "$T/db" > "$T/metrics.dump" 2>&1
expect_has "$(cat "$T/metrics.dump")" '"cpu":\{"from":"prometheus:edge","time":[0-9]+,"value":42(\.0)?\}' \
	"a health metric query stores the node's metric with its source"

# The ghost node's figure is refused, counted and logged.
m=$(scrape)
r=$(metric "$m" 'gslbd_steer_source_rejected_total{source="edge"}')
[ "${r%.*}" -ge 1 ] 2>/dev/null && ok "refused figures counted ($r)" || fail "rejected: '$r'"
s=$(metric "$m" 'gslbd_steer_source_samples_total{source="edge"}')
[ "${s%.*}" -ge 8 ] 2>/dev/null && ok "stored figures counted ($s)" || fail "samples: '$s'"
expect_has "$(cat "$T/gslbd.log")" "steer source edge: [0-9]+ figures refused, the first: .*node ghost does not exist" \
	"the log names the first refused figure"

# Prometheus goes away: the source is down, the inputs age, never zero.
stop_prom
wait_until 10 source_up 0 && ok "Prometheus stopped: the source is down in /metrics" ||
	fail "source still up: $(scrape | grep steer_source_up)"
expect_has "$(cat "$T/gslbd.log")" "warning: steer source edge: query [a-z]+: .*3 of 3 queries failed: their inputs age" \
	"the log says the source failed and what follows"
out=$(CTL explain www.gslb.test --client 101.6.1.1)
expect_has "$out" "^  b +50 +99\.90 +200\.0 " "the last pulled figures stay: nothing is zeroed"
back_to_operator() { [ -z "$(weight gz b)" ]; }
wait_until 30 back_to_operator && ok "stale after steer stale: the row is the operator's again" ||
	fail "row still steered: $(CTL steer show www.gslb.test)"

# Prometheus is back: so is the source.
start_prom
wait_until 30 source_up 1 && ok "Prometheus back: the source is up again" ||
	fail "source not up again"
expect_has "$(cat "$T/gslbd.log")" "notice: steer source edge: answering again" "the log says it answers again"

# A reload adds a source (one nothing answers) and keeps the first one's
# counters.
before=$(metric "$(scrape)" 'gslbd_steer_source_evaluations_total{source="edge"}')
printf '%s\n' "    - name: dead" "      url: http://127.0.0.1:$((PORT + 4))" \
	"      interval: 1" "      timeout: 0.5" "      queries:" "        latency: x" >> "$T/gslbd.conf"
reload_done
dead_down() { [ "$(metric "$(scrape)" 'gslbd_steer_source_up{source="dead"}')" = 0 ]; }
wait_until 10 dead_down && ok "reload: the new source is evaluated (down: nothing answers)" ||
	fail "no dead source after reload: $(scrape | grep steer_source_up)"
after=$(metric "$(scrape)" 'gslbd_steer_source_evaluations_total{source="edge"}')
[ "${after%.*}" -gt "${before%.*}" ] 2>/dev/null && source_up 1 &&
	ok "reload: the first source keeps its counters ($before, then $after) and stays up" ||
	fail "edge after reload: $before -> $after, up $(metric "$(scrape)" 'gslbd_steer_source_up{source="edge"}')"
finish
