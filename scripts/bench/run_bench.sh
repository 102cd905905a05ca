#!/usr/bin/env bash
# ttap's load/summary benchmark, run by hand (not a test); the results go into the README.
#
#   bash scripts/bench/run_bench.sh [--rev REV] [--source TRACE.json.gz] [--sizes "100M 1G"] [--runs 3]
#
# 1. Builds ttap in Release into build-bench/ (from the working tree, or with --rev from
#    `git archive REV` unpacked into build-bench/src, so edits in progress do not matter).
# 2. Makes replicated traces (scripts/bench/make_big_trace.py), plain and gzipped, in
#    scripts/bench/out/ (gitignored) unless they are there already.
# 3. For each input: one warm-up run (page cache), then RUNS runs of
#    `ttap summary FILE > /dev/null` under /usr/bin/time -f '%e %M'; prints the best wall
#    time, MB/s of uncompressed JSON, the peak RSS and RSS / JSON size.
# 4. Prints what `ttap -v summary` logs about load vs tree time, per input.
# 5. libdeflate vs zlib on the smallest .json.gz (scripts/bench/gunzip_bench.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD

rev=""
source=""
sizes="100M 1G"
runs=3
while [[ $# -gt 0 ]]; do
  case $1 in
    --rev) rev=$2; shift 2 ;;
    --source) source=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
if [[ -z $source ]]; then
  source=/work/shared/traces/public/kineto_resnet50_v100_nw0.json.gz
  [[ -f $source ]] || source=tests/data/kineto_resnet50_v100_nw0.json.gz
fi
out=scripts/bench/out
mkdir -p "$out"

if [[ ! -x /usr/bin/time ]]; then
  if [[ $(id -u) == 0 ]]; then apt-get install -y -qq time; else sudo apt-get install -y -qq time; fi
fi

# ---- build --------------------------------------------------------------------------
ttap=$(bash scripts/bench/build_release.sh $rev | tail -1)

# ---- inputs -------------------------------------------------------------------------
name=$(basename "$source"); name=${name%.gz}; name=${name%.json}
inputs=()
for size in $sizes; do
  f="$out/${name}_$size.json"
  if [[ ! -f $f || ! -f $f.gz ]]; then
    /usr/bin/python3 scripts/bench/make_big_trace.py "$f" --source "$source" --size "$size" --gzip
  fi
  inputs+=("$f" "$f.gz")
done

# ---- timing -------------------------------------------------------------------------
echo
echo "host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo)"
echo "ttap: $ttap (Release); source trace: $source; best of $runs after a warm-up"
echo
timing=$(mktemp)
trap 'rm -f "$timing" "$timing.err"' EXIT
echo "load average before timing: $(cut -d' ' -f1-3 /proc/loadavg) (other work on the machine skews the times)"
fmt='%-44s %9s %10s %8s %8s %8s %9s\n'
printf "$fmt" input "file MB" "JSON MB" "wall s" "MB/s" "RSS MB" "RSS/JSON"
for f in "${inputs[@]}"; do
  json=${f%.gz}
  json_bytes=$(stat -c %s "$json")
  file_bytes=$(stat -c %s "$f")
  # Warm-up: the page cache, and a failure shows here.
  if ! "$ttap" summary "$f" > /dev/null 2> "$timing.err"; then
    printf '%-44s FAILED: %s\n' "$(basename "$f")" "$(tail -1 "$timing.err")"
    continue
  fi
  best=""; rss=0
  for ((i = 0; i < runs; i++)); do
    /usr/bin/time -o "$timing" -f '%e %M' "$ttap" summary "$f" > /dev/null || true
    read -r wall kb < <(tail -1 "$timing")
    best=$(awk -v a="$wall" -v b="${best:-1e9}" 'BEGIN { print (a < b) ? a : b }')
    if ((kb > rss)); then rss=$kb; fi
  done
  awk -v f="$(basename "$f")" -v fb="$file_bytes" -v b="$json_bytes" -v w="$best" -v r="$rss" -v fmt="$fmt" \
    'BEGIN { printf fmt, f, sprintf("%.1f", fb/1e6), sprintf("%.1f", b/1e6), sprintf("%.2f", w),
             (w > 0 ? sprintf("%.0f", b/1e6/w) : "-"), sprintf("%.0f", r/1024), sprintf("%.2f", r*1024/b) }'
done

echo
echo "phases, from \`ttap -v summary FILE\`:"
for f in "${inputs[@]}"; do
  echo "  $(basename "$f"): $("$ttap" -v summary "$f" 2>&1 > /dev/null | grep -E 'loaded in|tree in' | sed -E 's/^.*debug: //' | tail -1)"
done

# ---- gunzip -------------------------------------------------------------------------
echo
first_size=${sizes%% *}
bash scripts/bench/gunzip_bench.sh "$out/${name}_$first_size.json.gz"
