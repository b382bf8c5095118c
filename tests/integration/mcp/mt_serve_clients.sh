#!/usr/bin/env bash
# Real clients and the bad-input suite against `mt serve` itself (the product server), on a
# scratch workspace holding one fixture job, with bearer-token authentication configured.
#   mt_serve_clients.sh MT_BIN NODE_DIR FIXTURE_LOG
set -euo pipefail
mt=$1 node_dir=$2 fixture=$3
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/ws"
cp "$fixture" "$work/ws/4242-JAX-llama2-70b-steps_30.log"
secret=bad-input-test-secret
sha=$(printf %s "$secret" | sha256sum | cut -d' ' -f1)
cat >"$work/mt.yaml" <<YAML
workspace: $work/ws
tokens:
  - name: ci-bot
    sha256: $sha
    role: ci
YAML
echo "== real clients: mt serve (stdio + HTTP), list_jobs"
bash "$here/real_clients.sh" "$node_dir" list_jobs '{}' 4242 - -- "$mt" serve --workspace "$work/ws"
echo "== bad input: mt serve with bearer tokens"
bash "$here/bad_input.sh" list_jobs --token "$secret" --config "$work/mt.yaml" -- "$mt" serve
