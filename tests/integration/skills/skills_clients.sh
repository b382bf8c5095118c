#!/usr/bin/env bash
# Real MCP clients (SDK v1 legacy, SDK v2 pinned to 2026-07-28) list mt's prompts and get
# every skill as a prompt and as a skill:// resource, over stdio against `mt serve`. The
# expected set is the skills/ folder itself, so a skill that is not served fails the test.
# Usage: skills_clients.sh MT NODE_DIR SKILLS_DIR LOG_FIXTURE
set -euo pipefail
MT=${1:?mt}; NODE_DIR=${2:?node dir}; SKILLS=${3:?skills dir}; FIXTURE=${4:?a job log}
NODE=$NODE_DIR/node_modules/.bin/node
[ -x "$NODE" ] || NODE=node
T=$(mktemp -d /tmp/mt-skills.XXXXXX)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/ws"
cp "$FIXTURE" "$T/ws/7877-JAX-llama2-70b.log"
names=$(cd "$SKILLS" && ls -d */ | tr -d / | sort | paste -sd, -)
[ -n "$names" ] || { echo "no skills under $SKILLS"; exit 1; }
echo "skills: $names"
cd "$NODE_DIR"
"$NODE" skills_client.mjs --stdio "$MT serve --workspace $T/ws" --skills "$names" --job 7877
