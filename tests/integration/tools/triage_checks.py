#!/usr/bin/env python3
"""Checks for the tools/ integration tests (see triage_cli_test.sh, triage_demo_test.sh)."""
import json
import os
import shutil
import subprocess
import sys
from datetime import datetime, timedelta, timezone


def fail(msg):
    print("FAIL:", msg, file=sys.stderr)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def run(cmd, want_rc=0):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != want_rc:
        fail(f"{cmd}: exit {p.returncode}, wanted {want_rc}\nstdout: {p.stdout[-2000:]}\nstderr: {p.stderr[-2000:]}")
    return p


def iso_to_epoch(s):
    return int(datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc).timestamp())


FIXTURE_JOBS = {  # fixture -> job id in the built workspace
    "completed": "9101", "oom": "9102", "running": "9103", "heartbeat_true": "9104",
    "python_exception": "k8s-20260224-100000-a3f1", "model_not_found": "local_20260224_100000_b2c4",
}


def build_workspace(fixtures, ws):
    os.makedirs(ws)
    mtimes = dict(l.split() for l in open(os.path.join(fixtures, "mtimes.txt")))
    for fx, jid in FIXTURE_JOBS.items():
        stem = f"{jid}-JAX-{fx}"
        log = os.path.join(ws, stem + ".log")
        shutil.copy(os.path.join(fixtures, fx + ".log"), log)
        t = iso_to_epoch(mtimes[fx + ".log"])
        os.utime(log, (t, t))
        os.makedirs(os.path.join(ws, stem))
        os.symlink(f"../{stem}.log", os.path.join(ws, stem, "log"))
    os.makedirs(os.path.join(ws, "llama2-70b", "checkpoints"))      # not a job
    os.makedirs(os.path.join(ws, "9199-JAX-queued"))
    os.symlink("../9199-JAX-queued.log", os.path.join(ws, "9199-JAX-queued", "log"))   # dangling: pending
    with open(os.path.join(os.path.dirname(ws), "outside.log"), "w") as f:
        f.write("JOB_ID=6666\n")
    os.makedirs(os.path.join(ws, "6666-JAX-evil"))
    os.symlink("../../outside.log", os.path.join(ws, "6666-JAX-evil", "log"))


def cli(mt, ws):
    jobs = json.loads(run([mt, "jobs", "--workspace", ws, "--json", "--now", "2026-02-24T10:20:00Z"]).stdout)
    by_id = {j["id"]: j for j in jobs["jobs"]}
    check(set(by_id) == set(FIXTURE_JOBS.values()) | {"9199", "6666"}, f"jobs: {sorted(by_id)}")
    check(by_id["9101"]["status"] == "completed" and by_id["9101"]["last_step"] == 29, by_id["9101"])
    check(by_id["9103"]["status"] == "running", by_id["9103"])
    check(by_id["9199"]["status"] == "pending" and by_id["9199"]["log"] is None, by_id["9199"])
    check(by_id["6666"]["log"] is None, "a log link leading outside must not be followed")
    human = run([mt, "jobs", "--workspace", ws]).stdout
    check("9101" in human and "completed" in human, human)

    t = json.loads(run([mt, "triage", "9102", "--workspace", ws, "--json", "--now", "2026-02-24T11:00:00Z"]).stdout)
    check(t["class"] == "oom" and "nccl_error" in t["secondary"], t["headline"])
    check(t["evidence"][0]["file"] == "9102-JAX-oom.log" and t["evidence"][0]["line"] == 61, t["evidence"][0])
    t = json.loads(run([mt, "triage", "k8s-20260224-100000-a3f1", "--workspace", ws, "--json",
                        "--now", "2026-02-24T11:00:00Z"]).stdout)
    check(t["class"] == "python_exception" and t["job"]["kind"] == "k8s", t["headline"])
    check(any("ValueError" in e["text"] for e in t["evidence"]) or "ValueError" in json.dumps(t), "exception line")
    t = json.loads(run([mt, "triage", "local_20260224_100000_b2c4", "--workspace", ws, "--json",
                        "--now", "2026-02-24T11:00:00Z"]).stdout)
    check(t["class"] == "model_not_found", t["headline"])
    # running at its own time, a hang an hour later.
    t = json.loads(run([mt, "triage", "9103", "--workspace", ws, "--json", "--now", "2026-02-24T10:17:40Z"]).stdout)
    check(t["class"] == "running", t["headline"])
    t = json.loads(run([mt, "triage", "9103", "--workspace", ws, "--json", "--now", "2026-02-24T11:17:40Z"]).stdout)
    check(t["class"] == "hang" and t["hang"]["threshold_seconds"] == 600, t["headline"])
    human = run([mt, "triage", "9101", "--workspace", ws, "--now", "2026-02-24T11:00:00Z"]).stdout
    check(human.startswith("9101: completed"), human)
    # A log file path is triaged directly.
    run([mt, "triage", os.path.join(ws, "9101-JAX-completed.log"), "--json", "--now", "2026-02-24T11:00:00Z"])

    # Exit codes: 1 operation failed, 2 usage.
    run([mt, "triage", "424242", "--workspace", ws], want_rc=1)
    run([mt, "triage", "../outside.log", "--workspace", ws], want_rc=1)
    run([mt, "triage", "6666", "--workspace", ws], want_rc=1)       # no log inside the workspace
    run([mt, "triage", "9101", "--workspace", ws, "--now", "tuesday"], want_rc=2)
    run([mt, "triage", "--workspace", ws], want_rc=2)
    run([mt, "triage", "9101", "--bogus", "--workspace", ws], want_rc=2)
    run([mt, "jobs", "--workspace", os.path.join(ws, "nope")], want_rc=1)
    run([mt, "log", "9101", "--workspace", ws, "--lines", "9:3"], want_rc=2)
    run([mt, "log", "9101", "--workspace", ws, "--grep", "(bad"], want_rc=2)

    w = json.loads(run([mt, "log", "9102", "--workspace", ws, "--grep", "RESOURCE_EXHAUSTED", "--context", "1", "--json"]).stdout)
    check(w["matches"] == 2 and w["lines"][1]["line"] == 61 and w["lines"][1]["match"], w)
    w = json.loads(run([mt, "log", "9101", "--workspace", ws, "--lines", "-2:", "--json"]).stdout)
    check(w["returned"] == 2 and w["lines"][-1]["text"].startswith("====="), w)
    w = json.loads(run([mt, "log", "9101", "--workspace", ws, "--rank", "1", "--lines", "1:200", "--json"]).stdout)
    check(all(l["rank"] == 1 for l in w["lines"]) and w["returned"] > 0, w)
    text = run([mt, "log", "9101", "--workspace", ws, "--lines", "1:3"]).stdout
    check(text.splitlines()[0] == "1- JOB_ID=9001", text)


def serve(mt, ws):
    p = subprocess.Popen([mt, "serve", "--workspace", ws], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        def rpc(i, method, params):
            p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n")
            p.stdin.flush()
            return json.loads(p.stdout.readline())

        rpc(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}})
        p.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
        p.stdin.flush()
        tools = {t["name"]: t for t in rpc(2, "tools/list", {})["result"]["tools"]}
        for name in ("list_jobs", "triage_log", "read_log"):
            check(name in tools, f"{name} missing from tools/list")
            t = tools[name]
            check(t["annotations"]["readOnlyHint"] is True and t.get("title") and "outputSchema" in t, t)
        r = rpc(3, "tools/call", {"name": "triage_log", "arguments": {"job": "9104", "now": "2026-02-24T11:00:00Z"}})["result"]
        check(not r.get("isError") and r["structuredContent"]["class"] == "heartbeat", r)
        cli_out = json.loads(run([mt, "triage", "9104", "--workspace", ws, "--json", "--now", "2026-02-24T11:00:00Z"]).stdout)
        check(r["structuredContent"] == cli_out, "mt triage --json must print exactly the structuredContent")
        r = rpc(4, "tools/call", {"name": "triage_log", "arguments": {"job": "../outside.log"}})["result"]
        check(r.get("isError") and ".." in r["content"][0]["text"], r)
        r = rpc(5, "tools/call", {"name": "read_log", "arguments": {"job": "9102", "lines": "61:61"}})["result"]
        check(r["structuredContent"]["lines"][0]["text"].endswith("allocate 17.25GiB."), r)
        r = rpc(6, "tools/call", {"name": "list_jobs", "arguments": {"status": "completed", "now": "2026-02-24T10:20:00Z"}})["result"]
        check([j["id"] for j in r["structuredContent"]["jobs"]] == ["9101"], r)
        # Second call on an unchanged log is answered from the scan cache.
        r = rpc(7, "tools/call", {"name": "triage_log", "arguments": {"job": "9104", "now": "2026-02-24T11:00:00Z"}})["result"]
        check(r["_meta"]["mt/scan"]["from_cache"] is True, r.get("_meta"))
    finally:
        p.stdin.close()
        p.wait(timeout=30)


def demo(mt, ws):
    def triage(jid, after_mtime_s):
        logs = [f for f in os.listdir(ws) if f.startswith(jid + "-") and f.endswith(".log")]
        check(len(logs) == 1, f"{jid}: {logs}")
        m = os.stat(os.path.join(ws, logs[0])).st_mtime
        now = datetime.fromtimestamp(int(m) + after_mtime_s, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        return json.loads(run([mt, "triage", jid, "--workspace", ws, "--json", "--now", now]).stdout)

    t = triage("7877", 3600)
    check(t["class"] == "hang" and t["last_step"] == 3841 and t["hang"]["stalled"], t["headline"])
    t = triage("8043", 600)
    h = t["heartbeat"]
    check(t["class"] == "heartbeat_false_positive" and t["last_step"] == 71, t["headline"])
    check([(a["task"], a["host"]) for a in h["accused"]] == [(8, "chi2853"), (10, "chi2875")], h["accused"])
    check(all(a["logged_own_death"] for a in h["accused"]), h["accused"])
    check(h["timeout_seconds"] == 900 and h["heartbeat_stop_time"].endswith("19:06:00Z") and h["crash_time"].endswith("19:21:00Z"), h)
    check({"task": 9, "host": "chi2865"} in h["neighbours"], h["neighbours"])
    t = triage("8308", 60)
    ph = t["tgs"]["phases"]
    check(len(ph) == 4 and t["tgs"]["pattern"] == "phased" and t["tgs"]["degraded"], t["tgs"])
    for p, (start, end, mean) in zip(ph, [(0, 96, 3293), (97, 216, 2620), (217, 251, 3288), (252, None, 2520)]):
        check(p["start_step"] == start and (end is None or p["end_step"] == end) and abs(p["mean"] - mean) < 15, ph)
    t = triage("8309", 60)
    check(not t["tgs"]["degraded"] and abs(t["tgs"]["tail_mean"] - 3287) < 20, t["tgs"])
    a, b = triage("8101", 600), triage("8102", 600)
    check(a["rccl_init_waves"]["count"] + 2 == b["rccl_init_waves"]["count"], (a["rccl_init_waves"], b["rccl_init_waves"]))
    check(b["restored_from_step"] is not None and a["restored_from_step"] is None, "restore")
    check(abs(a["tgs"]["tail_mean"] - 3295) < 15 and abs(b["tgs"]["tail_mean"] - 3261) < 15, (a["tgs"], b["tgs"]))
    t = triage("7938", 600)
    check("tgs_degradation" in t["secondary"] or t["tgs"]["degradation_pct"] > 5, t["tgs"])
    check(440 <= t["tgs"]["decline_onset_step"] <= 480, t["tgs"])
    check(triage("8104", 600)["class"] == "completed", "8104")
    check(triage("8105", 600)["class"] == "oom", "8105")
    print("demo workspace: every case study triaged as the seed says")


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "build-workspace":
        build_workspace(sys.argv[2], sys.argv[3])
    elif cmd == "cli":
        cli(sys.argv[2], sys.argv[3])
    elif cmd == "serve":
        serve(sys.argv[2], sys.argv[3])
    elif cmd == "demo":
        demo(sys.argv[2], sys.argv[3])
    else:
        fail("unknown command " + cmd)
