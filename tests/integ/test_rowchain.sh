#!/bin/bash
# The row chain for clients whose GeoIP entry knows only the region (a
# City-only database) or only the ISP: the (region, *) and (*, ISP) rows
# answer them, explain names the same row, and the ECS scope is the
# network that decided.  A client whose region and ISP are both known
# but who has no (region, ISP) row gets the (region, *) row before the
# (*, ISP) row, both being there.
. "$(dirname "$0")/lib.sh"

cat > "$T/geo.txt" <<'EOG'
101.4.0.0/16     cn-gz  -     -
101.5.0.0/16     -      cmcc  9808
101.6.0.0/16     cn-gz  ctcc  4134
101.7.0.0/16     cn-gz  cmcc  9808
2001:db8:40::/48 cn-gz  -     -
EOG
perl "$ROOT/geoip/build-demo.pl" "$T/geo.txt" "$T/geo.mmdb" >/dev/null || { echo "cannot build mmdb"; exit 1; }
gslb_zone
write_conf gslb.test z.zone "geoip:
  database: geo.mmdb"
gslbd_start

CTL node add gz --addr 192.0.2.1 --addr 2001:db8::1 >/dev/null
CTL node add cm --addr 192.0.2.2 >/dev/null
CTL node add gzct --addr 192.0.2.3 >/dev/null
CTL node add dflt --addr 198.51.100.9 --addr 2001:db8::9 >/dev/null
# r: (cn-gz, *) and (*, *) only, no (region, ISP) row.
CTL service add r.gslb.test >/dev/null
CTL weight set r.gslb.test --region cn-gz gz=1 >/dev/null
CTL weight set r.gslb.test dflt=1 >/dev/null
# i: (*, cmcc) and (*, *) only.
CTL service add i.gslb.test >/dev/null
CTL weight set i.gslb.test --isp cmcc cm=1 >/dev/null
CTL weight set i.gslb.test dflt=1 >/dev/null
# all: every level.
CTL service add all.gslb.test >/dev/null
CTL weight set all.gslb.test --region cn-gz --isp ctcc gzct=1 >/dev/null
CTL weight set all.gslb.test --region cn-gz gz=1 >/dev/null
CTL weight set all.gslb.test --isp cmcc cm=1 >/dev/null
CTL weight set all.gslb.test dflt=1 >/dev/null

ans() { q "$1" "${3:-A}" +short +subnet="$2" | tr '\n' ' ' | sed 's/ $//'; }
check() { # name subnet want what
	local out
	out=$(ans "$1" "$2")
	[ "$out" = "$3" ] && ok "$4" || fail "$4: got '$out', want $3"
}
check r.gslb.test 101.4.1.0/24 192.0.2.1 "region-only client, service without (region, isp) rows: (region, *) row"
check r.gslb.test 101.5.1.0/24 198.51.100.9 "isp-only client of a region-row service: (*, *) row"
check i.gslb.test 101.5.1.0/24 192.0.2.2 "isp-only client, service without (region, isp) rows: (*, isp) row"
check i.gslb.test 101.4.1.0/24 198.51.100.9 "region-only client of an isp-row service: (*, *) row"
check all.gslb.test 101.4.1.0/24 192.0.2.1 "region-only client, every level present: (region, *) row"
check all.gslb.test 101.5.1.0/24 192.0.2.2 "isp-only client, every level present: (*, isp) row"
check all.gslb.test 101.6.1.0/24 192.0.2.3 "both known: (region, isp) row"
check all.gslb.test 101.7.1.0/24 192.0.2.1 "both known, no (region, isp) row: (region, *) before (*, isp)"
check all.gslb.test 8.8.8.0/24 198.51.100.9 "nothing known: (*, *) row"
out=$(ans r.gslb.test 2001:db8:40::/56 AAAA)
[ "$out" = 2001:db8::1 ] && ok "IPv6 region-only client: (region, *) row" || fail "IPv6 region-only: got '$out'"

# The scope is the network that decided.
out=$(q r.gslb.test A +subnet=101.4.1.0/24)
expect_has "$out" "CLIENT-SUBNET: 101\.4\.1\.0/24/16" "region-only client: scope /16"
out=$(q i.gslb.test A +subnet=101.5.1.0/24)
expect_has "$out" "CLIENT-SUBNET: 101\.5\.1\.0/24/16" "isp-only client: scope /16"
out=$(q r.gslb.test AAAA +subnet=2001:db8:40::/56)
expect_has "$out" "CLIENT-SUBNET: 2001:db8:40::/56/48" "IPv6 region-only client: scope /48"

# explain agrees.
out=$(CTL explain r.gslb.test --client 101.4.1.0/24)
expect_has "$out" "region=cn-gz isp=\* network=101\.4\.0\.0/16" "explain: region-only location"
expect_has "$out" "^row +region,\*" "explain: (region, *) row"
expect_has "$out" "gz .*<- picked" "explain: gz picked"
expect_has "$out" "ecs scope 16" "explain: scope 16"
out=$(CTL explain i.gslb.test --client 101.5.1.0/24)
expect_has "$out" "region=\* isp=cmcc" "explain: isp-only location"
expect_has "$out" "^row +\*,isp" "explain: (*, isp) row"
expect_has "$out" "ecs scope 16" "explain: isp-only scope 16"

finish
