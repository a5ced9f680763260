#!/bin/sh
# SPDX-License-Identifier: MIT
# Installs (as root) or names (otherwise) the Debian 12 packages that the
# build and the tests need.  Called by the Makefile before ./configure and
# by .ci/run; safe to run again.
set -e

# Build: compiler, autoconf and the libraries gslbd links against.
BUILD="gcc make autoconf automake pkg-config libldns-dev libuv1-dev
libmaxminddb-dev liblmdb-dev liburcu-dev libyaml-dev libcurl4-openssl-dev libjansson-dev
libsystemd-dev check libsubunit-dev"
# Tests: real DNS clients, the GeoIP writer, clang for the fuzzer,
# and the reference servers for the benchmark.
TEST="bind9-dnsutils knot-dnsutils ldnsutils libmaxmind-db-writer-perl
mmdb-bin lmdb-utils clang libclang-rt-14-dev dnsperf knot nsd gdnsd nginx-light
python3 iproute2 procps bc openssl systemd"

case "$1" in
  --build) want="$BUILD" ;;
  *)       want="$BUILD $TEST" ;;
esac

missing=""
for p in $want; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
    missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "deps.sh: installing:$missing" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # Reference servers must not start on port 53 when installed.
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
  chmod +x /usr/sbin/policy-rc.d
  apt-get install -y -qq --no-install-recommends $missing >/dev/null
  rm -f /usr/sbin/policy-rc.d
else
  echo "gslbd needs these Debian packages:$missing" >&2
  echo "install them with: apt-get install$missing" >&2
  exit 1
fi
