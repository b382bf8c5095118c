#!/usr/bin/env python3
"""Finding 7 (devices): a meta.json that is a symlink to /dev/zero, or a character device,
was read without limit (3-4 GB RSS). Now: refused before it is opened, with a specific
error, in bounded memory and time.
Usage: tsdb_device_meta_test.py MT"""
import os
import stat
import sys

from secfiles import Env, check, check_bounded, make_job, run_bounded

mt = sys.argv[1]
e = Env("device", 19910)
try:
    jd, _, blocks = make_job(e.ws, "9001")
    b = blocks[0]
    meta = os.path.join(jd, "prometheus", b, "meta.json")
    os.remove(meta)
    os.symlink("/dev/zero", meta)
    r = run_bounded([mt, "query", "9001", "--discover", "--workspace", e.ws], e.env, timeout=30, rss_limit_mb=1024)
    check_bounded(r, "mt query, meta.json -> /dev/zero", 30, 128)
    check(r.rc not in (0, None), f"mt query fails (rc {r.rc})")
    check(f"TSDB block {b}: prometheus/{b}/meta.json leads outside " in r.err, f"specific error: {r.err.strip()[:300]!r}")
    e.check_clean("meta.json -> /dev/zero")

    os.remove(meta)
    try:
        os.mknod(meta, 0o644 | stat.S_IFCHR, os.makedev(1, 5))   # /dev/zero's numbers
    except OSError as err:
        print(f"skipped the device node case: mknod: {err}")
    else:
        r = run_bounded([mt, "query", "9001", "--discover", "--workspace", e.ws], e.env, timeout=30, rss_limit_mb=1024)
        check_bounded(r, "mt query, meta.json a character device", 30, 128)
        check(f"TSDB block {b}: prometheus/{b}/meta.json is a character device, not a regular file" in r.err,
              f"specific error: {r.err.strip()[:300]!r}")
        e.check_clean("meta.json a character device")
    print("PASS security-files-tsdb-device-meta")
finally:
    e.close()
