#!/usr/bin/env bash
# Finding 9, second half (issue #14): with no --listen, mt-exporter served on every
# interface (0.0.0.0:9400). Its default is now loopback (127.0.0.1:9400); --help,
# docs/exporter.md and the systemd unit say the same, and the unit is the one place that
# opts in to every interface (a node service is scraped from the Prometheus host).
EXPORTER=$1
DOC=$2
UNIT=$3
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/../../integration/exporter/lib.sh"

help=$("$EXPORTER" --help)
grep -q -- '--listen ADDR .*(default 127.0.0.1:9400' <<<"$help" || fail "--help does not give 127.0.0.1:9400 as the default"
grep -q '^| `--listen ADDR` | `127.0.0.1:9400` |' "$DOC" || fail "docs/exporter.md flag table does not give 127.0.0.1:9400"
! grep -q '^mt-exporter  .*# 0.0.0.0:9400' "$DOC" || fail "docs/exporter.md still says the default is 0.0.0.0:9400"
unit_listen=$(sed -n 's/^Environment=MT_EXPORTER_LISTEN=//p' "$UNIT")
[ -n "$unit_listen" ] || fail "unit sets no MT_EXPORTER_LISTEN"
grep -q "^MT_EXPORTER_LISTEN=$unit_listen\$" "$DOC" || fail "docs do not show the unit's listen address $unit_listen"
grep -q '^ExecStart=.*--listen \${MT_EXPORTER_LISTEN}' "$UNIT" || fail "unit does not pass --listen"

# Invalid addresses are usage errors (exit 2), not a silent bind somewhere else.
for bad in 9400 ':9400' '::1:9400' '127.0.0.1:99999' '127.0.0.1:'; do
  rc=0
  "$EXPORTER" --listen "$bad" --root / >/dev/null 2>"$WORK/err" || rc=$?
  [ $rc = 2 ] || fail "--listen $bad: exit $rc, expected 2"
  grep -q -- '--listen' "$WORK/err" || fail "--listen $bad: no specific message"
done

# Live, when 9400 is free here: without --listen it binds 127.0.0.1:9400 only.
if python3 -c 'import socket; s = socket.socket(); s.bind(("0.0.0.0", 9400))' 2>/dev/null; then
  "$EXPORTER" --root / --no-collector kmsg --log "$WORK/default.log" &
  PIDS+=($!)
  for i in $(seq 100); do grep -q 'listening on' "$WORK/default.log" 2>/dev/null && break; sleep 0.05; done
  grep -q 'listening on 127.0.0.1:9400 ' "$WORK/default.log" || fail "default listen: $(cat "$WORK/default.log")"
  # /proc/net/tcp: local address 0100007F:24B8 (127.0.0.1:9400) in state 0A (LISTEN), and
  # no 00000000:24B8 listener from this process.
  grep -q ' 0100007F:24B8 00000000:0000 0A ' /proc/net/tcp || fail "no loopback listener on 9400"
  ! grep -q ' 00000000:24B8 00000000:0000 0A ' /proc/net/tcp || fail "listening on every interface"
  curl -sf --max-time 5 http://127.0.0.1:9400/metrics | grep -q '^mt_exporter_build_info{' || fail "default listener does not serve"
else
  echo "port 9400 is in use here: live part skipped"
fi
echo "listen_default: ok"
