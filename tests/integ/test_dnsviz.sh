#!/bin/bash
# The signed demo zone as DNSViz sees it: `dnsviz probe`, authoritative
# only, against gslbd on loopback (-x), with the DS that `gslbctl dnssec
# ds` prints as the delegation's (-N/-D: dnsviz serves the parent from a
# named of its own on ::1), then `dnsviz grok`: no error and no warning
# anywhere, the delegation SECURE and every RRSIG VALID, for the apex,
# GSLB services (a sticky pair, with and without a client subnet),
# static names, a CNAME within the zone (not api, whose CNAME to another
# provider would send dnsviz to the Internet), a wildcard, an empty
# non-terminal, SRV and a name that does not exist; with ECDSA P-256 and
# with Ed25519.  A wrong
# DS must make grok report the delegation BOGUS, so that a clean report
# means the signatures were checked.
. "$(dirname "$0")/lib.sh"

if ! command -v dnsviz >/dev/null || ! command -v named >/dev/null; then
	echo "SKIP: dnsviz or named (bind9, for dnsviz's -N/-D) not installed"
	exit 77
fi

Z=cdn.example.test
cp "$ROOT/zones/$Z.zone" "$T/"
NAMES="$Z www.$Z video.$Z static.$Z img.$Z a.edge.$Z path.$Z ent.path.$Z
_dns._udp.$Z nx.$Z"

# Reads a grok report (JSON) and prints every error and warning with
# where it is, "delegation STATUS", and "rrsig N valid M other".
cat > "$T/grok.py" <<'EOF'
import json
import sys

d = json.load(open(sys.argv[1]))
zone = sys.argv[2]
sigs = {"VALID": 0, "other": 0}


def walk(x, path):
    if isinstance(x, dict):
        for k, v in x.items():
            if k in ("errors", "warnings") and v:
                for e in v:
                    print("%s %s: %s %s" % (k[:-1], "/".join(path),
                                            e.get("code"), e.get("description")))
            elif k == "rrsig" and isinstance(v, list):
                for s in v:
                    sigs["VALID" if s.get("status") == "VALID" else "other"] += 1
                walk(v, path + [k])
            else:
                walk(v, path + [k])
    elif isinstance(x, list):
        for v in x:
            walk(v, path + [str(v.get("id", "")) if isinstance(v, dict) else "-"])


walk(d, [])
print("delegation %s" % ((d.get(zone) or {}).get("delegation") or {}).get("status"))
print("rrsig %d valid %d other" % (sigs["VALID"] + sigs["other"], sigs["VALID"]))
EOF

# Probes the demo zone signed with @alg; prints grok.py's summary.
probe() { # alg ds-file [dnsviz probe args]
	local alg=$1 ds=$2
	shift 2
	# dnsviz's named for the parent lives under $T/tmp; one left behind
	# by a probe cut short is stopped by its PID.
	mkdir -p "$T/tmp"
	# shellcheck disable=SC2086
	TMPDIR="$T/tmp" timeout "$(tscale 120)" dnsviz probe -A -a example.test \
		-x "$Z:127.0.0.1:$PORT" -N "$Z:ns1.$Z=127.0.0.1:$PORT" -D "$Z:$ds" \
		"$@" -o "$T/probe-$alg.json" $NAMES > "$T/probe-$alg.log" 2>&1
	local pid
	for pid in $(pgrep -f "named -c $T/tmp/"); do stop_pid "$pid"; done
	dnsviz grok -r "$T/probe-$alg.json" > "$T/grok-$alg.json" 2>>"$T/probe-$alg.log"
	py "$T/grok-$alg.json" "$Z." < "$T/grok.py"
}

check_alg() { # alg (ecdsap256 | ed25519)
	local alg=$1 out
	rm -rf "$T/db" "$T/keys"
	mkdir "$T/keys"
	chmod 700 "$T/keys"
	write_conf_zones "  udp-max-payload: 1232
  identity: ns1.$Z" "$Z=$Z.zone"
	cat >> "$T/gslbd.conf" <<EOC
geoip:
  database: $ROOT/geoip/demo.mmdb
  region: [ region ]
  isp: [ isp ]
  edns-client-subnet: on
dnssec:
  keystore: keys
EOC
	CTL --offline apply "$ROOT/zones/demo-gslb.json" >/dev/null 2>&1 || fail "$alg: apply the demo data"
	CTL --offline dnssec enable "$Z" --algorithm "$alg" >/dev/null || fail "$alg: dnssec enable"
	CTL dnssec ds "$Z" > "$T/ds-$alg.txt"
	gslbd_start
	out=$(probe "$alg" "$T/ds-$alg.txt")
	echo "$out" | sed "s/^/  $alg: /"
	expect_not "$out" "^(error|warning) " "$alg: dnsviz grok reports no error and no warning"
	expect_has "$out" "^delegation SECURE$" "$alg: the delegation with the DS is SECURE"
	local total valid
	total=$(word_after "$out" rrsig)
	valid=$(sed -nE 's/^rrsig [0-9]+ valid ([0-9]+) other.*/\1/p' <<<"$out")
	if [ "${total:-0}" -ge 20 ] && [ "$total" = "$valid" ]; then
		ok "$alg: all $total RRSIGs VALID"
	else fail "$alg: RRSIGs: $out"; fi
	# A client in a region: the GSLB answers with a scope, still clean.
	out=$(NAMES="www.$Z video.$Z" probe "$alg-ecs" "$T/ds-$alg.txt" -e 101.6.0.0/16)
	expect_not "$out" "^(error|warning) " "$alg: with a client subnet, no error and no warning"
	gslbd_stop || fail "$alg: clean exit"
}

check_alg ecdsap256
check_alg ed25519

# The control: a DS of another digest makes the same zone BOGUS.
sed -E 's/[0-9A-F]{4}$/0000/' "$T/ds-ed25519.txt" > "$T/ds-wrong.txt"
gslbd_start
out=$(NAMES="$Z www.$Z" probe wrong "$T/ds-wrong.txt")
expect_has "$out" "^delegation BOGUS$" "a wrong DS: the delegation is BOGUS"
expect_has "$out" "^error .*DIGEST_INVALID" "a wrong DS: grok names the digest"
finish
