#!/usr/bin/env bash
# ttap's load/summary benchmark: builds ttap (Release), makes 100 MB and 1 GB traces by
# replicating a real one (plain and gzipped), and times `ttap summary` on each: best wall
# time of 3 after a warm-up, peak RSS. Run by hand; results go into the README.
#   bash scripts/bench/run_bench.sh [SOURCE_TRACE]
set -euo pipefail
cd "$(dirname "$0")/../.."
source=${1:-tests/data/tracelens_qwen05b_h100.json.gz}
out=scripts/bench/out
mkdir -p "$out"
command -v /usr/bin/time >/dev/null || apt-get install -y -qq time
cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DTTAP_BUILD_TESTS=OFF > /dev/null
ninja -C build-bench -j2 ttap > /dev/null
name=$(basename "$source" .json.gz)
for size in 100M 1G; do
  f="$out/${name}_$size.json"
  [[ -f "$f" && -f "$f.gz" ]] || /usr/bin/python3 scripts/bench/make_big_trace.py "$source" "$f" --size "$size" --gzip
done
g++ -O2 scripts/bench/gunzip_bench.cpp -ldeflate -lz -o "$out/gunzip_bench"
echo "cpu: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
printf '%-40s %9s %8s %8s %9s %9s\n' input "JSON MB" "wall s" "MB/s" "RSS MB" "RSS/JSON"
for size in 100M 1G; do
  for ext in json json.gz; do
    f="$out/${name}_$size.$ext"
    json_bytes=$(stat -c %s "$out/${name}_$size.json")
    ./build-bench/ttap summary "$f" > /dev/null  # warm the page cache
    best=999999; rss=0
    for _ in 1 2 3; do
      read -r wall kb < <( { /usr/bin/time -f '%e %M' ./build-bench/ttap summary "$f" > /dev/null; } 2>&1 )
      best=$(awk -v a="$wall" -v b="$best" 'BEGIN { print (a < b) ? a : b }')
      (( kb > rss )) && rss=$kb
    done
    awk -v f="$(basename "$f")" -v b="$json_bytes" -v w="$best" -v r="$rss" \
      'BEGIN { printf "%-40s %9.0f %8.2f %8.0f %9.0f %9.2f\n", f, b/1e6, w, b/1e6/w, r/1024, r*1024/b }'
  done
done
echo
echo "phases (ttap -v), 1 GB plain:"
./build-bench/ttap -v summary "$out/${name}_1G.json" 2>&1 >/dev/null | grep debug || true
echo
"$out/gunzip_bench" "$out/${name}_100M.json.gz"
