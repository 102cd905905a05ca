#!/usr/bin/env python3
"""Makes a large valid Kineto trace by replicating a real one.

Each copy of the source's events is shifted past the previous copy's end in time (plus
1 ms), and its ids (External id / external id, correlation, flow "id", Python id /
Python parent id, Ev Idx, Sequence number, Record function id) are shifted past the
previous copy's largest id, so launch links, flows and Python parents stay unique and
correct. Metadata ("ph": "M") events are written once. The top-level keys other than
traceEvents (schemaVersion, deviceProperties, distributedInfo, ...) are kept, in the
source's order around traceEvents.

The output holds whole copies only, as many as come nearest to --size. It is streamed,
one json.dumps per event: memory stays at the size of the parsed
source whatever the target size.

    /usr/bin/python3 scripts/bench/make_big_trace.py OUT.json --size 1G [--gzip] [--source SRC.json.gz]
"""
import argparse
import gzip
import json
import math
import os
import shutil
import subprocess
import sys
import time

DEFAULT_SOURCE = "/work/shared/traces/public/kineto_resnet50_v100_nw0.json.gz"
FALLBACK_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "data",
                               "kineto_resnet50_v100_nw0.json.gz")
ID_ARGS = ("correlation", "External id", "external id", "Python id", "Python parent id", "Ev Idx",
           "Sequence number", "Record function id")


def parse_size(text):
    units = {"K": 10**3, "M": 10**6, "G": 10**9}
    t = text.strip().upper().rstrip("B")
    if t and t[-1] in units:
        return int(float(t[:-1]) * units[t[-1]])
    return int(t)


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", help="output .json path")
    ap.add_argument("--source", default=None,
                    help="trace to replicate, .json or .json.gz (default: %s)" % DEFAULT_SOURCE)
    ap.add_argument("--size", default="1G", help="target size of the JSON, e.g. 100M, 1G, 2G (default 1G)")
    ap.add_argument("--gzip", action="store_true", help="also write OUT.gz (gzip -1)")
    args = ap.parse_args()

    source = args.source or (DEFAULT_SOURCE if os.path.exists(DEFAULT_SOURCE) else FALLBACK_SOURCE)
    t0 = time.time()
    opener = gzip.open if source.endswith(".gz") else open
    with opener(source, "rt", encoding="utf-8") as f:
        doc = json.load(f)
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        sys.exit("%s: not a {\"traceEvents\": [...]} trace" % source)
    events = doc["traceEvents"]

    timed = [e for e in events if isinstance(e, dict) and is_num(e.get("ts"))]
    begin = min(e["ts"] for e in timed)
    end = max(e["ts"] + (e.get("dur") if is_num(e.get("dur")) else 0) for e in timed)
    # Integer microseconds, so copies of integer timestamps stay integers.
    t_span = int(math.ceil(end - begin)) + 1000
    id_max = 0
    for e in events:
        if not isinstance(e, dict):
            continue
        a = e.get("args")
        if isinstance(a, dict):
            for k in ID_ARGS:
                if is_int(a.get(k)):
                    id_max = max(id_max, a[k])
        if is_int(e.get("id")):
            id_max = max(id_max, e["id"])
    id_span = id_max + 1

    # Per event, which fields need shifting: decided once, applied per copy.
    plan = []
    for e in events:
        if not isinstance(e, dict):
            plan.append((e, False, False, ()))
            continue
        a = e.get("args")
        arg_keys = tuple(k for k in ID_ARGS if isinstance(a, dict) and is_int(a.get(k)))
        plan.append((e, is_num(e.get("ts")), is_int(e.get("id")), arg_keys))
    meta = [p for p in plan if isinstance(p[0], dict) and p[0].get("ph") == "M"]
    body = [p for p in plan if not (isinstance(p[0], dict) and p[0].get("ph") == "M")]

    keys = list(doc.keys())
    te = keys.index("traceEvents")
    before, after = keys[:te], keys[te + 1:]

    target = parse_size(args.size)
    written = 0
    copies = 0
    dumps = json.dumps
    with open(args.out, "w", encoding="ascii", buffering=1 << 22) as out:
        def put(s):
            nonlocal written
            out.write(s)
            written += len(s)

        put("{\n")
        for k in before:
            put("%s: %s,\n" % (dumps(k), dumps(doc[k])))
        put('"traceEvents": [\n')
        first = True
        for e, _, _, _ in meta:
            put(("" if first else ",\n") + dumps(e))
            first = False
        # Whole copies only (a cut copy would leave launches without their kernels): as
        # many as come nearest to the target size.
        copy_bytes = None
        while copies == 0 or written + copy_bytes / 2 < target:
            before_copy = written
            t_off, i_off = copies * t_span, copies * id_span
            parts = []
            for e, has_ts, has_id, arg_keys in body:
                if copies == 0 or not (has_ts or has_id or arg_keys):
                    parts.append(dumps(e))
                    continue
                e2 = dict(e)
                if has_ts:
                    e2["ts"] = e["ts"] + t_off
                if has_id:
                    e2["id"] = e["id"] + i_off
                if arg_keys:
                    a = dict(e["args"])
                    for k in arg_keys:
                        a[k] += i_off
                    e2["args"] = a
                parts.append(dumps(e2))
            if parts:
                put(("" if first else ",\n") + ",\n".join(parts))
                first = False
            copies += 1
            copy_bytes = written - before_copy
        put("\n]")
        for k in after:
            put(",\n%s: %s" % (dumps(k), dumps(doc[k])))
        put("\n}\n")
    print("%s: %d copies of %s (%d events each), %.1f MB in %.1f s" %
          (args.out, copies, os.path.basename(source), len(body), written / 1e6, time.time() - t0))
    if args.gzip:
        t1 = time.time()
        gz = args.out + ".gz"
        if shutil.which("gzip"):
            with open(gz, "wb") as f:
                subprocess.run(["gzip", "-1", "-c", args.out], stdout=f, check=True)
        else:
            with open(args.out, "rb") as src, gzip.open(gz, "wb", compresslevel=1) as dst:
                shutil.copyfileobj(src, dst, 1 << 22)
        print("%s: %.1f MB in %.1f s" % (gz, os.path.getsize(gz) / 1e6, time.time() - t1))


if __name__ == "__main__":
    main()
