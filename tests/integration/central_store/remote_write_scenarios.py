#!/usr/bin/env python3
"""Same conclusions through the real remote-write path of a site's central store. Stdlib only.

scenarios_test.py holds `mt query JOB --source central --playbook auto` to the per-job answer
on translated TSDBs that a Prometheus serves directly; central_store_checks.py runs the real
exporters -> Prometheus agents -> remote_write -> central Prometheus topology, but with faults
too short for attribution. This joins the two: short simulated jobs (scenarios/*.yaml), each
with its fault family written in the file (`# truth:`), are replayed in real time, all side by
side in the same window, through

  timeline_replayer.py  one port per virtual exporter: each host's dcgm-exporter (or AMD
                        device-metrics-exporter) and its node_exporter, serving the translated
                        samples (translate_job_tsdb.py) of scenario time now - offset, without
                        time stamps, job or instance labels; a dead host's ports close
  prometheus --enable-feature=agent  x2 ("agent-a", "agent-b"), each scraping half of the hosts
                        (job and instance set by the scrape configuration, as at a site),
                        remote_write to
  prometheus --web.enable-remote-write-receiver  the central store

and then, per scenario and flavor, `mt query JOB --source central --playbook auto --json` (the
job placed on the store by a Slurm answer: a `scontrol` shim with the job's SHIFTED start and
end, TZ=UTC; hosts from the job's log) must give the same family and culprit hosts as
`mt query JOB --playbook auto --json` on the job's own TSDB, and both the scenario's truth.

Per variant (scenario x flavor; the amd variant's hosts and job id differ, so that both flavors
run in the same window on the same agents):
  mt-simtrain --scenario Y --workspace WS --keep-openmetrics   the job (log + own TSDB)
  `# drop: host=H last_s=S` in the scenario: H's samples are removed from the simulator's
      OpenMetrics for the job's last S seconds (`up` 0 there) and the job's TSDB is rebuilt
      from that with promtool: a host that dies while the others report (no scenario fault
      kind does that; it is the fuzz generator's node_death)
  mt query JOB --playbook auto --json --workspace WS              the per-job answer
  translate_job_tsdb.py JOB_TSDB OUT --flavor F --keep-openmetrics DIR --no-verify
                                                                  the exporters' samples
  `# job-labels: yes` in the scenario: the job as one mt did not launch and Slurm does not know
      (its log without node list or host names, in a workspace of its own; not in the shim; no
      --start/--end); its GPU series carry `hpc_job` (dcgm) / `job_id` (amd) = its id while it
      runs, and the central answer must say window_source and hosts_source "exporter labels"

usage: remote_write_scenarios.py --mt MT --sim MT_SIMTRAIN [--flavors dcgm,amd] [--only a,b]
          [--exclude a,b] [--scenarios DIR] [--work DIR] [--keep] [--json OUT] [--check]
          [--per-job-only] [--scrape-interval S] [--budget S] [--prometheus P] [--promtool P]
  --check: exit 1 when any variant's central answer differs from its per-job answer (family,
  culprit hosts as sets), when either differs from the scenario's truth, or when a step failed;
  both answers are printed. --per-job-only: only the per-job answers against the truth (a
  scenario file check, seconds). MT and MT_SIMTRAIN are copied into the work directory first.
Every process is started on free ports (tests/lib/free_ports.py), registered by PID and stopped
(agents first, SIGTERM then SIGKILL) on success, failure, exception, SIGTERM/SIGINT and the
budget alarm (--budget, default 660 s, signal.alarm); every wait is bounded. The work
directory (mktemp -d unless --work) is removed unless --keep or a failure.
"""
import argparse
import atexit
import concurrent.futures
import datetime
import glob
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "lib"))
import translate_job_tsdb as tr  # noqa: E402  (Fail, block_range, the PID registry and _stop)
import scenarios_test as st  # noqa: E402  (answer_of, fmt_answer, the scontrol shim, run)
from free_ports import free_port, free_ports  # noqa: E402

TRUTH_RE = re.compile(r"^# truth: family=(\S+) culprits=(\S*)[ \t]*$", re.M)
DROP_RE = re.compile(r"^# drop: host=(\S+) last_s=(\d+)[ \t]*$", re.M)
LABELS_RE = re.compile(r"^# job-labels: yes[ \t]*$", re.M)
HOSTS_RE = re.compile(r'^\s*hosts:\s*"([a-z]+)\[', re.M)
ID_RE = re.compile(r'^(\s*id:\s*)"(\d+)"', re.M)
SEED_RE = re.compile(r'^(\s*seed:\s*)(\d+)', re.M)
CHECK_RE = re.compile(r"start (\S+), end (\S+), metrics (\S+)\.\.(\S+)")   # mt-simtrain --check
# Per flavor: a suffix on the host-name prefix and an offset on the job id, so that both
# flavors' variants of a scenario run side by side on one set of agents.
FLAVOR_NAMING = {"dcgm": ("", 0), "amd": ("a", 500)}
# The label each GPU exporter puts the job's id in while the job runs (tools/shared_store/job_labels.h).
JOB_LABEL = {"dcgm": "hpc_job", "amd": "job_id"}
EXPORTER_LABELS = "exporter labels"   # what mt then says placed the job (tsdb.window_source, hosts_source)
LEAD_S = 5            # the replay starts this long before the earliest first sample
T0 = time.monotonic()
procs = []            # (name, Popen), in start order; stopped newest first
sim_lock = threading.Lock()   # one mt-simtrain at a time in the shared workspace


class Budget(Exception):
    pass


def iso_seconds(text):
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc).timestamp()


def log(msg):
    print(f"[{time.monotonic() - T0:6.1f}s] {msg}", flush=True)


# ---- processes ---------------------------------------------------------------------------
try:
    import ctypes
    _LIBC = ctypes.CDLL(None, use_errno=True)
except (ImportError, OSError):
    _LIBC = None


def _die_with_parent():
    """Linux: the child gets SIGTERM if this process dies without stopping it (SIGKILL)."""
    if _LIBC is not None:
        try:
            _LIBC.prctl(1, signal.SIGTERM)   # PR_SET_PDEATHSIG
        except AttributeError:
            pass


def start(name, cmd, work):
    out = open(os.path.join(work, f"{name}.log"), "w")
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                         preexec_fn=_die_with_parent)
    out.close()
    procs.append((name, p))
    tr._live[p.pid] = p
    with open(os.path.join(work, "pids"), "a") as f:
        f.write(f"{p.pid} {name}\n")
    return p


def stop_all():
    """Newest first (the agents before the store they write to), SIGTERM then SIGKILL after 10 s."""
    for name, p in reversed(procs):
        try:
            tr._stop(p, grace=10)
        except (OSError, subprocess.TimeoutExpired):
            pass
    tr.stop_all()


atexit.register(stop_all)


def check_alive(work):
    for name, p in procs:
        if p.poll() is not None:
            raise tr.Fail(f"{name} (pid {p.pid}) exited with {p.returncode}; see {work}/{name}.log")


def http_json(url, timeout=10):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return json.loads(r.read())


def wait_until(what, fn, timeout, work, interval=0.5):
    end = time.monotonic() + timeout
    err = None
    while True:
        try:
            v = fn()
            if v:
                return v
        except (OSError, ValueError, KeyError) as e:
            err = e
        check_alive(work)
        if time.monotonic() >= end:
            raise tr.Fail(f"gave up after {timeout:.0f} s waiting for {what}" + (f" (last error: {err})" if err else ""))
        time.sleep(interval)


class Central:
    def __init__(self, url):
        self.url = url

    def query(self, q, t=None):
        params = {"query": q}
        if t is not None:
            params["time"] = f"{t:.3f}"
        a = http_json(f"{self.url}/api/v1/query?" + urllib.parse.urlencode(params))
        if a.get("status") != "success":
            raise ValueError(str(a)[:300])
        return a["data"]["result"]

    def by(self, q, label, t=None):
        return {s["metric"].get(label, ""): float(s["value"][1]) for s in self.query(q, t)}


# ---- scenarios and their variants --------------------------------------------------------
class Variant:
    def __init__(self, name, flavor, text, path):
        self.name, self.flavor, self.src_path = name, flavor, path
        sfx, add = FLAVOR_NAMING[flavor]
        m = HOSTS_RE.search(text)
        i = ID_RE.search(text)
        if not m or not i:
            raise tr.Fail(f"{path}: needs job.id \"DIGITS\" and job.hosts \"prefix[..]\"")
        prefix = m.group(1)
        self.job = str(int(i.group(2)) + add)
        text = ID_RE.sub(lambda x: f'{x.group(1)}"{self.job}"', text, count=1)
        text = SEED_RE.sub(lambda x: f"{x.group(1)}{int(x.group(2)) + add}", text, count=1)
        text = re.sub(rf"\b{prefix}(?=[\[0-9])", prefix + sfx, text)
        self.text = text
        t = TRUTH_RE.search(text)
        if not t:
            raise tr.Fail(f"{path}: no '# truth: family=F culprits=h1,h2' line")
        self.truth = {"family": t.group(1), "culprits": sorted(x for x in t.group(2).split(",") if x)}
        d = DROP_RE.search(text)
        self.drop = (d.group(1), int(d.group(2))) if d else None
        self.job_labels = bool(LABELS_RE.search(text))
        self.prefix = prefix + sfx
        self.key = f"{name}/{flavor}"
        self.perjob = self.remote = None
        self.error = self.remote_error = None
        self.times = {}

    def label(self):
        return f"{self.name:<17} {self.flavor:<4} job {self.job}"


def drop_host(job_dir, host, last_s, promtool, deadline):
    """The host's samples removed for the job's last `last_s` seconds (`up` reads 0 there), in
    the simulator's OpenMetrics; the job's TSDB rebuilt from that."""
    om_files = sorted(glob.glob(os.path.join(job_dir, "prometheus-openmetrics", "*.om")))
    if not om_files:
        raise tr.Fail(f"{job_dir}: no prometheus-openmetrics/*.om (mt-simtrain --keep-openmetrics)")
    end = 0.0
    for p in om_files:
        with open(p) as f:
            for line in f:
                if line[0] != "#":
                    end = max(end, float(line.rsplit(" ", 1)[1]))
    t_drop = end - last_s
    pat = f'host="{host}"'
    dropped = 0
    edited = []
    for p in om_files:
        out = []
        with open(p) as f:
            for line in f:
                if line[0] != "#" and pat in line:
                    head, v, ts = line.rsplit(" ", 2)
                    if float(ts) >= t_drop:
                        if head.startswith("up{"):
                            out.append(f"{head} 0 {ts}")
                        else:
                            dropped += 1
                        continue
                out.append(line)
        q = p[:-3] + ".dropped.om"
        with open(q, "w") as f:
            f.writelines(out)
        edited.append(q)
    tsdb = os.path.join(job_dir, "prometheus")
    for e in os.listdir(tsdb):
        if os.path.isfile(os.path.join(tsdb, e, "meta.json")):
            shutil.rmtree(os.path.join(tsdb, e))
    tr.create_blocks(promtool, edited, tsdb, deadline)
    return t_drop, dropped


def strip_log(v, ws_labels):
    """The job as a site job mt did not launch: only its log, in a workspace of its own, without
    its node list and without any line that names one of its hosts. Returns the lines removed."""
    log_file = v.job_dir.rstrip("/") + ".log"
    names = re.compile(rf"\b{re.escape(v.prefix)}\d+\b|NODELIST=")
    with open(log_file) as f:
        lines = f.readlines()
    kept = [l for l in lines if not names.search(l)]
    with open(os.path.join(ws_labels, os.path.basename(log_file)), "w") as f:
        f.writelines(kept)
    return len(lines) - len(kept)


def prepare(v, args, env):
    """Simulate, (drop), per-job answer, translate. Fills v; errors go to v.error."""
    try:
        ypath = os.path.join(args.work, "scenarios", f"{v.name}-{v.flavor}.yaml")
        with open(ypath, "w") as f:
            f.write(v.text)
        t0 = time.monotonic()
        with sim_lock:
            p = st.run([args.sim, "--scenario", ypath, "--check"], 60, env)
            m = CHECK_RE.search(p.out or "")
            if p.returncode != 0 or not m:
                raise tr.Fail("mt-simtrain --check: " + (p.err or p.out)[-400:])
            # What the site's Slurm says: the job's own start, and its end (a hanging job's data
            # goes on after its log's last line until it is killed).
            start_s, end_s, _, mend_s = (iso_seconds(x) for x in m.groups())
            v.slurm = (start_s, max(end_s, mend_s))
            p = st.run([args.sim, "--scenario", ypath, "--workspace", args.ws, "--keep-openmetrics", "--parallel", "1"],
                       120, env)
        if p.returncode != 0:
            raise tr.Fail("mt-simtrain: " + (p.err or p.out)[-400:])
        v.job_dir = p.out.strip().splitlines()[-1]
        v.times["simulate"] = round(time.monotonic() - t0, 1)
        if v.drop:
            t_drop, n = drop_host(v.job_dir, v.drop[0], v.drop[1], args.promtool, tr.Deadline(120))
            v.drop_at = t_drop
        if v.job_labels:
            v.stripped = strip_log(v, args.ws_labels)
        src = os.path.join(v.job_dir, "prometheus")
        v.first_ms, v.last_ms = tr.block_range(src)
        t0 = time.monotonic()
        p = st.run([args.mt, "query", v.job, "--workspace", args.ws, "--playbook", "auto", "--json"], 120, env)
        v.times["perjob"] = round(time.monotonic() - t0, 1)
        if p.returncode != 0:
            raise tr.Fail("per-job mt: " + (p.err or p.out)[-400:])
        v.perjob = st.answer_of(p.out)
        with open(os.path.join(args.work, "answers", f"{v.name}-{v.flavor}-perjob.json"), "w") as f:
            f.write(p.out)
        v.perjob_signals = sorted({f"{c.get('metric', '')} @step {c.get('onset_step')}"
                                   for c in json.loads(p.out).get("culprits", [])})
        t0 = time.monotonic()
        v.om_dir = os.path.join(args.work, "om", f"{v.name}-{v.flavor}")
        p = st.run([sys.executable, os.path.join(HERE, "translate_job_tsdb.py"), src,
                    os.path.join(args.work, "translated", f"{v.name}-{v.flavor}"), "--flavor", v.flavor,
                    "--keep-openmetrics", v.om_dir, "--no-verify", "--quiet", "--timeout", "150",
                    "--prometheus", args.prometheus, "--promtool", args.promtool], 170, env)
        v.times["translate"] = round(time.monotonic() - t0, 1)
        if p.returncode != 0:
            raise tr.Fail("translate: " + (p.err or p.out)[-600:])
    except tr.Fail as e:
        v.error = str(e)
    except (OSError, ValueError, KeyError) as e:
        v.error = f"{type(e).__name__}: {e}"
    return v


# ---- the topology ------------------------------------------------------------------------
def start_central(args):
    port = free_port()
    cfg = os.path.join(args.work, "central.yml")
    with open(cfg, "w") as f:
        f.write("global:\n  evaluation_interval: 1m\n")
    start("central", [args.prometheus, f"--config.file={cfg}", f"--storage.tsdb.path={args.work}/central",
                      f"--web.listen-address=127.0.0.1:{port}", "--web.enable-remote-write-receiver",
                      "--storage.tsdb.retention.time=1d", "--log.level=warn"], args.work)
    return f"http://127.0.0.1:{port}"


def start_agents(args, state, central_url):
    """Two agents, each scraping half of the hosts (a host's exporters on one agent)."""
    hosts = sorted({t["host"] for t in state["targets"].values()})
    agent_of = {h: ("agent-a", "agent-b")[i % 2] for i, h in enumerate(hosts)}
    ports = {}
    for agent in ("agent-a", "agent-b"):
        jobs = {}
        for inst, t in sorted(state["targets"].items()):
            if agent_of[t["host"]] == agent:
                jobs.setdefault(t["job"], []).append((inst, t["port"]))
        scrape = ""
        for job, ts in sorted(jobs.items()):
            scrape += f"  - job_name: {job}\n    static_configs:\n"
            for inst, port in ts:
                scrape += f"      - targets: [\"127.0.0.1:{port}\"]\n        labels: {{instance: \"{inst}\"}}\n"
        s = args.scrape_interval
        cfg = os.path.join(args.work, f"{agent}.yml")
        with open(cfg, "w") as f:
            f.write(f"global:\n  scrape_interval: {s}s\n  scrape_timeout: {max(1, s - 1)}s\n"
                    f"  external_labels:\n    agent: {agent}\n"
                    f"scrape_configs:\n{scrape}"
                    f"remote_write:\n  - url: {central_url}/api/v1/write\n"
                    "    queue_config:\n      batch_send_deadline: 1s\n      min_backoff: 50ms\n      max_backoff: 1s\n")
        port = free_port()
        ports[agent] = port
        start(agent, [args.prometheus, "--enable-feature=agent", f"--config.file={cfg}",
                      f"--storage.agent.path={args.work}/{agent}", f"--web.listen-address=127.0.0.1:{port}",
                      "--storage.remote.flush-deadline=2s", "--log.level=warn"], args.work)
    for agent, port in ports.items():
        wait_until(f"{agent} ready", lambda: urllib.request.urlopen(f"http://127.0.0.1:{port}/-/ready", timeout=3).status == 200,
                   60, args.work)
    return agent_of


def write_shim(args, variants, offset):
    placement = {}
    for v in variants:
        v.window = (math.floor(v.slurm[0] + offset), math.ceil(max(v.slurm[1], v.last_ms / 1000) + offset))
        if not v.job_labels:   # Slurm does not know a job placed by its exporters' labels
            placement[v.job] = (st.slurm_time(v.window[0]), st.slurm_time(v.window[1]))
    bindir = os.path.join(args.work, "slurm-bin")
    os.makedirs(bindir, exist_ok=True)
    shim = os.path.join(bindir, "scontrol")
    with open(shim, "w") as f:
        f.write(st.SCONTROL % (", ".join(placement), placement))
    os.chmod(shim, 0o755)
    return bindir


def up_checks(v, central, offset, t_check, scrape):
    """The agents' own `up` in the central store: 0 for a dead host's exporters from its death
    (its ports closed) to the end, 1 for every other exporter of the job over the whole window."""
    problems = []
    v.dead_targets = sorted(i for i, t in v.targets.items() if t["dead_from"] is not None)
    for inst, t in sorted(v.targets.items()):
        sel = f'up{{instance="{inst}"}}'
        if t["dead_from"] is not None:
            a = t["dead_from"] + offset
            span = t_check - a
            lo = central.by(f"min_over_time({sel}[{int(span + scrape)}s])", "instance", t_check).get(inst)
            hi = central.by(f"max_over_time({sel}[{int(span - 2 * scrape)}s])", "instance", t_check).get(inst) \
                if span >= 3 * scrape else 0.0
            hi_before = central.by(f"max_over_time({sel}[{int(a - v.window[0] - scrape)}s] offset {int(span + scrape)}s)",
                                   "instance", t_check).get(inst) if a - v.window[0] > 3 * scrape else 1.0
            if lo != 0 or hi != 0 or hi_before != 1:
                problems.append(f"{inst}: up in the central store min {lo} after its death, max {hi} from one scrape "
                                f"after it, max {hi_before} before it (want 0, 0, 1)")
        else:
            lo = central.by(f"min_over_time({sel}[{int(v.window[1] - v.window[0])}s])", "instance", t_check).get(inst)
            if lo != 1:
                problems.append(f"{inst}: up in the central store min {lo} over the job's window (want 1)")
    return problems


def remote_answer(v, args, env, cfgs):
    ws = args.ws_labels if v.job_labels else args.ws
    cmd = [args.mt, "query", v.job, "--source", "central", "--playbook", "auto", "--json", "--config", cfgs[ws],
           "--workspace", ws]
    v.remote_cmd = f"PATH={env['PATH'].split(os.pathsep)[0]}:$PATH TZ=UTC " + " ".join(cmd)
    t0 = time.monotonic()
    try:
        p = st.run(cmd, 120, env)
    except tr.Fail as e:
        v.remote_error = str(e)
        return
    v.times["remote"] = round(time.monotonic() - t0, 1)
    if p.returncode != 0:
        v.remote_error = f"exit {p.returncode}: " + ((p.err or "") + (p.out or "")).strip()[-600:]
        return
    with open(os.path.join(args.work, "answers", f"{v.name}-{v.flavor}-central.json"), "w") as f:
        f.write(p.out)
    try:
        v.remote = st.answer_of(p.out)
        out = json.loads(p.out)
        v.remote_tsdb = {k: out.get("tsdb", {}).get(k) for k in ("source", "window_source", "hosts_source")}
        v.remote_hosts = out.get("hosts") or []
        if v.job_labels and (v.remote_tsdb["window_source"] != EXPORTER_LABELS or
                             v.remote_tsdb["hosts_source"] != EXPORTER_LABELS):
            v.source_problem = (f"placed by window_source={v.remote_tsdb['window_source']!r}, hosts_source="
                                f"{v.remote_tsdb['hosts_source']!r}, not by {EXPORTER_LABELS!r} (hosts {v.remote_hosts})")
        v.remote_signals = sorted({f"{c.get('metric', '')} @step {c.get('onset_step')}" for c in out.get("culprits", [])})
    except (ValueError, KeyError, TypeError) as e:
        v.remote_error = f"unreadable answer ({e}): {p.out[-300:]}"


def replay(args, variants, env):
    """Starts the replayer and the agents, waits out the timelines, asks mt per variant."""
    ok = [v for v in variants if v.error is None]
    first = min(v.first_ms for v in ok) / 1000.0
    last = max(v.last_ms for v in ok) / 1000.0
    state_file = os.path.join(args.work, "replayer-state.json")
    cmd = [sys.executable, os.path.join(HERE, "timeline_replayer.py"), "--start", f"{first - LEAD_S:.3f}",
           "--state-file", state_file, "--max-lifetime", str(int(args.budget + 60))]
    for v in ok:
        cmd += ["--openmetrics", v.om_dir + (f",{JOB_LABEL[v.flavor]}={v.job}" if v.job_labels else "")]
    start("replayer", cmd, args.work)
    state = wait_until("the replayer's state file", lambda: os.path.exists(state_file) and json.load(open(state_file)),
                       60, args.work)
    offset = state["offset_s"]
    n_targets = len(state["targets"])
    log(f"replayer: {n_targets} exporters ({len({t['host'] for t in state['targets'].values()})} hosts), "
        f"scenario time = wall - {offset:.0f} s; the timelines end in {last - first + LEAD_S:.0f} s")
    for gi, v in enumerate(ok):
        v.targets = {i: t for i, t in state["targets"].items() if t["group"] == gi}
    agent_of = start_agents(args, state, args.central)
    log(f"agents: agent-a scrapes {sum(1 for a in agent_of.values() if a == 'agent-a')} hosts, "
        f"agent-b {sum(1 for a in agent_of.values() if a == 'agent-b')}, every {args.scrape_interval} s")
    central = Central(args.central)
    wait_until("every exporter up in the central store",
               lambda: len(central.by("up", "instance")) >= n_targets, 60, args.work)
    log(f"central store: up for all {n_targets} exporters (written by the agents)")
    bindir = write_shim(args, ok, offset)
    qenv = dict(env, PATH=bindir + os.pathsep + env.get("PATH", ""), TZ="UTC")
    cfgs = {}
    for ws, name in ((args.ws, "mt.yaml"), (args.ws_labels, "mt-labels.yaml")):
        cfgs[ws] = os.path.join(args.work, name)
        with open(cfgs[ws], "w") as f:
            f.write(f"workspace: {ws}\nmetrics:\n  sources:\n    - name: central\n      url: {args.central}\n"
                    "      timeout_seconds: 60\n")
    pending = sorted(ok, key=lambda v: v.window[1])
    next_progress = 0
    while pending:
        now = time.time()
        v = pending[0]
        t_check = v.window[1] + args.scrape_interval
        if now >= t_check + args.scrape_interval + 2:
            inst = "|".join(re.escape(i) for i in v.targets)
            ts = central.by(f'timestamp(up{{instance=~"{inst}"}})', "instance")
            if len(ts) == len(v.targets) and min(ts.values()) >= t_check:
                try:
                    v.up_problems = up_checks(v, central, offset, t_check, args.scrape_interval)
                except (OSError, ValueError, KeyError) as e:
                    v.up_problems = [f"the central store's `up` could not be read: {type(e).__name__}: {e}"]
                remote_answer(v, args, qenv, cfgs)
                pending.pop(0)
                r = v.remote
                log(f"{v.label()}: central answer " + (f"{r['family']} {r['culprits']}" if r else f"FAILED {v.remote_error}")
                    + f"  (per-job {v.perjob['family']} {v.perjob['culprits']})")
                continue
            if now > v.window[1] + 60:
                v.remote_error = f"the central store did not catch up to the job's end within 60 s: {ts}"
                pending.pop(0)
                continue
        if now >= next_progress:
            up = central.by("up", "instance")
            down = sorted(i for i, x in up.items() if x == 0)
            log(f"replay: scenario time +{now - offset - first:.0f} s of {last - first:.0f} s; "
                f"{len(pending)} job(s) still running; {sum(1 for x in up.values() if x == 1)} exporters up, "
                f"down: {down}")
            next_progress = now + 30
        check_alive(args.work)
        time.sleep(1)
    return state


# ---- report ------------------------------------------------------------------------------
def same(a, b):
    return a is not None and b is not None and a["family"] == b["family"] and set(a["culprits"]) == set(b["culprits"])


def report(variants, args):
    bad = []
    print(f"\n{'scenario':<17} {'flav':<4} {'job':>6}  {'truth':<26} {'per-job':<26} {'central (remote write)':<26} result")
    fam = lambda a: f"{a['family']} {a['culprits']}" if a else "-"
    for v in variants:
        problems = []
        if v.error:
            problems.append(f"step failed: {v.error}")
        elif not same(v.perjob, v.truth):
            problems.append("per-job answer differs from the truth")
        if not args.per_job_only and not v.error:
            if v.remote is None:
                problems.append(f"no central answer: {v.remote_error}")
            else:
                problems += getattr(v, "up_problems", [])
                if getattr(v, "source_problem", None):
                    problems.append(v.source_problem)
                if not same(v.remote, v.perjob):
                    problems.append("central answer differs from the per-job answer")
                if not same(v.remote, v.truth):
                    problems.append("central answer differs from the truth")
        print(f"{v.name:<17} {v.flavor:<4} {v.job:>6}  {fam(v.truth):<26} {fam(v.perjob):<26} "
              f"{fam(v.remote) if not args.per_job_only else 'not run':<26} {'ok' if not problems else 'FAIL'}")
        if problems:
            bad.append((v, problems))
    if not args.per_job_only:
        print("\nculprit signal @ onset step (per-job | central); the dead exporters (`up` 0 in the central store "
              "from their death on, checked); what placed the job on the store (window / hosts):")
        for v in variants:
            if v.perjob and v.remote:
                print(f"  {v.key:<22} {getattr(v, 'perjob_signals', [])} | {getattr(v, 'remote_signals', [])}; "
                      f"down: {getattr(v, 'dead_targets', [])}; placed by "
                      f"{(getattr(v, 'remote_tsdb', None) or {}).get('window_source')} / "
                      f"{(getattr(v, 'remote_tsdb', None) or {}).get('hosts_source')}")
    print(f"\n{len(variants) - len(bad)} of {len(variants)} variants agree"
          + ("" if args.per_job_only else " (per-job = central = truth, and `up` as the replay made it)")
          + (": the others below" if bad else ""))
    for v, problems in bad:
        print(f"  {v.key} (job {v.job}): " + "; ".join(problems))
        print(f"      truth:   family={v.truth['family']} culprits={v.truth['culprits']}")
        if v.perjob:
            print(f"      per-job: {st.fmt_answer(v.perjob)}")
        if v.remote:
            print(f"      central: {st.fmt_answer(v.remote)}")
        if getattr(v, "remote_cmd", None):
            print(f"      cmd: {v.remote_cmd}")
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mt", required=True)
    ap.add_argument("--sim", required=True)
    ap.add_argument("--flavors", default="dcgm,amd")
    ap.add_argument("--only", help="scenario names (file names without .yaml), comma separated")
    ap.add_argument("--exclude", help="scenario names to leave out, comma separated")
    ap.add_argument("--scenarios", default=os.path.join(HERE, "scenarios"))
    ap.add_argument("--work")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--json")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--per-job-only", action="store_true")
    ap.add_argument("--scrape-interval", type=int, default=5)
    ap.add_argument("--budget", type=int, default=660)
    ap.add_argument("--prometheus", default="prometheus")
    ap.add_argument("--promtool", default="promtool")
    args = ap.parse_args()
    flavors = [f for f in args.flavors.split(",") if f]
    for f in flavors:
        if f not in FLAVOR_NAMING:
            ap.error(f"unknown flavor {f} (known: {', '.join(sorted(FLAVOR_NAMING))})")
    for b in (args.mt, args.sim, args.prometheus, args.promtool):
        if not shutil.which(b):
            print(f"remote_write_scenarios: {b} not found", file=sys.stderr)
            return 2
    own_work = args.work is None
    args.work = os.path.abspath(args.work or tempfile.mkdtemp(prefix="mt-remote-write."))
    for d in ("bin", "scenarios", "om", "translated", "ws", "ws-labels", "tmp", "answers"):
        os.makedirs(os.path.join(args.work, d), exist_ok=True)
    # Copies: mt may be rebuilt while this runs for minutes.
    for name in ("mt", "sim"):
        src = shutil.which(getattr(args, name))
        dst = os.path.join(args.work, "bin", os.path.basename(src))
        shutil.copy2(src, dst)
        setattr(args, name, dst)
    args.ws = os.path.join(args.work, "ws")
    args.ws_labels = os.path.join(args.work, "ws-labels")

    def on_alarm(*_):
        raise Budget(f"the test ran past its budget of {args.budget} s")

    def on_term(signum, _):
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGALRM, on_alarm)
    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    signal.alarm(args.budget)

    files = sorted(glob.glob(os.path.join(args.scenarios, "*.yaml")))
    only = set(args.only.split(",")) if args.only else None
    exclude = set(args.exclude.split(",")) if args.exclude else set()
    variants = []
    failed = True
    bad = []
    try:
        for path in files:
            name = os.path.basename(path)[:-5]
            if (only and name not in only) or name in exclude:
                continue
            text = open(path).read()
            for fl in flavors:
                variants.append(Variant(name, fl, text, path))
        if not variants:
            raise tr.Fail(f"no scenarios in {args.scenarios}" + (f" named {sorted(only)}" if only else ""))
        env = dict(os.environ, TMPDIR=os.path.join(args.work, "tmp"))
        block = free_ports(20, block=True)
        env["MT_TSDB_PORTS"] = f"{block[0]}-{block[-1]}"
        if not args.per_job_only:
            args.central = start_central(args)
        log(f"{len(variants)} variants ({len(variants) // len(flavors)} scenarios x {', '.join(flavors)}): "
            "simulate, per-job answer, translate")
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as ex:
            for v in ex.map(lambda v: prepare(v, args, env), variants):
                log(f"{v.label()}: " + (f"ERROR {v.error}" if v.error else
                                        f"per-job {v.perjob['family']} {v.perjob['culprits']} "
                                        f"(truth {v.truth['family']} {v.truth['culprits']}); "
                                        f"data {(v.last_ms - v.first_ms) / 1000:.0f} s; times {v.times}"))
        if not args.per_job_only:
            if all(v.error for v in variants):
                raise tr.Fail("every variant failed before the replay")
            wait_until("the central store ready",
                       lambda: urllib.request.urlopen(f"{args.central}/-/ready", timeout=3).status == 200, 60, args.work)
            replay(args, variants, env)
        bad = report(variants, args)
        failed = bool(bad)
    except Budget as e:
        print(f"FAIL: {e}", flush=True)
        report(variants, args)
    except (tr.Fail, OSError, ValueError, KeyError) as e:
        print(f"FAIL: {type(e).__name__}: {e}", flush=True)
        report(variants, args)
    finally:
        signal.alarm(0)
        stop_all()
        if sys.exc_info()[0] is SystemExit:
            print(f"remote_write_scenarios: stopped by a signal; work directory kept: {args.work}", flush=True)
        left = [f"{n}:{p.pid}" for n, p in procs if p.poll() is None]
        if left:
            print(f"FAIL: processes left running: {left}")
            failed = True
    wall = time.monotonic() - T0
    print(f"wall time {wall:.0f} s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"wall_s": round(wall, 1), "variants": [
                {"scenario": v.name, "flavor": v.flavor, "job": v.job, "truth": v.truth, "perjob": v.perjob,
                 "remote": v.remote, "remote_tsdb": getattr(v, "remote_tsdb", None), "error": v.error,
                 "remote_error": v.remote_error, "times": v.times} for v in variants]}, f, indent=1)
    if args.keep or failed:
        print(f"work directory kept: {args.work}")
    elif own_work:
        shutil.rmtree(args.work, ignore_errors=True)
    if args.check:
        print("FAIL" if failed else "PASS")
        return 1 if failed else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
