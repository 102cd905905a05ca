#!/usr/bin/python3
"""Independent oracle for the expected numbers in tests/*_test.cpp.

Reads the test traces with Python's json module only (no ttap code) and prints every figure
the load/tree/analyze/cli suites assert on. Timestamps are parsed as Decimal from the JSON
text, so microsecond values with fractional parts convert to nanoseconds exactly
(round half up at the 4th decimal, the loader's documented rule).

    /usr/bin/python3 tests/tools/compute_expected.py [section...]
"""
import collections
import decimal
import gzip
import json
import os
import sys

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data")
M64 = (1 << 64) - 1


def load(name):
    with gzip.open(os.path.join(DATA, name), "rt") as f:
        d = json.load(f, parse_float=decimal.Decimal)
    return d, (d["traceEvents"] if isinstance(d, dict) else d)


def ns(us):
    """Microseconds (int or Decimal) -> integer ns, half up at the 4th decimal."""
    q = (decimal.Decimal(us) * 1000).quantize(decimal.Decimal(1), rounding=decimal.ROUND_HALF_UP)
    return int(q)


def norm_id(v):
    """pid/tid: numbers and numeric strings are one id; other text stays text."""
    if isinstance(v, str):
        s = v[1:] if v.startswith("-") else v
        if s.isdigit() and len(v) < 19:
            return int(v)
        return ("label", v)
    return int(v)


def section(title):
    print(f"\n== {title}")


GPU_CATS = {"kernel", "Kernel", "gpu_memcpy", "Memcpy", "gpu_memset", "Memset"}
LAUNCH_CATS = {"cuda_runtime", "Runtime", "cuda_driver"}
OP_CATS = {"cpu_op", "Operator"}


def load_section():
    section("load: kineto_resnet50_v100_nw0 (2021 schema)")
    d, ev = load("kineto_resnet50_v100_nw0.json.gz")
    kern = [e for e in ev if e.get("cat") == "Kernel"]
    print("kernel dur sum ns", sum(ns(e["dur"]) for e in kern))
    print("kernel ts sum ns mod 2^64", sum(ns(e["ts"]) for e in kern) & M64)
    tracks = set()
    for e in ev:
        if e["ph"] == "M":
            if e["name"] == "thread_name" and "name" in e.get("args", {}):
                tracks.add((norm_id(e["pid"]), norm_id(e["tid"])))
            continue
        tracks.add((norm_id(e["pid"]), norm_id(e["tid"])))
    print("tracks", len(tracks))
    gpu_tids = sorted({e["tid"] for e in ev if e.get("cat") in GPU_CATS})
    print("gpu tids", gpu_tids)
    print("gpu streams from args", sorted({e["args"].get("stream") for e in ev if e.get("cat") in GPU_CATS}))
    cpu_tids = sorted({(e["pid"], e["tid"]) for e in ev if e.get("cat") in OP_CATS | LAUNCH_CATS})
    print("cpu (pid, tid)", cpu_tids)
    mem = [e for e in ev if e["ph"] == "i" and e["name"] == "[memory]"]
    print("memory events", len(mem), "bytes sum", sum(e["args"]["Bytes"] for e in mem),
          "last total allocated", mem[-1]["args"].get("Total Allocated"), "last ts", ns(mem[-1]["ts"]))
    print("memory tid types", collections.Counter(type(e["tid"]).__name__ for e in mem))
    print("memory events per (pid, tid)", dict(collections.Counter((e["pid"], e["tid"]) for e in mem)))
    print("X events per (pid, tid, cat)", dict(collections.Counter((e["pid"], e["tid"], e.get("cat")) for e in ev if e["ph"] == "X")))
    fl = collections.Counter((e["ph"], e.get("cat")) for e in ev if e["ph"] in "stf")
    print("flows", dict(fl))
    rt = next(e for e in ev if e.get("cat") == "Runtime")
    print("first Runtime", rt["name"], ns(rt["ts"]), rt["args"].get("correlation"))
    print("deviceProperties[0]", d["deviceProperties"][0])

    section("load: hta_ddp_cnn_v100_nsres (float ns timestamps, collectives)")
    d, ev = load("hta_ddp_cnn_v100_nsres.json.gz")
    xs = [e for e in ev if e["ph"] == "X"]
    print("X events", len(xs))
    print("X ts sum ns mod 2^64", sum(ns(e["ts"]) for e in xs) & M64)
    print("X dur sum ns", sum(ns(e["dur"]) for e in xs))
    print("first X", xs[0]["name"], ns(xs[0]["ts"]), ns(xs[0]["dur"]))
    coll = [e for e in xs if "Collective name" in e.get("args", {})]
    print("collective events", len(coll), collections.Counter(e["args"]["Collective name"] for e in coll))
    print("collective cats", collections.Counter(e.get("cat") for e in coll))
    print("in msg nelems sum", sum(e["args"]["In msg nelems"] for e in coll))
    c0 = coll[0]
    print("first collective", c0["name"], c0.get("cat"), {k: c0["args"][k] for k in c0["args"] if k != "Ev Idx"})
    print("distributedInfo", {k: v for k, v in d["distributedInfo"].items() if k != "pg_config"})
    fl = collections.Counter((e["ph"], e.get("cat")) for e in ev if e["ph"] in "stf")
    print("flows", dict(fl), sum(fl.values()))

    section("load: hta_mi250_toy (ROCm)")
    d, ev = load("hta_mi250_toy.json.gz")
    m = next(e for e in ev if e.get("name") == "hipMemcpyWithStream")
    print("hipMemcpyWithStream", ns(m["ts"]), m["args"]["correlation"], m["args"]["stream"], m["args"]["size"])
    cp = [e for e in ev if e.get("cat") == "gpu_memcpy" and e["args"]["correlation"] == m["args"]["correlation"]]
    print("its memcpy", [(e["name"], ns(e["ts"]), ns(e["dur"]), e["args"]["device"], e["args"]["stream"]) for e in cp])
    print("hip names", collections.Counter(e["name"] for e in ev if e.get("cat") == "cuda_runtime"))
    print("devices", len(d["deviceProperties"]), d["deviceProperties"][0]["name"], d["deviceProperties"][0]["warpSize"])
    print("gpu (pid, tid)", sorted({(e["pid"], e["tid"]) for e in ev if e.get("cat") in GPU_CATS}))

    section("load: hta_cpu_only")
    d, ev = load("hta_cpu_only.json.gz")
    print("cats", collections.Counter(e.get("cat") for e in ev if e["ph"] == "X"))
    di = d["distributedInfo"]
    print("distributed", di["backend"], di["rank"], di["world_size"], len(di["pg_config"]))
    print("steps", [e["name"] for e in ev if e.get("name", "").startswith("ProfilerStep#")])

    section("load: tracelens_qwen05b_h100 (python_function)")
    d, ev = load("tracelens_qwen05b_h100.json.gz")
    py = [e for e in ev if e.get("cat") == "python_function"]
    print("python_function", len(py), "null parent", sum(e["args"].get("Python parent id") is None for e in py))
    ids = {e["args"]["Python id"] for e in py}
    print("parent id not in trace", sum(e["args"].get("Python parent id") is not None and e["args"]["Python parent id"] not in ids for e in py))
    for e in py[:3]:
        print("python", e["name"], ns(e["ts"]), e["args"]["Python id"], e["args"].get("Python parent id"))
    p100 = py[100]
    print("python[100]", p100["name"], p100["args"]["Python id"], p100["args"].get("Python parent id"))


def containment_parent(ev, launch):
    """Innermost cpu_op/Operator on the launch's thread containing the launch's start."""
    best = None
    for e in ev:
        if e.get("cat") in OP_CATS and e["ph"] == "X" and e["pid"] == launch["pid"] and e["tid"] == launch["tid"]:
            b, en = ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])
            if b <= ns(launch["ts"]) and ns(launch["ts"]) + ns(launch["dur"]) <= en:
                if best is None or ns(e["dur"]) < ns(best["dur"]):
                    best = e
    return best


def tree_section():
    section("tree: kineto_resnet50_v100_nw0 GEMM owners")
    d, ev = load("kineto_resnet50_v100_nw0.json.gz")
    launches = {e["args"]["correlation"]: e for e in ev if e.get("cat") == "Runtime" and "correlation" in e.get("args", {})}
    gemm = [e for e in ev if e.get("cat") == "Kernel" and "gemm" in e["name"].lower()]
    owners = collections.Counter()
    by_tid = collections.defaultdict(list)
    for e in ev:
        if e.get("cat") in OP_CATS and e["ph"] == "X":
            by_tid[(e["pid"], e["tid"])].append(e)
    for k in gemm:
        l = launches.get(k["args"]["correlation"])
        if l is None:
            owners["<no launch>"] += 1
            continue
        lb, le = ns(l["ts"]), ns(l["ts"]) + ns(l["dur"])
        cands = [o for o in by_tid[(l["pid"], l["tid"])] if ns(o["ts"]) <= lb and le <= ns(o["ts"]) + ns(o["dur"])]
        best = min(cands, key=lambda o: ns(o["dur"])) if cands else None
        owners[best["name"] if best else "<none>"] += 1
    print("gemm kernels", len(gemm), "names", collections.Counter(k["name"] for k in gemm).most_common(5))
    print("gemm owners", dict(owners))
    by_name = collections.Counter()
    for k in gemm:
        if not k["name"].startswith("volta_sgemm"):
            continue
        l = launches[k["args"]["correlation"]]
        lb, le = ns(l["ts"]), ns(l["ts"]) + ns(l["dur"])
        cands = [o for o in by_tid[(l["pid"], l["tid"])] if ns(o["ts"]) <= lb and le <= ns(o["ts"]) + ns(o["dur"])]
        by_name[(k["name"], min(cands, key=lambda o: ns(o["dur"]))["name"])] += 1
    print("volta_sgemm owners by kernel", dict(by_name))
    gpu = [e for e in ev if e.get("cat") in GPU_CATS]
    print("gpu events", len(gpu), "without launch", sum(e["args"].get("correlation") not in launches for e in gpu))
    steps = sorted((ns(e["ts"]), e["name"]) for e in ev if e.get("name", "").startswith("ProfilerStep#"))
    print("steps", [s[1] for s in steps])
    # GPU events launched inside each step (launch start inside the step's CPU span)
    spans = [(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), int(e["name"].split("#")[1])) for e in ev if e.get("name", "").startswith("ProfilerStep#")]
    per_step = collections.Counter()
    for g in gpu:
        l = launches.get(g["args"].get("correlation"))
        if l is None:
            continue
        for b, en, n in spans:
            if b <= ns(l["ts"]) < en:
                per_step[n] += 1
    print("gpu events launched per step", dict(sorted(per_step.items())))
    print("gpu events by launching thread", dict(collections.Counter(
        launches[g["args"]["correlation"]]["tid"] for g in gpu if g["args"].get("correlation") in launches)))
    unmatched = [e for e in launches.values() if e["args"]["correlation"] not in {g["args"].get("correlation") for g in gpu}]
    print("launch calls without GPU work", len(unmatched), dict(collections.Counter(e["name"] for e in unmatched)))

    section("tree: tracelens_vit_nsfw_h100")
    d, ev = load("tracelens_vit_nsfw_h100.json.gz")
    launches = {e["args"]["correlation"]: e for e in ev if e.get("cat") in LAUNCH_CATS and "correlation" in e.get("args", {})}
    gpu = [e for e in ev if e.get("cat") in GPU_CATS]
    print("gpu events", len(gpu), "without launch", sum(e["args"].get("correlation") not in launches for e in gpu),
          "launched by cuda_driver", sum(launches[e["args"]["correlation"]]["cat"] == "cuda_driver" for e in gpu))
    gcorr = {e["args"].get("correlation") for e in gpu}
    print("launch calls without GPU work", dict(collections.Counter(e["name"] for e in launches.values() if e["args"]["correlation"] not in gcorr)))
    ops = [e for e in ev if e.get("cat") == "cpu_op"]
    owners = collections.Counter()
    for g in gpu:
        l = launches[g["args"]["correlation"]]
        cands = [o for o in ops if o["tid"] == l["tid"] and ns(o["ts"]) <= ns(l["ts"]) and ns(l["ts"]) + ns(l["dur"]) <= ns(o["ts"]) + ns(o["dur"])]
        owners[(min(cands, key=lambda o: ns(o["dur"]))["name"] if cands else None, g["cat"])] += 1
    print("owners (innermost cpu_op containing the launch)", dict(owners))
    steps = [(e["name"], e.get("cat"), ns(e["ts"]), ns(e["dur"])) for e in ev if e.get("name", "").startswith("ProfilerStep#")]
    print("steps", steps)
    cpu_step = next(s for s in steps if s[1] == "user_annotation")
    inside = sum(1 for g in gpu if g["args"].get("correlation") in launches and
                 cpu_step[2] <= ns(launches[g["args"]["correlation"]]["ts"]) < cpu_step[2] + cpu_step[3])
    print("gpu events launched inside the CPU step", inside)

    section("tree: tracelens_qwen05b_h100 python parents")
    d, ev = load("tracelens_qwen05b_h100.json.gz")
    py = [e for e in ev if e.get("cat") == "python_function"]
    ids = collections.Counter(e["args"]["Python id"] for e in py)
    print("duplicate python ids", sum(1 for v in ids.values() if v > 1))
    linked = sum(1 for e in py if e["args"].get("Python parent id") in ids)
    print("python frames whose parent id is present", linked)


def analyze_section():
    section("analyze: DataLoader share per step, nw0 vs nw4")
    for name in ["kineto_resnet50_v100_nw0.json.gz", "kineto_resnet50_v100_nw4.json.gz"]:
        d, ev = load(name)
        steps = sorted((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e["name"]) for e in ev if e.get("name", "").startswith("ProfilerStep#"))
        dl = [(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in ev if "DataLoader" in e.get("name", "") and "__next__" in e["name"]]
        rows = []
        tot_d = tot_l = 0
        for b, en, n in steps:
            # DataLoader spans that start inside the step (they nest under it), merged.
            iv = sorted((s, t) for s, t in dl if b <= s < en)
            merged = []
            for s, t in iv:
                if merged and s <= merged[-1][1]:
                    merged[-1][1] = max(merged[-1][1], t)
                else:
                    merged.append([s, t])
            length = sum(t - s for s, t in merged)
            rows.append((n, en - b, length))
            tot_d += en - b
            tot_l += length
        print(name, rows, "share %.4f" % (tot_l / tot_d))
        # GPU busy and memcpy per step: union of GPU activity clipped to the step's span.
        def union(iv):
            out = []
            for s, t in sorted(iv):
                if t <= s:
                    continue
                if out and s <= out[-1][1]:
                    out[-1][1] = max(out[-1][1], t)
                else:
                    out.append([s, t])
            return out
        gpu = union([(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in ev if e.get("cat") in GPU_CATS])
        cp = union([(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in ev if e.get("cat") in ("Memcpy", "gpu_memcpy")])
        clip = lambda u, b, en: sum(max(0, min(t, en) - max(s, b)) for s, t in u)
        print("  gpu busy per step", [clip(gpu, b, en) for b, en, n in steps])
        print("  memcpy per step", [clip(cp, b, en) for b, en, n in steps])


def cli_section():
    section("cli: tracelens_vit_nsfw_h100 gpu scope")
    d, ev = load("tracelens_vit_nsfw_h100.json.gz")
    g = [e for e in ev if e.get("cat") == "gpu_user_annotation" and e["name"].startswith("ProfilerStep#")]
    print("gpu step annotations", [(e["name"], ns(e["ts"]), ns(e["dur"])) for e in g])
    lo, hi = ns(g[0]["ts"]), ns(g[0]["ts"]) + ns(g[0]["dur"])
    iv = sorted((max(ns(e["ts"]), lo), min(ns(e["ts"]) + ns(e["dur"]), hi)) for e in ev if e.get("cat") in GPU_CATS)
    merged = []
    for a, b in iv:
        if b <= a:
            continue
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    busy = sum(b - a for a, b in merged)
    print("gpu busy in scope ns", busy, "idle", (hi - lo) - busy, "comm/memcpy kernels",
          sum(1 for e in ev if e.get("cat") == "gpu_memcpy" or "nccl" in e["name"].lower()))
    print("overview: events (X + non-[memory] instants)",
          sum(1 for e in ev if e["ph"] == "X" or (e["ph"] in "iI" and e["name"] != "[memory]")),
          "gpu events", sum(1 for e in ev if e.get("cat") in GPU_CATS))
    # Python frames under the step: children of frame 15 (run_torch_profiler) inside the
    # step's span, and all their descendants by "Python parent id".
    kids = collections.defaultdict(list)
    for e in ev:
        if e.get("cat") == "python_function":
            kids[e["args"].get("Python parent id")].append(e)
    step = next(e for e in ev if e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep#"))
    sb, se = ns(step["ts"]), ns(step["ts"]) + ns(step["dur"])
    top = [e for e in kids[15] if sb <= ns(e["ts"]) and ns(e["ts"]) + ns(e["dur"]) <= se]
    print("step children (python frames, parent id 15)", [(e["name"], float(e["dur"])) for e in top])
    print("step grandchildren", sum(len(kids[e["args"]["Python id"]]) for e in top))
    n, todo = 0, list(top)
    while todo:
        e = todo.pop()
        n += 1
        todo.extend(kids[e["args"]["Python id"]])
    print("python frames under the step (by parent ids)", n)
    # Direct children of the CPU step on its thread: events contained in it with no other
    # contained event around them.
    same = [e for e in ev if e["ph"] == "X" and e["pid"] == step["pid"] and e["tid"] == step["tid"] and e is not step
            and e.get("cat") in {"cpu_op", "python_function", "cuda_runtime", "cuda_driver", "user_annotation"}]
    sb, se = ns(step["ts"]), ns(step["ts"]) + ns(step["dur"])
    inside = [e for e in same if sb <= ns(e["ts"]) and ns(e["ts"]) + ns(e["dur"]) <= se]
    print("events inside the CPU step on its thread", len(inside),
          collections.Counter(e.get("cat") for e in inside))
    addmm = [e for e in ev if e.get("name") == "aten::addmm"]
    print("aten::addmm", len(addmm))
    print("kernel names", len({e["name"] for e in ev if e.get("cat") == "kernel"}))


def shared_section():
    """Every trace in ../shared/traces/public (and the 8 DLRM ranks from the tarball)."""
    import tarfile
    shared = os.path.join(DATA, "..", "..", "..", "shared", "traces", "public")
    section("shared: " + os.path.normpath(shared))

    def figures(name, d):
        ev = d["traceEvents"] if isinstance(d, dict) else d
        events = sum(1 for e in ev if e.get("ph") in ("X", "B") or (e.get("ph") in ("i", "I") and e.get("name") != "[memory]"))
        memory = sum(1 for e in ev if e.get("ph") in ("i", "I") and e.get("name") == "[memory]")
        flows = sum(1 for e in ev if e.get("ph") in ("s", "t", "f"))
        gpu = [e for e in ev if e.get("ph") == "X" and e.get("cat") in GPU_CATS]
        gpu_ns = sum(ns(e["dur"]) for e in gpu)
        print(f'{{"{name}", {events}, {memory}, {flows}, {len(gpu)}, {gpu_ns}}},')

    for f in sorted(os.listdir(shared)):
        if f.endswith(".json.gz"):
            with gzip.open(os.path.join(shared, f), "rt") as fh:
                figures(f, json.load(fh, parse_float=decimal.Decimal))
    with tarfile.open(os.path.join(shared, "param_dlrm_v100_8ranks.tar.gz")) as tar:
        for m in sorted(tar.getmembers(), key=lambda m: m.name):
            if m.name.endswith(".json"):
                figures(os.path.basename(m.name), json.load(tar.extractfile(m), parse_float=decimal.Decimal))


def merged_length(intervals):
    total, end = 0, None
    for b, e in sorted(intervals):
        if end is None or b > end:
            total += e - b
            end = e
        elif e > end:
            total += e - end
            end = e
    return total


def union(intervals):
    """Sorted, disjoint [begin, end] lists covering the given intervals."""
    out = []
    for b, e in sorted(intervals):
        if out and b <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([b, e])
    return out


def uncovered(a, b):
    """Length of union a that union b does not cover."""
    covered = 0
    for ab, ae in a:
        for bb, be in b:
            if be > ab and bb < ae:
                covered += min(ae, be) - max(ab, bb)
    return sum(e - b for b, e in a) - covered


def unlinked_section():
    section("unlinked: hta_torchrec_a100_rank0 GPU work no launch in the trace links to")
    _, evs = load("hta_torchrec_a100_rank0.json.gz")
    launches = {int(e["args"]["correlation"]) for e in evs
                if e.get("ph") == "X" and e.get("cat") in LAUNCH_CATS and "correlation" in e.get("args", {})}
    gpu = [e for e in evs if e.get("ph") == "X" and e.get("cat") in GPU_CATS]
    unlinked = [e for e in gpu if int(e.get("args", {}).get("correlation", -1)) not in launches]
    # The scope: the span of the GPU-side ProfilerStep annotations, else all GPU activity.
    steps = [e for e in evs if e.get("ph") == "X" and e.get("cat") == "gpu_user_annotation"
             and str(e.get("name", "")).startswith("ProfilerStep#")]
    spans = [(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in (steps or gpu)]
    lo, hi = min(b for b, _ in spans), max(e for _, e in spans)
    def busy(events):
        return merged_length([(max(ns(e["ts"]), lo), min(ns(e["ts"]) + ns(e["dur"]), hi)) for e in events
                              if min(ns(e["ts"]) + ns(e["dur"]), hi) > max(ns(e["ts"]), lo)])
    linked = [e for e in gpu if e not in unlinked]
    print(f"GPU events {len(gpu)}, without a launch {len(unlinked)}; scope {(hi - lo) / 1e6:.3f} ms "
          f"({'GPU step annotations' if steps else 'GPU activity'})")
    print(f"busy, every GPU event: {busy(gpu)} ns; only linked ones: {busy(linked)} ns; scope {hi - lo} ns")
    # TraceLens's gpu_timeline on the same events (its GPUEventAnalyser: comm = "nccl" in a
    # kernel's or memset's name, total = first start to last end of the events it keeps).
    def tracelens_timeline(events):
        iv = lambda es: union([(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in es])
        copy = [e for e in events if e["cat"] in ("gpu_memcpy", "Memcpy")]
        comm = [e for e in events if e not in copy and "nccl" in e["name"]]
        comp = [e for e in events if e not in copy and e not in comm]
        a, c, m, p = iv(events), iv(comm), iv(copy), iv(comp)
        return {"computation": sum(e - b for b, e in p), "communication": sum(e - b for b, e in c),
                "exposed_communication": uncovered(c, p), "memcpy": sum(e - b for b, e in m),
                "exposed_memcpy": uncovered(m, union(p + c)), "busy": sum(e - b for b, e in a),
                "total": a[-1][1] - a[0][0]}
    print("TraceLens's timeline, include_unlinked_kernels=True:", tracelens_timeline(gpu))
    print("TraceLens's timeline, by default (linked only):     ", tracelens_timeline(linked))


def rocm_scope_section():
    """GPU work scoped by the CPU step that launched it where the GPU-side ProfilerStep
    annotations are markers (ROCm: 16-18 us), not spans that hold their step's GPU work."""
    for name in ["tracelens_resnet_ckpt_mi300.json.gz", "hta_mi250_toy.json.gz", "tracelens_qwen05b_h100.json.gz",
                 "tracelens_vit_nsfw_h100.json.gz"]:
        section("rocm_scope: " + name)
        _, evs = load(name)
        xs = [e for e in evs if e.get("ph") == "X"]
        launch_at = {int(e["args"]["correlation"]): ns(e["ts"]) for e in xs
                     if e.get("cat") in LAUNCH_CATS and "correlation" in e.get("args", {})}
        cpu_steps = {int(e["name"].split("#")[1]): (ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in xs
                     if e.get("cat") != "gpu_user_annotation" and str(e.get("name", "")).startswith("ProfilerStep#")}
        gpu_steps = [e for e in xs if e.get("cat") == "gpu_user_annotation" and str(e.get("name", "")).startswith("ProfilerStep#")]
        gpu = [e for e in xs if e.get("cat") in GPU_CATS]
        first_gpu = min(ns(e["ts"]) for e in gpu)

        def launch_step(e):
            """The number of the CPU step the event's launch lies in; None when no launch is
            in the trace; -1 when the launch lies outside every step."""
            at = launch_at.get(int(e["args"].get("correlation", -1)))
            if at is None:
                return None
            return next((n for n, (b, en) in cpu_steps.items() if b <= at < en), -1)

        for device in sorted({e["args"]["device"] for e in gpu}):
            on = [e for e in gpu if e["args"]["device"] == device]
            anns = [a for a in gpu_steps if a["args"].get("device", a["pid"]) == device]
            spans = {int(a["name"].split("#")[1]): (ns(a["ts"]), ns(a["ts"]) + ns(a["dur"])) for a in anns}
            launched = [e for e in on if launch_step(e) in spans]
            held = [e for e in launched if spans[launch_step(e)][0] <= ns(e["ts"]) < spans[launch_step(e)][1]]
            markers = bool(launched) and len(held) < 0.9 * len(launched)
            print(f"device {device}: {len(anns)} GPU step annotations, durations (us) {[float(a['dur']) for a in anns]}; "
                  f"they hold {len(held)} of the {len(launched)} GPU events their CPU steps launched -> "
                  f"{'markers' if markers else 'spans' if anns else 'none'}")
            if markers:
                # The span Kineto draws around a step's GPU work on CUDA, drawn here from
                # the work the CPU steps launched (by correlation).
                stepped = [e for e in on if launch_step(e) not in (None, -1)]
                lo, hi = min(ns(e["ts"]) for e in stepped), max(ns(e["ts"]) + ns(e["dur"]) for e in stepped)
                print(f"  launched in steps {sorted({launch_step(e) for e in stepped})}: {len(stepped)} events, running "
                      f"+{(lo - first_gpu) / 1e6:.2f} to +{(hi - first_gpu) / 1e6:.2f} ms after the first GPU event; "
                      f"{sum(1 for e in on if launch_step(e) is None)} GPU events with no launch in the trace, "
                      f"{sum(1 for e in on if launch_step(e) == -1)} launched outside the steps")
                every = [(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in on]
                print(f"  every GPU event of the device, for comparison: {len(on)} events, total "
                      f"{max(b for _, b in every) - min(a for a, _ in every)}, busy {merged_length(every)} ns")
            else:
                lo = min(s[0] for s in spans.values()) if spans else min(ns(e["ts"]) for e in on)
                hi = max(s[1] for s in spans.values()) if spans else max(ns(e["ts"]) + ns(e["dur"]) for e in on)
            # The breakdowns: the GPU events that start in [lo, hi); the timeline clips every
            # GPU event of the device to it.
            scope = [e for e in on if lo <= ns(e["ts"]) < hi]
            clip = lambda e: (max(ns(e["ts"]), lo), min(ns(e["ts"]) + ns(e["dur"]), hi))
            def merged(events):
                iv = [clip(e) for e in events]
                return sorted((b, en) for b, en in iv if en > b)
            comm = [e for e in on if e.get("cat") in ("kernel", "Kernel") and "nccl" in e["name"].lower()]
            copy = [e for e in on if e.get("cat") in ("gpu_memcpy", "Memcpy")]
            compute = [e for e in on if e not in comm and e not in copy]
            busy = merged_length(merged(on))
            print(f"  scope [{lo}, {hi}) ns: total {hi - lo}, busy {busy}, computation {merged_length(merged(compute))}, "
                  f"communication {merged_length(merged(comm))}, memcpy {merged_length(merged(copy))}")
            names = collections.Counter(e["name"] for e in scope)
            times = collections.Counter()
            for e in scope:
                times[e["name"]] += ns(e["dur"])
            print(f"  kernel_summary: {len(scope)} GPU events ({sum(1 for e in scope if e.get('cat') in ('kernel', 'Kernel'))} kernels), "
                  f"{sum(times.values())} ns; ncclDevKernel_Generic {names.get('ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)', 0)} "
                  f"calls {times.get('ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)', 0)} ns")


def owner_ops(xs):
    """GPU event -> the innermost cpu_op around its launch on the launch's thread (the op its
    time is attributed to), by a per-thread sweep with a stack."""
    launch = {int(e["args"]["correlation"]): e for e in xs
              if e.get("cat") in LAUNCH_CATS and "correlation" in e.get("args", {})}
    by_thread = collections.defaultdict(list)
    for e in xs:
        if e.get("cat") in OP_CATS:
            by_thread[(e["pid"], e["tid"])].append((ns(e["ts"]), 0, -ns(e["dur"]), e))
    for e in launch.values():
        by_thread[(e["pid"], e["tid"])].append((ns(e["ts"]), 1, -ns(e["dur"]), e))
    op_of_launch = {}
    for items in by_thread.values():
        stack = []
        for ts, kind, neg_dur, e in sorted(items, key=lambda x: x[:3]):
            while stack and stack[-1][0] <= ts:
                stack.pop()
            if kind == 0:
                stack.append((ts - neg_dur, e))
            elif stack and ts - neg_dur <= stack[-1][0]:
                op_of_launch[id(e)] = stack[-1][1]
    out = {}
    for e in xs:
        if e.get("cat") in GPU_CATS:
            l = launch.get(int(e["args"].get("correlation", -1)))
            out[id(e)] = op_of_launch.get(id(l)) if l is not None else None
    return out


def categories_section():
    """The three places where ttap's categories differ from TraceLens's rules."""
    section("categories: tracelens_vllm_b200_eager multimem_all_reduce_kernel")
    _, evs = load("tracelens_vllm_b200_eager.json.gz")
    gpu = [e for e in evs if e.get("ph") == "X" and e.get("cat") in GPU_CATS]
    mm = [e for e in gpu if "multimem_all_reduce_kernel" in e["name"]]
    total = sum(ns(e["dur"]) for e in gpu)
    print(f"{len(mm)} multimem_all_reduce_kernel events, {sum(ns(e['dur']) for e in mm)} ns of {total} ns GPU time "
          f"({100 * sum(ns(e['dur']) for e in mm) / total:.1f}%); names with 'nccl' (TraceLens's communication rule): "
          f"{sum(1 for e in gpu if 'nccl' in e['name'])}")
    intervals = lambda es: union((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in es)
    comm = intervals(mm)
    comp = intervals(e for e in gpu if e not in mm and e.get("cat") != "gpu_memcpy")
    print(f"  as communication: {merged_length(comm)} ns, exposed (not under other kernels) {uncovered(comm, comp)} ns")

    section("categories: softmax ops (reduce in ttap, other under TraceLens)")
    for name in ["tracelens_owlv2_mi300.json.gz", "tracelens_xdit_flux1_capture.json.gz"]:
        _, evs = load(name)
        xs = [e for e in evs if e.get("ph") == "X"]
        owner = owner_ops(xs)
        gpu = [e for e in xs if e.get("cat") in GPU_CATS]
        attributed = [e for e in gpu if owner[id(e)] is not None]
        soft = [e for e in attributed if "softmax" in owner[id(e)]["name"]]
        a, sm = sum(ns(e["dur"]) for e in attributed), sum(ns(e["dur"]) for e in soft)
        print(f"{name}: softmax ops' kernels {len(soft)}, {sm} ns of {a} ns attributed to ops ({100 * sm / a:.1f}%); "
              f"kernel names {sorted({e['name'][:60] for e in soft})}")

    section("categories: DtoH copies launched by aten::copy_ (memcpy in ttap, elementwise under TraceLens)")
    for name in ["tracelens_owlv2_mi300.json.gz", "hta_torchrec_a100_rank0.json.gz", "tracelens_vllm_b200_eager.json.gz"]:
        _, evs = load(name)
        xs = [e for e in evs if e.get("ph") == "X"]
        owner = owner_ops(xs)
        gpu = [e for e in xs if e.get("cat") in GPU_CATS]
        copies = [e for e in gpu if e.get("cat") in ("gpu_memcpy", "Memcpy") and owner[id(e)] is not None
                  and owner[id(e)]["name"] == "aten::copy_"]
        kinds = collections.Counter(e["name"].split(" ")[1] for e in copies)
        ops = {id(owner[id(e)]) for e in gpu if owner[id(e)] is not None and owner[id(e)]["name"] == "aten::copy_"}
        dtoh = [e for e in copies if "DtoH" in e["name"]]
        print(f"{name}: aten::copy_ ops with GPU work {len(ops)}; their copies {len(copies)} {dict(kinds)}, "
              f"{sum(ns(e['dur']) for e in copies)} ns (DtoH {len(dtoh)}, {sum(ns(e['dur']) for e in dtoh)} ns) of "
              f"{sum(ns(e['dur']) for e in gpu)} ns GPU time; their kernels "
              f"{sum(1 for e in gpu if owner[id(e)] is not None and owner[id(e)]['name'] == 'aten::copy_' and e not in copies)}")


if __name__ == "__main__":
    which = sys.argv[1:] or ["load", "tree", "analyze", "cli", "shared"]
    for w in which:
        globals()[w + "_section"]()
