#!/usr/bin/env python3
"""Independent scenario generator for the mt accuracy scorer.

Written without looking at mt's diagnosis code or at mt-simtrain's scenario fuzzer: only the
public formats (maxtext-slurm job logs, the metrics exporter's series names, the Prometheus
TSDB) and the truth.json schema that tests/accuracy/score.py reads.

usage: gen.py --scenario-fuzz SEED --out DIR [--parallel N]

Writes DIR/<job>.log, DIR/<job>/prometheus/<blocks> (via `promtool tsdb create-blocks-from
openmetrics`), a few side files, and DIR/truth.json. Deterministic per seed (apart from the
ULIDs promtool gives the blocks). Python 3.11 stdlib only.
"""
import argparse
import bisect
import datetime as dt
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

WINDOW = 7200  # TSDB block length: one OpenMetrics file per aligned 2 h window

# ----------------------------------------------------------------------------------------
# hardware and model tables (my own choices)
# ----------------------------------------------------------------------------------------
GPU_TYPES = {
    # peak bf16 TFLOP/s, max sclk, mclk, VRAM, busy power range, busy-wait/busy ratio, idle power,
    # busy junction temperature, idle temperature
    "MI300X": dict(peak=1307, sclk=2100, mclk=1300, vram=192 * 2**30, p_busy=(610, 715),
                   wait=(0.30, 0.37), p_idle=(135, 170), t_busy=(66, 80), t_idle=(36, 46)),
    "MI325X": dict(peak=1307, sclk=2100, mclk=1400, vram=256 * 2**30, p_busy=(780, 920),
                   wait=(0.30, 0.36), p_idle=(160, 200), t_busy=(68, 82), t_idle=(37, 47)),
    "MI355X": dict(peak=2500, sclk=2400, mclk=2000, vram=288 * 2**30, p_busy=(840, 960),
                   wait=(0.31, 0.36), p_idle=(235, 265), t_busy=(64, 78), t_idle=(38, 48)),
}

MODELS = [  # name, MoE?, relative size (drives step time)
    ("llama3.1-70b", False, 1.0), ("llama3-70b", False, 1.0), ("llama2-70b", False, 0.9),
    ("llama3.1-405b", False, 3.0), ("qwen3-14b", False, 0.35), ("mixtral-8x22b", True, 1.3),
    ("deepseek3-671b", True, 2.2), ("qwen3-30b-a3b", True, 0.5), ("grok-1", True, 2.0),
    ("kimi-k2-1t", True, 2.8),
]

FAMILIES = ["none", "thermal", "rdma", "tcp", "io_stall", "cpu_contention", "collective_hang",
            "node_death", "host_oom", "training"]
FAMILY_WEIGHTS = [16, 10, 11, 8, 9, 9, 8, 9, 8, 9]

NAMINGS = ["rack", "num", "ip", "letter", "compute"]


def iso(t):
    return dt.datetime.fromtimestamp(t, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def natkey(s):
    return [int(x) if x.isdigit() else x for x in re.split(r"(\d+)", s)]


def clamp(x, a, b):
    return a if x < a else b if x > b else x


# ----------------------------------------------------------------------------------------
# host names
# ----------------------------------------------------------------------------------------
def host_pool(rng, scheme, size):
    names = []
    if scheme == "rack":
        p = rng.choice(["mi300", "gpu", "a100", "mi355", "tc"])
        spr = rng.choice([4, 8, 8, 16])
        r = rng.randint(1, 40)
        while len(names) < size:
            for s in range(1, spr + 1):
                names.append(f"{p}-{r:02d}-{s:02d}")
            r += 1
    elif scheme == "num":
        p = rng.choice(["gpu", "node", "cn", "g", "hpc"])
        w = rng.choice([3, 4, 4])
        n0 = rng.randint(1, 10 ** (w - 1) * 5)
        names = [f"{p}{n0 + i:0{w}d}" for i in range(size)]
    elif scheme == "ip":
        a, b = rng.randint(0, 30), rng.randint(0, 250)
        cs = sorted(rng.sample(range(2, 254), min(size, 250)))
        names = [f"ip-10-{a}-{b}-{c}" for c in cs]
        while len(names) < size:  # very large pools spill into the next subnet
            b += 1
            names += [f"ip-10-{a}-{b}-{c}" for c in sorted(rng.sample(range(2, 254), 100))]
    elif scheme == "letter":
        x = rng.choice("abcdefgh")
        n0 = rng.randint(1, 300)
        names = [f"node-{x}-{n0 + i:03d}" for i in range(size)]
    else:  # compute-<rack>-<n>, no zero padding
        r = rng.randint(0, 9)
        per = rng.choice([16, 20, 32])
        i = 0
        while len(names) < size:
            names.append(f"compute-{r}-{i % per + 1}")
            i += 1
            if i % per == 0:
                r += 1
    return sorted(names[:size], key=natkey)


def pick_hosts(rng, pool, n, start=None):
    """n hosts from a contiguous stretch of the pool, with a few holes (drained nodes)."""
    hole = rng.choice([0.0, 0.05, 0.15])
    if start is None:
        start = rng.randint(0, max(0, len(pool) - int(n * (1 + hole) * 1.3) - 1))
    out, i = [], start
    while len(out) < n:
        if rng.random() >= hole or len(pool) - i <= n - len(out):
            out.append(pool[i % len(pool)])
        i += 1
    return sorted(dict.fromkeys(out), key=natkey)


def compact_nodelist(hosts):
    """Slurm compact host list: gpu[0423-0430,0432],ip-10-1-2-[3,17]."""
    groups = []
    for h in hosts:
        m = re.match(r"^(.*?)(\d+)$", h)
        if not m:
            groups.append((h, None))
            continue
        pre, num = m.group(1), m.group(2)
        if groups and groups[-1][0] == pre and groups[-1][1] is not None:
            groups[-1][1].append(num)
        else:
            groups.append((pre, [num]))
    parts = []
    for pre, nums in groups:
        if nums is None:
            parts.append(pre)
            continue
        if len(nums) == 1:
            parts.append(pre + nums[0])
            continue
        ranges = []
        for s in nums:
            if ranges and int(s) == int(ranges[-1][1]) + 1 and len(s) == len(ranges[-1][1]):
                ranges[-1][1] = s
            else:
                ranges.append([s, s])
        parts.append(pre + "[" + ",".join(a if a == b else f"{a}-{b}" for a, b in ranges) + "]")
    return ",".join(parts)


# ----------------------------------------------------------------------------------------
# a job: configuration, step timeline, effects
# ----------------------------------------------------------------------------------------
class Job:
    def __init__(self, rng, job_id, model, hosts, gpu, gpn, nics, eth, interval, t_submit,
                 steps, st, ckpt, pdbs, seq, mfu):
        self.rng = rng
        self.id = str(job_id)
        self.model, self.moe, _ = model
        self.hosts = hosts
        self.gpu_name = gpu
        self.gpu = GPU_TYPES[gpu]
        self.gpn = gpn
        self.nics = nics
        self.eth = eth
        self.interval = interval
        self.t_submit = t_submit
        self.steps = steps
        self.st = st
        self.ckpt = ckpt
        self.pdbs, self.seq, self.mfu = pdbs, seq, mfu
        self.name = f"JAX-{self.model}-steps_{steps}"
        self.stem = f"{self.id}-{self.name}"
        self.slow = []        # step-time effects: dict(s0, s1, mult, ramp)
        self.fx = []          # metric effects (resolved to times after the timeline)
        self.stop = None      # dict(kind, step, host, variant, busy_wait, end_mode, ...)
        self.train_drift = None
        self.sigma = rng.uniform(0.004, 0.014)
        self.drift = rng.uniform(-0.008, 0.008)
        self.tail_p = rng.uniform(0.004, 0.02)

    # -- step timeline --------------------------------------------------------------------
    def slow_mult(self, i):
        m = 1.0
        for e in self.slow:
            if i >= e["s0"] and (e["s1"] is None or i < e["s1"]):
                r = e["ramp"]
                f = 1.0 if r <= 0 else clamp((i - e["s0"] + 1) / r, 0.0, 1.0)
                m *= 1 + (e["mult"] - 1) * f
        return m

    def build_timeline(self):
        rng = self.rng
        t = self.t_submit
        self.stage = {}
        for name, lo, hi in (("Preflight", 15, 60), ("Docker pull", 20, 75), ("ECC check", 5, 12)):
            d = rng.randint(lo, hi)
            self.stage[name] = (t, d)
            t += d
        self.t_train = t
        self.t_prom = t + rng.randint(10, 22)
        self.t_proc = t + rng.randint(25, 45)      # training subprocesses start
        compile_s = rng.uniform(70, 200) * (0.7 + 0.3 * self.st / 10)
        last = self.steps - 1 if self.stop is None else self.stop["step"] - 1
        self.last_step = last
        ends, secs = [], []
        t_end = self.t_proc + compile_s
        secs.append(compile_s + rng.uniform(2, 8))
        ends.append(t_end)
        self.ckpt_windows = []
        extra_next = 0.0
        for i in range(1, last + 1):
            base = self.st * (rng.uniform(1.8, 3.5) if i == 1 else 1.0)
            s = base * math.exp(rng.gauss(0, self.sigma)) * (1 + self.drift * i / self.steps)
            if rng.random() < self.tail_p:          # heavy tail: a slow step now and then
                s *= 1 + min(2.0, 0.08 * rng.paretovariate(1.6))
            s *= self.slow_mult(i)
            if extra_next:
                s += extra_next
                extra_next = 0.0
            secs.append(s)
            t_end += s
            ends.append(t_end)
            if self.ckpt and i % self.ckpt == 0 and i < self.steps - 1:
                extra_next = rng.uniform(0.4, 1.8) * self.st + rng.uniform(3, 20)
                self.ckpt_windows.append((t_end, t_end + extra_next))
        self.step_end = ends
        self.step_sec = secs
        self.t_last = ends[-1]
        if self.stop is None:
            self.t_stop = None
            self.t_metrics_end = self.t_last + rng.uniform(20, 70)
        else:
            self.t_stop = self.t_last + self.st * rng.uniform(0.3, 0.9)
            self.t_metrics_end = self.t_stop + self.stop["busy_wait"]
        # the first scrape lands on the interval grid after Prometheus started
        I = self.interval
        first = math.ceil((self.t_prom + 2) / I) * I
        n = int((self.t_metrics_end - first) // I) + 1
        self.scrapes = [first + j * I for j in range(n)]

    def step_start(self, s):
        """Wall time at which step s began."""
        if s <= 0:
            return self.t_proc
        if s - 1 < len(self.step_end):
            return self.step_end[s - 1]
        return self.t_last

    def tgs_at(self, i):
        return self.pdbs * self.seq / self.step_sec[i]


# ----------------------------------------------------------------------------------------
# OpenMetrics writer: family-contiguous, split into aligned 2 h windows
# ----------------------------------------------------------------------------------------
class OM:
    def __init__(self):
        self.fams = {}    # name -> [type, {window: [lines]}]
        self.order = []

    def add(self, fam, typ, sample_name, labels, ts, vals, fmt):
        """ts: list of (epoch seconds as str, window); vals: list (None = no sample)."""
        if fam not in self.fams:
            self.fams[fam] = [typ, {}]
            self.order.append(fam)
        buckets = self.fams[fam][1]
        head = sample_name + "{" + labels + "} "
        cur_w, cur = None, None
        for (tstr, w), v in zip(ts, vals):
            if v is None:
                continue
            if w != cur_w:
                cur = buckets.setdefault(w, [])
                cur_w = w
            cur.append(head + fmt(v) + " " + tstr)

    def windows(self):
        ws = set()
        for typ, b in self.fams.values():
            ws.update(b)
        return sorted(ws)

    def write(self, w, path):
        with open(path, "w") as f:
            for fam in self.order:
                typ, b = self.fams[fam]
                lines = b.get(w)
                if not lines:
                    continue
                f.write(f"# TYPE {fam} {typ}\n")
                f.write("\n".join(lines))
                f.write("\n")
            f.write("# EOF\n")


F0 = lambda v: "%.0f" % v
F1 = lambda v: "%.1f" % v
F2 = lambda v: "%.2f" % v
F3 = lambda v: "%.3f" % v
FG = lambda v: "%.7g" % v
FR = lambda v: repr(float(v))


def counter(start, incs):
    out, c = [], start
    for d in incs:
        if d is None:
            out.append(None)
            continue
        c += d
        out.append(c)
    return out


def pois(rng, lam):
    """Cheap Poisson-ish draw (normal approximation above 20)."""
    if lam <= 0:
        return 0
    if lam < 20:
        L, k, p = math.exp(-lam), 0, 1.0
        while True:
            p *= rng.random()
            if p <= L:
                return k
            k += 1
    return max(0, int(round(rng.gauss(lam, math.sqrt(lam)))))


# ----------------------------------------------------------------------------------------
# metric rendering
# ----------------------------------------------------------------------------------------
def ramp_up(t, t0, tau):
    if t < t0:
        return 0.0
    if tau <= 0:
        return 1.0
    return 1 - math.exp(-(t - t0) / tau)


def render_tsdb(job, om, rng):
    I = job.interval
    S = job.scrapes
    M = len(S)
    g = job.gpu
    # ---- global per-scrape state ----
    phase, duty, comm, ck = [0] * M, [0.0] * M, [0.0] * M, [0.0] * M
    cw_starts = [a for a, b in job.ckpt_windows]
    for j, t in enumerate(S):
        if t < job.step_end[0]:
            phase[j] = 0  # compile / step 0
            duty[j] = 0.85 if t > job.t_proc + 0.7 * (job.step_end[0] - job.t_proc) else 0.0
            comm[j] = 0.0
        elif job.t_stop is None and t > job.t_last + 3:
            phase[j] = 3  # finished, tearing down
        elif job.t_stop is not None and t >= job.t_stop:
            phase[j] = 2  # hung: busy-wait
        else:
            phase[j] = 1
            i = min(bisect.bisect_left(job.step_end, t), len(job.step_sec) - 1)
            f = 1.0 / job.slow_mult(i) if i > 0 else 1.0
            duty[j] = f
            comm[j] = f
        k = bisect.bisect_right(cw_starts, t) - 1
        if k >= 0:
            a, b = job.ckpt_windows[k]
            if t <= b:
                ck[j] = 1.0
                if phase[j] == 1:
                    duty[j] *= 0.5
                    comm[j] *= 0.3
            else:
                ck[j] = math.exp(-(t - b) / 15.0)
    day_phase = rng.uniform(0, 2 * math.pi)
    day_amp = rng.uniform(0.8, 3.0)
    amb = [day_amp * math.sin(2 * math.pi * (t % 86400) / 86400 + day_phase) for t in S]

    def win(t):
        return int(t // WINDOW)

    # global Prometheus gaps (watchdog restart)
    gap_all = [False] * M
    for e in job.fx:
        if e["type"] == "gap_all":
            for j, t in enumerate(S):
                if e["t0"] <= t < e["t1"]:
                    gap_all[j] = True

    tb_host = job.hosts[0]
    replica0 = set(job.hosts[:max(1, len(job.hosts) // 4)])
    p_wait_frac = rng.uniform(*g["wait"])
    for hi, h in enumerate(job.hosts):
        hfx = [e for e in job.fx if h in e.get("hosts", ())]
        kinds = {e["type"]: e for e in hfx}
        off_hw = rng.randint(0, int(I * 1000) - 1) / 1000.0
        off_ray = rng.randint(0, int(I * 1000) - 1) / 1000.0
        ts_hw = [("%.3f" % (t + off_hw), win(t + off_hw)) for t in S]
        ts_ray = [("%.3f" % (t + off_ray), win(t + off_ray)) for t in S]
        # presence of the node_hw target / the ray target, and the value of `up`
        hw_ok = [not gap for gap in gap_all]
        ray_ok = list(hw_ok)
        up_hw = [1 if ok else None for ok in hw_ok]
        up_ray = list(up_hw)
        gpu_ok = list(hw_ok)
        if "late_join" in kinds:
            t1 = kinds["late_join"]["t1"]
            for j, t in enumerate(S):
                if t < t1 and hw_ok[j]:
                    hw_ok[j] = gpu_ok[j] = False
                    up_hw[j] = 0
        if "gap_host" in kinds:
            e = kinds["gap_host"]
            for j, t in enumerate(S):
                if e["t0"] <= t < e["t1"] and hw_ok[j]:
                    hw_ok[j] = gpu_ok[j] = False
                    up_hw[j] = 0
        dead_j = None
        stop = job.stop
        if stop and stop["kind"] == "death" and stop["host"] == h:
            dead_j = bisect.bisect_left(S, stop["t_death"])
            for j in range(dead_j, M):
                if stop["variant"] == "hard":
                    if hw_ok[j]:
                        up_hw[j] = 0
                    if ray_ok[j]:
                        up_ray[j] = 0
                    hw_ok[j] = ray_ok[j] = gpu_ok[j] = False
                else:  # GPUs fell off the bus: the GPU plugin times out, the host lives on
                    gpu_ok[j] = False
        oom_j = None
        if stop and stop["kind"] == "oom" and stop["host"] == h:
            oom_j = bisect.bisect_left(S, stop["t_kill"])
        missing = kinds["missing"]["what"] if "missing" in kinds else None
        if missing == "ray":
            for j in range(M):
                if ray_ok[j]:
                    up_ray[j] = 0
                ray_ok[j] = False

        lab = f'host="{h}",instance="{h}:9400",job="node_hw"'
        labr = f'host="{h}",instance="{h}:55080",job="ray"'

        # ---------------- GPUs ----------------
        p_busy_h = rng.uniform(*g["p_busy"])
        t_busy_h = rng.uniform(*g["t_busy"])
        t_idle_h = rng.uniform(*g["t_idle"])
        p_idle_h = rng.uniform(*g["p_idle"])
        hot = kinds["hot"]["delta"] if "hot" in kinds else 0.0
        therm = kinds.get("thermal")
        gpu_util_all = []
        for gi in range(job.gpn):
            pb = p_busy_h * (1 + rng.gauss(0, 0.025))
            pw = pb * p_wait_frac * (1 + rng.gauss(0, 0.03))
            pi_ = p_idle_h * (1 + rng.gauss(0, 0.04))
            tb = t_busy_h + rng.gauss(0, 2.0)
            ti = t_idle_h + rng.gauss(0, 1.5)
            vfrac = rng.uniform(0.84, 0.95)
            hot_gpu = therm is not None and gi in therm["gpus"]
            temp, power, sclk, mclk, util, vram = [], [], [], [], [], []
            T = ti + amb[0] + hot
            alpha = 1 - math.exp(-I / 80.0)
            for j, t in enumerate(S):
                ph = phase[j]
                if dead_j is not None and j >= dead_j:
                    ph = -1
                if oom_j is not None and j >= oom_j:
                    ph = 3
                rth = 0.0
                if hot_gpu and ph in (1, 2):
                    rth = ramp_up(t, therm["t0"], therm["tau"])
                    if therm.get("t1") is not None and t >= therm["t1"]:
                        rth = max(0.0, 1 - (t - therm["t1"]) / 300.0)
                if ph == 1 or (ph == 0 and duty[j] > 0):
                    # a throttled GPU is the straggler: it computes all the time, the others wait
                    d = duty[j] if rth <= 0 else max(duty[j], rth)
                    p = pw + (pb - pw) * d
                    sc = g["sclk"] * rng.uniform(0.93, 1.0)
                    u = 100 - abs(rng.gauss(0, 1.5)) if ck[j] < 1 else rng.uniform(35, 90)
                    vr = vfrac
                elif ph == 2:
                    p = pw
                    sc = g["sclk"] * rng.uniform(0.9, 1.0)
                    u = 100
                    vr = vfrac
                elif ph == -1:
                    p, sc, u, vr = 0.0, 0.0, 0.0, vfrac
                else:
                    p = pi_
                    sc = rng.uniform(100, 320)
                    u = 0 if rng.random() < 0.9 else rng.randint(1, 6)
                    if ph == 3 or t < job.t_proc + 20:
                        vr = 0.002
                    else:
                        vr = vfrac * 0.3
                if rth > 0:
                    sc *= 1 - (1 - therm["clock"]) * rth
                    p *= 1 - (1 - therm["power"]) * rth
                p *= 1 + rng.gauss(0, 0.012)
                # temperature follows power with a lag
                frac = (p - pi_) / max(1.0, pb - pi_)
                target = ti + (tb - ti) * max(0.0, frac) + amb[j] + hot
                if rth > 0:
                    target += (therm["temp"] - tb) * rth
                T += (target - T) * alpha
                tv = T + rng.gauss(0, 0.35)
                if rng.random() < 0.0015:   # single-scrape sensor glitch
                    tv += rng.uniform(5, 12)
                temp.append(tv)
                power.append(max(0.0, p))
                sclk.append(sc)
                mclk.append(g["mclk"] if ph != 3 and ph != -1 else rng.choice([g["mclk"], 900]))
                util.append(u)
                vram.append(vr * g["vram"] * (1 + rng.gauss(0, 0.0005)))
            gpu_util_all.append(util)
            if missing == "gpu":
                continue
            gl = f'gpu="{gi}",{lab}'
            okv = lambda vals: [v if gpu_ok[j] else None for j, v in enumerate(vals)]
            om.add("hw_gpu_temperature_celsius", "gauge", "hw_gpu_temperature_celsius", gl, ts_hw, okv(temp), F1)
            om.add("hw_gpu_power_watts", "gauge", "hw_gpu_power_watts", gl, ts_hw, okv(power), F1)
            om.add("hw_gpu_clock_mhz", "gauge", "hw_gpu_clock_mhz", gl + ',type="sclk"', ts_hw, okv(sclk), F0)
            om.add("hw_gpu_clock_mhz", "gauge", "hw_gpu_clock_mhz", gl + ',type="mclk"', ts_hw, okv(mclk), F0)
            om.add("hw_gpu_vram_used_bytes", "gauge", "hw_gpu_vram_used_bytes", gl, ts_hw, okv(vram), F0)
            om.add("hw_gpu_vram_total_bytes", "gauge", "hw_gpu_vram_total_bytes", gl, ts_hw,
                   okv([g["vram"]] * M), F0)
            # RAS / PCIe counters (cumulative since boot)
            ras = {"umc_ce": rng.choice([0, 0, 0, 1, 2, 5]), "umc_ue": 0, "xgmi_ce": 0, "xgmi_ue": 0,
                   "gfx_ue": 0}
            pcie_c = rng.choice([0, 0, 0, 3, 12])
            ue_series = [ras["umc_ue"]] * M
            fatal_series = [0] * M
            if stop and stop["kind"] == "death" and stop["host"] == h and stop.get("ras") and gi in stop["ras_gpus"]:
                tr = stop["t_ras"]
                ue_series = [1 if t >= tr else 0 for t in S]
                if stop["ras"] == "pcie":
                    fatal_series = [1 if t >= tr + I else 0 for t in S]
            if missing != "ras":
                for key in ("umc_ce", "xgmi_ce", "xgmi_ue", "gfx_ue"):
                    om.add(f"hw_gpu_ras_{key}", "counter", f"hw_gpu_ras_{key}_total", gl, ts_hw,
                           okv([ras[key]] * M), F0)
                om.add("hw_gpu_ras_umc_ue", "counter", "hw_gpu_ras_umc_ue_total", gl, ts_hw, okv(ue_series), F0)
                om.add("hw_gpu_pcie_correctable", "counter", "hw_gpu_pcie_correctable_total", gl, ts_hw,
                       okv([pcie_c] * M), F0)
                om.add("hw_gpu_pcie_fatal", "counter", "hw_gpu_pcie_fatal_total", gl, ts_hw, okv(fatal_series), F0)
        # Ray's view of the GPUs (kept when the GPU plugin times out: Ray reads 0 then)
        if ray_ok.count(True):
            for gi in range(job.gpn):
                util = gpu_util_all[gi]
                om.add("ray_node_gpus_utilization", "gauge", "ray_node_gpus_utilization",
                       f'gpu="{gi}",{labr}', ts_ray,
                       [(util[j] if (dead_j is None or j < dead_j) else 0.0) if ray_ok[j] else None
                        for j in range(M)], F0)

        # ---------------- host ----------------
        cpu = kinds.get("cpu")
        io = kinds.get("io")
        tcpf = kinds.get("tcp")
        base_pr = rng.uniform(6, 18)
        base_cs = rng.uniform(2.5e4, 1.1e5)
        base_cpu = rng.uniform(5, 16)
        mem_total = rng.choice([1.0, 1.5, 2.0, 2.0, 3.0]) * 2**40
        mem_base = rng.uniform(0.07, 0.18)
        tcp_lam = rng.uniform(0.02, 1.5)
        if "tcp_noise" in kinds:
            tcp_lam = kinds["tcp_noise"]["rate"]
        pr, pb_, cs, cpuu, memu, dirty, wb, ios, iof, tcpi, abort_i = ([] for _ in range(11))
        gup, sdur, oomi, dmesgi = [], [], [], []
        oomr = kinds.get("oom_ramp")
        ev_pr = rng.random() < 0.15  # this host has a one-off procs_running spike somewhere
        ev_j = rng.randrange(M)
        for j, t in enumerate(S):
            ph = phase[j]
            alive = dead_j is None or j < dead_j
            leak = 0.0
            if cpu is not None:
                r = ramp_up(t, cpu["t0"], cpu["tau"]) if cpu["tau"] > 0 else (1.0 if t >= cpu["t0"] else 0.0)
                if cpu.get("t1") is not None and t >= cpu["t1"]:
                    r = 0.0
                leak = r
            mu = base_pr + (22 if ph == 0 else 0) + (cpu["procs"] * leak if cpu else 0)
            v = max(1, int(round(rng.gauss(mu, math.sqrt(mu)))))
            if ev_pr and j == ev_j:
                v += rng.randint(30, 90)
            pr.append(v)
            iol = 0.0
            if io is not None and t >= io["t0"] and (io.get("t1") is None or t < io["t1"]):
                iol = min(1.0, (t - io["t0"]) / 60.0) * rng.uniform(0.55, 1.3)
            blk = pois(rng, 0.08 + 3 * ck[j] + (io["blocked"] * iol if io else 0))
            pb_.append(blk)
            csr = base_cs * (1.3 if ph == 0 else 1.0 if ph in (1, 2) else 0.6) * (1 + rng.gauss(0, 0.05))
            if cpu:
                csr *= 1 + (cpu["cs"] - 1) * leak
            cs.append(csr * I)
            cu = (rng.uniform(35, 70) if ph == 0 else base_cpu if ph in (1, 2) else rng.uniform(2, 5))
            cu += rng.gauss(0, 1.2) + (cpu["cpu"] * leak if cpu else 0)
            cpuu.append(clamp(cu, 0.3, 100.0))
            mf = mem_base * (0.5 if t < job.t_proc + 30 else 1.0) if ph != 3 else mem_base * 0.35
            if h in replica0 and ck[j] > 0.3:
                mf += 0.04 * ck[j]
            if oomr is not None:
                if oom_j is not None and j >= oom_j:
                    mf = mem_base * 0.3
                elif t >= oomr["t0"]:
                    x = (t - oomr["t0"]) / max(1.0, oomr["t1"] - oomr["t0"])
                    mf = mem_base + (oomr["peak"] - mem_base) * clamp(x, 0, 1) ** 1.3
            memu.append(mf * mem_total * (1 + rng.gauss(0, 0.003)))
            dirty.append(rng.lognormvariate(math.log(9e7), 0.6) + 4e9 * ck[j] + (6e9 * iol if io else 0))
            wb.append(abs(rng.gauss(0, 3e5)) + 8e8 * ck[j] * rng.random() + (9e8 * iol if io else 0))
            s = abs(rng.gauss(0.12, 0.2)) + 28 * ck[j] * rng.uniform(0.5, 1.2)
            f = s * rng.uniform(0.2, 0.5)
            if io is not None and iol > 0:
                f += io["full"] * iol
                s += io["full"] * iol + rng.uniform(8, 25)
            if rng.random() < 0.002:  # single-scrape spike, any host
                s += rng.uniform(10, 40)
            ios.append(min(100.0, s))
            iof.append(min(100.0, f))
            lam = tcp_lam
            if tcpf is not None and t >= tcpf["t0"] and (tcpf.get("t1") is None or t < tcpf["t1"]):
                lam += tcpf["rate"] * min(1.0, (t - tcpf["t0"]) / 45.0) * rng.uniform(0.6, 1.4)
            inc = pois(rng, lam * I)
            if rng.random() < 0.002:
                inc += rng.randint(200, 3000)     # one-off retransmit burst
            tcpi.append(inc)
            abort_i.append(1 if (tcpf and lam > 200 and rng.random() < 0.05) else 0)
            gup.append(1 if (job.t_proc <= t and ph in (0, 1, 2) and (oom_j is None or j < oom_j)) else 0)
            d = rng.lognormvariate(math.log(0.42), 0.25)
            if rng.random() < 0.004:
                d += rng.uniform(1.5, 5)
            if dead_j is not None and j >= dead_j:
                d = rng.uniform(I * 0.8, I * 0.95) if stop["variant"] != "hard" else d
            sdur.append(d)
            oomi.append(1 if (oom_j is not None and j == oom_j) else 0)
            dm = 0
            if stop and stop["kind"] == "death" and stop["host"] == h and stop.get("ras"):
                if stop["t_ras"] <= t < stop["t_death"] + 120:
                    dm = pois(rng, 0.6)
            dmesgi.append(dm)
        if oom_j is not None and job.stop.get("double_kill") and oom_j + 1 < M:
            oomi[oom_j + 1] = 1
        hw = lambda vals: [v if hw_ok[j] else None for j, v in enumerate(vals)]
        rayv = lambda vals: [v if ray_ok[j] else None for j, v in enumerate(vals)]
        om.add("hw_procs_running", "gauge", "hw_procs_running", lab, ts_hw, hw(pr), F0)
        om.add("hw_procs_blocked", "gauge", "hw_procs_blocked", lab, ts_hw, hw(pb_), F0)
        om.add("hw_context_switches", "counter", "hw_context_switches_total", lab, ts_hw,
               hw(counter(rng.uniform(1e10, 2e11), cs)), F0)
        om.add("hw_mem_dirty_bytes", "gauge", "hw_mem_dirty_bytes", lab, ts_hw, hw(dirty), F0)
        om.add("hw_mem_writeback_bytes", "gauge", "hw_mem_writeback_bytes", lab, ts_hw, hw(wb), F0)
        om.add("hw_io_pressure_some_pct", "gauge", "hw_io_pressure_some_pct", lab, ts_hw, hw(ios), F2)
        om.add("hw_io_pressure_full_pct", "gauge", "hw_io_pressure_full_pct", lab, ts_hw, hw(iof), F2)
        om.add("hw_tcp_retransmits", "counter", "hw_tcp_retransmits_total", lab, ts_hw,
               hw(counter(rng.randint(10**4, 5 * 10**6), tcpi)), F0)
        om.add("hw_tcp_abort_on_timeout", "counter", "hw_tcp_abort_on_timeout_total", lab, ts_hw,
               hw(counter(rng.randint(0, 40), abort_i)), F0)
        om.add("hw_tcp_listen_drops", "counter", "hw_tcp_listen_drops_total", lab, ts_hw,
               hw([rng.choice([0, 0, 3, 8])] * M), F0)
        om.add("hw_oom_kills", "counter", "hw_oom_kills_total", lab, ts_hw,
               hw(counter(rng.choice([0, 0, 0, 0, 1, 2]), oomi)), F0)
        om.add("hw_dmesg_gpu_errors", "counter", "hw_dmesg_gpu_errors_total", lab, ts_hw,
               hw(counter(rng.choice([0, 0, 0, 0, 0, 2]), dmesgi)), F0)
        om.add("hw_gpu_user_processes", "gauge", "hw_gpu_user_processes", lab, ts_hw, hw(gup), F0)
        om.add("hw_scrape_duration_seconds", "gauge", "hw_scrape_duration_seconds", lab, ts_hw, hw(sdur), F3)
        if missing != "net":
            dev = f'device="{job.eth}",{lab}'
            rx = [(rng.uniform(4e6, 4e7) if phase[j] in (0, 1) else 2e5) * I for j in range(M)]
            tx = [(rng.uniform(3e6, 3e7) if phase[j] in (0, 1) else 2e5) * I for j in range(M)]
            om.add("hw_net_rx_bytes", "counter", "hw_net_rx_bytes_total", dev, ts_hw,
                   hw(counter(rng.uniform(1e11, 1e13), rx)), F0)
            om.add("hw_net_tx_bytes", "counter", "hw_net_tx_bytes_total", dev, ts_hw,
                   hw(counter(rng.uniform(1e11, 1e13), tx)), F0)
            om.add("hw_net_rx_errors", "counter", "hw_net_rx_errors_total", dev, ts_hw, hw([0] * M), F0)
            om.add("hw_net_tx_errors", "counter", "hw_net_tx_errors_total", dev, ts_hw, hw([0] * M), F0)
        om.add("up", "gauge", "up", lab, ts_hw, up_hw, F0)
        om.add("up", "gauge", "up", labr, ts_ray, up_ray, F0)
        om.add("ray_node_cpu_utilization", "gauge", "ray_node_cpu_utilization", labr, ts_ray, rayv(cpuu), F1)
        om.add("ray_node_mem_used", "gauge", "ray_node_mem_used", labr, ts_ray, rayv(memu), F0)
        om.add("ray_node_mem_total", "gauge", "ray_node_mem_total", labr, ts_ray, rayv([mem_total] * M), F0)

        # ---------------- RDMA ----------------
        if missing != "rdma":
            rd = kinds.get("rdma")
            blip = kinds.get("rdma_blip")
            reset = kinds.get("counter_reset")
            reset_j = bisect.bisect_left(S, reset["t0"]) if reset else None
            for ni, nic in enumerate(job.nics):
                nl = f'device="{nic}",{lab},port="1"'
                bw = rng.uniform(4e9, 2.2e10)
                retx, ack, cnp, txb, rxb = [], [], [], [], []
                base_retx = rng.choice([0.0, 0.0, 0.002, 0.01])
                cnp_l = rng.uniform(0.05, 2.0)
                for j, t in enumerate(S):
                    lam = base_retx
                    a_l = 0.0
                    c_l = cnp_l * comm[j]
                    for e in (rd, blip):
                        if e is None or ni not in e["nics"]:
                            continue
                        for (t0, t1, rate) in e["spans"]:
                            if t0 <= t < t1:
                                x = rate * rng.uniform(0.6, 1.4) * (1 if phase[j] != 2 else 0.05)
                                lam += x
                                a_l += x * e["ack"]
                                c_l *= 3
                    retx.append(pois(rng, lam * I))
                    ack.append(pois(rng, a_l * I))
                    cnp.append(pois(rng, c_l * I))
                    txb.append(bw * comm[j] * I * (1 + rng.gauss(0, 0.02)) + 5e3)
                    rxb.append(bw * comm[j] * I * (1 + rng.gauss(0, 0.02)) + 5e3)
                series = [
                    ("hw_rdma_tx_retx_pkts", counter(rng.randint(0, 400000), retx)),
                    ("hw_rdma_tx_ack_timeout", counter(rng.randint(0, 3000), ack)),
                    ("hw_rdma_rx_cnp_pkts", counter(rng.randint(1000, 200000), cnp)),
                    ("hw_rdma_tx_bytes", counter(rng.uniform(1e13, 3e14), txb)),
                    ("hw_rdma_rx_bytes", counter(rng.uniform(1e13, 3e14), rxb)),
                ]
                for name, vals in series:
                    if reset_j is not None and reset_j < M:
                        base = vals[reset_j - 1] if reset_j > 0 else 0
                        keep = rng.uniform(0, 0.001) * base
                        vals = vals[:reset_j] + [v - base + keep for v in vals[reset_j:]]
                    om.add(name, "counter", name + "_total", nl, ts_hw, hw(vals), F0)
                om.add("hw_rdma_req_tx_retry_excd_err", "counter", "hw_rdma_req_tx_retry_excd_err_total", nl,
                       ts_hw, hw([0] * M), F0)
                om.add("hw_rdma_port_state", "gauge", "hw_rdma_port_state", nl, ts_hw, hw([1] * M), F0)

        # ---------------- TensorBoard scalars (rank 0 only) ----------------
        if h == tb_host:
            render_tb(job, om, rng, lab, ts_hw, hw_ok,
                      dead_j if (stop and stop.get("variant") == "hard") else None)


def render_tb(job, om, rng, lab, ts_hw, hw_ok, dead_j):
    S = job.scrapes
    ends = job.step_end
    emitted = []   # (timestamp, step index, staleness)
    last = -1
    for j, t in enumerate(S):
        if not hw_ok[j] or (dead_j is not None and j >= dead_j):
            continue
        i = bisect.bisect_right(ends, t) - 1
        if i >= 0 and i != last:
            emitted.append((ends[i], i, 0))
            last = i
    if job.t_stop is not None and last >= 0 and (dead_j is None):
        tf = ends[last] + 150
        while tf < job.t_metrics_end - 1:
            j = bisect.bisect_left(S, tf)
            if j < len(S) and hw_ok[j]:
                emitted.append((tf, last, 1))
            tf += 150
    emitted.sort()
    if not emitted:
        return
    tss = [("%.3f" % round(t, 3), int(t // WINDOW)) for t, i, s in emitted]
    idx = [i for t, i, s in emitted]
    vals = job.tb_values
    fams = [("tb_step", lambda i: i), ("tb_learning_loss", lambda i: vals["loss"][i]),
            ("tb_learning_grad_norm", lambda i: vals["grad"][i]),
            ("tb_learning_raw_grad_norm", lambda i: vals["grad"][i] * 1.07),
            ("tb_learning_param_norm", lambda i: vals["pnorm"][i]),
            ("tb_learning_current_learning_rate", lambda i: vals["lr"][i]),
            ("tb_learning_total_weights", lambda i: vals["tw"]),
            ("tb_perf_step_time_seconds", lambda i: job.step_sec[i]),
            ("tb_perf_per_device_tflops", lambda i: vals["tflops"]),
            ("tb_perf_per_device_tflops_per_sec", lambda i: vals["tflops"] / job.step_sec[i]),
            ("tb_perf_per_device_tokens", lambda i: job.pdbs * job.seq),
            ("tb_perf_per_device_tokens_per_sec", lambda i: job.tgs_at(i))]
    if job.moe:
        fams.append(("tb_learning_moe_lb_loss", lambda i: vals["lb"][i]))
    for name, fn in fams:
        om.add(name, "gauge", name, lab, tss, [fn(i) for i in idx], FR)
    om.add("tb_metrics_plugin_staleness_fill", "gauge", "tb_metrics_plugin_staleness_fill", lab, tss,
           [s for t, i, s in emitted], F0)


# ----------------------------------------------------------------------------------------
# training scalars and the log
# ----------------------------------------------------------------------------------------
def training_values(job, rng):
    n = len(job.step_sec)
    N = job.steps
    tau = N / rng.uniform(4, 8)
    floor = rng.uniform(1.6, 2.8)
    lb0 = rng.uniform(0.008, 0.03)
    g0 = rng.uniform(0.25, 0.6)
    peak_lr = rng.choice([1e-4, 2e-4, 3e-4, 5e-5])
    warm = max(5, int(N * rng.uniform(0.05, 0.15)))
    loss, grad, lb, lr, pnorm = [], [], [], [], []
    td = job.train_drift
    for i in range(n):
        r = 0.0
        if td is not None and i >= td["s0"]:
            r = clamp((i - td["s0"] + 1) / td["ramp"], 0, 1)
            if td.get("s1") is not None and i >= td["s1"]:
                r = 0.0
        l = floor + (10.6 - floor) * math.exp(-i / tau) + rng.gauss(0, 0.03)
        if td:
            l += td["loss_bump"] * r
        loss.append(max(0.5, l))
        gn = g0 + 1.6 * math.exp(-i / 25) + abs(rng.gauss(0, 0.04))
        if td and td["signal"] == "grad":
            gn *= 1 + (td["mult"] - 1) * r
            if r > 0 and rng.random() < 0.08:
                gn *= rng.uniform(1.5, 3)
        grad.append(gn)
        b = lb0 * (1 + rng.gauss(0, 0.06))
        if td and td["signal"] == "lb":
            b *= 1 + (td["mult"] - 1) * r
        lb.append(b)
        lr.append(peak_lr * (i + 1) / warm if i < warm else
                  peak_lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * (i - warm) / max(1, N - warm)))))
        pnorm.append(1800 + 0.05 * i + rng.gauss(0, 0.01))
    flops = job.gpu["peak"] * job.mfu * job.st
    job.tb_values = dict(loss=loss, grad=grad, lb=lb, lr=lr, pnorm=pnorm, tflops=flops,
                         tw=job.pdbs * job.seq * job.gpn * len(job.hosts))


def write_log(job, ws, rng):
    hosts = job.hosts
    n = len(hosts)
    w = len(str(n - 1))
    pre = [f"{r:>{w}}: " for r in range(n)]
    art = job.artifact
    L = []
    A = L.append
    A(f"JOB_ID={job.id}")
    A(f"JOB_NAME={job.name}")
    A(f"NNODES={n}")
    A(f"JOB_NODELIST={compact_nodelist(hosts)}")
    A(f"JAX_COORDINATOR_PORT={rng.randint(20000, 52767)}")
    ray_port = rng.randint(20000, 52767)
    A(f"RAY_PORT={ray_port}")
    A(f'PASSTHROUGH_ARGS="steps={job.steps}"')
    A(f"MODEL_NAME={job.model}")
    A(f"EXP_TAG=steps_{job.steps}")
    A('==STAGE TIMEOUTS (override: STAGE_TIMEOUTS="stage:seconds,...")==')
    A("  preflight    900s")
    A("  pull         900s")
    A("  ecc          300s")
    A("  train        none")
    A(f"[INFO] Running from artifact: {job.ws_root}/.artifacts/{art}")
    L.extend(job.git_summary.splitlines())
    order = list(range(n))
    for stage, body in (("Preflight", "pre"), ("Docker pull", "pull"), ("ECC check", "ecc")):
        t0, d = job.stage[stage]
        A(f"== {stage} BEGIN (timeout={900 if stage != 'ECC check' else 300}s) ==")
        rng.shuffle(order)
        for r in order:
            h = hosts[r]
            if body == "pre":
                A(f"{pre[r]}{h} | [CLEANUP] no stale GPU processes; 0 containers pruned")
                A(f"{pre[r]}{h} | [THP] transparent_hugepage set to never")
                A(f"{pre[r]}{h} | [CHECK_IPV6_RULES] {len(job.nics)} (expected {len(job.nics)})")
            elif body == "pull":
                A(f"{pre[r]}[pull] {job.image} is up to date on {h}")
            else:
                A(f"{pre[r]}{h}: OK (no ECC/UMC errors reported)")
        A(f"== {stage} END ({d}s) ==")
    A("== Training BEGIN (no timeout) ==")
    rng.shuffle(order)
    for r in order:
        A(f"{pre[r]}[container] maxtext-slurm-{job.id}-node{r} starting (podman)")
    A(f"{pre[0]}[Ray] HEAD started on {hosts[0]}:{ray_port}")
    A(f"{pre[0]}[Prometheus] Started on port 9190 (ray: {n} targets; node_hw: {n} targets)")
    A(f"{pre[0]}ssh -J {job.user}@login01 -L 8265:localhost:8265 -L 6006:localhost:6006 "
      f"-L 9190:localhost:9190 root@{hosts[0]}")
    for r in order:
        A(f"{pre[r]}[metrics_exporter] started on {hosts[r]}:9400 (interval 10s)")
        A(f"{pre[r]}[Node {r} @ {hosts[r]}] MaxTextTrainerActor started training subprocess "
          f"(pid {rng.randint(100000, 999999)})")
    cfg = [("base_output_directory", f"/outputs/{job.stem}"), ("run_name", f"{job.model}_{job.id}"),
           ("tensorboard_dir", f"/outputs/{job.stem}/{job.model}_{job.id}/tensorboard/"),
           ("steps", job.steps), ("per_device_batch_size", job.pdbs), ("max_target_length", job.seq),
           ("quantization", "NONE"), ("enable_checkpointing", bool(job.ckpt)),
           ("checkpoint_period", job.ckpt or 10000), ("hardware", "gpu"), ("dtype", "bfloat16"),
           ("dcn_fsdp_parallelism", n), ("ici_fsdp_parallelism", job.gpn), ("remat_policy", job.remat)]
    for r in order:
        A(f"{pre[r]}Failed call to cuInit: UNKNOWN ERROR (303)")
        A(f"{pre[r]}[MFU] MFU tracking enabled (gpu={job.gpu_name}, dtype=bf16, "
          f"peak={job.gpu['peak']} TFLOP/s, source=table)")
        for k, v in cfg:
            A(f"{pre[r]}Config param {k}: {v}")
    for wave in range(2):
        for r in order:
            A(f"{pre[r]}{hosts[r]}:{1000 + r}:{1040 + r} [0] init.cc:2095 NCCL WARN MSCCL++: Feature not enabled")
    for r in order:
        A(f"{pre[r]}Memstats: After params initialized:")
        for gi in range(job.gpn):
            used = job.gpu["vram"] / 2**30 * rng.uniform(0.18, 0.24)
            tot = job.gpu["vram"] / 2**30
            A(f"{pre[r]}\tUsing (GB) {used:.2f} / {tot:.1f} ({100 * used / tot:.1f}%) on rocm:{r * job.gpn + gi}")
        A(f"{pre[r]}No existing checkpoints found, not restoring checkpoint.")
        A(f"{pre[r]}Synchronizing hosts before training loop")
    v = job.tb_values
    peak = job.gpu["peak"]
    tw = v["tw"]
    stop = job.stop
    last_line_t = job.t_last
    for i, sec in enumerate(job.step_sec):
        tf = v["tflops"] / sec
        line = (f"completed step: {i}, seconds: {sec:.3f}, TFLOP/s/device: {tf:.3f}, "
                f"MFU: {100 * tf / peak:.2f}%, Tokens/s/device: {job.pdbs * job.seq / sec:.3f}, "
                f"total_weights: {tw}, loss: {v['loss'][i]:.3f}")
        rng.shuffle(order)
        for r in order:
            A(pre[r] + line)
        if job.ckpt and i % job.ckpt == 0 and i < job.steps - 1:
            for r in order:
                A(f"{pre[r]}Saved a checkpoint at step {i}.")
    end_t = job.t_metrics_end
    if stop is None:
        rng.shuffle(order)
        for r in order:
            A(f"{pre[r]}[Node {r} @ {hosts[r]}] Training subprocess exited with code 0")
        dur = int(job.t_last + 8 - job.t_train)
        A(f"== Training END ({dur}s) ==")
        summary(A, job, int(job.t_last + 10 - job.t_submit), "\x1b[32mSUCCESS (exit 0)\x1b[0m")
        last_line_t = job.t_last + 10
    else:
        if stop["kind"] == "oom" and stop.get("log_kill"):
            r = hosts.index(stop["host"])
            A(f"{pre[r]}[Node {r} @ {hosts[r]}] Training subprocess killed by SIGKILL (signal 9)")
            last_line_t = stop["t_kill"] + 2
        if stop["end_mode"] == "cancelled":
            A(f"slurmstepd: error: *** JOB {job.id} ON {hosts[0]} CANCELLED AT "
              f"{iso(end_t)[:-1]} ***")
            rng.shuffle(order)
            for r in order:
                A(f"{pre[r]}NODE_EXIT host={hosts[r]} exit=143")
            A(f"== Training FAILED (exit=143, {int(end_t - job.t_train)}s) ==")
            summary(A, job, int(end_t + 3 - job.t_submit),
                    "\x1b[31mFAILED (exit 143)\x1b[0m — CANCELLED (scancel / SIGTERM)")
            last_line_t = end_t + 3
    path = os.path.join(ws, job.stem + ".log")
    with open(path, "w") as f:
        f.write("\n".join(L) + "\n")
    os.utime(path, (last_line_t, last_line_t))


def summary(A, job, wall, status):
    h, rem = divmod(wall, 3600)
    m, s = divmod(rem, 60)
    A("========================== JOB SUMMARY ==========================")
    A(f"  Job:    {job.id} ({job.name})")
    A(f"  Model:  {job.model}")
    A(f"  Nodes:  {len(job.hosts)}")
    A(f"  Wall:   {f'{h}h {m}m {s}s' if h else f'{m}m {s}s'}")
    A(f"  Status: {status}")
    A("=================================================================")


def write_side_files(job, ws, rng):
    d = os.path.join(ws, job.stem)
    os.makedirs(os.path.join(d, "prometheus"), exist_ok=True)
    art_dir = os.path.join(ws, ".artifacts", job.artifact)
    os.makedirs(os.path.join(art_dir, "configs"), exist_ok=True)
    with open(os.path.join(art_dir, "submit_cmd.txt"), "w") as f:
        f.write(f"RAY=1 ./submit.sh {job.model} -N {len(job.hosts)} -- steps={job.steps}\n")
    with open(os.path.join(art_dir, "git_summary.txt"), "w") as f:
        f.write(job.git_summary + "\n")
    with open(os.path.join(art_dir, "configs", f"{job.model}.gpu.yml"), "w") as f:
        f.write(f"# {job.model}\nbase_config: base.yml\nhardware: gpu\nattention: cudnn_flash_te\n"
                f"per_device_batch_size: {job.pdbs}\nmax_target_length: {job.seq}\n")
    for name, target in (("log", f"../{job.stem}.log"), ("artifact", f"../.artifacts/{job.artifact}")):
        p = os.path.join(d, name)
        if not os.path.lexists(p):
            os.symlink(target, p)
    hosts = job.hosts
    I = job.interval
    with open(os.path.join(d, "prometheus", "ray_prometheus.yml"), "w") as f:
        f.write(f"global:\n  scrape_interval: {I}s\nscrape_configs:\n  - job_name: ray\n    static_configs:\n"
                f"      - targets: [{', '.join(repr(h + ':55080') for h in hosts)}]\n"
                f"  - job_name: node_hw\n    scrape_interval: {I}s\n    scrape_timeout: {min(I - 2, 8)}s\n"
                f"    static_configs:\n      - targets: [{', '.join(repr(h + ':9400') for h in hosts)}]\n")
    pl = [f'ts={iso(job.t_prom)[:-1]}.000Z caller=main.go:556 level=info msg="Starting Prometheus Server" '
          f'mode=server version="(version=2.48.1)"',
          f"[{iso(job.t_prom)}] [Prometheus] Started on port 9190 (ray: {len(hosts)} targets; "
          f"node_hw: {len(hosts)} targets)"]
    for e in job.fx:
        if e["type"] == "gap_all":
            pl.append(f"[{iso(e['t0'])}] [Prometheus] Watchdog: exited with code 2, restart #1")
    pl.append(f'ts={iso(job.t_metrics_end)[:-1]}.000Z caller=main.go:856 level=warn '
              f'msg="Received SIGTERM, exiting gracefully..."')
    with open(os.path.join(d, "prometheus", "prometheus.log"), "w") as f:
        f.write("\n".join(pl) + "\n")
    os.makedirs(os.path.join(d, "metrics_exporter"), exist_ok=True)
    for r, h in enumerate(hosts):
        lines = [f"[{iso(job.t_prom - 10)}] [metrics_exporter] listening on :9400, interval 10s, host {h}",
                 f"[{iso(job.t_prom - 10)}] [metrics_exporter] plugins: gpu_metrics_plugin.sh "
                 f"host_metrics_plugin.sh tb_metrics_plugin.sh"]
        if r:
            lines.append(f"[{iso(job.t_prom - 8)}] [metrics_exporter] tb_metrics_plugin.sh exited 99 "
                         f"(NODE_RANK={r}); skipping it from now on")
        dead = job.stop and job.stop["kind"] == "death" and job.stop["host"] == h
        if dead and job.stop["variant"] != "hard":
            lines.append(f"[{iso(job.stop['t_death'] + I)}] [metrics_exporter] gpu_metrics_plugin.sh timed out")
        if not (dead and job.stop["variant"] == "hard"):
            lines.append(f"[{iso(job.t_metrics_end)}] [metrics_exporter] received SIGTERM, exiting")
        with open(os.path.join(d, "metrics_exporter", f"{h}.log"), "w") as f:
            f.write("\n".join(lines) + "\n")


def build_tsdb(job, ws, rng, tmp):
    om = OM()
    render_tsdb(job, om, rng)
    out = os.path.join(ws, job.stem, "prometheus")
    for w in om.windows():
        p = os.path.join(tmp, f"{job.id}_{w}.om")
        om.write(w, p)
        r = subprocess.run(["promtool", "tsdb", "create-blocks-from", "openmetrics", p, out],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"promtool failed on window {w}: {r.stderr[-2000:]}")
        os.unlink(p)


# ----------------------------------------------------------------------------------------
# scenarios
# ----------------------------------------------------------------------------------------
def series_per_host(gpn, nics):
    return gpn * 14 + nics * 7 + 27


def make_cluster(rng, max_hosts=96):
    scheme = rng.choice(NAMINGS)
    r = rng.random()
    if r < 0.25:
        n = rng.randint(4, 8)
    elif r < 0.5:
        n = rng.randint(9, 16)
    elif r < 0.75:
        n = rng.randint(17, 32)
    elif r < 0.92:
        n = rng.randint(33, 64)
    else:
        n = rng.randint(65, 96)
    n = min(n, max_hosts)
    gpu = rng.choices(list(GPU_TYPES), weights=[35, 15, 50])[0]
    gpn = 8 if rng.random() < 0.85 else 4
    nic_kind = rng.choice(["ionic_{}", "mlx5_{}", "bnxt_re{}", "rdma{}"])
    nn = gpn if rng.random() < 0.75 else max(2, gpn // 2)
    nics = [nic_kind.format(i) for i in range(nn)]
    eth = rng.choice(["eth0", "ens8f0np0", "bond0", "enp193s0f0"])
    return dict(scheme=scheme, n=n, gpu=gpu, gpn=gpn, nics=nics, eth=eth)


def make_job(rng, cl, hosts, job_id, t_submit, budget, model=None, steps=None, st=None,
             interval=None, extra_wait=0.0, ckpt=None, pdbs=None, seq=None, mfu=None):
    model = model or rng.choice(MODELS)
    steps = steps or rng.randint(150, 400)
    if st is None:
        st = rng.uniform(4, 22) * (0.6 + 0.4 * model[2] ** 0.5)
        st = clamp(st, 3.5, 25)
    # keep the run within ~2.5 h including a busy-wait tail
    max_st = (9000 - 300 - extra_wait) / steps
    if st > max_st:
        st = max(3.0, max_st)
    sph = series_per_host(cl["gpn"], len(cl["nics"]))
    dur = 300 + steps * st * 1.15 + extra_wait
    if interval is None:
        choices = [10, 15, 30, 60]
        rng.shuffle(choices)
        ok = [I for I in choices if len(hosts) * sph * dur / I <= budget]
        if ok:
            interval = ok[0]
        else:
            interval = 60
            # shorten the run to stay inside the sample budget
            max_dur = budget * 60 / (len(hosts) * sph)
            steps2 = int((max_dur - 300 - extra_wait) / (st * 1.15))
            if steps2 < 150:
                st = max(3.0, (max_dur - 300 - extra_wait) / (150 * 1.15))
                steps2 = 150
            steps = max(150, min(steps, steps2))
    ckpt = ckpt if ckpt is not None else rng.choice([0, 25, 50, 50, 100, 100, 200])
    job = Job(rng, job_id, model, hosts, cl["gpu"], cl["gpn"], cl["nics"], cl["eth"], interval,
              t_submit, steps, st, ckpt, pdbs or rng.choice([1, 2, 4, 8]), seq or rng.choice([4096, 8192]),
              mfu or rng.uniform(0.2, 0.45))
    job.remat = rng.choice(["full", "minimal", "save_qkv_proj"])
    job.image = "rocm/jax-training:maxtext-v26.2"
    job.user = rng.choice(["mtuser", "alice", "svc-train", "jdoe"])
    ts = dt.datetime.fromtimestamp(t_submit - rng.randint(20, 90), dt.timezone.utc)
    job.artifact = f"artifact_{ts.strftime('%Y%m%d_%H%M%S')}_{rng.randrange(16**4):04x}"
    job.git_summary = ("=== GIT SUMMARY BEGIN ===\n[BRANCH]\nmain\n[LAST COMMIT]\n"
                       f"{rng.randrange(16**7):07x} {rng.choice(['Tune XLA flags', 'Add qwen3 config', 'Fix exporter restart'])}\n"
                       "[LAST COMMIT DIFF --stat]\n[CHANGES --name-status]\n[DIFF]\n[UNTRACKED]\n"
                       "=== GIT SUMMARY END ===")
    return job


def pick_k(rng, n):
    kmax = max(1, n // 4)
    k = 1
    while k < kmax and rng.random() < 0.45:
        k += 1
    return k


def onset_step(rng, steps):
    return rng.randint(int(steps * 0.25), int(steps * 0.75))


def severity(rng):
    s = rng.random() ** 1.4
    return s, 1 - (0.05 + 0.40 * s)


def random_t_submit(rng):
    start = dt.datetime(2025, 1, 1, tzinfo=dt.timezone.utc).timestamp()
    return int(start + rng.uniform(0, 640 * 86400))


def add_decoys(rng, job, culprits, fam, avoid, allowed=None, count=None):
    """Innocent-host distractors that do not line up with the fault in time.

    avoid: list of (t0, t1) windows (the fault's onset/stop) to keep transient decoys away from."""
    innocent = [h for h in job.hosts if h not in culprits and h != job.hosts[0]]
    if job.stop and job.stop.get("host"):
        innocent = [h for h in innocent if h != job.stop["host"]]
    if not innocent:
        return []
    kinds = allowed or ["tcp_noise", "hot_host", "rdma_blip", "missing", "counter_reset",
                        "scrape_gap", "late_join"]
    n = count if count is not None else rng.choice([1, 1, 2, 3])
    out = []
    used = set()
    t_first = job.step_end[0]
    t_end = job.t_stop if job.t_stop else job.t_last

    def far(t0, t1, margin=900):
        return all(t1 + margin < a or t0 - margin > b for a, b in avoid)

    def pick_time(dur, margin=900):
        for _ in range(40):
            t0 = rng.uniform(t_first + 120, max(t_first + 121, t_end - dur - 60))
            if far(t0, t0 + dur, margin):
                return t0
        return None

    for _ in range(n):
        kind = rng.choice(kinds)
        cand = [h for h in innocent if h not in used]
        if not cand:
            break
        h = rng.choice(cand)
        if kind == "tcp_noise":
            if fam == "tcp" and rng.random() < 0.3:
                continue
            rate = rng.uniform(60, 350)
            job.fx.append(dict(type="tcp_noise", hosts=[h], rate=rate))
            out.append(dict(kind="tcp_noise", host=h, detail=f"TCP retransmits at ~{rate:.0f}/s for the whole run"))
        elif kind == "hot_host":
            d = rng.uniform(12, 18)
            job.fx.append(dict(type="hot", hosts=[h], delta=d))
            out.append(dict(kind="hot_host", host=h, detail=f"every GPU ~{d:.0f} °C hotter for the whole run"))
        elif kind == "rdma_blip":
            dur = rng.uniform(120, 360)
            if avoid:
                t_lim = min(a for a, b in avoid) - 1500
                if t_lim - dur < t_first + 60:
                    continue
                t0 = rng.uniform(t_first + 60, t_lim - dur)
            else:
                t0 = pick_time(dur)
                if t0 is None:
                    continue
            nn = len(job.nics)
            nics = sorted(rng.sample(range(nn), rng.randint(1, nn)))
            rate = rng.uniform(150, 2500)
            job.fx.append(dict(type="rdma_blip", hosts=[h], nics=nics, ack=rng.uniform(0.002, 0.01),
                               spans=[(t0, t0 + dur, rate)]))
            out.append(dict(kind="rdma_blip", host=h,
                            detail=f"RDMA retransmit burst ~{rate:.0f}/s for {dur / 60:.0f} min at {iso(t0)}, "
                                   f"well before any fault"))
        elif kind == "missing":
            what = rng.choice(["rdma", "ray", "ras", "net", "gpu"])
            if what == "gpu" and fam == "thermal":
                what = "ras"
            job.fx.append(dict(type="missing", hosts=[h], what=what))
            out.append(dict(kind="missing_family", host=h, detail=f"no {what} series from this host"))
        elif kind == "counter_reset":
            t0 = pick_time(60)
            if t0 is None:
                continue
            job.fx.append(dict(type="counter_reset", hosts=[h], t0=t0))
            out.append(dict(kind="counter_reset", host=h, detail=f"RDMA counters cleared at {iso(t0)}"))
        elif kind == "scrape_gap":
            dur = rng.uniform(120, 400)
            t0 = pick_time(dur)
            if t0 is None:
                continue
            if rng.random() < 0.5:
                job.fx.append(dict(type="gap_all", t0=t0, t1=t0 + dur))
                out.append(dict(kind="scrape_gap", host="*",
                                detail=f"Prometheus restarted: no samples for {dur / 60:.1f} min at {iso(t0)}"))
                h = None
            else:
                job.fx.append(dict(type="gap_host", hosts=[h], t0=t0, t1=t0 + dur))
                out.append(dict(kind="scrape_gap", host=h,
                                detail=f"exporter down (up=0) for {dur / 60:.1f} min at {iso(t0)}"))
        elif kind == "late_join":
            t1 = job.t_prom + rng.uniform(240, 900)
            if not far(job.t_prom, t1, 600):
                continue
            job.fx.append(dict(type="late_join", hosts=[h], t1=t1))
            out.append(dict(kind="late_join", host=h,
                            detail=f"exporter up only {(t1 - job.t_prom) / 60:.0f} min after the others"))
        if h:
            used.add(h)
    return out


def single_scenario(seed, rng, ws, tmp):
    fam = rng.choices(FAMILIES, weights=FAMILY_WEIGHTS)[0]
    cl = make_cluster(rng)
    pool = host_pool(rng, cl["scheme"], int(cl["n"] * 1.6) + 8)
    hosts = pick_hosts(rng, pool, cl["n"])
    n = len(hosts)
    job_id = rng.randint(10000, 9999999)
    t_submit = random_t_submit(rng)
    stop_kind = {"collective_hang": "hang", "node_death": "death", "host_oom": "oom"}.get(fam)
    busy_wait = rng.uniform(900, 3600) if stop_kind else 0.0
    job = make_job(rng, cl, hosts, job_id, t_submit, budget=650_000, extra_wait=busy_wait)
    steps = job.steps
    truth = dict(seed=seed, kind="single", family=fam, jobs=[job.id], hosts=n, naming=cl["scheme"],
                 culprits=[], uniform=False, onset_step=-1, end_step=-1, onset_time=None,
                 magnitude={}, phases=[], decoys=[])
    sev, tgs_factor = severity(rng)
    onset = onset_step(rng, steps)
    k = pick_k(rng, n)
    # never put the fault on rank 0's TensorBoard exporter only by construction; it may land there
    culprits = sorted(rng.sample(hosts, k), key=natkey)
    recover = None
    if fam in ("thermal", "rdma", "tcp", "io_stall", "cpu_contention") and rng.random() < 0.2:
        recover = min(steps - 10, onset + rng.randint(max(30, steps // 6), max(31, steps // 3)))
    pending = []   # metric effects whose times need the timeline

    if fam == "none":
        pass
    elif fam in ("thermal", "rdma", "tcp", "io_stall"):
        job.slow.append(dict(s0=onset, s1=recover, mult=1 / tgs_factor, ramp=rng.choice([0, 0, 3, 8])))
        truth["magnitude"] = {"severity": round(sev, 3), "tgs_factor": round(tgs_factor, 4)}
        if fam == "rdma" and rng.random() < 0.3 and n >= 4 and recover is None:
            # two phases: a second set of hosts takes over
            mid = rng.randint(onset + (steps - onset) // 3, onset + 2 * (steps - onset) // 3)
            k2 = pick_k(rng, n)
            others = [h for h in hosts if h not in culprits]
            second = sorted(rng.sample(others, min(k2, len(others))), key=natkey)
            tf2 = 1 - (0.05 + 0.35 * rng.random() ** 1.4)
            job.slow = [dict(s0=onset, s1=mid, mult=1 / tgs_factor, ramp=0),
                        dict(s0=mid, s1=None, mult=1 / tf2, ramp=0)]
            pending.append(("rdma2", culprits, second, onset, mid, sev, tf2))
            truth["phases"] = [{"hosts": culprits, "start_step": onset, "end_step": mid},
                               {"hosts": second, "start_step": mid, "end_step": -1}]
            culprits = sorted(set(culprits) | set(second), key=natkey)
        else:
            pending.append((fam, culprits, onset, recover, sev, tgs_factor))
    elif fam == "cpu_contention":
        uniform = rng.random() < 0.35
        if uniform:
            culprits = list(hosts)
        ramp = rng.choice([0, 0, 20, 60])
        job.slow.append(dict(s0=onset, s1=recover, mult=1 / tgs_factor, ramp=ramp))
        pending.append(("cpu", culprits, onset, recover, sev, ramp))
        truth["uniform"] = uniform
        truth["magnitude"] = {"severity": round(sev, 3), "tgs_factor": round(tgs_factor, 4), "ramp_steps": ramp}
    elif fam == "training":
        ramp = rng.randint(10, 60)
        signal = "lb" if (job.moe and rng.random() < 0.75) else "grad"
        mult = 1.8 + 4 * sev * rng.uniform(0.6, 1.2)
        job.slow.append(dict(s0=onset, s1=None, mult=1 / tgs_factor, ramp=ramp))
        job.train_drift = dict(s0=onset, ramp=ramp, signal=signal, mult=mult, loss_bump=rng.uniform(0.02, 0.25))
        truth["magnitude"] = {"severity": round(sev, 3), "tgs_factor": round(tgs_factor, 4), "signal": signal,
                              "signal_mult": round(mult, 2)}
    elif stop_kind:
        stop_step = onset
        job.stop = dict(kind=stop_kind, step=stop_step, busy_wait=busy_wait,
                        end_mode="cancelled" if rng.random() < 0.4 else "silent")
        if stop_kind == "death":
            h = rng.choice(hosts)
            job.stop.update(host=h, variant="hard" if rng.random() < 0.6 else "gpu_lost",
                            ras=rng.choice([None, None, "umc", "pcie"]))
            culprits = [h]
        elif stop_kind == "oom":
            h = rng.choice(hosts)
            job.stop.update(host=h, log_kill=rng.random() < 0.5, double_kill=rng.random() < 0.2)
            culprits = [h]
        else:
            culprits = []
        truth["magnitude"] = {"busy_wait_s": round(busy_wait)}
    if fam in ("none", "collective_hang", "training"):
        culprits = [] if fam != "none" else []
    job.build_timeline()
    training_values(job, rng)

    # resolve effects to times
    avoid = []
    t_on = job.step_start(onset)
    if fam != "none":
        truth["onset_step"] = onset
        truth["onset_time"] = iso(t_on)
        avoid.append((t_on - 60, t_on + 600))
    if recover is not None:
        truth["end_step"] = recover
        avoid.append((job.step_start(recover) - 60, job.step_start(recover) + 300))
    for p in pending:
        if p[0] == "rdma2":
            _, a, b, s0, mid, sv, tf2 = p
            add_rdma(rng, job, a, [(job.step_start(s0), job.step_start(mid))], sv)
            add_rdma(rng, job, b, [(job.step_start(mid), job.t_metrics_end + 1)], rng.random())
            avoid.append((job.step_start(mid) - 60, job.step_start(mid) + 600))
            continue
        kind, cul = p[0], p[1]
        if kind == "cpu":
            _, cul, s0, s1, sv, ramp = p
            t0 = job.step_start(s0)
            tau = 0 if ramp == 0 else (job.step_start(s0 + ramp) - t0) / 2.5
            job.fx.append(dict(type="cpu", hosts=cul, t0=t0, tau=tau,
                               t1=job.step_start(s1) if s1 else None,
                               procs=12 + 70 * sv * rng.uniform(0.7, 1.3), cs=1.4 + 2.5 * sv,
                               cpu=18 + 55 * sv))
            continue
        _, cul, s0, s1, sv, tf = p
        t0 = job.step_start(s0)
        t1 = job.step_start(s1) if s1 else None
        if kind == "thermal":
            gpus_per = {}
            for h in cul:
                kg = rng.randint(1, job.gpn)
                gs = sorted(rng.sample(range(job.gpn), kg))
                gpus_per[h] = gs
                job.fx.append(dict(type="thermal", hosts=[h], gpus=gs, t0=t0 - rng.uniform(30, 120),
                                   tau=rng.uniform(60, 240), t1=t1,
                                   temp=rng.uniform(93, 101) + 10 * sv, clock=tf * rng.uniform(0.96, 1.0),
                                   power=0.55 + 0.4 * tf))
            truth["magnitude"]["gpus"] = {h: v for h, v in gpus_per.items()}
        elif kind == "rdma":
            add_rdma(rng, job, cul, [(t0, t1 or job.t_metrics_end + 1)], sv)
        elif kind == "tcp":
            job.fx.append(dict(type="tcp", hosts=cul, t0=t0, t1=t1, rate=25 * 10 ** (2 * sv + rng.uniform(0, 0.3))))
        elif kind == "io_stall":
            job.fx.append(dict(type="io", hosts=cul, t0=t0, t1=t1, full=12 + 60 * sv, blocked=4 + 30 * sv))
    if job.stop:
        st_ = job.stop
        if st_["kind"] == "death":
            st_["t_death"] = job.t_stop
            if st_["ras"]:
                st_["t_ras"] = job.t_stop - rng.uniform(60, 900)
                st_["ras_gpus"] = sorted(rng.sample(range(job.gpn), rng.randint(1, 2)))
            truth["magnitude"].update(variant=st_["variant"], ras=st_["ras"])
        elif st_["kind"] == "oom":
            st_["t_kill"] = job.t_stop
            job.fx.append(dict(type="oom_ramp", hosts=[st_["host"]], t0=job.t_stop - rng.uniform(300, 1800),
                               t1=job.t_stop, peak=rng.uniform(0.965, 0.995)))
        truth["magnitude"]["end_mode"] = st_["end_mode"]
        avoid.append((job.t_stop - 600, job.t_metrics_end))
    truth["culprits"] = sorted(culprits, key=natkey) if not truth["uniform"] else []
    if rng.random() < 0.5:
        truth["decoys"] = add_decoys(rng, job, set(culprits) if not truth["uniform"] else set(), fam, avoid)
    truth["magnitude"]["scrape_interval_s"] = job.interval
    truth["magnitude"]["gpu"] = job.gpu_name
    render_job(job, ws, rng, tmp)
    return truth


def add_rdma(rng, job, hosts, spans, sv):
    nn = len(job.nics)
    for h in hosts:
        nics = sorted(rng.sample(range(nn), rng.randint(max(1, nn // 4), nn)))
        rate = 30 * 10 ** (2 * sv + rng.uniform(-0.2, 0.4))
        job.fx.append(dict(type="rdma", hosts=[h], nics=nics, ack=rng.uniform(0.004, 0.03),
                           spans=[(a, b, rate) for a, b in spans]))


def pair_scenario(seed, rng, ws, tmp):
    kind = rng.choice(["noise", "node_count", "thread_leak", "rdma"])
    cl = make_cluster(rng, max_hosts=32)
    n = cl["n"]
    pool = host_pool(rng, cl["scheme"], n * 3 + 16)
    model = rng.choice(MODELS)
    steps = rng.randint(150, 320)
    a_hosts = pick_hosts(rng, pool, n)
    if kind == "node_count":
        nb = n * 2 if (n * 2 <= 48 and rng.random() < 0.6) or n < 8 else n // 2
    else:
        nb = n
    same = rng.random() < 0.4 and nb == n
    b_hosts = list(a_hosts) if same else pick_hosts(rng, pool, nb)
    id_a = rng.randint(10000, 9999999)
    id_b = id_a + rng.randint(3, 900)
    t_a = random_t_submit(rng)
    t_b = t_a + rng.randint(3600 * 3, 86400 * 6)
    st = clamp(rng.uniform(4, 20) * (0.6 + 0.4 * model[2] ** 0.5), 3.5, 25)
    common = dict(model=model, steps=steps, st=st, ckpt=rng.choice([0, 50, 100]), pdbs=rng.choice([1, 2, 4, 8]),
                  seq=rng.choice([4096, 8192]), mfu=rng.uniform(0.22, 0.42))
    ja = make_job(rng, cl, a_hosts, id_a, t_a, budget=450_000, **common)
    common["steps"], common["st"] = ja.steps, ja.st
    jb = make_job(rng, cl, b_hosts, id_b, t_b, budget=450_000, interval=ja.interval, **common)
    # run-to-run noise: a fraction of a percent either way
    jb.st = ja.st * (1 + rng.uniform(-0.006, 0.006))
    if kind == "node_count":
        jb.st *= 1 + rng.uniform(-0.01, 0.012)
    truth = dict(seed=seed, kind="pair", family="none", jobs=[ja.id, jb.id], hosts=n, naming=cl["scheme"],
                 culprits=[], uniform=False, onset_step=-1, end_step=-1, onset_time=None,
                 magnitude={"hosts_b": len(b_hosts), "scrape_interval_s": ja.interval}, phases=[],
                 decoys=[], pair=kind, different=kind in ("thread_leak", "rdma"))
    sev = rng.random() ** 1.3
    if kind == "thread_leak":
        tf = 1 - (0.02 + 0.12 * sev)
        jb.slow.append(dict(s0=1, s1=None, mult=1 / tf, ramp=0))
        truth.update(family="cpu_contention", uniform=True)
        truth["magnitude"].update(severity=round(sev, 3), tgs_factor=round(tf, 4))
    elif kind == "rdma":
        tf = 1 - (0.05 + 0.3 * sev)
        jb.slow.append(dict(s0=1, s1=None, mult=1 / tf, ramp=0))
        k = pick_k(rng, len(b_hosts))
        cul = sorted(rng.sample(b_hosts, k), key=natkey)
        truth.update(family="rdma", culprits=cul)
        truth["magnitude"].update(severity=round(sev, 3), tgs_factor=round(tf, 4))
    for j in (ja, jb):
        j.build_timeline()
        training_values(j, rng)
    if kind == "thread_leak":
        jb.fx.append(dict(type="cpu", hosts=list(b_hosts), t0=jb.t_prom - 60, tau=0, t1=None,
                          procs=12 + 40 * sev * rng.uniform(0.7, 1.3), cs=1.25 + 1.2 * sev, cpu=8 + 30 * sev))
    elif kind == "rdma":
        add_rdma(rng, jb, truth["culprits"], [(jb.t_prom - 60, jb.t_metrics_end + 1)], sev)
    if rng.random() < 0.35:
        target = rng.choice([ja, jb])
        truth["decoys"] = [dict(d, job=target.id) for d in
                           add_decoys(rng, target, set(truth["culprits"]), truth["family"], [],
                                      allowed=["rdma_blip", "missing", "counter_reset", "scrape_gap", "late_join"],
                                      count=1)]
    render_job(ja, ws, rng, tmp)
    render_job(jb, ws, rng, tmp)
    return truth


def render_job(job, ws, rng, tmp):
    job.ws_root = "/shared/maxtext-slurm/outputs"
    write_side_files(job, ws, rng)
    write_log(job, ws, rng)
    build_tsdb(job, ws, rng, tmp)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scenario-fuzz", type=int, required=True, metavar="SEED")
    ap.add_argument("--out", required=True)
    ap.add_argument("--parallel", type=int, default=1)   # accepted, ignored
    args = ap.parse_args()
    seed = args.scenario_fuzz
    rng = random.Random(seed * 7919 + 17)
    ws = args.out
    os.makedirs(ws, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="indep-gen.")
    try:
        if rng.random() < 0.25:
            truth = pair_scenario(seed, rng, ws, tmp)
        else:
            truth = single_scenario(seed, rng, ws, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    with open(os.path.join(ws, "truth.json"), "w") as f:
        json.dump(truth, f, indent=1)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
