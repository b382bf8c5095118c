#!/usr/bin/env python3
"""Benchmark of query_tsdb on the 7877 case study (24 hosts x 8 GPUs, 35 h, 4,598 series,
10.2 M samples): the full `correlate` sweep and the `hang` playbook

  * cold: `mt query` as a fresh process (copies the blocks, starts Prometheus, answers, stops it);
  * first and warm calls inside one `mt serve` stdio session (Prometheus already running);

and, for each answer, its size in tokens (bytes / 4) next to the raw Prometheus JSON the
same queries returned (the tool's `_meta["mt/tsdb"].raw_bytes`), plus the raw JSON of one
plain `query_range` of hw_gpu_power_watts over the whole job at a 60 s step (what an agent
without the tool would read for a single GPU metric).

Usage: bench_query_tsdb.py MT [--workspace DIR | --simtrain MT_SIMTRAIN] [--repeat N]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ap = argparse.ArgumentParser()
ap.add_argument("mt")
ap.add_argument("--workspace")
ap.add_argument("--simtrain")
ap.add_argument("--repeat", type=int, default=5)
a = ap.parse_args()

tmp = tempfile.mkdtemp(prefix="mt-bench-tsdb-")
ws = a.workspace
if not ws:
    if not a.simtrain:
        sys.exit("give --workspace DIR (with job 7877) or --simtrain PATH to generate it")
    ws = os.path.join(tmp, "ws")
    t0 = time.time()
    subprocess.run([a.simtrain, "--demo-init", ws, "--only", "7877"], check=True, capture_output=True)
    print(f"generated 7877 in {time.time() - t0:.1f} s", file=sys.stderr)

HANG_TIME = "2026-02-11T17:30:00Z"
CALLS = {
    "correlate": {"job": "7877", "mode": "correlate", "time": HANG_TIME},
    "hang": {"job": "7877", "mode": "playbook", "playbook": "hang"},
}
CLI = {
    "correlate": ["7877", "--correlate", HANG_TIME],
    "hang": ["7877", "--playbook", "hang"],
}


def cold(name):
    times = []
    for _ in range(max(3, a.repeat // 2)):
        t0 = time.perf_counter()
        subprocess.run([a.mt, "query", *CLI[name], "--workspace", ws, "--json"], check=True, capture_output=True)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


class Session:
    def __init__(self):
        self.p = subprocess.Popen([a.mt, "serve", "--workspace", ws], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.id = 0
        self.rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}})
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
        self.p.stdin.flush()

    def rpc(self, method, params):
        self.id += 1
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params}) + "\n")
        self.p.stdin.flush()
        while True:
            m = json.loads(self.p.stdout.readline())
            if m.get("id") == self.id:
                return m

    def call(self, args):
        t0 = time.perf_counter()
        r = self.rpc("tools/call", {"name": "query_tsdb", "arguments": args})["result"]
        dt = time.perf_counter() - t0
        if r.get("isError"):
            sys.exit("query_tsdb failed: " + r["content"][0]["text"])
        return dt, r

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=60)


rows = []
for name in CALLS:
    c = cold(name)
    s = Session()
    first, r = s.call(CALLS[name])
    warm = []
    for _ in range(a.repeat):
        dt, r = s.call(CALLS[name])
        warm.append(dt)
    s.close()
    answer = len(json.dumps(r["structuredContent"], separators=(",", ":")))
    meta = r["_meta"]["mt/tsdb"]
    rows.append((name, c, first, statistics.median(warm), meta["queries"], answer // 4, meta["raw_bytes"], meta["raw_bytes"] // 4))

s = Session()
_, r = s.call({"job": "7877", "mode": "promql", "query": "hw_gpu_power_watts", "start": "2026-02-10T06:14:00Z",
               "end": "2026-02-11T19:15:00Z", "step": 60})
s.close()
raw_one = r["_meta"]["mt/tsdb"]["raw_bytes"]
one_answer = len(json.dumps(r["structuredContent"], separators=(",", ":")))

print("| call on 7877 | cold `mt query` (copy + start + answer + stop) | first call in `mt serve` | warm call (median of %d) | Prometheus queries | answer tokens | raw Prometheus JSON of the same queries |" % a.repeat)
print("|---|---|---|---|---|---|---|")
for name, c, first, warm, q, tok, raw, rawtok in rows:
    print(f"| {name} | {c:.2f} s | {first:.2f} s | {warm:.3f} s | {q} | {tok:,} | {raw / 1e6:.2f} MB (~{rawtok:,} tokens, {rawtok / max(tok, 1):,.0f}x) |")
print(f"| promql `hw_gpu_power_watts`, 35 h, step 60 s | | | | 2 | {one_answer // 4:,} | {raw_one / 1e6:.2f} MB (~{raw_one // 4:,} tokens, {raw_one / max(one_answer, 1):,.0f}x) |")
