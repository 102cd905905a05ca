#!/usr/bin/env python3
"""Makes a large valid Kineto trace by replicating a real one.

Each copy of the source's events is shifted past the previous copy's end in time, and its
ids (correlation, External id, flow id, Python id / parent id) are shifted so that launch
links and Python parents stay unique and correct. Output is streamed: memory stays at the
size of the source trace whatever the target size.

    /usr/bin/python3 scripts/bench/make_big_trace.py SOURCE.json[.gz] OUT.json --size 1G [--gzip]
"""
import argparse
import gzip
import json
import subprocess

ID_ARGS = ("correlation", "External id", "external id", "Python id", "Python parent id", "Ev Idx")


def parse_size(text):
    units = {"K": 1e3, "M": 1e6, "G": 1e9}
    return int(float(text[:-1]) * units[text[-1].upper()]) if text[-1].upper() in units else int(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("source")
    ap.add_argument("out")
    ap.add_argument("--size", default="1G", help="target size of the JSON, e.g. 100M, 1G")
    ap.add_argument("--gzip", action="store_true", help="also write OUT.gz (gzip -1)")
    args = ap.parse_args()
    opener = gzip.open if args.source.endswith(".gz") else open
    with opener(args.source, "rt") as f:
        doc = json.load(f)
    events = doc["traceEvents"]
    timed = [e for e in events if isinstance(e.get("ts"), (int, float))]
    begin = min(e["ts"] for e in timed)
    end = max(e["ts"] + (e.get("dur") or 0) for e in timed)
    span = end - begin + 1000  # 1 ms between copies
    id_span = 0
    for e in events:
        a = e.get("args") or {}
        for k in ID_ARGS:
            if isinstance(a.get(k), int):
                id_span = max(id_span, a[k])
        if isinstance(e.get("id"), int):
            id_span = max(id_span, e["id"])
    id_span += 1
    target = parse_size(args.size)
    header = {k: v for k, v in doc.items() if k != "traceEvents"}
    written = 0
    copies = 0
    with open(args.out, "w") as out:
        out.write('{"traceEvents":[\n')
        first = True
        while written < target:
            t_off, i_off = copies * span, copies * id_span
            for e in events:
                if e.get("ph") == "M" and copies > 0:
                    continue  # metadata once is enough
                e2 = dict(e)
                if isinstance(e2.get("ts"), (int, float)):
                    e2["ts"] = e2["ts"] + t_off
                if isinstance(e2.get("id"), int):
                    e2["id"] += i_off
                a = e2.get("args")
                if isinstance(a, dict):
                    a = dict(a)
                    for k in ID_ARGS:
                        if isinstance(a.get(k), int):
                            a[k] += i_off
                    e2["args"] = a
                s = ("" if first else ",\n") + json.dumps(e2)
                first = False
                out.write(s)
                written += len(s)
            copies += 1
        out.write("\n]")
        for k, v in header.items():
            out.write(",\n%s: %s" % (json.dumps(k), json.dumps(v)))
        out.write("}\n")
    print("%s: %d copies of %s, %.1f MB" % (args.out, copies, args.source, written / 1e6))
    if args.gzip:
        subprocess.run("gzip -1 -k -f %s" % args.out, shell=True, check=True)


if __name__ == "__main__":
    main()
