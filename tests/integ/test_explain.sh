#!/bin/bash
# explain and dig agree: for a few hundred random clients (ECS subnets in
# and outside the demo networks, IPv4 and IPv6, unusable ECS, the bare
# resolver address) over every demo service and over names with static
# data, `gslbctl explain` and the running gslbd give the same RCODE,
# answer TTL and ECS scope; explain names the row an independent oracle
# expects; a sticky service answers dig with exactly the nodes explain
# picked, and every answer of a weighted-random service is among
# explain's usable candidates of that row.  Static names get the very
# records dig gets.
#
# SEED=N repeats a run (the seed is printed); CLIENTS=N sets how many
# clients (default 200, 50 under sanitizers, where each gslbctl run is
# several times slower).
. "$(dirname "$0")/lib.sh"

cp "$ROOT/zones/cdn.example.test.zone" "$T/z.zone"
write_conf cdn.example.test z.zone "geoip:
  database: $ROOT/geoip/demo.mmdb"
gslbd_start
CTL apply "$ROOT/zones/demo-gslb.json" >/dev/null || fail "apply the demo table"

SEED=${SEED:-$RANDOM}
if [ -n "${SAN:-}" ]; then CLIENTS=${CLIENTS:-50}; else CLIENTS=${CLIENTS:-200}; fi
echo "# seed $SEED, $CLIENTS clients"
# The cases, one per line: NAME TYPE CLIENT, CLIENT being ADDR/LEN (sent
# as ECS) or a bare address (the resolver's own, 127.0.0.1).
python3 - "$SEED" "$CLIENTS" > "$T/cases" <<'EOP'
import ipaddress, random, sys
rnd = random.Random(int(sys.argv[1]))
v4_in = ["36.110.0.0/16", "123.112.0.0/12", "14.16.0.0/12", "120.196.0.0/14",
         "112.64.0.0/14", "123.120.0.0/16", "198.51.100.0/24", "203.0.113.0/24"]
v6_in = ["240e:e0::/28", "2408:8400::/28", "2409:8a00::/28", "2001:db8:100::/40"]

def inside(nets):
    n = ipaddress.ip_network(rnd.choice(nets))
    return n.network_address + rnd.randrange(n.num_addresses)

def subnet(addr, plen):
    return str(ipaddress.ip_network((addr, plen), strict=False))

def client():
    k = rnd.random()
    if k < 0.35:
        return subnet(inside(v4_in), rnd.choice([32, 24, 24, 24, 20, 16, 12, 8]))
    if k < 0.55:
        a = ipaddress.IPv4Address(rnd.randrange(1 << 24, 223 << 24))
        return subnet(a, rnd.choice([24, 24, 16, 32]))
    if k < 0.75:
        return subnet(inside(v6_in), rnd.choice([56, 56, 48, 64, 32, 128]))
    if k < 0.90:
        a = ipaddress.IPv6Address(rnd.randrange(0x2000 << 112, 0x3fff << 112))
        return subnet(a, rnd.choice([56, 48, 64]))
    # Subnets the server must not locate by, and the bare resolver.
    return rnd.choice(["127.0.0.0/8", "0.0.0.0/0", "169.254.1.0/24",
                       "::1/128", "fe80::/64", "127.0.0.1"])

static = [("static.cdn.example.test", "A"), ("static.cdn.example.test", "AAAA"),
          ("img.cdn.example.test", "A"), ("cdn.example.test", "MX"),
          ("cdn.example.test", "TXT"), ("nothing.cdn.example.test", "A"),
          ("x.edge.cdn.example.test", "A"), ("host.lab.cdn.example.test", "A"),
          ("ns1.cdn.example.test", "AAAA"), ("www.example.org", "A")]
for _ in range(int(sys.argv[2])):
    c = client()
    for svc in ("www", "video", "api"):
        t = "A" if svc == "api" else rnd.choice(["A", "AAAA"])
        print(f"{svc}.cdn.example.test {t} {c}")
    n, t = rnd.choice(static)
    print(f"{n} {t} {c}")
EOP
echo "# $(wc -l < "$T/cases") cases"

# dig: one process for all of them.
awk '{ if ($3 ~ /\//) print $1, $2, "+subnet=" $3; else print $1, $2 }' "$T/cases" > "$T/batch"
dig @127.0.0.1 -p "$PORT" +norec +tries=1 +time=2 -f "$T/batch" > "$T/dig.out" 2>&1
# explain: as an operator runs it.
while read -r name type client; do
	CTL --json explain "$name" --client "$client" --type "$type" || echo '{"error": true}'
	echo "@@@"
done < "$T/cases" > "$T/explain.out" 2>"$T/explain.err"

python3 - "$T/cases" "$T/dig.out" "$T/explain.out" "$ROOT/geoip/demo.txt" \
	"$ROOT/zones/demo-gslb.json" > "$T/compare.out" <<'EOP'
import ipaddress, json, re, sys
cases = [l.split() for l in open(sys.argv[1])]

# dig's output, one block per query, in order.
blocks = re.split(r"^; <<>> DiG.*$", open(sys.argv[2]).read(), flags=re.M)[1:]
def parse_dig(b):
    st = re.search(r"status: (\w+)", b)
    ecs = re.search(r"CLIENT-SUBNET: \S+/(\d+)/(\d+)", b)
    ans, on = [], False
    for l in b.split("\n"):
        if l.startswith(";; ANSWER SECTION:"):
            on = True
            continue
        if on and (not l.strip() or l.startswith(";")):
            on = False
        if on:
            ans.append(l.split())
    return {"rcode": st.group(1) if st else None,
            "scope": int(ecs.group(2)) if ecs else 0, "answers": ans}
digs = [parse_dig(b) for b in blocks]
exps = []
for chunk in open(sys.argv[3]).read().split("@@@\n")[:-1]:
    try:
        exps.append(json.loads(chunk))
    except ValueError:
        exps.append({"error": True})

# The oracle of the row: longest-prefix match in the demo source, then
# the first row of the chain the service has (every demo node is up).
nets = []
for l in open(sys.argv[4]):
    f = l.split()
    if f and not f[0].startswith("#"):
        nets.append((ipaddress.ip_network(f[0]), f[1], f[2]))
table = json.load(open(sys.argv[5]))
rows = {}
for w in table["weights"]:
    rows.setdefault(w["service"], set()).add((w["region"], w["isp"]))

def routable(a):
    if a.version == 4:
        o = a.packed
        return not (o[0] in (0, 127) or (o[0] == 169 and o[1] == 254) or o[0] >= 224)
    return not (int(a) in (0, 1) or a in ipaddress.ip_network("fe80::/10")
                or a.packed[0] == 0xff)

def locate(client):
    if "/" in client:
        n = ipaddress.ip_network(client)
        if n.prefixlen > 0 and routable(n.network_address):
            a = n.network_address
        else:
            a = ipaddress.ip_address("127.0.0.1")   # the resolver
    else:
        a = ipaddress.ip_address(client)
    best = None
    for net, reg, isp in nets:
        if a.version == net.version and a in net and (
                best is None or net.prefixlen > best[0].prefixlen):
            best = (net, reg, isp)
    return (best[1], best[2]) if best else ("*", "*")

def oracle_row(svc, client):
    reg, isp = locate(client)
    for r, i in ((reg, isp), (reg, "*"), ("*", isp), ("*", "*")):
        if (r, i) in rows[svc]:
            return ("*" if r == "*" else "region") + "," + ("*" if i == "*" else "isp")
    return "none"

def rr(fields):
    # name TTL class type rdata..., lowercase owner, as a comparable tuple
    return (fields[0].lower(), int(fields[1]), fields[2], fields[3],
            " ".join(fields[4:]))

sticky = {s["name"] for s in table["services"] if s["sticky"]}
bad = 0
checked = 0
def problem(i, what):
    global bad
    bad += 1
    if bad <= 20:
        print(f"case {i} {' '.join(cases[i])}: {what}")

if len(digs) != len(cases) or len(exps) != len(cases):
    print(f"counts differ: {len(cases)} cases, {len(digs)} dig, {len(exps)} explain")
    sys.exit(1)
for i, (case, d, e) in enumerate(zip(cases, digs, exps)):
    name, qtype, client = case
    checked += 1
    if e.get("error") or d["rcode"] is None:
        problem(i, "no answer from explain or dig")
        continue
    if d["rcode"] != e["rcode"]:
        problem(i, f"rcode dig {d['rcode']} explain {e['rcode']}")
    if d["scope"] != e["ecs_scope"]:
        problem(i, f"ECS scope dig {d['scope']} explain {e['ecs_scope']}")
    dans = [rr(a) for a in d["answers"]]
    eans = [rr(a.split()) for a in e["answers"]]
    if dans and dans[0][1] != e.get("answer_ttl"):
        problem(i, f"TTL dig {dans[0][1]} explain {e.get('answer_ttl')}")
    if "service" not in e:
        if sorted(dans) != sorted(eans):
            problem(i, f"static answers differ: dig {dans} explain {eans}")
        continue
    want = oracle_row(name, client)
    if e["row"] != want:
        problem(i, f"row: explain {e['row']}, oracle {want}")
    if dans and dans[0][1] != e["ttl"]:
        problem(i, f"TTL dig {dans[0][1]} explain's trail {e['ttl']}")
    if name in sticky:
        if sorted(a[4] for a in dans) != sorted(a[4] for a in eans):
            problem(i, f"sticky: dig {[a[4] for a in dans]} explain {[a[4] for a in eans]}")
        picked = {t for c in e["candidates"] if c["picked"] for t in c["targets"]}
        if not {a[4] for a in dans} <= picked:
            problem(i, f"sticky: dig {[a[4] for a in dans]} not among picked {picked}")
    else:
        ok = {t for c in e["candidates"] if c["usable"] or e["failed_open"]
              for t in c["targets"]}
        for a in dans:
            if a[4] not in ok:
                problem(i, f"dig answer {a[4]} is not a usable candidate of row {e['row']}")
print(f"compared {checked} cases, {bad} differ")
sys.exit(1 if bad else 0)
EOP
rc=$?
cat "$T/compare.out"
[ $rc = 0 ] && ok "explain and dig agree on $(wc -l < "$T/cases") random cases (seed $SEED)" ||
	fail "explain and dig disagree (seed $SEED)"
[ ! -s "$T/explain.err" ] && ok "explain ran without errors" ||
	{ fail "explain errors"; head "$T/explain.err"; }

# The text form names where a static answer comes from.
out=$(CTL explain static.cdn.example.test --client 36.110.1.0/24)
expect_has "$out" "^source +zone cdn\.example\.test: answered from the zone" "explain: static name from the zone"
expect_has "$out" "^answer +static\.cdn\.example\.test\. 3600 IN A 192\.0\.2\.80" "explain: static record"
out=$(CTL explain nothing.cdn.example.test --client 36.110.1.0/24)
expect_has "$out" "^rcode +NXDOMAIN" "explain: NXDOMAIN"
out=$(CTL explain www.example.org --client 36.110.1.0/24)
expect_has "$out" "^rcode +REFUSED" "explain: a name outside our zones is refused"
# Each candidate's reason is the plan's.
CTL node set bj-ct-2 --admin drain >/dev/null
out=$(CTL explain www.cdn.example.test --client 36.110.1.0/24)
expect_has "$out" "bj-ct-2 +weight [0-9]+ +admin drain" "explain: a drained node, as its plan says"
expect_has "$out" "^chain +region,isp \(answered\)" "explain: the chain level that answered"
CTL node set bj-ct-2 --admin up >/dev/null
out=$(CTL explain www.cdn.example.test --client 36.110.1.0/24)
expect_has "$out" "bj-ct-2 +weight [0-9]+ +usable \(admin up\)" "explain: admin up forces a node in"
finish
