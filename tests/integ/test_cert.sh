#!/bin/bash
# HTTPS probes (S4-2): a certificate close to expiry is reported in the
# log, a verifying probe against a self-signed certificate fails, an
# insecure one passes.
. "$(dirname "$0")/lib.sh"
command -v openssl >/dev/null || { echo "openssl missing: skipped"; echo "0 checks, 0 failed"; exit 0; }
openssl req -x509 -newkey rsa:2048 -nodes -days 5 -subj /CN=localhost \
	-keyout "$T/key.pem" -out "$T/cert.pem" >/dev/null 2>&1 || { echo "cannot make a certificate"; exit 1; }
HP=$((PORT + 3000))
openssl s_server -quiet -www -accept "$HP" -cert "$T/cert.pem" -key "$T/key.pem" >/dev/null 2>&1 &
SPID=$!
trap 'kill $SPID 2>/dev/null; cleanup' EXIT
wait_tcp "$HP"
gslb_zone
write_conf gslb.test z.zone "health:
  interval: 1
  timeout: 0.9"
CTL service add www.gslb.test >/dev/null
CTL node add ins --addr 192.0.2.1 --probe "https://127.0.0.1:$HP/ insecure" >/dev/null
CTL node add ver --addr 192.0.2.2 --probe "https://127.0.0.1:$HP/" >/dev/null
CTL weight set www.gslb.test ins=1 ver=1 >/dev/null
gslbd_start
for _ in $(tseq 150); do
	# openssl s_server takes one connection at a time: on a busy
	# machine one probe can time out waiting behind the other, so the
	# wait is for the certificate's own failure.
	grep -q "expires in" "$T/gslbd.log" &&
		[ "$(CTL status | grep -Ec '^ver +demoted .*(certificate|SSL)')" = 1 ] && break
	sleep 0.1
done
expect_has "$(cat "$T/gslbd.log")" "node ins: the certificate of https://127\.0\.0\.1:$HP/ expires in [45] days" "expiry within 14 days reported"
out=$(CTL status)
expect_has "$out" "^ins +up " "insecure probe: node up"
expect_has "$out" "^ver +demoted .*(certificate|SSL)" "verifying probe: self-signed certificate fails"
out=$(CTL --json status)
expect_has "$out" '"cert_days_left": [45]' "status shows the days left"
finish
