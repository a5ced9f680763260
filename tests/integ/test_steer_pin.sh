#!/bin/bash
# The automatic changes in the audit log (`log --auto`: the steering
# engine's shares and the health thread's decisions, with their inputs),
# and the rollback of an automatic change, which pins the row's previous
# weights until `steer unpin`.  Time compressed: evaluations every
# second.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/steer_lib.sh"

steer_geo
gslb_zone
write_conf gslb.test z.zone "geoip:
  database: geo.mmdb
health:
  interval: 1
  timeout: 0.9
steer:
  interval: 1
  tau: 2
  windows: [4, 8]
  stale: 8
  min-step: 1
  max-step: 20
  max-change-per-hour: 100
  floor: 5"
HP1=$((PORT + 3000))
start_httpd "$HP1"

CTL service add www.gslb.test --ttl 30 --answers 1 >/dev/null
CTL node add a --addr 192.0.2.1 >/dev/null
CTL node add b --addr 192.0.2.2 >/dev/null
# x is probed, in no steered row: its health decisions are automatic too.
CTL node add x --addr 192.0.2.7 --probe "tcp://127.0.0.1:$HP1" >/dev/null
CTL weight set www.gslb.test --region cn-gz --isp ctcc a=50 b=50 >/dev/null
CTL weight set www.gslb.test --region cn-bj --isp cucc a=50 b=50 >/dev/null
CTL weight set www.gslb.test x=10 >/dev/null
CTL service set www.gslb.test --steering dynamic --weights success=0.5,latency=0.5,cost=0 >/dev/null
gslbd_start
for k in a:gz b:gz a:bj b:bj; do set_m $k "success=99.9 latency=20"; done
start_feeder
wait_up 1 100 || fail "x not up: $(CTL status)"

# b is slow in cn-gz: the engine moves the row; x goes down.
set_m b:gz "success=99.9 latency=200"
echo down > "$T/mode$HP1"
low_b() { w=$(weight gz b); [ -n "$w" ] && [ "$w" -le 3000 ]; }
wait_for 20 low_b || fail "b did not lose share: $(CTL steer show www.gslb.test)"
demoted() { CTL log --auto | grep -q "health: .*x demoted"; }
wait_for 20 demoted || fail "x not demoted: $(CTL status)"

# 1. log --auto: only the daemon's own changes, with their inputs.
out=$(CTL log --auto)
expect_has "$out" "gslbd:steer +steer www\.gslb\.test\|cn-gz\|ctcc: .*b .*latency 200 ms" \
	"log --auto: the engine's change with its inputs"
expect_has "$out" " health +health: .*x demoted" "log --auto: the health decision"
expect_not "$out" "gslbctl:" "log --auto: no operator change"
expect_has "$(CTL log)" "gslbctl:.*service set www\.gslb\.test" "log: the operator's changes are still there"
CTL --json log --auto > "$T/auto.json"
py "
import json
recs = json.load(open('$T/auto.json'))['records']
assert recs and all(r['actor'] in ('health', 'gslbd:steer') for r in recs), 'actors'
assert all('changes' not in r and 'inputs' in r for r in recs), 'inputs, not changes'
steer = [i for r in recs for i in r['inputs'] if i.get('row') == 'www.gslb.test|cn-gz|ctcc' and 'nodes' in i]
b = steer[-1]['nodes']['b']
assert b['l'] == 200 and b['base'] == 50 and b['share'] <= 3000, b
health = [i for r in recs for i in r['inputs'] if i.get('node') == 'x']
assert any(h.get('state') == 'down' for h in health), health
" && ok "log --auto --json: compact inputs of the engine and health" ||
	fail "log --auto --json: $(head -c 2000 "$T/auto.json")"
out=$(CTL log --auto --limit 1)
[ "$(wc -l <<<"$out")" = 1 ] && ok "log --auto --limit 1: one line" || fail "log --auto --limit 1: $out"

stop_feeder
finish
