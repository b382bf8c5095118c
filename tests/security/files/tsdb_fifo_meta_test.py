#!/usr/bin/env python3
"""Finding 7 (FIFO): a block's meta.json that is a FIFO hung query_tsdb forever (open()
blocked; cancellation never reached it; `mt serve` then never exited on EOF and left a
Prometheus behind). Now: a specific error at once, from the CLI and over MCP, and the
server ends at EOF with nothing left running or in $TMPDIR.
Usage: tsdb_fifo_meta_test.py MT"""
import os
import sys

from secfiles import Env, check, check_bounded, make_job, mcp_responses, mcp_session, run_bounded

mt = sys.argv[1]
e = Env("fifo", 19900)
try:
    jd, _, blocks = make_job(e.ws, "9001")
    meta = os.path.join(jd, "prometheus", blocks[0], "meta.json")
    os.remove(meta)
    os.mkfifo(meta)
    want = f"TSDB block {blocks[0]}: prometheus/{blocks[0]}/meta.json is a FIFO, not a regular file"

    r = run_bounded([mt, "query", "9001", "--discover", "--workspace", e.ws], e.env, timeout=30, rss_limit_mb=512)
    check_bounded(r, "mt query, FIFO meta.json", 30, 128)
    check(r.rc not in (0, None), f"mt query fails (rc {r.rc})")
    check(want in r.err, f"specific error: {r.err.strip()[:300]!r}")
    e.check_clean("mt query")

    r = run_bounded([mt, "perf", "9001", "--no-report", "--json", "--workspace", e.ws], e.env, timeout=30, rss_limit_mb=512)
    check_bounded(r, "mt perf (reads the TSDB layout for its default time)", 30, 128)

    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "query_tsdb", "arguments": {"job": "9001", "mode": "discover"}}}
    r = run_bounded([mt, "serve", "--workspace", e.ws], e.env, timeout=30, rss_limit_mb=512, stdin_data=mcp_session([call]))
    check_bounded(r, "mt serve (stdio), FIFO meta.json then EOF", 30, 128)
    res = mcp_responses(r.out).get(2, {}).get("result", {})
    check(res.get("isError") is True and want in res["content"][0]["text"], f"query_tsdb answers the specific error: {res!r:.300}")
    check(r.rc == 0, f"mt serve exits at EOF (rc {r.rc})")
    e.check_clean("mt serve")
    print("PASS security-files-tsdb-fifo-meta")
finally:
    e.close()
