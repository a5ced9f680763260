#!/bin/bash
# SIGHUP reload: a changed zone is served (new serial) while queries keep
# being answered; a broken zone keeps its previous version and the log
# names file and line; a broken configuration keeps the running one; zones
# can be added and removed; a new zone that fails to load is left out.
. "$(dirname "$0")/lib.sh"

zone() { # serial address
	cat > "$T/rl.test.zone" <<EOZ
\$ORIGIN rl.test.
\$TTL 3600
@       IN SOA  ns1 hostmaster $1 3600 600 86400 300
        IN NS   ns1
ns1     IN A    192.0.2.1
www     IN A    $2
EOZ
}
serial() { q rl.test SOA +short | awk '{ print $3 }'; }
# Sends SIGHUP and waits (at most 5 s) until the log has grown by a
# "reload:" line or an error after the signal.
reload() {
	local before
	before=$(wc -l < "$T/gslbd.log")
	kill -HUP "$PID"
	for _ in $(tseq 50); do
		if tail -n +$((before + 1)) "$T/gslbd.log" |
			grep -Eq "reload: done|reload failed|kept their previous"; then
			return 0
		fi
		sleep 0.1
	done
	fail "no reload message in the log"
}

zone 1 192.0.2.10
write_conf_zones "  log-level: info" rl.test=rl.test.zone
gslbd_start
expect_has "$(serial)" "^1$" "serial 1 at start"

# Queries keep being answered during reloads: a client sends UDP queries
# while the zone changes and the server reloads five times, until the
# test stops it ($T/load.stop; at most 25 s).  It notes each address it
# sees first in $T/load.seen, so that the test knows when the last zone
# reached it.
py "$T" > "$T/load.out" <<'EOF' &
import dnsraw, os, sys, time
sent = lost = bad = 0
seen = set()
end = time.time() + 25
while time.time() < end and not os.path.exists(sys.argv[1] + "/load.stop"):
    raw = dnsraw.udp(dnsraw.query("www.rl.test", qid=sent & 0xFFFF), timeout=1)
    sent += 1
    if raw is None:
        lost += 1
        continue
    r = dnsraw.parse(raw)
    if r["rcode"] != 0 or len(r["an"]) != 1:
        bad += 1
    else:
        a = ".".join(str(b) for b in r["an"][0][4])
        if a not in seen:
            seen.add(a)
            with open(sys.argv[1] + "/load.seen", "a") as f:
                f.write(a + "\n")
print("sent=%d lost=%d bad=%d seen=%s" % (sent, lost, bad, sorted(seen)))
EOF
LOAD=$!
wait_until 10 grep -qx 192.0.2.10 "$T/load.seen" || fail "the load did not start"
for s in 2 3 4 5 6; do
	zone $s 192.0.2.$((10 + s))
	reload
	sleep 0.2   # queries between two reloads
done
wait_until 5 grep -qx 192.0.2.16 "$T/load.seen"
touch "$T/load.stop"
wait "$LOAD"
res=$(cat "$T/load.out")
if [[ $res =~ ^sent=([0-9]+)\ lost=0\ bad=0\ seen= ]] && [ "${BASH_REMATCH[1]}" -gt 100 ]; then
	ok "queries answered throughout five reloads ($res)"
else
	fail "queries answered throughout five reloads: $res"
fi
expect_has "$res" "192\.0\.2\.16" "the load saw the new data"
expect_has "$(serial)" "^6$" "new serial after reload"
out=$(q www.rl.test A +short)
expect_has "$out" "^192\.0\.2\.16$" "new data after reload"
out=$(q www.rl.test A +short +tcp)
expect_has "$out" "^192\.0\.2\.16$" "new data over TCP"

# A broken zone keeps the previous version; the error names file:line.
zone 7 192.0.2.17
echo 'bad     IN A    999.1.2.3' >> "$T/rl.test.zone"   # line 7
reload
log=$(cat "$T/gslbd.log")
expect_has "$log" "rl\.test\.zone:7:" "log names the broken file and line 7"
expect_has "$log" "keeping serial 6" "log says which version is kept"
expect_has "$(serial)" "^6$" "broken zone: old serial still served"
out=$(q www.rl.test A +short)
expect_has "$out" "^192\.0\.2\.16$" "broken zone: old data still served"

# The error in an included file is reported there.
zone 8 192.0.2.18
printf '; included\n\nx  IN  AAAA  not-an-address\n' > "$T/inc.zone"
echo '$INCLUDE inc.zone' >> "$T/rl.test.zone"
reload
expect_has "$(cat "$T/gslbd.log")" "inc\.zone:3:" "error in an included file: inc.zone:3"
expect_has "$(serial)" "^6$" "broken include: old serial still served"

# Missing SOA: kept as well.
printf '$ORIGIN rl.test.\n@ 3600 IN NS ns1\nns1 3600 IN A 192.0.2.1\n' > "$T/rl.test.zone"
reload
expect_has "$(cat "$T/gslbd.log")" "rl\.test\.zone:.*SOA" "missing SOA reported"
expect_has "$(serial)" "^6$" "missing SOA: old serial still served"

# Fixed again: served.
zone 9 192.0.2.19
reload
expect_has "$(serial)" "^9$" "fixed zone: new serial 9"
expect_not "$(cat "$T/gslbd.log")" "serial went backwards" "no warning while serials go forward"

# A serial that goes backwards is served, and warned about with the
# zone, the old and the new serial; forward again, no new warning.
zone 8 192.0.2.18
reload
expect_has "$(cat "$T/gslbd.log")" "warning: zone rl\.test: serial went backwards on reload, 9 -> 8" \
	"a lower serial on reload: warning names zone, old and new serial"
expect_has "$(serial)" "^8$" "the lower serial is served (the operator's file)"
zone 9 192.0.2.19
reload
[ "$(grep -c "serial went backwards" "$T/gslbd.log")" = 1 ] && ok "8 -> 9: no warning" ||
	fail "warnings: $(grep "serial went backwards" "$T/gslbd.log")"

# A broken configuration keeps the running one.
cp "$T/gslbd.conf" "$T/gslbd.conf.good"
printf 'server:\n  listen: [ "127.0.0.1@%s"\nzones: [\n' "$PORT" > "$T/gslbd.conf"
zone 10 192.0.2.20
reload
expect_has "$(cat "$T/gslbd.log")" "reload failed, keeping the running configuration: .*gslbd\.conf:[0-9]+" \
	"broken configuration: error with file and line"
expect_has "$(serial)" "^9$" "broken configuration: zones not reloaded"
mv "$T/gslbd.conf.good" "$T/gslbd.conf"

# Adding zones: one good, one broken (left out, the rest still reloads).
cat > "$T/new.test.zone" <<'EOZ'
$ORIGIN new.test.
@ 3600 IN SOA ns1.rl.test. hostmaster.rl.test. 1 3600 600 86400 300
@ 3600 IN NS  ns1.rl.test.
www 3600 IN A 192.0.2.77
EOZ
printf '$ORIGIN broken.test.\n@ 3600 IN NS ns1.rl.test.\n' > "$T/broken.test.zone"
write_conf_zones "  log-level: info" rl.test=rl.test.zone new.test=new.test.zone \
	broken.test=broken.test.zone
reload
expect_has "$(serial)" "^10$" "reload with a new failing zone: the others reload"
out=$(q www.new.test A)
expect_has "$out" "192\.0\.2\.77" "added zone served"
out=$(q www.broken.test A)
expect_status "$out" REFUSED "a new zone that fails is not served"
expect_has "$(cat "$T/gslbd.log")" "broken\.test\.zone:" "the failing new zone is logged"

# Removing a zone.
write_conf_zones "  log-level: info" rl.test=rl.test.zone
reload
out=$(q www.new.test A)
expect_status "$out" REFUSED "removed zone: REFUSED"
out=$(q www.rl.test A +short)
expect_has "$out" "^192\.0\.2\.20$" "remaining zone still served"
if gslbd_stop; then ok "clean exit after the reloads"; else fail "exit status after reloads"; fi
finish
