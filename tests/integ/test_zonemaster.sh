#!/bin/bash
# The signed demo zone as Zonemaster sees it: zonemaster-cli's DNSSEC
# test cases (--test dnssec) against gslbd as the zone's only name
# server (--ns), with the DS that `gslbctl dnssec ds` prints (--ds) and a
# private root hints file (--hints), report nothing above INFO, for
# ECDSA P-256 and Ed25519; a wrong DS must give an ERROR, so that a clean
# report means the DS and the signatures were checked.  Zonemaster only
# asks port 53, so gslbd runs in a network namespace this test makes,
# with one address of its own (192.0.2.53 on its loopback) and no way
# out; that takes root.
. "$(dirname "$0")/lib.sh"

if ! command -v zonemaster-cli >/dev/null || ! command -v ip >/dev/null; then
	echo "SKIP: zonemaster-cli or ip not installed"
	exit 77
fi
if [ "$(id -u)" != 0 ]; then
	echo "SKIP: a network namespace for port 53 needs root"
	exit 77
fi
NS=gslbzm$$
ADDR=192.0.2.53
ip netns add "$NS" || { echo "SKIP: cannot make a network namespace"; exit 77; }
ip -n "$NS" link set lo up
ip -n "$NS" addr add "$ADDR/32" dev lo
cleanup() { stop_pid "$PID"; ip netns del "$NS" 2>/dev/null; }
in_ns() { ip netns exec "$NS" "$@"; }

Z=cdn.example.test
cp "$ROOT/zones/$Z.zone" "$T/"
printf '. 3600000 NS a.root.test.\na.root.test. 3600000 A %s\n' "$ADDR" > "$T/hints"

start_in_ns() {
	ip netns exec "$NS" "$GSLBD" -c "$T/gslbd.conf" >>"$T/gslbd.log" 2>&1 &
	PID=$!
	for _ in $(tseq 100); do
		in_ns dig @"$ADDR" +time=1 +tries=1 id.server CH TXT >/dev/null 2>&1 && return 0
		kill -0 "$PID" 2>/dev/null || break
		sleep 0.1
	done
	fail "gslbd did not start in the namespace"
	cat "$T/gslbd.log"
	exit 1
}

zm() { # ds-file [level]
	local ds
	ds=$(awk '{ print $4 "," $5 "," $6 "," $7 }' "$1")
	in_ns timeout "$(tscale 120)" zonemaster-cli --no-ipv6 --hints "$T/hints" \
		--ns "ns1.$Z/$ADDR" --ds "$ds" --test dnssec --level "${2:-INFO}" "$Z" 2>&1
}

check_alg() { # alg number
	local alg=$1 num=$2 out
	rm -rf "$T/db" "$T/keys"
	mkdir "$T/keys"
	chmod 700 "$T/keys"
	cat > "$T/gslbd.conf" <<EOC
server:
  listen: [ "$ADDR@53" ]
  workers: 1
  identity: ns1.$Z
  udp-max-payload: 1232
zones:
  - name: $Z
    file: $Z.zone
database:
  path: db
geoip:
  database: $ROOT/geoip/demo.mmdb
  region: [ region ]
  isp: [ isp ]
dnssec:
  keystore: keys
EOC
	CTL --offline apply "$ROOT/zones/demo-gslb.json" >/dev/null 2>&1 || fail "$alg: apply the demo data"
	CTL --offline dnssec enable "$Z" --algorithm "$alg" >/dev/null || fail "$alg: dnssec enable"
	CTL --offline dnssec ds "$Z" > "$T/ds-$alg.txt"
	start_in_ns
	out=$(zm "$T/ds-$alg.txt")
	echo "$out" | sed "s/^/  $alg: /"
	expect_has "$out" "uses algorithm number $num .*which is OK" "$alg: zonemaster ran the DNSSEC tests"
	expect_not "$out" "^ *[0-9.]+ +(NOTICE|WARNING|ERROR|CRITICAL) " \
		"$alg: zonemaster --test dnssec: nothing above INFO"
	if [ "$alg" = ed25519 ]; then
		sed -E 's/[0-9A-F]{4}$/0000/' "$T/ds-$alg.txt" > "$T/ds-wrong.txt"
		out=$(zm "$T/ds-wrong.txt" WARNING)
		echo "$out" | sed "s/^/  wrong DS: /"
		expect_has "$out" "^ *[0-9.]+ +ERROR " "a wrong DS: zonemaster reports an ERROR"
	fi
	stop_pid "$PID"
	PID=
}

check_alg ecdsap256 13
check_alg ed25519 15
finish
