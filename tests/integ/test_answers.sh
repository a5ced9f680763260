#!/bin/bash
# Answers per RFC 1034 §4.3.2 and what followed: AA, exact matches, CNAME
# chains (inside a zone and across two zones we serve, loops), wildcards
# (RFC 4592), empty non-terminals, referrals with glue, DS from the parent
# side, negative answers with the SOA at min(TTL, MINIMUM) (RFC 2308),
# REFUSED outside our zones, QNAME case, ANY (RFC 8482), MX additional
# data, and a parent zone served together with its delegated child.
. "$(dirname "$0")/lib.sh"

cat > "$T/ex.test.zone" <<'EOZ'
$ORIGIN ex.test.
$TTL 3600
; SOA TTL 7200 > MINIMUM 300: negative answers carry 300.
@       7200 IN SOA ns1 hostmaster ( 2024010101 3600 600 86400 300 )
        IN NS   ns1
        IN NS   ns2.elsewhere.invalid.
        IN MX   10 mail
        IN MX   20 mx.elsewhere.invalid.
ns1     IN A    192.0.2.1
mail    IN A    192.0.2.25
mail    IN AAAA 2001:db8::25
www     IN A    192.0.2.10
www     IN AAAA 2001:db8::10
alias   IN CNAME alias2
alias2  IN CNAME www
cross   IN CNAME www.other.test.
out     IN CNAME www.elsewhere.invalid.
dangle  IN CNAME nothere
loop1   IN CNAME loop2
loop2   IN CNAME loop1
self    IN CNAME self
*.wild  IN A    192.0.2.99
*.wild  IN TXT  "from the wildcard"
exists.wild IN TXT "a real name"
deep.ent2.wild IN TXT "below an empty non-terminal"
a.b.ent IN TXT  "ent and b.ent are empty non-terminals"
child   IN NS   ns.child
child   IN NS   ns.outside.invalid.
child   IN DS   11111 13 2 1111111111111111111111111111111111111111111111111111111111111111
ns.child IN A   192.0.2.53
ns.child IN AAAA 2001:db8::53
nods    IN NS   ns.elsewhere.invalid.
lab     IN NS   ns.lab
lab     IN DS   22222 13 2 2222222222222222222222222222222222222222222222222222222222222222
ns.lab  IN A    192.0.2.54
EOZ
cat > "$T/lab.ex.test.zone" <<'EOZ'
$ORIGIN lab.ex.test.
$TTL 600
@       IN SOA  ns hostmaster 7 3600 600 86400 60
        IN NS   ns
ns      IN A    192.0.2.54
host    IN A    192.0.2.55
EOZ
cat > "$T/other.test.zone" <<'EOZ'
$ORIGIN other.test.
$TTL 3600
; SOA TTL 60 < MINIMUM 3600: negative answers carry 60.
@       60 IN SOA ns1.ex.test. hostmaster.ex.test. 9 3600 600 86400 3600
        IN NS   ns1.ex.test.
www     IN A    192.0.2.200
back    IN CNAME www.ex.test.
EOZ
write_conf_zones "" ex.test=ex.test.zone lab.ex.test=lab.ex.test.zone \
	other.test=other.test.zone
gslbd_start

# Exact match, AA.
out=$(q www.ex.test A)
expect_status "$out" NOERROR "exact match: NOERROR"
expect_flag "$out" aa "exact match: AA"
expect_count "$out" ANSWER 1 "exact match: one A"
expect_has "$out" "^www\.ex\.test\.	+3600	IN	A	192\.0\.2\.10$" "exact match: the A"

# CNAME chain inside the zone: alias -> alias2 -> www.
out=$(q alias.ex.test A)
expect_status "$out" NOERROR "CNAME chain: NOERROR"
expect_flag "$out" aa "CNAME chain: AA"
expect_count "$out" ANSWER 3 "CNAME chain: two CNAMEs and the A"
expect_has "$out" "^alias\.ex\.test\..*CNAME	alias2\.ex\.test\.$" "CNAME chain: first link"
expect_has "$out" "^alias2\.ex\.test\..*CNAME	www\.ex\.test\.$" "CNAME chain: second link"
expect_has "$out" "^www\.ex\.test\..*A	192\.0\.2\.10$" "CNAME chain: the target's A"
out=$(q alias.ex.test CNAME)
expect_count "$out" ANSWER 1 "QTYPE CNAME: the CNAME only"

# Across two zones we serve, both ways.
out=$(q cross.ex.test A)
expect_count "$out" ANSWER 2 "cross-zone CNAME: CNAME and A"
expect_has "$out" "^www\.other\.test\..*A	192\.0\.2\.200$" "cross-zone CNAME: target A from other.test"
out=$(q back.other.test AAAA)
expect_has "$out" "^www\.ex\.test\..*AAAA	2001:db8::10$" "cross-zone CNAME back: AAAA from ex.test"
expect_flag "$out" aa "cross-zone CNAME: AA"

# A CNAME out of our data: the resolver follows it.
out=$(q out.ex.test A)
expect_status "$out" NOERROR "CNAME out of our zones: NOERROR"
expect_count "$out" ANSWER 1 "CNAME out of our zones: the CNAME only"
# A dangling CNAME: NXDOMAIN for the last name (RFC 6604).
out=$(q dangle.ex.test A)
expect_status "$out" NXDOMAIN "dangling CNAME: NXDOMAIN"
expect_has "$out" "^dangle\.ex\.test\..*CNAME	nothere\.ex\.test\.$" "dangling CNAME: the CNAME"

# CNAME loops terminate with each link once.
out=$(q loop1.ex.test A)
expect_has "$out" "status: (NOERROR|SERVFAIL)," "CNAME loop: answered"
expect_count "$out" ANSWER 2 "CNAME loop: each link once"
out=$(q self.ex.test A)
expect_count "$out" ANSWER 1 "CNAME to itself: once"

# Wildcards (RFC 4592).
out=$(q foo.wild.ex.test A)
expect_status "$out" NOERROR "wildcard: NOERROR"
expect_flag "$out" aa "wildcard: AA"
expect_has "$out" "^foo\.wild\.ex\.test\..*A	192\.0\.2\.99$" "wildcard: owner is the QNAME"
out=$(q a.b.c.wild.ex.test TXT)
expect_has "$out" "^a\.b\.c\.wild\.ex\.test\..*TXT	\"from the wildcard\"$" "wildcard: several labels deep"
out=$(q foo.wild.ex.test MX)
expect_status "$out" NOERROR "wildcard, type absent: NODATA"
expect_count "$out" ANSWER 0 "wildcard NODATA: empty answer"
expect_has "$out" "^ex\.test\..*SOA" "wildcard NODATA: SOA"
out=$(q exists.wild.ex.test A)
expect_status "$out" NOERROR "existing name blocks the wildcard: NOERROR"
expect_count "$out" ANSWER 0 "existing name blocks the wildcard: no A"
out=$(q x.exists.wild.ex.test A)
expect_status "$out" NXDOMAIN "below an existing name: no wildcard, NXDOMAIN"
out=$(q ent2.wild.ex.test A)
expect_status "$out" NOERROR "empty non-terminal blocks the wildcard: NODATA"
expect_count "$out" ANSWER 0 "empty non-terminal blocks the wildcard: no A"
out=$(q x.ent2.wild.ex.test A)
expect_status "$out" NXDOMAIN "below an empty non-terminal: NXDOMAIN"
out=$(q '*.wild.ex.test' TXT)
expect_has "$out" "^\*\.wild\.ex\.test\..*TXT" "the wildcard name itself"

# Empty non-terminals: NODATA with SOA.
for n in ent.ex.test b.ent.ex.test; do
	out=$(q $n A)
	expect_status "$out" NOERROR "empty non-terminal $n: NOERROR"
	expect_flag "$out" aa "empty non-terminal $n: AA"
	expect_count "$out" ANSWER 0 "empty non-terminal $n: empty answer"
	expect_has "$out" "^ex\.test\.	+300	IN	SOA" "empty non-terminal $n: SOA"
done

# Negative answers: SOA in authority with TTL min(SOA TTL, MINIMUM).
out=$(q nothing.ex.test A)
expect_status "$out" NXDOMAIN "NXDOMAIN"
expect_flag "$out" aa "NXDOMAIN: AA"
expect_count "$out" AUTHORITY 1 "NXDOMAIN: one authority RR"
expect_has "$(section "$out" AUTHORITY)" "^ex\.test\.	+300	IN	SOA	ns1\.ex\.test\. hostmaster\.ex\.test\. 2024010101 " \
	"NXDOMAIN: SOA with TTL 300 = MINIMUM < SOA TTL"
out=$(q www.ex.test TXT)
expect_status "$out" NOERROR "NODATA: NOERROR"
expect_count "$out" ANSWER 0 "NODATA: empty answer"
expect_has "$(section "$out" AUTHORITY)" "^ex\.test\.	+300	IN	SOA" "NODATA: SOA with TTL 300"
out=$(q nothing.other.test A)
expect_has "$(section "$out" AUTHORITY)" "^other\.test\.	+60	IN	SOA" \
	"NXDOMAIN: SOA with TTL 60 = SOA TTL < MINIMUM"
out=$(q ex.test SOA)
expect_has "$(section "$out" ANSWER)" "^ex\.test\.	+7200	IN	SOA" "SOA query: the SOA's own TTL"

# Referral: NS in authority, glue in additional, AA clear.
out=$(q www.child.ex.test A)
expect_status "$out" NOERROR "referral: NOERROR"
expect_noflag "$out" aa "referral: AA clear"
expect_count "$out" ANSWER 0 "referral: empty answer"
a=$(section "$out" AUTHORITY)
expect_has "$a" "^child\.ex\.test\..*NS	ns\.child\.ex\.test\.$" "referral: NS in authority"
expect_has "$a" "^child\.ex\.test\..*NS	ns\.outside\.invalid\.$" "referral: out-of-zone NS in authority"
expect_not "$a" "SOA" "referral: no SOA"
a=$(section "$out" ADDITIONAL)
expect_has "$a" "^ns\.child\.ex\.test\..*A	192\.0\.2\.53$" "referral: A glue"
expect_has "$a" "^ns\.child\.ex\.test\..*AAAA	2001:db8::53$" "referral: AAAA glue"
out=$(q child.ex.test NS)
expect_noflag "$out" aa "NS at the cut: referral, AA clear"
expect_count "$out" ANSWER 0 "NS at the cut: not in the answer"
out=$(q ns.child.ex.test A)
expect_noflag "$out" aa "glue is not authoritative: referral"
expect_count "$out" ANSWER 0 "glue name: referral, empty answer"
out=$(q child.ex.test A +tcp)
expect_noflag "$out" aa "referral over TCP: AA clear"

# DS at a delegation: answered from the parent side, AA set.
out=$(q child.ex.test DS)
expect_status "$out" NOERROR "DS at the cut: NOERROR"
expect_flag "$out" aa "DS at the cut: AA"
expect_has "$(section "$out" ANSWER)" "^child\.ex\.test\..*DS	11111 13 2 " "DS at the cut: the DS"
out=$(q nods.ex.test DS)
expect_flag "$out" aa "no DS at the cut: AA"
expect_count "$out" ANSWER 0 "no DS at the cut: NODATA"
expect_has "$(section "$out" AUTHORITY)" "^ex\.test\..*SOA" "no DS at the cut: parent SOA"
out=$(q www.child.ex.test DS)
expect_noflag "$out" aa "DS below the cut: referral"

# The delegated child we also serve: it answers for its names; the DS of
# its apex comes from the parent.
out=$(q host.lab.ex.test A)
expect_flag "$out" aa "served child: AA"
expect_has "$out" "^host\.lab\.ex\.test\..*A	192\.0\.2\.55$" "served child: its data"
out=$(q lab.ex.test SOA)
expect_has "$(section "$out" ANSWER)" "^lab\.ex\.test\..*SOA	ns\.lab\.ex\.test\. .* 7 " "served child: its SOA"
out=$(q lab.ex.test NS)
expect_flag "$out" aa "served child apex NS: AA (child side)"
expect_count "$out" ANSWER 1 "served child apex NS: in the answer"
out=$(q lab.ex.test DS)
expect_flag "$out" aa "served child DS: AA"
expect_has "$(section "$out" ANSWER)" "^lab\.ex\.test\..*DS	22222 13 2 " "served child DS: from the parent"
out=$(q nothing.lab.ex.test A)
expect_status "$out" NXDOMAIN "served child: NXDOMAIN"
expect_has "$(section "$out" AUTHORITY)" "^lab\.ex\.test\.	+60	IN	SOA" "served child NXDOMAIN: child SOA"

# Outside our zones: REFUSED, no AA.
for n in www.nowhere.test test . ex.test.evil; do
	out=$(q "$n" A)
	expect_status "$out" REFUSED "outside our zones ($n): REFUSED"
	expect_noflag "$out" aa "outside our zones ($n): AA clear"
done

# QNAME case preserved in the question and the answer owner.
out=$(q wWw.Ex.TeSt A)
expect_has "$out" "^;wWw\.Ex\.TeSt\.	+IN	A$" "mixed case: question echoed as sent"
expect_has "$(section "$out" ANSWER)" "^wWw\.Ex\.TeSt\..*A	192\.0\.2\.10$" "mixed case: answer owner as sent"
out=$(q FOO.Wild.EX.test A)
expect_has "$(section "$out" ANSWER)" "^FOO\.Wild\.EX\.test\..*A	192\.0\.2\.99$" "mixed case: wildcard owner as sent"
out=$(q NoThInG.ex.TEST A)
expect_status "$out" NXDOMAIN "mixed case: NXDOMAIN"

# ANY (RFC 8482): one RRset.
for n in www.ex.test mail.ex.test ex.test; do
	out=$(q $n ANY)
	expect_status "$out" NOERROR "ANY $n: NOERROR"
	types=$(section "$out" ANSWER | awk '{ print $4 }' | sort -u | wc -l)
	if [ "$types" = 1 ]; then ok "ANY $n: exactly one RRset"
	else fail "ANY $n: $types RRsets"; echo "$out"; fi
done
out=$(q ANY.ex.test ANY +tcp)
expect_status "$out" NXDOMAIN "ANY for a missing name: NXDOMAIN"

# MX: addresses of in-zone exchanges in additional.
out=$(q ex.test MX)
expect_count "$out" ANSWER 2 "MX: both records"
a=$(section "$out" ADDITIONAL)
expect_has "$a" "^mail\.ex\.test\..*A	192\.0\.2\.25$" "MX additional: A"
expect_has "$a" "^mail\.ex\.test\..*AAAA	2001:db8::25$" "MX additional: AAAA"
expect_not "$a" "elsewhere" "MX additional: nothing for out-of-zone targets"
out=$(q ex.test NS)
expect_flag "$out" aa "apex NS: AA"
expect_has "$(section "$out" ADDITIONAL)" "^ns1\.ex\.test\..*A	192\.0\.2\.1$" "apex NS: address in additional"

# The same answers from kdig and drill.
out=$(kdig @127.0.0.1 -p "$PORT" +norec +time=2 +retry=0 alias.ex.test A 2>&1)
expect_has "$out" "www\.ex\.test\..*A	192\.0\.2\.10" "kdig: CNAME chain"
out=$(drill -p "$PORT" www.child.ex.test @127.0.0.1 A 2>&1)
expect_has "$out" "rcode: NOERROR" "drill: referral"
expect_has "$out" "ns\.child\.ex\.test\.	.*192\.0\.2\.53" "drill: glue"
out=$(drill -6 -p "$PORT" -t nothing.ex.test @::1 A 2>&1)
expect_has "$out" "rcode: NXDOMAIN" "drill over TCP on ::1: NXDOMAIN"
finish
