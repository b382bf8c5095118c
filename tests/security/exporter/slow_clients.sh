#!/usr/bin/env bash
# Finding 9 (issue #14): mt-exporter stopped answering scrapes while 4 idle TCP
# connections were open (civetweb held a worker thread per connection). Now 8 idle
# connections plus 8 connections dribbling a request one byte a second, and then a flood
# of 300 idle connections (more than any thread pool), must not keep a scrape from
# answering within a few seconds; the server itself cuts the dribblers off (408) after
# its request deadline; and the exporter still answers afterwards (liveness).
EXPORTER=$1
FIXTURES=$2
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/../../integration/exporter/lib.sh"

start_exporter slow --root "$FIXTURES/minimal" --host node1

live_scrape() {  # a scrape must answer 200 with native data within 5 s
  local out
  out=$(curl -sS --max-time 5 "http://127.0.0.1:$EXPORTER_PORT/metrics") || fail "$1: scrape did not answer within 5 s"
  grep -q '^mt_exporter_build_info{' <<<"$out" || fail "$1: scrape answered without the exporter's metrics"
}

live_scrape "before"
python3 "$HERE/slow_clients.py" "$EXPORTER_PORT" "$WORK/ready" "$WORK/report.json" \
  --idle 8 --dribble 8 --duration 40 &
CLIENTS=$!
PIDS+=($CLIENTS)
for i in $(seq 100); do [ -s "$WORK/ready" ] && break; sleep 0.1; done
[ -s "$WORK/ready" ] || fail "slow clients did not connect"
for i in 1 2 3; do live_scrape "with 8 idle + 8 dribbling connections ($i)"; sleep 0.5; done

# The server enforces its request deadline on the dribblers (about 5 s; generous bound).
wait "$CLIENTS" || fail "slow client helper failed"
python3 - "$WORK/report.json" <<'PY' || fail "dribbling connections were not cut off by the server"
import json, sys
report = json.load(open(sys.argv[1]))
bad = [d for d in report if not (0 <= d["closed_after"] <= 30)]
if bad:
    sys.exit(f"still open after the deadline: {bad[:2]}")
if not any(d["answer"].startswith("HTTP/1.1 408") for d in report):
    sys.exit(f"no 408 answer: {report[:2]}")
print("dribblers closed after", sorted(round(d["closed_after"], 1) for d in report), "s")
PY
# A flood of 300 idle connections, more than any worker pool: the newest connection (the
# scrape) is still served; the oldest idle ones are evicted.
python3 - "$EXPORTER_PORT" "$WORK/flood-ready" <<'PY' &
import socket, sys, time
conns = [socket.create_connection(("127.0.0.1", int(sys.argv[1]))) for _ in range(300)]
open(sys.argv[2], "w").write("ready\n")
time.sleep(15)
PY
FLOOD=$!
PIDS+=($FLOOD)
for i in $(seq 100); do [ -s "$WORK/flood-ready" ] && break; sleep 0.1; done
[ -s "$WORK/flood-ready" ] || fail "flood did not connect"
for i in 1 2 3; do live_scrape "with 300 more idle connections ($i)"; sleep 0.5; done

live_scrape "after"
curl -sf --max-time 5 "http://127.0.0.1:$EXPORTER_PORT/metrics" > "$WORK/after.prom" || fail "final scrape"
grep -Eq '^mt_exporter_http_connections_closed_total\{reason="request_timeout"\} [1-9]' "$WORK/after.prom" ||
  fail "request timeouts not counted"
grep -Eq '^mt_exporter_http_connections_closed_total\{reason="evicted"\} [1-9]' "$WORK/after.prom" ||
  fail "evictions not counted"
kill -0 "${PIDS[0]}" || fail "exporter died"
echo "slow_clients: ok"
