#!/bin/bash
# Pushed steering inputs stay bounded (S3-2, S3-9): a push for a region
# and ISP that no row of its node reads is refused by name, alone and in
# a --file batch, and writes nothing however many come; an input that is
# no longer pushed (its row gone) leaves the store once steer.input-keep
# has passed, removed by the daemon's trim.  The store's size is read
# with mdb_stat and mdb_dump (lmdb-utils), not through our own code.
. "$(dirname "$0")/lib.sh"

. "$(dirname "$0")/steer_lib.sh"
steer_setup "" "windows: [2, 3]
stale: 3
input-keep: 4"

CTL service add www.gslb.test --ttl 30 --answers 1 >/dev/null
CTL service add img.gslb.test --ttl 30 --answers 1 >/dev/null
CTL node add a --addr 192.0.2.1 >/dev/null
CTL node add b --addr 192.0.2.2 >/dev/null
CTL weight set www.gslb.test --region cn-gz --isp ctcc a=50 b=50 >/dev/null
CTL weight set img.gslb.test --region cn-bj a=10 >/dev/null
gslbd_start

# entries: the number of records of the steering inputs (and spend).
entries() { mdb_stat -s steerin "$T/db" | awk '/Entries:/ { print $2 }'; }
# keys: their keys, one a line.
keys() { mdb_dump -p -s steerin "$T/db" | awk 'NR > 1 && /^ / && ++n % 2 == 1 { print $1 }'; }

# 1. Pushes for the rows of a node, a part of a row's pair, and the node
# as a whole are kept.
for p in "a --region cn-gz --isp ctcc success=99.9 latency=20" \
	"a --region cn-bj success=99.9" "b --isp ctcc latency=30" "b success=99"; do
	# shellcheck disable=SC2086
	out=$(CTL metrics push $p 2>&1) && ok "kept: $p" || fail "refused: $p: $out"
done
n0=$(entries)
[ "$n0" = 4 ] && ok "4 input records" || fail "input records: $n0 ($(keys | tr '\n' ' '))"

# 2. A pair no row of the node reads is refused and names the node's rows.
out=$(CTL metrics push a --region cn-bj --isp cucc success=99 2>&1); rc=$?
# Row (cn-bj, *) reads the inputs of cn-bj as a whole, not those of one
# of its ISPs.
[ $rc = 1 ] && expect_has "$out" "node a is in no row for region cn-bj, ISP cucc; push for one of its rows \(.*\) or for the node as a whole" \
	"(cn-bj, cucc) refused" || fail "(cn-bj, cucc): rc $rc: $out"
expect_has "$out" "rows \((--region cn-bj, --region cn-gz --isp ctcc|--region cn-gz --isp ctcc, --region cn-bj)\)" \
	"the refusal names a's rows"
out=$(CTL metrics push b --region cn-bj latency=5 2>&1); rc=$?
[ $rc = 1 ] && expect_has "$out" "node b is in no row for region cn-bj; push for one of its rows \(--region cn-gz --isp ctcc\)" \
	"b's push for cn-bj refused" || fail "b for cn-bj: rc $rc: $out"

# 3. Two thousand pushes with made-up regions, in batches as a pipeline
# sends them: every batch refused at its first line, nothing stored.
for batch in $(seq 20); do
	for i in $(seq 100); do echo "a --region made-up-$batch-$i --isp ctcc success=99"; done > "$T/b"
	out=$(CTL metrics push --file "$T/b" 2>&1) && fail "batch $batch stored: $out"
done
expect_has "$out" "$T/b:1: metrics push: node a is in no row for region made-up-20-1, ISP ctcc" \
	"a batch names its first bad line"
printf 'a --region cn-gz --isp ctcc latency=10\nb --region cn-gz --isp cmcc success=99\n' > "$T/b"
out=$(CTL metrics push --file "$T/b" 2>&1); rc=$?
[ $rc = 1 ] && expect_has "$out" "$T/b:2: metrics push: node b is in no row for region cn-gz, ISP cmcc" \
	"a good line then a bad one: the bad one named" || fail "mixed batch: rc $rc: $out"
n=$(entries)
[ "$n" = "$n0" ] && ok "after 2000 made-up pushes still $n records" ||
	fail "records grew from $n0 to $n: $(keys | tr '\n' ' ')"

# 4. Row (cn-bj, *) goes: a's input for cn-bj is no longer refreshed and
# the trim removes it once steer.input-keep (4 s) has passed; what is
# still pushed stays.
CTL weight del img.gslb.test --region cn-bj >/dev/null
end=$((SECONDS + $(tscale 40)))
gone() { ! keys | grep -qx 'n|a|cn-bj|\*'; }
while [ $SECONDS -lt $end ] && ! gone; do
	CTL metrics push a --region cn-gz --isp ctcc success=99.9 >/dev/null
	sleep 1
done
gone && ok "the input of a row that went is trimmed" ||
	fail "still there after $(tscale 40) s: $(keys | tr '\n' ' ')"
keys | grep -qx 'n|a|cn-gz|ctcc' && ok "the input still pushed stays" ||
	fail "the pushed input went too: $(keys | tr '\n' ' ')"
out=$(CTL metrics push a --region cn-bj success=99 2>&1)
expect_has "$out" "node a is in no row for region cn-bj" "cn-bj is refused now that its row went"

# 5. input-keep below what the windows read is refused by name.
sed 's/^  input-keep: 4$/  input-keep: 2/' "$T/gslbd.conf" > "$T/short.conf"
out=$("$GSLBD" -c "$T/short.conf" --check 2>&1) && fail "input-keep 2 accepted: $out" ||
	expect_has "$out" "steer input-keep \(2\) must be 0 or at least the longest window and stale \(3\)" \
		"input-keep shorter than the windows refused"

finish
