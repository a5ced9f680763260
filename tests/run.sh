#!/bin/bash
# SPDX-License-Identifier: MIT
# Runs every test layer: unit (check), fuzz-corpus replay, then
# integration scripts against the real daemon.  Prints one closing line
# "N passed, N failed" and exits non-zero if anything failed.
#
#   tests/run.sh [-j N]
#
# -j N runs N tests at a time (-j 1 runs them one after the other, in
# order).  The default is twice the number of CPUs, as many as the port
# room below 32768 holds (5 slots from the default base): the integration
# tests mostly wait for the daemon, so running them side by side shortens
# the suite without loading the machine much more.  Under sanitizers the
# default is the number of CPUs: instrumented tests compute more than
# they wait.  Each of the N slots has its own range of
# ports (SLOT_SPAN above the previous one's) and its own temporary tree
# (tests/tmp/PORT/), so two tests never share a port or a directory; the
# tests of one slot run one after the other.  Lines are printed as tests
# end, the longest-running tests first (their last durations are kept in
# tests/tmp/durations).
#
# Environment: B (build directory, default build), TESTPORT (base port),
# SAN (non-empty when built with sanitizers), ONLY (a glob of test names:
# unit/check_x, integ/test_x, remote/test_x...),
# TEST_TIME_FACTOR (multiplies every deadline of the integration tests;
# default 1, more on a slow or busy machine: see tests/integ/lib.sh).
# GSLB_FUZZ_MUTATE and GSLB_FUZZ_SEED: the mutations of fuzz/api.
cd "$(dirname "$0")/.." || exit 2
B=${B:-build}
TESTPORT=${TESTPORT:-15300}
SLOT_SPAN=3200
max_slots=$(((32768 - TESTPORT) / SLOT_SPAN))
[ "$max_slots" -ge 1 ] || max_slots=1
cpus=$(nproc 2>/dev/null || echo 1)
if [ -n "${SAN:-}" ]; then jobs=$cpus; else jobs=$((2 * cpus)); fi
[ "$jobs" -le "$max_slots" ] || jobs=$max_slots
while getopts j: opt; do
	case $opt in
	j) jobs=$OPTARG ;;
	*) echo "usage: tests/run.sh [-j N]" >&2; exit 2 ;;
	esac
done
[[ $jobs =~ ^[1-9][0-9]*$ ]] || { echo "tests/run.sh: -j wants a number >= 1" >&2; exit 2; }
# A slot runs one test at a time, so its tests share one port layout
# (TEST_SLOTTED): the DNS port at the base, probe servers 3000 to 3130
# above it, etcd 1000 to 1010 above it (lib.sh, cluster_lib.sh).  A test
# run alone instead adds a hash of its name, so that two of them side
# by side do not collide.
export TEST_SLOTTED=1
export B SAN TEST_TIME_FACTOR=${TEST_TIME_FACTOR:-1}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
# ThreadSanitizer: a report fails the test (exit code), with the
# suppressions of tests/tsan.supp (each entry says why it is there).
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:exitcode=66:second_deadlock_stack=1:suppressions=$PWD/tests/tsan.supp}
# The unit tests' own time limit (check's 4 s a test) grows with the
# factor, and tenfold under sanitizers: instrumented code runs several
# times slower, and a busy machine slower still.
export CK_TIMEOUT_MULTIPLIER=${CK_TIMEOUT_MULTIPLIER:-$(awk -v f="$TEST_TIME_FACTOR" -v s="${SAN:-}" \
	'BEGIN { m = (f < 1 ? 1 : f) * (s != "" ? 10 : 1); print int(m + 0.999) }')}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
LOGDIR=tests/tmp/$TESTPORT/log
DURATIONS=tests/tmp/durations
mkdir -p "$LOGDIR"
touch "$DURATIONS"

# The tests, as "name<TAB>command".
names=()
declare -A cmd
add() { # name command...
	local name=$1
	shift
	if [ -n "${ONLY:-}" ] && [[ $name != $ONLY ]]; then return; fi
	names+=("$name")
	cmd[$name]=$(printf '%q ' "$@")
}
for t in "$B"/tests/check_*; do
	[ -x "$t" ] && add "unit/$(basename "$t")" "$t"
done
[ -x "$B/tests/fuzz_replay" ] &&
	add "fuzz/replay" "$B/tests/fuzz_replay" tests/fuzz/corpus
[ -x "$B/tests/fuzz_zone_replay" ] &&
	add "fuzz/zone" "$B/tests/fuzz_zone_replay" tests/fuzz/corpus-zone
[ -x "$B/tests/fuzz_conf_replay" ] &&
	add "fuzz/conf" "$B/tests/fuzz_conf_replay" tests/fuzz/corpus-conf
# The API's requests: the corpus, then GSLB_FUZZ_MUTATE mutations of it
# (30,000 by default, about a second; more for a longer run, with
# GSLB_FUZZ_SEED for other inputs: tests/fuzz/replay.c).
[ -x "$B/tests/fuzz_api_replay" ] &&
	add "fuzz/api" env GSLB_FUZZ_MUTATE="${GSLB_FUZZ_MUTATE:-30000}" \
		GSLB_FUZZ_SEED="${GSLB_FUZZ_SEED:-1}" "$B/tests/fuzz_api_replay" tests/fuzz/corpus-api
# Sizes a reader can hold (tests/lengths.sh, exceptions in tests/lengths.allow).
add "lint/lengths" bash tests/lengths.sh
for t in tests/integ/test_*.sh; do
	[ -f "$t" ] && add "integ/$(basename "$t" .sh)" bash "$t"
done
# A selection of the integration tests again in remote mode: their
# gslbctl commands go through gslbd's HTTP API (gslbctl --server) once
# the daemon is up, and must pass unchanged (tests/integ/lib.sh).  The
# ones whose commands run mostly with the daemon up, and together in
# about 3 minutes: test_cutover and test_apply_roundtrip pass remotely
# too, but add little (the latter starts gslbd only near its end) for
# their time.
REMOTE_TESTS="ctlsafe json explain steer_pin release store"
for t in $REMOTE_TESTS; do
	add "remote/test_$t" env GSLB_TEST_REMOTE=1 bash "tests/integ/test_$t.sh"
done

# In parallel, the longest first (by their last run; new ones count as
# long), so that the slots end together.
if [ "$jobs" -gt 1 ]; then
	declare -A last
	while IFS=$'\t' read -r n d; do last[$n]=$d; done <"$DURATIONS"
	mapfile -t names < <(for n in "${names[@]}"; do
		printf '%s\t%s\n' "${last[$n]:-999}" "$n"
	done | sort -t$'\t' -k1,1 -rn -s | cut -f2)
fi

pass=0
fail=0
failed=()
declare -A slot_of start_of name_of
free_slots=()
for ((s = 0; s < jobs; s++)); do free_slots+=("$s"); done

start() { # name slot
	local name=$1 slot=$2 log="$LOGDIR/$1.log"
	mkdir -p "$(dirname "$log")"
	(TESTPORT=$((TESTPORT + slot * SLOT_SPAN)) exec timeout 600 bash -c "${cmd[$name]}" >"$log" 2>&1) &
	slot_of[$!]=$slot
	name_of[$!]=$name
	start_of[$!]=$(date +%s.%N)
}

report() { # pid status
	local pid=$1 rc=$2 name=${name_of[$1]} log="$LOGDIR/${name_of[$1]}.log"
	local took
	took=$(awk -v a="${start_of[$pid]}" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')
	printf '%s\t%s\n' "$name" "$took" >>"$DURATIONS.new"
	if [ "$rc" -eq 0 ]; then
		pass=$((pass + 1))
		printf 'PASS  %-40s %6.1fs\n' "$name" "$took"
	else
		fail=$((fail + 1))
		failed+=("$name")
		printf 'FAIL  %-40s (log: %s)\n' "$name" "$log"
		# The failed checks first: the tail may not reach back to them.
		grep -m 5 -E '^FAIL - ' "$log" | sed 's/^/      ! /'
		tail -n 25 "$log" | sed 's/^/      | /'
	fi
	free_slots+=("${slot_of[$pid]}")
	unset "slot_of[$pid]" "name_of[$pid]" "start_of[$pid]"
}

: >"$DURATIONS.new"
for name in "${names[@]}"; do
	while [ ${#free_slots[@]} -eq 0 ]; do
		wait -n -p done_pid
		report "$done_pid" $?
	done
	start "$name" "${free_slots[0]}"
	free_slots=("${free_slots[@]:1}")
done
while [ ${#slot_of[@]} -gt 0 ]; do
	wait -n -p done_pid
	report "$done_pid" $?
done

# Durations of this run replace those of the tests it ran.
awk -F'\t' 'NR == FNR { seen[$1] = 1; print; next } !($1 in seen)' \
	"$DURATIONS.new" "$DURATIONS" >"$DURATIONS.tmp" &&
	mv "$DURATIONS.tmp" "$DURATIONS"
rm -f "$DURATIONS.new"

echo
[ ${#failed[@]} -gt 0 ] && echo "failed: ${failed[*]}"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
