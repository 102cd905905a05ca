#!/usr/bin/env bash
# One replay round of the LLM-stage measurement (scripts/llm/README.md), over several views:
# serves every answer written so far (each answers*.jsonl under scripts/llm/results, plus any
# files given after the views with --answers), runs `ttap eval --llm-url` on each view, and
# leaves what is still unanswered in OUT/pending.jsonl. Repeat after answering until nothing
# is pending; FIRST=1 measures the first round alone from the same answers.
#
#   scripts/llm/round.sh OUT VIEW... [--answers FILE...]
#   env: TTAP (build/ttap), PORT (18173), FIRST (0), SCORER (model), THREADS (2)
#
# Writes OUT/r1-NAME.{json,tsv} (FIRST=1) or OUT/r3-NAME.{json,tsv}, NAME the view's folder name,
# and prints per view: windows, rules first-named, LLM first-named, LLM labeled id among its ids.
set -euo pipefail
cd "$(dirname "$0")/../.."
[[ $# -ge 2 ]] || { sed -n 2,12p "$0"; exit 2; }
out=$1; shift
views=(); extra=()
while [[ $# -gt 0 ]]; do
  if [[ $1 == --answers ]]; then shift; extra+=("$@"); break; fi
  views+=("$1"); shift
done
ttap=${TTAP:-build/ttap}; port=${PORT:-18173}; first=${FIRST:-0}
mkdir -p "$out"
answers="$out/served-answers.jsonl"
find scripts/llm/results -name 'answers*.jsonl' -print0 | sort -z | xargs -0 cat > "$answers"
for f in "${extra[@]}"; do cat "$f" >> "$answers"; done
pending="$out/pending.jsonl"; : > "$pending"
tag=r3; flag=()
if [[ $first == 1 ]]; then tag=r1; flag=(--first-round-only); fi
/usr/bin/python3 scripts/llm/replay_endpoint.py --port "$port" --answers "$answers" --pending "$pending" "${flag[@]}" \
  > "$out/endpoint.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 50); do
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
  sleep 0.1
done
for v in "${views[@]}"; do
  name=$(basename "$v")
  "$ttap" eval "$v" --scorer "${SCORER:-model}" --threads "${THREADS:-2}" \
    --llm-url "http://127.0.0.1:$port/v1" --llm-model replay \
    --format json -o "$out/$tag-$name.json" --llm-table "$out/$tag-$name.tsv" 2> "$out/$tag-$name.log" || true
  /usr/bin/python3 - "$out/$tag-$name.json" "$name" <<'EOF'
import json, sys
groups = json.load(open(sys.argv[1]))["groups"]
for split, g in groups.items():
    if "/" in split or "llm_classified" not in g:
        continue
    print(f"{sys.argv[2]:24s} {split:6s} windows {g['llm_classified']:4d}  rules {g['classification_accuracy']:.3f}"
          f"  llm first {g['llm_first_accuracy']:.3f}  among {g['llm_classification_accuracy']:.3f}"
          f"  failed {g['llm_failed']}")
EOF
done
echo "pending: $(wc -l < "$pending") prompts in $pending"
