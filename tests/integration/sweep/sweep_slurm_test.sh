#!/usr/bin/env bash
# mt sweep end to end on a real single-node Slurm (brought up here, torn down by PID on
# every exit path) with mt-simtrain as the training program. Two code states are copies of
# configs/models; in "head" one model (mixtral-8x22b) is 10 % slower. Checks:
#  1. a baseline sweep of the base state passes and writes a baseline file;
#  2. the head state against that baseline catches the slowdown and only it (JUnit: exactly
#     one failure, for that model; markdown names it; exit 1);
#  3. two states in one sweep (base vs a state where qwen3-14b's training command fails):
#     exactly one new failure and no regression;
#  4. a run the ci policy forbids (too many nodes) stops the sweep before anything is
#     submitted, and the refusal is in the audit log;
#  every submitted plan is recorded as approved by policy.ci in the audit log;
#  6. over MCP (mt serve --http, a ci token), from the official TypeScript client with the
#     Tasks extension (tests/node/tool_task_client.mjs): run_sweep runs as a task, its
#     progress shows in the task's status and its result is fetched after completion;
#  7. cancelling a run_sweep task cancels the Slurm jobs it submitted (scontrol shows them
#     CANCELLED, the audit log holds a sweep_cancel per job).
# Usage: sweep_slurm_test.sh MT SLURM_UP SLURM_DOWN REPO_MODELS_DIR [NODE_DIR]
set -uo pipefail
MT=$(realpath "${1:?mt}"); UP=$(realpath "${2:?slurm-up.sh}"); DOWN=$(realpath "${3:?slurm-down.sh}"); MODELS=$(realpath "${4:?configs/models}")
NODE_DIR=${5:-}
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/../../lib/server.sh"
command -v slurmctld >/dev/null && command -v sbatch >/dev/null || { echo "SKIP: slurm not installed (scripts/packages.txt)"; exit 77; }
T=$(mktemp -d /tmp/mt-sweep-test.XXXXXX)
chmod 755 "$T"
cleanup() { local rc=$?; stop_server; bash "$DOWN" "$T/slurm" >/dev/null 2>&1; [ $rc = 0 ] && rm -rf "$T" || echo "kept $T"; exit $rc; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
read -r CTL D < <(python3 -c 'import socket
s=[socket.socket() for _ in range(2)]
[x.bind(("127.0.0.1",0)) for x in s]
print(" ".join(str(x.getsockname()[1]) for x in s))')
eval "$(SLURM_TEST_AUTH=none SLURM_CTL_PORT=$CTL SLURM_D_PORT=$D SLURM_SCHED=sched/builtin SLURM_OVERSUBSCRIBE=FORCE:8 bash "$UP" "$T/slurm")" || fail "slurm did not come up"
export SLURM_CONF MT_SLURM_PACK_TASKS=1 MT_PROLOG_CHECK_S=1
cd "$T"

# Code states: copies of the shipped model configs.
for s in base head broken; do mkdir -p "$s/configs/models"; cp "$MODELS"/{llama2-70b,mixtral-8x22b,qwen3-14b}.yml "$s/configs/models/"; done
python3 - "$T" <<'PY' || exit 1
import re, sys
t = sys.argv[1]
p = f"{t}/head/configs/models/mixtral-8x22b.yml"
s = open(p).read()
m = re.search(r"tgs_band:\s*\[(\d+),\s*(\d+)\]", s)
s = s.replace(m.group(0), "tgs_band: [%d, %d]" % (round(int(m.group(1)) * 0.9), round(int(m.group(2)) * 0.9)))
open(p, "w").write(s)
p = f"{t}/broken/configs/models/qwen3-14b.yml"
open(p, "a").write('train_command: ["/bin/false"]\n')
PY
cat > mt.yaml <<EOF2
workspace: $T/ws
policy:
  ci:
    backends: [slurm]
    max_nodes: 2
    max_steps: 50
    partitions: [debug]
EOF2
mkdir -p ws
cat > spec.yaml <<'EOF2'
name: ci-smoke
backend: slurm
scheduler: [-p, debug, --time=10]
passthrough: [steps=30, _env_SIM_STEP_SECONDS=0.1, _env_SIM_STARTUP_SECONDS=0.2]
threshold_pct: 5
timeout_s: 240
runs:
  - model: llama2-70b
    nodes: [1, 2]
  - model: mixtral-8x22b
  - model: qwen3-14b
EOF2

# 1. baseline
"$MT" sweep --spec spec.yaml --config mt.yaml --state base=base --write-baseline baseline.json > out1.md 2> err1.txt \
  || { cat out1.md err1.txt; fail "the baseline sweep failed"; }
python3 - <<'PY' || { cat out1.md; fail "baseline file"; }
import json
b = json.load(open("baseline.json"))
r = {(x["model"], x["nodes"]): x for x in b["results"]}
assert len(r) == 4, r
assert all(x["status"] == "ok" and x["tgs"] > 1000 for x in r.values()), r
PY
grep -q "running\|RUNNING\|submitted" err1.txt || fail "no progress output"
echo "ok   1. baseline sweep: 4 runs measured"

# 2. head against the baseline: only mixtral regresses
"$MT" sweep --spec spec.yaml --config mt.yaml --state head=head --baseline baseline.json --junit j2.xml --markdown m2.md > out2.md 2> err2.txt
rc=$?
[ $rc = 1 ] || { cat out2.md err2.txt; fail "a 10 % slowdown must exit 1, got $rc"; }
cmp -s out2.md m2.md || fail "--markdown differs from stdout"
python3 - <<'PY' || { cat out2.md; cat j2.xml; fail "JUnit of the regression sweep"; }
import xml.etree.ElementTree as ET
root = ET.parse("j2.xml").getroot()
cases = root.findall(".//testcase")
assert len(cases) == 4, len(cases)
failed = [(c.get("classname"), c.get("name"), f.get("type"), f.get("message")) for c in cases for f in c.findall("failure") + c.findall("error")]
assert len(failed) == 1, failed
cls, name, typ, msg = failed[0]
assert cls.endswith(".mixtral-8x22b") and name == "nodes=1" and typ == "regression", failed
delta = float(msg.split("(")[1].split(" %")[0])
assert -10.5 < delta < -9.5, msg
assert root.get("failures") == "1" and root.get("tests") == "4", root.attrib
PY
grep -q "| mixtral-8x22b | 1 |.*| \*\*regression\*\* |" out2.md || fail "markdown lacks the mixtral regression row"
[ "$(grep -c '| ok |' out2.md)" = 3 ] || { cat out2.md; fail "the other three runs must be ok"; }
echo "ok   2. the injected 10 % slowdown is caught, and only it"

# 3. two states: a model that newly fails
"$MT" sweep --spec spec.yaml --config mt.yaml --state base=base --state broken=broken --junit j3.xml > out3.md 2> err3.txt
rc=$?
[ $rc = 1 ] || { cat out3.md err3.txt; fail "a newly failing model must exit 1, got $rc"; }
python3 - <<'PY' || { cat out3.md; fail "JUnit of the two-state sweep"; }
import xml.etree.ElementTree as ET
cases = ET.parse("j3.xml").getroot().findall(".//testcase")
failed = [(c.get("classname"), f.get("type")) for c in cases for f in c.findall("failure") + c.findall("error")]
assert failed == [("sweep.ci-smoke.qwen3-14b", "new_failure")], failed
PY
grep -q "broken vs base" out3.md || fail "markdown title"
echo "ok   3. two code states: exactly the newly failing model"

# 4. the policy refuses 4 nodes: nothing submitted
before=$(ls ws | wc -l)
sed 's/nodes: \[1, 2\]/nodes: [1, 4]/' spec.yaml > spec4.yaml
"$MT" sweep --spec spec4.yaml --config mt.yaml --state base=base > out4.md 2> err4.txt
rc=$?
[ $rc = 1 ] || fail "a policy refusal must exit 1, got $rc"
grep -q "nothing was submitted" err4.txt && grep -q "llama2-70b N=4" err4.txt || { cat err4.txt; fail "refusal message"; }
[ "$(ls ws | wc -l)" = "$before" ] || fail "a refused sweep created job directories"
echo "ok   4. the ci policy refuses 4 nodes before anything runs"

python3 - "$T/ws/.mt/audit.jsonl" <<'PY' || fail "audit log"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
approved = [e for e in ev if e["event"] == "approved"]
assert len(approved) == 4 + 4 + 8, len(approved)
assert all(e["via"] == "policy" and e["actor"] == "policy.ci" and e["requester"] == "mt sweep" for e in approved)
assert any(e["event"] == "refused" and "N=4" in e.get("reason", "") for e in ev)
PY
echo "ok   5. audit log: 16 plans approved by policy.ci, the refusal recorded"

[ -n "$NODE_DIR" ] || { echo "ok   (6, 7 not run: no NODE_DIR given)"; exit 0; }
# 6. run_sweep as an MCP task over HTTP with a ci token; the server's sweeps are configs/sweeps
#    beside its models (the base state here).
mkdir -p base/configs/sweeps
cat > base/configs/sweeps/mcp-smoke.yaml <<'EOF2'
name: mcp-smoke
backend: slurm
scheduler: [-p, debug, --time=10]
passthrough: [steps=30, _env_SIM_STEP_SECONDS=0.1, _env_SIM_STARTUP_SECONDS=0.2]
timeout_s: 240
runs:
  - model: llama2-70b
    nodes: [1, 2]
EOF2
sed -e 's/name: mcp-smoke/name: mcp-slow/' -e 's/_env_SIM_STEP_SECONDS=0.1/_env_SIM_STEP_SECONDS=5/' -e 's/steps=30/steps=50/' \
  base/configs/sweeps/mcp-smoke.yaml > base/configs/sweeps/mcp-slow.yaml
CI_SECRET=ci-$RANDOM-$RANDOM
cat >> mt.yaml <<EOF2
tokens:
  - name: ci-bot
    sha256: $(printf %s "$CI_SECRET" | sha256sum | cut -d' ' -f1)
    role: ci
EOF2
export MT_MODELS_DIR="$T/base/configs/models"
start_server "$T/serve.log" "$MT" serve --http 127.0.0.1:0 --config mt.yaml || fail "mt serve did not start"
URL="http://127.0.0.1:$SERVER_PORT/mcp"
timeout 300 node "$NODE_DIR/tool_task_client.mjs" --http "$URL" --token "$CI_SECRET" --tool run_sweep --args '{"sweep": "mcp-smoke"}' --complete > mcp6.txt 2>&1 \
  || { cat mcp6.txt; tail -20 "$T/serve.log"; fail "run_sweep as a task"; }
python3 - <<'PY' || { cat mcp6.txt; fail "run_sweep task result"; }
import json
lines = open("mcp6.txt").read().splitlines()
progress = [l for l in lines if l.startswith("PROGRESS ")]
assert any("submitted" in l for l in progress), progress
result = json.loads(next(l for l in lines if l.startswith("RESULT "))[7:])
assert result["sweep"] == "mcp-smoke" and result["status"] == "passed", result
runs = {(r["model"], r["nodes"]): r for r in result["runs"]}
assert set(runs) == {("llama2-70b", 1), ("llama2-70b", 2)}, runs
assert all(r["status"] == "ok" and r["tgs"] > 1000 and r["verdict"] == "new" and r["job_id"] for r in runs.values()), runs
PY
echo "ok   6. run_sweep over MCP: a task with progress, its result fetched after completion ($(grep -c '^PROGRESS' mcp6.txt) progress lines)"

# 7. cancel a slow sweep's task once a job is submitted: its Slurm jobs are cancelled
timeout 300 node "$NODE_DIR/tool_task_client.mjs" --http "$URL" --token "$CI_SECRET" --tool run_sweep --args '{"sweep": "mcp-slow"}' --cancel-when submitted > mcp7.txt 2>&1 \
  || { cat mcp7.txt; tail -20 "$T/serve.log"; fail "cancelling the run_sweep task"; }
grep -q "^OUTCOME cancelled" mcp7.txt || { cat mcp7.txt; fail "the task was not cancelled"; }
jobs=""
for _ in $(seq 120); do
  jobs=$(python3 -c 'import json,sys
ev=[json.loads(l) for l in open(sys.argv[1])]
print(" ".join(e["job"] for e in ev if e["event"]=="sweep_cancel" and e.get("why")=="sweep cancelled"))' "$T/ws/.mt/audit.jsonl")
  [ "$(echo $jobs | wc -w)" -ge 1 ] && break
  sleep 0.5
done
[ -n "$jobs" ] || { cat mcp7.txt; fail "no sweep_cancel in the audit log"; }
for j in $jobs; do
  state=""
  for _ in $(seq 60); do
    state=$(scontrol show job -o "$j" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
    case "$state" in CANCELLED|"") break;; esac
    sleep 0.5
  done
  [ "$state" = CANCELLED ] || fail "job $j is '$state' after the task was cancelled, not CANCELLED"
done
[ -z "$(squeue -h -o %i | grep -wF -f <(printf '%s\n' $jobs) || true)" ] || fail "cancelled jobs still queued"
echo "ok   7. cancelling the run_sweep task cancelled its Slurm job(s): $jobs"
stop_server
