#!/bin/bash
# Analyze a fleet of traces on Slurm: an array of N shards (ttap-shard.sbatch), then one
# merge step that runs after all of them (ttap-merge.sbatch). Every path must be visible
# from the compute nodes (a shared file system). Prints "ARRAY_JOB MERGE_JOB".
#
#   scripts/slurm/submit.sh -o /shared/ttap/run1 -n 16 -p cpu -t 01:00:00 -c 4 -- /shared/traces/2026-11-24
#
# Options (sbatch's names where there is one):
#   -o, --output-dir DIR      shard-K.jsonl, merged.{json,txt,md} and logs/ go here (required)
#   -n, --shards N            array tasks (default 4)
#   -p, --partition NAME      Slurm partition (default: the cluster's default)
#   -t, --time LIMIT          time limit per task, e.g. 00:30:00 (default: the partition's)
#   -c, --cpus-per-task N     cores per task, also ttap's -j (default 1)
#   -A, --account NAME        account to charge
#       --mem SIZE            memory per task, e.g. 8G (about 1.25x the largest trace's JSON per core, docs/fleet.md)
#       --max-parallel M      at most M tasks at once (--array=1-N%M)
#       --ttap PATH           the ttap binary (default: ttap on PATH)
#   -a, --analyze-arg ARG     passed to ttap analyze, once per word (e.g. -a --scorer -a rules)
#       --sbatch-arg ARG      passed to both sbatch calls (e.g. --sbatch-arg=--qos=low)
#       --wait                return only when the merge step has finished (sbatch --wait)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out="" shards=4 ttap="" max_parallel="" wait=0
common=() task=() analyze=()
usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
need() { [[ $# -ge 2 && -n $2 ]] || { echo "submit.sh: $1 needs a value" >&2; exit 2; }; }
while (($#)); do
  case $1 in
    -o|--output-dir) need "$@"; out=$2; shift 2 ;;
    -n|--shards) need "$@"; shards=$2; shift 2 ;;
    -p|--partition) need "$@"; common+=(--partition="$2"); shift 2 ;;
    -t|--time) need "$@"; common+=(--time="$2"); shift 2 ;;
    -c|--cpus-per-task) need "$@"; task+=(--cpus-per-task="$2"); shift 2 ;;
    -A|--account) need "$@"; common+=(--account="$2"); shift 2 ;;
    --mem) need "$@"; task+=(--mem="$2"); shift 2 ;;
    --max-parallel) need "$@"; max_parallel=$2; shift 2 ;;
    --ttap) need "$@"; ttap=$2; shift 2 ;;
    -a|--analyze-arg) need "$@"; analyze+=("$2"); shift 2 ;;
    -a=*|--analyze-arg=*) analyze+=("${1#*=}"); shift ;;
    --sbatch-arg) need "$@"; common+=("$2"); shift 2 ;;
    --sbatch-arg=*) common+=("${1#*=}"); shift ;;
    --wait) wait=1; shift ;;
    -h|--help) usage ;;
    --) shift; break ;;
    -*) echo "submit.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
(($#)) || { echo "submit.sh: no traces given (after --)" >&2; exit 2; }
[[ -n $out ]] || { echo "submit.sh: --output-dir is required" >&2; exit 2; }
[[ $shards =~ ^[1-9][0-9]*$ ]] || { echo "submit.sh: --shards must be a positive number, got $shards" >&2; exit 2; }
command -v sbatch >/dev/null || { echo "submit.sh: sbatch not found: is this a Slurm login node?" >&2; exit 2; }
mkdir -p "$out/logs"
out=$(cd "$out" && pwd)
# Absolute paths: the tasks may start in another directory.
traces=()
for t in "$@"; do traces+=("$(realpath -- "$t")"); done
[[ -n $ttap ]] && export TTAP=$(realpath -- "$ttap")
array=1-$shards
[[ -n $max_parallel ]] && array+="%$max_parallel"

array_job=$(sbatch --parsable --export=ALL "${common[@]}" "${task[@]}" --array="$array" \
  --output="$out/logs/shard-%a.out" "$here/ttap-shard.sbatch" "$out" "${analyze[@]}" -- "${traces[@]}")
array_job=${array_job%%;*}
wait_flag=()
((wait)) && wait_flag=(--wait)
# With --wait, sbatch returns the merge step's exit status: pass it on.
merge_rc=0
merge_job=$(sbatch --parsable --export=ALL "${common[@]}" "${wait_flag[@]}" --dependency="afterany:$array_job" \
  --output="$out/logs/merge.out" "$here/ttap-merge.sbatch" "$out") || merge_rc=$?
echo "$array_job ${merge_job%%;*}"
exit "$merge_rc"
