#!/usr/bin/env bash
# Two ttap binaries' `analyze --threads 1` wall time on each trace, runs interleaved (so both
# see the same load): the median of RUNS runs each.
#
#   bash scripts/bench/median_analyze.sh TTAP_A TTAP_B RUNS FILE...
#
# For a before/after of a rules change: copy the older build's ttap (with its ttap_*.so beside
# it) elsewhere first. Extra analyze options go in TTAP_ARGS (default: --fail-on none).
set -euo pipefail
[[ $# -ge 4 ]] || { sed -n '2,9p' "$0"; exit 2; }
a=$1 b=$2 runs=$3
shift 3
args=${TTAP_ARGS:---fail-on none}
timing=$(mktemp)
trap 'rm -f "$timing"' EXIT
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
printf '%-52s %10s %10s\n' "trace (median of $runs, load $(cut -d' ' -f1 /proc/loadavg))" "A s" "B s"
for file in "$@"; do
  ta=() tb=()
  for ((i = 0; i < runs; i++)); do
    for bin in "$a" "$b"; do
      # shellcheck disable=SC2086
      /usr/bin/time -o "$timing" -f '%e' "$bin" analyze "$file" --threads 1 $args --format json > /dev/null 2>&1 || true
      if [[ $bin == "$a" ]]; then ta+=("$(cat "$timing")"); else tb+=("$(cat "$timing")"); fi
    done
  done
  printf '%-52s %10s %10s\n' "$(basename "$file")" "$(printf '%s\n' "${ta[@]}" | median)" "$(printf '%s\n' "${tb[@]}" | median)"
done
