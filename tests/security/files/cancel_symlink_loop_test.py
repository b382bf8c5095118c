#!/usr/bin/env python3
"""Finding 11: a symlink loop anywhere in the workspace made cancel_job (and `mt cancel`,
`mt status`) fail for every job ("Too many levels of symbolic links"). Now the job search
reads one directory level with lstat types: links are never job directories.
Usage: cancel_symlink_loop_test.py MT"""
import json
import os
import signal
import subprocess
import sys

from secfiles import Env, check, check_bounded, mcp_responses, mcp_session, run_bounded

mt = sys.argv[1]
e = Env("loop", 19960)
victim = None
try:
    ws = e.ws
    os.symlink("loop", os.path.join(ws, "loop"))                          # ELOOP at the top level
    os.symlink("9005-JAX-b", os.path.join(ws, "9005-JAX-a"))              # a link named like the job
    os.makedirs(os.path.join(ws, "deep", "a"))
    os.symlink("../..", os.path.join(ws, "deep", "a", "up"))              # a directory cycle
    other = os.path.join(ws, "9006-JAX-other")
    os.makedirs(other)
    os.symlink(".mt-launch.json", os.path.join(other, ".mt-launch.json"))  # a looping launch record

    victim = subprocess.Popen(["sleep", "120"], start_new_session=True)
    jd = os.path.join(ws, "9005-JAX-b")
    os.makedirs(jd)
    with open(os.path.join(jd, ".mt-launch.json"), "w") as f:
        json.dump({"job_id": "9005", "backend": "local", "pgid": victim.pid}, f)

    r = run_bounded([mt, "status", "9005", "--workspace", ws, "--json"], e.env, timeout=30, rss_limit_mb=512)
    check_bounded(r, "mt status", 30, 128)
    check(r.rc == 0 and '"RUNNING"' in r.out, f"mt status finds the job despite the loops: {r.text.strip()[:300]!r}")

    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "cancel_job", "arguments": {"job": "9005"}}}
    r = run_bounded([mt, "serve", "--workspace", ws], e.env, timeout=30, rss_limit_mb=512, stdin_data=mcp_session([call]))
    res = mcp_responses(r.out).get(2, {}).get("result", {})
    text = json.dumps(res)
    check("Too many levels" not in text and "symbolic link" not in text, f"cancel_job plans the cancel: {text[:300]}")
    check(not res.get("isError"), f"cancel_job is not an error: {text[:300]}")

    r = run_bounded([mt, "cancel", "9005", "--workspace", ws], e.env, timeout=30, rss_limit_mb=512)
    check_bounded(r, "mt cancel", 30, 128)
    check(r.rc == 0 and f"sent SIGTERM to job 9005 (process group {victim.pid})" in r.out,
          f"mt cancel cancels the job: {r.text.strip()[:300]!r}")
    try:
        rc = victim.wait(timeout=10)
    except subprocess.TimeoutExpired:
        rc = None
    check(rc == -signal.SIGTERM, f"the job's process group got SIGTERM (rc {rc})")
    print("PASS security-files-cancel-symlink-loop")
finally:
    if victim and victim.poll() is None:
        victim.kill()
    e.close()
