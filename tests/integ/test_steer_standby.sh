#!/bin/bash
# A node that the steering engine takes out for the SLA (S3-5) raises the
# cold standby of its row, the same standby that health promotion and
# an operator's drain raise; when the node is back within the SLA for
# restore-after evaluations, the standby goes back to the pool.  Other
# rows of the node are not touched.  Time compressed: evaluations every
# second, probes every second.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/steer_lib.sh"

steer_setup "health:
  interval: 1
  timeout: 0.9
  settle: 2" "windows: [2, 4]
max-step: 50"
HP1=$((PORT + 3000)); HP2=$((PORT + 3001))
for p in $HP1 $HP2; do start_httpd "$p"; done

CTL service add www.gslb.test --ttl 30 --answers 1 >/dev/null
CTL node add a --addr 192.0.2.1 --probe "tcp://127.0.0.1:$HP1" >/dev/null
CTL node add b --addr 192.0.2.2 --probe "tcp://127.0.0.1:$HP1" >/dev/null
CTL node add s --addr 192.0.2.9 --pool standby --probe "tcp://127.0.0.1:$HP2" >/dev/null
CTL weight set www.gslb.test --region cn-bj --isp cucc a=50 b=50 s=50 >/dev/null
CTL weight set www.gslb.test --region cn-gz --isp ctcc a=50 b=50 >/dev/null
CTL service set www.gslb.test --steering dynamic --weights success=0.3,latency=0.7,cost=0 >/dev/null
gslbd_start
for k in a:gz b:gz a:bj b:bj; do set_m $k "success=99.9 latency=20"; done
start_feeder
wait_up 3 100 || fail "nodes not up: $(CTL status)"
evaluated() { [ -n "$(steer_field bj a share)" ]; }
wait_until 15 evaluated || fail "cn-bj not evaluated: $(CTL steer show www.gslb.test)"
s=$(share bj 192.0.2.9)
[ "$s" = 0 ] && ok "the standby waits while every primary is within the SLA" ||
	fail "the standby answers $s per mille before any failure"

# b falls below the SLA in cn-bj only: out at once, s takes over there.
set_m b:bj "success=90 latency=20"
raised() { [ "$(share bj 192.0.2.9)" -gt 100 ]; }
if wait_until 20 raised; then ok "b below the SLA in cn-bj: standby s answers ($(share bj 192.0.2.9) per mille)"
else fail "standby not raised: $(CTL steer show www.gslb.test) $(CTL status)"; fi
s=$(share bj 192.0.2.2)
[ "$s" = 0 ] && ok "b no longer answers in cn-bj" || fail "b still answers $s per mille in cn-bj"
s=$(share gz 192.0.2.2)
within "$s" 400 600 && ok "cn-gz untouched: b answers $s per mille" || fail "cn-gz: b answers $s per mille"
s=$(share gz 192.0.2.9)
[ "$s" = 0 ] && ok "cn-gz has no standby answer" || fail "s answers $s per mille in cn-gz"
expect_has "$(CTL log)" "health: .*standby s promoted for b \(below the SLA\)" \
	"log: the promotion, audited with its reason"

# b is back within the SLA: after restore-after evaluations it serves
# again and s goes back to the pool.
set_m b:bj "success=99.9 latency=20"
lowered() { [ "$(share bj 192.0.2.9)" = 0 ] && [ "$(share bj 192.0.2.2)" -gt 100 ]; }
if wait_until 25 lowered; then ok "b back: s back to standby, b answers again"
else fail "standby not released: $(CTL steer show www.gslb.test) $(CTL status)"; fi
expect_has "$(CTL log)" "health: .*standby s released \(b serves again\)" "log: the release"
n=$(CTL log | grep -c "standby s promoted")
[ "$n" = 1 ] && ok "one promotion for one SLA failure" || fail "$n promotions"

# A shadow service acts on nothing: no standby is raised for it.
CTL service set www.gslb.test --steering shadow >/dev/null
set_m b:bj "success=90 latency=20"
# The engine still takes b out for the SLA (steer show: weight 0)...
zero_b() { [ "$(weight bj b)" = 0 ]; }
wait_until 20 zero_b || fail "shadow: b not out for the SLA: $(CTL steer show www.gslb.test)"
# ...and time passes to show that no standby is raised for it: three
# evaluation and probe intervals (1 s).
sleep 3
n=$(CTL log | grep -c "standby s promoted")
[ "$n" = 1 ] && ok "shadow: no standby raised" || fail "shadow raised the standby ($n promotions)"

stop_feeder
finish
