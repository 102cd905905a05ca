#!/usr/bin/python3
"""Builds data/ttap-bench: the zoo's CPU runs and the surgery traces, labeled, split, with
one manifest. Runs one process at a time (the machine's cores are shared). Work products
(raw traces, per-trace manifest lines) are cached under --work so an interrupted build
resumes; the manifest is assembled from the cache at the end of every call.

  make_corpus.py [--zoo N] [--surgery N] [--out data/ttap-bench] [--work build-dataset]
"""

import argparse
import fcntl
import json
import os
import random
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import models  # noqa: E402
import zoo  # noqa: E402

PY = "/usr/bin/python3"
UNSEEN_TASKS = {"pose", "depth", "video"}
MAX_TRACE_BYTES = 2 * 1024 * 1024

# Per workload: (image sides, batch sizes) small enough for a CPU step of about a second
# with the reference BLAS of Debian's torch.
SHAPES = {
    "resnet18": ([64, 96, 128, 160], [1, 2, 4]),
    "resnet50": ([64, 96, 128], [1, 2, 4]),
    "mobilenet_v3_small": ([64, 96, 128, 160], [1, 2, 4]),
    "vit_b_16": ([64, 96, 128], [1, 2]),
    "efficientnet_b0": ([64, 96, 128], [1, 2, 4]),
    "fasterrcnn_mobilenet_v3_large_fpn": ([64, 96, 128], [1, 2]),
    "retinanet_resnet50_fpn": ([64, 96], [1, 2]),
    "ssdlite320_mobilenet_v3_large": ([64, 96], [1, 2]),
    "deeplabv3_mobilenet_v3_large": ([64, 96, 128], [1, 2]),
    "fcn_resnet50": ([64, 96], [1, 2]),
    "maskrcnn_resnet50_fpn": ([64, 96], [1]),
    "diffusion_unet": ([32, 64], [1, 2, 4]),
    "vae": ([64, 96, 128], [1, 2, 4]),
    "keypointrcnn_resnet50_fpn": ([64, 96], [1]),
    "depth_resnet18_unet": ([64, 96, 128], [1, 2]),
    "r3d_18": ([48, 64], [1, 2]),
}


# BatchNorm over a 1x1 map (DeepLabV3's ASPP pooling branch, SSDlite's last extra
# layers) needs two samples in training.
TRAIN_MIN_BATCH_2 = {"deeplabv3_mobilenet_v3_large", "ssdlite320_mobilenet_v3_large"}


def zoo_plan(n, seed=1234, device="cpu", shapes=None):
    """n zoo runs, round-robin over workloads; each run good (about a third) or with one
    to three injected patterns; shapes, mode, optimizer, stacks and steps varied. On cuda
    the GPU-only patterns are drawn too (make_gpu_zoo.py)."""
    shapes = shapes or SHAPES
    rng = random.Random(seed)
    names = list(models.WORKLOADS)
    plan = []
    for i in range(n):
        w = names[i % len(names)]
        sizes, batches = shapes[w]
        mode = "train" if rng.random() < 0.6 else "inference"
        allowed = zoo.allowed_patterns(w, mode, device)
        r = rng.random()
        k = 0 if r < 0.33 else 1 if r < 0.73 else 2 if r < 0.92 else 3
        inject = sorted(rng.sample(allowed, k))
        size = rng.choice(sizes)  # drawn in the order the first plans drew them
        batch = rng.choice(batches)
        if w in TRAIN_MIN_BATCH_2 and mode == "train":
            batch = max(batch, 2)
        plan.append({
            "name": f"zoo_{i:04d}_{w}_{mode}", "workload": w, "mode": mode,
            "size": size, "batch": batch, "inject": inject,
            "stack": rng.random() < 0.3, "active": rng.choice([2, 2, 3]),
            "optimizer": rng.choice(["sgd", "adamw"]), "seed": i, "device": device,
        })
    return plan


def split_for(task, index):
    """Unseen tasks go to test only; the rest 70/15/15 by position (deterministic)."""
    if task in UNSEEN_TASKS:
        return "test"
    slot = (index * 7) % 20  # 7 is coprime to 20 and to the 16 workloads: splits mix them
    return "train" if slot < 14 else "val" if slot < 17 else "test"


def run_zoo(item, out_dir, work, log, py=PY, split=None):
    """One zoo run, labeled: its manifest line is cached under WORK/lines. `split` forces
    the line's split (a set kept for testing only); by default split_for decides."""
    line_path = os.path.join(work, "lines", item["name"] + ".json")
    if os.path.exists(line_path):
        return True
    prefix = os.path.join(work, "raw", item["name"])
    cmd = [py, os.path.join(HERE, "zoo.py"), "--device", item.get("device", "cpu"), "--workload", item["workload"], "--mode", item["mode"],
           "--batch", str(item["batch"]), "--size", str(item["size"]), "--inject", ",".join(item["inject"]),
           "--active", str(item["active"]), "--optimizer", item["optimizer"], "--seed", str(item["seed"]),
           "--out", prefix] + (["--stack"] if item["stack"] else [])
    t0 = time.time()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    except subprocess.TimeoutExpired:
        log.write(f"{item['name']}: timeout\n")
        return False
    if r.returncode != 0:
        log.write(f"{item['name']}: zoo failed: {r.stderr[-2000:]}\n")
        return False
    rel = f"traces/{item['name']}.json.gz"
    task = models.task_of(item["workload"])
    split = split or split_for(task, item["seed"])
    r2 = subprocess.run([py, os.path.join(HERE, "label.py"), prefix + ".raw.json", prefix + ".run.json",
                         os.path.join(out_dir, rel), "--trace-path", rel, "--split", split],
                        capture_output=True, text=True)
    for leftover in (prefix + ".raw.json",):
        if os.path.exists(leftover):
            os.remove(leftover)
    if r2.returncode != 0:
        log.write(f"{item['name']}: label failed: {r2.stderr}\n")
        return False
    size = os.path.getsize(os.path.join(out_dir, rel))
    if size > MAX_TRACE_BYTES:
        os.remove(os.path.join(out_dir, rel))
        log.write(f"{item['name']}: {size} bytes gzipped, over the 2 MB limit: dropped\n")
        return False
    with open(line_path, "w") as f:
        f.write(r2.stdout.strip() + "\n")
    log.write(f"{item['name']}: ok {time.time() - t0:.1f}s {size} bytes\n")
    return True


def assemble(out_dir, work):
    """manifest.jsonl from the cached lines whose trace is present, in name order."""
    lines = []
    for fn in sorted(os.listdir(os.path.join(work, "lines"))):
        with open(os.path.join(work, "lines", fn)) as f:
            line = json.loads(f.read())
        if os.path.exists(os.path.join(out_dir, line["trace"])):
            lines.append(line)
    with open(os.path.join(out_dir, "manifest.jsonl"), "w") as f:
        for line in lines:
            f.write(json.dumps(line) + "\n")
    return lines


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--zoo", type=int, default=260, help="number of zoo runs")
    p.add_argument("--surgery", type=int, default=200, help="number of surgery traces")
    p.add_argument("--out", default=os.path.join(HERE, "..", "..", "data", "ttap-bench"))
    p.add_argument("--work", default=os.path.join(HERE, "..", "..", "build-dataset"))
    p.add_argument("--only", choices=["zoo", "surgery", "assemble"], help="do one part only")
    a = p.parse_args(argv)
    for d in (os.path.join(a.out, "traces"), os.path.join(a.work, "raw"), os.path.join(a.work, "lines")):
        os.makedirs(d, exist_ok=True)
    # One build per work folder: two would run the same items and delete each other's files.
    lock = open(os.path.join(a.work, "build.lock"), "w")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        print(f"make_corpus.py: error: another build holds {lock.name}", file=sys.stderr)
        return 2
    with open(os.path.join(a.work, "build.log"), "a", buffering=1) as log:
        if a.only in (None, "zoo"):
            for item in zoo_plan(a.zoo):
                run_zoo(item, a.out, a.work, log)
                assemble(a.out, a.work)
        if a.only in (None, "surgery"):
            import surgery  # noqa: E402  (only needed here)
            surgery.build(a.surgery, a.out, a.work, log)
    lines = assemble(a.out, a.work)
    print(f"{len(lines)} traces in {os.path.join(a.out, 'manifest.jsonl')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
