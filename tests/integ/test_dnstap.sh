#!/bin/bash
# dnstap: queries and responses over UDP and TCP reach a Frame Streams
# collector (fstrm_capture) as AUTH_QUERY and AUTH_RESPONSE messages that
# dnstap-read decodes, a GSLB response carries its decision in extra,
# `queries: no` leaves the queries out (a reload does not change that),
# and an absent or stalled collector costs no answer.
. "$(dirname "$0")/lib.sh"

command -v fstrm_capture >/dev/null || { echo "fstrm_capture is missing (fstrm-bin)"; exit 1; }
command -v dnstap-read >/dev/null || { echo "dnstap-read is missing (bind9-dnsutils)"; exit 1; }

CAP=
stop_capture() {
	[ -n "$CAP" ] || return 0
	# fstrm_capture flushes and closes its file on SIGTERM.
	kill "$CAP" 2>/dev/null
	wait "$CAP" 2>/dev/null
	CAP=
}
start_capture() { # file
	rm -f "$T/dnstap.sock"
	fstrm_capture -t protobuf:dnstap.Dnstap -u "$T/dnstap.sock" -w "$1" \
		>>"$T/capture.log" 2>&1 &
	CAP=$!
	for _ in $(tseq 50); do [ -S "$T/dnstap.sock" ] && return 0; sleep 0.1; done
	echo "fstrm_capture did not start"; cat "$T/capture.log"; exit 1
}
trap 'stop_capture; cleanup' EXIT

cat > "$T/geo.txt" <<'EOG'
10.1.0.0/16      r-a   isp-x  64510
10.2.0.0/16      r-b   isp-y  64511
EOG
perl "$ROOT/geoip/build-demo.pl" "$T/geo.txt" "$T/geo.mmdb" >/dev/null || { echo "cannot build mmdb"; exit 1; }
gslb_zone 'www A 192.0.2.80'
conf() { # dnstap-yaml
	write_conf gslb.test z.zone "geoip:
  database: geo.mmdb
stats:
  listen: [ \"127.0.0.1@$((PORT + 1))\" ]
$1"
}
metric() { # name transport
	curl -s "http://127.0.0.1:$((PORT + 1))/metrics" |
		awk -v n="$1{transport=\"$2\"}" '$1 == n { print $2 }'
}

# --- A collector, both directions -------------------------------------
start_capture "$T/capture.fstrm"
conf "dnstap:
  socket: dnstap.sock
  identity: tap.ns"
gslbd_start
CTL service add svc.gslb.test --ttl 60 >/dev/null
CTL node add a1 --addr 192.0.2.1 --region r-a --isp isp-x >/dev/null
CTL node add a2 --addr 192.0.2.2 --region r-a --isp isp-x >/dev/null
CTL node add b1 --addr 192.0.2.3 >/dev/null
CTL weight set svc.gslb.test --region r-a --isp isp-x a1=1 a2=1 >/dev/null
CTL weight set svc.gslb.test b1=1 >/dev/null
CTL service set svc.gslb.test --answers 2 >/dev/null

out=$(q www.gslb.test A)
expect_has "$out" "192\.0\.2\.80" "static name over UDP"
out=$(q www.gslb.test A +tcp)
expect_has "$out" "192\.0\.2\.80" "static name over TCP"
gslb_udp=$(q svc.gslb.test A +subnet=10.1.5.0/24 +short | sort | tr '\n' ' ')
[ "$gslb_udp" = "192.0.2.1 192.0.2.2 " ] && ok "GSLB answer over UDP: $gslb_udp" ||
	fail "GSLB answer over UDP: '$gslb_udp'"
gslb_tcp=$(q svc.gslb.test A +subnet=10.2.5.0/24 +tcp +short | tr '\n' ' ')
[ "$gslb_tcp" = "192.0.2.3 " ] && ok "GSLB answer over TCP: $gslb_tcp" ||
	fail "GSLB answer over TCP: '$gslb_tcp'"
msgs=$(metric gslbd_dnstap_messages_total udp)
[ "${msgs:-0}" -ge 4 ] && ok "/metrics counts the UDP messages ($msgs)" ||
	fail "gslbd_dnstap_messages_total{udp}: '$msgs'"
gslbd_stop || fail "gslbd exit status"
grep -Eq "dnstap wrote [1-9][0-9]* messages and dropped 0" "$T/gslbd.log" &&
	ok "exit log line counts the messages" || fail "exit log: $(grep answered "$T/gslbd.log")"
stop_capture

yaml=$(dnstap-read -y "$T/capture.fstrm" 2>&1)
echo "$yaml" > "$T/capture.yaml"
# One document per message; the fields of the message we look at.
docs() { # type protocol qname
	awk -v t="$1" -v p="$2" -v n="$3" '
		/^---/ { if (ok == 3) c++; ok = 0; next }
		$1 == "type:" && $2 == t { ok++ }
		$1 == "socket_protocol:" && $2 == p { ok++ }
		index($0, ";" n ".") { ok++ }
		END { if (ok == 3) c++; print c + 0 }' "$T/capture.yaml"
}
for p in UDP TCP; do
	for t in AUTH_QUERY AUTH_RESPONSE; do
		n=$(docs $t $p www.gslb.test)
		[ "$n" -ge 1 ] && ok "$t over $p for www.gslb.test" ||
			fail "$t over $p for www.gslb.test: $n"
		n=$(docs $t $p svc.gslb.test)
		[ "$n" -ge 1 ] && ok "$t over $p for svc.gslb.test" ||
			fail "$t over $p for svc.gslb.test: $n"
	done
done
expect_has "$yaml" "identity: tap.ns" "identity from the section"
expect_has "$yaml" "query_address: \"?127\.0\.0\.1\"?$" "client address"
expect_has "$yaml" "response_address: \"?127\.0\.0\.1\"?$" "our address"
expect_has "$yaml" "response_port: $PORT" "our port"
expect_has "$yaml" "socket_family: INET" "socket family"
expect_has "$yaml" "response_message:" "response messages"
expect_has "$yaml" "svc\.gslb\.test\.[[:space:]]+60[[:space:]]+IN[[:space:]]+A[[:space:]]+192\.0\.2\.3" \
	"the GSLB response's records"

frames=$(python3 "$ROOT/tests/integ/dnstap_frames.py" "$T/capture.fstrm")
echo "$frames" > "$T/frames.txt"
expect_has "$frames" "^2 1 gslb service=svc\.gslb\.test row=r-a,isp-x node=(a1,a2|a2,a1)$" \
	"UDP GSLB response: extra names service, row and the nodes dig got"
expect_has "$frames" "^2 2 gslb service=svc\.gslb\.test row=\*,\* node=b1$" \
	"TCP GSLB response: extra with the default row"
n=$(grep -c "gslb service=" <<<"$frames")
[ "$n" = 2 ] && ok "extra only on the two GSLB responses" || fail "extra on $n messages"
expect_not "$frames" "^1 .*gslb" "no extra on queries"

# --- queries: no -------------------------------------------------------
start_capture "$T/capture2.fstrm"
conf "dnstap:
  socket: dnstap.sock
  queries: no"
gslbd_start
q www.gslb.test A >/dev/null
q www.gslb.test A +tcp >/dev/null
# A reload checks the section and says a change waits for a restart.
conf "dnstap:
  socket: dnstap.sock"
kill -HUP "$PID"
for _ in $(tseq 50); do grep -q "reload: done" "$T/gslbd.log" && break; sleep 0.1; done
expect_has "$(cat "$T/gslbd.log")" "reload: dnstap.queries changed \(no -> \(default\)\): needs a restart; keeping the old value" \
	"reload: a changed section is reported, not applied"
q www.gslb.test A >/dev/null
gslbd_stop || fail "gslbd exit status (queries: no)"
stop_capture
frames=$(python3 "$ROOT/tests/integ/dnstap_frames.py" "$T/capture2.fstrm")
nq=$(grep -c "^1 " <<<"$frames"); nr=$(grep -c "^2 " <<<"$frames")
[ "$nq" = 0 ] && [ "$nr" -ge 2 ] && ok "queries: no: $nr responses, no query" ||
	fail "queries: no: $nq queries, $nr responses"

# --- Rate limiting withholds a response: its query alone is logged ------
start_capture "$T/capture4.fstrm"
conf "dnstap:
  socket: dnstap.sock
rrl:
  responses-per-second: 1
  slip: 0
  exempt: []"
gslbd_start
got=$(py <<'EOP'
import dnsraw, socket, os
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(0.5)
q = dnsraw.query("www.gslb.test", 1)
got = 0
for i in range(30):
    s.sendto(q, ("127.0.0.1", int(os.environ["PORT"])))
    try:
        s.recv(4096); got += 1
    except socket.timeout:
        pass
print(got)
EOP
)
gslbd_stop || fail "gslbd exit status (rrl)"
stop_capture
frames=$(python3 "$ROOT/tests/integ/dnstap_frames.py" "$T/capture4.fstrm")
nq=$(grep -c "^1 1 " <<<"$frames"); nr=$(grep -c "^2 1 " <<<"$frames")
if [ "$got" -lt 30 ] && [ $((nq - nr)) = $((30 - got)) ]; then
	ok "rate limiting: $((30 - got)) withheld responses absent, their queries logged"
else fail "rate limiting: $got of 30 answered, $nq queries and $nr responses logged"; fi

# --- No collector: answers as usual, then the collector appears ---------
rm -f "$T/dnstap.sock"
conf "dnstap:
  socket: dnstap.sock"
gslbd_start
for i in $(seq 200); do echo "www.gslb.test A"; done > "$T/batch"
t0=$(date +%s%N)
n=$(dig @127.0.0.1 -p "$PORT" +short +tries=1 +time=2 -f "$T/batch" | grep -c '^192\.0\.2\.80$')
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ "$n" = 200 ] && ok "no collector: 200 of 200 answered ($ms ms)" || fail "no collector: $n of 200 answered"
# The I/O thread tries the socket again every second: polled until the
# collector holds a connection on its socket (ss), the time printed.
start_capture "$T/capture3.fstrm"
connected() { ss -xH state established 2>/dev/null | grep -qF "$T/dnstap.sock"; }
t0=$(date +%s%N)
if wait_until 10 connected; then ok "gslbd connects to a later collector ($(( ($(date +%s%N) - t0) / 1000000 )) ms)"
else fail "gslbd did not connect to the later collector"; fi
q www.gslb.test TXT >/dev/null
gslbd_stop || fail "gslbd exit status (late collector)"
stop_capture
yaml=$(dnstap-read -y "$T/capture3.fstrm" 2>&1)
expect_has "$yaml" ";www\.gslb\.test\.[[:space:]]+IN[[:space:]]+TXT" "a collector that comes later gets the later queries"

# --- A collector that stops reading: answers go on, drops are counted ---
# Its own process (not py's 30 s bound): it must outlast a slow start
# and the 12000 queries below; stopped by PID.
timeout "$(tscale 120)" python3 - "$T/stall.sock" > "$T/stall.out" 2>&1 <<'EOP' &
import socket, struct, sys, time
# A Frame Streams receiver that completes the handshake, then never
# reads again: the writer's socket buffer and gslbd's queue fill up.
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1]); s.listen(1)
c, _ = s.accept()
def frame():
    esc, n = struct.unpack("!II", c.recv(8, socket.MSG_WAITALL))
    return c.recv(n, socket.MSG_WAITALL)
ct = b"protobuf:dnstap.Dnstap"
frame()  # READY
accept = struct.pack("!III", 2, 1, len(ct)) + ct   # ACCEPT, content type
c.sendall(struct.pack("!II", 0, len(accept)) + accept)
frame()  # START
print("stalled", flush=True)
time.sleep(3600)
EOP
STALL=$!
for _ in $(tseq 50); do [ -S "$T/stall.sock" ] && break; sleep 0.1; done
conf "dnstap:
  socket: stall.sock"
gslbd_start
for _ in $(tseq 50); do grep -q stalled "$T/stall.out" && break; sleep 0.1; done
res=$(py <<'EOP'
import dnsraw, socket, os
# 12000 queries from one socket (one UDP thread): about 24000 messages,
# beyond what the queue and the socket buffers hold.
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(2)
port = int(os.environ["PORT"])
q = dnsraw.query("www.gslb.test", 1)
got = 0
for i in range(0, 12000, 50):
    for k in range(50):
        s.sendto(q, ("127.0.0.1", port))
    for k in range(50):
        try:
            s.recv(4096); got += 1
        except socket.timeout:
            break
print(got)
EOP
)
[ "$res" = 12000 ] && ok "stalled collector: 12000 of 12000 answered" ||
	fail "stalled collector: $res of 12000 answered"
dropped=$(metric gslbd_dnstap_dropped_total udp)
[ "${dropped:-0}" -gt 0 ] && ok "stalled collector: $dropped messages dropped and counted" ||
	fail "stalled collector: dropped '$dropped'"
kill "$STALL" 2>/dev/null; wait "$STALL" 2>/dev/null
gslbd_stop || fail "gslbd exit status (stalled collector)"
grep -Eq "dnstap wrote [0-9]+ messages and dropped [1-9]" "$T/gslbd.log" &&
	ok "exit log line counts the drops" || fail "exit log: $(grep answered "$T/gslbd.log" | tail -1)"
finish
