#!/usr/bin/python3
"""Trace surgery: labeled anti-patterns injected into real public GPU traces.

Each output is a steady-state crop (one to three ProfilerSteps) of a real trace, either
left as recorded ("good": only benign edits, i.e. the crop and a shift of the time origin)
or with one or two injected regions. An injection inserts host time at the start of one
of a step's outermost operators (trace_edit.Editor.insertion_points; insert_time: later
CPU events and the GPU work they launched move later, spanning CPU events grow) and fills it with the events the
mistake produces, in the trace's own schema (2021 or current Kineto, CUDA or ROCm names):
runtime calls with correlation ids and ac2g flows to the GPU events they start, which
begin after their launch and after the work queued before them on their stream.

The label range of an injection runs from the insertion point to the first GPU event
after the inserted time (the device work it launched and the idle it caused), but at most
1 ms past the inserted time, the rule label.py applies to zoo traces. kineto_resnet50_v100_nw0 is also labeled where it is bad
as recorded: its single-process DataLoader __next__ spans (dataloader_stall, no surgery).

  surgery.py SOURCE.json.gz OUT.json.gz --inject host_sync,launch_bound [--seed N]
      [--first-step K --steps N]
prints the manifest fields as JSON; make_corpus.py calls build() for the corpus."""

import argparse
import copy
import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import trace_edit as te  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))


def _src(name):
    for d in (os.path.join(ROOT, "tests", "data"), os.path.join(ROOT, "..", "shared", "traces", "public")):
        p = os.path.join(d, name)
        if os.path.exists(p):
            return p
    return None


# The sources: real GPU traces with steps (or small enough to take whole), their hardware
# and task. Left out: traces whose recorded behaviour is itself strongly one unlabeled
# pattern (TorchRec's ~1.9k host syncs, vLLM's launch-bound decode, PARAM ResNet's pageable
# copies and syncs, PARAM DLRM's item() syncs), which would make their "good" crops wrong.
SOURCES = {
    "kineto_resnet50_v100_nw4.json.gz": ("V100", "classification", "resnet50", "train", False),
    "kineto_resnet50_v100_nw0.json.gz": ("V100", "classification", "resnet50", "train", False),
    "hta_ddp_cnn_v100_nsres.json.gz": ("V100", "classification", "cnn_ddp", "train", True),
    "hta_ddp_a100_nccl.json.gz": ("A100", "other", "ddp_model", "train", True),
    "hta_alexnet_a100_small.json.gz": ("A100", "classification", "alexnet", "inference", False),
    "tracelens_vit_nsfw_h100.json.gz": ("H100", "classification", "vit_nsfw", "inference", False),
    "tracelens_qwen05b_h100.json.gz": ("H100", "other", "qwen1.5-0.5b", "inference", False),
    "tracelens_resnet_ckpt_mi300.json.gz": ("MI300X", "classification", "resnet_act_ckpt", "train", True),
}
# (hta_mi250_toy is left out too: its steps hold a handful of kernels, too few to edit.)

PATTERNS = ["host_sync", "pageable_memcpy", "small_transfers", "offload_pingpong", "dataloader_stall",
            "cpu_bound_step", "alloc_churn", "launch_bound", "gpu_idle", "comm_not_overlapped",
            "comm_blocks_compute"]
COMM = {"comm_not_overlapped", "comm_blocks_compute"}
# A range extends through the GPU idle after the inserted time by at most this much: a
# longer gap was in the source already, not caused by the injection (label.py: the same).
MAX_IDLE_TAIL_US = 1000.0


class Injector:
    def __init__(self, ed, rng):
        self.ed, self.rng = ed, rng
        self.rt = ed.schema.rt_prefix

    def _rt(self, name):
        return self.rt + name  # cudaMemcpyAsync / hipMemcpyAsync ...

    def lat(self):
        return self.rng.uniform(3.0, 12.0)  # launch-to-start latency of an idle queue, us

    def small_kernel_name(self):
        names = [n for n in self.ed.schema.kernel_names if "elementwise" in n]
        return self.rng.choice(names) if names else "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)"

    def comm_kernel_name(self):
        names = [n for n in self.ed.schema.kernel_names if "nccl" in n.lower() or "rccl" in n.lower()]
        return self.rng.choice(names) if names else "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"

    # Each method inserts its events at host time t and returns (begin, inserted us, what).

    def host_sync(self, t):
        ed, r = self.ed, self.rng
        drain = ed.drain_time(t, ed.schema.stream)
        post = r.uniform(20.0, 1500.0)  # Python work between the read and the next launch
        rt_ts = t + 6.0
        cp_ts = max(rt_ts + 4.0 + self.lat(), drain)
        cp_end = cp_ts + r.uniform(1.2, 2.5)
        sync_end = cp_end + r.uniform(2.0, 6.0)
        item_end = sync_end + 4.0
        delta = item_end - t + post
        ed.insert_time(t, delta)
        ed.cpu("aten::item", t, item_end - t, args={"Input Dims": [[]]})
        ed.cpu("aten::_local_scalar_dense", t + 2.0, item_end - t - 3.0, args={"Input Dims": [[]]})
        ed.launch(self._rt("MemcpyAsync"), rt_ts, 4.0, "Memcpy DtoH (Device -> Pageable)", ed.schema.memcpy,
                  cp_ts, cp_end - cp_ts, {"bytes": 4})
        ed.launch(self._rt("StreamSynchronize"), rt_ts + 4.5, sync_end - rt_ts - 4.5, None, None, 0, 0)
        return t, delta, {"drain_us": round(drain - t, 3), "after_us": round(post, 3)}

    def pageable_memcpy(self, t):
        ed, r = self.ed, self.rng
        nbytes = r.choice([4, 8, 16, 32, 64]) * 1024 * 1024
        bw = r.uniform(3.0, 8.0)  # GB/s: pageable copies are staged through a bounce buffer
        drain = ed.drain_time(t, ed.schema.stream)
        rt_ts = t + 12.0
        cp_ts = max(rt_ts + self.lat(), drain)
        cp_dur = nbytes / (bw * 1e3)
        delta = cp_ts + cp_dur + 8.0 - t
        ed.insert_time(t, delta)
        dims = {"Input Dims": [[nbytes // 4], [], [], [], [], [], []]}
        ed.cpu("aten::to", t, delta, args=dims)
        ed.cpu("aten::_to_copy", t + 2.0, delta - 3.0, args=dims)
        ed.cpu("aten::copy_", t + 8.0, delta - 10.0, args={"Input Dims": [[nbytes // 4], [nbytes // 4], []]})
        ed.launch(self._rt("MemcpyAsync"), rt_ts, cp_ts + cp_dur - rt_ts + 2.0,
                  "Memcpy HtoD (Pageable -> Device)", ed.schema.memcpy, cp_ts, cp_dur,
                  {"bytes": nbytes, "memory bandwidth (GB/s)": round(bw, 3)})
        return t, delta, {"bytes": nbytes}

    def small_transfers(self, t):
        ed, r = self.ed, self.rng
        n = r.randint(16, 96)
        drain = ed.drain_time(t, ed.schema.stream)
        plan, cur, gpu_free = [], t, drain
        for _ in range(n):
            nbytes = r.choice([4, 8, 64, 256, 1024, 4096])
            op_ts = cur
            rt_ts = op_ts + r.uniform(8.0, 16.0)
            cp_ts = max(rt_ts + self.lat(), gpu_free)
            cp_dur = r.uniform(1.0, 2.5)
            rt_end = cp_ts + cp_dur + 1.5  # pageable source: the call returns once copied
            plan.append((op_ts, rt_ts, rt_end, cp_ts, cp_dur, nbytes))
            gpu_free = cp_ts + cp_dur
            cur = rt_end + r.uniform(3.0, 10.0)
        delta = cur - t
        ed.insert_time(t, delta)
        for op_ts, rt_ts, rt_end, cp_ts, cp_dur, nbytes in plan:
            ed.cpu("aten::to", op_ts, rt_end + 1.0 - op_ts, args={"Input Dims": [[], [], [], [], [], [], []]})
            ed.cpu("aten::copy_", rt_ts - 2.0, rt_end - rt_ts + 2.5, args={"Input Dims": [[], [], []]})
            ed.launch(self._rt("MemcpyAsync"), rt_ts, rt_end - rt_ts, "Memcpy HtoD (Pageable -> Device)",
                      ed.schema.memcpy, cp_ts, cp_dur, {"bytes": nbytes})
        return t, delta, {"copies": n}

    def offload_pingpong(self, t):
        ed, r = self.ed, self.rng
        pairs = r.randint(1, 3)
        nbytes = r.choice([16, 32, 64, 128]) * 1024 * 1024
        bw = r.uniform(18.0, 24.0)
        gpu_free = ed.drain_time(t, ed.schema.stream)
        cur, plan = t, []
        for i in range(2 * pairs):
            kind = ("Memcpy DtoH (Device -> Pinned)", "Memcpy HtoD (Pinned -> Device)")[i % 2]
            rt_ts = cur + 10.0
            cp_ts = max(rt_ts + self.lat(), gpu_free)
            cp_dur = nbytes / (bw * 1e3)
            plan.append((cur, rt_ts, cp_ts, cp_dur, kind))
            gpu_free = cp_ts + cp_dur
            cur = gpu_free + r.uniform(5.0, 30.0)  # .cpu() blocks; the copy back is waited on
        delta = cur - t
        ed.insert_time(t, delta)
        for op_ts, rt_ts, cp_ts, cp_dur, kind in plan:
            ed.cpu("aten::to", op_ts, cp_ts + cp_dur + 3.0 - op_ts, args={"Input Dims": [[nbytes // 4], [], [], [], [], [], []]})
            ed.launch(self._rt("MemcpyAsync"), rt_ts, 6.0, kind, ed.schema.memcpy, cp_ts, cp_dur, {"bytes": nbytes})
            ed.launch(self._rt("StreamSynchronize"), rt_ts + 7.0, cp_ts + cp_dur + 1.0 - rt_ts - 7.0, None, None, 0, 0)
        return t, delta, {"pairs": pairs, "bytes": nbytes}

    def dataloader_stall(self, t, step):
        ed, r = self.ed, self.rng
        b, e = float(step["ts"]), te.end_of(step)
        # 15-80% of the step, at most 250 ms (a trace without steps counts as one "step").
        delta = min(r.uniform(0.15, 0.8) * (e - b), 250000.0)
        nexts = [x for x in ed.events if x.get("ph") == "X" and "DataLoader" in str(x.get("name"))
                 and "__next__" in str(x.get("name")) and b <= float(x["ts"]) <= e]
        if nexts:
            # The step's own __next__ grows: workers that no longer keep up.
            nx = nexts[0]
            point = te.end_of(nx) - min(1.0, float(nx.get("dur", 0)) / 2)
            begin = float(nx["ts"])
            ed.insert_time(point, delta)
            return begin, delta, {"extended": nx["name"]}
        pts = ed.insertion_points(step)
        point = pts[0] if pts else b + 1.0
        ed.insert_time(point, delta)
        ed.cpu("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", point, delta - 2.0,
               cat="user_annotation" if ed.schema.op == "cpu_op" else ed.schema.op)
        n = r.randint(2, 6)
        for i in range(n):
            ed.cpu(r.choice(["aten::stack", "aten::div", "aten::sub", "aten::to", "aten::permute"]),
                   point + 5.0 + i * (delta - 10.0) / n, (delta - 10.0) / n * r.uniform(0.2, 0.9))
        return point, delta, {"inserted": True}

    def cpu_bound_step(self, t):
        ed, r = self.ed, self.rng
        delta = r.uniform(2000.0, 40000.0)
        ed.insert_time(t, delta)
        cur, left = t + 2.0, delta - 4.0
        ops = ["aten::sort", "aten::histc", "aten::index", "aten::cat", "aten::masked_select", "aten::numpy_T"]
        while left > 50.0:
            d = min(left, r.uniform(0.05, 0.4) * delta)
            ed.cpu(r.choice(ops), cur, d * 0.95, args={"Input Dims": [[r.randint(1000, 400000)]]})
            cur += d
            left -= d
        return t, delta, {}

    def alloc_churn(self, t):
        ed, r = self.ed, self.rng
        drain = ed.drain_time(t)
        n_free, n_malloc = r.randint(2, 12), r.randint(2, 12)
        plan, cur = [], t + 2.0
        for i in range(n_free):
            d = (drain - cur if i == 0 else 0) + r.uniform(20.0, 300.0)  # cudaFree synchronizes
            plan.append(("Free", cur, max(d, 5.0)))
            cur += max(d, 5.0) + r.uniform(1.0, 5.0)
        for _ in range(n_malloc):
            d = r.uniform(40.0, 600.0)
            plan.append(("Malloc", cur, d))
            cur += d + r.uniform(5.0, 40.0)
        delta = cur - t
        ed.insert_time(t, delta)
        for kind, ts, d in plan:
            if kind == "Malloc":
                ed.cpu("aten::empty", ts - 1.0, d + 2.0, args={"Input Dims": [[], [], [], [], [], []]})
            ed.launch(self._rt(kind), ts, d, None, None, 0, 0)
        return t, delta, {"frees": n_free, "mallocs": n_malloc}

    def launch_bound(self, t):
        ed, r = self.ed, self.rng
        n = r.randint(40, 250)
        gpu_free = ed.drain_time(t, ed.schema.stream)
        name = self.small_kernel_name()
        plan, cur = [], t
        for _ in range(n):
            op_d = r.uniform(12.0, 30.0)
            rt_ts = cur + r.uniform(4.0, op_d - 7.0)
            k_ts = max(rt_ts + self.lat(), gpu_free)
            k_d = r.uniform(1.5, 4.0)
            plan.append((cur, op_d, rt_ts, k_ts, k_d))
            gpu_free = k_ts + k_d
            cur += op_d + r.uniform(1.0, 6.0)
        delta = max(cur, gpu_free) - t + 1.0
        ed.insert_time(t, delta)
        for op_ts, op_d, rt_ts, k_ts, k_d in plan:
            ed.cpu(r.choice(["aten::add_", "aten::mul_", "aten::add", "aten::mul", "aten::div_"]), op_ts, op_d,
                   args={"Input Dims": [[r.randint(1, 512)], [r.randint(1, 512)], []]})
            ed.launch(self._rt("LaunchKernel"), rt_ts, min(6.0, op_d - (rt_ts - op_ts) - 0.5), name,
                      ed.schema.kernel, k_ts, k_d, {"grid": [1, 1, 1], "block": [128, 1, 1]})
        return t, delta, {"kernels": n}

    def gpu_idle(self, t):
        # Nothing recorded on the host for a while: the compute stream idles for 1-20 ms
        # once the work queued before t is done, until the work after t arrives.
        begin = self.ed.drain_time(t, self.ed.schema.stream)
        delta = (begin - t) + self.rng.uniform(1000.0, 20000.0)
        self.ed.insert_time(t, delta)
        return begin, delta, {}

    def _comm(self, t, blocks_compute):
        ed, r = self.ed, self.rng
        comm_dur = r.uniform(300.0, 8000.0)
        drain = ed.drain_time(t, ed.schema.stream)
        if blocks_compute:
            stream = ed.schema.stream
        else:
            others = sorted(s for s in ed.schema.streams if s != ed.schema.stream and isinstance(s, int))
            stream = others[0] if others else max(s for s in ed.schema.streams if isinstance(s, int)) + 6
        rt_ts = t + 20.0
        k_ts = max(rt_ts + self.lat(), drain)
        k_end = k_ts + comm_dur
        delta = k_end - t + (10.0 if blocks_compute else 25.0)
        ed.insert_time(t, delta)
        nbytes = r.choice([4, 16, 25, 64]) * 1024 * 1024
        ed.cpu("c10d::allreduce_", t, 40.0, args={"Input Dims": [[nbytes // 4]]})
        ed.cpu("record_param_comms", t + 5.0, 30.0, args={"Input Dims": [[nbytes // 4]]})
        ed.launch(self._rt("LaunchKernel"), rt_ts, 8.0, self.comm_kernel_name(), ed.schema.kernel, k_ts, comm_dur,
                  {"grid": [r.choice([2, 4, 8, 16]), 1, 1], "block": [512, 1, 1]}, stream=stream)
        if not blocks_compute:
            # The compute stream waits for the collective's event (wait() right after issue).
            ed.launch(self._rt("StreamWaitEvent"), t + 45.0, 3.0, None, None, 0, 0)
            ed.cpu("aten::wait", t + 42.0, k_end - t - 40.0)
        return t, delta, {"collective_us": round(comm_dur, 3), "stream": stream}

    def comm_not_overlapped(self, t):
        return self._comm(t, False)

    def comm_blocks_compute(self, t):
        return self._comm(t, True)


def native_dataloader_labels(ed):
    """kineto nw0 as recorded: each single-process __next__ longer than 10 ms is a stall."""
    out = []
    for x in ed.events:
        if x.get("ph") == "X" and "_SingleProcessDataLoaderIter.__next__" in str(x.get("name")) \
                and float(x.get("dur", 0)) > 10000.0:
            end = te.end_of(x)
            nxt = ed.next_gpu_start(end)
            if nxt is not None:
                end = max(end, min(nxt, end + MAX_IDLE_TAIL_US))
            out.append({"type": "dataloader_stall", "ts_begin": round(float(x["ts"]), 3),
                        "ts_end": round(end, 3)})
    return out


_LOADED = {}


def _load_source(path):
    # Sources are parsed once per process (the largest is ~70k events); crop() copies.
    if path not in _LOADED:
        _LOADED[path] = te.load(path)
    return _LOADED[path]


def make(source_path, out_path, inject, seed, first_step=None, n_steps=None):
    """One surgery trace; returns the manifest fields it determines."""
    rng = random.Random(seed)
    doc = _load_source(source_path)
    ed0 = te.Editor(doc)
    st = ed0.steps()
    if st:
        # One step by default: a step of these traces is 100-400 KB gzipped, and the corpus
        # has a 60 MB budget.
        n = n_steps or 1
        n = min(n, len(st))
        # Skip the first recorded step where there are enough: it is often a warm-up.
        lo = 1 if len(st) - n >= 1 else 0
        first = first_step if first_step is not None else rng.randint(lo, len(st) - n)
        doc = te.crop(doc, first, n)
    else:
        # No steps, no crop: edit a copy. The parsed source is cached for the process, and
        # editing it in place once carried every earlier trace's injections, unlabeled, into
        # the next trace of the same source.
        doc = copy.deepcopy(doc)
        first, n = None, 0
    ed = te.Editor(doc)
    inj = Injector(ed, rng)
    ranges, ops = [], []
    steps = ed.steps()
    for k, pattern in enumerate(inject):
        cand = steps if steps else [None]
        step = cand[(k + rng.randrange(len(cand))) % len(cand)]
        if step is None:
            # No steps: ttap analyzes the span of GPU activity (its steady state without
            # ProfilerSteps), so patterns go there; a stall before the first kernel would
            # be labeled where no analysis window looks.
            gpu = ed.gpu_events()
            b, e = ((min(float(g["ts"]) for g in gpu), max(te.end_of(g) for g in gpu)) if gpu
                    else ed.time_span())
            step = {"ts": b, "dur": e - b, "name": "(trace)"}
        pts = ed.insertion_points(step)
        if pattern == "comm_not_overlapped" or pattern == "comm_blocks_compute":
            pts = pts[len(pts) * 2 // 3:] or pts  # collectives come late in the step (backward)
        if pattern == "dataloader_stall":
            begin, delta, what = inj.dataloader_stall(None, step)
            point = begin
        else:
            if not pts:
                raise ValueError(f"{source_path}: no insertion point in a step")
            point = rng.choice(pts[1:] if len(pts) > 2 else pts)
            begin, delta, what = getattr(inj, pattern)(point)
        # Earlier ranges after the point move with the trace.
        for rg in ranges:
            if rg["ts_begin"] >= point:
                rg["ts_begin"] = round(rg["ts_begin"] + delta, 3)
            if rg["ts_end"] >= point:
                rg["ts_end"] = round(rg["ts_end"] + delta, 3)
        after = ed.next_gpu_start(point + delta)
        end = point + delta
        if after is not None:
            end = max(end, min(after, end + MAX_IDLE_TAIL_US))
        ranges.append({"type": pattern, "ts_begin": round(begin, 3), "ts_end": round(end, 3)})
        ops.append(dict(pattern=pattern, at=round(point, 3), inserted_us=round(delta, 3), **what))
    native = native_dataloader_labels(ed) if "nw0" in os.path.basename(source_path) else []
    if not inject:
        # Benign edit for good crops: a new time origin, as another run of the job would have.
        off = round(rng.uniform(-5e5, 5e5), 3)
        for e in ed.events:
            if "ts" in e and e.get("ph") != "M":
                e["ts"] = round(float(e["ts"]) + off, 3)
        for rg in native:
            rg["ts_begin"] = round(rg["ts_begin"] + off, 3)
            rg["ts_end"] = round(rg["ts_end"] + off, 3)
    ranges = sorted(ranges + native, key=lambda x: (x["ts_begin"], x["type"]))
    ed.events.sort(key=lambda e: (e.get("ph") != "M", float(e.get("ts", 0))))
    te.write(ed.doc, out_path)
    return {"anti_patterns": ranges,
            "surgery": {"source": os.path.basename(source_path), "first_step": first, "steps": n,
                        "ops": ops, "native_labels": len(native), "seed": seed}}


def applicable(source_name):
    comm = SOURCES[source_name][4]
    return [p for p in PATTERNS if comm or p not in COMM]


def build(count, out_dir, work, log, seed=777):
    """`count` surgery traces for the corpus, round-robin over the sources present."""
    sys.path.insert(0, HERE)
    import make_corpus  # the split rule lives there
    rng = random.Random(seed)
    present = [s for s in SOURCES if _src(s)]
    for i in range(count):
        src = present[i % len(present)]
        hw, task, model, mode, _ = SOURCES[src]
        r = rng.random()
        k = 0 if r < 0.3 else 1 if r < 0.8 else 2
        inject = rng.sample(applicable(src), k)
        item_seed = rng.randrange(1 << 30)
        name = f"surgery_{i:04d}_{src.split('.')[0]}"
        line_path = os.path.join(work, "lines", name + ".json")
        if os.path.exists(line_path):
            continue
        rel = f"traces/{name}.json.gz"
        try:
            fields = make(_src(src), os.path.join(out_dir, rel), inject, item_seed)
        except (ValueError, KeyError) as err:
            log.write(f"{name}: surgery failed: {err}\n")
            continue
        size = os.path.getsize(os.path.join(out_dir, rel))
        if size > make_corpus.MAX_TRACE_BYTES:
            os.remove(os.path.join(out_dir, rel))
            log.write(f"{name}: {size} bytes, over 2 MB: dropped\n")
            continue
        line = {"trace": rel, "label": "bad" if fields["anti_patterns"] else "good", "task": task,
                "model": model, "mode": mode, "hardware": hw,
                "software": "as recorded by the source (see surgery.source)",
                "split": make_corpus.split_for(task, i), "anti_patterns": fields["anti_patterns"],
                "source": "surgery", "surgery": fields["surgery"]}
        with open(line_path, "w") as f:
            f.write(json.dumps(line) + "\n")
        log.write(f"{name}: ok {size} bytes {inject}\n")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("source")
    p.add_argument("out")
    p.add_argument("--inject", default="")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--first-step", type=int)
    p.add_argument("--steps", type=int)
    a = p.parse_args(argv)
    inject = [x for x in a.inject.split(",") if x]
    for x in inject:
        if x not in PATTERNS:
            p.error(f"--inject {x}: not a surgery pattern ({', '.join(PATTERNS)})")
    try:
        fields = make(a.source, a.out, inject, a.seed, a.first_step, a.steps)
    except (OSError, ValueError, KeyError) as err:
        print(f"surgery.py: error: {err}", file=sys.stderr)
        return 2
    print(json.dumps(fields))
    return 0


if __name__ == "__main__":
    sys.exit(main())
