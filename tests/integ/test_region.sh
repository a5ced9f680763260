#!/bin/bash
# S2-6 dynamic weights: when most nodes of a region score low on load
# together, the load dimension stops telling them apart; their scores
# (four profile) weigh service and stability more.  Three loaded nodes of
# cn-r1 against one loaded node alone in cn-r2, with the same metrics.
. "$(dirname "$0")/lib.sh"
gslb_zone
write_conf gslb.test z.zone "health:
  interval: 1
  timeout: 0.9
  profile: four"
HP=$((PORT + 3000))
trap 'stop_httpds; cleanup' EXIT
start_httpd "$HP"

CTL service add www.gslb.test --answers 4 >/dev/null
i=0
for n in r1a:cn-r1 r1b:cn-r1 r1c:cn-r1 r2a:cn-r2; do
	i=$((i + 1))
	CTL node add "${n%:*}" --addr "192.0.2.$i" --region "${n#*:}" --probe "http://127.0.0.1:$HP/health" >/dev/null
done
CTL weight set www.gslb.test r1a=10 r1b=10 r1c=10 r2a=10 >/dev/null
gslbd_start
wait_up 4 || fail "nodes not up: $(CTL status)"

# Saturated on every load metric, healthy otherwise.
for n in r1a r1b r1c r2a; do
	CTL metrics push $n bandwidth=100 cpu=100 memory=100 disk=100 hit_ratio=95 >/dev/null
done
for _ in $(tseq 80); do
	grep -q "region cn-r1: load low on 3 of 3 nodes" "$T/gslbd.log" && break
	sleep 0.1
done
expect_has "$(cat "$T/gslbd.log")" "region cn-r1: load low on 3 of 3 nodes: service and stability weigh more in its scores" \
	"regional load detected and logged"
expect_not "$(cat "$T/gslbd.log")" "region cn-r2: load low" "one loaded node is not a region"
score() { CTL --json status | python3 -c "import json,sys; d=json.load(sys.stdin); print([n['status']['score'] for n in d['nodes'] if n['node']=='$1'][0])"; }
# Scores are written every few seconds: wait until r2a shows the load.
for _ in $(tseq 100); do
	s2=$(score r2a)
	awk -v a="$s2" 'BEGIN { exit !(a < 90) }' && break
	sleep 0.1
done
s1=$(score r1a)
s2=$(score r2a)
awk -v a="$s1" -v b="$s2" 'BEGIN { exit !(a >= b + 5) }' &&
	ok "a node of the loaded region scores higher than the lone loaded node ($s1 vs $s2)" ||
	fail "S2-6 weights: r1a $s1, r2a $s2"
for n in r1a r1b r1c r2a; do CTL metrics push $n bandwidth=30 cpu=20 memory=20 disk=20 >/dev/null; done
for _ in $(tseq 80); do
	grep -q "region cn-r1: regional load is over" "$T/gslbd.log" && break
	sleep 0.1
done
expect_has "$(cat "$T/gslbd.log")" "region cn-r1: regional load is over, normal weights" "the end of regional load is logged"
gslbd_stop
finish
