#!/usr/bin/env bash
# Runs bad_input.py against a freshly started server (HTTP and stdio), stopping it by PID.
#   bad_input.sh TOOL [--token SECRET --config FILE] [--other-token SECRET2]
#                [--task-tool NAME] -- SERVER_CMD...
# SERVER_CMD gets `--http 127.0.0.1:0` (mt serve) or `--listen 127.0.0.1:0` (fixture
# server) for HTTP and `--stdio` for the stdio half. --other-token (a second principal) and
# --task-tool (a tool that runs as a task) enable the task ownership and flood cases.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tool=$1; shift
token=() config=() extra=()
while [ "$1" != "--" ]; do
  case $1 in
    --token) token=(--token "$2"); shift 2 ;;
    --config) config=(--config "$2"); shift 2 ;;
    --other-token|--task-tool) extra+=("$1" "$2"); shift 2 ;;
    *) echo "bad_input.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
shift
server=("$@")
ulimit -n 4096 2>/dev/null || true   # the suite opens 1,000 connections at once
work=$(mktemp -d)
source "$here/../../lib/server.sh"
cleanup() { stop_server; rm -rf "$work"; }
trap cleanup EXIT
flag=--http
[[ "${server[0]}" == *conformance* ]] && flag=--listen
: >"$work/server.log"   # exists before start_server polls it (its sed runs under set -e)
start_server "$work/server.log" "${server[@]}" "${config[@]}" $flag 127.0.0.1:0
port=$SERVER_PORT
python3 "$here/bad_input.py" --url "http://127.0.0.1:$port/mcp" --tool "$tool" "${token[@]}" "${extra[@]}" \
  --stdio "${server[*]} ${config[*]} --stdio"
kill -0 "$SERVER_PID" || { echo "the server died"; exit 1; }
