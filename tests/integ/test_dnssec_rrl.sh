#!/bin/bash
# Rate limiting before signing (S1-12): a UDP flood of random names with
# DO from one /24 against a signed zone must not make gslbd sign beyond
# the rate.  Its compact denials (NOERROR and an NSEC) share the zone's
# NXDOMAIN account, as the unsigned NXDOMAIN would, so
# gslbd_dnssec_signatures_total rises by at most the rate's allowance;
# the slips carry no signature; a bystander in another /24 is answered
# and signed throughout, and delv from a third /24 fully validates an
# answer and a denial right after the flood.
. "$(dirname "$0")/lib.sh"

if ! command -v delv >/dev/null; then
	echo "SKIP: delv not installed"
	exit 77
fi

gslb_zone 'www A 192.0.2.80'
SPORT=$((PORT + 2))
RATE=20
write_conf_zones "" gslb.test=z.zone
cat >> "$T/gslbd.conf" <<EOC
stats:
  listen: [ "127.0.0.1@$SPORT" ]
dnssec:
  keystore: keys
rrl:
  responses-per-second: $RATE
  window: 2
  slip: 2
  exempt: []
EOC
mkdir "$T/keys"
chmod 700 "$T/keys"
CTL --offline dnssec enable gslb.test >/dev/null || fail "dnssec enable"
gslbd_start

metric() { # name transport
	curl -s "http://127.0.0.1:$SPORT/metrics" |
		awk -v n="$1{transport=\"$2\"}" '$1 == n { print $2 }'
}

# The flood: COUNT queries with DO, each for another random name under
# gslb.test, over SECONDS from 8 sockets at SRC and the next 7 addresses
# of its /24, while a bystander at BYSTANDER asks www.gslb.test A with DO
# 5 times a second.  Prints "sent N answers N signed N tc N tcsigned N
# bystander N/N" (signed: replies with an RRSIG; a slip has none).
cat > "$T/flood.py" <<'EOF'
import random
import struct
import sys
import time

from dnsraw import HOST, PORT, bound_udp, drain_replies, query

src, count, secs, by = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
net, last = src.rsplit(".", 1)
flood = [bound_udp("%s.%d" % (net, int(last) + i)) for i in range(8)]
bys = bound_udp(by)
edns = (1232, 0, True, [])
got = {"answers": 0, "signed": 0, "tc": 0, "tcsigned": 0, "by": 0}


def has_rrsig(m):
    """Whether a record of type RRSIG follows the question."""
    an, ns, ar = struct.unpack("!HHH", m[6:12])
    p = 12
    while m[p]:
        p += m[p] + 1
    p += 5
    for _ in range(an + ns + ar):
        while True:
            if m[p] >= 0xC0:
                p += 2
                break
            if m[p] == 0:
                p += 1
                break
            p += m[p] + 1
        t, _, _, rdlen = struct.unpack("!HHIH", m[p:p + 10])
        if t == 46:
            return True
        p += 10 + rdlen
    return False


def tally(s, m):
    sig = has_rrsig(m)
    if s is bys:
        got["by"] += 1 if (m[7] > 0 and sig and not m[2] & 2) else 0
    elif m[2] & 2:
        got["tc"] += 1
        got["tcsigned"] += sig
    else:
        got["answers"] += 1
        got["signed"] += sig


def drain(wait):
    drain_replies(flood + [bys], wait, tally)


rnd = random.Random(7)
start = time.time()
sent = by_sent = 0
while sent < count:
    now = time.time() - start
    due = min(count, int(count * now / secs) + 1)
    while sent < due:
        name = "r%08x.gslb.test" % rnd.getrandbits(32)
        flood[sent % 8].sendto(query(name, 1, edns=edns), (HOST, PORT))
        sent += 1
    if by_sent < int(now * 5) + 1:
        bys.sendto(query("www.gslb.test", 1, edns=edns), (HOST, PORT))
        by_sent += 1
    drain(0.001)
end = time.time() + 1.0
while time.time() < end:
    drain(0.05)
print("sent %d answers %d signed %d tc %d tcsigned %d bystander %d/%d" % (
    sent, got["answers"], got["signed"], got["tc"], got["tcsigned"],
    got["by"], by_sent))
EOF

made0=$(metric gslbd_dnssec_signatures_total udp)
SECS=2
res=$(py 127.0.1.1 3000 $SECS 127.0.2.1 < "$T/flood.py")
made1=$(metric gslbd_dnssec_signatures_total udp)
echo "flood: $res; signatures made over UDP: $made0 -> $made1"
sent=$(word_after "$res" sent)
answers=$(word_after "$res" answers)
signed=$(word_after "$res" signed)
tc=$(word_after "$res" tc)
made=$((made1 - made0))
# Every full answer is a signed compact denial: one RRSIG over its NSEC
# made, and one over the SOA until the thread has it cached (two UDP
# threads).  The flood is over the rate throughout, so the account never
# leaves debt after the first second's credit: RATE answers, 2 * RATE at
# most (as in test_rrl), each with at most two signatures made.
allow=$((RATE * 2 * 2 + 4))
if [ "$answers" -ge 1 ] && [ "$answers" -le $((RATE * 2)) ] && [ "$signed" = "$answers" ]; then
	ok "flood of $sent random names with DO: $answers signed answers (at most $((RATE * 2)))"
else fail "flood: $res"; fi
if [ "$made" -ge 1 ] && [ "$made" -le "$allow" ]; then
	ok "gslbd_dnssec_signatures_total rose by $made for $sent queries (at most $allow)"
else fail "gslbd_dnssec_signatures_total rose by $made for $sent queries (allowed $allow)"; fi
if [ "$tc" -ge $(((sent - answers) * 4 / 10)) ] && [ "$(word_after "$res" tcsigned)" = 0 ]; then
	ok "flood: $tc slips, none signed"
else fail "flood: slips: $res"; fi
expect_all_answered "bystander in another /24 answered and signed throughout" \
	"$(word_after "$res" bystander)" 5
out=$(curl -s "http://127.0.0.1:$SPORT/metrics")
expect_has "$out" '^gslbd_rrl_dropped_total[^ ]* [1-9]' "the drops are counted"

# A validator in a third /24, right after the flood: the zone's answers
# and denials still validate.
dig @127.0.0.1 -p "$PORT" +short gslb.test DNSKEY |
	awk '{ k = ""; for (i = 4; i <= NF; i++) k = k $i
		printf "trust-anchors { gslb.test. static-key %s %s %s \"%s\"; };\n", $1, $2, $3, k }' \
	> "$T/ta.conf"
dv() { delv @127.0.0.1 -p "$PORT" -b 127.0.3.1 -a "$T/ta.conf" +root=gslb.test "$@" 2>&1; }
expect_has "$(dv www.gslb.test A)" "^; fully validated" "delv from another /24: the answer validates"
expect_has "$(dv nx1.gslb.test A)" "negative response, fully validated" \
	"delv from another /24: a compact NXDOMAIN validates"
finish
