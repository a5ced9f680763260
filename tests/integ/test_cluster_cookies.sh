#!/bin/bash
# The DNS Cookie secret shared through etcd in cluster mode, with a real
# 3-member etcd and gslbd instances on loopback:
#  1. ns1 and ns2 read one secret (<prefix>cookie-secret, created once):
#     a server cookie made by ns1 is valid at ns2 (NOERROR, counted
#     valid, kept as it is: it validates under ns2's current secret);
#  2. the elected instance rotates it (its lifetime shortened for the
#     test): both follow, the new generation's cookies are valid at
#     both, and the previous one's still are (the overlap);
#  3. every etcd member stopped: both keep answering and keep the secret
#     (gslbd_cluster_cookie_secret_kept 1, the same generation past the
#     lifetime, the cookies still valid), and say so in the log;
#  4. etcd back, ns2 restarted: it picks the shared secret up;
#  5. a SIGHUP reload keeps it;
#  6. a configured secret file wins over etcd (ns3).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster_lib.sh"
gslb_zone
ROT=10                      # the test's cookie lifetime, seconds
export GSLBD_TEST_COOKIE_ROTATE=$ROT
for i in 1 2 3; do ns_conf "$i"; done
etcd_cluster_start || exit 1
for i in 1 2; do ns_start "$i"; done

gen_of() { mval "$(scrape "$1")" gslbd_cluster_cookie_secret_generation; }
kept_of() { mval "$(scrape "$1")" gslbd_cluster_cookie_secret_kept; }
valid_of() { mval "$(scrape "$1")" 'gslbd_cookie_queries_total{transport="udp",kind="valid"}'; }
# The COOKIE line of dig at nsI with cookie C: "STATUS FULL-COOKIE".
ask() { # i cookie
	local out
	out=$(dig @127.0.0.1 -p "${NSPORT[$1]}" +norec +time=2 +tries=1 \
		+cookie="$2" gslb.test SOA 2>&1)
	printf '%s %s\n' "$(sed -nE 's/.*status: ([A-Z]+),.*/\1/p' <<<"$out" | head -1)" \
		"$(sed -nE 's/^; COOKIE: ([0-9a-f]+).*/\1/p' <<<"$out" | head -1)"
}
same_gen() { local a b; a=$(gen_of 1); b=$(gen_of 2); [ -n "$a" ] && [ "$a" -gt 0 ] && [ "$a" = "$b" ]; }
# Valid at nsI: NOERROR and the valid counter moved by one.
expect_valid() { # i cookie what
	local v0 v1 r
	v0=$(valid_of "$1")
	r=$(ask "$1" "$2")
	v1=$(valid_of "$1")
	if [ "${r%% *}" = NOERROR ] && [ "$v1" = $((v0 + 1)) ]; then
		ok "$3 (valid count $v0 -> $v1)"
	else
		fail "$3: $r, valid count $v0 -> $v1"
	fi
}

# 1. One secret.
wait_until 10 same_gen || fail "both instances read the shared secret: $(gen_of 1) / $(gen_of 2)"
g1=$(gen_of 1)
ok "ns1 and ns2 use the cluster's secret of generation $g1"
n=$(ETCDCTL get --prefix /gslbd/cookie-secret --keys-only 2>/dev/null | grep -c .)
expect_has "$n" "^1$" "one key /gslbd/cookie-secret in etcd"
expect_has "$(cat "$T/ns1.log" "$T/ns2.log")" "created the cluster's secret in etcd" \
	"the key created by one instance"
r=$(ask 1 0123456789abcdef); c1=${r#* }
expect_has "$r" "^NOERROR 0123456789abcdef01000000[0-9a-f]{24}$" "ns1: a server cookie"
expect_valid 2 "$c1" "ns1's cookie at ns2: NOERROR, valid"
if same_gen && [ "$(gen_of 1)" = "$g1" ]; then
	r=$(ask 2 "$c1")
	expect_has "$r" "^NOERROR $c1$" "ns2 keeps ns1's cookie as it is (valid under its current secret)"
fi

# 2. Rotation by the elected instance, within about a second at both.
rotated() { a=$(gen_of 1); b=$(gen_of 2); [ "${a:-0}" -gt "$g1" ] && [ "$a" = "$b" ]; }
if wait_until $((ROT + 5)) rotated; then
	ok "rotated: both at generation $(gen_of 1) (was $g1)"
else
	fail "rotated: $(gen_of 1) / $(gen_of 2), was $g1"
fi
expect_has "$(cat "$T/ns1.log" "$T/ns2.log")" "rotated the cluster's secret to generation" \
	"the rotation logged by the elected instance"
r=$(ask 2 1111111111111111); c2=${r#* }
expect_valid 1 "$c2" "after the rotation: ns2's new cookie valid at ns1"
expect_valid 2 "$c1" "after the rotation: the previous generation's cookie still valid at ns2"
expect_valid 1 "$c1" "after the rotation: the previous generation's cookie still valid at ns1"

# 3. etcd stopped: the secret is kept.
for i in 1 2 3; do etcd_stop "$i"; done
both_kept() { [ "$(kept_of 1)" = 1 ] && [ "$(kept_of 2)" = 1 ]; }
if wait_until 15 both_kept; then ok "etcd down: both keep their secret (kept = 1)"
else fail "etcd down: kept $(kept_of 1) / $(kept_of 2)"; fi
gk=$(gen_of 1)
r=$(ask 1 2222222222222222); c3=${r#* }
sleep $((ROT + 2))
expect_has "$(gen_of 1) $(gen_of 2)" "^$gk $gk$" "etcd down past the lifetime: the same generation $gk at both"
expect_valid 2 "$c3" "etcd down: ns1's cookie still valid at ns2"
r=$(ask 1 "$c3")
expect_has "$r" "^NOERROR $c3$" "etcd down: ns1 kept its secret (its cookie kept as it is)"
expect_has "$(cat "$T/ns1.log")" "cookies: cannot read the cluster's secret from etcd .*keeping the secret in use" \
	"etcd down: logged"

# 4. etcd back; ns2 restarted reads the shared secret.
for i in 1 2 3; do etcd_start "$i"; done
etcd_wait || fail "etcd back"
ns_stop 2
ns_start 2
if wait_until 15 same_gen; then ok "ns2 restarted: the shared generation $(gen_of 2) again"
else fail "ns2 restarted: $(gen_of 1) / $(gen_of 2)"; fi
r=$(ask 1 3333333333333333); c4=${r#* }
expect_valid 2 "$c4" "ns2 restarted: ns1's cookie valid at ns2"
expect_has "$(kept_of 1) $(kept_of 2)" "^0 0$" "etcd back: nothing kept"

# 5. SIGHUP keeps the shared secret.
gh=$(gen_of 1)
before=$(grep -c 'reload: done' "$T/ns1.log")
kill -HUP "${NSPID[1]}"
reloaded() { [ "$(grep -c 'reload: done' "$T/ns1.log")" -gt "$before" ]; }
wait_until 10 reloaded || fail "ns1 reloaded"
if [ "$(gen_of 1)" = "$gh" ] || [ "$(gen_of 1)" = $((gh + 1)) ]; then
	expect_valid 1 "$c4" "after SIGHUP: the shared secret's cookie still valid at ns1"
else
	fail "after SIGHUP: generation $(gen_of 1), was $gh"
fi

# 6. A secret file wins.
printf 'e5e973e5a6b2a43f48e7dc849e37bfcf\n' > "$T/ns3/secret"
chmod 600 "$T/ns3/secret"
printf 'cookies:\n  secret-file: secret\n' >> "$T/ns3/gslbd.conf"
ns_start 3
expect_has "$(cat "$T/ns3.log")" "cookies: the secret file .*secret wins over the secret the cluster shares" \
	"ns3: its secret file wins over etcd, and says so"
expect_has "$(gen_of 3)" "^0$" "ns3: no shared generation in use"
r=$(ask 3 "$c4")
expect_has "$r" "^NOERROR " "ns3: answered"
expect_not "$r" "$c4" "ns3: the cluster's cookie is not valid under its own secret"
finish
