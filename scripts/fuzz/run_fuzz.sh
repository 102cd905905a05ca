#!/usr/bin/env bash
# Builds the libFuzzer targets (ASan + UBSan) and runs each for SECONDS on a work copy of
# the seed corpus plus the real traces of tests/data that fit under MAX_LEN bytes, one
# after the other, with JOBS parallel workers each (fork mode).
#
#   bash scripts/fuzz/run_fuzz.sh [SECONDS] [TARGET...]     (default 300; all three targets)
#   JOBS=2 BUILD_DIR=build-fuzz bash scripts/fuzz/run_fuzz.sh 600 fuzz_chunks
#   JOBS=1 nice bash scripts/fuzz/run_fuzz.sh 900           (on a shared machine)
#
# Targets (scripts/fuzz/fuzz_load.cpp): fuzz_load (JSON -> trace -> tree -> analyses),
# fuzz_gunzip (gzip -> the same), fuzz_chunks (whole-document vs chunked parse must agree);
# scripts/fuzz/fuzz_analyze.cpp: fuzz_analyze (JSON -> the whole of analyze without a model
# -> every report format -> the JSON report read back, which must render the same).
# Findings (crash-*, timeout-*, oom-*, leak-*) land in scripts/fuzz/crashes/TARGET-*; the
# corpus grows in scripts/fuzz/corpus-work/TARGET/ (both gitignored); logs in
# BUILD_DIR/fuzz-logs/. Reproduce a finding by running the target on the file:
#   ./build-fuzz/scripts/fuzz/fuzz_load scripts/fuzz/crashes/fuzz_load-crash-...
# Needs clang-14 and libclang-rt-14-dev (installed here if missing, as root).
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-300}
shift || true
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(fuzz_load fuzz_gunzip fuzz_chunks fuzz_analyze)
jobs=${JOBS:-$(nproc)}
build=${BUILD_DIR:-build-fuzz}
max_len=${MAX_LEN:-65536}

if ! command -v clang++-14 > /dev/null || [[ ! -e $(clang++-14 -print-resource-dir 2>/dev/null)/lib/linux/libclang_rt.fuzzer-x86_64.a ]]; then
  apt-get install -y -qq clang-14 libclang-rt-14-dev
fi
CC=clang-14 CXX=clang++-14 cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DTTAP_BUILD_FUZZERS=ON -DTTAP_BUILD_TESTS=OFF > /dev/null
ninja -C "$build" "${targets[@]}"

root=$PWD
logs=$root/$build/fuzz-logs
mkdir -p scripts/fuzz/crashes "$logs"
for target in "${targets[@]}"; do
  case $target in
    fuzz_gunzip) seeds=scripts/fuzz/seeds/gzip ;;
    *) seeds=scripts/fuzz/seeds/json ;;
  esac
  work=scripts/fuzz/corpus-work/$target
  mkdir -p "$work"
  cp -n "$seeds"/* "$work"/ 2> /dev/null || true
  # The real traces in tests/data that fit under -max_len, unmodified (gzipped for
  # fuzz_gunzip, decompressed for the JSON targets): whole real documents next to the
  # seeds' windows of them.
  for gz in tests/data/*.json.gz; do
    [[ $(gzip -cd "$gz" | wc -c) -le $max_len ]] || continue
    name=real_trace_$(basename "$gz")
    if [[ $target == fuzz_gunzip ]]; then cp -n "$gz" "$work/$name"
    elif [[ ! -e $work/${name%.gz} ]]; then gzip -cd "$gz" > "$work/${name%.gz}"; fi
  done
  # fuzz_analyze's rules need a GPU trace's structure, which the small traces lack: crops of
  # every real trace in tests/data, about MAX_LEN long (made once; crop_seeds.py).
  if [[ $target == fuzz_analyze ]] && ! ls "$work"/crop_* > /dev/null 2>&1; then
    /usr/bin/python3 scripts/fuzz/crop_seeds.py "$work" tests/data/*.json.gz tests/data/*/*.json.gz --bytes $((max_len - 1024))
  fi
  log=$logs/$target.log
  echo "== $target: ${seconds}s, $jobs jobs, corpus $work ($(ls "$work" | wc -l) files), log $log"
  # Fork mode: JOBS child processes share one corpus; -ignore_crashes=1 keeps fuzzing
  # after a finding so that one run reports all of them. libFuzzer writes fuzz-N.log
  # files into its working directory, hence the cd.
  (cd "$logs" && "$root/$build/scripts/fuzz/$target" "$root/$work" \
    -dict="$root/scripts/fuzz/kineto.dict" -max_len="$max_len" -rss_limit_mb=2048 -timeout=10 \
    -max_total_time="$seconds" -fork="$jobs" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
    -artifact_prefix="$root/scripts/fuzz/crashes/$target-" -print_final_stats=1) > "$log" 2>&1 || true
  grep -E '^#[0-9]+' "$log" | tail -1 || true
  grep -E '^INFO: (exiting|fuzzed for)|^Done' "$log" | tail -2 || true
done
echo
echo "findings (scripts/fuzz/crashes/):"
ls -la scripts/fuzz/crashes | grep -E -- '-(crash|timeout|oom|leak|slow-unit)-' || echo "  none"
