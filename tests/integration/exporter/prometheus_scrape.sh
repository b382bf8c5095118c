#!/usr/bin/env bash
# A real Prometheus scrapes a real mt-exporter for ~30 s: the fixture node's hw_* metrics
# and the tb_* scalars of a TFEvent file written in real time (by a test-side writer:
# mt-simtrain has no real-time mode yet). PromQL must return the expected series with
# the expected values, and every tb_* sample must carry the step's own wall time.
EXPORTER=$1
FIXTURES=$2
source "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)

free_port() { python3 "$(dirname "$0")/../../lib/free_ports.py" 1; }   # below the ephemeral range

JOB="$WORK/outputs/9001-JAX-llama2-70b"
mkdir -p "$JOB/llama2-70b/tensorboard"
start_exporter exporter --root "$FIXTURES/mi300x" --host node1 --job-dir "$JOB" --nvidia off --interval 2
# Created after the exporter started, as MaxText's file would be (older files are ignored).
EVENTS="$JOB/llama2-70b/tensorboard/events.out.tfevents.$(date +%s).node1.4242.0"

python3 "$HERE/tfevent_writer.py" "$EVENTS" 24 1.0 "$WORK/steps.json" &
PIDS+=($!)
WRITER=$!

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
promtool check config "$WORK/prometheus.yml" >/dev/null || fail "prometheus config"
prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/tsdb" \
  --web.listen-address="127.0.0.1:$PROM_PORT" --storage.tsdb.retention.time=1d > "$WORK/prometheus.log" 2>&1 &
PIDS+=($!)
for i in $(seq 100); do curl -sf "http://127.0.0.1:$PROM_PORT/-/ready" >/dev/null && break; sleep 0.1; done
curl -sf "http://127.0.0.1:$PROM_PORT/-/ready" >/dev/null || fail "prometheus not ready"

wait "$WRITER" || fail "writer failed"
sleep 5  # let the last steps drip out

query() { curl -sf "http://127.0.0.1:$PROM_PORT/api/v1/query" --data-urlencode "query=$1"; }
python3 - "$WORK/steps.json" "$PROM_PORT" <<'PY' || fail "PromQL checks"
import json, sys, urllib.parse, urllib.request
steps = {int(k): v for k, v in json.load(open(sys.argv[1])).items()}
base = f"http://127.0.0.1:{sys.argv[2]}/api/v1/query?query="

def q(expr):
    with urllib.request.urlopen(base + urllib.parse.quote(expr)) as r:
        body = json.load(r)
    assert body["status"] == "success", body
    return body["data"]["result"]

def one(expr):
    res = q(expr)
    assert len(res) == 1, f"{expr}: {res}"
    return float(res[0]["value"][1])

errors = []
def expect(cond, msg):
    if not cond:
        errors.append(msg)

# hw_* of the fixture node, as Prometheus stored them
expect(one('up{job="node_hw"}') == 1, "target not up")
expect(one('hw_procs_running{host="node1"}') == 17, "hw_procs_running")
expect(one('hw_gpu_power_watts{host="node1",gpu="1"}') == 749.3, "hw_gpu_power_watts")
expect(one('hw_tcp_retransmits_total{host="node1"}') == 4242, "hw_tcp_retransmits_total")
expect(one('sum(hw_rdma_tx_retx_pkts_total{host="node1"})') == 1007 + 2007, "hw_rdma_tx_retx_pkts_total")
expect(one('rate(hw_context_switches_total{host="node1"}[20s])') == 0, "rate() over a counter")
expect(one('hw_io_pressure_full_pct{host="node1"}') == 0.75, "hw_io_pressure_full_pct")
expect(len(q('hw_gpu_temperature_celsius{host="node1"}')) == 2, "two GPUs")
expect(one('count_over_time(hw_scrape_duration_seconds{host="node1"}[30s])') >= 20, "scraped every second")

# tb_*: raw samples with their timestamps
def samples(metric):
    res = q(f'{metric}{{host="node1"}}[2m]')
    assert len(res) == 1, f"{metric}: {res}"
    return [(float(t), float(v)) for t, v in res[0]["values"]]

tb_step = samples("tb_step")
loss = dict(samples("tb_learning_loss"))
step_time = dict(samples("tb_perf_step_time_seconds"))
tokens = dict(samples("tb_perf_per_device_tokens_per_sec"))
fill = dict(samples("tb_metrics_plugin_staleness_fill"))
seen = [int(v) for _, v in tb_step]
expect(len(seen) >= 18, f"only {len(seen)} steps stored: {seen}")
expect(seen == sorted(seen) and len(set(seen)) == len(seen), f"steps out of order: {seen}")
expect(max(seen) == max(steps), f"last step {max(seen)} != {max(steps)}")
for ts, v in tb_step:
    s = steps[int(v)]
    expect(abs(ts - round(s["wall_time"], 3)) < 0.0015, f"step {int(v)} stamped {ts}, wall time {s['wall_time']}")
    expect(abs(loss.get(ts, -1) - s["learning/loss"]) < 1e-5, f"loss at step {int(v)}")
    expect(abs(step_time.get(ts, -1) - s["perf/step_time_seconds"]) < 1e-5, f"step time at step {int(v)}")
    expect(abs(tokens.get(ts, -1) - s["perf/per_device_tokens_per_sec"]) < 1e-3, f"tokens at step {int(v)}")
    expect(fill.get(ts) == 0, f"staleness_fill at step {int(v)}")
# the steady-state TGS query of the playbooks works
expect(one('avg_over_time(tb_perf_per_device_tokens_per_sec{host="node1"}[2m])') > 3000, "avg TGS")
if errors:
    print("\n".join(errors))
    sys.exit(1)
print(f"prometheus: hw_* ok, {len(seen)} of {len(steps)} steps stored with exact values and wall times")
PY
grep -q "following TFEvent file $EVENTS" "$WORK/exporter.log" || fail "exporter did not follow the event file"
echo "prometheus_scrape: ok"
