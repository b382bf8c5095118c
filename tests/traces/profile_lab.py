#!/usr/bin/env python3
"""Record real torch.profiler traces of a tiny DDP (gloo, CPU) training run, one rank slowed.

The run is the failure lab's (tests/lab/train.py): a small MLP wrapped in
DistributedDataParallel over gloo on N local ranks (threads = 1 each), SGD, MSE on synthetic
records. Here every rank runs torch.profiler.profile(activities=[CPU], schedule(wait=1,
warmup=1, active=3), record_shapes=True) around its steps and writes its Chrome trace
(prof.export_chrome_trace) gzipped to OUT/rank<R>.pt.trace.json.gz, plus OUT/run.json (the
command, torch version, date, per-rank exit codes and wall time) and OUT/rank<R>.log.

Debian's torch 1.13 is built without Kineto (torch.autograd.kineto_available() is False), so
what it writes is the legacy autograd-profiler Chrome trace: a bare JSON array of "X" events,
no "cat", no "args" (record_shapes has no effect), pid "CPU functions", tid a thread index,
ts relative to the profiler start, no distributedInfo. A Kineto build writes the usual
{"traceEvents": [...]} object instead; tests/traces/trace_oracle.py reads both.

With --slow-rank R the rank R does --slow-ms milliseconds of extra work each step before its
forward pass, so the other ranks wait for it in DDP's gradient all-reduce:
  --slow-kind compute  (default) a loop of 256x256 matmuls (aten::mm, a real CPU op) for
                       that long, inside record_function("slow_rank_extra_compute")
  --slow-kind sleep    time.sleep, not annotated (shows as a CPU gap: idle, no op)
Each step also sleeps --data-ms (default 20 ms, the data loader's share), not annotated either,
so it is idle time in the trace, as an uninstrumented loader's wait is.

Usage:
  profile_lab.py --out DIR [--ranks N] [--slow-rank R] [--slow-ms MS] [--steps S]
                 [--slow-kind compute|sleep] [--data-ms MS] [--timeout S]

The launcher needs no torch; the ranks run under the first interpreter that imports torch
with gloo ($LAB_PYTHON, this one, /usr/bin/python3: Debian's python3-torch; its torchrun is
broken under Python 3.11, so ranks are started here with MASTER_ADDR/MASTER_PORT/RANK/
WORLD_SIZE/LOCAL_RANK). The master port is a free loopback port (tests/lib/free_ports.py).
Every rank is its own session; on timeout (--timeout, default 120 s) or any exit path all
of them are killed by process group. Exit status: 0 when every rank exited 0 and wrote its
trace, else 1.
"""
import argparse
import datetime
import json
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


# ----------------------------------------------------------------------------------------------
# rank side (runs under a python with torch)
# ----------------------------------------------------------------------------------------------
def rank_main(a):
    import torch
    import torch.distributed as dist
    import torch.nn as nn
    from torch.nn.parallel import DistributedDataParallel as DDP
    from torch.profiler import ProfilerActivity, profile, record_function, schedule

    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    torch.set_num_threads(1)
    torch.manual_seed(0)
    dist.init_process_group("gloo", init_method="env://", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=a.pg_timeout))
    model = DDP(nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                              nn.Linear(256, 1)))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = nn.MSELoss()
    gen = torch.Generator().manual_seed(1234 + rank)
    w = torch.linspace(-1, 1, 64)
    slow = a.slow_rank == rank and a.slow_ms > 0
    ballast = torch.randn(256, 256, generator=gen)
    out_path = os.path.join(a.out, "rank%d.pt.trace.json.gz" % rank)

    def ready(prof):
        prof.export_chrome_trace(out_path)

    sched = schedule(wait=1, warmup=1, active=3, repeat=1)
    with profile(activities=[ProfilerActivity.CPU], schedule=sched, on_trace_ready=ready,
                 record_shapes=True) as prof:
        for step in range(a.steps):
            if a.data_ms > 0:
                time.sleep(a.data_ms / 1000.0)  # the data loader's share: no op, a CPU gap
            x = torch.randn(a.batch, 64, generator=gen)
            y = (x @ w).unsqueeze(1) + 0.1 * torch.randn(a.batch, 1, generator=gen)
            if slow:
                if a.slow_kind == "sleep":
                    time.sleep(a.slow_ms / 1000.0)  # no op either: a CPU gap
                else:
                    with record_function("slow_rank_extra_compute"):
                        end = time.perf_counter() + a.slow_ms / 1000.0
                        acc = ballast
                        while time.perf_counter() < end:
                            acc = torch.mm(ballast, acc).tanh_()
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()  # DDP all-reduces the gradient buckets here (gloo)
            opt.step()
            prof.step()
    dist.barrier()
    dist.destroy_process_group()
    print("rank %d: %d steps, trace %s" % (rank, a.steps, out_path), flush=True)


# ----------------------------------------------------------------------------------------------
# launcher side (stdlib only)
# ----------------------------------------------------------------------------------------------
def torch_python():
    cands = [os.environ.get("LAB_PYTHON"), sys.executable, "/usr/bin/python3"]
    for c in cands:
        if not c or not os.path.exists(c):
            continue
        r = subprocess.run([c, "-c", "import torch, torch.distributed as d; "
                            "assert d.is_gloo_available(); print(torch.__version__)"],
                           capture_output=True, text=True)
        if r.returncode == 0:
            return c, r.stdout.strip()
    sys.exit("no python3 can import torch with gloo: apt-get install -y python3-torch")


def free_port():
    sys.path.insert(0, os.path.join(HERE, "..", "lib"))
    import free_ports  # tests/lib/free_ports.py: a bindable port below the ephemeral range
    return free_ports.free_port()


def launch(a):
    os.makedirs(a.out, exist_ok=True)
    py, version = torch_python()
    port = free_port()
    t0 = time.time()
    procs = []
    fwd = ["--steps", str(a.steps), "--slow-rank", str(a.slow_rank), "--slow-ms", str(a.slow_ms),
           "--slow-kind", a.slow_kind, "--data-ms", str(a.data_ms), "--batch", str(a.batch),
           "--pg-timeout", str(a.pg_timeout), "--out", a.out]
    logs = []
    try:
        for r in range(a.ranks):
            env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(r),
                       WORLD_SIZE=str(a.ranks), LOCAL_RANK=str(r), OMP_NUM_THREADS="1")
            log = open(os.path.join(a.out, "rank%d.log" % r), "w")
            logs.append(log)
            procs.append(subprocess.Popen([py, os.path.abspath(__file__), "--rank-worker"] + fwd,
                                          env=env, stdout=log, stderr=subprocess.STDOUT,
                                          start_new_session=True))
        deadline = t0 + a.timeout
        codes = [None] * a.ranks
        while any(c is None for c in codes) and time.time() < deadline:
            for i, p in enumerate(procs):
                if codes[i] is None:
                    codes[i] = p.poll()
            time.sleep(0.1)
        timed_out = any(c is None for c in codes)
    finally:
        for p in procs:  # every rank is its own session: kill its whole group, by PID
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            p.wait()
        for log in logs:
            log.close()
    codes = [p.returncode for p in procs]
    wall = time.time() - t0
    traces = [os.path.join(a.out, "rank%d.pt.trace.json.gz" % r) for r in range(a.ranks)]
    info = {
        "command": "python3 tests/traces/profile_lab.py " + " ".join(sys.argv[1:]),
        "rank_python": py, "torch": version,
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "ranks": a.ranks, "steps": a.steps, "slow_rank": a.slow_rank, "slow_ms": a.slow_ms,
        "slow_kind": a.slow_kind, "data_ms": a.data_ms, "batch": a.batch,
        "profiler_schedule": "wait=1 warmup=1 active=3 repeat=1",
        "exit_codes": codes, "timed_out": timed_out, "wall_s": round(wall, 1),
        "traces": {os.path.basename(t): os.path.getsize(t) for t in traces if os.path.exists(t)},
    }
    with open(os.path.join(a.out, "run.json"), "w") as f:
        json.dump(info, f, indent=1, sort_keys=True)
        f.write("\n")
    print(json.dumps(info, sort_keys=True))
    ok = not timed_out and all(c == 0 for c in codes) and all(os.path.exists(t) for t in traces)
    return 0 if ok else 1


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True)
    p.add_argument("--ranks", type=int, default=3)
    p.add_argument("--slow-rank", type=int, default=-1, help="rank to slow down (-1: none)")
    p.add_argument("--slow-ms", type=float, default=200.0)
    p.add_argument("--slow-kind", choices=["compute", "sleep"], default="compute")
    p.add_argument("--steps", type=int, default=6, help="training steps (>= 5: wait 1, warmup 1, active 3)")
    p.add_argument("--data-ms", type=float, default=20.0, help="per-step sleep, the data loader's share")
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--timeout", type=float, default=120.0, help="kill every rank after this many seconds")
    p.add_argument("--pg-timeout", type=float, default=60.0, help="gloo process-group timeout, seconds")
    p.add_argument("--rank-worker", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.steps < 5:
        p.error("--steps must be >= 5 (profiler schedule wait=1 warmup=1 active=3)")
    if a.rank_worker:
        rank_main(a)
        return 0
    return launch(a)


if __name__ == "__main__":
    sys.exit(main())
