#!/bin/bash
# Online signing in cluster mode, with a real 3-member etcd and two gslbd
# instances on loopback:
#  1. `gslbctl dnssec enable` through ns1 goes to etcd: ns2 gets the key
#     records and the key files (its keystore, mode 0600), and both serve
#     the same DNSKEY RRsets;
#  2. delv, with ns1's KSK (CSK) as its trust anchor, fully validates
#     answers of both instances;
#  3. Ed25519 (deterministic): both instances emit byte-identical RRSIGs;
#     ECDSA P-256 (randomised by OpenSSL): the same RRSIG fields (key
#     tag, inception, expiration...) and both signatures validate;
#  4. a ZSK rollover in compressed time, driven by the elected instance
#     through etcd (its steps made by it alone and in the cluster's
#     change log, the new key's file in the other's keystore), with both instances' RRSIGs compared and
#     validated by delv the whole time;
#  5. a key file missing on ns2 (deleted, then a reload): its metric and
#     `cluster status` say so, DO queries of that zone are SERVFAIL while
#     the other zone and queries without DO are answered; a restart
#     brings the file back from etcd and signed answers with it;
#  6. keygen through ns2 (--json: the cluster revision), retire through
#     ns1: both instances serve the DNSKEY RRset each change makes.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster_lib.sh"
command -v delv >/dev/null || { echo "SKIP: delv not installed"; exit 77; }

mini_zone "$T/z.zone" 2 80
LIFE=$(tscale 10)
for i in 1 2; do
	ns_conf "$i"
	mini_zone "$T/ns$i/p.zone" 2 81
	sed -i 's/^    file: z.zone$/    file: z.zone\n  - name: p.test\n    file: p.zone/' \
		"$T/ns$i/gslbd.conf"
	cat >> "$T/ns$i/gslbd.conf" <<EOC
dnssec:
  keystore: keys
  dnskey-ttl: 2
  zsk-lifetime: $LIFE
  publish-safety: 1
  retire-safety: 1
  max-zone-ttl: 2
EOC
done
etcd_cluster_start || exit 1
for i in 1 2; do ns_start "$i"; done

# 1. Keys through the cluster.
out=$(CTLN 1 dnssec enable gslb.test --split --algorithm ed25519 2>&1)
expect_has "$out" "^cluster revision [0-9]+: dnssec enable gslb.test" \
	"dnssec enable (Ed25519, KSK and ZSK) through the cluster"
out=$(CTLN 1 dnssec enable p.test 2>&1)
expect_has "$out" "key [0-9]+ \(ecdsap256\) made for zone p.test" "dnssec enable p.test (P-256 CSK)"
n=$(ETCDCTL get --prefix /gslbd/keystore/ --keys-only 2>/dev/null | grep -c .)
expect_has "$n" "^3$" "three key files in etcd (keystore/)"
files_at_2() { [ "$(ls "$T/ns2/keys" 2>/dev/null | grep -c '\.pem$')" = 3 ]; }
wait_until 10 files_at_2 && ok "ns2 wrote the three key files into its keystore" ||
	fail "ns2's keystore: $(ls "$T/ns2/keys" 2>&1)"
mode=$(stat -c %a "$T"/ns2/keys/*.pem | sort -u)
expect_has "$mode" "^600$" "ns2's key files are mode 0600"
for f in "$T"/ns1/keys/*.pem; do
	cmp -s "$f" "$T/ns2/keys/$(basename "$f")" || fail "key file $(basename "$f") differs at ns2"
done
dk() { dig @127.0.0.1 -p "${NSPORT[$1]}" +norec +short "$2" DNSKEY | sort; }
same_keys() { [ -n "$(dk 1 "$1")" ] && [ "$(dk 1 "$1")" = "$(dk 2 "$1")" ]; }
for z in gslb.test p.test; do
	wait_until 10 same_keys "$z" && ok "$z: both instances serve the same DNSKEY RRset" ||
		fail "$z DNSKEY: ns1 $(dk 1 "$z") / ns2 $(dk 2 "$z")"
done
expect_has "$(CTLN 2 dnssec list 2>&1)" "zsk" "gslbctl at ns2 lists the keys made at ns1"

# 2. delv, with the SEP key of ns1 as anchor, at both.
anchor() { # zone
	dk 1 "$1" | awk -v z="$1" '$1 == 257 { k = ""; for (i = 4; i <= NF; i++) k = k $i
		printf "trust-anchors { %s. static-key %s %s %s \"%s\"; };\n", z, $1, $2, $3, k }'
}
anchor gslb.test > "$T/ta-gslb.conf"
anchor p.test > "$T/ta-p.conf"
dv() { # i anchor zone name type
	delv @127.0.0.1 -p "${NSPORT[$1]}" -a "$2" +root="$3" "$4" "$5" 2>&1
}
for i in 1 2; do
	expect_has "$(dv "$i" "$T/ta-gslb.conf" gslb.test www.gslb.test A)" "^; fully validated" \
		"ns$i: delv validates www.gslb.test A (Ed25519)"
	expect_has "$(dv "$i" "$T/ta-p.conf" p.test www.p.test A)" "^; fully validated" \
		"ns$i: delv validates www.p.test A (P-256)"
	expect_has "$(dv "$i" "$T/ta-gslb.conf" gslb.test nope.gslb.test A)" "negative response, fully validated" \
		"ns$i: delv validates a compact NXDOMAIN"
done

# 3. The RRSIGs of both instances.
sigs() { # i name type: the RRSIG records' rdata
	dig @127.0.0.1 -p "${NSPORT[$1]}" +norec +dnssec +noall +answer +time=2 +tries=1 "$2" "$3" |
		awk '$4 == "RRSIG" { $1 = $2 = $3 = ""; print }' | sort
}
a=$(sigs 1 www.gslb.test A); b=$(sigs 2 www.gslb.test A)
[ -n "$a" ] && [ "$a" = "$b" ] && ok "Ed25519: identical RRSIG at both ($(cut -c1-60 <<<"$a")...)" ||
	fail "Ed25519 RRSIG: ns1 [$a] ns2 [$b]"
a=$(sigs 1 gslb.test DNSKEY); b=$(sigs 2 gslb.test DNSKEY)
[ -n "$a" ] && [ "$a" = "$b" ] && ok "Ed25519: identical DNSKEY RRSIG at both" ||
	fail "Ed25519 DNSKEY RRSIG: ns1 [$a] ns2 [$b]"
# P-256: the fields before the signature (type, algorithm, labels, TTL,
# expiration, inception, key tag, signer) are the same.
fields() { awk '{ print $1, $2, $3, $4, $5, $6, $7, $8, $9 }' <<<"$1"; }
a=$(sigs 1 www.p.test A); b=$(sigs 2 www.p.test A)
[ -n "$a" ] && [ "$(fields "$a")" = "$(fields "$b")" ] &&
	ok "P-256: the same RRSIG fields at both ($(fields "$a"))" ||
	fail "P-256 RRSIG fields: ns1 [$a] ns2 [$b]"
# Not a check: OpenSSL 3.0 randomises ECDSA, so the bytes differ.
[ "$a" != "$b" ] && echo "# P-256: the signature bytes differ between the instances (both validated above)"

# 4. A ZSK rollover driven by the elected instance.
lead_of() { mval "$(scrape "$1")" gslbd_cluster_leader; }
leader=""
one_leader() { for i in 1 2; do [ "$(lead_of "$i")" = 1 ] && { leader=$i; return 0; }; done; return 1; }
wait_until 10 one_leader || fail "an elected instance"
other=$((3 - ${leader:-1}))
ok "ns$leader is elected"
withdrawn() { grep -q "rollover zsk gslb\.test: key [0-9]* withdrawn" "$T/ns$leader.log"; }
end=$((SECONDS + LIFE + $(tscale 40)))
iter=0 differ=0 bad=0 late=0
while ! withdrawn && [ $SECONDS -lt $end ]; do
	iter=$((iter + 1))
	same=0
	# A step reaches each instance within about a second (the watch,
	# then the once-a-second check for changed keys): apart meanwhile.
	for _ in $(seq 15); do
		a=$(sigs 1 www.gslb.test A); b=$(sigs 2 www.gslb.test A)
		[ -n "$a" ] && [ "$a" = "$b" ] && { same=1; break; }
		differ=$((differ + 1))
		sleep 0.1
	done
	[ $same = 1 ] || late=$((late + 1))
	for i in 1 2; do
		dv "$i" "$T/ta-gslb.conf" gslb.test www.gslb.test A | grep -q "^; fully validated" ||
			bad=$((bad + 1))
	done
	sleep 0.3
done
withdrawn && ok "the ZSK rollover completed ($iter rounds)" || fail "the ZSK rollover did not complete"
[ $iter -gt 5 ] && [ $bad = 0 ] && ok "delv validated both instances throughout ($((2 * iter)) answers)" ||
	fail "during the rollover: $bad of $((2 * iter)) answers did not validate"
[ $late = 0 ] && ok "identical RRSIGs at both throughout ($differ reads apart for under 1.5 s, a step in flight)" ||
	fail "RRSIGs apart at $late of $iter rounds"
msgs=$(grep -o "rollover zsk gslb\.test: .*" "$T/ns$leader.log")
expect_has "$msgs" "key [0-9]+ published" "the elected instance made the steps: published"
expect_has "$msgs" "key [0-9]+ signs, key [0-9]+ stays published" "... switch"
expect_not "$(grep "dnssec rollover" "$T/ns$other.log" | grep -v "applied revision")" "." \
	"ns$other made no step itself"
expect_has "$(cat "$T/ns$other.log")" "applied revision [0-9]+: dnssec rollover zsk gslb.test" \
	"ns$other applied the steps from etcd"
[ "$(ls "$T/ns$other/keys" | grep -c '\.pem$')" = 4 ] && ok "the new ZSK's file reached ns$other" ||
	fail "ns$other keystore: $(ls "$T/ns$other/keys")"
# The steps are in the cluster's change log, the same at both, marked
# as the daemon's own.
steps() { CTLN "$1" log --auto 2>&1 | awk '$3 == "dnssec" && /dnssec add gslb\.test/'; }
l1=$(steps 1); l2=$(steps 2)
[ "$(grep -c . <<<"$l1")" -ge 3 ] && [ "$l1" = "$l2" ] &&
	ok "the steps in the cluster's log, the same at both ($(grep -c . <<<"$l1") records)" ||
	fail "the steps in the cluster's log: ns1 [$l1] ns2 [$l2]"
same_dnskey_sig() { a=$(sigs 1 gslb.test DNSKEY); b=$(sigs 2 gslb.test DNSKEY); [ -n "$a" ] && [ "$a" = "$b" ]; }
wait_until 5 same_dnskey_sig && ok "after the rollover: identical DNSKEY RRSIGs" ||
	fail "after the rollover, DNSKEY RRSIG: ns1 [$a] ns2 [$b]"

# 5. A key file missing at ns2.  No more rollovers (lifetime 0, a
# reload): no later step reloads the keys by chance.
for i in 1 2; do
	sed -i "s/^  zsk-lifetime: .*/  zsk-lifetime: 0/" "$T/ns$i/gslbd.conf"
	before=$(grep -c 'reload: done' "$T/ns$i.log")
	kill -HUP "${NSPID[$i]}"
	reloaded() { [ "$(grep -c 'reload: done' "$T/ns$1.log")" -gt "$2" ]; }
	wait_until 10 reloaded "$i" "$before" || fail "ns$i reloaded"
done
missing_of() { mval "$(scrape 2)" gslbd_cluster_dnssec_keys_missing; }
expect_has "$(missing_of)" "^0$" "ns2: no key missing"
pf=$(ls "$T"/ns2/keys/Kp.test.+013+*.pem)
rm -f "$pf"
kill -HUP "${NSPID[2]}"
miss1() { [ "$(missing_of)" = 1 ]; }
wait_until 10 miss1 && ok "key file deleted, reload: gslbd_cluster_dnssec_keys_missing 1" ||
	fail "keys missing: $(missing_of)"
out=$(dig @127.0.0.1 -p "${NSPORT[2]}" +norec +dnssec www.p.test A)
expect_status "$out" SERVFAIL "ns2: a DO query of the zone without its key: SERVFAIL"
out=$(dig @127.0.0.1 -p "${NSPORT[2]}" +norec www.p.test A)
expect_status "$out" NOERROR "ns2: the same query without DO: answered"
expect_has "$(dv 2 "$T/ta-gslb.conf" gslb.test www.gslb.test A)" "^; fully validated" \
	"ns2: the other zone still validates"
expect_has "$(CTLN 2 cluster status 2>&1)" "zone p.test: key [0-9]+ \(active\) is MISSING .*SERVFAIL" \
	"cluster status at ns2 names the missing key"
expect_has "$(CTLN 2 --json cluster status 2>&1)" '"dnssec_keys_missing": \[' "cluster status --json"
expect_not "$(CTLN 1 cluster status 2>&1)" "MISSING" "cluster status at ns1: nothing missing"
expect_has "$(cat "$T/ns2.log")" "key file .* is not in the keystore: the zone's signed answers are SERVFAIL" \
	"ns2 logs the missing key"
ns_stop 2
ns_start 2
miss0() { [ "$(missing_of)" = 0 ] && [ -e "$pf" ]; }
wait_until 5 miss0 && ok "ns2 restarted: the file is back from etcd, nothing missing" ||
	fail "after the restart: missing $(missing_of), file $(ls "$pf" 2>&1)"
expect_has "$(dv 2 "$T/ta-p.conf" p.test www.p.test A)" "^; fully validated" \
	"ns2 restarted: p.test validates again"

# 6. keygen at ns2, retire at ns1.
out=$(CTLN 2 --json dnssec keygen p.test 2>&1)
expect_has "$out" '"revision": [0-9]+' "keygen through ns2 --json: the cluster revision"
[ "$(grep -c '^{' <<<"$out")" = 1 ] && ok "keygen --json: one document" || fail "keygen --json: $out"
tag=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["key"]["tag"])' <<<"$out" 2>/dev/null)
two() { [ "$(dk 1 p.test | grep -c '^257 3 13 ')" = 2 ] && same_keys p.test; }
wait_until 10 two && ok "key $tag made at ns2: both serve two DNSKEYs" ||
	fail "after keygen at ns2: ns1 $(dk 1 p.test) / ns2 $(dk 2 p.test)"
for i in 1 2; do
	expect_has "$(dv "$i" "$T/ta-p.conf" p.test www.p.test A)" "^; fully validated" \
		"ns$i: p.test validates, signed by both keys"
done
out=$(CTLN 1 dnssec retire p.test "$tag" 2>&1)
expect_has "$out" "^cluster revision [0-9]+: dnssec retire p.test key $tag" "retire through ns1"
one() { [ "$(dk 2 p.test | grep -c '^257 3 13 ')" = 1 ] && same_keys p.test; }
wait_until 10 one && ok "retired: both serve one DNSKEY again" ||
	fail "after retire: ns1 $(dk 1 p.test) / ns2 $(dk 2 p.test)"
finish
