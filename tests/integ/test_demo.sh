#!/bin/bash
# The demo that `make run` serves, as the README shows it: the first
# bootstrap of its store (make demo-db) prints nothing but what went
# wrong, and the README's metrics examples work against the demo's own
# configuration: /metrics and /healthz on the loopback address and port
# the README names, `gslbctl stats` through the same configuration.
# The demo's ports are moved to this test's; everything else is the
# committed zones/gslbd.conf.
. "$(dirname "$0")/lib.sh"
SPORT=$((PORT + 1))
README="$ROOT/README.md"

# The address the README's examples use (curl http://ADDR/metrics) is the
# one the demo configuration serves.
readme_addr=$(grep -oE 'curl -s http://[0-9.]+:[0-9]+/metrics' "$README" | head -1 |
	sed -E 's|curl -s http://||; s|/metrics||')
demo_addr=$(python3 - "$ROOT/zones/gslbd.conf" <<'EOP'
import sys, yaml
c = yaml.safe_load(open(sys.argv[1]))
l = (c.get("stats") or {}).get("listen") or []
print(l[0].replace("@", ":") if l else "")
EOP
)
[ -n "$readme_addr" ] && [ "$demo_addr" = "$readme_addr" ] &&
	ok "the demo serves the statistics on $demo_addr, as the README says" ||
	fail "README's metrics at '$readme_addr', the demo's stats.listen '$demo_addr'"
case $demo_addr in 127.*|"[::1]"*) ok "on loopback" ;; *) fail "stats not on loopback: $demo_addr" ;; esac

# The demo's configuration with this test's ports, next to its zone.
mkdir -p "$T/zones"
cp "$ROOT/zones/cdn.example.test.zone" "$T/zones/"
dport=${demo_addr##*:}
sed -e "s|@5300|@$PORT|g" -e "s|@${dport:-9153}\"|@$SPORT\"|g" \
	-e "s|\.\./geoip/|$ROOT/geoip/|" -e "s|\.\./run/db|$T/db|" \
	"$ROOT/zones/gslbd.conf" > "$T/zones/gslbd.conf"
cp "$T/zones/gslbd.conf" "$T/zones/cdn.example.test.zone" "$T/"

# The first bootstrap: no gslbd runs, as expected, and nothing says so.
out=$(make -s -C "$ROOT" B="$B" demo-db DEMO_CONF="$T/zones/gslbd.conf" DEMO_DB="$T/db" 2>"$T/err")
rc=$?
[ $rc = 0 ] && [ -e "$T/db/data.mdb" ] && ok "make demo-db loads the store" ||
	fail "make demo-db: rc=$rc $out $(cat "$T/err")"
[ ! -s "$T/err" ] && ok "the bootstrap prints nothing on stderr" ||
	fail "the bootstrap's stderr: $(cat "$T/err")"
expect_not "$out" "no gslbd serves" "no warning that no gslbd serves the store"
n=$(CTL log | wc -l)
make -s -C "$ROOT" B="$B" demo-db DEMO_CONF="$T/zones/gslbd.conf" DEMO_DB="$T/db" >/dev/null 2>&1
[ "$(CTL log | wc -l)" = "$n" ] && ok "a second make demo-db leaves the store alone" ||
	fail "a second make demo-db wrote to the store"
# --offline hides the expected warning only: an error still shows, and
# fails.
out=$("$ROOT/$B/gslbctl" --offline -c "$T/gslbd.conf" node add x --addr nope 2>&1)
rc=$?
[ $rc != 0 ] && expect_has "$out" "nope" "--offline: an error is still reported" ||
	fail "--offline: a bad write: rc=$rc $out"
out=$(CTL node add x2 --addr 192.0.2.99 2>&1)
expect_has "$out" "warning: no gslbd serves" "without --offline the warning stays"
CTL node del x2 >/dev/null 2>&1

gslbd_start
# The README's examples, with the test's port.
curl_() { curl -s --max-time 5 "http://127.0.0.1:$SPORT$1"; }
dig @127.0.0.1 -p "$PORT" +short www.cdn.example.test A >/dev/null
m=$(curl_ /metrics | grep '^gslbd_queries_total')
expect_has "$m" '^gslbd_queries_total\{transport="udp"\} [0-9]+$' "curl /metrics | grep gslbd_queries_total: the UDP count"
expect_has "$m" '^gslbd_queries_total\{transport="tcp"\} [0-9]+$' "curl /metrics | grep gslbd_queries_total: the TCP count"
[ "$(curl_ /healthz)" = ok ] && ok "curl /healthz: ok" || fail "healthz: $(curl_ /healthz)"
s=$(CTL stats | grep -A2 '^gslbd_queries_total')
expect_has "$s" '^gslbd_queries_total \(counter\): ' "gslbctl stats: the family"
expect_has "$s" '^  transport=udp +[0-9]+$' "gslbctl stats: the UDP count"
expect_has "$(CTL stats --json)" '"gslbd_queries_total"' "gslbctl stats --json"
finish
