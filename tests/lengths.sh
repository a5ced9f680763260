#!/bin/bash
# SPDX-License-Identifier: MIT
# Sizes a reader can hold: no .c file of src/ over 700 lines and no
# function over 100 lines (from its opening brace to its closing one),
# but for the exceptions named in tests/lengths.allow, each with its
# reason.  An exception that no longer applies is reported too, so that
# the list only shrinks.  Prints what is too long; exits 1 if anything is.
#
#   tests/lengths.sh [SRCDIR]
cd "$(dirname "$0")/.." || exit 2
SRC=${1:-src}
ALLOW=tests/lengths.allow
MAX_FILE=700
MAX_FUNC=100
bad=0
# allowed "file" or "file:function" entries (first field of each line)
declare -A allow used
while read -r what _; do
	[[ -z $what || $what == \#* ]] && continue
	allow[$what]=1
done < "$ALLOW"

while read -r f; do
	n=$(wc -l < "$f")
	if [ "$n" -gt "$MAX_FILE" ]; then
		if [ -n "${allow[$f]:-}" ]; then used[$f]=1
		else echo "$f: $n lines (at most $MAX_FILE)"; bad=1; fi
	fi
	# Functions: a body opens with "{" alone at the start of a line and
	# closes with "}" at the start of a line; the name is the identifier
	# before the first "(" of the lines since the last blank line.
	while IFS=$'\t' read -r name len; do
		key="$f:$name"
		if [ -n "${allow[$key]:-}" ]; then used[$key]=1
		else echo "$key: $len lines (at most $MAX_FUNC)"; bad=1; fi
	done < <(awk -v max="$MAX_FUNC" '
		/^$/ { head = ""; next }
		!inside && (/^[ \t]*\/?\*/ || /^#/) { next }     # comments, directives
		!inside && /^\{$/ {
			inside = 1; start = NR
			h = head; sub(/\(.*/, "", h); n = split(h, w, /[ \t*]+/); name = w[n]
			next
		}
		inside && /^\}/ {
			inside = 0
			if (NR - start - 1 > max) printf "%s\t%d\n", name, NR - start - 1
			head = ""; next
		}
		!inside { head = head " " $0 }
	' "$f")
done < <(find "$SRC" -name '*.c' | sort)

for k in "${!allow[@]}"; do
	[ -n "${used[$k]:-}" ] || { echo "$ALLOW: $k is within the limits now: drop it"; bad=1; }
done
exit $bad
