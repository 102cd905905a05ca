#!/bin/bash
# Refits the hybrid scorer for the model in models/ (run it again whenever
# models/detector.pt or the rules change): the per-window table of each dataset's windows
# (model scores and rule evidence), then a logistic regression fit on their val splits
# pooled -> models/hybrid.json.
#
#   bash scripts/train/fit_hybrid.sh [DATASET...]   (default: data/ttap-bench data/ttap-bench-x)
#
# Environment: TTAP (the ttap binary, default build/ttap), TABLES (folder for the tables,
# default /tmp/ttap-hybrid).
set -euo pipefail
cd "$(dirname "$0")/../.."
TTAP=${TTAP:-build/ttap}
TABLES=${TABLES:-/tmp/ttap-hybrid}
if [ $# -eq 0 ]; then set -- data/ttap-bench data/ttap-bench-x; fi
mkdir -p "$TABLES"
tables=()
for d in "$@"; do
  t="$TABLES/$(basename "$d").tsv"
  "$TTAP" eval "$d" --model models --threads 1 --window-table "$t"
  tables+=("$t")
done
/usr/bin/python3 scripts/train/fit_hybrid.py "${tables[@]}" -o models/hybrid.json
