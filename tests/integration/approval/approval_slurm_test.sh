#!/usr/bin/env bash
# Integration test: submit_job behind the approval gate, end to end, on a real single-node
# Slurm (tests/slurm/slurm-up.sh, torn down by PID on every exit path), driven by the real
# TypeScript SDK clients over stdio:
#   1. SDK v1 (legacy era) answers the server's elicitation/create with approve → the job runs;
#   2. the v2 client pinned to 2026-07-28 answers input_required → the job runs;
#   3. a client without elicitation gets pending_approval; `mt approve ID --yes` (a human on
#      the host) follows → the job runs; a plan_id lookup then reports it submitted;
#   4. a client that declines gets pending_approval; `mt deny` ends it;
#   5. the ci role runs what its policy allows and is denied beyond it;
#   6. cancel_job, approved in-band, cancels a running Slurm job;
# plus the CLI-side attacks: replayed / forged / denied plan ids, an agent role that cannot
# be raised through the environment, and every refusal found in the audit log.
# Usage: approval_slurm_test.sh MT SLURM_UP SLURM_DOWN NODE_DIR
set -uo pipefail
MT=${1:?mt}; UP=${2:?slurm-up.sh}; DOWN=${3:?slurm-down.sh}; NODE_DIR=${4:?tests/node}
command -v slurmctld >/dev/null && command -v sbatch >/dev/null || { echo "SKIP: slurm not installed (scripts/packages.txt)"; exit 77; }
command -v node >/dev/null || { echo "SKIP: node not installed"; exit 77; }
T=$(mktemp -d /tmp/mt-approval-slurm.XXXXXX)
chmod 755 "$T"
cleanup() { local rc=$?; bash "$DOWN" "$T/slurm" >/dev/null 2>&1; [ $rc = 0 ] && rm -rf "$T" || echo "kept $T"; exit $rc; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
read -r CTL D < <(python3 -c 'import socket
s=[socket.socket() for _ in range(2)]
[x.bind(("127.0.0.1",0)) for x in s]
print(" ".join(str(x.getsockname()[1]) for x in s))')
eval "$(SLURM_TEST_AUTH=none SLURM_CTL_PORT=$CTL SLURM_D_PORT=$D SLURM_SCHED=sched/builtin SLURM_OVERSUBSCRIBE=FORCE:8 bash "$UP" "$T/slurm")" || fail "slurm did not come up"
export SLURM_CONF MT_SLURM_PACK_TASKS=1 MT_PROLOG_CHECK_S=1
WS=$T/ws; mkdir -p "$WS"
CFG=$T/mt.yaml
# Form mode (the client's answer approves): single-user local setups only, so it must be
# chosen in an operator-owned file (root-owned here, mode 644 in a 755 directory).
cat > "$CFG" <<YAML
workspace: $WS
approvals:
  stdio_role: agent
  in_band: form
YAML
# The shipped default: URL mode (no page known to a stdio server here: out of band only),
# and URL mode pointing at a page, where the human decides.
DEFCFG=$T/default.yaml
printf 'workspace: %s\n' "$WS" > "$DEFCFG"
URLCFG=$T/url.yaml
printf 'workspace: %s\napprovals: {page_url: "http://127.0.0.1:9/approvals", url_wait_seconds: 2}\n' "$WS" > "$URLCFG"
cd "$T"
AUDIT=$WS/.mt/audit.jsonl

field() { python3 -c 'import json,sys; d=json.loads(sys.stdin.readline()); v=d.get(sys.argv[1]); print("" if v is None else v)' "$1"; }
state() { "$MT" status "$1" --workspace "$WS" --json | field state; }
wait_state() {  # JOB STATE... (up to 90 s)
  local job=$1; shift; local s
  for _ in $(seq 360); do
    s=$(state "$job"); for want in "$@"; do [ "$s" = "$want" ] && return 0; done; sleep 0.25
  done
  fail "job $job is $s, expected $*"
}
client() {  # MODE ARGS_JSON → one JSON line
  MT_ROLE=approver node "$NODE_DIR/approval_clients.mjs" --stdio "$MT serve --config $CFG" --mode "$1" --args "$2"
}
ARGS() { echo "{\"model\":\"llama2-70b\",\"backend\":\"slurm\",\"nodes\":1,\"passthrough\":[\"steps=3\",\"_env_SIM_STEP_SECONDS=0.1\",\"_env_SIM_STARTUP_SECONDS=0.2\",\"tag=$1\"]}"; }

# 0. the shipped default: an agent whose client answers every form with "approve" (legacy
#    elicitation or 2026-07-28 input_required) is never asked, and nothing runs
dclient() { node "$NODE_DIR/approval_clients.mjs" --stdio "$MT serve --config $DEFCFG" --mode "$1" --args "$2"; }
R0=$(dclient v1-accept "$(ARGS default-v1)") || fail "default v1: $R0"
[ "$(echo "$R0" | field status)" = pending_approval ] && [ "$(echo "$R0" | field asked)" = 0 ] || fail "default config, v1 form client: $R0"
R0b=$(dclient modern-accept "$(ARGS default-v2)") || fail "default v2: $R0b"
[ "$(echo "$R0b" | field status)" = pending_approval ] && [ "$(echo "$R0b" | field asked)" = 0 ] || fail "default config, v2 form client: $R0b"
echo "default config: both form-answering clients got pending_approval without being asked"
# A config granting itself form mode or the ci role from a file others may write: refused.
EVIL=$T/evil; mkdir -p "$EVIL"; chmod 777 "$EVIL"
printf 'workspace: %s\napprovals: {stdio_role: ci, in_band: form}\npolicy: {ci: {max_nodes: 4096}}\n' "$WS" > "$EVIL/mt.yaml"
echo '{}' | "$MT" serve --config "$EVIL/mt.yaml" 2>err.txt && fail "mt serve accepted a world-writable directory's config granting ci"
grep -q "only an operator-controlled file may set" err.txt || fail "privileged config: $(cat err.txt)"

# 1. legacy era: a real elicitation/create during the call, answered "approve"
R1=$(client v1-accept "$(ARGS legacy)") || fail "v1 client: $R1"
echo "v1: $R1"
[ "$(echo "$R1" | field status)" = submitted ] && [ "$(echo "$R1" | field asked)" = 1 ] && [ "$(echo "$R1" | field via)" = elicitation ] || fail "v1: $R1"
J1=$(echo "$R1" | field job_id)

# 2. 2026-07-28: input_required + signed requestState, answered by the client's handler
R2=$(client modern-accept "$(ARGS modern)") || fail "v2 modern client: $R2"
echo "v2 modern: $R2"
[ "$(echo "$R2" | field status)" = submitted ] && [ "$(echo "$R2" | field via)" = input_required ] && [ "$(echo "$R2" | field era)" = modern ] || fail "v2: $R2"
J2=$(echo "$R2" | field job_id)

# 3. no elicitation: pending_approval, then a human approves on the host
R3=$(client no-elicit "$(ARGS oob)") || fail "no-elicit client: $R3"
echo "no elicitation: $R3"
[ "$(echo "$R3" | field status)" = pending_approval ] && [ "$(echo "$R3" | field asked)" = 0 ] || fail "no-elicit: $R3"
P3=$(echo "$R3" | field plan_id)
LIST=$("$MT" approvals --workspace "$WS"); grep -q "^$P3  pending  submit" <<<"$LIST" || fail "mt approvals does not list $P3"   # (grep -q on a pipe would SIGPIPE mt under pipefail)
# No terminal and no --yes: nothing is decided.
"$MT" approve "$P3" --workspace "$WS" </dev/null 2>err.txt && fail "approve without terminal or --yes succeeded"
grep -q "no terminal to confirm on" err.txt || fail "approve without terminal: $(cat err.txt)"
A3=$("$MT" approve "$P3" --workspace "$WS" --yes --json) || fail "mt approve $P3"
[ "$(echo "$A3" | field status)" = submitted ] || fail "mt approve: $A3"
J3=$(echo "$A3" | field job_id)
# Replay of the used approval, forged ids: refused (exit 1), nothing submitted twice.
"$MT" approve "$P3" --workspace "$WS" --yes 2>/dev/null && fail "a used approval was accepted twice"
"$MT" approve "../../etc/passwd" --workspace "$WS" --yes 2>/dev/null && fail "forged plan id accepted"
"$MT" approve 0123456789abcdef0123456789abcdef --workspace "$WS" --yes 2>/dev/null && fail "unknown plan id accepted"
L3=$(client no-elicit "{\"plan_id\":\"$P3\"}") || fail "plan_id lookup: $L3"
[ "$(echo "$L3" | field status)" = submitted ] && [ "$(echo "$L3" | field job_id)" = "$J3" ] || fail "plan_id lookup: $L3"

# 4. decline = "declined or unavailable": pending, then a human denies
R4=$(client v1-decline "$(ARGS declined)") || fail "declining client: $R4"
[ "$(echo "$R4" | field status)" = pending_approval ] && [ "$(echo "$R4" | field asked)" = 1 ] || fail "decline: $R4"
P4=$(echo "$R4" | field plan_id)
"$MT" deny "$P4" --workspace "$WS" --yes --reason "not today" >/dev/null || fail "mt deny"
"$MT" approve "$P4" --workspace "$WS" --yes 2>/dev/null && fail "a denied plan was approved"
L4=$(client no-elicit "{\"plan_id\":\"$P4\"}")
[ "$(echo "$L4" | field status)" = denied ] || fail "denied lookup: $L4"

# 5. the CI role (from its own config file) under a policy: within it → runs; beyond → denied
CICFG=$T/ci.yaml
cat > "$CICFG" <<YAML
workspace: $WS
approvals: {stdio_role: ci}
policy:
  ci: {backends: [slurm], max_nodes: 2, max_steps: 5, partitions: [debug], settings: {dataset_type: [synthetic]}}
YAML
ci() { node "$NODE_DIR/approval_clients.mjs" --stdio "$MT serve --config $CICFG" --mode no-elicit --args "$1"; }
R5=$(ci '{"model":"llama2-70b","nodes":2,"partition":"debug","passthrough":["steps=3","dataset_type=synthetic","_env_SIM_STEP_SECONDS=0.1"]}') || fail "ci: $R5"
[ "$(echo "$R5" | field status)" = submitted ] && [ "$(echo "$R5" | field approver)" = policy.ci ] || fail "ci within policy: $R5"
J5=$(echo "$R5" | field job_id)
R5b=$(ci '{"model":"llama2-70b","nodes":3,"partition":"batch","nodelist":"localhost","passthrough":["steps=500"]}') || fail "ci: $R5b"
[ "$(echo "$R5b" | field status)" = denied ] || fail "ci beyond policy: $R5b"
for why in "3 nodes exceeds max_nodes 2" "steps=500 exceeds max_steps 5" "partition batch is not one of" "--nodelist is not allowed" "dataset_type is unset"; do
  echo "$R5b" | grep -q -- "$why" || fail "ci refusal lacks '$why': $R5b"
done

# 6. cancel_job through the same gate: a long job, approved in-band, then cancelled in-band
R6=$(client v1-accept '{"model":"llama2-70b","passthrough":["steps=100000","_env_SIM_STEP_SECONDS=0.5","tag=long"]}') || fail "long job: $R6"
J6=$(echo "$R6" | field job_id)
wait_state "$J6" RUNNING
C6=$(node "$NODE_DIR/approval_clients.mjs" --stdio "$MT serve --config $CFG" --mode v1-accept --tool cancel_job --args "{\"job\":\"$J6\"}") || fail "cancel: $C6"
echo "cancel: $C6"
[ "$(echo "$C6" | field status)" = submitted ] && echo "$C6" | grep -q "\"kind\":\"cancel\"" || fail "cancel: $C6"
wait_state "$J6" CANCELLED
X=$(node "$NODE_DIR/approval_clients.mjs" --stdio "$MT serve --config $CFG" --mode v1-accept --tool cancel_job --args '{"job":"999999"}')
echo "$X" | grep -q '"isError":true' || fail "cancel of a job not in the workspace: $X"

# 7. URL mode: the client is sent to the approval page; its own "accept" approves nothing,
#    and the human's decision made outside the client is what runs the job
uclient() { node "$NODE_DIR/approval_clients.mjs" --stdio "$MT serve --config $URLCFG" --mode "$@"; }
R7a=$(uclient v1-url --args "$(ARGS url-agent-only)") || fail "url client: $R7a"
[ "$(echo "$R7a" | field status)" = pending_approval ] && [ "$(echo "$R7a" | field asked)" = 1 ] || fail "url mode, agent accept: $R7a"
echo "$R7a" | grep -q 'http://127.0.0.1:9/approvals?plan=' || fail "url mode did not send the page: $R7a"
R7=$(uclient v1-url-human --human "$MT approve --yes --workspace $WS" --args "$(ARGS url-human)") || fail "url human: $R7"
echo "url mode: $R7"
[ "$(echo "$R7" | field status)" = submitted ] && [ "$(echo "$R7" | field via)" = terminal ] || fail "url mode with a human: $R7"
J7=$(echo "$R7" | field job_id)

# The approved jobs run to completion on Slurm (MT_ROLE=approver in the client's
# environment changed nothing: the stdio role comes from mt.yaml).
for j in "$J1" "$J2" "$J3" "$J5" "$J7"; do [[ "$j" =~ ^[0-9]+$ ]] || fail "not a Slurm job id: '$j'"; done
for j in "$J1" "$J2" "$J3" "$J5" "$J7"; do wait_state "$j" COMPLETED; done
for j in "$J1" "$J2" "$J3" "$J5" "$J7"; do
  L=$(ls "$WS/$j"-JAX-llama2-70b-*.log) || fail "no log for $j"
  grep -q "^0: completed step: 2," "$L" || fail "job $j did not train: $L"
done
[ "$(ls -d "$WS"/[0-9]*-JAX-*/ | wc -l)" = 6 ] || fail "expected exactly 6 job dirs: $(ls "$WS")"

# The audit log: every decision and refusal, one JSON object per line.
python3 - "$AUDIT" "$P3" "$P4" <<'PY' || fail "audit log"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
ev = lambda e, **kw: [l for l in lines if l["event"] == e and all(l.get(k) == v for k, v in kw.items())]
assert len(ev("submitted")) == 6, [l["event"] for l in lines]
assert len(ev("url_elicitation_accept")) == 2, ev("url_elicitation_accept")
assert len(ev("cancelled")) == 1 and len(ev("approved", via="policy", actor="policy.ci")) == 1
assert len(ev("denied", actor="policy.ci")) == 1
assert len(ev("approved", plan_id=sys.argv[2], via="terminal")) == 1
assert len(ev("approved", via="elicitation")) == 3 and len(ev("approved", via="input_required")) == 1
assert len(ev("denied", plan_id=sys.argv[3])) == 1
refused = ev("refused")
assert any("not pending" in l["reason"] and l["plan_id"] == sys.argv[2] for l in refused), refused
assert any("not a plan id" in l["reason"] for l in refused), refused
assert any("no such plan" in l["reason"] for l in refused), refused
assert sorted(set(l["role"] for l in ev("requested"))) == ["agent", "ci"], ev("requested")
assert all("time" in l for l in lines)
PY
echo "ok: legacy elicitation, input_required, mt approve and the CI policy each ran a Slurm job; cancel_job cancelled one; refusals audited"
