#!/usr/bin/env bash
# Triage accuracy on real public logs, scored by the corpus's own scorer:
#   triage_corpus.sh MT PYTHON SCORE_PY CASES_DIR MIN
# SCORE_PY is the development corpus's scorer (../shared/corpus/triage/score.py, beside the
# checkout) or the held-out set's (tests/triage_corpus/score.py); CASES_DIR "-" means the
# scorer's own cases. The development corpus lives outside the repository: where a checkout
# has no ../shared beside it, the test says so and is skipped (exit 77), never passed.
set -euo pipefail
mt=$1 py=$2 score=$3 cases=$4 min=$5
if [ ! -f "$score" ]; then
  echo "SKIP: no corpus scorer at $score (the development corpus is ../shared/corpus/triage beside the checkout)"
  exit 77
fi
args=(--min "$min")
[ "$cases" != - ] && args+=(--cases "$cases")
exec "$py" "$score" "${args[@]}" "$mt triage --json {log} --now {now}"
