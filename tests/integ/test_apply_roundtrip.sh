#!/bin/bash
# export, then apply of that export, is a no-op, and export again gives
# the same document: over random tables (a seeded generator, SEED and
# TABLES from the environment) holding every kind of service and row:
# static, weighted, sticky, CNAME, dynamic and shadow steering with the
# engine's shares in force, nearest, rows pinned by a rollback of the
# engine, a gray release in progress, cutover windows, objects made by
# commands and objects made by apply with their defaults left out.
# Each table gets a fresh store: gslbctl builds it, gslbd runs until the
# engine has written its shares for the steered rows, then stops, so
# that nothing but gslbctl writes while export and apply run.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/steer_lib.sh"

SEED=${SEED:-24}
TABLES=${TABLES:-30}
steer_setup
echo '{"version": 1}' > "$T/empty.json"

# The generator: for table I, $T/g/I.apply (a document with optional
# fields left out at random), I.cmds (gslbctl argument lists, one a line,
# shell-quoted, run before gslbd starts), I.push (a metrics batch),
# I.rows (the steered rows whose engine shares must be in force) and
# I.pin (a row to pin by rolling back the engine's change of it).
mkdir -p "$T/g"
python3 - "$SEED" "$TABLES" "$T/g" <<'EOF' || { echo "generator failed"; exit 1; }
import json, random, shlex, sys, time
seed, tables, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
ROWS = [("cn-gz", "ctcc"), ("cn-bj", "cucc"), ("cn-gz", "*"), ("*", "*")]
REGIONS = {"cn-gz": "ctcc", "cn-bj": "cucc"}
KINDS = ["static", "weighted", "sticky", "cname", "dynamic", "shadow", "nearest"]
t0 = int(time.time())
def stamp(t):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))
for i in range(tables):
    r = random.Random(seed * 1000 + i)
    doc = {"version": 1, "services": [], "nodes": [], "weights": []}
    cmds, push, steered, pins = [], [], [], []
    def cmd(*a):
        cmds.append(" ".join(shlex.quote(str(x)) for x in a))
    # Nodes: address nodes and CNAME nodes, some by apply, some by node add.
    addr_nodes, cname_nodes, in_doc, node_regions = [], [], set(), set()
    for n in range(r.randint(3, 7)):
        nid = "n%d" % n
        reg = r.choice(list(REGIONS) + [None])
        o = {"id": nid, "addrs": ["192.0.2.%d" % (10 + n)]}
        if r.random() < 0.5:
            o["addrs"].append("2001:db8::%x" % (10 + n))
        if reg:
            o["region"], o["isp"] = reg, REGIONS[reg]
            node_regions.add(reg)
        if r.random() < 0.5:
            o["capacity"] = r.choice([1000, 10000, 20000])
        if r.random() < 0.3:
            o["pool"] = "standby"
        if r.random() < 0.2:
            o["admin"] = r.choice(["up", "drain", "down"])
        if r.random() < 0.4:
            o["provider"], o["cost_per_gb"] = r.choice(["cdn-a", "cdn-b"]), r.choice([0.01, 0.02, 0.035])
        if r.random() < 0.25:
            o["probes"] = ["tcp://127.0.0.1:9 interval=%d timeout=1" % r.choice([2, 5])]
        addr_nodes.append(nid)
        if r.random() < 0.5:
            doc["nodes"].append(o)
            in_doc.add(nid)
        else:
            a = ["node", "add", nid]
            for ad in o["addrs"]:
                a += ["--addr", ad]
            for k, opt in (("region", "--region"), ("isp", "--isp"), ("capacity", "--capacity"),
                           ("pool", "--pool"), ("admin", "--admin"), ("provider", "--provider"),
                           ("cost_per_gb", "--cost-per-gb")):
                if k in o:
                    a += [opt, o[k]]
            for p in o.get("probes", []):
                a += ["--probe", p]
            cmd(*a)
    for n in range(r.randint(1, 2)):
        nid = "c%d" % n
        o = {"id": nid, "cname": "edge%d.other-cdn.example." % n}
        cname_nodes.append(nid)
        if r.random() < 0.5:
            doc["nodes"].append(o)
            in_doc.add(nid)
        else:
            cmd("node", "add", nid, "--cname", o["cname"])
    # Services of every kind, each with rows.
    kinds = r.sample(KINDS, r.randint(2, 5))
    released = False
    for s, kind in enumerate(kinds):
        name = "s%d-%s.gslb.test" % (s, kind)
        o = {"name": name}
        if r.random() < 0.6:
            o["ttl"] = r.choice([30, 60, 300])
            o["short_ttl"] = r.choice([5, 10])
        if kind == "sticky":
            o["sticky"] = True
            o["answers"] = r.choice([1, 2])
        elif kind == "weighted":
            o["answers"] = r.choice([1, 2, 3])
        if r.random() < 0.4:
            o["all_down"] = r.choice(["open", "fallback", "empty"])
        if r.random() < 0.2:
            o["profile"] = r.choice(["probe", "four"])
        by_apply = r.random() < 0.5
        if by_apply:
            doc["services"].append(o)
        else:
            a = ["service", "add", name]
            for k, opt in (("ttl", "--ttl"), ("short_ttl", "--short-ttl"), ("answers", "--answers"),
                           ("all_down", "--all-down"), ("profile", "--profile")):
                if k in o:
                    a += [opt, o[k]]
            if o.get("sticky"):
                a.append("--sticky")
            cmd(*a)
        rows = r.sample(ROWS, r.randint(1, 3))
        pool = cname_nodes if kind == "cname" else addr_nodes
        for reg, isp in rows:
            ids = r.sample(pool, min(len(pool), r.randint(1, 3) if kind != "cname" else 1))
            ws = {nid: r.choice([1, 20, 50, 100]) for nid in ids}
            if kind in ("dynamic", "shadow", "nearest") and len(ids) < 2:
                ws[r.choice([x for x in pool if x not in ids])] = 50
            if by_apply and set(ws) <= in_doc and r.random() < 0.7:
                w = {"service": name, "weights": ws}
                if reg != "*" or r.random() < 0.5:
                    w["region"] = reg
                if isp != "*" or r.random() < 0.5:
                    w["isp"] = isp
                doc["weights"].append(w)
            else:
                cmd("weight", "set", name, "--region", reg, "--isp", isp,
                    *["%s=%d" % kv for kv in ws.items()])
            if kind in ("dynamic", "shadow", "nearest"):
                for nid in ws:
                    where = (["--region", reg] if reg != "*" else []) + \
                            (["--isp", isp] if isp != "*" else [])
                    lat = r.randint(10, 300)
                    if kind == "nearest":
                        push.append(" ".join([nid] + where + ["latency=%d" % lat]))
                    else:
                        push.append(" ".join([nid] + where + ["success=%.1f" % r.uniform(97, 100),
                                                              "latency=%d" % lat]))
                if reg != "*" and isp != "*" and kind != "shadow":
                    steered.append("%s|%s|%s" % (name, reg, isp))
        if kind == "dynamic":
            cmd("service", "set", name, "--steering", "dynamic",
                *(["--policy", r.choice(["live", "vod"])] if r.random() < 0.5 else []))
        elif kind == "shadow":
            cmd("service", "set", name, "--steering", "shadow")
        elif kind == "nearest":
            a = ["service", "set", name, "--steering", "nearest"]
            if r.random() < 0.5:
                a += ["--switch-margin", r.choice(["15%", "20ms"])]
            if r.random() < 0.5:
                a += ["--headroom", r.choice(["10%", "20%"])]
            cmd(*a)
        elif kind in ("static", "weighted", "sticky") and not released and r.random() < 0.5:
            # A gray release in progress: a new node, in the rows first.
            released = True
            nid = "new%d" % s
            cmd("node", "add", nid, "--addr", "192.0.2.%d" % (100 + s))
            for reg, isp in rows:
                cmd("weight", "set", name, "--region", reg, "--isp", isp, "%s=50" % nid,
                    *["%s=%d" % (x, 10) for x in r.sample(addr_nodes, 1)])
            cmd("release", "start", name, "--node", nid, "--steps", "1,5,25,50,100",
                "--every", "1h", "--guard", "success>=99")
    if steered and r.random() < 0.5:
        pins.append(r.choice(steered))
    # Cutover windows, ahead and running.
    for reg in r.sample(sorted(node_regions), r.randint(0, len(node_regions))):
        start = t0 + r.choice([-1800, 1800, 7200, 86400 * 3])
        a = ["cutover", "add", "--region", reg, "--start", stamp(start),
             "--end", stamp(start + r.choice([3600, 10800]))]
        if r.random() < 0.5:
            a += ["--derate", r.choice([40, 55, 70])]
        else:
            a += ["--impact", r.choice(["low", "medium", "high"])]
        if r.random() < 0.5:
            a += ["--prewarm", r.choice([10, 30])]
        cmd(*a)
    with open("%s/%d.apply" % (out, i), "w") as f:
        json.dump(doc, f)
    for ext, lines in (("cmds", cmds), ("push", push), ("rows", steered), ("pin", pins)):
        with open("%s/%d.%s" % (out, i, ext), "w") as f:
            f.write("".join(l + "\n" for l in lines))
EOF

# The ids of the audit records gslbctl wrote.
ctl_records() {
	CTL --json log | python3 -c "
import json, sys
print(' '.join(str(r['id']) for r in json.load(sys.stdin)['records']
               if r['actor'].startswith('gslbctl')))"
}
# Whether the engine has written shares for every row of FILE.
shares_written() { # rows-file
	[ -s "$1" ] || return 0
	CTL --json log --auto | python3 -c "
import json, sys
done = {c['row'] for r in json.load(sys.stdin)['records'] if r['actor'] == 'gslbd:steer'
        for c in r['inputs'] if 'nodes' in c}
want = set(open('$1').read().split())
sys.exit(0 if want <= done else 1)"
}
# The id of the newest change of the engine that moved ROW.
engine_change() { # row
	CTL --json log --auto | python3 -c "
import json, sys
ids = [r['id'] for r in json.load(sys.stdin)['records'] if r['actor'] == 'gslbd:steer'
       and any(c.get('row') == '$1' and 'nodes' in c for c in r['inputs'])]
print(ids[-1] if ids else '')"
}

bad=0 steered=0 pinned=0 released=0 cutovers=0 cnames=0
for i in $(seq 0 $((TABLES - 1))); do
	g=$T/g/$i
	rm -rf "$T/db"
	if ! err=$(CTL apply "$g.apply" 2>&1); then
		fail "table $i: apply of the generated table: $err"; bad=1; continue
	fi
	while IFS= read -r line; do
		if ! err=$(eval "CTL $line" 2>&1); then
			fail "table $i: gslbctl $line: $err"; bad=1
		fi
	done < "$g.cmds"
	if [ -s "$g.rows" ] || [ -s "$g.push" ]; then
		gslbd_start
		CTL metrics push --file - < "$g.push" >/dev/null ||
			fail "table $i: metrics push --file"
		if wait_until 20 shares_written "$g.rows"; then
			[ -s "$g.rows" ] && steered=$((steered + 1))
		else
			fail "table $i: the engine wrote no shares for $(tr '\n' ' ' < "$g.rows")"
		fi
		for row in $(cat "$g.pin"); do
			id=$(engine_change "$row")
			if [ -n "$id" ] && CTL rollback "$id" >/dev/null; then
				pinned=$((pinned + 1))
			else
				fail "table $i: pinning $row by rolling back change '$id'"
			fi
		done
		gslbd_stop || fail "table $i: gslbd did not stop cleanly"
	fi
	CTL export > "$T/e1.json" 2>"$T/err" || { fail "table $i: export: $(cat "$T/err")"; continue; }
	grep -q '"release"' "$T/e1.json" && released=$((released + 1))
	grep -q '"cname": "' "$T/e1.json" && cnames=$((cnames + 1))
	[ -n "$(CTL cutover list | sed 1d)" ] && cutovers=$((cutovers + 1))
	before=$(ctl_records)
	out=$(CTL apply "$T/e1.json" 2>&1)
	rc=$?
	after=$(ctl_records)
	CTL export > "$T/e2.json"
	if [ $rc -ne 0 ] || ! grep -q "already equals" <<<"$out" || [ "$before" != "$after" ] ||
	   ! cmp -s "$T/e1.json" "$T/e2.json"; then
		fail "table $i (SEED=$SEED): apply of a fresh export is not a no-op (exit $rc): $out"
		diff "$T/e1.json" "$T/e2.json" | head -20 | sed 's/^/    /'
		cp "$T/e1.json" "$T/failed-$i.json"
		bad=1
	fi
done
[ $bad = 0 ] && ok "$TABLES random tables: apply of a fresh export writes nothing, export is unchanged"
# The tables held what they are meant to cover.
[ $steered -ge 5 ] && ok "$steered tables with the engine's shares in force" ||
	fail "only $steered tables with the engine's shares in force"
[ $pinned -ge 2 ] && ok "$pinned rows pinned" || fail "only $pinned rows pinned"
[ $released -ge 2 ] && ok "$released tables with a release" || fail "only $released tables with a release"
[ $cutovers -ge 2 ] && ok "$cutovers tables with cutover windows" || fail "only $cutovers with cutovers"
[ $cnames -ge 2 ] && ok "$cnames tables with CNAME nodes" || fail "only $cnames with CNAME nodes"

# apply - reads the document from standard input, as the file would.
out=$(CTL export | CTL apply - 2>&1)
expect_has "$out" "already equals stdin" "apply -: stdin, a no-op on a fresh export"
python3 -c "
import json
d = json.load(open('$T/e2.json'))
d['services'] = [dict(s, ttl=s.get('ttl', 30) + 1) for s in d['services']]
print(json.dumps(d))" | CTL apply - > "$T/out" 2>&1
expect_has "$(cat "$T/out")" "apply stdin \(\+0 ~[1-9]" "apply -: a changed document is applied"
expect_has "$(CTL log --limit 1)" "apply stdin" "the audit record names standard input"
finish
