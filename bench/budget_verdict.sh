# Sourced by the size checks (bench/footprint_check.sh, embedded/size_report.sh): one budget rule.
# budget_verdict PREFIX WHAT SIZE BUDGET prints "PREFIX: WHAT SIZE bytes, budget BUDGET: ok" (adding "more
# than 5% under: lower it" below 95%) or "PREFIX: WHAT SIZE bytes OVER BUDGET BUDGET (+2% = LIMIT)" and
# returns 1 when SIZE is more than 2% over BUDGET.
budget_verdict() {
  local prefix=$1 what=$2 size=$3 budget=$4
  local limit=$(( budget + budget / 50 ))
  if [ "$size" -gt "$limit" ]; then
    echo "$prefix: $what $size bytes OVER BUDGET $budget (+2% = $limit)"
    return 1
  elif [ "$size" -lt $(( budget - budget / 20 )) ]; then
    echo "$prefix: $what $size bytes, budget $budget: ok, more than 5% under: lower it"
  else
    echo "$prefix: $what $size bytes, budget $budget: ok"
  fi
}
