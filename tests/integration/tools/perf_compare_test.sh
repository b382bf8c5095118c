#!/usr/bin/env bash
# Integration test of perf_analysis / compare_jobs (`mt perf`, `mt compare`) and of the HTML
# report: mt-simtrain generates the case-study jobs (real promtool blocks), the same two
# without a TSDB, and two runs of job A's scenario that differ only by their random seed;
# perf_compare_checks.py asserts the case studies' conclusions with numbers; then
# `mt serve --http` serves mt_report/perf.html under /reports/ and headless Chromium loads
# it: it renders, its charts have data points, and every request it made went to mt serve.
# Usage: perf_compare_test.sh MT MT_SIMTRAIN PYTHON CHECKS_PY SCENARIO_DIR
# Env: MT_PERF_TEST_PORT (first of 20 loopback ports for Prometheus, default 19820).
set -euo pipefail
. "$(dirname "$0")/stop_leftover_prometheus.sh"
mt=$1 sim=$2 py=$3 checks=$4 scenarios=$5
work=$(mktemp -d /tmp/mt-perf-compare-it.XXXXXX)
export TMPDIR="$work/tmp"
mkdir -p "$TMPDIR"
base=${MT_PERF_TEST_PORT:-19820}
export MT_TSDB_PORTS="$base-$((base + 19))"
serve_pid=""
cleanup() {
  local rc=$?
  if [ -n "$serve_pid" ]; then
    kill "$serve_pid" 2>/dev/null || true
    wait "$serve_pid" 2>/dev/null || true
  fi
  stop_leftover_prometheus "$work" || rc=1
  rm -rf "$work"
  exit $rc
}
trap cleanup EXIT

start=$(date +%s)
"$sim" --demo-init "$work/ws" --only 8101,8102,8104,8308,8309 > "$work/init.log" 2>&1 || { cat "$work/init.log"; exit 1; }
"$sim" --demo-init "$work/notsdb" --only 8101,8102 --no-tsdb > "$work/init2.log" 2>&1 || { cat "$work/init2.log"; exit 1; }
# Twins: job A's scenario twice, other ids and seeds (same config, different noise).
mkdir -p "$work/twins"
for id in 9201 9202; do
  sed -e "s/id: \"8101\"/id: \"$id\"/" -e "s/seed: 8101/seed: $id/" "$scenarios/8101-job-a-fresh.yaml" > "$work/twin-$id.yaml"
  grep -q "seed: $id" "$work/twin-$id.yaml"
  "$sim" --scenario "$work/twin-$id.yaml" --workspace "$work/twins" > "$work/twin-$id.log" 2>&1 || { cat "$work/twin-$id.log"; exit 1; }
done
# The same config on 20 of those 24 hosts: different node counts.
sed -e 's/id: "8101"/id: "9203"/' -e 's/seed: 8101/seed: 9203/' -e 's/^\(  hosts: \).*/\1"chi[2818-2821,2823-2833,2836-2837,2880-2881,2883]"/' \
  "$scenarios/8101-job-a-fresh.yaml" > "$work/twin-9203.yaml"
grep -q '2880-2881,2883]' "$work/twin-9203.yaml"
"$sim" --scenario "$work/twin-9203.yaml" --workspace "$work/twins" > "$work/twin-9203.log" 2>&1 || { cat "$work/twin-9203.log"; exit 1; }
# 8104 again with GPU 3 of node 0 slowed 30 % in its profiled steps: a trace to compare.
sed -e 's/id: "8104"/id: "9204"/' -e 's/seed: 8104/seed: 9204/' -e 's/^  exposed_comm_share: 0.09$/  exposed_comm_share: 0.09\n  slow_gpu: 3\n  slow_pct: 30/' \
  "$scenarios/8104-llama405b-fp8-healthy.yaml" > "$work/slow-9204.yaml"
grep -q "slow_gpu: 3" "$work/slow-9204.yaml"
"$sim" --scenario "$work/slow-9204.yaml" --workspace "$work/ws" --no-tsdb > "$work/slow-9204.log" 2>&1 || { cat "$work/slow-9204.log"; exit 1; }
echo "workspaces generated in $(( $(date +%s) - start )) s"

"$py" "$checks" "$mt" "$work/ws" "$work/notsdb" "$work/twins"

# ---- the HTML report over HTTP, in headless Chromium ----------------------------------------
port=$("$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$mt" serve --http "127.0.0.1:$port" --workspace "$work/ws" > "$work/serve.out" 2> "$work/serve.err" &
serve_pid=$!
for _ in $(seq 1 100); do
  grep -q "listening" "$work/serve.err" 2>/dev/null && break
  sleep 0.1
done
url="http://127.0.0.1:$port/reports/8104/perf.html"
code=$(curl -s -o "$work/page.html" -w '%{http_code}' "$url")
[ "$code" = 200 ] || { echo "FAIL GET $url -> $code"; cat "$work/serve.err"; exit 1; }
echo "ok   GET /reports/8104/perf.html -> 200"
for bad in "/reports/8104/..%2F..%2F8104-JAX-llama3.1-405b-quantization_fp8-steps_60.log" "/reports/..%2F..%2Fetc/passwd" \
           "/reports/8104/log" "/reports/8104/.perf.html" "/reports/nope/perf.html"; do
  code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port$bad")
  case "$code" in 400|404) echo "ok   GET $bad -> $code" ;; *) echo "FAIL GET $bad -> $code"; exit 1 ;; esac
done
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Host: evil.example" "$url")
[ "$code" = 403 ] || { echo "FAIL DNS-rebinding Host accepted ($code)"; exit 1; }
echo "ok   foreign Host refused (403)"

chromium --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking --disable-component-update \
  --disable-sync --disable-extensions --user-data-dir="$work/chromium" --log-net-log="$work/net.json" --dump-dom "$url" \
  > "$work/dom.html" 2> "$work/chromium.err" || { cat "$work/chromium.err"; exit 1; }
"$py" - "$work/dom.html" "$work/net.json" "$port" <<'PY'
import json, re, sys
dom, netlog, port = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3]
fail = []
def check(c, what):
    print(("ok   " if c else "FAIL ") + what)
    if not c: fail.append(what)
check("<h1>Performance of job 8104" in dom, "chromium rendered the report")
for chart in ("tgs-chart", "steptime-chart", "loss-chart"):
    m = re.search(r'<svg id="%s"[^>]*data-points="(\d+)"' % chart, dom)
    check(m is not None and int(m.group(1)) >= 50, f"{chart} has data points ({m.group(1) if m else None})")
poly = re.findall(r'<polyline class="series" points="([^"]+)"', dom)
check(len(poly) == 2 and all(len(p.split()) >= 50 for p in poly), "TGS and loss polylines drawn from ≥ 50 points")
bars = [float(h) for h in re.findall(r'<rect class="bar"[^>]*height="([\d.]+)"', dom)]
check(len(bars) == 40 and max(bars) > 0, "histogram bars with height")
segs = re.findall(r'<rect class="seg" data-part="(\w+)"[^>]*width="([\d.]+)"', dom)
check(sum(1 for k, w in segs if k == "compute_pct" and float(w) > 100) == 8 and sum(1 for k, _ in segs if k == "exposed_comm_pct") == 8,
      f"trace: a stacked step-time bar for each of the 8 GPUs ({len(segs)} segments)")
kern = re.search(r'<table id="trace-kernels">(.*?)</table>', dom, re.S)
check(kern is not None and kern.group(1).count("<tr>") == 6 and "_attn_bwd" in kern.group(1), "trace: the kernel table lists 5 kernels")
coll = re.search(r'<table id="trace-collectives">(.*?)</table>', dom, re.S)
check(coll is not None and "AllGather" in coll.group(1) and "ReduceScatter" in coll.group(1), "trace: the collective table")
# What the page loaded: every request made for a document of the page's site (its network
# isolation key), which excludes Chromium's own background traffic (updates, time, accounts:
# keys "null null" or google.com). Only mt serve, and nothing but the report (and favicon).
log = json.load(open(netlog))
names = {v: k for k, v in log["constants"]["logEventTypes"].items()}
page = []
for e in log["events"]:
    p = e.get("params", {})
    if names.get(e["type"]) == "URL_REQUEST_START_JOB" and p.get("network_isolation_key", "").startswith("http://127.0.0.1 "):
        page.append(p["url"])
base = f"http://127.0.0.1:{port}/"
check(base + "reports/8104/perf.html" in page, f"the report was loaded ({page})")
extra = [u for u in page if u not in (base + "reports/8104/perf.html", base + "favicon.ico")]
check(not extra, f"the page fetched nothing else ({extra})")
raw = open(sys.argv[1].replace("dom.html", "page.html")).read()
check(not re.search(r'\b(src|href)\s*=|url\(|@import', raw), "the served page references no external resource")
sys.exit(1 if fail else 0)
PY

# ---- with bearer tokens: /reports needs the same token as /mcp ----------------------------------
kill "$serve_pid"; wait "$serve_pid" 2>/dev/null || true; serve_pid=""
secret=perf-report-secret
printf 'workspace: %s\ntokens:\n  - name: t\n    sha256: %s\n    role: agent\n' "$work/ws" \
  "$(printf %s "$secret" | sha256sum | cut -d' ' -f1)" > "$work/mt.yaml"
"$mt" serve --http "127.0.0.1:$port" --config "$work/mt.yaml" > "$work/serve2.out" 2> "$work/serve2.err" &
serve_pid=$!
for _ in $(seq 1 100); do
  grep -q "listening" "$work/serve2.err" 2>/dev/null && break
  sleep 0.1
done
code=$(curl -s -o /dev/null -w '%{http_code}' "$url")
[ "$code" = 401 ] || { echo "FAIL no token -> $code"; cat "$work/serve2.err"; exit 1; }
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer wrong" "$url")
[ "$code" = 401 ] || { echo "FAIL wrong token -> $code"; exit 1; }
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $secret" "$url")
[ "$code" = 200 ] || { echo "FAIL right token -> $code"; exit 1; }
echo "ok   with tokens: 401 without / with a wrong token, 200 with the right one"
echo "PASS tools-perf-compare"
