#!/usr/bin/env bash
# Builds ttap in Release into build-bench/ for the benchmarks, and prints the binary's path
# on its last line of stdout (progress goes to stderr).
#
#   ttap=$(bash scripts/bench/build_release.sh [REV] | tail -1)
#
# Without REV: the working tree. With REV: `git archive REV` unpacked into build-bench/src,
# so edits in progress do not matter.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
rev=${1:-}
src_dir=.
if [[ -n $rev ]]; then
  src_dir=build-bench/src
  rm -rf "$src_dir" && mkdir -p "$src_dir"
  git archive "$rev" | tar -x -C "$src_dir"
  echo "building $(git rev-parse --short "$rev") (git archive) into build-bench" >&2
else
  echo "building the working tree ($(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src include CMakeLists.txt || echo ', with local changes')) into build-bench" >&2
fi
# A cache made from the other source tree (working tree vs REV) cannot be reused.
if [[ -f build-bench/CMakeCache.txt ]] &&
   ! grep -qx "CMAKE_HOME_DIRECTORY:INTERNAL=$(realpath "$src_dir")" build-bench/CMakeCache.txt; then
  rm -rf build-bench/CMakeCache.txt build-bench/CMakeFiles
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
launcher=()
if command -v ccache > /dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S "$src_dir" -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DTTAP_BUILD_TESTS=OFF "${launcher[@]}" > "$log" 2>&1 \
  || { tail -30 "$log" >&2; exit 1; }
# The modules (ttap_torch.so, ttap_spm.so) are part of `all`: analyze needs them beside the binary.
ninja -C build-bench -j2 >> "$log" 2>&1 || { grep -m20 -B2 -A10 'error' "$log" >&2; exit 1; }
echo "$root/build-bench/ttap"
