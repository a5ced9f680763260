#!/bin/bash
# DNS Cookies (RFC 7873 with the RFC 9018 server cookie), with real
# clients: dig +cookie gets its client cookie echoed with a server cookie
# of 16 bytes, and the cookie of one answer sent back is good and kept;
# a server cookie not ours (another address, made up, expired) gets a
# normal answer with a fresh one, never BADCOOKIE; kdig +cookie; a
# malformed COOKIE option is FORMERR; cookies off ignore the option.
# With rate limiting (S1-12): in a flood from one /24, a client presenting
# a valid server cookie is answered in full while a cookie-less one is
# limited, a slip to a query with only a client cookie is BADCOOKIE with
# a server cookie instead of TC, and dig +badcookie, retrying with it, is
# answered over UDP.  The counters in /metrics; the secret file (mode
# checked, rotation by reload with the previous secret accepted).
. "$(dirname "$0")/lib.sh"

cat > "$T/ck.test.zone" <<'EOZ'
$ORIGIN ck.test.
$TTL 300
@       IN SOA  ns1 hostmaster 1 3600 600 86400 300
        IN NS   ns1
ns1     IN A    192.0.2.1
www     IN A    192.0.2.10
EOZ

SPORT=$((PORT + 7))
ck_conf() { # extra yaml
	write_conf ck.test ck.test.zone "stats:
  listen: [ \"127.0.0.1@$SPORT\" ]
${1:-}"
}
metric() { # name-and-labels
	curl -s "http://127.0.0.1:$SPORT/metrics" |
		awk -v m="$1" '$1 == m { print $2 }'
}
# The COOKIE line of dig's output: "; COOKIE: CLIENT[SERVER] (good)".
cookie_of() { grep -m1 '^; COOKIE:' <<<"$1"; }

# On by default.
ck_conf
gslbd_start
out=$(q www.ck.test A +cookie=0123456789abcdef)
expect_status "$out" NOERROR "client cookie only: NOERROR"
expect_has "$out" "^www\.ck\.test\..*192\.0\.2\.10" "client cookie only: answered"
c=$(cookie_of "$out")
# The client cookie echoed and a server cookie of 16 bytes: version 1,
# reserved zero, then the timestamp and the hash.
if [[ "$c" =~ ^\;\ COOKIE:\ 0123456789abcdef01000000([0-9a-f]{24})\  ]]; then
	ok "client cookie echoed with a 16-byte version 1 server cookie: $c"
else fail "no server cookie: '$c'"; fi
full=$(sed -E 's/^; COOKIE: ([0-9a-f]+).*/\1/' <<<"$c")
ts=$((16#${full:24:8}))
now=$(date +%s)
if [ $((now - ts)) -ge -2 ] && [ $((now - ts)) -le 5 ]; then
	ok "the server cookie's timestamp is now ($ts)"
else fail "server cookie timestamp $ts, now $now"; fi

# The whole cookie sent back is good (dig's "good": its client cookie
# came back), kept (younger than 30 min) and counted as valid.
out=$(q www.ck.test A +cookie="$full")
c2=$(cookie_of "$out")
expect_has "$c2" "\(good\)" "dig +cookie=CLIENT+SERVER from the last answer: good"
expect_has "$c2" "^; COOKIE: $full " "a young server cookie is kept"
expect_has "$out" "^www\.ck\.test\..*192\.0\.2\.10" "valid cookie: answered"
# From another address the same cookie is not ours: a fresh one, NOERROR.
out=$(q www.ck.test A -b 127.0.0.2 +cookie="$full")
expect_status "$out" NOERROR "the cookie from another address: NOERROR"
expect_not "$(cookie_of "$out")" "$full" "the cookie from another address: replaced"

# A server cookie that is not ours gets a normal answer with a fresh one
# (RFC 7873 §5.2.3), not BADCOOKIE.
bogus=0123456789abcdef0100000011111111aaaaaaaaaaaaaaaa
out=$(q www.ck.test A +cookie=$bogus)
expect_status "$out" NOERROR "a server cookie not ours: NOERROR, not BADCOOKIE"
expect_has "$out" "^www\.ck\.test\..*192\.0\.2\.10" "a server cookie not ours: answered"
expect_has "$(cookie_of "$out")" "^; COOKIE: 0123456789abcdef01000000[0-9a-f]{24} " \
	"a server cookie not ours: a fresh server cookie"
expect_not "$(cookie_of "$out")" "$bogus" "a server cookie not ours: replaced"
# An expired cookie (an hour and more old) is replaced too.
old=$(printf '%s01000000%08x%s' "${full:0:16}" $((now - 3700)) "${full:32:16}")
out=$(q www.ck.test A +cookie="$old")
expect_status "$out" NOERROR "an expired server cookie: NOERROR"
expect_not "$(cookie_of "$out")" "$old" "an expired server cookie: replaced"

# kdig, whose cookie is random; it checks the echoed client cookie.
out=$(kdig @127.0.0.1 -p "$PORT" +norec +time=2 +retry=0 +cookie www.ck.test A 2>&1)
expect_has "$out" "COOKIE: [0-9a-fA-F]{16}01000000[0-9a-fA-F]{24}" "kdig +cookie: a server cookie"
expect_has "$out" "192\.0\.2\.10" "kdig +cookie: answered"
expect_not "$out" "BADCOOKIE|[Ww]arning" "kdig +cookie: no complaint"
# Over TCP too.
out=$(q www.ck.test A +tcp +cookie=0123456789abcdef)
expect_has "$(cookie_of "$out")" "^; COOKIE: 0123456789abcdef01000000" "TCP: a server cookie"

# Malformed options (RFC 7873 §5.2.2): lengths 7, 9, 15 and 41 are
# FORMERR; 8, 16 and 40 are not.
lens() {
	py "$@" <<'EOF'
import sys
from dnsraw import query, udp
for n in map(int, sys.argv[1:]):
    r = udp(query("www.ck.test", 1, edns=(1232, 0, 0, [(10, bytes(range(n)))])))
    rcode = (r[3] & 0xF) if r else -1
    print("%d:%d" % (n, rcode), end=" ")
EOF
}
res=$(lens 7 9 15 41 8 16 40)
if [ "$res" = "7:1 9:1 15:1 41:1 8:0 16:0 40:0 " ]; then
	ok "malformed cookies are FORMERR, well-formed ones NOERROR: $res"
else fail "cookie lengths and RCODEs: '$res'"; fi

# The counters.
for k in client_only valid invalid malformed; do
	v=$(metric "gslbd_cookie_queries_total{transport=\"udp\",kind=\"$k\"}")
	eval "n_$k=\${v:-0}"
done
# client_only: the first dig, kdig; valid: exactly one; invalid: another
# address, not ours, expired, and 16 and 40 bytes; malformed: four.
if [ "$n_client_only" -ge 2 ] && [ "$n_valid" = 1 ] &&
   [ "$n_invalid" -ge 5 ] && [ "$n_malformed" = 4 ]; then
	ok "metrics: client_only $n_client_only valid $n_valid invalid $n_invalid malformed $n_malformed"
else fail "metrics: client_only $n_client_only valid $n_valid invalid $n_invalid malformed $n_malformed"; fi
v=$(metric 'gslbd_cookie_queries_total{transport="tcp",kind="client_only"}')
if [ "${v:-0}" -ge 1 ]; then ok "metrics: the TCP cookie counted"
else fail "metrics: TCP client_only ${v:-none}"; fi
gslbd_stop || fail "clean exit"

# Rate limiting: a flood from 127.0.1.0/24.  Three clients in it are
# checked at the same time: one with the valid cookie it learnt before
# the flood, one with none, one with a client cookie only.
RATE=10
: > "$T/gslbd.log"
ck_conf "rrl:
  responses-per-second: $RATE
  window: 2
  slip: 1
  exempt: []"
gslbd_start
out=$(q www.ck.test A -b 127.0.1.200 +cookie=1111111111111111)
vfull=$(sed -E 's/^; COOKIE: ([0-9a-f]+).*/\1/' <<<"$(cookie_of "$out")")
cat > "$T/flood.py" <<'EOF'
import struct, sys
from dnsraw import PORT, bound_udp, drain_replies, paced_flood, query

vcookie = bytes.fromhex(sys.argv[1])
flood = [bound_udp("127.0.1.%d" % (1 + i)) for i in range(8)]
valid, plain, client = bound_udp("127.0.1.200"), bound_udp("127.0.1.201"), bound_udp("127.0.1.202")
qf = query("www.ck.test", 1, edns=(1232, 0, 0, []))
qv = query("www.ck.test", 1, qid=1, edns=(1232, 0, 0, [(10, vcookie)]))
qp = query("www.ck.test", 1, qid=2, edns=(1232, 0, 0, []))
qc = query("www.ck.test", 1, qid=3, edns=(1232, 0, 0, [(10, b"\x22" * 8)]))
got = {"valid": 0, "plain": 0, "client": 0, "badcookie": 0, "tc": 0}
def rcode(m):
    # The RCODE with the OPT record's upper bits: a slip holds the
    # question, then the OPT record.
    pos = 12
    while m[pos]:
        pos += m[pos] + 1
    pos += 5
    hi = 0
    if struct.unpack("!H", m[10:12])[0] >= 1 and m[pos] == 0 and m[pos+1:pos+3] == b"\x00\x29":
        hi = m[pos + 5]
    return hi << 4 | (m[3] & 0xF)
def tally(s, m):
    full = not m[2] & 2 and struct.unpack("!H", m[6:8])[0] > 0
    if s is valid and full:
        got["valid"] += 1
    elif s is plain and full:
        got["plain"] += 1
    elif s is client:
        if full:
            got["client"] += 1
        elif rcode(m) == 23 and not m[2] & 2 and b"\x00\x0a\x00\x18" + b"\x22" * 8 in m:
            got["badcookie"] += 1
        elif m[2] & 2:
            got["tc"] += 1
def drain(wait):
    drain_replies(flood + [valid, plain, client], wait, tally)
count, secs, n = 2000, 2.0, 20
probes = 0
def probe(now):
    # n probes from each client, spread over the flood after its first
    # half second (by then the /24 is over its credit).
    global probes
    if now > 0.5 and probes < min(n, int((now - 0.5) * n / (secs - 0.5)) + 1):
        valid.sendto(qv, ("127.0.0.1", PORT))
        plain.sendto(qp, ("127.0.0.1", PORT))
        client.sendto(qc, ("127.0.0.1", PORT))
        probes += 1
paced_flood(flood, qf, count, secs, drain, probe)
print("probes %d valid %d plain %d client %d badcookie %d tc %d" % (
    probes, got["valid"], got["plain"], got["client"], got["badcookie"], got["tc"]))
EOF
res=$(py "$vfull" < "$T/flood.py")
echo "flood: $res"
probes=$(word_after "$res" probes)
if [ "$probes" -ge 10 ] && [ "$(word_after "$res" valid)" = "$probes" ]; then
	ok "flood: the client with a valid server cookie answered in full ($(word_after "$res" valid)/$probes)"
else fail "flood: valid cookie answered $(word_after "$res" valid) of $probes"; fi
if [ "$(word_after "$res" plain)" -le $((probes / 3)) ]; then
	ok "flood: the client without a cookie limited ($(word_after "$res" plain)/$probes)"
else fail "flood: the client without a cookie answered $(word_after "$res" plain) of $probes"; fi
bc=$(word_after "$res" badcookie)
if [ "$bc" -ge $((probes / 2)) ] && [ "$(word_after "$res" tc)" = 0 ]; then
	ok "flood: slips to a client cookie are BADCOOKIE with our cookie, never TC ($bc of $probes)"
else fail "flood: client cookie: $bc BADCOOKIE, $(word_after "$res" tc) TC of $probes"; fi
v=$(metric 'gslbd_badcookie_responses_total{transport="udp"}')
if [ "${v:-0}" -ge "$bc" ] && [ "${v:-0}" -ge 1 ]; then ok "metrics: $v BADCOOKIE sent"
else fail "metrics: gslbd_badcookie_responses_total ${v:-none}, client saw $bc"; fi
# dig +badcookie takes the BADCOOKIE's server cookie and retries with it
# at once (one more UDP round trip), which is exempt: a full answer, no
# TCP.
# The flood goes on while dig asks (a burst before it would be paid off
# by the time dig asks, on a slow machine): 200 a second for 4 s, dig
# half a second in: after the flood's first 100 queries, which it tells
# by a file (python's start alone can take longer than that on a busy
# machine).
rm -f "$T/flooding"
FLAG=$T/flooding py <<'EOF' &
import os, time
from dnsraw import PORT, bound_udp, query
# From 16 ports: the kernel gives each worker's UDP thread its own share
# of the sources by address and port, and dig's port may go to either.
socks = [bound_udp("127.0.1.3") for _ in range(16)]
m = query("www.ck.test", 1)
end = time.time() + 4
n = 0
while time.time() < end:
    socks[n % 16].sendto(m, ("127.0.0.1", PORT))
    n += 1
    if n == 100:
        open(os.environ["FLAG"], "w").close()
    time.sleep(0.005)
EOF
fl=$!
wait_until 10 test -e "$T/flooding" || fail "the flood began"
out=$(dig @127.0.0.1 -p "$PORT" -b 127.0.1.4 +norec +time=2 +tries=1 +cookie=3333333333333333 +badcookie www.ck.test A 2>&1)
wait "$fl"
expect_has "$out" "BADCOOKIE, retrying" "dig under the limit: BADCOOKIE first"
expect_has "$out" "^www\.ck\.test\..*192\.0\.2\.10" "dig under the limit: answered after BADCOOKIE over UDP"
expect_not "$out" "Truncated, retrying in TCP" "dig under the limit: no TCP retry"
gslbd_stop || fail "clean exit"

# Off: the option is ignored, as an unknown one.
: > "$T/gslbd.log"
ck_conf "cookies:
  enable: off"
gslbd_start
out=$(q www.ck.test A +cookie=0123456789abcdef)
expect_status "$out" NOERROR "cookies off: NOERROR"
expect_not "$out" "^; COOKIE:" "cookies off: no COOKIE option in the reply"
res=$(lens 9)
if [ "$res" = "9:0 " ]; then ok "cookies off: a malformed option is ignored"
else fail "cookies off: 9 bytes: '$res'"; fi
gslbd_stop || fail "clean exit"

# A secret file: mode checked at start; its secret makes the cookies,
# the RFC 9018 A.1 example secret giving its hash for the example client
# cookie, timestamp and address aside.
printf '# current\ne5e973e5a6b2a43f48e7dc849e37bfcf\n' > "$T/secret"
chmod 644 "$T/secret"
ck_conf "cookies:
  secret-file: secret
  rotate: 7200"
out=$("$GSLBD" -c "$T/gslbd.conf" --check 2>&1)
expect_has "$out" "secret.*open to group or others" "--check: a secret readable by others is refused"
chmod 600 "$T/secret"
out=$("$GSLBD" -c "$T/gslbd.conf" --check 2>&1)
expect_has "$out" "gslbd\.conf: ok" "--check: a 0600 secret file is accepted"
: > "$T/gslbd.log"
gslbd_start
out=$(q www.ck.test A +cookie=0123456789abcdef)
f1=$(sed -E 's/^; COOKIE: ([0-9a-f]+).*/\1/' <<<"$(cookie_of "$out")")
expect_has "$(cat "$T/gslbd.log")" "cookies: on, file secret" "the file's secret is in use"
# A new secret in the file, the old one second: a reload keeps the old
# cookie valid and re-issues it with the new secret.
printf '445536bcd2513298075a5d379663c962\ne5e973e5a6b2a43f48e7dc849e37bfcf\n' > "$T/secret"
reload_done
out=$(q www.ck.test A +cookie="$f1")
c=$(cookie_of "$out")
expect_has "$c" "^; COOKIE: 0123456789abcdef01000000" "after the rotation: a server cookie"
expect_not "$c" "$f1" "after the rotation: re-issued with the new secret"
v=$(metric 'gslbd_cookie_queries_total{transport="udp",kind="valid"}')
if [ "${v:-0}" = 1 ]; then ok "after the rotation: the old secret's cookie is valid"
else fail "after the rotation: valid ${v:-none}"; fi
# Only the new secret: the first cookie is now invalid.
printf '445536bcd2513298075a5d379663c962\n' > "$T/secret"
reload_done
out=$(q www.ck.test A +cookie="$f1")
v=$(metric 'gslbd_cookie_queries_total{transport="udp",kind="invalid"}')
if [ "${v:-0}" = 1 ]; then ok "the secret dropped: its cookie is invalid"
else fail "the secret dropped: invalid ${v:-none}"; fi
gslbd_stop || fail "clean exit"

check_bad() { # yaml want
	ck_conf "cookies:
${1:-}"
	local out
	out=$("$GSLBD" -c "$T/gslbd.conf" --check 2>&1)
	if [ $? -ne 0 ] && grep -Eq -- "$2" <<<"$out"; then ok "--check rejects '$1'"
	else fail "--check and '$1': $out"; fi
}
check_bad "  rotate: 60" "gslbd\.conf:[0-9]+: cookies\.rotate must be a whole number of seconds from 3600"
check_bad "  rotate: 1h" "gslbd\.conf:[0-9]+: cookies\.rotate"
check_bad "  enable: maybe" "gslbd\.conf:[0-9]+: .*cookies\.enable"
check_bad "  secret-file: nosuch" "nosuch: cannot open the cookie secret"
check_bad "  lifetime: 5" "unknown key 'lifetime' in cookies"
printf 'e5e973e5a6b2a43f48e7dc849e37bf\n' > "$T/short"; chmod 600 "$T/short"
check_bad "  secret-file: short" "short:1: a secret is 32 hex digits"

finish
