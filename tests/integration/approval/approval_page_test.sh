#!/usr/bin/env bash
# Integration test: the /approvals page of `mt serve --http`, end to end in headless
# Chromium, plus the attacks on it with curl. A plan is requested by an agent over stdio (a
# second server sharing the approvals store), then:
#   - without a session the page lists nothing; an agent token cannot log in or decide;
#   - a logged-in approver's POST with a wrong CSRF token or a changed plan hash is refused;
#   - Chromium logs in with the approver token, presses Approve, and the page shows the
#     plan submitted with its job id; the (local backend) job then completes;
# agents over HTTP (SDK clients with an agent token): with the shipped default (URL mode) a
# client that answers forms is never asked and nothing runs, a URL-capable client is sent to
# this page and its own "accept" approves nothing, and the job runs once a human approves on
# the page; and every refusal is in the audit log.
# Usage: approval_page_test.sh MT NODE_DIR
set -uo pipefail
MT=${1:?mt}; NODE_DIR=${2:?tests/node}
NODE22=$NODE_DIR/node_modules/.bin/node
command -v chromium >/dev/null || { echo "SKIP: chromium not installed"; exit 77; }
[ -x "$NODE22" ] || { echo "SKIP: tests/node has no node 22 (npm ci in tests/node)"; exit 77; }
T=$(mktemp -d /tmp/mt-approval-page.XXXXXX)
SERVER_PID=
cleanup() { local rc=$?; [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
            [ $rc = 0 ] && rm -rf "$T" || echo "kept $T"; exit $rc; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; [ -f "$T/server.log" ] && tail -20 "$T/server.log" >&2; exit 1; }
cd "$T"
WS=$T/ws; mkdir -p "$WS"
ALICE=alice-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n'); BOT=bot-$RANDOM$RANDOM
sha() { printf %s "$1" | sha256sum | cut -d' ' -f1; }
cat > mt.yaml <<YAML
workspace: $WS
tokens:
  - {name: alice, sha256: $(sha "$ALICE"), role: approver}
  - {name: bot, sha256: $(sha "$BOT"), role: agent}
approvals:
  stdio_role: agent
  url_wait_seconds: 3
YAML
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$MT" serve --http 127.0.0.1:$PORT --config mt.yaml 2>server.log &
SERVER_PID=$!
BASE=http://127.0.0.1:$PORT
for _ in $(seq 100); do curl -s -o /dev/null "$BASE/approvals" && break; sleep 0.1; done
field() { python3 -c 'import json,sys; d=json.loads(sys.stdin.readline()); v=d.get(sys.argv[1]); print("" if v is None else v)' "$1"; }

# An agent's request, made over stdio by another server process sharing the store.
R=$(node "$NODE_DIR/approval_clients.mjs" --stdio "$MT serve --config $T/mt.yaml" --mode no-elicit \
    --args '{"model":"llama2-70b","backend":"local","passthrough":["steps=3","_env_SIM_STEP_SECONDS=0.1","_env_SIM_STARTUP_SECONDS=0.2"]}') || fail "request: $R"
[ "$(echo "$R" | field status)" = pending_approval ] || fail "not pending: $R"
P=$(echo "$R" | field plan_id); H=$(echo "$R" | field plan_hash)

flip() { local s=$1; [ "${s: -1}" = 0 ] && echo "${s%?}1" || echo "${s%?}0"; }   # changes the last hex digit
code() { curl -s -o body.html -w '%{http_code}' "$@"; }
# No session: the login form, no plans.
[ "$(code "$BASE/approvals")" = 200 ] && grep -q 'id=token' body.html && ! grep -q "$P" body.html || fail "page without a session shows plans"
# An agent token: cannot log in, cannot decide (bearer or not).
[ "$(code -d "token=$BOT" "$BASE/approvals/login")" = 403 ] || fail "agent token logged in"
[ "$(code -H "Authorization: Bearer $BOT" -d "id=$P&hash=$H&decision=approve&csrf=x" "$BASE/approvals/decide")" = 401 ] || fail "agent bearer decided"
[ "$(code -d "id=$P&hash=$H&decision=approve" "$BASE/approvals/decide")" = 401 ] || fail "decide without a session"
[ "$(code -d "token=wrong" "$BASE/approvals/login")" = 403 ] || fail "bad token logged in"
# A real approver session, but a forged request: wrong CSRF token, then a changed hash.
[ "$(code -c jar -d "token=$ALICE" "$BASE/approvals/login")" = 303 ] || fail "approver login"
grep -q "HttpOnly" jar && grep -q "mt_approvals" jar || fail "session cookie: $(cat jar)"
[ "$(code -b jar "$BASE/approvals")" = 200 ] && grep -q "plan-$P" body.html || fail "approver does not see the plan"
CSRF=$(grep -o 'name=csrf value="[0-9a-f]*"' body.html | head -1 | sed 's/.*value="\(.*\)"/\1/')
[ ${#CSRF} = 64 ] || fail "no CSRF token in the page"
[ "$(code -b jar -d "id=$P&hash=$H&decision=approve&csrf=$(flip "$CSRF")" "$BASE/approvals/decide")" = 403 ] || fail "wrong CSRF accepted"
[ "$(code -b jar -d "id=$P&hash=$H&decision=approve" "$BASE/approvals/decide")" = 403 ] || fail "missing CSRF accepted"
[ "$(code -b jar -d "id=$P&hash=$(flip "$H")&decision=approve&csrf=$CSRF" "$BASE/approvals/decide")" = 303 ] || fail "changed hash"
PENDING=$("$MT" approvals --workspace "$WS" --json); grep -q "\"plan_id\":\"$P\"" <<<"$PENDING" || fail "plan no longer pending after the attacks"

# Over HTTP with the agent's token (the shipped default, URL mode). Clients that answer forms
# with "approve" (legacy SSE elicitation, 2026-07-28 input_required) are never asked.
hargs() { echo "{\"model\":\"llama2-70b\",\"backend\":\"local\",\"passthrough\":[\"steps=2\",\"_env_SIM_STEP_SECONDS=0.1\",\"tag=$1\"]}"; }
for mode in v1-accept modern-accept; do
  H1=$(node "$NODE_DIR/approval_clients.mjs" --http "$BASE/mcp" --token "$BOT" --mode $mode --args "$(hargs $mode)") || fail "http $mode: $H1"
  [ "$(echo "$H1" | field status)" = pending_approval ] && [ "$(echo "$H1" | field asked)" = 0 ] && [ "$(echo "$H1" | field requester)" = bot ] || fail "http $mode: $H1"
  echo "http $mode (form answers): pending_approval, not asked"
done
# A URL-capable client is sent to this server's page; accepting approves nothing.
H2=$(node "$NODE_DIR/approval_clients.mjs" --http "$BASE/mcp" --token "$BOT" --mode v1-url --args "$(hargs url-only)") || fail "http url: $H2"
[ "$(echo "$H2" | field status)" = pending_approval ] && [ "$(echo "$H2" | field asked)" = 1 ] || fail "http url: $H2"
echo "$H2" | grep -q "\"$BASE/approvals?plan=$(echo "$H2" | field plan_id)\"" || fail "url mode did not send this page: $H2"
# ...and when the human approves there (logged in with the approver token), the call answers submitted.
H3=$(node "$NODE_DIR/approval_clients.mjs" --http "$BASE/mcp" --token "$BOT" --mode v1-url-human \
     --human "bash $(dirname "$0")/approve_on_page.sh $BASE $ALICE" --args "$(hargs url-human)") || fail "http url-human: $H3"
[ "$(echo "$H3" | field status)" = submitted ] && [ "$(echo "$H3" | field approver)" = alice ] && [ "$(echo "$H3" | field via)" = web ] || fail "http url-human: $H3"
echo "http url mode: the human approved on the page; submitted $(echo "$H3" | field job_id) by alice via web"

# The human, in a real browser.
OUT=$("$NODE22" "$NODE_DIR/approval_page_chromium.mjs" --base "$BASE" --token "$ALICE" --plan "$P") || fail "chromium exited $?: $OUT"
echo "chromium: $OUT"
[ "$(echo "$OUT" | field state)" = submitted ] && [ "$(echo "$OUT" | field who)" = alice ] || fail "chromium saw: $OUT"
[ "$(echo "$OUT" | field listed_before_login)" = False ] || fail "plan visible before login: $OUT"
JOB=$(echo "$OUT" | field job)
[[ "$JOB" == local_* ]] || fail "no job id on the page: $OUT"
for _ in $(seq 200); do
  s=$("$MT" status "$JOB" --workspace "$WS" --json | field state); [ "$s" = COMPLETED ] && break; sleep 0.25
done
[ "$s" = COMPLETED ] || fail "job $JOB is $s"

python3 - "$WS/.mt/audit.jsonl" "$P" <<'PY' || fail "audit log"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
refused = [l for l in lines if l["event"] == "refused"]
def has(action, actor, why):
    return any(l.get("action") == action and l["actor"].startswith(actor) and why in l["reason"] for l in refused)
assert has("web-login", "bot", "role agent may not approve"), refused
assert has("web-login", "unknown token", "invalid token"), refused
assert has("web-approve", "bot", "no approver session"), refused
assert has("web-approve", "anonymous", "no approver session"), refused
assert sum(1 for l in refused if l["actor"] == "alice" and "CSRF" in l["reason"]) == 2, refused
assert has("approve", "alice", "that was shown for approval"), refused
ok = [l for l in lines if l["event"] == "approved" and l["plan_id"] == sys.argv[2]]
assert len(ok) == 1 and ok[0]["actor"] == "alice" and ok[0]["via"] == "web", ok
assert [l["event"] for l in lines if l["plan_id"] == sys.argv[2]][-1] == "submitted"
PY
echo "ok: /approvals refused agent tokens, missing sessions, bad CSRF and changed hashes; Chromium approved and the job ran"
