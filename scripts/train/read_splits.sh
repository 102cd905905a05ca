#!/usr/bin/env bash
# Reads the figures the README and the model card quote (issue 12): `ttap eval` of each view
# with each scorer, one line per view and scorer: trace AUC / window AUC / localization /
# classification (first-named, misses counted) / recoverable-share trace AUC.
# A view is a dataset folder, or a folder whose manifest.jsonl holds one split's lines and
# whose `traces` links to the dataset's (scripts/llm/README.md). Test views are read once, at
# the end of a round: never to choose anything.
#
#   scripts/train/read_splits.sh OUT VIEW...      env: TTAP (build/ttap), SCORERS ("model hybrid rules")
set -euo pipefail
cd "$(dirname "$0")/../.."
[[ $# -ge 2 ]] || { sed -n 2,9p "$0"; exit 2; }
out=$1; shift
mkdir -p "$out"
for v in "$@"; do
  for s in ${SCORERS:-model hybrid rules}; do
    j="$out/$(basename "$v")-$s.json"
    "${TTAP:-build/ttap}" eval "$v" --scorer "$s" --threads 1 --format json -o "$j" 2> "${j%.json}.log"
    /usr/bin/python3 - "$j" "$(basename "$v")" "$s" <<'PY'
import json, sys
for split, g in json.load(open(sys.argv[1]))["groups"].items():
    if "/" in split:
        continue
    f = lambda k: "-" if g.get(k) is None else f"{g[k]:.3f}"
    print(f"{sys.argv[2]:18s} {split:6s} {sys.argv[3]:7s} {f('trace_auc')} / {f('window_auc')} / {f('localization')}"
          f" / {f('classification_accuracy')}  recoverable {f('trace_auc_recoverable')}  traces {g['traces']}")
PY
  done
done
