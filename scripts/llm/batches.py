#!/usr/bin/env python3
"""Splits the prompts replay_endpoint.py recorded into batch files a model answers blind,
and checks the answers that come back before they are served (scripts/llm/README.md).

  batches.py split PENDING.jsonl OUTDIR --batches N   # OUTDIR/system.txt, OUTDIR/batch-K.txt
  batches.py check ANSWERS.jsonl [PENDING.jsonl]       # every answer well-formed; none missing

A batch file holds only what ttap sends (the user message of each prompt, under its key);
the system message, the same for every prompt, is written once. Nothing else (no dataset,
no labels) goes into OUTDIR.
"""
import argparse
import json
import os
import re
import sys

KEYS = {"ids", "confidence", "explanation", "fix", "needs_more_context"}


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def split(args):
    rows = read_jsonl(args.pending)
    os.makedirs(args.outdir, exist_ok=True)
    systems = {r["system"] for r in rows}
    if len(systems) != 1:
        sys.exit("expected one system message, found %d" % len(systems))
    with open(os.path.join(args.outdir, "system.txt"), "w", encoding="utf-8") as f:
        f.write(systems.pop())
    n = max(1, args.batches)
    for b in range(n):
        part = rows[b::n]
        with open(os.path.join(args.outdir, "batch-%d.txt" % (b + 1)), "w", encoding="utf-8") as f:
            for r in part:
                f.write("=== PROMPT %s ===\n%s\n" % (r["key"], r["user"].rstrip("\n")))
        print("batch-%d.txt: %d prompts" % (b + 1, len(part)))


def catalog_ids(system):
    # The system message lists the catalog as "- id: name. Signature: ...".
    return set(re.findall(r"^- ([a-z0-9_]+): ", system, flags=re.M)) | {"none"}


def check(args):
    answers = read_jsonl(args.answers)
    pending = read_jsonl(args.pending) if args.pending else []
    ids = catalog_ids(pending[0]["system"]) if pending else None
    bad = 0
    seen = set()
    for a in answers:
        key, content = a.get("key"), a.get("content")
        if isinstance(content, str):
            try:
                content = json.loads(content)
            except ValueError as e:
                print("%s: content is not JSON: %s" % (key, e))
                bad += 1
                continue
        problems = []
        if not isinstance(content, dict) or set(content) != KEYS:
            problems.append("keys %s" % (sorted(content) if isinstance(content, dict) else type(content).__name__))
        else:
            if not isinstance(content["ids"], list) or not content["ids"]:
                problems.append("ids must be a non-empty list")
            elif ids and not set(content["ids"]) <= ids:
                problems.append("unknown ids %s" % sorted(set(content["ids"]) - ids))
            if not isinstance(content["confidence"], (int, float)) or not 0 <= content["confidence"] <= 1:
                problems.append("confidence must be 0..1")
            if not isinstance(content["needs_more_context"], bool):
                problems.append("needs_more_context must be a boolean")
        if problems:
            print("%s: %s" % (key, "; ".join(problems)))
            bad += 1
        seen.add(key)
    missing = [r["key"] for r in pending if r["key"] not in seen]
    print("%d answers, %d malformed, %d prompts without an answer" % (len(answers), bad, len(missing)))
    return 1 if bad or missing else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("split")
    s.add_argument("pending")
    s.add_argument("outdir")
    s.add_argument("--batches", type=int, default=4)
    c = sub.add_parser("check")
    c.add_argument("answers")
    c.add_argument("pending", nargs="?")
    args = ap.parse_args()
    sys.exit(split(args) if args.cmd == "split" else check(args))


if __name__ == "__main__":
    main()
