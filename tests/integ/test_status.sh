#!/bin/bash
# `gslbctl status` tells one story per node: right after a demotion and
# after a restore, polled as fast as it runs, the state, the score, the
# last probe and the reason come from the same decision, and the JSON has
# one state per node.  A real HTTP target that the test stops and starts.
. "$(dirname "$0")/lib.sh"
gslb_zone
write_conf gslb.test z.zone "health:
  interval: 1
  timeout: 0.5
  settle: 2
  flap-window: 0"
HP=$((PORT + 3000))
trap 'stop_httpds; cleanup' EXIT
start_httpd "$HP"
CTL service add www.gslb.test --ttl 30 --short-ttl 5 >/dev/null
CTL node add a --addr 192.0.2.1 --probe "http://127.0.0.1:$HP/health" >/dev/null
CTL node add b --addr 192.0.2.2 >/dev/null
CTL weight set www.gslb.test a=1 b=1 >/dev/null
gslbd_start
wait_up 1 100 || fail "node a never up"

# Polls `status` (JSON and table) for SECONDS after the target went to
# MODE; every sample is checked by status_check below.  Stops early once
# the transition is SETTLED samples old.
samples() { # seconds
	local end=$((SECONDS + $1)) i=0
	while [ $SECONDS -lt $end ]; do
		CTL --json status > "$T/s.$i.json" 2>/dev/null
		CTL status > "$T/s.$i.txt" 2>/dev/null
		i=$((i + 1))
	done
	echo "$i"
}
# status_check N TARGET(up|down) T0 -> "STATES SEEN | SECOND STATES | CONTRADICTIONS"
status_check() {
	python3 - "$T" "$1" "$2" "$3" <<'PY'
import json, re, sys
d, n, target, t0 = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
seen, bad, dup = set(), [], []
for i in range(n):
    try:
        doc = json.load(open('%s/s.%d.json' % (d, i)))
        txt = open('%s/s.%d.txt' % (d, i)).read()
    except Exception as e:
        continue
    a = [x for x in doc["nodes"] if x["node"] == "a"][0]
    st = a.get("status") or {}
    state = a["state"]
    seen.add(state)
    # One state: nothing nested beside the summary says otherwise.
    for k in ("health", "status"):
        if isinstance(a.get(k), dict) and "state" in a[k]:
            dup.append("%d: %s.state %s next to state %s" % (i, k, a[k]["state"], state))
    # The live status shown is the one of the decision shown, or newer.
    since, upd = a.get("state_since_unix") or 0, st.get("updated") or 0
    if upd < since:
        bad.append("%d: %s since %d, score and probes from %d" % (i, state, since, upd))
    probes = st.get("probes") or []
    last_ok = probes[0]["ok"] if probes else None
    # A decision taken after the target changed rests on probes of the
    # target as it is now.
    if since >= t0 and target == "down" and state == "demoted":
        if last_ok:
            bad.append("%d: demoted with last probe ok" % i)
        if a.get("score") is not None and a["score"] >= 80:
            bad.append("%d: demoted with score %s" % (i, a["score"]))
    if since >= t0 and target == "up" and state == "up" and last_ok is False:
        bad.append("%d: up with last probe FAIL" % i)
    # The table says the same as the document.
    m = re.search(r'^a +(\S+) +\S+ +\S+ +(\S+) +\S+ +\S+ +(ok|FAIL) ', txt, re.M)
    if m and state in ("demoted", "up") and since >= t0:
        if target == "down" and m.group(1) == "demoted" and m.group(3) == "ok":
            bad.append("%d: table: demoted, last probe ok" % i)
        if target == "down" and m.group(1) == "demoted" and m.group(2).isdigit() and int(m.group(2)) >= 80:
            bad.append("%d: table: demoted, score %s" % (i, m.group(2)))
print(" ".join(sorted(seen)), "|", "; ".join(dup[:2]) if dup else "none", "|",
      "; ".join(bad[:6]) if bad else "none")
PY
}

# The demotion: the target refuses connections.
t0=$(date +%s)
echo down > "$T/mode$HP"
n=$(samples 7)
res=$(status_check "$n" down "$t0")
echo "# $n samples after the demotion: $res"
[[ ${res%%|*} == *demoted* ]] && ok "the demotion was seen ($n samples)" || fail "no demotion seen: $res"
one=${res#*| }; one=${one%% |*}
[ "$one" = none ] && ok "one state per node in the JSON after a demotion" ||
	fail "JSON after a demotion: $one"
[ "${res##*| }" = none ] && ok "status never contradicts itself after a demotion" ||
	fail "status after a demotion: ${res##*| }"

# The restore: the target answers again; three good rounds bring it back.
t0=$(date +%s)
echo ok > "$T/mode$HP"
n=$(samples 9)
res=$(status_check "$n" up "$t0")
echo "# $n samples after the restore: $res"
st=$(CTL --json status | python3 -c 'import json,sys; print([x["state"] for x in json.load(sys.stdin)["nodes"] if x["node"]=="a"][0])')
[ "$st" = up ] && ok "the restore was seen" || fail "node a not restored: $st"
one=${res#*| }; one=${one%% |*}
[ "$one" = none ] && ok "one state per node in the JSON after a restore" ||
	fail "JSON after a restore: $one"
[ "${res##*| }" = none ] && ok "status never contradicts itself after a restore" ||
	fail "status after a restore: ${res##*| }"
finish
