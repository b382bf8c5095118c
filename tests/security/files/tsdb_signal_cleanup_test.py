#!/usr/bin/env python3
"""Finding 13 (cleanup): SIGTERM left $TMPDIR/mt-tsdb-* private copies behind. Now every
exit path removes them: SIGTERM/SIGINT to `mt query` (mt's own handlers) and to
`mt serve` (its signal thread; the manager gives an instance being started up at once),
with the Prometheus stopped too. A wrapper that starts Prometheus 30 s late
(MT_PROMETHEUS) holds the query in the middle of its start while the signal arrives.
Usage: tsdb_signal_cleanup_test.py MT"""
import os
import signal
import stat
import subprocess
import sys
import time

from secfiles import Env, check, make_job, mcp_session

mt = sys.argv[1]
e = Env("signal", 19990)
procs = []
try:
    make_job(e.ws, "9001")
    wrapper = os.path.join(e.work, "slow-prometheus")
    with open(wrapper, "w") as f:
        f.write("#!/usr/bin/env python3\nimport os, sys, time\ntime.sleep(30)\n"
                "os.execvp('prometheus', ['prometheus'] + sys.argv[1:])\n")
    os.chmod(wrapper, os.stat(wrapper).st_mode | stat.S_IXUSR)
    env = dict(e.env, MT_PROMETHEUS=wrapper)

    def wait_for_copy(p, what):
        deadline = time.time() + 30
        while time.time() < deadline and p.poll() is None:
            if e.leftovers() and e.prometheus_pids():
                return True
            time.sleep(0.05)
        check(False, f"{what}: the private copy and its Prometheus appeared")

    def stop(p, sig, what):
        os.kill(p.pid, sig)
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            check(False, f"{what}: mt ended within 10 s of the signal")
        check(True, f"{what}: mt ended within 10 s of the signal (rc {p.returncode})")
        e.check_clean(what)

    for sig in (signal.SIGTERM, signal.SIGINT):
        what = f"mt query, {signal.Signals(sig).name}"
        p = subprocess.Popen([mt, "query", "9001", "--discover", "--workspace", e.ws], env=env,
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        procs.append(p)
        wait_for_copy(p, what)
        stop(p, sig, what)
        check(p.returncode in (-sig, 128 + sig, 0), f"{what}: ended by the signal (rc {p.returncode})")

    for sig in (signal.SIGTERM, signal.SIGINT):
        what = f"mt serve, {signal.Signals(sig).name}"
        p = subprocess.Popen([mt, "serve", "--workspace", e.ws], env=env, stdin=subprocess.PIPE,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        procs.append(p)
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "query_tsdb", "arguments": {"job": "9001", "mode": "discover"}}}
        p.stdin.write(mcp_session([call]))
        p.stdin.flush()   # stdin stays open: the server is not at EOF
        wait_for_copy(p, what)
        stop(p, sig, what)
    print("PASS security-files-tsdb-signal-cleanup")
finally:
    for p in procs:
        if p.poll() is None:
            p.kill()
    e.close()
