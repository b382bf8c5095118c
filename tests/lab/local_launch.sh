#!/bin/bash
# The lab's local launcher, as a plain bash wrapper without Slurm or torchrun: N ranks started
# with RANK/WORLD_SIZE/LOCAL_RANK/MASTER_ADDR/MASTER_PORT, every rank's output in one log (no
# rank prefix), the worst exit status in an end line.
# Usage: MASTER_PORT=P LAB_PYTHON=python LAB_TRAIN=train.py local_launch.sh NRANKS [train.py args]
N=${1:?nranks}; shift
echo "[$(date -Is)] Job start: local, $N ranks"
export MASTER_ADDR=127.0.0.1 WORLD_SIZE=$N
pids=()
for r in $(seq 0 $((N - 1))); do
  RANK=$r LOCAL_RANK=$r "$LAB_PYTHON" "$LAB_TRAIN" "$@" &
  pids+=($!)
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=$?; done
echo "[$(date -Is)] Job end: rc=$rc"
exit $rc
