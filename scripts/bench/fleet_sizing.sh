#!/usr/bin/env bash
# How many traces one core analyzes per hour, for docs/fleet.md's sizing table. Run by
# hand (not a test):
#
#   bash scripts/bench/fleet_sizing.sh [--ttap build/ttap] [--scorers "model rules"] [--skip-large]
#
# Inputs (made in scripts/bench/out/, gitignored, unless there already):
#   small    ~1 MB of JSON: hta_alexnet_a100_small replicated (make_big_trace.py --size 1M)
#   typical  ~35 MB of JSON: kineto_resnet50_v100_nw0 as it is (a real ResNet-50 training trace)
#   large    ~1 GB of JSON: kineto_resnet50_v100_nw0 replicated (make_big_trace.py --size 1G)
# Each is analyzed COPIES times in one process (`ttap analyze -j 1 --threads 1` over a
# folder of links to it, so the model's one-time load is spread as on a shard), under
# /usr/bin/time. The figure is CPU time (user + sys) per trace: on a shared machine wall
# time measures the neighbours, CPU time what a core spends. Prints one Markdown row per
# size and scorer, and the peak RSS (what --mem must allow per task).
set -euo pipefail
cd "$(dirname "$0")/../.."
ttap=build/ttap
scorers="model rules"
skip_large=0
while (($#)); do
  case $1 in
    --ttap) ttap=$2; shift 2 ;;
    --scorers) scorers=$2; shift 2 ;;
    --skip-large) skip_large=1; shift ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
out=scripts/bench/out
mkdir -p "$out"
py=/usr/bin/python3
[[ -f $out/fleet_small.json ]] || $py scripts/bench/make_big_trace.py "$out/fleet_small.json" --size 1M --source tests/data/hta_alexnet_a100_small.json.gz >&2
[[ -f $out/fleet_typical.json ]] || zcat tests/data/kineto_resnet50_v100_nw0.json.gz >"$out/fleet_typical.json"
if ((!skip_large)); then
  [[ -f $out/fleet_large.json ]] || $py scripts/bench/make_big_trace.py "$out/fleet_large.json" --size 1G --source tests/data/kineto_resnet50_v100_nw0.json.gz >&2
fi

echo "| size | JSON MB | scorer | traces | CPU s per trace | traces per hour per core | wall s per trace | peak RSS MB |"
echo "|---|---:|---|---:|---:|---:|---:|---:|"
for spec in small:200 typical:6 large:1; do
  name=${spec%%:*} copies=${spec##*:}
  f=$out/fleet_$name.json
  [[ -f $f ]] || continue
  dir=$out/fleet_${name}_copies
  rm -rf "$dir" && mkdir -p "$dir"
  for i in $(seq "$copies"); do ln -s "$(realpath "$f")" "$dir/copy$i.json"; done
  mb=$(($(stat -c %s "$f") / 1000000))
  for scorer in $scorers; do
    /usr/bin/time -o "$out/fleet_time.txt" -f '%e %U %S %M' "$ttap" analyze --scorer "$scorer" -j 1 --threads 1 --no-progress \
      --format jsonl -o /dev/null "$dir" 2>/dev/null || true  # exit 1: flagged, the usual result
    read -r wall user sys rss < <(tail -n 1 "$out/fleet_time.txt")  # after "Command exited with non-zero status 1"
    awk -v n="$name" -v mb="$mb" -v s="$scorer" -v c="$copies" -v w="$wall" -v u="$user" -v y="$sys" -v r="$rss" 'BEGIN {
      cpu = (u + y) / c;
      printf "| %s | %d | %s | %d | %.2f | %.0f | %.2f | %.0f |\n", n, mb, s, c, cpu, 3600 / cpu, w / c, r / 1024 }'
  done
done
