#!/bin/bash
# Automatic rollovers in compressed time (lifetimes and margins of a few
# seconds), with a validating Unbound answering a query loop the whole
# time: a ZSK rollover of a split zone (pre-publication: the new ZSK is
# published, then signs, then the old one leaves) and a CSK rollover
# (double signature, CDS and CDNSKEY, the parent's DS checked before
# the old key leaves).  The parent zone test. is a second gslbd, signed
# itself, whose DS is Unbound's only trust anchor; the test plays the
# parent's operator, copying the child's CDS into the parent's DS.
# Every answer of the loop must be NOERROR with AD: no SERVFAIL, no
# bogus answer at any step.
. "$(dirname "$0")/lib.sh"

UNBOUND=${UNBOUND:-/usr/sbin/unbound}
if [ ! -x "$UNBOUND" ]; then
	echo "SKIP: unbound not installed"
	exit 77
fi

PPORT=$((PORT + 3)) UPORT=$((PORT + 1))
# --- the parent: test., signed, delegating gslb.test and csk.test --------
. "$(dirname "$0")/dnssec_lib.sh"

# --- the child: gslb.test (split, ZSK rolls), csk.test (CSK rolls) -----
for z in gslb csk; do mini_zone "$T/$z.zone" 2 80 127.0.0.1; done
write_conf_zones "" gslb.test=gslb.zone csk.test=csk.zone
LIFE=$(tscale 8)
cat >> "$T/gslbd.conf" <<EOC
dnssec:
  keystore: keys
  dnskey-ttl: 2
  zsk-lifetime: $LIFE
  csk-lifetime: $((LIFE + $(tscale 4)))
  publish-safety: 1
  retire-safety: 1
  max-zone-ttl: 2
  ds-check-interval: 1
  parent-servers: [ "127.0.0.1@$PPORT" ]
EOC
mkdir "$T/keys"
chmod 700 "$T/keys"
CTL dnssec enable gslb.test --split >/dev/null
CTL dnssec enable csk.test --algorithm ed25519 >/dev/null
# The parent's DS of both children: the KSK's, the CSK's.
{ CTL dnssec ds gslb.test; CTL dnssec ds csk.test; } |
	sed 's/^\([a-z]*\)\.test\. IN DS/\1 DS/' | parent_zone
"$GSLBD" -c "$PCONF" >>"$T/parent/gslbd.log" 2>&1 &
PPID_=$!
gslbd_start
expect_has "$(CTL dnssec status csk.test)" "next step: start the rollover, at " \
	"status: the next rollover, planned by the lifetime"

# --- Unbound, anchored at the parent's DS --------------------------------
mkdir -p "$T/ub"
{
	unbound_server_conf "$T/ub" "$UPORT" "validator iterator"
	echo "  trust-anchor: \"${PDS/ IN /  }\""
	echo "  cache-max-ttl: 2"
	echo "  cache-max-negative-ttl: 2"
	echo "  val-log-level: 2"
	printf 'stub-zone:\n  name: "test"\n  stub-addr: 127.0.0.1@%s\n' "$PPORT"
	unbound_stubs "$PORT" gslb.test csk.test
} > "$T/ub/unbound.conf"
"$UNBOUND" -d -c "$T/ub/unbound.conf" >>"$T/ub/unbound.out" 2>&1 &
UPID=$!
LPID=
trap 'stop_pid "$LPID"; stop_pid "$UPID"; stop_pid "$PPID_"; cleanup' EXIT
rq() { dig @127.0.0.1 -p "$UPORT" +time=3 +tries=1 +dnssec "$@" 2>&1; }
ub_up() { rq www.gslb.test A | grep -q "status: NOERROR"; }
wait_until 10 ub_up || { fail "unbound does not answer"; cat "$T/ub/unbound.log"; finish; }
out=$(rq www.gslb.test A)
expect_flag "$out" ad "unbound: AD through the parent, before any rollover"

# --- the query loop: one line per answer --------------------------------
loop() {
	local i=0 n out
	while :; do
		i=$((i + 1))
		for n in www.gslb.test www.csk.test "nx$i.gslb.test" "nx$i.csk.test"; do
			out=$(rq "$n" A)
			st=$(grep -o 'status: [A-Z]*' <<<"$out" | cut -d' ' -f2)
			grep -Eq '^;; flags:[^;]* ad[ ;]' <<<"$out" && ad=ad || ad=noad
			echo "$(date +%s) $n ${st:-NONE} $ad"
		done
		sleep 0.2
	done
}
loop > "$T/answers" &
LPID=$!

# --- the parent's operator: the child's CDS becomes the parent's DS -------
cds_to_parent() {
	local cds
	cds=$(q csk.test CDS +short)
	[ -n "$cds" ] || return 0
	{ CTL dnssec ds gslb.test | sed 's/^gslb\.test\. IN DS/gslb DS/'
	  sed 's/^/csk DS /' <<<"$cds"; } | parent_zone
	if [ "$cds" != "${LASTCDS:-}" ]; then
		kill -HUP "$PPID_"
		LASTCDS=$cds
		echo "$(date +%s) parent DS <- $cds" >> "$T/parent.log"
	fi
}
retired() { # zone -> how many retired keys
	CTL dnssec list | awk -v z="$1" '$1 == z && $6 == "retired"' | wc -l
}
seen_cds=0 seen_pub=0 seen_bitmap=0 seen_status=0 seen_cds_gone=0
both_done() {
	cds_to_parent
	if [ -n "$(q csk.test CDNSKEY +short)" ]; then
		seen_cds=1
		# The apex's NODATA lists them too.
		section "$(q csk.test TXT +dnssec)" AUTHORITY | grep -q 'NSEC.* CDS CDNSKEY' &&
			seen_bitmap=1
	fi
	# The ZSK phases, seen from outside: three DNSKEYs with the new ZSK
	# only published, then signatures by it.
	[ "$(q gslb.test DNSKEY +short | grep -c '^256 ')" = 2 ] && seen_pub=1
	st=$(CTL dnssec status gslb.test)
	grep -Eq "^rollover: zsk, key [0-9]+ to key [0-9]+, phase (publish|retire) since " <<<"$st" &&
		grep -Eq "^next step: (switch signing to the new key|withdraw the old key), at 20" <<<"$st" &&
		seen_status=1
	# The CSK's rollover done (its old key retired): CDS and CDNSKEY go
	# with it, until the next rollover (a lifetime later: the CSK's is
	# 4 s longer than the ZSK's, so that this poll sees the gap).
	[ "$(retired csk.test)" -ge 1 ] && [ -z "$(q csk.test CDS +short)" ] &&
		! CTL dnssec status csk.test | grep -q '^rollover:' && seen_cds_gone=1
	[ "$(retired gslb.test)" -ge 1 ] && [ "$(retired csk.test)" -ge 1 ] &&
		[ $seen_cds_gone = 1 ]
}
if wait_until $((6 * LIFE + 30)) both_done; then
	ok "a ZSK rollover and a CSK rollover completed"
else
	fail "rollovers did not complete"
	CTL dnssec status gslb.test; CTL dnssec status csk.test; tail -20 "$T/gslbd.log"
fi
sleep 3   # answers after the last withdrawal, through a cache refresh
stop_pid "$LPID"
LPID=
[ $seen_pub = 1 ] && ok "ZSK: the new key published beside the old one first" ||
	fail "ZSK: never two ZSKs in the DNSKEY set"
[ $seen_status = 1 ] && ok "status: the rollover's phase and the time of its next step" ||
	fail "status never showed the ZSK rollover"
[ $seen_cds = 1 ] && ok "CSK: CDNSKEY published during the rollover" || fail "CSK: no CDNSKEY seen"
[ $seen_bitmap = 1 ] && ok "CSK: the apex's NSEC lists CDS and CDNSKEY meanwhile" ||
	fail "CSK: no NSEC bitmap with CDS and CDNSKEY seen"
[ -s "$T/parent.log" ] && ok "the parent got the new DS from the CDS ($(wc -l < "$T/parent.log") update(s))" ||
	fail "no CDS copied to the parent"
[ $seen_cds_gone = 1 ] && ok "CSK: CDS withdrawn with the old key" ||
	fail "CSK: CDS still served after the rollover"

# --- the answers ------------------------------------------------------------
total=$(wc -l < "$T/answers")
bad=$(awk '$3 != "NOERROR" || $4 != "ad"' "$T/answers" | wc -l)
servfail=$(awk '$3 == "SERVFAIL"' "$T/answers" | wc -l)
# At least ten rounds of the loop (each dig a process of its own: on a
# busy machine a round takes a second or more).
if [ "$total" -ge 40 ] && [ "$bad" = 0 ]; then
	ok "the query loop: $total answers, all NOERROR with AD (0 SERVFAIL, 0 bogus)"
else
	fail "the query loop: $total answers, $bad without AD or not NOERROR ($servfail SERVFAIL)"
	awk '$3 != "NOERROR" || $4 != "ad"' "$T/answers" | head -5
fi
n=$(grep -c "validation failure" "$T/ub/unbound.log" 2>/dev/null)
[ "${n:-0}" = 0 ] && ok "unbound logged no validation failure" ||
	{ fail "unbound: $n validation failures"; grep "validation failure" "$T/ub/unbound.log" | head -3; }

# The control: the same loop sees a broken chain.  A parent DS that
# matches no key of csk.test must make its answers bogus (SERVFAIL).
{ CTL dnssec ds gslb.test | sed 's/^gslb\.test\. IN DS/gslb DS/'
  echo "csk DS 1 15 2 0000000000000000000000000000000000000000000000000000000000000000"; } | parent_zone
kill -HUP "$PPID_"
bogus() { rq www.csk.test A | grep -q "status: SERVFAIL"; }
wait_until 15 bogus && ok "control: a wrong DS at the parent makes the answers bogus" ||
	fail "control: a wrong DS still validates"

# --- the steps: in order, audited, each after its wait ---------------------
log=$(CTL log)
expect_has "$(grep 'actor\|dnssec' <<<"$log")" "dnssec +dnssec set gslb\.test" "the steps are audited, actor dnssec"
msgs=$(grep -o "dnssec rollover [a-z]* [a-z.]*: .*" "$T/gslbd.log")
expect_has "$msgs" "rollover zsk gslb\.test: key [0-9]+ published" "ZSK step 1: published"
expect_has "$msgs" "rollover zsk gslb\.test: key [0-9]+ signs, key [0-9]+ stays published" "ZSK step 2: switch"
expect_has "$msgs" "rollover zsk gslb\.test: key [0-9]+ withdrawn" "ZSK step 3: withdrawn"
expect_has "$msgs" "rollover csk csk\.test: key [0-9]+ signs beside the old key" "CSK step 1: double signature"
expect_has "$msgs" "rollover csk csk\.test: CDS and CDNSKEY of key [0-9]+ published" "CSK step 2: CDS"
expect_has "$msgs" "rollover csk csk\.test: the parent serves the DS of key [0-9]+" "CSK step 3: DS seen at the parent"
expect_has "$msgs" "rollover csk csk\.test: key [0-9]+ withdrawn" "CSK step 4: withdrawn"
# The waits, from the keys' times: a new ZSK signs dnskey-ttl +
# publish-safety (3 s) after its publication, the old one leaves
# max-zone-ttl + retire-safety (3 s) after it stopped signing; the old
# CSK leaves at least propagate (3 s) + DS TTL + retire-safety (3 s)
# after the new one started signing.
waits=$(CTL dnssec list --json | python3 -c '
import json, sys
keys = json.load(sys.stdin)["keys"]
for z in ("gslb.test", "csk.test"):
    ks = [k for k in keys if k["zone"] == z and k["role"] != "ksk"]
    # The first rollover: the first key retired and the key that came
    # next (a later rollover may have begun since).
    old = min((k for k in ks if k["state"] == "retired"), key=lambda k: k["retired_unix"])
    new = min((k for k in ks if k is not old and k["published_unix"] >= old["published_unix"]),
              key=lambda k: k["published_unix"])
    if z == "gslb.test":
        print("zsk-switch", new["active_unix"] - new["published_unix"])
        print("zsk-withdraw", old["retired_unix"] - old["inactive_unix"])
    else:
        print("csk-withdraw", old["retired_unix"] - new["active_unix"])
')
w() { awk -v k="$1" '$1 == k { print $2 }' <<<"$waits"; }
[ "$(w zsk-switch)" -ge 3 ] && ok "ZSK: signs $(w zsk-switch) s after its publication (>= 3)" ||
	fail "ZSK switch after $(w zsk-switch) s: $waits"
[ "$(w zsk-withdraw)" -ge 3 ] && ok "ZSK: the old key leaves $(w zsk-withdraw) s after it stopped signing (>= 3)" ||
	fail "ZSK withdrawal after $(w zsk-withdraw) s: $waits"
[ "$(w csk-withdraw)" -ge 6 ] && ok "CSK: the old key leaves $(w csk-withdraw) s after the double signature began (>= 6)" ||
	fail "CSK withdrawal after $(w csk-withdraw) s: $waits"
finish
