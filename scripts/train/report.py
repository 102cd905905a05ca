#!/usr/bin/python3
"""Markdown tables of the metrics train.py wrote (OUT/*.json), for MODEL_CARD.md.

  /usr/bin/python3 scripts/train/report.py /tmp/ttap-train [run names...]
"""
import glob
import json
import os
import sys


def cell(v):
    return "n/a" if v is None or v != v else f"{v:.3f}"


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "/tmp/ttap-train"
    names = sys.argv[2:]
    files = [os.path.join(out, n + ".json") for n in names] if names else sorted(glob.glob(os.path.join(out, "*.json")))
    runs = [json.load(open(f)) for f in files]
    groups = ["train", "val", "test", "test_seen", "test_unseen"]
    print("| run | mode | epoch | train s | " + " | ".join(f"{g} trace / window AUC" for g in groups) + " |")
    print("|---|---|---|---|" + "---|" * len(groups))
    for r in runs:
        m = r["metrics"]
        cells = []
        for g in groups:
            if g in m:
                cells.append(f"{cell(m[g]['trace_auc'])} / {cell(m[g].get('window_auc'))}")
            else:
                cells.append("-")
        print(f"| {r['name']} | {r['mode']} | {r['selected_epoch']} | {r['train_seconds']:.0f} | " + " | ".join(cells) + " |")
    print()
    print("| run | " + " | ".join(f"{g} traces (bad) / windows (positive)" for g in groups) + " |")
    print("|---|" + "---|" * len(groups))
    if runs:
        m = runs[0]["metrics"]
        cells = []
        for g in groups:
            if g in m:
                cells.append(f"{m[g]['traces']} ({m[g]['bad']}) / {m[g].get('windows', 0)} ({m[g].get('pos_windows', 0)})")
            else:
                cells.append("-")
        print(f"| counts | " + " | ".join(cells) + " |")
    print()
    print("window AUC within bad traces only (localization given the trace is bad):")
    for r in runs:
        m = r["metrics"]
        print(f"  {r['name']}: " + ", ".join(f"{g} {cell(m[g].get('window_auc_bad_traces'))}" for g in groups if g in m))


if __name__ == "__main__":
    main()
