#!/bin/bash
# SIGHUP applies the health and cutover settings to the running health
# thread: a shorter probe interval raises the probe rate at a real HTTP
# server, a lower grade boundary turns a derated node up again.  A
# changed key that only a restart applies is named and keeps its value;
# a broken health section keeps the running configuration.
. "$(dirname "$0")/lib.sh"
gslb_zone
HP=$((PORT + 3000))
conf() { # interval timeout grade-good grade-usable workers
	write_conf gslb.test z.zone "health:
  interval: $1
  timeout: $2
  grade-good: $3
  grade-usable: $4
  demote-after: 1
  restore-after: 1
  settle: 0
  flap-window: 0"
	sed -i "s/^  workers: 2/  workers: $5\n  log-level: info/" "$T/gslbd.conf"
}
conf 4 2 80 50 2
trap 'stop_httpds; cleanup' EXIT
start_httpd "$HP"
CTL service add s.gslb.test --answers 1 >/dev/null
CTL node add n1 --addr 192.0.2.1 --probe "http://127.0.0.1:$HP/health" >/dev/null
CTL weight set s.gslb.test n1=10 >/dev/null
gslbd_start
wait_up 1 || fail "n1 up"

# Probes in the @1 seconds from now.
hits() {
	local from
	from=$(date +%s.%N)
	sleep "$1"
	awk -v f="$from" '$1 >= f { n++ } END { print n + 0 }' "$T/mode$HP.hits"
}
# Sends SIGHUP and waits (at most 5 s) for the reload's last line.
reload() {
	local before
	before=$(wc -l < "$T/gslbd.log")
	kill -HUP "$PID"
	for _ in $(tseq 50); do
		tail -n +$((before + 1)) "$T/gslbd.log" |
			grep -Eq "reload: done|reload failed|kept their previous" && return 0
		sleep 0.1
	done
	fail "no reload message in the log"
}

slow=$(hits 4)
[ "$slow" -le 2 ] && ok "interval 4 s: $slow probe(s) in 4 s" || fail "interval 4 s: $slow probes in 4 s"

# The interval (and a restart-only key) change by SIGHUP.
conf 0.5 0.4 80 50 3
reload
wait_until 5 grep -q "health: new settings: probing every 0\.5 s" "$T/gslbd.log" ||
	fail "the health thread did not take the new settings"
fast=$(hits 3)
[ "$fast" -ge 4 ] && ok "after SIGHUP, interval 0.5 s: $fast probes in 3 s" ||
	fail "after SIGHUP, interval 0.5 s: $fast probes in 3 s"
log=$(cat "$T/gslbd.log")
expect_has "$log" "reload: health\.interval: 4 -> 0\.5" "the log names the applied interval"
expect_has "$log" "health: new settings: probing every 0\.5 s" "the health thread took the new settings"
expect_has "$log" "reload: server\.workers changed \(2 -> 3\): needs a restart; keeping the old value" \
	"a restart-only key is named, with its values"
expect_has "$log" "reload: done; 1 change\(s\) named above need a restart" "the last line says so"
expect_not "$log" "reload: health\.grade" "unchanged keys are not named"

# A slow node (0.6 s answers) scores below grade-good 80 and is derated;
# lowering the boundary by SIGHUP brings it back up.
conf 1 0.9 80 50 3
reload
echo slow > "$T/mode$HP"
derated=0
for _ in $(tseq 80); do
	CTL status | grep -Eq '^n1 +derated' && { derated=1; break; }
	sleep 0.1
done
[ "$derated" = 1 ] && ok "a slow node is derated under grade-good 80" ||
	fail "slow node not derated: $(CTL status | grep '^n1')"
score=$(CTL status | awk '$1 == "n1" { print $5 }')
[ "${score:-0}" -gt 30 ] && ok "its score ($score) is well above 20" || fail "score of the slow node: $score"
conf 1 0.9 20 10 3
reload
up=0
for _ in $(tseq 80); do
	CTL status | grep -Eq '^n1 +up' && { up=1; break; }
	sleep 0.1
done
[ "$up" = 1 ] && ok "after SIGHUP lowering grade-good to 20, n1 is up" ||
	fail "grade-good change not applied: $(CTL status | grep '^n1')"
expect_has "$(cat "$T/gslbd.log")" "reload: health\.grade-good: 80 -> 20" "the log names grade-good"

# A broken health section: the reload fails and nothing changes.
conf 0.5 0.4 50 60 3
reload
echo ok > "$T/mode$HP"
expect_has "$(cat "$T/gslbd.log")" "reload failed, keeping the running configuration: .*gslbd\.conf:[0-9]+: grade-usable \(60\) must be below grade-good" \
	"a broken health section fails the reload, with file and line"
fast=$(hits 3)
[ "$fast" -le 4 ] && ok "the running interval of 1 s stays ($fast probes in 3 s)" ||
	fail "after a failed reload: $fast probes in 3 s"

if gslbd_stop; then ok "clean exit"; else fail "exit status"; fi
expect_has "$(cat "$T/gslbd.log")" "serving on 127\.0\.0\.1@$PORT \(UDP and TCP\), 2 workers" \
	"it ran with 2 workers throughout"
finish
