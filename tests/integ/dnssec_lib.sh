#!/bin/bash
# Helpers of the rollover tests (sourced after lib.sh): the parent zone
# test., signed, served by a standalone gslbd of its own on $PPORT (set
# by the test), delegating gslb.test and csk.test to 127.0.0.1.
#   PCONF, PCTL ...    its configuration, gslbctl on it
#   parent_zone        writes test.zone with the DS lines on stdin
#   PDS                the DS of test. (a resolver's trust anchor)
mkdir -p "$T/parent/keys"
chmod 700 "$T/parent/keys"
PCONF="$T/parent/gslbd.conf"
cat > "$PCONF" <<EOC
server:
  listen: [ "127.0.0.1@$PPORT" ]
  workers: 1
  identity: parent.ns
database:
  path: db
zones:
  - name: test
    file: test.zone
dnssec:
  keystore: keys
  dnskey-ttl: 2
EOC
PCTL() { "$ROOT/$B/gslbctl" -c "$PCONF" "$@"; }
parent_zone() { # DS lines of the children on stdin
	{
		echo '$TTL 2'
		echo '@ SOA ns1 host 1 3600 600 86400 2'
		echo '  NS ns1'
		echo 'ns1 A 127.0.0.1'
		for c in gslb csk; do echo "$c NS ns1.$c"; echo "ns1.$c A 127.0.0.1"; done
		cat
	} > "$T/parent/test.zone.new"
	mv "$T/parent/test.zone.new" "$T/parent/test.zone"
}
parent_zone </dev/null
PCTL dnssec enable test >/dev/null
PDS=$(PCTL dnssec ds test)
