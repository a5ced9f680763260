#!/bin/bash
# Adaptive probing (S0-7, S2-8) with the default fast interval: a healthy
# node is probed at the interval (5 s here), and once its score falls
# below good it is probed at a fifth of that (1 s), so the confirmation
# rounds, and the gray switch clients see, follow within seconds.
. "$(dirname "$0")/lib.sh"
gslb_zone
write_conf gslb.test z.zone "health:
  interval: 5
  timeout: 2
  latency-threshold: 0.4"
HP=$((PORT + 3000))
trap 'stop_httpds; cleanup' EXIT
start_httpd "$HP"
CTL service add www.gslb.test --answers 2 >/dev/null
CTL node add f1 --addr 192.0.2.1 --probe "http://127.0.0.1:$HP/health" >/dev/null
CTL node add f2 --addr 192.0.2.2 >/dev/null
CTL weight set www.gslb.test f1=10 f2=10 >/dev/null
gslbd_start
hits() { cat "$T/mode$HP.hits" 2>/dev/null | wc -l; }
grep -q "probing every 5.0 s (fast 1.0 s)" "$T/gslbd.log" &&
	ok "default fast interval: a fifth of the interval" || fail "log: $(grep probing "$T/gslbd.log")"
wait_up 1 100 || fail "f1 not up: $(CTL status)"
h0=$(hits)
# Time must pass to show that the node is NOT probed at the fast
# interval: two intervals (10 s) hold at most 3 probes at 5 s, 10 at 1 s.
sleep 10
n=$(( $(hits) - h0 ))
[ "$n" -le 3 ] && ok "healthy node: $n probes in 10 s at the 5 s interval" ||
	fail "healthy node probed $n times in 10 s"

# Slow answers (0.6 s, over the 0.4 s threshold): the score falls below
# good at the first slow result, and the next probes come every second.
echo slow > "$T/mode$HP"
h0=$(hits)
for _ in $(tseq 80); do [ "$(hits)" -gt "$h0" ] && break; sleep 0.1; done
t0=$(date +%s%N)
h1=$(hits)
# Three more probes: about 3 s at the fast interval (1 s plus the 0.6 s
# answer), at least 15 s at the interval (5 s).  The poll waits as long
# as TEST_TIME_FACTOR allows; the bound of 12 s tells the two apart and
# is the rule's figure, so it is not scaled.
for _ in $(tseq 250); do [ $(( $(hits) - h1 )) -ge 3 ] && break; sleep 0.1; done
n=$(( $(hits) - h1 )) ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ "$n" -ge 3 ] && [ "$ms" -lt 12000 ] && ok "falling node: 3 probes in $ms ms at the fast interval" ||
	fail "falling node: $n probes in $ms ms"
gray() { CTL log | grep -q "node f1 gray switch 10%"; }
wait_until 10 gray && ok "the gray switch came within $(( ($(date +%s%N) - t0) / 1000000 )) ms of the first slow answer" ||
	fail "no gray switch: $(CTL log | tail -5)"
[ "$(q www.gslb.test A +short | sort | tr '\n' ' ')" = "192.0.2.1 192.0.2.2 " ] &&
	ok "f1 still answers during the watch" || fail "answers: $(q www.gslb.test A +short)"

# Healthy again: back to the normal interval once the score is good.
echo ok > "$T/mode$HP"
good() { CTL status | grep -qE '^f1 +up +[a-z]+ +[a-z]+ +(8[0-9]|9[0-9]|100) '; }
wait_until 30 good || fail "f1 not good again: $(CTL status)"
# Once the score is good, the next probe (at most the fast interval
# away) is the last fast one.
h1=$(hits)
for _ in $(tseq 50); do [ "$(hits)" -gt "$h1" ] && break; sleep 0.1; done
h1=$(hits)
# Time must pass to show that the fast interval has ended: two
# intervals (10 s) hold at most 3 probes at 5 s, 10 at 1 s.
sleep 10
n=$(( $(hits) - h1 ))
[ "$n" -le 3 ] && ok "recovered node: back to the interval ($n probes in 10 s)" ||
	fail "recovered node still probed $n times in 10 s"
finish
