#!/usr/bin/python3
"""Moves the ttap_label::<id> spans out of a zoo trace into a manifest line.

The zoo wraps each injected region in record_function("ttap_label::<id>"). This step
deletes those spans (and their GPU-side twins, gpu_user_annotation, on CUDA traces) so
the saved trace carries no label, and records each as {"type", "ts_begin", "ts_end"} in the
trace's own microseconds. On traces with GPU activity a range is extended to where the
pattern shows on the device (data/ttap-bench/README.md, "Label ranges"):
  1. to the end of the GPU work launched from inside the span (runtime calls on the span's
     thread, matched to kernels/copies/memsets by correlation id);
  2. then, if the GPU is idle at that point, through the idle gap to the next GPU event,
     since a host stall shows on the device only once the queue drains; by at most 1 ms,
     as a longer gap has another cause (the next host work).

  label.py RAW.json RUN.json OUT.json.gz --trace-path traces/NAME.json.gz --split train \
      [--manifest manifest.jsonl]
prints the manifest line (and appends it to --manifest)."""

import argparse
import bisect
import gzip
import json
import sys

LABEL_PREFIX = "ttap_label::"
GPU_CATS = {"kernel", "Kernel", "gpu_memcpy", "Memcpy", "gpu_memset", "Memset"}
LAUNCH_CATS = {"cuda_runtime", "cuda_driver", "Runtime"}
MAX_IDLE_TAIL_US = 1000.0


class LabelError(Exception):
    pass


def events_of(doc):
    return doc if isinstance(doc, list) else doc["traceEvents"]


def take_labels(events):
    """Splits events into (label spans, the rest). B/E pairs are matched per thread."""
    spans, rest, open_spans = [], [], {}
    for e in events:
        name = e.get("name", "")
        if not isinstance(name, str) or not name.startswith(LABEL_PREFIX):
            rest.append(e)
            continue
        pattern = name[len(LABEL_PREFIX):]
        if e.get("cat") == "gpu_user_annotation":
            continue  # the device-side copy of a host span: dropped, the host span counts
        ph = e.get("ph")
        key = (e.get("pid"), e.get("tid"), pattern)
        if ph == "X":
            spans.append({"type": pattern, "b": float(e["ts"]), "e": float(e["ts"]) + float(e.get("dur", 0)),
                          "pid": e.get("pid"), "tid": e.get("tid")})
        elif ph == "B":
            open_spans.setdefault(key, []).append(float(e["ts"]))
        elif ph == "E":
            if not open_spans.get(key):
                raise LabelError(f"unmatched end of {name}")
            b = open_spans[key].pop()
            spans.append({"type": pattern, "b": b, "e": float(e["ts"]), "pid": e.get("pid"), "tid": e.get("tid")})
    for key, left in open_spans.items():
        if left:
            raise LabelError(f"unterminated label span {key}")
    return spans, rest


def gpu_intervals(events):
    out = []
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in GPU_CATS:
            out.append((float(e["ts"]), float(e["ts"]) + float(e.get("dur", 0))))
    out.sort()
    return out


def extend_to_device(span, events, gpu, by_correlation):
    """Extends one span as the module docstring says; returns (begin, end)."""
    b, end = span["b"], span["e"]
    for e in events:
        if e.get("cat") not in LAUNCH_CATS or e.get("ph") != "X":
            continue
        if e.get("pid") != span["pid"] or e.get("tid") != span["tid"]:
            continue
        ts = float(e["ts"])
        if ts < b or ts > span["e"]:
            continue
        corr = (e.get("args") or {}).get("correlation")
        for g in by_correlation.get(corr, ()):
            end = max(end, float(g["ts"]) + float(g.get("dur", 0)))
    if gpu:
        starts = [s for s, _ in gpu]
        # Busy at `end` if some interval started at or before it and ends after it.
        busy = any(s <= end < f for s, f in gpu[max(0, bisect.bisect_right(starts, end) - 64):
                                                  bisect.bisect_right(starts, end)])
        if not busy:
            i = bisect.bisect_right(starts, end)
            if i < len(starts):
                end = min(starts[i], end + MAX_IDLE_TAIL_US)
    return b, end


def label_trace(doc):
    """Removes the labels from doc (in place) and returns the ranges, sorted by begin."""
    events = events_of(doc)
    spans, rest = take_labels(events)
    gpu = gpu_intervals(rest)
    by_corr = {}
    if gpu:
        for e in rest:
            if e.get("cat") in GPU_CATS:
                by_corr.setdefault((e.get("args") or {}).get("correlation"), []).append(e)
    ranges = []
    for s in spans:
        b, end = extend_to_device(s, rest, gpu, by_corr) if gpu else (s["b"], s["e"])
        ranges.append({"type": s["type"], "ts_begin": round(b, 3), "ts_end": round(end, 3)})
    ranges.sort(key=lambda r: (r["ts_begin"], r["type"]))
    if isinstance(doc, list):
        doc[:] = rest
    else:
        doc["traceEvents"] = rest
    return ranges


def write_gz(doc, path):
    text = json.dumps(doc, separators=(",", ":"))
    if LABEL_PREFIX in text:
        raise LabelError(f"{path}: a label string survived the removal")
    # mtime=0: the same run gives the same bytes.
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, compresslevel=9) as f:
        f.write(text.encode())


def manifest_line(run, ranges, trace_path, split):
    injected = set(run["inject"])
    found = {r["type"] for r in ranges}
    if injected != found:
        raise LabelError(f"injected {sorted(injected)} but labeled {sorted(found)}")
    line = {"trace": trace_path, "label": "bad" if ranges else "good", "task": run["task"],
            "model": run["workload"], "mode": run["mode"], "hardware": run["hardware"],
            "software": run["software"], "split": split, "anti_patterns": ranges,
            "source": "zoo",
            "config": {k: run[k] for k in ("device", "batch", "size", "active_steps", "with_stack",
                                           "optimizer", "workers", "seed")}}
    return line


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("raw")
    p.add_argument("run")
    p.add_argument("out")
    p.add_argument("--trace-path", required=True, help="the trace's path as the manifest names it")
    p.add_argument("--split", required=True, choices=["train", "val", "test"])
    p.add_argument("--manifest", help="append the line to this file")
    a = p.parse_args(argv)
    try:
        with open(a.raw) as f:
            doc = json.load(f)
        with open(a.run) as f:
            run = json.load(f)
        ranges = label_trace(doc)
        line = manifest_line(run, ranges, a.trace_path, a.split)
        write_gz(doc, a.out)
    except (OSError, ValueError, KeyError, LabelError) as err:
        print(f"label.py: error: {err}", file=sys.stderr)
        return 2
    text = json.dumps(line)
    if a.manifest:
        with open(a.manifest, "a") as f:
            f.write(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
