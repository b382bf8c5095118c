# Shared by the test scripts: start a server that prints "listening on http://HOST:PORT/mcp"
# on stderr, and wait for it.
#   start_server LOG CMD...   → sets SERVER_PID and SERVER_PORT; returns 1 if it never listens
start_server() {
  local log=$1
  shift
  : > "$log"   # exists before the first sed below, whatever the shell does first
  "$@" 2>"$log" &
  SERVER_PID=$!
  SERVER_PORT=
  for _ in $(seq 400); do
    SERVER_PORT=$(sed -n 's|.*listening on http://[^:]*:\([0-9]*\)/mcp.*|\1|p' "$log" 2>/dev/null || true)
    [ -n "$SERVER_PORT" ] && return 0
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.05
  done
  echo "server did not start: $*" >&2
  cat "$log" >&2
  return 1
}

# stop_server: SIGTERM the server started above and reap it.
stop_server() {
  [ -n "${SERVER_PID:-}" ] || return 0
  kill "$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=
}
