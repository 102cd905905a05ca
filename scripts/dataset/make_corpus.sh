#!/bin/sh
# Regenerates data/ttap-bench from scratch: the zoo's CPU runs, the surgery traces, the
# manifest and the counts in its README. One process at a time (the cores are shared);
# about 1.5 hours on a 2-core machine. Arguments go to make_corpus.py (e.g. --zoo 40).
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT="$ROOT/data/ttap-bench"
WORK="$ROOT/build-dataset"
rm -rf "$WORK" "$OUT/traces" "$OUT/manifest.jsonl"
/usr/bin/python3 "$ROOT/scripts/dataset/make_corpus.py" --out "$OUT" --work "$WORK" "$@"
/usr/bin/python3 "$ROOT/scripts/dataset/stats.py" "$OUT" --readme "$OUT/README.md"
