#!/usr/bin/env python3
"""The "central store" pattern with real components, and checks that data arrives there.

Topology (all on loopback, free ports from binding port 0, each process started and stopped by
PID here; every PID is also written to WORKDIR/pids so the bash driver can stop leftovers):

  exposition_replayer.py  6 virtual hosts, one port each: 4 x dcgm-exporter (8 x H100),
                          2 x AMD device-metrics-exporter (8 x MI300X; one with the amd_ prefix)
  prometheus-node-exporter  the real one, collectors netstat/stat/loadavg/meminfo/vmstat/textfile
  prometheus --enable-feature=agent  x2 ("agent-a", "agent-b"), each scraping half of the hosts
                          (agent-a also the node exporter) every 1 s, remote_write to:
  prometheus --web.enable-remote-write-receiver  the central store, queried over its HTTP API

After a healthy baseline the checks inject, through the replayer's control port: a thermal fault
on one dcgm host and on the prefixed AMD host (temperature up, clocks and power down), XID 45 on
one GPU of another dcgm host, and a dead host (stops listening). They then check, on the central
store only, that every host's series arrived with their own instance/Hostname labels and that each
fault is visible there from its time on and nowhere else; then `mt query ... --source central`
(discover, promql) against the same store.

  central_store_checks.py MT MT_SIMTRAIN WORKDIR FIXTURES_DIR

MT / MT_SIMTRAIN may be "-" (or missing files): the mt part is then skipped and says so.
Env: MT_CENTRAL_TEST_BUDGET (seconds, default 150): a hard bound on the whole run.
"""
import atexit
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.parse
import urllib.request

MT, SIM, WORK, FIXTURES = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
HERE = os.path.dirname(os.path.abspath(__file__))
T_START = time.time()
BUDGET = float(os.environ.get("MT_CENTRAL_TEST_BUDGET", "150"))
BASELINE_S = 8     # healthy data before the faults
AFTER_S = 10       # data after the faults
RAMP_S = 2.0       # thermal ramp (replayer)
failures = []
procs = []         # (name, Popen, long-running?)
phases = []        # (name, seconds since start)


class Budget(Exception):
    pass


def on_alarm(*_):
    raise Budget(f"the test ran past its budget of {BUDGET:.0f} s")


def on_term(signum, _):
    raise SystemExit(128 + signum)


signal.signal(signal.SIGALRM, on_alarm)
signal.signal(signal.SIGTERM, on_term)
signal.alarm(int(BUDGET))


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)
    return cond


def phase(name):
    phases.append((name, time.time() - T_START))
    print(f"---- {name} ({time.time() - T_START:.1f} s)", flush=True)


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib"))
from free_ports import free_port  # noqa: E402  (below the ephemeral range: see there why)


def start(name, cmd, daemon=True):
    log = open(os.path.join(WORK, f"{name}.log"), "w")
    p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    procs.append((name, p, daemon))
    with open(os.path.join(WORK, "pids"), "a") as f:
        f.write(f"{p.pid} {name}\n")
    return p


def stop_all():
    """Newest first (the agents before the store they write to), each SIGTERM then SIGKILL."""
    for name, p, _ in reversed(procs):
        if p.poll() is None:
            p.terminate()
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                print(f"{name} (pid {p.pid}) ignored SIGTERM for 10 s; killing", flush=True)
                p.kill()
                p.wait(timeout=5)


atexit.register(stop_all)


def wait_until(what, fn, timeout, interval=0.5):
    """fn() -> truthy when done; bounded by timeout (and the global budget). Returns fn's last value."""
    end = time.time() + timeout
    last = None
    while True:
        try:
            last = fn()
        except (OSError, ValueError, KeyError) as e:
            last = None
            err = e
        else:
            err = None
        if last:
            return last
        if time.time() >= end:
            print(f"     gave up waiting {timeout:.0f} s for: {what}" + (f" (last error: {err})" if err else ""), flush=True)
            return last
        for name, p, daemon in procs:
            if daemon and p.poll() is not None:
                raise RuntimeError(f"{name} exited with {p.returncode} while waiting for {what}; see {WORK}/{name}.log")
        time.sleep(interval)


def http_get(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read().decode()


def http_post_json(url, obj, timeout=5):
    req = urllib.request.Request(url, data=json.dumps(obj).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read())


def prom(path, **params):
    q = urllib.parse.urlencode(params, doseq=True)
    a = json.loads(http_get(f"{CENTRAL}{path}?{q}"))
    if a.get("status") != "success":
        raise ValueError(f"{path}: {a}")
    return a["data"]


def instant(query, t=None):
    params = {"query": query}
    if t is not None:
        params["time"] = f"{t:.3f}"
    return prom("/api/v1/query", **params)["result"]


def vector(query, t=None, key=None):
    """{label value (or tuple of values) -> float} of an instant vector."""
    out = {}
    for s in instant(query, t):
        m = s["metric"]
        k = tuple(m.get(x, "") for x in key) if isinstance(key, (list, tuple)) else m.get(key, "") if key else ""
        out[k] = float(s["value"][1])
    return out


def matrix(query, start, end, key):
    """{label value -> [(t, v)]} of a range query, 1 s step."""
    res = prom("/api/v1/query_range", query=query, start=f"{start:.3f}", end=f"{end:.3f}", step="1")["result"]
    return {s["metric"].get(key, ""): [(float(t), float(v)) for t, v in s["values"]] for s in res}


def series(match, start, end):
    return prom("/api/v1/series", **{"match[]": match, "start": f"{start:.3f}", "end": f"{end:.3f}"})


def iso(t):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


# ---- the virtual hosts and the topology -------------------------------------------------------

DCGM = "dcgm-exporter-h100-8gpu.prom"
AMD = "amd-device-metrics-exporter-mi300x-8gpu.prom"
# name, fixture, metric prefix, scrape job, agent
HOSTS = [
    ("gpu-node-01", DCGM, "", "dcgm", "agent-a"),
    ("gpu-node-02", DCGM, "", "dcgm", "agent-a"),
    ("mi300-node-01", AMD, "", "amd-device-metrics", "agent-a"),
    ("gpu-node-03", DCGM, "", "dcgm", "agent-b"),
    ("gpu-node-04", DCGM, "", "dcgm", "agent-b"),
    ("mi300-node-02", AMD, "amd_", "amd-device-metrics", "agent-b"),
]
THERMAL_NV, THERMAL_AMD, XID_HOST, XID_GPU, XID_CODE, DEAD = "gpu-node-02", "mi300-node-02", "gpu-node-03", "5", 45, "gpu-node-04"
NV_HOSTS = [h for h, fx, *_ in HOSTS if fx == DCGM]

try:
    HAVE_MT = MT != "-" and os.access(MT, os.X_OK) and SIM != "-" and os.access(SIM, os.X_OK)
    if HAVE_MT:   # the job whose window mt queries: made while the topology runs (no TSDB needed)
        sim = start("demo-init", [SIM, "--demo-init", os.path.join(WORK, "ws"), "--only", "7877", "--no-tsdb"], daemon=False)
    phase("start the exposition replayer")
    state_file = os.path.join(WORK, "replayer-state.json")
    cmd = [sys.executable, os.path.join(HERE, "exposition_replayer.py"), "--fixtures", FIXTURES,
           "--state-file", state_file, "--max-lifetime", str(int(BUDGET + 60))]
    for name, fx, prefix, job, agent in HOSTS:
        cmd += ["--host", f"{name}={fx}" + (f",prefix={prefix}" if prefix else "")]
    start("replayer", cmd)
    st = wait_until("the replayer's state file", lambda: os.path.exists(state_file) and json.load(open(state_file)), 20)
    if not check(bool(st), "the exposition replayer listens (one port per virtual host)"):
        raise SystemExit(1)
    CONTROL = f"http://127.0.0.1:{st['control_port']}"
    target = {h: f"127.0.0.1:{st['hosts'][h]['port']}" for h, *_ in HOSTS}
    check(len(set(target.values())) == len(HOSTS), f"{len(HOSTS)} virtual hosts on distinct ports: {sorted(target.values())}")

    phase("start prometheus-node-exporter")
    os.makedirs(os.path.join(WORK, "textfile"))
    node_port = free_port()
    start("node-exporter", ["prometheus-node-exporter", f"--web.listen-address=127.0.0.1:{node_port}",
                            "--collector.disable-defaults", "--collector.netstat", "--collector.stat", "--collector.loadavg",
                            "--collector.meminfo", "--collector.vmstat", "--collector.textfile",
                            f"--collector.textfile.directory={WORK}/textfile", "--web.disable-exporter-metrics"])
    node_target = f"127.0.0.1:{node_port}"
    ok = wait_until("node exporter /metrics", lambda: "node_procs_running" in http_get(f"http://{node_target}/metrics"), 20)
    check(bool(ok), f"prometheus-node-exporter serves /metrics on {node_target}")

    phase("start the central Prometheus (remote-write receiver)")
    central_port = free_port()
    CENTRAL = f"http://127.0.0.1:{central_port}"
    write(f"{WORK}/central.yml", "global:\n  evaluation_interval: 1m\n")
    start("central", ["prometheus", f"--config.file={WORK}/central.yml", f"--storage.tsdb.path={WORK}/central",
                      f"--web.listen-address=127.0.0.1:{central_port}", "--web.enable-remote-write-receiver",
                      "--storage.tsdb.retention.time=1d", "--log.level=warn"])
    check(bool(wait_until("central /-/ready", lambda: "Ready" in http_get(f"{CENTRAL}/-/ready"), 30)),
          f"central Prometheus ready on {CENTRAL}")

    phase("start two agent-mode Prometheus servers")
    for agent in ("agent-a", "agent-b"):
        jobs = {}
        for name, fx, prefix, job, a in HOSTS:
            if a == agent:
                jobs.setdefault(job, []).append(target[name])
        if agent == "agent-a":
            jobs["node"] = [node_target]
        scrape = "".join(f"  - job_name: {job}\n    static_configs:\n      - targets: {json.dumps(ts)}\n" for job, ts in jobs.items())
        port = free_port()
        write(f"{WORK}/{agent}.yml",
              "global:\n  scrape_interval: 1s\n  scrape_timeout: 800ms\n"
              f"  external_labels:\n    agent: {agent}\n"
              f"scrape_configs:\n{scrape}"
              f"remote_write:\n  - url: {CENTRAL}/api/v1/write\n"
              "    queue_config:\n      batch_send_deadline: 1s\n      min_backoff: 50ms\n      max_backoff: 1s\n")
        start(agent, ["prometheus", "--enable-feature=agent", f"--config.file={WORK}/{agent}.yml",
                      f"--storage.agent.path={WORK}/{agent}", f"--web.listen-address=127.0.0.1:{port}",
                      "--storage.remote.flush-deadline=2s", "--log.level=warn"])
        check(bool(wait_until(f"{agent} /-/ready", lambda: "Ready" in http_get(f"http://127.0.0.1:{port}/-/ready"), 30)),
              f"{agent} (agent mode) ready, scraping {sum(len(t) for t in jobs.values())} targets every 1 s")

    phase("wait for every target's data in the central store")
    all_targets = list(target.values()) + [node_target]

    def all_up():
        up = vector("up", key="instance")
        return len(up) == len(all_targets) and all(v == 1 for v in up.values()) and up

    up0 = wait_until("up == 1 for every target in the central store", all_up, 45)
    check(bool(up0), f"central store: up == 1 for all {len(all_targets)} targets (written by the agents)")
    t_ready = time.time()

    phase(f"healthy baseline ({BASELINE_S} s)")
    time.sleep(BASELINE_S)

    phase("inject the faults")
    accepted = http_post_json(f"{CONTROL}/faults", [
        {"kind": "thermal", "host": THERMAL_NV, "ramp": RAMP_S},
        {"kind": "thermal", "host": THERMAL_AMD, "ramp": RAMP_S},
        {"kind": "xid", "host": XID_HOST, "gpus": [XID_GPU], "value": XID_CODE},
        {"kind": "dead", "host": DEAD}])
    t_fault = min(f["at"] for f in accepted)
    check(len(accepted) == 4, f"replayer accepted 4 faults at {iso(t_fault)}")
    others_nv = [h for h in NV_HOSTS if h not in (THERMAL_NV, DEAD)]

    def faults_visible():
        t = vector("max by (Hostname) (DCGM_FI_DEV_GPU_TEMP)", key="Hostname")
        a = vector("max by (hostname) (gpu_junction_temperature or amd_gpu_junction_temperature)", key="hostname")
        x = vector("max by (Hostname, gpu) (DCGM_FI_DEV_XID_ERRORS) > 0", key=("Hostname", "gpu"))
        u = vector(f'up{{instance="{target[DEAD]}"}}', key="instance")
        return (t.get(THERMAL_NV, 0) > max(t[h] for h in others_nv) + 15 and
                a.get(THERMAL_AMD, 0) > a.get("mi300-node-01", 1e9) + 15 and bool(x) and u.get(target[DEAD]) == 0)

    seen = wait_until("all four faults visible in the central store", faults_visible, 30)
    check(bool(seen), f"all four faults visible in the central store {time.time() - t_fault:.1f} s after injection")
    while time.time() < t_fault + AFTER_S:
        time.sleep(0.2)
    t_end = time.time() - 1.0
    # the agents forward with up to ~1 s batching: wait until the central store holds t_end
    caught_up = wait_until("central store caught up to the end of the window",
                           lambda: min(vector("timestamp(up)", key="instance").values() or [0]) >= t_end, 20)
    check(bool(caught_up), f"central store holds every target's samples up to {iso(t_end)}")
    t_base = t_fault - 1.0      # a time inside the healthy baseline

    phase("checks: every host's series arrived with its own labels")
    names_all = set(prom("/api/v1/label/__name__/values"))
    for name, fx, prefix, job, agent in HOSTS:
        h = st["hosts"][name]
        served = set(h["metric_names"])
        got = {s["__name__"] for s in series(f'{{instance="{target[name]}"}}', t_ready, t_base)}
        health = got - served
        check(served <= got and health <= {"up", "scrape_duration_seconds", "scrape_samples_scraped",
                                             "scrape_samples_post_metric_relabeling", "scrape_series_added"},
              f"{name}: all {len(served)} metric names it serves arrived under instance={target[name]} "
              f"(plus scrape health {sorted(health)})")
        n = vector(f'scrape_samples_scraped{{instance="{target[name]}"}}', t_base, key="instance").get(target[name])
        check(n == h["samples"], f"{name}: scrape_samples_scraped = {n}, the replayer served {h['samples']} samples")
        temp = (prefix + "gpu_junction_temperature") if fx == AMD else "DCGM_FI_DEV_GPU_TEMP"
        hl = h["host_label"]
        ss = series(f'{temp}{{{hl}="{name}"}}', t_base - 1, t_base)
        labels = {k for s in ss for k in s}
        check(len(ss) == len(h["gpus"]) and {s["instance"] for s in ss} == {target[name]} and
              {s["job"] for s in ss} == {job} and {s["agent"] for s in ss} == {agent},
              f"{name}: {len(ss)} {temp} series, {hl}={name}, instance={target[name]}, job={job}, agent={agent}")
        if fx == DCGM:
            check(labels == {"__name__", "gpu", "UUID", "pci_bus_id", "device", "modelName", "Hostname",
                             "DCGM_FI_DRIVER_VERSION", "instance", "job", "agent"},
                  f"{name}: dcgm label set in the store: {sorted(labels)}")
        else:
            check({"gpu_id", "hostname", "card_model", "serial_number", "gpu_uuid"} <= labels and
                  not labels & {"pod", "job_id", "namespace", "container", "workload_id"},
                  f"{name}: AMD labels kept, the exporter's empty ones (pod=\"\", job_id=\"\", ...) absent in the store")
    a_plain = vector('count by (hostname) (gpu_junction_temperature)', t_base, key="hostname")
    a_pref = vector('count by (hostname) (amd_gpu_junction_temperature)', t_base, key="hostname")
    check(set(a_plain) == {"mi300-node-01"} and set(a_pref) == {"mi300-node-02"},
          f"AMD: unprefixed names only from mi300-node-01 {a_plain}, amd_ names only from mi300-node-02 {a_pref}")
    uuids = vector("count by (UUID) (DCGM_FI_DEV_GPU_TEMP)", t_base, key="UUID")
    check(len(uuids) == 8 * len(NV_HOSTS) and set(uuids.values()) == {1.0},
          f"{len(uuids)} distinct GPU UUIDs across the {len(NV_HOSTS)} dcgm hosts: no series collide in the store")
    node = {n: series(f'{n}{{instance="{node_target}"}}', t_ready, t_end) for n in ("node_netstat_Tcp_RetransSegs", "node_procs_running")}
    check(all(len(v) == 1 and v[0]["job"] == "node" and v[0]["agent"] == "agent-a" for v in node.values()),
          f"node_exporter: node_netstat_Tcp_RetransSegs and node_procs_running arrived (instance={node_target}, job=node)")
    pr = vector(f'node_procs_running{{instance="{node_target}"}}', t_end, key="instance").get(node_target, 0)
    check(pr >= 1, f"node_procs_running = {pr:.0f} at the end")

    phase("checks: each fault visible in the central store, from its time, on its host only")
    settled = t_fault + RAMP_S + 3
    for metric, hl, hosts, faulty in [
            ("DCGM_FI_DEV_GPU_TEMP", "Hostname", [h for h in NV_HOSTS if h != DEAD], THERMAL_NV),
            ("gpu_junction_temperature or amd_gpu_junction_temperature", "hostname", ["mi300-node-01", "mi300-node-02"], THERMAL_AMD)]:
        m = matrix(f"max by ({hl}) ({metric})", t_ready, t_end, hl)
        before = {h: max(v for t, v in m[h] if t < t_fault) for h in hosts}
        after = {h: min(v for t, v in m[h] if t >= settled) for h in hosts}
        others = [h for h in hosts if h != faulty]
        check(abs(before[faulty] - max(before[h] for h in others)) < 8,
              f"{metric.split()[0]}: before {iso(t_fault)} {faulty} looks like the others (max {before[faulty]:.0f} vs {[round(before[h]) for h in others]})")
        check(after[faulty] > max(m2 for h in others for t, m2 in m[h] if t >= settled) + 15,
              f"{metric.split()[0]}: after the fault {faulty} stays > 15 C above every other host (min {after[faulty]:.0f})")
        first = min((t for t, v in m[faulty] if v > max(before[h] for h in others) + 10), default=None)
        check(first is not None and t_fault <= first <= t_fault + RAMP_S + 3,
              f"{metric.split()[0]}: {faulty} first runs hot at +{(first or t_fault) - t_fault:.1f} s after the fault time"
              + ("" if first else " (never)"))
    for metric, hl, hosts, faulty in [
            ("DCGM_FI_DEV_SM_CLOCK", "Hostname", [h for h in NV_HOSTS if h != DEAD], THERMAL_NV),
            ("DCGM_FI_DEV_POWER_USAGE", "Hostname", [h for h in NV_HOSTS if h != DEAD], THERMAL_NV),
            ('gpu_clock{clock_type="GPU_CLOCK_TYPE_SYSTEM"} or amd_gpu_clock{clock_type="GPU_CLOCK_TYPE_SYSTEM"}', "hostname",
             ["mi300-node-01", "mi300-node-02"], THERMAL_AMD),
            ("gpu_package_power or amd_gpu_package_power", "hostname", ["mi300-node-01", "mi300-node-02"], THERMAL_AMD)]:
        v = vector(f"avg by ({hl}) ({metric})", t_end, key=hl)
        others = [h for h in hosts if h != faulty]
        check(v.get(faulty, 1e9) < 0.8 * min(v[h] for h in others),
              f"{metric.split('{')[0].split()[0]}: {faulty} down to {v.get(faulty, 0):.0f} vs >= {min(v[h] for h in others):.0f} elsewhere")
    x_end = vector("max by (Hostname, gpu) (DCGM_FI_DEV_XID_ERRORS) > 0", t_end, key=("Hostname", "gpu"))
    x_base = vector("max by (Hostname, gpu) (DCGM_FI_DEV_XID_ERRORS) > 0", t_base, key=("Hostname", "gpu"))
    check(x_end == {(XID_HOST, XID_GPU): float(XID_CODE)} and x_base == {},
          f"XID: non-zero on {XID_HOST} gpu {XID_GPU} only ({x_end}), none before the fault")
    codes = {s["err_code"] for s in series(f'DCGM_FI_DEV_XID_ERRORS{{Hostname="{XID_HOST}",gpu="{XID_GPU}"}}', t_ready, t_end)}
    check(codes == {"0", str(XID_CODE)},
          f"XID: the err_code label changes with the value, so the GPU has {len(codes)} XID series ({sorted(codes)})")
    m = matrix(f'up{{instance="{target[DEAD]}"}}', t_ready, t_end, "instance")[target[DEAD]]
    first0 = min((t for t, v in m if v == 0), default=None)
    check(all(v == 1 for t, v in m if t < t_fault) and m[-1][1] == 0 and first0 is not None and t_fault <= first0 <= t_fault + 3,
          f"dead host {DEAD}: up 1 before, 0 from " + (f"+{first0 - t_fault:.1f} s" if first0 else "never") + ", in the central store")
    stale = vector(f'count(DCGM_FI_DEV_GPU_TEMP{{Hostname="{DEAD}"}})', t_end)
    check(not stale, f"dead host {DEAD}: its GPU series are stale at the end (staleness markers forwarded)")
    up_end = vector("up", t_end, key="instance")
    check(all(up_end[t] == 1 for h, t in target.items() if h != DEAD) and up_end[node_target] == 1,
          "every other target still up == 1 at the end")

    phase("mt query --source central")
    if not HAVE_MT:
        print(f"SKIP mt checks: no mt/mt-simtrain binary ({MT}, {SIM})")
    else:
        ws = os.path.join(WORK, "ws")
        try:
            rc = sim.wait(timeout=max(1, BUDGET - (time.time() - T_START) - 20))
        except subprocess.TimeoutExpired:
            rc = None
        check(rc == 0, f"mt-simtrain --demo-init {ws} --only 7877 --no-tsdb (rc {rc})")
        write(f"{WORK}/mt.yaml", f"workspace: {ws}\nmetrics:\n  sources:\n    - name: central\n      url: {CENTRAL}\n"
                                 "      timeout_seconds: 10\n")

        def mt(*args):
            t0 = time.time()
            p = subprocess.run([MT, "query", "7877", "--source", "central", *args, "--config", f"{WORK}/mt.yaml", "--json"],
                               capture_output=True, text=True, timeout=60)
            ok = check(p.returncode == 0, f"mt query 7877 --source central {' '.join(args)} ({time.time() - t0:.1f} s)")
            if not ok:
                print(p.stdout[-1500:], p.stderr[-1500:])
                return None
            return json.loads(p.stdout)

        a = mt("--discover", "--start", iso(t_ready), "--end", iso(t_end))
        if a:
            fams = {f["prefix"]: f for f in a.get("families", [])}
            shown = {n for f in fams.values() for n in f["metrics"]}
            check(a["tsdb"]["source"] == "remote" and a["tsdb"].get("window_source") == "arguments",
                  f"discover: remote source, window from the arguments ({a['window']})")
            check(a.get("metric_count") == len(names_all) == sum(f["count"] for f in fams.values()) and shown <= names_all,
                  f"discover: {a.get('metric_count')} metric names = the central store's {len(names_all)}, in families {sorted(fams)}")
            want = {j: sum(1 for h, fx, p_, job, ag in HOSTS if job == j and h != DEAD) for j in {x[3] for x in HOSTS}}
            want["node"] = 1
            check(a.get("up_at_end") == {k: float(v) for k, v in want.items()} or a.get("up_at_end") == want,
                  f"discover: up at the end of the window per job {a.get('up_at_end')} (the dead host counts 0)")
            print(f"     discover verdict: {a.get('verdict')}; hosts: {a.get('hosts')}")
            # The exporters are recognised from their names (configs/exporter_families.yaml), each
            # with its hosts read from its own host label, and what the default configs leave out.
            ex = {(e["exporter"], e["prefix"]): e for e in a.get("exporters", [])}
            hosts_of = lambda fx, pre: sorted(h for h, f_, p_, *_ in HOSTS if f_ == fx and p_ == pre)
            want_ex = {("dcgm_exporter", ""): (len(hosts_of(DCGM, "")), "Hostname"),
                       ("amd_device_metrics_exporter", ""): (len(hosts_of(AMD, "")), "hostname"),
                       ("amd_device_metrics_exporter", "amd_"): (len(hosts_of(AMD, "amd_")), "hostname"),
                       ("node_exporter", ""): (1, "instance")}
            got_ex = {k: (e["hosts"], e["host_label"]) for k, e in ex.items()}
            check(got_ex == want_ex, f"discover: exporters detected with their hosts and host labels {got_ex}")
            dcgm = ex.get(("dcgm_exporter", ""), {})
            dfam = {f["family"] for f in dcgm.get("families", [])}
            dmiss = {m["family"]: m["why"] for m in dcgm.get("missing", [])}
            check({"gpu_power", "gpu_temp", "gpu_util", "gpu_xid_or_ras"} <= dfam and "gpu_ecc" in dmiss
                  and "off by default" in dmiss["gpu_ecc"],
                  f"discover: dcgm-exporter families {sorted(dfam)}; ECC named as missing: {dmiss.get('gpu_ecc', '')[:60]}")
            # Job 7877 ran elsewhere (its log's JOB_NODELIST names the simulator's nodes): none of
            # its nodes report on this store, and the answer says so instead of listing the store's.
            check(a.get("hosts") == [] and a["tsdb"].get("hosts_source") == "job log: its Slurm node list"
                  and any("0 of them reporting on this store" in n for n in a.get("notes", [])),
                  f"discover: job 7877's nodes (from its log) are not on this store: hosts {a.get('hosts')}, "
                  f"{[n for n in a.get('notes', []) if n.startswith('hosts:')][:1]}")
        # A job mt did not launch: a plain sbatch output whose script echoed its node list, three
        # of whose four nodes report on the store. Its hosts are those three, found in its log.
        write(f"{ws}/slurm-4242.out", "SLURM_JOB_ID=4242\nSLURM_JOB_NODELIST=gpu-node-[01-03,09]\n"
                                      "gpu-node-01:311:311 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n"
                                      "step 1 loss 9.1\n")
        p = subprocess.run([MT, "query", "4242", "--source", "central", "--discover", "--start", iso(t_ready), "--end",
                            iso(t_end), "--config", f"{WORK}/mt.yaml", "--json"], capture_output=True, text=True, timeout=60)
        b = json.loads(p.stdout) if p.returncode == 0 else {}
        check(b.get("hosts") == ["gpu-node-01", "gpu-node-02", "gpu-node-03"]
              and b.get("tsdb", {}).get("hosts_source") == "job log: its Slurm node list"
              and any("3 of them reporting" in n and "absent: gpu-node-09" in n for n in b.get("notes", [])),
              f"discover of a plain sbatch job: hosts narrowed to its nodes on the store {b.get('hosts')} "
              f"({b.get('tsdb', {}).get('hosts_source')}; rc {p.returncode} {p.stderr[-300:]})")
        # playbook auto on the exporters' names: the checks name the concrete series they read;
        # XID 45 (gpu-node-03) is an application XID, not a failing GPU, so no node_death; the
        # node_exporter here runs without its pressure collector, which a slowdown check would
        # name as missing. Named playbooks read mt's own names: refused with what to do instead.
        p = subprocess.run([MT, "query", "4242", "--source", "central", "--playbook", "auto", "--start", iso(t_ready),
                            "--end", iso(t_end), "--config", f"{WORK}/mt.yaml", "--json"],
                           capture_output=True, text=True, timeout=60)
        c = json.loads(p.stdout) if p.returncode == 0 else {}
        checks = {(k["family"], k["signal"]): k for k in c.get("attribution", {}).get("checks", [])}
        fatal = [k for (fam, sig), k in checks.items() if fam == "node_death" and "DCGM_FI_DEV_XID_ERRORS" in sig]
        check(p.returncode == 0 and fatal and fatal[0]["verdict"] == "quiet" and not c.get("culprits")
              and any(fam == "node_death" and "up" in sig for fam, sig in checks),
              f"playbook auto on the exporters' names: fatal-XID check quiet despite XID 45 (an application XID), "
              f"no culprit ({sorted(checks)[:4]}, culprits {c.get('culprits')}; rc {p.returncode} {p.stderr[-300:]})")
        p = subprocess.run([MT, "query", "4242", "--source", "central", "--playbook", "gpu_health", "--start", iso(t_ready),
                            "--end", iso(t_end), "--config", f"{WORK}/mt.yaml"], capture_output=True, text=True, timeout=60)
        check(p.returncode == 2 and "reads mt's own metric names" in p.stderr and "playbook auto" in p.stderr,
              f"playbook gpu_health on an exporter store: refused with what to do instead (rc {p.returncode}: {p.stderr[-200:]})")
        # mt shows at most 20 series an answer: one query per family, each within that.
        served = {}
        for name, fx, prefix, *_ in HOSTS:
            served.setdefault((fx, prefix), set()).update(st["hosts"][name]["metric_names"])
        families = {"dcgm-exporter": ("DCGM_.*", served[(DCGM, "")]),
                    "AMD, no prefix": ("gpu_.*|pcie_.*", served[(AMD, "")]),
                    "AMD, amd_ prefix": ("amd_.*", served[(AMD, "amd_")]),
                    "node_exporter Tcp/procs": ("node_netstat_Tcp_.*|node_procs_.*",
                                                {n for n in names_all if n.startswith(("node_netstat_Tcp_", "node_procs_"))})}
        for fam, (regex, want) in families.items():
            a = mt("--promql", f'count by (__name__) ({{__name__=~"{regex}"}})', "--time", iso(t_base))
            if a:
                got = {x["series"] for x in a.get("series", [])}
                check(got == want and a.get("series_total") == len(want),
                      f"promql through mt, {fam}: {len(got)} metric names = the {len(want)} served "
                      f"(missing {sorted(want - got)[:4]}, extra {sorted(got - want)[:4]})")
        check(bool(families["node_exporter Tcp/procs"][1] >= {"node_netstat_Tcp_RetransSegs", "node_procs_running"}),
              "node_netstat_Tcp_RetransSegs and node_procs_running among them")
        a = mt("--promql", "max by (Hostname) (DCGM_FI_DEV_GPU_TEMP)", "--start", iso(settled), "--end", iso(t_end))
        if a:
            mean = {}
            for x in a.get("series", []):
                m = re.search(r'Hostname="([^"]*)"', x["series"])
                if m:
                    mean[m.group(1)] = x.get("mean")
            ranked = sorted(mean, key=lambda h: -mean[h])
            check(bool(ranked) and ranked[0] == THERMAL_NV and DEAD not in mean,
                  f"promql range through mt: hottest host after the fault is {ranked[:1]} (means {mean}); the dead host has no series")

except Budget as e:
    check(False, str(e))
except Exception as e:           # report, then clean up via finally/atexit
    import traceback
    traceback.print_exc()
    check(False, f"unexpected error: {e}")
finally:
    signal.alarm(0)
    phase("stop every process by PID")
    stop_all()
    left = [f"{n}:{p.pid}" for n, p, _ in procs if p.poll() is None]
    check(not left, f"every started process stopped ({len(procs)} processes; left: {left})")

print(f"phases: " + ", ".join(f"{n} @{t:.1f}s" for n, t in phases))
print(f"{len(failures)} failure(s) in {time.time() - T_START:.1f} s")
sys.exit(1 if failures else 0)
