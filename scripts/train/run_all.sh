#!/bin/bash
# The detector's whole training run, as MODEL_CARD.md reports it:
#   features of the labeled corpus -> weak (MIL) model, window-supervised model and its three
#   ablations -> export of the window-supervised model (the better one, MODEL_CARD.md) to models/detector.pt -> forward latency.
#
#   bash scripts/train/run_all.sh [DATASET=data/ttap-bench] [FEAT=/tmp/ttap-feat] [OUT=/tmp/ttap-train]
#
# Environment: TTAP (the ttap binary, default build-dev/ttap), EPOCHS (default 12), MINUTES
# (training-time cap per run, default 25), OPENBLAS_DIR (optional: a folder holding
# OpenBLAS's libblas.so.3, put first on LD_LIBRARY_PATH; Debian's torch otherwise runs on the
# reference BLAS, about 5x slower here; the results are the same up to float rounding).
set -euo pipefail
cd "$(dirname "$0")/../.."
DATASET=${1:-data/ttap-bench}
FEAT=${2:-/tmp/ttap-feat}
OUT=${3:-/tmp/ttap-train}
TTAP=${TTAP:-build-dev/ttap}
EPOCHS=${EPOCHS:-12}
MINUTES=${MINUTES:-25}
PY=/usr/bin/python3
if [ -n "${OPENBLAS_DIR:-}" ]; then export LD_LIBRARY_PATH="$OPENBLAS_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; fi
# glibc returns freed large blocks to the kernel and faults them in again on every
# allocation; page faults are expensive on these VMs, so keep the memory.
export MALLOC_MMAP_THRESHOLD_=1000000000000 MALLOC_TRIM_THRESHOLD_=1000000000000

rm -rf "$FEAT"
"$TTAP" features "$DATASET" -o "$FEAT"
mkdir -p "$OUT"
common=(--features "$FEAT" --out-dir "$OUT" --epochs "$EPOCHS" --minutes "$MINUTES" --seed 0 --threads 1)
$PY scripts/train/train.py "${common[@]}" --name weak --mode weak | tee "$OUT/weak.log"
# The shipped setting: window targets widened to short labeled ranges, plus a trace term.
window=(--mode window --instance-share 0.5 --trace-weight 1.0 --select both)
$PY scripts/train/train.py "${common[@]}" "${window[@]}" --name window | tee "$OUT/window.log"
$PY scripts/train/train.py "${common[@]}" --mode window --name window_plain | tee "$OUT/window_plain.log"
$PY scripts/train/train.py "${common[@]}" "${window[@]}" --name window_no_names --config '{"use_names": 0}' | tee "$OUT/window_no_names.log"
$PY scripts/train/train.py "${common[@]}" "${window[@]}" --name window_no_window_tf --config '{"use_window_tf": 0}' | tee "$OUT/window_no_window_tf.log"
$PY scripts/train/train.py "${common[@]}" "${window[@]}" --name window_no_w2w --config '{"use_w2w": 0}' | tee "$OUT/window_no_w2w.log"
$PY scripts/train/export.py "$OUT/window.pt" -o models/detector.pt --check-features "$FEAT"
$PY scripts/train/bench_forward.py --model models/detector.pt --reps 20
$PY scripts/train/report.py "$OUT" weak window window_plain window_no_names window_no_window_tf window_no_w2w
