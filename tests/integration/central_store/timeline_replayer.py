#!/usr/bin/env python3
"""Serve recorded OpenMetrics timelines as live exporters, in real time, on loopback. Stdlib only.

Input: OpenMetrics files with timestamps (translate_job_tsdb.py --keep-openmetrics writes them:
exporter names, one series per label set, `instance` and `job` labels, an `up` series per
target). Every distinct `instance` is one virtual exporter (a host's dcgm-exporter / AMD
device-metrics-exporter, its node_exporter) with its own HTTP port. At wall time T the
exporter serves on /metrics, for each of its series, the latest sample whose timestamp is
<= T - offset, where offset = (wall time at startup) - --start, fixed at startup: the timeline
replays from scenario time --start on, second for second. The text is what a real exporter
sends: Prometheus text format 0.0.4, `# TYPE` per family, values exactly as recorded, NO
timestamps, and without the `instance` and `job` labels (the scraper's configuration sets
those, as at a real site). The `up` series is not served; it says whether the target lives:

  - before its first `up` sample: alive, serving what it has (usually nothing yet);
  - the latest `up` sample <= T - offset is 1: alive;
  - it is 0, or the target's `up` series ended while its timeline (the other targets of the
    same --openmetrics group) goes on: DEAD. The port is closed from that moment, so a scrape
    fails with "connection refused" and the scraper records `up` 0 itself, as for a dead host.
    (It is opened again, same port, if `up` returns to 1.)
  - after its group's last sample: alive (the exporter outlives the job).

A series is served from its first sample on and until one sampling interval after its last
(the interval being its own median spacing), then disappears from the exposition: series that
end while their host lives (dcgm's XID err_code 0 series when the 48 series starts) just go.
Outside its group's span (the job) a live exporter runs on without the job: before the span
the series that start with it serve their first value, after it those live at its end serve
their last value, both without the group's extra labels below.

  timeline_replayer.py --openmetrics DIR_OR_FILE[,LABEL=VALUE...] [--openmetrics ...]
                       --start UNIX_S --state-file PATH [--max-lifetime S] [--quiet]

Each --openmetrics is one group (one job's timeline: a directory's *.om files, or one file).
LABEL=VALUE pairs after a comma are added to every GPU series of that group (series whose
`job` is not `node`) inside the group's span only, e.g. `hpc_job=91001` (dcgm-exporter's HPC
job mapping) or `job_id=91001` (AMD device-metrics-exporter's Slurm integration).
--state-file gets, once every port listens, a JSON object: start, offset_s, started (wall
time), per group its spec, first and last sample time, and per instance its port, job, host, group, first/last sample time, dead_from (the
scenario time the port closes, or null), series and metric names. The process exits on
SIGTERM/SIGINT, or by itself after --max-lifetime seconds (default 900).
"""
import argparse
import bisect
import glob
import http.server
import json
import os
import re
import signal
import socketserver
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib"))
from free_ports import free_ports  # noqa: E402

SAMPLE_RE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+(\S+))?\s*$')
LABEL_RE = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
TEXT_TYPE = {"counter": "counter", "gauge": "gauge", "unknown": "untyped", "untyped": "untyped",
             "histogram": "histogram", "summary": "summary"}


class Series:
    __slots__ = ("labels", "bare", "times", "values", "dt")

    def __init__(self, labels, bare):
        self.labels = labels        # the served label text, without instance/job
        self.bare = bare            # the same without the group's extra labels (outside its span)
        self.times, self.values = [], []
        self.dt = 0.0

    def finish(self):
        order = sorted(range(len(self.times)), key=lambda i: self.times[i])
        self.times = [self.times[i] for i in order]
        self.values = [self.values[i] for i in order]
        gaps = sorted(b - a for a, b in zip(self.times, self.times[1:]) if b > a)
        self.dt = gaps[len(gaps) // 2] if gaps else 15.0

    def at(self, tau):
        """The value string to serve at scenario time tau, or None."""
        i = bisect.bisect_right(self.times, tau) - 1
        if i < 0:
            return None
        if i == len(self.times) - 1 and tau >= self.times[i] + self.dt:
            return None
        return self.values[i]


class Target:
    def __init__(self, instance, job, group):
        self.instance, self.job, self.group = instance, job, group
        self.host = instance.rsplit(":", 1)[0]
        self.families = {}          # name -> [text type, {label text: Series}]
        self.up_t, self.up_v = [], []
        self.port = None
        self.server = None
        self.dead_from = None       # first scenario time it is dead (for the state file)
        self.scrapes = 0

    def first_last(self):
        ts = [s.times[0] for f in self.families.values() for s in f[1].values() if s.times] + self.up_t[:1]
        te = [s.times[-1] for f in self.families.values() for s in f[1].values() if s.times] + self.up_t[-1:]
        return (min(ts) if ts else None), (max(te) if te else None)

    def alive(self, tau, group_end):
        if not self.up_t or tau < self.up_t[0]:
            return True
        if tau > group_end:   # the job is over: a host that was alive at its end lives on
            return self.up_v[-1] > 0 and self.up_t[-1] + self.up_dt > group_end
        i = bisect.bisect_right(self.up_t, tau) - 1
        if self.up_v[i] <= 0:
            return False
        if i == len(self.up_t) - 1 and tau >= self.up_t[i] + self.up_dt:
            return False                 # its `up` ended while the group goes on: the host is gone
        return True

    def finish(self):
        order = sorted(range(len(self.up_t)), key=lambda i: self.up_t[i])
        self.up_t = [self.up_t[i] for i in order]
        self.up_v = [self.up_v[i] for i in order]
        gaps = sorted(b - a for a, b in zip(self.up_t, self.up_t[1:]) if b > a)
        self.up_dt = 2 * gaps[len(gaps) // 2] if gaps else 30.0
        for _, series in self.families.values():
            for s in series.values():
                s.finish()

    def render(self, tau, first, end):
        """The exposition at scenario time tau; [first, end] is the group's (the job's) span.
        Outside it the exporter runs on, without the job: the series live at the span's edge
        keep their first (before) or last (after) value, without the group's extra labels."""
        out = []
        for name in sorted(self.families):
            ttype, series = self.families[name]
            lines = []
            for s in series.values():
                lab, v = s.labels, s.at(tau)
                if v is None and tau < first and s.times[0] <= first + 2 * s.dt:
                    lab, v = s.bare, s.values[0]
                elif v is None and tau > end and s.times[-1] >= end - 2 * s.dt:
                    lab, v = s.bare, s.values[-1]
                if v is not None:
                    lines.append(f"{name}{{{lab}}} {v}\n" if lab else f"{name} {v}\n")
            if lines:
                out.append(f"# TYPE {name} {ttype}\n")
                out.extend(lines)
        return "".join(out)


def load_group(spec, group, targets):
    """Parses one --openmetrics argument into targets (by instance). Returns the group's end."""
    path, _, extra = spec.partition(",")
    add = []
    for kv in (x for x in extra.split(",") if x):
        k, _, v = kv.partition("=")
        if not re.fullmatch(r"[a-zA-Z_][a-zA-Z0-9_]*", k):
            raise SystemExit(f"timeline_replayer: bad label name in {spec!r}")
        add.append((k, v))
    files = sorted(glob.glob(os.path.join(path, "*.om"))) if os.path.isdir(path) else [path]
    if not files:
        raise SystemExit(f"timeline_replayer: no *.om files in {path}")
    types = {}
    for fpath in files:
        with open(fpath) as f:
            for line in f:
                if line.startswith("#"):
                    p = line.split()
                    if len(p) >= 4 and p[1] == "TYPE":
                        types[p[2]] = p[3]
                    continue
                m = SAMPLE_RE.match(line)
                if not m:
                    continue
                name, labtext, value, ts = m.groups()
                if ts is None:
                    raise SystemExit(f"timeline_replayer: {fpath}: a sample without a timestamp: {line.strip()}")
                labels = [(k, v) for k, v in LABEL_RE.findall(labtext or "")]
                d = dict(labels)
                inst, job = d.get("instance"), d.get("job", "")
                if not inst:
                    continue
                key = (group, inst)
                t = targets.get(key)
                if t is None:
                    t = targets[key] = Target(inst, job, group)
                if name == "up":
                    t.up_t.append(float(ts))
                    t.up_v.append(float(value))
                    continue
                kept = [(k, v) for k, v in labels if k not in ("instance", "job")]
                bare = ",".join(f'{k}="{v}"' for k, v in kept)
                if job != "node":
                    kept += [(k, v) for k, v in add if k not in d]
                lab = ",".join(f'{k}="{v}"' for k, v in kept)
                fam = types.get(name)
                if fam is None and name.endswith("_total"):
                    fam = types.get(name[:-6])
                ttype = TEXT_TYPE.get(fam or "untyped", "untyped")
                entry = t.families.setdefault(name, [ttype, {}])
                s = entry[1].get(lab)
                if s is None:
                    s = entry[1][lab] = Series(lab, bare)
                s.times.append(float(ts))
                s.values.append(value)
    first = end = None
    for (g, _), t in targets.items():
        if g == group:
            t.finish()
            a, b = t.first_last()
            if a is not None:
                first = a if first is None else min(first, a)
                end = b if end is None else max(end, b)
    return first, end


class QuietServer(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def make_handler(target, clock, lock, group_first, group_end):
    class Handler(http.server.BaseHTTPRequestHandler):
        # HTTP/1.0: one connection per scrape, as with a closed port a kept-alive connection
        # would go on answering a dead host's scrapes.
        protocol_version = "HTTP/1.0"

        def log_message(self, *a):
            pass

        def do_GET(self):
            if not target.alive(clock(), group_end):   # died while this connection was open
                self.close_connection = True
                return                                 # no answer: the scrape fails
            if self.path.split("?")[0] != "/metrics":
                body, code = b"see /metrics\n", 404
            else:
                with lock:
                    body, code = target.render(clock(), group_first, group_end).encode(), 200
                    target.scrapes += 1
            self.send_response(code)
            self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
    return Handler


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--openmetrics", action="append", required=True, metavar="DIR_OR_FILE[,LABEL=VALUE...]")
    ap.add_argument("--start", type=float, required=True, help="the scenario time (unix s) replayed at startup")
    ap.add_argument("--state-file", required=True)
    ap.add_argument("--max-lifetime", type=float, default=900)
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args()
    born = time.time()
    targets, group_first, group_end = {}, {}, {}
    for i, spec in enumerate(args.openmetrics):
        group_first[i], group_end[i] = load_group(spec, i, targets)
    lock = threading.Lock()
    offset = [None]

    def clock():
        return time.time() - offset[0]

    def bind(t):
        for _ in range(20):
            port = t.port or free_ports(1)[0]
            try:
                srv = QuietServer(("127.0.0.1", port), make_handler(t, clock, lock, group_first[t.group], group_end[t.group]))
            except OSError:
                if t.port:           # rebinding a reopened port: wait for it
                    time.sleep(0.1)
                    continue
                continue
            t.port = port
            t.server = srv
            threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.5}, daemon=True).start()
            return
        raise SystemExit(f"timeline_replayer: could not bind a port for {t.instance}")

    def close(t):
        srv, t.server = t.server, None
        srv.shutdown()
        srv.server_close()

    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    signal.signal(signal.SIGINT, lambda *_: stopping.set())
    offset[0] = time.time() - args.start    # fixed from here on
    for t in targets.values():
        if t.alive(clock(), group_end[t.group]):
            bind(t)
        else:
            t.port = t.port or free_ports(1)[0]
    # Scenario time at which each target dies (for the state file; the loop below acts on it).
    for t in targets.values():
        for i, (ts, v) in enumerate(zip(t.up_t, t.up_v)):
            if v <= 0 or (i == len(t.up_t) - 1 and ts + t.up_dt <= group_end[t.group]):
                t.dead_from = ts if v <= 0 else ts + t.up_dt
                break
    state = {"start": args.start, "offset_s": offset[0], "started": time.time(), "pid": os.getpid(),
             "groups": {str(i): {"spec": s, "first": group_first[i], "end": group_end[i]}
                        for i, s in enumerate(args.openmetrics)},
             "targets": {}}
    for t in targets.values():
        first, last = t.first_last()
        state["targets"][t.instance] = {
            "port": t.port, "job": t.job, "host": t.host, "group": t.group, "first": first, "last": last,
            "dead_from": t.dead_from, "series": sum(len(f[1]) for f in t.families.values()),
            "metric_names": sorted(t.families)}
    tmp = args.state_file + ".tmp"
    with open(tmp, "w") as f:
        json.dump(state, f, indent=1, sort_keys=True)
    os.replace(tmp, args.state_file)
    if not args.quiet:
        print(f"timeline_replayer: {len(targets)} targets, offset {offset[0]:.1f} s, load {time.time() - born:.1f} s",
              flush=True)
    while not stopping.is_set() and time.time() - born < args.max_lifetime:
        tau = clock()
        for t in targets.values():
            want = t.alive(tau, group_end[t.group])
            if want and t.server is None:
                bind(t)
            elif not want and t.server is not None:
                close(t)
                if not args.quiet:
                    print(f"timeline_replayer: {t.instance} dead at scenario time {tau:.1f}: port {t.port} closed",
                          flush=True)
        stopping.wait(0.2)
    for t in targets.values():
        if t.server is not None:
            close(t)
    return 0


if __name__ == "__main__":
    sys.exit(main())
