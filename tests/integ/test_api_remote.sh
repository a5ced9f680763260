#!/bin/bash
# gslbctl --server: commands run by a remote gslbd through POST /v1/run
# give the same standard output, standard error and exit status as
# gslbctl on the daemon's machine, word for word (--json too); the audit
# records the token's name and the client; the token's role, the
# options that would pick another configuration or store and the names
# of files on the daemon's machine are refused.
#
# Reads run both ways on the daemon's store.  A write runs through the
# API on the daemon's store (A) and locally on a second store (B) that
# has had the same changes, so that both give the same change ids.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/api_lib.sh"
gslb_zone
SPORT=$((PORT + 2))
write_conf gslb.test z.zone "api:
  listen: [ \"127.0.0.1@$APORT\" ]
  tls-cert: api.crt
  tls-key: api.key
  rate: 1000
stats:
  listen: [ \"127.0.0.1@$SPORT\" ]"
mkdir -p "$T/b"
cp "$T/gslbd.conf" "$T/z.zone" "$T/api.crt" "$T/api.key" "$T/b/"
CTLB() { "$ROOT/$B/gslbctl" -c "$T/b/gslbd.conf" "$@"; }
# The same setup in both stores.
for c in CTL CTLB; do
	$c service add www.gslb.test >/dev/null
	$c node add n1 --addr 192.0.2.1 >/dev/null
done
tok() { # name role -> the token, made in A (and a twin in B, to keep the ids equal)
	CTLB api token add "$1" --role "$2" >/dev/null
	CTL api token add "$1" --role "$2" | awk '/^token /{ print $3 }'
}
tok boss admin >"$T/admin.tok"
tok deployer operate >"$T/operate.tok"
tok reader read >"$T/read.tok"
chmod 600 "$T"/*.tok

gslbd_start
wait_tcp "$APORT" 2>/dev/null || true
# R [TOKEN-FILE] ARGS...: gslbctl --server against the daemon.
RT() { local t=$1; shift; "$ROOT/$B/gslbctl" --server "$U" --token-file "$T/$t.tok"  --cacert "$T/api.crt" "$@"; }
R() { RT admin "$@"; }

# same MESSAGE LOCAL-FN ARGS...: gslbctl with the local function (CTL:
# the daemon's own store, CTLB: the twin store) and through the API
# give the same stdout, stderr and exit status.
same() {
	local msg=$1 loc=$2
	shift 2
	local lc=0 rc=0
	$loc "$@" >"$T/l.out" 2>"$T/l.err" || lc=$?
	R "$@" >"$T/r.out" 2>"$T/r.err" || rc=$?
	if [ "$lc" = "$rc" ] && cmp -s "$T/l.out" "$T/r.out" && cmp -s "$T/l.err" "$T/r.err"; then
		ok "$msg (exit $rc)"
	else
		fail "$msg: exit local $lc remote $rc; stdout: $(diff "$T/l.out" "$T/r.out" | head -5); stderr: $(diff "$T/l.err" "$T/r.err" | head -5)"
	fi
}
# A write: through the API on A, locally on B.
same_w() { local msg=$1; shift; same "$msg" CTLB "$@"; }
same_r() { local msg=$1; shift; same "$msg" CTL "$@"; }

same_r "service list" service list; exit
finish
