#!/bin/bash
# kill -9 at any moment loses nothing committed and leaves no half-change:
# gslbctl is killed at random points of a 10,000-row apply while the
# daemon serves and its health thread writes, and every time the store
# equals either the export before or the export after; then the daemon
# itself is killed during health commits and restarts from its persisted
# state.  Bounded: ITER kills (default 15), about a minute in all.
. "$(dirname "$0")/lib.sh"
# Fewer under sanitizers, where one apply takes several times longer.
ITER=${ITER:-$([ -n "${SAN:-}" ] && echo 8 || echo 15)}
gslb_zone
write_conf gslb.test z.zone "health:
  interval: 1
  timeout: 0.5
  settle: 1"
P1=$((PORT + 1)) P2=$((PORT + 2))
trap 'stop_httpds; cleanup' EXIT
start_httpd "$P1"
start_httpd "$P2"
# Two tables of 100 services x 100 rows = 10,000 rows over 20 nodes,
# differing in every row's weights and in 50 services' TTLs.
python3 - "$T" "$P1" "$P2" <<'EOP'
import json, sys
d, p1, p2 = sys.argv[1], sys.argv[2], sys.argv[3]
def table(w, ttl):
    nodes = [{"id": "n%02d" % i, "addrs": ["192.0.2.%d" % (i + 1)], "region": "r%d" % (i % 10),
              "isp": "i%d" % (i % 2), "capacity": 1000, "pool": "primary", "admin": "auto"}
             for i in range(20)]
    nodes[0]["probes"] = ["http://127.0.0.1:%s/ interval=1" % p1]
    nodes[1]["probes"] = ["http://127.0.0.1:%s/ interval=1" % p2]
    svcs = [{"name": "s%03d.gslb.test" % s, "ttl": ttl if s < 50 else 60, "short_ttl": 10,
             "answers": 1, "all_down": "open", "sticky": False} for s in range(100)]
    rows = []
    for s in range(100):
        for r in range(100):
            reg, isp = ("r%d" % (r % 10), "i%d" % (r // 10 % 2)) if r else ("*", "*")
            if r and r >= 20:
                reg, isp = "x%d" % r, "*"
            rows.append({"service": "s%03d.gslb.test" % s, "region": reg, "isp": isp,
                         "weights": {"n%02d" % (r % 20): w, "n%02d" % ((r + 1) % 20): w + 1}})
    return {"version": 1, "services": svcs, "nodes": nodes, "weights": rows}
json.dump(table(1, 30), open(d + "/a.json", "w"))
json.dump(table(7, 45), open(d + "/b.json", "w"))
EOP
CTL apply "$T/a.json" >/dev/null || { fail "apply a.json"; finish; exit 1; }
gslbd_start
norm() { python3 -c "import json,sys; print(json.dumps(json.load(sys.stdin), sort_keys=True))"; }
CTL export | norm > "$T/before.json"
CTL apply "$T/b.json" >/dev/null
CTL export | norm > "$T/after.json"
CTL apply "$T/a.json" >/dev/null
cmp -s "$T/before.json" "$T/after.json" && { fail "the two tables export alike"; finish; exit 1; }
# The time one apply takes, to spread the kills over it.
t0=$(date +%s%N); CTL apply "$T/b.json" >/dev/null; t1=$(date +%s%N)
CTL apply "$T/a.json" >/dev/null
span=$(( (t1 - t0) / 1000000 ))
echo "# one apply of 10,000 rows: $span ms"
# The probe targets flap meanwhile, so the health thread commits too.
( for i in $(seq 200); do echo err > "$T/mode$P1"; sleep 0.3; echo ok > "$T/mode$P1"; sleep 0.3; done ) &
FLAP=$!
before=0 after=0 bad=0 silent=0
state=a
for i in $(seq "$ITER"); do
	want=b; [ $state = b ] && want=a
	"$ROOT/$B/gslbctl" -c "$T/gslbd.conf" apply "$T/$want.json" >/dev/null 2>&1 &
	k=$!
	sleep "$(awk -v s="$span" -v r="$RANDOM" 'BEGIN { printf "%.3f", s * 1.2 * r / 32767 / 1000 }')"
	kill -9 "$k" 2>/dev/null; wait "$k" 2>/dev/null
	CTL export | norm > "$T/now.json"
	if cmp -s "$T/now.json" "$T/before.json"; then
		before=$((before + 1)); state=a
	elif cmp -s "$T/now.json" "$T/after.json"; then
		after=$((after + 1)); state=b
	else
		bad=$((bad + 1)); cp "$T/now.json" "$T/bad-$i.json"
		CTL apply "$T/a.json" >/dev/null; state=a
	fi
	out=$(q s007.gslb.test A +short +subnet=8.8.8.0/24)
	case "$out" in 192.0.2.*) ;; *) silent=$((silent + 1)) ;; esac
done
kill "$FLAP" 2>/dev/null; wait "$FLAP" 2>/dev/null
echo "# $ITER kills: $before left the table before, $after after, $bad neither"
[ "$bad" -eq 0 ] && ok "kill -9 of gslbctl apply: the store is always the whole before or the whole after ($before/$after)" ||
	fail "kill -9 of gslbctl apply: $bad half-changes"
[ "$silent" -eq 0 ] && ok "the daemon answered throughout" || fail "$silent queries unanswered"

# The daemon killed during health commits: it restarts from what it
# persisted, answers, and the store opens cleanly.
echo err > "$T/mode$P1"
for _ in $(tseq 100); do CTL status 2>/dev/null | grep -q "^n00 .*demoted" && break; sleep 0.1; done
expect_has "$(CTL status)" "^n00 +demoted" "n00 demoted by its failing probe"
( for i in $(seq 100); do echo ok > "$T/mode$P2"; sleep 0.1; echo err > "$T/mode$P2"; sleep 0.1; done ) &
FLAP=$!
for i in 1 2 3 4 5; do
	sleep 0.$((RANDOM % 9 + 1))
	kill -9 "$PID"; wait "$PID" 2>/dev/null
	PID=
	gslbd_start
done
kill "$FLAP" 2>/dev/null; wait "$FLAP" 2>/dev/null
echo ok > "$T/mode$P2"
out=$(CTL status)
expect_has "$out" "^n00 +demoted" "after five kill -9 the persisted demotion holds"
CTL export | norm > "$T/now.json"
cmp -s "$T/now.json" "$T/before.json" || cmp -s "$T/now.json" "$T/after.json" &&
	ok "the table is intact after the daemon's kills" || fail "the table changed under the daemon's kills"
out=$(mdb_stat -e "$T/db" 2>&1) && ok "the store opens cleanly (mdb_stat)" || fail "mdb_stat: $out"
out=$(q s007.gslb.test A +short +subnet=8.8.8.0/24)
case "$out" in 192.0.2.*) ok "the restarted daemon answers" ;; *) fail "after restart: '$out'" ;; esac
finish
