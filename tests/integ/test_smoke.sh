#!/bin/bash
# The demo zone answers over UDP and TCP; SIGTERM stops the server cleanly.
. "$(dirname "$0")/lib.sh"
cp "$ROOT/zones/cdn.example.test.zone" "$T/"
write_conf cdn.example.test cdn.example.test.zone
gslbd_start

out=$(q static.cdn.example.test A)
expect_status "$out" NOERROR
expect_has "$out" "flags: qr aa;" "authoritative answer"
expect_has "$out" "^static\.cdn\.example\.test\..*IN	A	192\.0\.2\.80" "A record"
out=$(q static.cdn.example.test AAAA +tcp)
expect_has "$out" "2001:db8::80" "AAAA over TCP"
out=$(q nothing.cdn.example.test A)
expect_status "$out" NXDOMAIN
expect_has "$out" "IN	SOA" "SOA in authority"
if gslbd_stop; then ok "clean exit on SIGTERM"; else fail "exit status on SIGTERM"; fi
finish
