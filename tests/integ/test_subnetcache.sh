#!/bin/bash
# Through a caching resolver that keeps answers per ECS scope (Unbound
# with its subnetcache module, started here on loopback in front of
# gslbd): a negative answer that only one region gets must stay with that
# region's clients, and must not outlive the service's TTL.  A NODATA
# with scope 0 would be cached for every client (RFC 7871 §7.4), and with
# the zone's negative TTL rather than the service's.
. "$(dirname "$0")/lib.sh"

UNBOUND=${UNBOUND:-/usr/sbin/unbound}
if [ ! -x "$UNBOUND" ]; then
	echo "SKIP: $UNBOUND not installed"
	exit 77
fi

# Guangdong's row has no IPv6 node, Beijing's has one.
geo_mmdb <<'EOG'
14.16.0.0/12     cn-gd  ctcc  4134
36.110.0.0/16    cn-bj  ctcc  4134
EOG
# The zone's negative TTL (min of SOA TTL and MINIMUM) is 300 s, far
# beyond the service's TTL.
cat > "$T/z.zone" <<'EOZ'
$TTL 300
@   SOA ns1 host 1 3600 600 86400 300
    NS  ns1
ns1 A   192.0.2.53
EOZ
write_conf gslb.test z.zone "geoip:
  database: geo.mmdb"
gslbd_start

STTL=4
CTL service add www.gslb.test --ttl $STTL --short-ttl 2 >/dev/null
CTL node add gd1 --addr 192.0.2.31 --region cn-gd --isp ctcc >/dev/null
CTL node add bj1 --addr 192.0.2.11 --addr 2001:db8:11::1 --region cn-bj --isp ctcc >/dev/null
CTL weight set www.gslb.test --region cn-gd gd1=100 >/dev/null
CTL weight set www.gslb.test --region cn-bj bj1=100 >/dev/null

# Unbound on its own port, in this test's directory, stopped by PID.
UPORT=$((PORT + 1))
U=$T/unbound
mkdir -p "$U"
{ unbound_server_conf "$U" "$UPORT" "subnetcache iterator"; cat <<EOU
stub-zone:
  name: "gslb.test"
  stub-addr: 127.0.0.1@$PORT
remote-control:
  control-enable: no
EOU
} > "$U/unbound.conf"
UPID=
stop_unbound() { stop_pid "$UPID"; UPID=; }
trap 'stop_unbound; cleanup' EXIT
"$UNBOUND" -d -c "$U/unbound.conf" >>"$U/unbound.out" 2>&1 &
UPID=$!
# Through Unbound, with the client's subnet in the query.
rq() { # type subnet [dig args]
	local type=$1 subnet=$2
	shift 2
	dig @127.0.0.1 -p "$UPORT" +time=2 +tries=1 www.gslb.test "$type" \
		+subnet="$subnet" "$@" 2>&1
}
unbound_up() { dig @127.0.0.1 -p "$UPORT" +time=1 +tries=1 ns1.gslb.test A +short 2>/dev/null | grep -q 192.0.2.53; }
if ! wait_until 10 unbound_up; then
	echo "unbound did not start:"; cat "$U/unbound.out" "$U/unbound.log" 2>/dev/null
	exit 1
fi
ok "unbound answers in front of gslbd"

GD=14.16.1.0/24 BJ=36.110.1.0/24
# What gslbd itself says to each, for the record.
q www.gslb.test AAAA +subnet=$GD | grep -E '^; CLIENT-SUBNET|IN.SOA' | sed 's/^/    gslbd, Guangdong: /'
q www.gslb.test AAAA +subnet=$BJ | grep -E '^; CLIENT-SUBNET|^www.*IN.AAAA' | sed 's/^/    gslbd, Beijing: /'

# Beijing first, then Guangdong's NODATA, then Beijing again: the
# Beijing answer must survive the Guangdong one in the resolver's cache.
out=$(rq AAAA $BJ +short)
[ "$out" = 2001:db8:11::1 ] && ok "Beijing AAAA through the resolver" ||
	fail "Beijing AAAA through the resolver: got '$out'"
out=$(rq AAAA $GD)
expect_status "$out" NOERROR "Guangdong AAAA through the resolver: NOERROR"
expect_count "$out" ANSWER 0 "Guangdong AAAA through the resolver: NODATA"
out=$(rq AAAA $BJ +short)
[ "$out" = 2001:db8:11::1 ] &&
	ok "Beijing AAAA still answered after Guangdong's NODATA" ||
	fail "Beijing AAAA after Guangdong's NODATA: got '${out:-NODATA}'"
# A Beijing network the resolver has not seen yet: not Guangdong's NODATA.
out=$(rq AAAA 36.110.9.0/24 +short)
[ "$out" = 2001:db8:11::1 ] &&
	ok "another Beijing network gets its AAAA after Guangdong's NODATA" ||
	fail "another Beijing network after Guangdong's NODATA: got '${out:-NODATA}'"

# The Guangdong NODATA is cached for at most the service's TTL: give
# Guangdong's row an IPv6 node and poll until the resolver has it.
out=$(rq AAAA $GD)
soa_ttl=$(section "$out" AUTHORITY | awk '$4 == "SOA" { print $2; exit }')
if [ -n "$soa_ttl" ] && [ "$soa_ttl" -le $STTL ]; then
	ok "resolver's NODATA TTL $soa_ttl <= service TTL $STTL"
else fail "resolver's NODATA TTL ${soa_ttl:-none} > service TTL $STTL"; fi
CTL node set gd1 --addr 192.0.2.31 --addr 2001:db8:31::1 >/dev/null
gd6() { [ "$(rq AAAA $GD +short)" = 2001:db8:31::1 ]; }
t0=$SECONDS
if wait_until $((STTL + 4)) gd6; then
	ok "Guangdong's NODATA expired after the service TTL ($((SECONDS - t0)) s)"
else fail "Guangdong's NODATA outlived the service TTL: '$(rq AAAA $GD +short)' after $((SECONDS - t0)) s"; fi
stop_unbound
finish
