#!/usr/bin/env python3
"""Every tool's answers agree with the schema it publishes, judged by an independent
validator (python3-jsonschema, Draft 2020-12), on the case-study workspace.

mt generates each tool's inputSchema and outputSchema from C++ types (mcp/typed.h) or, for
the answers not yet typed, writes them by hand; either way the dispatcher checks answers with
mt's own validator. This test does not trust that validator: it runs `mt serve` over stdio,
lists the tools, checks every schema is a valid JSON Schema, calls every tool with arguments
that exercise its modes on every case-study job, and validates each structuredContent with
jsonschema. It also checks that out-of-range arguments are refused with the argument named.

Usage: schema_agreement_checks.py MT WORKSPACE
"""
import json
import subprocess
import sys

import jsonschema

NOW = "2026-03-01T00:00:00Z"


def fail(msg):
    print("FAIL:", msg, file=sys.stderr)
    sys.exit(1)


class Session:
    def __init__(self, mt, ws):
        self.p = subprocess.Popen([mt, "serve", "--workspace", ws], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True)
        self.next_id = 1
        self.rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                "clientInfo": {"name": "schema-agreement", "version": "1"}})
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
        self.p.stdin.flush()

    def rpc(self, method, params):
        i = self.next_id
        self.next_id += 1
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n")
        self.p.stdin.flush()
        while True:
            line = self.p.stdout.readline()
            if not line:
                fail(f"mt serve closed stdout during {method}")
            msg = json.loads(line)
            if msg.get("id") == i:
                if "error" in msg:
                    fail(f"{method} {params}: {msg['error']}")
                return msg["result"]

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=60)


def jobs_of(s):
    r = s.rpc("tools/call", {"name": "list_jobs", "arguments": {"now": NOW}})
    return [j["id"] for j in r["structuredContent"]["jobs"]]


def calls(jobs):
    """(tool, arguments) pairs covering every tool and its modes."""
    out = [("list_jobs", {}), ("list_jobs", {"detail": "full", "now": NOW}), ("list_jobs", {"status": "failed", "limit": 2})]
    for j in jobs:
        out += [("triage_log", {"job": j, "now": NOW}), ("triage_log", {"job": j, "now": NOW, "detail": "full"}),
                ("read_log", {"job": j, "lines": "-20:"}), ("read_log", {"job": j, "grep": "error|Error", "context": 1}),
                ("perf_analysis", {"job": j, "now": NOW, "report": False}),
                ("query_tsdb", {"job": j, "mode": "playbook", "playbook": "auto"})]
    out += [("perf_analysis", {"job": jobs[0], "detail": "full", "warmup_steps": 0, "report": False})]
    for a, b in (("8101", "8102"), ("8308", "8309"), ("8104", "8105")):
        out += [("compare_jobs", {"jobs": [a, b], "now": NOW}), ("compare_jobs", {"jobs": [a, b], "tsdb": False})]
    out += [("compare_jobs", {"jobs": ["8101", "8102", "8308"], "detail": "full"}),
            ("query_tsdb", {"job": "8308", "mode": "discover"}),
            ("query_tsdb", {"job": "8308", "mode": "promql", "query": "avg by (host) (hw_gpu_power_watts)", "points": 5}),
            ("query_tsdb", {"job": "7877", "mode": "correlate", "training_step": 100}),
            ("query_tsdb", {"job": "8043", "mode": "playbook", "playbook": "heartbeat", "detail": "full"}),
            ("submit_job", {"model": "mixtral-8x22b", "nodes": 2, "backend": "local", "passthrough": ["steps=5"]}),
            ("cancel_job", {"job": "8101"}), ("run_sweep", {"sweep": "ci-smoke"}),
            # one look at a hung and a failed job (not mt's: a restart is reported unavailable),
            # then the status and the list of watches
            ("watch_job", {"job": "7877", "once": True, "hang_seconds": 600}),
            ("watch_job", {"job": "8105", "once": True}),
            ("watch_job", {"action": "status", "job": "7877"}), ("watch_job", {"action": "list"})]
    return out


# Arguments each schema must refuse, and the argument the refusal must name.
BAD = [("read_log", {"job": "8101", "rank": -1}, "rank"), ("list_jobs", {"limit": 501}, "limit"),
       ("perf_analysis", {"job": "8101", "warmup_steps": 100001}, "warmup_steps"),
       ("compare_jobs", {"jobs": ["8101"]}, "jobs"), ("query_tsdb", {"job": "8101", "mode": "sql"}, "mode"),
       ("triage_log", {"job": "8101", "surprise": 1}, "surprise"), ("submit_job", {"nodes": 0}, "nodes"),
       ("cancel_job", {"job": ""}, "job"), ("run_sweep", {"sweep": "../../etc/passwd"}, "sweep"),
       ("watch_job", {"action": "explode"}, "action"), ("watch_job", {"job": "7877", "interval_seconds": 0}, "interval_seconds")]


def main():
    mt, ws = sys.argv[1], sys.argv[2]
    s = Session(mt, ws)
    try:
        tools = {t["name"]: t for t in s.rpc("tools/list", {})["tools"]}
        validator = jsonschema.Draft202012Validator
        for name, t in tools.items():
            for key in ("inputSchema", "outputSchema"):
                if key not in t:
                    fail(f"{name} has no {key}")
                try:
                    validator.check_schema(t[key])
                except jsonschema.SchemaError as e:
                    fail(f"{name}.{key} is not a valid JSON Schema: {e.message}")
        jobs = jobs_of(s)
        if len(jobs) < 9:
            fail(f"expected the nine case-study jobs, got {jobs}")
        answered = {}
        for name, args in calls(jobs):
            if name not in tools:
                fail(f"{name} missing from tools/list")
            try:
                validator(tools[name]["inputSchema"]).validate(args)
            except jsonschema.ValidationError as e:
                fail(f"the test's own arguments for {name} {args} do not fit its inputSchema: {e.message}")
            r = s.rpc("tools/call", {"name": name, "arguments": args})
            if r.get("isError"):
                text = r["content"][0]["text"]
                if "outputSchema" in text:
                    fail(f"{name} {args}: mt's own check found an answer outside the schema: {text}")
                continue   # a tool error the model can act on (e.g. no TSDB, not mt's job): no structured answer
            sc = r.get("structuredContent")
            if sc is None:
                fail(f"{name} {args}: no structuredContent")
            errors = sorted(validator(tools[name]["outputSchema"]).iter_errors(sc), key=lambda e: list(e.path))
            if errors:
                e = errors[0]
                fail(f"{name} {args}: answer disagrees with its outputSchema at {'/'.join(map(str, e.path))}: {e.message}")
            answered[name] = answered.get(name, 0) + 1
        # cancel_job answers with the same plan view as submit_job (one type): a case-study job
        # was not launched by mt, so its cancel is refused with a specific error instead.
        if tools["cancel_job"]["outputSchema"] != tools["submit_job"]["outputSchema"]:
            fail("cancel_job and submit_job must publish the same plan-view schema")
        answered.setdefault("cancel_job", 0)
        # run_sweep is for role ci; this session is an agent's, so it is refused by role (its
        # answers are checked against the schema by mt itself in the sweep-slurm test).
        r = s.rpc("tools/call", {"name": "run_sweep", "arguments": {"sweep": "ci-smoke"}})
        if not r.get("isError") or "only a caller with role ci" not in r["content"][0]["text"]:
            fail(f"run_sweep from an agent must be refused by role, got {r}")
        answered.setdefault("run_sweep", 0)
        missing = sorted(n for n in set(tools) - set(answered))
        if missing:
            fail(f"tools never answered with a structured result: {missing}")
        for name, args, arg in BAD:
            r = s.rpc("tools/call", {"name": name, "arguments": args})
            text = r["content"][0]["text"]
            if not r.get("isError") or "Invalid arguments" not in text or arg not in text:
                fail(f"{name} {args}: expected 'Invalid arguments' naming {arg}, got {text!r}")
        print("answers checked against their schemas:", json.dumps(answered, sort_keys=True))
    finally:
        s.close()


if __name__ == "__main__":
    main()
