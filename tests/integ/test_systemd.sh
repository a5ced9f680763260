#!/bin/bash
# Service integration: `make install` and `make uninstall`, the installed
# unit and configuration (systemd-analyze verify, --check), readiness and
# reload notifications on a NOTIFY_SOCKET, and the log targets (journal
# priority prefixes on journald's stream, UTC timestamps, levels).
. "$(dirname "$0")/lib.sh"

# --- make install / uninstall into a private prefix --------------------
P="$T/inst"
make -s -C "$ROOT" install prefix="$P" B="$B" SAN="${SAN:-}" >"$T/install.log" 2>&1 ||
	{ cat "$T/install.log"; fail "make install"; }
for f in sbin/gslbd bin/gslbctl lib/systemd/system/gslbd.service etc/gslbd/gslbd.conf \
         etc/gslbd/gslbd.conf.sample etc/gslbd/cdn.example.com.zone share/gslbd/demo.mmdb \
         share/gslbd/grafana-gslbd.json share/gslbd/gslbd-rules.yml share/gslbd/etcd-gslbd.conf \
         share/man/man8/gslbd.8 share/man/man5/gslbd.conf.5 share/man/man8/gslbctl.8 \
         share/bash-completion/completions/gslbctl; do
	[ -e "$P/$f" ] && ok "installed $f" || fail "installed $f"
done
out=$("$P/sbin/gslbd" -c "$P/etc/gslbd/gslbd.conf" --check 2>&1)
expect_has "$out" "gslbd.conf: ok" "the installed configuration passes --check"
expect_has "$(cat "$P/lib/systemd/system/gslbd.service")" "^ExecStart=$P/sbin/gslbd -c $P/etc/gslbd/gslbd.conf$" \
	"unit names the installed paths"
expect_has "$(cat "$P/lib/systemd/system/gslbd.service")" "^Type=notify$" "unit is Type=notify"
if command -v systemd-analyze >/dev/null; then
	# The prefix is on no MANPATH: the unit's Documentation= must find
	# the pages where install put them.
	out=$(env -u MANPATH systemd-analyze verify "$P/lib/systemd/system/gslbd.service" 2>&1)
	[ $? -eq 0 ] && ok "systemd-analyze verify accepts the unit (man pages checked, no MANPATH)" ||
		fail "systemd-analyze verify: $out"
else
	fail "systemd-analyze is not installed"
fi

# --- the etcd drop-in of a cluster deployment ---------------------------
# Applied to Debian's etcd.service, systemd-analyze accepts it without a
# warning; a real etcd started with its ETCD_* variables takes a
# transaction of 300 operations, which etcd's default (128) refuses.
if [ -e /lib/systemd/system/etcd.service ] && command -v etcd >/dev/null; then
	mkdir -p "$T/units/etcd.service.d"
	cp /lib/systemd/system/etcd.service "$T/units/"
	cp "$P/share/gslbd/etcd-gslbd.conf" "$T/units/etcd.service.d/gslbd.conf"
	out=$(SYSTEMD_UNIT_PATH="$T/units:" systemd-analyze verify "$T/units/etcd.service" 2>&1)
	[ $? -eq 0 ] && [ -z "$out" ] && ok "systemd-analyze verify accepts etcd.service with the drop-in" ||
		fail "etcd drop-in: $out"
	txn300() { # etcd-env-assignments...: 0 when a 300-operation txn succeeds
		local ep="http://127.0.0.1:$((PORT + 30))" pid rc
		rm -rf "$T/etcd"
		env "$@" etcd --name s1 --data-dir "$T/etcd" --listen-client-urls "$ep" \
			--advertise-client-urls "$ep" --listen-peer-urls "http://127.0.0.1:$((PORT + 31))" \
			--initial-advertise-peer-urls "http://127.0.0.1:$((PORT + 31))" \
			--initial-cluster "s1=http://127.0.0.1:$((PORT + 31))" >"$T/etcd.log" 2>&1 &
		pid=$!
		python3 - "$ep" <<'EOP'
import base64, json, sys, time, urllib.request
ep = sys.argv[1]
b = lambda s: base64.b64encode(s.encode()).decode()
ops = [{"request_put": {"key": b("/t/%d" % i), "value": b("x")}} for i in range(300)]
for _ in range(100):
    try:
        req = urllib.request.Request(ep + "/v3/kv/txn", json.dumps({"success": ops}).encode())
        r = json.load(urllib.request.urlopen(req, timeout=5))
        sys.exit(0 if "header" in r else 1)
    except urllib.error.HTTPError:
        sys.exit(1)          # refused: too many operations
    except Exception:
        time.sleep(0.1)      # not up yet
sys.exit(2)
EOP
		rc=$?
		kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
		return $rc
	}
	txn300; [ $? = 1 ] && ok "etcd's defaults refuse a 300-operation transaction" ||
		fail "etcd's defaults took a 300-operation transaction (or did not start)"
	envs=$(sed -n 's/^Environment=//p' "$P/share/gslbd/etcd-gslbd.conf")
	# shellcheck disable=SC2086
	txn300 $envs && ok "with the drop-in's settings etcd takes it" ||
		fail "with the drop-in's settings: $(tail -3 "$T/etcd.log")"
else
	fail "etcd-server is not installed"
fi

echo "# edited" >> "$P/etc/gslbd/gslbd.conf"
# Not silenced (-s would hide an ignored error): an operator's view.
out=$(make --no-print-directory -C "$ROOT" uninstall prefix="$P" B="$B" 2>&1)
rc=$?
[ $rc = 0 ] && ! grep -qiE "error|ignored|cannot" <<<"$out" && ok "uninstall: exit 0, no error" ||
	fail "uninstall: rc=$rc $out"
left=$(cd "$P" && find . | sort | tr '\n' ' ')
[ "$left" = ". ./etc ./etc/gslbd ./etc/gslbd/gslbd.conf " ] &&
	ok "uninstall removes all but an edited gslbd.conf and its folders" ||
	fail "uninstall left: $left"
# Without an edited configuration nothing is left, not even an empty
# folder; a folder that was there before the install stays.
rm -rf "$P"
mkdir -p "$P/share/man"
make -s -C "$ROOT" install prefix="$P" B="$B" SAN="${SAN:-}" >"$T/install.log" 2>&1 ||
	{ cat "$T/install.log"; fail "make install (again)"; }
out=$(make -s -C "$ROOT" uninstall prefix="$P" B="$B" 2>&1)
rc=$?
left=$(cd "$P" && find . | sort | tr '\n' ' ')
[ $rc = 0 ] && [ -z "$out" ] && [ "$left" = ". ./share ./share/man " ] &&
	ok "install then uninstall leaves only the folders that were there" ||
	fail "uninstall: rc=$rc $out; left: $left"

# --- readiness and reload on NOTIFY_SOCKET ------------------------------
gslb_zone
write_conf gslb.test z.zone
PYTHONPATH="$ROOT/tests/integ" timeout 30 python3 "$ROOT/tests/integ/notify.py" \
	"$T/notify.sock" "$T/notify.txt" "$PORT" 25 &
NPID=$!
for _ in $(tseq 50); do [ -S "$T/notify.sock" ] && break; sleep 0.1; done
NOTIFY_SOCKET="$T/notify.sock" WATCHDOG_USEC=1000000 gslbd_start
for _ in $(tseq 50); do grep -q ANSWERED "$T/notify.txt" 2>/dev/null && break; sleep 0.1; done
n=$(cat "$T/notify.txt")
expect_has "$n" "READY=1\|STATUS=serving: 1 zone\(s\) on 2 address\(es\)" "READY=1 with a status line"
expect_has "$n" "^ANSWERED$" "at READY the listeners already answer"
expect_not "$n" "^SILENT$" "never READY before the listeners answer"
# WatchdogSec=1s: a WATCHDOG=1 every half second while all threads run.
# Five of them, and the median of the four gaps between them (the time of
# arrival at the socket, in ms): about 500, not 1000 (a full interval).
watchdogs() { grep '^[0-9]* WATCHDOG=1$' "$T/notify.txt" | head -5 | cut -d' ' -f1; }
five_watchdogs() { [ "$(watchdogs | grep -c .)" -ge 5 ]; }
if wait_until 10 five_watchdogs; then
	gap=$(watchdogs | awk 'NR > 1 { print $1 - p } { p = $1 }' | sort -n | sed -n 2p)
	[ "$gap" -ge 250 ] && [ "$gap" -le 800 ] && ok "WATCHDOG=1 every half interval (median gap $gap ms)" ||
		fail "WATCHDOG=1 median gap $gap ms, not about 500: $(watchdogs | tr '\n' ' ')"
else fail "WATCHDOG=1: $(watchdogs | grep -c .) messages"; fi
kill -HUP "$PID"
for _ in $(tseq 50); do [ "$(grep -c 'READY=1' "$T/notify.txt")" -ge 2 ] && break; sleep 0.1; done
n=$(cat "$T/notify.txt")
expect_has "$n" "RELOADING=1\|STATUS=reloading\|MONOTONIC_USEC=[0-9]+" "SIGHUP: RELOADING=1 with MONOTONIC_USEC"
order=$(grep -o 'RELOADING=1\|READY=1' "$T/notify.txt" | tr '\n' ' ')
[ "$order" = "READY=1 RELOADING=1 READY=1 " ] && ok "READY, RELOADING, READY in order" ||
	fail "notification order: $order"
gslbd_stop
for _ in $(tseq 20); do grep -q STOPPING=1 "$T/notify.txt" && break; sleep 0.1; done
expect_has "$(cat "$T/notify.txt")" "STOPPING=1" "STOPPING=1 on SIGTERM"
kill "$NPID" 2>/dev/null; wait "$NPID" 2>/dev/null

# --- log targets --------------------------------------------------------
# Plain stderr: RFC 3339 UTC timestamps.
expect_has "$(head -1 "$T/gslbd.log")" "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z gslbd\[[0-9]+\]: info: " \
	"stderr lines start with a UTC timestamp"
# stderr that is journald's stream: priority prefixes, no timestamp.
: > "$T/journal.log"
JS=$(stat -c '%d:%i' "$T/journal.log")
JOURNAL_STREAM=$JS "$GSLBD" -c "$T/gslbd.conf" --check >/dev/null 2>&1
JOURNAL_STREAM=$JS "$GSLBD" -c "$T/gslbd.conf" 2>>"$T/journal.log" &
JPID=$!
wait_until 10 grep -q "serving on" "$T/journal.log"
kill "$JPID"; wait "$JPID"
expect_has "$(cat "$T/journal.log")" "^<6>info: serving on 127\.0\.0\.1@$PORT" "on journald's stream: <6> prefix"
expect_not "$(cat "$T/journal.log")" "^[0-9]{4}-" "on journald's stream: no timestamp of our own"
# A log section: local time with offset, and a level.
write_conf gslb.test z.zone "log:
  - target: stderr
    level: warning
    time: local"
: > "$T/gslbd.log"
gslbd_start
echo 'garbage' > "$T/z.zone"   # a reload that fails logs an error
kill -HUP "$PID"
wait_until 5 grep -q "kept their previous version" "$T/gslbd.log" || fail "no failed zone reload in the log"
gslbd_stop
l=$(cat "$T/gslbd.log")
expect_not "$l" ": info: " "level warning: no info lines"
expect_has "$l" "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}[+-][0-9]{2}:[0-9]{2} gslbd\[[0-9]+\]: (error|warning): " \
	"time local: RFC 3339 offset"
# Bad log sections are errors with file and line.
for bad in "log:
  - target: stdout" "log:
  - target: stderr
    level: loud" "log:
  - target: syslog
    time: local" "log:
  - target: journal
  - target: journal"; do
	gslb_zone
	write_conf gslb.test z.zone "$bad"
	out=$("$GSLBD" -c "$T/gslbd.conf" --check 2>&1)
	expect_has "$out" "gslbd\.conf:1[0-9]: log" "bad log section rejected with file:line ($(tail -1 <<<"$bad" | tr -s ' '))"
done
finish
