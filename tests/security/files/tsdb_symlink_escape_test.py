#!/usr/bin/env python3
"""Finding 7 (escapes): a block directory, `prometheus/` or `wal/` symlinking outside the
workspace was followed, copied and served, and the first bytes of the outside file came
back in the error message. Now: refused with a specific error before anything is copied;
no byte of the outside files appears anywhere, nothing lands in $TMPDIR.
Usage: tsdb_symlink_escape_test.py MT"""
import os
import sys

from secfiles import Env, check, check_bounded, make_job, make_tsdb, run_bounded

mt = sys.argv[1]
SECRET = b"SECRET-OUTSIDE-THE-WORKSPACE-0123456789"
e = Env("escape", 19920)
try:
    # A real TSDB outside the workspace, its index and wal replaced by a secret.
    outside_tsdb = os.path.join(e.outside, "tsdb")
    out_blocks = make_tsdb(outside_tsdb)
    with open(os.path.join(outside_tsdb, out_blocks[0], "index"), "wb") as f:
        f.write(SECRET * 100)
    os.makedirs(os.path.join(e.outside, "wal"))
    with open(os.path.join(e.outside, "wal", "00000000"), "wb") as f:
        f.write(SECRET * 100)

    def leaked(r):
        text = r.text.encode()
        return SECRET[:6] in text or SECRET[:6].hex().encode() in text or SECRET[:6].hex().upper().encode() in text

    def query(job, what, want):
        r = run_bounded([mt, "query", job, "--discover", "--workspace", e.ws], e.env, timeout=60, rss_limit_mb=1024)
        check_bounded(r, what, 60, 256)
        check(r.rc not in (0, None), f"{what}: refused (rc {r.rc})")
        check(want in r.err, f"{what}: specific error: {r.err.strip()[:300]!r}")
        check(not leaked(r), f"{what}: no byte of the outside file in the answer")
        e.check_clean(what)

    # 1. One block of the job's TSDB is a symlink to the outside block.
    jd, _, _ = make_job(e.ws, "9001")
    os.symlink(os.path.join(outside_tsdb, out_blocks[0]), os.path.join(jd, "prometheus", out_blocks[0]))
    query("9001", "block symlinked outside", f"TSDB block {out_blocks[0]} is a symbolic link that leads outside ")

    # 2. prometheus/ itself links outside.
    jd2, _, _ = make_job(e.ws, "9002", tsdb=False)
    os.symlink(outside_tsdb, os.path.join(jd2, "prometheus"))
    query("9002", "prometheus/ symlinked outside",
          f"the TSDB directory {os.path.join(jd2, 'prometheus')} is a symbolic link that leads outside ")

    # 3. wal/ links outside (a finished job's wal is copied).
    jd3, _, _ = make_job(e.ws, "9003")
    os.symlink(os.path.join(e.outside, "wal"), os.path.join(jd3, "prometheus", "wal"))
    query("9003", "wal/ symlinked outside", "wal/ of the TSDB at ")
    print("PASS security-files-tsdb-symlink-escape")
finally:
    e.close()
