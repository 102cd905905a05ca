#!/usr/bin/env bash
# The fixed cost of `ttap analyze` before its first forward, phase by phase (CPU and wall
# ms, best of RUNS fresh processes each): dlopen of ttap_torch.so (relocations + libtorch's
# static initializers), the model's load, sentencepiece; the dlopen in a namespace of its
# own (dlmopen), without the executable's libraries in the lookup scope; how many libraries and
# relocations the dlopen brings, what exit() would add (libtorch's static destructors,
# which ttap skips), and, when perf is installed, where the dlopen's CPU goes by library.
#
#   bash scripts/bench/module_load_bench.sh [BUILD_DIR (default build)] [RUNS (default 5)]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
runs=${2:-5}
torch=$build/ttap_torch.so
spm=$build/ttap_spm.so
model=${TTAP_MODEL_DIR:-models}
[[ -f $torch && -f $spm ]] || { echo "no $torch or $spm: build first" >&2; exit 2; }
mkdir -p scripts/bench/out
bin=scripts/bench/out/module_load_bench
if [[ ! -x $bin || scripts/bench/module_load_bench.cpp -nt $bin ]]; then
  g++ -O2 -std=c++17 scripts/bench/module_load_bench.cpp -ldl -o "$bin"
fi
args=("$torch" "$model/detector.pt" "$spm" "$model/ttap_names.model")
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); best of $runs fresh processes"
for ((i = 0; i < runs; i++)); do "$bin" "${args[@]}"; done |
  awk '{ if (!($1 in c) || $2 < c[$1]) c[$1] = $2; if (!($1 in w) || $3 < w[$1]) w[$1] = $3; if (!($1 in o)) o[$1] = n++ }
       END { printf "%-22s %10s %10s\n", "phase", "CPU ms", "wall ms"; for (k in o) order[o[k]] = k
             for (i = 0; i < n; i++) printf "%-22s %10.1f %10.1f\n", order[i], c[order[i]], w[order[i]] }'
best=1e9
for ((i = 0; i < runs; i++)); do
  c=$(MODULE_LOAD_BENCH_DLMOPEN=1 "$bin" "${args[@]}" | awk '$1 == "dlopen_torch_module" { print $2 }')
  best=$(awk -v a="$best" -v b="$c" 'BEGIN { print (b < a) ? b : a }')
done
echo "the same dlopen in a link-map namespace of its own (dlmopen LM_ID_NEWLM): $best CPU ms"
echo "libraries the libtorch module loads: $(ldd "$torch" | wc -l)"
LD_DEBUG=statistics MODULE_LOAD_BENCH_EXIT=1 "$bin" "${args[@]}" 2>&1 > /dev/null | grep -E 'final number of relocations:' | sed -E 's/^ *[0-9]+: *//'
best_exit=1e9; best_quick=1e9
for ((i = 0; i < runs; i++)); do
  q=$( { /usr/bin/time -f '%U %S' "$bin" "${args[@]}" > /dev/null; } 2>&1 | awk '{ print $1 + $2 }')
  e=$( { MODULE_LOAD_BENCH_EXIT=1 /usr/bin/time -f '%U %S' "$bin" "${args[@]}" > /dev/null; } 2>&1 | awk '{ print $1 + $2 }')
  best_quick=$(awk -v a="$best_quick" -v b="$q" 'BEGIN { print (b < a) ? b : a }')
  best_exit=$(awk -v a="$best_exit" -v b="$e" 'BEGIN { print (b < a) ? b : a }')
done
echo "process CPU s: $best_quick leaving with _Exit, $best_exit with exit() (libtorch's static destructors)"
if command -v perf > /dev/null; then
  data=$(mktemp)
  perf record -q -F 4000 -o "$data" "$bin" "${args[@]}" > /dev/null 2>&1 || true
  echo "CPU samples by library (perf record -F 4000, one run; ld-linux = symbol lookup and relocation):"
  perf report -i "$data" --no-children --sort dso 2> /dev/null | grep -E '^ +[0-9]' | head -6
  echo "top symbols:"
  perf report -i "$data" --no-children --sort sym 2> /dev/null | grep -E '^ +[0-9]' | head -6
  rm -f "$data"
fi
