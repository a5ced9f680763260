#!/bin/bash
# Signing keys beyond the single CSK: a zone enabled with --split has a
# KSK (flags 257) that signs only the DNSKEY RRset and a ZSK (256) that
# signs everything else, which delv validates with the KSK as its trust
# anchor, and `dnssec ds` gives the KSK's DS alone.  `dnssec import`
# takes keys that ldns-keygen wrote in BIND's private-key format
# (ECDSA P-256 and Ed25519) and PEM files, keeps their key tags, and
# names the file and line of a malformed one or one of another
# algorithm; `dnssec retire` withdraws a key at once but refuses the
# last key of a role.
. "$(dirname "$0")/lib.sh"

if ! command -v delv >/dev/null || ! command -v ldns-keygen >/dev/null; then
	echo "SKIP: delv or ldns-keygen not installed"
	exit 77
fi

gslb_zone 'www A 192.0.2.80'
mini_zone "$T/im.zone" 300 81
write_conf_zones "" gslb.test=z.zone im.test=im.zone
cat >> "$T/gslbd.conf" <<EOC
dnssec:
  keystore: keys
EOC

# --- the split ---------------------------------------------------------
out=$(CTL dnssec enable gslb.test --split 2>&1)
expect_has "$out" "dnssec enable gslb.test \(ecdsap256, KSK and ZSK\)" "enable --split: one change"
out=$(CTL dnssec status gslb.test)
expect_has "$out" "gslb\.test +[0-9]+ ecdsap256 +257 ksk +active" "enable --split: a KSK, flags 257"
expect_has "$out" "gslb\.test +[0-9]+ ecdsap256 +256 zsk +active" "enable --split: a ZSK, flags 256"
KSK=$(awk '$5 == "ksk" { print $2 }' <<<"$out")
ZSK=$(awk '$5 == "zsk" { print $2 }' <<<"$out")
DS=$(CTL dnssec ds gslb.test)
[ "$(wc -l <<<"$DS")" = 1 ] && expect_has "$DS" "^gslb\.test\. IN DS $KSK 13 2 [0-9A-F]{64}$" \
	"dnssec ds: the KSK's DS alone" || fail "dnssec ds: $DS"
out=$(CTL dnssec keygen gslb.test 2>&1)
expect_has "$out" "dnssec keygen gslb.test \(ecdsap256 zsk\)" "keygen in a split zone: a ZSK by default"
ZSK2=$(CTL dnssec status gslb.test | awk -v k="$ZSK" '$5 == "zsk" && $2 != k { print $2 }')
out=$(CTL dnssec retire gslb.test "$KSK" 2>&1); rc=$?
[ $rc = 1 ] && expect_has "$out" "last active key that signs the DNSKEY set" \
	"retire of the only KSK: refused" || fail "retire of the only KSK: exit $rc: $out"
out=$(CTL dnssec retire gslb.test "$ZSK2" 2>&1)
expect_has "$out" "key $ZSK2 left the DNSKEY set of gslb.test" "retire of the second ZSK"
out=$(CTL dnssec retire gslb.test "$ZSK" 2>&1); rc=$?
[ $rc = 1 ] && expect_has "$out" "last active key that signs the data" \
	"retire of the last ZSK: refused" || fail "retire of the last ZSK: exit $rc: $out"
out=$(CTL dnssec retire gslb.test "$ZSK2" 2>&1); rc=$?
[ $rc = 1 ] && expect_has "$out" "has no key $ZSK2 in its DNSKEY set" \
	"retire twice: refused" || fail "retire twice: exit $rc: $out"
out=$(CTL dnssec retire gslb.test 70000 2>&1); rc=$?
[ $rc = 1 ] && expect_has "$out" "'70000' is not a key tag" "retire of a bad tag: refused" ||
	fail "retire 70000: exit $rc: $out"
expect_has "$(CTL dnssec status gslb.test)" " $ZSK2 ecdsap256 +256 zsk +retired" \
	"the retired key stays listed as retired"

# --- imports -------------------------------------------------------------
CTL dnssec enable im.test --algorithm ed25519 >/dev/null
mkdir "$T/bind"
# -k: flags 257, as a CSK's, so that the key tags are ldns-keygen's.
( cd "$T/bind" && ldns-keygen -k -a ECDSAP256SHA256 im.test >/dev/null &&
	ldns-keygen -k -a ED25519 im.test >/dev/null )
P13=$(ls "$T"/bind/Kim.test.+013+*.private)
P15=$(ls "$T"/bind/Kim.test.+015+*.private)
TAG13=$(basename "$P13" .private | sed 's/.*+0*//')
TAG15=$(basename "$P15" .private | sed 's/.*+0*//')
out=$(CTL dnssec import im.test "$P13" 2>&1)
expect_has "$out" "key $TAG13 \(ecdsap256\) made for zone im.test" "import of BIND's format, P-256: ldns-keygen's tag"
out=$(CTL dnssec import im.test "$P15" --state published 2>&1)
expect_has "$out" "key $TAG15 \(ed25519\) made for zone im.test" "import of BIND's format, Ed25519"
expect_has "$(CTL dnssec status im.test)" " $TAG15 ed25519 +257 csk +published" "--state published"
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$T/bind/k.pem" 2>/dev/null
out=$(CTL dnssec import im.test "$T/bind/k.pem" --role zsk 2>&1)
expect_has "$out" "key [0-9]+ \(ecdsap256\) made for zone im.test" "import of a PEM file"
out=$(CTL dnssec import im.test "$T/bind/k.pem" --role csk 2>&1); rc=$?
[ $rc = 1 ] && expect_has "$out" "has this key already, as key [0-9]+" "import of the same key twice, as another role: refused" ||
	fail "import twice: exit $rc: $out"
mode=$(stat -c %a "$T/keys/Kim.test.+013+$(printf %05d "$TAG13").pem")
[ "$mode" = 600 ] && ok "the imported key is kept as PEM, mode 0600" || fail "imported key: mode $mode"
bad() { # message regex file-contents
	printf '%b' "$3" > "$T/bind/bad.private"
	local out rc=0
	out=$(CTL dnssec import im.test "$T/bind/bad.private" 2>&1) || rc=$?
	if [ $rc = 1 ] && grep -Eq -- "$2" <<<"$out"; then ok "$1"
	else fail "$1: exit $rc: $out"; fi
}
bad "BIND file of RSA: refused, naming the line" "bad\.private:2: Algorithm 8 \(RSASHA256\) is not served" \
	'Private-key-format: v1.3\nAlgorithm: 8 (RSASHA256)\nModulus: AAAA\n'
bad "BIND file with a short key: refused, naming the line" "bad\.private:3: PrivateKey is not the base64 of a 32-byte key" \
	'Private-key-format: v1.3\nAlgorithm: 13 (ECDSAP256SHA256)\nPrivateKey: AAAA\n'
bad "BIND file without PrivateKey: refused" "bad\.private: no PrivateKey line" \
	'Private-key-format: v1.3\nAlgorithm: 15 (ED25519)\nCreated: 20260101000000\n'
bad "BIND file with a garbled line: refused, naming it" "bad\.private:2: not a \"Field: value\" line" \
	'Private-key-format: v1.3\ngarbage\n'
bad "a file of neither form: refused" "bad\.private:1: neither a PEM private key nor BIND" 'hello\n'
bad "BIND v2 format: refused" "bad\.private:1: Private-key-format v2.0: only v1.x" 'Private-key-format: v2.0\n'
openssl genpkey -algorithm ed448 -out "$T/bind/bad.private" 2>/dev/null
out=$(CTL dnssec import im.test "$T/bind/bad.private" 2>&1); rc=$?
[ $rc = 1 ] && expect_has "$out" "holds Ed448, not a key of algorithm 13" "PEM of Ed448: refused" ||
	fail "PEM Ed448: exit $rc: $out"

# --- the rollover settings: checked, naming the line -----------------------
cp "$T/gslbd.conf" "$T/good.conf"
printf '  parent-servers: [ "127.0.0.1@99999" ]\n' >> "$T/gslbd.conf"
out=$(CTL dnssec status gslb.test 2>&1); rc=$?
[ $rc = 1 ] && expect_has "$out" "gslbd\.conf:[0-9]+: dnssec: parent-servers: '127\.0\.0\.1@99999' is not IP or IP@PORT" \
	"parent-servers with a bad port: refused, naming the line" || fail "bad parent-servers: exit $rc: $out"
cp "$T/good.conf" "$T/gslbd.conf"
printf '  zsk-lifetime: -5\n' >> "$T/gslbd.conf"
out=$(CTL dnssec status gslb.test 2>&1); rc=$?
[ $rc = 1 ] && expect_has "$out" "gslbd\.conf:[0-9]+: .*zsk-lifetime" "a negative lifetime: refused, naming the line" ||
	fail "zsk-lifetime -5: exit $rc: $out"
cp "$T/good.conf" "$T/gslbd.conf"
printf '  zsk-lifetime: 600\n' >> "$T/gslbd.conf"
out=$(CTL dnssec status gslb.test --json)
expect_has "$out" '"next_step": "start the rollover"' "status --json: the planned rollover"
expect_has "$out" '"kind": "zsk"' "status --json: of the ZSK"
cp "$T/good.conf" "$T/gslbd.conf"
out=$(CTL dnssec status gslb.test)
expect_has "$out" "no rollover planned" "status without lifetimes: none planned"

# --- served ----------------------------------------------------------------
gslbd_start
out=$(q gslb.test DNSKEY +dnssec)
[ "$(section "$out" ANSWER | grep -c 'RRSIG')" = 1 ] &&
	expect_has "$(section "$out" ANSWER)" "RRSIG.DNSKEY 13 2 [0-9]+ [0-9]+ [0-9]+ $KSK " \
	"split: the DNSKEY RRset signed by the KSK alone" || fail "DNSKEY RRSIGs: $out"
[ "$(section "$out" ANSWER | grep -c 'DNSKEY.25[67] ')" = 2 ] && ok "split: the retired ZSK is not in the DNSKEY set" ||
	fail "DNSKEY: $(section "$out" ANSWER)"
out=$(section "$(q www.gslb.test A +dnssec)" ANSWER)
[ "$(grep -c RRSIG <<<"$out")" = 1 ] && expect_has "$out" "RRSIG.A 13 3 [0-9]+ [0-9]+ [0-9]+ $ZSK " \
	"split: the A RRset signed by the ZSK alone" || fail "A RRSIGs: $out"
out=$(section "$(q nx.gslb.test A +dnssec)" AUTHORITY)
expect_has "$out" "RRSIG.NSEC 13 3 [0-9]+ [0-9]+ [0-9]+ $ZSK " "split: the denial signed by the ZSK"
dig @127.0.0.1 -p "$PORT" +short gslb.test DNSKEY |
	awk '$1 == 257 { k = ""; for (i = 4; i <= NF; i++) k = k $i
		printf "trust-anchors { gslb.test. static-key %s %s %s \"%s\"; };\n", $1, $2, $3, k }' > "$T/ta.conf"
dv() { delv @127.0.0.1 -p "$PORT" -a "$T/ta.conf" +root=gslb.test "$@" 2>&1; }
expect_has "$(dv www.gslb.test A)" "^; fully validated" "delv, KSK as anchor: the ZSK-signed A"
expect_has "$(dv nx.gslb.test A)" "negative response, fully validated" "delv, KSK as anchor: NXDOMAIN"
# The imported BIND keys sign: the Ed25519 CSK and the P-256 one.
out=$(section "$(q www.im.test A +dnssec)" ANSWER)
expect_has "$out" "RRSIG.A 13 3 [0-9]+ [0-9]+ [0-9]+ $TAG13 " "the imported P-256 key signs"
expect_not "$out" " $TAG15 im\.test\." "the published import does not sign"
keyfile=$(ls "$T"/bind/Kim.test.+013+*.key)
want=$(sed 's/;.*//' "$keyfile" | awk '{ k = ""; for (i = 7; i <= NF; i++) k = k $i; print k }')
got=$(q im.test DNSKEY +short | awk '$3 == 13 && $1 == 257 { k = ""; for (i = 4; i <= NF; i++) k = k $i; print k }')
grep -qxF "$want" <<<"$got" && ok "the DNSKEY served is ldns-keygen's public key" ||
	fail "DNSKEY of the import: want $want, got $got"
dig @127.0.0.1 -p "$PORT" +short im.test DNSKEY |
	awk -v t="$TAG13" '$1 == 257 && $3 == 13 { k = ""; for (i = 4; i <= NF; i++) k = k $i
		printf "trust-anchors { im.test. static-key %s %s %s \"%s\"; };\n", $1, $2, $3, k }' > "$T/ta-im.conf"
out=$(delv @127.0.0.1 -p "$PORT" -a "$T/ta-im.conf" +root=im.test www.im.test A 2>&1)
expect_has "$out" "^; fully validated" "delv: an answer signed by imported keys"
# Retired while running: out of the DNSKEY set within a second.
CTL dnssec retire im.test "$TAG15" >/dev/null
gone() { [ "$(q im.test DNSKEY +short | grep -c '^257 3 15 ')" = 1 ]; }
wait_until 5 gone && ok "dnssec retire: the running gslbd drops the key" ||
	fail "retire: DNSKEY $(q im.test DNSKEY +short)"
expect_has "$(CTL log)" "dnssec set im\.test\|$TAG15 retired=[0-9]+ state=retired" "the retirement is in the audit log"
finish
