#!/usr/bin/env bash
# Issue 14's speed table, re-measured side by side in one run (by hand, not a test):
# `ttap summary`, `ttap analyze` (the model on CPU), Python's json.load, HTA's load and
# breakdowns and TraceLens's tree, on the real 35 MB trace (kineto_resnet50_v100_nw0) and on
# replicas of it made by scripts/bench/make_big_trace.py (130 MB and 1 GB by default).
#
#   bash scripts/bench/table_bench.sh [--rev REV] [--sizes "130M 1G"] [--runs 3] [--python-max 200M] [--keep]
#
# Each cell: one warm-up run (page cache warm; a failure shows here), then the best wall
# time of RUNS runs under /usr/bin/time, with the peak RSS of that run. The load average
# is printed with each row: other work on the machine inflates wall times, never shrinks
# them. ttap is built in Release into build-bench/ (scripts/bench/build_release.sh).
# Replicas go to ${TMPDIR:-/tmp}/ttap-table-bench and are deleted at the end (--keep keeps
# them for the next run). Python, HTA and TraceLens run on inputs up to --python-max
# (json.load of 1 GB needs about 8 GB and minutes); HTA and TraceLens are "not installed"
# when /usr/bin/python3 cannot import them.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD

rev=""
sizes="130M 1G"
runs=3
python_max=200M
keep=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --rev) rev=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --python-max) python_max=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done

bytes_of() {  # 130M -> 130000000 (as make_big_trace.py reads sizes)
  local t=${1^^}; t=${t%B}
  case $t in
    *K) echo $(( ${t%K} * 1000 )) ;;
    *M) echo $(( ${t%M} * 1000000 )) ;;
    *G) echo $(( ${t%G} * 1000000000 )) ;;
    *) echo "$t" ;;
  esac
}

if [[ ! -x /usr/bin/time ]]; then
  if [[ $(id -u) == 0 ]]; then apt-get install -y -qq time; else sudo apt-get install -y -qq time; fi
fi
ttap=$(bash scripts/bench/build_release.sh $rev | tail -1)
export TTAP_MODEL_DIR=${TTAP_MODEL_DIR:-$root/models}

source=/work/shared/traces/public/kineto_resnet50_v100_nw0.json.gz
[[ -f $source ]] || source=$root/tests/data/kineto_resnet50_v100_nw0.json.gz
work=${TMPDIR:-/tmp}/ttap-table-bench
mkdir -p "$work"
timing=$(mktemp)
cleanup() {
  rm -f "$timing" "$timing.out"
  if ((keep == 0)); then rm -rf "$work"; fi
}
trap cleanup EXIT

inputs=("$source")
for size in $sizes; do
  f=$work/nw0_$size.json
  [[ -f $f ]] || /usr/bin/python3 scripts/bench/make_big_trace.py "$f" --source "$source" --size "$size" >&2
  inputs+=("$f")
done

json_bytes() {  # uncompressed size
  if [[ $1 == *.gz ]]; then gzip -dc "$1" | wc -c; else stat -c %s "$1"; fi
}

# What each column runs on FILE.
have_hta=0; have_tracelens=0
/usr/bin/python3 -c "import hta" 2> /dev/null && have_hta=1
/usr/bin/python3 -c "import TraceLens" 2> /dev/null && have_tracelens=1
hta_dir=$work/hta  # HTA reads a folder of rank traces: a folder holding a link to the one measured
# Sets cmd to what the column runs on FILE.
tool_cmd() {
  local tool=$1 f=$2
  case $tool in
    summary) cmd=("$ttap" summary "$f" -o /dev/null) ;;
    analyze) cmd=("$ttap" analyze "$f" --device cpu --fail-on none -o /dev/null) ;;
    python) cmd=(/usr/bin/python3 -c 'import gzip, json, sys
p = sys.argv[1]
with (gzip.open(p, "rb") if p.endswith(".gz") else open(p, "rb")) as f:
    json.load(f)' "$f") ;;
    hta)
      rm -rf "$hta_dir" && mkdir -p "$hta_dir" && ln -s "$(realpath "$f")" "$hta_dir/$(basename "$f")"
      cmd=(/usr/bin/python3 -c 'import sys
from hta.trace_analysis import TraceAnalysis
a = TraceAnalysis(trace_dir=sys.argv[1])
a.get_temporal_breakdown(visualize=False)
a.get_gpu_kernel_breakdown(visualize=False)' "$hta_dir") ;;
    tracelens) cmd=(/usr/bin/python3 -c 'import sys
from TraceLens import TreePerfAnalyzer
TreePerfAnalyzer.from_file(sys.argv[1])' "$f") ;;
  esac
}

# "wall_s cpu_s rss_kb" of the run with the best wall time of $runs, after a warm-up;
# "FAILED" if the warm-up fails.
measure() {
  local tool=$1 f=$2
  tool_cmd "$tool" "$f"
  if ! "${cmd[@]}" > /dev/null 2> "$timing.out"; then
    echo "$tool on $(basename "$f") FAILED: $(tail -1 "$timing.out")" >&2
    echo "FAILED"
    return
  fi
  local best="" best_cpu=0 best_rss=0 wall user sys kb
  for ((i = 0; i < runs; i++)); do
    /usr/bin/time -o "$timing" -f '%e %U %S %M' "${cmd[@]}" > /dev/null 2>&1 || true
    read -r wall user sys kb < <(tail -1 "$timing")
    if [[ -z $best ]] || awk -v a="$wall" -v b="$best" 'BEGIN { exit !(a < b) }'; then
      best=$wall; best_rss=$kb; best_cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')
    fi
  done
  echo "$best $best_cpu $best_rss"
}

# analyze must run the model: a missing model would silently time the rules fallback.
scorer=$("$ttap" analyze "$source" --device cpu --fail-on none --format json 2> /dev/null | grep -o '"scorer":"[a-z]*"' | head -1 || true)
if [[ $scorer != '"scorer":"model"' ]]; then
  echo "ttap analyze does not score with the model here ($scorer); set TTAP_MODEL_DIR" >&2
  exit 1
fi

echo
echo "host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo)"
echo "ttap $(git rev-parse --short HEAD) (Release, build-bench/); $(date -u '+%Y-%m-%d %H:%M UTC'); best of $runs after a warm-up"
echo "cells: wall s (GB/s of uncompressed JSON), CPU s (user + system, all threads) and peak RSS MB of the run with the"
echo "best wall time; load: the 1-minute load average before the row"
echo
printf '| input | JSON MB | load | ttap summary | ttap analyze (model on CPU) | Python json.load | HTA load + breakdowns | TraceLens tree |\n'
printf '|---|---|---|---|---|---|---|---|\n'
max_py=$(bytes_of "$python_max")
for f in "${inputs[@]}"; do
  jb=$(json_bytes "$f")
  load=$(cut -d' ' -f1 /proc/loadavg)
  cells=()
  for tool in summary analyze python hta tracelens; do
    if [[ $tool == hta && $have_hta == 0 ]] || [[ $tool == tracelens && $have_tracelens == 0 ]]; then
      cells+=("not installed"); continue
    fi
    if [[ $tool == python || $tool == hta || $tool == tracelens ]] && ((jb > max_py)); then
      cells+=("-"); continue
    fi
    m=$(measure "$tool" "$f")
    if [[ $m == FAILED ]]; then cells+=("failed"); continue; fi
    read -r wall cpu kb <<< "$m"
    cells+=("$(awk -v w="$wall" -v c="$cpu" -v b="$jb" -v r="$kb" 'BEGIN { printf "%.2f s (%s GB/s), CPU %.2f s, %.0f MB", w, (w > 0 ? sprintf("%.2f", b / 1e9 / w) : "-"), c, r / 1024 }')")
  done
  printf '| %s | %.1f | %s | %s | %s | %s | %s | %s |\n' "$(basename "$f")" "$(awk -v b="$jb" 'BEGIN { print b / 1e6 }')" "$load" \
    "${cells[0]}" "${cells[1]}" "${cells[2]}" "${cells[3]}" "${cells[4]}"
done

echo
echo "where analyze's time goes, from \`ttap -v analyze FILE\` (one run each):"
for f in "${inputs[@]}"; do
  echo "  $(basename "$f"):"
  "$ttap" -v analyze "$f" --device cpu --fail-on none -o /dev/null 2>&1 |
    grep -E 'loaded in|detector|analyzed in' | sed -E 's/^.*debug: //; s#^[^ ]+\.json(\.gz)?: ##; s/^/    /'
done
