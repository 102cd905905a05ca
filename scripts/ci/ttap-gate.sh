#!/bin/sh
# ttap's CI gate, as the README's CI recipe runs it (GitHub Actions and GitLab CI):
# analyze the traces against the last main-branch report when there is one, write the
# reports a job keeps, and exit with the gate's code.
#
#   scripts/ci/ttap-gate.sh TRACES BASELINE OUT [ttap analyze options...]
#
# TRACES    a trace file or folder (what the job just profiled)
# BASELINE  the last main-branch ttap.json; when it is missing or empty the gate fails on
#           every finding at or above --fail-on, as it would without a baseline
# OUT       folder for ttap.json (keep it from main-branch runs: the next baseline),
#           ttap.sarif (code scanning), ttap.md (job summary), ttap.junit.xml (test report)
# Exit: 0 passed, 1 a new or worse finding at or above --fail-on (or the gates the options
# name), 2 bad input, 3 internal error. TTAP names the binary (default: ttap on PATH).
set -u
if [ $# -lt 3 ]; then
  echo "usage: $0 TRACES BASELINE OUT [ttap analyze options...]" >&2
  exit 2
fi
traces=$1 baseline=$2 out=$3
shift 3
ttap=${TTAP:-ttap}
mkdir -p "$out" || exit 2
if [ -s "$baseline" ]; then
  set -- --baseline "$baseline" "$@"
else
  echo "ttap-gate: no baseline at $baseline: every finding counts" >&2
fi
"$ttap" analyze "$traces" --no-progress "$@" --format sarif -o "$out/ttap.sarif"
code=$?
# The same analysis in the other formats; the gate's exit code is the first run's.
for format in json md junit; do
  file=$out/ttap.$format
  [ "$format" = junit ] && file=$out/ttap.junit.xml
  "$ttap" analyze "$traces" --no-progress "$@" --format "$format" -o "$file" >/dev/null 2>&1
done
exit $code
