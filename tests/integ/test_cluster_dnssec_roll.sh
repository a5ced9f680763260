#!/bin/bash
# Double-signature rollovers and key imports in cluster mode, with a real
# 3-member etcd and two gslbd instances on loopback:
#  1. a KSK rollover (gslb.test, split) and a CSK rollover (csk.test),
#     both Ed25519, in compressed time, driven by the elected instance
#     through etcd: the new key signs beside the old one, its CDS and
#     CDNSKEY are served by both instances, the parent's DS is asked for
#     (the test copies the CDS into the parent zone, a third gslbd) and
#     only then is the old key withdrawn;
#  2. meanwhile a query loop through two validating Unbounds, one per
#     instance, anchored at the parent's DS: zero SERVFAIL, zero bogus;
#     and at every round both instances serve the same DNSKEY RRset and
#     byte-identical RRSIGs (of the DNSKEY RRset and of www A), and the
#     same CDS;
#  3. `gslbctl dnssec import` through ns2 of a PEM key and of a BIND
#     private key: the key file reaches ns1 (0600, owned by its user)
#     and ns1 signs with it, identically; `dnssec retire` through ns1
#     withdraws them at both, the first one after its file was deleted
#     at ns1.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster_lib.sh"
UNBOUND=${UNBOUND:-/usr/sbin/unbound}
[ -x "$UNBOUND" ] || { echo "SKIP: unbound not installed"; exit 77; }
command -v ldns-keygen >/dev/null || { echo "SKIP: ldns-keygen not installed"; exit 77; }

PPORT=$((PORT + 5))
UPORT[1]=$((PORT + 6)) UPORT[2]=$((PORT + 7))
# The keys' lifetime: the first rollovers begin when the first keys are
# this old, and the new keys must not reach it before the checks after
# the withdrawals are done (a rollover takes some 10 s here), or a
# second rollover begins under them.
LIFE=$(tscale 6)
[ "$LIFE" -ge 18 ] || LIFE=18

# --- the parent: test., signed, a standalone gslbd --------------------------
. "$(dirname "$0")/dnssec_lib.sh"

# --- the two instances: gslb.test (KSK and ZSK), csk.test (CSK) --------------
mini_zone "$T/z.zone" 2 80 127.0.0.1
for i in 1 2; do
	ns_conf "$i"
	mini_zone "$T/ns$i/c.zone" 2 81 127.0.0.1
	sed -i 's/^    file: z.zone$/    file: z.zone\n  - name: csk.test\n    file: c.zone/' \
		"$T/ns$i/gslbd.conf"
	cat >> "$T/ns$i/gslbd.conf" <<EOC
dnssec:
  keystore: keys
  dnskey-ttl: 2
  zsk-lifetime: 0
  ksk-lifetime: $LIFE
  csk-lifetime: $LIFE
  publish-safety: 1
  retire-safety: 1
  max-zone-ttl: 2
  ds-check-interval: 1
  parent-servers: [ "127.0.0.1@$PPORT" ]
EOC
done
etcd_cluster_start || exit 1
for i in 1 2; do ns_start "$i"; done
CTLN 1 dnssec enable gslb.test --split --algorithm ed25519 >/dev/null ||
	fail "dnssec enable gslb.test"
CTLN 1 dnssec enable csk.test --algorithm ed25519 >/dev/null || fail "dnssec enable csk.test"
DS0=$({ CTLN 1 dnssec ds gslb.test; CTLN 1 dnssec ds csk.test; } |
	sed 's/^\([a-z]*\)\.test\. IN DS/\1 DS/')
parent_zone <<<"$DS0"
"$GSLBD" -c "$PCONF" >>"$T/parent/gslbd.log" 2>&1 &
PPID_=$!

dk() { dig @127.0.0.1 -p "${NSPORT[$1]}" +norec +short +time=2 +tries=1 "$2" DNSKEY | sort; }
sigs() { # i name type: the RRSIG records' rdata
	dig @127.0.0.1 -p "${NSPORT[$1]}" +norec +dnssec +noall +answer +time=2 +tries=1 "$2" "$3" |
		awk '$4 == "RRSIG" { $1 = $2 = $3 = ""; print }' | sort
}
cds() { dig @127.0.0.1 -p "${NSPORT[$1]}" +norec +short +time=2 +tries=1 "$2" "${3:-CDS}" | sort; }
keys_at_both() {
	[ "$(ls "$T/ns2/keys" 2>/dev/null | grep -c '\.pem$')" = 3 ] &&
		[ -n "$(dk 1 gslb.test)" ] && [ "$(dk 1 gslb.test)" = "$(dk 2 gslb.test)" ] &&
		[ -n "$(dk 2 csk.test)" ] && [ "$(dk 1 csk.test)" = "$(dk 2 csk.test)" ]
}
wait_until 10 keys_at_both && ok "both zones signed at both instances, the same DNSKEY sets" ||
	fail "the keys at ns2: $(ls "$T/ns2/keys" 2>&1)"

# --- a validating Unbound per instance, anchored at the parent's DS ----------
UPID=()
for i in 1 2; do
	mkdir -p "$T/ub$i"
	{
		unbound_server_conf "$T/ub$i" "${UPORT[$i]}" "validator iterator"
		echo "  trust-anchor: \"${PDS/ IN /  }\""
		echo "  cache-max-ttl: 2"
		echo "  cache-max-negative-ttl: 2"
		echo "  val-log-level: 2"
		printf 'stub-zone:\n  name: "test"\n  stub-addr: 127.0.0.1@%s\n' "$PPORT"
		unbound_stubs "${NSPORT[$i]}" gslb.test csk.test
	} > "$T/ub$i/unbound.conf"
	"$UNBOUND" -d -c "$T/ub$i/unbound.conf" >>"$T/ub$i/unbound.out" 2>&1 &
	UPID[$i]=$!
done
LPID=
trap 'stop_pid "$LPID"; stop_pid "${UPID[1]}"; stop_pid "${UPID[2]}"; stop_pid "$PPID_"; cluster_cleanup' EXIT
rq() { local u=$1; shift; dig @127.0.0.1 -p "${UPORT[$u]}" +time=3 +tries=1 +dnssec "$@" 2>&1; }
ub_up() { rq 1 www.csk.test A | grep -q "status: NOERROR" && rq 2 www.gslb.test A | grep -q "status: NOERROR"; }
wait_until 15 ub_up || { fail "the Unbounds do not answer"; tail -5 "$T"/ub*/unbound.log; finish; }
for u in 1 2; do
	expect_flag "$(rq $u www.gslb.test A)" ad "unbound at ns$u: AD through the parent, before any rollover"
done

# --- the query loop: one line per answer ---------------------------------
loop() {
	local i=0 n u out st ad
	while :; do
		i=$((i + 1))
		for u in 1 2; do
			for n in www.gslb.test www.csk.test "nx$i.gslb.test" "nx$i.csk.test"; do
				out=$(rq $u "$n" A)
				st=$(grep -o 'status: [A-Z]*' <<<"$out" | cut -d' ' -f2)
				grep -Eq '^;; flags:[^;]* ad[ ;]' <<<"$out" && ad=ad || ad=noad
				echo "$(date +%s) ns$u $n ${st:-NONE} $ad"
			done
		done
		sleep 0.2
	done
}
loop > "$T/answers" &
LPID=$!

lead_of() { mval "$(scrape "$1")" gslbd_cluster_leader; }
leader=""
one_leader() { for i in 1 2; do [ "$(lead_of "$i")" = 1 ] && { leader=$i; return 0; }; done; return 1; }
wait_until 10 one_leader || fail "an elected instance"
other=$((3 - ${leader:-1}))

# --- the parent's operator: a child's CDS becomes its DS at the parent ---------
# A child without CDS keeps the DS the parent has (RFC 7344: no CDS, no
# change), whether the first one or one taken from an earlier CDS: one
# zone's rollover may end, its CDS withdrawn, while the other's CDS is
# still served.
grep . <<<"$DS0" > "$T/ds.cur"
cds_to_parent() {
	local g c
	g=$(cds 1 gslb.test); c=$(cds 1 csk.test)
	[ -n "$g$c" ] || return 0
	{ if [ -n "$g" ]; then sed 's/^/gslb DS /' <<<"$g"; else grep '^gslb ' "$T/ds.cur"; fi
	  if [ -n "$c" ]; then sed 's/^/csk DS /' <<<"$c"; else grep '^csk ' "$T/ds.cur"; fi
	} > "$T/ds.new"
	if ! cmp -s "$T/ds.new" "$T/ds.cur"; then
		parent_zone < "$T/ds.new"
		cp "$T/ds.new" "$T/ds.cur"
		kill -HUP "$PPID_"
		echo "$(date +%s) parent DS <- $(tr '\n' ' ' < "$T/ds.new")" >> "$T/parent.log"
	fi
}
# Both instances alike: the DNSKEY sets, the RRSIGs (Ed25519 is
# deterministic) of the DNSKEY set and of www A, the CDS and CDNSKEY.
same_at_both() { # zone
	local a b t
	a=$(dk 1 "$1"); b=$(dk 2 "$1")
	[ -n "$a" ] && [ "$a" = "$b" ] || return 1
	for t in "$1 DNSKEY" "www.$1 A"; do
		a=$(sigs 1 $t); b=$(sigs 2 $t)
		[ -n "$a" ] && [ "$a" = "$b" ] || return 1
	done
	for t in CDS CDNSKEY; do [ "$(cds 1 "$1" $t)" = "$(cds 2 "$1" $t)" ] || return 1; done
}
withdrawn() { grep -q "rollover $1 $2: key [0-9]* withdrawn" "$T/ns$leader.log"; }
iter=0 late=0 differ=0 dbl_g=0 dbl_c=0 cds_g=0 cds_c=0
end=$((SECONDS + LIFE + $(tscale 40)))
while ! { withdrawn ksk gslb.test && withdrawn csk csk.test; } && [ $SECONDS -lt $end ]; do
	iter=$((iter + 1))
	cds_to_parent
	for z in gslb.test csk.test; do
		same=0
		# A step reaches each instance within about a second (the
		# watch, then the once-a-second check for changed keys).
		for _ in $(seq 15); do
			same_at_both "$z" && { same=1; break; }
			differ=$((differ + 1))
			sleep 0.1
		done
		[ $same = 1 ] || { late=$((late + 1)); echo "# $z apart at round $iter"; }
	done
	# The double signature: two RRSIGs over the DNSKEY set (by the
	# KSKs or CSKs).
	[ "$(sigs 2 gslb.test DNSKEY | grep -c .)" -ge 2 ] && dbl_g=1
	[ "$(sigs 2 csk.test DNSKEY | grep -c .)" -ge 2 ] && dbl_c=1
	[ -n "$(cds 2 gslb.test)" ] && [ -n "$(cds 2 gslb.test CDNSKEY)" ] && cds_g=1
	[ -n "$(cds 2 csk.test)" ] && [ -n "$(cds 2 csk.test CDNSKEY)" ] && cds_c=1
	sleep 0.3
done
sleep 3   # answers after the withdrawals, through a cache refresh
stop_pid "$LPID"
LPID=
withdrawn ksk gslb.test && ok "the KSK rollover completed ($iter rounds)" || fail "the KSK rollover did not complete"
withdrawn csk csk.test && ok "the CSK rollover completed" || fail "the CSK rollover did not complete"
[ $iter -gt 5 ] && [ $late = 0 ] &&
	ok "the same DNSKEY sets, RRSIGs, CDS and CDNSKEY at both throughout ($differ reads apart for under 1.5 s, a step in flight)" ||
	fail "the instances apart at $late of $((2 * iter)) zone rounds"
[ $dbl_g = 1 ] && [ $dbl_c = 1 ] && ok "double signature: two signatures over the DNSKEY sets at ns$other" ||
	fail "double signature never seen: KSK $dbl_g CSK $dbl_c"
[ $cds_g = 1 ] && [ $cds_c = 1 ] && ok "CDS and CDNSKEY served by ns2 as by ns1 during the rollovers" ||
	fail "CDS/CDNSKEY never seen at ns2: KSK $cds_g CSK $cds_c"
# The DS set the parent ends with: the new keys' alone, from the CDS.
ds_now=$(awk '{ print $1, $3 }' "$T/ds.cur" 2>/dev/null | sort | tr '\n' ' ')
ds_want=$({ CTLN 1 dnssec ds gslb.test; CTLN 1 dnssec ds csk.test; } |
	awk '{ sub(/\.test\.$/, "", $1); print $1, $4 }' | sort | tr '\n' ' ')
[ -s "$T/parent.log" ] && [ "$ds_now" = "$ds_want" ] && [ "$ds_now" != "$(awk '{ print $1, $3 }' <<<"$DS0" | sort | tr '\n' ' ')" ] &&
	ok "the parent got the new keys' DS from the CDS ($ds_now, $(wc -l < "$T/parent.log") update(s))" ||
	fail "the parent's DS: [$ds_now], want [$ds_want]: $(cat "$T/parent.log" 2>&1)"
for z in gslb.test csk.test; do
	[ -z "$(cds 1 $z)$(cds 2 $z)" ] && ok "$z: CDS withdrawn at both with the old key" ||
		fail "$z: CDS still served"
done

# --- the steps: the elected instance's, the DS seen before the withdrawal ------
for r in "ksk gslb.test" "csk csk.test"; do
	set -- $r
	msgs=$(grep -v "applied revision" "$T/ns$leader.log" | grep -o "dnssec rollover $1 $2: .*")
	order=$(sed -n -e 's/.*signs beside the old key.*/start/p' -e 's/.*CDS and CDNSKEY of key.*/cds/p' \
		-e 's/.*the parent serves the DS.*/ds/p' -e 's/.*withdrawn.*/withdraw/p' <<<"$msgs" | tr '\n' ' ')
	[ "$order" = "start cds ds withdraw " ] &&
		ok "$1 $2: the elected ns$leader's steps in order: $order" ||
		fail "$1 $2 steps at ns$leader: [$order]"
done
expect_not "$(grep "dnssec rollover" "$T/ns$other.log" | grep -v "applied revision")" "." \
	"ns$other made no step itself"
expect_has "$(cat "$T/ns$other.log")" "applied revision [0-9]+: dnssec rollover ksk gslb.test: the parent serves" \
	"ns$other applied the DS step from etcd"
[ "$(ls "$T/ns$other/keys" | grep -c '\.pem$')" = 5 ] &&
	[ "$(stat -c %a "$T"/ns$other/keys/*.pem | sort -u)" = 600 ] &&
	ok "the two new keys' files reached ns$other, mode 0600" ||
	fail "ns$other keystore: $(ls -l "$T/ns$other/keys")"

# --- the answers -------------------------------------------------------------
total=$(wc -l < "$T/answers")
bad=$(awk '$4 != "NOERROR" || $5 != "ad"' "$T/answers" | wc -l)
servfail=$(awk '$4 == "SERVFAIL"' "$T/answers" | wc -l)
per=$(awk '{ n[$2]++ } END { printf "ns1 %d, ns2 %d", n["ns1"], n["ns2"] }' "$T/answers")
if [ "$total" -ge 100 ] && [ "$bad" = 0 ]; then
	ok "the query loop: $total answers ($per), all NOERROR with AD (0 SERVFAIL, 0 bogus)"
else
	fail "the query loop: $total answers, $bad without AD or not NOERROR ($servfail SERVFAIL)"
	awk '$4 != "NOERROR" || $5 != "ad"' "$T/answers" | head -5
fi
n=$(cat "$T"/ub*/unbound.log 2>/dev/null | grep -c "validation failure")
[ "${n:-0}" = 0 ] && ok "the Unbounds logged no validation failure" ||
	{ fail "unbound: $n validation failures"; grep -h "validation failure" "$T"/ub*/unbound.log | head -3; }

# --- imports through ns2, retire through ns1 --------------------------------------
# No more rollovers (lifetimes 0, a reload).
for i in 1 2; do
	sed -i "s/^  \(ksk\|csk\)-lifetime: .*/  \1-lifetime: 0/" "$T/ns$i/gslbd.conf"
	before=$(grep -c 'reload: done' "$T/ns$i.log")
	kill -HUP "${NSPID[$i]}"
	reloaded() { [ "$(grep -c 'reload: done' "$T/ns$1.log")" -gt "$2" ]; }
	wait_until 10 reloaded "$i" "$before" || fail "ns$i reloaded"
done
mkdir "$T/imp"
openssl genpkey -algorithm ed25519 -out "$T/imp/k.pem" 2>/dev/null
( cd "$T/imp" && ldns-keygen -a ED25519 gslb.test >/dev/null )
BP=$(ls "$T"/imp/Kgslb.test.+015+*.private)
out=$(CTLN 2 dnssec import csk.test "$T/imp/k.pem" 2>&1)
expect_has "$out" "^cluster revision [0-9]+: dnssec import csk.test key [0-9]+ \(ed25519 csk, active\)" \
	"import of a PEM key through ns2"
ptag=$(grep -o 'import csk.test key [0-9]*' <<<"$out" | awk '{ print $4 }')
out=$(CTLN 2 dnssec import gslb.test "$BP" --role zsk 2>&1)
expect_has "$out" "^cluster revision [0-9]+: dnssec import gslb.test key [0-9]+ \(ed25519 zsk, active\)" \
	"import of a BIND private key through ns2"
btag=$(grep -o 'import gslb.test key [0-9]*' <<<"$out" | awk '{ print $4 }')
file_of() { CTLN 1 --json dnssec list | python3 -c '
import json, sys
for k in json.load(sys.stdin)["keys"]:
    if k["zone"] == sys.argv[1] and k["tag"] == int(sys.argv[2]): print(k["file"])' "$1" "$2"; }
for zt in "csk.test $ptag" "gslb.test $btag"; do
	set -- $zt
	f=$(file_of "$1" "$2")
	arrived() { [ -n "$f" ] && [ -s "$T/ns1/keys/$f" ]; }
	wait_until 10 arrived && [ "$(stat -c '%a %u' "$T/ns1/keys/$f")" = "600 $(id -u)" ] &&
		cmp -s "$T/ns1/keys/$f" "$T/ns2/keys/$f" &&
		ok "$1: key $2's file reached ns1 (0600, the daemon's user, the same bytes)" ||
		fail "$1: key $2's file at ns1: $(ls -l "$T/ns1/keys/" 2>&1)"
	signs() { # zone tag: a signature by the key at both, identical
		local a b
		a=$(sigs 1 "www.$1" A); b=$(sigs 2 "www.$1" A)
		grep -Eq " $2 $1\. " <<<"$a" && [ "$a" = "$b" ] && same_at_both "$1"
	}
	wait_until 10 signs "$1" "$2" && ok "$1: key $2 signs at ns1 as at ns2, identical RRSIGs" ||
		fail "$1: key $2 signing: ns1 [$(sigs 1 "www.$1" A)] ns2 [$(sigs 2 "www.$1" A)]"
	for u in 1 2; do
		expect_flag "$(rq $u www.$1 A)" ad "$1 signed by the import too: AD at unbound $u"
	done
done
# The PEM key's file lost at ns1 (deleted by mistake): its retire through
# ns1 needs no file, etcd has it already.
rm -f "$T/ns1/keys/$(file_of csk.test "$ptag")"
for zt in "csk.test $ptag" "gslb.test $btag"; do
	set -- $zt
	nk=$(dk 1 "$1" | grep -c .)
	out=$(CTLN 1 dnssec retire "$1" "$2" 2>&1)
	expect_has "$out" "^cluster revision [0-9]+: dnssec retire $1 key $2" "retire of $1 key $2 through ns1"
	gone() { # zone tag keys-before
		[ "$(dk 1 "$1" | grep -c .)" = $(($3 - 1)) ] && same_at_both "$1" &&
			! sigs 1 "www.$1" A | grep -Eq " $2 $1\. " && ! sigs 2 "www.$1" A | grep -Eq " $2 $1\. "
	}
	wait_until 10 gone "$1" "$2" "$nk" && ok "$1: key $2 withdrawn at both, signs no more, the same keys at both" ||
		fail "$1 after retire: ns2 [$(sigs 2 "www.$1" A)]"
done
missing_of() { mval "$(scrape 1)" gslbd_cluster_dnssec_keys_missing; }
expect_has "$(missing_of)" "^0$" "ns1: no key missing after the retire"
finish
