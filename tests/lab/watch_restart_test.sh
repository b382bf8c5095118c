#!/usr/bin/env bash
# ctest mt-watch-restart: self-healing on the real single-node Slurm (tests/slurm) with real
# PyTorch jobs (tests/lab/train.py, DDP over gloo, 2 ranks packed on the node, submitted by
# `mt submit --backend slurm` with a model whose train_command is the lab script; rank 0
# checkpoints every 5 steps):
#   1. rank 1 hangs before step 6 (a transient fault: --fault-once). `mt watch` under a policy
#      that lets its role restart: the hang is found within 2x --hang-seconds, the restart plan
#      is approved by the policy, the hung job is cancelled, the restart (parent, attempt,
#      resume step 5 in its plan) resumes from the checkpoint and completes; the ledger's
#      offenders are not excluded where that would strand the job (below), each with its reason.
#   2. the same under a policy that does not allow it: the restart waits as pending (notified),
#      the watch is killed while it waits, `mt approve` runs the plan, a new watch follows the
#      restart to its end, and asking again (the plan id) submits nothing twice.
#   3. the same policy, the watch as an MCP task (watch_job over Streamable HTTP from the
#      official TypeScript SDK with the Tasks extension, an agent's token): the findings
#      arrive as the task's status, the restart runs and the task's result has the whole chain.
#   watch_restart_test.sh MT SLURM_UP SLURM_DOWN [NODE_DIR]
set -uo pipefail
MT=$(realpath "${1:?mt}"); UP=$(realpath "${2:?slurm-up.sh}"); DOWN=$(realpath "${3:?slurm-down.sh}")
NODE_DIR=${4:-}
HERE=$(cd "$(dirname "$0")" && pwd)
LIB=$(cd "$HERE/../lib" && pwd)
source "$LIB/server.sh"
PY=/usr/bin/python3
command -v slurmctld >/dev/null && command -v sbatch >/dev/null || { echo "SKIP: slurm not installed (scripts/packages.txt)"; exit 77; }
"$PY" -c 'import torch.distributed' 2>/dev/null || { echo "FAIL: $PY cannot import torch.distributed (python3-torch)"; exit 1; }
T=$(mktemp -d /tmp/mt-watch-restart.XXXXXX)
chmod 755 "$T"
WATCH_PID=
cleanup() {
  local rc=$?
  [ -n "$WATCH_PID" ] && kill "$WATCH_PID" 2>/dev/null
  stop_server
  # Only this test's own cluster: never the machine's default one.
  [[ "${SLURM_CONF:-}" == "$T"/* ]] && squeue -h -o %i 2>/dev/null | xargs -r scancel >/dev/null 2>&1
  bash "$DOWN" "$T/slurm" >/dev/null 2>&1
  [ $rc = 0 ] && rm -rf "$T" || echo "kept $T"
  exit $rc
}
trap cleanup EXIT
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }
read -r CTL D LAB1 LAB2 LAB3 < <("$PY" "$LIB/free_ports.py" 5)
eval "$(SLURM_TEST_AUTH=none SLURM_CTL_PORT=$CTL SLURM_D_PORT=$D SLURM_SCHED=sched/builtin SLURM_OVERSUBSCRIBE=FORCE:8 bash "$UP" "$T/slurm")" || { echo "FAIL slurm did not come up"; exit 1; }
export SLURM_CONF MT_SLURM_PACK_TASKS=1
cd "$T"
mkdir -p ws models
# The lab script as a model: each Slurm task is one rank.
make_model() {  # make_model NAME PORT
  cat > "models/$1.yml" <<YML
description: DDP over gloo on CPU (tests/lab/train.py)
steps: 14
train_command: ["/usr/bin/env", "RANK={NODE_RANK}", "WORLD_SIZE={NNODES}", "MASTER_ADDR=127.0.0.1", "MASTER_PORT=$2", "$PY", "$HERE/train.py", "{PASSTHROUGH}"]
YML
}
make_model lab-a "$LAB1"
make_model lab-b "$LAB2"
make_model lab-c "$LAB3"
# Hosts the ledger implicated twice (the repeat-offender rule), which a restart would keep off:
# ghost-99 is unknown to the scheduler (excluding it leaves a Slurm job pending forever:
# "Requested node configuration is not available"), and localhost is this cluster's only node
# (excluding it leaves no node), so both are dropped, each with its reason. That --exclude
# reaches sbatch when it can is a unit test (RestartPlan*): one real node cannot show it.
"$PY" - <<'PY'
import json, time
now = int(time.time())
with open("nodes.tmp", "w") as f:
    for i in range(4):
        f.write(json.dumps({"time": now - 60 * (i + 1), "host": ["localhost", "ghost-99"][i % 2], "job": "old%d" % i, "event": "implicated",
                            "class": "gpu_hw_error", "evidence": "XID 79", "source": "triage"}) + "\n")
PY
mkdir -p ws/.mt && mv nodes.tmp ws/.mt/nodes.jsonl
write_config() {  # write_config FILE allow(1|0)
  { echo "workspace: $T/ws"
    echo "policy:"
    if [ "$2" = 1 ]; then
      echo "  supervisor:"
      echo "    backends: [slurm]"
      echo "    max_nodes: 2"
      echo "    partitions: [debug]"
      echo "    scheduler_args: [-p, --partition, --time, -t, --exclude]"
      echo "    cancel: true"
    fi
    echo "  ci:"
    echo "    partitions: [debug]"
  } > "$1"
}
write_config allow.yaml 1
write_config forbid.yaml 0
submit() {  # submit CONFIG MODEL MARKER-NAME -> job id on stdout
  "$MT" submit "$2" --backend slurm -N 2 -p debug --time=10 --config "$1" --models models --yes --json -- \
    --steps 14 --timeout 60 --fault hang --fault-rank 1 --fault-step 6 --fault-once "$T/$3.fired" \
    --checkpoint-dir "$T/ckpt-$3" --checkpoint-every 5 | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["job_id"])'
}
events() { "$PY" -c 'import json,sys; [print(json.loads(l)["kind"], json.dumps(json.loads(l)["detail"])) for l in open(sys.argv[1])]' "$1"; }

# ---- 1. restart allowed by the policy ----------------------------------------------------------
J1=$(submit allow.yaml lab-a a) || { echo "FAIL submit"; exit 1; }
echo "submitted $J1"
timeout 300 "$MT" watch "$J1" --config allow.yaml --interval 1 --hang-seconds 8 --timeout 280 --json > w1.jsonl 2> w1.err
"$PY" - w1.jsonl ws/.mt/approvals <<'CHECK' || fail=1
import json, os, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
def ok(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    return cond
hang = [e for e in ev if e["kind"] == "hang"]
dec = [e for e in ev if e["kind"] == "decision"]
rst = [e for e in ev if e["kind"] == "restart"]
end = [e for e in ev if e["kind"] == "ended"]
good = ok(len(hang) == 1 and hang[0]["detail"]["silent_seconds"] <= 16, "hang found within 2 x 8 s (%s)" % [h["detail"] for h in hang])
good &= ok(len(dec) == 1 and dec[0]["detail"]["action"] == "restart" and dec[0]["detail"].get("resume_step") == 5,
           "decision: restart from the checkpoint of step 5 (%s)" % [d["text"] for d in dec])
good &= ok(len(rst) == 1 and rst[0]["detail"]["state"] == "submitted" and rst[0]["detail"]["via"] == "policy",
           "restart approved by the policy and submitted (%s)" % [r["text"] for r in rst])
good &= ok(len(end) == 1 and end[0]["detail"]["status"] == "completed" and end[0]["detail"]["last_step"] == 14,
           "the restart completed all 14 steps (%s)" % [e["text"] for e in end])
plans = [json.load(open(os.path.join(sys.argv[2], f))) for f in os.listdir(sys.argv[2]) if f.endswith(".json")]
restarts = [p for p in plans if "restart" in p["plan"]]
good &= ok(len(restarts) == 1, "one restart plan recorded (%d)" % len(restarts))
if restarts:
    r = restarts[0]["plan"]
    good &= ok(r["restart"]["parent_job"] == dec[0]["detail"].get("job", r["restart"]["parent_job"]) and r["restart"]["attempt"] == 1
               and r["restart"]["resume_step"] == 5 and r["restart"]["exclude"] == [],
               "the plan records parent, attempt 1, resume step 5, no exclusion (%s)" % r["restart"])
    good &= ok(not any(a.startswith("--exclude") for a in r["submit_argv"]), "sbatch gets no --exclude (%s)" % r["submit_argv"])
sys.exit(0 if good else 1)
CHECK
J1R=$("$PY" -c 'import json,sys; print([json.loads(l)["detail"]["job"] for l in open("w1.jsonl") if json.loads(l)["kind"]=="restart"][0])' 2>/dev/null)
check "ghost-99 (unknown to Slurm) not excluded, with the reason" 'grep -q "not excluded, unknown to the scheduler: ghost-99" w1.err'
check "localhost (the only node) not excluded, with the reason" 'grep -q "keeping localhost off would leave 0 of 1 nodes" w1.err'
check "the hung job was cancelled" '[ "$("$MT" status "$J1" --config allow.yaml --json | "$PY" -c "import json,sys; print(json.load(sys.stdin)[\"state\"])")" = CANCELLED ]'
check "the restart resumed from step 5 (its log)" 'grep -q "Restored checkpoint from step 5" ws/*'"$J1R"'*.log'
check "the restart's triage: restored from step 5" '[ "$("$MT" triage "$J1R" --config allow.yaml --json | "$PY" -c "import json,sys; print(json.load(sys.stdin)[\"restored_from_step\"])")" = 5 ]'
# goodput of the chain, asked of either attempt: 2 attempts, 1 interruption, the steps after the
# checkpoint of step 5 redone, every part measured and the whole accounted for
goodput_ok() {   # JOB CONFIG VIA MIN_APPROVAL_SECONDS
  "$MT" perf "$1" --config "$2" --no-report --json | "$PY" -c '
import json, sys
g = json.load(sys.stdin)["goodput"]
via, min_wait = sys.argv[1], float(sys.argv[2])
a = g["attempts"]
parts = sum(g[k] for k in ("productive_seconds", "startup_seconds", "checkpoint_seconds", "redone_seconds", "failure_seconds",
                           "approval_seconds", "restart_seconds", "other_seconds"))
ok = (len(a) == 2 and g["interruptions"] == 1 and a[0]["kept_through"] == 5 and a[1]["resumed_from"] == 5
      and g["redone_steps"] == a[0]["last_step"] - 5 and a[1]["last_step"] == 14 and a[1]["approved_via"] == via
      and g["approval_seconds"] >= min_wait and g["failure_seconds"] >= 8 and 0 < g["goodput_pct"] < 100
      and g["productive_seconds"] > 0 and g["startup_seconds"] > 0 and abs(parts - g["total_seconds"]) <= 2)
print(json.dumps({k: v for k, v in g.items() if k != "attempts"}), file=sys.stderr)
sys.exit(0 if ok else 1)' "$3" "$4"
}
check "goodput of the policy-restarted run, from the restart and from the parent" 'goodput_ok "$J1R" allow.yaml policy 0 && goodput_ok "$J1" allow.yaml policy 0'

# ---- 2. restart pending until mt approve; the watch killed meanwhile ---------------------------
J2=$(submit forbid.yaml lab-b b) || { echo "FAIL submit 2"; exit 1; }
echo "submitted $J2"
"$MT" watch "$J2" --config forbid.yaml --interval 1 --hang-seconds 8 --json > w2.jsonl 2> w2.err &
WATCH_PID=$!
# Killed once the pending restart is notified and in its memory (a kill between the two would
# repeat the finding on the next start, which is the outbox's at-least-once, not a bug here).
for i in $(seq 240); do
  grep -q '"pending_approval"' w2.jsonl 2>/dev/null && grep -q '"restart_plan":"[0-9a-f]' ws/.mt/watch/"$J2"/memory.json 2>/dev/null && break
  sleep 1
done
kill "$WATCH_PID"; wait "$WATCH_PID" 2>/dev/null; WATCH_PID=
PLAN=$("$PY" -c 'import json; print([json.loads(l)["detail"]["plan_id"] for l in open("w2.jsonl") if json.loads(l)["kind"]=="restart"][0])' 2>/dev/null)
check "restart pending, notified with its plan id ($PLAN)" '[ -n "$PLAN" ]'
check "nothing submitted while it waits" '[ "$(squeue -h -o %i | wc -l)" -le 1 ]'
# A watch that lost its memory (killed before saving it) looks again: it finds the pending plan
# in the store by its derived id and records no second one.
mv ws/.mt/watch/"$J2"/memory.json memory.bak
timeout 60 "$MT" watch "$J2" --config forbid.yaml --interval 1 --hang-seconds 8 --once --json > w2b.jsonl 2> w2b.err
check "a watch without its memory records no second plan" '[ "$(ls ws/.mt/approvals/*.json | wc -l)" = 2 ]'
mv memory.bak ws/.mt/watch/"$J2"/memory.json
# Two watches of one job at once: the second is refused.
"$MT" watch "$J2" --config forbid.yaml --interval 1 --json > w2c.jsonl 2> w2c.err &
WATCH_PID=$!
sleep 2
check "a second watch of the same job is refused" '! "$MT" watch "$J2" --config forbid.yaml --once > /dev/null 2> w2d.err && grep -q "already being watched" w2d.err'
kill "$WATCH_PID"; wait "$WATCH_PID" 2>/dev/null; WATCH_PID=
"$MT" approve "$PLAN" --config forbid.yaml --yes > approve.out 2> approve.err
check "mt approve ran the restart: $(cat approve.out)" 'grep -q "Restart of job $J2: .*submitted job" approve.out'
check "the parent no longer runs" '"$MT" status "$J2" --config forbid.yaml --json | "$PY" -c "import json,sys; sys.exit(json.load(sys.stdin)[\"state\"] in (\"RUNNING\", \"PENDING\"))"'
timeout 300 "$MT" watch "$J2" --config forbid.yaml --interval 1 --hang-seconds 8 --timeout 280 --json > w3.jsonl 2> w3.err
check "the new watch follows the approved restart to completion" 'grep -q "\"state\":\"submitted\"" w3.jsonl && grep -q "\"status\":\"completed\"" w3.jsonl'
check "one restart job for plan $PLAN (no double submission)" '[ "$(grep -c "\"event\":\"submitted\".*\"plan_id\":\"$PLAN\"\|\"plan_id\":\"$PLAN\".*\"event\":\"submitted\"" ws/.mt/audit.jsonl)" = 1 ]'
check "no finding repeated across the watches that kept their memory" '[ "$(cat w2.jsonl w2c.jsonl w3.jsonl | grep -c "\"kind\":\"decision\"")" = 1 ]'
J2R=$("$PY" -c 'import json,sys; print([json.loads(l)["detail"]["job"] for l in open("w3.jsonl") if json.loads(l)["kind"]=="restart" and json.loads(l)["detail"].get("job")][0])' 2>/dev/null)
check "goodput counts the wait for mt approve (at least the 2 s this test waited)" 'goodput_ok "$J2R" forbid.yaml terminal 2'
# ---- 3. watch_job as an MCP task ------------------------------------------------------------------
if [ -n "$NODE_DIR" ] && [ -d "$NODE_DIR/node_modules/@modelcontextprotocol/ext-tasks" ]; then
  AGENT_SECRET=agent-$RANDOM-$RANDOM
  { cat allow.yaml
    echo "tokens:"
    echo "  - name: agent-1"
    echo "    sha256: $(printf %s "$AGENT_SECRET" | sha256sum | cut -d' ' -f1)"
    echo "    role: agent"
  } > serve.yaml
  start_server "$T/serve.log" "$MT" serve --http 127.0.0.1:0 --config serve.yaml || { echo "FAIL mt serve did not start"; exit 1; }
  J3=$(submit allow.yaml lab-c c) || { echo "FAIL submit 3"; exit 1; }
  echo "submitted $J3"
  timeout 300 node "$NODE_DIR/tool_task_client.mjs" --http "http://127.0.0.1:$SERVER_PORT/mcp" --token "$AGENT_SECRET" \
    --tool watch_job --complete --args "{\"job\": \"$J3\", \"hang_seconds\": 8, \"interval_seconds\": 1, \"timeout_seconds\": 250}" > mcp3.txt 2>&1
  "$PY" - mcp3.txt <<'CHECK3' || fail=1
import json, sys
lines = open(sys.argv[1]).read().splitlines()
progress = [l[9:].split(": ", 1)[-1] for l in lines if l.startswith("PROGRESS ")]   # "N: kind: text"
result = [json.loads(l[7:]) for l in lines if l.startswith("RESULT ")]
def ok(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    return cond
# The status holds the latest finding; polled every 250 ms, a quick one can be overtaken (the
# restart's own is followed by the new job's state at once), so the result below is what holds
# every finding: here the status must have moved while the task ran and stopped at the end.
good = ok(len(progress) >= 2 and progress[-1].startswith("ended:"),
          "watch_job task: findings in the task's status while it ran, the end last (%s)" % progress)
w = result[0]["watches"][0] if result else {}
kinds = [f["kind"] for f in w.get("findings", [])]
good &= ok(w.get("state") == "ended" and w.get("restarts") == 1 and kinds.count("restart") == 1 and "ended" in kinds
           and any(f["kind"] == "ended" and f["detail"].get("status") == "completed" for f in w["findings"]),
           "the task's result: the chain ended with one restart and a completed attempt (%s)" % kinds)
sys.exit(0 if good else 1)
CHECK3
  check "watch_job's restart was asked as watch_job (agent-1), role supervisor" '"$PY" -c "import json,sys; sys.exit(not any(e.get(\"event\") == \"requested\" and e.get(\"actor\") == \"watch_job (agent-1)\" and e.get(\"role\") == \"supervisor\" for e in map(json.loads, open(\"ws/.mt/audit.jsonl\"))))"'
else
  echo "SKIP 3. watch_job as an MCP task: no node SDK in '$NODE_DIR'"
fi
[ $fail = 0 ] || { for f in w*.jsonl w*.err approve.* mcp3.txt; do echo "== $f"; cat "$f"; done; ls ws; }
exit $fail
