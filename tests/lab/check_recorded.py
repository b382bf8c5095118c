#!/usr/bin/env python3
"""Triages the lab's recorded logs (tests/lab/logs/, real bytes from one lab run) and checks each
class and status: the lab's verdicts, kept as a fast regression test that needs no Slurm or torch.

usage: check_recorded.py MT LOG_DIR
`now` is 30 s after each log's last stamped line, as the lab triages a run just after it ends.
LOG_DIR/plain_ws/ is the plain-sbatch run: Slurm's default slurm-%j.out and slurm-%j.err, found by
`mt jobs` and triaged by job id, its root cause read from the stderr file."""
import datetime
import json
import os
import re
import subprocess
import sys

EXPECT = {
    "none": ("completed", "completed"), "rank_exit": ("python_exception", "failed"),
    "exception": ("python_exception", "failed"), "hang": ("nccl_error", "failed"),
    "host_oom": ("host_oom", "failed"), "cancel": ("cancelled", "cancelled"),
    "requeue": ("preempted", "cancelled"), "time_limit": ("time_limit", "cancelled"),
    "local_none": ("completed", "completed"), "local_rank_exit": ("nccl_error", "failed"),
    "local_exception": ("python_exception", "failed"), "local_host_oom": ("host_oom", "failed"),
    # a CI run's local_rank_exit (2026-11-28): the two peers' tracebacks torn into each other mid-line
    "local_rank_exit_interleaved": ("nccl_error", "failed"),
}
STAMP = re.compile(r"^\[(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:[+-]\d\d:\d\d|Z)?\]", re.M)

mt, logs = sys.argv[1], sys.argv[2]
fails = 0
for name, want in EXPECT.items():
    path = os.path.join(logs, name + ".log")
    with open(path, encoding="utf-8", errors="replace") as f:
        stamps = STAMP.findall(f.read())
    if not stamps:
        print(f"FAIL {name}: no stamped line in {path}")
        fails += 1
        continue
    now = datetime.datetime.fromisoformat(stamps[-1]) + datetime.timedelta(seconds=30)
    p = subprocess.run([mt, "triage", "--json", path, "--now", now.strftime("%Y-%m-%dT%H:%M:%SZ")],
                       capture_output=True, text=True, timeout=60)
    got = (None, None)
    if p.returncode == 0:
        t = json.loads(p.stdout)
        got = (t["class"], t["status"])
    ok = got == want
    fails += not ok
    print(f"{'ok  ' if ok else 'FAIL'} {name}: expected {want[0]}/{want[1]}, got {got[0]}/{got[1]}")

# The plain-sbatch run: a workspace of Slurm's default output names, triaged by id.
ws = os.path.join(logs, "plain_ws")
out = sorted(n for n in os.listdir(ws) if n.endswith(".out"))[0]
job_id = out[len("slurm-"):-len(".out")]
with open(os.path.join(ws, out), encoding="utf-8") as f:
    now = datetime.datetime.fromisoformat(STAMP.findall(f.read())[-1]) + datetime.timedelta(seconds=30)
listed = json.loads(subprocess.run([mt, "jobs", "--workspace", ws, "--json"], capture_output=True, text=True,
                                   timeout=60).stdout or "{}")
p = subprocess.run([mt, "triage", job_id, "--workspace", ws, "--json", "--now", now.strftime("%Y-%m-%dT%H:%M:%SZ")],
                   capture_output=True, text=True, timeout=60)
got = None
if p.returncode == 0:
    t = json.loads(p.stdout)
    got = (t["class"], t["status"], sorted({e["file"] for e in t["evidence"]}), t["scan"]["steps_from"])
want = ("python_exception", "failed", [f"slurm-{job_id}.err"], f"slurm-{job_id}.err")
ok = got == want and job_id in [j["id"] for j in listed.get("jobs", [])]
fails += not ok
print(f"{'ok  ' if ok else 'FAIL'} plain_ws/{job_id} (by id): expected {want}, got {got}" + ("" if ok else f" {p.stderr[:200]}"))
sys.exit(1 if fails else 0)
