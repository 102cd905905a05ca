#!/usr/bin/python3
"""Checks that a TorchScript detector creates every tensor of its forward on its inputs'
device. torch.jit.load(path, cuda) moves the parameters and buffers to the GPU, but a
tensor the code makes itself (torch.arange(...) with no device) stays on the CPU, and the
first op that mixes the two fails on CUDA only: a CPU-only machine never sees it. So the
forward's graph is read instead: every factory call must take its device from somewhere.

  /usr/bin/python3 scripts/train/check_devices.py models/detector.pt
  /usr/bin/python3 scripts/train/check_devices.py --planted   (shows that it catches one)

Exit 0 when every factory call names a device, 1 when one does not (listed), 2 on bad input.
"""
import argparse
import os
import re
import sys
import tempfile

import torch

# ATen factories with a `Device? device` argument.
FACTORIES = {"aten::arange", "aten::zeros", "aten::ones", "aten::full", "aten::empty", "aten::tensor",
             "aten::scalar_tensor", "aten::linspace", "aten::logspace", "aten::eye", "aten::rand",
             "aten::randn", "aten::randint", "aten::as_tensor", "aten::empty_strided", "aten::tril_indices",
             "aten::triu_indices"}


def nodes(block):
    for node in block.nodes():
        yield node
        for b in node.blocks():
            yield from nodes(b)


def device_less_factories(module):
    """(op, source line) of every factory call in forward whose device is a None constant."""
    bad = []
    for node in nodes(module.inlined_graph):
        if node.kind() not in FACTORIES:
            continue
        # Inputs follow the schema's arguments in order, keyword-only ones included.
        args = re.sub(r"^[^(]*\(|\)\s*->.*$", "", node.schema()).replace("*,", "").split(",")
        names = [a.strip().split("=")[0].split()[-1] for a in args if a.strip()]
        if "device" not in names or names.index("device") >= len(list(node.inputs())):
            continue
        dev = list(node.inputs())[names.index("device")]
        if dev.node().kind() == "prim::Constant" and isinstance(dev.type(), torch._C.NoneType):
            where = node.sourceRange().strip().splitlines()
            bad.append((node.kind(), where[0] if where else "?"))
    return bad


def planted_module():
    class Planted(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x * torch.arange(x.shape[0], dtype=x.dtype)

    path = os.path.join(tempfile.mkdtemp(), "planted.pt")
    torch.jit.script(Planted()).save(path)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", nargs="?", help="TorchScript file (models/detector.pt)")
    ap.add_argument("--planted", action="store_true", help="check a module with one device-less arange")
    a = ap.parse_args()
    path = planted_module() if a.planted else a.model
    if not path:
        ap.error("give a model file or --planted")
    try:
        module = torch.jit.load(path, map_location="cpu")
    except Exception as e:  # noqa: BLE001 (any load failure is the same bad input)
        print(f"check_devices.py: cannot load {path}: {e}", file=sys.stderr)
        return 2
    bad = device_less_factories(module)
    for op, line in bad:
        print(f"{op} without a device: {line}")
    print(f"{path}: {len(bad)} tensor(s) created without a device")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
