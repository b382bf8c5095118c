#!/usr/bin/env bash
# Runs the official MCP conformance suite (tests/node, pinned) for one frozen requirement
# set against a freshly started mt-conformance-server, then stops the server by PID.
#   run_conformance.sh SERVER_BIN REVISION NODE_DIR LOG_DIR
set -euo pipefail
server=$1 rev=$2 node_dir=$3 log_dir=$4
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

"$server" --listen 127.0.0.1:0 2>"$work/server.log" &
pid=$!
port=
for _ in $(seq 400); do
  port=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\)/mcp.*|\1|p' "$work/server.log")
  [ -n "$port" ] && break
  sleep 0.05
done
[ -n "$port" ] || { echo "server did not start:"; cat "$work/server.log"; exit 1; }

args=(server --url "http://127.0.0.1:$port/mcp" --requirements "$rev" -o "$work/results")
baseline="$here/expected-failures-$rev.yml"
[ -f "$baseline" ] && args+=(--expected-failures "$baseline")
log="$log_dir/conformance-$rev.log"
set +e
# node_modules/.bin first: the suite needs its own Node 22 (the `node` npm package).
PATH="$node_dir/node_modules/.bin:$PATH" conformance "${args[@]}" >"$log" 2>&1
rc=$?
set -e
grep -E '^(✓|✗|~) |^Total:|Baseline check|Not scored|^  (✓|✗) ' "$log" || true
if [ $rc != 0 ]; then
  echo "--- failing checks:"
  for f in "$work"/results/*/checks.json; do
    PATH="$node_dir/node_modules/.bin:$PATH" node -e '
      const c = require(process.argv[1]);
      for (const x of c) if (x.status === "FAILURE") console.log(process.argv[1].split("/").slice(-2)[0], x.id, "-", x.errorMessage || x.description);
    ' "$f"
  done
  echo "--- server log (tail):"; tail -n 20 "$work/server.log"
fi
exit $rc
