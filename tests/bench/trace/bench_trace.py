#!/usr/bin/env python3
"""Profiler-trace reader benchmark: `mt trace FILE --json` against Python's `json.load` of the
same file (the peer the issue names), in the same run, alternating, on a warm page cache.

    bench_trace.py --mt build/tools/mt --file BIG.json [--gzip-file BIG.json.gz] [--repeat 3]
                   [--expect-steps N] [--no-python-gzip]

FILE comes from make_big_trace.py; its sidecar FILE.meta.json gives the steps and events the
reader must find (or --expect-steps). mt's answer is checked: len(traces[0].per_step) must
equal the steps and events.total the events written, else exit 1. --gzip-file benches the
.json.gz of the same trace too (mt, and `json.load(gzip.open(...))` unless --no-python-gzip).
Wall time and peak RSS are the child's own (os.wait4 rusage), not a wrapper's. Prints a
markdown table. Not part of ctest (no timed asserts).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

PY_LOAD = "import json,sys; json.load(open(sys.argv[1]))"
PY_LOAD_GZ = "import gzip,json,sys; json.load(gzip.open(sys.argv[1]))"


def run(cmd, out_path):
    """(wall s, peak RSS MiB) of one child; stdout to a file so a pipe never throttles it."""
    with open(out_path, "wb") as out:
        t = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=out)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t
    p.returncode = os.waitstatus_to_exitcode(status)   # reaped by wait4, tell Popen
    if p.returncode != 0:
        sys.exit(f"failed ({p.returncode}): {' '.join(cmd)}")
    return wall, ru.ru_maxrss / 1024                   # ru_maxrss is KiB on Linux


def meta_of(path):
    for m in (path + ".meta.json", path[:-3] + ".meta.json" if path.endswith(".gz") else None):
        if m and os.path.exists(m):
            with open(m) as f:
                return json.load(f)
    return {}


def check(out_path, steps, events, label):
    """The answer must be a real analysis of the whole file, not just fast."""
    with open(out_path) as f:
        t = json.load(f)["traces"][0]
    got_steps, got_events = len(t["per_step"]), t["events"]["total"]
    bad = []
    if steps is not None and got_steps != steps:
        bad.append(f"per_step {got_steps} != {steps} steps written")
    if events is not None and got_events != events:
        bad.append(f"events.total {got_events} != {events} events written")
    if bad:
        print(f"FAIL ({label}): " + "; ".join(bad), file=sys.stderr)
    return bad, t


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mt", required=True)
    ap.add_argument("--file", required=True)
    ap.add_argument("--gzip-file")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--expect-steps", type=int)
    ap.add_argument("--no-python-gzip", action="store_true")
    ap.add_argument("--outdir", default="/tmp", help="where the children's stdout goes")
    a = ap.parse_args()
    mt = os.path.abspath(a.mt)
    meta = meta_of(a.file)
    steps = a.expect_steps if a.expect_steps is not None else meta.get("steps")
    events = meta.get("events")
    if steps is None:
        sys.exit("no --expect-steps and no FILE.meta.json: nothing to check mt's answer against")

    # (label, cmd, file, is mt) in the order they alternate within one round.
    runs = [("mt trace --json", [mt, "trace", a.file, "--json"], a.file, True),
            ("python3 json.load", [sys.executable, "-c", PY_LOAD, a.file], a.file, False)]
    if a.gzip_file:
        runs.append(("mt trace --json (.gz)", [mt, "trace", a.gzip_file, "--json"], a.gzip_file, True))
        if not a.no_python_gzip:
            runs.append(("python3 json.load(gzip.open) (.gz)",
                         [sys.executable, "-c", PY_LOAD_GZ, a.gzip_file], a.gzip_file, False))
    for _, _, f, _ in runs:                       # warm the page cache: time the parse, not the disk
        with open(f, "rb") as fh:
            while fh.read(1 << 24):
                pass

    walls = {r[0]: [] for r in runs}
    rss = {r[0]: 0.0 for r in runs}
    failed, answer = [], None
    for i in range(a.repeat):
        for label, cmd, _, is_mt in runs:
            out = os.path.join(a.outdir, f"bench_trace.{os.getpid()}.{'gz' if '.gz' in label else 'plain'}.{'mt' if is_mt else 'py'}.out")
            w, r = run(cmd, out)
            walls[label].append(w)
            rss[label] = max(rss[label], r)
            if is_mt and i == 0:
                bad, t = check(out, steps, events, label)
                failed += bad
                answer = answer or t
            os.unlink(out)
        print(f"round {i + 1}/{a.repeat}: " + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in walls.items()),
              file=sys.stderr)

    size_mib = os.path.getsize(a.file) / 2**20    # MiB/s on the JSON text, for .gz too
    print(f"Trace: `{a.file}` {size_mib:.0f} MiB ({meta.get('copies', '?')} copies of "
          f"{meta.get('source', '?')}, {events or '?'} events, {steps} steps)"
          + (f"; .gz {os.path.getsize(a.gzip_file) / 2**20:.0f} MiB" if a.gzip_file else "")
          + f". Warm page cache, {a.repeat} alternating rounds, {os.cpu_count()} CPUs, "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} at the end.\n")
    print("| tool | median wall s | min wall s | peak RSS MiB | MiB/s (median) | python/mt (median) |")
    print("|---|---|---|---|---|---|")
    for k, (label, _, _, is_mt) in enumerate(runs):
        med = statistics.median(walls[label])
        mt_label = label if is_mt else runs[k - 1][0]     # python rows follow their mt row
        ratio = "1.00" if is_mt else f"{med / statistics.median(walls[mt_label]):.1f}"
        print(f"| `{label}` | {med:.2f} | {min(walls[label]):.2f} | {rss[label]:.0f} | "
              f"{size_mib / med:.0f} | {ratio} |")
    if answer:
        st = answer.get("steady") or {}
        print(f"\nmt: mode {answer.get('mode')}, {len(answer['per_step'])} steps, events.total "
              f"{answer['events']['total']}, steady n {st.get('n')}, mean step "
              f"{st.get('mean_step_time_us')} µs. Raw walls: "
              + "; ".join(f"{k} {['%.2f' % x for x in v]}" for k, v in walls.items()))
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    main()
