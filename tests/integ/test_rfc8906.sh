#!/bin/bash
# RFC 8906: every query for our zones gets an answer.  Unknown types are
# NODATA, unknown opcodes NOTIMP, QDCOUNT != 1 FORMERR, header bits as the
# RFCs say, zone transfers refused, TSIG-signed queries answered as for an
# unknown key (RFC 8945 §5.2), messages with QR set dropped, and CH TXT
# id.server / version.bind.
. "$(dirname "$0")/lib.sh"

cat > "$T/r.test.zone" <<'EOZ'
$ORIGIN r.test.
$TTL 3600
@       IN SOA  ns1 hostmaster 5 3600 600 86400 300
        IN NS   ns1
ns1     IN A    192.0.2.1
www     IN A    192.0.2.10
odd     IN TYPE65400 \# 3 abcdef
EOZ
write_conf_zones '  identity: "ns-test.example"
  version: "gslbd-test-1.0"' r.test=r.test.zone
gslbd_start

# Unknown types: NODATA; known ones in RFC 3597 form.
out=$(q www.r.test TYPE65401)
expect_status "$out" NOERROR "unknown type: NOERROR"
expect_flag "$out" aa "unknown type: AA"
expect_count "$out" ANSWER 0 "unknown type: NODATA"
expect_has "$(section "$out" AUTHORITY)" "^r\.test\..*SOA" "unknown type: SOA in authority"
out=$(q nothing.r.test TYPE65401)
expect_status "$out" NXDOMAIN "unknown type, missing name: NXDOMAIN"
out=$(q odd.r.test TYPE65400)
expect_has "$(section "$out" ANSWER)" 'TYPE65400[[:space:]]+\\# 3 ABCDEF' "RFC 3597 record served"
for t in NAPTR CAA SVCB HTTPS TLSA; do
	out=$(q www.r.test $t)
	expect_status "$out" NOERROR "type $t absent: NODATA"
done

# Unknown opcodes: NOTIMP, with the opcode and question echoed.
for op in 15 3 4 5; do
	out=$(q www.r.test A +opcode=$op)
	expect_status "$out" NOTIMP "opcode $op: NOTIMP"
done
out=$(q www.r.test A +opcode=15)
expect_has "$out" "opcode: RESERVED15," "opcode 15 echoed"
res=$(py <<'EOF'
import dnsraw
r = dnsraw.parse(dnsraw.udp(dnsraw.query("www.r.test", opcode=15, qid=777)))
print("rcode=%d opcode=%d id=%d qr=%d q=%s" % (r["rcode"], r["opcode"], r["id"],
      r["qr"], r["question"]))
EOF
)
expect_has "$res" "^rcode=4 opcode=15 id=777 qr=1 q=\[\('www\.r\.test\.', 1, 1\)\]$" "raw opcode 15: NOTIMP ($res)"

# An unknown opcode without a question, or with two: NOTIMP, not FORMERR
# (the opcode is judged before the question count).
res=$(py <<'EOF'
import dnsraw
out = []
for op in (15, 4, 5):
    for qs in ([], [("www.r.test", 1, 1), ("ns1.r.test", 1, 1)]):
        raw = dnsraw.udp(dnsraw.query(None, questions=qs, opcode=op))
        r = dnsraw.parse(raw) if raw else None
        out.append("op%d/qd%d:%s" % (op, len(qs), r and r["rcode"]))
print(" ".join(out))
EOF
)
[ "$res" = "op15/qd0:4 op15/qd2:4 op4/qd0:4 op4/qd2:4 op5/qd0:4 op5/qd2:4" ] &&
	ok "unknown opcode without one question: NOTIMP" || fail "opcode before QDCOUNT: $res"

# QDCOUNT != 1: FORMERR.
res=$(py <<'EOF'
import dnsraw
out = []
for qs in ([], [("www.r.test", 1, 1), ("ns1.r.test", 1, 1)]):
    raw = dnsraw.udp(dnsraw.query(None, questions=qs))
    r = dnsraw.parse(raw) if raw else None
    out.append("qd%d:%s" % (len(qs), r and r["rcode"]))
# QDCOUNT says 2 but one question is there.
raw = dnsraw.udp(dnsraw.query("www.r.test", qdcount=2))
out.append("lie:%s" % (raw and dnsraw.parse(raw)["rcode"]))
print(" ".join(out))
EOF
)
expect_has "$res" "^qd0:1 qd2:1 lie:1$" "QDCOUNT 0, 2, and a lying 2: FORMERR ($res)"
res=$(py <<'EOF'
import dnsraw, struct
# Over TCP too.
s = dnsraw.tcp_connect()
s.sendall(dnsraw.frame(dnsraw.query(None, questions=[])))
print(dnsraw.parse(dnsraw.tcp_read(s))["rcode"])
EOF
)
expect_has "$res" "^1$" "QDCOUNT 0 over TCP: FORMERR"

# Header bits: RD and CD echoed, RA/AD/Z never set; AD and Z of the query
# ignored.
out=$(q www.r.test A +rec)
expect_flag "$out" rd "RD echoed"
expect_noflag "$out" ra "RA never set"
out=$(q www.r.test A +adflag +cdflag +zflag)
expect_flag "$out" cd "CD echoed"
expect_noflag "$out" ad "AD not set for unsigned data"
expect_not "$out" "MBZ" "Z bit clear in the answer"
expect_status "$out" NOERROR "AD, CD and Z in the query: answered"

# Zone transfers refused.
out=$(dig @127.0.0.1 -p "$PORT" +time=2 +tries=1 r.test AXFR 2>&1)
expect_has "$out" "Transfer failed" "dig AXFR over TCP: transfer failed"
expect_not "$out" "IN	SOA" "dig AXFR: no records"
out=$(kdig @127.0.0.1 -p "$PORT" +time=2 +retry=0 r.test AXFR 2>&1)
expect_has "$out" "REFUSED" "kdig AXFR over TCP: REFUSED"
out=$(kdig @127.0.0.1 -p "$PORT" +time=2 +retry=0 +notcp r.test IXFR=1 2>&1)
expect_has "$out" "REFUSED" "kdig IXFR over UDP: REFUSED"
res=$(py <<'EOF'
import dnsraw
s = dnsraw.tcp_connect()
s.sendall(dnsraw.frame(dnsraw.query("r.test", 252)))
r = dnsraw.parse(dnsraw.tcp_read(s))
print("rcode=%d an=%d" % (r["rcode"], len(r["an"])))
EOF
)
expect_has "$res" "^rcode=5 an=0$" "raw AXFR over TCP: REFUSED ($res)"

# TSIG with a key we do not have: NOTAUTH and an unsigned TSIG BADKEY.
out=$(dig @127.0.0.1 -p "$PORT" +norec +time=2 +tries=1 \
	-y hmac-sha256:somekey:c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0 www.r.test A 2>&1)
expect_status "$out" NOTAUTH "TSIG-signed query: NOTAUTH"
expect_has "$out" "^somekey\.	+0	ANY	TSIG	hmac-sha256\. [0-9]+ 300 0 [0-9]+ BADKEY 0" "TSIG BADKEY, MAC empty"
expect_count "$out" ANSWER 0 "TSIG-signed query: no data"
expect_noflag "$out" aa "TSIG-signed query: AA clear"
out=$(dig @127.0.0.1 -p "$PORT" +norec +time=2 +tries=1 +tcp \
	-y hmac-sha256:somekey:c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0 www.r.test A 2>&1)
expect_has "$out" "TSIG	hmac-sha256\..* BADKEY" "TSIG over TCP: BADKEY"

# QR set: no answer at all, and the server keeps answering.
res=$(py <<'EOF'
import dnsraw
print("answer" if dnsraw.udp(dnsraw.query("www.r.test", flags=0x8000),
                             timeout=1.0) else "none")
s = dnsraw.tcp_connect(timeout=1.0)
s.sendall(dnsraw.frame(dnsraw.query("www.r.test", flags=0x8000, qid=1)) +
          dnsraw.frame(dnsraw.query("www.r.test", qid=2)))
r = dnsraw.parse(dnsraw.tcp_read(s))
print("tcp-next-id=%d" % r["id"])
EOF
)
expect_has "$res" "^none$" "QR set over UDP: dropped"
expect_has "$res" "^tcp-next-id=2$" "QR set over TCP: dropped, the next query answered"
out=$(q www.r.test A)
expect_status "$out" NOERROR "still answering after the dropped messages"

# Other classes.
out=$(q www.r.test A -c HS)
expect_status "$out" REFUSED "class HS: REFUSED"
out=$(q www.r.test A -c CH)
expect_status "$out" REFUSED "class CH for a zone name: REFUSED"

# CH TXT id.server, hostname.bind, version.bind, version.server.
for n in id.server hostname.bind; do
	out=$(q $n TXT -c CH)
	expect_status "$out" NOERROR "CH TXT $n: NOERROR"
	expect_has "$(section "$out" ANSWER)" "^$n\.	+0	CH	TXT	\"ns-test\.example\"$" "CH TXT $n: the identity"
done
for n in version.bind version.server; do
	out=$(q $n TXT -c CH +tcp)
	expect_has "$(section "$out" ANSWER)" "^$n\.	+0	CH	TXT	\"gslbd-test-1\.0\"$" "CH TXT $n over TCP: the version"
done
out=$(q ID.Server TXT -c CH)
expect_has "$(section "$out" ANSWER)" "^ID\.Server\..*\"ns-test\.example\"$" "CH TXT: case preserved"
out=$(q authors.bind TXT -c CH)
expect_status "$out" REFUSED "CH TXT authors.bind: REFUSED"

# An empty version hides version.bind (applied by a reload).
write_conf_zones '  identity: "ns-test.example"
  version: ""' r.test=r.test.zone
kill -HUP "$PID"
wait_status version.bind TXT CH REFUSED
expect_status "$out" REFUSED "empty version: version.bind REFUSED"
out=$(q id.server TXT -c CH)
expect_has "$out" '"ns-test\.example"' "empty version: id.server still answered"
finish
