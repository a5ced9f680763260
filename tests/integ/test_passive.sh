#!/bin/bash
# Nodes judged on pushed metrics alone (no probe): a failure rate above
# the service's limit for the window takes a node out of the answers and
# pushes below it bring it back after the confirmations (S1-2, S3-5,
# S0-8); a node without any input is shown unmonitored, and one whose
# pushes stopped is shown stale and keeps its last verdict (S2-7).
. "$(dirname "$0")/lib.sh"
gslb_zone
write_conf gslb.test z.zone "health:
  interval: 1
  timeout: 0.9
  freshness: 4
  failure-rate-window: 2
  settle: 30"
trap 'kill $PUSHER 2>/dev/null; cleanup' EXIT

# S3-5: this service's SLA is success >= 98 %, a failure rate of at most
# 2 % (health.failure-rate stays at its default 5 %).
CTL service add www.gslb.test --ttl 60 --short-ttl 5 --answers 3 \
	--max-failure-rate 2 >/dev/null
CTL node add m1 --addr 192.0.2.1 >/dev/null
CTL node add m2 --addr 192.0.2.2 >/dev/null
CTL node add m3 --addr 192.0.2.3 >/dev/null
CTL weight set www.gslb.test m1=10 m2=10 m3=10 >/dev/null
gslbd_start

answers() { q www.gslb.test A +short | sort | tr '\n' ' ' | sed 's/ $//'; }
state_of() { CTL status | awk -v n="$1" '$1 == n { print $2 }'; }
wait_state() { # node state tenths
	for _ in $(tseq "$3"); do [ "$(state_of "$1")" = "$2" ] && return 0; sleep 0.1; done
	return 1
}
wait_answers() { # want tenths
	for _ in $(tseq "$2"); do [ "$(answers)" = "$1" ] && return 0; sleep 0.1; done
	return 1
}

# S2-7: no probe, no metrics: health has no say, and status says so.
wait_state m3 unmonitored 30 && ok "a node without probe or metrics is unmonitored" \
	|| fail "m3 shown as '$(state_of m3)', not unmonitored"
out=$(CTL explain www.gslb.test --client 203.0.113.1)
expect_has "$out" "m3 .*unmonitored" "explain: m3 unmonitored"

# The operators' feed: a push of each node's failure rate every 0.5 s,
# the rate read from $T/frNODE ("stop": no push).
echo 0 > "$T/frm1"; echo 0 > "$T/frm2"; echo stop > "$T/frm3"
( while :; do
	for n in m1 m2 m3; do
		v=$(cat "$T/fr$n")
		[ "$v" = stop ] || CTL metrics push "$n" failure_rate="$v" >/dev/null
	done
	echo >> "$T/rounds"
	sleep 0.5
  done ) &
PUSHER=$!
wait_state m1 up 50 && ok "pushes alone give m1 a verdict: up" || fail "m1 is '$(state_of m1)'"
all="192.0.2.1 192.0.2.2 192.0.2.3"
[ "$(answers)" = "$all" ] && ok "all three answer" || fail "answers: $(answers)"

# 3 %: below the 5 % default, above the service's 2 %.  Out after the
# 2 s window and two rounds (S1-2, S0-8).
echo 3 > "$T/frm1"
wait_answers "192.0.2.2 192.0.2.3" 80 && ok "m1 out of the answers: failure rate above the service's limit" \
	|| fail "m1 still answered: $(answers)"
expect_has "$(CTL status)" "^m1 +demoted .*failure rate 3.0% above 2%" "status: m1 demoted, reason given"
t=$(q www.gslb.test A +noall +answer | awk 'NR==1 {print $2}')
[ "$t" = 5 ] && ok "short TTL while the change settles" || fail "TTL $t, expected 5"

# Back after three pushes below the limit, not after two.  The feed of
# m1 stops (two rounds of the feeder: none of its pushes is under way),
# two good pushes follow in two different seconds (the health thread
# tells pushes apart by their time, in seconds), then time passes to
# show that they do not restore m1: a second, four of the thread's reads
# of the store and a health round.
rounds() { wc -l < "$T/rounds"; }
echo stop > "$T/frm1"
r=$(( $(rounds) + 2 ))
fed() { [ "$(rounds)" -ge "$r" ]; }
wait_until 10 fed || fail "the feeder stopped"
next_second() { local s0; s0=$(date +%s); while [ "$(date +%s)" = "$s0" ]; do sleep 0.05; done; }
next_second
CTL metrics push m1 failure_rate=0 >/dev/null
next_second
CTL metrics push m1 failure_rate=0 >/dev/null
sleep 1
[ "$(answers)" = "192.0.2.2 192.0.2.3" ] && ok "not back after two good pushes" || fail "back too early"
echo 0 > "$T/frm1"
wait_answers "$all" 60 && ok "m1 back after the confirmations" || fail "m1 not back: $(answers)"
expect_has "$(CTL log)" "node m1 up: restored: 3 consecutive pushes" "restore audited"

# S2-7: m2's pushes stop.  After health.freshness (4 s) it is stale and
# keeps its last verdict (health.stale: keep): still in the answers.
echo stop > "$T/frm2"
wait_state m2 stale 80 && ok "m2 shown stale once its pushes stopped" || fail "m2 is '$(state_of m2)'"
[ "$(answers)" = "$all" ] && ok "stale m2 keeps its verdict (keep)" || fail "answers: $(answers)"
out=$(CTL explain www.gslb.test --client 203.0.113.1)
expect_has "$out" "m2 .*stale" "explain: m2 stale"
expect_has "$(CTL log)" "node m2 stale: stale: no input fresher than 4s" "stale audited"
# S2-7: judged on pushes alone under health.stale keep: said once a node.
expect_has "$(cat "$T/gslbd.log")" "warning: node m2 has no probe: its verdict rests on pushed metrics alone.*health.stale keep" \
	"the log warns that a push-only node keeps its verdict when stale"
[ "$(grep -c 'node m2 has no probe' "$T/gslbd.log")" = 1 ] && ok "the warning comes once" ||
	fail "warned $(grep -c 'node m2 has no probe' "$T/gslbd.log") times"
! grep -q 'node m3 has no probe' "$T/gslbd.log" && ok "no warning for an unmonitored node" ||
	fail "m3 (unmonitored) warned about"
echo 0 > "$T/frm2"
wait_state m2 up 40 && ok "m2 up again with fresh pushes" || fail "m2 is '$(state_of m2)'"
finish
