#!/bin/bash
# A real single-node Slurm cluster (Debian's slurm-wlm 22.05 and munge), brought up here
# and torn down again: scripts/slurm/submit.sh runs `ttap analyze` over the traces in
# tests/data as a 4-task array plus a dependent merge step, and the merged report must
# equal one `ttap analyze` process over the same traces (same traces, same verdicts, same
# findings; only the per-trace wall time differs).
#
#   tests/slurm/slurm_array_test.sh TTAP_BINARY SOURCE_DIR
#
# Exit 0: passed; 1: failed; 77: skipped (ctest SKIP_RETURN_CODE) when Slurm or munge is
# not installed, when not root, or when a daemon does not start, with the daemon's own
# error. Every wait is bounded, and the daemons this script started are stopped on any
# exit.
set -uo pipefail
ttap=$(realpath -- "${1:?usage: slurm_array_test.sh TTAP_BINARY SOURCE_DIR}")
src=$(realpath -- "${2:?usage: slurm_array_test.sh TTAP_BINARY SOURCE_DIR}")
py=/usr/bin/python3

skip() { echo "SKIPPED: $*"; exit 77; }
fail() { echo "FAILED: $*"; exit 1; }

for tool in munged slurmctld slurmd sbatch squeue scontrol sinfo; do
  command -v "$tool" >/dev/null || skip "$tool not found: scripts/install-deps.sh installs slurm-wlm and munge"
done
[[ $(id -u) -eq 0 ]] || skip "slurmd must run as root to launch jobs (running as $(id -un))"
[[ -x $py ]] || skip "$py not found (the comparison reads the reports with it)"

work=$(mktemp -d /tmp/ttap-slurm-XXXXXX) || fail "mktemp"
chmod 700 "$work"
pids=()  # daemons started here, stopped by cleanup

stop_daemons() {
  local pid
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null; done
  for _ in $(seq 50); do
    local alive=0
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    ((alive)) || break
    sleep 0.1
  done
  for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null; done
  pids=()
}
cleanup() {
  # Jobs still running (a timeout) are cancelled while the controller is up: their steps
  # would outlive slurmd and hold the folder.
  if ((${#pids[@]} >= 3)); then
    timeout 5 scancel --partition=ttap --quiet 2>/dev/null
  fi
  stop_daemons
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# The pid a daemon wrote to its pid file, waiting at most 5 s for it.
pid_from() {
  for _ in $(seq 50); do
    [[ -s $1 ]] && { cat "$1"; return 0; }
    sleep 0.1
  done
  return 1
}
free_port() { "$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
log_tail() { [[ -f $1 ]] && tail -n 5 "$1" | sed 's/^/    /'; }

# ---- munge -----------------------------------------------------------------------------
mkdir -m 700 "$work/munge" "$work/state" "$work/spool" "$work/log"
head -c 1024 /dev/urandom >"$work/munge/munge.key"
chmod 400 "$work/munge/munge.key"
if ! timeout 10 munged --force --key-file="$work/munge/munge.key" --socket="$work/munge/munge.socket" \
    --pid-file="$work/munge/munged.pid" --log-file="$work/log/munged.log" --seed-file="$work/munge/munged.seed" \
    2>"$work/log/munged.err"; then
  skip "munged did not start: $(cat "$work/log/munged.err") $(log_tail "$work/log/munged.log")"
fi
pid=$(pid_from "$work/munge/munged.pid") || skip "munged wrote no pid file: $(log_tail "$work/log/munged.log")"
pids+=("$pid")

# ---- slurm.conf: localhost, absolute paths, no cgroups ---------------------------------
host=$(hostname -s)
ctld_port=$(free_port) && slurmd_port=$(free_port) || fail "no free port"
[[ $ctld_port != "$slurmd_port" ]] || slurmd_port=$((ctld_port + 1))
cat >"$work/slurm.conf" <<CONF
ClusterName=ttaptest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$work/munge/munge.socket
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
ReturnToService=2
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
NodeName=ttapnode NodeHostname=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=ttap Nodes=ttapnode Default=YES MaxTime=10 State=UP
CONF
export SLURM_CONF=$work/slurm.conf

# ---- slurmctld, slurmd -----------------------------------------------------------------
timeout 10 slurmctld -f "$SLURM_CONF" -i 2>"$work/log/slurmctld.err" ||
  skip "slurmctld did not start: $(cat "$work/log/slurmctld.err") $(log_tail "$work/log/slurmctld.log")"
pid=$(pid_from "$work/slurmctld.pid") || skip "slurmctld wrote no pid file: $(log_tail "$work/log/slurmctld.log")"
pids+=("$pid")
timeout 10 slurmd -f "$SLURM_CONF" -N ttapnode 2>"$work/log/slurmd.err" ||
  skip "slurmd did not start: $(cat "$work/log/slurmd.err") $(log_tail "$work/log/slurmd.log")"
pid=$(pid_from "$work/slurmd.pid") || skip "slurmd wrote no pid file: $(log_tail "$work/log/slurmd.log")"
pids+=("$pid")
up=0
deadline=$((SECONDS + 30))
while ((SECONDS < deadline)); do
  state=$(timeout 5 sinfo -h -n ttapnode -o %t 2>/dev/null)
  [[ $state == idle ]] && { up=1; break; }
  sleep 0.5
done
((up)) || skip "the node did not come up (state \"${state:-none}\"): $(log_tail "$work/log/slurmd.log") $(log_tail "$work/log/slurmctld.log")"
echo "slurm up: controller port $ctld_port, node ttapnode with $(nproc) CPUs"

# ---- the array and the merge -----------------------------------------------------------
shopt -s nullglob
traces=("$src"/tests/data/*.json.gz)
((${#traces[@]} >= 4)) || fail "expected at least 4 traces in tests/data, found ${#traces[@]}"
start=$SECONDS
ids=$(timeout 100 "$src/scripts/slurm/submit.sh" --output-dir "$work/out" --shards 4 --partition ttap --time 5 --cpus-per-task 1 --ttap "$ttap" \
        -a --scorer -a rules --wait -- "${traces[@]}")
rc=$?
echo "submit.sh: jobs $ids, exit $rc, $((SECONDS - start)) s"
if ((rc != 0)); then
  timeout 5 squeue 2>&1 | sed 's/^/    /'
  for f in "$work"/out/logs/*.out; do echo "--- $f"; tail -n 20 "$f"; done
  fail "submit.sh --wait exited $rc (124: timed out after 100 s)"
fi

one="$work/one.json"
"$ttap" analyze --scorer rules "${traces[@]}" --format json --no-progress -o "$one"
rc=$?
((rc <= 1)) || fail "the one-process ttap analyze exited $rc"

"$py" - "$work/out" "$one" "${traces[@]}" <<'PY' || exit 1
import glob, json, os, sys
out, one_path, traces = sys.argv[1], sys.argv[2], sys.argv[3:]
problems = []
shards = sorted(glob.glob(os.path.join(out, "shard-*.jsonl")))
if len(shards) != 4:
    problems.append(f"expected 4 shard files, found {shards}")
seen = []
for s in shards:
    for line in open(s):
        seen += [t["path"] for t in json.loads(line)["traces"]]
if sorted(seen) != sorted(traces):
    problems.append(f"the shards do not cover each trace exactly once: {sorted(seen)} vs {sorted(traces)}")
merged = json.load(open(os.path.join(out, "merged.json")))
one = json.load(open(one_path))
def by_path(report):
    result = {}
    for t in report["traces"]:
        t = dict(t)
        t.pop("seconds", None)  # wall time: the only thing allowed to differ
        result[t["path"]] = t
    return result
m, o = by_path(merged), by_path(one)
if set(m) != set(o):
    problems.append(f"traces differ: only merged {set(m) - set(o)}, only one-process {set(o) - set(m)}")
for p in sorted(set(m) & set(o)):
    if m[p] != o[p]:
        keys = [k for k in o[p] if m[p].get(k) != o[p][k]]
        problems.append(f"{p}: differs in {keys} (verdicts {m[p]['verdict']} / {o[p]['verdict']})")
if merged["summary"] != one["summary"]:
    problems.append(f"summaries differ: {merged['summary']} vs {one['summary']}")
fleet = merged.get("fleet")
if not fleet or fleet["traces"] != len(traces) or fleet["duplicates"] != 0:
    problems.append(f"the fleet view is missing or counts wrong: {fleet and {k: fleet[k] for k in ('traces', 'duplicates')}}")
for ext in ("txt", "md"):
    if not os.path.getsize(os.path.join(out, "merged." + ext)):
        problems.append(f"merged.{ext} is empty")
for p in problems:
    print("FAILED:", p)
if not problems:
    print(f"merged report of {len(shards)} shards equals the one-process report: {len(m)} traces, "
          f"summary {merged['summary']}")
sys.exit(1 if problems else 0)
PY
echo "PASSED in $((SECONDS)) s"
