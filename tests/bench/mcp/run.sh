#!/usr/bin/env bash
# Protocol benchmarks: mt's core (mt-conformance-server, trivial tool test_simple_text)
# side by side with the official TypeScript SDK server running the same tool, in the same
# run. Prints a markdown table of the figures and the ratios.
#   tests/bench/mcp/run.sh [BUILD_DIR]        (after scripts/build; needs wrk)
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
build=${1:-$root/build}
node_dir=$root/tests/node
export PATH="$node_dir/node_modules/.bin:$PATH"
mt_server=$build/tests/conformance/mt-conformance-server
bench=$build/tests/bench/mcp/stdio_bench
calls=${MT_BENCH_CALLS:-50000}
secs=${MT_BENCH_SECONDS:-10}
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
field() { python3 -c "import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])" "$1" "$2"; }
ratio() { python3 -c "import sys; a,b=float(sys.argv[1]),float(sys.argv[2]); print(f'{a/b:.1f}x')" "$1" "$2"; }

# Median of each figure over alternating runs (the machine is shared and noisy).
median_json() { python3 -c "
import json, statistics, sys
runs = [json.loads(l) for l in sys.stdin if l.strip()]
print(json.dumps({k: statistics.median(r[k] for r in runs) for k in runs[0]}))"; }
runs=${MT_BENCH_RUNS:-3}
echo "## stdio ($calls calls per run, median of $runs alternating runs, raw JSON-lines driver)"
mt_runs= sdk_runs=
for _ in $(seq "$runs"); do
  mt_runs+=$("$bench" "$calls" test_simple_text -- "$mt_server" --stdio)$'\n'
  sdk_runs+=$("$bench" "$calls" test_simple_text -- node "$node_dir/bench/sdk_server.mjs" stdio 2>/dev/null)$'\n'
done
mt_json=$(printf %s "$mt_runs" | median_json)
sdk_json=$(printf %s "$sdk_runs" | median_json)
echo
echo "| figure | mt | TS SDK | ratio |"
echo "|---|---|---|---|"
for f in p50_us p99_us cpu_us_per_call_sequential cpu_us_per_call_pipelined; do
  echo "| $f | $(field "$mt_json" $f) | $(field "$sdk_json" $f) | $(ratio "$(field "$sdk_json" $f)" "$(field "$mt_json" $f)") less |"
done
echo "| pipelined_calls_per_s | $(field "$mt_json" pipelined_calls_per_s) | $(field "$sdk_json" pipelined_calls_per_s) | $(ratio "$(field "$mt_json" pipelined_calls_per_s)" "$(field "$sdk_json" pipelined_calls_per_s)") more |"
echo "| idle_rss_kib | $(field "$mt_json" idle_rss_kib) | $(field "$sdk_json" idle_rss_kib) | $(ratio "$(field "$sdk_json" idle_rss_kib)" "$(field "$mt_json" idle_rss_kib)") less |"

# Idle RSS of the product server itself (stdio, after the initialize handshake).
mt_bin=$build/tools/mt
if [ -x "$mt_bin" ]; then
  ws=$(mktemp -d)
  serve_json=$("$bench" 200 list_jobs -- "$mt_bin" serve --workspace "$ws")
  rm -rf "$ws"
  echo
  echo "mt serve idle RSS after initialize: $(field "$serve_json" idle_rss_kib) KiB (TS SDK server: $(field "$sdk_json" idle_rss_kib) KiB)"
fi

start_http() {   # name, command… → sets url
  local log=$(mktemp)
  "$@" 2>"$log" &
  pids+=($!)
  for _ in $(seq 100); do grep -q "listening" "$log" && break; sleep 0.05; done
}
session() {   # url → session id
  curl -s -D - -o /dev/null "$1" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    -d '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"wrk","version":"1"}}}' \
    | tr -d '\r' | sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: //p'
}
wrk_rate() {   # url session conns → "req/s bad"
  local out
  local threads=2; [ "$3" -lt 2 ] && threads=1
  out=$(MCP_SESSION=$2 wrk -t$threads -c"$3" -d"${secs}s" -s "$root/tests/bench/mcp/tools_call.lua" "$1")
  local rps=$(echo "$out" | sed -n 's/^Requests\/sec: *//p')
  local bad=$(echo "$out" | sed -n 's/^CHECKED .* bad=//p')
  local non2xx=$(echo "$out" | sed -n 's/.*Non-2xx or 3xx responses: *//p')
  echo "$rps ${bad:-?} ${non2xx:-0}"
}

mt_port=18901 sdk_port=18902
start_http "$mt_server" --listen 127.0.0.1:$mt_port
start_http node "$node_dir/bench/sdk_server.mjs" http $sdk_port
mt_url=http://127.0.0.1:$mt_port/mcp sdk_url=http://127.0.0.1:$sdk_port/mcp
mt_sid=$(session $mt_url) sdk_sid=$(session $sdk_url)
echo
echo "## Streamable HTTP (wrk, ${secs}s per point, every response checked; legacy session; SDK replies SSE, mt replies JSON for this quick tool)"
echo
echo "| connections | mt calls/s | TS SDK calls/s | ratio | bad responses (mt / SDK) |"
echo "|---|---|---|---|---|"
for c in 1 16 64; do
  read -r mt_rps mt_bad mt_non <<<"$(wrk_rate $mt_url "$mt_sid" $c)"
  read -r sdk_rps sdk_bad sdk_non <<<"$(wrk_rate $sdk_url "$sdk_sid" $c)"
  echo "| $c | $mt_rps | $sdk_rps | $(ratio "$mt_rps" "$sdk_rps") | $mt_bad / $sdk_bad |"
done
