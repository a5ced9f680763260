#!/bin/sh
# SPDX-License-Identifier: MIT
# Installs (as root) or names (otherwise) the Debian 12 packages that the
# build and the tests need.  Called by the Makefile before ./configure and
# by .ci/run; safe to run again.
#
# apt's progress goes to stderr.  When the packages cannot be installed
# (not root, apt locked, a package not found), the reason is printed as
# the last line on stdout and the exit status is 1, so that the Makefile
# can stop with exactly that line.
set -e

# Build: compiler, autoconf and the libraries gslbd links against.
BUILD="gcc make autoconf automake pkg-config libldns-dev libuv1-dev
libmaxminddb-dev liblmdb-dev liburcu-dev libyaml-dev libcurl4-openssl-dev libjansson-dev
libsystemd-dev libmicrohttpd-dev check libsubunit-dev libfstrm-dev
libprotobuf-c-dev protobuf-c-compiler libssl-dev"
# Tests: real DNS clients, the GeoIP writer, clang for the fuzzer,
# the reference servers for the benchmark, and Prometheus (server and
# promtool) for the metrics tests, with python3-yaml to read the rules
# file; a Frame Streams collector (fstrm_capture) for the dnstap test;
# etcd (server and etcdctl) for the cluster tests; Unbound as the caching
# resolver in front of gslbd; stress-ng to load the machine (check-busy);
# build-essential, debhelper, dpkg-dev and lintian to build and check the
# Debian package (make deb-check; dpkg-buildpackage wants build-essential
# besides Build-Depends); DNSViz and Zonemaster to judge the signed zones, with
# bind9 for the named that dnsviz's -N/-D serves a parent zone (with our
# DS) from.
TEST="bind9-dnsutils fstrm-bin knot-dnsutils ldnsutils libmaxmind-db-writer-perl
mmdb-bin lmdb-utils clang libclang-rt-14-dev dnsperf knot knot-module-geoip nsd gdnsd nginx-light
python3 python3-yaml iproute2 procps bc openssl systemd prometheus bash-completion
etcd-server etcd-client unbound stress-ng build-essential debhelper dpkg-dev lintian dnsviz bind9
zonemaster-cli"
# Only the signing benchmark (bench/dnssec.sh): PowerDNS with the bind
# backend and sqlite3 for its DNSSEC database.  `deps.sh --bench` adds
# them to the test packages; the tests never need them.
BENCH="pdns-server pdns-backend-bind sqlite3"

case "$1" in
  --build) want="$BUILD" ;;
  --bench) want="$BUILD $TEST $BENCH" ;;
  *)       want="$BUILD $TEST" ;;
esac

missing=""
for p in $want; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
    missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "gslbd needs these Debian packages:$missing; install them as root with: apt-get install$missing"
  exit 1
fi

echo "deps.sh: installing:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
# Reference servers must not start on port 53 when installed: a
# policy-rc.d that forbids starting services, removed however this script
# ends (one that was there before is left alone).
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
  trap 'rm -f "$policy"' EXIT
  trap 'rm -f "$policy"; exit 1' INT TERM HUP
  printf '#!/bin/sh\nexit 101\n' > "$policy"
  chmod +x "$policy"
fi
log=$(mktemp)
# apt's own progress, live on stderr; its output is kept to find the
# reason when it fails (sh has no pipefail: the status goes by file).
( set +e
  apt-get update -q && apt-get install -y -q --no-install-recommends $missing
  echo $? > "$log.rc" ) 2>&1 | tee "$log" >&2
rc=$(cat "$log.rc")
reason=$(grep -E '^(E|W): ' "$log" | tail -n 1)
rm -f "$log" "$log.rc"
if [ "$rc" != 0 ]; then
  echo "deps.sh: apt-get could not install$missing: ${reason:-see apt's output above}"
  exit 1
fi
