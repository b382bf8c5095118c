#!/usr/bin/env bash
# Real MCP clients against a real server binary, over stdio and Streamable HTTP:
# the TypeScript SDK v1 client (legacy era), the v2 client pinned to the legacy era and to
# 2026-07-28, and the MCP Inspector CLI in both eras.
#   real_clients.sh NODE_DIR TOOL ARGS_JSON EXPECT ELICIT_TOOL -- SERVER_CMD...
# SERVER_CMD is run with `--stdio` for stdio and `--http 127.0.0.1:PORT` (mt serve) or
# `--listen 127.0.0.1:PORT` (mt-conformance-server) for HTTP; ELICIT_TOOL ("-" for none)
# is a tool that asks the user, to check server→client requests and input_required.
set -euo pipefail
node_dir=$1 tool=$2 args=$3 expect=$4 elicit_tool=$5
shift 5
[ "$1" = "--" ] && shift
server=("$@")
export PATH="$node_dir/node_modules/.bin:$PATH"
work=$(mktemp -d)
source "$(dirname "$0")/../../lib/server.sh"
cleanup() { stop_server; rm -rf "$work"; }
trap cleanup EXIT
fail=0
check() {   # name, command…
  local name=$1; shift
  if out=$("$@" 2>&1); then echo "$out"; else echo "$out"; echo "FAIL $name"; fail=1; fi
}

# stdio
stdio_cmd="${server[*]} --stdio"
check "sdk stdio" node "$node_dir/sdk_clients.mjs" --stdio "$stdio_cmd" --tool "$tool" --args "$args" --expect "$expect"
if [ "$elicit_tool" != - ]; then
  check "sdk stdio elicit" node "$node_dir/sdk_clients.mjs" --stdio "$stdio_cmd" --tool "$elicit_tool" --args '{"message":"confirm"}' --elicit
fi
for era in legacy modern; do
  out=$(timeout 60 inspector --cli "${server[@]}" -- --stdio --protocol-era $era --method tools/call --tool-name "$tool" \
        --tool-args-json "$args" --format json 2>&1) && rc=0 || rc=$?
  if [ $rc = 0 ] && [[ "$out" == *"$expect"* ]]; then echo "ok   inspector stdio $era"; else echo "FAIL inspector stdio $era (rc=$rc): ${out:0:300}"; fail=1; fi
done

# Streamable HTTP on a free loopback port
flag=--http
[[ "${server[0]}" == *conformance* ]] && flag=--listen
: >"$work/server.log"   # exists before start_server polls it (its sed runs under set -e)
start_server "$work/server.log" "${server[@]}" $flag 127.0.0.1:0
port=$SERVER_PORT
url="http://127.0.0.1:$port/mcp"
check "sdk http" node "$node_dir/sdk_clients.mjs" --http "$url" --tool "$tool" --args "$args" --expect "$expect"
if [ "$elicit_tool" != - ]; then
  check "sdk http elicit" node "$node_dir/sdk_clients.mjs" --http "$url" --tool "$elicit_tool" --args '{"message":"confirm"}' --elicit
fi
for era in legacy modern; do
  out=$(timeout 60 inspector --cli "$url" --transport http --protocol-era $era --method tools/call --tool-name "$tool" \
        --tool-args-json "$args" --format json 2>&1) && rc=0 || rc=$?
  if [ $rc = 0 ] && [[ "$out" == *"$expect"* ]]; then echo "ok   inspector http $era"; else echo "FAIL inspector http $era (rc=$rc): ${out:0:300}"; fail=1; fi
done
exit $fail
