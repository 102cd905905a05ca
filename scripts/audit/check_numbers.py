#!/usr/bin/python3
"""Recompute the numbers of `ttap analyze --format json` from a trace's raw events.

Independent of ttap's code: reads the Kineto JSON with gzip+json only, runs (or reads) the
report, and prints one line per figure that does not hold. See scripts/audit/README.md.

    /usr/bin/python3 scripts/audit/check_numbers.py [--ttap build/ttap] [--report R.json] TRACE...
"""
import argparse
import bisect
import collections
import decimal
import gzip
import json
import os
import re
import subprocess
import sys

from printed import rounding, to_ns, ttap_env

GPU_CATS = {"kernel", "Kernel", "gpu_memcpy", "Memcpy", "gpu_memset", "Memset"}
LAUNCH_CATS = {"cuda_runtime", "cuda_driver", "Runtime", "mtia_runtime"}
OP_CATS = {"cpu_op", "Operator", "user_annotation"}
# ids whose cost is GPU work a fix makes shorter (the rest cost time the GPU waits)
GPU_WORK_IDS = {"grad_not_set_to_none", "unfused_elementwise", "fp32_no_tensor_cores", "layout_conversion",
                "cast_churn", "redundant_copy", "low_occupancy", "comm_not_overlapped", "comm_blocks_compute"}
# costs that hold GPU work besides idle (copy time, the optimizer's kernels) or host time
COSTS_WITH_GPU_WORK = {"alloc_churn", "pageable_memcpy", "small_transfers", "offload_pingpong", "optimizer_single_tensor"}
# what-ifs whose bound leaves the id's own GPU work out of the step's busy time (the exposed
# collectives, the pageable copies): it may exceed the mean step less all its GPU work
OWN_GPU_WORK_BOUND = {"comm_not_overlapped", "pageable_memcpy"}
ADDRESS_RE = re.compile(r" at 0x[0-9a-fA-F]+")
COMM_RE = re.compile(r"nccl|NCCL|rccl|RCCL|all_reduce_kernel|allreduce|AllReduce|all_gather_kernel|reduce_scatter_kernel|cross_device_reduce")
STEP_RE = re.compile(r"^ProfilerStep#(\d+)$")
DUR_RE = r"([0-9][0-9.]*) (ns|us|ms|s)\b"
SIZE_UNIT = {"B": 1, "KB": 1024, "MB": 1024**2, "GB": 1024**3}


def close(claimed, actual, text, unit="ns"):
    """A printed figure (3 significant digits) against its recomputed value."""
    return abs(claimed - actual) <= max(abs(actual) * 0.02, rounding(text, unit))


# ---------------------------------------------------------------- the trace

class Trace:
    def __init__(self, path):
        with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
            doc = json.load(f, parse_float=decimal.Decimal)
        events = doc["traceEvents"] if isinstance(doc, dict) else doc
        self.gpu, self.launch, self.ops, self.steps, self.all_x = [], [], [], [], []
        self.first_ts = None
        for e in events:
            if e.get("ph") != "X" or "ts" not in e:
                continue
            # exact: microseconds since the epoch need more digits than a double holds
            ts = int(decimal.Decimal(e["ts"]) * 1000)
            dur = int(decimal.Decimal(e.get("dur", 0)) * 1000)
            cat = e.get("cat", "")
            # ttap drops the object addresses Python's tracer records ("<built-in method ... at 0x7f...>")
            ev = {"cat": cat, "name": ADDRESS_RE.sub("", e.get("name", "")), "ts": ts, "end": ts + dur, "dur": dur,
                  "pid": e.get("pid"), "tid": e.get("tid"), "args": e.get("args") or {}}
            self.all_x.append(ev)
            if cat in GPU_CATS:
                ev["device"] = ev["args"].get("device", ev["pid"])
                self.gpu.append(ev)
            elif cat in LAUNCH_CATS:
                self.launch.append(ev)
            elif cat in OP_CATS:
                self.ops.append(ev)
                m = STEP_RE.match(ev["name"])
                if m:
                    self.steps.append(ev)
        self.gpu.sort(key=lambda e: e["ts"])
        self.gpu_all = merge([(e["ts"], e["end"]) for e in self.gpu])
        self.by_device = collections.defaultdict(list)
        for e in self.gpu:
            self.by_device[e["device"]].append((e["ts"], e["end"]))
        self.by_device = {d: merge(v) for d, v in self.by_device.items()}
        self._nest()
        corr = {}
        for e in self.launch:
            c = e["args"].get("correlation")
            if c is not None:
                corr[c] = e
        for g in self.gpu:
            g["launch"] = corr.get(g["args"].get("correlation"))

    def _nest(self):
        """Each op and launch gets its enclosing ops on its thread (parent chain)."""
        per_thread = collections.defaultdict(list)
        for e in self.ops + self.launch:
            per_thread[(e["pid"], e["tid"])].append(e)
        for evs in per_thread.values():
            evs.sort(key=lambda e: (e["ts"], -e["end"], e["cat"] in LAUNCH_CATS))
            stack = []
            for e in evs:
                while stack and stack[-1]["end"] <= e["ts"]:
                    stack.pop()
                e["parent"] = stack[-1] if stack and stack[-1]["end"] >= e["end"] else None
                if e["cat"] in OP_CATS:
                    stack.append(e)

    def busy(self, lo, hi, device=None):
        ivs = self.gpu_all if device is None else self.by_device.get(device, [])
        return clipped(ivs, lo, hi)


def merge(ivs):
    out = []
    for b, e in sorted(ivs):
        if e <= b:
            continue
        if out and b <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([b, e])
    return out


def clipped(merged, lo, hi):
    i = bisect.bisect_left([iv[1] for iv in merged], lo) if merged else 0
    s = 0
    while i < len(merged) and merged[i][0] < hi:
        s += max(0, min(hi, merged[i][1]) - max(lo, merged[i][0]))
        i += 1
    return s


def shown_name_matches(shown, recorded):
    """ttap shows a kernel by its qualified name (no "void ", no arguments, long templates cut)."""
    r = recorded[5:] if recorded.startswith("void ") else recorded
    shown = shown.rstrip(".").rstrip("…")
    return r.startswith(shown) or shown.split("<")[0] in r


def kernel_time_candidates(gpu, name, lo, hi):
    """The time of the kernels a shown name can mean, clipped to [lo, hi) or whole: per
    recorded name and all together (a shortened name can stand for several)."""
    per = collections.defaultdict(lambda: [0, 0])
    for e in gpu:
        if e["end"] > lo and e["ts"] < hi and shown_name_matches(name, e["name"]):
            per[e["name"]][0] += min(e["end"], hi) - max(e["ts"], lo)
            per[e["name"]][1] += e["dur"] if e["ts"] >= lo else 0
    if not per:
        return []
    out = [v for pair in per.values() for v in pair]
    out += [sum(p[0] for p in per.values()), sum(p[1] for p in per.values())]
    return out


def op_chain(e):
    names = []
    p = e.get("parent")
    while p is not None:
        names.append(p["name"])
        p = p.get("parent")
    return names


# ---------------------------------------------------------------- the checks

class Checker:
    def __init__(self, trace, report, label):
        self.t, self.r, self.label = trace, report, label
        self.problems = []

    def bad(self, where, text):
        self.problems.append(f"{self.label}: {where}: {text}")

    def run(self):
        r = self.r
        ss = r["steady_state"]
        self.ss = (ss["begin_ns"], ss["end_ns"])
        self.check_windows()
        self.check_headline()
        for w in r["flagged_windows"]:
            for f in w["findings"]:
                self.check_finding(w, f)
        self.check_savings()
        self.check_groups()
        return self.problems

    # mean step as the report uses it (headline), else the steady state (no steps)
    def step_base(self):
        st = self.r["headline"]["steps"]
        return st["mean_ns"] if st else self.ss[1] - self.ss[0]

    def check_windows(self):
        ws = self.r["windows"]
        if not ws:
            return
        if ws[0]["begin_ns"] != self.ss[0] or ws[-1]["end_ns"] != self.ss[1]:
            self.bad("windows", "do not cover the steady state exactly")
        for a, b in zip(ws, ws[1:]):
            if a["end_ns"] != b["begin_ns"]:
                self.bad(f"window {a['index']}", "not contiguous with the next")
        for w in ws:
            n = w["end_ns"] - w["begin_ns"]
            busy = self.t.busy(w["begin_ns"], w["end_ns"]) / n if n > 0 else 0
            if abs(busy - w["gpu_busy"]) > 0.005:
                self.bad(f"window {w['index']}", f"gpu_busy {w['gpu_busy']:.4f}, events say {busy:.4f}")

    def check_headline(self):
        h = self.r["headline"]
        steps = sorted(self.t.steps, key=lambda e: e["ts"])
        cpu_steps = [e for e in steps if e["cat"] != "gpu_user_annotation"]
        for g in h["gpus"]:
            dev = g["device"]
            if g["busy_ns"] + g["idle_ns"] != g["total_ns"]:
                self.bad(f"gpu {dev}", "busy + idle != total")
            if g["scope"] == "gpu_activity":
                ivs = self.t.by_device.get(dev) or self.t.by_device.get(str(dev), [])
                if ivs:
                    total = max(iv[1] for iv in ivs) - ivs[0][0]
                    busy = sum(b - a for a, b in ivs)
                    if total != g["total_ns"] or abs(busy - g["busy_ns"]) > 1000:
                        self.bad(f"gpu {dev}", f"total {g['total_ns']} busy {g['busy_ns']}, events say {total} {busy}")
            elif g["scope"] == "steps" and cpu_steps:
                lo, hi = cpu_steps[0]["ts"], max(e["end"] for e in cpu_steps)
                if hi - lo != g["total_ns"]:
                    self.bad(f"gpu {dev}", f"steps total {g['total_ns']}, CPU steps span {hi - lo}")
                else:
                    busy = self.t.busy(lo, hi, dev)
                    if abs(busy - g["busy_ns"]) > 1000:
                        self.bad(f"gpu {dev}", f"steps busy {g['busy_ns']}, events say {busy}")
        st = h["steps"]
        if st and cpu_steps:
            if st["count"] != len(cpu_steps):
                self.bad("steps", f"count {st['count']}, trace has {len(cpu_steps)} ProfilerStep spans")
            span = max(e["end"] for e in cpu_steps) - cpu_steps[0]["ts"]
            mean_dur = sum(e["dur"] for e in cpu_steps) / len(cpu_steps)
            if abs(st["mean_ns"] - span / len(cpu_steps)) > 1000 and abs(st["mean_ns"] - mean_dur) > 1000:
                self.bad("steps", f"mean {st['mean_ns']}, span/count {span / len(cpu_steps):.0f}, mean duration {mean_dur:.0f}")
            g = [x for x in h["gpus"] if x["scope"] == "steps"]
            if g:
                share = g[0]["busy_ns"] / g[0]["total_ns"]
                if abs(share - st["gpu_busy_share"]) > 0.005:
                    self.bad("steps", f"gpu_busy_share {st['gpu_busy_share']:.4f}, steps gpu busy/total {share:.4f}")
        la = h.get("launches")
        if la:
            # "N launches: P% of kernels shorter than their launch call": P over the kernels
            launched = [e for e in self.t.gpu if e["launch"] is not None]
            kernels = [e for e in launched if e["cat"] in ("kernel", "Kernel")]
            short = sum(1 for e in kernels if e["dur"] < e["launch"]["dur"])
            if kernels and abs(la["short_kernel_share"] - short / len(kernels)) > 0.01:
                self.bad("launches", f"short_kernel_share {la['short_kernel_share']:.4f}, {short} of {len(kernels)} launched kernels {short / len(kernels):.4f}")
            if la["count"] > len(launched):  # the scope's (GPU work of the steps) may be fewer
                self.bad("launches", f"count {la['count']}, {len(launched)} GPU events with a launch call")
        rec = h.get("recoverable")
        if rec:
            total = sum(s["saved_per_step_ns"] for s in self.r["savings"])
            if rec["saved_per_step_ns"] > rec["bound_ns"] or rec["saved_per_step_ns"] > total:
                self.bad("recoverable", f"{rec['saved_per_step_ns']} above its bound {rec['bound_ns']} or the sum {total}")

    def check_savings(self):
        base = self.step_base()
        for s in self.r["savings"]:
            if s["saved_per_step_ns"] > s["bound_ns"]:
                self.bad(f"saving {s['id']}", f"{s['saved_per_step_ns']} above its bound {s['bound_ns']}")
            if s["bound_ns"] > base and s["per_step"]:
                self.bad(f"saving {s['id']}", f"bound {s['bound_ns']} above the mean step {base}")
            st = self.r["headline"]["steps"]
            if s["per_step"] and st and s["id"] not in OWN_GPU_WORK_BOUND:
                # the mean step less the GPU's busy time per step (the steps' GPU timeline);
                # the GPU work launched outside the steps makes ttap's a little lower
                busy = base * st["gpu_busy_share"]
                if s["bound_ns"] > (base - busy) + 0.05 * base:
                    self.bad(f"saving {s['id']}", f"bound {s['bound_ns']}, mean step less its GPU busy time {base - busy:.0f}")
            if not s["per_step"]:
                # the span first to last GPU activity minus its busy time
                span = self.t.gpu_all[-1][1] - self.t.gpu_all[0][0] if self.t.gpu_all else 0
                idle = span - sum(b - a for a, b in self.t.gpu_all)
                if s["bound_ns"] > span or s["bound_ns"] < idle - 1000:
                    self.bad(f"saving {s['id']}", f"bound {s['bound_ns']}, GPU span {span}, idle in it {idle}")
                share = s["saved_per_step_ns"] / span if span else 0
            else:
                share = s["saved_per_step_ns"] / base
            if abs(share - s["step_share"]) > 0.002:
                self.bad(f"saving {s['id']}", f"step_share {s['step_share']:.4f}, saved/base {share:.4f}")

    def check_groups(self):
        r = self.r
        st = r["headline"]["steps"]
        ss_len = self.ss[1] - self.ss[0]
        flagged = {w["index"] for w in r["flagged_windows"] if w["scope"] == "window"}
        best = {}
        for g in r["findings"]:
            where = f"group {g['id']}/{g['origin']}"
            ss_idle = ss_len - self.t.busy(*self.ss)
            if g["id"] not in GPU_WORK_IDS and g["cost_ns"] > ss_idle + 1000 and not g.get("one_time"):
                self.bad(where, f"cost {g['cost_ns']} of GPU waiting above the steady state's GPU idle {ss_idle}")
            if g["cost_ns"] > ss_len:
                self.bad(where, f"cost {g['cost_ns']} above the steady state {ss_len}")
            if st:
                cps = g["cost_ns"] // st["count"]
                if g["cost_per_step_ns"] is None or abs(g["cost_per_step_ns"] - cps) > 1:
                    self.bad(where, f"cost_per_step {g['cost_per_step_ns']}, cost/steps {cps}")
                share = (g["cost_per_step_ns"] or 0) / st["mean_ns"]
            else:
                share = g["cost_ns"] / ss_len
            if abs(share - g["share"]) > 0.001:
                self.bad(where, f"share {g['share']:.4f}, recomputed {share:.4f}")
            rank = g["saving"]["step_share"] if g["saving"] else g["share"]
            if abs(rank - g["rank_share"]) > 1e-9:
                self.bad(where, f"rank_share {g['rank_share']}, expected {rank}")
            for o in g["occurrences"]:
                if o["begin_ns"] < self.ss[0] or o["end_ns"] > self.ss[1] or o["begin_ns"] > o["end_ns"]:
                    self.bad(where, f"occurrence {o['begin_ns']}..{o['end_ns']} outside the steady state")
            if g["occurrence_count"] < max(1, len(g["occurrences"])):
                self.bad(where, "occurrence_count below its listed occurrences")
            for w in g["windows"]:
                if w not in flagged:
                    self.bad(where, f"window {w} is not a flagged window")
            if not g.get("one_time"):
                best[g["id"]] = max(best.get(g["id"], 0), g["rank_share"])
        # two pools (grouping.cpp): GPU work a fix shortens, bounded by the GPU's busy share,
        # and time the GPU waits, bounded by its idle share; within each 1 - prod(1 - share)
        kept = {True: 1.0, False: 1.0}
        for i, v in best.items():
            kept[i in GPU_WORK_IDS] *= 1 - v
        work, waiting = 1 - kept[True], 1 - kept[False]
        h = r["headline"]
        if h["gpus"]:
            if h["steps"]:
                idle = 1 - h["steps"]["gpu_busy_share"]
            else:
                g = max(h["gpus"], key=lambda x: x["busy_ns"])
                idle = g["idle_ns"] / g["total_ns"] if g["total_ns"] > 0 else 1.0
            idle = min(max(idle, 0.0), 1.0)
            waiting, work = min(waiting, idle), min(work, 1 - idle)
        want = min(max(waiting + work, 0.0), 1.0)
        if abs(want - r["recoverable_share"]) > 0.001:
            self.bad("recoverable_share", f"{r['recoverable_share']:.4f}, groups say {want:.4f}")

    # ------------------------------------------------------------ one finding
    def check_finding(self, w, f):
        where = f"window {w['index']} {f['id']}"
        lo, hi = w["begin_ns"], w["end_ns"]
        # a finding's span is its events' extent: a call or kernel may cross the range's edge
        if f["end_ns"] <= lo or f["begin_ns"] >= hi or f["begin_ns"] > f["end_ns"]:
            self.bad(where, f"span {f['begin_ns']}..{f['end_ns']} does not meet the range {lo}..{hi}")
        if f["cost_ns"] > f["end_ns"] - f["begin_ns"] and f["id"] not in ("fp32_no_tensor_cores",):
            self.bad(where, f"cost {f['cost_ns']} above its span {f['end_ns'] - f['begin_ns']}")
        if f["id"] not in GPU_WORK_IDS and f["id"] not in COSTS_WITH_GPU_WORK and f["cost_ns"] > (hi - lo) - self.t.busy(lo, hi) + 1000:
            self.bad(where, f"cost {f['cost_ns']} of GPU waiting above the range's GPU idle {(hi - lo) - self.t.busy(lo, hi)}")
        if f["cost_ns"] > hi - lo:
            self.bad(where, f"cost {f['cost_ns']} above the range's length {hi - lo}")
        if f.get("saving") and f["saving"]["saved_per_step_ns"] > f["saving"]["bound_ns"]:
            self.bad(where, "saving above its bound")
        idle = (hi - lo) - self.t.busy(lo, hi)
        for line in f["evidence"]:
            self.check_line(where, f, lo, hi, idle, line)
        # "the host in those gaps: A in ...; B in ..." splits the first line's idle
        first = re.match(r"GPU idle " + DUR_RE, f["evidence"][0]) if f["evidence"] else None
        for line in f["evidence"]:
            if first and line.startswith("the host in those gaps: "):
                parts = [re.match(DUR_RE, p) for p in line[len("the host in those gaps: "):].split("; ")]
                total = sum(to_ns(p.group(1), p.group(2)) for p in parts if p)
                want = to_ns(first.group(1), first.group(2))
                if total > want * 1.03 + 3 * rounding(first.group(1), first.group(2)):
                    self.bad(where, f"the host's parts of the gaps add to {total / 1e3:.1f} us, above the idle {first.group(1)} {first.group(2)}")

    def check_line(self, where, f, lo, hi, idle, line):
        t = self.t
        # "GPU idle X (P% of the range)" / "GPU idle X in the range ... (P% of the range)"
        m = re.match(r"GPU idle " + DUR_RE + r".*?\((\d+)% of the range\)", line)
        if m:
            x = to_ns(m.group(1), m.group(2))
            if x > idle + max(idle * 0.01, to_ns("1", m.group(2)) * 0.1):
                self.bad(where, f"'{line[:60]}...' claims {x:.0f} ns idle; the range has {idle} ns")
            pct = round(100 * x / (hi - lo))
            if abs(pct - int(m.group(3))) > 1:
                self.bad(where, f"'{line[:60]}...' says {m.group(3)}%, {x:.0f}/{hi - lo} is {pct}%")
        # "kernels: NAME T, NAME T" : the kernels' time in the finding's span
        m = re.match(r"kernels: (.*)$", line)
        if m and f["id"] != "layout_conversion":
            for pm in re.finditer(r"(.+?) " + DUR_RE + r"(?:, |$)", m.group(1)):
                name = pm.group(1)
                claimed = to_ns(pm.group(2), pm.group(3))
                sums = kernel_time_candidates(t.gpu, name, lo, hi)
                if not sums:
                    self.bad(where, f"kernel '{name[:60]}' not in the range")
                elif not any(close(claimed, v, pm.group(2), pm.group(3)) for v in sums):
                    self.bad(where, f"kernel {name[:50]} {pm.group(2)} {pm.group(3)}, events in the range {min(sums) / 1e3:.1f}..{max(sums) / 1e3:.1f} us")
        # "N cudaMalloc calls [and M cudaFree calls] ..., T on the host"
        m = re.match(r"(\d+) (\w+) calls? (?:and (\d+) (\w+) calls? )?after warm-up.*?, " + DUR_RE + " on the host", line)
        if m:
            names = [(m.group(2), int(m.group(1)))] + ([(m.group(4), int(m.group(3)))] if m.group(3) else [])
            # warm-up: the first step, else the first fifth of the trace (as the line says)
            steps = sorted(e["end"] for e in t.steps)
            warm = steps[0] if "first step" in line and steps else lo
            for name, n in names:
                inr = [e for e in t.launch if e["name"] == name and e["end"] > f["begin_ns"] and e["ts"] < f["end_ns"]]
                later = [e for e in inr if e["ts"] >= warm]
                if n not in (len(inr), len(later)):
                    self.bad(where, f"{n} {name} calls claimed; {len(inr)} over the finding's span, {len(later)} after the first step")
        # "most allocator time under A under B (T)"
        m = re.match(r"most allocator time under (.+?) \(" + DUR_RE + r"\)$", line)
        if m:
            chain = m.group(1).split(" under ")
            claimed = to_ns(m.group(2), m.group(3))
            calls = [e for e in t.launch if re.search(r"Malloc|Free", e["name"]) and e["end"] > lo and e["ts"] < hi]
            held = sum(e["dur"] for e in calls if op_chain(e)[:len(chain)] == chain)
            first_step_end = min((e["end"] for e in t.steps), default=lo)
            later = sum(e["dur"] for e in calls if op_chain(e)[:len(chain)] == chain and e["ts"] >= first_step_end)
            if not (close(claimed, held, m.group(2), m.group(3)) or close(claimed, later, m.group(2), m.group(3))):
                self.bad(where, f"allocator time under {chain[0]} claimed {m.group(2)} {m.group(3)}, calls overlapping the range under it {held / 1e6:.1f} ms")
        # "N copies from/to pageable host memory (u up, d down), B MB in T"
        m = re.match(r"(\d+) copies from/to pageable host memory \((\d+) up, (\d+) down\), ([0-9.]+) (B|KB|MB|GB) in " + DUR_RE, line)
        if m:
            # copies under 64 KB are small_transfers' (its evidence counts them)
            cps = [e for e in t.gpu if "Pageable" in e["name"] and e["ts"] >= f["begin_ns"] and e["ts"] < f["end_ns"]
                   and e["args"].get("bytes", 0) >= 64 * 1024]
            if len(cps) != int(m.group(1)):
                self.bad(where, f"{m.group(1)} pageable copies claimed, {len(cps)} start in the finding's span")
            up = sum("HtoD" in e["name"] for e in cps)
            if up != int(m.group(2)) or len(cps) - up != int(m.group(3)):
                self.bad(where, f"pageable up/down {m.group(2)}/{m.group(3)}, events {up}/{len(cps) - up}")
            b = sum(e["args"].get("bytes", 0) for e in cps)
            claimed = float(m.group(4)) * SIZE_UNIT[m.group(5)]
            if cps and abs(claimed - b) > max(0.02 * b, SIZE_UNIT[m.group(5)] * 0.1):
                self.bad(where, f"pageable bytes {m.group(4)} {m.group(5)}, events {b}")
            d = sum(e["dur"] for e in cps)
            if cps and not close(to_ns(m.group(6), m.group(7)), d, m.group(6), m.group(7)):
                self.bad(where, f"pageable copy time {m.group(6)} {m.group(7)}, events {d / 1e6:.2f} ms")
        # "N host/device copies under S (h HtoD, d DtoH), X moved in all"
        m = re.match(r"(\d+) host/device copies under ([0-9.]+) (B|KB|MB) \((\d+) HtoD, (\d+) DtoH\), ([0-9.]+) (B|KB|MB|GB) moved", line)
        if m:
            limit = float(m.group(2)) * SIZE_UNIT[m.group(3)]
            cps = [e for e in t.gpu if e["cat"] in ("gpu_memcpy", "Memcpy") and ("HtoD" in e["name"] or "DtoH" in e["name"])
                   and e["args"].get("bytes", limit) < limit and e["ts"] >= f["begin_ns"] and e["ts"] < f["end_ns"]]
            if len(cps) != int(m.group(1)):
                self.bad(where, f"{m.group(1)} small copies claimed, {len(cps)} in the finding's span")
            b = sum(e["args"].get("bytes", 0) for e in cps)
            claimed = float(m.group(6)) * SIZE_UNIT[m.group(7)]
            if cps and abs(claimed - b) > max(0.02 * b, SIZE_UNIT[m.group(7)] * 0.1):
                self.bad(where, f"small copy bytes {m.group(6)} {m.group(7)}, events {b}")
        # "NAME of D crosses the range's edge (+a to +b of the range start)"
        m = re.match(r"(\S+) of " + DUR_RE + r" crosses the range's edge \(([+-])" + DUR_RE + r" to ([+-])" + DUR_RE, line)
        if m:
            name, d = m.group(1), to_ns(m.group(2), m.group(3))
            a = (1 if m.group(4) == "+" else -1) * to_ns(m.group(5), m.group(6))
            b = (1 if m.group(7) == "+" else -1) * to_ns(m.group(8), m.group(9))
            hit = [e for e in t.launch + t.ops if e["name"] == name and close(d, e["dur"], m.group(2), m.group(3))
                   and close(a, e["ts"] - lo, m.group(5), m.group(6)) and close(b, e["end"] - lo, m.group(8), m.group(9))]
            if not hit:
                self.bad(where, f"no {name} of {m.group(2)} {m.group(3)} at {a:.0f}..{b:.0f} ns of the range start")
            elif all(e["ts"] >= lo and e["end"] <= hi for e in hit):
                self.bad(where, f"{name} does not cross the range's edge")
        # "T gap [(...)] at +X from the range start: main thread in OP for Y of it"
        m = re.match(DUR_RE + r" gap(?: \([^)]*\))? at \+" + DUR_RE + r" from the range start: main thread in (.+?) for " + DUR_RE + " of it", line)
        if m:
            g = to_ns(m.group(1), m.group(2))
            x = lo + to_ns(m.group(3), m.group(4))
            slack = rounding(m.group(3), m.group(4)) + rounding(m.group(1), m.group(2))
            glo, ghi = x, min(hi, x + g)
            busy = t.busy(glo + slack, ghi - slack)
            glo, ghi = glo - slack, ghi + slack
            if busy > 0.05 * g + 2000:
                self.bad(where, f"gap of {m.group(1)} {m.group(2)} at +{m.group(3)} {m.group(4)}: the GPU is busy {busy} ns of it")
            op = m.group(5)
            held = max((min(e["end"], ghi) - max(e["ts"], glo) for e in t.ops + t.all_x
                        if e["name"] == op and e["end"] > glo and e["ts"] < ghi), default=None)
            y = to_ns(m.group(6), m.group(7))
            if held is None:
                self.bad(where, f"gap's op {op[:50]} not found over the gap")
            elif y > held + max(0.02 * y, 1000) + slack:
                self.bad(where, f"gap's op {op[:50]} holds {held} ns of it, claimed {m.group(6)} {m.group(7)}")
        # "N synchronizing calls (A xk, B xm) block the host T in total"
        m = re.match(r"(\d+) synchronizing calls? \((.*?)\) blocks? the host " + DUR_RE + " in total", line)
        if m:
            parts = [re.match(r"(\S+) x(\d+)", p.strip()) for p in m.group(2).split(",")]
            if sum(int(p.group(2)) for p in parts if p) != int(m.group(1)):
                self.bad(where, f"sync counts do not add up to {m.group(1)}")
            total = 0
            for p in parts:
                if not p:
                    continue
                inr = [e for e in t.launch if e["name"] == p.group(1) and e["end"] > f["begin_ns"] and e["ts"] < f["end_ns"]]
                total += sum(e["dur"] for e in inr)
                if len(inr) < int(p.group(2)):
                    self.bad(where, f"{p.group(1)} x{p.group(2)} claimed, {len(inr)} overlap the range")
        # "X of that idle inside OP (one Y call)"
        m = re.match(DUR_RE + r" of that idle inside (.+) \(one " + DUR_RE + r" call\)$", line)
        if m:
            y = to_ns(m.group(4), m.group(5))
            hit = [e for e in t.all_x if e["name"] == m.group(3) and e["end"] > lo and e["ts"] < hi
                   and close(y, e["dur"], m.group(4), m.group(5))]
            if not hit:
                self.bad(where, f"no {m.group(3)[:50]} call of {m.group(4)} {m.group(5)} over the range")
            elif to_ns(m.group(1), m.group(2)) > max(e["dur"] for e in hit) * 1.02:
                self.bad(where, f"idle inside {m.group(3)[:50]} above the call's length")
        # "P% of kernel time (A of B) is FP32 ..."
        m = re.match(r"(\d+)% of kernel time \(" + DUR_RE + " of " + DUR_RE + r"\)", line)
        if m:
            a, b = to_ns(m.group(2), m.group(3)), to_ns(m.group(4), m.group(5))
            if abs(round(100 * a / b) - int(m.group(1))) > 1:
                self.bad(where, f"{m.group(1)}% is not {m.group(2)}/{m.group(4)}")
            sums = []
            for a0, b0 in ((lo, hi), (f["begin_ns"], f["end_ns"])):
                k = [e for e in t.gpu if e["cat"] in ("kernel", "Kernel") and e["end"] > a0 and e["ts"] < b0]
                sums += [sum(min(e["end"], b0) - max(e["ts"], a0) for e in k), sum(e["dur"] for e in k),
                         sum(e["dur"] for e in k if e["ts"] >= a0)]
            if not any(close(b, v, m.group(4), m.group(5)) for v in sums):
                self.bad(where, f"kernel time {m.group(4)} {m.group(5)}, kernels in the range or span {sorted(sums)} ns")
        # launch_bound: "N kernels in the range, k (p%) shorter than their launch call (mean call X)"
        m = re.match(r"(\d+) kernels in the range(?: \(besides (\d+) of the optimizer step or collectives\))?, (\d+) \((\d+)%\) shorter than their launch call", line)
        if m:
            left_out = int(m.group(2) or 0)
            k = [e for e in t.gpu if e["cat"] in ("kernel", "Kernel") and e["ts"] >= lo and e["ts"] < hi]
            n = int(m.group(1))
            # as the rule counts: no collective kernels, none the optimizer step or zero_grad launched
            kept = [e for e in k if not COMM_RE.search(e["name"]) and not (
                e["launch"] is not None and any(c.startswith(("Optimizer.step#", "Optimizer.zero_grad#")) for c in op_chain(e["launch"])))]
            if n + left_out != len(k) or n != len(kept):
                self.bad(where, f"{n} kernels claimed in the range besides {left_out}, {len(k)} start in it ({len(kept)} outside collectives and the optimizer)")
            k = kept
            short = sum(1 for e in k if e["launch"] is not None and e["dur"] < e["launch"]["dur"])
            if abs(short - int(m.group(3))) > max(1, 0.02 * n):
                self.bad(where, f"{m.group(3)} kernels shorter than their launch claimed, events say {short}")
            if n and abs(round(100 * int(m.group(3)) / n) - int(m.group(4))) > 1:
                self.bad(where, f"{m.group(4)}% is not {m.group(3)}/{n}")
        # offload_pingpong: "NAME S (D) and back: NAME2 S2 (D2), G apart"
        m = re.match(r"(Memcpy [^()]*\([^)]*\)) ([0-9.]+) (KB|MB|GB) \(" + DUR_RE + r"\) and back: (Memcpy [^()]*\([^)]*\)) ([0-9.]+) (KB|MB|GB) \(" + DUR_RE + r"\), " + DUR_RE + " apart", line)
        if m:
            a = [e for e in t.gpu if e["name"] == m.group(1) and close(to_ns(m.group(4), m.group(5)), e["dur"], m.group(4), m.group(5))
                 and abs(e["args"].get("bytes", 0) - float(m.group(2)) * SIZE_UNIT[m.group(3)]) <= 0.06 * SIZE_UNIT[m.group(3)]
                 and e["end"] > f["begin_ns"] - 10**10 and e["ts"] < f["end_ns"] + 10**10]
            b = [e for e in t.gpu if e["name"] == m.group(6) and close(to_ns(m.group(9), m.group(10)), e["dur"], m.group(9), m.group(10))]
            gap = to_ns(m.group(11), m.group(12))
            ok = any(close(gap, abs(y["ts"] - x["end"]), m.group(11), m.group(12)) or close(gap, abs(y["ts"] - x["ts"]), m.group(11), m.group(12))
                     or close(gap, abs(x["ts"] - y["end"]), m.group(11), m.group(12)) for x in a for y in b)
            if not ok:
                self.bad(where, f"no pair {m.group(1)} {m.group(4)}{m.group(5)} / {m.group(6)} {m.group(9)}{m.group(10)} {m.group(11)} {m.group(12)} apart ({len(a)}, {len(b)} candidates)")
        # offload_pingpong: "N copies ... in the range ...: S moved, T of copy time here (P% of the range)"
        m = re.match(r"(\d+) cop(?:y|ies) of at least .* in the range ha(?:s|ve) a same-size copy the other way in the same step: .* moved, " + DUR_RE + r" of copy time here \((\d+)% of the range\)", line)
        if m:
            cp = merge([(max(e["ts"], lo), min(e["end"], hi)) for e in t.gpu if e["cat"] in ("gpu_memcpy", "Memcpy")
                        and e["end"] > lo and e["ts"] < hi and e["args"].get("bytes", 0) >= 64 * 1024])
            tot = sum(b - a for a, b in cp)
            if to_ns(m.group(2), m.group(3)) > tot + rounding(m.group(2), m.group(3)):
                self.bad(where, f"copy time {m.group(2)} {m.group(3)} in the range, large copies there take {tot} ns")
        # "(K kernels, T)" of the convolutions etc.: count kernels is not recomputed (which
        # kernels are meant depends on ttap's name classes); "N kernels take T" likewise.


def analyze(ttap, path):
    env = ttap_env()
    out = subprocess.run([ttap, "analyze", path, "--format", "json", "--fail-on", "none", "--threads", "1"],
                         capture_output=True, text=True, env=env, check=False)
    if not out.stdout.strip():  # a crash or a bad option: no report to check
        sys.exit(f"{path}: ttap analyze exited {out.returncode} without a report: {out.stderr.strip()[-500:]}")
    return json.loads(out.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("traces", nargs="+")
    ap.add_argument("--ttap", default="build/ttap")
    ap.add_argument("--report", help="a saved report of one trace instead of running ttap")
    a = ap.parse_args()
    problems = 0
    for path in a.traces:
        if a.report:
            with open(a.report) as f:
                rep = json.load(f)
        else:
            rep = analyze(a.ttap, path)
        tr = rep["traces"][0]
        if tr.get("error"):
            print(f"{path}: ttap error: {tr['error']}")
            continue
        ps = Checker(Trace(path), tr, os.path.basename(path)).run()
        for p in ps:
            print(p)
        problems += len(ps)
        print(f"{os.path.basename(path)}: {len(ps)} mismatches", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
