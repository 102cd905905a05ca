#!/bin/bash
# Refits the hybrid scorer for the model in models/ (run it again whenever
# models/detector.pt changes): the per-window table of DATASET's windows (model scores and
# rule evidence), then a logistic regression fit on its val split -> models/hybrid.json.
#
#   bash scripts/train/fit_hybrid.sh [DATASET=data/ttap-bench] [TABLE=/tmp/ttap-hybrid-table.tsv]
#
# Environment: TTAP (the ttap binary, default build/ttap).
set -euo pipefail
cd "$(dirname "$0")/../.."
DATASET=${1:-data/ttap-bench}
TABLE=${2:-/tmp/ttap-hybrid-table.tsv}
TTAP=${TTAP:-build/ttap}
"$TTAP" eval "$DATASET" --model models --threads 1 --window-table "$TABLE"
/usr/bin/python3 scripts/train/fit_hybrid.py "$TABLE" -o models/hybrid.json
