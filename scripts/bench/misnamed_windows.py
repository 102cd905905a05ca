#!/usr/bin/python3
"""The positive flagged windows whose first finding is not a labeled id (eval's misses).

`ttap eval --format json` gives classification_accuracy but not which windows miss. This
script takes the same windows from an `ttap analyze --format json` report of the dataset's
traces: the flagged windows as eval picks them (flag_windows in src/detect/flagging.cpp: top
k by score, k windows apart, zero scores included), positive when one labeled range covers at
least 20% of the window (kPositiveWindowShare), labeled ids every range that overlaps it
(src/dataset/manifest.cpp). Prints one line per miss (--all: per classified window), with the
window's findings as id:severity:cost, then the count and the accuracy, which must equal
eval's classification_accuracy.

    TTAP_MODEL_DIR=$PWD/models build/ttap analyze /work/views/zoo-dev23/traces --format json \\
        --threads 1 -j 1 --no-progress -o /tmp/zoo.json
    /usr/bin/python3 scripts/bench/misnamed_windows.py /work/views/zoo-dev23 /tmp/zoo.json

Run by hand (a measurement, not a test); only for views the rules may be tuned on (dev, val).
"""
import argparse
import json
import os

POSITIVE_SHARE = 0.2  # kPositiveWindowShare (include/ttap/dataset.hpp)


def flagged(scores, k, spacing):
    """flag_windows(scores, k, spacing, positive_only=false): stable, highest score first."""
    order = sorted(range(len(scores)), key=lambda i: -scores[i])
    picked = []
    for i in order:
        if len(picked) >= k:
            break
        if all(abs(i - f) >= spacing for f in picked):
            picked.append(i)
    return picked


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dataset", help="folder with manifest.jsonl")
    ap.add_argument("report", help="ttap analyze --format json of the dataset's traces")
    ap.add_argument("--all", action="store_true", help="print every classified window, not only the misses")
    a = ap.parse_args()
    report = json.load(open(a.report))
    k, spacing = report["settings"]["top_k"], report["settings"]["flag_spacing"]
    traces = {os.path.basename(t["path"]): t for t in report["traces"]}
    classified = correct = 0
    for line in open(os.path.join(a.dataset, "manifest.jsonl")):
        entry = json.loads(line)
        name = os.path.basename(entry["trace"])
        t = traces[name]
        ranges = [(round(r["ts_begin"] * 1000), round(r["ts_end"] * 1000), r["type"]) for r in entry["anti_patterns"]]
        by_index = {w["index"]: w for w in t["flagged_windows"] if w["scope"] == "window"}
        windows = t["windows"]
        for i in flagged([w["score"] for w in windows], k, spacing):
            b, e = windows[i]["begin_ns"], windows[i]["end_ns"]
            cover = [max(0, min(e, r[1]) - max(b, r[0])) for r in ranges]
            if not any(c > 0 and c >= POSITIVE_SHARE * (e - b) for c in cover):
                continue
            labels = []
            for r, c in zip(ranges, cover):
                if c > 0 and r[2] not in labels:
                    labels.append(r[2])
            findings = by_index.get(windows[i]["index"], {"findings": []})["findings"]
            first = findings[0]["id"] if findings else "none"
            ok = first in labels
            classified += 1
            correct += ok
            if a.all or not ok:
                shown = " ".join(f"{f['id']}:{f['severity']}:{f['cost_ns'] // 1000}us" for f in findings)
                print(f"{'ok  ' if ok else 'miss'} {name} window {windows[i]['index']} first {first} "
                      f"labeled {','.join(labels)} | {shown}")
    print(f"classified {classified}, first id labeled {correct} ({correct / max(1, classified):.4f})")


if __name__ == "__main__":
    main()
