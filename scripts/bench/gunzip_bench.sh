#!/usr/bin/env bash
# libdeflate whole-buffer gzip decompression vs zlib inflate, MB/s of output each.
#   bash scripts/bench/gunzip_bench.sh FILE.json.gz
# Default FILE: the first *_100M.json.gz in scripts/bench/out/ (made by run_bench.sh).
# Needs g++, libdeflate-dev and zlib1g-dev (scripts/install-deps.sh installs them).
set -euo pipefail
cd "$(dirname "$0")/../.."
file=${1:-$(ls scripts/bench/out/*_100M.json.gz 2>/dev/null | head -1)}
[[ -n $file && -f $file ]] || { echo "usage: $0 FILE.json.gz (none found in scripts/bench/out/)" >&2; exit 2; }
mkdir -p scripts/bench/out
bin=scripts/bench/out/gunzip_bench
if [[ ! -x $bin || scripts/bench/gunzip_bench.cpp -nt $bin ]]; then
  g++ -O2 -std=c++17 scripts/bench/gunzip_bench.cpp -ldeflate -lz -o "$bin"
fi
cat "$file" > /dev/null  # page cache
"$bin" "$file"
