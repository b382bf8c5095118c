#!/usr/bin/env python3
"""mt-exporter vs Debian's prometheus-node-exporter on this machine, in the same run.

Both exporters are started here on free loopback ports (by PID, never as services),
read the real /proc and /sys, and are scraped the way Prometheus scrapes (one kept-alive
connection, `Accept-Encoding: gzip`, Prometheus' Accept header). Rounds alternate
between the two so that machine noise hits both. Per exporter: scrape latency p50/p99
over all measured scrapes, CPU seconds per scrape from /proc/<pid>/stat utime+stime
deltas, RSS (VmRSS after the run, VmHWM peak), and the number of samples served.

usage: bench.py MT_EXPORTER [--scrapes N] [--rounds R] [--node-exporter PATH] [--json FILE]
                [--mt-arg=ARG ...]   (extra mt-exporter flags, e.g. --mt-arg=--root=DIR)
"""
import argparse
import gzip
import http.client
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

CLK_TCK = os.sysconf("SC_CLK_TCK")
ACCEPT = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime, stime


def rss_kib(pid):
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(("VmRSS:", "VmHWM:")):
                out[line.split(":")[0]] = int(line.split()[1])
    return out


def wait_ready(port, timeout=10):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            c.request("GET", "/metrics")
            if c.getresponse().status == 200:
                return
        except OSError:
            pass
        time.sleep(0.05)
    raise RuntimeError(f"exporter on port {port} not ready")


def scrape_n(port, n):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    lat = []
    body = b""
    for _ in range(n):
        t0 = time.perf_counter()
        conn.request("GET", "/metrics", headers={"Accept": ACCEPT, "Accept-Encoding": "gzip"})
        r = conn.getresponse()
        body = r.read()
        lat.append(time.perf_counter() - t0)
        if r.status != 200:
            raise RuntimeError(f"HTTP {r.status}")
        if r.getheader("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
    conn.close()
    samples = sum(1 for line in body.decode().splitlines() if line and not line.startswith("#"))
    return lat, samples, len(body)


def pct(values, p):
    v = sorted(values)
    return v[min(len(v) - 1, int(round(p / 100.0 * (len(v) - 1))))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mt_exporter")
    ap.add_argument("--node-exporter", default="/usr/bin/prometheus-node-exporter")
    ap.add_argument("--scrapes", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=50)
    ap.add_argument("--json")
    ap.add_argument("--mt-arg", action="append", default=[])
    a = ap.parse_args()

    work = tempfile.mkdtemp(prefix="mt-exporter-bench.")
    ports = {"node_exporter": free_port(), "mt-exporter": free_port()}
    cmds = {
        "node_exporter": [a.node_exporter, f"--web.listen-address=127.0.0.1:{ports['node_exporter']}"],
        "mt-exporter": [a.mt_exporter, "--listen", f"127.0.0.1:{ports['mt-exporter']}", "--nvidia", "off",
                        "--log", os.path.join(work, "mt-exporter.log")] + a.mt_arg,
    }
    procs = {}
    try:
        for name, cmd in cmds.items():
            procs[name] = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                                           stderr=open(os.path.join(work, name + ".err"), "w"))
        for name in cmds:
            wait_ready(ports[name])
            scrape_n(ports[name], a.warmup)
        res = {n: {"lat": [], "cpu": 0.0, "scrapes": 0} for n in cmds}
        for _ in range(a.rounds):
            for name in cmds:
                pid = procs[name].pid
                c0 = cpu_seconds(pid)
                lat, samples, size = scrape_n(ports[name], a.scrapes)
                res[name]["cpu"] += cpu_seconds(pid) - c0
                res[name]["lat"] += lat
                res[name]["scrapes"] += a.scrapes
                res[name]["samples"] = samples
                res[name]["bytes"] = size
        out = {}
        for name in cmds:
            r = res[name]
            mem = rss_kib(procs[name].pid)
            out[name] = {
                "scrapes": r["scrapes"],
                "p50_ms": pct(r["lat"], 50) * 1e3,
                "p99_ms": pct(r["lat"], 99) * 1e3,
                "mean_ms": statistics.mean(r["lat"]) * 1e3,
                "cpu_ms_per_scrape": r["cpu"] / r["scrapes"] * 1e3,
                "rss_mib": mem.get("VmRSS", 0) / 1024.0,
                "peak_rss_mib": mem.get("VmHWM", 0) / 1024.0,
                "samples": r["samples"],
                "uncompressed_bytes": r["bytes"],
            }
        m, n = out["mt-exporter"], out["node_exporter"]
        out["ratios_mt_over_node"] = {
            "p50": m["p50_ms"] / n["p50_ms"],
            "p99": m["p99_ms"] / n["p99_ms"],
            "cpu_per_scrape": m["cpu_ms_per_scrape"] / n["cpu_ms_per_scrape"] if n["cpu_ms_per_scrape"] else None,
            "rss": m["rss_mib"] / n["rss_mib"],
        }
        ver = subprocess.run([a.node_exporter, "--version"], capture_output=True, text=True)
        out["node_exporter_version"] = (ver.stdout + ver.stderr).splitlines()[0]
        print(f"{'':16} {'p50 ms':>8} {'p99 ms':>8} {'CPU ms/scrape':>14} {'RSS MiB':>8} {'peak MiB':>9} {'samples':>8}")
        for name in cmds:
            o = out[name]
            print(f"{name:16} {o['p50_ms']:8.3f} {o['p99_ms']:8.3f} {o['cpu_ms_per_scrape']:14.3f} "
                  f"{o['rss_mib']:8.1f} {o['peak_rss_mib']:9.1f} {o['samples']:8d}")
        r = out["ratios_mt_over_node"]
        print(f"mt/node ratio    p50 {r['p50']:.3f}  p99 {r['p99']:.3f}  CPU/scrape {r['cpu_per_scrape']:.3f}  RSS {r['rss']:.3f}")
        print(f"({out['node_exporter_version']}; {a.rounds} alternating rounds x {a.scrapes} scrapes each; "
              f"mt-exporter args: {' '.join(a.mt_arg) or '(defaults)'})")
        out["mt_exporter_args"] = a.mt_arg
        if a.json:
            with open(a.json, "w") as f:
                json.dump(out, f, indent=2)
    finally:
        for p in procs.values():
            p.send_signal(signal.SIGTERM)
        for p in procs.values():
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
