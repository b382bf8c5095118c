#!/usr/bin/env python3
"""Scores query_tsdb / compare_jobs against generated scenarios with ground truth.

For each seed: `mt-simtrain --scenario-fuzz SEED --out DIR` writes the job(s) and
truth.json; a single job is answered by `mt query JOB --playbook auto --json`, a pair by
`mt compare A B --json`. The answers' `family` and `culprits` fields are compared with the
truth. Reported: family accuracy per family, culprit-host precision and recall (hosts
summed over scenarios whose fault sits on particular hosts), false blame on clean runs,
pair detection (a real difference found; none on noise-only pairs), seconds per scenario.

Answers from before the `family` / `culprits` fields existed are read the way a user reads
them (the hosts in `outliers`, the playbook and verdict); that is how the baseline was taken.

usage: score.py --mt MT --sim MT_SIMTRAIN --seeds 1000:1300 [--workers 2] [--work DIR]
                [--keep] [--json OUT] [--check] [--quiet]
"""
import argparse
import collections
import concurrent.futures
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import time

THRESHOLDS = {"precision": 0.97, "recall": 0.95, "family_accuracy": 0.95, "false_blame_max": 0.02,
              "pairs_found": 0.95, "pairs_quiet": 0.98}


def run(cmd, env, timeout=300):
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    return p, time.monotonic() - t0


def legacy_family(out):
    """What a reader of an answer without `family` would conclude."""
    pb, verdict = out.get("playbook", ""), out.get("verdict", "")
    if pb == "hang":
        return "node_death" if "Node death" in verdict else "collective_hang"
    if pb == "node_failure":
        return "node_death"
    if pb == "host_oom":
        return "host_oom" if "Host OOM" in verdict else "none"
    if pb == "network_health":
        return "rdma" if "exclude" in verdict else "none"
    metric_family = [("rdma", "rdma"), ("tcp", "tcp"), ("temperature", "thermal"), ("clock", "thermal"),
                     ("io_pressure", "io_stall"), ("procs_blocked", "io_stall"), ("procs_running", "cpu_contention"),
                     ("context_switches", "cpu_contention"), ("cpu_utilization", "cpu_contention"), ("power", "thermal")]
    for o in out.get("outliers", []):
        for key, fam in metric_family:
            if key in o.get("metric", ""):
                return fam
    if "declines" in verdict:
        return "training"
    return "none"


def single_answer(out):
    if "family" in out:
        return out["family"], sorted({c["host"] for c in out.get("culprits", [])})
    return legacy_family(out), sorted({o["host"] for o in out.get("outliers", [])})


def pair_answer(out):
    if "family" in out:
        return out.get("significant", False), out["family"], sorted({c["host"] for c in out.get("culprits", [])})
    sig = out.get("metrics_significant", 0) > 0
    hosts = set()
    for m in out.get("metrics", []):
        if m.get("significant") and m.get("pattern") == "hosts":
            hosts.update(h["host"] for h in m.get("hosts", []))
    top = next((m for m in out.get("metrics", []) if m.get("significant")), None)
    fam = "none"
    if top:
        name = top["metric"]
        fam = "rdma" if "rdma" in name else "cpu_contention" if ("procs" in name or "context" in name or "cpu" in name) else "other"
    return sig, fam, sorted(hosts)


def score_seed(seed, args, env, ports):
    slot = ports.get()   # a port range of its own while it runs: no races between workers
    try:
        env = dict(env, MT_TSDB_PORTS=slot)
        return score_one(seed, args, env)
    finally:
        ports.put(slot)


def score_one(seed, args, env):
    d = os.path.join(args.work, str(seed))
    shutil.rmtree(d, ignore_errors=True)
    p, gen_s = run([args.sim, "--scenario-fuzz", str(seed), "--out", d, "--parallel", "1"], env)
    if p.returncode != 0:
        return {"seed": seed, "error": "generator: " + p.stderr[-400:]}
    truth = json.load(open(os.path.join(d, "truth.json")))
    if truth["kind"] == "pair":
        cmd = [args.mt, "compare", truth["jobs"][0], truth["jobs"][1], "--workspace", d, "--json"]
    else:
        cmd = [args.mt, "query", truth["jobs"][0], "--workspace", d, "--playbook", "auto", "--json"]
    p, answer_s = run(cmd, env)
    res = {"seed": seed, "truth": truth, "gen_s": gen_s, "answer_s": answer_s}
    if p.returncode != 0:
        res["error"] = "mt: " + (p.stderr or p.stdout)[-400:]
    else:
        out = json.loads(p.stdout)
        if truth["kind"] == "pair":
            res["significant"], res["family"], res["culprits"] = pair_answer(out)
        else:
            res["family"], res["culprits"] = single_answer(out)
        res["verdict"] = out.get("verdict", "")[:300]
        if "why" in out:
            res["why"] = out["why"][:300]
    if not args.keep:
        shutil.rmtree(d, ignore_errors=True)
    return res


def summarise(results):
    fam = collections.defaultdict(lambda: [0, 0])
    tp = fp = fn = 0
    clean = clean_blamed = 0
    found = found_n = quiet = quiet_n = 0
    gen = [r["gen_s"] for r in results if "gen_s" in r]
    ans = [r["answer_s"] for r in results if "answer_s" in r]
    errors = [r for r in results if "error" in r]
    misses = []
    for r in results:
        if "error" in r:
            continue
        t = r["truth"]
        pred = set(r["culprits"])
        if t["kind"] == "pair":
            if t["different"]:
                found_n += 1
                found += bool(r["significant"])
            else:
                quiet_n += 1
                quiet += not r["significant"]
        if t["kind"] == "single" or t["different"]:
            ok = r["family"] == t["family"]
            fam[t["family"]][0] += ok
            fam[t["family"]][1] += 1
        if not t["uniform"]:
            truth = set(t["culprits"])
            tp += len(pred & truth)
            fp += len(pred - truth)
            fn += len(truth - pred)
        if t["kind"] == "single" and t["family"] == "none":
            clean += 1
            clean_blamed += bool(pred)
        wrong = (r["family"] != t["family"] and (t["kind"] == "single" or t["different"])) or \
                (not t["uniform"] and pred != set(t["culprits"])) or \
                (t["kind"] == "pair" and bool(r["significant"]) != t["different"])
        if wrong:
            misses.append(r)
    n_fam = sum(v[1] for v in fam.values())
    return {
        "scenarios": len(results), "errors": len(errors),
        "family_accuracy": sum(v[0] for v in fam.values()) / max(1, n_fam),
        "per_family": {k: {"correct": v[0], "n": v[1], "accuracy": v[0] / v[1]} for k, v in sorted(fam.items())},
        "precision": tp / max(1, tp + fp), "recall": tp / max(1, tp + fn), "tp": tp, "fp": fp, "fn": fn,
        "false_blame": clean_blamed / max(1, clean), "clean_runs": clean,
        "pairs_found": found / max(1, found_n), "pairs_different": found_n,
        "pairs_quiet": quiet / max(1, quiet_n), "pairs_same": quiet_n,
        "gen_s_mean": sum(gen) / max(1, len(gen)), "answer_s_mean": sum(ans) / max(1, len(ans)),
        "misses": [{k: r.get(k) for k in ("seed", "family", "culprits", "significant", "verdict", "why", "error")} |
                   {"truth": {k: r["truth"][k] for k in ("kind", "family", "culprits", "decoys", "onset_step") if "truth" in r} |
                    ({"pair": r["truth"].get("pair")} if "truth" in r else {})}
                   for r in misses + errors][:60],
    }


def table(s, wall):
    lines = ["family            correct / n   accuracy"]
    for k, v in s["per_family"].items():
        lines.append(f"{k:<17} {v['correct']:>7} / {v['n']:<4} {v['accuracy']:.3f}")
    lines += [
        f"family accuracy   {s['family_accuracy']:.3f}",
        f"culprit hosts     precision {s['precision']:.3f}  recall {s['recall']:.3f}  (tp {s['tp']}, fp {s['fp']}, fn {s['fn']})",
        f"false blame       {s['false_blame']:.3f} of {s['clean_runs']} clean runs",
        f"pairs             difference found {s['pairs_found']:.3f} of {s['pairs_different']}; "
        f"none on noise-only {s['pairs_quiet']:.3f} of {s['pairs_same']}",
        f"time              {s['scenarios']} scenarios in {wall:.0f} s wall; per scenario: generate {s['gen_s_mean']:.2f} s, "
        f"answer {s['answer_s_mean']:.2f} s (CPU-seconds of one worker)",
        f"errors            {s['errors']}",
    ]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mt", required=True)
    ap.add_argument("--sim", required=True)
    ap.add_argument("--seeds", required=True, help="A:B (B excluded) or a comma list")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--work")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--json")
    ap.add_argument("--check", action="store_true", help="exit 1 below the issue's thresholds")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args()
    if ":" in args.seeds:
        a, b = args.seeds.split(":")
        seeds = list(range(int(a), int(b)))
    else:
        seeds = [int(x) for x in args.seeds.split(",")]
    own_work = args.work is None
    args.work = args.work or tempfile.mkdtemp(prefix="mt-accuracy.")
    os.makedirs(args.work, exist_ok=True)
    tmp = os.path.join(args.work, "tmp")
    os.makedirs(tmp, exist_ok=True)
    t0 = time.monotonic()
    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.workers) as ex:
        ports = queue.Queue()
        first = int(os.environ.get("MT_ACCURACY_PORT", "19900"))
        for w in range(args.workers):
            ports.put(f"{first + 20 * w}-{first + 20 * w + 19}")
        env = dict(os.environ, TMPDIR=tmp)
        futs = [ex.submit(score_seed, seed, args, env, ports) for seed in seeds]
        for f in futs:
            results.append(f.result())
    wall = time.monotonic() - t0
    s = summarise(results)
    s["wall_s"] = wall
    print(table(s, wall))
    if not args.quiet:
        for m in s["misses"][:25]:
            print("  miss:", json.dumps(m)[:600])
    if args.json:
        with open(args.json, "w") as f:
            json.dump(s, f, indent=1)
    if own_work and not args.keep:
        shutil.rmtree(args.work, ignore_errors=True)
    if args.check:
        bad = []
        if s["errors"]:
            bad.append(f"{s['errors']} errors")
        for k in ("precision", "recall", "family_accuracy", "pairs_found", "pairs_quiet"):
            if s[k] < THRESHOLDS[k]:
                bad.append(f"{k} {s[k]:.3f} < {THRESHOLDS[k]}")
        if s["false_blame"] > THRESHOLDS["false_blame_max"]:
            bad.append(f"false blame {s['false_blame']:.3f} > {THRESHOLDS['false_blame_max']}")
        if bad:
            print("FAIL: " + "; ".join(bad))
            return 1
        print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
