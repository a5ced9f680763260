#!/bin/bash
# The statistics endpoint against real clients: /metrics counts what dig
# sent, promtool accepts it, /healthz answers, the allow list and wrong
# requests are refused, and a real Prometheus server scrapes it.
. "$(dirname "$0")/lib.sh"
SPORT=$((PORT + 1))
PPORT=$((PORT + 2))
gslb_zone
write_conf gslb.test z.zone "stats:
  listen: [ \"127.0.0.1@$SPORT\", \"::1@$SPORT\" ]
  allow: [ \"127.0.0.0/8\", \"::1\" ]"
CTL service add www.gslb.test >/dev/null
CTL node add n1 --addr 192.0.2.1 >/dev/null
CTL node add n2 --addr 192.0.2.2 >/dev/null
CTL weight set www.gslb.test n1=1 n2=1 >/dev/null
gslbd_start

http() { # url -> "STATUS\nBODY"
	python3 - "$1" <<'EOP'
import sys, urllib.request, urllib.error
try:
    r = urllib.request.urlopen(sys.argv[1], timeout=5)
    print(r.status); print(r.headers.get("Content-Type")); sys.stdout.write(r.read().decode())
except urllib.error.HTTPError as e:
    print(e.code); print(e.headers.get("Content-Type")); sys.stdout.write(e.read().decode())
except Exception as e:
    print("ERR"); print(type(e).__name__)
EOP
}
metric() { # text name-with-labels -> value
	awk -v m="$2" '$1 == m { print $2 }' <<<"$1"
}

for i in 1 2 3; do q ns1.gslb.test A >/dev/null; done
q nope.gslb.test A >/dev/null
q ns1.gslb.test A +tcp >/dev/null
q ns1.gslb.test MX >/dev/null
out=$(http "http://127.0.0.1:$SPORT/metrics")
expect_has "$(head -2 <<<"$out")" "^200$" "/metrics: 200"
expect_has "$(sed -n 2p <<<"$out")" "^text/plain; version=0\.0\.4" "/metrics: exposition content type"
m=$(tail -n +3 <<<"$out")
# gslbd_start's own readiness query (CH TXT id.server over UDP) counts too.
[ "$(metric "$m" 'gslbd_queries_total{transport="udp"}')" = 6 ] && ok "UDP queries counted (6)" ||
	fail "UDP queries: $(metric "$m" 'gslbd_queries_total{transport="udp"}')"
[ "$(metric "$m" 'gslbd_queries_total{transport="tcp"}')" = 1 ] && ok "TCP queries counted (1)" ||
	fail "TCP queries: $(metric "$m" 'gslbd_queries_total{transport="tcp"}')"
[ "$(metric "$m" 'gslbd_responses_total{transport="udp",rcode="NXDOMAIN"}')" = 1 ] && ok "NXDOMAIN counted" ||
	fail "NXDOMAIN: $(metric "$m" 'gslbd_responses_total{transport="udp",rcode="NXDOMAIN"}')"
[ "$(metric "$m" 'gslbd_nodata_responses_total{transport="udp"}')" = 1 ] && ok "NODATA counted" ||
	fail "NODATA: $(metric "$m" 'gslbd_nodata_responses_total{transport="udp"}')"
[ "$(metric "$m" 'gslbd_zone_serial{zone="gslb.test"}')" = 1 ] && ok "zone serial" || fail "zone serial"
[ "$(metric "$m" 'gslbd_up')" = 1 ] && ok "gslbd_up 1" || fail "gslbd_up"
# GSLB answers by service, row and node: 20 over UDP and TCP.
for i in $(seq 10); do q www.gslb.test A +short >/dev/null; q www.gslb.test A +short +tcp >/dev/null; done
m=$(http "http://127.0.0.1:$SPORT/metrics" | tail -n +3)
a1=$(metric "$m" 'gslbd_gslb_answers_total{service="www.gslb.test",level="*,*",region="*",isp="*",node="n1"}')
a2=$(metric "$m" 'gslbd_gslb_answers_total{service="www.gslb.test",level="*,*",region="*",isp="*",node="n2"}')
[ $(( ${a1:-0} + ${a2:-0} )) -eq 20 ] && ok "answers per node add up to the 20 GSLB queries ($a1 + $a2)" ||
	fail "answers per node: '$a1' + '$a2'"
[ "${a1:-0}" -gt 0 ] && [ "${a2:-0}" -gt 0 ] && ok "both nodes have a share" || fail "shares: $a1 / $a2"
g=$(( $(metric "$m" 'gslbd_gslb_responses_total{transport="udp"}') + $(metric "$m" 'gslbd_gslb_responses_total{transport="tcp"}') ))
[ "$g" -eq 20 ] && ok "GSLB responses counted (20)" || fail "GSLB responses: $g"
out=$(promtool check metrics <<<"$m" 2>&1) && ok "promtool check metrics: no problems" ||
	fail "promtool check metrics: $out"
# n1 and n2 have no probe and no pushed metric: "unmonitored" on the
# scrape, as gslbctl status says, never "unknown" (a node not judged yet).
unmon_published() {
	local s
	s=$(http "http://127.0.0.1:$SPORT/metrics" | tail -n +3)
	[ "$(metric "$s" 'gslbd_health_node_state{node="n1",state="unmonitored"}')" = 1 ]
}
wait_until 10 unmon_published && ok "n1's state gauge: unmonitored" ||
	fail "n1 state: $(http "http://127.0.0.1:$SPORT/metrics" | grep 'node_state{node="n1"')"
m=$(http "http://127.0.0.1:$SPORT/metrics" | tail -n +3)
[ "$(metric "$m" 'gslbd_health_node_state{node="n2",state="unmonitored"}')" = 1 ] &&
	[ "$(metric "$m" 'gslbd_health_node_state{node="n2",state="unknown"}')" = 0 ] &&
	[ "$(metric "$m" 'gslbd_health_node_state{node="n2",state="demoted"}')" = 0 ] &&
	ok "n2's state gauge: unmonitored, not unknown nor demoted" ||
	fail "n2 state: $(grep 'node_state{node="n2"' <<<"$m")"
expect_has "$(CTL status)" "^n2 +unmonitored" "gslbctl status says unmonitored too"
out=$(http "http://[::1]:$SPORT/healthz")
expect_has "$out" "^200" "/healthz over IPv6: 200"
expect_has "$out" "^ok$" "/healthz says ok"
expect_has "$(http "http://127.0.0.1:$SPORT/nope")" "^404" "an unknown path: 404"
out=$(python3 -c "
import urllib.request
r = urllib.request.Request('http://127.0.0.1:$SPORT/metrics', data=b'x', method='POST')
try: urllib.request.urlopen(r, timeout=5)
except urllib.error.HTTPError as e: print(e.code)")
[ "$out" = 405 ] && ok "POST: 405" || fail "POST: $out"

# A reload re-reads the zone: the serial follows.
sed -i 's/SOA ns1 host 1 /SOA ns1 host 7 /' "$T/z.zone"
kill -HUP "$PID"
serial_is() { m=$(http "http://127.0.0.1:$SPORT/metrics"); [ "$(metric "$m" 'gslbd_zone_serial{zone="gslb.test"}')" = "$1" ]; }
wait_until 5 serial_is 7
[ "$(metric "$m" 'gslbd_zone_serial{zone="gslb.test"}')" = 7 ] && ok "the serial follows a reload" ||
	fail "serial after reload: $(metric "$m" 'gslbd_zone_serial{zone="gslb.test"}')"
[ "$(metric "$m" 'gslbd_snapshot_publications_total')" = 2 ] && ok "publications: start and reload" ||
	fail "publications: $(metric "$m" 'gslbd_snapshot_publications_total')"

# The allow list: a client outside it gets no answer at all.
gslbd_stop
write_conf gslb.test z.zone "stats:
  listen: [ \"127.0.0.1@$SPORT\" ]
  allow: [ \"192.0.2.0/24\" ]"
gslbd_start
expect_has "$(http "http://127.0.0.1:$SPORT/metrics")" "^ERR" "outside the allow list: refused"
gslbd_stop

# A real Prometheus server scrapes it.
write_conf gslb.test z.zone "stats:
  listen: [ \"127.0.0.1@$SPORT\" ]"
gslbd_start
cat > "$T/prometheus.yml" <<EOP
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: gslbd
    static_configs:
      - targets: [ "127.0.0.1:$SPORT" ]
EOP
prometheus --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/prom" \
	--web.listen-address="127.0.0.1:$PPORT" >"$T/prometheus.log" 2>&1 &
PROM=$!
trap 'kill $PROM 2>/dev/null; cleanup' EXIT
for i in 1 2 3; do q ns1.gslb.test A >/dev/null; done
got=
for _ in $(tseq 60); do
	got=$(http "http://127.0.0.1:$PPORT/api/v1/query?query=sum(gslbd_queries_total)" | tail -n +3)
	grep -q '"value":\[[0-9.]*,"[1-9]' <<<"$got" && break
	sleep 0.5
done
expect_has "$got" '"status":"success"' "Prometheus answers a query over gslbd's metrics"
expect_has "$got" '"value":\[[0-9.]*,"[1-9][0-9]*"\]' "Prometheus scraped the query counters"
got=$(http "http://127.0.0.1:$PPORT/api/v1/query?query=up{job=\"gslbd\"}" | tail -n +3)
expect_has "$got" '"value":\[[0-9.]*,"1"\]' "the scrape target is up"
kill "$PROM"; wait "$PROM" 2>/dev/null
finish
