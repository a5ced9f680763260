#!/bin/bash
# The automatic changes in the audit log (`log --auto`: the steering
# engine's shares and the health thread's decisions, with their inputs),
# and the rollback of an automatic change, which pins the row's previous
# weights until `steer unpin`.  Time compressed: evaluations every
# second.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/steer_lib.sh"

steer_setup "health:
  interval: 1
  timeout: 0.9"
HP1=$((PORT + 3000))
start_httpd "$HP1"

CTL service add www.gslb.test --ttl 30 --answers 1 >/dev/null
CTL node add a --addr 192.0.2.1 >/dev/null
CTL node add b --addr 192.0.2.2 >/dev/null
# x is probed, in no steered row: its health decisions are automatic too.
CTL node add x --addr 192.0.2.7 --probe "tcp://127.0.0.1:$HP1" >/dev/null
# Uneven operator weights in cn-gz, so that a row pinned at them is
# told from an even split.
CTL weight set www.gslb.test --region cn-gz --isp ctcc a=60 b=40 >/dev/null
CTL weight set www.gslb.test --region cn-bj --isp cucc a=50 b=50 >/dev/null
CTL weight set www.gslb.test x=10 >/dev/null
CTL service set www.gslb.test --steering dynamic --weights success=0.3,latency=0.7,cost=0 >/dev/null
gslbd_start
for k in a:gz b:gz a:bj b:bj; do set_m $k "success=99.9 latency=20"; done
start_feeder
wait_up 1 100 || fail "x not up: $(CTL status)"

# b is slow in cn-gz: the engine moves the row; x goes down.
set_m b:gz "success=99.9 latency=200"
echo down > "$T/mode$HP1"
low_b() { w=$(weight gz b); [ -n "$w" ] && [ "$w" -le 3000 ]; }
wait_until 20 low_b || fail "b did not lose share: $(CTL steer show www.gslb.test)"
demoted() { CTL log --auto | grep -q "health: .*x demoted"; }
wait_until 20 demoted || fail "x not demoted: $(CTL status)"

# 1. log --auto: only the daemon's own changes, with their inputs.  b's
# latency is the mean of its windows' medians (S3-9): a change that
# comes while the longer window still holds mostly 20 ms samples, as on
# a slow machine, says 110 ms.
out=$(CTL log --auto)
expect_has "$out" "gslbd:steer +steer www\.gslb\.test\|cn-gz\|ctcc: .*b .*latency ([3-9][0-9]|1[0-9][0-9]|200) ms" \
	"log --auto: the engine's change with its inputs"
expect_has "$out" " health +health: .*x demoted" "log --auto: the health decision"
expect_not "$out" "gslbctl:|api:" "log --auto: no operator change"
expect_has "$(CTL log)" "gslbctl:.*service set www\.gslb\.test" "log: the operator's changes are still there"
CTL --json log --auto > "$T/auto.json"
py "
import json
recs = json.load(open('$T/auto.json'))['records']
assert recs and all(r['actor'] in ('health', 'gslbd:steer') for r in recs), 'actors'
assert all('changes' not in r and 'inputs' in r for r in recs), 'inputs, not changes'
steer = [i for r in recs for i in r['inputs'] if i.get('row') == 'www.gslb.test|cn-gz|ctcc' and 'nodes' in i]
b = steer[-1]['nodes']['b']
assert 30 <= b['l'] <= 200 and b['base'] == 40 and b['share'] <= 3000, b
health = [i for r in recs for i in r['inputs'] if i.get('node') == 'x']
assert any(h.get('state') == 'demoted' for h in health), health
" && ok "log --auto --json: compact inputs of the engine and health" ||
	fail "log --auto --json: $(head -c 2000 "$T/auto.json")"
out=$(CTL log --auto --limit 1)
[ "$(wc -l <<<"$out")" = 1 ] && ok "log --auto --limit 1: one line" || fail "log --auto --limit 1: $out"

# 2. Rollback of the engine's first change of the cn-gz row: the row is
# pinned at what it had before, the operator's weights, although b is
# still slow; the engine leaves it alone until it is unpinned.
ids() { # the ids of the engine's changes of the cn-gz row, oldest first
	CTL --json log --auto | python3 -c "
import json, sys
for r in json.load(sys.stdin)['records']:
    if any(i.get('row') == 'www.gslb.test|cn-gz|ctcc' for i in r['inputs']) and r['actor'] == 'gslbd:steer':
        print(r['id'])"
}
first=$(ids | head -1)
out=$(CTL rollback "$first" --dry-run)
expect_has "$out" "rollback would pin row www\.gslb\.test\|cn-gz\|ctcc at the operator's weights" \
	"rollback --dry-run: says what it would pin"
[ -z "$(CTL steer show www.gslb.test | grep pinned)" ] && ok "--dry-run wrote nothing" || fail "--dry-run pinned"
out=$(CTL rollback "$first")
expect_has "$out" "pinning row www\.gslb\.test\|cn-gz\|ctcc at the operator's weights" "rollback pins the row"
expect_has "$(CTL log)" "$CTL_ACTOR.*rollback $first: steering pinned" "the pin is audited"
# Time passes to show that the pinned row stays put: three evaluation
# intervals (1 s) while b is still slow.
sleep 3
[ -z "$(weight gz b)" ] && ok "pinned: the operator's weights stay in force while b is slow" ||
	fail "pinned row moved: b has $(weight gz b) bp"
s=$(share gz 192.0.2.2)
within "$s" 330 470 && ok "dig: b answers $s per mille in the pinned row (operator: 40 %)" || fail "dig: b answers $s per mille"
out=$(CTL steer show www.gslb.test)
expect_has "$out" "pinned by [a-z0-9_-]+ at 20[0-9-]+T[0-9:]+Z \(rollback of change $first\)" \
	"steer show: pinned, by whom and when"
expect_has "$(CTL explain www.gslb.test --client 101.6.1.1)" "pinned by .*rollback of change $first" \
	"explain: the row is pinned"
py "
import json, subprocess, sys
rows = json.loads(subprocess.check_output(['$ROOT/$B/gslbctl', '-c', '$T/gslbd.conf', '--json', 'steer', 'show', 'www.gslb.test']))
p = [r for r in rows if r['row'] == 'www.gslb.test|cn-gz|ctcc'][0]['pinned']
assert p['change'] == $first and p['by'] and p['at'], p
" && ok "steer show --json: pinned with change, by and at" || fail "steer show --json: no pin"
# cn-bj is not pinned: the engine still steers it.
set_m b:bj "success=99.9 latency=200"
low_bj() { w=$(weight bj b); [ -n "$w" ] && [ "$w" -le 3000 ]; }
wait_until 20 low_bj && ok "cn-bj, not pinned, is still steered" || fail "cn-bj not steered: $(CTL steer show www.gslb.test)"

# 3. Unpin: the engine moves the row again.
out=$(CTL steer unpin www.gslb.test --region cn-gz --isp ctcc)
expect_has "$out" "row www\.gslb\.test\|cn-gz\|ctcc unpinned" "steer unpin"
expect_has "$(CTL log)" "$CTL_ACTOR.*steer unpin www\.gslb\.test\|cn-gz\|ctcc" "the unpin is audited"
wait_until 20 low_b && ok "unpinned: the engine moves b down again ($(weight gz b) bp)" ||
	fail "unpinned row not steered: $(CTL steer show www.gslb.test)"

# 4. Rollback of the newest change: the engine's shares before it.  The
# first change after the unpin starts from the operator's weights (no
# shares before it): wait for one that moves the engine's own shares.
before_b() { # b's share before the newest engine change of the cn-gz row
	last=$(ids | tail -1)
	want=$(CTL --json log --since "$last" | python3 -c "
import json, sys
r = json.load(sys.stdin)['records'][0]
c = [c for c in r['changes'] if c['key'] == 'www.gslb.test|cn-gz|ctcc'][0]
print(c['before'].get('steer', {}).get('weights', {}).get('b', ''))")
	[ -n "$want" ]
}
wait_until 20 before_b || fail "no engine change from the engine's own shares: $(CTL log --auto | tail -3)"
CTL rollback "$last" >/dev/null
[ -n "$want" ] && [ "$(weight gz b)" = "$want" ] && ok "rollback of the newest change pins b at $want bp" ||
	fail "after the rollback b has '$(weight gz b)' bp, wanted '$want'"
CTL steer unpin www.gslb.test >/dev/null && ok "steer unpin SERVICE: every pinned row" || fail "steer unpin SERVICE"

# 5. Bad input changes nothing.
out=$(CTL steer unpin www.gslb.test 2>&1); rc=$?
[ $rc = 1 ] && expect_has "$out" "service www\.gslb\.test has no pinned row" "unpin with no pin: exit 1" ||
	fail "unpin with no pin: rc $rc: $out"
out=$(CTL steer unpin www.gslb.test --zone x 2>&1); rc=$?
[ $rc = 2 ] && expect_has "$out" "unknown option or bad value '--zone x'" "unpin: bad option, exit 2" ||
	fail "unpin --zone: rc $rc: $out"
out=$(CTL steer unpin nosuch.gslb.test 2>&1); rc=$?
[ $rc = 1 ] && expect_has "$out" "service nosuch\.gslb\.test does not exist" "unpin: unknown service" ||
	fail "unpin unknown service: rc $rc: $out"
hid=$(CTL log --auto | grep "x demoted" | head -1 | awk '{print $1}')
out=$(CTL rollback "$hid" 2>&1); rc=$?
[ $rc = 1 ] && expect_has "$out" "is a health decision" "rollback of a health decision still refused" ||
	fail "rollback of health change $hid: rc $rc: $out"
CTL weight set www.gslb.test --region cn-gz --isp ctcc a=70 b=30 >/dev/null
out=$(CTL rollback "$first" 2>&1); rc=$?
[ $rc = 1 ] && expect_has "$out" "operator's weights of row www\.gslb\.test\|cn-gz\|ctcc changed after change $first" \
	"rollback after a weight set: refused" || fail "rollback after weight set: rc $rc: $out"
expect_not "$(CTL steer show www.gslb.test)" "pinned by" "the refused rollback pinned nothing"

stop_feeder
finish
