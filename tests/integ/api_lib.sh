#!/bin/bash
# Helpers of the HTTP API tests (sourced after lib.sh): the API's port
# and a certificate for 127.0.0.1 (APORT, $T/api.crt and api.key; the
# test skips without curl and openssl), and curl against the running
# daemon.
command -v curl >/dev/null && command -v openssl >/dev/null || { echo "skip: needs curl and openssl"; exit 77; }
APORT=$((PORT + 1))
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=localhost \
	-addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
	-keyout "$T/api.key" -out "$T/api.crt" >/dev/null 2>&1 || { fail "openssl req"; finish; exit; }
U="https://127.0.0.1:$APORT"
# call TOKEN METHOD PATH [curl args] -> "STATUS\nBODY" (headers in $T/h)
call() {
	local t=$1 m=$2 p=$3
	shift 3
	curl -sS --cacert "$T/api.crt" -D "$T/h" -o "$T/b" -w '%{http_code}\n' \
		${t:+-H "Authorization: Bearer $t"} -X "$m" "$@" "$U$p" 2>&1
	cat "$T/b" 2>/dev/null
}
code() { head -1 <<<"$1"; }
etag() { tr -d '\r' <"$T/h" | awk 'tolower($1) == "etag:" { print $2 }'; }
# tok NAME --role ROLE: a new token of the store's (CTL api token add).
tok() { CTL api token add "$@" | awk '/^token /{ print $3 }'; }
# errtext "STATUS\nBODY": the error text of an answer.
errtext() { tail -n +2 <<<"$1" | python3 -c 'import json, sys; print(json.load(sys.stdin)["error"])'; }
# gen_now: the table's generation now, as the ETag of GET /v1/status
# with token $RT.
gen_now() { call "$RT" GET /v1/status >/dev/null; etag; }
# last_rec: the newest audit record that is neither the health thread's
# nor the steering engine's, as gslbctl --json log gives it.
last_rec() {
	CTL --json log --limit 5 | python3 -c '
import json, sys
recs = [r for r in json.load(sys.stdin)["records"] if r.get("actor") not in ("health", "gslbd:steer")]
print(json.dumps(recs[-1], indent=2) if recs else "")'
}
# Cluster tests (after cluster_lib.sh): the API of nsI on PORT + 40 + I
# (PORT + I is its DNS port), and api_ns_conf I, nsI's configuration
# (ns_conf) serving it with this certificate.
AP() { echo $((PORT + 40 + $1)); }
api_ns_conf() {
	ns_conf "$1"
	cp "$T/api.crt" "$T/api.key" "$T/ns$1/"
	cat >> "$T/ns$1/gslbd.conf" <<EOC
api:
  listen: [ "127.0.0.1@$(AP "$1")" ]
  tls-cert: api.crt
  tls-key: api.key
  rate: 1000
EOC
}
