#!/usr/bin/env python3
"""Same scenarios, same conclusions through a central store with exporter names. Stdlib only.

For each seed, `mt-simtrain --scenario-fuzz SEED` writes a simulated job with its own TSDB and
its ground truth (truth.json; pair scenarios are skipped: this is about one job). Then:
  per-job answer  `mt query JOB --playbook auto --json --workspace DIR` (the job's own TSDB);
  per flavor      translate_job_tsdb.py turns that TSDB into what a site's central Prometheus
                  holds (dcgm-exporter or AMD device-metrics-exporter names per GPU,
                  node_exporter names per host, `up` per target; no tb_* training scalars);
                  a real Prometheus serves it (free loopback port, stopped by PID); an mt.yaml
                  names it as metrics source `central`;
  remote answer   `mt query JOB --source central --playbook auto --json --config MT_YAML
                  --workspace DIR --start ISO --end ISO`, the window being the job TSDB's first
                  and last sample (its blocks' meta.json minTime/maxTime).
Reported per flavor: family agreement with the per-job answer, culprit-host agreement (the
remote culprits equal the per-job culprits as sets), and accuracy against the truth for both
answers (family accuracy; culprit precision/recall summed over scenarios whose fault sits on
particular hosts, as tests/accuracy/score.py computes them), with per-step times.

usage: scenarios_test.py --mt MT --sim MT_SIMTRAIN --seeds A:B|A,B,.. [--flavors dcgm,amd]
                         [--workers N] [--work DIR] [--keep] [--json OUT] [--check]
                         [--prometheus prometheus] [--promtool promtool] [--quiet]
  --check: exit 1 when, for any flavor, family agreement (over the scenarios a central store
  can decide: a per-job `training` answer, read from tb_* scalars, must be `unknown` there)
  or culprit agreement with the per-job answer is below 0.95, or when any step failed (generator, per-job answer,
  translation, the central Prometheus); the disagreeing seeds are printed with both answers'
  family, culprits and why. A remote answer that fails (mt's error) counts as a disagreement.
Every step has a timeout; every process this starts is stopped by PID on every path
(finally, atexit, SIGTERM/SIGINT). The work directory (a mktemp -d one unless --work) is
removed unless --keep or something failed; then its path is printed.
"""
import argparse
import collections
import concurrent.futures
import datetime
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "lib"))
import translate_job_tsdb as tr  # noqa: E402  (Prometheus runner, block range, the PID registry)
from free_ports import free_ports  # noqa: E402

# Families the per-job answer decides from the job's training scalars (tb_*), which a site's
# central store does not hold: there the remote answer must be `unknown`, never another family.
NEEDS_TRAINING_SCALARS = {"training"}
THRESHOLD = 0.95
TOKEN_BUDGET = 2000   # query_tsdb's and compare_jobs' default answer budget
TIMEOUTS = {"generate": 300, "perjob": 300, "translate": 600, "remote": 300}
_children_lock = threading.Lock()
_stopping = threading.Event()


def run(cmd, timeout, env=None):
    """subprocess.run with the child registered by PID in tr._live (stopped on SIGTERM/exit)."""
    t0 = time.monotonic()
    if _stopping.is_set():
        raise tr.Fail("stopping")
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=env)
    with _children_lock:
        tr._live[p.pid] = p
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        tr._stop(p)
        out, err = p.communicate()
        raise tr.Fail(f"timed out after {timeout} s: {' '.join(cmd[:4])} ...; stderr: {(err or '')[-300:]}")
    finally:
        with _children_lock:
            tr._live.pop(p.pid, None)
    p.wall = time.monotonic() - t0
    p.out, p.err = out, err
    return p


def iso(seconds):
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def answer_of(stdout):
    out = json.loads(stdout)
    return {"family": out.get("family", "none"),
            "culprits": sorted({c["host"] for c in out.get("culprits", [])}),
            "why": (out.get("why") or out.get("verdict") or "")[:300],
            "playbook": out.get("playbook", "")}


def job_tsdb(scen, job):
    for e in sorted(os.listdir(scen)):
        p = os.path.join(scen, e, "prometheus")
        if (e == job or e.startswith(job + "-")) and os.path.isdir(p):
            return p
    raise tr.Fail(f"no job directory with a prometheus/ for job {job} in {scen}")


def one_seed(seed, args, env):
    d = os.path.join(args.work, str(seed))
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    scen = os.path.join(d, "scenario")
    res = {"seed": seed, "times": {}, "flavors": {}}
    try:
        p = run([args.sim, "--scenario-fuzz", str(seed), "--out", scen, "--parallel", "1"], TIMEOUTS["generate"], env)
        res["times"]["generate"] = round(p.wall, 2)
        if p.returncode != 0:
            raise tr.Fail("generator: " + (p.err or p.out)[-400:])
        with open(os.path.join(scen, "truth.json")) as f:
            truth = json.load(f)
        res["truth"] = {k: truth.get(k) for k in ("kind", "family", "culprits", "uniform", "hosts", "decoys", "onset_time")}
        if truth["kind"] == "pair":
            res["truth"]["different"] = truth.get("different")
            one_pair(truth, scen, d, args, env, res)
            return res
        if truth["kind"] != "single":
            res["skipped"] = truth["kind"]
            return res
        job = truth["jobs"][0]
        res["job"] = job
        p = run([args.mt, "query", job, "--workspace", scen, "--playbook", "auto", "--json"], TIMEOUTS["perjob"], env)
        res["times"]["perjob"] = round(p.wall, 2)
        if p.returncode != 0:
            raise tr.Fail("per-job mt: " + (p.err or p.out)[-400:])
        res["perjob"] = answer_of(p.out)
        src = job_tsdb(scen, job)
        start_ms, end_ms = tr.block_range(src)
        res["window"] = [iso(start_ms // 1000), iso(-(-end_ms // 1000))]
        for flavor in args.flavors:
            res["flavors"][flavor] = one_flavor(flavor, src, scen, job, res["window"], d, args, env)
    except tr.Fail as e:
        res["error"] = str(e)
    except (OSError, ValueError, KeyError) as e:
        res["error"] = f"{type(e).__name__}: {e}"
    return res


def answer_tokens(stdout):
    """The answer's size as mt's budget counts it (tools/catalog/answer_budget.h): compact JSON bytes / 4."""
    return len(stdout.strip().encode()) // 4


def pair_of(stdout):
    out = json.loads(stdout)
    return {"significant": bool(out.get("significant", False)), "family": out.get("family", "none"),
            "culprits": sorted({c["host"] for c in out.get("culprits", [])}),
            "why": (out.get("why") or out.get("verdict") or "")[:300]}


SCONTROL = """#!/usr/bin/env python3
# `scontrol show job -o ID` for the simulated jobs of this scenario, in Slurm's own format
# (StartTime/EndTime in the local time zone, which the driver sets to UTC): the placement a
# site's Slurm gives mt for a job whose log has no time stamps. Jobs: %s
import sys
jobs = %r
if sys.argv[1:4] != ["show", "job", "-o"] or len(sys.argv) != 5 or sys.argv[4] not in jobs:
    print("slurm_load_jobs error: Invalid job id specified", file=sys.stderr)
    sys.exit(1)
start, end = jobs[sys.argv[4]]
print(f"JobId={sys.argv[4]} JobName=sim JobState=COMPLETED Reason=None StartTime={start} EndTime={end} NodeList=(null)")
"""


def slurm_time(seconds):
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")


def one_pair(truth, scen, d, args, env, res):
    """compare_jobs A B on the jobs' own TSDBs, then on one central store holding both jobs'
    translated series; each job placed on it by a Slurm answer (scontrol shim) and its log."""
    a, b = truth["jobs"][:2]
    res["jobs"] = [a, b]
    p = run([args.mt, "compare", a, b, "--workspace", scen, "--json"], TIMEOUTS["perjob"], env)
    res["times"]["perjob"] = round(p.wall, 2)
    if p.returncode != 0:
        raise tr.Fail("per-job mt compare: " + (p.err or p.out)[-400:])
    res["perjob"] = pair_of(p.out)
    srcs = [job_tsdb(scen, j) for j in (a, b)]
    placement = {}
    for j, src in zip((a, b), srcs):
        lo, hi = tr.block_range(src)
        placement[j] = (slurm_time(lo // 1000), slurm_time(-(-hi // 1000)))
    bindir = os.path.join(d, "bin")
    os.makedirs(bindir, exist_ok=True)
    shim = os.path.join(bindir, "scontrol")
    with open(shim, "w") as f:
        f.write(SCONTROL % (", ".join(placement), placement))
    os.chmod(shim, 0o755)
    slurm_env = dict(env, PATH=bindir + os.pathsep + env.get("PATH", ""), TZ="UTC")
    for flavor in args.flavors:
        fr = res["flavors"][flavor] = {"times": {}}
        out = os.path.join(d, f"central-{flavor}")
        try:
            t0 = time.monotonic()
            for i, src in enumerate(srcs):
                part = out if i == 0 else out + f"-{i}"
                p = run([sys.executable, os.path.join(HERE, "translate_job_tsdb.py"), src, part, "--flavor", flavor,
                         "--prometheus", args.prometheus, "--promtool", args.promtool, "--quiet",
                         "--timeout", str(TIMEOUTS["translate"] - 20)], TIMEOUTS["translate"], env)
                if p.returncode != 0:
                    raise tr.Fail("translate: " + (p.err or p.out)[-600:])
                if i:   # one store: the second job's blocks beside the first's
                    for blk in os.listdir(part):
                        if os.path.isfile(os.path.join(part, blk, "meta.json")):
                            os.rename(os.path.join(part, blk), os.path.join(out, blk))
            fr["times"]["translate"] = round(time.monotonic() - t0, 2)
            with tr.Prometheus(args.prometheus, out, d, tr.Deadline(TIMEOUTS["remote"] + 120), f"central-{flavor}") as prom:
                cfg = os.path.join(d, f"mt-{flavor}.yaml")
                with open(cfg, "w") as f:
                    f.write(f"workspace: {scen}\nmetrics:\n  sources:\n    - name: central\n"
                            f"      url: http://127.0.0.1:{prom.port}\n      timeout_seconds: 60\n")
                cmd = [args.mt, "compare", a, b, "--source", "central", "--json", "--config", cfg, "--workspace", scen]
                fr["remote_cmd"] = "PATH=" + bindir + ":$PATH TZ=UTC " + " ".join(cmd)
                p = run(cmd, TIMEOUTS["remote"], slurm_env)
                fr["times"]["remote"] = round(p.wall, 2)
                if p.returncode != 0:
                    fr["remote_error"] = f"exit {p.returncode}: " + ((p.err or "") + (p.out or "")).strip()[-600:]
                else:
                    fr["remote"] = pair_of(p.out)
                    fr["tokens"] = answer_tokens(p.out)
        except tr.Fail as e:
            fr["error"] = str(e)
        except (OSError, ValueError, KeyError) as e:
            fr["error"] = f"{type(e).__name__}: {e}"


def one_flavor(flavor, src, scen, job, window, d, args, env):
    fr = {"times": {}}
    out = os.path.join(d, f"central-{flavor}")
    summary = os.path.join(d, f"translate-{flavor}.json")
    try:
        p = run([sys.executable, os.path.join(HERE, "translate_job_tsdb.py"), src, out, "--flavor", flavor,
                 "--prometheus", args.prometheus, "--promtool", args.promtool, "--summary", summary, "--quiet",
                 "--timeout", str(TIMEOUTS["translate"] - 20)], TIMEOUTS["translate"], env)
        fr["times"]["translate"] = round(p.wall, 2)
        if p.returncode != 0:
            raise tr.Fail("translate: " + (p.err or p.out)[-600:])
        with open(summary) as f:
            s = json.load(f)
        fr["names"] = len(s.get("target", {}))
        fr["samples"] = sum(c["samples"] for c in s.get("target", {}).values())
        t0 = time.monotonic()
        deadline = tr.Deadline(TIMEOUTS["remote"] + 120)
        with tr.Prometheus(args.prometheus, out, d, deadline, f"central-{flavor}") as prom:
            fr["times"]["central_ready"] = round(time.monotonic() - t0, 2)
            cfg = os.path.join(d, f"mt-{flavor}.yaml")
            with open(cfg, "w") as f:
                f.write(f"workspace: {scen}\nmetrics:\n  sources:\n    - name: central\n"
                        f"      url: http://127.0.0.1:{prom.port}\n      timeout_seconds: 60\n")
            cmd = [args.mt, "query", job, "--source", "central", "--playbook", "auto", "--json", "--config", cfg,
                   "--workspace", scen, "--start", window[0], "--end", window[1]]
            fr["remote_cmd"] = " ".join(cmd)
            p = run(cmd, TIMEOUTS["remote"], env)
            fr["times"]["remote"] = round(p.wall, 2)
            if p.returncode != 0:
                fr["remote_error"] = f"exit {p.returncode}: " + ((p.err or "") + (p.out or "")).strip()[-600:]
            else:
                try:
                    fr["remote"] = answer_of(p.out)
                    fr["tokens"] = answer_tokens(p.out)
                except (ValueError, KeyError, TypeError) as e:
                    fr["remote_error"] = f"unreadable answer ({e}): {p.out[-300:]}"
    except tr.Fail as e:
        fr["error"] = str(e)
    except (OSError, ValueError, KeyError) as e:   # e.g. mt being rebuilt under us (EACCES, ETXTBSY)
        fr["error"] = f"{type(e).__name__}: {e}"
    return fr


# ---- scoring -----------------------------------------------------------------------------
def truth_score(pairs):
    """pairs: [(truth, answer)] -> family accuracy, culprit precision/recall (score.py's way)."""
    fam_ok = tp = fp = fn = 0
    for t, a in pairs:
        fam_ok += a["family"] == t["family"]
        if not t["uniform"]:
            truth, pred = set(t["culprits"]), set(a["culprits"])
            tp += len(pred & truth)
            fp += len(pred - truth)
            fn += len(truth - pred)
    n = len(pairs)
    return {"n": n, "family_accuracy": fam_ok / max(1, n), "precision": tp / max(1, tp + fp),
            "recall": tp / max(1, tp + fn), "tp": tp, "fp": fp, "fn": fn}


def summarise(results, flavors):
    singles = [r for r in results if "skipped" not in r and r.get("truth", {}).get("kind") != "pair"]
    pairs = [r for r in results if r.get("truth", {}).get("kind") == "pair"]
    s = {"seeds": len(results), "skipped": sum(1 for r in results if r.get("skipped")),
         "single": len(singles), "pairs": len(pairs), "errors": [], "flavors": {}, "pair_flavors": {}}
    for r in pairs:
        if "error" in r:
            s["errors"].append({"seed": r["seed"], "step": "pair: per-job compare", "error": r["error"]})
    for fl in flavors:
        agree, n, disagree = 0, 0, []
        for r in pairs:
            if "perjob" not in r:
                continue
            n += 1
            fr = r["flavors"].get(fl, {})
            if "error" in fr:
                s["errors"].append({"seed": r["seed"], "step": f"pair {fl}: translation / central store", "error": fr["error"]})
            same = "remote" in fr and all(fr["remote"][k] == r["perjob"][k] for k in ("significant", "family", "culprits"))
            agree += same
            if not same:
                disagree.append(r["seed"])
        s["pair_flavors"][fl] = {"n": n, "agreement": agree / max(1, n), "disagreeing_seeds": disagree}
    for r in singles:
        if "error" in r:
            step = "generate" if "truth" not in r else "per-job answer" if "perjob" not in r else "setup"
            s["errors"].append({"seed": r["seed"], "step": step, "error": r["error"]})
    answered = [r for r in singles if "perjob" in r]
    s["perjob_vs_truth"] = truth_score([(r["truth"], r["perjob"]) for r in answered])
    for fl in flavors:
        fam_agree = cul_agree = n = remote_errors = limit = 0
        disagree, remote_pairs = [], []
        first_remote_error = None
        for r in answered:
            fr = r["flavors"].get(fl, {})
            n += 1
            if "error" in fr:
                s["errors"].append({"seed": r["seed"], "step": f"{fl}: translation / central store", "error": fr["error"]})
            elif not fr and "error" in r:
                pass   # the seed's own error is reported once above
            if "remote" not in fr:
                if "remote_error" in fr:
                    remote_errors += 1
                    first_remote_error = first_remote_error or fr["remote_error"]
                disagree.append(r)
                continue
            remote_pairs.append((r["truth"], fr["remote"]))
            ca = set(fr["remote"]["culprits"]) == set(r["perjob"]["culprits"])
            cul_agree += ca
            if r["perjob"]["family"] in NEEDS_TRAINING_SCALARS and fr["remote"]["family"] == "unknown" and ca:
                # A central store holds no training scalars (tb_*): "unknown, and what would decide
                # it" is the honest answer there, not a disagreement; any other family would be.
                limit += 1
                continue
            fa = fr["remote"]["family"] == r["perjob"]["family"]
            fam_agree += fa
            if not (fa and ca):
                disagree.append(r)
        decidable = n - limit
        s["flavors"][fl] = {
            "n": n, "family_agreement": fam_agree / max(1, decidable), "culprit_agreement": cul_agree / max(1, n),
            "unknown_for_lack_of_training_scalars": limit,
            "remote_errors": remote_errors, "first_remote_error": first_remote_error,
            "remote_vs_truth": truth_score(remote_pairs),
            "disagreeing_seeds": [r["seed"] for r in disagree],
        }
    for fl in flavors:
        sizes = [(r["flavors"].get(fl, {}).get("tokens", 0), r["truth"].get("hosts") or 0, r["seed"])
                 for r in singles + pairs if "truth" in r]
        s["flavors"].setdefault(fl, {})["max_tokens"] = max(sizes) if sizes else (0, 0, None)
    times = collections.defaultdict(list)
    for r in answered:
        for k, v in r["times"].items():
            times[k].append(v)
        for fl, fr in r["flavors"].items():
            for k, v in fr.get("times", {}).items():
                times[f"{fl}.{k}"].append(v)
    s["mean_s"] = {k: round(sum(v) / len(v), 2) for k, v in sorted(times.items())}
    return s


def fmt_answer(a):
    return f"family={a['family']} culprits={a['culprits']} why={a['why'][:200]!r}"


def report(s, results, flavors, wall, quiet):
    pj = s["perjob_vs_truth"]
    lines = [f"{s['seeds']} seeds: {s['single']} single-job scenarios (query_tsdb playbook auto), {s['pairs']} pairs "
             f"(compare_jobs), {s['skipped']} skipped; {wall:.0f} s wall",
             "",
             "family=per-job: over the scenarios a central store can decide (not those the per-job answer decides "
             "from training scalars, where the remote answer is `unknown`: counted under `tb_* unknown`)",
             "",
             f"{'answer':<16} {'n':>4}  {'family=per-job':>14}  {'tb_* unknown':>12}  {'culprits=per-job':>16}  {'family acc':>10}  "
             f"{'precision':>9}  {'recall':>6}  {'remote errors':>13}",
             f"{'per-job':<16} {pj['n']:>4}  {'-':>14}  {'-':>12}  {'-':>16}  {pj['family_accuracy']:>10.3f}  "
             f"{pj['precision']:>9.3f}  {pj['recall']:>6.3f}  {'-':>13}"]
    for fl in flavors:
        f = s["flavors"][fl]
        rv = f["remote_vs_truth"]
        acc = (f"{rv['family_accuracy']:>10.3f}  {rv['precision']:>9.3f}  {rv['recall']:>6.3f}" if rv["n"] else
               f"{'-':>10}  {'-':>9}  {'-':>6}")
        lines.append(f"{'central ' + fl:<16} {f['n']:>4}  {f['family_agreement']:>14.3f}  "
                     f"{f['unknown_for_lack_of_training_scalars']:>12}  {f['culprit_agreement']:>16.3f}  "
                     f"{acc}  {f['remote_errors']:>13}   (vs truth: the {rv['n']} answered)")
    for fl in flavors:
        pf = s["pair_flavors"][fl]
        lines.append(f"compare_jobs central {fl}: {pf['n']} pairs, same significance, family and culprit hosts as on the "
                     f"jobs' own TSDBs: {pf['agreement']:.3f}" + (f" (differ: {pf['disagreeing_seeds']})" if pf["disagreeing_seeds"] else ""))
    for fl in flavors:
        tok, hosts, seed = s["flavors"][fl]["max_tokens"]
        lines.append(f"largest remote answer ({fl}): {tok} tokens (budget {TOKEN_BUDGET}), seed {seed}, {hosts} hosts")
    lines.append("mean seconds per scenario: " + ", ".join(f"{k} {v}" for k, v in s["mean_s"].items()))
    for fl in flavors:
        if s["flavors"][fl]["first_remote_error"]:
            lines.append(f"REMOTE ERROR ({fl}, first of {s['flavors'][fl]['remote_errors']}): "
                         f"{s['flavors'][fl]['first_remote_error']}")
    for e in s["errors"]:
        lines.append(f"ERROR seed {e['seed']} ({e['step']}): {e['error'][:600]}")
    if not quiet:
        lines.append("")
        lines.append("per seed: truth | per-job | " + " | ".join(flavors) + "   (seconds: generate, per-job, "
                     "translate, central ready, remote)")
        for r in results:
            if r.get("skipped"):
                continue
            t = r.get("truth", {})
            row = f"  {r['seed']}: {t.get('family')} {t.get('culprits')} | "
            row += (f"{r['perjob']['family']} {r['perjob']['culprits']}" if "perjob" in r else "ERROR")
            for fl in flavors:
                fr = r["flavors"].get(fl, {})
                row += " | " + (f"{fr['remote']['family']} {fr['remote']['culprits']}" if "remote" in fr else
                                "remote error" if "remote_error" in fr else "error" if "error" in fr else "-")
            tm = [r["times"].get("generate"), r["times"].get("perjob")]
            for fl in flavors:
                ft = r["flavors"].get(fl, {}).get("times", {})
                tm += [ft.get("translate"), ft.get("central_ready"), ft.get("remote")]
            row += "   (" + ", ".join("-" if x is None else f"{x:.1f}" for x in tm) + ")"
            lines.append(row)
    return "\n".join(lines)


def disagreements(s, results, flavors):
    by_seed = {r["seed"]: r for r in results}
    lines = []
    for fl in flavors:
        for seed in s["flavors"][fl]["disagreeing_seeds"]:
            r = by_seed[seed]
            fr = r["flavors"].get(fl, {})
            t = r["truth"]
            lines.append(f"  seed {seed} [{fl}] truth family={t['family']} culprits={t['culprits']}")
            lines.append(f"      per-job: {fmt_answer(r['perjob'])}")
            if "remote" in fr:
                lines.append(f"      central: {fmt_answer(fr['remote'])}")
            elif fr.get("remote_error"):
                lines.append(f"      central: mt failed: {fr['remote_error']}")
            else:
                lines.append(f"      central: not answered: {fr.get('error') or r.get('error') or 'not run'}")
            if fr.get("remote_cmd"):
                lines.append(f"      cmd: {fr['remote_cmd']}")
    return "\n".join(lines)


def parse_seeds(text):
    """'A:B' (B excluded), 'N', or a comma list of those: '2000:2020,2030'."""
    seeds = []
    for part in (x for x in text.split(",") if x):
        if ":" in part:
            a, b = part.split(":")
            seeds.extend(range(int(a), int(b)))
        else:
            seeds.append(int(part))
    return seeds


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mt", required=True)
    ap.add_argument("--sim", required=True)
    ap.add_argument("--seeds", required=True, help="A:B (B excluded), N, or a comma list of those")
    ap.add_argument("--flavors", default="dcgm,amd")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--work")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--json")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--prometheus", default="prometheus")
    ap.add_argument("--promtool", default="promtool")
    ap.add_argument("--quiet", action="store_true", help="no per-seed rows")
    args = ap.parse_args()
    args.flavors = [f for f in args.flavors.split(",") if f]
    for f in args.flavors:
        if f not in tr.FLAVOR:
            ap.error(f"unknown flavor {f} (known: {', '.join(sorted(tr.FLAVOR))})")
    for b in (args.mt, args.sim, args.prometheus, args.promtool):
        if not shutil.which(b):
            print(f"scenarios_test: {b} not found", file=sys.stderr)
            return 2
    args.mt, args.sim = os.path.abspath(args.mt) if os.sep in args.mt else args.mt, \
        os.path.abspath(args.sim) if os.sep in args.sim else args.sim
    seeds = parse_seeds(args.seeds)
    own_work = args.work is None
    args.work = os.path.abspath(args.work or tempfile.mkdtemp(prefix="mt-central-scenarios."))
    os.makedirs(args.work, exist_ok=True)
    tmp = os.path.join(args.work, "tmp")
    os.makedirs(tmp, exist_ok=True)

    def on_signal(signum, _frame):
        _stopping.set()
        tr.stop_all()
        print(f"scenarios_test: signal {signum}: stopped; work directory kept: {args.work}", file=sys.stderr)
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    t0 = time.monotonic()
    slots = queue.Queue()
    for _ in range(max(1, args.workers)):
        block = free_ports(20, block=True)
        slots.put(f"{block[0]}-{block[-1]}")
    base_env = dict(os.environ, TMPDIR=tmp)

    def task(seed):
        slot = slots.get()
        try:
            return one_seed(seed, args, dict(base_env, MT_TSDB_PORTS=slot))
        finally:
            slots.put(slot)

    results = []
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.workers)) as ex:
            for r in ex.map(task, seeds):
                results.append(r)
                if not args.keep and "error" not in r and not any(
                        "error" in fr or "remote_error" in fr or
                        ("remote" in fr and (fr["remote"]["family"] != r["perjob"]["family"] or
                                             set(fr["remote"]["culprits"]) != set(r["perjob"]["culprits"])))
                        for fr in r["flavors"].values()):
                    shutil.rmtree(os.path.join(args.work, str(r["seed"])), ignore_errors=True)
    finally:
        tr.stop_all()
    wall = time.monotonic() - t0
    s = summarise(results, args.flavors)
    s["wall_s"] = round(wall, 1)
    print(report(s, results, args.flavors, wall, args.quiet))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"summary": s, "results": results}, f, indent=1)
    bad = []
    if s["errors"]:
        bad.append(f"{len(s['errors'])} step(s) failed")
    for fl in args.flavors:
        f = s["flavors"][fl]
        if f["family_agreement"] < THRESHOLD:
            bad.append(f"{fl}: family agreement {f['family_agreement']:.3f} < {THRESHOLD}")
        if f["culprit_agreement"] < THRESHOLD:
            bad.append(f"{fl}: culprit agreement {f['culprit_agreement']:.3f} < {THRESHOLD}")
    for fl in args.flavors:
        pf = s["pair_flavors"][fl]
        if pf["n"] and pf["agreement"] < THRESHOLD:
            bad.append(f"{fl}: compare_jobs agreement {pf['agreement']:.3f} < {THRESHOLD} (seeds {pf['disagreeing_seeds']})")
    for fl in args.flavors:
        tok, _, seed = s["flavors"][fl]["max_tokens"]
        if tok > TOKEN_BUDGET:
            bad.append(f"{fl}: seed {seed}'s answer is {tok} tokens, over the {TOKEN_BUDGET} budget")
    if s["single"] == 0:
        bad.append("no single-job scenario among the seeds")
    failed = bool(bad)
    if failed:
        dis = disagreements(s, results, args.flavors)
        if dis:
            print("disagreeing seeds:\n" + dis)
    if args.keep or failed:
        print(f"work directory kept: {args.work}")
    else:
        if own_work:
            shutil.rmtree(args.work, ignore_errors=True)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    if args.check:
        if failed:
            print("FAIL: " + "; ".join(bad))
            return 1
        print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
