"""Shared helpers of the security/files suite (hardening issue #14, workspace files).

Each test builds a small workspace of its own (a fixture log per job, a real TSDB made
by promtool), plants the attack, runs the real `mt` CLI under a watchdog (wall-clock
timeout, resident-memory ceiling, both enforced by killing it) and checks the specific
error, the memory high-water mark (VmHWM of mt itself), that nothing is left in $TMPDIR
and that no Prometheus survives. Python 3 standard library only.
"""
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
FIXTURES = os.path.join(SOURCE, "tests", "fixtures", "logs")

# The TSDB every job gets: 2 hosts, 2 h at a 15 s step.
TSDB_START = 1771920000          # 2026-02-24T08:00:00Z
TSDB_END = TSDB_START + 2 * 3600


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)
    print(f"ok: {msg if isinstance(msg, str) else ''}"[:200])


class Env:
    """A work directory with ws/ (the workspace), tmp/ ($TMPDIR) and outside/."""

    def __init__(self, name, port_base):
        self.work = tempfile.mkdtemp(prefix=f"mt-sec-{name}-")
        self.ws = os.path.join(self.work, "ws")
        self.tmp = os.path.join(self.work, "tmp")
        self.outside = os.path.join(self.work, "outside")
        for d in (self.ws, self.tmp, self.outside):
            os.makedirs(d)
        self.env = dict(os.environ)
        self.env["TMPDIR"] = self.tmp
        self.env["MT_TSDB_PORTS"] = f"{port_base}-{port_base + 9}"
        self.env.pop("MT_TSDB_MAX_COPY_BYTES", None)

    def prometheus_pids(self):
        pids = []
        for d in glob.glob("/proc/[0-9]*"):
            try:
                with open(os.path.join(d, "cmdline"), "rb") as f:
                    cmd = f.read().replace(b"\0", b" ")
            except OSError:
                continue
            if self.work.encode() in cmd and b"--storage.tsdb.path" in cmd:
                pids.append(int(os.path.basename(d)))
        return pids

    def leftovers(self):
        return sorted(os.path.basename(p) for p in glob.glob(os.path.join(self.tmp, "mt-tsdb-*")))

    def tmp_bytes(self):
        """Disk blocks used under $TMPDIR (what a copy really costs)."""
        total = 0
        for root, dirs, files in os.walk(self.tmp):
            for n in files:
                try:
                    total += os.lstat(os.path.join(root, n)).st_blocks * 512
                except OSError:
                    pass
        return total

    def check_clean(self, what):
        deadline = time.time() + 10
        while self.prometheus_pids() and time.time() < deadline:
            time.sleep(0.1)
        check(not self.prometheus_pids(), f"{what}: no Prometheus left running")
        check(self.leftovers() == [], f"{what}: nothing left in $TMPDIR ({self.leftovers()})")

    def close(self):
        for pid in self.prometheus_pids():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        shutil.rmtree(self.work, ignore_errors=True)


def make_tsdb(directory):
    """Real Prometheus blocks in `directory` (created), written by promtool."""
    os.makedirs(directory, exist_ok=True)
    om = directory + ".om"
    with open(om, "w") as o:
        o.write("# HELP hw_gpu_power_watts GPU power\n# TYPE hw_gpu_power_watts gauge\n")
        for h in ("chi2801", "chi2802"):
            for t in range(TSDB_START, TSDB_END + 1, 15):
                o.write(f'hw_gpu_power_watts{{host="{h}",gpu="0"}} 700 {t}\n')
        o.write("# HELP up up\n# TYPE up gauge\n")
        for h in ("chi2801", "chi2802"):
            for t in range(TSDB_START, TSDB_END + 1, 15):
                o.write(f'up{{job="node_hw",host="{h}"}} 1 {t}\n')
        o.write("# EOF\n")
    r = subprocess.run(["promtool", "tsdb", "create-blocks-from", "openmetrics", "-q", om, directory],
                       capture_output=True, text=True, timeout=120)
    os.remove(om)
    if r.returncode != 0:
        fail(f"promtool: {r.stderr}")
    blocks = sorted(n for n in os.listdir(directory) if len(n) == 26)
    if not blocks:
        fail("promtool wrote no block")
    return blocks


def make_job(ws, jid, fixture="completed", tsdb=True, log_text=None):
    """<ws>/<jid>-JAX-sec.log (a fixture log) and <ws>/<jid>-JAX-sec/ with `log` and prometheus/."""
    stem = f"{jid}-JAX-sec"
    log = os.path.join(ws, stem + ".log")
    if log_text is not None:
        with open(log, "w") as f:
            f.write(log_text)
    else:
        shutil.copy(os.path.join(FIXTURES, fixture + ".log"), log)
    jd = os.path.join(ws, stem)
    os.makedirs(jd)
    os.symlink(f"../{stem}.log", os.path.join(jd, "log"))
    blocks = make_tsdb(os.path.join(jd, "prometheus")) if tsdb else []
    return jd, log, blocks


class Run:
    def __init__(self):
        self.rc = None
        self.out = ""
        self.err = ""
        self.hwm_kb = 0          # VmHWM of mt itself
        self.seconds = 0.0
        self.timed_out = False
        self.rss_killed = False

    @property
    def text(self):
        return self.out + self.err


def _status_kb(pid, key):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def run_bounded(argv, env, timeout, rss_limit_mb=1024, stdin_data=None, on_start=None):
    """Runs argv; kills it past `timeout` s or `rss_limit_mb` MiB resident. Never hangs."""
    r = Run()
    start = time.time()
    p = subprocess.Popen(argv, env=env, stdin=subprocess.PIPE if stdin_data is not None else subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    chunks = {"out": [], "err": []}

    def pump(stream, key):
        for b in iter(lambda: stream.read(65536), b""):
            chunks[key].append(b)

    threads = [threading.Thread(target=pump, args=(p.stdout, "out"), daemon=True),
               threading.Thread(target=pump, args=(p.stderr, "err"), daemon=True)]
    for t in threads:
        t.start()
    if stdin_data is not None:
        def feed():
            try:
                p.stdin.write(stdin_data)
                p.stdin.close()
            except OSError:
                pass
        threading.Thread(target=feed, daemon=True).start()
    if on_start:
        on_start(p)
    status = None
    while True:
        pid, st = os.waitpid(p.pid, os.WNOHANG)
        if pid == p.pid:
            status = st
            break
        r.hwm_kb = max(r.hwm_kb, _status_kb(p.pid, "VmHWM"))
        if _status_kb(p.pid, "VmRSS") > rss_limit_mb * 1024:
            r.rss_killed = True
            os.kill(p.pid, signal.SIGKILL)
        elif time.time() - start > timeout:
            r.timed_out = True
            os.kill(p.pid, signal.SIGKILL)
        time.sleep(0.02)
    p.returncode = os.waitstatus_to_exitcode(status)
    r.rc = p.returncode
    r.seconds = time.time() - start
    for t in threads:
        t.join(timeout=5)
    r.out = b"".join(chunks["out"]).decode(errors="replace")
    r.err = b"".join(chunks["err"]).decode(errors="replace")
    return r


def check_bounded(r, what, max_seconds, max_mb):
    check(not r.timed_out, f"{what}: returned within {max_seconds} s (took {r.seconds:.1f} s)")
    check(not r.rss_killed, f"{what}: stayed under the RSS watchdog")
    check(r.hwm_kb < max_mb * 1024, f"{what}: peak RSS {r.hwm_kb // 1024} MiB < {max_mb} MiB")


def mcp_session(requests):
    """stdin bytes of an MCP stdio session: initialize, initialized, then `requests`; EOF."""
    lines = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "sec", "version": "1"}}},
             {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    lines += requests
    return ("\n".join(json.dumps(l) for l in lines) + "\n").encode()


def mcp_responses(out):
    res = {}
    for line in out.splitlines():
        try:
            m = json.loads(line)
        except ValueError:
            continue
        if "id" in m:
            res[m["id"]] = m
    return res
