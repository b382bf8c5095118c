#!/usr/bin/env bash
# Runs bad_input.py against a freshly started server (HTTP and stdio), stopping it by PID.
#   bad_input.sh TOOL [--token SECRET --config FILE] -- SERVER_CMD...
# SERVER_CMD gets `--http 127.0.0.1:0` (mt serve) or `--listen 127.0.0.1:0` (fixture
# server) for HTTP and `--stdio` for the stdio half.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tool=$1; shift
token=() config=()
while [ "$1" != "--" ]; do
  case $1 in
    --token) token=(--token "$2"); shift 2 ;;
    --config) config=(--config "$2"); shift 2 ;;
    *) echo "bad_input.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
shift
server=("$@")
ulimit -n 4096 2>/dev/null || true   # the suite opens 1,000 connections at once
work=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
flag=--http
[[ "${server[0]}" == *conformance* ]] && flag=--listen
"${server[@]}" "${config[@]}" $flag 127.0.0.1:0 2>"$work/server.log" &
pid=$!
port=
for _ in $(seq 400); do
  port=$(sed -n 's|.*listening on http://[^:]*:\([0-9]*\)/mcp.*|\1|p' "$work/server.log")
  [ -n "$port" ] && break
  sleep 0.05
done
[ -n "$port" ] || { echo "server did not start:"; cat "$work/server.log"; exit 1; }
python3 "$here/bad_input.py" --url "http://127.0.0.1:$port/mcp" --tool "$tool" "${token[@]}" \
  --stdio "${server[*]} ${config[*]} --stdio"
kill -0 "$pid" || { echo "the server died"; exit 1; }
