#!/usr/bin/env bash
# The detector's window scores on CUDA against the CPU, and the forward's latency on each.
# Needs a ttap whose torch module has CUDA and sees a GPU (build_torch_module.sh), and a
# Python with numpy. The target: every score within 1e-4 of the CPU's.
#
#   bash scripts/bench/cuda_parity.sh [TRACE...]   (default: every trace in tests/data)
#
# Prints per trace the windows scored, max |cuda - cpu| and the forward's milliseconds
# (best of 3 fresh processes; CPU on one thread, as detector_latency.sh measures it).
set -euo pipefail
cd "$(dirname "$0")/../.."
TTAP=${TTAP:-build/ttap}
PY=${PYTHON:-python3}
traces=("$@")
if ((${#traces[@]} == 0)); then traces=(tests/data/*.json.gz); fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

forward_ms() {  # best of 3 forwards of one trace on one device
  local best=1e9 line ms
  for _ in 1 2 3; do
    line=$("$TTAP" -v analyze "$1" --device "$2" --threads "$3" --fail-on none -o /dev/null 2>&1 | grep 'detector:' | head -1)
    ms=$(sed -E 's/.*forward ([0-9.]+) ms.*/\1/' <<<"$line")
    best=$(awk -v a="$best" -v b="$ms" 'BEGIN{print (b<a)?b:a}')
  done
  echo "$best"
}

printf '%-46s %8s %12s %10s %10s\n' trace windows max_abs_diff "cpu ms" "cuda ms"
worst=0
for t in "${traces[@]}"; do
  name=$(basename "$t")
  "$TTAP" features "$t" -o "$tmp/cpu" --scores --device cpu >/dev/null 2>&1 || { echo "$name: features (cpu) failed" >&2; continue; }
  "$TTAP" features "$t" -o "$tmp/cuda" --scores --device cuda >/dev/null 2>&1 || { echo "$name: features (cuda) failed" >&2; continue; }
  read -r n diff < <("$PY" - "$tmp" <<'PY'
import glob, os, sys
import numpy as np
tmp = sys.argv[1]
n, d = 0, 0.0
for f in glob.glob(os.path.join(tmp, "cpu", "*", "window_score.npy")):
    a = np.load(f)
    b = np.load(f.replace(os.path.join(tmp, "cpu"), os.path.join(tmp, "cuda"), 1))
    n += a.size
    d = max(d, float(np.abs(a.astype(np.float64) - b).max()) if a.size else 0.0)
print(n, f"{d:.3g}")
PY
)
  rm -rf "$tmp/cpu" "$tmp/cuda"
  worst=$(awk -v a="$worst" -v b="$diff" 'BEGIN{print (b>a)?b:a}')
  printf '%-46s %8s %12s %10s %10s\n' "$name" "$n" "$diff" "$(forward_ms "$t" cpu 1)" "$(forward_ms "$t" cuda 0)"
done
echo "worst max |cuda - cpu|: $worst (target 1e-4)"
