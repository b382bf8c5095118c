#!/usr/bin/env bash
# The README's main job end to end: `mt demo init` builds the case-study workspace, then
# `mt demo` asks every question through a real stdio MCP session with `mt serve`. Checks
# the conclusions the seed's case studies reach, with their numbers.
#   demo.sh MT_BIN
set -euo pipefail
mt=$(realpath "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$mt" demo init "$work/ws" 2>"$work/init.log" || { cat "$work/init.log"; exit 1; }
"$mt" demo --workspace "$work/ws" >"$work/demo.out" 2>&1 || { cat "$work/demo.out"; echo "FAIL: mt demo exited non-zero"; exit 1; }
failed=0 passed=0
expect() {   # description, fixed string
  if grep -qF -- "$2" "$work/demo.out"; then passed=$((passed + 1)); echo "ok   $1"; else echo "FAIL $1: missing '$2'"; failed=$((failed + 1)); fi
}
expect "session over stdio" "MCP session over stdio with mt"
expect "8104 completed" "8104: completed (status completed), last step 59"
expect "7877 hang after step 3841" "7877: hang (status hang), last step 3841"
expect "7877 busy-wait at ~300 W on all GPUs" "Collective busy-wait hang (RCCL): 99.95 % utilization at ~300"
expect "7877 on 192 of 192 GPUs" "on 192 of 192 GPUs"
expect "7877 power fell" "Power fell at 2026-02-11T17:16"
expect "8308 degradation" "8308: running (status running), last step 420; also tgs_degradation"
expect "8308 four RDMA hosts by severity" "most severe first: chi2835, chi2882, chi2834, chi2822"
expect "8043 false positive, stop time" "8043: heartbeat_false_positive (status failed), last step 71, heartbeats stopped 2026-02-24T19:06:00Z"
expect "8043 confirmed by power" "Confirmed false positive: the accused hosts and their neighbours drew"
expect "7938 decline" "7938: completed (status completed), last step 799; also tgs_degradation"
expect "8105 OOM" "8105: oom (status failed)"
[ $failed = 0 ] || { echo "--- demo output:"; cat "$work/demo.out"; }
echo "demo: $passed passed, $failed failed"
[ $failed = 0 ]
