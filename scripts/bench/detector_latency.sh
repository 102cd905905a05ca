#!/usr/bin/env bash
# Detector latency on one CPU core: features + one batched forward over 100 windows, as
# `ttap analyze` runs it. The target (issue 4) is 100 ms for the forward of 100 windows.
#
#   bash scripts/bench/detector_latency.sh [TRACE...]   (default: the three H100/V100 traces in tests/data)
#
# Pinned to core 0 with --threads 1; best of 5 runs per trace. Each run is a fresh
# process, so each figure is the first forward after loading the model.
set -euo pipefail
cd "$(dirname "$0")/../.."
TTAP=${TTAP:-build/ttap}
traces=("$@")
if ((${#traces[@]} == 0)); then
  traces=(tests/data/kineto_resnet50_v100_nw0.json.gz tests/data/tracelens_vit_nsfw_h100.json.gz tests/data/tracelens_qwen05b_h100.json.gz)
fi
printf '%-48s %12s %12s\n' trace "features ms" "forward ms"
for t in "${traces[@]}"; do
  best_f=1e9 best_m=1e9
  for _ in 1 2 3 4 5; do
    line=$(taskset -c 0 "$TTAP" -v analyze "$t" --threads 1 --device cpu --fail-on none -o /dev/null 2>&1 | grep 'detector:' | head -1)
    f=$(sed -E 's/.*features ([0-9.]+) ms.*/\1/' <<<"$line")
    m=$(sed -E 's/.*forward ([0-9.]+) ms.*/\1/' <<<"$line")
    best_f=$(awk -v a="$best_f" -v b="$f" 'BEGIN{print (b<a)?b:a}')
    best_m=$(awk -v a="$best_m" -v b="$m" 'BEGIN{print (b<a)?b:a}')
  done
  printf '%-48s %12s %12s\n' "$(basename "$t")" "$best_f" "$best_m"
done
