#!/usr/bin/python3
"""The ttap-bench workload zoo: runs one real model (random weights) for a few training or
inference steps under torch.profiler and writes the raw trace plus a run description.

A run is "good" (best practice for its device) unless --inject names anti-patterns; each
injected pattern is the ordinary mistake in the step code, and the region where it happens
is wrapped in record_function("ttap_label::<id>"). label.py later moves those spans out of
the trace into the manifest. Example:

  /usr/bin/python3 scripts/dataset/zoo.py --workload resnet18 --mode train --batch 2 \
      --size 64 --inject host_sync,cast_churn --out /tmp/run
writes /tmp/run.raw.json and /tmp/run.run.json.
"""

import argparse
import contextlib
import json
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile, record_function, schedule

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402
import trace_export  # noqa: E402

# What each device can show. On CPU there is no GPU queue, so patterns that live in
# host/device transfers, the caching allocator or tensor cores cannot appear.
CPU_PATTERNS = ["dataloader_stall", "cpu_bound_step", "optimizer_single_tensor",
                "grad_not_set_to_none", "unfused_elementwise", "cast_churn", "redundant_copy",
                "layout_conversion", "host_sync"]
GPU_ONLY_PATTERNS = ["pageable_memcpy", "small_transfers", "offload_pingpong", "alloc_churn",
                     "fp32_no_tensor_cores"]
TRAIN_ONLY = {"optimizer_single_tensor", "grad_not_set_to_none"}


def allowed_patterns(workload, mode, device):
    pats = list(CPU_PATTERNS) + (GPU_ONLY_PATTERNS if device == "cuda" else [])
    if mode != "train":
        pats = [p for p in pats if p not in TRAIN_ONLY]
    if workload not in models.CONVNETS:
        pats = [p for p in pats if p != "layout_conversion"]
    return pats


class SyntheticImages(torch.utils.data.Dataset):
    """Random images standing in for a decoded dataset. With heavy=True each sample goes
    through a CPU augmentation pipeline (decode-sized uint8 image, resize, jitter,
    normalize), the work that starves a step when it runs in the main process."""

    def __init__(self, workload, size, length, heavy, seed):
        self.workload, self.size, self.length, self.heavy, self.seed = workload, size, length, heavy, seed

    def __len__(self):
        return self.length

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(self.seed * 100003 + i)
        sample, target = models.make_sample(self.workload, self.size, g)
        if self.heavy:
            sample = self._augment(sample, g)
        return sample, target

    def _augment(self, sample, g):
        # A camera-sized frame (4x the training side) blurred, resized down and jittered,
        # repeated for several crops the way multi-crop pipelines do.
        big = (torch.rand(1, 3, self.size * 4, self.size * 4, generator=g) * 255).to(torch.uint8)
        blur = torch.full((3, 1, 5, 5), 1.0 / 25.0)
        f = None
        for _ in range(3):
            x = F.conv2d(big.float() / 255.0, blur, padding=2, groups=3)
            x = F.interpolate(x, size=(self.size, self.size), mode="bilinear", align_corners=False)[0]
            x = (x * (0.8 + 0.4 * torch.rand(1, generator=g))).clamp(0, 1)
            f = (x - x.mean()) / (x.std() + 1e-6)
        if sample.dim() == 4:  # video: the same jitter for every frame
            return sample * (1.0 + 0.01 * f.mean())
        return 0.5 * sample + 0.5 * torch.sigmoid(f)


def move(batch, device, non_blocking):
    if isinstance(batch, torch.Tensor):
        return batch.to(device, non_blocking=non_blocking)
    if isinstance(batch, (list, tuple)):
        return type(batch)(move(b, device, non_blocking) for b in batch)
    if isinstance(batch, dict):
        return {k: move(v, device, non_blocking) for k, v in batch.items()}
    return batch


def image_tensors(inputs):
    return inputs if isinstance(inputs, list) else [inputs]


class Run:
    def __init__(self, a):
        self.a = a
        self.inject = set(a.inject)
        self.device = torch.device(a.device)
        self.train = a.mode == "train"
        self.cuda = a.device == "cuda"
        self.channels_last = a.workload in models.CONVNETS
        torch.manual_seed(a.seed)
        if self.cuda:
            # TF32 is part of the good config; fp32_no_tensor_cores turns it off.
            tf32 = "fp32_no_tensor_cores" not in self.inject
            torch.backends.cuda.matmul.allow_tf32 = tf32
            torch.backends.cudnn.allow_tf32 = tf32
        self.model = models.build_model(a.workload, a.size).to(self.device)
        if self.channels_last:
            self.model = self.model.to(memory_format=torch.channels_last)
        self.model.train(self.train)
        if "layout_conversion" in self.inject:
            # Each convolution's output is forced back to NCHW while the weights stay
            # channels_last, so every convolution converts its input again.
            for m in self.model.modules():
                if isinstance(m, nn.Conv2d):
                    m.register_forward_hook(lambda mod, inp, out: out.contiguous())
        if self.train:
            foreach = "optimizer_single_tensor" not in self.inject
            params = [p for p in self.model.parameters() if p.requires_grad]
            if a.optimizer == "adamw":
                self.opt = torch.optim.AdamW(params, lr=1e-4, foreach=foreach)
            else:
                self.opt = torch.optim.SGD(params, lr=1e-3, momentum=0.9, foreach=foreach)
        heavy = "dataloader_stall" in self.inject
        workers = 0 if heavy else a.workers
        ds = SyntheticImages(a.workload, a.size, a.batch * (a.steps + 2), heavy, a.seed)
        pin = self.cuda and "pageable_memcpy" not in self.inject
        # prefetch_factor only with workers: PyTorch 2.x refuses it (even its default) without.
        extra = {"persistent_workers": True, "prefetch_factor": 2} if workers > 0 else {}
        self.loader = torch.utils.data.DataLoader(
            ds, batch_size=a.batch, num_workers=workers, pin_memory=pin,
            collate_fn=lambda s: models.collate(a.workload, s), **extra)
        self.amp = self.cuda and "fp32_no_tensor_cores" not in self.inject
        self.loss_history = []

    def label(self, pattern):
        """The record_function span that marks an injected region (removed later)."""
        if pattern in self.inject:
            return record_function("ttap_label::" + pattern)
        return contextlib.nullcontext()

    # ---- the step, with each injectable mistake where it usually sits ----

    def fetch(self, it):
        with self.label("dataloader_stall"):
            inputs, target = next(it)
        non_blocking = self.cuda and "pageable_memcpy" not in self.inject
        with self.label("pageable_memcpy"):
            inputs = move(inputs, self.device, non_blocking)
            target = move(target, self.device, non_blocking)
            if "pageable_memcpy" in self.inject:
                torch.cuda.synchronize()
        if self.channels_last and isinstance(inputs, torch.Tensor) and inputs.dim() == 4:
            inputs = inputs.contiguous(memory_format=torch.channels_last)
        return inputs, target

    def augment_on_device(self, inputs):
        """Brightness/contrast jitter and normalization; written op by op when injected."""
        if "unfused_elementwise" not in self.inject:
            return inputs
        with self.label("unfused_elementwise"):
            out = []
            for x in image_tensors(inputs):
                m = x.mean()
                x = x * 1.1
                x = x + 0.02
                x = (x - m) * 0.9 + m
                x = x.clamp(0.0, 1.0)
                x = x - 0.45
                x = x / 0.226
                x = x * torch.sigmoid(x * 1.702)  # a hand-written GELU-ish squash
                x = x + 0.01 * torch.tanh(x)
                x = x.clamp(-3.0, 3.0)
                out.append(x)
            return out if isinstance(inputs, list) else out[0]

    def redundant_copies(self, inputs):
        if "redundant_copy" not in self.inject:
            return inputs
        with self.label("redundant_copy"):
            out = []
            for x in image_tensors(inputs):
                x = x.clone()
                x = x.transpose(-1, -2).contiguous().transpose(-1, -2).contiguous()
                x = x.clone().detach()
                out.append(x)
            return out if isinstance(inputs, list) else out[0]

    def recast_weights(self):
        # A half-precision copy of the weights remade every step (e.g. for an export or
        # EMA model) instead of once.
        with self.label("cast_churn"):
            halves = [p.detach().to(torch.float16) for p in self.model.parameters()]
            back = [h.to(torch.float32) for h in halves]
        return len(back)

    def transfer_scalars(self):
        with self.label("small_transfers"):
            weights = [torch.tensor(float(i) / 32.0).to(self.device) for i in range(32)]
        return torch.stack(weights).sum()

    def offload_roundtrip(self):
        # Offloads the largest weights to host memory and brings them back each step.
        with self.label("offload_pingpong"):
            big = sorted(self.model.parameters(), key=lambda p: p.numel(), reverse=True)[:4]
            for p in big:
                p.data = p.data.to("cpu").to(self.device)

    def host_metrics(self, loss, outputs):
        # Per-step host reads of device values: the loss as a Python float, NaN checks,
        # per-element reads.
        with self.label("host_sync"):
            self.loss_history.append(loss.item() if loss is not None else 0.0)
            t = outputs if isinstance(outputs, torch.Tensor) else loss
            if t is not None:
                if torch.isnan(t).any():
                    raise FloatingPointError("NaN in step")
                flat = t.detach().flatten()[:16]
                self.loss_history.extend(v.item() for v in flat)

    def host_side_stats(self, outputs):
        # numpy statistics over the step's outputs on the host, in the step.
        with self.label("cpu_bound_step"):
            rng = np.random.default_rng(len(self.loss_history))
            n = 200_000 + 100_000 * (self.a.seed % 5)
            arr = rng.standard_normal(n)
            if isinstance(outputs, torch.Tensor):
                arr[: outputs.numel()] = outputs.detach().float().cpu().numpy().ravel()[:n]
            stats = [np.percentile(arr, q) for q in (5, 25, 50, 75, 95)]
            hist = np.histogram(np.sort(arr), bins=256)[0]
            total = 0.0
            for v in hist.tolist():
                total += v * 0.5
            self.loss_history.append(float(stats[2]) + total * 0.0)

    def forward(self, inputs, target):
        ctx = torch.autocast("cuda", dtype=torch.bfloat16) if self.amp else contextlib.nullcontext()
        with ctx:
            return models.forward_loss(self.a.workload, self.model, inputs, target, self.train)

    def step(self, it):
        inputs, target = self.fetch(it)
        inputs = self.augment_on_device(inputs)
        inputs = self.redundant_copies(inputs)
        if "small_transfers" in self.inject:
            self.transfer_scalars()
        if "offload_pingpong" in self.inject:
            self.offload_roundtrip()
        if "cast_churn" in self.inject:
            self.recast_weights()
        compute_labels = [p for p in ("layout_conversion", "fp32_no_tensor_cores") if p in self.inject]
        with contextlib.ExitStack() as stack:
            for p in compute_labels:
                stack.enter_context(self.label(p))
            if self.train:
                loss = self.forward(inputs, target)
                loss.backward()
                outputs = None
            else:
                with torch.inference_mode():
                    outputs = self.forward(inputs, target)
                loss = None
        if self.train:
            with self.label("optimizer_single_tensor"):
                self.opt.step()
            with self.label("grad_not_set_to_none"):
                self.opt.zero_grad(set_to_none="grad_not_set_to_none" not in self.inject)
        if "host_sync" in self.inject:
            self.host_metrics(loss, outputs if isinstance(outputs, torch.Tensor) else None)
        if "cpu_bound_step" in self.inject:
            self.host_side_stats(outputs if isinstance(outputs, torch.Tensor) else None)
        if "alloc_churn" in self.inject:
            with self.label("alloc_churn"):
                torch.cuda.empty_cache()


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workload", required=True, choices=sorted(models.WORKLOADS))
    p.add_argument("--mode", choices=["train", "inference"], default="train")
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    p.add_argument("--batch", type=int, default=2)
    p.add_argument("--size", type=int, default=64, help="image side in pixels")
    p.add_argument("--inject", default="", help="comma-separated anti-pattern ids")
    p.add_argument("--active", type=int, default=2, help="profiled steps (after wait=1, warmup=1)")
    p.add_argument("--stack", action="store_true", help="with_stack=True")
    p.add_argument("--workers", type=int, default=1, help="DataLoader workers of the good config")
    p.add_argument("--optimizer", choices=["sgd", "adamw"], default="sgd")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", required=True, help="output prefix: writes PREFIX.raw.json and PREFIX.run.json")
    a = p.parse_args(argv)
    a.inject = [s for s in a.inject.split(",") if s]
    allowed = allowed_patterns(a.workload, a.mode, a.device)
    for pat in a.inject:
        if pat not in allowed:
            p.error(f"--inject {pat}: not injectable for {a.workload} {a.mode} on {a.device} "
                    f"(allowed: {', '.join(allowed)})")
    if a.device == "cuda" and not torch.cuda.is_available():
        p.error("--device cuda: this PyTorch has no CUDA device")
    if a.batch < 1 or a.size < 32 or a.active < 1:
        p.error("--batch >= 1, --size >= 32 and --active >= 1 are required")
    return a


def main(argv=None):
    a = parse_args(argv)
    torch.set_num_threads(a.threads)
    a.steps = 2 + a.active
    run = Run(a)
    raw_path = a.out + ".raw.json"
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if run.cuda else [])
    t0 = time.time()
    it = iter(run.loader)
    with profile(activities=activities, schedule=schedule(wait=1, warmup=1, active=a.active),
                 record_shapes=True, with_stack=a.stack,
                 on_trace_ready=lambda p: trace_export.export_trace(p, raw_path)) as prof:
        for _ in range(a.steps):
            run.step(it)
            prof.step()
    if run.cuda:
        torch.cuda.synchronize()
    info = {
        "workload": a.workload, "task": models.task_of(a.workload), "mode": a.mode,
        "device": a.device, "batch": a.batch, "size": a.size, "inject": a.inject,
        "active_steps": a.active, "with_stack": a.stack, "optimizer": a.optimizer if a.mode == "train" else None,
        "workers": 0 if "dataloader_stall" in a.inject else a.workers, "seed": a.seed,
        "hardware": torch.cuda.get_device_name(0) if run.cuda else "CPU",
        "software": f"torch {torch.__version__} torchvision {__import__('torchvision').__version__}"
                    + ("" if trace_export.kineto_available() else " (legacy profiler, Kineto schema)"),
        "wall_s": round(time.time() - t0, 2),
    }
    with open(a.out + ".run.json", "w") as f:
        json.dump(info, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
