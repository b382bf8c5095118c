#!/usr/bin/env python3
"""Serve the Prometheus text exposition of GPU exporters for several virtual hosts, on loopback.

Each virtual host is one HTTP server on its own port (so each is a distinct Prometheus target
and gets its own `instance` label) serving /metrics built from a recorded-format fixture
(tests/fixtures/exposition/*.prom): the fixture's families, HELP/TYPE lines, label names, label
order and number formatting are kept byte for byte; per host the replayer rewrites the host label
(dcgm-exporter `Hostname`, AMD `hostname`) and the per-GPU identity labels (UUID, serial), adds a
small noise to a healthy baseline, advances cumulative series, and applies injected faults:

  thermal  GPU temperature up, SM/system clock and power down (all GPUs of the host, or `gpus`)
  xid      DCGM_FI_DEV_XID_ERRORS holds the XID (last-value gauge, with err_code/err_msg labels)
  dead     the host stops listening: scrapes fail with "connection refused" (up == 0)
  hang     the host accepts and never answers: scrapes time out (up == 0)

Python 3 standard library only.

  exposition_replayer.py --fixtures DIR --state-file PATH
        --host NAME=FIXTURE[,prefix=amd_][,port=N] ... [--fault JSON ...] [--seed N]
        [--max-lifetime SECONDS]

--state-file gets, once every server listens, a JSON object: the control port and, per host, its
port, exporter, metric prefix, metric names and sample count. Faults are given on the command line
(`{"kind": "thermal", "host": "nv-1", "in": 20}`: 20 s after start; or `"at": <unix time>`) or
posted while running to http://127.0.0.1:<control_port>/faults (same JSON, "at" defaults to now;
the answer holds the accepted fault with its "at"). GET /state returns the state file's object
plus the faults. The process exits on SIGTERM/SIGINT, or by itself after --max-lifetime seconds.
"""
import argparse
import hashlib
import http.server
import json
import math
import os
import random
import re
import signal
import socketserver
import string
import sys
import threading
import time

# ---- the fixture format ---------------------------------------------------------------------

SAMPLE_RE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)\s*$')


def parse_labels(text):
    """'a="x",b="y\\"z"' -> [("a", "x"), ("b", 'y"z')], order kept."""
    out, i, n = [], 0, len(text)
    while i < n:
        while i < n and text[i] in " ,":
            i += 1
        if i >= n:
            break
        eq = text.index("=", i)
        key = text[i:eq].strip()
        if text[eq + 1] != '"':
            raise ValueError(f"label {key}: value not quoted")
        j, val = eq + 2, []
        while text[j] != '"':
            if text[j] == "\\":
                nxt = text[j + 1]
                val.append({"n": "\n", "\\": "\\", '"': '"'}.get(nxt, "\\" + nxt))
                j += 2
            else:
                val.append(text[j])
                j += 1
        out.append((key, "".join(val)))
        i = j + 1
    return out


def escape_label(v):
    return v.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


class Family:
    def __init__(self, name):
        self.name, self.help, self.type, self.samples = name, None, "untyped", []


class Fixture:
    """A recorded-format exposition of one host. `# mt-replay: key=value` comment lines carry
    how to replay it (exporter, host_label, gpu_label, identity_labels, value_format); every other
    comment that is not HELP/TYPE is documentation (sources) and is not served."""

    def __init__(self, path):
        self.path, self.meta, self.families = path, {}, []
        by_name = {}
        with open(path, encoding="utf-8") as f:
            for raw in f:
                line = raw.rstrip("\n")
                if not line.strip():
                    continue
                if line.startswith("# mt-replay:"):
                    for kv in line[len("# mt-replay:"):].split():
                        k, _, v = kv.partition("=")
                        self.meta[k] = v
                    continue
                if line.startswith("# HELP ") or line.startswith("# TYPE "):
                    _, kind, name, *rest = line.split(" ", 3)
                    fam = by_name.get(name)
                    if fam is None:
                        fam = by_name[name] = Family(name)
                        self.families.append(fam)
                    if kind == "HELP":
                        fam.help = rest[0] if rest else ""
                    else:
                        fam.type = rest[0]
                    continue
                if line.startswith("#"):
                    continue
                m = SAMPLE_RE.match(line)
                if not m:
                    raise ValueError(f"{path}: cannot parse sample line: {line[:120]}")
                name, labels, value = m.group(1), parse_labels(m.group(2) or ""), m.group(3)
                fam = by_name.get(name)
                if fam is None:
                    fam = by_name[name] = Family(name)
                    self.families.append(fam)
                fam.samples.append((labels, value))
        for key in ("exporter", "host_label", "gpu_label", "value_format"):
            if key not in self.meta:
                raise ValueError(f"{path}: missing '# mt-replay: {key}=...'")
        self.identity_labels = [x for x in self.meta.get("identity_labels", "").split(",") if x]


# ---- number formatting as the exporters write it -------------------------------------------

def go_g(v):
    """strconv.FormatFloat(v, 'g', -1, 64), as prometheus/client_golang writes sample values."""
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    if v == 0:
        return "0"
    r = repr(float(v))                     # shortest round-trip digits, like Go's -1 precision
    sign = "-" if r.startswith("-") else ""
    r = r.lstrip("-")
    mant, _, exp = r.partition("e")
    e = int(exp) if exp else 0
    ip, _, fp = mant.partition(".")
    digits = (ip + fp).lstrip("0")
    point = len(ip) + e if ip != "0" else e - (len(fp) - len(fp.lstrip("0")))
    digits = digits.rstrip("0") or "0"
    x = point - 1                          # decimal exponent of the first digit
    # Go (ftoa.go, 'g' with shortest precision) uses %e when x < -4 || x >= 6:
    # FormatFloat(1234567,'g',-1,64) is "1.234567e+06", FormatFloat(748,'g',-1,64) is "748".
    eprec = 6
    if x < -4 or x >= eprec:
        m = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{m}e{'+' if x >= 0 else '-'}{abs(x):02d}"
    if point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return sign + digits + "0" * (point - len(digits))
    return f"{sign}{digits[:point]}.{digits[point:]}"


def format_like(v, template, style):
    """dcgm-exporter prints integers with %d and doubles with %f (6 decimals: "67.351000");
    client_golang (AMD) prints Go's shortest %g."""
    if style == "go_g":
        # the SMI reports whole degrees, watts, MB, uJ: keep a whole-number template whole
        return go_g(float(round(v)) if float(template).is_integer() else v)
    if "." in template:
        return f"{v:.{len(template.split('.', 1)[1])}f}"
    return str(int(round(v)))


# ---- roles: which series a fault or the noise acts on ---------------------------------------

ROLES = {
    # dcgm-exporter, names before 4.9 (default-counters.csv)
    "DCGM_FI_DEV_GPU_TEMP": "gpu_temp", "DCGM_FI_DEV_MEMORY_TEMP": "mem_temp",
    "DCGM_FI_DEV_SM_CLOCK": "sm_clock", "DCGM_FI_DEV_POWER_USAGE": "power",
    "DCGM_FI_DEV_GPU_UTIL": "util", "DCGM_FI_DEV_MEM_COPY_UTIL": "util",
    "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION": "energy_mj", "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL": "link_counter",
    "DCGM_FI_DEV_XID_ERRORS": "xid",
    # dcgm-exporter >= 4.9 names, for fixtures recorded from it (configs/exporter_families.yaml renames_4_9)
    "DCGM_FI_DEV_GPU_TEMP_CELSIUS": "gpu_temp", "DCGM_FI_DEV_BOARD_POWER_WATTS": "power",
    "DCGM_FI_DEV_XID_ERROR": "xid",
    # AMD device-metrics-exporter (unprefixed field names)
    "gpu_junction_temperature": "gpu_temp", "gpu_memory_temperature": "mem_temp",
    "gpu_package_power": "power", "gpu_power_usage": "power",
    "gpu_gfx_activity": "util", "gpu_umc_activity": "util", "gpu_energy_consumed": "energy_uj",
}
# XID -> err_msg as dcgm-exporter (>= 3.3.6-3.4.2) writes it; only texts seen in recorded output.
XID_MSG = {
    0: "No Error",   # https://github.com/vsphere-tmm/Supervisor-Services/blob/main/vks-ai-conformance/v1.34/accelerator_metrics.md
    45: "Preemptive cleanup, due to previous errors -- Most likely to see when running multiple cuda",  # https://github.com/NVIDIA/DCGM/issues/235
}


def role_of(name, labels):
    if name == "gpu_clock":
        return "sm_clock" if dict(labels).get("clock_type") == "GPU_CLOCK_TYPE_SYSTEM" else None
    return ROLES.get(name)


def derive_identity(host, orig):
    """A stable per-host variant of a UUID/serial: same shape, other digits."""
    h = hashlib.sha256(f"{host}|{orig}".encode()).hexdigest() * 4
    body = orig[4:] if orig.startswith("GPU-") else orig
    digits_only = all(c.isdigit() or not c.isalnum() for c in body)
    out, k = [], 0
    for c in body:
        if c in string.hexdigits:
            d = h[k]
            k += 1
            out.append(str(int(d, 16) % 10) if digits_only else (d.upper() if c.isupper() else d))
        else:
            out.append(c)
    return ("GPU-" if orig.startswith("GPU-") else "") + "".join(out)


# ---- a virtual host -------------------------------------------------------------------------

class VirtualHost:
    def __init__(self, name, fixture, prefix, seed, faults):
        self.name, self.fx, self.prefix, self.faults = name, fixture, prefix, faults
        self.rng = random.Random(f"{seed}|{name}")
        self.lock = threading.Lock()
        self.start = time.time()
        self.counters = {}          # series index -> (value, last time)
        self.server = None
        self.dead = False
        self.stopping = threading.Event()
        hl, gl = fixture.meta["host_label"], fixture.meta["gpu_label"]
        self.series = []            # (family, labels rewritten, template value, role)
        for fam in fixture.families:
            for labels, value in fam.samples:
                new = []
                for k, v in labels:
                    if k == hl:
                        v = name
                    elif k in fixture.identity_labels and v:
                        v = derive_identity(name, v)
                    new.append((k, v))
                self.series.append((fam, new, value, role_of(fam.name, labels)))
        self.gpu_label = gl
        self.base_power = {}
        for fam, labels, value, role in self.series:
            if role == "power":
                self.base_power.setdefault(dict(labels).get(gl), float(value))

    def active(self, kind, gpu=None, now=None):
        now = time.time() if now is None else now
        for f in self.faults:
            if f["host"] == self.name and f["kind"] == kind and f["at"] <= now and now < f.get("until", math.inf):
                if gpu is None or f.get("gpus") is None or gpu in f["gpus"]:
                    return f
        return None

    def thermal_fraction(self, gpu, now):
        f = self.active("thermal", gpu, now)
        if not f:
            return 0.0
        ramp = float(f.get("ramp", 2.0))
        return 1.0 if ramp <= 0 else min(1.0, (now - f["at"]) / ramp)

    def render(self):
        now = time.time()
        style = self.fx.meta["value_format"]
        out, current_family = [], None
        with self.lock:
            power_now = {}
            for gpu, base in self.base_power.items():
                frac = self.thermal_fraction(gpu, now)
                power_now[gpu] = base * (1 - 0.35 * frac)
            for idx, (fam, labels, template, role) in enumerate(self.series):
                if fam is not current_family:
                    current_family = fam
                    if fam.help is not None:
                        out.append(f"# HELP {self.prefix}{fam.name} {fam.help}")
                    out.append(f"# TYPE {self.prefix}{fam.name} {fam.type}")
                gpu = dict(labels).get(self.gpu_label)
                base = float(template)
                frac = self.thermal_fraction(gpu, now) if gpu is not None else 0.0
                r = self.rng
                if role == "gpu_temp" and base > 0:
                    v = base + 30 * frac + r.gauss(0, 0.6)
                elif role == "mem_temp" and base > 0:
                    v = base + 18 * frac + r.gauss(0, 0.5)
                elif role == "sm_clock" and base > 0:
                    v = base * (1 - 0.4 * frac) - abs(r.gauss(0, 6))
                elif role == "power" and base > 0:
                    v = base * (1 - 0.35 * frac) * (1 + r.gauss(0, 0.01))
                elif role == "util" and base > 0:
                    v = max(0.0, min(100.0, base - abs(r.gauss(0, 0.8))))
                elif role in ("energy_mj", "energy_uj", "link_counter"):
                    value, last = self.counters.get(idx, (base, self.start))
                    dt = max(0.0, now - last)
                    if role == "link_counter":
                        rate = 4.0e5
                    else:
                        rate = power_now.get(gpu, 0.0) * (1e3 if role == "energy_mj" else 1e6)
                    value += rate * dt
                    self.counters[idx] = (value, now)
                    v = value
                elif role == "xid":
                    f = self.active("xid", gpu, now)
                    code = int(f["value"]) if f else 0
                    msg = f.get("err_msg", XID_MSG.get(code)) if f else XID_MSG[0]
                    labels = [(k, str(code) if k == "err_code" else msg if k == "err_msg" else val) for k, val in labels]
                    v = float(code)
                else:
                    v = base
                lab = ",".join(f'{k}="{escape_label(val)}"' for k, val in labels)
                out.append(f"{self.prefix}{fam.name}{{{lab}}} {format_like(v, template, style)}" if lab
                           else f"{self.prefix}{fam.name} {format_like(v, template, style)}")
        return "\n".join(out) + "\n"

    def describe(self):
        names = []
        for fam in self.fx.families:
            if self.prefix + fam.name not in names:
                names.append(self.prefix + fam.name)
        return {"exporter": self.fx.meta["exporter"], "fixture": os.path.basename(self.fx.path), "prefix": self.prefix,
                "host_label": self.fx.meta["host_label"], "gpu_label": self.gpu_label,
                "gpus": sorted({dict(l).get(self.gpu_label) for _, l, _, _ in self.series} - {None}, key=lambda g: int(g)),
                "metric_names": names, "samples": len(self.series)}


class QuietServer(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def make_handler(vh):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def do_GET(self):
            if vh.dead:                        # listening socket closed; drop kept-alive scrapers too
                self.close_connection = True
                return
            if vh.active("hang"):
                vh.stopping.wait(120)          # hold the connection; never answer
                self.close_connection = True
                return
            if self.path.split("?")[0] != "/metrics":
                self.send_error(404)
                return
            body = vh.render().encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
    return Handler


def validate_fault(f, hosts, now, start):
    f = dict(f)
    if f.get("kind") not in ("thermal", "xid", "dead", "hang"):
        raise ValueError(f"unknown fault kind {f.get('kind')!r} (thermal, xid, dead, hang)")
    if f.get("host") not in hosts:
        raise ValueError(f"unknown host {f.get('host')!r} (have {', '.join(hosts)})")
    if "at" not in f:
        f["at"] = start + float(f["in"]) if "in" in f else now
    f["at"] = float(f["at"])
    if f.get("gpus") is not None:
        f["gpus"] = [str(g) for g in f["gpus"]]
    if f["kind"] == "xid":
        vh = hosts[f["host"]]
        if not any(role == "xid" for _, _, _, role in vh.series):
            raise ValueError(f"host {f['host']} ({vh.fx.meta['exporter']}) has no XID gauge")
        code = int(f.get("value", 0))
        if code <= 0:
            raise ValueError("an xid fault needs value > 0")
        if code not in XID_MSG and "err_msg" not in f:
            raise ValueError(f"no recorded err_msg for XID {code}: give err_msg")
        f["value"] = code
    return f


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("--host", action="append", required=True, help="NAME=FIXTURE[,prefix=P][,port=N]")
    ap.add_argument("--fault", action="append", default=[])
    ap.add_argument("--state-file", required=True)
    ap.add_argument("--seed", default="7")
    ap.add_argument("--bind", default="127.0.0.1")
    ap.add_argument("--max-lifetime", type=float, default=600)
    args = ap.parse_args()

    start = time.time()
    faults = []
    hosts, fixtures = {}, {}
    for spec in args.host:
        name, _, rest = spec.partition("=")
        parts = rest.split(",")
        opts = dict(p.split("=", 1) for p in parts[1:])
        path = os.path.join(args.fixtures, parts[0])
        if path not in fixtures:
            fixtures[path] = Fixture(path)
        vh = VirtualHost(name, fixtures[path], opts.get("prefix", ""), args.seed, faults)
        vh.port = int(opts.get("port", 0))
        hosts[name] = vh
    for fs in args.fault:
        faults.append(validate_fault(json.loads(fs), hosts, start, start))

    stop = threading.Event()
    for vh in hosts.values():
        vh.server = QuietServer((args.bind, vh.port), make_handler(vh))
        vh.port = vh.server.server_address[1]
        threading.Thread(target=vh.server.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True).start()

    def state():
        return {"pid": os.getpid(), "start": start, "control_port": control.server_address[1],
                "hosts": {n: dict(vh.describe(), port=vh.port, alive=vh.server is not None) for n, vh in hosts.items()},
                "faults": list(faults)}

    class Control(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def reply(self, code, obj):
            body = json.dumps(obj).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            self.reply(200, state()) if self.path == "/state" else self.reply(404, {"error": "GET /state"})

        def do_POST(self):
            if self.path != "/faults":
                return self.reply(404, {"error": "POST /faults"})
            try:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                items = body if isinstance(body, list) else [body]
                now = time.time()
                accepted = [validate_fault(x, hosts, now, start) for x in items]
            except (ValueError, KeyError, TypeError) as e:
                return self.reply(400, {"error": str(e)})
            faults.extend(accepted)
            self.reply(200, accepted)

    control = QuietServer((args.bind, 0), Control)
    threading.Thread(target=control.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True).start()

    tmp = args.state_file + ".tmp"
    with open(tmp, "w") as f:
        json.dump(state(), f, indent=1)
    os.replace(tmp, args.state_file)

    def on_signal(*_):
        stop.set()
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    # "dead" faults close the host's listening socket at their time.
    while not stop.wait(0.1):
        now = time.time()
        if now - start > args.max_lifetime:
            print("exposition_replayer: --max-lifetime reached, exiting", file=sys.stderr)
            break
        for vh in hosts.values():
            if vh.server is not None and vh.active("dead", now=now):
                vh.dead = True
                srv, vh.server = vh.server, None
                srv.shutdown()
                srv.server_close()
    for vh in hosts.values():
        vh.stopping.set()
        if vh.server is not None:
            vh.server.shutdown()
            vh.server.server_close()
    control.shutdown()
    control.server_close()


if __name__ == "__main__":
    main()
