#!/bin/bash
# SPDX-License-Identifier: MIT
# The Debian package, built, installed, run, upgraded and purged as an
# operator would (make deb-check; needs root and dpkg-buildpackage):
#
#  1. builds the package from a copy of the tree with
#     `dpkg-buildpackage -us -uc -b`, and lintian finds no error in it;
#  2. installs it with dpkg: the gslbd system user, /var/lib/gslbd owned
#     by it (0750), the conffile /etc/gslbd/gslbd.conf that passes
#     --check, the unit, which `systemd-analyze verify` accepts;
#  3. runs the unit's ExecStartPre and ExecStart as the unit does (as the
#     gslbd user, with the shipped configuration and its example zone),
#     on a loopback port of its own (-l), adds a GSLB service with gslbctl
#     as that user, and queries both with dig;
#  4. upgrades to a rebuilt package of a higher version while a dig loop
#     queries it, hands over to the new binary as the package's postinst
#     does under systemd (SIGUSR2), and checks that no query was lost and
#     that the store and a conffile edit survived;
#  5. removes the package (the store and the configuration stay), then
#     purges it (both go).
#
# Without systemd as PID 1 (a container, CI) dpkg cannot start the unit;
# step 3 starts its command line by hand.  A machine where the gslbd
# package is installed already is left alone (exit 77).
set -u
cd "$(dirname "$0")/../.." || exit 2
ROOT=$PWD
PORT=${DEB_PORT:-64300}
T=$(mktemp -d /tmp/gslbd-deb.XXXXXX)
chmod 755 "$T"
pass=0 failed=0
ok()   { echo "ok: $*"; pass=$((pass + 1)); }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
die()  { echo "deb-check: $*" >&2; finish 1; }
pids=()
installed=0
finish() {
	local rc=$1
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
	[ "$installed" = 0 ] || dpkg -P gslbd >/dev/null 2>&1
	rm -rf "$T"
	echo "$pass passed, $failed failed"
	[ "$rc" = 0 ] && [ "$failed" = 0 ] && exit 0
	exit 1
}
trap 'finish 1' INT TERM

if [ "$(id -u)" != 0 ]; then
	echo "SKIP: deb-check installs a package: run it as root"; exit 77
fi
for c in dpkg-buildpackage lintian dig; do
	command -v $c >/dev/null || { echo "SKIP: $c not installed (contrib/deps.sh)"; exit 77; }
done
if dpkg-query -W -f='${Status}' gslbd 2>/dev/null | grep -q 'ok installed'; then
	echo "SKIP: the gslbd package is installed on this machine; deb-check would replace it"
	exit 77
fi

# --- 1. build --------------------------------------------------------------
VERSION=$(dpkg-parsechangelog -l debian/changelog -S Version)
echo "deb-check: building gslbd $VERSION (dpkg-buildpackage, a minute or two)"
contrib/build-deb.sh "$T/src" > /dev/null || die "the package does not build"
ok "dpkg-buildpackage -us -uc -b builds gslbd_${VERSION}"
DEB=$(ls "$T"/src/gslbd_"$VERSION"_*.deb)
lintian "$T"/src/gslbd_"$VERSION"_*.changes > "$T/lintian.txt" 2>&1
if grep -q '^E: ' "$T/lintian.txt"; then
	fail "lintian reports errors:"; grep '^E: ' "$T/lintian.txt"
else
	ok "lintian: no error ($(grep -c '^W: ' "$T/lintian.txt") warnings)"
fi
grep '^W: ' "$T/lintian.txt"

# --- 2. install ------------------------------------------------------------
dpkg -i "$DEB" > "$T/install.log" 2>&1 || { cat "$T/install.log"; die "dpkg -i failed"; }
installed=1
ok "dpkg -i installs it"
getent passwd gslbd > /dev/null && ok "the gslbd system user exists" ||
	fail "no gslbd user after install"
uid=$(id -u gslbd 2>/dev/null || echo 99999)
[ "$uid" -lt 1000 ] && ok "gslbd is a system user (uid $uid)" || fail "gslbd's uid $uid"
st=$(stat -c '%U:%G %a' /var/lib/gslbd 2>/dev/null)
[ "$st" = "gslbd:gslbd 750" ] && ok "/var/lib/gslbd is gslbd's, mode 0750" ||
	fail "/var/lib/gslbd: '$st'"
grep -qx /etc/gslbd/gslbd.conf /var/lib/dpkg/info/gslbd.conffiles &&
	ok "/etc/gslbd/gslbd.conf is a conffile" || fail "gslbd.conf is no conffile"
UNIT=/lib/systemd/system/gslbd.service
[ -f "$UNIT" ] && ok "the unit is installed" || fail "no $UNIT"
if systemd-analyze verify "$UNIT" > "$T/verify.txt" 2>&1; then
	ok "systemd-analyze verify accepts the unit"
else
	fail "systemd-analyze verify:"; cat "$T/verify.txt"
fi
score=$(systemd-analyze security --offline=yes "$UNIT" 2>/dev/null |
	sed -n 's/.*Overall exposure level for .*: \([0-9.]*\) \(.*\)/\1 \2/p')
[ -n "$score" ] && ok "systemd-analyze security: exposure $score" ||
	fail "systemd-analyze security gave no score"
for f in /usr/share/gslbd/grafana-gslbd.json /usr/share/gslbd/gslbd-rules.yml \
	/usr/share/man/man8/gslbd.8.gz /usr/share/man/man5/gslbd.conf.5.gz \
	/usr/share/man/man8/gslbctl.8.gz /usr/share/bash-completion/completions/gslbctl; do
	[ -f "$f" ] || fail "missing $f"
done
ok "man pages, completion, dashboard and rules are in place"

# --- 3. run as the unit does -----------------------------------------------
CONF=/etc/gslbd/gslbd.conf
# The unit's own command lines, with the listen address moved to a port
# of this test's.
pre=$(sed -n 's/^ExecStartPre=//p' "$UNIT")
start=$(sed -n 's/^ExecStart=//p' "$UNIT")
user=$(sed -n 's/^User=//p' "$UNIT")
[ "$user" = gslbd ] && ok "the unit runs as gslbd" || fail "the unit's User= is '$user'"
# setpriv executes the command itself (runuser would stay as its root
# parent), so that $! is gslbd's pid, as the unit's MAINPID is.
as_gslbd() { setpriv --reuid=gslbd --regid=gslbd --init-groups -- "$@"; }
as_gslbd $pre > "$T/pre.txt" 2>&1 && ok "ExecStartPre ($pre) passes as gslbd" ||
	{ fail "ExecStartPre failed:"; cat "$T/pre.txt"; }
start_daemon() { # log file
	# A simple command, not the function: $! is then gslbd itself.
	setpriv --reuid=gslbd --regid=gslbd --init-groups -- $start \
		-l "127.0.0.1@$PORT" > "$1" 2>&1 &
	pids+=($!)
	DPID=$!
}
q() { dig @127.0.0.1 -p "$PORT" +tries=1 +time=2 +short "$@"; }
wait_answer() { # expected, dig args...
	local want=$1 i; shift
	for i in $(seq 50); do
		[ "$(q "$@" 2>/dev/null)" = "$want" ] && return 0
		sleep 0.2
	done
	return 1
}
start_daemon "$T/gslbd1.log"
wait_answer 192.0.2.80 static.cdn.example.com A &&
	ok "the shipped configuration serves its example zone" ||
	{ fail "no answer from the installed gslbd:"; tail -20 "$T/gslbd1.log"; }
[ "$(ps -o user= -p "$DPID")" = gslbd ] && ok "gslbd runs as the gslbd user" ||
	fail "gslbd runs as '$(ps -o user= -p "$DPID")'"
C="gslbctl -c $CONF"
as_gslbd $C node add bj-1 --addr 192.0.2.41 --region cn-bj --isp ctcc > "$T/ctl.txt" 2>&1 &&
	as_gslbd $C service add www.cdn.example.com --ttl 30 >> "$T/ctl.txt" 2>&1 &&
	as_gslbd $C weight set www.cdn.example.com bj-1=100 >> "$T/ctl.txt" 2>&1 &&
	ok "gslbctl as gslbd adds a node, a service and a row" ||
	{ fail "gslbctl:"; cat "$T/ctl.txt"; }
wait_answer 192.0.2.41 www.cdn.example.com A &&
	ok "the GSLB service answers from the store in /var/lib/gslbd" ||
	fail "www.cdn.example.com: '$(q www.cdn.example.com A)'"
# An operator's edit of the conffile must survive the upgrade.
sed -i 's/^  identity: .*/  identity: ns-deb-check/' "$CONF"

# --- 4. upgrade without a lost query ----------------------------------------
NEWV=$VERSION+1
mkdir "$T/new"
dpkg-deb -R "$DEB" "$T/new/pkg"
sed -i "s/^Version: .*/Version: $NEWV/" "$T/new/pkg/DEBIAN/control"
dpkg-deb -b "$T/new/pkg" "$T/new/gslbd_${NEWV}_amd64.deb" > /dev/null
# A query every 20 ms for the upgrade's whole length, each answer noted.
( for i in $(seq 600); do
	[ -e "$T/stop-loop" ] && break
	r=$(q www.cdn.example.com A 2>/dev/null)
	echo "${r:-LOST}"
	sleep 0.02
done ) > "$T/loop.txt" &
loop=$!
pids+=($loop)
sleep 0.5
dpkg -i "$T/new/gslbd_${NEWV}_amd64.deb" > "$T/upgrade.log" 2>&1 &&
	ok "dpkg -i upgrades $VERSION to $NEWV" || { fail "upgrade:"; cat "$T/upgrade.log"; }
old=$DPID
# What postinst does under systemd: SIGUSR2 to the main process.
kill -USR2 "$old"
for i in $(seq 100); do kill -0 "$old" 2>/dev/null || break; sleep 0.1; done
kill -0 "$old" 2>/dev/null && fail "the old gslbd still runs 10 s after SIGUSR2" ||
	ok "the old gslbd handed over and exited"
new=$(pgrep -u gslbd -x gslbd | head -1)
[ -n "$new" ] && [ "$new" != "$old" ] && ok "the new binary serves (pid $new)" ||
	fail "no new gslbd process"
[ -n "$new" ] && pids+=($new)
sleep 1
touch "$T/stop-loop"; wait "$loop"
n=$(wc -l < "$T/loop.txt"); lost=$(grep -vcx 192.0.2.41 "$T/loop.txt")
[ "$n" -ge 20 ] && [ "$lost" = 0 ] &&
	ok "no query lost across the upgrade ($n queries)" ||
	fail "$lost of $n queries lost or wrong across the upgrade"
[ "$(dpkg-query -W -f='${Version}' gslbd)" = "$NEWV" ] && ok "version $NEWV installed" ||
	fail "installed version $(dpkg-query -W -f='${Version}' gslbd)"
grep -q 'identity: ns-deb-check' "$CONF" && ok "the edited gslbd.conf survived the upgrade" ||
	fail "the upgrade replaced the edited gslbd.conf"
as_gslbd $C weight show www.cdn.example.com 2>/dev/null | grep -q bj-1 &&
	ok "the store survived the upgrade" || fail "the store lost the row"
[ "$(dig @127.0.0.1 -p "$PORT" +short CH TXT id.server)" = '"ns-deb-check"' ] &&
	ok "the new process read the edited configuration" ||
	{ fail "id.server: $(dig @127.0.0.1 -p "$PORT" +short CH TXT id.server)"; tail -20 "$T/gslbd1.log"; }

# --- 5. remove, purge --------------------------------------------------------
[ -n "$new" ] && { kill "$new"; for i in $(seq 50); do kill -0 "$new" 2>/dev/null || break; sleep 0.1; done; }
dpkg -r gslbd > "$T/remove.log" 2>&1 && ok "dpkg -r removes it" || { fail "remove:"; cat "$T/remove.log"; }
[ ! -e /usr/sbin/gslbd ] && [ -f "$CONF" ] && [ -d /var/lib/gslbd ] &&
	ok "remove takes the programs and leaves the configuration and the store" ||
	fail "after remove: binary $(ls /usr/sbin/gslbd 2>&1), conf $(ls $CONF 2>&1)"
dpkg -P gslbd > "$T/purge.log" 2>&1 && ok "dpkg -P purges it" || { fail "purge:"; cat "$T/purge.log"; }
installed=0
[ ! -e /etc/gslbd ] && [ ! -e /var/lib/gslbd ] &&
	ok "purge removes /etc/gslbd and /var/lib/gslbd" ||
	fail "after purge: $(ls -d /etc/gslbd /var/lib/gslbd 2>&1)"
finish 0
