#!/bin/bash
# SPDX-License-Identifier: MIT
# Runs every test layer in order: unit (check), fuzz-corpus replay, then
# integration scripts against the real daemon.  Prints one closing line
# "N passed, N failed" and exits non-zero if anything failed.
#
# Environment: B (build directory, default build), TESTPORT (base port),
# SAN (non-empty when built with sanitizers), ONLY (a glob of test names).
cd "$(dirname "$0")/.." || exit 2
B=${B:-build}
export B TESTPORT=${TESTPORT:-15300} SAN
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
# ThreadSanitizer: a report fails the test (exit code), with the
# suppressions of tests/tsan.supp (each entry says why it is there).
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:exitcode=66:second_deadlock_stack=1:suppressions=$PWD/tests/tsan.supp}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
pass=0
fail=0
failed=()

run() { # name command...
	local name=$1
	shift
	if [ -n "$ONLY" ] && [[ $name != $ONLY ]]; then return; fi
	local log=tests/tmp/$TESTPORT/log/$name.log
	mkdir -p "$(dirname "$log")"
	local t0=$(date +%s.%N)
	if timeout 600 "$@" >"$log" 2>&1; then
		pass=$((pass + 1))
		printf 'PASS  %-40s %6.1fs\n' "$name" "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{print b-a}')"
	else
		fail=$((fail + 1))
		failed+=("$name")
		printf 'FAIL  %-40s (log: %s)\n' "$name" "$log"
		# The failed checks first: the tail may not reach back to them.
		grep -m 5 -E '^FAIL - ' "$log" | sed 's/^/      ! /'
		tail -n 25 "$log" | sed 's/^/      | /'
	fi
}

for t in "$B"/tests/check_*; do
	[ -x "$t" ] && run "unit/$(basename "$t")" "$t"
done
[ -x "$B/tests/fuzz_replay" ] &&
	run "fuzz/replay" "$B/tests/fuzz_replay" tests/fuzz/corpus
[ -x "$B/tests/fuzz_zone_replay" ] &&
	run "fuzz/zone" "$B/tests/fuzz_zone_replay" tests/fuzz/corpus-zone
[ -x "$B/tests/fuzz_conf_replay" ] &&
	run "fuzz/conf" "$B/tests/fuzz_conf_replay" tests/fuzz/corpus-conf
for t in tests/integ/test_*.sh; do
	[ -f "$t" ] && run "integ/$(basename "$t" .sh)" bash "$t"
done

echo
[ ${#failed[@]} -gt 0 ] && echo "failed: ${failed[*]}"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
