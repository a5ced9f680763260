#!/bin/bash
# Pushed measurements are dated by this host's clock (S2-7, S3-9,
# S4-10): a sample dated more than steer clock-skew ahead, or older than
# the longest window, is refused with exit 1, naming its time and the
# limit, and a --file batch with such a line writes nothing.  So a
# feeder's wrong clock can no longer blind what reads the samples: after
# a push dated in 2037, a node pushing 90 % success and 900 ms is still
# taken out of its row by the SLA, and a release whose node pushes 50 %
# success still rolls back.  The clock-skew itself is allowed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/steer_lib.sh"
steer_setup

CTL service add www.gslb.test --ttl 30 --answers 1 >/dev/null
CTL service add rel.gslb.test --ttl 30 >/dev/null
CTL node add a --addr 192.0.2.1 >/dev/null
CTL node add b --addr 192.0.2.2 >/dev/null
CTL node add new --addr 192.0.2.9 >/dev/null
for r in "--region cn-gz --isp ctcc" "--region cn-bj --isp cucc"; do
	# shellcheck disable=SC2086
	CTL weight set www.gslb.test $r a=50 b=50 >/dev/null
done
CTL weight set rel.gslb.test a=50 new=50 >/dev/null
CTL service set www.gslb.test --steering dynamic --weights success=0.5,latency=0.5,cost=0 >/dev/null
gslbd_start

# 1. The dates a push may have.
refused() { # message-regex args...
	local re=$1 out rc
	shift
	out=$(CTL metrics push "$@" 2>&1) && rc=0 || rc=$?
	if [ "$rc" = 1 ] && grep -Eq -- "$re" <<<"$out"; then ok "refused: $out"
	else fail "metrics push $*: status $rc, $out"; fi
}
refused "--at 2037-01-01T00:00:00Z \(2037-01-01T00:00:00Z\) is [0-9]+ s ahead .*clock-skew allows 60 s" \
	a --region cn-gz --isp ctcc --at 2037-01-01T00:00:00Z success=99.9 latency=20
refused "--at 1 \(1970-01-01T00:00:01Z\) is [0-9]+ s old: older than the 8 s" \
	a --region cn-gz --isp ctcc --at 1 success=99.9
refused "ahead .*clock-skew allows 60 s" --provider cdn-a --at 2037-01-01T00:00:00Z spent=5
now=$(date +%s)
out=$(CTL metrics push b --region cn-bj --isp cucc --at $((now + 30)) success=99.9 2>&1) &&
	ok "30 s ahead (within the skew): $out" || fail "30 s ahead refused: $out"
out=$(CTL metrics push b --region cn-bj --isp cucc --at $((now - 3)) success=99.9 2>&1) &&
	ok "3 s old: $out" || fail "3 s old refused: $out"

# 2. The node pushing 90 % and 900 ms after the push dated in 2037 (of
# node a, row cn-gz, above) leaves its row for the SLA.
for k in b:gz a:bj b:bj; do set_m $k "success=99.9 latency=20"; done
set_m a:gz "success=90 latency=900"
start_feeder
a_out() { [ "$(weight gz a)" = 0 ]; }
if wait_until 20 a_out; then ok "a (90 %, 900 ms) is out of cn-gz for the SLA"
else fail "a keeps $(weight gz a) bp of cn-gz: $(CTL steer show www.gslb.test)"; fi
s=$(share gz 192.0.2.1)
[ "$s" = 0 ] && ok "dig: a answers no cn-gz client" || fail "dig: a answers $s per mille of cn-gz"
stop_feeder

# 3. A release guarded on success rolls back on the node's real 50 %
# after a push of 99.9 dated in 2037.
state() { CTL --json release show rel.gslb.test | python3 -c "
import json, sys; print(json.load(sys.stdin)['release']['state'])"; }
CTL release start rel.gslb.test --node new --steps 50,100 --every 20s \
	--guard 'success>=99' >/dev/null || fail "release start failed"
refused "ahead" new --at 2037-01-01T00:00:00Z success=99.9
pushes_50() { CTL metrics push new success=50 >/dev/null; [ "$(state)" = rolled-back ]; }
if wait_until 10 pushes_50; then ok "rolled back on success 50"
else fail "no rollback: $(CTL release show rel.gslb.test)"; fi
expect_has "$(cat "$T/gslbd.log")" "release rel\.gslb\.test: node new rolled back .*guard success>=99 broke \(success 50\)" \
	"the log names the figure that broke the guard"

# 4. A batch with one line dated in the future writes nothing, and names
# the line.
CTL release start rel.gslb.test --node new --steps 50,100 --every 1m \
	--guard 'success>=99' >/dev/null || fail "release start failed"
since=$(date +%s)
later() { [ "$(date +%s)" -gt "$since" ]; }
wait_until 3 later
printf '%s\n' "new success=99.9" "# a comment" "new --at 2037-01-01T00:00:00Z success=99.9" \
	"b success=99" > "$T/batch.txt"
out=$(CTL metrics push --file "$T/batch.txt" 2>&1) && rc=0 || rc=$?
[ "$rc" = 1 ] && expect_has "$out" "batch\.txt:3: .*2037-01-01T00:00:00Z.* ahead" \
	"the batch is refused at its line 3 ($out)" || fail "batch: status $rc, $out"
expect_has "$(CTL release show rel.gslb.test)" "success>=99: no input since the step began" \
	"nothing of the batch was written (its line 1 neither)"

finish
