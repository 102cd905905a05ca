#!/usr/bin/env python3
"""Builds a labeled set of the workload zoo run on a real GPU: every run is a real job
recorded by torch.profiler on the device, good or with one to three ordinary mistakes in
its step code (zoo.py), labeled by label.py. The GPU-only patterns (pageable copies,
small transfers, offload round trips, allocator churn, FP32 without tensor cores) are
drawn too. Every line is in split "test": no model trains on this set, it checks how the
detector and the rules do on real GPU recordings they have never seen.

Needs a PyTorch that sees a GPU; run it with that Python (it is also used for the runs):

  python3 scripts/dataset/make_gpu_zoo.py --runs 48 --out /tmp/ttap-zoo-gpu

Runs go one at a time by default. With --jobs N > 1 the runs' processes time-slice the
one GPU, and each trace shows the others' turns as idle with its own work queued: a
third of the GPU idle the rules could not name in batches 1-3 (recorded with --jobs 4-6)
was that (docs/accuracy-log.md, "Causal rules, eleventh round"). Use --jobs > 1 only
for a quick look, never for a labeled batch.

Work products are cached under --work (default OUT.work), so a second call resumes.
"""

import argparse
import concurrent.futures
import os
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_corpus  # noqa: E402

# Per workload: (image sides, batch sizes) of a GPU step of tens of milliseconds, and a
# trace under make_corpus's 2 MB (gzipped) limit for 2-3 profiled steps.
GPU_SHAPES = {
    "resnet18": ([128, 160, 224], [16, 32, 64]),
    "resnet50": ([128, 160, 224], [8, 16, 32]),
    "mobilenet_v3_small": ([128, 160, 224], [16, 32, 64]),
    "vit_b_16": ([128, 224], [8, 16, 32]),
    "efficientnet_b0": ([128, 160, 224], [8, 16, 32]),
    "fasterrcnn_mobilenet_v3_large_fpn": ([160, 224, 320], [2, 4]),
    "retinanet_resnet50_fpn": ([160, 224], [2, 4]),
    "ssdlite320_mobilenet_v3_large": ([160, 224, 320], [2, 4, 8]),
    "deeplabv3_mobilenet_v3_large": ([128, 160, 224], [4, 8]),
    "fcn_resnet50": ([128, 160], [4, 8]),
    "maskrcnn_resnet50_fpn": ([160, 224], [2]),
    "diffusion_unet": ([64, 96], [8, 16]),
    "vae": ([128, 160, 224], [8, 16]),
    "keypointrcnn_resnet50_fpn": ([160, 224], [2]),
    "depth_resnet18_unet": ([128, 160, 224], [4, 8]),
    "r3d_18": ([64, 96], [2, 4]),
}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=48, help="number of zoo runs (round-robin over workloads)")
    p.add_argument("--jobs", type=int, default=1,
                   help="runs at a time on the one GPU (more than 1 time-slices it: see above)")
    p.add_argument("--seed", type=int, default=2026)
    p.add_argument("--prefix", default="gpuzoo", help="run names' prefix (another seed, another prefix)")
    p.add_argument("--out", required=True, help="dataset folder (traces/, manifest.jsonl)")
    p.add_argument("--work", help="cache of raw traces and lines (default OUT.work)")
    a = p.parse_args(argv)
    if a.runs < 1 or a.jobs < 1:
        p.error("--runs and --jobs must be at least 1")
    import torch  # only to fail early, with a clear message, where no GPU is seen
    if not torch.cuda.is_available():
        p.error(f"this PyTorch ({torch.__version__}) sees no GPU")
    work = a.work or a.out.rstrip("/") + ".work"
    for d in (os.path.join(a.out, "traces"), os.path.join(work, "raw"), os.path.join(work, "lines")):
        os.makedirs(d, exist_ok=True)
    plan = make_corpus.zoo_plan(a.runs, seed=a.seed, device="cuda", shapes=GPU_SHAPES)
    for item in plan:
        item["name"] = item["name"].replace("zoo_", a.prefix + "_", 1)
    lock = threading.Lock()
    done = [0, 0]

    class Log:  # one line per run, whole, from any worker
        def __init__(self, f):
            self.f = f

        def write(self, s):
            with lock:
                self.f.write(s)
                self.f.flush()
                sys.stderr.write(s)

    with open(os.path.join(work, "build.log"), "a") as f:
        log = Log(f)

        def one(item):
            ok = make_corpus.run_zoo(item, a.out, work, log, py=sys.executable, split="test")
            with lock:
                done[0] += 1
                done[1] += int(ok)
                sys.stderr.write(f"[{done[0]}/{len(plan)}] {item['name']}: {'ok' if ok else 'FAILED'}\n")
            return ok

        with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
            list(pool.map(one, plan))
    lines = make_corpus.assemble(a.out, work)
    print(f"{len(lines)} traces ({done[1]} of {len(plan)} runs ok) in {os.path.join(a.out, 'manifest.jsonl')}")
    return 0 if lines else 1


if __name__ == "__main__":
    sys.exit(main())
