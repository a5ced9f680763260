#!/bin/bash
# SPDX-License-Identifier: MIT
# The mutation check: each patch of tests/mutate/ breaks one rule in a
# small, plausible way; the tests mapped to it must notice.
#
#   tests/mutate/run.sh [GLOB]      (make mutate [MUTANTS=GLOB])
#
# The tree (with its uncommitted changes, config.mk and build/) is copied
# to tests/tmp/mutate/tree and built there once; the copy is what gets
# broken, never the tree itself.  Then, for each patch whose name matches
# GLOB (default: every *.patch): apply it, rebuild what it changed and
# the binaries its tests need, run those tests with tests/run.sh (ONLY),
# put the sources back.  A table says, per patch, the rule, the mutation
# and what caught it (the first failing test and its first failed check),
# or SURVIVED, or that the patch does not apply or does not build (an
# error of the patch, not a catch).  Exit status 1 if any mutation
# survived or any patch is in error.
#
# A patch is a unified diff (`git diff`, applied with patch -p1) after a
# header of comment lines:
#   # rule: S2-4
#   # what: veto level halved
#   # tests: unit/check_score integ/test_health
# "tests" are test names as tests/run.sh prints them.
#
# Before the mutants, the tests of the selected patches run once on the
# unbroken copy: a test that fails there would "catch" every mutation,
# so the run stops (MUTATE_BASELINE=0 skips that).
#
# Environment: TESTPORT (base port of the tests, as for make check),
# TEST_TIME_FACTOR, TESTJOBS (tests/run.sh -j), MUTANTS (the glob, if no
# argument is given).
set -u
cd "$(dirname "$0")/../.." || exit 2
ROOT=$PWD
GLOB=${1:-${MUTANTS:-*}}
GLOB=${GLOB%.patch}
OUT=$ROOT/tests/tmp/mutate
TREE=$OUT/tree
PORT=${TESTPORT:-15300}
JOBS=${TESTJOBS:-$(nproc 2>/dev/null || echo 1)}
export TEST_TIME_FACTOR=${TEST_TIME_FACTOR:-1}

shopt -s nullglob extglob
patches=()
for p in tests/mutate/*.patch; do
	n=$(basename "$p" .patch)
	# shellcheck disable=SC2053
	[[ $n == $GLOB ]] && patches+=("$p")
done
if [ ${#patches[@]} -eq 0 ]; then
	echo "mutate: no patch matches '$GLOB'" >&2
	exit 2
fi
[ -f config.mk ] || { echo "mutate: not configured yet: run make first" >&2; exit 2; }

header() { # patch key -> the value of "# key: ..."
	sed -n "s/^# $2: *//p" "$1" | head -n 1
}

# The binaries a list of tests needs, as make targets of the copy.
targets_of() { # test...
	local t out=()
	for t in "$@"; do
		case $t in
		unit/*) out+=("build/tests/${t#unit/}") ;;
		integ/*) out+=(all) ;;
		fuzz/replay) out+=(build/tests/fuzz_replay) ;;
		fuzz/*) out+=("build/tests/fuzz_${t#fuzz/}_replay") ;;
		esac
	done
	printf '%s\n' "${out[@]}" | sort -u
}

# The copy: every file git knows or would add, with its times (make
# then sees the copied build/ as up to date), plus the configuration.
rm -rf "$TREE"
mkdir -p "$TREE" "$OUT/orig"
git ls-files -z -c -o --exclude-standard | grep -zv '^tests/tmp/' |
	tar --null -T - -cf - | tar -xpf - -C "$TREE" || exit 2
cp -p config.mk "$TREE/"
[ -f src/config.h ] && cp -p src/config.h "$TREE/src/"
[ -d build ] && cp -a build "$TREE/"

# Every test and binary the selected patches need, built and run once.
all_tests=()
for p in "${patches[@]}"; do
	read -ra ts <<<"$(header "$p" tests)"
	if [ ${#ts[@]} -eq 0 ]; then
		echo "mutate: $p names no tests (# tests: ...)" >&2
		exit 2
	fi
	all_tests+=("${ts[@]}")
done
mapfile -t all_tests < <(printf '%s\n' "${all_tests[@]}" | sort -u)
mapfile -t base_targets < <(targets_of "${all_tests[@]}")
echo "mutate: building the copy in $TREE"
if ! make -C "$TREE" -j"$JOBS" "${base_targets[@]}" >"$OUT/build.log" 2>&1; then
	echo "mutate: the unbroken copy does not build (see $OUT/build.log)" >&2
	exit 2
fi

only_of() { # test... -> an ONLY glob
	local IFS='|'
	echo "@($*)"
}

run_tests() { # log test...
	local log=$1
	shift
	(cd "$TREE" && ONLY=$(only_of "$@") B=build TESTPORT=$PORT tests/run.sh -j "$JOBS") >"$log" 2>&1
}

if [ "${MUTATE_BASELINE:-1}" != 0 ]; then
	echo "mutate: the tests on the unbroken copy: ${all_tests[*]}"
	if ! run_tests "$OUT/baseline.log" "${all_tests[@]}"; then
		grep -E '^FAIL |^ +! ' "$OUT/baseline.log" >&2
		echo "mutate: tests fail without any mutation (see $OUT/baseline.log); nothing to judge" >&2
		exit 2
	fi
fi

# The first failed check in the log of test @1: "FAIL - ..." of the
# integration tests, an "F:"/"E:" line of check, else the log's last line.
first_check() { # test
	local log="$TREE/tests/tmp/$PORT/log/$1.log" l
	l=$(grep -m 1 -E '^FAIL - ' "$log" 2>/dev/null)
	[ -z "$l" ] && l=$(grep -m 1 -E ':[FE]:' "$log" 2>/dev/null |
		sed -E 's/^[^:]*:[0-9]+:[FE]:[^:]*:([^:]*):[0-9]+: */\1: /')
	[ -z "$l" ] && l=$(tail -n 1 "$log" 2>/dev/null)
	printf '%s' "${l:0:110}"
}

rows=()
bad=0
start=$(date +%s)
for p in "${patches[@]}"; do
	name=$(basename "$p" .patch)
	rule=$(header "$p" rule)
	what=$(header "$p" what)
	read -ra ts <<<"$(header "$p" tests)"
	mapfile -t files < <(sed -n 's|^+++ b/||p' "$p" | sed 's/\t.*//')
	t0=$(date +%s)
	result=
	if ! (cd "$TREE" && patch -p1 --dry-run -s -f <"$ROOT/$p") >"$OUT/$name.patch.log" 2>&1; then
		result="does not apply"
	else
		for f in "${files[@]}"; do
			mkdir -p "$OUT/orig/$(dirname "$f")"
			cp -p "$TREE/$f" "$OUT/orig/$f"
		done
		(cd "$TREE" && patch -p1 -s -f <"$ROOT/$p") >>"$OUT/$name.patch.log" 2>&1
		mapfile -t tg < <(targets_of "${ts[@]}")
		if ! make -C "$TREE" -j"$JOBS" "${tg[@]}" >"$OUT/$name.build.log" 2>&1; then
			result="does not build"
		elif run_tests "$OUT/$name.test.log" "${ts[@]}"; then
			result=SURVIVED
		else
			failed=$(sed -n 's/^FAIL  \([^ ]*\).*/\1/p' "$OUT/$name.test.log")
			first=${failed%%$'\n'*}
			if [ -z "$first" ]; then
				result="does not run (see $OUT/$name.test.log)"
			else
				result="$first: $(first_check "$first")"
				others=$(tail -n +2 <<<"$failed" | tr '\n' ' ')
				[ -n "$others" ] && result="$result; also ${others% }"
			fi
		fi
		# The sources back, newer than the mutant's objects: the next
		# build compiles them again.
		for f in "${files[@]}"; do
			cp "$OUT/orig/$f" "$TREE/$f" && touch "$TREE/$f"
		done
	fi
	case $result in
	SURVIVED | "does not"*) bad=$((bad + 1)) ;;
	esac
	row=$(printf '%-36s %-7s %-40s %s' "$name" "$rule" "$what" "$result")
	rows+=("$row")
	printf '%s  [%ss]\n' "$row" "$(($(date +%s) - t0))"
done
{
	echo
	printf '%-36s %-7s %-40s %s\n' mutant rule mutation "caught by"
	printf '%s\n' "${rows[@]}"
	echo
	echo "${#patches[@]} mutants, $bad not caught or in error, $(($(date +%s) - start)) s"
} | tee "$OUT/report.txt"
[ "$bad" -eq 0 ]
