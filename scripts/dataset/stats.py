#!/usr/bin/python3
"""Counts of a labeled corpus (manifest.jsonl) as Markdown tables; with --readme, replaces
the block between the stats markers of that README.

  stats.py data/ttap-bench [--readme data/ttap-bench/README.md]"""

import argparse
import collections
import json
import os
import sys

BEGIN, END = "<!-- stats:begin -->", "<!-- stats:end -->"


def table(title, counter_by_row, columns, total=True):
    rows = sorted(counter_by_row)
    extra = ["total"] if total else []
    out = [f"**{title}**", "", "| " + " | ".join([""] + columns + extra) + " |",
           "|" + "---|" * (len(columns) + 1 + len(extra))]
    for r in rows:
        c = counter_by_row[r]
        tot = [str(sum(c.values()))] if total else []
        out.append("| " + " | ".join([str(r)] + [str(c.get(k, 0)) for k in columns] + tot) + " |")
    return "\n".join(out) + "\n"


def stats(corpus):
    with open(os.path.join(corpus, "manifest.jsonl")) as f:
        lines = [json.loads(x) for x in f if x.strip()]
    by = lambda key: collections.defaultdict(collections.Counter)  # noqa: E731
    task, split, hw, src, bg = by(0), by(0), by(0), by(0), by(0)
    ids = collections.defaultdict(collections.Counter)
    total_bytes = 0
    for ln in lines:
        task[ln["task"]][ln["label"]] += 1
        split[ln["split"]][ln["label"]] += 1
        hw[ln["hardware"]][ln["label"]] += 1
        src[ln.get("source", "?")][ln["label"]] += 1
        if "background" in ln:  # sets split by background (data/ttap-bench-x)
            bg[f'{ln["background"].split(".")[0]} ({ln["split"]})'][ln["label"]] += 1
        for t in {r["type"] for r in ln["anti_patterns"]}:
            ids[t][ln["split"]] += 1
        for r in ln["anti_patterns"]:
            ids[r["type"]]["ranges"] += 1
        total_bytes += os.path.getsize(os.path.join(corpus, ln["trace"]))
    labels = ["good", "bad"]
    parts = [f"{len(lines)} traces, {total_bytes / 1e6:.1f} MB of gzipped traces, "
             f"{len(ids)} anti-pattern ids.\n",
             table("By task", task, labels), table("By split", split, labels),
             table("By platform (hardware field)", hw, labels), table("By origin", src, labels)]
    if bg:
        parts.append(table("By background (split)", bg, labels))
    parts.append(table("By anti-pattern id (traces per split; labeled ranges)", ids, ["train", "val", "test", "ranges"],
                       total=False))
    return "\n".join(parts)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("corpus")
    p.add_argument("--readme")
    a = p.parse_args(argv)
    text = stats(a.corpus)
    if not a.readme:
        print(text)
        return 0
    with open(a.readme) as f:
        readme = f.read()
    if BEGIN not in readme or END not in readme:
        print(f"stats.py: error: {a.readme} has no {BEGIN} ... {END} block", file=sys.stderr)
        return 2
    head, rest = readme.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    with open(a.readme, "w") as f:
        f.write(head + BEGIN + "\n" + text + END + tail)
    return 0


if __name__ == "__main__":
    sys.exit(main())
