#!/bin/bash
# Score weights per service (S2-2) under the real daemon: a node whose
# network scores 0.55 and everything else perfectly is up at 86.5 under
# the global weights (30 30 25 15); once its service weighs the network
# as video does (60 15 15 10) it scores 73, past the grade's margin,
# and is derated, and back at the defaults it is up again.  status says which weights score it; bad weights are
# refused with the table unchanged.
. "$(dirname "$0")/lib.sh"
gslb_zone
write_conf gslb.test z.zone "health:
  interval: 1
  timeout: 0.9
  profile: four
  freshness: 30
  settle: 1"
trap 'kill $PUSHER 2>/dev/null; cleanup' EXIT

CTL service add www.gslb.test --ttl 60 --short-ttl 5 --answers 1 >/dev/null
CTL node add n1 --addr 192.0.2.1 >/dev/null
CTL node add n2 --addr 192.0.2.2 >/dev/null
CTL weight set www.gslb.test n1=10 n2=10 >/dev/null
gslbd_start

# n1: RTT 101 ms (network 0.55), no 5xx, half its bandwidth, no restart;
# n2 perfect.
( while :; do
	CTL metrics push n1 rtt_ms=101 http_5xx=0 bandwidth=50 restarts=0 >/dev/null
	CTL metrics push n2 rtt_ms=10 http_5xx=0 bandwidth=50 restarts=0 >/dev/null
	sleep 0.5
  done ) &
PUSHER=$!

row() { CTL status | awk -v n="$1" '$1 == n'; }
wait_row() { # node regex seconds
	for _ in $(tseq "$3"); do row "$1" | grep -Eq "$2" && return 0; sleep 0.1; done
	return 1
}
wait_row n1 "^n1 +up +auto +primary +8[67]" 30 && ok "global weights: n1 up at 86.5" ||
	fail "n1 with the global weights: $(row n1)"

CTL service set www.gslb.test --score-weights network=60,service=15,load=15,stability=10 >/dev/null
expect_has "$(CTL service show www.gslb.test)" "network=60,service=15,load=15,stability=10" \
	"service show: the service's weights"
wait_row n1 "^n1 +derated +auto +primary +7[23]" 100 && ok "video weights: n1 derated at 73" ||
	fail "n1 with the service's weights: $(row n1)"
expect_has "$(row n1)" " service weights " "status: n1 scored under the service's weights"
wait_row n2 "^n2 +up +auto +primary +(9[0-9]|100)" 5 && ok "n2 stays up under the same weights" ||
	fail "n2: $(row n2)"

CTL service set www.gslb.test --score-weights default >/dev/null
wait_row n1 "^n1 +up +auto +primary +8[67]" 100 && ok "back to the global weights: n1 up at 86.5" ||
	fail "n1 back at the defaults: $(row n1)"

out=$(CTL service set www.gslb.test --score-weights network=45,service=20,load=20,jitter=15 2>&1)
[ $? -ne 0 ] && expect_has "$out" "--score-weights .*name each dimension of one profile" \
	"mixed profiles refused" || fail "mixed profiles accepted: $out"
out=$(CTL service set www.gslb.test --score-weights network=145,service=20,load=20,stability=15 2>&1)
[ $? -ne 0 ] && ok "a weight over 100 refused" || fail "a weight over 100 accepted: $out"
expect_has "$(CTL service show www.gslb.test)" "score_weights +default|default" "the table unchanged"
finish
