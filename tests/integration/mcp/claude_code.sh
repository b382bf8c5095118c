#!/usr/bin/env bash
# Claude Code itself as a real client (npm @anthropic-ai/claude-code, offline): `claude mcp
# add` for mt serve over stdio and over HTTP with a bearer token, then `claude mcp list`,
# whose health check connects to each server. A wrong token must show as not connected.
#   claude_code.sh MT_BIN NODE_DIR FIXTURE_LOG
set -euo pipefail
mt=$(realpath "$1") node_dir=$(realpath "$2") fixture=$(realpath "$3")
claude=$node_dir/node_modules/.bin/claude
work=$(mktemp -d)
source "$(dirname "$0")/../../lib/server.sh"
cleanup() { stop_server; rm -rf "$work"; }
trap cleanup EXIT
export HOME=$work/home PATH="$node_dir/node_modules/.bin:$PATH"
mkdir -p "$HOME" "$work/ws" "$work/project"
cp "$fixture" "$work/ws/4242-JAX-llama2-70b-steps_30.log"
secret=claude-code-test-secret
cat >"$work/mt.yaml" <<YAML
workspace: $work/ws
tokens:
  - name: claude
    sha256: $(printf %s "$secret" | sha256sum | cut -d' ' -f1)
    role: agent
YAML
: >"$work/server.log"   # exists before start_server polls it (its sed runs under set -e)
start_server "$work/server.log" "$mt" serve --config "$work/mt.yaml" --http 127.0.0.1:0
port=$SERVER_PORT
cd "$work/project"
timeout 60 "$claude" mcp add mt-stdio -- "$mt" serve --workspace "$work/ws" >/dev/null
timeout 60 "$claude" mcp add --transport http mt-http "http://127.0.0.1:$port/mcp" --header "Authorization: Bearer $secret" >/dev/null
timeout 60 "$claude" mcp add --transport http mt-badtoken "http://127.0.0.1:$port/mcp" --header "Authorization: Bearer wrong" >/dev/null
out=$(timeout 120 "$claude" mcp list 2>&1)
echo "$out" | grep -E '^mt-'
fail=0
for s in mt-stdio mt-http; do
  echo "$out" | grep -E "^$s: .*Connected" | grep -vq "Failed" || { echo "FAIL: $s is not connected"; fail=1; }
done
if echo "$out" | grep -E "^mt-badtoken: " | grep -q "✔ Connected"; then echo "FAIL: a wrong token connected"; fail=1; fi
[ $fail = 0 ] && echo "claude code: 3 passed, 0 failed"
exit $fail
