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
# The conclusions, one per case study, each built from the tools' structured answers.
# Every runbook under skills/ is served, and nothing else: the list comes from the tree.
skills_dir="$(cd "$(dirname "$0")/../../.." && pwd)/skills"
expected_skills=$(find "$skills_dir" -mindepth 2 -maxdepth 2 -name SKILL.md -printf '%h\n' | xargs -n1 basename | LC_ALL=C sort | tr '\n' ' ' | sed 's/ $//')
[ -n "$expected_skills" ] || { echo "FAIL no skills found under $skills_dir"; exit 1; }
expect "skills served as prompts" "skills (prompts): $expected_skills"
expect "case 0: 8104 steady TGS and MFU" "  - 8104: completed, steady TGS 1,020 tokens/s/device over steps 5–54, 16.07 s/step, MFU 25.7 % (MI355X fp8 peak 5,000 TFLOP/s); report /reports/8104-"
expect "case 1: 8308 phases, hosts, rerun" "  - 8308: TGS 3,293 → 2,620 (−20.4 %) at step 97 → 2,520 (−23.2 %) at step 252; 4 hosts with RDMA retransmits: chi2835, chi2882, chi2834, chi2822; rerun 8309 without them: TGS 3,287 (+30.5 % over 2,520)"
expect "case 2: 8043 false positive" "  - 8043: heartbeat false positive at step 71: accused tasks 8 (chi2853) and 10 (chi2875) logged their own death (2 of 2); heartbeats stopped 19:06:00 = crash 19:21:00 − 900 s; accused hosts and neighbours drew ~867 W until the crash (confirmed alive)"
expect "case 3: B vs A restore leak" "  - B vs A (8102 vs 8101): TGS 3,261 vs 3,295 (−1.0 %); top difference hw_procs_running 18 → 35 per host: +17 runnable threads per host on 24/24 hosts after the checkpoint restore at step 200; RCCL init waves 3 vs 5"
expect "case 4: 7938 training-level cause" "tb_learning_moe_lb_loss changes at step 450; every system family is clean, so the cause is in the training itself"
expect "7877 busy-wait hang conclusion" "  - 7877: collective busy-wait hang at step 3,841 (GPU power ~300 W, was 900 W, at 99.95 % utilisation on 192/192 GPUs; power fell 17:16:03)"
expect "8105 OOM conclusion" "  - 8105: out of device memory in stage Training before the first training step: Out of memory while trying to allocate 21.47GiB."
if grep -q "no conclusion" "$work/demo.out"; then echo "FAIL a case study reached no conclusion"; failed=$((failed + 1)); fi
[ $failed = 0 ] || { echo "--- demo output:"; cat "$work/demo.out"; }
echo "demo: $passed passed, $failed failed"
[ $failed = 0 ]
