#!/usr/bin/env python3
"""A watch's restart blames the host the job's metrics name, and no host when they name none.

Scenarios come from `mt-simtrain --scenario-fuzz SEED` (real promtool TSDBs, ground truth in
truth.json; the same generator as tsdb-attribution-accuracy): the first 3 whose truth is a
node death (a host stopped reporting, or its GPUs logged fatal errors, while the job hung or
failed) and the first 2 collective hangs (every host alive: nobody to blame). `mt watch JOB
--once` triages the job, asks its TSDB (real Prometheus) once for the decision, and its
decision's culprits and exclusions must be exactly the truth's hosts (a node death must be
restarted) — the log alone names no host for a hang.

usage: watch_tsdb_culprits_test.py MT MT_SIMTRAIN"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

mt, sim = sys.argv[1], sys.argv[2]
work = tempfile.mkdtemp(prefix="mt-watch-tsdb.")
want = {"node_death": 3, "collective_hang": 2}
fails = checked = 0
try:
    for seed in range(1000, 1200):
        if not any(want.values()):
            break
        out = os.path.join(work, str(seed))
        subprocess.run([sim, "--scenario-fuzz", str(seed), "--out", out], check=True, capture_output=True, timeout=120)
        truth = json.load(open(os.path.join(out, "truth.json")))
        if truth["kind"] != "single" or want.get(truth["family"], 0) == 0:
            shutil.rmtree(out)
            continue
        want[truth["family"]] -= 1
        job = truth["jobs"][0]
        p = subprocess.run([mt, "watch", job, "--workspace", out, "--once", "--json"], capture_output=True, text=True,
                           timeout=180)
        events = [json.loads(l) for l in p.stdout.splitlines() if l.strip()]
        dec = [e["detail"] for e in events if e["kind"] == "decision"]
        expected = sorted(truth.get("culprits", [])) if truth["family"] == "node_death" else []
        got = sorted(dec[-1].get("culprits", [])) if dec else None
        excluded = sorted(dec[-1].get("exclude", [])) if dec else None
        # (a hang the scheduler then cancelled may be judged `stop`: the culprits are what is checked)
        ok = dec and got == expected and excluded == expected and (
            truth["family"] != "node_death" or dec[-1].get("action") == "restart")
        checked += 1
        fails += not ok
        print("%s seed %d (%s, job %s): decision %s, culprits %s, exclude %s; truth %s" %
              ("ok  " if ok else "FAIL", seed, truth["family"], job, dec[-1].get("action") if dec else None, got, excluded,
               expected))
        if not ok:
            print("    " + p.stderr.strip().replace("\n", "\n    ")[:2000])
        shutil.rmtree(out)
    if any(want.values()):
        print("FAIL: the generator gave too few scenarios of %s in seeds 1000-1199" % want)
        fails += 1
finally:
    shutil.rmtree(work, ignore_errors=True)
print("watch with TSDB culprits: %d checked, %d failed" % (checked, fails))
sys.exit(1 if fails else 0)
