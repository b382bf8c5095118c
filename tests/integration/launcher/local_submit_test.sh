#!/usr/bin/env bash
# Integration test: `mt submit --backend local`. An --observe run (~30 s, 2 tasks) with a real
# mt-exporter per task and a real Prometheus on task 0 whose TSDB lives in <job>/prometheus/;
# after the job ended, a freshly started Prometheus serves that TSDB's hw_* and tb_* series.
# Also: cancel, the confirmation rule, and bad input (unknown / ambiguous model, over-long
# job name, missing workspace, Prometheus port range taken), each a clear error that leaves
# no artifact and no job directory.
# Usage: local_submit_test.sh MT MODELS_FIXTURE_DIR
set -uo pipefail
MT=${1:?mt}; FIXMODELS=${2:?fixture models dir}
LIB=$(cd "$(dirname "$0")/../../lib" && pwd)
T=$(mktemp -d /tmp/mt-local-test.XXXXXX)
PIDS=()
cleanup() {
  local rc=$?
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
  for f in "$T"/ws/*/.mt-launch.json; do   # any job still running: stop its process group
    [ -f "$f" ] && g=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("pgid",0))' "$f") && [ "$g" -gt 0 ] && kill -TERM -- "-$g" 2>/dev/null
  done
  sleep 0.5; [ $rc = 0 ] && rm -rf "$T" || echo "kept $T"; exit $rc
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
WS=$T/ws; mkdir -p "$WS"; cd "$T"
# the first of $1 consecutive free ports (tests/lib/free_ports.py: below the ephemeral range)
free_ports() { python3 "$LIB/free_ports.py" "$1" --block | cut -d" " -f1; }
snapshot() { ls -A "$WS" "$WS/.artifacts" 2>/dev/null | sort | md5sum; }
expect_error() {  # expect_error PATTERN mt-args...   (rc 1, message, nothing written)
  local pat=$1; shift; local before; before=$(snapshot)
  "$MT" "$@" > out.txt 2> err.txt </dev/null; local rc=$?
  [ $rc = 1 ] || fail "mt $* exited $rc, expected 1"
  grep -q -- "$pat" err.txt || fail "mt $*: error lacks '$pat': $(cat err.txt)"
  [ "$(snapshot)" = "$before" ] || fail "mt $* left files behind"
}

# ---- bad input ---------------------------------------------------------------------------------
expect_error "unknown model 'nosuchmodel'. Supported models: .*llama2-70b" submit nosuchmodel --workspace "$WS" --yes
expect_error "ambiguous model '70b' matches 3 configs: llama2-70b, llama3-70b, llama3.1-70b" submit 70b --workspace "$WS" --yes
expect_error "job name is [0-9]* bytes, over the limit of 243" submit llama2-70b --workspace "$WS" --yes -- "run_name=$(printf 'x%.0s' $(seq 250))"
expect_error "workspace $T/missing does not exist" submit llama2-70b --workspace "$T/missing" --yes
expect_error "no terminal to confirm on and no --yes; nothing was submitted" submit llama2-70b --workspace "$WS"
expect_error "model spec 'a:b:c:d' has 3 colons" submit a:b:c:d --workspace "$WS" --yes
# k8s with no cluster (kubectl missing, or present with nothing to talk to): the artifact was
# already made when kubectl fails, and must be gone again, .artifacts/ included
expect_error "kubectl \(not found on PATH\|apply failed\)" submit 405b --backend k8s --workspace "$WS" --yes
[ -e "$WS/.artifacts" ] && fail "a failed k8s submit left $WS/.artifacts"
P=$(free_ports 2)
# Holds both ports; says "bound" once it does (a fixed sleep lost that race on a loaded CI).
python3 -c 'import socket,sys,time
ss=[]
for p in sys.argv[1:]:
    s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("127.0.0.1",int(p))); s.listen(1); ss.append(s)
print("bound", flush=True)
time.sleep(60)' "$P" "$((P+1))" > holder.txt &
PIDS+=($!)
for _ in $(seq 100); do grep -q bound holder.txt 2>/dev/null && break; sleep 0.1; done
grep -q bound holder.txt || fail "the port holder did not bind $P-$((P+1)) within 10 s"
expect_error "no free port for Prometheus in $P-$((P+1)) (all taken)" submit llama2-70b --observe --prometheus-ports "$P-$((P+1))" --workspace "$WS" --yes
kill "${PIDS[-1]}"; unset 'PIDS[-1]'

# on a terminal (script(1) gives it one) the plan is shown and a question asked
before=$(snapshot)
printf 'n\n' | script -qec "$MT submit default --workspace $WS -- _env_SIM_STEP_SECONDS=0.05" /dev/null > tty.txt; rc=$?
[ $rc = 1 ] && grep -q "Submit this job? \[y/N\]" tty.txt && grep -q "not confirmed; nothing was submitted" tty.txt || fail "terminal 'n' (rc $rc): $(tail -2 tty.txt)"
[ "$(snapshot)" = "$before" ] || fail "an unconfirmed submit left files behind"
printf 'y\n' | script -qec "$MT submit llama2-70b --workspace $WS -- steps=2 _env_SIM_STEP_SECONDS=0.05" /dev/null > tty.txt || fail "terminal 'y': $(tail -2 tty.txt)"
grep -q "Submitted job local_" tty.txt || fail "terminal 'y' did not submit"
for _ in $(seq 100); do grep -q "^=* JOB SUMMARY =*$" "$WS"/local_*-JAX-llama2-70b-steps_2-*.log 2>/dev/null && break; sleep 0.2; done
grep -q "^  Status: .*SUCCESS (exit 0)" "$WS"/local_*-JAX-llama2-70b-steps_2-*.log || fail "confirmed job did not run"

# dry run: nothing written; --json is the plan with its hash
before=$(snapshot)
"$MT" submit llama2 -N 2 --workspace "$WS" --dry-run --json -- steps=3 'x=$(id)' > plan.json || fail "dry run"
[ "$(snapshot)" = "$before" ] || fail "dry run wrote files"
python3 - <<'PY' || fail "dry-run JSON"
import json
d = json.load(open("plan.json"))
p = d["plan"]
assert d["submitted"] is False and len(p["hash"]) == 64, d
assert p["model"]["name"] == "llama2-70b" and p["nodes"] == 2
assert p["passthrough"] == ["steps=3", "x=$(id)"], p["passthrough"]
assert p["submit_argv"][1] == "run" and p["submit_argv"][2].endswith("/plan.json")
PY

# ---- an observed run -----------------------------------------------------------------------------
B=$(free_ports 12); EP=$B; PP=$((B + 2))   # one block, so the two ranges cannot overlap
"$MT" submit llama2-70b -N 2 --observe --exporter-port "$EP" --prometheus-ports "$PP-$((PP+9))" --scrape-interval 2 \
  --workspace "$WS" --yes --json -- steps=50 _env_SIM_STEP_SECONDS=0.5 > sub.json || fail "observed submit"
J=$(python3 -c 'import json; print(json.load(open("sub.json"))["job_id"])')
D=$(python3 -c 'import json; print(json.load(open("sub.json"))["job_dir"])')
L=$D.log
[ -L "$D/log" ] && [ -L "$D/artifact" ] && [ -f "$D/artifact/scenario.yaml" ] || fail "job dir layout"
for _ in $(seq 600); do grep -q "^=* JOB SUMMARY =*$" "$L" 2>/dev/null && break; sleep 0.2; done
grep -q "^  Status: .*SUCCESS (exit 0)" "$L" || fail "observed run did not succeed: $(tail -5 "$L")"
grep -q "^0: \[Prometheus\] Started on port $PP " "$L" || fail "no Prometheus port line"
grep -q "^0: \[Prometheus\] To view from your machine: ssh -J .* -L $PP:localhost:$PP " "$L" || fail "no SSH tunnel hint"
grep -q "^0: \[Prometheus\] Stopped" "$L" || fail "Prometheus not stopped"
[ -f "$D/prometheus/ray_prometheus.yml" ] && [ -d "$D/prometheus/wal" ] || fail "no TSDB in the job dir"
[ -s "$D/metrics_exporter/node001.log" ] || [ -f "$D/metrics_exporter/node001.log" ] || fail "no exporter log"
pgrep -f -- "$D" >/dev/null && fail "a process of the job outlived it: $(pgrep -af -- "$D")"
for _ in $(seq 50); do "$MT" status "$J" --workspace "$WS" --json | grep -q '"state":"RUNNING"' || break; sleep 0.2; done
"$MT" status "$J" --workspace "$WS" --json | grep -q '"state":"COMPLETED"' || fail "status of the finished job"
"$MT" jobs --workspace "$WS" --json | python3 -c 'import json,sys; j=[x for x in json.load(sys.stdin)["jobs"] if x["id"]==sys.argv[1]][0]; sys.exit(0 if j["status"]=="completed" and j["has_tsdb"] else str(j))' "$J" || fail "mt jobs"

# a fresh Prometheus on the finished job's TSDB answers for hw_* and tb_*
QP=$(free_ports 1)
echo "global: {scrape_interval: 999h}" > view.yml
prometheus --config.file=view.yml --storage.tsdb.path="$D/prometheus" --web.listen-address="127.0.0.1:$QP" \
  --storage.tsdb.retention.time=10y > view.log 2>&1 &
PIDS+=($!)
for _ in $(seq 150); do curl -sf "http://127.0.0.1:$QP/-/ready" >/dev/null && break; sleep 0.2; done
NOW=$(date +%s)
q() {  # q PROMQL -> the first sample's value; fails the test when Prometheus does not answer
  local body
  body=$(curl -sf "http://127.0.0.1:$QP/api/v1/query" --data-urlencode "query=$1" --data-urlencode "time=$NOW") || fail "query failed: $1 ($(tail -3 view.log))"
  python3 -c 'import json,sys; r=json.loads(sys.argv[1])["data"]["result"]; print(r[0]["value"][1] if r else 0)' "$body"
}
positive() { python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) > 0 else 1)' "$1"; }
positive "$(q 'count({__name__=~"hw_.+"})')" || fail "no hw_* series in the TSDB"
observers() {  # what the job said about its exporters and Prometheus, for a failure message
  grep -E "\[(Exporter|Prometheus)\]" "$L" | tail -n 8
  for f in "$D"/metrics_exporter/*.log; do echo "-- $f"; tail -n 5 "$f"; done
}
# Over a range, not at NOW: task 1 ends (and stops its exporter) a moment before task 0's
# Prometheus does, so the last scrape of node002 fails and Prometheus writes staleness markers
# for all its series; an instant query after the job then rightly finds none of them.
positive "$(q 'count(max_over_time(hw_gpu_power_watts{host="node002"}[10m]))')" || fail "no hw_gpu_power_watts for node002 (exporter ports $EP-$((EP+1))): $(observers)"
last=$(q 'max(max_over_time(tb_step[10m]))')
python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) >= 10 else 1)' "$last" || fail "tb_step not in the TSDB (got $last)"
kill "${PIDS[-1]}"; unset 'PIDS[-1]'

# ---- cancel a local job ------------------------------------------------------------------------
"$MT" submit llama2-70b --workspace "$WS" --yes --json -- steps=100000 _env_SIM_STEP_SECONDS=0.2 > sub2.json || fail "submit 2"
J2=$(python3 -c 'import json; print(json.load(open("sub2.json"))["job_id"])')
L2=$(python3 -c 'import json; print(json.load(open("sub2.json"))["log"])')
for _ in $(seq 100); do grep -q "completed step: 2," "$L2" && break; sleep 0.2; done
"$MT" status "$J2" --workspace "$WS" | grep -q RUNNING || fail "status of a running local job"
"$MT" cancel "$J2" --workspace "$WS" || fail "cancel"
for _ in $(seq 100); do grep -q "^=* JOB SUMMARY =*$" "$L2" && break; sleep 0.2; done
grep -q "^  Status: .*FAILED (exit 143).*CANCELLED (scancel / SIGTERM)" "$L2" || fail "no CANCELLED summary"
grep -q "^0: NODE_EXIT host=node001 exit=143" "$L2" || fail "no NODE_EXIT"
for _ in $(seq 50); do "$MT" status "$J2" --workspace "$WS" --json | grep -q '"state":"RUNNING"' || break; sleep 0.2; done
"$MT" status "$J2" --workspace "$WS" --json | grep -q '"state":"CANCELLED"' || fail "status after cancel"
"$MT" triage "$J2" --workspace "$WS" --json | python3 -c 'import json,sys; c=json.load(sys.stdin)["class"]; sys.exit(0 if c=="cancelled" else c)' || fail "triage of the cancelled job"
echo PASS
