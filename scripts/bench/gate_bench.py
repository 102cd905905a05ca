#!/usr/bin/python3
"""How the CI gates do on a labeled corpus (default data/ttap-bench): for each gate, the
share of good traces it fails (false flags) and of bad traces it fails (recall).

    /usr/bin/python3 scripts/bench/gate_bench.py [--corpus data/ttap-bench] [--out /tmp/gate_bench]

Gates:
  1. --fail-on warning (the default): ttap's gate_failed per trace in the json report of
     `ttap analyze --fail-on warning --format json` over the corpus
  2. --fail-on none --fail-savings 5: from the same report, recoverable_share >= 0.05 per
     trace, the comparison ttap's gate makes (src/classify/gate.cpp); --check-savings runs
     it as its own ttap call instead (one more pass over the corpus)
  3. --baseline against the trace's good twin, where the corpus has one (gate: --fail-on
     warning on what is new or worse). Twins: a surgery crop's twin is a good crop of the
     same source trace with the same number of steps (the nearest first step); a zoo run's,
     a good run of the same model, mode, batch, input size and optimizer. A good trace's
     twin is another good trace by the same rule, never itself. The twin's grouped findings
     come from run 1's report, written into a baseline report under the compared trace's
     path, so every comparison runs in one ttap call.
Every trace is analyzed with the default scorer (the shipped model) and -j 2.
"""
import argparse
import json
import os
import subprocess
import sys


def run(cmd):
    print("$", " ".join(cmd), file=sys.stderr)
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if p.returncode not in (0, 1):
        sys.exit(f"ttap failed ({p.returncode}): {p.stderr[-2000:]}")


def twin_key(row):
    if row["source"] == "surgery":
        s = row["surgery"]
        return ("surgery", s["source"], s["steps"])
    c = row.get("config", {})
    return ("zoo", row["model"], row["mode"], c.get("batch"), c.get("size"), c.get("optimizer"))


def twin_of(row, goods):
    cands = [g for g in goods.get(twin_key(row), []) if g["trace"] != row["trace"]]
    if not cands:
        return None
    if row["source"] == "surgery":
        first = row["surgery"]["first_step"]
        cands.sort(key=lambda g: abs((g["surgery"]["first_step"] or 0) - (first or 0)))
    return cands[0]


def rates(rows, failed):
    good = [r for r in rows if r["label"] == "good"]
    bad = [r for r in rows if r["label"] == "bad"]
    ff = sum(failed[r["trace"]] for r in good)
    tp = sum(failed[r["trace"]] for r in bad)
    return f"{ff}/{len(good)} good failed ({100.0 * ff / max(1, len(good)):.1f}%), {tp}/{len(bad)} bad failed ({100.0 * tp / max(1, len(bad)):.1f}%)"


def gate_results(report_path, corpus):
    rep = json.load(open(report_path))
    out = {}
    for t in rep["traces"]:
        out[os.path.relpath(t["path"], corpus)] = bool(t["gate_failed"])
    return rep, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default="data/ttap-bench")
    ap.add_argument("--out", default="/tmp/gate_bench")
    ap.add_argument("--ttap", default="build/ttap")
    ap.add_argument("--reuse", action="store_true", help="reuse OUT/fail_on_warning.json from an earlier run")
    ap.add_argument("--check-savings", action="store_true", help="run --fail-savings 5 as its own ttap call")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    rows = [json.loads(l) for l in open(os.path.join(a.corpus, "manifest.jsonl"))]
    traces = [os.path.join(a.corpus, r["trace"]) for r in rows]
    common = [a.ttap, "analyze", "-j", "2", "--no-progress", "--format", "json"]

    warn = os.path.join(a.out, "fail_on_warning.json")
    if not (a.reuse and os.path.exists(warn)):
        run(common + ["--fail-on", "warning", "-o", warn] + traces)
    rep, failed_warn = gate_results(warn, a.corpus)
    failed_sav = {os.path.relpath(t["path"], a.corpus): t["verdict"] == "error" or 100.0 * t["recoverable_share"] >= 5.0
                  for t in rep["traces"]}
    if a.check_savings:
        sav = os.path.join(a.out, "fail_savings_5.json")
        run(common + ["--fail-on", "none", "--fail-savings", "5", "-o", sav] + traces)
        _, checked = gate_results(sav, a.corpus)
        if checked != failed_sav:
            sys.exit("--fail-savings 5 run disagrees with recoverable_share >= 5% of the first report")

    by_path = {os.path.relpath(t["path"], a.corpus): t for t in rep["traces"]}
    goods = {}
    for r in rows:
        if r["label"] == "good":
            goods.setdefault(twin_key(r), []).append(r)
    base_traces, compared = [], []
    for r in rows:
        tw = twin_of(r, goods)
        if tw is None or by_path.get(tw["trace"], {}).get("verdict") == "error":
            continue
        entry = dict(by_path[tw["trace"]])
        entry["path"] = os.path.join(a.corpus, r["trace"])  # the baseline for this path
        base_traces.append(entry)
        compared.append(r)
    base = dict(rep)
    base["traces"] = base_traces
    base_path = os.path.join(a.out, "twin_baselines.json")
    json.dump(base, open(base_path, "w"))
    with_base = os.path.join(a.out, "baseline_twin.json")
    run(common + ["--fail-on", "warning", "--baseline", base_path, "-o", with_base] + [os.path.join(a.corpus, r["trace"]) for r in compared])
    _, failed_base = gate_results(with_base, a.corpus)

    print(f"corpus {a.corpus}: {len(rows)} traces")
    print(f"--fail-on warning:                   {rates(rows, failed_warn)}")
    print(f"--fail-on none --fail-savings 5:     {rates(rows, failed_sav)}")
    print(f"  the same traces as --baseline ({len(compared)} with a twin):")
    print(f"  --fail-on warning:                 {rates(compared, failed_warn)}")
    print(f"  --fail-on none --fail-savings 5:   {rates(compared, failed_sav)}")
    print(f"  --baseline TWIN (--fail-on warning): {rates(compared, failed_base)}")


if __name__ == "__main__":
    main()
