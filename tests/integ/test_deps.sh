#!/bin/bash
# contrib/deps.sh and the Makefile when packages cannot be installed: make
# ends with the reason as its last line, apt's output is shown, and no
# policy-rc.d is left behind.  apt-get, dpkg-query and id are stand-ins on
# PATH, so nothing is installed and the machine is not touched.
. "$(dirname "$0")/lib.sh"
STUB="$T/stub"
mkdir -p "$STUB" "$T/tree"
cat > "$STUB/dpkg-query" <<'EOS'
#!/bin/sh
exit 1
EOS
cat > "$STUB/apt-get" <<'EOS'
#!/bin/sh
echo "Reading package lists... (stand-in apt-get $1)"
[ "$1" = update ] && exit 0
echo "E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 4242 (apt-get)"
exit 100
EOS
cat > "$STUB/id" <<'EOS'
#!/bin/sh
echo "${STUB_UID:-0}"
EOS
chmod +x "$STUB"/*
# A copy of the tree as a fresh clone has it (no config.mk).
(cd "$ROOT" && git ls-files -z | xargs -0 cp --parents -t "$T/tree")
had_policy=no; [ -e /usr/sbin/policy-rc.d ] && had_policy=yes

out=$(cd "$T/tree" && PATH="$STUB:$PATH" env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make 2>&1); rc=$?
[ "$rc" -ne 0 ] && ok "make fails when packages cannot be installed" || fail "make: exit $rc"
last=$(tail -n 1 <<<"$out")
expect_has "$last" "apt-get could not install .*: E: Could not get lock /var/lib/dpkg/lock-frontend" \
	"apt locked: make's last line is the reason"
expect_not "$out" "No rule to make target" "no 'No rule to make target'"
expect_has "$out" "stand-in apt-get install" "apt's own output is shown"
if [ "$had_policy" = no ]; then
	[ -e /usr/sbin/policy-rc.d ] && fail "policy-rc.d left behind" || ok "no policy-rc.d left behind"
else
	ok "a policy-rc.d that was there is left alone"
fi
out=$(cd "$T/tree" && PATH="$STUB:$PATH" STUB_UID=1000 env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make 2>&1); rc=$?
[ "$rc" -ne 0 ] && ok "not root: make fails" || fail "not root: exit $rc"
expect_has "$(tail -n 1 <<<"$out")" "gslbd needs these Debian packages: .*libldns-dev.*install them as root with: apt-get install" \
	"not root: make's last line names the packages"
# deps.sh on its own: exit 1, the reason last on stdout.
out=$(cd "$T/tree" && PATH="$STUB:$PATH" ./contrib/deps.sh 2>/dev/null); rc=$?
[ "$rc" -eq 1 ] && ok "deps.sh exits 1" || fail "deps.sh: exit $rc"
expect_has "$(tail -n 1 <<<"$out")" "^deps\.sh: apt-get could not install .*dnsperf" "deps.sh: the reason on stdout"
# make clean needs no packages.
out=$(cd "$T/tree" && PATH="$STUB:$PATH" env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make clean 2>&1); rc=$?
[ "$rc" -eq 0 ] && ok "make clean needs no packages" || fail "make clean: exit $rc: $out"
finish
