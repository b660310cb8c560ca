#!/usr/bin/env bash
# CI check: the callgrind instruction counts (bench/callgrind_counts.sh) against the checked-in budget
# bench/callgrind_budget.tsv ("model<TAB>phase<TAB>Ir per call"). Fails (exit 1) when a count is more
# than 10% over its budget, naming it; a count more than 10% under says so (lower the budget in the
# same change, so the next regression shows). Exit 2 when valgrind is missing.
#
# usage: bench/callgrind_budget_check.sh [BUDGET_FILE]
set -euo pipefail
cd "$(dirname "$0")/.."
BUDGET=${1:-bench/callgrind_budget.tsv}
MEASURED=$(mktemp)
trap 'rm -f "$MEASURED"' EXIT
models=$(grep -v '^#' "$BUDGET" | cut -f1 | sort -u)
# shellcheck disable=SC2086
bash bench/callgrind_counts.sh --tsv "$MEASURED" $models >/dev/null
python3 - "$BUDGET" "$MEASURED" <<'PY'
import sys
budget = {}
for line in open(sys.argv[1]):
    if line.strip() and not line.startswith("#"):
        m, p, n = line.split("\t")
        budget[(m, p)] = int(n)
measured = {}
for line in open(sys.argv[2]):
    m, p, n = line.split("\t")
    measured[(m, p)] = int(n)
bad = False
for key, limit in sorted(budget.items()):
    got = measured.get(key)
    if got is None:
        print("callgrind budget: %s %s: not measured" % key)
        bad = True
        continue
    ratio = got / limit
    verdict = "OVER BUDGET" if ratio > 1.10 else "under budget by >10%: lower it" if ratio < 0.90 else "ok"
    bad = bad or ratio > 1.10
    print("callgrind budget: %-9s %-7s %12d Ir/call  budget %12d  ratio %.3f  %s" % (key + (got, limit, ratio, verdict)))
sys.exit(1 if bad else 0)
PY
