#!/bin/bash
# Online signing, checked by real validators: Unbound (with the DS that
# `gslbctl dnssec ds` prints as its trust anchor, and its subnetcache
# module sending the client's subnet) must set AD on a static answer, on
# the GSLB answers of two regions, on a CNAME node's answer, on a compact
# NXDOMAIN and on NODATA, static and GSLB, and on a sticky answer of two
# nodes; delv, with the DNSKEY as its trust anchor, must fully validate
# answers straight from gslbd (a wildcard, a name in mixed case, the DS
# of a secure delegation and the NSEC of an insecure one included), for
# ECDSA P-256 and Ed25519 zones.  A validator given another key must
# refuse the same answers, so that AD here means the signatures are
# checked.  Signed UDP answers stay within the client's size (TC, then
# TCP), a key made while gslbd runs is served without a signal, Ed25519
# signatures are the same across a restart, and a key file
# that is missing, readable by others or of another algorithm stops the
# start naming the file, and a reload with one keeps the running keys.
. "$(dirname "$0")/lib.sh"

UNBOUND=${UNBOUND:-/usr/sbin/unbound}
if [ ! -x "$UNBOUND" ] || ! command -v delv >/dev/null; then
	echo "SKIP: unbound or delv not installed"
	exit 77
fi

geo_two_regions   # 101.6.0.0/16 cn-gz, 101.7.0.0/16 cn-bj
# A TXT RRset of about 420 bytes: within 512 unsigned, beyond it signed.
long=$(printf 'x%.0s' $(seq 200))
gslb_zone 'www A 192.0.2.80' 'alias CNAME www' 'edge A 192.0.2.90' \
	"long TXT \"$long\" \"$long\"" '*.wild A 192.0.2.7' \
	'sub NS ns.sub' 'ns.sub A 192.0.2.77' 'sec NS ns.sec' 'ns.sec A 192.0.2.78' \
	'sec DS 12345 13 2 3F2B5B8E5C1E9A0D7F6E1B2C3D4E5F60718293A4B5C6D7E8F90123456789ABCD'
mini_zone "$T/ed.zone" 300 81
SPORT=$((PORT + 2))
write_conf_zones "" gslb.test=z.zone ed.test=ed.zone
cat >> "$T/gslbd.conf" <<EOC
geoip:
  database: geo.mmdb
stats:
  listen: [ "127.0.0.1@$SPORT" ]
dnssec:
  keystore: keys
EOC
mkdir "$T/keys"
chmod 700 "$T/keys"

out=$(CTL --offline dnssec enable gslb.test 2>&1)
expect_has "$out" "key [0-9]+ \(ecdsap256\) made for zone gslb.test" "dnssec enable: a P-256 key"
out=$(CTL --offline dnssec enable ed.test --algorithm ed25519 2>&1)
expect_has "$out" "key [0-9]+ \(ed25519\) made for zone ed.test" "dnssec enable --algorithm ed25519"
out=$(CTL --offline dnssec enable gslb.test 2>&1); rc=$?
[ $rc -eq 1 ] && expect_has "$out" "signed already" "dnssec enable twice: refused, exit 1" ||
	fail "dnssec enable twice: exit $rc: $out"
out=$(CTL --offline dnssec keygen ed.test --algorithm rsa 2>&1); rc=$?
[ $rc -eq 1 ] && expect_has "$out" "ecdsap256 \(13\) or ed25519 \(15\)" "keygen --algorithm rsa: refused" ||
	fail "keygen --algorithm rsa: exit $rc: $out"
mode=$(stat -c %a "$T"/keys/Kgslb.test.+013+*.pem)
[ "$mode" = 600 ] && ok "the key file is mode 0600" || fail "key file mode $mode"
out=$(CTL dnssec list --json)
expect_has "$out" '"state": "active"' "dnssec list --json: the keys"
DS=$(CTL dnssec ds gslb.test)
DS_ED=$(CTL dnssec ds ed.test)
expect_has "$DS" '^gslb\.test\. IN DS [0-9]+ 13 2 [0-9A-F]{64}$' "dnssec ds: digest type 2"
expect_has "$DS_ED" '^ed\.test\. IN DS [0-9]+ 15 2 [0-9A-F]{64}$' "dnssec ds: the Ed25519 key"

CTL service add svc.gslb.test --ttl 30 >/dev/null
CTL node add gz1 --addr 192.0.2.11 --region cn-gz >/dev/null
CTL node add bj1 --addr 192.0.2.21 --addr 2001:db8::21 --region cn-bj >/dev/null
CTL node add any1 --addr 192.0.2.31 >/dev/null
CTL weight set svc.gslb.test --region cn-gz gz1=100 >/dev/null
CTL weight set svc.gslb.test --region cn-bj bj1=100 >/dev/null
CTL weight set svc.gslb.test any1=100 >/dev/null
# Sticky, two nodes an answer: an RRset of two addresses per client.
CTL service add st.gslb.test --ttl 30 --sticky --answers 2 >/dev/null
CTL weight set st.gslb.test gz1=1 bj1=1 any1=1 >/dev/null
# Every usable node an answer: an address set, changed while gslbd runs.
CTL service add set.gslb.test --ttl 30 --answers 3 >/dev/null
CTL weight set set.gslb.test gz1=1 bj1=1 any1=1 >/dev/null
CTL service add cn.gslb.test --ttl 30 >/dev/null
CTL node add edge --cname edge.gslb.test >/dev/null
CTL weight set cn.gslb.test edge=100 >/dev/null
gslbd_start

# --- delv, straight to gslbd ---------------------------------------------
anchor() { # zone -> a trust-anchors clause with its DNSKEY
	dig @127.0.0.1 -p "$PORT" +short "$1" DNSKEY |
		awk -v z="$1" '{ k = ""; for (i = 4; i <= NF; i++) k = k $i
			printf "trust-anchors { %s. static-key %s %s %s \"%s\"; };\n", z, $1, $2, $3, k }'
}
anchor gslb.test > "$T/ta-gslb.conf"
anchor ed.test > "$T/ta-ed.conf"
expect_has "$(cat "$T/ta-gslb.conf")" 'static-key 257 3 13 "' "DNSKEY at the apex, asked without DO"
dv() { # anchor-file zone name type
	delv @127.0.0.1 -p "$PORT" -a "$1" +root="$2" "$3" "$4" 2>&1
}
expect_has "$(dv "$T/ta-gslb.conf" gslb.test www.gslb.test A)" "^; fully validated" "delv: static A"
expect_has "$(dv "$T/ta-gslb.conf" gslb.test svc.gslb.test A)" "^; fully validated" "delv: GSLB A (default row)"
expect_has "$(dv "$T/ta-gslb.conf" gslb.test cn.gslb.test A)" "^; fully validated" "delv: a CNAME node"
out=$(dv "$T/ta-gslb.conf" gslb.test st.gslb.test A)
expect_has "$out" "^; fully validated" "delv: a sticky answer of two nodes"
[ "$(grep -c $'\tA\t' <<<"$out")" = 2 ] && ok "the sticky answer has two addresses" ||
	fail "sticky answer: $out"
# An address set, then the same name with a node taken out of it and with
# another TTL: the signature cache keys a GSLB answer by its records as
# written, and each of these must get its own set's signature.
setaddrs() { dig +short @127.0.0.1 -p "$PORT" set.gslb.test A | sort | tr '\n' ' '; }
setttl() { dig +noall +answer @127.0.0.1 -p "$PORT" set.gslb.test A | awk '$4 == "A" { print $2; exit }'; }
out=$(dv "$T/ta-gslb.conf" gslb.test set.gslb.test A)
expect_has "$out" "^; fully validated" "delv: an address set of three nodes"
[ "$(grep -c $'\tA\t' <<<"$out")" = 3 ] && ok "the address set has three addresses" ||
	fail "address set: $out"
before=$(setaddrs)
CTL weight set set.gslb.test gz1=1 any1=1 >/dev/null
wait_until 5 eval '[ "$(setaddrs)" != "$before" ]' && ok "a node out of the set: the answer changes" ||
	fail "the address set did not change: $(setaddrs)"
out=$(dv "$T/ta-gslb.conf" gslb.test set.gslb.test A)
expect_has "$out" "^; fully validated" "delv: the set without the node"
[ "$(grep -c $'\tA\t' <<<"$out")" = 2 ] && ok "the changed set has two addresses" ||
	fail "changed set: $out"
CTL service set set.gslb.test --ttl 20 >/dev/null
wait_until 5 eval '[ "$(setttl)" = 20 ]' && ok "another TTL for the set: the answer has it" ||
	fail "the set's TTL did not change: $(setttl)"
expect_has "$(dv "$T/ta-gslb.conf" gslb.test set.gslb.test A)" "^; fully validated" \
	"delv: the set with another TTL"
CTL weight set set.gslb.test gz1=1 bj1=1 any1=1 >/dev/null
wait_until 5 eval '[ "$(setaddrs)" = "$before" ]' && ok "the node back in the set" ||
	fail "the address set did not come back: $(setaddrs)"
expect_has "$(dv "$T/ta-gslb.conf" gslb.test set.gslb.test A)" "^; fully validated" \
	"delv: the set as at first, with the TTL changed"
expect_has "$(dv "$T/ta-gslb.conf" gslb.test nx.gslb.test A)" "negative response, fully validated" \
	"delv: NXDOMAIN (compact)"
expect_has "$(dv "$T/ta-gslb.conf" gslb.test www.gslb.test AAAA)" "negative response, fully validated" \
	"delv: NODATA"
expect_has "$(dv "$T/ta-gslb.conf" gslb.test gslb.test DNSKEY)" "^; fully validated" "delv: DNSKEY"
expect_has "$(dv "$T/ta-gslb.conf" gslb.test x.wild.gslb.test A)" "^; fully validated" "delv: a wildcard answer"
expect_has "$(dv "$T/ta-gslb.conf" gslb.test WwW.gSlB.tEsT A)" "^; fully validated" "delv: a name in mixed case"
expect_has "$(dv "$T/ta-gslb.conf" gslb.test sec.gslb.test DS)" "^; fully validated" "delv: the DS of a delegation"
expect_has "$(dv "$T/ta-gslb.conf" gslb.test sub.gslb.test DS)" "negative response, fully validated" \
	"delv: no DS at an insecure delegation"
expect_has "$(dv "$T/ta-ed.conf" ed.test www.ed.test A)" "^; fully validated" "delv: Ed25519 A"
expect_has "$(dv "$T/ta-ed.conf" ed.test nx.ed.test A)" "negative response, fully validated" \
	"delv: Ed25519 NXDOMAIN"
# The control: another zone's key as the anchor must not validate.
sed 's/^trust-anchors { ed\.test\./trust-anchors { gslb.test./' "$T/ta-ed.conf" > "$T/ta-wrong.conf"
expect_not "$(dv "$T/ta-wrong.conf" gslb.test www.gslb.test A)" "fully validated" \
	"delv with the wrong key: not validated"

# --- the wire, straight from gslbd ----------------------------------------
out=$(q nx.gslb.test A +dnssec)
expect_status "$out" NOERROR "compact NXDOMAIN: NOERROR"
expect_has "$(section "$out" AUTHORITY)" 'nx\.gslb\.test\..*NSEC.*\\000\.nx\.gslb\.test\. RRSIG NSEC TYPE128' \
	"compact NXDOMAIN: NSEC to \\000.qname with NXNAME"
out=$(section "$(q x.sub.gslb.test A +dnssec)" AUTHORITY)
expect_has "$out" 'sub\.gslb\.test\..*NSEC.*\\000\.sub\.gslb\.test\. NS RRSIG NSEC$' \
	"a referral without DS: the signed NSEC of the cut"
expect_has "$out" 'RRSIG.NSEC ' "a referral without DS: its RRSIG"
expect_not "$out" 'RRSIG.NS ' "a referral: the NS set is not signed"
out=$(section "$(q x.sec.gslb.test A +dnssec)" AUTHORITY)
expect_has "$out" 'RRSIG.DS 13 3 ' "a referral with DS: the signed DS"
out=$(q nx.gslb.test A)
expect_status "$out" NXDOMAIN "without DO: NXDOMAIN as before"
expect_not "$out" "RRSIG|NSEC" "without DO: no DNSSEC records"
out=$(q www.gslb.test AAAA +dnssec)
expect_has "$(section "$out" AUTHORITY)" 'www\.gslb\.test\..*NSEC.*\\000\.www\.gslb\.test\. A RRSIG NSEC$' \
	"NODATA: the bitmap of the types that exist"
out=$(q svc.gslb.test AAAA +dnssec +subnet=101.6.1.0/24)
expect_has "$out" "CLIENT-SUBNET: 101.6.1.0/24/16" "GSLB NODATA keeps its ECS scope"
expect_has "$(section "$out" AUTHORITY)" 'svc\.gslb\.test\..*NSEC.* A RRSIG NSEC$' "GSLB NODATA: NSEC without AAAA"
# Signed UDP answers within the size: TC over UDP, the whole over TCP.
out=$(q long.gslb.test TXT +bufsize=512 +ignore)
expect_noflag "$out" tc "unsigned, the TXT fits 512 bytes"
out=$(q long.gslb.test TXT +dnssec +bufsize=512 +ignore)
expect_flag "$out" tc "signed, it does not: TC"
out=$(q long.gslb.test TXT +dnssec +bufsize=512 +tcp)
expect_has "$(section "$out" ANSWER)" "RRSIG" "over TCP: the TXT with its RRSIG"

# --- Unbound, validating, with the DS as trust anchor ----------------------
UPORT=$((PORT + 1))
unbound_conf() { # dir trust-anchor...
	local d=$1 ta
	shift
	mkdir -p "$d"
	{
		unbound_server_conf "$d" "$UPORT" "subnetcache validator iterator"
		for ta in "$@"; do echo "  trust-anchor: \"$ta\""; done
		unbound_stubs "$PORT" gslb.test ed.test
	} > "$d/unbound.conf"
}
UPID=
stop_unbound() { stop_pid "$UPID"; UPID=; }
trap 'stop_unbound; cleanup' EXIT
start_unbound() { # dir
	"$UNBOUND" -d -c "$1/unbound.conf" >>"$1/unbound.out" 2>&1 &
	UPID=$!
	if ! wait_until 10 unbound_up; then
		echo "unbound did not start:"; cat "$1/unbound.out" "$1/unbound.log" 2>/dev/null
		exit 1
	fi
}
unbound_up() { dig @127.0.0.1 -p "$UPORT" +time=1 +tries=1 +cd ns1.gslb.test A 2>/dev/null | grep -q "status: "; }
rq() { # name type [dig args]
	local name=$1 type=$2
	shift 2
	dig @127.0.0.1 -p "$UPORT" +time=3 +tries=1 +dnssec "$name" "$type" "$@" 2>&1
}
unbound_conf "$T/ub" "${DS/ IN /  }" "${DS_ED/ IN /  }"
start_unbound "$T/ub"
adcheck() { # message expected-answer-regex name type [dig args]
	local msg=$1 want=$2 out
	shift 2
	out=$(rq "$@")
	if grep -Eq "^;; flags:[^;]* ad[ ;]" <<<"$out" && grep -Eq -- "$want" <<<"$out"; then
		ok "unbound: AD on $msg"
	else
		fail "unbound: AD on $msg"; echo "$out" | sed 's/^/    /'
	fi
}
adcheck "a static answer" $'^www\\.gslb\\.test\\.\t.*A\t192\\.0\\.2\\.80$' www.gslb.test A
adcheck "GSLB, cn-gz" $'^svc\\.gslb\\.test\\.\t.*A\t192\\.0\\.2\\.11$' svc.gslb.test A +subnet=101.6.1.0/24
adcheck "GSLB, cn-bj" $'^svc\\.gslb\\.test\\.\t.*A\t192\\.0\\.2\\.21$' svc.gslb.test A +subnet=101.7.1.0/24
adcheck "GSLB AAAA, cn-bj" $'AAAA\t2001:db8::21$' svc.gslb.test AAAA +subnet=101.7.1.0/24
adcheck "a sticky answer, cn-bj" $'^st\\.gslb\\.test\\.\t.*A\t192\\.0\\.2\\.' st.gslb.test A +subnet=101.7.1.0/24
adcheck "a CNAME node" $'^cn\\.gslb\\.test\\.\t.*CNAME\tedge\\.gslb\\.test\\.$' cn.gslb.test A
adcheck "a static CNAME" $'^www\\.gslb\\.test\\.\t.*A\t192\\.0\\.2\\.80$' alias.gslb.test A
adcheck "NXDOMAIN (compact)" "ANSWER: 0," nx.gslb.test A
adcheck "NODATA" "ANSWER: 0," www.gslb.test AAAA
adcheck "GSLB NODATA, cn-gz" "ANSWER: 0," svc.gslb.test AAAA +subnet=101.6.1.0/24
adcheck "an Ed25519 zone" $'A\t192\\.0\\.2\\.81$' www.ed.test A
stop_unbound
# The control: the DS of another key must make the same answers bogus.
wrong=$(sed -E 's/ [0-9A-F]{64}$/ 0000000000000000000000000000000000000000000000000000000000000000/' <<<"$DS")
unbound_conf "$T/ub-wrong" "${wrong/ IN /  }"
start_unbound "$T/ub-wrong"
out=$(rq www.gslb.test A)
expect_status "$out" SERVFAIL "unbound with a wrong DS: SERVFAIL (bogus)"
stop_unbound

# --- metrics --------------------------------------------------------------
metric() { # name transport
	curl -s "http://127.0.0.1:$SPORT/metrics" |
		awk -v n="$1{transport=\"$2\"}" '$1 == n { print $2 }'
}
made=$(metric gslbd_dnssec_signatures_total udp)
q www.gslb.test A +dnssec >/dev/null
hits0=$(metric gslbd_dnssec_cache_hits_total udp)
q www.gslb.test A +dnssec >/dev/null
hits1=$(metric gslbd_dnssec_cache_hits_total udp)
entries=$(metric gslbd_dnssec_cache_entries udp)
[ "${made:-0}" -gt 0 ] && ok "gslbd_dnssec_signatures_total counts ($made)" ||
	fail "gslbd_dnssec_signatures_total: '$made'"
# Two UDP threads per worker: the second query may reach the other one,
# so a few more make sure that one of them answers from its cache.
for _ in 1 2 3 4 5 6; do q www.gslb.test A +dnssec >/dev/null; done
hits2=$(metric gslbd_dnssec_cache_hits_total udp)
[ "${hits2:-0}" -gt "${hits0:-0}" ] && ok "repeated answers come from the cache ($hits0 -> $hits2 hits)" ||
	fail "no cache hits: $hits0 -> $hits1 -> $hits2"
[ "${entries:-0}" -gt 0 ] && ok "gslbd_dnssec_cache_entries ($entries)" ||
	fail "gslbd_dnssec_cache_entries: '$entries'"

# --- a key made while gslbd runs: served within a second, no SIGHUP --------
CTL dnssec keygen ed.test --algorithm ed25519 >/dev/null
two_keys() { [ "$(q ed.test DNSKEY +short | grep -c '^257 3 15 ')" = 2 ]; }
wait_until 5 two_keys && ok "dnssec keygen: the running gslbd serves both DNSKEYs" ||
	fail "dnssec keygen: DNSKEY: $(q ed.test DNSKEY +short)"
n=$(section "$(q www.ed.test A +dnssec)" ANSWER | grep -c RRSIG)
[ "$n" = 2 ] && ok "both active keys sign" || fail "RRSIGs with two keys: $n"
expect_has "$(dv "$T/ta-ed.conf" ed.test www.ed.test A)" "^; fully validated" \
	"delv: still validated, by the first key"

# --- Ed25519: the same signature across a restart -------------------------
sig1=$(q www.ed.test A +dnssec | awk '$4 == "RRSIG" { print $NF, $(NF-1) }')
gslbd_stop
gslbd_start
sig2=$(q www.ed.test A +dnssec | awk '$4 == "RRSIG" { print $NF, $(NF-1) }')
[ -n "$sig1" ] && [ "$sig1" = "$sig2" ] && ok "Ed25519: the same RRSIG after a restart" ||
	fail "Ed25519 RRSIG changed across a restart: '$sig1' / '$sig2'"

# --- bad key files ----------------------------------------------------------
key=$(ls "$T"/keys/Kgslb.test.+013+*.pem)
chmod 644 "$key"
kill -HUP "$PID"
wait_until 5 grep -q "reload failed.*mode 0644" "$T/gslbd.log" &&
	ok "reload with a loose key file: refused, naming it" ||
	{ fail "reload with a loose key file"; tail -5 "$T/gslbd.log"; }
out=$(q www.gslb.test A +dnssec)
expect_has "$(section "$out" ANSWER)" "RRSIG" "after the refused reload: still signed"
gslbd_stop
start_fails() { # message regex
	local out rc=0
	out=$(timeout 20 "$GSLBD" -c "$T/gslbd.conf" 2>&1) || rc=$?
	if [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -Eq -- "$2" <<<"$out"; then ok "$1"
	else fail "$1 (exit $rc)"; echo "$out" | tail -3 | sed 's/^/    /'; fi
}
start_fails "start with a key file readable by others: refused" \
	"key file .*Kgslb\.test\.\+013\+[0-9]+\.pem: mode 0644 lets other users in"
chmod 600 "$key"
mv "$key" "$key.away"
start_fails "start with a missing key file: refused" \
	"key file .*Kgslb\.test\.\+013\+[0-9]+\.pem: No such file"
openssl genpkey -algorithm ed25519 -out "$key" 2>/dev/null
chmod 600 "$key"
start_fails "start with a key of another algorithm: refused" \
	"key file .*\.pem: holds ED25519, but the store says algorithm 13"
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$key" 2>/dev/null
chmod 600 "$key"
start_fails "start with another P-256 key in the file: refused" \
	"key file .*\.pem: holds key tag [0-9]+, not the key [0-9]+ of zone gslb\.test"
mv "$key.away" "$key"
gslbd_start
out=$(q www.gslb.test A +dnssec)
expect_has "$(section "$out" ANSWER)" "RRSIG" "the right file back: signed again"
finish
