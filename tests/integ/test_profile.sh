#!/bin/bash
# Score profiles per service (S0-6, S2-2): a node is scored under the
# profile of every service that uses it and the lowest score decides.
# Pushed load and service metrics (S2-2) count only under "four", so the
# same bad metrics demote a node of a four-profile service and leave a
# node of a probe-profile service up.
. "$(dirname "$0")/lib.sh"
gslb_zone
write_conf gslb.test z.zone "health:
  interval: 1
  timeout: 0.9
  fast-interval: 0.5
  shadow-profile: four
  settle: 30
  flap-window: 0"
HP=$((PORT + 3000))
trap 'stop_httpds; cleanup' EXIT
start_httpd "$HP"

probe="http://127.0.0.1:$HP/health"
CTL service add a.gslb.test --answers 3 >/dev/null
CTL service add b.gslb.test --answers 3 --profile four >/dev/null
for n in p1:1 p2:2 p3:3 qa:4 qb:5; do
	CTL node add "${n%:*}" --addr "192.0.2.${n#*:}" --probe "$probe" >/dev/null
done
CTL weight set a.gslb.test p1=10 p3=10 qa=10 >/dev/null
CTL weight set b.gslb.test p2=10 p3=10 qb=10 >/dev/null
# m1 is probed only every 30 s: pushed metrics must bring it forward.
CTL service add c.gslb.test --answers 2 >/dev/null
CTL node add m1 --addr 192.0.2.6 --probe "$probe interval=30" >/dev/null
CTL weight set c.gslb.test m1=10 qa=10 >/dev/null
expect_has "$(CTL service list)" "^b\.gslb\.test .* four$" "service list shows the profile"
expect_has "$(CTL service list)" "^a\.gslb\.test .* default$" "a service on the default profile"

answers() { q "$1" A +short | sort | tr '\n' ' ' | sed 's/ $//'; }
# SECONDS is about the time the rule needs; the test waits three times
# that (scaled), so that a loaded machine does not fail it.
wait_for() { # seconds name "expected"
	for _ in $(tseq $(( $1 * 30 ))); do
		[ "$(answers "$2")" = "$3" ] && return 0
		sleep 0.1
	done
	echo "last answer for $2: $(answers "$2")"
	return 1
}
gslbd_start
wait_up 6 || fail "not all six nodes up: $(CTL status)"
out=$(CTL status)
expect_has "$out" "^p1 +up .* probe " "p1 (only in a) is scored under the probe profile"
expect_has "$out" "^p2 +up .* four " "p2 (only in b) is scored under the four profile"
expect_has "$out" "^p3 +up .* probe\+four " "p3 (in a and b) is scored under both"

# Load, service and stability metrics that only S2-2 reads: bandwidth and
# CPU saturated, 5xx and origin failures, restarts.
bad="bandwidth=100 cpu=100 http_5xx=90 hit_ratio=5 origin_success=10 restarts=10 volatility=1"
for n in p1 p2 p3; do CTL metrics push $n $bad >/dev/null; done
wait_for 8 b.gslb.test "192.0.2.5" && ok "four profile: p2 and p3 out of b's answers" ||
	fail "four profile did not demote"
wait_for 3 a.gslb.test "192.0.2.1 192.0.2.4" && ok "p3 out of a too: the lower score decides" ||
	fail "shared node"
out=$(CTL status)
expect_has "$out" "^p1 +up .* probe " "p1 stays up: the probe profile ignores load metrics"
# S2-9: the shadow profile (four) scores p1 beside the live one and says
# that it disagrees, without moving anything (at p1's next evaluation:
# give a loaded machine a few seconds).
for _ in $(tseq 50); do
	grep -q "shadow profile four: node p1 degraded" "$T/gslbd.log" && break
	sleep 0.1
done
expect_has "$(cat "$T/gslbd.log")" "warning: shadow profile four: node p1 degraded \(score [0-9]+\), live profile probe: good \(score [0-9]+\): the profiles disagree" \
	"the shadow profile's disagreement is logged"
expect_has "$(CTL --json status a.gslb.test)" '"shadow_score"' "status shows the shadow score"
expect_has "$out" "^p2 +demoted .* four .*score [0-9]+ < 60" "p2 demoted by its score"
expect_has "$out" "^p3 +demoted .* probe\+four " "p3 demoted"

# Back to the default profile: the probe profile finds the nodes good and
# they return after the confirmations (S0-8).
CTL service set b.gslb.test --profile default >/dev/null
expect_has "$(CTL service show b.gslb.test)" '^profile +default$' "service show: default profile"
expect_not "$(CTL export | python3 -c 'import json,sys; print([s for s in json.load(sys.stdin)["services"] if s["name"] == "b.gslb.test"])')" \
	"'profile'" "default profile: no profile key stored"
wait_for 10 b.gslb.test "192.0.2.2 192.0.2.3 192.0.2.5" && ok "b back on the probe profile: nodes restored" ||
	fail "restore after profile change"
wait_for 3 a.gslb.test "192.0.2.1 192.0.2.3 192.0.2.4" && ok "p3 back in a" || fail "p3 not back in a"

# Passive metrics that put a slowly probed node's score below 60 make it a
# suspect at once (S0-7, S2-8): probed now, then at the fast interval, so
# the two confirming rounds (S0-8) take about a second, not 2 x 30 s.
# The wait is scaled; the bound of 15 s, half the probe interval, is
# not, so that the regular probes can never pass it.
t0=$(date +%s%N)
CTL metrics push m1 loss=8 >/dev/null
if wait_for 2 c.gslb.test "192.0.2.4"; then
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	[ "$ms" -lt 15000 ] && ok "pushed loss: m1 out in $ms ms" ||
		fail "pushed loss: m1 out only after $ms ms, as at the probe interval"
else
	fail "pushed loss did not demote a slowly probed node"
fi
expect_has "$(cat "$T/gslbd.log")" "node m1: pushed metrics put the score at [0-9]+: probing now" "the early probe is logged"
CTL metrics push m1 loss=0 >/dev/null
wait_for 6 c.gslb.test "192.0.2.4 192.0.2.6" && ok "m1 back once the pushed loss is gone" || fail "m1 not back"

# Bad profiles are rejected and change nothing.
before=$(CTL export)
out=$(CTL service set b.gslb.test --profile fancy 2>&1) && fail "bad profile accepted" ||
	expect_has "$out" "--profile fancy: not a valid choice" "bad --profile rejected"
# The exported table with service number $1's profile set to $2.
with_profile() {
	CTL export | python3 -c "import json,sys; d=json.load(sys.stdin); d['services'][$1]['profile']='$2'; json.dump(d, sys.stdout)"
}
with_profile 0 fancy > "$T/bad.json"
out=$(CTL apply "$T/bad.json" 2>&1) && fail "apply with a bad profile accepted" ||
	expect_has "$out" "apply: service a\.gslb\.test: profile must be \"probe\" or \"four\"" "apply: bad profile rejected, named"
[ "$(CTL export)" = "$before" ] && ok "the store is unchanged" || fail "store changed"
with_profile 1 four > "$T/good.json"
CTL apply "$T/good.json" >/dev/null && expect_has "$(CTL service list)" "^b\.gslb\.test .* four$" "apply carries the profile" ||
	fail "apply with profile four"
gslbd_stop
finish
