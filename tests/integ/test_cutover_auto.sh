#!/bin/bash
# An unannounced cutover against real HTTP servers: one slow node of an
# area opens nothing; three of its four nodes slowing together open an
# automatic cutover window (audited, listed as automatic) that derates
# the area, shifts the answers to the other region and shortens the TTL;
# the window ends once the area has recovered (S0-1, S0-8, S2-6).
. "$(dirname "$0")/lib.sh"
gslb_zone
write_conf gslb.test z.zone "health:
  interval: 2
  timeout: 1.5
  fast-interval: 1
  settle: 60
cutover:
  ramp: 2
  auto-derate: 30"
trap 'stop_httpds; cleanup' EXIT
for i in 1 2 3 4 5 6; do start_httpd $((PORT + 3000 + i)); done
CTL service add www.gslb.test --ttl 60 --short-ttl 5 >/dev/null
for i in 1 2 3 4; do
	CTL node add a$i --addr 192.0.2.$i --region r-a --isp isp-x \
		--probe "http://127.0.0.1:$((PORT + 3000 + i))/health" >/dev/null
done
for i in 5 6; do
	CTL node add b$i --addr 192.0.2.$i --region r-b --isp isp-x \
		--probe "http://127.0.0.1:$((PORT + 3000 + i))/health" >/dev/null
done
CTL weight set www.gslb.test a1=100 a2=100 a3=100 a4=100 b5=100 b6=100 >/dev/null
gslbd_start
wait_up 6 150 || fail "nodes not up: $(CTL status)"
mode() { # mode node-number...
	local m=$1; shift
	for i in "$@"; do echo "$m" > "$T/mode$((PORT + 3000 + i))"; done
}
# Share of 200 answers that name an r-a node, in percent, and the TTLs.
share_a() {
	local args=() k
	for k in $(seq 200); do args+=(www.gslb.test A +noall +answer); done
	dig @127.0.0.1 -p "$PORT" +tries=1 +time=2 "${args[@]}" |
		awk '$4 == "A" { n++; if ($5 ~ /^192\.0\.2\.[1-4]$/) a++ }
		     END { printf "%d", n ? 100 * a / n : -1 }'
}
ttl() { dig @127.0.0.1 -p "$PORT" +noall +answer www.gslb.test A | awk '{ print $2; exit }'; }
# Let the stable scores settle (a few rounds of every node).
sleep 3
before=$(share_a)
[ "$before" -ge 50 ] && ok "healthy: r-a carries $before % of the answers" ||
	fail "healthy: r-a carries $before %"
expect_has "$(ttl)" "^60$" "healthy: the normal TTL"

# One node slow: a single noisy node of the area opens no window.
mode slow 1
for _ in $(tseq 60); do CTL log | grep -q "node a1 derated\|node a1 demoted" && break; sleep 0.1; done
sleep 3
expect_not "$(CTL log)" "automatic cutover" "one slow node of four: no automatic window"
expect_not "$(CTL cutover list)" "automatic" "one slow node: nothing listed"
mode ok 1
for _ in $(tseq 100); do CTL status | grep -qE '^a1 +up ' && break; sleep 0.1; done

# Three of four slow together: the window opens.
mode slow 1 2 3
for _ in $(tseq 150); do CTL log | grep -q "automatic cutover c1 opened" && break; sleep 0.1; done
expect_has "$(CTL log)" "automatic cutover c1 opened region=r-a isp=isp-x: [34] of 4 nodes falling" \
	"three slow nodes of four: automatic window c1 opened, audited"
out=$(CTL cutover list)
expect_has "$out" "c1 +r-a +isp-x .* 30% .*in-window +automatic" "cutover list shows c1 automatic, in-window"
CTL --json cutover list | python3 -c '
import json, sys
w = json.load(sys.stdin)["cutovers"][0]
sys.exit(not (w["auto"] is True and w["impact"] == "automatic" and w["phase"] == "in-window"))' &&
	ok "cutover list --json: c1 auto, in-window" || fail "cutover list --json: $(CTL --json cutover list)"
for _ in $(tseq 50); do CTL status | grep -q "a4 .*cutover\|cutover c1 in-window" && break; sleep 0.1; done
expect_has "$(CTL status)" "cutover c1 in-window: weight 30%" "the area's nodes are derated by the window"
sleep 1
during=$(share_a)
[ "$during" -lt 40 ] && ok "in the window: r-a carries $during % (was $before %)" ||
	fail "in the window: r-a carries $during % (was $before %)"
t=$(ttl)
[ "$t" -le 5 ] && ok "in the window: short TTL ($t)" || fail "in the window: TTL $t"

# Recovery: the window ends, after confirmation.
mode ok 1 2 3
for _ in $(tseq 300); do CTL log | grep -q "automatic cutover c1 ended" && break; sleep 0.1; done
expect_has "$(CTL log)" "automatic cutover c1 ended region=r-a isp=isp-x: recovered" \
	"recovered: the automatic window ended"
expect_has "$(CTL cutover list)" "c1 .*(ramp|done) +automatic.*ended: recovered" \
	"cutover list: c1 over"
n=$(CTL log | grep -c "automatic cutover")
[ "$n" = 2 ] && ok "one opening and one end, no flapping" || fail "$n automatic entries"
for _ in $(tseq 100); do CTL status | grep -q "cutover c1" || break; sleep 0.1; done
after=$(share_a)
[ "$after" -ge 50 ] && ok "after the ramp: r-a carries $after % again" ||
	fail "after the ramp: r-a carries $after %"
finish
