#!/usr/bin/env python3
"""Finding 8: perf_analysis (its "MFU tracking enabled" lookup) and the TSDB manager (its
"[Prometheus] Started on port" lookup) read the log with an unbounded std::getline: one
2 GB line cost 4 GB RSS while triage_log/read_log stayed under 30 MB on the same file.
Scaled to a 256 MiB line here: mt's own peak RSS must stay far below the line's size.
Usage: long_line_test.py MT"""
import os
import sys

from secfiles import FIXTURES, Env, check, check_bounded, make_job, run_bounded

mt = sys.argv[1]
LINE = 256 << 20
LIMIT_MB = 96


def with_long_line(fixture, after_lines):
    with open(os.path.join(FIXTURES, fixture + ".log")) as f:
        lines = f.readlines()
    return lines[:after_lines], lines[after_lines:]


def write_log(path, head, tail):
    with open(path, "w") as f:
        f.writelines(head)
        f.write("0: ")
        block = "x" * (1 << 20)
        for _ in range(LINE >> 20):
            f.write(block)
        f.write("\n")
        f.writelines(tail)


e = Env("longline", 19950)
try:
    # A finished job: mt perf.
    _, log, _ = make_job(e.ws, "9001", tsdb=False)
    head, tail = with_long_line("completed", 20)
    write_log(log, head, tail)
    r = run_bounded([mt, "triage", "9001", "--workspace", e.ws, "--json"], e.env, timeout=90, rss_limit_mb=1024)
    check_bounded(r, "mt triage (the reference)", 90, LIMIT_MB)
    r = run_bounded([mt, "perf", "9001", "--no-report", "--json", "--workspace", e.ws], e.env, timeout=90, rss_limit_mb=1024)
    check_bounded(r, "mt perf on a log with a 256 MiB line", 90, LIMIT_MB)
    check(r.rc == 0, f"mt perf answers ({r.err.strip()[:200]!r})")

    # A running job: mt query looks for the job's own Prometheus port in its log.
    _, log, _ = make_job(e.ws, "9003")
    head, tail = with_long_line("running", 14)
    write_log(log, head, tail)
    r = run_bounded([mt, "query", "9003", "--discover", "--now", "2026-02-24T10:17:35Z", "--workspace", e.ws, "--json"],
                    e.env, timeout=120, rss_limit_mb=1024)
    check_bounded(r, "mt query of a running job whose log has a 256 MiB line", 120, LIMIT_MB)
    check(r.rc == 0, f"mt query answers ({r.err.strip()[:200]!r})")
    check('"live job' in r.out, "the job was seen running (its log was searched for the live port)")
    e.check_clean("mt query")
    print("PASS security-files-long-line")
finally:
    e.close()
