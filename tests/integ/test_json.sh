#!/bin/bash
# gslbctl's machine output: every read command with --json prints one
# document of the shape gslbctl(8) documents (JSON OUTPUT), with the
# values of a known table; errors stay on stderr with a non-zero status;
# the tables stay the default.  `gslbctl stats` shows the live daemon's
# /metrics, and its counters move with real dig queries.
. "$(dirname "$0")/lib.sh"
SPORT=$((PORT + 1))
HP=$((PORT + 3000))
trap 'stop_httpds; cleanup' EXIT
gslb_zone
write_conf gslb.test z.zone "health:
  interval: 1
  timeout: 0.9
stats:
  listen: [ \"127.0.0.1@$SPORT\" ]"
start_httpd "$HP" || fail "httpd did not start"

# The known table.
CTL service add www.gslb.test --ttl 60 --short-ttl 5 --answers 2 --sticky >/dev/null
CTL service add b.gslb.test --profile four --max-failure-rate 2 >/dev/null
CTL node add n1 --addr 192.0.2.1 --region cn-bj --isp ctcc --capacity 100 \
	--probe "http://127.0.0.1:$HP/health interval=1" >/dev/null
CTL node add n2 --addr 192.0.2.2 --addr 2001:db8::2 --pool standby >/dev/null
CTL node add n3 --cname edge.example.net >/dev/null
CTL weight set www.gslb.test n1=10 n2=5 >/dev/null
CTL weight set www.gslb.test --region cn-bj n1=7 n3=1 >/dev/null
CTL cutover add --region cn-bj --start 2030-01-01T02:00+08:00 --end 2030-01-01T05:00+08:00 \
	--impact high --note maint >/dev/null
gslbd_start
# A probed node gets a history sample once the health thread judged it.
for _ in $(tseq 100); do
	[ "$(CTL history n1 | grep -c .)" -ge 1 ] && break
	sleep 0.1
done

# Every read command: its document, for the checker below.
J="$T/json"
mkdir -p "$J"
run() { # file args...
	local f=$1
	shift
	CTL --json "$@" > "$J/$f" 2> "$J/$f.err"
	echo $? > "$J/$f.rc"
}
run service-list service list
run service-show service show www.gslb.test
run service-show-b service show b.gslb.test
run node-list node list
run node-show node show n2
run weight-list weight list
run weight-list-www weight list www.gslb.test
run weight-show weight show www.gslb.test --region cn-bj
run status status
run status-www status www.gslb.test
run history history n1
run log log --since 2
run cutover-list cutover list
run cutover-show cutover show c1
run explain explain www.gslb.test --client 192.0.2.0/24
run explain-static explain ns1.gslb.test --client 192.0.2.7
run stats stats
# --json after the command's own arguments works as well.
CTL node show n2 --json > "$J/node-show-after"; echo $? > "$J/node-show-after.rc"

python3 - "$J" <<'EOP' > "$T/check.out"
import json, os, sys, time
J = sys.argv[1]
now = time.time()
def ok(c, m):
    print(("ok   - " if c else "FAIL - ") + m)
def doc(name):
    rc = open(os.path.join(J, name + ".rc")).read().strip()
    err = open(os.path.join(J, name + ".err")).read() if os.path.exists(os.path.join(J, name + ".err")) else ""
    try:
        d = json.load(open(os.path.join(J, name)))
    except Exception as e:
        ok(False, "%s: not JSON (%s; rc %s, stderr %r)" % (name, e, rc, err))
        return None
    good = rc == "0" and not err and isinstance(d, dict) and d.get("format") == 1 \
        and isinstance(d.get("generated_unix"), int) and abs(d["generated_unix"] - now) < 120 \
        and d.get("generated") == time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(d["generated_unix"]))
    ok(good, "%s: a document of format 1 with its generation time" % name)
    return d
def utc(t):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))
def has(o, keys):
    return isinstance(o, dict) and all(k in o for k in keys)

SVC = ["name", "ttl", "short_ttl", "answers", "all_down", "sticky", "shadow", "profile", "max_failure_rate"]
d = doc("service-list")
if d:
    s = {x["name"]: x for x in d["services"]}
    ok(sorted(s) == ["b.gslb.test", "www.gslb.test"] and all(has(x, SVC) for x in s.values()),
       "service list: both services, every field")
    w = s.get("www.gslb.test", {})
    ok((w.get("ttl"), w.get("short_ttl"), w.get("answers"), w.get("all_down"), w.get("sticky"),
        w.get("shadow"), w.get("profile"), w.get("max_failure_rate")) ==
       (60, 5, 2, "open", True, False, "default", None), "service list: www's values")
    b = s.get("b.gslb.test", {})
    ok((b.get("profile"), b.get("max_failure_rate"), b.get("ttl")) == ("four", 2.0, 30),
       "service list: b's profile, failure rate and default TTL")
d = doc("service-show")
if d:
    ok(has(d.get("service"), SVC) and d["service"]["name"] == "www.gslb.test" and
       d["service"]["sticky"] is True, "service show: the service object")

NODE = ["id", "addrs", "cname", "region", "isp", "capacity", "pool", "admin", "probes",
        "short_until", "short_until_unix"]
d = doc("node-list")
if d:
    n = {x["id"]: x for x in d["nodes"]}
    ok(sorted(n) == ["n1", "n2", "n3"] and all(has(x, NODE) for x in n.values()),
       "node list: three nodes, every field")
    n1, n3 = n.get("n1", {}), n.get("n3", {})
    ok((n1.get("addrs"), n1.get("cname"), n1.get("region"), n1.get("isp"), n1.get("capacity"),
        n1.get("pool"), n1.get("admin"), len(n1.get("probes", []))) ==
       (["192.0.2.1"], None, "cn-bj", "ctcc", 100, "primary", "auto", 1), "node list: n1's values")
    ok(n3.get("addrs") == [] and n3.get("cname") == "edge.example.net." and n3.get("region") == "*",
       "node list: n3 is a CNAME node")
for f in ("node-show", "node-show-after"):
    d = doc(f) if f == "node-show" else None
    if f == "node-show-after":
        try:
            d = json.load(open(os.path.join(J, f)))
        except Exception:
            d = None
    n2 = (d or {}).get("node", {})
    ok(has(n2, NODE) and n2["addrs"] == ["192.0.2.2", "2001:db8::2"] and n2["pool"] == "standby"
       and n2["short_until"] is None, "%s: n2 with both addresses, standby" % f)

ROW = ["service", "region", "isp", "weights"]
d = doc("weight-list")
if d:
    r = {(x["service"], x["region"], x["isp"]): x for x in d["rows"]}
    ok(all(has(x, ROW) for x in d["rows"]) and len(r) == 2, "weight list: two rows, every field")
    ok(r.get(("www.gslb.test", "*", "*"), {}).get("weights") ==
       [{"node": "n1", "weight": 10}, {"node": "n2", "weight": 5}], "weight list: the (*, *) row's weights")
d = doc("weight-list-www")
if d:
    ok(len(d["rows"]) == 2, "weight list SERVICE: its rows")
d = doc("weight-show")
if d:
    ok(d.get("row") == {"service": "www.gslb.test", "region": "cn-bj", "isp": "*",
                        "weights": [{"node": "n1", "weight": 7}, {"node": "n3", "weight": 1}]},
       "weight show: the cn-bj row")

WIN = ["id", "region", "isp", "nodes", "start", "start_unix", "end", "end_unix", "start_text",
       "end_text", "derate_pct", "prewarm_pct", "impact", "note", "phase", "auto"]
def check_window(w, what):
    ok(has(w, WIN) and w["id"] == "c1" and w["region"] == "cn-bj" and w["isp"] == "*" and
       w["start"] == "2029-12-31T18:00:00Z" and w["start_unix"] == 1893434400 and
       w["end"] == "2029-12-31T21:00:00Z" and w["end_unix"] == 1893445200 and
       w["start_text"] == "2030-01-01T02:00+08:00" and w["impact"] == "high" and
       w["derate_pct"] == 50 and w["note"] == "maint" and w["phase"] == "announced" and
       w["auto"] is False,
       "%s: the window in UTC and unix seconds, its phase" % what)
d = doc("cutover-list")
if d:
    ok(len(d["cutovers"]) == 1, "cutover list: one window")
    check_window(d["cutovers"][0], "cutover list")
d = doc("cutover-show")
if d:
    check_window(d.get("cutover"), "cutover show")

STN = ["node", "admin", "pool", "state", "score", "reason", "state_since", "state_since_unix",
       "health", "status"]
d = doc("status")
if d:
    n = {x["node"]: x for x in d["nodes"]}
    ok(sorted(n) == ["n1", "n2", "n3"] and all(has(x, STN) for x in n.values()),
       "status: every node, every field")
    n1 = n.get("n1", {})
    ok(n1.get("state") in ("up", "unknown") and isinstance(n1.get("status"), dict),
       "status: n1 is judged (%s)" % n1.get("state"))
    ok(n1.get("state_since") is None or n1["state_since"] == utc(n1["state_since_unix"]),
       "status: state_since as UTC and unix seconds")
    ok(n.get("n3", {}).get("state") in ("unmonitored", "no record") and n["n3"]["score"] is None,
       "status: n3 has no verdict and no score")
    rows = {(x["service"], x["region"]): x for x in d["rows"]}
    ok(all(has(x, ["service", "region", "isp", "nodes"]) for x in d["rows"]) and
       [(m["node"], m["weight"], m["effective"], m["usable"]) for m in
        rows.get(("www.gslb.test", "*"), {}).get("nodes", [])] == [("n1", 10, 10, True), ("n2", 5, 5, False)],
       "status: effective weights (the standby is not usable)")
    ok(len(d["cutovers"]) == 1 and d["cutovers"][0].get("start_unix") == 1893434400,
       "status: the cutover window in its documented shape")
d = doc("status-www")
if d:
    ok(sorted(x["node"] for x in d["nodes"]) == ["n1", "n2", "n3"] and len(d["rows"]) == 2,
       "status SERVICE: its nodes and rows")

d = doc("history")
if d:
    s = d.get("samples", [])
    ok(d.get("node") == "n1" and len(s) >= 1, "history: n1's samples (%d)" % len(s))
    ok(all(has(x, ["time", "time_unix", "score", "state", "profile", "dims", "gray_pct"]) and
           x["time"] == utc(x["time_unix"]) and len(x["dims"]) == 4 for x in s),
       "history: each sample's time, score, state, profile and dimensions")

d = doc("log")
if d:
    r = d.get("records", [])
    ok(len(r) >= 5 and r[0].get("id") == 2, "log --since 2: from record 2")
    ok(all(has(x, ["id", "time", "time_unix", "actor", "what", "changes"]) and
           x["time"] == utc(x["time_unix"]) for x in r), "log: each record's fields and times")
    ok(r and r[0]["what"] == "service add b.gslb.test", "log: what record 2 did")

d = doc("explain")
if d:
    ok(d.get("kind") == "service" and d.get("service") == "www.gslb.test" and d.get("row") == "*,*"
       and d.get("ttl") == 60 and len(d.get("candidates", [])) == 2, "explain: the service's answer")
d = doc("explain-static")
if d:
    ok(d.get("kind") == "static" and d.get("zone") == "gslb.test" and d.get("rcode") == "NOERROR",
       "explain: a static name")

d = doc("stats")
if d:
    f = {x["name"]: x for x in d.get("families", [])}
    q = f.get("gslbd_queries_total", {})
    ok(q.get("type") == "counter" and q.get("help") and
       all(has(s, ["name", "labels", "value"]) for s in q.get("samples", [])),
       "stats: the queries family with its type, help and samples")
    ok(f.get("gslbd_up", {}).get("samples", [{}])[0].get("value") == 1, "stats: gslbd_up is 1")
EOP
cat "$T/check.out"
CHECKS=$((CHECKS + $(grep -c . "$T/check.out")))
FAILS=$((FAILS + $(grep -c '^FAIL' "$T/check.out")))

# Errors: on stderr, nothing on stdout, status 1.
expect_err() { # message regex args...
	local m=$1 re=$2 out err rc
	shift 2
	out=$(CTL --json "$@" 2>"$T/err"); rc=$?
	err=$(cat "$T/err")
	if [ "$rc" = 1 ] && [ -z "$out" ] && grep -Eq -- "$re" <<<"$err"; then ok "$m"
	else fail "$m: rc $rc, stdout '$out', stderr '$err'"; fi
}
expect_err "service show of a missing service" "service nope\.gslb\.test does not exist" service show nope.gslb.test
expect_err "node show of a missing node" "node ghost does not exist" node show ghost
expect_err "weight show of a missing row" "weight row www\.gslb\.test --region cn-sh --isp \* does not exist" \
	weight show www.gslb.test --region cn-sh
expect_err "weight show without a service" "weight show: missing service name" weight show
expect_err "cutover show of a missing window" "cutover c9 does not exist" cutover show c9
expect_err "history without a node" "history: give a node id" history
expect_err "stats with an argument" "stats: unexpected argument 'now'" stats now

# The tables stay the default.
expect_has "$(CTL service list)" "^SERVICE +TTL" "service list: a table"
expect_has "$(CTL service show www.gslb.test)" "^ttl +60$" "service show: one field a line"
expect_has "$(CTL node show n3)" "^cname +edge\.example\.net\.$" "node show: one field a line"
expect_has "$(CTL weight show www.gslb.test --region cn-bj)" "^www\.gslb\.test +cn-bj +\* +n1=7 n3=1$" "weight show: a row"
expect_has "$(CTL cutover show c1)" "^start +2029-12-31T18:00:00Z$" "cutover show: start in UTC"

# stats: the same families and values as a scrape of /metrics, a table
# grouped by family, and counters that move with queries.
scrape() {
	python3 - "http://127.0.0.1:$SPORT/metrics" <<'EOP'
import sys, urllib.request
print(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode(), end="")
EOP
}
udp() { # a stats --json document on stdin -> UDP queries
	python3 -c 'import json, sys
d = json.load(sys.stdin)
f = [x for x in d["families"] if x["name"] == "gslbd_queries_total"][0]
print([s["value"] for s in f["samples"] if s["labels"].get("transport") == "udp"][0])'
}
# Series come and go while the daemon runs (a probe's first result, a
# new answer label), so the JSON read is bracketed by two scrapes and
# compared only when the two scrapes show the same series; a few tries.
for try in $(tseq 5); do
	scrape > "$T/metrics.txt"
	CTL --json stats > "$T/stats.json"
	scrape > "$T/metrics2.txt"
	python3 - "$T/metrics.txt" "$T/stats.json" "$T/metrics2.txt" <<'EOP' > "$T/same.out"
import json, re, sys
def read(path):
    # Families and series of a scrape, read plainly: "name{labels} value".
    fams, series = [], {}
    for l in open(path):
        if l.startswith("# TYPE "):
            fams.append(l.split()[2])
        elif l.strip() and not l.startswith("#"):
            k, v = l.rsplit(" ", 1)
            name = k.split("{")[0]
            lab = tuple(sorted(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', k)))
            series[(name, lab)] = v.strip()
    return fams, series
fams, series = read(sys.argv[1])
fams2, series2 = read(sys.argv[3])
print("stable", fams == fams2 and sorted(series) == sorted(series2))
d = json.load(open(sys.argv[2]))
got = {}
for f in d["families"]:
    for s in f["samples"]:
        got[(s["name"], tuple(sorted(s["labels"].items())))] = s["value"]
print("families", [f["name"] for f in d["families"]] == fams)
print("series", sorted(got) == sorted(series), len(got),
      "only in json:", sorted(set(got) - set(series))[:3],
      "only in /metrics:", sorted(set(series) - set(got))[:3])
# Counters did not move between the reads (no query in between).
cnt = [k for k in series if k[0] in ("gslbd_queries_total", "gslbd_responses_total")]
print("values", bool(cnt) and all(str(got.get(k)) == series[k] for k in cnt))
EOP
	grep -q "^stable True" "$T/same.out" && break
	sleep 0.5
done
grep -q "^stable True" "$T/same.out" || fail "stats: /metrics never held still for two reads: $(cat "$T/same.out")"
for w in families series values; do
	grep -q "^$w True" "$T/same.out" && ok "stats --json: the same $w as /metrics" ||
		fail "stats --json: $w differ from /metrics: $(cat "$T/same.out")"
done
before=$(udp < "$T/stats.json")
for i in 1 2 3 4 5; do q www.gslb.test A >/dev/null; done
after=$(CTL --json stats | udp)
[ "$((after - before))" = 5 ] && ok "stats: UDP queries moved by the 5 dig queries ($before -> $after)" ||
	fail "stats: UDP queries $before -> $after"
out=$(CTL stats)
expect_has "$out" "^# gslbd statistics from http://127\.0\.0\.1:$SPORT/metrics$" "stats: names the endpoint"
expect_has "$out" "^gslbd_queries_total \(counter\): " "stats: grouped by family, with type and help"
expect_has "$out" "^  transport=udp +$after$" "stats: the UDP queries line"
expect_has "$out" "^  service=www\.gslb\.test level=\*,\* region=\* isp=\* node=n[12] +[0-9]+$" \
	"stats: GSLB answers by node"
expect_has "$out" "^  - +[0-9]+  20[0-9-]+T[0-9:]+Z$" "stats: times also in UTC"

# stats errors: no -c, no stats.listen, a daemon that does not answer.
out=$("$ROOT/$B/gslbctl" -d "$T/db" stats 2>&1) && fail "stats with -d succeeded" ||
	expect_has "$out" "stats: needs -c CONF" "stats with -d: needs the configuration"
sed '/^stats:/,$d' "$T/gslbd.conf" > "$T/nostats.conf"
out=$("$ROOT/$B/gslbctl" -c "$T/nostats.conf" stats 2>&1); rc=$?
[ "$rc" = 1 ] && expect_has "$out" "nostats\.conf has no stats\.listen" "stats without stats.listen: clear error" ||
	fail "stats without stats.listen: rc $rc: $out"
gslbd_stop || fail "gslbd did not stop cleanly"
out=$(CTL stats 2>&1); rc=$?
[ "$rc" = 1 ] && expect_has "$out" "gslbd does not answer on its statistics endpoint: http://127\.0\.0\.1:$SPORT/metrics: .*(connect|Connection refused)" \
	"stats with the daemon stopped: clear error" || fail "stats with no daemon: rc $rc: $out"
finish
