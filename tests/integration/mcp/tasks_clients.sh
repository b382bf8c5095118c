#!/usr/bin/env bash
# The Tasks extension from the official TypeScript requester (@modelcontextprotocol/client v2
# + @modelcontextprotocol/ext-tasks) over Streamable HTTP against a fresh
# mt-conformance-server with a bearer token: a task to completion, a cancelled one, and a
# question answered inside a task (tests/node/tasks_client.mjs). Stops the server by PID.
#   tasks_clients.sh NODE_DIR SERVER_BIN
set -euo pipefail
node_dir=$1 server=$2
here=$(cd "$(dirname "$0")" && pwd)
export PATH="$node_dir/node_modules/.bin:$PATH"
work=$(mktemp -d)
source "$here/../../lib/server.sh"
cleanup() { stop_server; rm -rf "$work"; }
trap cleanup EXIT
: >"$work/server.log"   # exists before start_server polls it (its sed runs under set -e)
start_server "$work/server.log" "$server" --token sdk=sdk-secret --listen 127.0.0.1:0
node "$node_dir/tasks_client.mjs" --http "http://127.0.0.1:$SERVER_PORT/mcp" --token sdk-secret
