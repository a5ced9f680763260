#!/bin/bash
# EDNS (RFC 6891): OPT in the answer exactly when the query had one,
# BADVERS, FORMERR for two OPTs, unknown options and flags ignored, NSID
# (RFC 5001) shown and hidden, DO echoed, payloads below 512 read as 512,
# truncation with TC and the TCP retry, and UDP answers that never exceed
# min(client payload, udp-max-payload).
. "$(dirname "$0")/lib.sh"

{
	big_txt_zone ed.test
	# 10 TXT records of 24 bytes: about 370 bytes, between 100 and 512.
	for i in $(seq -w 1 10); do
		echo "mid IN TXT \"record $i ..............\""
	done
	# Sets of growing size for the payload sweep.
	for n in 5 15 25 35 45; do
		for i in $(seq 1 $n); do
			echo "s$n IN TXT \"a record of twenty $i\""
		done
	done
} > "$T/ed.test.zone"
write_conf_zones "  udp-max-payload: 1232" ed.test=ed.test.zone
gslbd_start

# OPT exactly when the query had one.
out=$(q www.ed.test A)
expect_has "$out" "OPT PSEUDOSECTION" "EDNS query: OPT in the answer"
expect_has "$out" "; EDNS: version: 0, flags:; udp: 1232" "EDNS: version 0, our payload 1232"
out=$(q www.ed.test A +noedns)
expect_not "$out" "OPT PSEUDOSECTION" "no EDNS: no OPT"
expect_count "$out" ADDITIONAL 0 "no EDNS: additional empty"
for n in nothing.ed.test www.outside.test; do
	out=$(q $n A)
	expect_has "$out" "OPT PSEUDOSECTION" "EDNS query for $n: OPT in the negative answer"
	out=$(q $n A +noedns)
	expect_not "$out" "OPT PSEUDOSECTION" "no EDNS for $n: no OPT"
done
out=$(q www.ed.test A +tcp)
expect_has "$out" "OPT PSEUDOSECTION" "EDNS over TCP: OPT"
out=$(q www.ed.test A +tcp +noedns)
expect_not "$out" "OPT PSEUDOSECTION" "no EDNS over TCP: no OPT"

# Version > 0: BADVERS with an OPT of version 0.
out=$(q www.ed.test A +edns=1 +noednsneg)
expect_status "$out" BADVERS "EDNS version 1: BADVERS"
expect_has "$out" "; EDNS: version: 0," "BADVERS: OPT of version 0"
expect_count "$out" ANSWER 0 "BADVERS: no answer"

# Unknown flags and options are ignored, and not echoed.
out=$(q www.ed.test A +ednsflags=0x4000 +ednsopt=65001:cafe)
expect_status "$out" NOERROR "unknown EDNS flag and option: NOERROR"
expect_has "$out" "192\.0\.2\.10" "unknown EDNS flag and option: answered"
expect_not "$(grep -v '<<>>' <<<"$out")" "MBZ|65001" "unknown EDNS flag and option: not echoed"

# More than one OPT: FORMERR (raw packet).
res=$(py <<'EOF'
import dnsraw, struct
opt = struct.pack("!BHHBBHH", 0, 41, 1232, 0, 0, 0, 0)
m = dnsraw.query("www.ed.test", edns=(1232, 0, False, []), ar=opt, arcount=1)
r = dnsraw.parse(dnsraw.udp(m))
print("rcode=%d" % r["rcode"])
EOF
)
if [ "$res" = "rcode=1" ]; then ok "two OPT records: FORMERR"
else fail "two OPT records: FORMERR, got $res"; fi

# NSID (RFC 5001).
out=$(q www.ed.test A +nsid)
expect_has "$out" '; NSID: .*\("test\.ns"\)' "NSID: the identity"
out=$(q www.ed.test A)
expect_not "$out" "NSID" "no NSID asked: none given"
out=$(kdig @127.0.0.1 -p "$PORT" +norec +nsid +time=2 +retry=0 www.ed.test A 2>&1)
expect_has "$out" 'NSID: .*"test\.ns"' "kdig +nsid: the identity"

# DO echoed.
out=$(q www.ed.test A +dnssec)
expect_has "$out" "; EDNS: version: 0, flags: do;" "DO bit echoed"
out=$(q www.ed.test A)
expect_has "$out" "; EDNS: version: 0, flags:;" "DO bit clear when not asked"

# A payload below 512 is read as 512: a 370-byte answer is not truncated.
out=$(q mid.ed.test TXT +bufsize=100 +ignore)
expect_noflag "$out" tc "payload 100 read as 512: no TC"
expect_count "$out" ANSWER 10 "payload 100 read as 512: full answer"
out=$(q big.ed.test TXT +bufsize=100 +ignore)
expect_flag "$out" tc "payload 100, 3 kB answer: TC"

# Truncation without EDNS: TC over UDP, then dig retries over TCP.
out=$(q big.ed.test TXT +noedns +ignore)
expect_flag "$out" tc "60 TXT over UDP without EDNS: TC"
expect_count "$out" ANSWER 0 "TC: empty answer"
out=$(q mid.ed.test TXT +noedns +ignore)
expect_noflag "$out" tc "370 bytes without EDNS: fits 512"
out=$(q big.ed.test TXT +noedns)
expect_has "$out" "Truncated, retrying in TCP mode" "dig retries over TCP"
expect_count "$out" ANSWER 60 "TCP retry: all 60 TXT"
expect_noflag "$out" tc "TCP retry: no TC"
out=$(q big.ed.test TXT +ignore)
expect_flag "$out" tc "60 TXT over UDP with payload 1232: TC"
out=$(kdig @127.0.0.1 -p "$PORT" +norec +time=2 +retry=0 big.ed.test TXT 2>&1)
expect_has "$out" "ANSWER: 60" "kdig: full answer after TC"
out=$(drill -p "$PORT" big.ed.test @127.0.0.1 TXT 2>&1)
expect_has "$out" "flags: qr aa tc" "drill over UDP: TC"
out=$(drill -t -p "$PORT" big.ed.test @127.0.0.1 TXT 2>&1)
expect_has "$out" "ANSWER: 60" "drill over TCP: the full answer"

# UDP answers never exceed min(client payload, udp-max-payload); an answer
# without TC is complete.
res=$(py <<'EOF'
import dnsraw
bad = []
checked = 0
full = {"s5": 5, "s15": 15, "s25": 25, "s35": 35, "s45": 45, "big": 60}
for payload in (None, 0, 100, 511, 512, 600, 800, 1000, 1232, 1233, 1400,
                4096, 65535):
    for name, n in full.items():
        edns = None if payload is None else (payload, 0, False, [])
        m = dnsraw.query(name + ".ed.test", 16, edns=edns)
        raw = dnsraw.udp(m)
        if raw is None:
            bad.append("%s/%s: no answer" % (name, payload))
            continue
        r = dnsraw.parse(raw)
        limit = 512 if payload is None else min(max(payload, 512), 1232)
        checked += 1
        if len(raw) > limit:
            bad.append("%s/%s: %d bytes > %d" % (name, payload, len(raw), limit))
        if not r["tc"] and len(r["an"]) != n:
            bad.append("%s/%s: %d of %d without TC" % (name, payload,
                                                        len(r["an"]), n))
        if r["tc"] and len(r["an"]) == n:
            bad.append("%s/%s: TC on a full answer" % (name, payload))
        if (payload is not None) != ("edns_payload" in r):
            bad.append("%s/%s: OPT presence wrong" % (name, payload))
print("checked %d: %s" % (checked, "; ".join(bad) or "all within limits"))
EOF
)
expect_has "$res" "^checked 78: all within limits$" "UDP sizes within min(payload, udp-max-payload): $res"

# NSID hidden when the identity is empty (applied by a reload).
write_conf_zones '  identity: ""
  udp-max-payload: 1232' ed.test=ed.test.zone
kill -HUP "$PID"
wait_status id.server TXT CH REFUSED
expect_status "$out" REFUSED "empty identity: id.server REFUSED"
out=$(q www.ed.test A +nsid)
expect_status "$out" NOERROR "empty identity: the query is answered"
expect_not "$out" "NSID" "empty identity: no NSID option"
finish
