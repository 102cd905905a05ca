"""Writes a profiler run as a Kineto-schema (Chrome trace) JSON file.

Where PyTorch has Kineto, its own exporter is used unchanged. Debian's torch 1.13 is built
without Kineto (torch.autograd.kineto_available() is False): torch.profiler then falls back
to the legacy autograd profiler, whose export_chrome_trace writes a bare array with empty
args, no categories, no shapes and no stacks. For that case this module writes the legacy
profiler's own measurements (names, threads, start/end, input shapes, sequence numbers,
Python stacks) in Kineto's schema: a {"traceEvents": [...]} object, "cpu_op" for ATen
operators and "user_annotation" for record_function ranges, args named as Kineto names
them ("Input Dims", "External id", "Sequence number", "Fwd thread id"), and the stack as
the "Call stack" arg that Kineto traces of PyTorch 1.8-1.10 carried. Nothing is invented:
every event and time comes from the profiler."""

import json
import os

import torch

# RecordScope::USER_SCOPE (torch/csrc/profiler: record_function ranges); Kineto files those
# as "user_annotation" and every other scope (ops, autograd nodes) as "cpu_op".
_USER_SCOPE = 7


def kineto_available():
    return bool(torch.autograd.kineto_available())


def _category(ev):
    return "user_annotation" if ev.scope == _USER_SCOPE else "cpu_op"


def legacy_events_to_kineto(function_events, pid):
    """Kineto-schema event dicts from the legacy profiler's FunctionEvents."""
    out = [
        {"name": "process_name", "ph": "M", "pid": pid, "tid": 0, "args": {"name": "python3"}},
    ]
    threads = set()
    for ev in function_events:
        if ev.device_type != torch.autograd.DeviceType.CPU:
            continue
        start = float(ev.time_range.start)
        end = float(ev.time_range.end)
        args = {"External id": int(ev.id)}
        if ev.input_shapes:
            args["Input Dims"] = [list(s) for s in ev.input_shapes]
        if ev.sequence_nr is not None and ev.sequence_nr >= 0:
            args["Sequence number"] = int(ev.sequence_nr)
        if ev.fwd_thread:
            args["Fwd thread id"] = int(ev.fwd_thread)
        if ev.stack:
            args["Call stack"] = ";".join(ev.stack)
        threads.add(int(ev.thread))
        # .name has ProfilerStep#N rewritten to "ProfilerStep*" for aggregation tables;
        # .trace_name keeps the recorded name.
        name = getattr(ev, "trace_name", None) or ev.name
        out.append({"ph": "X", "cat": _category(ev), "name": name, "pid": pid,
                    "tid": int(ev.thread), "ts": round(start, 3),
                    "dur": round(max(0.0, end - start), 3), "args": args})
    for tid in sorted(threads):
        out.append({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid,
                    "args": {"name": f"thread {tid}"}})
    return out


def export_trace(prof, path):
    """Writes `prof` (a torch.profiler.profile whose active steps just finished) to path."""
    if kineto_available():
        prof.export_chrome_trace(path)
        return
    events = legacy_events_to_kineto(prof.events(), os.getpid())
    doc = {"schemaVersion": 1, "deviceProperties": [], "displayTimeUnit": "ms",
           "traceName": os.path.basename(path), "traceEvents": events}
    with open(path, "w") as f:
        json.dump(doc, f, separators=(",", ":"))
