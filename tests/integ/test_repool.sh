#!/bin/bash
# Re-pooling against the store: a health commit that fails leaves no
# standby promoted and the retry promotes exactly one (S0-9, S0-10); a
# primary that its operator drains or downs gets its standby like a
# demoted one (S0-9, S0-11); an answer from a fallback row because the
# client's rows are empty carries the short TTL, and explain names the
# empty row and why.
. "$(dirname "$0")/lib.sh"
cat > "$T/geo.txt" <<'EOG'
101.4.0.0/16     r1  -     -
EOG
perl "$ROOT/geoip/build-demo.pl" "$T/geo.txt" "$T/geo.mmdb" >/dev/null || { echo "cannot build mmdb"; exit 1; }
gslb_zone
write_conf gslb.test z.zone "geoip:
  database: geo.mmdb
health:
  interval: 1
  timeout: 0.9
  settle: 2
  flap-window: 0"
HP1=$((PORT + 3000)); HP2=$((PORT + 3001)); HP3=$((PORT + 3002))
trap 'stop_httpds; cleanup' EXIT
for p in $HP1 $HP2 $HP3; do start_httpd "$p"; done
mode() { echo "$2" > "$T/mode$1"; }

CTL service add www.gslb.test --ttl 60 --short-ttl 5 --answers 3 --all-down fallback >/dev/null
CTL node add p1 --addr 192.0.2.1 --region r1 --probe "tcp://127.0.0.1:$HP1" >/dev/null
CTL node add s1 --addr 192.0.2.11 --region r1 --pool standby --probe "tcp://127.0.0.1:$HP2" >/dev/null
CTL node add s2 --addr 192.0.2.12 --region r1 --pool standby --probe "tcp://127.0.0.1:$HP3" >/dev/null
CTL node add far --addr 198.51.100.1 >/dev/null
CTL weight set www.gslb.test --region r1 p1=10 s1=10 s2=10 >/dev/null
CTL weight set www.gslb.test far=10 >/dev/null
# A second service whose r1 row has no standby: its clients fall back.
CTL service add nosb.gslb.test --ttl 60 --short-ttl 5 --all-down fallback >/dev/null
CTL node add q1 --addr 192.0.2.21 --region r1 --probe "tcp://127.0.0.1:$HP1" >/dev/null
CTL weight set nosb.gslb.test --region r1 q1=10 >/dev/null
CTL weight set nosb.gslb.test far=10 >/dev/null
echo 0 > "$T/failcommit"
GSLBD_TEST_HEALTH_FAIL_FILE="$T/failcommit" gslbd_start

sub=101.4.0.0/24
answers() { q "$1" A +short +subnet=$sub | sort | tr '\n' ' ' | sed 's/ $//'; }
ttl() { q "$1" A +noall +answer +subnet=$sub | awk 'NR==1 {print $2}'; }
wait_ans() { # name regex tenths
	for _ in $(tseq "$3"); do grep -Eq "^($2)\$" <<<"$(answers "$1")" && return 0; sleep 0.1; done
	return 1
}
standbys="192.0.2.11|192.0.2.12"
wait_up 4 100 || fail "nodes not up: $(CTL status)"
[ "$(answers www.gslb.test)" = "192.0.2.1" ] && ok "r1 clients get p1, standbys wait" || fail "start: $(answers www.gslb.test)"

# S0-10: the commit of p1's demotion fails once.  Nothing of it may stay
# applied: the retry promotes one standby, not a second.
echo 1 > "$T/failcommit"
mode $HP1 down
wait_ans www.gslb.test "$standbys" 60 && ok "p1 out, a standby in" || fail "after the demotion: $(answers www.gslb.test)"
grep -q "test hook: commit refused" "$T/gslbd.log" && ok "the demotion's first commit failed" || fail "the test hook did not fire"
# Deliberately: a second promotion would come at a later round (interval
# 1 s); two rounds pass, then still exactly one.
sleep 2
got=$(answers www.gslb.test)
grep -Eq "^($standbys)\$" <<<"$got" && ok "exactly one standby promoted after the retry ($got)" || fail "after the retry: $got"
[ "$(grep -c '"promoted": true' <<<"$(CTL --json status)")" = 1 ] && ok "status: one node promoted" ||
	fail "status: $(CTL --json status | grep -c '"promoted": true') promoted"
mode $HP1 ok
wait_ans www.gslb.test "192.0.2.1" 80 && ok "p1 back, standby released" || fail "release: $(answers www.gslb.test)"

# S0-9, S0-11: an operator's drain takes p1 out; its standby comes in and
# the client stays in its region.
# The settle period (2 s) of the last move ends: answers carry the
# service's TTL again.
ttl_is() { [ "$(ttl "$1")" = "$2" ]; }
wait_until 10 ttl_is www.gslb.test 60 || fail "www's TTL stays short: $(ttl www.gslb.test)"
CTL node set p1 --admin drain >/dev/null
wait_ans www.gslb.test "$standbys" 30 && ok "drained primary: its standby answers, not the fallback" ||
	fail "drain: $(answers www.gslb.test)"
expect_has "$(CTL log | tail -3)" "standby s[12] promoted for p1" "promotion audited"
CTL node set p1 --admin auto >/dev/null
wait_ans www.gslb.test "192.0.2.1" 30 && ok "p1 back from drain, standby released" || fail "undrain: $(answers www.gslb.test)"
CTL node set p1 --admin down >/dev/null
wait_ans www.gslb.test "$standbys" 30 && ok "downed primary: its standby answers" || fail "down: $(answers www.gslb.test)"
CTL node set p1 --admin auto >/dev/null

# No standby: the fallback row answers, with the short TTL, and explain
# says which row was empty and why.
CTL node set q1 --admin drain >/dev/null
# q1's own short-TTL period (settle, 2 s) ends, so that only the fallback
# makes the TTL short.
q1_settled() { CTL --json node show q1 | grep -Eq '"short_until": *null'; }
wait_until 10 q1_settled || fail "q1's short-TTL period does not end: $(CTL --json node show q1)"
[ "$(answers nosb.gslb.test)" = "198.51.100.1" ] && ok "no standby: the fallback row answers" || fail "fallback: $(answers nosb.gslb.test)"
t=$(ttl nosb.gslb.test)
[ "$t" = 5 ] && ok "a fallback answer carries the short TTL" || fail "fallback TTL $t, expected 5"
out=$(CTL explain nosb.gslb.test --client $sub)
expect_has "$out" "empty +region,\*: q1 admin drain" "explain: the empty row and why"
expect_has "$out" "ttl +5 \(short: answered by a fallback row" "explain: why the TTL is short"
CTL node set q1 --admin auto >/dev/null
finish
