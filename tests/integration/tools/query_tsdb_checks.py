"""Assertions for query_tsdb_test.sh: `mt query --json` (== structuredContent) on the
case studies, bad inputs with their exit codes and messages, and the tool over a real
`mt serve` stdio session (Prometheus killed mid-session, stopped when the server exits)."""
import json
import os
import shutil
import signal
import subprocess
import sys
import time

MT, WS, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def mt(*args, expect=0):
    p = subprocess.run([MT, "query", *args, "--workspace", WS], capture_output=True, text=True, timeout=300)
    if p.returncode != expect:
        print(p.stdout[-2000:], p.stderr[-2000:])
    check(p.returncode == expect, f"mt query {' '.join(args)} exits {expect} (got {p.returncode})")
    return p


def mtj(*args):
    p = mt(*args, "--json")
    out = json.loads(p.stdout)
    # Default answers stay within 2,000 tokens (~4 bytes a token).
    check(len(p.stdout) / 4 <= 2000, f"{args[0]} {args[1:]} answer within 2,000 tokens ({len(p.stdout) // 4})")
    return out


def finding(out, word):
    return next(f for f in out["findings"] if word in f["rule"])


def snapshot(job):
    d = next(os.path.join(WS, x) for x in os.listdir(WS) if x.startswith(job + "-") and os.path.isdir(os.path.join(WS, x)))
    out = {}
    for root, dirs, files in os.walk(d):
        for n in dirs + files:
            st = os.lstat(os.path.join(root, n))
            out[os.path.join(root, n)] = (st.st_size, st.st_mtime_ns)
    return out


untouched = {j: snapshot(j) for j in ("7877", "8308", "8043")}

# ---- 7877: hang ---------------------------------------------------------------------------
h = mtj("7877", "--playbook", "hang")
util, power = finding(h, "utilization")["evidence"], finding(h, "power")["evidence"]
check(util["n"] == 192 and util["min"] >= 95, f"7877: all 192 GPUs ~100 % utilized (min {util['min']})")
check(power["n"] == 192 and 250 <= power["mean"] <= 350 and power["max"] < 450,
      f"7877: ~300 W on every GPU (mean {power['mean']}, max {power['max']})")
check(power["before_mean_w"] > 800, f"7877: ~900 W before the hang ({power['before_mean_w']})")
check(finding(h, "network clean")["verdict"] == "clean", "7877: clean network")
check("busy-wait hang" in h["verdict"] and power["power_fell_at"] is not None and power["power_fell_at"] in h["verdict"],
      f"7877 verdict names the busy-wait hang and when power fell: {h['verdict']}")
check(power["power_fell_at"].startswith("2026-02-11T17:1"), f"7877: power fell at the last step (~17:15Z): {power['power_fell_at']}")
auto = mtj("7877", "--playbook", "auto")
check(auto["playbook"] == "hang", "7877: --playbook auto picks hang from triage")
check(auto["family"] == "collective_hang" and auto["culprits"] == [] and auto["attribution"]["symptom"]["kind"] == "stop",
      f"7877 auto: a stop attributed to a collective hang, no host blamed ({auto['family']}, {auto['culprits']})")

# ---- playbook auto's attribution on every case study: family and culprit hosts ------------------
for job, family, culprits, playbook in [("8308", "rdma", ["chi2822", "chi2834", "chi2835", "chi2882"], "network_health"),
                                        ("8309", "none", [], "training_stability"), ("8043", "none", [], "heartbeat"),
                                        ("7938", "training", [], "training_stability")]:
    a = mtj(job, "--playbook", "auto")
    got = sorted(c["host"] for c in a["culprits"])
    check(a["family"] == family and got == culprits and a["playbook"] == playbook,
          f"{job} auto: family {a['family']}, culprits {got}, playbook {a['playbook']} "
          f"({a['attribution']['playbook_chosen_because'][:120]})")
    for c in a["culprits"]:
        check(c["family"] == family and 0 < c["confidence"] <= 1 and c["onset"].startswith("20"), f"{job}: culprit {c}")

# ---- 8308 / 8309: network_health and correlate ------------------------------------------------
n = mtj("8308", "--playbook", "network_health")
hosts = [e["host"] for e in finding(n, "RDMA retransmits")["evidence"]["hosts"]]
check(sorted(hosts) == ["chi2822", "chi2834", "chi2835", "chi2882"], f"8308: exactly the four RDMA hosts ({hosts})")
totals = [e["rdma_retx_packets"] for e in finding(n, "RDMA retransmits")["evidence"]["hosts"]]
check(totals == sorted(totals, reverse=True) and totals[-1] > 0, f"8308: ranked by severity ({totals})")
check(n["verdict"].find(", ".join(hosts)) >= 0, "8308: verdict lists them in that order")
phases = finding(n, "TGS phases")["evidence"]["phases"]
by_start = {p["steps"][0]: p["hosts"] for p in phases}
check(by_start.get(97) == ["chi2822"], f"8308: TGS phase 97-216 tied to chi2822 ({by_start.get(97)})")
check(by_start.get(0) == [] and by_start.get(217) == [], "8308: the healthy phases have no host")
check(sorted(by_start.get(252, [])) == ["chi2834", "chi2835", "chi2882"], f"8308: phase 252+ tied to the other three ({by_start.get(252)})")
c97 = mtj("8308", "--correlate", "97")
check({o["host"] for o in c97["outliers"]} == {"chi2822"}, f"8308 correlate at step 97: only chi2822 ({c97['verdict']})")
c251 = mtj("8308", "--correlate", "260")
top3 = [o["host"] for o in c251["outliers"]][:6]
check({"chi2834", "chi2835", "chi2882"} <= set(top3), f"8308 correlate at step 260: the three hosts lead ({top3})")
clean = mtj("8309", "--playbook", "network_health")
check(clean["verdict"].startswith("Network clean") and clean["outliers"] == [], f"8309: clean ({clean['verdict']})")

# ---- 8043: heartbeat false positive --------------------------------------------------------------
hb = mtj("8043", "--playbook", "heartbeat")
rows = finding(hb, "busy until the crash")["evidence"]["hosts"]
accused = sorted(r["host"] for r in rows if r["role"] == "accused")
check(accused == ["chi2853", "chi2875"], f"8043: accused hosts from triage ({accused})")
check(all(r["power_w"] > 800 for r in rows) and len(rows) >= 4, f"8043: accused + neighbours ~900 W ({[r['power_w'] for r in rows]})")
net = finding(hb, "retransmit")["evidence"]
check(net["tcp_retx_max_per_s"] < 1 and net["rdma_retx_packets"] == 0, f"8043: near-zero retransmits ({net})")
check(hb["window"] == {"start": "2026-02-24T19:06:00Z", "end": "2026-02-24T19:21:00Z"}, f"8043: the 15 min before the crash ({hb['window']})")
check(hb["verdict"].startswith("Confirmed false positive"), f"8043: {hb['verdict']}")

# ---- 7938: training stability -------------------------------------------------------------------
ts = mtj("7938", "--playbook", "training_stability")
fams = finding(ts, "contention checklist")
check(fams["verdict"] == "clean", f"7938: every system family clean ({fams['verdict']})")
lb = finding(ts, "moe_lb_loss changes")["evidence"]
check(lb["lb_loss_change_step"] == 450, f"7938: tb_learning_moe_lb_loss changes at step 450 ({lb})")
check(abs(lb["tgs_decline_onset_step"] - 450) <= 40, f"7938: where TGS starts declining ({lb['tgs_decline_onset_step']})")
tgs = finding(ts, "TGS")["evidence"]
check(tgs["change_pct"] < -10, f"7938: TGS declined > 10 % ({tgs['change_pct']} %)")

# ---- discover and promql ------------------------------------------------------------------------
d = mtj("8309", "--discover")
check(len(d["hosts"]) == 24 and d["findings"][0]["verdict"] == "match", f"8309 discover: 24 hosts, tb_step matches the log ({d['verdict']})")
prefixes = {f["prefix"] for f in d["families"]}
check({"hw_gpu_", "hw_rdma_", "tb_", "ray_node_"} <= prefixes, f"discover groups families by prefix ({sorted(prefixes)})")
q = mtj("8308", "--promql", "sum by (host) (rate(hw_rdma_tx_retx_pkts_total[5m]))", "--start", "2026-02-26T09:31:30Z",
        "--end", "2026-02-26T10:59:00Z", "--points", "5")
check(q["series_total"] == 24 and len(q["points"]["values"]) == 5, "promql range: 24 series summarised, 5 raw points")
check(q["host_ranking"][0]["host"] in ("chi2834", "chi2835", "chi2882"), f"promql host ranking ({q['host_ranking'][:2]})")
big = mtj("7877", "--promql", "hw_gpu_power_watts", "--start", h["tsdb"]["data_start"], "--end", "2026-02-11T19:15:00Z", "--step", "1")
check(any("downsampled" in x for x in big["notes"]) and big["series_total"] == 192,
      f"millions of points: downsampled with a message ({big['notes']})")


# ---- live: a running job's own Prometheus is queried in place, no second one started -------------
def prometheus_pids(under=WORK):
    pids = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if "--storage.tsdb.path=" + under in cmd:
            pids.append(int(pid))
    return pids


import socket
live_ws = os.path.join(WORK, "live-ws")
os.makedirs(live_ws)
src = next(x for x in os.listdir(WS) if x.startswith("8308-") and os.path.isdir(os.path.join(WS, x)))
shutil.copytree(os.path.join(WS, src), os.path.join(live_ws, src), symlinks=True)
sock = socket.socket()
sock.bind(("127.0.0.1", 0))
port = sock.getsockname()[1]
sock.close()
with open(os.path.join(WS, src + ".log")) as f:
    text = f.read()
check("[Prometheus] Started on port 9190" in text, "8308 log names its Prometheus port")
with open(os.path.join(live_ws, src + ".log"), "w") as f:
    f.write(text.replace("[Prometheus] Started on port 9190", f"[Prometheus] Started on port {port}"))
with open(os.path.join(WORK, "live.yml"), "w") as f:
    f.write("global:\n  scrape_interval: 999h\nscrape_configs: []\n")
live_tsdb = os.path.join(live_ws, src, "prometheus")
live = subprocess.Popen(["prometheus", "--config.file=" + os.path.join(WORK, "live.yml"), "--storage.tsdb.path=" + live_tsdb,
                         "--storage.tsdb.retention.time=100y", f"--web.listen-address=127.0.0.1:{port}"],
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
try:
    import urllib.request
    for _ in range(300):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/-/ready", timeout=1)
            break
        except Exception:
            time.sleep(0.05)
    p = subprocess.run([MT, "query", "8308", "--workspace", live_ws, "--playbook", "network_health", "--json"],
                       capture_output=True, text=True, timeout=300)
    check(p.returncode == 0, f"live 8308 answers ({p.stderr.strip()[:200]})")
    lv = json.loads(p.stdout)
    check(lv["tsdb"]["source"] == "live" and str(port) in lv["tsdb"].get("note", ""), f"live job: its own Prometheus on port {port} ({lv['tsdb']})")
    check(len(finding(lv, "RDMA retransmits")["evidence"]["hosts"]) == 4, "live job: same four hosts")
    check(prometheus_pids(os.path.join(WORK, "tmp")) == [], "live job: no private Prometheus started")
finally:
    live.terminate()
    live.wait(timeout=30)

for j, snap in untouched.items():
    check(snapshot(j) == snap, f"{j}: the job directory is untouched by the queries (private copies only)")

# ---- bad input ----------------------------------------------------------------------------------
p = mt("8309", "--promql", "sum(rate(hw_tcp_retransmits_total[5m]) by", expect=1)
check("bad_data" in p.stderr and "parse error" in p.stderr, f"invalid PromQL: Prometheus's message ({p.stderr.strip()[:160]})")
p = mt("8309", "--discover", "--prometheus", "/nonexistent/prometheus", expect=1)
check("not found" in p.stderr, f"no prometheus binary ({p.stderr.strip()[:120]})")
p = mt("8309", "--playbook", "nonsense", expect=2)
p = mt("8309", expect=2)
job = next(x for x in os.listdir(WS) if x.startswith("8309-") and os.path.isdir(os.path.join(WS, x)))
tsdb = os.path.join(WS, job, "prometheus")
shutil.move(tsdb, tsdb + ".aside")
p = mt("8309", "--discover", expect=1)
check("no TSDB directory" in p.stderr, f"missing TSDB ({p.stderr.strip()[:120]})")
os.mkdir(tsdb)
p = mt("8309", "--discover", expect=1)
check("no blocks" in p.stderr, f"empty TSDB ({p.stderr.strip()[:120]})")
os.rmdir(tsdb)
shutil.copytree(tsdb + ".aside", tsdb)
block = next(b for b in sorted(os.listdir(tsdb)) if len(b) == 26)
with open(os.path.join(tsdb, block, "meta.json"), "w") as f:
    f.write("{corrupt")
p = mt("8309", "--discover", expect=1)
check("meta.json" in p.stderr and block in p.stderr, f"corrupt TSDB ({p.stderr.strip()[:120]})")
shutil.rmtree(tsdb)
shutil.move(tsdb + ".aside", tsdb)

# ---- over MCP: mt serve (stdio), a Prometheus killed mid-session ---------------------------------
srv = subprocess.Popen([MT, "serve", "--workspace", WS], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
rid = 0


def rpc(method, params=None, notify=False):
    global rid
    msg = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        msg["params"] = params
    if not notify:
        rid += 1
        msg["id"] = rid
    srv.stdin.write(json.dumps(msg) + "\n")
    srv.stdin.flush()
    if notify:
        return None
    while True:
        line = srv.stdout.readline()
        if not line:
            raise RuntimeError("mt serve closed stdout")
        m = json.loads(line)
        if m.get("id") == rid:
            return m


rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "it", "version": "1"}})
rpc("notifications/initialized", notify=True)
tools = {t["name"]: t for t in rpc("tools/list")["result"]["tools"]}
qt = tools.get("query_tsdb")
check(qt is not None and qt["annotations"]["readOnlyHint"] is True and qt["annotations"]["openWorldHint"] is False,
      "tools/list: query_tsdb, readOnlyHint true, openWorldHint false")
r = rpc("tools/call", {"name": "query_tsdb", "arguments": {"job": "8309", "mode": "promql", "query": "rate(("}})["result"]
check(r.get("isError") is True and "parse error" in r["content"][0]["text"], "MCP: invalid PromQL is an isError result with Prometheus's message")
r = rpc("tools/call", {"name": "query_tsdb", "arguments": {"job": "8309", "mode": "discover"}})["result"]
check(not r.get("isError") and r["structuredContent"]["mode"] == "discover", "MCP: discover answers with structuredContent")
pids = prometheus_pids()
check(len(pids) == 1, f"one Prometheus for the session ({pids})")
r = rpc("tools/call", {"name": "query_tsdb", "arguments": {"job": "8309", "mode": "playbook", "playbook": "network_health"}})["result"]
check(prometheus_pids() == pids and not r.get("isError"), "reused on the next call")
os.kill(pids[0], signal.SIGKILL)
r = rpc("tools/call", {"name": "query_tsdb", "arguments": {"job": "8309", "mode": "playbook", "playbook": "network_health"}})["result"]
check(not r.get("isError") and r["structuredContent"]["verdict"].startswith("Network clean"), "after a kill the next call restarts Prometheus")
after = prometheus_pids()
check(len(after) == 1 and after != pids, f"a new Prometheus ({after})")
r = rpc("tools/call", {"name": "query_tsdb", "arguments": {"job": "8309", "mode": "correlate"}})["result"]
check(r.get("isError") is True, "MCP: correlate without time/step is an isError result")
srv.stdin.close()
srv.wait(timeout=60)
for _ in range(50):
    if not prometheus_pids():
        break
    time.sleep(0.1)
check(prometheus_pids() == [], "mt serve exit stops its Prometheus")

print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
