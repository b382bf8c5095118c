#!/usr/bin/env bash
# Stop the daemons started by slurm-up.sh, by PID (TERM all, wait up to 10 s, then KILL).
W=${1:?workdir}
pids=()
for d in slurmd slurmctld slurmdbd mariadbd munged; do
  f="$W/run/$d.pid"; [ -f "$f" ] && pids+=("$(cat "$f")")
done
[ ${#pids[@]} -gt 0 ] || exit 0
kill -TERM "${pids[@]}" 2>/dev/null
for i in $(seq 100); do
  alive=0; for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
  [ $alive = 0 ] && break; sleep 0.1
done
for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && kill -KILL "$p"; done
rm -f "$W"/run/{slurmd,slurmctld,slurmdbd,mariadbd,munged}.pid
true
