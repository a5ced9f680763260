#!/bin/bash
# Cutover windows with short times against the real daemon: pre-derating
# by the right factor (shares over many queries, S0-3), the standby's share
# growing before the start (S0-4), short TTLs from short-ttl-lead before
# the window and in it (S0-11), weights
# restored after the ramp, and every bad `cutover add` rejected with the
# store unchanged.
. "$(dirname "$0")/lib.sh"
gslb_zone
write_conf gslb.test z.zone "health:
  interval: 1
  timeout: 0.5
  settle: 3
cutover:
  notice: 6
  prewarm-lead: 6
  ramp: 4
  short-ttl-lead: 2"
CTL service add www.gslb.test --ttl 60 --short-ttl 5 >/dev/null
CTL node add a1 --addr 192.0.2.1 --region r-a --isp isp-x >/dev/null
CTL node add a2 --addr 192.0.2.2 --region r-a --isp isp-y >/dev/null
CTL node add o1 --addr 192.0.2.3 --region r-b --isp isp-x >/dev/null
CTL node add sb --addr 192.0.2.9 --region r-b --isp isp-x --pool standby >/dev/null
CTL weight set www.gslb.test a1=100 a2=100 o1=100 sb=100 >/dev/null
gslbd_start

for i in $(seq 600); do echo "www.gslb.test A"; done > "$T/batch"
# share IP -> percentage of 600 answers
share() { grep -c "^$1\$" "$T/picks" | awk "{ printf \"%d\", \$1 * 100 / 600 }"; }
sample() { dig @127.0.0.1 -p "$PORT" +short +tries=1 -f "$T/batch" > "$T/picks"; }
at() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ; }
ttl() { q www.gslb.test A +noall +answer | awk 'NR==1 {print $2}'; }
# The clock in tenths of a second, and TENTHS as seconds relative to
# the window's start ("start-1.4").
tnow() { echo $(( $(date +%s%N) / 100000000 )); }
rel() { awk -v t="$1" -v s="$start" 'BEGIN { printf "start%+.1f s", t / 10 - s }'; }
listed() { CTL cutover list | grep -q " $1"; }

# Rejected: nothing written.
before=$(CTL export; CTL cutover list)
now=$(date +%s)
expect_reject() {
	local what=$1 re=$2 out rc=0
	shift 2
	out=$(CTL "$@" 2>&1) || rc=$?
	if [ $rc -ne 0 ] && grep -Eq -- "$re" <<<"$out"; then ok "rejected: $what"
	else fail "rejected: $what (rc=$rc): $out"; fi
}
expect_reject "end before start" "ends .* before it starts" cutover add --region r-a --start "$(at $((now + 100)))" --end "$(at $((now + 50)))"
expect_reject "unknown region" "no node is in that region" cutover add --region r-z --start "$(at $((now + 10)))" --end "$(at $((now + 50)))"
expect_reject "unknown node" "--node zz: no such node" cutover add --region r-a --node zz --start "$(at $((now + 10)))" --end "$(at $((now + 50)))"
expect_reject "time without offset" "RFC 3339 with an offset" cutover add --region r-a --start 2026-12-01T02:00 --end 2026-12-01T05:00+08:00
expect_reject "impact and derate" "not both" cutover add --region r-a --impact high --derate 50 --start "$(at $((now + 10)))" --end "$(at $((now + 50)))"
expect_reject "derate out of range" "--derate 0: must be" cutover add --region r-a --derate 0 --start "$(at $((now + 10)))" --end "$(at $((now + 50)))"
expect_reject "window in the past" "ends in the past" cutover add --region r-a --start "$(at $((now - 100)))" --end "$(at $((now - 50)))"
[ "$(CTL export; CTL cutover list)" = "$before" ] && ok "store unchanged after rejected cutovers" || fail "store changed"

sample
s1=$(share 192.0.2.1)
[ "$s1" -ge 25 ] && [ "$s1" -le 42 ] && ok "before the notice: a1 has a third ($s1 %)" || fail "before: a1 $s1 %"
[ "$(share 192.0.2.9)" = 0 ] && ok "before: the standby gets nothing" || fail "standby served early"

# A window 8 s ahead, notice 6 s: pre-derating starts in 2 s.
now=$(date +%s)
start=$((now + 8)); end=$((now + 13))
CTL cutover add --region r-a --start "$(at $start)" --end "$(at $end)" --derate 70 --prewarm 40 --note drill >/dev/null && ok "cutover added" || fail "cutover add"
expect_reject "overlapping window, other settings" "overlaps window c1" cutover add --region r-a --start "$(at $((start + 1)))" --end "$(at $((end + 10)))" --derate 50
out=$(CTL cutover add --region r-a --start "$(at $start)" --end "$(at $end)" --derate 70 --prewarm 40)
expect_has "$out" "exists already as c1" "the same window again: no change"

# Pre-derated (from start-6), more than the short-TTL lead (2 s) before
# the start: polled in the daemon's answers (explain), then checked
# while the clock is still before the lead.
derated() { CTL explain www.gslb.test --client 127.0.0.1 | grep -q "a1 .*cutover c1 pre-derated"; }
wait_until 10 derated || fail "not pre-derated: $(CTL explain www.gslb.test --client 127.0.0.1)"
t=$(ttl) t1=$(tnow)
if [ "$t1" -lt $(( (start - 2) * 10 )) ]; then
	[ "$t" = 60 ] && ok "pre-derated, before the short-TTL lead: long TTL (at $(rel "$t1"))" ||
		fail "TTL at $(rel "$t1"): $t"
else
	fail "pre-derated only at $(rel "$t1"), inside the short-TTL lead"
fi
out=$(CTL cutover list)
expect_has "$out" "^c1 +r-a .* 70% +40% +pre-derated" "listed as pre-derated"
sample
s1=$(share 192.0.2.1); s2=$(share 192.0.2.2); s3=$(share 192.0.2.3); s9=$(share 192.0.2.9)
# a1, a2 at 70 % of o1's weight, standby growing from 0: each affected
# node gets about 0.7 of o1's share (0.5 to 0.9 over 600 answers), where
# weights at 100 - 70 % would give 0.3.
r=$(( (s1 + s2) * 50 / (s3 > 0 ? s3 : 1) ))
[ "$r" -ge 50 ] && [ "$r" -le 90 ] && ok "pre-derated to 70 %: a1 $s1 %, a2 $s2 %, o1 $s3 % ($r %)" || fail "pre-derate: a1 $s1 %, a2 $s2 %, o1 $s3 % ($r %, want 70)"
out=$(CTL status)
expect_has "$out" "cutover c1 pre-derated: weight 70%" "status shows the phase"
out=$(CTL explain www.gslb.test --client 127.0.0.1)
expect_has "$out" "a1 .*cutover c1 pre-derated \(weight 70%" "explain shows the window"

# The short TTL from start-2: polled, and seen before the start.
short() { [ "$(ttl)" = 5 ]; }
wait_until 10 short
t1=$(tnow)
short && [ "$t1" -lt $(( start * 10 )) ] &&
	ok "within the short-TTL lead before the start: short TTL (at $(rel "$t1"))" ||
	fail "TTL at $(rel "$t1"): $(ttl)"
sample
s9b=$(share 192.0.2.9)
[ "$s9b" -gt "$s9" ] && [ "$s9b" -ge 5 ] && ok "standby share grew before the start ($s9 % -> $s9b %)" || fail "standby share: $s9 -> $s9b"

wait_until 10 listed in-window
expect_has "$(CTL cutover list)" "in-window" "listed as in-window"
t=$(ttl)
[ "$t" = 5 ] && ok "in the window: short TTL (at $(rel "$(tnow)"))" || fail "in window TTL $t"

# After the end: ramp of 4 s, then normal weights; TTL normal after
# settle.  Polled: done, then the long TTL, then the shares.
wait_until 20 listed "done "
long() { [ "$(ttl)" = 60 ]; }
wait_until 10 long
t=$(ttl) t1=$(tnow)
[ "$t" = 60 ] && ok "TTL back to normal after the settle period (at end+$(( t1 / 10 - end )) s)" ||
	fail "TTL after: $t"
normal() {
	sample
	s1=$(share 192.0.2.1) s9=$(share 192.0.2.9)
	[ "$s1" -ge 25 ] && [ "$s1" -le 42 ] && [ "$s9" = 0 ]
}
wait_until 10 normal && ok "after the ramp: weights normal (a1 $s1 %, standby $s9 %)" ||
	fail "after: a1 $s1 % standby $s9 %"
expect_has "$(CTL cutover list)" " done " "listed as done"
out=$(CTL log)
expect_has "$out" "health: .*cutover c1 pre-derated" "phases are audited"
CTL cutover del c1 >/dev/null && ok "cutover del" || fail "cutover del"
finish
