#!/bin/bash
# The Prometheus rules' unit tests: promtool accepts the rules, and every
# case of contrib/prometheus/gslbd-rules.test.yml passes; every recording
# rule and every alert has a case there; and the cases bite: the
# node-down alerts written as they once were (every node not up or
# derated counted as down) fail on unmonitored and fresh nodes.
. "$(dirname "$0")/lib.sh"
DIR="$ROOT/contrib/prometheus"
RULES="$DIR/gslbd-rules.yml"
TESTS="$DIR/gslbd-rules.test.yml"

out=$(promtool check rules "$RULES" 2>&1) && ok "promtool check rules accepts the rules" ||
	fail "promtool check rules: $out"
out=$(cd "$DIR" && promtool test rules "$(basename "$TESTS")" 2>&1) &&
	ok "promtool test rules: every case passes" || fail "promtool test rules: $out"

# Every rule has its case: an alert in an alert_rule_test, a recording
# rule as the expression of a promql_expr_test.
missing=$(python3 - "$RULES" "$TESTS" <<'EOP'
import sys, yaml
rules = yaml.safe_load(open(sys.argv[1]))
tests = yaml.safe_load(open(sys.argv[2]))
alerts, exprs = set(), set()
for t in tests["tests"]:
    for a in t.get("alert_rule_test", []):
        alerts.add(a["alertname"])
    for e in t.get("promql_expr_test", []):
        exprs.add(e["expr"].split("{")[0].strip())
for g in rules["groups"]:
    for r in g["rules"]:
        if "alert" in r and r["alert"] not in alerts:
            print("alert", r["alert"])
        if "record" in r and r["record"] not in exprs:
            print("record", r["record"])
EOP
)
[ -z "$missing" ] && ok "every rule has a unit test" || fail "rules without a test: $missing"

# The cases must fail a rule that pages for nothing: GslbdAllNodesDown as
# it was (no node up or derated, whatever the others are).
mkdir -p "$T/old"
cp "$TESTS" "$T/old/"
python3 - "$RULES" "$T/old/gslbd-rules.yml" <<'EOP'
import sys, yaml
rules = yaml.safe_load(open(sys.argv[1]))
for g in rules["groups"]:
    for r in g["rules"]:
        if r.get("alert") == "GslbdAllNodesDown":
            r["expr"] = ('sum by (instance) (gslbd_health_node_state{state=~"up|derated"}) == 0'
                         ' and sum by (instance) (gslbd_health_node_state) > 0')
yaml.safe_dump(rules, open(sys.argv[2], "w"), sort_keys=False)
EOP
out=$(cd "$T/old" && promtool test rules gslbd-rules.test.yml 2>&1)
rc=$?
[ $rc -ne 0 ] && ok "the old GslbdAllNodesDown fails the tests (exit $rc)" ||
	fail "the old GslbdAllNodesDown passes the tests"
for inst in cdn fresh mixed member; do
	grep -q "alertname=\"GslbdAllNodesDown\", instance=\"$inst\"" <<<"$out" &&
		ok "it fires, wrongly, on instance $inst" ||
		fail "no wrong alert on instance $inst: $out"
done
finish
