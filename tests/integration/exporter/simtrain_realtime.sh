#!/usr/bin/env bash
# mt-exporter against mt-simtrain's real-time mode (an independent TFEvent encoder and
# fake procfs/sysfs writer from launcher/): a real Prometheus scrapes the exporter while
# the simulated rank 0 trains (healthy llama3.1-405b FP8 scenario, 8 MI355X GPUs).
# PromQL must show the node's 8 GPUs and NICs from the fake root, and tb_* samples whose
# values equal the `completed step:` lines the simulator printed for the same steps.
EXPORTER=$1
SIMTRAIN=$2
SCENARIO=$3
source "$(dirname "$0")/lib.sh"

free_port() { python3 "$(dirname "$0")/../../lib/free_ports.py" 1; }   # below the ephemeral range

ROOT="$WORK/root"; JOB="$WORK/job"
mkdir -p "$ROOT" "$JOB"
start_exporter exporter --root "$ROOT" --host node1 --job-dir "$JOB" --nvidia off --interval 2

PROM_PORT=$(free_port)
cat > "$WORK/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  scrape_timeout: 900ms
scrape_configs:
  - job_name: node_hw
    static_configs:
      - targets: ['127.0.0.1:$EXPORTER_PORT']
YML
prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/tsdb" \
  --web.listen-address="127.0.0.1:$PROM_PORT" > "$WORK/prometheus.log" 2>&1 &
PIDS+=($!)
for i in $(seq 100); do curl -sf "http://127.0.0.1:$PROM_PORT/-/ready" >/dev/null && break; sleep 0.1; done

# Stops itself after 25 s (exit 143, as a cancelled job would).
"$SIMTRAIN" --scenario "$SCENARIO" --realtime --step-seconds 0.5 --startup-seconds 1 --max-seconds 25 \
  --rank 0 --out "$JOB" --fake-root "$ROOT" --event-host node1 > "$WORK/train.log" 2> "$WORK/simtrain.err" &
PIDS+=($!)
rc=0; wait $! || rc=$?
[ $rc = 0 ] || [ $rc = 143 ] || { cat "$WORK/simtrain.err" >&2; fail "mt-simtrain exited $rc"; }
grep -q 'completed step: 5,' "$WORK/train.log" || fail "mt-simtrain trained fewer than 6 steps"
sleep 11  # the backlog (up to 8 steps, one per 1 s scrape) drips out

python3 - "$WORK/train.log" "$PROM_PORT" <<'PY' || fail "PromQL checks"
import json, re, sys, urllib.parse, urllib.request
logged = {}
for line in open(sys.argv[1]):
    m = re.search(r"completed step: (\d+), seconds: ([0-9.]+),.*Tokens/s/device: ([0-9.]+),.*loss: ([0-9.]+)", line)
    if m:
        logged[int(m.group(1))] = tuple(float(x) for x in m.group(2, 3, 4))
base = f"http://127.0.0.1:{sys.argv[2]}/api/v1/query?query="
def q(expr):
    with urllib.request.urlopen(base + urllib.parse.quote(expr)) as r:
        return json.load(r)["data"]["result"]
errors = []
def expect(cond, msg):
    if not cond:
        errors.append(msg)
expect(len(q('hw_gpu_power_watts{host="node1"} > 100')) == 8, "8 busy GPUs")
expect(len(q('hw_gpu_temperature_celsius{host="node1"}')) == 8, "8 GPU temperatures")
expect(len(q('hw_rdma_port_state{host="node1"} == 1')) >= 1, "active RDMA ports")
expect(len(q('hw_procs_running{host="node1"}')) == 1, "hw_procs_running")
res = q('tb_step{host="node1"}[2m]')
steps = [(float(t), int(float(v))) for t, v in res[0]["values"]] if res else []
loss = {float(t): float(v) for t, v in q('tb_learning_loss{host="node1"}[2m]')[0]["values"]} if steps else {}
tgs = {float(t): float(v) for t, v in q('tb_perf_per_device_tokens_per_sec{host="node1"}[2m]')[0]["values"]} if steps else {}
sec = {float(t): float(v) for t, v in q('tb_perf_step_time_seconds{host="node1"}[2m]')[0]["values"]} if steps else {}
nums = [s for _, s in steps]
expect(len(nums) >= 6, f"only {len(nums)} steps stored")
expect(nums == sorted(set(nums)), f"steps not strictly increasing: {nums}")
expect(nums and max(nums) >= max(logged) - 1, f"last stored step {max(nums) if nums else None} vs logged {max(logged)}")
for ts, s in steps:
    if s not in logged:
        errors.append(f"step {s} stored but never logged")
        continue
    want_sec, want_tgs, want_loss = logged[s]
    expect(abs(sec[ts] - want_sec) < 0.002, f"step {s}: seconds {sec[ts]} vs log {want_sec}")
    expect(abs(tgs[ts] - want_tgs) < 0.01, f"step {s}: TGS {tgs[ts]} vs log {want_tgs}")
    expect(abs(loss[ts] - want_loss) < 0.002, f"step {s}: loss {loss[ts]} vs log {want_loss}")
if errors:
    print("\n".join(errors))
    sys.exit(1)
print(f"simtrain: 8 GPUs, NICs; {len(nums)} of {len(logged)} steps stored, values equal to the log")
PY
echo "simtrain_realtime: ok"
