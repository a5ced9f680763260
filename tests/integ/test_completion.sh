#!/bin/bash
# Bash completion for gslbctl: commands, subcommands, options, option
# values, and names read from the store through the line's -c.
. "$(dirname "$0")/lib.sh"
gslb_zone
write_conf gslb.test z.zone
CTL service add www.gslb.test >/dev/null
CTL service add img.gslb.test >/dev/null
CTL node add bj-1 --addr 192.0.2.1 >/dev/null
CTL node add gd-1 --addr 192.0.2.2 >/dev/null

# Completes LINE (the cursor at its end) with bash and bash-completion,
# printing the candidates sorted on one line.
complete_line() {
	PATH="$ROOT/$B:$PATH" bash --norc --noprofile -c '
		. /usr/share/bash-completion/bash_completion
		. "$1/contrib/gslbctl.bash-completion"
		read -ra COMP_WORDS <<<"$2"
		[[ $2 == *" " ]] && COMP_WORDS+=("")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		COMP_LINE=$2; COMP_POINT=${#2}
		_gslbctl gslbctl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
		printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " "' _ "$ROOT" "$1" 2>/dev/null
}
c() { # line expected message
	local got
	got=$(complete_line "$1" | sed 's/ $//')
	[ "$got" = "$2" ] && ok "$3" || fail "$3: '$1' gave '$got', want '$2'"
}
C="gslbctl -c $T/gslbd.conf"
c "gslbctl ser" "service" "a command"
c "gslbctl -c $T/gslbd.conf no" "node" "a command after -c FILE"
c "$C service " "add del list set show" "service subcommands"
c "$C node set bj-1 --ad" "--addr --admin" "node options"
c "$C node set bj-1 --admin " "auto down drain up" "--admin values"
c "$C service set " "img.gslb.test www.gslb.test" "service names from the store"
c "$C node del " "bj-1 gd-1" "node ids from the store"
c "$C weight set www.gslb.test g" "gd-1=" "weight set: NODE= from the store"
c "$C service add www.gslb.test --all-down " "empty fallback open" "--all-down values"
c "$C metrics push " "bj-1 gd-1" "metrics push: node ids"
c "$C steer " "replay show unpin" "steer: subcommands"
c "$C steer replay " "img.gslb.test www.gslb.test" "steer replay: service names"
c "$C service set www.gslb.test --steering " "dynamic shadow static" "--steering values"
c "$C clu" "cluster" "cluster: the command"
c "$C cluster " "health overrides status" "cluster: subcommands"
c "$C cluster overrides " "drop list push" "cluster overrides: subcommands"
c "$C --local-override no" "node" "a command after --local-override"
c "$C cluster health " "bj-1 gd-1" "cluster health: node ids from the store"
c "$C cluster status " "" "cluster status: no argument"
c "$C --json cluster health b" "bj-1" "cluster health after --json: node ids"
c "$C dns" "dnssec" "dnssec: the command"
c "$C dnssec " "ds enable import keygen list retire status" "dnssec: subcommands"
c "$C dnssec enable gslb.test --al" "--algorithm" "dnssec enable: options"
c "$C dnssec enable gslb.test --s" "--split" "dnssec enable: --split"
c "$C dnssec import gslb.test k.pem --" "--role --state" "dnssec import: options"
c "$C dnssec keygen gslb.test --algorithm " "ecdsap256 ed25519" "--algorithm values"
mkdir -p "$T/keys"; chmod 700 "$T/keys"
printf 'dnssec:\n  keystore: keys\n' >> "$T/gslbd.conf"
CTL --offline dnssec enable gslb.test >/dev/null
CTL --offline dnssec keygen gslb.test >/dev/null
c "$C dnssec ds " "gslb.test" "dnssec ds: the signed zones, once each"
finish
