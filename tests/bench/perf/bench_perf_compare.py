#!/usr/bin/env python3
"""perf_analysis / compare_jobs benchmark (issue 8).

1. `mt perf --json` on the 1 GiB, 24-rank log of the triage benchmark (same generator),
   against `grep -c 'completed step'` and `mt triage --json` on the same warm file, in the
   same run: wall time (best of N) and peak RSS.
2. `compare_jobs` on the case studies 8101 vs 8102: cold (a fresh `mt compare` process that
   copies both TSDBs, starts two Prometheus servers, answers and stops them) and warm (the
   second and later calls inside one `mt serve` stdio session, Prometheus already running),
   next to `mt compare --no-tsdb` (logs only) as the floor.

    bench_perf_compare.py MT_BINARY [--simtrain MT_SIMTRAIN] [--workspace WS] [--size-mib 1024] [--runs 5]

Prints a markdown section for docs/benchmarks.md. Not part of ctest (no timed asserts).
"""
import argparse
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def load_triage_bench():
    spec = importlib.util.spec_from_file_location("bench_triage", os.path.join(HERE, "..", "triage", "bench_triage.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def timed(cmd, out_path=None):
    t0 = time.perf_counter()
    with open(out_path or os.devnull, "w") as out:
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.PIPE)
        _, err = p.communicate()
        wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise SystemExit(f"{cmd} failed: {err.decode()[-2000:]}")
    return wall


def peak_rss_kib(cmd):
    p = subprocess.run(["/usr/bin/time", "-f", "%M", *cmd], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    return int(p.stderr.strip().splitlines()[-1])


def serve_session(mt, ws, calls):
    """Round-trip times of tools/call requests over one `mt serve` stdio session."""
    p = subprocess.Popen([mt, "serve", "--workspace", ws], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True, bufsize=1)

    def rpc(i, method, params):
        p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n")
        p.stdin.flush()
        while True:
            line = p.stdout.readline()
            if not line:
                raise SystemExit("mt serve exited")
            msg = json.loads(line)
            if msg.get("id") == i:
                return msg

    rpc(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}})
    p.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
    times, last = [], None
    for i, (name, args) in enumerate(calls, start=1):
        t0 = time.perf_counter()
        last = rpc(i, "tools/call", {"name": name, "arguments": args})
        times.append(time.perf_counter() - t0)
        if last.get("result", {}).get("isError"):
            raise SystemExit(f"{name} failed: {last}")
    p.stdin.close()
    p.wait(timeout=60)
    return times, last["result"]["structuredContent"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mt")
    ap.add_argument("--simtrain")
    ap.add_argument("--workspace", help="a case-study workspace with 8101 and 8102 (generated when absent)")
    ap.add_argument("--size-mib", type=int, default=1024)
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    mt = os.path.abspath(a.mt)
    tmp = tempfile.mkdtemp(prefix="mt-bench-perf-")
    try:
        # ---- 1. perf_analysis on the 1 GiB log --------------------------------------------------
        tb = load_triage_bench()
        ws = os.path.join(tmp, "ws")
        os.makedirs(ws)
        log = os.path.join(ws, "7001-JAX-bench.log")
        tb.generate(log, a.size_mib << 20)
        size = os.path.getsize(log)
        subprocess.run(["cat", log], stdout=subprocess.DEVNULL, check=True)
        now = "2026-02-24T12:00:00Z"
        cmds = {"grep": ["grep", "-c", "completed step", log],
                "triage": [mt, "triage", "--json", "--now", now, log],
                "perf": [mt, "perf", "7001", "--workspace", ws, "--json", "--now", now]}
        walls = {k: [] for k in cmds}
        for _ in range(a.runs):
            for k, c in cmds.items():
                walls[k].append(timed(c, os.path.join(tmp, k + ".out")))
        rss = {k: peak_rss_kib(c) for k, c in cmds.items()}
        perf = json.load(open(os.path.join(tmp, "perf.out")))
        g, t, p = min(walls["grep"]), min(walls["triage"]), min(walls["perf"])
        print("## perf_analysis and compare_jobs\n")
        print(f"Load average at start: {os.getloadavg()[0]:.1f} (2 cores shared with other agents' builds).\n")
        print(f"### perf_analysis on the triage benchmark's log\n\nLog: {size / 2**30:.2f} GiB, 24 ranks, "
              f"{perf['steps']['logical']} logical steps ({perf['steps']['entries_per_step']} entries per step), generated by "
              f"`tests/bench/triage/bench_triage.py`'s generator. Warm page cache; best of {a.runs} runs.\n")
        print("| command | wall (s) | ratio to grep | peak RSS (MiB) |\n|---|---|---|---|")
        print(f"| `grep -c 'completed step' LOG` | {g:.3f} | 1.00 | {rss['grep'] / 1024:.1f} |")
        print(f"| `mt triage --json LOG` | {t:.3f} | {t / g:.2f} | {rss['triage'] / 1024:.1f} |")
        print(f"| `mt perf JOB --json` | {p:.3f} | **{p / g:.2f}** | **{rss['perf'] / 1024:.1f}** |")
        print(f"\nmt perf: steady TGS {perf['steady']['tgs']} over steps {perf['steady']['first_step']}–{perf['steady']['last_step']}, "
              f"pattern `{perf['tgs_pattern']}`. perf_analysis is one scan (shared with the triage it runs first, through the "
              f"scan cache) plus per-step arithmetic, so it costs about what triage costs. Raw walls: grep "
              f"{['%.3f' % x for x in walls['grep']]}, triage {['%.3f' % x for x in walls['triage']]}, perf {['%.3f' % x for x in walls['perf']]}.\n")

        # ---- 2. compare_jobs 8101 vs 8102 --------------------------------------------------------
        cws = a.workspace
        if not cws:
            if not a.simtrain:
                raise SystemExit("--workspace or --simtrain is needed for the compare benchmark")
            cws = os.path.join(tmp, "demo")
            subprocess.run([a.simtrain, "--demo-init", cws, "--only", "8101,8102"], check=True, stdout=subprocess.DEVNULL)
        now = "2026-03-05T00:00:00Z"
        cold = [timed([mt, "compare", "8101", "8102", "--workspace", cws, "--json", "--now", now], os.path.join(tmp, "cmp.out"))
                for _ in range(3)]
        out = json.load(open(os.path.join(tmp, "cmp.out")))
        logs_only = [timed([mt, "compare", "8101", "8102", "--workspace", cws, "--json", "--no-tsdb", "--now", now]) for _ in range(3)]
        args = {"jobs": ["8101", "8102"], "now": now}
        times, served = serve_session(mt, cws, [("compare_jobs", args)] * (a.runs + 1))
        warm = statistics.median(times[1:])
        answer_tokens = len(json.dumps(served)) // 4
        print("### compare_jobs 8101 vs 8102\n")
        print(f"Two 24-node TSDBs; {out['tsdb']['metrics_compared']} metrics compared per host, {out['tsdb']['queries']} Prometheus "
              f"queries; answer {answer_tokens} tokens. Top metric `{out['metrics'][0]['metric']}` "
              f"({out['metrics'][0]['a']} → {out['metrics'][0]['b']}), TGS {out['tgs']['delta_pct']} %.\n")
        print("| call | wall (s) |\n|---|---|")
        print(f"| `mt compare 8101 8102 --no-tsdb` (logs only, the floor) | {min(logs_only):.3f} |")
        print(f"| `mt compare 8101 8102` cold (copy 2 TSDBs, start 2 Prometheus, sweep, stop; best of 3) | {min(cold):.3f} |")
        print(f"| first `compare_jobs` in an `mt serve` session (Prometheus started) | {times[0]:.3f} |")
        print(f"| warm `compare_jobs` (Prometheus running; median of {a.runs}) | **{warm:.3f}** |")
        print(f"\nWarm / cold = {warm / min(cold):.2f}; warm / logs-only = {warm / min(logs_only):.2f}. Raw: cold "
              f"{['%.2f' % x for x in cold]}, serve {['%.3f' % x for x in times]}.\n")
        print("Reproduce: `python3 tests/bench/perf/bench_perf_compare.py build/tools/mt --simtrain build/launcher/mt-simtrain` "
              "(needs ~1.1 GB in $TMPDIR).")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
