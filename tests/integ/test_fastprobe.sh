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
sleep 5
n=$(( $(hits) - h1 ))
[ "$n" -ge 3 ] && ok "falling node: $n probes in 5 s at the fast interval" ||
	fail "falling node probed only $n times in 5 s"
out=$(CTL log)
expect_has "$out" "node f1 gray switch 10%" "the gray switch came within seconds of the first slow answer"
[ "$(q www.gslb.test A +short | sort | tr '\n' ' ')" = "192.0.2.1 192.0.2.2 " ] &&
	ok "f1 still answers during the watch" || fail "answers: $(q www.gslb.test A +short)"

# Healthy again: back to the normal interval once the score is good.
echo ok > "$T/mode$HP"
sleep 8
h1=$(hits)
sleep 10
n=$(( $(hits) - h1 ))
[ "$n" -le 3 ] && ok "recovered node: back to the interval ($n probes in 10 s)" ||
	fail "recovered node still probed $n times in 10 s"
finish
