#!/usr/bin/env bash
# Builds the libFuzzer target and runs it for SECONDS (default 300) on a work copy of the
# seed corpus. Findings land in scripts/fuzz/crashes/. Needs clang-14 and
# libclang-rt-14-dev (installed here if missing).
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-300}
command -v clang++-14 >/dev/null || apt-get install -y -qq clang-14 libclang-rt-14-dev
CC=clang-14 CXX=clang++-14 cmake -S . -B build-fuzz -G Ninja -DTTAP_BUILD_FUZZERS=ON -DTTAP_BUILD_TESTS=OFF > /dev/null
ninja -C build-fuzz fuzz_load
work=scripts/fuzz/corpus-work
mkdir -p "$work" scripts/fuzz/crashes
cp -n scripts/fuzz/seeds/* "$work"/ 2>/dev/null || true
# Two jobs: one per core. TTAP_PARSE_CHUNK_BYTES puts chunk boundaries into small inputs.
cd build-fuzz  # libFuzzer writes its fuzz-N.log files into the working directory
TTAP_PARSE_CHUNK_BYTES=1024 TTAP_THREADS=2 ./scripts/fuzz/fuzz_load "../$work" \
  -dict=../scripts/fuzz/kineto.dict -max_len=65536 -rss_limit_mb=2048 -timeout=10 \
  -max_total_time="$seconds" -jobs=2 -workers=2 -artifact_prefix=../scripts/fuzz/crashes/ -print_final_stats=1
