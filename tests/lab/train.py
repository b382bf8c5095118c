#!/usr/bin/python3
"""Tiny data-parallel training script (PyTorch, torch.distributed + gloo, DDP on CPU).

It is written the way a plain PyTorch user writes one: ranks come from Slurm
(SLURM_PROCID / SLURM_NTASKS / SLURM_LOCALID, launched by `srun`) or from the usual
RANK / WORLD_SIZE / MASTER_ADDR / MASTER_PORT environment variables, progress goes through
Python `logging` (asctime format) on rank 0, and nothing in it knows about mt.

--fault injects one real failure on --fault-rank at --fault-step (see tests/lab/README.md):
  none       run to completion
  rank_exit  the rank calls os._exit(1): peers see gloo's connection errors
  exception  the rank parses a corrupt record: a real ValueError traceback
  hang       the rank blocks forever before the step's collective: peers hit gloo's timeout
  host_oom   the rank leaks host memory until it dies; it first caps its own address space
             (RLIMIT_AS, what `prlimit --as` sets) at --oom-cap-mb above its current size,
             so it can never take the machine's memory, only its own allowance
Slurm-side faults (cancel, time limit, requeue) need no option: use a large --steps.
"""
import argparse
import logging
import os
import resource
import socket
import threading
import time
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

logger = logging.getLogger("train")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--log-every", type=int, default=1)
    p.add_argument("--data-time", type=float, default=0.2,
                   help="seconds per step spent fetching the batch (keeps a few steps per second)")
    p.add_argument("--timeout", type=float, default=10.0, help="process-group timeout, seconds")
    p.add_argument("--fault", default="none",
                   choices=["none", "rank_exit", "exception", "hang", "host_oom"])
    p.add_argument("--fault-rank", type=int, default=1)
    p.add_argument("--fault-step", type=int, default=8)
    p.add_argument("--oom-cap-mb", type=int, default=1536,
                   help="host_oom: address-space allowance above the rank's current size")
    p.add_argument("--fault-once", metavar="MARKER",
                   help="a transient fault: it fires only while MARKER does not exist, and creates it")
    p.add_argument("--checkpoint-dir",
                   help="rank 0 saves model and optimizer there every --checkpoint-every steps; "
                        "a run that finds a checkpoint there resumes from it (as a restarted job does)")
    p.add_argument("--checkpoint-every", type=int, default=5)
    return p.parse_args()


def dist_env():
    """Rank, world size and local rank from srun, else from torchrun-style variables."""
    if "SLURM_PROCID" in os.environ and "RANK" not in os.environ:
        return (int(os.environ["SLURM_PROCID"]), int(os.environ["SLURM_NTASKS"]),
                int(os.environ.get("SLURM_LOCALID", 0)))
    return (int(os.environ.get("RANK", 0)), int(os.environ.get("WORLD_SIZE", 1)),
            int(os.environ.get("LOCAL_RANK", 0)))


class Records:
    """Synthetic regression records, 'parsed' from text the way a real loader would."""

    def __init__(self, rank, corrupt_at=None):
        self.gen = torch.Generator().manual_seed(1234 + rank)
        self.w = torch.linspace(-1, 1, 32)
        self.corrupt_at = corrupt_at

    def batch(self, step, n):
        fields = ["%d" % n] if step != self.corrupt_at else ["%d?" % n]
        n = int(fields[0])  # a corrupt record raises ValueError here, as int() does
        x = torch.randn(n, 32, generator=self.gen)
        y = (x @ self.w).unsqueeze(1) + 0.1 * torch.randn(n, 1, generator=self.gen)
        return x, y


def vm_size_bytes():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def main():
    args = parse_args()
    rank, world, local_rank = dist_env()
    logging.basicConfig(level=logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29500")
    torch.set_num_threads(1)
    torch.manual_seed(0)

    logger.info("rank %d/%d (local %d) on %s: init_process_group(backend=gloo, %s:%s)",
                rank, world, local_rank, socket.gethostname(),
                os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"])
    dist.init_process_group("gloo", init_method="env://", rank=rank, world_size=world,
                            timeout=timedelta(seconds=args.timeout))
    model = DDP(nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1)))
    opt = torch.optim.SGD(model.parameters(), lr=args.lr)
    loss_fn = nn.MSELoss()
    faulty = args.fault != "none" and rank == args.fault_rank
    if faulty and args.fault_once and os.path.exists(args.fault_once):
        faulty = False  # it fired in an earlier attempt: transient
    first_step = 1
    latest = os.path.join(args.checkpoint_dir, "latest.pt") if args.checkpoint_dir else None
    if latest and rank == 0:
        os.makedirs(args.checkpoint_dir, exist_ok=True)
    if latest and os.path.exists(latest):
        state = torch.load(latest)
        model.module.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        first_step = state["step"] + 1
        if rank == 0:
            logger.info("Restored checkpoint from step %d (%s)", state["step"], latest)
        dist.barrier()  # every rank has read it before rank 0 may write the next one
    data = Records(rank, corrupt_at=args.fault_step if faulty and args.fault == "exception" else None)
    if rank == 0:
        n_params = sum(p.numel() for p in model.parameters())
        logger.info("model: %d parameters, world size %d, global batch %d, %d steps",
                    n_params, world, args.batch_size * world, args.steps)

    leak = []
    start = time.time()
    for step in range(first_step, args.steps + 1):
        t0 = time.time()
        time.sleep(args.data_time)  # the data loader's share of a step
        x, y = data.batch(step, args.batch_size)
        if faulty and step == args.fault_step:
            if args.fault_once:
                open(args.fault_once, "x").close()
            if args.fault == "rank_exit":
                os._exit(1)
            if args.fault == "hang":
                threading.Event().wait()  # never set: this rank never reaches the all-reduce
            if args.fault == "host_oom":
                cap = vm_size_bytes() + args.oom_cap_mb * 2**20
                resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        if faulty and args.fault == "host_oom" and step >= args.fault_step:
            # keep every step's activations alive (the classic leak), 256 MiB a step, touched
            leak.append(torch.ones(64 * 2**20, dtype=torch.float32))
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()  # DDP all-reduces the gradients here (gloo)
        opt.step()
        if rank == 0 and (step % args.log_every == 0 or step == args.steps):
            dt = time.time() - t0
            logger.info("step %d/%d loss %.4f lr %.3g step_time %.3fs samples/s %.1f",
                        step, args.steps, loss.item(), args.lr, dt, args.batch_size * world / dt)
        if latest and rank == 0 and step % args.checkpoint_every == 0 and step < args.steps:
            tmp = latest + ".tmp"
            torch.save({"step": step, "model": model.module.state_dict(),
                        "optimizer": opt.state_dict()}, tmp)
            os.replace(tmp, latest)  # a reader never sees half a checkpoint
            logger.info("Saved a checkpoint at step %d to %s", step, latest)
    dist.barrier()
    if rank == 0:
        logger.info("training finished: %d steps in %.1fs", args.steps, time.time() - start)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
