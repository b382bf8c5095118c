"""Assertions for perf_compare_test.sh: `mt compare` / `mt perf --json` (== structuredContent)
on the case-study workspace (8101 vs 8102, 8308 vs 8309, 8104), the log-only fallback,
two runs that differ only by noise (no false positives), bad input and exit codes."""
import json
import os
import subprocess
import sys

MT, WS, NOTSDB_WS, TWINS_WS = sys.argv[1:5]
NOW = "2026-03-05T00:00:00Z"
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def run(*args, ws=WS, expect=0):
    p = subprocess.run([MT, *args, "--workspace", ws], capture_output=True, text=True, timeout=600)
    if p.returncode != expect:
        print(p.stdout[-3000:], p.stderr[-3000:])
    check(p.returncode == expect, f"mt {' '.join(args)} exits {expect} (got {p.returncode})")
    return p


def runj(*args, ws=WS):
    p = run(*args, "--json", "--now", NOW, ws=ws)
    check(len(p.stdout) / 4 <= 2000, f"mt {' '.join(args)}: answer within 2,000 tokens ({len(p.stdout) // 4})")
    return json.loads(p.stdout)


def log_item(out, item):
    return next((d for d in out["log_diff"] if d["item"] == item), None)


# ---- 8101 (A) vs 8102 (B): the 1 % mystery ---------------------------------------------------
c = runj("compare", "8101", "8102")
print("verdict:", c["verdict"])
check(c["a"] == "8101" and c["b"] == "8102", "8101 vs 8102: A and B in order")
check(round(c["tgs"]["delta_pct"], 1) == -1.0, f"8101 vs 8102: TGS -1.0 % ({c['tgs']['delta_pct']})")
check(abs(c["tgs"]["a"] - 3295) < 10 and abs(c["tgs"]["b"] - 3261) < 10, f"TGS ~3295 vs ~3261 ({c['tgs']['a']}, {c['tgs']['b']})")
check(c["tgs"]["significant"] and c["tgs"]["steps"][0] >= 206, f"steady overlap starts after B's warm-up ({c['tgs']['steps']})")
check(c["tsdb"]["used"], "8101 vs 8102: both TSDBs swept")
top = c["metrics"][0]
check(top["metric"] == "hw_procs_running", f"hw_procs_running ranked first ({top['metric']})")
check(abs(top["a"] - 18) < 2 and abs(top["b"] - 35) < 2, f"~18 vs ~35 per host ({top['a']} vs {top['b']})")
check(top["hosts_consistent"] and top["significant"] and top["pattern"] == "uniform", "uniform across hosts, significant")
check(top["hosts_compared"] == "24/24", f"all 24 hosts compared ({top['hosts_compared']})")
w = log_item(c, "rccl_init_waves")
check(w is not None and w["a"] == 3 and w["b"] == 5, f"RCCL init waves 3 vs 5 ({w})")
check(w is not None and "restore" in w["note"], "the two extra waves are tied to the restore")
keys = {d["key"]: d for d in c["config_diff"]}
check(keys.get("enable_single_replica_ckpt_restoring", {}).get("b") == "true", "config diff names the single-replica restore")
check("hw_procs_running" in c["verdict"] and "-1.0 %" in c["verdict"], "verdict says it")
check(c["significant"] and c["family"] == "cpu_contention" and c["uniform"] and c["culprits"] == [],
      f"8101 vs 8102 diagnosis: a uniform cpu_contention difference, no host blamed ({c['family']}, {c['why']})")

# ---- 8308 vs 8309: RDMA retransmits on four hosts, different node counts ---------------------
c = json.loads(run("compare", "8308", "8309", "--json").stdout)   # judged at each TSDB's end
print("verdict:", c["verdict"])
top = c["metrics"][0]
check(top["metric"] == "hw_rdma_tx_retx_pkts_total", f"per-host RDMA retransmits ranked first ({top['metric']})")
hosts = [h["host"] for h in top.get("hosts", [])]
check(sorted(hosts) == ["chi2822", "chi2834", "chi2835", "chi2882"], f"names the four hosts ({hosts})")
check(top["pattern"] == "hosts" and not top["hosts_consistent"], "a few hosts, not a uniform shift")
check(all(h in c["verdict"] for h in ("chi2822", "chi2834", "chi2835", "chi2882")), "verdict names them")
hd = next((d for d in c["config_diff"] if d["kind"] == "hosts"), None)
check(hd is not None and sorted(hd["a"].split(",")) == ["chi2822", "chi2834", "chi2835", "chi2882"],
      f"config diff: the hosts only 8308 ran on ({hd})")
check([j["status"] for j in c["jobs"]] == ["running", "running"], "both judged at the end of their TSDB data: running")
check(c["tgs"]["delta_pct"] > 5, f"8309 faster than 8308 over the overlap ({c['tgs']['delta_pct']} %)")
got = sorted((k["host"], k["job_side"]) for k in c["culprits"])
check(c["significant"] and c["family"] == "rdma" and not c["uniform"] and
      got == [("chi2822", "a"), ("chi2834", "a"), ("chi2835", "a"), ("chi2882", "a")],
      f"8308 vs 8309 diagnosis: rdma on the four hosts of 8308 ({c['family']}, {got})")

# ---- 8104: perf_analysis ----------------------------------------------------------------------
p = runj("perf", "8104")
print("verdict:", p["verdict"])
check(abs(p["steady"]["tgs"] - 1020) < 15, f"8104 steady TGS ~1,020 ({p['steady']['tgs']})")
check(p["steps"]["entries_per_step"] == 8, f"8 entries per step ({p['steps']['entries_per_step']})")
check(p["steady"]["first_step"] == 5, "warm-up: first 5 steps excluded")
check(p["steady"]["mfu_pct"] is not None and p["mfu"]["source"] in ("log", "computed"), f"MFU {p['steady']['mfu_pct']} ({p['mfu']['source']})")
check(p["status"] == "completed", "8104 completed")
check(len(p["artifacts"]["tensorboard_event_files"]) == 1 and p["artifacts"]["tensorboard_event_files"][0]["records"] > 60,
      f"its TensorBoard event file found with records ({p['artifacts']['tensorboard_event_files']})")
check(p["report"] is not None and os.path.isfile(os.path.join(WS, p["report"]["path"])), "HTML report written")
check(p["report"]["url"].startswith("/reports/8104-"), f"report URL ({p['report']['url']})")
# The profiler trace mt-simtrain writes for 8104 (node 0's xplane, steps 5-7, 8 GPUs):
# the scenario sets compute 78 % and exposed communication 9 % of the step's wall time; the
# GPU window leaves out the host's idle head and tail, so the shares it reports are higher.
t = p["trace"]
check(t is not None and t["format"] == "xplane" and len(t["ranks"]) == 8, f"8104 trace: xplane, 8 GPUs as ranks ({t and t['format']})")
check(t["steps"] == 3 and t["steady_steps"] == 2, f"3 profiled steps, 2 steady ({t['steps']}, {t['steady_steps']})")
check(78 <= t["compute_pct"] <= 90 and 8 <= t["exposed_comm_pct"] <= 12 and t["idle_pct"] < 12,
      f"decomposition: compute {t['compute_pct']} %, exposed comm {t['exposed_comm_pct']} %, idle {t['idle_pct']} %")
check(abs(t["compute_pct"] + t["exposed_comm_pct"] + t["memcpy_pct"] + t["idle_pct"] - 100) < 0.5, "the parts add up to the step")
check(len(t["top_kernels"]) == 5 and any("Cijk_" in k["name"] for k in t["top_kernels"]) and any("_attn_bwd" == k["name"] for k in t["top_kernels"]),
      f"top kernels: GEMMs and flash attention ({[k['name'][:20] for k in t['top_kernels']]})")
check(sorted(c["kind"] for c in t["collectives"]) == ["AllGather", "ReduceScatter"], f"collectives by kind ({t['collectives']})")
check(t["straggler_verdict"] == "balanced" and t["next"], f"no straggler; next steps given ({t['straggler_verdict']})")
text = run("perf", "8104").stdout
check("trace (xplane" in text and "_attn_bwd" in text, "mt perf 8104 prints the decomposition and the top kernels")
# compare_jobs with both jobs' traces: 9204 is 8104 with GPU 3 slowed 30 % while profiled.
c = runj("compare", "8104", "9204", "--no-tsdb")
ct = c["trace"]
check(ct is not None and ct["a_straggler"] == "balanced" and ct["b_straggler"] == "straggler 3",
      f"compare 8104 9204: traces of both, 9204's GPU 3 named ({ct and (ct['a_straggler'], ct['b_straggler'])})")
ex = next(x for x in ct["categories"] if x["category"] == "exposed_comm")
check(ex["b_pct"] > ex["a_pct"] + 5, f"rank 0 waits longer in 9204: exposed communication {ex['a_pct']} -> {ex['b_pct']} %")
check("exposed_comm" in ct["summary"], f"the diff's summary names the change ({ct['summary']})")
p2 = runj("perf", "8104", "--gpu", "MI355X", "--dtype", "fp8")
check(p2["mfu"]["source"] == "computed" and p2["mfu"]["peak_tflops"] == 5000, f"MFU computed from the MI355X fp8 peak ({p2['mfu']})")
check(abs(p2["steady"]["mfu_pct"] - 100 * p2["steady"]["tflops_per_device"] / 5000) < 0.01, "MFU = TFLOP/s / peak")
p3 = runj("perf", "8101")
check(p3["periodic_overhead"]["detected"] and p3["periodic_overhead"]["period_steps"] == 100,
      f"8101: checkpoint every 100 steps found ({p3['periodic_overhead']})")
check(p3["periodic_overhead"]["at_checkpoints"] >= 3, "the spikes are at checkpoint saves")

# ---- the log-only fallback ---------------------------------------------------------------------
c = runj("compare", "8101", "8102", ws=NOTSDB_WS)
check(not c["tsdb"]["used"] and "TSDB" in c["tsdb"]["reason"], f"no TSDB: says so ({c['tsdb'].get('reason')})")
check(any("compared from the logs only" in n for n in c["notes"]), "notes: compared from the logs only")
check(round(c["tgs"]["delta_pct"], 1) == -1.0 and log_item(c, "rccl_init_waves")["b"] == 5, "still TGS -1.0 % and 5 vs 3 waves")
check(c["metrics"] == [], "no metrics without a TSDB")

# ---- identical jobs: no false positives --------------------------------------------------------
c = runj("compare", "9201", "9202", ws=TWINS_WS)
print("verdict:", c["verdict"])
check(c["tsdb"]["used"], "twins: TSDBs swept")
check(c["metrics_significant"] == 0, f"twins: nothing significant ({[m['metric'] for m in c['metrics'] if m['significant']]})")
check(not c["tgs"]["significant"] and abs(c["tgs"]["delta_pct"]) < 0.2, f"twins: TGS within noise ({c['tgs']['delta_pct']} %)")
check("within noise" in c["verdict"], "twins: verdict says within noise")
check(not [d for d in c["log_diff"] if d["item"] == "rccl_init_waves"], "twins: same RCCL waves")

# ---- different node counts (24 vs 20 hosts, same config) --------------------------------------
c = runj("compare", "9201", "9203", ws=TWINS_WS)
print("verdict:", c["verdict"])
check(any("different node counts (24 vs 20)" in n for n in c["notes"]), "24 vs 20 nodes noted")
check(c["tgs"]["comparable"] and not c["tgs"]["significant"], f"per-device TGS comparable, within noise ({c['tgs']['delta_pct']} %)")
check(c["metrics_significant"] == 0, f"24 vs 20 hosts of the same config: nothing significant ({[m['metric'] for m in c['metrics'] if m['significant']]})")

# ---- bad input ---------------------------------------------------------------------------------
p = run("compare", "8101", expect=2)
check("expected 2 to 8 jobs" in p.stderr, "one job: usage error")
p = run("compare", "8101", "nope", expect=1)
check("nope" in p.stderr, f"unknown job named ({p.stderr.strip()[:120]})")
p = run("compare", "8101", "../../etc", expect=1)
check(p.stderr.strip() != "", "escape refused with a message")
p = run("compare", "8101", "8101", expect=2)
check("twice" in p.stderr, "the same job twice")
p = run("perf", "nope", expect=1)
p = run("perf", "8104", "--warmup-steps", "x", expect=2)
p = run("perf", "8104", "--dtype", "int4", expect=2)

# ---- the same tools over a real `mt serve` stdio session ------------------------------------------
srv = subprocess.Popen([MT, "serve", "--workspace", WS], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, text=True, bufsize=1)


def rpc(i, method, params):
    srv.stdin.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n")
    srv.stdin.flush()
    while True:
        msg = json.loads(srv.stdout.readline())
        if msg.get("id") == i:
            return msg


rpc(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}})
srv.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
tools = {t["name"]: t for t in rpc(2, "tools/list", {})["result"]["tools"]}
check("perf_analysis" in tools and "compare_jobs" in tools, "tools/list has perf_analysis and compare_jobs")
check(tools["compare_jobs"]["annotations"].get("readOnlyHint") is True, "compare_jobs is read-only")
check(tools["perf_analysis"]["annotations"].get("readOnlyHint") is False, "perf_analysis says it writes (its report)")
r = rpc(3, "tools/call", {"name": "compare_jobs", "arguments": {"jobs": ["8101", "8102"], "now": NOW}})["result"]
cli = runj("compare", "8101", "8102")
check(not r.get("isError") and r["structuredContent"] == cli, "compare_jobs over MCP == mt compare --json")
check("hw_procs_running" in r["content"][0]["text"], "its text names the top metric")
r = rpc(4, "tools/call", {"name": "perf_analysis", "arguments": {"job": "8104", "now": NOW}})["result"]
check(not r.get("isError") and r["structuredContent"] == runj("perf", "8104"), "perf_analysis over MCP == mt perf --json")
r = rpc(5, "tools/call", {"name": "compare_jobs", "arguments": {"jobs": ["8101", "../../etc"]}})
res = r.get("result", {})
check(res.get("isError") is True or "error" in r, f"a job outside the workspace is an error result ({str(r)[:160]})")
r = rpc(6, "tools/call", {"name": "compare_jobs", "arguments": {"jobs": ["8101"]}})
check(r.get("result", {}).get("isError") is True or "error" in r, "one job is refused by the schema")
r = rpc(7, "tools/call", {"name": "perf_analysis", "arguments": {"job": "8104", "warmup_steps": -3}})
check(r.get("result", {}).get("isError") is True or "error" in r, "negative warmup_steps refused")
srv.stdin.close()
check(srv.wait(timeout=60) == 0, "mt serve exits cleanly")

if failures:
    print(f"{len(failures)} FAILED")
    sys.exit(1)
print("all perf/compare checks passed")
