#!/usr/bin/env python3
"""Writes the fuzzers' seed corpus into scripts/fuzz/seeds/ (run by hand; the output is
committed, so run_fuzz.sh does not need the public traces).

seeds/json/  for fuzz_load and fuzz_chunks:
  real_*.json   a time window of a real public trace (see tests/data/SOURCES.md and
                /work/shared/traces/public/SOURCES.md), cut to under 48 KB of valid JSON:
                the metadata events, the CPU-side events of a window starting just before
                the first kernel launch of the first ProfilerStep (or at the first CPU op),
                the GPU work and flow arrows those launched, top-level keys (big ones trimmed)
  hand_*.json   small hand-written traces for the loader's corners (B/E pairs, labels,
                counters, memory, flows, escapes, chunk-boundary lookalikes)
  bad_*.json    malformed variants (truncated, wrong types, absurd values, trailing
                content...) that must be rejected with an InputError, never a crash
seeds/gzip/  for fuzz_gunzip: some of the above gzipped (levels 1, 6, 9, stored), a
             multi-member stream, trailing zeros, trailing garbage, truncated, a lying size
             trailer, an empty member.

    /usr/bin/python3 scripts/fuzz/make_seeds.py [--traces DIR]
"""
import argparse
import gzip
import io
import json
import os
import shutil
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
BUDGET = 48 * 1024

# (seed name, source file, pretty-printed like Kineto writes it)
REAL = [
    ("real_alexnet_a100", "hta_alexnet_a100_small.json.gz", False),
    ("real_event_sync", "hta_event_sync_small.json.gz", True),
    ("real_mi250_rocm", "hta_mi250_toy.json.gz", False),
    ("real_cpu_only", "hta_cpu_only.json.gz", True),
    ("real_kineto2021_v100", "kineto_resnet50_v100_nw0.json.gz", True),
    ("real_ddp_ns_floats", "hta_ddp_cnn_v100_nsres.json.gz", False),
    ("real_ddp_nccl", "hta_ddp_a100_nccl.json.gz", True),
    ("real_qwen_python", "tracelens_qwen05b_h100.json.gz", False),
    ("real_vllm_b200", "tracelens_vllm_b200_eager.json.gz", False),
    ("real_mi300_rccl", "tracelens_resnet_ckpt_mi300.json.gz", True),
    ("real_param_2080ti", "param_resnet_2080ti.json.gz", False),
    ("real_torchrec", "hta_torchrec_a100_rank0.json.gz", True),
    ("real_mtia", "hta_mtia_no_gpu_large.json.gz", False),
]


def num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def render(top, events, pretty):
    """The trace as text; `top` is a list of (key, value) with "traceEvents" in place."""
    out = io.StringIO()
    out.write("{\n")
    first_key = True
    for k, v in top:
        if not first_key:
            out.write(",\n")
        first_key = False
        if k != "traceEvents":
            out.write("  %s: %s" % (json.dumps(k), json.dumps(v)))
            continue
        out.write('  "traceEvents": [\n')
        for i, e in enumerate(events):
            if pretty:
                text = json.dumps(e, indent=2)
                text = "\n".join("  " + line for line in text.split("\n"))
            else:
                text = "  " + json.dumps(e)
            out.write(text + (",\n" if i + 1 < len(events) else "\n"))
        out.write("  ]")
    out.write("\n}\n")
    return out.getvalue()


def cut_window(doc, pretty):
    events = [e for e in doc["traceEvents"] if isinstance(e, dict)]
    meta = [e for e in events if e.get("ph") == "M"][:40]
    timed = sorted((e for e in events if e.get("ph") != "M" and num(e.get("ts"))), key=lambda e: e["ts"])
    steps = [e for e in timed if str(e.get("name", "")).startswith("ProfilerStep#")]
    ops = [e for e in timed if e.get("cat") in ("cpu_op", "Operator")]
    t0 = (steps or ops or timed)[0]["ts"]
    # Start shortly before the first kernel launch of that step, so the window holds
    # launches with their kernels (a step starts with CPU-only work).
    launches = {}
    for e in timed:
        a = e.get("args")
        if e.get("cat") in ("cuda_runtime", "Runtime") and isinstance(a, dict) and "correlation" in a:
            launches.setdefault(a["correlation"], e["ts"])
    for e in timed:
        a = e.get("args")
        if e["ts"] >= t0 and e.get("cat") in ("kernel", "Kernel") and isinstance(a, dict):
            launch = launches.get(a.get("correlation"))
            if launch is not None and launch >= t0:
                t0 = max(t0, launch - 200)
            break
    top = []
    for k, v in doc.items():
        if k == "traceEvents":
            top.append((k, None))
        elif k == "deviceProperties" and isinstance(v, list):
            top.append((k, v[:2]))
        elif len(json.dumps(v)) <= 2048:
            top.append((k, v))
    if not any(k == "traceEvents" for k, _ in top):
        top.append(("traceEvents", None))

    gpu_cats = {"kernel", "Kernel", "gpu_memcpy", "Memcpy", "gpu_memset", "Memset", "cuda_sync", "gpu_user_annotation"}

    def build(width):
        # CPU-side events in [t0, t0 + width], then the GPU work they launched and the
        # flow arrows between the two (by correlation), wherever it lies in time.
        cpu = [e for e in timed if t0 <= e["ts"] <= t0 + width and e.get("cat") not in gpu_cats
               and e.get("ph") not in ("s", "f")]
        corr, ext = set(), set()
        for e in cpu:
            a = e.get("args") if isinstance(e.get("args"), dict) else {}
            if "correlation" in a:
                corr.add(a["correlation"])
            if "External id" in a:
                ext.add(a["External id"])
        picked = {id(e) for e in cpu}
        for e in timed:
            a = e.get("args") if isinstance(e.get("args"), dict) else {}
            if e.get("cat") in gpu_cats and (a.get("correlation") in corr or
                                             (e.get("cat") == "gpu_user_annotation" and a.get("External id") in ext)):
                picked.add(id(e))
            elif e.get("ph") in ("s", "f") and e.get("id") in corr:
                picked.add(id(e))
        window = [e for e in timed if id(e) in picked]
        return render(top, meta + window, pretty)

    lo, hi = 0.0, float(timed[-1]["ts"] - t0 + 1)
    best = build(lo)
    for _ in range(40):
        mid = (lo + hi) / 2
        text = build(mid)
        if len(text) <= BUDGET:
            lo, best = mid, text
        else:
            hi = mid
    return best


def ev(ph, name, ts, **kw):
    e = {"ph": ph, "name": name, "pid": kw.pop("pid", 1), "tid": kw.pop("tid", 1), "ts": ts}
    e.update(kw)
    return e


def hand_seeds():
    s = {}
    # A minimal GPU trace: a step, an op, its launch, the kernel, a flow pair, a memcpy.
    gpu = [
        {"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "python"}},
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "main"}},
        {"ph": "M", "name": "process_name", "pid": 0, "tid": 0, "args": {"name": "GPU 0"}},
        ev("X", "ProfilerStep#3", 100, cat="user_annotation", dur=1000, args={"External id": 1}),
        ev("X", "aten::mm", 110, cat="cpu_op", dur=200,
           args={"External id": 2, "Input Dims": [[64, 128], [128, 32]], "Input type": ["float", "float"],
                 "Sequence number": 7, "Fwd thread id": 0}),
        ev("X", "cudaLaunchKernel", 120, cat="cuda_runtime", dur=20, args={"External id": 2, "correlation": 10}),
        ev("s", "ac2g", 120, cat="ac2g", id=10, bp="e"),
        ev("X", "ampere_sgemm_128x64_nn", 150, cat="kernel", dur=80, pid=0, tid=7,
           args={"External id": 2, "correlation": 10, "device": 0, "stream": 7, "grid": [4, 1, 1],
                 "block": [256, 1, 1], "registers per thread": 128, "shared memory": 16384,
                 "blocks per SM": 0.5, "warps per SM": 4.0, "est. achieved occupancy %": 12}),
        ev("f", "ac2g", 150, cat="ac2g", id=10, bp="e", pid=0, tid=7),
        ev("X", "cudaMemcpyAsync", 400, cat="cuda_runtime", dur=30, args={"External id": 3, "correlation": 11}),
        ev("X", "Memcpy HtoD (Pageable -> Device)", 450, cat="gpu_memcpy", dur=50, pid=0, tid=7,
           args={"correlation": 11, "bytes": 4096, "device": 0, "stream": 7}),
        ev("X", "cudaStreamSynchronize", 600, cat="cuda_runtime", dur=100, args={"External id": 4, "correlation": 12}),
        ev("X", "Stream Sync", 610, cat="cuda_sync", dur=50, pid=0, tid=7,
           args={"correlation": 12, "cuda_sync_kind": "Stream Sync", "wait_on_stream": 7, "device": 0, "stream": 7}),
        ev("X", "nccl:all_reduce", 700, cat="cpu_op", dur=50,
           args={"External id": 5, "Collective name": "allreduce", "In msg nelems": 1024, "Out msg nelems": 1024,
                 "Group size": 2, "dtype": "Float", "Process Group Name": "0", "Process Group Ranks": [0, 1]}),
        ev("i", "[memory]", 710, cat="cpu_instant_event", s="t",
           args={"Total Reserved": 2097152, "Total Allocated": 1024, "Bytes": 1024, "Device Id": 0, "Device Type": 1}),
        ev("X", "gpu annotation", 140, cat="gpu_user_annotation", dur=200, pid=0, tid=7, args={"External id": 1}),
    ]
    s["hand_gpu_minimal"] = {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3",
                             "totalGlobalMem": 85029158912, "computeMajor": 9, "computeMinor": 0, "numSms": 132,
                             "maxThreadsPerMultiprocessor": 2048, "warpSize": 32}],
                             "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 2},
                             "traceEvents": gpu, "traceName": "hand", "baseTimeNanoseconds": 1700000000000000000}
    # B/E pairs, nested, unmatched both ways, across threads.
    s["hand_begin_end"] = [
        ev("B", "outer", 1), ev("B", "inner", 2), ev("E", "", 3), ev("E", "", 9),
        ev("E", "", 10), ev("B", "never closed", 11), ev("B", "t2", 1, tid=2), ev("E", "", 4, tid=2)]
    # Python functions with ids and parents, a python parent that is missing.
    s["hand_python"] = {"traceEvents": [
        ev("X", "train.py(10): <module>", 0, cat="python_function", dur=100, args={"Python id": 1, "Python parent id": None}),
        ev("X", "nn.Module: Linear_0", 5, cat="python_function", dur=50, args={"Python id": 2, "Python parent id": 1}),
        ev("X", "torch/nn/functional.py(1): linear", 6, cat="python_function", dur=20,
           args={"Python id": 3, "Python parent id": 2}),
        ev("X", "orphan", 60, cat="python_function", dur=5, args={"Python id": 9, "Python parent id": 77}),
        ev("X", "aten::linear", 7, cat="cpu_op", dur=10, args={"External id": 1}),
    ]}
    # Text pids and tids, numeric text, negative, labels that only differ in case.
    s["hand_labels"] = {"traceEvents": [
        ev("X", "a", 1, pid="Traces", tid="PyTorch Profiler", dur=1),
        ev("X", "b", 2, pid=5, tid="stream 7", cat="kernel", dur=1, args={"correlation": 1}),
        ev("X", "c", 3, pid="5", tid="25738", cat="cpu_op", dur=1),
        ev("X", "d", 4, pid="-3", tid="-", dur=1),
        ev("X", "e", 5, pid="traces", tid="PyTorch profiler", dur=1),
        ev("X", "f", 6, pid=0, tid="stream 8", cat="Kernel", dur=1, args={"correlation": 2, "device": 1}),
        ev("M", "thread_name", 0, pid=5, tid="stream 7", args={"name": "stream 7"}),
    ]}
    # Counters, flows with string ids, instants, unknown phases, null args.
    s["hand_misc_phases"] = {"traceEvents": [
        {"ph": "C", "name": "GPU Memory", "pid": 1, "ts": 5, "args": {"allocated": 10, "reserved": 20.5, "label": "x"}},
        {"name": "counter without ph first", "args": {"v": 1}, "ph": "C", "pid": 1, "ts": 6},
        ev("s", "flow", 1, id="0xabc", cat="async"), ev("t", "flow", 2, id="0xabc"), ev("f", "flow", 3, id="0xabc", bp="e"),
        ev("b", "async begin", 1, id=5), ev("e", "async end", 2, id=5), ev("n", "nestable", 2),
        ev("I", "instant", 4, s="p"), ev("X", "null args", 4, dur=0, args=None), ev("O", "object", 4),
        ev("X", "exp ts", 1.5e3, dur=2.5e1), ev("X", "float ts", 1234.5678, dur=0.0005),
    ]}
    # Escapes: in names, in keys (an escaped "traceEvents" key is the same key), UTF-8.
    s["hand_escapes"] = ('{"trace\\u0045vents": [{"ph": "X", "name": "a\\"b\\\\c\\n\\u00e9\\ud83d\\ude00", "pid": 1, '
                         '"tid": 1, "ts": 1, "dur": 1, "cat": "cpu\\u005fop"}], "traceEvents": [{"ph": "X", '
                         '"name": "caf\u00e9 \u6f22\u5b57", "pid": 1, "tid": 1, "ts": 2, "dur": 1, '
                         '"args": {"Input \\u0044ims": [[1, 2]], "External id": 3}}]}')
    # Lookalikes of a chunk boundary ("}, {") inside strings and nested arrays, each event
    # padded so the 1 KB chunks of the fuzz build fall on them.
    pad = "x" * 700
    s["hand_chunk_traps"] = {"traceEvents": [
        ev("X", "op }, {\"ph\": \"X\"} one", 1, dur=1, args={"pad": pad}),
        ev("X", "op two", 2, dur=1, args={"Input Dims": [{"a": 1}, {"b": 2}], "pad": pad,
                                          "nested": [{"ph": "X", "name": "fake", "ts": 1}, {"x": "}, {"}]}),
        ev("X", "op three", 3, dur=1, args={"s": "}, {" * 200}),
        ev("X", "op four", 4, dur=1, args={"pad": pad, "q": "\\\"}, {\\\""}),
    ]}
    s["hand_empty_events"] = {"traceEvents": []}
    s["hand_bare_array"] = [ev("X", "a", 1, dur=2), ev("i", "b", 2, s="t")]
    s["hand_duplicate_events_key"] = ('{"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1}], '
                                      '"schemaVersion": 1, "traceEvents": [{"ph": "X", "name": "b", "pid": 1, "tid": 1, '
                                      '"ts": 2, "dur": 1}]}')
    # At the loader's limits (src/load/parser.hpp): |ts| < 4.5e15 us, dur <= 30 days.
    big, day30 = 4499999999999999, 2592000000000
    s["hand_ts_limits"] = {"traceEvents": [
        ev("X", "max ts", big - day30, dur=day30), ev("X", "min ts", -big, dur=1),
        ev("X", "max dur", 0, dur=day30), ev("B", "wide", -big), ev("E", "", -big + day30),
        ev("X", "kernel at min", -big, cat="kernel", dur=1, pid=0, tid=7, args={"correlation": 1}),
        ev("X", "kernel at max", big - 1, cat="kernel", dur=1, pid=0, tid=7, args={"correlation": 2}),
        ev("X", "ProfilerStep#9223372036854775807", -big, cat="user_annotation", dur=day30),
        ev("X", "copy", 5, cat="gpu_memcpy", dur=1, pid=0, tid=7, args={"bytes": 2**50, "correlation": 3}),
    ]}
    # One of each bad event the lenient loader repairs or drops (and strict refuses): a
    # byte-order mark, an unpaired surrogate, ids above 2^63-1, a negative duration.
    s["hand_lenient_repairs"] = (
        '\ufeff{"traceEvents": [{"ph": "X", "cat": "cuda_runtime", "name": "launch\\ud800", "pid": 1, "tid": 1, '
        '"ts": 1, "dur": 2, "args": {"correlation": 18446744073709551615, "External id": 9223372036854775808}}, '
        '{"ph": "X", "cat": "kernel", "name": "k\\udc00", "pid": 0, "tid": 7, "ts": 3, "dur": 1, '
        '"args": {"correlation": 18446744073709551615, "stream": 7}}, '
        '{"ph": "s", "cat": "ac2g", "name": "ac2g", "id": 18446744073709551615, "pid": 1, "tid": 1, "ts": 1}, '
        '{"ph": "X", "cat": "cpu_op", "name": "negative", "pid": 1, "tid": 1, "ts": 5, "dur": -3}]}')
    return s


def bad_seeds(valid_text):
    b = {}
    b["bad_truncated"] = valid_text[: len(valid_text) * 2 // 3]
    b["bad_truncated_in_string"] = '{"traceEvents": [{"ph": "X", "name": "abc'
    b["bad_not_json"] = "this is not json"
    b["bad_empty"] = ""
    b["bad_whitespace"] = " \n\t "
    b["bad_scalar"] = "42"
    b["bad_no_events"] = '{"schemaVersion": 1}'
    b["bad_events_object"] = '{"traceEvents": {"ph": "X"}}'
    b["bad_event_not_object"] = '{"traceEvents": [1, "two", null]}'
    b["bad_missing_ph"] = '{"traceEvents": [{"name": "a", "pid": 1, "tid": 1, "ts": 1}]}'
    b["bad_missing_ts"] = '{"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "dur": 1}]}'
    b["bad_missing_name"] = '{"traceEvents": [{"ph": "X", "pid": 1, "tid": 1, "ts": 1, "dur": 1}]}'
    b["bad_ts_string"] = '{"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": "1", "dur": 1}]}'
    b["bad_ts_huge"] = '{"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 92233720368547758070, "dur": 1}]}'
    b["bad_ts_exp"] = '{"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1e300, "dur": 1}]}'
    b["bad_ts_beyond_limit"] = '{"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 4500000000000001, "dur": 1}]}'
    b["bad_begin_end_too_long"] = ('[{"ph": "B", "name": "a", "pid": 1, "tid": 1, "ts": 0}, '
                                   '{"ph": "E", "pid": 1, "tid": 1, "ts": 2592000000001}]')
    b["bad_dur_negative"] = '{"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": -5}]}'
    b["bad_dur_absurd"] = '{"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 2592000000001}]}'
    b["bad_pid_object"] = '{"traceEvents": [{"ph": "X", "name": "a", "pid": {}, "tid": 1, "ts": 1, "dur": 1}]}'
    b["bad_args_array"] = '{"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1, "args": []}]}'
    b["bad_correlation_float"] = ('{"traceEvents": [{"ph": "X", "name": "a", "cat": "kernel", "pid": 1, "tid": 1, "ts": 1, '
                                  '"dur": 1, "args": {"correlation": 1.5, "grid": [1, "x", 1]}}]}')
    b["bad_grid_object"] = ('{"traceEvents": [{"ph": "X", "name": "k", "cat": "kernel", "pid": 1, "tid": 1, "ts": 1, '
                            '"dur": 1, "args": {"grid": {"x": 1}}}]}')
    b["bad_invalid_utf8"] = b'{"traceEvents": [{"ph": "X", "name": "a\xc3\x28", "pid": 1, "tid": 1, "ts": 1, "dur": 1}]}'
    b["bad_invalid_utf8_key"] = b'{"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "args": {"\xff": 1}}]}'
    b["bad_trailing_content"] = '{"traceEvents": []} {"traceEvents": []}'
    b["bad_trailing_comma"] = '{"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1},]}'
    b["bad_unbalanced"] = '{"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1, "args": {"x": [1}]}]}'
    b["bad_device_properties"] = '{"deviceProperties": {"id": 0}, "traceEvents": []}'
    b["bad_distributed_info"] = '{"distributedInfo": [1, 2], "traceEvents": []}'
    b["bad_schema_version"] = '{"schemaVersion": "one", "traceEvents": []}'
    b["bad_deep_nesting"] = '{"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "args": {"x": ' + \
        "[" * 2000 + "]" * 2000 + "}}]}"
    return b


def gz(data, level=6, mtime=0):
    return gzip.compress(data, compresslevel=level, mtime=mtime)


def stored_gzip(data):
    # A gzip member whose deflate stream uses stored (uncompressed) blocks.
    c = zlib.compressobj(0, zlib.DEFLATED, -15)
    body = c.compress(data) + c.flush()
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
    return header + body + zlib.crc32(data).to_bytes(4, "little") + (len(data) & 0xFFFFFFFF).to_bytes(4, "little")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--traces", default="/work/shared/traces/public", help="directory of the public traces")
    args = ap.parse_args()
    seeds = os.path.join(HERE, "seeds")
    for sub in ("json", "gzip"):
        shutil.rmtree(os.path.join(seeds, sub), ignore_errors=True)
        os.makedirs(os.path.join(seeds, sub))
    written = {}

    def put(sub, name, data):
        if isinstance(data, str):
            data = data.encode("utf-8")
        with open(os.path.join(seeds, sub, name), "wb") as f:
            f.write(data)
        written[(sub, name)] = data

    for name, src, pretty in REAL:
        path = os.path.join(args.traces, src)
        if not os.path.exists(path):
            print("skipped (missing): %s" % path)
            continue
        with gzip.open(path, "rt", encoding="utf-8") as f:
            doc = json.load(f)
        text = cut_window(doc, pretty)
        json.loads(text)  # valid
        put("json", name + ".json", text)
    for name, doc in hand_seeds().items():
        if isinstance(doc, str):
            text = doc
        elif isinstance(doc, list):
            text = "[\n" + ",\n".join(json.dumps(e) for e in doc) + "\n]\n"
        else:
            text = render([(k, v) for k, v in doc.items()], doc["traceEvents"], False)
        put("json", name + ".json", text)
    first_real = next((d for (sub, n), d in sorted(written.items()) if n.startswith("real_")), b"{}").decode()
    for name, text in bad_seeds(first_real).items():
        put("json", name + ".json", text)

    # gzip seeds
    small = written[("json", "hand_gpu_minimal.json")]
    real = written.get(("json", "real_event_sync.json"), small)
    labels = written[("json", "hand_labels.json")]
    put("gzip", "gpu_minimal_l1.json.gz", gz(small, 1))
    put("gzip", "gpu_minimal_l9.json.gz", gz(small, 9))
    put("gzip", "event_sync_l6.json.gz", gz(real, 6))
    put("gzip", "labels_stored.json.gz", stored_gzip(labels))
    put("gzip", "two_members.json.gz", gz(small[: len(small) // 2], 1) + gz(small[len(small) // 2:], 9))
    put("gzip", "trailing_zeros.json.gz", gz(small, 6) + b"\0" * 16)
    put("gzip", "trailing_garbage.json.gz", gz(small, 6) + b"garbage")
    put("gzip", "truncated.json.gz", gz(real, 6)[:-100])
    lying = bytearray(gz(small, 6))
    lying[-4:] = (7).to_bytes(4, "little")
    put("gzip", "lying_size.json.gz", bytes(lying))
    put("gzip", "empty_member.gz", gz(b"", 6))
    put("gzip", "bad_json_inside.json.gz", gz(b'{"traceEvents": [{"ph": "X"', 6))
    put("gzip", "highly_compressible.json.gz",
        gz(b'{"traceEvents": [' + b",".join([b'{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1}'] * 3000) + b"]}", 9))

    total = sum(len(d) for d in written.values())
    print("%d seeds, %.0f KB, largest %d bytes" % (len(written), total / 1024, max(len(d) for d in written.values())))


if __name__ == "__main__":
    main()
