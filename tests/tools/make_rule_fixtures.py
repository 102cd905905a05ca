#!/usr/bin/python3
"""Fixtures for the rule detectors' tests (tests/rules_test.cpp): real public traces from
tests/data, edited where no public trace shows a pattern. What each edit does and why it
keeps the trace valid is in tests/data/rules/README.md. Deterministic: same inputs, same
outputs.

  /usr/bin/python3 tests/tools/make_rule_fixtures.py   # writes tests/data/rules/*.json.gz
"""

import gzip
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
DATA = os.path.join(ROOT, "tests", "data")
OUT = os.path.join(DATA, "rules")
SURGERY = os.path.join(ROOT, "scripts", "dataset", "surgery.py")


def load(name):
    with gzip.open(os.path.join(DATA, name), "rt") as f:
        return json.load(f)


def write(doc, name):
    raw = json.dumps(doc, separators=(",", ":")).encode()
    # mtime=0: the same bytes every run.
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(gzip.compress(raw, 9, mtime=0))


def surgery(source, pattern, out_name, seed=1):
    """scripts/dataset/surgery.py (another agent's corpus tool) injects the pattern into the
    real trace as the mistake would record it: host time inserted, later events shifted."""
    out = os.path.join(OUT, out_name)
    r = subprocess.run([sys.executable, SURGERY, os.path.join(DATA, source), out, "--inject", pattern,
                        "--seed", str(seed)], capture_output=True, text=True, check=True)
    return json.loads(r.stdout.strip().splitlines()[-1])


def qwen_cast_churn():
    """Qwen1.5-0.5B (bf16) with each attention `.contiguous()` turned into a `.float()` cast:
    the same ops, times, kernels and correlation ids; only the names along the chain
    (python frame, aten::contiguous -> aten::to, aten::clone -> aten::_to_copy) and the
    destination dtype of aten::copy_ change. The copy kernel is the one casts use too."""
    doc = load("tracelens_qwen05b_h100.json.gz")
    ev = doc["traceEvents"]
    # Flows and instant events are not read by the rules; dropping them keeps the file small.
    ev = [e for e in ev if e.get("ph") not in ("s", "f") and e.get("cat") != "cpu_instant_event"]
    cpu = sorted((e for e in ev if e.get("cat") in ("cpu_op", "python_function")),
                 key=lambda e: (e["ts"], -e.get("dur", 0)))
    renamed = 0
    for i, e in enumerate(cpu):
        if e["name"] != "aten::contiguous":
            continue
        end = e["ts"] + e["dur"]
        inside = [c for c in cpu[i + 1:i + 8] if c["ts"] >= e["ts"] and c["ts"] + c["dur"] <= end]
        clone = next((c for c in inside if c["name"] == "aten::clone"), None)
        copy = next((c for c in inside if c["name"] == "aten::copy_"), None)
        if clone is None or copy is None:
            continue
        e["name"] = "aten::to"
        clone["name"] = "aten::_to_copy"
        types = copy["args"].get("Input type")
        if types:
            types[0] = "float"  # copy_(dst: float, src: bf16) is a cast
        renamed += 1
    for e in ev:
        if e.get("cat") == "python_function" and e["name"].startswith("<built-in method contiguous"):
            e["name"] = e["name"].replace("method contiguous", "method float")
    doc["traceEvents"] = ev
    write(doc, "qwen05b_h100_cast_churn.json.gz")
    return renamed


def vit_graph_breaks():
    """ViT (H100) as if torch.compile had compiled layers 0-4 and 6-11 and broken the graph at
    layer 5: two "Torch-Compiled Region" cpu_op spans wrap whole sibling layer frames (1 ns
    margins, so nesting stays exact), layer 5 runs eagerly between them."""
    doc = load("tracelens_vit_nsfw_h100.json.gz")
    ev = doc["traceEvents"]
    layers = {}
    for e in ev:
        if e.get("cat") == "python_function" and e["name"].startswith("nn.Module: ViTLayer_"):
            layers[int(e["name"].rsplit("_", 1)[1])] = e
    assert sorted(layers) == list(range(12)), sorted(layers)
    next_ext = max(int(e.get("args", {}).get("External id", 0)) for e in ev) + 1
    for k, (first, last) in enumerate(((0, 4), (6, 11))):
        a, b = layers[first], layers[last]
        ts = round(a["ts"] - 0.001, 3)
        ev.append({"ph": "X", "cat": "cpu_op", "name": f"Torch-Compiled Region: {k}/0", "pid": a["pid"],
                   "tid": a["tid"], "ts": ts, "dur": round(b["ts"] + b["dur"] + 0.001 - ts, 3),
                   "args": {"External id": next_ext + k, "Record function id": 0, "Ev Idx": 0}})
    write(doc, "vit_nsfw_h100_graph_breaks.json.gz")


def main():
    os.makedirs(OUT, exist_ok=True)
    print("cast_churn: renamed", qwen_cast_churn(), "contiguous chains")
    vit_graph_breaks()
    for pattern in ("offload_pingpong", "alloc_churn", "cpu_bound_step", "gpu_idle", "host_sync"):
        m = surgery("tracelens_vit_nsfw_h100.json.gz", pattern, f"vit_nsfw_h100_{pattern}.json.gz")
        print(pattern, json.dumps(m["anti_patterns"]))


if __name__ == "__main__":
    main()
