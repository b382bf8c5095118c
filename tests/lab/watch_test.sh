#!/usr/bin/env bash
# ctest mt-watch: `mt watch` on real PyTorch jobs (tests/lab/train.py: DDP over gloo, 2 ranks
# started by local_launch.sh, Debian's torch), with a real HTTP receiver as the webhook
# (mt.yaml notifications.webhooks, its URL from an environment variable):
#   1. rank 1 hangs before step 6's all-reduce: the watch reports the hang within 2x its
#      --hang-seconds and decides restart (audited once);
#   2. the watch is stopped and started again: it repeats no finding and follows the job to its
#      end (rank 0 gives up at gloo's timeout: failed, nccl_error); the receiver got every notice
#      exactly once;
#   3. rank 1 exhausts its memory (host OOM): the watch decides stop.
#   watch_test.sh MT
set -uo pipefail
MT=${1:?mt}
HERE=$(cd "$(dirname "$0")" && pwd)
LIB=$(cd "$HERE/../lib" && pwd)
PY=/usr/bin/python3
T=$(mktemp -d /tmp/mt-watch-test.XXXXXX)
PIDS=() LAB_GROUPS=()
cleanup() {
  local rc=$?
  for g in "${LAB_GROUPS[@]}"; do kill -KILL -- "-$g" 2>/dev/null; done
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
  [ $rc = 0 ] && rm -rf "$T" || echo "kept $T"
  exit $rc
}
trap cleanup EXIT
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }
"$PY" -c 'import torch.distributed' 2>/dev/null || { echo "FAIL: $PY cannot import torch.distributed (python3-torch)"; exit 1; }

WS=$T/ws; mkdir -p "$WS"
read -r HOOK_PORT LAB_PORT LAB_PORT2 < <("$PY" "$LIB/free_ports.py" 3)
# The webhook receiver: every POST as one JSON line (its Idempotency-Key and body), 200.
cat > "$T/receiver.py" <<'RECEIVER'
import http.server, json, sys
port, out = int(sys.argv[1]), sys.argv[2]
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with open(out, "a") as f:
            f.write(json.dumps({"key": self.headers.get("Idempotency-Key"), "body": json.loads(body)}) + "\n")
        self.send_response(200); self.send_header("Content-Length", "0"); self.end_headers()
    def log_message(self, *a): pass
http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()
RECEIVER
"$PY" "$T/receiver.py" "$HOOK_PORT" "$T/received.jsonl" > "$T/receiver.log" 2>&1 &
PIDS+=($!)
cat > "$T/mt.yaml" <<YAML
workspace: ws
notifications:
  webhooks:
    - name: ops
      url: {env: MT_TEST_WEBHOOK}
      timeout_seconds: 5
YAML
export MT_TEST_WEBHOOK="http://127.0.0.1:$HOOK_PORT/hook"

start_lab() {  # start_lab NAME PORT train.py-args...  (in its own process group)
  local name=$1 port=$2; shift 2
  MASTER_PORT=$port LAB_PYTHON=$PY LAB_TRAIN=$HERE/train.py setsid bash "$HERE/local_launch.sh" 2 "$@" > "$WS/$name.log" 2>&1 &
  LAB_GROUPS+=($!)
}

# ---- 1. a hang, seen by a first watch -----------------------------------------------------------
# gloo's timeout (90 s) outlasts the first watch (45 s: room for torch to start on a loaded
# machine), so the end falls to the second.
start_lab lab-hang "$LAB_PORT" --steps 40 --fault hang --fault-rank 1 --fault-step 6 --timeout 90
timeout 70 "$MT" watch "$WS/lab-hang.log" --config "$T/mt.yaml" --interval 1 --hang-seconds 6 --timeout 45 --json > "$T/watch1.jsonl" 2> "$T/watch1.err"
check "first watch ran" '[ -s "$T/watch1.jsonl" ]'
"$PY" - "$T/watch1.jsonl" <<'CHECK1' || fail=1
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
hang = [e for e in ev if e["kind"] == "hang"]
dec = [e for e in ev if e["kind"] == "decision"]
ok = len(hang) == 1 and hang[0]["detail"]["silent_seconds"] <= 12
print(("ok   " if ok else "FAIL ") + "hang reported once, within 2 x 6 s of the last step (%s)" % [h["detail"] for h in hang])
ok2 = len(dec) == 1 and dec[0]["detail"]["action"] == "restart"
print(("ok   " if ok2 else "FAIL ") + "decision: restart (%s)" % [d["text"] for d in dec])
sys.exit(0 if ok and ok2 else 1)
CHECK1

# ---- 2. the watch restarted: nothing repeated, followed to the end ------------------------------
timeout 170 "$MT" watch "$WS/lab-hang.log" --config "$T/mt.yaml" --interval 1 --hang-seconds 6 --timeout 150 --json > "$T/watch2.jsonl" 2> "$T/watch2.err"
check "second watch: no finding repeated" '! grep -q "\"kind\":\"hang\"" "$T/watch2.jsonl" && ! grep -q "\"kind\":\"decision\"" "$T/watch2.jsonl"'
check "second watch: the end (failed, nccl_error) reported" 'grep -q "\"kind\":\"ended\"" "$T/watch2.jsonl" && grep -q "nccl_error" "$T/watch2.jsonl"'
check "the decision audited once" '[ "$(grep -c "\"event\":\"watch_decision\"" "$WS/.mt/audit.jsonl")" = 1 ]'
"$PY" - "$T/received.jsonl" "$WS"/.mt/watch/lab-hang*/outbox.jsonl <<'CHECK2' || fail=1
import json, sys
got = [json.loads(l) for l in open(sys.argv[1])]
box = [json.loads(l) for l in open(sys.argv[2])]
ids = [g["body"]["id"] for g in got]
ok = sorted(ids) == sorted(n["id"] for n in box) and len(set(ids)) == len(ids) and all(g["key"] == g["body"]["id"] for g in got)
kinds = [g["body"]["kind"] for g in got]
print(("ok   " if ok else "FAIL ") + "the webhook got every notice exactly once across the restart (%d notices: %s)" % (len(got), kinds))
ok2 = all(k in kinds for k in ("hang", "decision", "ended"))
print(("ok   " if ok2 else "FAIL ") + "hang, decision and end all notified")
sys.exit(0 if ok and ok2 else 1)
CHECK2

# ---- 3. a host OOM stops -------------------------------------------------------------------------
start_lab lab-oom "$LAB_PORT2" --steps 40 --fault host_oom --fault-rank 1 --fault-step 6 --oom-cap-mb 1024 --timeout 60
timeout 150 "$MT" watch "$WS/lab-oom.log" --config "$T/mt.yaml" --interval 1 --hang-seconds 30 --timeout 120 --json > "$T/watch3.jsonl" 2> "$T/watch3.err"
check "host OOM: ended, decision stop" 'grep -q "\"kind\":\"ended\"" "$T/watch3.jsonl" && grep -q "\"action\":\"stop\"" "$T/watch3.jsonl" && grep -q host_oom "$T/watch3.jsonl"'
[ $fail = 0 ] || { for f in "$T"/watch*.jsonl "$T"/watch*.err; do echo "== $f"; cat "$f"; done; }
exit $fail
