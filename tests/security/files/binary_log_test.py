#!/usr/bin/env python3
"""Finding 13 (binary log): a 20 MB random binary file was triaged "running, training is
progressing". Now a log that is mostly non-text (16 pieces of 64 KiB sampled; a piece is
binary above 30% control/invalid UTF-8 bytes among its non-NUL bytes; NUL-only pieces do not vote) is reported
as not a text log, status unknown — while a text log with a NUL hole (an NFS client crash)
is still triaged.
Usage: binary_log_test.py MT"""
import json
import os
import random
import sys

from secfiles import FIXTURES, Env, check, check_bounded, make_job, mcp_responses, mcp_session, run_bounded

mt = sys.argv[1]
e = Env("binary", 19980)
try:
    rng = random.Random(14)
    _, log, _ = make_job(e.ws, "9007", tsdb=False)
    with open(log, "wb") as f:
        for _ in range(20):
            f.write(rng.randbytes(1 << 20))
    want = ("is not a text log: 16 of 16 sampled 64.0 KiB pieces are binary (more than 30% control or invalid "
            "UTF-8 bytes); its status is unknown (mt reads text logs only)")

    r = run_bounded([mt, "triage", "9007", "--workspace", e.ws], e.env, timeout=60, rss_limit_mb=512)
    check_bounded(r, "mt triage of 20 MB of random bytes", 60, 128)
    check(r.rc not in (0, None), f"not triaged (rc {r.rc})")
    check(want in r.text, f"specific message: {r.text.strip()[:300]!r}")
    check("running" not in r.text, "not called running")

    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "triage_log", "arguments": {"job": "9007"}}}
    r = run_bounded([mt, "serve", "--workspace", e.ws], e.env, timeout=60, rss_limit_mb=512, stdin_data=mcp_session([call]))
    res = mcp_responses(r.out).get(2, {}).get("result", {})
    check(res.get("isError") is True and want in res["content"][0]["text"], f"triage_log says so: {json.dumps(res)[:300]}")

    # No false positive: a text log with a 1 MiB NUL hole in the middle.
    _, log2, _ = make_job(e.ws, "9008", tsdb=False)
    with open(os.path.join(FIXTURES, "completed.log"), "rb") as f:
        text = f.read()
    cut = text.index(b"\n", len(text) // 2) + 1
    with open(log2, "wb") as f:
        f.write(text[:cut] + b"\0" * (1 << 20) + text[cut:])
    r = run_bounded([mt, "triage", "9008", "--workspace", e.ws, "--json"], e.env, timeout=60, rss_limit_mb=512)
    check(r.rc == 0 and json.loads(r.out)["status"] == "completed", f"a holed text log is still triaged: {r.text[:300]!r}")
    print("PASS security-files-binary-log")
finally:
    e.close()
