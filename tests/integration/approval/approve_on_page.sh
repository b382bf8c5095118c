#!/usr/bin/env bash
# A human approving one plan on the /approvals page with curl (what a person does in the
# browser): log in with an approver token, read the plan's section (its hash and the CSRF
# token), press Approve. Used as the "human" of URL-mode approval tests.
# Usage: approve_on_page.sh BASE_URL APPROVER_TOKEN PLAN_ID
set -euo pipefail
BASE=$1; TOKEN=$2; PLAN=$3
J=$(mktemp); P=$(mktemp)
trap 'rm -f "$J" "$P"' EXIT
curl -s -o /dev/null -c "$J" -d "token=$TOKEN" "$BASE/approvals/login"
curl -s -b "$J" -o "$P" "$BASE/approvals?plan=$PLAN"
section=$(python3 - "$P" "$PLAN" <<'PY'
import re, sys
page, plan = open(sys.argv[1]).read(), sys.argv[2]
sec = page[page.index('id="plan-' + plan + '"'):]
csrf = re.search(r'name=csrf value="([0-9a-f]+)"', sec).group(1)
h = re.search(r'name=hash value="([0-9a-f]+)"', sec).group(1)
print(csrf, h)
PY
)
read -r CSRF HASH <<<"$section"
code=$(curl -s -o /dev/null -w '%{http_code}' -b "$J" -d "id=$PLAN&hash=$HASH&decision=approve&csrf=$CSRF" "$BASE/approvals/decide")
[ "$code" = 303 ] || { echo "approve_on_page: decide answered $code" >&2; exit 1; }
