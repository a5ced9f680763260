#!/bin/bash
# The README's walkthrough, as written: every command block of README.md
# that works on the demo (``` blocks with `$C ...`, `build/gslbctl ...`
# or `dig @127.0.0.1 -p 5300 ...` lines) is extracted from README.md
# itself and run in order against the demo (zones/gslbd.conf, the store
# made from zones/demo-gslb.json as `make run` makes it), on this test's
# own port and directory.  Each command must succeed, or fail when the
# README shows it failing (an output starting with "gslbctl:"); the
# output shown must be one the command gives, line by line ("..." stands
# for anything), where it is deterministic.  A query or explain whose
# answer is a weighted pick is repeated until the pick shown comes up.
# Outputs that depend on time, probes or the daemon's history (status,
# log, steer show, stats, curl) are run but not compared.
. "$(dirname "$0")/lib.sh"

# The demo configuration on this test's port, store and paths.
# Its statistics endpoint one port above.
SPORT=$((PORT + 1))
sed -e "s/@5300/@$PORT/g" -e "s/@9153/@$SPORT/g" -e "s#path: \.\./run/db.*#path: $T/db#" \
    -e "s#keystore: \.\./run/keys#keystore: $T/keys#" \
    -e "s#\.\./geoip/demo\.mmdb#$ROOT/geoip/demo.mmdb#" \
    "$ROOT/zones/gslbd.conf" > "$T/gslbd.conf"
cp "$ROOT/zones/cdn.example.test.zone" "$T/"
CTL apply "$ROOT/zones/demo-gslb.json" >/dev/null 2>&1 || { echo "demo store"; exit 1; }
gslbd_start

# The blocks, as a list of steps: {cmd, out (shown lines, or null)}.
python3 - "$ROOT/README.md" > "$T/steps.json" <<'EOF' || { echo "README parse"; exit 1; }
import json, re, sys
text = open(sys.argv[1]).read().split("\n")
blocks, cur, lang = [], None, None
for line in text:
    if line.startswith("```"):
        if cur is None:
            cur, lang = [], line[3:].strip()
        else:
            if not lang:
                blocks.append(cur)
            cur = None
        continue
    if cur is not None:
        cur.append(line)
DEMO = re.compile(r"^(\$ )?(\$C |C=|build/gslbctl |dig @127\.0\.0\.1 -p 5300 |printf )")
steps = []
for b in blocks:
    if not any(DEMO.match(l) for l in b):
        continue
    prompted = any(l.startswith("$ ") for l in b)
    i = 0
    while i < len(b):
        l = b[i]
        if not l.strip():
            i += 1
            continue
        if prompted and not l.startswith("$ "):
            steps[-1]["out"].append(l)
            i += 1
            continue
        cmd = l[2:] if prompted else l
        # Continuation lines: a trailing backslash or pipe.
        while re.search(r"(\\|\|)\s*$", cmd) and i + 1 < len(b):
            i += 1
            cmd += "\n" + b[i]
        steps.append({"cmd": cmd, "out": []})
        i += 1
json.dump(steps, sys.stdout)
EOF
n=$(python3 -c "import json; print(len(json.load(open('$T/steps.json'))))" )
[ "$n" -ge 30 ] && ok "$n README commands extracted" || fail "only $n README commands extracted"

# Whether every shown line ($T/want) is in the output ($T/got): spaces
# normalised, "..." standing for anything.
shown_in() {
	python3 - "$T/want" "$T/got" <<'EOF'
import re, sys
norm = lambda s: " ".join(s.split())
got = [norm(l) for l in open(sys.argv[2]).read().split("\n")]
for w in open(sys.argv[1]).read().split("\n"):
    w = norm(w)
    if not w:
        continue
    pat = ".*".join(re.escape(p) for p in w.split("...")) + "$"
    if not any(re.match(pat, g) for g in got):
        print("missing: " + w)
        sys.exit(1)
EOF
}

cd "$T" || exit 1
for i in $(seq 0 $((n - 1))); do
	python3 -c "
import json, sys
s = json.load(open('steps.json'))[$i]
open('cmd', 'w').write(s['cmd'] + '\n')
open('want', 'w').write('\n'.join(s['out']) + '\n')"
	# The demo's paths and port: this test's.
	sed -i -e "s#build/gslbctl#$ROOT/$B/gslbctl#g" -e "s#zones/gslbd\.conf#$T/gslbd.conf#g" \
	       -e "s/-p 5300/-p $PORT/g" -e "s/:9153/:$SPORT/g" cmd
	# Probe targets: the README's documentation addresses become
	# loopback ones (127.0.2.N, where nothing listens), so that the
	# health thread's probes never leave the machine.
	sed -i -E 's#(tcp|https?)://192\.0\.2\.#\1://127.0.2.#g' cmd
	cmd=$(head -c 120 cmd | tr '\n' ' ')
	# Read-only commands whose output may be a weighted pick, or come
	# from gslbd a moment after the change before it: retried.
	tries=1
	grep -qE '^(dig|\$C explain|[^ ]*gslbctl -c [^ ]* explain)' cmd && tries=20
	# Outputs that depend on time, probes and history: not compared.
	# explain's example shows the demo row before the walkthrough's own
	# changes (bj-ct-1 drained, bj-ct-3 added), which precede it.
	compare=1
	grep -qE '\$C (status|log|steer show)|gslbctl -c [^ ]* (stats|explain)|^curl|cutover add' cmd &&
		compare=0
	# The statistics endpoint: only when the demo configures one.
	if grep -qE 'gslbctl -c [^ ]* stats|^curl' cmd && ! grep -q '^stats:' "$T/gslbd.conf"; then
		echo "skip - README: $cmd: the demo configuration has no stats section"
		continue
	fi
	expect_fail=0
	grep -q '^gslbctl:' want && expect_fail=1
	for _ in $(seq $tries); do
		C="$ROOT/$B/gslbctl -c $T/gslbd.conf" timeout 30 bash -o pipefail -c \
			"C=\"\$C\"; $(cat cmd)" > got 2>&1
		rc=$?
		[ $compare = 0 ] || ! [ -s want ] || shown_in >/dev/null && break
		[ $tries -gt 1 ] && sleep 0.1   # 20 tries: 2 s for gslbd to follow
	done
	if [ $expect_fail = 1 ]; then
		[ $rc -ne 0 ] && ok "README: $cmd: fails, as shown" || fail "README: $cmd: exit 0"
	elif [ $rc -ne 0 ]; then
		fail "README: $cmd: exit $rc"; sed 's/^/    /' got | head -10
		continue
	else
		ok "README: $cmd"
	fi
	if [ $compare = 1 ] && [ -s want ] && grep -q . want; then
		if why=$(shown_in); then ok "README: $cmd: output as shown"
		else fail "README: $cmd: output: $why"; sed 's/^/    /' got | head -10; fi
	fi
done
finish
