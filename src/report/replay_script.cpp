#include "ttap/replay.hpp"

#include <stdexcept>

#include <fmt/format.h>

namespace ttap {

namespace {

// A JSON text as a Python string literal that json.loads reads back.
std::string py_json(std::string_view json) {
  if (json.empty()) return "None";
  std::string out = "json.loads(r'''";
  out += json;
  out += "''')";
  return out;
}

}  // namespace

ReplayChoice choose_replay_op(const Trace& t, const EventTree& tree, const std::string& op_name, std::optional<size_t> index) {
  std::vector<EventId> instances;
  bool name_seen = false;
  for (EventId e = 0; e < t.size(); ++e) {
    if (t.name_of(e) != op_name) continue;
    name_seen = true;
    const OpArgs* a = t.op(e);
    if (a && a->input_dims != kNoString && a->input_types != kNoString) instances.push_back(e);
  }
  if (!name_seen) throw std::invalid_argument(fmt::format("no op named \"{}\" in the trace", op_name));
  if (instances.empty())
    throw std::invalid_argument(fmt::format("\"{}\" has no recorded shapes: profile with record_shapes=True", op_name));
  std::vector<int64_t> time(t.size(), 0);
  std::vector<size_t> kernels(t.size(), 0);
  for (EventId g : tree.gpu_events()) {
    const EventId owner = tree.owner_op(g);
    if (owner == kNoEvent) continue;
    time[owner] += t.dur[g];
    ++kernels[owner];
  }
  ReplayChoice c;
  c.occurrences = instances.size();
  if (index) {
    if (*index >= instances.size())
      throw std::invalid_argument(fmt::format("--index {}: \"{}\" has {} instances with shapes (0 to {})", *index, op_name,
                                              instances.size(), instances.size() - 1));
    c.occurrence = *index;
  } else {
    for (size_t i = 1; i < instances.size(); ++i) {
      const EventId a = instances[i], b = instances[c.occurrence];
      if (std::tie(time[a], t.dur[a]) > std::tie(time[b], t.dur[b])) c.occurrence = i;
    }
  }
  c.event = instances[c.occurrence];
  c.kernel_time = time[c.event];
  c.kernels = kernels[c.event];
  return c;
}

std::string replay_script(const Trace& t, const EventTree& tree, const ReplayChoice& c) {
  const EventId e = c.event;
  const OpArgs& a = *t.op(e);
  const int32_t step = tree.step_of(e);
  const std::string where = step >= 0 ? fmt::format(", in ProfilerStep#{}", tree.steps()[step].number) : "";
  return fmt::format(R"PY(#!/usr/bin/env python3
"""Replays one op recorded in a PyTorch profiler trace, without the model.

Made by `ttap replay` from {trace}
Op: {op}, instance {k} of {n} with recorded shapes (ts {ts:.3f} us{where}).
Recorded: {cpu:.3f} us on the CPU; {kernels} GPU kernel(s), {gpu:.3f} us in all.

    python3 {{this file}} [--device cpu|cuda] [--iters N]

Inputs are random with the recorded shapes, dtypes and strides; scalar arguments are
the recorded values. Timing is the mean wall time per call (synchronized on CUDA).
"""
import argparse
import json
import time

import torch

OP = {op_py}
INPUT_DIMS = {dims}
INPUT_TYPES = {types}
INPUT_STRIDES = {strides}
CONCRETE_INPUTS = {concrete}
RECORDED_GPU_US = {gpu:.3f}

DTYPES = {{
    "float": torch.float32, "double": torch.float64, "c10::Half": torch.float16,
    "c10::BFloat16": torch.bfloat16, "long int": torch.int64, "long": torch.int64, "int": torch.int32,
    "short int": torch.int16, "signed char": torch.int8, "unsigned char": torch.uint8, "bool": torch.bool,
}}


def tensor(shape, dtype, strides, device):
    if strides and len(strides) == len(shape):
        t = torch.empty_strided(shape, strides, dtype=dtype, device=device)
    else:
        t = torch.empty(shape, dtype=dtype, device=device)
    if dtype.is_floating_point:
        t.normal_()
    else:
        t.zero_()  # integer inputs are often indices: zero is always in range
    return t


def literal(text):
    if text in ("", None):
        return None
    if text in ("True", "False"):
        return text == "True"
    try:
        return json.loads(text.replace("True", "true").replace("False", "false"))
    except ValueError:
        return text


def build_args(device):
    args = []
    float_dtype = torch.float32
    for i, kind in enumerate(INPUT_TYPES):
        dims = INPUT_DIMS[i] if i < len(INPUT_DIMS) else []
        strides = INPUT_STRIDES[i] if INPUT_STRIDES and i < len(INPUT_STRIDES) else None
        concrete = CONCRETE_INPUTS[i] if CONCRETE_INPUTS and i < len(CONCRETE_INPUTS) else ""
        if kind in DTYPES:
            if DTYPES[kind].is_floating_point:
                float_dtype = DTYPES[kind]
            args.append(tensor(dims, DTYPES[kind], strides, device))
        elif kind == "TensorList":
            args.append([tensor(d, float_dtype, None, device) for d in dims])
        else:
            args.append(literal(concrete))
    while args and args[-1] is None:  # trailing optional arguments: let the defaults apply
        args.pop()
    return args


def bind(packet, args):
    """A call of the first overload whose schema accepts the recorded arguments. The
    profiler records every argument in schema order, keyword-only ones included."""
    errors = []
    for overload in [o for o in packet.overloads() if o != "out"] + ["out"]:
        op = getattr(packet, overload)
        positional, keywords = [], {{}}
        for spec, value in zip(op._schema.arguments, args):
            if spec.kwarg_only:
                if value is not None:
                    keywords[spec.name] = value
            else:
                positional.append(value)
        try:
            op(*positional, **keywords)
            return lambda: op(*positional, **keywords)
        except Exception as e:  # a mismatching overload: try the next
            errors.append(f"{{overload}}: {{str(e).splitlines()[0]}}")
    raise RuntimeError("no overload of " + OP + " accepts the recorded inputs:\n  " + "\n  ".join(errors))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--iters", type=int, default=20)
    opts = parser.parse_args()
    namespace, name = OP.split("::", 1)
    try:
        packet = getattr(getattr(torch.ops, namespace), name)
    except (AttributeError, RuntimeError):
        raise SystemExit(f"PyTorch {{torch.__version__}} has no {{OP}}: replay with the PyTorch the trace was recorded with")
    try:
        call = bind(packet, build_args(opts.device))
    except RuntimeError as e:
        raise SystemExit(f"{{e}}\n(on {{opts.device}}; ops such as cuDNN or flash attention need --device cuda)")
    sync = torch.cuda.synchronize if opts.device.startswith("cuda") else (lambda: None)
    for _ in range(min(3, opts.iters)):
        call()
    sync()
    start = time.perf_counter()
    for _ in range(opts.iters):
        call()
    sync()
    mean_us = (time.perf_counter() - start) / max(opts.iters, 1) * 1e6
    print(f"{{OP}} on {{opts.device}} ({{torch.__version__}}): mean {{mean_us:.2f}} us over {{opts.iters}} calls;"
          f" recorded GPU time {{RECORDED_GPU_US:.2f}} us")


if __name__ == "__main__":
    main()
)PY",
                     fmt::arg("trace", t.source), fmt::arg("op", t.name_of(e)), fmt::arg("k", c.occurrence),
                     fmt::arg("n", c.occurrences), fmt::arg("ts", to_us(t.ts[e])), fmt::arg("where", where),
                     fmt::arg("cpu", to_us(t.dur[e])), fmt::arg("kernels", c.kernels), fmt::arg("gpu", to_us(c.kernel_time)),
                     fmt::arg("op_py", fmt::format("\"{}\"", t.name_of(e))), fmt::arg("dims", py_json(t.strings.view(a.input_dims))),
                     fmt::arg("types", py_json(t.strings.view(a.input_types))),
                     fmt::arg("strides", py_json(t.strings.view(a.input_strides))),
                     fmt::arg("concrete", py_json(t.strings.view(a.concrete_inputs))));
}

}  // namespace ttap
