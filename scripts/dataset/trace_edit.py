"""Editing real Kineto traces while keeping them valid: schema detection, steady-state
crops, and inserting host time at a point (everything later moves, GPU work by its
launch). surgery.py builds its injections on these.

Validity kept by every edit: CPU events still nest by time per thread; a GPU kernel, copy
or memset starts after the runtime call that launched it (linked by correlation id) and
never overlaps the one before it on its stream; flow events (ac2g / async "launch") keep
their ids and sit at the times of the events they join."""

import copy
import gzip
import json

GPU_CATS = {"kernel", "Kernel", "gpu_memcpy", "Memcpy", "gpu_memset", "Memset"}
RUNTIME_CATS = {"cuda_runtime", "Runtime", "cuda_driver"}
FLOW_CATS = {"ac2g", "async"}


def load(path):
    with gzip.open(path, "rt") if path.endswith(".gz") else open(path) as f:
        doc = json.load(f)
    if isinstance(doc, list):
        doc = {"traceEvents": doc}
    return doc


def end_of(e):
    return float(e["ts"]) + float(e.get("dur", 0) or 0)


def corr_of(e):
    a = e.get("args") or {}
    return a.get("correlation")


class Schema:
    """The category names, id keys and row naming a trace uses (2021 or current Kineto,
    CUDA or ROCm), so inserted events look like the trace's own."""

    def __init__(self, events, doc):
        cats = {e.get("cat") for e in events}
        old = "Kernel" in cats or "Runtime" in cats or "Operator" in cats
        self.op = "Operator" if old else "cpu_op"
        self.runtime = "Runtime" if old else "cuda_runtime"
        self.kernel = "Kernel" if old else "kernel"
        self.memcpy = "Memcpy" if old else "gpu_memcpy"
        self.flow_cat, self.flow_name = ("async", "launch") if old else ("ac2g", "ac2g")
        self.ext_key = "external id" if old else "External id"
        names = {e.get("name") for e in events if e.get("cat") in RUNTIME_CATS}
        self.rocm = any(str(n).startswith("hip") for n in names)
        self.rt_prefix = "hip" if self.rocm else "cuda"
        gpu = [e for e in events if e.get("cat") in GPU_CATS and e.get("ph") == "X"]
        if not gpu:
            raise ValueError("no GPU kernels: surgery needs a GPU trace")
        # The busiest stream is the compute stream; its row (tid) is copied as the trace writes it.
        by_stream = {}
        for e in gpu:
            by_stream.setdefault((e.get("args") or {}).get("stream", e.get("tid")), []).append(e)
        self.stream = max(by_stream, key=lambda s: len(by_stream[s]))
        sample = by_stream[self.stream][0]
        self.gpu_pid, self.gpu_tid, self.device = sample["pid"], sample["tid"], (sample.get("args") or {}).get("device", 0)
        self.streams = set(by_stream)
        self.kernel_names = [e["name"] for e in gpu if e.get("cat") == self.kernel]
        props = doc.get("deviceProperties") or []
        self.device_name = props[0].get("name") if props else None


def main_thread(events):
    """(pid, tid) of the thread that records the ProfilerSteps, or else the one that
    launches the most GPU work."""
    counts = {}
    for e in events:
        if e.get("ph") == "X" and str(e.get("name", "")).startswith("ProfilerStep#") \
                and e.get("cat") not in ("gpu_user_annotation",):
            k = (e.get("pid"), e.get("tid"))
            counts[k] = counts.get(k, 0) + 1
    if counts:
        return max(counts, key=counts.get)
    for e in events:
        if e.get("cat") in RUNTIME_CATS and e.get("ph") == "X":
            k = (e.get("pid"), e.get("tid"))
            counts[k] = counts.get(k, 0) + 1
    return max(counts, key=counts.get)


def steps(events, thread):
    out = [e for e in events if e.get("ph") == "X" and str(e.get("name", "")).startswith("ProfilerStep#")
           and (e.get("pid"), e.get("tid")) == thread]
    return sorted(out, key=lambda e: float(e["ts"]))


def crop(doc, first, count):
    """A new doc with steps [first, first+count) of the main thread (crop_span of their span,
    GPU annotations from the first step's start to the end of the kept GPU work)."""
    thread = main_thread(doc["traceEvents"])
    st = steps(doc["traceEvents"], thread)
    if not st:
        return copy.deepcopy(doc)
    sel = st[first:first + count]
    return crop_span(doc, float(sel[0]["ts"]), end_of(sel[-1]), annotations_from=float(sel[0]["ts"]))


def crop_span(doc, w0, w1, annotations_from=None):
    """A new doc with the events of [w0, w1]: CPU events (and instants) wholly inside, the
    GPU work their runtime calls launched (wherever it ran), the flows joining kept events,
    all metadata. Events crossing the edges (the whole-trace 'Trace' span, a step outside)
    are dropped; their children inside stay. GPU annotations are kept when they lie inside
    the span of the kept GPU work, or, with annotations_from, from that time to the later
    of w1 and the kept GPU work's end (surgery.py's crops)."""
    events = doc["traceEvents"]
    kept, kept_corr = [], set()
    for e in events:
        ph, cat = e.get("ph"), e.get("cat")
        if ph == "M":
            kept.append(e)
        elif ph in ("s", "f") or cat in GPU_CATS or cat == "gpu_user_annotation" or cat == "Trace":
            continue  # decided below, once the launches are known
        elif "ts" in e and w0 <= float(e["ts"]) and end_of(e) <= w1:
            kept.append(e)
            if cat in RUNTIME_CATS and corr_of(e) is not None:
                kept_corr.add(corr_of(e))
    g0, g1 = w1, w0
    for e in events:
        if e.get("cat") in GPU_CATS and e.get("ph") == "X" and corr_of(e) in kept_corr:
            kept.append(e)
            g0, g1 = min(g0, float(e["ts"])), max(g1, end_of(e))
    if annotations_from is not None:
        g0, g1 = annotations_from, max(g1, w1)
    for e in events:
        if e.get("cat") == "gpu_user_annotation" and g0 <= float(e["ts"]) and end_of(e) <= g1:
            kept.append(e)
    # Flows: a launch flow joins a runtime call and its GPU event by correlation id; other
    # flows (fwdbwd) are kept when both their ends fall in the window.
    flows = {}
    for e in events:
        if e.get("ph") in ("s", "f"):
            flows.setdefault((e.get("cat"), e.get("id")), []).append(e)
    for (cat, fid), pair in flows.items():
        ok = fid in kept_corr if cat in FLOW_CATS else all(w0 <= float(x["ts"]) <= w1 for x in pair)
        if ok and len(pair) == 2:
            kept.extend(pair)
    out = {k: v for k, v in doc.items() if k != "traceEvents"}
    out["traceEvents"] = copy.deepcopy(kept)
    return out


class Editor:
    """Inserts host time into a trace and appends new events with fresh ids."""

    def __init__(self, doc):
        self.doc = doc
        self.events = doc["traceEvents"]
        self.schema = Schema(self.events, doc)
        self.thread = main_thread(self.events)
        ids = [int(c) for c in (corr_of(e) for e in self.events) if isinstance(c, int)]
        ids += [int(e["id"]) for e in self.events if e.get("ph") in ("s", "f") and isinstance(e.get("id"), int)]
        self.next_id = (max(ids) if ids else 0) + 1000
        exts = [(e.get("args") or {}).get(self.schema.ext_key) for e in self.events]
        self.next_ext = max([x for x in exts if isinstance(x, int)] or [0]) + 1000

    # ---- queries ----

    def steps(self):
        return steps(self.events, self.thread)

    def launch_times(self):
        """correlation id -> ts of the runtime call that launched it."""
        out = {}
        for e in self.events:
            if e.get("cat") in RUNTIME_CATS and corr_of(e) is not None:
                out[corr_of(e)] = float(e["ts"])
        return out

    def gpu_events(self):
        return [e for e in self.events if e.get("cat") in GPU_CATS and e.get("ph") == "X"]

    def drain_time(self, t, stream=None):
        """When the GPU work launched before t finishes (on `stream`, or on all)."""
        launches = self.launch_times()
        end = t
        for e in self.gpu_events():
            lt = launches.get(corr_of(e))
            if lt is None or lt >= t:
                continue
            if stream is not None and (e.get("args") or {}).get("stream") != stream:
                continue
            end = max(end, end_of(e))
        return end

    def next_gpu_start(self, t):
        starts = [float(e["ts"]) for e in self.gpu_events() if float(e["ts"]) >= t]
        return min(starts) if starts else None

    def insertion_points(self, step):
        """Start times of the step's outermost operators on the main thread (cpu_op or
        record_function ranges not inside another one). Only Python frames and ranges
        around them span such a point, and they just grow, so inserting there splits no
        operator; Python frames themselves are skipped so that points reach inside a
        model's forward, where syncs and copies happen."""
        b, e = float(step["ts"]), end_of(step)
        op_cats = {self.schema.op, "user_annotation", "cpu_op", "Operator"}
        kids = [x for x in self.events if x.get("ph") == "X" and (x.get("pid"), x.get("tid")) == self.thread
                and x is not step and x.get("cat") in op_cats and b <= float(x["ts"]) and end_of(x) <= e]
        kids.sort(key=lambda x: (float(x["ts"]), -float(x.get("dur", 0))))
        points, cover = [], b
        for x in kids:
            if float(x["ts"]) >= cover:
                points.append(float(x["ts"]))  # an outermost operator starts here
            cover = max(cover, end_of(x))
        return [p for p in points if p > b]

    # ---- the edit ----

    def insert_time(self, t, delta):
        """Moves everything after host time t later by delta: CPU events that start at or
        after t, GPU events launched at or after t (by correlation id; by start time when
        not linked), flows with their events; CPU events spanning t grow by delta."""
        launches = self.launch_times()
        moved_corr = set()
        gpu_moves = []  # (original start, original end, moved?) of every GPU event
        annotations = []
        for e in self.events:
            if e.get("ph") == "M" or "ts" not in e:
                continue
            ts = float(e["ts"])
            if e.get("cat") in GPU_CATS:
                lt = launches.get(corr_of(e))
                moved = (lt is not None and lt >= t) or (lt is None and ts >= t)
                gpu_moves.append((ts, end_of(e), moved))
                if moved:
                    e["ts"] = round(ts + delta, 3)
                    moved_corr.add(corr_of(e))
                continue
            if e.get("cat") == "gpu_user_annotation":
                annotations.append(e)
                continue
            if e.get("ph") in ("s", "f"):
                continue
            if ts >= t:
                e["ts"] = round(ts + delta, 3)
            elif e.get("ph") == "X" and end_of(e) > t:
                e["dur"] = round(float(e.get("dur", 0)) + delta, 3)
        # A GPU-side annotation (e.g. the device copy of ProfilerStep#N) follows the GPU
        # events at its edges: its start moves if the first one inside it moved, its end if
        # the last one inside it did.
        gpu_moves.sort()
        for e in annotations:
            b, f = float(e["ts"]), end_of(e)
            inside = [g for g in gpu_moves if g[0] >= b and g[1] <= f]
            if not inside:
                if b >= t:
                    e["ts"] = round(b + delta, 3)
                continue
            nb = b + delta if inside[0][2] else b
            nf = f + delta if max(inside, key=lambda g: g[1])[2] else f
            e["ts"], e["dur"] = round(nb, 3), round(max(0.0, nf - nb), 3)
        gpu_rows = {(self.schema.gpu_pid,)} | {(e.get("pid"),) for e in self.gpu_events()}
        for e in self.events:
            if e.get("ph") not in ("s", "f"):
                continue
            ts = float(e["ts"])
            on_gpu = (e.get("pid"),) in gpu_rows and e.get("ph") == "f" and e.get("cat") in FLOW_CATS
            if on_gpu:
                if e.get("id") in moved_corr:
                    e["ts"] = round(ts + delta, 3)
            elif ts >= t:
                e["ts"] = round(ts + delta, 3)

    # ---- new events ----

    def _ext(self):
        self.next_ext += 1
        return self.next_ext

    def cpu(self, name, ts, dur, cat=None, args=None):
        pid, tid = self.thread
        a = {self.schema.ext_key: self._ext()}
        a.update(args or {})
        e = {"ph": "X", "cat": cat or self.schema.op, "name": name, "pid": pid, "tid": tid,
             "ts": round(ts, 3), "dur": round(max(dur, 0.0), 3), "args": a}
        self.events.append(e)
        return e

    def launch(self, rt_name, ts, dur, gpu_name, gpu_cat, gpu_ts, gpu_dur, gpu_args=None, stream=None):
        """A runtime call and the GPU event it started, joined by correlation id and a flow."""
        self.next_id += 1
        corr = self.next_id
        pid, tid = self.thread
        rt = {"ph": "X", "cat": self.schema.runtime, "name": rt_name, "pid": pid, "tid": tid,
              "ts": round(ts, 3), "dur": round(dur, 3), "args": {"correlation": corr, self.schema.ext_key: self.next_ext}}
        self.events.append(rt)
        if gpu_name is None:
            return rt, None
        s = self.schema.stream if stream is None else stream
        tid_gpu = self.schema.gpu_tid if stream is None else (f"stream {s}" if isinstance(self.schema.gpu_tid, str) else s)
        a = {"device": self.schema.device, "stream": s, "correlation": corr, self.schema.ext_key: self.next_ext}
        a.update(gpu_args or {})
        g = {"ph": "X", "cat": gpu_cat, "name": gpu_name, "pid": self.schema.gpu_pid, "tid": tid_gpu,
             "ts": round(gpu_ts, 3), "dur": round(gpu_dur, 3), "args": a}
        self.events.append(g)
        self.events.append({"ph": "s", "id": corr, "pid": pid, "tid": tid, "ts": round(ts, 3),
                            "cat": self.schema.flow_cat, "name": self.schema.flow_name})
        self.events.append({"ph": "f", "id": corr, "pid": self.schema.gpu_pid, "tid": tid_gpu,
                            "ts": round(gpu_ts, 3), "cat": self.schema.flow_cat, "name": self.schema.flow_name,
                            "bp": "e"})
        return rt, g

    def time_span(self):
        ts = [float(e["ts"]) for e in self.events if "ts" in e and e.get("ph") != "M"]
        ends = [end_of(e) for e in self.events if "ts" in e and e.get("ph") == "X"]
        return min(ts), max(ends + ts)


def write(doc, path):
    text = json.dumps(doc, separators=(",", ":"))
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, compresslevel=9) as f:
        f.write(text.encode())
