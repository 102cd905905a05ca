#!/usr/bin/python3
"""Injector 2: anti-patterns written into real GPU traces at the Python-frame and
runtime-call level, independently of surgery.py (injector 1).

Where surgery.py inserts host time at the start of an outermost operator and keeps the GPU
work that follows at its recorded spacing (shifted), this injector:
- crops a time span of a few steps (or, for traces without ProfilerSteps, a slice of the
  GPU-active span) and may inject at ANY host time in it where the launching thread is
  between operators: inside Python frames, at the very end of a step, so that the effect
  runs across the step boundary;
- writes what user code does: a Python frame (`python_function`, with Python ids, where
  the trace records them; a record_function range where it does not) holding the host
  work, the aten ops under it and the runtime calls they make (cudaStreamSynchronize,
  cudaDeviceSynchronize, cudaMemcpyAsync, cudaMalloc / cudaFree, cudaLaunchKernel,
  cudaStreamWaitEvent; hip* on ROCm), each blocking call lasting as long as what it waits
  for, each launch with a correlation id, a flow and its GPU event;
- models the device queue: the GPU work launched after the inserted host time is
  re-queued (FIFO per stream): a kernel starts at the later of its recorded start, its
  new launch plus a launch latency, and the end of the work before it on its stream. So a
  backlog absorbs a short host stall and a long one opens a gap; inserted kernels and
  copies push the queued work later; a compute stream that waits on a collective starts
  after it;
- jitters the surrounding GPU events: the first kernels after an idle gap run 1-8% slower
  (clocks ramp back up), the others within a few ms +-2%;
- sizes each pattern from 0.5% to 50% of a step (log-uniform), 1 to 3 per trace.

A label range runs from the start of the inserted Python frame (or op) to the later of its
end, the end of the GPU work it added and the end of the compute-stream gap it opened
(the first queued kernel's new start); for gpu_idle, from when the stream drains. Ranges
of earlier injections move with later insertions. DataLoader __next__ spans of a
single-process loader longer than 10 ms in the source are labeled dataloader_stall as
recorded (the catalog's definition).

  inject2.py SOURCE OUT.json.gz --inject host_sync,launch_bound [--seed N]
prints the manifest fields; make_corpus2.py builds data/ttap-bench-x with build()."""

import argparse
import bisect
import io
import json
import math
import os
import random
import sys
import tarfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import trace_edit as te  # noqa: E402  (neutral I/O: load, write, schema names, crop_span)

GPU_CATS = te.GPU_CATS
RUNTIME_CATS = te.RUNTIME_CATS
FLOW_CATS = te.FLOW_CATS

PATTERNS = ["host_sync", "pageable_memcpy", "small_transfers", "offload_pingpong", "dataloader_stall",
            "cpu_bound_step", "alloc_churn", "launch_bound", "optimizer_single_tensor",
            "grad_not_set_to_none", "unfused_elementwise", "cast_churn", "redundant_copy", "gpu_idle",
            "comm_not_overlapped", "comm_blocks_compute"]
TRAIN_ONLY = {"optimizer_single_tensor", "grad_not_set_to_none"}
COMM = {"comm_not_overlapped", "comm_blocks_compute"}
GAP_TAIL_US = 2000.0  # a gap that lasts longer after the inserted work has another cause


def load_source(path):
    """A trace as a dict; a .tar.gz of ranks gives its rank 0 (worker0)."""
    if path.endswith(".tar.gz"):
        with tarfile.open(path) as tf:
            members = sorted((m for m in tf.getmembers() if m.isfile() and ".json" in m.name),
                             key=lambda m: ("worker0" not in m.name, m.name))
            raw = tf.extractfile(members[0]).read()
            if members[0].name.endswith(".gz"):
                import gzip
                raw = gzip.decompress(raw)
            doc = json.load(io.BytesIO(raw))
            return {"traceEvents": doc} if isinstance(doc, list) else doc
    return te.load(path)


def end_of(e):
    return float(e["ts"]) + float(e.get("dur", 0) or 0)


def corr_of(e):
    return (e.get("args") or {}).get("correlation")


def host_thread(events):
    """The thread that runs the step loop: it records ProfilerSteps, or else the most Python
    frames and record_function ranges among the threads that launch GPU work."""
    steps, launches, user = {}, {}, {}
    for e in events:
        if e.get("ph") != "X":
            continue
        k = (e.get("pid"), e.get("tid"))
        if str(e.get("name", "")).startswith("ProfilerStep#") and e.get("cat") != "gpu_user_annotation":
            steps[k] = steps.get(k, 0) + 1
        if e.get("cat") in RUNTIME_CATS:
            launches[k] = launches.get(k, 0) + 1
        if e.get("cat") in ("python_function", "user_annotation"):
            user[k] = user.get(k, 0) + 1
    if steps:
        return max(steps, key=steps.get)
    if not launches:
        raise ValueError("no runtime calls: injector 2 needs a GPU trace")
    return max(launches, key=lambda k: (user.get(k, 0), launches[k]))


def step_spans(events, thread):
    out = [e for e in events if e.get("ph") == "X" and str(e.get("name", "")).startswith("ProfilerStep#")
           and (e.get("pid"), e.get("tid")) == thread and e.get("cat") != "gpu_user_annotation"]
    return sorted(out, key=lambda e: float(e["ts"]))


class Node:
    """One inserted host event and what runs under it, laid out in time by Layout.
    kind: 'cpu' (a Python frame / op / range: children in order, or `self_us` of own
    work), 'rt' (a runtime call; `gpu`: the GPU event it starts; `wait`: 'stream',
    'device' or 'gpu' (until its own GPU event ends) for a blocking call), 'gap' (host time
    with no event: the thread is outside the profiler's view)."""

    def __init__(self, kind, name=None, cat=None, children=None, self_us=0.0, args=None, gpu=None, wait=None):
        self.kind, self.name, self.cat = kind, name, cat
        self.children = children or []
        self.self_us, self.args, self.gpu, self.wait = self_us, args or {}, gpu, wait


class Editor2:
    def __init__(self, doc, rng):
        self.doc, self.rng = doc, rng
        self.events = doc["traceEvents"]
        self.schema = te.Schema(self.events, doc)
        self.thread = host_thread(self.events)
        self.has_py = any(e.get("cat") == "python_function" for e in self.events)
        ids = [int(c) for c in (corr_of(e) for e in self.events) if isinstance(c, int)]
        ids += [int(e["id"]) for e in self.events if e.get("ph") in ("s", "f") and isinstance(e.get("id"), int)]
        self.next_corr = (max(ids) if ids else 0) + 5000
        exts = [(e.get("args") or {}).get(self.schema.ext_key) for e in self.events]
        self.next_ext = max([x for x in exts if isinstance(x, int)] or [0]) + 5000
        pys = [(e.get("args") or {}).get("Python id") for e in self.events]
        self.next_py = max([x for x in pys if isinstance(x, int)] or [0]) + 5000
        self.lat_us = rng.uniform(4.0, 9.0)  # launch-to-start latency of an idle queue on this machine
        self.kernels = [e["name"] for e in self.events if e.get("cat") == self.schema.kernel]

    # ---- queries on the trace as it stands ----

    def gpu_events(self):
        return [e for e in self.events if e.get("cat") in GPU_CATS and e.get("ph") == "X"]

    def stream_of(self, e):
        a = e.get("args") or {}
        return a.get("stream", e.get("tid"))

    def launch_ts(self):
        return {corr_of(e): float(e["ts"]) for e in self.events
                if e.get("cat") in RUNTIME_CATS and corr_of(e) is not None}

    def queue_ends(self, t):
        """stream -> when the GPU work launched before host time t ends."""
        lts = self.launch_ts()
        out = {}
        for e in self.gpu_events():
            lt = lts.get(corr_of(e))
            if (lt is not None and lt < t) or (lt is None and float(e["ts"]) < t):
                s = self.stream_of(e)
                out[s] = max(out.get(s, t), end_of(e))
        return out

    def host_events(self):
        return [e for e in self.events if e.get("ph") == "X" and (e.get("pid"), e.get("tid")) == self.thread
                and e.get("cat") not in GPU_CATS]

    def free_points(self, lo, hi):
        """Host times in [lo, hi) where the host thread runs no operator or runtime call
        (Python frames and record_function ranges may span them, and grow): the points
        between two calls of user code, at any Python depth."""
        busy = sorted((float(e["ts"]), end_of(e)) for e in self.host_events()
                      if (e.get("cat") in (self.schema.op, "cpu_op", "Operator") or e.get("cat") in RUNTIME_CATS)
                      and not str(e.get("name", "")).startswith("ProfilerStep#"))  # 2021 traces: steps are Operators
        points, cover = [], lo
        for b, f in busy:
            if b > cover and b > lo:
                # the gap (cover, b) is free: a few points in it
                points.append(cover + (b - cover) * self.rng.uniform(0.1, 0.9))
            cover = max(cover, f)
        if cover < hi:
            points.append(cover + (hi - cover) * self.rng.uniform(0.05, 0.5))
        # Not inside a built-in's frame (`<built-in method layer_norm ...>`, the C call that
        # runs the next op): user code does not run there.
        builtin = sorted((float(e["ts"]), end_of(e)) for e in self.host_events()
                         if e.get("cat") == "python_function" and str(e.get("name", "")).startswith("<built-in"))
        merged = []
        for b, f in builtin:
            if merged and b <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], f)
            else:
                merged.append([b, f])
        starts = [m[0] for m in merged]

        def in_builtin(p):
            i = bisect.bisect_right(starts, p) - 1
            return i >= 0 and merged[i][0] < p < merged[i][1]
        return [p for p in points if lo < p < hi and not in_builtin(p)]

    def py_parent(self, t):
        """Python id of the innermost Python frame spanning t on the host thread."""
        best = None
        for e in self.host_events():
            if e.get("cat") == "python_function" and float(e["ts"]) < t < end_of(e):
                if best is None or float(e["dur"]) < float(best["dur"]):
                    best = e
        return (best.get("args") or {}).get("Python id") if best else None

    # ---- the edit ----

    def shift_host(self, t, delta):
        """Host events at or after t move by delta, spanning ones grow; flows' start ends move
        with their calls. Returns the GPU events launched at or after t (to be re-queued),
        with their original start, end and launch."""
        lts = self.launch_ts()
        moved = []
        for e in self.events:
            if e.get("ph") == "M" or "ts" not in e:
                continue
            cat, ts = e.get("cat"), float(e["ts"])
            if cat in GPU_CATS:
                lt = lts.get(corr_of(e))
                if (lt is not None and lt >= t) or (lt is None and ts >= t):
                    moved.append((e, ts, end_of(e), lt))
                continue
            if cat == "gpu_user_annotation":
                continue
            if e.get("ph") == "f" and cat in FLOW_CATS:
                continue  # the GPU end of a launch flow follows its GPU event
            if ts >= t:
                e["ts"] = round(ts + delta, 3)
            elif e.get("ph") == "X" and end_of(e) > t:
                e["dur"] = round(float(e.get("dur", 0)) + delta, 3)
        return moved

    def requeue(self, moved, delta, busy_until, waits=None):
        """FIFO per stream: a moved GPU event starts at the latest of its recorded start, its
        new launch + latency, and the end of the work queued before it (busy_until: stream
        -> end of the work launched before the moved events, inserted work included).
        waits: stream -> time before which it may not start (a cudaStreamWaitEvent).
        Jitter: after a gap opens, the first kernels run slower (clock ramp-up)."""
        r = self.rng
        ann = [e for e in self.events if e.get("cat") == "gpu_user_annotation"]
        old = {id(e): (float(e["ts"]), end_of(e)) for e in self.gpu_events()}
        by_stream = {}
        for item in moved:
            by_stream.setdefault(self.stream_of(item[0]), []).append(item)
        for s, items in by_stream.items():
            items.sort(key=lambda x: x[1])
            free = busy_until.get(s, -math.inf)
            floor = (waits or {}).get(s, -math.inf)
            ramp = 0
            for e, ts0, end0, lt in items:
                dur = end0 - ts0
                launch = (lt + delta) if lt is not None else ts0 + delta
                start = max(ts0, launch + min(self.lat_us, max(ts0 - lt, 0.5)) if lt is not None else ts0 + delta,
                            free, floor)
                if start > free + 50.0 and ramp == 0:
                    ramp = r.randint(3, 12)  # a gap opened: the next few kernels run slower
                if ramp > 0 and e.get("cat") in ("kernel", "Kernel"):
                    dur *= 1.0 + r.uniform(0.01, 0.08)
                    ramp -= 1
                elif start - ts0 < 5000.0:
                    dur *= 1.0 + r.uniform(-0.02, 0.02)
                e["ts"], e["dur"] = round(start, 3), round(max(dur, 0.1), 3)
                free = start + dur
        # Flow ends on the GPU sit at their GPU event; GPU-side annotations follow the GPU
        # events at their edges.
        by_corr = {corr_of(e): e for e in self.gpu_events() if corr_of(e) is not None}
        for e in self.events:
            if e.get("ph") == "f" and e.get("cat") in FLOW_CATS and e.get("id") in by_corr:
                e["ts"] = by_corr[e["id"]]["ts"]
            elif e.get("ph") == "s" and e.get("cat") in FLOW_CATS and e.get("id") in by_corr:
                pass
        spans = sorted(old.items(), key=lambda kv: kv[1][0])
        cur = {id(e): e for e in self.gpu_events()}
        for a in ann:
            b, f = float(a["ts"]), end_of(a)
            inside = [cur[k] for k, (s0, e0) in spans if s0 >= b and e0 <= f and k in cur]
            if inside:
                nb = min(float(x["ts"]) for x in inside)
                nf = max(end_of(x) for x in inside)
                nb = min(nb, b)
                a["ts"], a["dur"] = round(nb, 3), round(max(nf, f) - nb, 3)

    # ---- new events ----

    def _ext(self):
        self.next_ext += 1
        return self.next_ext

    def add_cpu(self, name, cat, ts, dur, args, py_parent):
        pid, tid = self.thread
        a = dict(args or {})
        if cat == "python_function":
            self.next_py += 1
            a = {"Python parent id": py_parent if py_parent is not None else 0, "Python id": self.next_py, **a}
        else:
            a = {self.schema.ext_key: self._ext(), **a}
        self.events.append({"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": round(ts, 3),
                            "dur": round(max(dur, 0.05), 3), "args": a})
        return a.get("Python id", py_parent)

    def add_launch(self, name, ts, dur, gpu):
        pid, tid = self.thread
        self.next_corr += 1
        corr = self.next_corr
        ext = self.next_ext
        self.events.append({"ph": "X", "cat": self.schema.runtime, "name": name, "pid": pid, "tid": tid,
                            "ts": round(ts, 3), "dur": round(max(dur, 0.1), 3),
                            "args": {"correlation": corr, self.schema.ext_key: ext}})
        if gpu is None:
            return
        s = gpu["stream"]
        tid_gpu = self.schema.gpu_tid if s == self.schema.stream else (
            f"stream {s}" if isinstance(self.schema.gpu_tid, str) else s)
        a = {"device": self.schema.device, "stream": s, "correlation": corr, self.schema.ext_key: ext}
        a.update(gpu.get("args") or {})
        self.events.append({"ph": "X", "cat": gpu["cat"], "name": gpu["name"], "pid": self.schema.gpu_pid,
                            "tid": tid_gpu, "ts": round(gpu["ts"], 3), "dur": round(gpu["dur"], 3), "args": a})
        self.events.append({"ph": "s", "id": corr, "pid": pid, "tid": tid, "ts": round(ts, 3),
                            "cat": self.schema.flow_cat, "name": self.schema.flow_name})
        self.events.append({"ph": "f", "id": corr, "pid": self.schema.gpu_pid, "tid": tid_gpu,
                            "ts": round(gpu["ts"], 3), "cat": self.schema.flow_cat, "name": self.schema.flow_name,
                            "bp": "e"})


class Layout:
    """Assigns times to a tree of Nodes from host time t on, against the device queue as it
    stands at t (so a blocking call lasts until the work it waits for is done), and writes
    the events. Two passes: plan() (times only, so the inserted span is known before the
    trace shifts), then emit()."""

    def __init__(self, ed, t):
        self.ed, self.t = ed, t
        self.queue = dict(ed.queue_ends(t))  # stream -> busy until
        self.out = []  # (node, ts, dur, gpu)
        self.gpu_end = t
        self.r = ed.rng

    def plan(self, nodes):
        cur = self.t
        for n in nodes:
            cur = self._place(n, cur) + self.r.uniform(0.3, 2.0)
        return cur

    def _place(self, n, start):
        r = self.r
        if n.kind == "gap":
            return start + n.self_us
        if n.kind == "rt":
            dur = n.self_us or r.uniform(3.0, 9.0)
            gpu = None
            if n.gpu is not None:
                g = dict(n.gpu)
                s = g["stream"]
                gts = max(start + self.ed.lat_us * r.uniform(0.8, 1.3), self.queue.get(s, -math.inf), g.get("after", -math.inf))
                g["ts"] = gts
                self.queue[s] = gts + g["dur"]
                self.gpu_end = max(self.gpu_end, gts + g["dur"])
                gpu = g
                if n.wait == "gpu":  # a synchronous copy returns once it is done
                    dur = max(dur, gts + g["dur"] - start + r.uniform(1.0, 3.0))
            if n.wait == "stream":
                dur = max(dur, self.queue.get(self.ed.schema.stream, start) - start + r.uniform(2.0, 6.0))
            elif n.wait == "device":
                dur = max(dur, max(self.queue.values(), default=start) - start + r.uniform(2.0, 6.0))
            self.out.append((n, start, dur, gpu))
            return start + dur
        # cpu node
        idx = len(self.out)
        self.out.append(None)
        cur = start + (r.uniform(0.5, 3.0) if n.children else 0.0)
        for c in n.children:
            cur = self._place(c, cur) + r.uniform(0.2, 1.5)
        end = max(cur, start + n.self_us) + (r.uniform(0.3, 2.0) if n.children else 0.0)
        self.out[idx] = (n, start, end - start, None)
        return end

    def emit(self):
        ed = self.ed
        parent_stack = []  # (end, python id)
        base = ed.py_parent(self.t)
        for n, ts, dur, gpu in self.out:
            while parent_stack and parent_stack[-1][0] <= ts + 1e-9:
                parent_stack.pop()
            parent = parent_stack[-1][1] if parent_stack else base
            if n.kind == "rt":
                ed.add_launch(n.name, ts, dur, gpu)
                continue
            cat = n.cat
            if cat == "python_function" and not ed.has_py:
                continue  # the trace records no Python frames: leave the frame out
            pyid = ed.add_cpu(n.name, cat, ts, dur, n.args, parent)
            if cat == "python_function":
                parent_stack.append((ts + dur, pyid))


def py(name, children=None, self_us=0.0):
    return Node("cpu", name, "python_function", children, self_us)


def op(ed, name, children=None, self_us=0.0, args=None):
    return Node("cpu", name, ed.schema.op, children, self_us, args)


def rng_range(ed, name, children=None, self_us=0.0):
    cat = "user_annotation" if ed.schema.op == "cpu_op" else ed.schema.op
    return Node("cpu", name, cat, children, self_us)


class Patterns:
    """Each builds the inserted tree for a pattern of about `us` microseconds of cost at host
    time t; returns (nodes, options) where options may ask for a compute-stream wait on a
    collective."""

    def __init__(self, ed):
        self.ed, self.r = ed, ed.rng
        self.rt = ed.schema.rt_prefix
        self.line = self.r.randint(40, 900)

    def _f(self, path, fn):
        self.line += self.r.randint(1, 40)
        return f"{path}({self.line}): {fn}"

    def kname(self, must=("elementwise",), fallback="void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)"):
        names = [n for n in self.ed.kernels if any(m in n for m in must)]
        return self.r.choice(names) if names else fallback

    def kern(self, name, dur, stream=None, args=None):
        return {"name": name, "cat": self.ed.schema.kernel, "dur": dur,
                "stream": self.ed.schema.stream if stream is None else stream,
                "args": args or {"grid": [self.r.choice([1, 2, 4, 8, 40, 80]), 1, 1], "block": [128, 1, 1]}}

    def copy(self, kind, nbytes, dur, stream=None):
        names = {"HtoD_pageable": "Memcpy HtoD (Pageable -> Device)", "DtoH_pageable": "Memcpy DtoH (Device -> Pageable)",
                 "HtoD_pinned": "Memcpy HtoD (Pinned -> Device)", "DtoH_pinned": "Memcpy DtoH (Device -> Pinned)",
                 "DtoD": "Memcpy DtoD (Device -> Device)"}
        return {"name": names[kind], "cat": self.ed.schema.memcpy, "dur": dur,
                "stream": self.ed.schema.stream if stream is None else stream,
                "args": {"bytes": int(nbytes), "memory bandwidth (GB/s)": round(nbytes / max(dur, 0.1) / 1e3, 3)}}

    def launch(self, gpu):
        return Node("rt", self.rt + "LaunchKernel", gpu=gpu, self_us=self.r.uniform(4.0, 9.0))

    def pywork(self, us, names):
        """Python-only host work of about `us`: a few frames, each with built-in calls under it."""
        r, out, left = self.r, [], us
        while left > 5.0:
            d = min(left, max(5.0, us * r.uniform(0.1, 0.5)))
            kids = [Node("cpu", r.choice(["<built-in method append of list object at 0x7f3a>",
                                          "<built-in function len>", "<built-in function isinstance>",
                                          "<built-in function sorted>"]), "python_function", None, d * r.uniform(0.05, 0.3))
                    for _ in range(r.randint(0, 3))]
            out.append(py(self._f(*r.choice(names)), kids, d))
            left -= d + 1.0
        return out

    # ---- patterns ----

    def host_sync(self, us):
        ed, r = self.ed, self.r
        variant = r.choice(["item", "synchronize", "cpu", "nonzero"])
        post = self.pywork(max(5.0, us), [("train.py", "log_metrics"), ("logging/__init__.py", "info"),
                                          ("utils/meters.py", "update")])
        if variant == "item":
            call = op(ed, "aten::item", [op(ed, "aten::_local_scalar_dense", [
                Node("rt", self.rt + "MemcpyAsync", gpu=self.copy("DtoH_pageable", 4, r.uniform(1.2, 2.6))),
                Node("rt", self.rt + "StreamSynchronize", wait="stream")])], args={"Input Dims": [[]]})
            top = py(self._f("train.py", "training_step"), [py("<built-in method item of Tensor object at 0x7f2c>", [call])])
        elif variant == "synchronize":
            call = Node("rt", self.rt + "DeviceSynchronize", wait="device")
            top = py(self._f("train.py", "training_step"), [
                py(self._f("torch/cuda/__init__.py", "synchronize"), [py("<built-in function _cuda_synchronize>", [call])])])
            if not ed.has_py:
                top = rng_range(ed, "torch.cuda.synchronize", [call])
        elif variant == "cpu":
            nb = r.choice([256, 4096, 65536])
            call = op(ed, "aten::to", [op(ed, "aten::_to_copy", [op(ed, "aten::copy_", [
                Node("rt", self.rt + "MemcpyAsync", gpu=self.copy("DtoH_pageable", nb, 1.5 + nb / 12e3)),
                Node("rt", self.rt + "StreamSynchronize", wait="stream")])])], args={"Input Dims": [[nb // 4], [], [], [], [], [], []]})
            top = py(self._f("eval.py", "accumulate"), [py("<built-in method cpu of Tensor object at 0x7f55>", [call])])
        else:
            call = op(ed, "aten::nonzero", [
                self.launch(self.kern(self.kname(("nonzero", "elementwise", "index")), r.uniform(3.0, 12.0))),
                Node("rt", self.rt + "MemcpyAsync", gpu=self.copy("DtoH_pageable", 8, r.uniform(1.2, 2.5))),
                Node("rt", self.rt + "StreamSynchronize", wait="stream")], args={"Input Dims": [[r.randint(1000, 100000)]]})
            top = py(self._f("model.py", "select_boxes"), [py("<built-in method nonzero of Tensor object at 0x7f77>", [call])])
        return [top] + post, {"variant": variant}

    def pageable_memcpy(self, us):
        ed, r = self.ed, self.r
        bw = r.uniform(2.5, 9.0) * 1e3  # bytes per us (GB/s * 1e3): staged through a bounce buffer
        nbytes = int(max(us, 20.0) * bw)
        direction = r.choice(["HtoD_pageable", "HtoD_pageable", "DtoH_pageable"])
        rt = Node("rt", self.rt + "MemcpyAsync", gpu=self.copy(direction, nbytes, nbytes / bw), wait="gpu")
        dims = {"Input Dims": [[nbytes // 4], [], [], [], [], [], []]}
        call = op(ed, "aten::to", [op(ed, "aten::_to_copy", [op(ed, "aten::empty_strided", self_us=r.uniform(3, 9)),
                                                              op(ed, "aten::copy_", [rt])])], args=dims)
        where = ("train.py", "move_batch") if direction.startswith("HtoD") else ("eval.py", "gather_outputs")
        meth = "to" if direction.startswith("HtoD") else "cpu"
        return [py(self._f(*where), [py(f"<built-in method {meth} of Tensor object at 0x7f1d>", [call])])], {"bytes": nbytes}

    def small_transfers(self, us):
        ed, r = self.ed, self.r
        n = int(min(1500, max(4, us / r.uniform(18.0, 40.0))))
        kids = []
        for _ in range(n):
            nb = r.choice([4, 8, 16, 64, 256, 1024, 8192])
            rt = Node("rt", self.rt + "MemcpyAsync", gpu=self.copy("HtoD_pageable", nb, r.uniform(1.0, 2.4)), wait="gpu")
            t_op = op(ed, "aten::to", [op(ed, "aten::_to_copy", [op(ed, "aten::copy_", [rt])])],
                      args={"Input Dims": [[], [], [], [], [], [], []]})
            kids.append(py("<built-in method tensor of type object at 0x7f08>", [op(ed, "aten::lift_fresh", self_us=0.8), t_op]))
        return [py(self._f("train.py", "build_targets"), kids)], {"copies": n}

    def offload_pingpong(self, us):
        ed, r = self.ed, self.r
        pairs = r.randint(1, 3)
        bw = r.uniform(18.0, 25.0) * 1e3
        nbytes = int(max(us / (2 * pairs), 20.0) * bw)
        kids = []
        for i in range(pairs):
            for kind, meth in (("DtoH_pinned", "cpu"), ("HtoD_pinned", "cuda")):
                rt = Node("rt", self.rt + "MemcpyAsync", gpu=self.copy(kind, nbytes, nbytes / bw))
                sync = Node("rt", self.rt + "StreamSynchronize", wait="stream")
                kids.append(py(f"<built-in method {meth} of Tensor object at 0x7f6a>", [
                    op(ed, "aten::to", [op(ed, "aten::_to_copy", [op(ed, "aten::copy_", [rt, sync])])],
                       args={"Input Dims": [[nbytes // 2], [], [], [], [], [], []]})]))
        return [py(self._f("offload.py", "swap_activations"), kids)], {"pairs": pairs, "bytes": nbytes}

    def dataloader_stall(self, us):
        ed, r = self.ed, self.r
        n = r.randint(2, 16)
        items = []
        per = us / n
        for _ in range(n):
            items.append(py(self._f("dataset.py", "__getitem__"), [
                py(self._f("PIL/Image.py", r.choice(["resize", "convert", "open"])), self_us=per * r.uniform(0.3, 0.6)),
                py(self._f("torchvision/transforms/functional.py", "to_tensor"), [
                    op(ed, "aten::div", self_us=per * r.uniform(0.05, 0.15)),
                    op(ed, "aten::contiguous", self_us=per * r.uniform(0.02, 0.08))])]))
        collate = py(self._f("torch/utils/data/_utils/collate.py", "default_collate"),
                     [op(ed, "aten::stack", self_us=r.uniform(50, 400), args={"Input Dims": [[]]})])
        fetch = py(self._f("torch/utils/data/_utils/fetch.py", "fetch"), items + [collate])
        nxt = rng_range(ed, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", [
            py(self._f("torch/utils/data/dataloader.py", "_next_data"), [fetch]) if ed.has_py else fetch])
        if not ed.has_py:
            nxt.children = items + [collate]
        return [py(self._f("torch/utils/data/dataloader.py", "__next__"), [nxt])], {"samples": n}

    def cpu_bound_step(self, us):
        ed, r = self.ed, self.r
        if ed.has_py:
            work = self.pywork(us * 0.85, [("numpy/lib/function_base.py", "percentile"), ("metrics.py", "update_confusion"),
                                            ("json/encoder.py", "encode"), ("postprocess.py", "decode_sequences")])
            work.append(op(ed, r.choice(["aten::sort", "aten::histc", "aten::unique"]), self_us=us * 0.1,
                           args={"Input Dims": [[r.randint(1000, 500000)]]}))
            return [py(self._f("train.py", "compute_metrics"), work)], {}
        kids, left = [], us
        while left > 20.0:
            d = min(left, max(20.0, us * r.uniform(0.1, 0.35)))
            kids.append(op(ed, r.choice(["aten::sort", "aten::histc", "aten::unique", "aten::cumsum", "aten::topk"]),
                           self_us=d * 0.95, args={"Input Dims": [[r.randint(1000, 500000)]]}))
            left -= d + 1.0
        return [rng_range(ed, r.choice(["compute_metrics", "postprocess", "update_stats"]), kids)], {}

    def alloc_churn(self, us):
        ed, r = self.ed, self.r
        nf = r.randint(1, 6)
        frees = [Node("rt", self.rt + "Free", wait="device" if i == 0 else None, self_us=r.uniform(20.0, 200.0))
                 for i in range(nf)]
        empty = py(self._f("torch/cuda/memory.py", "empty_cache"), [py("<built-in function _cuda_emptyCache>", frees)])
        if not ed.has_py:
            empty = rng_range(ed, "torch.cuda.empty_cache", frees)
        nm = int(min(40, max(2, us / r.uniform(150.0, 500.0))))
        mallocs = [op(ed, "aten::empty", [Node("rt", self.rt + "Malloc", self_us=max(15.0, us / nm * r.uniform(0.4, 0.9)))],
                      args={"Input Dims": [[], [], [], [], [], []]}) for _ in range(nm)]
        return [empty, py(self._f("model.py", "forward"), mallocs)], {"frees": nf, "mallocs": nm}

    def launch_bound(self, us):
        ed, r = self.ed, self.r
        n = int(min(3000, max(20, us / r.uniform(12.0, 25.0))))
        name = self.kname()
        kids = [op(ed, r.choice(["aten::add", "aten::mul", "aten::add_", "aten::mul_", "aten::sub", "aten::where"]),
                   [self.launch(self.kern(name, r.uniform(1.2, 4.0)))], self_us=r.uniform(8.0, 18.0),
                   args={"Input Dims": [[r.randint(1, 256)], [r.randint(1, 256)]]}) for _ in range(n)]
        return [py(self._f("model.py", r.choice(["decode_step", "apply_rotary", "sample_tokens"])), kids)], {"kernels": n}

    def _per_param(self, us, ops_per_param, top_fn, annotation):
        ed, r = self.ed, self.r
        n = int(min(400, max(8, us / (ops_per_param * r.uniform(10.0, 20.0)))))
        kids = []
        for _ in range(n):
            numel = r.choice([64, 256, 1024, 4096, 65536, 262144, 1048576])
            for o in r.sample(["aten::mul_", "aten::add_", "aten::addcmul_", "aten::sqrt", "aten::div", "aten::addcdiv_",
                               "aten::lerp_", "aten::zero_"], ops_per_param):
                kids.append(op(ed, o, [self.launch(self.kern(self.kname(), 1.5 + numel / 2e5))],
                               self_us=r.uniform(6.0, 14.0), args={"Input Dims": [[numel]]}))
        body = rng_range(ed, annotation, kids)
        return [py(self._f(*top_fn), [body])], {"params": n}

    def optimizer_single_tensor(self, us):
        opt = self.r.choice(["adam", "adamw", "sgd"])
        return self._per_param(us, 5 if opt != "sgd" else 2, (f"torch/optim/{opt}.py", f"_single_tensor_{opt}"),
                               f"Optimizer.step#{ {'adam': 'Adam', 'adamw': 'AdamW', 'sgd': 'SGD'}[opt]}.step")

    def grad_not_set_to_none(self, us):
        ed, r = self.ed, self.r
        n = int(min(400, max(8, us / r.uniform(12.0, 25.0))))
        fill = self.kname(("Fill", "fill", "elementwise"))
        kids = [op(ed, "aten::zero_", [op(ed, "aten::fill_", [self.launch(self.kern(fill, r.uniform(1.5, 20.0)))])],
                   args={"Input Dims": [[r.choice([64, 1024, 65536, 1048576])]]}) for _ in range(n)]
        return [py(self._f("torch/optim/optimizer.py", "zero_grad"),
                   [rng_range(ed, "Optimizer.zero_grad#SGD.zero_grad", kids)])], {"params": n}

    def _gpu_chain(self, us, ops, kernel_must, top):
        """Ops launched back to back whose kernels cost most of `us` on the GPU."""
        ed, r = self.ed, self.r
        n = r.randint(4, 16)
        kids = []
        for _ in range(n):
            kd = us / n * r.uniform(0.7, 1.3)
            kids.append(op(ed, r.choice(ops), [self.launch(self.kern(self.kname(kernel_must), kd))],
                           self_us=r.uniform(8.0, 20.0), args={"Input Dims": [[r.randint(1, 64), 3, 224, 224]]}))
        return [py(self._f(*top), kids)], {"ops": n}

    def unfused_elementwise(self, us):
        return self._gpu_chain(us, ["aten::mul", "aten::add", "aten::sigmoid", "aten::gelu", "aten::div", "aten::sub"],
                               ("elementwise",), ("model.py", "activation_chain"))

    def cast_churn(self, us):
        ed, r = self.ed, self.r
        n = r.randint(6, 60)
        kids = []
        for _ in range(n):
            kd = us / n * r.uniform(0.6, 1.4)
            kids.append(op(ed, "aten::to", [op(ed, "aten::_to_copy", [op(ed, "aten::copy_", [
                self.launch(self.kern(self.kname(("copy", "elementwise")), kd))])])],
                args={"Input Dims": [[r.choice([768, 1024, 4096]), r.choice([768, 1024, 4096])], [], [], [], [], [], []]}))
        return [py(self._f("model.py", "cast_weights"), [py("<built-in method half of Tensor object at 0x7f4b>", kids)])], {"casts": n}

    def redundant_copy(self, us):
        ed, r = self.ed, self.r
        n = r.randint(2, 10)
        kids = []
        for _ in range(n):
            kd = us / n * r.uniform(0.6, 1.4)
            if r.random() < 0.5:
                nb = int(kd * r.uniform(800.0, 1500.0) * 1e3 / 1e3)
                inner = Node("rt", self.rt + "MemcpyAsync", gpu=self.copy("DtoD", nb, kd))
            else:
                inner = self.launch(self.kern(self.kname(("copy", "elementwise")), kd))
            kids.append(op(ed, r.choice(["aten::clone", "aten::contiguous"]), [op(ed, "aten::copy_", [inner])],
                           args={"Input Dims": [[r.randint(1, 64), 3, 224, 224]]}))
        return [py(self._f("model.py", "forward"), kids)], {"copies": n}

    def gpu_idle(self, us):
        # The host thread leaves the profiler's view (a lock, a blocking read in C code):
        # no event at all, the queue drains and the GPU waits.
        return [Node("gap", self_us=us)], {}

    def _comm(self, us, blocks):
        ed, r = self.ed, self.r
        names = [n for n in ed.kernels if "nccl" in n.lower() or "rccl" in n.lower()]
        kname = r.choice(names) if names else "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"
        others = sorted(s for s in ed.schema.streams if s != ed.schema.stream and isinstance(s, int))
        stream = ed.schema.stream if blocks else (others[-1] if others else max(
            [s for s in ed.schema.streams if isinstance(s, int)] or [7]) + 13)
        nb = r.choice([4, 16, 25, 64]) * 1024 * 1024
        k = self.kern(kname, max(us, 30.0), stream=stream, args={"grid": [r.choice([2, 4, 8, 16]), 1, 1], "block": [512, 1, 1]})
        call = op(ed, "c10d::allreduce_", [op(ed, "record_param_comms", [self.launch(k)], args={"Input Dims": [[nb // 4]]})],
                  args={"Input Dims": [[nb // 4]]})
        kids = [call]
        if not blocks:
            # wait() right after issuing: the compute stream waits on the collective's event.
            kids.append(op(ed, "aten::wait", [Node("rt", self.rt + "StreamWaitEvent", self_us=r.uniform(2.0, 5.0))]))
        top = py(self._f("torch/distributed/distributed_c10d.py", "all_reduce"), kids)
        return [top], {"stream": stream, "collective_us": round(k["dur"], 3), "wait_stream": not blocks}

    def comm_not_overlapped(self, us):
        return self._comm(us, False)

    def comm_blocks_compute(self, us):
        return self._comm(us, True)


def inject_one(ed, pat, pattern, t, us):
    """Writes one pattern at host time t; returns (range begin, range end, inserted us, record)."""
    if pattern == "gpu_idle":
        us += max(0.0, ed.queue_ends(t).get(ed.schema.stream, t) - t)  # the backlog drains first
    nodes, what = getattr(pat, pattern)(us)
    lay = Layout(ed, t)
    host_end = lay.plan(nodes)
    delta = host_end - t
    drain = ed.queue_ends(t).get(ed.schema.stream, t)
    moved = ed.shift_host(t, delta)
    lay.emit()
    waits = {}
    if what.get("wait_stream"):
        waits[ed.schema.stream] = lay.queue.get(what["stream"], t)
    ed.requeue(moved, delta, lay.queue, waits)
    # The gap this opened on the compute stream: from the end of the inserted work to the
    # first re-queued event there.
    end = max(host_end, lay.gpu_end)
    nxt = [float(e["ts"]) for e, *_ in moved if ed.stream_of(e) == ed.schema.stream and float(e["ts"]) >= host_end - 1.0]
    if nxt and min(nxt) <= end + GAP_TAIL_US:
        end = max(end, min(nxt))
    begin = t
    if pattern == "gpu_idle":
        begin = min(max(drain, t), host_end)
    what = dict(what, inserted_us=round(delta, 3), target_us=round(us, 3))
    return begin, end, delta, what


def native_labels(ed, lo, hi):
    """Single-process DataLoader __next__ longer than 10 ms: dataloader_stall as recorded."""
    out = []
    gstarts = sorted(float(g["ts"]) for g in ed.gpu_events())
    for x in ed.events:
        if x.get("ph") == "X" and "_SingleProcessDataLoaderIter.__next__" in str(x.get("name")) \
                and float(x.get("dur", 0)) > 10000.0 and lo <= float(x["ts"]) < hi:
            end = end_of(x)
            later = [g for g in gstarts if g >= end]
            if later:
                end = max(end, min(later[0], end + GAP_TAIL_US))
            out.append({"type": "dataloader_stall", "ts_begin": round(float(x["ts"]), 3), "ts_end": round(end, 3),
                        "native": True})
    return out


_CACHE = {}


def choose_crop(doc, rng, max_events):
    """(w0, w1, steps in it): 2-3 whole steps where the trace has them, else a slice of the
    host thread's GPU-launching span holding about max_events events."""
    ev = doc["traceEvents"]
    thread = host_thread(ev)
    st = step_spans(ev, thread)
    timed = [e for e in ev if e.get("ph") == "X" and "ts" in e]
    if len(st) >= 2:
        per_step = len(timed) / len(st)
        n = max(1, min(3, len(st) - 1 if len(st) > 2 else len(st), int(max_events / max(per_step, 1.0))))
        lo = 1 if len(st) - n >= 1 else 0
        first = rng.randint(lo, len(st) - n)
        sel = st[first:first + n]
        return float(sel[0]["ts"]), end_of(sel[-1]), n
    if len(timed) <= max_events:
        if st:
            return float(st[0]["ts"]), end_of(st[0]), 1
        return min(float(e["ts"]) for e in timed), max(end_of(e) for e in timed), 0
    # A slice starting at a launch of the host thread, as long as max_events allow; of a few
    # random starts, the one that launches the most GPU work (traces without steps hold long
    # stretches of host-only Python work).
    gpu_corr = {corr_of(e) for e in ev if e.get("cat") in GPU_CATS and corr_of(e) is not None}
    launches = sorted(float(e["ts"]) for e in ev if e.get("cat") in RUNTIME_CATS
                      and (e.get("pid"), e.get("tid")) == thread and corr_of(e) in gpu_corr)
    ts = sorted(float(e["ts"]) for e in timed)
    best = None
    for _ in range(8):
        w0 = launches[rng.randrange(len(launches))] - rng.uniform(5.0, 200.0)
        k = bisect.bisect_left(ts, w0)
        w1 = ts[min(len(ts) - 1, k + max_events)]
        n = bisect.bisect_right(launches, w1) - bisect.bisect_left(launches, w0)
        if best is None or n > best[0]:
            best = (n, w0, w1)
    return best[1], best[2], 0


def make(source_path, out_path, inject, seed, max_events=8000):
    """One trace; returns the manifest fields it determines."""
    rng = random.Random(seed)
    if source_path not in _CACHE:
        _CACHE[source_path] = load_source(source_path)
    src = _CACHE[source_path]
    w0, w1, n_steps = choose_crop(src, rng, max_events)
    doc = te.crop_span(src, w0, w1)
    ed = Editor2(doc, rng)
    pat = Patterns(ed)
    st = step_spans(ed.events, ed.thread)
    gpu = ed.gpu_events()
    if st:
        lo, hi = float(st[0]["ts"]), end_of(st[-1])
        step_us = (hi - lo) / len(st)
    else:
        lo, hi = min(float(g["ts"]) for g in gpu), max(end_of(g) for g in gpu)
        step_us = hi - lo
    ranges, ops = [], []
    for k, pattern in enumerate(inject):
        share = math.exp(rng.uniform(math.log(0.005), math.log(0.5)))
        us = min(share * step_us, 250000.0)
        # Anywhere in the steady state; DataLoader waits where loaders run (a step's start),
        # optimizer and zero_grad work near a step's end or start, sometimes across the boundary.
        if st and pattern == "dataloader_stall":
            s = rng.choice(st)
            pts = ed.free_points(float(s["ts"]), float(s["ts"]) + 0.15 * float(s["dur"]))
        elif st and pattern in ("optimizer_single_tensor", "grad_not_set_to_none") and rng.random() < 0.7:
            s = rng.choice(st)
            frac = (0.85, 1.0) if pattern == "optimizer_single_tensor" else (0.0, 0.2)
            pts = ed.free_points(float(s["ts"]) + frac[0] * float(s["dur"]), float(s["ts"]) + frac[1] * float(s["dur"]))
        else:
            pts = ed.free_points(lo, hi)
        # Points late in a step (its last 3%) put the effect across the step boundary.
        if st and rng.random() < 0.25:
            s = rng.choice(st)
            late = ed.free_points(end_of(s) - 0.03 * float(s["dur"]), end_of(s) - 1.0)
            pts = late or pts
        pts = [p for p in pts if lo + 1.0 < p < hi - 1.0] or [p for p in ed.free_points(lo, hi) if lo + 1.0 < p < hi - 1.0]
        if not pts:
            raise ValueError(f"{os.path.basename(source_path)}: no free host point for {pattern}")
        t = rng.choice(pts)
        begin, end, delta, what = inject_one(ed, pat, pattern, t, us)
        for rg in ranges:
            if rg["ts_begin"] >= t:
                rg["ts_begin"] = round(rg["ts_begin"] + delta, 3)
            if rg["ts_end"] >= t:
                rg["ts_end"] = round(rg["ts_end"] + delta, 3)
        hi += delta
        ranges.append({"type": pattern, "ts_begin": round(begin, 3), "ts_end": round(end, 3)})
        ops.append(dict(pattern=pattern, at=round(t, 3), share_of_step=round(share, 5), **what))
        st = step_spans(ed.events, ed.thread)
        if st:
            lo, hi = float(st[0]["ts"]), end_of(st[-1])
    native = native_labels(ed, lo, hi)
    for rg in native:
        rg.pop("native")
    # Ranges lie inside the steady state ttap cuts into windows (the steps, or the GPU span
    # of a trace without them): the GPU tail of an effect at the end of the last step is cut.
    if not st:
        gpu = ed.gpu_events()
        lo, hi = min(float(g["ts"]) for g in gpu), max(end_of(g) for g in gpu)
    clipped = []
    for rg in ranges + native:
        b, f = max(rg["ts_begin"], lo), min(rg["ts_end"], hi)
        if f > b:
            clipped.append(dict(rg, ts_begin=round(b, 3), ts_end=round(f, 3)))
        elif rg in ranges:
            raise ValueError(f"{os.path.basename(source_path)}: {rg['type']} fell outside the steady state")
    n_native = len(native)
    ranges = clipped
    # A new time origin, as another recording of the job would have (every trace, good or bad).
    off = round(rng.uniform(-3e5, 3e5), 3)
    for e in ed.events:
        if "ts" in e and e.get("ph") != "M":
            e["ts"] = round(float(e["ts"]) + off, 3)
    for rg in ranges:
        rg["ts_begin"] = round(rg["ts_begin"] + off, 3)
        rg["ts_end"] = round(rg["ts_end"] + off, 3)
    ranges.sort(key=lambda x: (x["ts_begin"], x["type"]))
    ed.events.sort(key=lambda e: (e.get("ph") != "M", float(e.get("ts", 0))))
    te.write(ed.doc, out_path)
    return {"anti_patterns": ranges,
            "inject2": {"source": os.path.basename(source_path), "crop_us": [round(w0, 3), round(w1, 3)],
                        "steps": n_steps, "ops": ops, "native_labels": n_native, "seed": seed}}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("source")
    p.add_argument("out")
    p.add_argument("--inject", default="")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-events", type=int, default=8000)
    a = p.parse_args(argv)
    inject = [x for x in a.inject.split(",") if x]
    for x in inject:
        if x not in PATTERNS:
            p.error(f"--inject {x}: not a pattern of injector 2 ({', '.join(PATTERNS)})")
    try:
        fields = make(a.source, a.out, inject, a.seed, a.max_events)
    except (OSError, ValueError, KeyError) as err:
        print(f"inject2.py: error: {err}", file=sys.stderr)
        return 2
    print(json.dumps(fields))
    return 0


if __name__ == "__main__":
    sys.exit(main())
