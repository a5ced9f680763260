#!/bin/bash
# The probe budget (S1-3) under the real daemon: a node probed over HTTP
# every second costs some hundred bytes a second, well within the
# default budget; a node budget below that warns in the log, shows in
# status and /metrics, and so does a service's budget for the nodes of
# its rows; back at the default it says the node is within again.
# The node's probed and pushed latency land in the histogram of its
# region and ISP (S4-9), and promtool accepts the exposition.
. "$(dirname "$0")/lib.sh"
SPORT=$((PORT + 1))
HP1=$((PORT + 3000))
gslb_zone
write_conf gslb.test z.zone "stats:
  listen: [ \"127.0.0.1@$SPORT\" ]
health:
  interval: 1
  timeout: 0.9
  settle: 1"
trap 'stop_httpds; cleanup' EXIT
start_httpd "$HP1"

CTL service add www.gslb.test --ttl 60 --short-ttl 5 >/dev/null
CTL node add h1 --addr 192.0.2.1 --region cn-bj --isp ctcc \
	--probe "http://127.0.0.1:$HP1/health" >/dev/null 2>&1
CTL weight set www.gslb.test h1=10 >/dev/null
gslbd_start

metrics() { curl -s --max-time 5 "http://127.0.0.1:$SPORT/metrics"; }
metric() { metrics | awk -v m="$1{node=\"h1\"}" '$1 == m { print $2 }'; }
wait_metric() { # name awk-condition seconds
	for _ in $(tseq "$3"); do
		v=$(metric "$1")
		[ -n "$v" ] && awk -v v="$v" "BEGIN { exit !(v $2) }" && return 0
		sleep 0.1
	done
	return 1
}
# A request, the answer's headers and body and a connection: between
# 400 and 2000 bytes a second at one probe a second.
if wait_metric gslbd_health_probe_bytes_per_second "> 400 && v < 2000" 50; then
	ok "probe traffic measured: $(metric gslbd_health_probe_bytes_per_second) bytes/s"
else fail "probe traffic: $(metrics | grep probe_bytes)"; fi
[ "$(metric gslbd_health_probe_budget_bytes_per_second)" = 6250 ] &&
	ok "the default budget: 6250 bytes/s" ||
	fail "budget: $(metric gslbd_health_probe_budget_bytes_per_second)"
[ "$(metric gslbd_health_probe_over_budget)" = 0 ] && ok "within the default budget" ||
	fail "over the default budget"
# status reads the health thread's state as last written to the store
# (every few seconds): 20 s, scaled, for a busy machine.
wait_for() { wait_until 20 "$@"; }
in_status() { CTL status | grep -Eq "^ +probes [0-9]+ bytes/s, budget 6250 bytes/s$"; }
wait_for in_status && ok "status: the probes' traffic" || fail "status: $(CTL status)"

CTL node set h1 --probe-budget 200 >/dev/null
if wait_metric gslbd_health_probe_over_budget "== 1" 30; then ok "node budget 200: over"
else fail "node budget 200: not over ($(metric gslbd_health_probe_bytes_per_second))"; fi
expect_has "$(grep "node h1: its probes cost" "$T/gslbd.log")" \
	"node h1: its probes cost [0-9]+ bytes/s, over their budget of 200 bytes/s" "log: the warning"
over_status() { CTL status | grep -Eq "^ +probes [0-9]+ bytes/s, budget 200 bytes/s \[over budget\]$"; }
wait_for over_status && ok "status: over budget" || fail "status: $(CTL status)"
over_json() { CTL --json status | grep -q '"probe_over_budget": true'; }
wait_for over_json && ok "status --json: over budget" || fail "status --json: $(CTL --json status)"

# The node's own budget back to the default; its service's budget of 300
# applies to the nodes of its rows.
CTL node set h1 --probe-budget default >/dev/null
CTL service set www.gslb.test --probe-budget 300 >/dev/null
if wait_metric gslbd_health_probe_budget_bytes_per_second "== 300" 30; then
	ok "service budget 300 applies to h1"
else fail "service budget: $(metric gslbd_health_probe_budget_bytes_per_second)"; fi
[ "$(metric gslbd_health_probe_over_budget)" = 1 ] && ok "over the service's budget" ||
	fail "not over the service's budget"
CTL service set www.gslb.test --probe-budget default >/dev/null
if wait_metric gslbd_health_probe_over_budget "== 0" 30; then ok "default again: within"
else fail "still over with the default"; fi
expect_has "$(grep "node h1: its probes cost" "$T/gslbd.log")" \
	"within their budget of 6250 bytes/s again" "log: back within"

# S4-9: latency by area.
CTL metrics push h1 rtt_ms=30 >/dev/null
area='source="pushed",region="cn-bj",isp="ctcc"'
pushed() { metrics | grep -Fxq "gslbd_area_latency_seconds_bucket{$area,le=\"0.05\"} 1"; }
wait_for pushed && ok "pushed latency of cn-bj/ctcc: 30 ms in the 50 ms bucket" ||
	fail "pushed latency: $(metrics | grep 'area_latency.*pushed' | head -3)"
metrics | grep -Fxq "gslbd_area_latency_seconds_bucket{$area,le=\"0.02\"} 0" &&
	ok "and not in the 20 ms one" || fail "pushed latency below its bucket"
n=$(metrics | awk '$1 == "gslbd_area_latency_seconds_count{source=\"probed\",region=\"cn-bj\",isp=\"ctcc\"}" { print $2 }')
[ "${n:-0}" -ge 3 ] && ok "probed latency of cn-bj/ctcc: $n probes" || fail "probed latency count: '$n'"
out=$(metrics | promtool check metrics 2>&1) && ok "promtool check metrics accepts the exposition" ||
	fail "promtool check metrics: $out"
out=$(CTL node set h1 --probe-budget 0 2>&1)
[ $? -ne 0 ] && expect_has "$out" "--probe-budget 0: give bytes per second" "a budget of 0 refused" ||
	fail "a budget of 0 accepted"
finish
