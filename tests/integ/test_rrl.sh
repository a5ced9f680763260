#!/bin/bash
# Response rate limiting (S1-12): a UDP flood from one /24 on loopback is
# cut to about the configured rate (the rest dropped, every second one
# slipped as a truncated reply), while a client in another /24 is
# answered in full throughout and the flooded /24 still gets answers over
# TCP.  Also: off by default, exempt prefixes, settings applied on
# SIGHUP, recovery after the window, the counters in the exit line, and
# bad values rejected by --check with file and line.
#
# Every 127/8 address is local on Linux, so clients bind 127.0.1.1-8 (the
# flood) and 127.0.2.1 (a bystander) to stand for two networks.
. "$(dirname "$0")/lib.sh"

cat > "$T/rrl.test.zone" <<'EOZ'
$ORIGIN rrl.test.
$TTL 300
@       IN SOA  ns1 hostmaster 1 3600 600 86400 300
        IN NS   ns1
ns1     IN A    192.0.2.1
www     IN A    192.0.2.10
EOZ

# The flood: COUNT queries for www.rrl.test A over SECONDS, paced evenly
# from 8 sockets bound to SRC and the next 7 addresses of its /24 (8
# source ports, so the kernel may spread them over both workers; 8
# addresses, so that only an account per /24 holds them to the rate, not
# one per address), while a bystander at BYSTANDER (optional) asks
# the same question 5 times a second from one socket.  Prints
# "sent N answers N tc N bystander N/N".
cat > "$T/flood.py" <<'EOF'
import sys

from dnsraw import PORT, bound_udp, drain_replies, paced_flood, query

src, count, secs = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
by = sys.argv[4] if len(sys.argv) > 4 else None
msg = query("www.rrl.test", 1)
net, last = src.rsplit(".", 1)
flood = [bound_udp("%s.%d" % (net, int(last) + i)) for i in range(8)]
bys = bound_udp(by) if by else None
allsocks = flood + ([bys] if bys else [])
got = {"answers": 0, "tc": 0, "by": 0}


def tally(s, m):
    if s is bys:
        if not m[2] & 2 and m[7] > 0:
            got["by"] += 1
    elif m[2] & 2:
        got["tc"] += 1
    else:
        got["answers"] += 1


def drain(wait):
    drain_replies(allsocks, wait, tally)


by_sent = [0]


def bystander(now):
    if bys and by_sent[0] < int(now * 5) + 1:
        bys.sendto(msg, ("127.0.0.1", PORT))
        by_sent[0] += 1


sent = paced_flood(flood, msg, count, secs, drain, bystander)
by_sent = by_sent[0]
print("sent %d answers %d tc %d bystander %d/%d" % (
    sent, got["answers"], got["tc"], got["by"], by_sent))
EOF
flood() { py "$@" < "$T/flood.py"; }

RATE=20
rrl_conf() { # exempt-list
	write_conf rrl.test rrl.test.zone "rrl:
  responses-per-second: $RATE
  window: 2
  slip: 2
  ipv4-prefix: 24
  exempt: $1"
}

# Off by default: nothing is dropped.
write_conf rrl.test rrl.test.zone
gslbd_start
res=$(flood 127.0.1.1 1000 1)
if [ "$(word_after "$res" answers)" = 1000 ]; then ok "off by default: all 1000 answered"
else fail "off by default: $res"; fi

# On by reload, exempting nobody (the default exempts loopback).
rrl_conf "[]"
reload_done
expect_has "$(cat "$T/gslbd.log")" "rate limiting: $RATE responses a second" "reload turns rate limiting on"
SECS=2
res=$(flood 127.0.1.1 3000 $SECS 127.0.2.1)
echo "flood: $res"
sent=$(word_after "$res" sent)
answers=$(word_after "$res" answers)
tc=$(word_after "$res" tc)
dropped=$((sent - answers - tc))
# The flood is over the rate all the time, and every response debits the
# account whether it goes out or not: after the first second's credit
# (the rate) only slips go out.  At most twice that: an account per
# address, not per /24, would give each of the 8 its own credit.
if [ "$answers" -ge 1 ] && [ "$answers" -le $((RATE * 2)) ]; then
	ok "flood: $answers full answers of $sent (at most $((RATE * 2)))"
else fail "flood: $answers full answers of $sent"; fi
# slip 2: every second response that is not sent goes out truncated.
if [ "$tc" -ge $(((sent - answers) * 4 / 10)) ] &&
   [ "$tc" -le $(((sent - answers) / 2 + 2)) ]; then
	ok "flood: $tc truncated slips, $dropped dropped"
else fail "flood: $tc truncated slips, $dropped dropped (slip 2)"; fi
expect_all_answered "bystander in another /24 answered in full" \
	"$(word_after "$res" bystander)" 5

# The flooded /24 is answered over TCP, and over UDP from another /24.
out=$(dig @127.0.0.1 -p "$PORT" -b 127.0.1.1 +tcp +norec +time=2 +tries=1 www.rrl.test A 2>&1)
expect_has "$out" "^www\.rrl\.test\..*192\.0\.2\.10" "TCP from the flooded /24 is answered"
out=$(dig @127.0.0.1 -p "$PORT" -b 127.0.3.1 +ignore +norec +time=2 +tries=1 www.rrl.test A 2>&1)
expect_has "$out" "^www\.rrl\.test\..*192\.0\.2\.10" "UDP from a third /24 is answered"

# After the window (2 s of debt) the flooded /24 is answered again, in
# full: polled (a query every 0.3 s, far below the rate), the time it took
# printed.
answered_again() {
	out=$(dig @127.0.0.1 -p "$PORT" -b 127.0.1.1 +ignore +norec +time=1 +tries=1 www.rrl.test A 2>&1)
	grep -Eq "^www\.rrl\.test\..*192\.0\.2\.10" <<<"$out" &&
		! grep -Eq "^;; flags:[^;]* tc[ ;]" <<<"$out"
}
t0=$(date +%s%N)
if wait_until 10 answered_again; then
	ok "flooded /24 answered again after the window ($(( ($(date +%s%N) - t0) / 1000000 )) ms after the checks above)"
else fail "flooded /24 not answered in full again: $out"; fi

# Exempt prefixes are never limited; a reload applies the list.
rrl_conf '[ "127.0.1.0/24" ]'
reload_done
res=$(flood 127.0.1.1 1000 1)
if [ "$(word_after "$res" answers)" = 1000 ]; then ok "exempt /24: all 1000 answered"
else fail "exempt /24: $res"; fi
res=$(flood 127.0.4.1 200 1)
a=$(word_after "$res" answers)
if [ "$a" -le $((RATE * 2)) ]; then ok "not exempt: 127.0.4.1 limited ($res)"
else fail "not exempt: 127.0.4.1 not limited ($res)"; fi

# A bad rrl section fails the whole reload; the running settings stay.
echo "  table-size: 10" >> "$T/gslbd.conf"
before=$(wc -l < "$T/gslbd.log")
kill -HUP "$PID"
for _ in $(tseq 50); do
	tail -n +$((before + 1)) "$T/gslbd.log" | grep -q "reload failed" && break
	sleep 0.1
done
expect_has "$(tail -n +$((before + 1)) "$T/gslbd.log")" \
	"reload failed, keeping the running configuration: .*gslbd\.conf:[0-9]+: rrl\.table-size" \
	"a bad rrl section fails the reload with file and line"
res=$(flood 127.0.1.1 300 1)
if [ "$(word_after "$res" answers)" = 300 ]; then ok "after the failed reload: still exempt"
else fail "after the failed reload: $res"; fi

# Off again by reload.
write_conf rrl.test rrl.test.zone
reload_done
expect_has "$(cat "$T/gslbd.log")" "rate limiting: off" "reload turns rate limiting off"
res=$(flood 127.0.1.1 1000 1)
if [ "$(word_after "$res" answers)" = 1000 ]; then ok "off again: all 1000 answered"
else fail "off again: $res"; fi

# The exit line counts what rate limiting dropped and slipped.
gslbd_stop || fail "clean exit"
line=$(grep "rate limiting dropped" "$T/gslbd.log")
rl_dropped=$(sed -E 's/.*rate limiting dropped ([0-9]+) and slipped ([0-9]+).*/\1/' <<<"$line")
rl_slipped=$(sed -E 's/.*rate limiting dropped ([0-9]+) and slipped ([0-9]+).*/\2/' <<<"$line")
if [ -n "$rl_dropped" ] && [ "$rl_dropped" -ge "$dropped" ] &&
   [ "$rl_slipped" -ge "$tc" ]; then
	ok "exit line: rate limiting dropped $rl_dropped and slipped $rl_slipped"
else fail "exit line: '$line' (flood: $dropped dropped, $tc slipped)"; fi

# gslbd --check names the file and line of a bad value.
check_bad() { # yaml-line want
	write_conf rrl.test rrl.test.zone "rrl:
  responses-per-second: 10
$1"
	local out
	out=$("$GSLBD" -c "$T/gslbd.conf" --check 2>&1)
	if [ $? -ne 0 ] && grep -Eq "gslbd\.conf:1[0-9]: .*$2" <<<"$out"; then
		ok "--check rejects '$1'"
	else fail "--check and '$1': $out"; fi
}
check_bad "  slip: 11" "rrl\.slip must be a whole number from 0 to 10"
check_bad "  window: 0" "rrl\.window"
check_bad "  ipv6-prefix: 129" "rrl\.ipv6-prefix"
check_bad '  exempt: [ "10.0.0.0/33" ]' "not an address or a prefix"
check_bad "  burst: 5" "unknown key 'burst' in rrl"
rrl_conf '[ "192.0.2.0/24", "2001:db8::/32" ]'
out=$("$GSLBD" -c "$T/gslbd.conf" --check 2>&1)
expect_has "$out" "gslbd\.conf: ok" "--check accepts a valid rrl section"

finish
