#!/usr/bin/env python3
"""Finding 13 (time range): extreme minTime/maxTime in a block's meta.json became the
data's range, and the error then blamed the user's `now`. Now a block whose range is
outside 2000..2100 is named as corrupt.
Usage: tsdb_meta_time_range_test.py MT"""
import json
import os
import sys

from secfiles import Env, check, check_bounded, make_job, run_bounded

mt = sys.argv[1]
e = Env("timerange", 19970)
try:
    jd, _, blocks = make_job(e.ws, "9001")
    b = blocks[0]
    meta = os.path.join(jd, "prometheus", b, "meta.json")
    with open(meta) as f:
        original = json.load(f)
    cases = [("minTime", -9223372036854775808), ("maxTime", 9223372036854775807), ("minTime", 1)]
    for key, value in cases:
        m = dict(original)
        m[key] = value
        with open(meta, "w") as f:
            json.dump(m, f)
        r = run_bounded([mt, "query", "9001", "--discover", "--workspace", e.ws], e.env, timeout=30, rss_limit_mb=512)
        check_bounded(r, f"mt query, {key} {value}", 30, 128)
        check(r.rc not in (0, None), f"refused (rc {r.rc})")
        want = f"TSDB block {b}: meta.json {key} {value} ms is outside 2000-01-01..2100-01-01; the block is corrupt or forged"
        check(want in r.err, f"specific error naming the block: {r.err.strip()[:300]!r}")
        check("now" not in r.err, "the user's `now` is not blamed")
        e.check_clean(f"{key} {value}")
    print("PASS security-files-tsdb-meta-time-range")
finally:
    e.close()
