#!/usr/bin/env bash
# The checked-in tool reference must be exactly what `mt reference` generates from the
# schemas mt serve publishes; otherwise it says how to regenerate it.
# Usage: reference_fresh.sh MT DOC
set -uo pipefail
MT=${1:?mt}; DOC=${2:?docs/tool-reference.md}
out=$(mktemp); trap 'rm -f "$out"' EXIT
"$MT" reference > "$out" || { echo "FAIL: mt reference exited $?"; exit 1; }
grep -q '^### triage_log$' "$out" || { echo "FAIL: the generated reference lacks triage_log"; exit 1; }
if ! diff -u "$DOC" "$out"; then
  echo "FAIL: $DOC is stale; regenerate it with: build/tools/mt reference > docs/tool-reference.md"
  exit 1
fi
echo "ok: $DOC matches the schemas ($(grep -c '^### ' "$out") tools)"
