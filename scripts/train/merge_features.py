#!/usr/bin/python3
"""One training index over several `ttap features` folders, each with a split rule, so that
train.py can train and select on more than one labeled set (models/MODEL_CARD.md, fourth
round):

  merge_features.py -o /tmp/both FEAT_A[:RULE] FEAT_B[:RULE] ...

RULE keeps a folder's splits as they are ("all", the default) or keeps only the named ones,
e.g. "test" (only its test split) or "train,val". Each line gets "set": NAME when the spec
is NAME=FEAT[:RULE], else the folder's name (train.py reports val per set and can select
on it). Writes OUT/index.jsonl whose folders are
absolute paths into the inputs (nothing is copied)."""
import argparse
import json
import os
import sys


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-o", "--out", required=True)
    ap.add_argument("inputs", nargs="+", help="[NAME=]FEAT[:splits,...]")
    a = ap.parse_args(argv)
    os.makedirs(a.out, exist_ok=True)
    rows = []
    for spec in a.inputs:
        name, eq, rest = spec.partition("=")
        if not eq:
            name, rest = "", spec
        path, _, rule = rest.partition(":")
        name = name or os.path.basename(os.path.normpath(path))
        keep = None if rule in ("", "all") else set(rule.split(","))
        with open(os.path.join(path, "index.jsonl")) as f:
            for line in f:
                if not line.strip():
                    continue
                r = json.loads(line)
                if keep is not None and r.get("split") not in keep:
                    continue
                folder = r["folder"]
                r["folder"] = folder if os.path.isabs(folder) else os.path.abspath(os.path.join(path, folder))
                r.setdefault("set", name)
                rows.append(r)
    with open(os.path.join(a.out, "index.jsonl"), "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    counts = {}
    for r in rows:
        counts[r.get("split")] = counts.get(r.get("split"), 0) + 1
    print(f"{len(rows)} traces in {os.path.join(a.out, 'index.jsonl')}: {counts}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
