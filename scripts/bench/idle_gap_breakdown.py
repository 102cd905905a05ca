#!/usr/bin/python3
"""What the host was doing in the GPU idle gaps the rules leave to gpu_idle (issue 12 item 1).

Runs `ttap analyze --scorer rules --top-k 100 --flag-spacing 0 --format json` on every trace of
the given datasets (a folder with manifest.jsonl) or trace files, so that every window of each
trace's steady state is judged, and sums, over the windows (they do not overlap), the parts of
the idle that gpu_idle's evidence line "the host in those gaps: ..." gives (and, with the tenth
round, launch_bound's line for the long gaps it takes: "... of at least 200 us ... dispatching
ops"). Prints a Markdown table: per set, the idle gpu_idle reports and its parts.

    /usr/bin/python3 scripts/bench/idle_gap_breakdown.py --ttap build/ttap /work/gpuzoo/dev ...

Run by hand (a benchmark, not a test); with --label LABEL only the manifest lines of that label
(good, bad) are read.
"""
import argparse
import json
import os
import re
import subprocess
import sys

UNIT = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}
# The parts, in the words of idle_parts_text (src/rules/idle_causes.cpp), and the short names
# the table uses.
KINDS = [
    ("with nothing recorded on the host", "nothing recorded"),
    ("dispatching ops that launch GPU work", "dispatching ops"),
    ("in slow ops, at least", "slow op that launches"),
    ("with work already launched and queued", "work queued, not started"),
    ("in the optimizer step's or zero_grad's ops", "optimizer ops"),
    ("in ops that launch nothing", "ops that launch nothing"),
    ("in profiled frames with no op under them", "frames, no op"),
    ("in synchronizing or allocator calls", "sync/allocator calls"),
    ("in lazy CUDA module loading", "module loading"),
]
PART = re.compile(r"([0-9.]+) (ns|us|ms|s) (.*)")


def traces_of(arg, label):
    if os.path.isdir(arg):
        with open(os.path.join(arg, "manifest.jsonl")) as f:
            for line in f:
                if not line.strip():
                    continue
                m = json.loads(line)
                if label and m.get("label") != label:
                    continue
                yield os.path.join(arg, m["trace"])
    else:
        yield arg


def parts_of(line):
    """{short kind: ms} of a "the host in those gaps: A; B; ..." line."""
    out = {}
    body = line.split(": ", 1)[1]
    for part in body.split("; "):
        m = PART.match(part)
        if not m:
            continue
        ms = float(m.group(1)) * UNIT[m.group(2)]
        for words, short in KINDS:
            if m.group(3).startswith(words):
                out[short] = out.get(short, 0.0) + ms
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ttap", default="build/ttap")
    ap.add_argument("--label", default=None)
    ap.add_argument("sets", nargs="+")
    a = ap.parse_args()
    rows = []
    for s in a.sets:
        idle = 0.0
        by_owner = {}  # (finding id, kind) -> ms
        n = 0
        for trace in traces_of(s, a.label):
            n += 1
            r = subprocess.run([a.ttap, "analyze", trace, "--scorer", "rules", "--top-k", "100", "--flag-spacing", "0",
                                "--fail-on", "none", "--format", "json", "--threads", "1"],
                               capture_output=True, text=True)
            if r.returncode != 0:
                print(f"{trace}: ttap exit {r.returncode}: {r.stderr.strip()}", file=sys.stderr)
                continue
            for tr in json.loads(r.stdout)["traces"]:
                for w in tr["flagged_windows"]:
                    if w["scope"] == "steady_state":
                        continue
                    for f in w["findings"]:
                        for line in f["evidence"]:
                            if line.startswith("the host in those gaps: ") or line.startswith("the host in the long gaps: "):
                                for kind, ms in parts_of(line).items():
                                    by_owner[(f["id"], kind)] = by_owner.get((f["id"], kind), 0.0) + ms
                                    idle += ms
            print(f"{trace}: done", file=sys.stderr)
        rows.append((s, n, idle, by_owner))
    print("| set | traces | long-gap idle read (ms) | " + " | ".join(k for _, k in KINDS) + " |")
    print("|---|---|---|" + "---|" * len(KINDS))
    for s, n, idle, by in rows:
        cells = []
        for _, k in KINDS:
            owners = sorted(((ms, fid) for (fid, kk), ms in by.items() if kk == k), reverse=True)
            total = sum(ms for ms, _ in owners)
            who = ", ".join(f"{fid} {ms:.1f}" for ms, fid in owners) if len(owners) > 1 else ""
            cells.append(f"{total:.1f} ({100 * total / idle if idle else 0:.0f}%)" + (f" [{who}]" if who else ""))
        print(f"| {s} | {n} | {idle:.1f} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
