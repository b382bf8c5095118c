#!/usr/bin/env bash
# Integration test: mt-simtrain in real time as one srun task (--rank), the way the launcher
# runs it: unlabelled training output on stdout, exit codes of a real task, SIGTERM -> 143.
# Usage: realtime_rank_test.sh MT_SIMTRAIN
set -euo pipefail
SIM=${1:?mt-simtrain binary}
W=$(mktemp -d /tmp/mt-sim-rt.XXXXXX)
BG=
cleanup() { local rc=$?; [ -n "$BG" ] && kill "$BG" 2>/dev/null; rm -rf "$W"; exit $rc; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

scenario() {  # scenario FILE EXTRA_FAULT_YAML
  cat > "$1" <<YML
job:
  id: "5002"
  model: llama2-70b
  hosts: "node[001-003]"
  gpus_per_node: 2
  start: "2026-01-01T00:00:00Z"
training:
  steps: 20
  per_device_batch_size: 1
  max_target_length: 4096
  tgs: 400
hardware:
  nics: 1
$2
YML
}

scenario "$W/ok.yaml" ""
"$SIM" --scenario "$W/ok.yaml" --realtime --rank 1 --step-seconds 0.02 --startup-seconds 0.1 --out "$W/out1" > "$W/ok.out" || fail "healthy run exited $?"
grep -qx "completed step: 19, .*" "$W/ok.out" || fail "no unlabelled step 19 line"
grep -q "^1: " "$W/ok.out" && fail "rank mode must not print srun labels"
grep -q "JOB_ID=\|JOB SUMMARY\|NODE_EXIT\|== Training" "$W/ok.out" && fail "rank mode printed batch-script lines"
[ "$(grep -c 'completed step:' "$W/ok.out")" = 20 ] || fail "expected 20 step lines"
[ -z "$(find "$W/out1" -name 'events.out.tfevents.*' 2>/dev/null)" ] || fail "only rank 0 writes the event file"

scenario "$W/oom.yaml" "faults:
  - kind: oom
    step: 0"
set +e
"$SIM" --scenario "$W/oom.yaml" --realtime --rank 0 --step-seconds 0.02 --startup-seconds 0.1 > "$W/oom.out"
rc=$?
set -e
[ $rc = 1 ] || fail "OOM run should exit 1, got $rc"
grep -q "RESOURCE_EXHAUSTED: Out of memory while trying to allocate" "$W/oom.out" || fail "no OOM signature"

scenario "$W/hang.yaml" "faults:
  - kind: hang
    step: 3"
SLURM_PROCID=0 "$SIM" --scenario "$W/hang.yaml" --realtime --rank auto --step-seconds 0.02 --startup-seconds 0.1 \
  --out "$W/out3" --fake-root "$W/root" > "$W/hang.out" &
BG=$!
sleep 1.5
kill -0 "$BG" || fail "a hanging run must keep running"
kill -TERM "$BG"
set +e
wait "$BG"
rc=$?
set -e
BG=
[ $rc = 143 ] || fail "SIGTERM should end the run with 143, got $rc"
grep -q "completed step: 3," "$W/hang.out" || fail "no step 3"
grep -q "completed step: 4," "$W/hang.out" && fail "steps continued after the hang"
ev=$(find "$W/out3" -name 'events.out.tfevents.*.node001')
[ -n "$ev" ] || fail "rank 0 event file missing"
[ -s "$ev" ] || fail "event file empty"
w=$(cat "$W/root/sys/class/hwmon/hwmon2/power1_input")
python3 -c "import sys; w=$w/1e6; sys.exit(0 if 280 < w < 320 else 1)" || fail "busy-wait power should be ~300 W, got $w uW"
env -u SLURM_PROCID -u NODE_RANK "$SIM" --scenario "$W/hang.yaml" --realtime --rank auto > /dev/null 2>&1 && fail "--rank auto without SLURM_PROCID must fail"
echo PASS
