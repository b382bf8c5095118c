#!/usr/bin/env bash
# configs/systemd/mt-exporter.service must pass `systemd-analyze verify` (with the
# binary path pointed at the built mt-exporter). Skipped (77) where systemd's tools are
# not installed.
EXPORTER=$1
UNIT=$2
source "$(dirname "$0")/lib.sh"
command -v systemd-analyze >/dev/null || { echo "systemd-analyze not installed: skipped"; exit 77; }
sed "s#/usr/local/bin/mt-exporter#$EXPORTER#" "$UNIT" > "$WORK/mt-exporter.service"
out=$(systemd-analyze verify --man=no "$WORK/mt-exporter.service" 2>&1) || fail "systemd-analyze: $out"
[ -z "$out" ] || fail "systemd-analyze remarks: $out"
grep -q '^ExecStart=.*--listen \${MT_EXPORTER_LISTEN}' "$UNIT" || fail "unit does not pass --listen"
echo "systemd unit: ok"
