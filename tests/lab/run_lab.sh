#!/usr/bin/env bash
# The failure lab (issue 16, item 4): a real torch.distributed (gloo, CPU) training script
# (train.py) is run with real faults under a real throw-away Slurm (tests/slurm/slurm-up.sh,
# auth/none, memory enforced) with `srun -l`, and locally with RANK/WORLD_SIZE variables; then
# `mt triage --json LOG --now <a little after the run>` must name the honest root cause of the
# bytes each run wrote. What each fault writes and why each class is expected: README.md here.
# Prints one line per run (name, launcher, expected, got, ok/FAIL); exits 1 on any FAIL.
# Usage: run_lab.sh MT [LOG_DIR]   (LOG_DIR: where each run's log is copied, e.g. build/test-logs/lab)
# Needs root (slurmd runs as root), Slurm and python3-torch (scripts/packages.txt, scripts/setup).
set -uo pipefail
MT=$(realpath "${1:?usage: run_lab.sh MT [LOG_DIR]}")
SAVE=${2:-}
HERE=$(cd "$(dirname "$0")" && pwd)
UP=$HERE/../slurm/slurm-up.sh
DOWN=$HERE/../slurm/slurm-down.sh
START=$SECONDS
LAB_DEADLINE=$((START + ${MT_LAB_BUDGET_S:-330}))   # every wait ends by then (ctest's TIMEOUT is above it)
until_() { local d=$((SECONDS + $1)); [ "$d" -lt "$LAB_DEADLINE" ] && echo $d || echo $LAB_DEADLINE; }
die() { echo "FAIL: $*" >&2; exit 1; }

# ---- prerequisites: missing ones fail the test (scripts/setup installs them), never skip ---------
PY=
for c in /usr/bin/python3 python3; do     # the pyenv python3 on PATH may lack Debian's torch
  p=$(command -v "$c" 2>/dev/null) || continue
  "$p" -c 'import torch.distributed as d; assert d.is_gloo_available()' 2>/dev/null && { PY=$p; break; }
done
[ -n "$PY" ] || die "no python3 can import torch with gloo: install python3-torch (listed in scripts/packages.txt; run scripts/setup)"
for b in slurmctld slurmd sbatch srun scancel scontrol squeue; do
  command -v "$b" >/dev/null || die "$b not found: install slurmctld slurmd slurm-client (scripts/packages.txt; run scripts/setup)"
done
[ "$(id -u)" = 0 ] || die "the lab's Slurm runs slurmd as root: run as root"
[ -x "$MT" ] || die "mt binary not found: $MT"
export LAB_PYTHON=$PY LAB_TRAIN=$HERE/train.py

T=$(mktemp -d /tmp/mt-lab.XXXXXX)
chmod 755 "$T"
OUT=$T/logs; mkdir -p "$OUT"
JOBS=()          # Slurm job ids of this lab (and JOB_<run>, set by submit)
JOB_cancel='' JOB_requeue=''
LOCAL=()         # local launchers: each its own session (setsid), so its ranks die with its group
CENTRAL=()       # the site's monitoring: node_exporter and the Prometheus scraping it

# ---- teardown on every exit path, by PID -----------------------------------------------------------
cleanup() {
  local rc=$? j p pids=()
  trap - EXIT INT TERM
  if [ -n "${SLURM_CONF:-}" ]; then
    for j in "${JOBS[@]}"; do   # a job still running: remember its tasks' PIDs before cancelling
      mapfile -t -O ${#pids[@]} pids < <(timeout 5 scontrol listpids "$j" 2>/dev/null | awk 'NR > 1 && $1 ~ /^[0-9]+$/ {print $1}')
    done
    [ ${#JOBS[@]} -gt 0 ] && timeout 10 scancel "${JOBS[@]}" 2>/dev/null
    for _ in $(seq 100); do
      [ -z "$(timeout 5 squeue -h -t R,CG -o %i 2>/dev/null)" ] && break; sleep 0.1
    done
    for p in "${pids[@]}"; do   # slurmstepd outlives slurmd: anything of ours still alive goes now
      grep -qa 'train.py\|slurmstepd' "/proc/$p/cmdline" 2>/dev/null && kill -KILL "$p" 2>/dev/null
    done
  fi
  for p in "${LOCAL[@]}"; do [ -n "$p" ] && kill -KILL -- "-$p" 2>/dev/null; done
  for p in "${CENTRAL[@]}"; do kill -TERM "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  bash "$DOWN" "$T/slurm" >/dev/null 2>&1
  if [ -n "$SAVE" ]; then mkdir -p "$SAVE" && cp "$OUT"/*.log "$SAVE"/ 2>/dev/null; mkdir -p "$SAVE/plain_ws" && cp "$T"/ws/slurm-* "$SAVE/plain_ws/" 2>/dev/null; fi
  if [ $rc = 0 ]; then rm -rf "$T"; else echo "kept $T (logs in $T/logs, Slurm's in $T/slurm/log)"; fi
  echo "lab wall time: $((SECONDS - START)) s"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# free loopback ports, all distinct, below the ephemeral range (tests/lib/free_ports.py says why)
free_ports() { "$PY" "$HERE/../lib/free_ports.py" "$1"; }

# ---- the lab's Slurm: memory is a consumable, enforced resource (SLURM_TEST_MEMLIMIT=1) -------------
read -r CTL D <<<"$(free_ports 2)"
eval "$(SLURM_TEST_AUTH=none SLURM_TEST_MEMLIMIT=1 SLURM_CTL_PORT=$CTL SLURM_D_PORT=$D \
        SLURM_SCHED=sched/builtin SLURM_OVERSUBSCRIBE=FORCE:8 bash "$UP" "$T/slurm")" || die "slurm did not come up"
export SLURM_CONF
cd "$T" || die "cd $T"
read -r -a PORTS <<<"$(free_ports 13)"
port_i=0

# ---- the site's monitoring, as a cluster already runs it: a real node_exporter scraped every second
# by a real Prometheus (the "central store"), its target named by the Slurm node's name so that
# `instance` says which node; mt knows nothing of it but its URL (mt.yaml metrics.sources)
for b in prometheus prometheus-node-exporter; do
  command -v "$b" >/dev/null || die "$b not found: install prometheus prometheus-node-exporter (scripts/packages.txt)"
done
read -r NE_PORT PROM_PORT <<<"$(free_ports 2)"
prometheus-node-exporter --web.listen-address="127.0.0.1:$NE_PORT" --collector.disable-defaults --collector.netstat \
  --collector.stat --collector.meminfo --collector.vmstat --collector.loadavg > "$T/node-exporter.log" 2>&1 &
CENTRAL+=($!)
printf 'global: {scrape_interval: 1s, scrape_timeout: 900ms}\nscrape_configs:\n  - job_name: node\n    static_configs: [{targets: ["localhost:%s"]}]\n' \
  "$NE_PORT" > "$T/central.yml"
prometheus --config.file="$T/central.yml" --storage.tsdb.path="$T/central" --web.listen-address="127.0.0.1:$PROM_PORT" \
  > "$T/central.log" 2>&1 &
CENTRAL+=($!)
printf 'metrics:\n  sources:\n    - name: central\n      url: http://127.0.0.1:%s\n      timeout_seconds: 10\n' "$PROM_PORT" > "$T/mt.yaml"

# submit NAME "SBATCH OPTIONS" "SRUN OPTIONS" [train.py args]  -> sets JOB_<NAME>
submit() {
  local name=$1 sb=$2 sr=$3 id; shift 3
  # shellcheck disable=SC2086
  id=$(MASTER_PORT=${PORTS[port_i]} LAB_SRUN_OPTS=$sr timeout 20 \
       sbatch --parsable -J "lab-$name" -o "$OUT/$name.log" -O $sb "$HERE/job.sbatch" "$@") \
    || die "sbatch $name failed"
  port_i=$((port_i + 1))
  JOBS+=("$id"); printf -v "JOB_$name" %s "$id"
}
# submit_plain NAME "SBATCH OPTIONS" "SRUN OPTIONS" [train.py args]  -> sets JOB_<NAME>: the run
# writes Slurm's default output names into a workspace of its own, stdout and stderr apart
# (slurm-%j.out, slurm-%j.err), as a user's plain sbatch does; it is triaged by job id.
WS=$T/ws; mkdir -p "$WS"
submit_plain() {
  local name=$1 sb=$2 sr=$3 id; shift 3
  # shellcheck disable=SC2086
  id=$(MASTER_PORT=${PORTS[port_i]} LAB_SRUN_OPTS=$sr timeout 20 \
       sbatch --parsable -J "lab-$name" -o "$WS/slurm-%j.out" -e "$WS/slurm-%j.err" -O $sb "$HERE/job.sbatch" "$@") \
    || die "sbatch $name failed"
  port_i=$((port_i + 1))
  JOBS+=("$id"); printf -v "JOB_$name" %s "$id"
}
# local NAME NRANKS [train.py args]  -> sets PID_<NAME>
local_run() {
  local name=$1 n=$2; shift 2
  MASTER_PORT=${PORTS[port_i]} setsid bash "$HERE/local_launch.sh" "$n" "$@" > "$OUT/$name.log" 2>&1 &
  port_i=$((port_i + 1))
  LOCAL+=($!); printf -v "PID_$name" %s $!
}
job_field() { timeout 5 scontrol show job "$1" -o 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p"; }
# wait_log NAME REGEX SECONDS: until the run's log has a line matching REGEX
wait_log() {
  local deadline; deadline=$(until_ "$3")
  while [ "$SECONDS" -lt "$deadline" ]; do grep -qE "$2" "$OUT/$1.log" 2>/dev/null && return 0; sleep 0.2; done
  echo "FAIL: $1: no line matching '$2' within $3 s" >&2; return 1
}
# wait_job NAME SECONDS: until the job has ended (or, requeued and held, is pending again) and
# its processes are gone, so the log is complete
wait_job() {
  local name=$1 id deadline s
  deadline=$(until_ "$2")
  id=${!name}
  while [ "$SECONDS" -lt "$deadline" ]; do
    s=$(job_field "$id" JobState)
    case $s in
      COMPLETED|FAILED|CANCELLED|TIMEOUT|OUT_OF_MEMORY|NODE_FAIL|PREEMPTED|DEADLINE|BOOT_FAIL) break ;;
      PENDING) [ "$(job_field "$id" Restarts)" -ge 1 ] 2>/dev/null && break ;;
    esac
    sleep 0.25
  done
  while [ "$SECONDS" -lt "$deadline" ]; do
    [ -z "$(timeout 5 scontrol listpids "$id" 2>/dev/null | awk 'NR > 1 && $1 ~ /^[0-9]+$/')" ] &&
      [ -z "$(timeout 5 squeue -h -j "$id" -t CG -o %i 2>/dev/null)" ] && return 0
    sleep 0.25
  done
  echo "FAIL: ${name#JOB_}: job $id did not end within the lab's wait (state ${s:-?})" >&2; return 1
}
wait_local() {
  local name=$1 pid deadline
  deadline=$(until_ "$2")
  pid=${!name}
  while [ "$SECONDS" -lt "$deadline" ]; do
    if ! kill -0 "$pid" 2>/dev/null; then
      wait "$pid"; LOCAL=("${LOCAL[@]/#$pid}"); return 0   # reaped: its group is not ours to kill any more
    fi
    sleep 0.2
  done
  kill -KILL -- "-$pid" 2>/dev/null
  echo "FAIL: ${name#PID_}: local run did not end within $2 s" >&2; return 1
}

PASS=0; FAILS=0
printf '%-16s %-6s %-30s %-30s %s\n' run launch expected "mt triage" result
# check NAME LAUNCHER CLASS STATUS: triage the run's log at a `now` a little after it ended
check() {
  local name=$1 launch=$2 want="$3/$4" now got
  now=$(date -u -d "@$(($(date +%s) + 5))" +%Y-%m-%dT%H:%M:%SZ)
  got=$("$MT" triage --json "$OUT/$name.log" --now "$now" 2>"$T/$name.triage.err" |
        "$PY" -c 'import json,sys; t=json.load(sys.stdin); print("%s/%s" % (t.get("class"), t.get("status")))' 2>/dev/null) ||
    got="error: $(head -c 200 "$T/$name.triage.err")"
  if [ "$got" = "$want" ]; then r=ok; PASS=$((PASS + 1)); else r=FAIL; FAILS=$((FAILS + 1)); fi
  printf '%-16s %-6s %-30s %-30s %s\n' "$name" "$launch" "$want" "$got" "$r"
  # CI keeps no files: the log's end and mt's evidence are what explain a miss there
  if [ "$r" = FAIL ]; then
    tail -n 30 "$OUT/$name.log" | cut -c1-240 | sed 's/^/    | /'
    "$MT" triage --json "$OUT/$name.log" --now "$now" 2>/dev/null | "$PY" -c 'import json,sys
for e in json.load(sys.stdin).get("evidence", [])[:8]: print("    evidence:", e.get("signature"), e.get("line"), e.get("text", "")[:160])' 2>/dev/null
  fi
}
# check_by_id NAME CLASS STATUS: a plain-Slurm run, found by `mt jobs` and triaged by its id in
# the workspace; its evidence must come from the job's stderr file when the root cause is there
check_by_id() {
  local name=$1 want="$2/$3" id now got
  id=${!name}; name=${name#JOB_}
  now=$(date -u -d "@$(($(date +%s) + 5))" +%Y-%m-%dT%H:%M:%SZ)
  got=$({ "$MT" jobs --workspace "$WS" --json && "$MT" triage "$id" --workspace "$WS" --json --now "$now"; } 2>"$T/$name.triage.err" |
        "$PY" -c 'import json,sys
docs=[json.loads(l) for l in sys.stdin if l.strip()]
listed=[j["id"] for j in docs[0]["jobs"]]
t=docs[1]
print("%s/%s%s" % (t.get("class"), t.get("status"), "" if sys.argv[1] in listed else " (not listed)"))' "$id" 2>/dev/null) ||
    got="error: $(head -c 200 "$T/$name.triage.err")"
  if [ "$got" = "$want" ]; then r=ok; PASS=$((PASS + 1)); else r=FAIL; FAILS=$((FAILS + 1)); fi
  printf '%-16s %-6s %-30s %-30s %s\n' "$name" "plain" "$want" "$got" "$r"
}
# check_central NAME: the plain-Slurm run diagnosed from the central store: mt places the job on
# it (window from its log's stamps or from Slurm, hosts from its log or Slurm, each source
# stated), finds the node_exporter feeding it, and answers playbook auto with the series it read
check_central() {
  local name=$1 id got
  id=${!name}; name=${name#JOB_}
  got=$({ "$MT" query "$id" --source central --workspace "$WS" --config "$T/mt.yaml" --discover --json &&
          "$MT" query "$id" --source central --workspace "$WS" --config "$T/mt.yaml" --playbook auto --json; } \
        2>"$T/$name.central.err" | "$PY" -c 'import json,sys
d, a = [json.loads(l) for l in sys.stdin if l.strip()]
ex = {e["exporter"]: (e["hosts"], e["host_label"]) for e in d.get("exporters", [])}
checks = a.get("attribution", {}).get("checks", [])
ok = (d["tsdb"].get("window_source") in ("job log", "scheduler") and d.get("hosts") == ["localhost"]
      and d["tsdb"].get("hosts_source", "").startswith("slurm") and ex.get("node_exporter") == (1, "instance")
      and a.get("hosts") == ["localhost"] and any(c["family"] == "node_death" and "up" in c["signal"] for c in checks))
print("placed" if ok else "window %s, hosts %s (%s), exporters %s, checks %s" % (d["tsdb"].get("window_source"),
      d.get("hosts"), d["tsdb"].get("hosts_source"), ex, [(c["family"], c["signal"]) for c in checks]))' 2>/dev/null) ||
    got="error: $(head -c 300 "$T/$name.central.err")"
  if [ "$got" = placed ]; then r=ok; PASS=$((PASS + 1)); else r=FAIL; FAILS=$((FAILS + 1)); fi
  printf '%-16s %-6s %-30s %-30s %s\n' "$name" "store" "placed on the central store" "${got:0:120}" "$r"
}
mark_failed() { printf '%-16s %-6s %-30s %-30s %s\n' "$1" "$2" "$3/$4" "(run did not finish)" FAIL; FAILS=$((FAILS + 1)); }

# ---- Slurm runs, all at once (the node is shared: OverSubscribe=FORCE, -O) --------------------------
# A process group's timeout (--timeout) covers init too: 60 s where no collective should time out.
KOBE=--kill-on-bad-exit=1
submit time_limit "-n 2 --mem=1G --time=1" "$KOBE" --steps 100000 --data-time 1 --timeout 60
submit cancel     "-n 2 --mem=1G" "$KOBE" --steps 100000 --timeout 60
submit requeue    "-n 2 --mem=1G --requeue --open-mode=append" "$KOBE" --steps 100000 --timeout 60
submit none       "-n 3 --mem=1500M" "$KOBE" --steps 20 --timeout 60
submit rank_exit  "-n 4 --mem=2G" "" --steps 20 --fault rank_exit --fault-rank 2 --fault-step 8 --timeout 60
submit exception  "-n 2 --mem=1G" "$KOBE" --steps 20 --fault exception --fault-rank 1 --fault-step 8 --timeout 60
submit_plain plain_exception "-n 2 --mem=1G" "$KOBE" --steps 20 --fault exception --fault-rank 0 --fault-step 6 --timeout 60
submit hang       "-n 2 --mem=1G" "$KOBE" --steps 20 --fault hang --fault-rank 1 --fault-step 8 --timeout 15
# the job's 1 GiB is less than the rank's RLIMIT_AS allowance (2 GiB above its size): Slurm's kill comes first
submit host_oom   "-n 2 --mem=1G" "$KOBE" --steps 40 --fault host_oom --fault-rank 1 --fault-step 6 \
                  --data-time 0.5 --oom-cap-mb 2048 --timeout 60

# scancel and a requeue (held, so the job does not start again) once training is under way
if wait_log cancel '^0: .* step 5/' 90; then timeout 10 scancel "$JOB_cancel"; fi
if wait_log requeue '^0: .* step 5/' 90; then timeout 10 scontrol requeuehold "$JOB_requeue"; fi

declare -A EXPECT=(
  [none]="completed completed"        [rank_exit]="python_exception failed"
  [exception]="python_exception failed" [hang]="nccl_error failed"
  [host_oom]="host_oom failed"        [cancel]="cancelled cancelled"
  [requeue]="preempted cancelled"     [time_limit]="time_limit cancelled"
  [local_none]="completed completed"  [local_rank_exit]="nccl_error failed"
  [local_exception]="python_exception failed" [local_host_oom]="host_oom failed")

for n in none rank_exit exception hang host_oom cancel requeue; do
  # shellcheck disable=SC2086
  if wait_job "JOB_$n" 120; then check "$n" slurm ${EXPECT[$n]}; else mark_failed "$n" slurm ${EXPECT[$n]}; fi
done

# ---- local runs (no Slurm), while the time-limit job runs out its minute ----------------------------
local_run local_none      2 --steps 20 --timeout 60
local_run local_rank_exit 3 --steps 20 --fault rank_exit --fault-rank 1 --fault-step 8 --timeout 60
local_run local_exception 2 --steps 20 --fault exception --fault-rank 1 --fault-step 8 --timeout 60
# RLIMIT_AS (what `prlimit --as` sets), 1 GiB above the rank's size: the limit, not the machine, runs out
local_run local_host_oom  2 --steps 40 --fault host_oom --fault-rank 1 --fault-step 6 --oom-cap-mb 1024 --timeout 60
# shellcheck disable=SC2086
if wait_job JOB_plain_exception 120; then
  check_by_id JOB_plain_exception python_exception failed
  check_central JOB_plain_exception
else mark_failed plain_exception plain python_exception failed; fi
for n in local_none local_rank_exit local_exception local_host_oom; do
  # shellcheck disable=SC2086
  if wait_local "PID_$n" 120; then check "$n" local ${EXPECT[$n]}; else mark_failed "$n" local ${EXPECT[$n]}; fi
done

# Slurm checks time limits every 30 s: a 1-minute limit ends the job 60–90 s after it started
# shellcheck disable=SC2086
if wait_job JOB_time_limit 180; then check time_limit slurm ${EXPECT[time_limit]}; else mark_failed time_limit slurm ${EXPECT[time_limit]}; fi

echo "failure lab: $PASS passed, $FAILS failed"
[ "$FAILS" = 0 ]
