#!/usr/bin/env bash
# Integration test: `mt submit --backend slurm` on a real single-node Slurm (slurmctld +
# slurmd on loopback, auth/none) brought up here and torn down by PID on every exit path.
# Two tasks of mt-simtrain share the one node (MT_SLURM_PACK_TASKS=1). Checks: the job dir
# layout and log (header, stage markers, JOB SUMMARY) as `mt jobs` / `mt triage` read them,
# passthrough metacharacters reaching argv literally, cancel, a time limit, jobs of a plain
# sbatch found by id through scontrol, sbatch failing and Slurm down (clear errors, nothing left
# behind).
# Usage: slurm_submit_test.sh MT SLURM_UP SLURM_DOWN MODELS_FIXTURE_DIR
set -uo pipefail
MT=${1:?mt}; UP=${2:?slurm-up.sh}; DOWN=${3:?slurm-down.sh}; FIXMODELS=${4:?fixture models dir}
command -v slurmctld >/dev/null && command -v sbatch >/dev/null || { echo "SKIP: slurm not installed (scripts/packages.txt)"; exit 77; }
T=$(mktemp -d /tmp/mt-slurm-test.XXXXXX)
chmod 755 "$T"
cleanup() { local rc=$?; bash "$DOWN" "$T/slurm" >/dev/null 2>&1; [ $rc = 0 ] && rm -rf "$T" || echo "kept $T"; exit $rc; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
ports=$(python3 -c 'import socket
s=[socket.socket() for _ in range(2)]
[x.bind(("127.0.0.1",0)) for x in s]
print(" ".join(str(x.getsockname()[1]) for x in s))')
read -r CTL D <<<"$ports"
eval "$(SLURM_TEST_AUTH=none SLURM_CTL_PORT=$CTL SLURM_D_PORT=$D SLURM_SCHED=sched/builtin SLURM_OVERSUBSCRIBE=FORCE:8 bash "$UP" "$T/slurm")" || fail "slurm did not come up"
export SLURM_CONF MT_SLURM_PACK_TASKS=1 MT_PROLOG_CHECK_S=1
WS=$T/ws; mkdir -p "$WS"
cd "$T"

state() { "$MT" status "$1" --workspace "$WS" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])'; }
wait_state() {  # JOB STATE... (up to $WAIT s)
  local job=$1; shift; local s
  for _ in $(seq $((${WAIT:-60} * 4))); do
    s=$(state "$job"); for want in "$@"; do [ "$s" = "$want" ] && return 0; done; sleep 0.25
  done
  fail "job $job is $s, expected $*"
}
submit() { "$MT" submit --workspace "$WS" --backend slurm --yes --json "$@" | python3 -c 'import json,sys; print(json.load(sys.stdin)["job_id"])'; }

# 1. the issue's command: llama2-70b on 2 nodes (2 tasks here), 20 steps
J1=$(submit llama2-70b -N 2 -- steps=20 _env_SIM_STEP_SECONDS=0.1 _env_SIM_STARTUP_SECONDS=0.2) || fail "submit failed"
# 2. a long job to cancel, 3. one that hits a 1-minute time limit (both run beside job 1)
read -r EP PP < <(python3 -c 'import socket
s=[socket.socket() for _ in range(2)]
[x.bind(("127.0.0.1",0)) for x in s]
print(" ".join(str(x.getsockname()[1]) for x in s))')
J2=$(submit llama2-70b -N 2 --observe --exporter-port "$EP" --prometheus-ports "$PP-$PP" --scrape-interval 2 \
     -- steps=100000 _env_SIM_STEP_SECONDS=0.5) || fail "submit 2 failed"
J3=$(submit llama2-70b --time=1 -- steps=100000 _env_SIM_STEP_SECONDS=1) || fail "submit 3 failed"
WAIT=60 wait_state "$J1" COMPLETED
D1=$(ls -d "$WS/$J1"-JAX-llama2-70b-*/) ; D1=${D1%/}
L1=$D1.log
[ -L "$D1/log" ] && [ "$(readlink "$D1/log")" = "../$(basename "$L1")" ] || fail "log link"
[ -L "$D1/artifact" ] && [ -f "$D1/artifact/plan.json" ] && [ -f "$D1/artifact/submit_cmd.txt" ] && [ -f "$D1/artifact/git_summary.txt" ] || fail "artifact link or files"
[ -x "$D1/artifact/job.sbatch" ] && [ -f "$D1/artifact/configs/models/llama2-70b.yml" ] || fail "artifact job.sbatch / model config"
touch "$D1/artifact/plan.json" 2>/dev/null && [ "$(id -u)" != 0 ] && fail "artifact is writable"
[ "$(stat -c %a "$D1/artifact/plan.json")" = 444 ] || fail "artifact file not read-only"
grep -q "llama2-70b -N 2 -- steps=20" "$D1/artifact/submit_cmd.txt" || fail "submit_cmd.txt"
for l in "^JOB_ID=$J1$" "^NNODES=2$" "^MODEL_NAME=llama2-70b$" '^PASSTHROUGH_ARGS="steps=20 ' "^== Training BEGIN" "^== Training END" \
         "^=* JOB SUMMARY =*$" "^  Status: .*SUCCESS (exit 0)" "^=== GIT SUMMARY BEGIN ===$" "^0: completed step: 19," "^1: completed step: 19,"; do
  grep -q "$l" "$L1" || fail "log lacks '$l'"
done
"$MT" jobs --workspace "$WS" --json > jobs.json || fail "mt jobs"
"$MT" triage "$J1" --workspace "$WS" --json > t1.json || fail "mt triage $J1"
python3 - "$J1" <<'PY' || fail "mt jobs / mt triage disagree with the run"
import json, sys
j = sys.argv[1]
jobs = {x["id"]: x for x in json.load(open("jobs.json"))["jobs"]}
assert j in jobs, jobs.keys()
assert jobs[j]["status"] == "completed" and jobs[j]["last_step"] == 19 and jobs[j]["nodes"] == 2, jobs[j]
t = json.load(open("t1.json"))
assert t["class"] == "completed" and t["exit_code"] == 0, t["class"]
PY

# 4. passthrough metacharacters arrive as literal argv elements (printf prints each one)
J4=$(submit echo-args --models "$FIXMODELS" -- 'x=$(touch '"$T"'/pwned)' 'y=`id`;z' 'a b' "q='\"" 'p=|&>') || fail "submit 4"
WAIT=30 wait_state "$J4" COMPLETED
L4=$(ls "$WS/$J4"-*.log)
for want in 'ARG<x=$(touch '"$T"'/pwned)>' 'ARG<y=`id`;z>' 'ARG<a b>' "ARG<q='\">" 'ARG<p=|&>>'; do
  grep -qF "0: $want" "$L4" || fail "passthrough not literal: $want"
done
[ -e "$T/pwned" ] && fail "a passthrough argument was run by a shell"

# 2. cancel
WAIT=30 wait_state "$J2" RUNNING
for _ in $(seq 100); do grep -q "completed step: 2," "$WS/$J2"-*.log 2>/dev/null && break; sleep 0.2; done
"$MT" cancel "$J2" --workspace "$WS" || fail "mt cancel"
WAIT=30 wait_state "$J2" CANCELLED
for _ in $(seq 50); do grep -q "^=* JOB SUMMARY =*$" "$WS/$J2"-*.log && break; sleep 0.2; done
grep -q "^  Status: .*CANCELLED (scancel / SIGTERM)" "$WS/$J2"-*.log || fail "cancelled job has no CANCELLED summary"
grep -q "NODE_EXIT host=node00[12] exit=143" "$WS/$J2"-*.log || fail "no NODE_EXIT 143"
grep -q "^0: \[Prometheus\] Started on port $PP " "$WS/$J2"-*.log || fail "observed job: no Prometheus port line"
grep -q "^0: \[Prometheus\] Stopped" "$WS/$J2"-*.log || fail "observed job: Prometheus not stopped on cancel"
D2=$(ls -d "$WS/$J2"-*/); [ -d "$D2/prometheus/wal" ] && [ -f "$D2/metrics_exporter/node002.log" ] || fail "observed job: no TSDB / exporter log"
sleep 1; pgrep -f -- "${D2%/}" >/dev/null && fail "a process of the cancelled job outlived it: $(pgrep -af -- "${D2%/}")"
"$MT" triage "$J2" --workspace "$WS" --json | python3 -c 'import json,sys; c=json.load(sys.stdin)["class"]; sys.exit(0 if c=="cancelled" else "class "+c)' || fail "triage of the cancelled job"
"$MT" cancel 999999 --workspace "$WS" 2>err.txt && fail "cancel of an unknown job succeeded"
grep -q "no job '999999'" err.txt || fail "unclear cancel error: $(cat err.txt)"

# 4. jobs launched without mt, by a plain sbatch: an output name that says nothing is found by id
#    through scontrol's StdOut/StdErr (stderr triaged with it); output outside the workspace is refused
mkdir -p "$WS/runs"
P1=$(sbatch --parsable -J plain -o "$WS/runs/train.txt" -e "$WS/runs/train.stderr" \
     --wrap 'echo "step 1 loss 2.5"; echo "Traceback (most recent call last):" >&2; echo "ValueError: bad record" >&2; exit 1') ||
  fail "plain sbatch"
P2=$(sbatch --parsable -J outside -o "$T/outside.txt" --wrap 'echo hi') || fail "plain sbatch (outside)"
for _ in $(seq 120); do [ -z "$(squeue -h -j "$P1,$P2" -t PD,R,CG -o %i 2>/dev/null)" ] && break; sleep 0.25; done
"$MT" triage "$P1" --workspace "$WS" --json > plain.json || fail "triage of a plain sbatch job by id"
python3 -c 'import json,sys
t=json.load(open("plain.json"))
files={e["file"] for e in t["evidence"]}
ok=t["job"]["id"]==sys.argv[1] and t["job"]["log"]=="runs/train.txt" and "runs/train.stderr" in files and t["class"]=="python_exception"
sys.exit(0 if ok else "plain job: %s %s %s %s" % (t["job"]["id"], t["job"]["log"], t["class"], sorted(files)))' "$P1" || fail "plain job triage"
"$MT" triage "$P2" --workspace "$WS" 2>err.txt && fail "a job whose output lies outside the workspace was read"
grep -q "outside the workspace" err.txt || fail "unclear error for output outside the workspace: $(cat err.txt)"

# bad input: sbatch failing → clear error, no artifact, no job dir
before=$(ls -A "$WS" "$WS/.artifacts" | sort | md5sum)
"$MT" submit llama2-70b --workspace "$WS" --backend slurm --yes --partition=nosuchpartition 2>err.txt && fail "sbatch with a bad partition succeeded"
grep -q "sbatch failed (exit 1): .*partition" err.txt || fail "unclear sbatch error: $(cat err.txt)"
[ "$(ls -A "$WS" "$WS/.artifacts" | sort | md5sum)" = "$before" ] || fail "a failed sbatch left files behind"

# 3. the time limit (1 minute; slurmctld enforces it on its next pass)
WAIT=150 wait_state "$J3" TIMEOUT
for _ in $(seq 100); do grep -q "^=* JOB SUMMARY =*$" "$WS/$J3"-*.log && break; sleep 0.2; done
grep -q "^slurmstepd.*: error: \*\*\* JOB .* DUE TO TIME LIMIT \*\*\*" "$WS/$J3"-*.log || fail "no time-limit line in the log"
grep -q "^  Status: .*FAILED (exit 143)" "$WS/$J3"-*.log || fail "no summary for the timed-out job"

# Slurm down → clear error, nothing left behind
bash "$DOWN" "$T/slurm" >/dev/null 2>&1
before=$(ls -A "$WS" "$WS/.artifacts" | sort | md5sum)
timeout 120 "$MT" submit llama2-70b --workspace "$WS" --backend slurm --yes 2>err.txt && fail "submit with Slurm down succeeded"
grep -q "sbatch failed" err.txt || fail "unclear error with Slurm down: $(cat err.txt)"
[ "$(ls -A "$WS" "$WS/.artifacts" | sort | md5sum)" = "$before" ] || fail "submit with Slurm down left files behind"
echo PASS
