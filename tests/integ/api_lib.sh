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
