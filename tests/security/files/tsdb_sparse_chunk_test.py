#!/usr/bin/env python3
"""Finding 7 (size): a 2 GB sparse chunk file filled 2 GB of $TMPDIR per query (the private
copy had no limit). Now: a chunk segment larger than Prometheus ever writes is refused with
a specific error before anything is copied, and the whole copy has a limit
(MT_TSDB_MAX_COPY_BYTES, default 8 GiB, apparent size).
Usage: tsdb_sparse_chunk_test.py MT"""
import os
import sys
import threading
import time

from secfiles import Env, check, check_bounded, make_job, run_bounded

mt = sys.argv[1]
e = Env("sparse", 19930)
try:
    jd, _, blocks = make_job(e.ws, "9001")
    b = blocks[0]
    chunk = os.path.join(jd, "prometheus", b, "chunks", "000001")
    os.truncate(chunk, 2 << 30)   # 2 GiB apparent, a few KiB on disk

    peak = {"bytes": 0}
    done = threading.Event()

    def watch():   # what the copy really costs on disk while mt runs
        while not done.is_set():
            peak["bytes"] = max(peak["bytes"], e.tmp_bytes())
            time.sleep(0.05)

    w = threading.Thread(target=watch, daemon=True)
    w.start()
    r = run_bounded([mt, "query", "9001", "--discover", "--workspace", e.ws], e.env, timeout=90, rss_limit_mb=1024)
    done.set()
    w.join()
    check_bounded(r, "mt query, 2 GiB sparse chunk", 90, 256)
    check(r.rc not in (0, None), f"refused (rc {r.rc})")
    want = (f"TSDB block {b}: chunks/000001 is 2.0 GiB (apparent size); Prometheus cuts chunk segments at 512.0 MiB, "
            "so the block is corrupt or forged and is not copied")
    check(want in r.err, f"specific error: {r.err.strip()[:300]!r}")
    check(peak["bytes"] < (64 << 20), f"$TMPDIR grew by at most 64 MiB (peak {peak['bytes'] >> 20} MiB)")
    e.check_clean("2 GiB sparse chunk")

    # The copy limit, on an ordinary job.
    make_job(e.ws, "9002")
    env = dict(e.env, MT_TSDB_MAX_COPY_BYTES="1K")
    r = run_bounded([mt, "query", "9002", "--discover", "--workspace", e.ws], env, timeout=60, rss_limit_mb=1024)
    check_bounded(r, "mt query over the copy limit", 60, 256)
    check(r.rc not in (0, None), f"refused over the limit (rc {r.rc})")
    check("would exceed 1.0 KiB (apparent size, sparse files counted in full); not copied (raise MT_TSDB_MAX_COPY_BYTES"
          in r.err, f"specific error: {r.err.strip()[:300]!r}")
    e.check_clean("copy limit")
    r = run_bounded([mt, "query", "9002", "--discover", "--workspace", e.ws], e.env, timeout=60, rss_limit_mb=1024)
    check(r.rc == 0, f"the same job queries fine under the default limit ({r.err.strip()[:200]!r})")
    e.check_clean("default limit")
    print("PASS security-files-tsdb-sparse-chunk")
finally:
    e.close()
