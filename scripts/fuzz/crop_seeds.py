#!/usr/bin/env python3
"""Crops of real traces as fuzz seeds, for the rules that need real structure.

Most of tests/data is larger than the fuzzers' -max_len, so only its smallest traces are
seeds whole, and the rules that need a GPU trace's shape (launches with their kernels,
cuDNN's transposes, steps, Python frames) see little of it. A crop keeps a trace's top-level
keys (deviceProperties, distributedInfo, ...), its metadata events and every event that starts
in one slice of its time, the slice grown until the crop is about --bytes long: a valid trace
of the same kind, whose events run on past the slice's edges as real windows' do.

    /usr/bin/python3 scripts/fuzz/crop_seeds.py OUT_DIR TRACE.json.gz... [--bytes 60000] [--crops 2]

Writes OUT_DIR/crop_NAME_K.json (K-th slice: evenly spaced through the trace).
"""
import argparse
import gzip
import json
import os
import sys


def crop(doc, events, begin, end):
    kept = [e for e in events if e.get("ph") == "M" or begin <= e.get("ts", begin - 1) < end]
    out = {k: v for k, v in doc.items() if k != "traceEvents"}
    out["traceEvents"] = kept
    return json.dumps(out, separators=(",", ":"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("traces", nargs="+")
    ap.add_argument("--bytes", type=int, default=60000, help="about this long (the fuzzers' -max_len is 65536)")
    ap.add_argument("--crops", type=int, default=2, help="slices per trace")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    written = 0
    for path in a.traces:
        opener = gzip.open if path.endswith(".gz") else open
        try:
            with opener(path, "rt") as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            print(f"{path}: skipped ({e})", file=sys.stderr)
            continue
        events = [e for e in doc.get("traceEvents", []) if isinstance(e, dict)]
        timed = sorted(e["ts"] for e in events if isinstance(e.get("ts"), (int, float)) and e.get("ph") != "M")
        if not timed:
            continue
        name = os.path.basename(path).split(".")[0]
        for k in range(a.crops):
            # Start at the (k+1)/(crops+1) point of the events, then grow the slice by events.
            i = len(timed) * (k + 1) // (a.crops + 1)
            start = timed[i]
            lo, hi = 1, len(timed)
            best = None
            while lo <= hi:  # the most events after `start` that fit in --bytes
                mid = (lo + hi) // 2
                end = timed[min(i + mid, len(timed) - 1)] + (0 if i + mid < len(timed) else 1)
                text = crop(doc, events, start, end)
                if len(text) <= a.bytes:
                    best, lo = text, mid + 1
                else:
                    hi = mid - 1
            if best is None:
                continue
            with open(os.path.join(a.out, f"crop_{name}_{k}.json"), "w") as f:
                f.write(best)
            written += 1
    print(f"{written} crops in {a.out}")


if __name__ == "__main__":
    main()
