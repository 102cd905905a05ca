#!/usr/bin/python3
"""What torch.profiler's Python tracer (with_stack=True) costs the host, measured.

Two parts:
  local  records the same small eager loop (nn.Module calls, small ops: the shape of host-bound
         code) without the profiler, under torch.profiler without stacks, with record_shapes,
         with stacks and with both, and prints per configuration: the median wall time per
         step, aten ops and python_function events per step, and the wall time added per aten
         op against the profiler without stacks. torch 1.13 CPU without kineto runs the legacy
         profiler: its with_stack walks the Python stack at each op and writes no
         python_function events.
  traces reads recorded traces (e.g. tests/data/gpu_zoo/*.json.gz) and prints the same trace
         figures per trace: whether it has python_function events, per step on the thread that
         runs ProfilerStep: python_function events, top-level aten ops, host time per
         top-level aten op, and the leaf built-in median.

    /usr/bin/python3 scripts/bench/tracer_overhead.py local [--steps 30]
    /usr/bin/python3 scripts/bench/tracer_overhead.py traces tests/data/gpu_zoo/*.json.gz

Run by hand (a benchmark, not a test). torch 1.13 CPU for `local`; `traces` needs no torch.
"""
import argparse
import bisect
import gzip
import json
import os
import statistics
import sys
import tempfile
import time


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def steps_of(events):
    """ProfilerStep spans on the host (cpu_op / user_annotation, not the GPU-side copies)."""
    out = [e for e in events if e.get("ph") == "X" and e.get("name", "").startswith("ProfilerStep#")
           and e.get("cat") in ("cpu_op", "user_annotation")]
    return out


def trace_figures(doc):
    """Per-step figures of the thread that runs ProfilerStep."""
    raw = doc["traceEvents"] if isinstance(doc, dict) else doc  # some exports are a bare list
    events = [e for e in raw if e.get("ph") == "X" and "dur" in e]
    steps = steps_of(events)
    if not steps:
        return None
    tid = steps[0]["tid"]
    steps = [s for s in steps if s["tid"] == tid]
    span = [(s["ts"], s["ts"] + s["dur"]) for s in steps]

    def inside(e):
        return e["tid"] == tid and any(a <= e["ts"] and e["ts"] + e["dur"] <= b for a, b in span)

    ops = sorted((e for e in events if e.get("cat") == "cpu_op" and inside(e)
                  and not e["name"].startswith("ProfilerStep#")), key=lambda e: (e["ts"], -e["dur"]))
    top, end = [], -1.0
    for e in ops:  # top-level aten ops: not inside an earlier op
        if e["ts"] >= end:
            top.append(e)
            end = e["ts"] + e["dur"]
    py = [e for e in events if e.get("cat") == "python_function" and inside(e)]
    # A leaf: no python_function starts inside it on its thread.
    py_sorted = sorted(py, key=lambda e: e["ts"])
    leaf_builtin = []
    for i, e in enumerate(py_sorted):
        if not e["name"].startswith("<built-in"):
            continue
        nxt = py_sorted[i + 1] if i + 1 < len(py_sorted) else None
        if nxt is None or nxt["ts"] >= e["ts"] + e["dur"]:
            leaf_builtin.append(e["dur"])
    # Leaf built-ins that call no aten op either (len, isinstance, getattr...): their recorded
    # duration is tracer time plus a few tens of ns.
    op_starts = sorted(e["ts"] for e in ops)
    pure = []
    for i, e in enumerate(py_sorted):
        if not e["name"].startswith("<built-in"):
            continue
        nxt = py_sorted[i + 1] if i + 1 < len(py_sorted) else None
        if nxt is not None and nxt["ts"] < e["ts"] + e["dur"]:
            continue
        j = bisect.bisect_left(op_starts, e["ts"])
        if j < len(op_starts) and op_starts[j] < e["ts"] + e["dur"]:
            continue
        pure.append(e["dur"])
    # The host's own time between ops: gaps between consecutive top-level ops inside a step
    # (Python glue; with stacks, traced Python glue), median so that waits do not count.
    gaps = [b["ts"] - (a["ts"] + a["dur"]) for a, b in zip(top, top[1:])
            if any(x <= a["ts"] and b["ts"] <= y for x, y in span)]
    n = len(steps)
    step_time = sum(s["dur"] for s in steps)
    top_time = sum(e["dur"] for e in top)
    return {
        "steps": n,
        "step_us": step_time / n,
        "py_per_step": len(py) / n,
        "top_ops_per_step": len(top) / n,
        "all_ops_per_step": len(ops) / n,
        "top_op_mean_us": top_time / max(1, len(top)),
        "between_ops_per_step_us": (step_time - top_time) / n,
        "gap_median_us": statistics.median(gaps) if gaps else 0.0,
        "top_op_median_us": statistics.median(e["dur"] for e in top) if top else 0.0,
        "leaf_builtin_median_us": statistics.median(leaf_builtin) if leaf_builtin else None,
        "pure_builtin_median_us": statistics.median(pure) if pure else None,
        "pure_builtin_count": len(pure),
    }


def local(args):
    import torch
    import torch.nn as nn
    from torch.profiler import ProfilerActivity, profile

    torch.manual_seed(0)
    torch.set_num_threads(1)

    class Block(nn.Module):  # small tensors: host-bound, like eager dispatch of a small model
        def __init__(self, c):
            super().__init__()
            self.lin = nn.Linear(c, c)
            self.norm = nn.LayerNorm(c)
            self.act = nn.ReLU()

        def forward(self, x):
            return x + self.act(self.norm(self.lin(x)))

    model = nn.Sequential(*[Block(16) for _ in range(24)], nn.Linear(16, 4)).eval()
    x = torch.randn(4, 16)

    def step():
        with torch.no_grad():
            return model(x).sum().item()

    def timed(n):
        walls = []
        for _ in range(n):
            t0 = time.perf_counter()
            step()
            walls.append((time.perf_counter() - t0) * 1e6)
        return statistics.median(walls)

    for _ in range(50):
        step()
    print(f"torch {torch.__version__}, kineto available: {torch.autograd.kineto_available()}")
    configs = [("no profiler", None),
               ("profiler, no stacks", dict()),
               ("record_shapes", dict(record_shapes=True)),
               ("with_stack", dict(with_stack=True)),
               ("with_stack + record_shapes", dict(with_stack=True, record_shapes=True))]
    print("| configuration | median wall/step us | aten ops/step | python_function events/step |"
          " added wall per aten op us (vs profiler, no stacks) |")
    print("|---|---|---|---|---|")
    base = None
    for label, kw in configs:
        if kw is None:
            wall, ops, py = timed(args.steps), 0, 0
        else:
            with profile(activities=[ProfilerActivity.CPU], **kw) as prof:
                wall = timed(args.steps)
            evs = prof.events()
            ops = sum(1 for e in evs if e.name.startswith("aten::")) / args.steps
            py = sum(1 for e in evs if getattr(e, "device_type", None) is not None
                     and "python_function" in str(getattr(e, "device_type", ""))) / args.steps
        if label == "profiler, no stacks":
            base = (wall, ops)
        added = f"{(wall - base[0]) / ops:.2f}" if base and ops and label != "profiler, no stacks" else ""
        print(f"| {label} | {wall:.1f} | {ops:.0f} | {py:.0f} | {added} |")


def traces(args):
    print("| trace | python_function/step | python_function per top op | steps | step ms | top aten ops/step |"
          " median top op us | median gap between top ops us | between top ops ms/step |"
          " leaf built-in median us | pure built-in median us (n) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for path in args.paths:
        fig = trace_figures(load(path))
        name = os.path.basename(path).split(".")[0]
        if fig is None:
            print(f"| {name} | no ProfilerStep |")
            continue
        med = fig["leaf_builtin_median_us"]
        pure = fig["pure_builtin_median_us"]
        print(f"| {name} | {fig['py_per_step']:.0f} | {fig['py_per_step'] / max(1, fig['top_ops_per_step']):.1f} | "
              f"{fig['steps']} | {fig['step_us'] / 1e3:.2f} | "
              f"{fig['top_ops_per_step']:.0f} | {fig['top_op_median_us']:.1f} | {fig['gap_median_us']:.1f} | "
              f"{fig['between_ops_per_step_us'] / 1e3:.2f} | {'' if med is None else f'{med:.2f}'} | "
              f"{'' if pure is None else f'{pure:.2f}'} ({fig['pure_builtin_count']}) |")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("local")
    a.add_argument("--steps", type=int, default=30)
    b = sub.add_parser("traces")
    b.add_argument("paths", nargs="+")
    args = p.parse_args()
    {"local": local, "traces": traces}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
