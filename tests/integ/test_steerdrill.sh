#!/bin/bash
# The multi-CDN steering drill (bench/steerdrill.py) in its short form,
# scenario 1 only, so that the drill keeps working as the engine and
# gslbctl change: provider B degrades in one region (S3-5: below the SLA
# twice, out at once) and at least 90 % of its share there moves within
# 10 simulated minutes, read from gslbd's answers and steer show, while
# the other regions stay put (S3-3, S3-8).
. "$(dirname "$0")/lib.sh"

out=$(timeout "$(tscale 120)" python3 "$ROOT/bench/steerdrill.py" --scenarios 1 --short \
	--port "$PORT" --build "$B" --out "$T/drill" 2>&1); rc=$?
echo "$out" > "$T/drill.txt"
[ $rc = 0 ] && ok "the short drill passes its targets" || fail "drill exit $rc: $out"
expect_has "$out" "^PASS S1 >= 90 % of B's ap-south share moved within 10 simulated min: " \
	"B's share moved off the degraded region"
expect_has "$out" "^PASS S1 other regions unchanged" "the other regions stay put"
expect_has "$out" "^PASS S1 replay: every automatic change recomputes identically: [1-9][0-9]* decisions" \
	"steer replay: the drill's decisions recompute identically (S3-7)"
expect_has "$out" "^SHOWN S4 static vs dynamic: scenario 1 .*failed [0-9]+ vs [0-9]+" \
	"static and dynamic side by side"
# The dynamic service fails fewer requests than its static twin on the
# same trace.
python3 - "$T/drill/results.json" <<'EOP' && ok "dynamic fails fewer requests than static" ||
import json, sys
s = json.load(open(sys.argv[1]))["side_by_side"][0]
print(s)
sys.exit(0 if s["failed_dyn"] < s["failed_static"] else 1)
EOP
	fail "dynamic does not fail fewer requests: $(cat "$T/drill/results.json")"
expect_has "$(cat "$T/drill/scenario1/audit.txt")" "gslbd:steer .*ap-south.*b .*-> 0\.00%.*SLA" \
	"the audit log names B's removal for the SLA"
finish
