"""`mt nodes` as an operator types it, on a fresh workspace: implications recorded by hand,
the repeat-offender verdict (text and --json), a clean job releasing a host, 4 concurrent
`mt nodes implicate` processes (none of their lines lost or interleaved), and bad input
refused with its exit code and nothing written.

    nodes_cli_test.py MT
"""
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor


def main():
    mt = sys.argv[1]
    with tempfile.TemporaryDirectory(prefix="mt-nodes-") as ws:
        def run(*args, rc=0):
            p = subprocess.run([mt, "nodes", *args, "--workspace", ws], capture_output=True, text=True, timeout=60)
            if p.returncode != rc:
                sys.exit(f"FAIL: mt nodes {' '.join(args)} exited {p.returncode}, expected {rc}: {p.stdout}{p.stderr}")
            return p

        assert "no host implicated" in run().stdout
        run("implicate", "gpu-07", "--job", "10", "--class", "gpu_hw_error", "--evidence", "XID 79 on GPU 3")
        run("implicate", "gpu-07", "--job", "11", "--class", "nccl_error")
        run("implicate", "gpu-03", "--job", "11", "--class", "nccl_error")
        nodes = {n["host"]: n for n in json.loads(run("--json").stdout)["nodes"]}
        assert nodes["gpu-07"]["excluded"] and nodes["gpu-07"]["implications"] == 2, nodes
        assert not nodes["gpu-03"]["excluded"], nodes
        assert "EXCLUDED" in run().stdout
        # --k 3: two implications do not exclude
        assert not any(n["excluded"] for n in json.loads(run("--json", "--k", "3").stdout)["nodes"])
        run("clean", "gpu-07", "--job", "12")
        nodes = {n["host"]: n for n in json.loads(run("--json").stdout)["nodes"]}
        assert not nodes["gpu-07"]["excluded"] and nodes["gpu-07"]["implications"] == 0, nodes
        print("ok   implicate, exclude after 2, release by a clean job")

        ledger = os.path.join(ws, ".mt", "nodes.jsonl")
        before = open(ledger).read()
        for bad, rc in ((["implicate", "../etc/passwd", "--job", "1", "--class", "x"], 1),
                        (["implicate", "gpu-01", "--job", "1"], 2), (["clean", "gpu-01"], 2),
                        (["--k", "0"], 2), (["forget", "gpu-01"], 2)):
            run(*bad, rc=rc)
        assert open(ledger).read() == before, "a refused call wrote to the ledger"
        print("ok   bad input refused, nothing written")

        def implicate(i):
            return run("implicate", f"node-{i % 4}", "--job", str(100 + i), "--class", "node_fail")
        with ThreadPoolExecutor(4) as pool:
            list(pool.map(implicate, range(40)))
        lines = open(ledger).read().splitlines()
        parsed = [json.loads(l) for l in lines]
        assert len(parsed) == 4 + 40, len(parsed)
        assert sorted(p["job"] for p in parsed if p["host"].startswith("node-")) == sorted(str(100 + i) for i in range(40))
        print("ok   40 concurrent implications, every line whole")


if __name__ == "__main__":
    main()
