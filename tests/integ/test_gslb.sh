#!/bin/bash
# GSLB answers from the weight store: region/ISP from ECS, from the
# resolver's address through the CIDR file, the fallback chain, ECS scope,
# weights over many queries, stickiness, all-down modes, CNAME nodes, and a
# change by gslbctl visible at once.
. "$(dirname "$0")/lib.sh"

# Our own GeoIP database and CIDR file.
geo_mmdb <<'EOG'
10.1.0.0/16      r-a   isp-x  64510
10.2.0.0/16      r-a   isp-y  64511
10.3.0.0/16      r-b   isp-x  64510
10.4.0.0/16      r-c   isp-z  64512
2001:db8:a::/48  r-a   isp-x  64510
EOG
cat > "$T/over.nets" <<'EON'
# the resolver on loopback is located by the operator's own list
127.0.0.0/8     region=r-b isp=isp-x
10.1.200.0/24   region=r-c isp=isp-z
EON
gslb_zone '*.wild A 192.0.2.99'
write_conf gslb.test z.zone "geoip:
  database: geo.mmdb
  nets: over.nets"
gslbd_start

CTL service add www.gslb.test --ttl 60 --short-ttl 10 >/dev/null
CTL node add a1 --addr 192.0.2.1 --addr 2001:db8::1 --region r-a --isp isp-x >/dev/null
CTL node add a2 --addr 192.0.2.2 --region r-a --isp isp-x >/dev/null
CTL node add a3 --addr 192.0.2.3 --region r-a --isp isp-y >/dev/null
CTL node add b1 --addr 192.0.2.4 --region r-b --isp isp-x >/dev/null
CTL node add d1 --addr 192.0.2.5 >/dev/null
CTL node add cdn --cname edge.other.example >/dev/null
CTL weight set www.gslb.test --region r-a --isp isp-x a1=75 a2=25 >/dev/null
CTL weight set www.gslb.test --region r-a a3=100 >/dev/null
CTL weight set www.gslb.test --isp isp-x b1=100 >/dev/null
CTL weight set www.gslb.test d1=100 >/dev/null

ans() { q www.gslb.test A +short "$@" | tr '\n' ' ' | sed 's/ $//'; }
# The chain: (region, ISP) -> (region, *) -> (*, ISP) -> (*, *).
out=$(ans +subnet=10.2.5.0/24)
[ "$out" = 192.0.2.3 ] && ok "(r-a, *) row for r-a/isp-y" || fail "(r-a, *) row: got '$out'"
out=$(ans +subnet=10.3.5.0/24)
[ "$out" = 192.0.2.4 ] && ok "(*, isp-x) row for r-b/isp-x" || fail "(*, isp-x): got '$out'"
out=$(ans +subnet=10.4.5.0/24)
[ "$out" = 192.0.2.5 ] && ok "(*, *) row for r-c/isp-z" || fail "(*, *): got '$out'"
out=$(ans +subnet=10.1.200.0/24)
[ "$out" = 192.0.2.5 ] && ok "CIDR file overrides the GeoIP database" || fail "nets override: got '$out'"
# Without ECS the resolver's address (127.0.0.1, in the CIDR file) decides.
out=$(q www.gslb.test A)
expect_has "$out" "192\.0\.2\.4" "resolver address located through the CIDR file"
expect_not "$out" "CLIENT-SUBNET" "no ECS in the answer when the query had none"
# ECS scope: the matched network's prefix; TTL from the service.
out=$(q www.gslb.test A +subnet=10.1.7.0/24)
# 10.1.0.0/16 holds the CIDR file's 10.1.200.0/24, which answers
# differently: the scope narrows to the largest network around the client
# that excludes it (10.1.0.0/17), so no resolver applies this answer there.
expect_has "$out" "CLIENT-SUBNET: 10\.1\.7\.0/24/17" "ECS scope = decided network (/17)"
expect_has "$out" "^www\.gslb\.test\.[[:space:]]+60[[:space:]]+IN[[:space:]]+A[[:space:]]+192\.0\.2\.[12]$" "answer with the service TTL"
out=$(q www.gslb.test A +subnet=10.2.7.0/24)
expect_has "$out" "CLIENT-SUBNET: 10\.2\.7\.0/24/16" "ECS scope = GeoIP network /16"
# The same client written IPv4-mapped in an IPv6 option: the same row,
# and the scope in IPv6 bits (/16 + 96 = /112).
out=$(q www.gslb.test A +subnet=::ffff:10.2.7.0/120)
expect_has "$out" "CLIENT-SUBNET: ::ffff:10\.2\.7\.0/120/112" "IPv4-mapped ECS: scope /112"
expect_has "$out" "IN	A	192\.0\.2\.3$" "IPv4-mapped ECS: located as the IPv4 client"
out=$(q www.gslb.test A +subnet=10.1.200.0/24)
expect_has "$out" "CLIENT-SUBNET: 10\.1\.200\.0/24/24" "ECS scope = CIDR-file network /24"
out=$(q www.gslb.test AAAA +subnet=2001:db8:a::/48)
expect_has "$out" "CLIENT-SUBNET: 2001:db8:a::/48/48" "IPv6 ECS and scope"
# A type the picked node lacks is NODATA, not NXDOMAIN.
out=$(q www.gslb.test AAAA +subnet=10.2.0.0/24)
expect_status "$out" NOERROR "AAAA of a v4-only node: NOERROR"
expect_count "$out" ANSWER 0 "AAAA of a v4-only node: NODATA"
expect_has "$out" "IN	SOA" "NODATA carries the SOA"
# That NODATA depends on where the client is (r-a/isp-x has IPv6): it
# carries the deciding scope like an address would (RFC 7871 §7.4), and
# its SOA's TTL, the negative-caching time, is the service's TTL rather
# than the zone's 120 s.
expect_has "$out" "CLIENT-SUBNET: 10\.2\.0\.0/24/16" "NODATA of a client's row: the deciding scope"
expect_has "$out" "^gslb\.test\.[[:space:]]+60[[:space:]]+IN[[:space:]]+SOA" "NODATA of a service: SOA TTL = service TTL"
out=$(q www.gslb.test MX +subnet=10.2.0.0/24)
expect_count "$out" ANSWER 0 "MX of a service: NODATA"
expect_has "$out" "CLIENT-SUBNET: 10\.2\.0\.0/24/16" "MX NODATA: the deciding scope"
expect_has "$out" "^gslb\.test\.[[:space:]]+60[[:space:]]+IN[[:space:]]+SOA" "MX NODATA: SOA TTL = service TTL"
# A client whose chain has no row of a service that has client rows:
# NODATA for it, addresses for others, so it is scoped too.
CTL service add rows.gslb.test --ttl 20 >/dev/null
CTL weight set rows.gslb.test --region r-a --isp isp-x a1=1 >/dev/null
out=$(q rows.gslb.test A +subnet=10.4.5.0/24)
expect_count "$out" ANSWER 0 "no row for the client: NODATA"
expect_has "$out" "CLIENT-SUBNET: 10\.4\.5\.0/24/16" "no row for the client: the deciding scope"
expect_has "$out" "^gslb\.test\.[[:space:]]+20[[:space:]]+IN[[:space:]]+SOA" "no row for the client: SOA TTL = service TTL"
# A truncated GSLB answer carries the scope of its decision too.
CTL node add v6a --addr 2001:db8:1::1 --addr 2001:db8:1::2 --addr 2001:db8:1::3 --addr 2001:db8:1::4 \
	--addr 2001:db8:1::5 --addr 2001:db8:1::6 --addr 2001:db8:1::7 --addr 2001:db8:1::8 >/dev/null
CTL node add v6b --addr 2001:db8:2::1 --addr 2001:db8:2::2 --addr 2001:db8:2::3 --addr 2001:db8:2::4 \
	--addr 2001:db8:2::5 --addr 2001:db8:2::6 --addr 2001:db8:2::7 --addr 2001:db8:2::8 >/dev/null
CTL node add v6c --addr 2001:db8:3::1 --addr 2001:db8:3::2 --addr 2001:db8:3::3 --addr 2001:db8:3::4 \
	--addr 2001:db8:3::5 --addr 2001:db8:3::6 --addr 2001:db8:3::7 --addr 2001:db8:3::8 >/dev/null
CTL service add big.gslb.test --answers 3 >/dev/null
CTL weight set big.gslb.test --region r-a v6a=1 v6b=1 v6c=1 >/dev/null
out=$(q big.gslb.test AAAA +subnet=10.2.0.0/24 +bufsize=512 +ignore)
expect_flag "$out" tc "24 AAAA records in 512 bytes: truncated"
expect_has "$out" "CLIENT-SUBNET: 10\.2\.0\.0/24/16" "truncated GSLB answer: the deciding scope"
# Static data stays static: ECS scope 0.
out=$(q ns1.gslb.test A +subnet=10.1.0.0/24)
expect_has "$out" "CLIENT-SUBNET: 10\.1\.0\.0/24/0" "static answer: scope 0"
# A malformed ECS option: FORMERR.
out=$(py <<'EOP'
import dnsraw, struct
opt = struct.pack("!HBB", 1, 16, 0) + bytes([10, 1, 9])   # /16 with 3 bytes
r = dnsraw.udp(dnsraw.query("www.gslb.test", 1, edns=(1232, 0, False, [(8, opt)])))
print("rcode", r[3] & 15 if r else None)
EOP
)
expect_has "$out" "rcode 1" "ECS address longer than its prefix: FORMERR"

# Weights over many queries: a1 75 %, a2 25 % (within 3 points of 3000).
for i in $(seq 3000); do echo "www.gslb.test A +subnet=10.1.$((i % 200)).0/24"; done > "$T/batch"
dig @127.0.0.1 -p "$PORT" +short +tries=1 +time=2 -f "$T/batch" > "$T/picks"
n1=$(grep -c '^192\.0\.2\.1$' "$T/picks"); n2=$(grep -c '^192\.0\.2\.2$' "$T/picks")
total=$((n1 + n2))
share=$(( n1 * 1000 / (total ? total : 1) ))
if [ "$total" -ge 2990 ] && [ "$share" -ge 720 ] && [ "$share" -le 780 ]; then
	ok "weights 75/25 over $total answers: a1 got $((share / 10)).$((share % 10)) %"
else fail "weights 75/25: a1=$n1 a2=$n2"; fi
# Weight 0 is never picked.
CTL weight set www.gslb.test --region r-a --isp isp-x a1=0 a2=10 >/dev/null
head -300 "$T/batch" > "$T/batch300"
dig @127.0.0.1 -p "$PORT" +short +tries=1 -f "$T/batch300" > "$T/picks"
[ "$(grep -c '^192\.0\.2\.1$' "$T/picks")" = 0 ] && [ "$(grep -c . "$T/picks")" = 300 ] &&
	ok "weight 0 is never picked (300 answers)" || fail "weight 0 picked"

# A change is visible to the next query, with no reload (< 100 ms).
t0=$(date +%s%N)
CTL weight set www.gslb.test --region r-a --isp isp-x a2=0 a1=5 >/dev/null
t1=$(date +%s%N)
out=$(ans +subnet=10.1.1.0/24)
t2=$(date +%s%N)
[ "$out" = 192.0.2.1 ] && ok "change visible at once ($(( (t2 - t1) / 1000000 )) ms after the commit)" ||
	fail "change not visible: got '$out'"

# Answers: 2 distinct nodes per answer.
CTL service set www.gslb.test --answers 2 >/dev/null
CTL weight set www.gslb.test --region r-a --isp isp-x a1=1 a2=1 >/dev/null
out=$(ans +subnet=10.1.1.0/24)
[ "$out" = "192.0.2.1 192.0.2.2" ] || [ "$out" = "192.0.2.2 192.0.2.1" ] &&
	ok "--answers 2: two distinct nodes" || fail "--answers 2: got '$out'"
CTL service set www.gslb.test --answers 1 >/dev/null

# Stickiness: the same client network keeps its node; removing another
# node moves only that node's clients.
CTL service set www.gslb.test --sticky >/dev/null
CTL node add s1 --addr 192.0.2.101 >/dev/null
CTL node add s2 --addr 192.0.2.102 >/dev/null
CTL node add s3 --addr 192.0.2.103 >/dev/null
CTL weight set www.gslb.test --region r-c s1=100 s2=100 s3=100 >/dev/null
: > "$T/sticky1"
for i in $(seq 0 59); do echo "www.gslb.test A +subnet=10.4.$i.0/24"; done > "$T/sb"
dig @127.0.0.1 -p "$PORT" +short -f "$T/sb" > "$T/sticky1"
dig @127.0.0.1 -p "$PORT" +short -f "$T/sb" > "$T/sticky2"
cmp -s "$T/sticky1" "$T/sticky2" && ok "sticky: 60 networks keep their nodes" || fail "sticky: answers changed"
[ "$(sort -u "$T/sticky1" | wc -l)" = 3 ] && ok "sticky: clients spread over all 3 nodes" || fail "sticky spread: $(sort -u "$T/sticky1" | tr '\n' ' ')"
out=$(q www.gslb.test A +subnet=10.4.9.0/24)
expect_has "$out" "CLIENT-SUBNET: 10\.4\.9\.0/24/24" "sticky: scope is the /24 the pick depends on"
CTL weight set www.gslb.test --region r-c s1=100 s2=100 >/dev/null
dig @127.0.0.1 -p "$PORT" +short -f "$T/sb" > "$T/sticky3"
moved=$(paste "$T/sticky1" "$T/sticky3" | awk '$1 != $2 && $1 != "192.0.2.103"' | wc -l)
[ "$moved" = 0 ] && ok "sticky: removing s3 moved only s3's clients" || fail "sticky: $moved other clients moved"
CTL service set www.gslb.test --no-sticky >/dev/null

# All nodes of the row down: open (default) answers as if healthy,
# fallback goes down the chain, empty gives NODATA.
CTL node set a3 --admin down >/dev/null
out=$(ans +subnet=10.2.1.0/24)
[ "$out" = 192.0.2.3 ] && ok "all-down open: answered as if healthy" || fail "open: got '$out'"
CTL service set www.gslb.test --all-down fallback >/dev/null
out=$(ans +subnet=10.2.1.0/24)
[ "$out" = 192.0.2.5 ] && ok "all-down fallback: next row of the chain" || fail "fallback: got '$out'"
CTL service set www.gslb.test --all-down empty >/dev/null
out=$(q www.gslb.test A +subnet=10.2.1.0/24)
expect_count "$out" ANSWER 0 "all-down empty: NODATA"
# The outage is r-a/isp-y's alone: scoped to its network, and cached for
# the short TTL only, as the row is moving (a3 just went down).
expect_has "$out" "CLIENT-SUBNET: 10\.2\.1\.0/24/16" "all-down empty: the deciding scope"
expect_has "$out" "^gslb\.test\.[[:space:]]+10[[:space:]]+IN[[:space:]]+SOA" "all-down empty: SOA TTL = short TTL"
CTL node set a3 --admin auto >/dev/null
out=$(ans +subnet=10.2.1.0/24)
[ "$out" = 192.0.2.3 ] && ok "node back: answers again" || fail "admin auto: got '$out'"

# A CNAME node answers with its CNAME alone; a service beats a wildcard.
CTL service add x.wild.gslb.test >/dev/null
CTL weight set x.wild.gslb.test cdn=1 >/dev/null
out=$(q x.wild.gslb.test A)
expect_has "$out" "^x\.wild\.gslb\.test\.[[:space:]]+30[[:space:]]+IN[[:space:]]+CNAME[[:space:]]+edge\.other\.example\.$" "CNAME node"
expect_count "$out" ANSWER 1 "only the CNAME"
out=$(q x.wild.gslb.test A +subnet=10.2.0.0/24)
expect_has "$out" "CLIENT-SUBNET: 10\.2\.0\.0/24/0" "CNAME node of a (*, *)-only service: scope 0"
CTL weight set x.wild.gslb.test --region r-a cdn=1 >/dev/null
out=$(q x.wild.gslb.test A +subnet=10.2.0.0/24)
expect_has "$out" "CLIENT-SUBNET: 10\.2\.0\.0/24/16" "CNAME node of a client's row: the deciding scope"
out=$(q x.wild.gslb.test A +subnet=10.4.0.0/24)
expect_has "$out" "CLIENT-SUBNET: 10\.4\.0\.0/24/16" "CNAME node of (*, *) beside a client row: the deciding scope"
CTL weight del x.wild.gslb.test --region r-a >/dev/null
out=$(q y.wild.gslb.test A +short)
[ "$out" = 192.0.2.99 ] && ok "other names still match the wildcard" || fail "wildcard: '$out'"
# A service without rows: NODATA.
CTL service add empty.gslb.test >/dev/null
out=$(q empty.gslb.test A)
expect_status "$out" NOERROR "service without rows: NOERROR"
expect_count "$out" ANSWER 0 "service without rows: NODATA"
# Over TCP too.
out=$(q www.gslb.test A +tcp +subnet=10.4.1.0/24 +short)
[ -n "$out" ] && ok "GSLB over TCP" || fail "GSLB over TCP"

# explain uses the same code: the row and the scope match the server.
out=$(CTL explain www.gslb.test --client 10.2.3.0/24)
expect_has "$out" "region=r-a isp=isp-y network=10\.2\.0\.0/16" "explain: location"
expect_has "$out" "row +region,\*" "explain: row"
expect_has "$out" "ecs scope 16" "explain: scope"
out=$(CTL --json explain www.gslb.test --client 10.2.3.0/24)
expect_has "$out" '"row": "region,\*"' "explain --json"

# SIGHUP reads the CIDR file again: the resolver moves to r-c.
sed -i 's/^127\.0\.0\.0\/8 .*/127.0.0.0\/8     region=r-c isp=isp-z/' "$T/over.nets"
kill -HUP "$PID"
for _ in $(tseq 30); do grep -q "reload: done" "$T/gslbd.log" && break; sleep 0.1; done
out=$(q www.gslb.test A +short)
case "$out" in 192.0.2.10[12]) ok "nets file reloaded on SIGHUP ($out)" ;;
*) fail "nets reload: got '$out'" ;; esac
# A bad line in the nets file: the reload is refused, answers unchanged.
echo "300.1.2.0/24 region=r-a" >> "$T/over.nets"
kill -HUP "$PID"
for _ in $(tseq 30); do grep -q "over.nets:4" "$T/gslbd.log" && break; sleep 0.1; done
expect_has "$(cat "$T/gslbd.log")" "over\.nets:4" "bad nets line reported with its line"
out=$(q www.gslb.test A +short)
case "$out" in 192.0.2.10[12]) ok "bad nets file: previous data kept" ;;
*) fail "after bad nets: got '$out'" ;; esac
finish
