#!/usr/bin/env bash
# The real promtool must accept a full mt-exporter scrape: of the fixture node (every
# collector populated) and of this machine. The one family promtool's linter remarks on
# is hw_io_pressure_full_total_us, a name fixed by the compatibility contract (a counter
# without the _total suffix, with an abbreviated unit); the test pins exactly those two
# remarks and requires a clean pass for everything else.
EXPORTER=$1
FIXTURES=$2
source "$(dirname "$0")/lib.sh"

check() {
  local label=$1 file=$2 rc=0 out
  out=$(promtool check metrics < "$file" 2>&1) || rc=$?
  [ $rc -ne 1 ] || fail "$label: promtool could not parse the scrape: $out"
  local expected='hw_io_pressure_full_total_us counter metrics should have "_total" suffix
hw_io_pressure_full_total_us metric names should not contain abbreviated units'
  if grep -q '^hw_io_pressure_full_total_us' "$file"; then
    [ "$out" = "$expected" ] || fail "$label: unexpected promtool remarks: $out"
  else
    [ -z "$out" ] && [ $rc -eq 0 ] || fail "$label: promtool: rc=$rc $out"
  fi
  # Without the contract-fixed family the scrape is lint-clean.
  grep -v 'hw_io_pressure_full_total_us' "$file" > "$file.clean"
  out=$(promtool check metrics < "$file.clean" 2>&1) || fail "$label: promtool rejects the rest: $out"
  echo "$label: promtool ok ($(grep -vc '^#' "$file") samples)"
}

start_exporter fixture --root "$FIXTURES/mi300x" --host node1
scrape > "$WORK/fixture.prom"
grep -q '^hw_gpu_power_watts{gpu="1",host="node1"} 749.3$' "$WORK/fixture.prom" || fail "fixture scrape lacks GPU power"
grep -q '^hw_rdma_tx_retx_pkts_total{device="ionic_0",port="1",host="node1"} 1007$' "$WORK/fixture.prom" || fail "fixture scrape lacks ionic counters"
check fixture "$WORK/fixture.prom"

# An NVIDIA node: the fake nvidia-smi replays a recorded H100 reading.
start_exporter nvidia --root "$FIXTURES/minimal" --host gpu7 --nvidia smi --nvidia-smi "$FIXTURES/nvidia/nvidia-smi" --interval 1
for i in $(seq 50); do
  scrape > "$WORK/nvidia.prom"
  grep -q '^hw_gpu_power_watts{gpu="0",host="gpu7"} 631.95$' "$WORK/nvidia.prom" && break
  sleep 0.1
done
grep -q '^hw_gpu_power_watts{gpu="0",host="gpu7"} 631.95$' "$WORK/nvidia.prom" || fail "nvidia scrape lacks GPU power"
grep -q '^hw_gpu_vram_total_bytes{gpu="1",host="gpu7"} 85520809984$' "$WORK/nvidia.prom" || fail "nvidia scrape lacks VRAM"
check nvidia "$WORK/nvidia.prom"

start_exporter machine
scrape > "$WORK/machine.prom"
grep -q '^hw_procs_running{' "$WORK/machine.prom" || fail "machine scrape lacks hw_procs_running"
check machine "$WORK/machine.prom"
