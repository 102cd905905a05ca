#!/usr/bin/python3
"""Trace AUC of other ways to pool a trace's window scores into its trace score (ttap uses
the mean, include/ttap/scoring.hpp), from the per-window model scores of a window table:

    ttap eval DATASET --window-table TABLE.tsv
    /usr/bin/python3 scripts/train/trace_pools.py DATASET/manifest.jsonl TABLE.tsv [--split val]

A pool is chosen on val splits and on development sets only (models/MODEL_CARD.md,
"The trace score's pool"); the script reads any split it is given, so give it those.
"""
import argparse
import collections
import csv
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fit_hybrid import auc  # noqa: E402  (the same tie rule as ttap's auc_roc)


def power_mean(p):
    return lambda s: float(np.mean(s ** p) ** (1.0 / p))


def top_share(share):
    return lambda s: float(np.mean(np.sort(s)[-max(1, int(len(s) * share)):]))


POOLS = {
    "mean": lambda s: float(np.mean(s)),
    "median": lambda s: float(np.median(s)),
    "p75": lambda s: float(np.percentile(s, 75)),
    "p90": lambda s: float(np.percentile(s, 90)),
    "max": lambda s: float(np.max(s)),
    "top 20%": top_share(0.2),
    "top 50%": top_share(0.5),
    "mean + std": lambda s: float(np.mean(s) + np.std(s)),
    "mean of logits": lambda s: float(np.mean(np.log(s / np.clip(1.0 - s, 1e-9, None) + 1e-12))),
    "power mean 2": power_mean(2),
    "power mean 4": power_mean(4),
    "power mean 12": power_mean(12),
    "max - median": lambda s: float(np.max(s) - np.median(s)),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("manifest", help="the dataset's manifest.jsonl (trace labels)")
    ap.add_argument("table", help="`ttap eval DATASET --window-table` output")
    ap.add_argument("--split", help="only this split's traces (default: every trace in the table)")
    a = ap.parse_args()
    label = {}
    with open(a.manifest) as f:
        for line in f:
            if line.strip():
                e = json.loads(line)
                label[e["trace"]] = 1 if e["label"] == "bad" else 0
    windows = collections.defaultdict(list)
    with open(a.table) as f:
        for row in csv.DictReader(f, delimiter="\t"):
            if a.split is None or row["split"] == a.split:
                windows[row["trace"]].append(1.0 / (1.0 + np.exp(-float(row["model_logit"]))))
    if not windows:
        sys.exit(f"trace_pools.py: no windows of split {a.split!r} in {a.table}")
    traces = sorted(windows)
    missing = [t for t in traces if t not in label]
    if missing:
        sys.exit(f"trace_pools.py: {len(missing)} traces of the table are not in {a.manifest} (first: {missing[0]})")
    y = np.array([label[t] for t in traces])
    print(f"{len(traces)} traces ({int(y.sum())} bad), split {a.split or 'all'}")
    for name, pool in POOLS.items():
        s = np.array([pool(np.array(windows[t])) for t in traces])
        print(f"{name:16s} {auc(s, y):.3f}")


if __name__ == "__main__":
    main()
