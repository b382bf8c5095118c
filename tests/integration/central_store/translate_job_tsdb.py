#!/usr/bin/env python3
"""Rewrites a simulated job's own TSDB (mt's names: hw_*, ray_*) as a site's central
Prometheus would hold the same machines: dcgm-exporter or AMD device-metrics-exporter names per
GPU, node_exporter names per host, `up` per scrape target. Stdlib only.

  translate_job_tsdb.py JOB_TSDB_DIR OUT_TSDB_DIR --flavor dcgm|amd
                        [--prometheus prometheus] [--promtool promtool]
                        [--timeout 600] [--no-verify] [--keep-openmetrics DIR] [--summary FILE] [--quiet]

How: a real Prometheus (free loopback port, tests/lib/free_ports.py) is started on a COPY of the
job's TSDB (only its block directories; the source is never opened for writing); every raw
sample of the mapped series is read with instant queries of range selectors (`name[2h]` at
the end of each 2-hour window, deduplicated by timestamp: raw samples, never query_range's
resampling); the translated series are written as OpenMetrics text, one file per 2-hour
window aligned like Prometheus blocks (promtool cuts 2 h blocks and re-reads its whole input
once per block, so one file per window keeps long jobs linear), and each file is turned into
blocks in OUT_TSDB_DIR by `promtool tsdb create-blocks-from openmetrics`. Unless --no-verify,
a second Prometheus is started on a copy of the result and every translated sample is read
back and compared (names exactly as the real exporters spell them, label sets, timestamps,
values). Every Prometheus is stopped by PID (SIGTERM, SIGKILL after 15 s) on every path:
finally, atexit, SIGTERM/SIGINT. Every wait is bounded (--timeout bounds the whole run).

Mapping (source -> target). GPU series per (host, gpu); values copied unless a unit changes.
  flavor dcgm (job="dcgm-exporter", instance="<host>:9400"; labels gpu, UUID, pci_bus_id,
  device, modelName, Hostname, DCGM_FI_DRIVER_VERSION as dcgm-exporter's default template):
    hw_gpu_temperature_celsius -> DCGM_FI_DEV_GPU_TEMP
    hw_gpu_power_watts         -> DCGM_FI_DEV_POWER_USAGE
    ray_node_gpus_utilization  -> DCGM_FI_DEV_GPU_UTIL (a per-host source is copied to the host's GPUs)
    hw_gpu_vram_used_bytes     -> DCGM_FI_DEV_FB_USED (MiB)
    hw_gpu_clock_mhz{type=sclk}-> DCGM_FI_DEV_SM_CLOCK
    hw_gpu_ras_{umc,xgmi,gfx}_ue_total / hw_gpu_pcie_fatal_total increasing
                               -> DCGM_FI_DEV_XID_ERRORS last-value gauge {err_code, err_msg}: 0/"No Error"
                                  until the first increase; from that sample a new series 48/"Double Bit
                                  ECC Error" (79/"GPU has fallen off the bus" for PCIe fatal)
    hw_gpu_ras_umc_ue_total    -> DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS
    (ECC SBE/DBE counters are off in dcgm-exporter's default CSV: not written)
  flavor amd (job="amd-device-metrics", instance="<host>:5000", prefix amd_; labels gpu_id,
  hostname, serial_number, card_model, card_series, card_vendor, gpu_partition_id as in the
  recorded MI300X exposition tests/fixtures/exposition/amd-device-metrics-exporter-mi300x-8gpu.prom):
    temperature -> amd_gpu_junction_temperature, and amd_gpu_edge_temperature = 0 (MI300X)
    power -> amd_gpu_package_power; util -> amd_gpu_gfx_activity; vram used -> amd_gpu_used_vram (MiB)
    clock{type=sclk} -> amd_gpu_clock{clock_type="GPU_CLOCK_TYPE_SYSTEM",clock_index="0"}
    ue umc+xgmi+gfx -> amd_gpu_ecc_uncorrect_total; ce umc+xgmi -> amd_gpu_ecc_correct_total (gauges)
    (no PCIe-fatal equivalent: dropped)
  node_exporter, both flavors (job="node", instance="<host>:9100"):
    hw_tcp_retransmits_total -> node_netstat_Tcp_RetransSegs (untyped in node_exporter)
    hw_rdma_tx_retx_pkts_total -> node_infiniband_roce_adp_retransmits_total {device, port}
    hw_rdma_tx_ack_timeout_total -> node_infiniband_local_ack_timeout_errors_total {device, port}
    hw_io_pressure_full_pct -> node_pressure_io_stalled_seconds_total  (counter: base + sum pct/100 * dt)
    hw_io_pressure_some_pct -> node_pressure_io_waiting_seconds_total (same)
    hw_procs_running / hw_procs_blocked -> node_procs_running / node_procs_blocked
    hw_oom_kills_total -> node_vmstat_oom_kill (untyped in node_exporter)
    ray_node_mem_total -> node_memory_MemTotal_bytes; total - ray_node_mem_used -> node_memory_MemAvailable_bytes
    hw_context_switches_total -> node_context_switches_total
    hw_net_{rx,tx}_bytes_total -> node_network_{receive,transmit}_bytes_total {device}
  up: per host, for the GPU exporter's and node_exporter's target, the host's own `up` values
    (the minimum over the host's source targets at each time), so a dead host goes 0 here too.
  Nothing else is copied (tb_*, other hw_*/ray_* series): a site's central store does not hold them.

Exit status: 0 done (and verified), 1 failure (message on stderr), 2 usage.
"""
import argparse
import atexit
import bisect
import glob
import hashlib
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib"))
from free_ports import free_port  # noqa: E402  (below the ephemeral range: see there why)

BLOCK_MS = 2 * 3600 * 1000          # Prometheus' block range; also the read window
MIB = 1024.0 * 1024.0

# ---- the mapping ------------------------------------------------------------------------
GPU_COPY = {   # source -> {flavor: (target, scale)}; per (host, gpu), values * scale
    "hw_gpu_temperature_celsius": {"dcgm": ("DCGM_FI_DEV_GPU_TEMP", 1.0), "amd": ("amd_gpu_junction_temperature", 1.0)},
    "hw_gpu_power_watts": {"dcgm": ("DCGM_FI_DEV_POWER_USAGE", 1.0), "amd": ("amd_gpu_package_power", 1.0)},
    "hw_gpu_vram_used_bytes": {"dcgm": ("DCGM_FI_DEV_FB_USED", 1.0 / MIB), "amd": ("amd_gpu_used_vram", 1.0 / MIB)},
    "ray_node_gpus_utilization": {"dcgm": ("DCGM_FI_DEV_GPU_UTIL", 1.0), "amd": ("amd_gpu_gfx_activity", 1.0)},
}
GPU_CLOCK = "hw_gpu_clock_mhz"          # type="sclk" is the shader/SM clock, "mclk" memory (dropped)
RAS_UE = ["hw_gpu_ras_umc_ue_total", "hw_gpu_ras_xgmi_ue_total", "hw_gpu_ras_gfx_ue_total"]
RAS_CE = ["hw_gpu_ras_umc_ce_total", "hw_gpu_ras_xgmi_ce_total", "hw_gpu_ras_gfx_ce_total"]
PCIE_FATAL = "hw_gpu_pcie_fatal_total"
XID_NONE = ("0", "No Error")
XID_DBE = ("48", "Double Bit ECC Error")
XID_FELL_OFF = ("79", "GPU has fallen off the bus")

NODE_COPY = {  # source -> (target, OpenMetrics type, source labels kept (renamed))
    "hw_tcp_retransmits_total": ("node_netstat_Tcp_RetransSegs", "unknown", {}),
    "hw_rdma_tx_retx_pkts_total": ("node_infiniband_roce_adp_retransmits_total", "counter", {"device": "device", "port": "port"}),
    "hw_rdma_tx_ack_timeout_total": ("node_infiniband_local_ack_timeout_errors_total", "counter", {"device": "device", "port": "port"}),
    "hw_procs_running": ("node_procs_running", "gauge", {}),
    "hw_procs_blocked": ("node_procs_blocked", "gauge", {}),
    "hw_oom_kills_total": ("node_vmstat_oom_kill", "unknown", {}),
    "hw_context_switches_total": ("node_context_switches_total", "counter", {}),
    "hw_net_rx_bytes_total": ("node_network_receive_bytes_total", "counter", {"device": "device"}),
    "hw_net_tx_bytes_total": ("node_network_transmit_bytes_total", "counter", {"device": "device"}),
}
NODE_PRESSURE = {"hw_io_pressure_full_pct": "node_pressure_io_stalled_seconds_total",
                 "hw_io_pressure_some_pct": "node_pressure_io_waiting_seconds_total"}
MEM_TOTAL, MEM_USED = "ray_node_mem_total", "ray_node_mem_used"

FLAVOR = {
    "dcgm": {"job": "dcgm-exporter", "port": 9400},
    "amd": {"job": "amd-device-metrics", "port": 5000},
}
NODE_JOB, NODE_PORT = "node", 9100
# dcgm-exporter's recorded H100 exposition (tests/fixtures/exposition/dcgm-exporter-h100-8gpu.prom)
DCGM_MODEL, DCGM_DRIVER = "NVIDIA H100 80GB HBM3", "580.105.08"
DCGM_PCI_BUS = ["18", "2A", "3A", "5D", "9A", "AB", "BA", "DB"]
# AMD device-metrics-exporter's recorded MI300X exposition (same folder)
AMD_CARD = {"card_model": "102-G30211-0C", "card_series": "AMD Instinct MI300X OAM", "card_vendor": "AMD"}


def source_names():
    names = set(GPU_COPY) | {GPU_CLOCK, PCIE_FATAL, MEM_TOTAL, MEM_USED, "up"} | set(RAS_UE) | set(RAS_CE)
    return sorted(names | set(NODE_COPY) | set(NODE_PRESSURE))


# ---- processes: every one stopped by PID on every path ------------------------------------
_live = {}


def _stop(proc, grace=15):
    if proc.poll() is None:
        try:
            proc.terminate()
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        except ProcessLookupError:
            pass
    _live.pop(proc.pid, None)


def stop_all():
    for proc in list(_live.values()):
        _stop(proc)


atexit.register(stop_all)


def _on_signal(signum, _frame):
    stop_all()
    sys.exit(128 + signum)


class Fail(Exception):
    pass


class Deadline:
    def __init__(self, seconds):
        self.end = time.monotonic() + seconds

    def left(self, cap=None):
        left = self.end - time.monotonic()
        if left <= 0:
            raise Fail("out of time (--timeout)")
        return left if cap is None else min(left, cap)


class Prometheus:
    """A real Prometheus serving `tsdb` (a directory it may write to) on a free loopback port."""

    def __init__(self, binary, tsdb, workdir, deadline, name="prometheus"):
        self.binary, self.tsdb, self.workdir, self.deadline, self.name = binary, tsdb, workdir, deadline, name
        self.proc = None
        self.port = None
        self.log = os.path.join(workdir, name + ".log")

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    def start(self):
        cfg = os.path.join(self.workdir, self.name + ".yml")
        with open(cfg, "w") as f:
            f.write("global: {}\n")
        for attempt in range(3):   # a port taken between the check and the bind: try another
            self.port = free_port()
            with open(self.log, "w") as log:
                self.proc = subprocess.Popen(
                    [self.binary, f"--config.file={cfg}", f"--storage.tsdb.path={self.tsdb}",
                     f"--web.listen-address=127.0.0.1:{self.port}", "--storage.tsdb.retention.time=100y",
                     "--log.level=warn"],
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)
            _live[self.proc.pid] = self.proc
            ready_by = time.monotonic() + self.deadline.left(90)
            while time.monotonic() < ready_by:
                if self.proc.poll() is not None:
                    break
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/-/ready", timeout=2) as r:
                        if r.status == 200:
                            return
                except (urllib.error.URLError, OSError):
                    pass
                time.sleep(0.2)
            tail = self.log_tail()
            _stop(self.proc)
            if "address already in use" not in tail:
                raise Fail(f"{self.name} on {self.tsdb} did not become ready: {tail}")
        raise Fail(f"{self.name}: no free port after 3 tries")

    def log_tail(self, n=800):
        try:
            with open(self.log) as f:
                return f.read()[-n:].strip()
        except OSError:
            return ""

    def stop(self):
        if self.proc is not None:
            _stop(self.proc)

    def get(self, path, params):
        url = f"http://127.0.0.1:{self.port}{path}?" + urllib.parse.urlencode(params, doseq=True)
        try:
            with urllib.request.urlopen(url, timeout=self.deadline.left(120)) as r:
                doc = json.load(r)
        except urllib.error.HTTPError as e:
            raise Fail(f"{path} {params}: HTTP {e.code}: {e.read()[:400]!r}")
        except (urllib.error.URLError, OSError) as e:
            raise Fail(f"{path} {params}: {e}")
        if doc.get("status") != "success":
            raise Fail(f"{path} {params}: {doc}")
        return doc["data"]

    def names(self, start_ms, end_ms):
        return self.get("/api/v1/label/__name__/values", {"start": ms_str(start_ms), "end": ms_str(end_ms)})

    def raw(self, name, start_ms, end_ms):
        """Every raw sample of `name` in [start_ms, end_ms]: {labels tuple: [(ms, value), ...]}."""
        out = {}
        t = start_ms - 1
        while t < end_ms:
            t = min(t + BLOCK_MS, end_ms)
            data = self.get("/api/v1/query", {"query": f"{name}[{BLOCK_MS}ms]", "time": ms_str(t)})
            if data["resultType"] != "matrix":
                raise Fail(f"{name}[..]: result type {data['resultType']}")
            for s in data["result"]:
                key = tuple(sorted(s["metric"].items()))
                d = out.setdefault(key, {})
                for ts, v in s["values"]:
                    d[int(round(float(ts) * 1000))] = float(v)
        return {k: sorted(d.items()) for k, d in out.items()}


def ms_str(ms):
    return f"{ms // 1000}.{ms % 1000:03d}"


# ---- reading the source -----------------------------------------------------------------
def block_range(tsdb):
    """(first, last) sample time in ms from the blocks' meta.json (maxTime is exclusive)."""
    metas = []
    for m in glob.glob(os.path.join(tsdb, "*", "meta.json")):
        with open(m) as f:
            metas.append(json.load(f))
    if not metas:
        raise Fail(f"{tsdb}: no TSDB blocks (no */meta.json)")
    return min(m["minTime"] for m in metas), max(m["maxTime"] for m in metas) - 1


def copy_tsdb(src, dst):
    """Only what Prometheus reads: block directories (and a WAL, if any)."""
    os.makedirs(dst)
    for e in sorted(os.listdir(src)):
        p = os.path.join(src, e)
        if os.path.isdir(p) and (os.path.exists(os.path.join(p, "meta.json")) or e in ("wal", "chunks_head")):
            shutil.copytree(p, os.path.join(dst, e))


# ---- building the target series ---------------------------------------------------------
def _hash(*parts):
    return hashlib.sha1("\0".join(parts).encode()).hexdigest()


def fake_uuid(host, gpu):
    h = _hash("uuid", host, gpu)
    return f"GPU-{h[0:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def fake_serial(host, gpu):
    return "6924" + str(int(_hash("serial", host, gpu)[:12], 16))[-8:].zfill(8)


def host_of(labels):
    return labels.get("host") or labels.get("instance", "").rsplit(":", 1)[0]


class Target:
    def __init__(self):
        self.families = {}    # name -> {"type": t, "series": {labels tuple: [(ms, v)]}}

    def add(self, name, mtype, labels, samples):
        if not samples:
            return
        fam = self.families.setdefault(name, {"type": mtype, "series": {}})
        key = tuple(labels)
        fam["series"].setdefault(key, []).extend(samples)

    def finish(self):
        for fam in self.families.values():
            for key, s in fam["series"].items():
                s.sort()
                dedup = []
                for ms, v in s:
                    if dedup and dedup[-1][0] == ms:
                        dedup[-1] = (ms, v)
                    else:
                        dedup.append((ms, v))
                fam["series"][key] = dedup

    def counts(self):
        return {n: {"series": len(f["series"]), "samples": sum(len(s) for s in f["series"].values())}
                for n, f in sorted(self.families.items())}


def gpu_labels(flavor, host, gpu):
    f = FLAVOR[flavor]
    if flavor == "dcgm":
        idx = int(gpu) if gpu.isdigit() else 0
        bus = DCGM_PCI_BUS[idx % len(DCGM_PCI_BUS)]
        return [("gpu", gpu), ("UUID", fake_uuid(host, gpu)), ("pci_bus_id", f"00000000:{bus}:00.0"),
                ("device", f"nvidia{gpu}"), ("modelName", DCGM_MODEL), ("Hostname", host),
                ("DCGM_FI_DRIVER_VERSION", DCGM_DRIVER), ("instance", f"{host}:{f['port']}"), ("job", f["job"])]
    return [("gpu_id", gpu), ("hostname", host), ("serial_number", fake_serial(host, gpu)),
            ("card_model", AMD_CARD["card_model"]), ("card_series", AMD_CARD["card_series"]),
            ("card_vendor", AMD_CARD["card_vendor"]), ("gpu_partition_id", "0"),
            ("instance", f"{host}:{f['port']}"), ("job", f["job"])]


def node_labels(host, extra=()):
    return list(extra) + [("instance", f"{host}:{NODE_PORT}"), ("job", NODE_JOB)]


def step_sum(series_list):
    """Sum of step functions at the union of their times (each holds its last value; 0 before)."""
    times = sorted({ms for s in series_list for ms, _ in s})
    out = []
    idx = [0] * len(series_list)
    last = [0.0] * len(series_list)
    for t in times:
        for i, s in enumerate(series_list):
            while idx[i] < len(s) and s[idx[i]][0] <= t:
                last[i] = s[idx[i]][1]
                idx[i] += 1
        out.append((t, sum(last)))
    return out


def xid_series(ue_list, fatal):
    """[(err_code, err_msg), [(ms, value)]] runs of DCGM_FI_DEV_XID_ERRORS for one GPU."""
    comps = [(s, XID_DBE) for s in ue_list] + ([(fatal, XID_FELL_OFF)] if fatal else [])
    events = {}   # ms -> the XID that fires there (79 wins over 48 at the same sample)
    times = set()
    for s, xid in comps:
        prev = None
        for ms, v in s:
            times.add(ms)
            if prev is not None and v > prev and not math.isnan(v):
                if events.get(ms) != XID_FELL_OFF:
                    events[ms] = xid
            prev = v
    runs = []
    current = XID_NONE
    for t in sorted(times):
        current = events.get(t, current)
        if not runs or runs[-1][0] != current:
            runs.append((current, []))
        runs[-1][1].append((t, float(current[0])))
    return runs


def pressure_counter(host, name, samples):
    """A seconds counter whose derivative over each scrape interval is that sample's pct/100."""
    base = 500.0 + int(_hash("psi", host, name)[:6], 16) % 50000 / 10.0
    out, c, prev = [], base, None
    for ms, pct in samples:
        if prev is not None and not math.isnan(pct):
            c += max(0.0, pct) / 100.0 * (ms - prev) / 1000.0
        out.append((ms, round(c, 6)))
        prev = ms
    return out


def translate(src, flavor):
    """src: {source name: {labels tuple: samples}} -> Target."""
    t = Target()
    gpu_series = {}   # (host, gpu) -> {source name: samples}
    gpus_of = {}      # host -> set of gpu ids
    for name, series in src.items():
        for key, samples in series.items():
            lab = dict(key)
            if "gpu" in lab and (name.startswith("hw_gpu_") or name == "ray_node_gpus_utilization"):
                gpus_of.setdefault(host_of(lab), set()).add(lab["gpu"])

    # GPU exporter
    for name, per in GPU_COPY.items():
        target, scale = per[flavor]
        for key, samples in src.get(name, {}).items():
            lab = dict(key)
            host = host_of(lab)
            vals = [(ms, v * scale) for ms, v in samples] if scale != 1.0 else samples
            gpus = [lab["gpu"]] if "gpu" in lab else sorted(gpus_of.get(host, ()), key=lambda g: (len(g), g))
            for g in gpus:
                t.add(target, "gauge", gpu_labels(flavor, host, g), vals)
                if flavor == "amd" and name == "hw_gpu_temperature_celsius":
                    t.add("amd_gpu_edge_temperature", "gauge", gpu_labels(flavor, host, g), [(ms, 0.0) for ms, _ in samples])
    for key, samples in src.get(GPU_CLOCK, {}).items():
        lab = dict(key)
        if lab.get("type", "sclk") != "sclk" or "gpu" not in lab:
            continue
        host = host_of(lab)
        if flavor == "dcgm":
            t.add("DCGM_FI_DEV_SM_CLOCK", "gauge", gpu_labels(flavor, host, lab["gpu"]), samples)
        else:
            t.add("amd_gpu_clock", "gauge",
                  [("clock_index", "0"), ("clock_type", "GPU_CLOCK_TYPE_SYSTEM")] + gpu_labels(flavor, host, lab["gpu"]),
                  samples)
    for name in RAS_UE + RAS_CE + [PCIE_FATAL]:
        for key, samples in src.get(name, {}).items():
            lab = dict(key)
            if "gpu" in lab:
                gpu_series.setdefault((host_of(lab), lab["gpu"]), {})[name] = samples
    for (host, gpu), per in sorted(gpu_series.items()):
        ue = [per[n] for n in RAS_UE if n in per]
        ce = [per[n] for n in RAS_CE if n in per]
        if flavor == "dcgm":
            for (code, msg), run in xid_series(ue, per.get(PCIE_FATAL)):
                t.add("DCGM_FI_DEV_XID_ERRORS", "gauge",
                      gpu_labels(flavor, host, gpu)[:-2] + [("err_code", code), ("err_msg", msg)] +
                      gpu_labels(flavor, host, gpu)[-2:], run)
            if "hw_gpu_ras_umc_ue_total" in per:
                t.add("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "unknown", gpu_labels(flavor, host, gpu),
                      per["hw_gpu_ras_umc_ue_total"])
        else:
            if ue:
                t.add("amd_gpu_ecc_uncorrect_total", "gauge", gpu_labels(flavor, host, gpu), step_sum(ue))
            if ce:
                t.add("amd_gpu_ecc_correct_total", "gauge", gpu_labels(flavor, host, gpu), step_sum(ce))

    # node_exporter
    for name, (target, mtype, keep) in NODE_COPY.items():
        for key, samples in src.get(name, {}).items():
            lab = dict(key)
            extra = [(new, lab[old]) for old, new in keep.items() if old in lab]
            t.add(target, mtype, node_labels(host_of(lab), extra), samples)
    for name, target in NODE_PRESSURE.items():
        for key, samples in src.get(name, {}).items():
            host = host_of(dict(key))
            t.add(target, "counter", node_labels(host), pressure_counter(host, name, samples))
    totals = {host_of(dict(k)): s for k, s in src.get(MEM_TOTAL, {}).items()}
    for host, samples in totals.items():
        t.add("node_memory_MemTotal_bytes", "gauge", node_labels(host), samples)
    for key, used in src.get(MEM_USED, {}).items():
        host = host_of(dict(key))
        total = totals.get(host)
        if not total:
            continue
        times = [ms for ms, _ in total]
        avail = []
        for ms, u in used:
            i = bisect.bisect_right(times, ms) - 1   # the total known at that time
            if i < 0:
                i = 0
            avail.append((ms, total[i][1] - u))
        t.add("node_memory_MemAvailable_bytes", "gauge", node_labels(host), avail)

    # up, per host: the minimum over its source targets at each time
    ups = {}
    for key, samples in src.get("up", {}).items():
        d = ups.setdefault(host_of(dict(key)), {})
        for ms, v in samples:
            d[ms] = min(v, d.get(ms, v))
    f = FLAVOR[flavor]
    for host, d in sorted(ups.items()):
        samples = sorted(d.items())
        t.add("up", "gauge", [("instance", f"{host}:{f['port']}"), ("job", f["job"])], samples)
        t.add("up", "gauge", [("instance", f"{host}:{NODE_PORT}"), ("job", NODE_JOB)], samples)
    t.finish()
    return t


# ---- writing OpenMetrics and blocks -----------------------------------------------------
def fmt_value(v):
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    if v == int(v) and abs(v) < 1e15:
        return str(int(v))
    return repr(v)


def esc(s):
    return s.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n")


def family_name(name, mtype):
    if mtype == "counter":
        if not name.endswith("_total"):
            raise Fail(f"{name}: an OpenMetrics counter's sample name must end in _total")
        return name[:-len("_total")]
    return name


def write_openmetrics(target, outdir):
    """One file per 2 h window aligned like Prometheus blocks; returns the paths."""
    windows = {}   # window index -> {name: [(labels, samples)]}
    for name, fam in target.families.items():
        for key, samples in fam["series"].items():
            times = [ms for ms, _ in samples]
            w0, w1 = samples[0][0] // BLOCK_MS, samples[-1][0] // BLOCK_MS
            for w in range(w0, w1 + 1):
                a = bisect.bisect_left(times, w * BLOCK_MS)
                b = bisect.bisect_left(times, (w + 1) * BLOCK_MS)
                if a < b:
                    windows.setdefault(w, {}).setdefault(name, []).append((key, samples[a:b]))
    paths = []
    for w in sorted(windows):
        path = os.path.join(outdir, f"window-{w * BLOCK_MS}.om")
        with open(path, "w") as f:
            for name in sorted(windows[w]):
                mtype = target.families[name]["type"]
                f.write(f"# TYPE {family_name(name, mtype)} {mtype}\n")
                for key, samples in sorted(windows[w][name]):
                    lab = ",".join(f'{k}="{esc(v)}"' for k, v in key)
                    prefix = f"{name}{{{lab}}} "
                    f.write("".join(f"{prefix}{fmt_value(v)} {ms_str(ms)}\n" for ms, v in samples))
            f.write("# EOF\n")
        paths.append(path)
    return paths


def create_blocks(promtool, files, out, deadline, remove_inputs=True):
    os.makedirs(out, exist_ok=True)
    for path in files:
        try:
            p = subprocess.run([promtool, "tsdb", "create-blocks-from", "openmetrics", "-q", path, out],
                               capture_output=True, text=True, timeout=deadline.left(300))
        except subprocess.TimeoutExpired:
            raise Fail(f"promtool on {path}: timed out")
        if p.returncode != 0:
            raise Fail(f"promtool on {path} (exit {p.returncode}): {(p.stderr or p.stdout)[-800:]}")
        if remove_inputs:
            os.remove(path)   # ~200 bytes a sample: a 35 h job writes ~1 GB of text


# ---- verification: read everything back --------------------------------------------------
def verify(prom, target, start_ms, end_ms):
    problems = []
    names = set(prom.names(start_ms, end_ms))
    want = set(target.families)
    if names != want:
        problems.append(f"names in the built store {sorted(names)} != written {sorted(want)}")
    for name in sorted(want & names):
        got = prom.raw(name, start_ms, end_ms)
        exp = {tuple(sorted([("__name__", name)] + list(k))): s for k, s in target.families[name]["series"].items()}
        if set(got) != set(exp):
            missing, extra = set(exp) - set(got), set(got) - set(exp)
            problems.append(f"{name}: series differ: missing {sorted(missing)[:2]} extra {sorted(extra)[:2]}")
            continue
        for k, s in exp.items():
            g = got[k]
            same = len(g) == len(s) and all(a[0] == b[0] and (a[1] == b[1] or (math.isnan(a[1]) and math.isnan(b[1])) or
                                                             abs(a[1] - b[1]) <= 1e-9 * max(1.0, abs(b[1])))
                                            for a, b in zip(g, s))
            if not same:
                problems.append(f"{name}{dict(k)}: {len(g)} samples read back, {len(s)} written, or values differ")
                break
    return problems


# ---- main ------------------------------------------------------------------------------
def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("job_tsdb")
    ap.add_argument("out_tsdb")
    ap.add_argument("--flavor", choices=sorted(FLAVOR), required=True)
    ap.add_argument("--prometheus", default="prometheus")
    ap.add_argument("--promtool", default="promtool")
    ap.add_argument("--timeout", type=float, default=600, help="seconds for the whole run (default 600)")
    ap.add_argument("--no-verify", action="store_true", help="skip reading the built store back")
    ap.add_argument("--keep-openmetrics", metavar="DIR", help="copy the OpenMetrics files here")
    ap.add_argument("--summary", metavar="FILE", help="write a JSON summary (source labels, counts, timings)")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)
    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    deadline = Deadline(args.timeout)
    for b in (args.prometheus, args.promtool):
        if not shutil.which(b):
            print(f"translate_job_tsdb: {b} not found", file=sys.stderr)
            return 1
    if os.path.exists(args.out_tsdb) and os.listdir(args.out_tsdb):
        print(f"translate_job_tsdb: {args.out_tsdb} exists and is not empty", file=sys.stderr)
        return 2
    work = tempfile.mkdtemp(prefix="mt-translate.")
    summary = {"flavor": args.flavor, "source": args.job_tsdb, "out": args.out_tsdb}
    t0 = time.monotonic()
    ok = False
    try:
        start_ms, end_ms = block_range(args.job_tsdb)
        summary.update(start_ms=start_ms, end_ms=end_ms)
        copy_tsdb(args.job_tsdb, os.path.join(work, "source"))
        src = {}
        src_labels = {}
        with Prometheus(args.prometheus, os.path.join(work, "source"), work, deadline, "source-prometheus") as prom:
            present = set(prom.names(start_ms, end_ms))
            for name in source_names():
                if name in present:
                    src[name] = prom.raw(name, start_ms, end_ms)
                    src_labels[name] = {"series": len(src[name]),
                                        "samples": sum(len(s) for s in src[name].values()),
                                        "labels": sorted({k for key in src[name] for k, _ in key} - {"__name__"})}
        summary["read_s"] = round(time.monotonic() - t0, 2)
        summary["source_series"] = src_labels
        summary["source_not_present"] = sorted(set(source_names()) - set(src))
        summary["source_not_copied"] = sorted(present - set(source_names()))
        t1 = time.monotonic()
        target = translate(src, args.flavor)
        del src
        om_dir = os.path.join(work, "openmetrics")
        os.makedirs(om_dir)
        files = write_openmetrics(target, om_dir)
        summary["openmetrics_files"] = len(files)
        summary["openmetrics_bytes"] = sum(os.path.getsize(p) for p in files)
        if args.keep_openmetrics:
            os.makedirs(args.keep_openmetrics, exist_ok=True)
            for p in files:
                shutil.copy(p, args.keep_openmetrics)
        create_blocks(args.promtool, files, args.out_tsdb, deadline)
        summary["write_s"] = round(time.monotonic() - t1, 2)
        summary["target"] = target.counts()
        if not args.no_verify:
            t2 = time.monotonic()
            copy_tsdb(args.out_tsdb, os.path.join(work, "built"))
            with Prometheus(args.prometheus, os.path.join(work, "built"), work, deadline, "built-prometheus") as prom:
                problems = verify(prom, target, start_ms, end_ms)
            summary["verify_s"] = round(time.monotonic() - t2, 2)
            if problems:
                raise Fail("the built store differs from what was written:\n  " + "\n  ".join(problems[:20]))
        summary["total_s"] = round(time.monotonic() - t0, 2)
        ok = True
        if not args.quiet:
            n = sum(c["samples"] for c in summary["target"].values())
            print(f"translated {args.job_tsdb} -> {args.out_tsdb} ({args.flavor}): {len(target.families)} names, "
                  f"{sum(c['series'] for c in summary['target'].values())} series, {n} samples, "
                  f"{len(files)} OpenMetrics window(s), {summary['total_s']} s"
                  + ("" if args.no_verify else ", verified"))
        return 0
    except Fail as e:
        summary["error"] = str(e)
        print(f"translate_job_tsdb: {e}", file=sys.stderr)
        return 1
    finally:
        stop_all()
        if args.summary:
            with open(args.summary, "w") as f:
                json.dump(summary, f, indent=1, sort_keys=True)
        if ok:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"translate_job_tsdb: work directory kept: {work}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
