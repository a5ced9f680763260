#!/bin/bash
# Configuration and zone errors: `gslbd -c FILE --check` exits 0 on a good
# configuration and non-zero naming file:line for each kind of error an
# operator must fix; $INCLUDE with and without an origin; the daemon
# refuses to start with a broken zone or configuration.
. "$(dirname "$0")/lib.sh"

H='$ORIGIN c.test.
$TTL 3600
@       IN SOA  ns1 hostmaster 1 3600 600 86400 300
        IN NS   ns1
ns1     IN A    192.0.2.1'

conf() { # name zone-file [server yaml]
	cat > "$T/$1.conf" <<EOC
server:
  listen: [ "127.0.0.1@$PORT" ]
${3:-}
database:
  path: db
zones:
  - name: c.test
    file: $2
EOC
}
# Runs --check from another directory (paths are relative to the
# configuration file) and checks the exit status and the message.
check_bad() { # conf-name regex message
	local out rc=0
	out=$(cd / && timeout 10 "$GSLBD" -c "$T/$1.conf" --check 2>&1) || rc=$?
	if [ "$rc" -ge 1 ] && [ "$rc" -le 123 ] && grep -Eq -- "$2" <<<"$out"; then
		ok "$3"
	else
		fail "$3: exit $rc, output:"; echo "$out" | sed 's/^/    /'
	fi
}
zone_bad() { # name zone-text regex message
	printf '%s\n' "$2" > "$T/$1.zone"
	conf "$1" "$1.zone"
	check_bad "$1" "$3" "$4"
}

# A good configuration.
printf '%s\n' "$H" > "$T/good.zone"
conf good good.zone
out=$(cd / && timeout 10 "$GSLBD" -c "$T/good.conf" --check 2>&1)
rc=$?
if [ "$rc" -eq 0 ]; then ok "--check: good configuration exits 0"
else fail "--check: good configuration exits $rc: $out"; fi
expect_has "$out" "zone c\.test: serial 1" "--check: reports the zone"

# Health and cutover sections: checked by --check too.
hc() { # name yaml
	printf 'zones:\n  - name: c.test\n    file: good.zone\ndatabase:\n  path: db\n%s\n' "$2" > "$T/$1.conf"
}
hc hgood 'health:
  interval: 5
  weights-probe: [ 40, 30, 20, 10 ]
  weights-four: [ 50, 20, 20, 10 ]
  grade-good: 85
  grade-usable: 55
  shadow-profile: four
cutover:
  notice: 3600
  impact-high: 40
  short-ttl-lead: 120
  confirm-rounds: 1'
out=$(cd / && timeout 10 "$GSLBD" -c "$T/hgood.conf" --check 2>&1) && ok "--check: health and cutover sections accepted" ||
	fail "--check: good health section: $out"
hc hw3 'health:
  weights-probe: [ 40, 30, 20 ]'
check_bad hw3 "hw3\.conf:7: weights-probe must be a list of 4 numbers" "health: three weights rejected"
hc hwneg 'health:
  weights-four: [ 50, -1, 20, 10 ]'
check_bad hwneg "hwneg\.conf:7: weights-four must be a number from 0 to 100" "health: negative weight rejected"
hc hgrade 'health:
  grade-good: 60
  grade-usable: 70'
check_bad hgrade "hgrade\.conf:8: grade-usable \(70\) must be below grade-good \(60\)" "health: grades in the wrong order"
hc hsp 'health:
  shadow-profile: fancy'
check_bad hsp "hsp\.conf:7: shadow-profile must be probe or four" "health: unknown shadow profile"
hc hto 'health:
  interval: 2
  timeout: 3'
check_bad hto "hto\.conf:8: health timeout" "health: timeout above the interval"
hc cbad 'cutover:
  impact-low: 0'
check_bad cbad "cbad\.conf:7: impact-low must be a number from 1 to 100" "cutover: impact out of range"
hc cconf 'cutover:
  short-ttl-lead: 60
  confirm-rounds: 0'
check_bad cconf "cconf\.conf:8: confirm-rounds must be a number from 1 to 100" "cutover: confirm-rounds out of range"
hc cauto 'cutover:
  auto: on
  auto-min-nodes: 1'
check_bad cauto "cauto\.conf:8: auto-min-nodes must be a number from 2 to 10000" "cutover: auto-min-nodes out of range"

hc tgood 'dnstap:
  socket: /run/gslbd/dnstap.sock
  queries: no'
out=$(cd / && timeout 10 "$GSLBD" -c "$T/tgood.conf" --check 2>&1) && ok "--check: dnstap section accepted" ||
	fail "--check: good dnstap section: $out"
hc tnosock 'dnstap:
  responses: yes'
check_bad tnosock "tnosock\.conf:7: dnstap\.socket is required" "dnstap: no socket rejected"
hc tbool 'dnstap:
  socket: t.sock
  queries: sometimes'
check_bad tbool "tbool\.conf:8: dnstap\.queries must be on or off" "dnstap: bad queries value"

# Configuration errors.
printf 'server:\n  listen: [ "127.0.0.1@%s"\nzones:\n  - name: c.test\n' "$PORT" > "$T/yaml.conf"
check_bad yaml "yaml\.conf:3:" "YAML syntax error: file:line"
printf 'server:\n  listen: "127.0.0.1@%s"\n  workers: 1\n\tidentity: x\n' "$PORT" > "$T/tab.conf"
check_bad tab "tab\.conf:4:" "YAML tab indentation: file:line"
conf key good.zone "  workers: 1
  colour: blue"
check_bad key "key\.conf:4: .*colour" "unknown server key: file:line and the key"
printf 'server:\n  listen: [ "127.0.0.1@%s" ]\nzones:\n  - name: c.test\n    file: good.zone\n    bogus: 1\n' "$PORT" > "$T/zkey.conf"
check_bad zkey "zkey\.conf:6: .*bogus" "unknown zone key: file:line"
printf 'server:\n  listen: [ "127.0.0.1@%s" ]\nzones:\n  - name: c.test\n    file: good.zone\nweird: 1\n' "$PORT" > "$T/tkey.conf"
check_bad tkey "tkey\.conf:6: .*weird" "unknown top-level key: file:line"
for a in 127.0.0.1:5300 300.0.0.1@5300 127.0.0.1@99999 127.0.0.1@ @5300 \
	'localhost@5300' '127.0.0.1@53x'; do
	printf 'server:\n  workers: 1\n  listen: [ "%s" ]\nzones:\n  - name: c.test\n    file: good.zone\n' "$a" > "$T/addr.conf"
	check_bad addr "addr\.conf:3: .*listen" "bad listen address '$a': file:line"
done
conf payload good.zone "  udp-max-payload: 100"
check_bad payload "payload\.conf:3: .*udp-max-payload" "udp-max-payload out of range: file:line"
conf noz nothere.zone
check_bad noz "nothere\.zone" "missing zone file: named"

# Zone errors, each with file and line.
zone_bad nosoa '$ORIGIN c.test.
$TTL 3600
@       IN NS   ns1
ns1     IN A    192.0.2.1' "nosoa\.zone:[0-9]+: .*no SOA" "missing SOA: file:line (0: the whole file)"
zone_bad nons '$ORIGIN c.test.
$TTL 3600
@       IN SOA  ns1 hostmaster 1 3600 600 86400 300
ns1     IN A    192.0.2.1
www     IN NS   ns1' "nons\.zone:[0-9]+: .*no NS" "missing apex NS: file:line (0: the whole file)"
zone_bad cname1 "$H
www     IN CNAME ns1
www     IN TXT  \"beside\"" "cname1\.zone:(6|7): .*CNAME beside other data" \
	"CNAME then other data: file:line"
zone_bad cname2 "$H
www     IN TXT  \"beside\"
www     IN CNAME ns1" "cname2\.zone:7: .*CNAME beside other data" \
	"other data then CNAME: file:line"
zone_bad cname3 "$H
; a comment and a blank line

www     IN CNAME ns1
www     IN CNAME ns1.c.test.
www     IN CNAME www2" "cname3\.zone:10: .*CNAME" "two CNAMEs: file:line"
zone_bad outside "$H
www.other.test. IN A 192.0.2.2" "outside\.zone:6: .*outside the zone" \
	"record outside the zone: file:line"
zone_bad parent "$H
test.   IN A 192.0.2.2" "parent\.zone:6: .*outside the zone" \
	"record at the parent: file:line"
zone_bad badrd "$H
x       IN A    192.0.2" "badrd\.zone:6:" "bad A rdata: file:line"
zone_bad badrd2 "$H

; after a comment
x       IN MX   ten mail" "badrd2\.zone:8:" "bad MX rdata after a comment: file:line"
zone_bad badrd3 "$H
x       IN AAAA 2001:db8::zz" "badrd3\.zone:6:" "bad AAAA rdata: file:line"
zone_bad soa2 "$H
@       IN SOA  ns1 hostmaster 2 3600 600 86400 300" "soa2\.zone:6: .*more than one SOA" \
	"two SOA records: file:line"
zone_bad soaoff "$H
sub     IN SOA  ns1 hostmaster 2 3600 600 86400 300" "soaoff\.zone:6: .*SOA" \
	"SOA below the apex: file:line"
zone_bad chclass "$H
x       CH TXT  \"chaos\"" "chclass\.zone:6: .*class" "class CH record: file:line"
zone_bad multiline '$ORIGIN c.test.
$TTL 3600
@       IN SOA  ns1 hostmaster (
                1 3600 600
                86400 300 )
        IN NS   ns1
ns1     IN A    192.0.2.1
x       IN A    1.2.3' "multiline\.zone:8:" "error after a multi-line SOA: file:line"
zone_bad inc1 "$H
\$INCLUDE nothere.inc" "inc1\.zone:6: .*nothere\.inc" "missing \$INCLUDE file: file:line of the \$INCLUDE"
printf 'a IN A 192.0.2.5\n\n; comment\nb IN A 192.0.2\n' > "$T/bad.inc"
zone_bad inc2 "$H
\$INCLUDE bad.inc" "bad\.inc:4:" "error inside an included file: its file:line"
printf 'www.evil.test. IN A 192.0.2.5\n' > "$T/out.inc"
zone_bad inc3 "$H
\$INCLUDE out.inc" "out\.inc:1: .*outside" "included record outside the zone: its file:line"
printf '$INCLUDE inc-loop.inc\n' > "$T/inc-loop.inc"
zone_bad incloop "$H
\$INCLUDE inc-loop.inc" "inc-loop\.inc:1: .*INCLUDE" "\$INCLUDE loop: stopped with file:line"

# --check reports the second zone's error too.
printf 'server:\n  listen: [ "127.0.0.1@%s" ]\nzones:\n  - name: c.test\n    file: good.zone\n  - name: d.test\n    file: outside.zone\n' "$PORT" > "$T/two.conf"
check_bad two "zone d\.test: .*outside\.zone:[0-9]+:" "second zone broken: named"

# $INCLUDE works: without an origin (the current one), with a relative and
# an absolute origin, from a subdirectory, nested; the origin reverts after
# the included file (RFC 1035 §5.1).
mkdir -p "$T/inc"
printf 'plain  IN A 192.0.2.61\n$ORIGIN moved.c.test.\nmoved  IN A 192.0.2.62\n' > "$T/inc/plain.inc"
printf 'rel    IN A 192.0.2.63\n@      IN TXT "apex of sub"\n$INCLUDE nested.inc\n' > "$T/inc/rel.inc"
printf 'nested IN A 192.0.2.64\n' > "$T/inc/nested.inc"
printf 'abs    IN A 192.0.2.65\n' > "$T/inc/abs.inc"
cat > "$T/inc.zone" <<EOZ
$H
\$INCLUDE inc/plain.inc
after  IN A 192.0.2.66
\$INCLUDE inc/rel.inc sub
\$INCLUDE $T/inc/abs.inc other.c.test. ; a comment
last   IN A 192.0.2.67
EOZ
write_conf_zones "" c.test=inc.zone
out=$(cd / && timeout 10 "$GSLBD" -c "$T/gslbd.conf" --check 2>&1)
rc=$?
if [ "$rc" -eq 0 ]; then ok "\$INCLUDE zone passes --check"
else fail "\$INCLUDE zone passes --check: $out"; fi
gslbd_start
for pair in plain.c.test=192.0.2.61 moved.moved.c.test=192.0.2.62 \
	after.c.test=192.0.2.66 rel.sub.c.test=192.0.2.63 \
	nested.sub.c.test=192.0.2.64 abs.other.c.test=192.0.2.65 \
	last.c.test=192.0.2.67; do
	out=$(q "${pair%%=*}" A +short)
	expect_has "$out" "^${pair#*=}$" "\$INCLUDE: ${pair%%=*} served"
done
out=$(q sub.c.test TXT +short)
expect_has "$out" '^"apex of sub"$' "\$INCLUDE with origin: @ is the origin"
gslbd_stop || fail "clean exit"

# The daemon refuses to start with a broken zone or configuration.

# Every error of a zone at once, each with its line.
zone_bad many "$H
bad1    IN A    999.1.1.1
good    IN A    192.0.2.2
bad2    IN MX   notanumber mail
www     IN CNAME good
www     IN A    192.0.2.3
out.example.org. IN A 192.0.2.4" "many\.zone:6:.*(\n|.)*" "zone errors: the first"
out=$(cd / && "$GSLBD" -c "$T/many.conf" --check 2>&1)
for l in 6 8 10 11; do
	expect_has "$out" "many\.zone:$l: " "zone errors: every one is reported (line $l)"
done
# What the host must provide, checked without binding the real port.
conf hostbad good.zone '  user: no-such-user-here'
sed -i "s/listen: \[ \"127.0.0.1@$PORT\" \]/listen: [ \"127.0.0.1@$PORT\", \"192.0.2.253@$PORT\" ]/" "$T/hostbad.conf"
out=$(cd / && "$GSLBD" -c "$T/hostbad.conf" --check 2>&1)
expect_has "$out" "hostbad\.conf:3: server\.user: there is no user 'no-such-user-here'" "--check: unknown server.user with file:line"
expect_has "$out" "hostbad\.conf:2: listen 192\.0\.2\.253@$PORT: not an address of this host" "--check: a listen address that is not local"
out=$(cd / && "$GSLBD" -c "$T/hostbad.conf" 2>&1)
expect_has "$out" "not an address of this host" "the daemon refuses the same at start"
# Wildcards: replies would leave from another address.
for w in "0.0.0.0@$PORT" "::@$PORT"; do
	conf wild good.zone
	sed -i "s/listen: \[ \"127.0.0.1@$PORT\" \]/listen: [ \"$w\" ]/" "$T/wild.conf"
	check_bad wild "wild\.conf:2: listen .*: a wildcard address cannot be served" "wildcard $w refused with file:line"
	out=$(cd / && "$GSLBD" -c "$T/good.conf" -l "$w" --check 2>&1)
	expect_has "$out" "^gslbd: -l .*: a wildcard address cannot be served" "-l $w refused"
done
for bad in badrd outside yaml key; do
	cfg="$T/$bad.conf"
	out=$(timeout 10 "$GSLBD" -c "$cfg" 2>&1)
	rc=$?
	# 1..123: an orderly refusal, not a crash, abort or sanitizer report.
	if [ "$rc" -ge 1 ] && [ "$rc" -le 123 ]; then
		ok "daemon refuses to start ($bad): exit $rc"
	else
		fail "daemon refuses to start ($bad): exit $rc"
	fi
	expect_has "$out" "$bad\.(zone|conf):[0-9]+:" "daemon start ($bad): message with file:line"
done
out=$(dig @127.0.0.1 -p "$PORT" +time=1 +tries=1 id.server CH TXT 2>&1)
expect_has "$out" "timed out|no servers could be reached|connection refused" "nothing left listening"
finish
