#!/usr/bin/env bash
# Two ttap binaries' `analyze` on one trace, run in turn (so both see the same load):
# the best wall time of RUNS runs each, with that run's CPU time (all threads) and peak RSS.
#
#   bash scripts/bench/ab_analyze.sh TTAP_A TTAP_B FILE [RUNS (default 5)]
#
# Each binary finds its own ttap_torch.so beside it; the model comes from TTAP_MODEL_DIR
# (default models/). For a before/after: build the older commit elsewhere (git archive REV
# into a folder, cmake with the same flags) and pass both binaries.
set -euo pipefail
cd "$(dirname "$0")/../.."
[[ $# -ge 3 ]] || { sed -n '2,9p' "$0"; exit 2; }
a=$1 b=$2 file=$3 runs=${4:-5}
export TTAP_MODEL_DIR=${TTAP_MODEL_DIR:-$PWD/models}
timing=$(mktemp)
trap 'rm -f "$timing"' EXIT
declare -A best cpu rss
for bin in "$a" "$b"; do best[$bin]=1e9; done
for ((i = 0; i < runs; i++)); do
  for bin in "$a" "$b"; do
    /usr/bin/time -o "$timing" -f '%e %U %S %M' "$bin" analyze "$file" --device cpu --fail-on none -o /dev/null 2> /dev/null || true
    read -r w u s m < "$timing"
    if awk -v x="$w" -v y="${best[$bin]}" 'BEGIN { exit !(x < y) }'; then
      best[$bin]=$w; cpu[$bin]=$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }'); rss[$bin]=$((m / 1024))
    fi
  done
done
echo "$(basename "$file"), load average $(cut -d' ' -f1 /proc/loadavg), best of $runs:"
for bin in "$a" "$b"; do
  printf '  %-40s wall %6.2f s  CPU %6.2f s  peak RSS %5d MB\n' "$bin" "${best[$bin]}" "${cpu[$bin]}" "${rss[$bin]}"
done
