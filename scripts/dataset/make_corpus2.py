#!/usr/bin/python3
"""Builds data/ttap-bench-x: injector 2 (inject2.py) over every real GPU trace of
../shared/traces/public, split by background (leave-background-out).

Each public trace (a "background") feeds exactly one split. The eight backgrounds that
data/ttap-bench's surgery uses (it spreads them over its train, val and test splits) are
in this set's train split only, so that no background of this set's val or test feeds any
train split of either corpus, and val and test share none. The test backgrounds cover two
vendors (AMD MI300X, NVIDIA B200 and an unnamed NVIDIA GPU) and four workloads (detection,
diffusion, LLM decode, recommendation training); val holds LLM serving on ROCm and a
ResNet training on a GeForce.

  make_corpus2.py [--out data/ttap-bench-x] [--work build-dataset-x] [--per-background N]
Resumes from --work (one cached manifest line per trace); writes manifest.jsonl at the end.

More training data from the same train backgrounds (models/MODEL_CARD.md, fifth round),
kept out of data/ (its val and test backgrounds and files stay exactly as they are):
  make_corpus2.py --out /tmp/ttap-bench-x-extra --work /tmp/build-dataset-xe \
      --splits train --per-background 16 --plan-seed 5151 --tag xe
A different --plan-seed gives other crops, patterns, sizes and positions; --tag names the
files apart from the committed set's (x_...).

Real GPU recordings made for ttap as further train backgrounds (the good traces of a
workload-zoo batch, scripts/dataset/make_gpu_zoo.py; models/MODEL_CARD.md, seventh round):
  make_corpus2.py --out /tmp/ttap-bench-xz --work /tmp/build-dataset-xz --zoo-backgrounds \
      /work/gpuzoo/dev/manifest.jsonl --per-background 12 --plan-seed 7373 --tag xz
Only that batch's good traces are used, all as train; the public backgrounds are skipped."""

import argparse
import json
import os
import random
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import inject2  # noqa: E402

PUBLIC = os.path.join(ROOT, "..", "shared", "traces", "public")
MAX_TRACE_BYTES = 1536 * 1024

# file: (hardware, task, model, mode, distributed, split)
BACKGROUNDS = {
    # data/ttap-bench's surgery sources: train only here
    "kineto_resnet50_v100_nw4.json.gz": ("V100", "classification", "resnet50", "train", False, "train"),
    "kineto_resnet50_v100_nw0.json.gz": ("V100", "classification", "resnet50", "train", False, "train"),
    "hta_ddp_cnn_v100_nsres.json.gz": ("V100", "classification", "cnn_ddp", "train", True, "train"),
    "hta_ddp_a100_nccl.json.gz": ("A100", "other", "ddp_model", "train", True, "train"),
    "hta_alexnet_a100_small.json.gz": ("A100", "classification", "alexnet", "inference", False, "train"),
    "tracelens_vit_nsfw_h100.json.gz": ("H100", "classification", "vit_nsfw", "inference", False, "train"),
    "tracelens_qwen05b_h100.json.gz": ("H100", "other", "qwen1.5-0.5b", "inference", False, "train"),
    "tracelens_resnet_ckpt_mi300.json.gz": ("MI300X", "classification", "resnet_act_ckpt", "train", True, "train"),
    # new backgrounds, train: the same Qwen as the H100 trace (so it cannot leak a train
    # workload into test), the recommendation and toy traces
    "tracelens_qwen05b_mi300.json.gz": ("MI300X", "other", "qwen1.5-0.5b", "inference", False, "train"),
    "hta_torchrec_a100_rank0.json.gz": ("A100", "other", "torchrec", "train", True, "train"),
    "param_dlrm_v100_8ranks.tar.gz": ("V100", "other", "dlrm", "train", True, "train"),
    "hta_event_sync_small.json.gz": ("unnamed NVIDIA GPU", "other", "event_sync_toy", "inference", False, "train"),
    "hta_mi250_toy.json.gz": ("MI250", "other", "toy", "train", False, "train"),
    # val
    "param_resnet_2080ti.json.gz": ("RTX 2080 Ti", "classification", "resnet", "train", False, "val"),
    "tracelens_sglang_decode_bs32.json.gz": ("MI300X", "other", "sglang_decode", "inference", False, "val"),
    "tracelens_sglang_qwen3_8b_prefilldecode.json.gz": ("MI300X", "other", "sglang_qwen3_8b", "inference", False, "val"),
    "tracelens_vllm_piecewise_capture.json.gz": ("unnamed ROCm GPU", "other", "vllm_piecewise", "inference", False, "val"),
    "tracelens_vllm_piecewise_graph_execution.json.gz": ("unnamed ROCm GPU", "other", "vllm_piecewise", "inference", False, "val"),
    # test
    "tracelens_owlv2_mi300.json.gz": ("MI300X", "detection", "owlv2", "inference", False, "test"),
    "tracelens_xdit_flux1_capture.json.gz": ("MI300X", "generation", "flux1_xdit", "inference", False, "test"),
    "tracelens_vllm_b200_eager.json.gz": ("B200", "other", "vllm_eager", "inference", False, "test"),
    "hta_sampled_rank0.json.gz": ("unnamed NVIDIA GPU", "other", "dper3_sampled", "train", True, "test"),
    "hta_sampled_rank1.json.gz": ("unnamed NVIDIA GPU", "other", "dper3_sampled", "train", True, "test"),
}


def zoo_backgrounds(manifest):
    """The good traces of a workload-zoo batch as train backgrounds: file -> (path, fields)."""
    found = {}
    with open(manifest) as f:
        for raw in f:
            line = json.loads(raw)
            if line["label"] != "good":
                continue
            path = os.path.join(os.path.dirname(os.path.abspath(manifest)), line["trace"])
            found[os.path.basename(path)] = (path, (line["hardware"], line["task"], line["model"], line["mode"],
                                                    False, "train"))
    return found


def applicable(fields):
    hw, task, model, mode, dist, split = fields
    return [p for p in inject2.PATTERNS
            if (dist or p not in inject2.COMM) and (mode == "train" or p not in inject2.TRAIN_ONLY)]


def plan(per_background, seed=4242, backgrounds=None):
    backgrounds = backgrounds if backgrounds is not None else BACKGROUNDS
    rng = random.Random(seed)
    items = []
    for name in backgrounds:
        for i in range(per_background):
            # about a quarter good (the first of each background always), else 1-3 patterns
            r = rng.random()
            k = 0 if (i == 0 or r < 0.2) else 1 if r < 0.55 else 2 if r < 0.85 else 3
            items.append((name, i, rng.sample(applicable(backgrounds[name]), k), rng.randrange(1 << 30)))
    return items


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(ROOT, "data", "ttap-bench-x"))
    ap.add_argument("--work", default=os.path.join(ROOT, "build-dataset-x"))
    ap.add_argument("--per-background", type=int, default=8)
    ap.add_argument("--only", help="comma-separated background files (for a partial run)")
    ap.add_argument("--splits", help="comma-separated splits whose backgrounds to use (default: all)")
    ap.add_argument("--plan-seed", type=int, default=4242, help="seed of the plan (4242: data/ttap-bench-x)")
    ap.add_argument("--tag", default="x", help="file name prefix (x: data/ttap-bench-x)")
    ap.add_argument("--zoo-backgrounds", metavar="MANIFEST",
                    help="use the good traces of this workload-zoo manifest as train backgrounds instead")
    a = ap.parse_args(argv)
    if a.zoo_backgrounds:
        zoo = zoo_backgrounds(a.zoo_backgrounds)
        backgrounds = {name: fields for name, (_, fields) in zoo.items()}
        source_of = {name: path for name, (path, _) in zoo.items()}
    else:
        backgrounds = BACKGROUNDS
        source_of = {name: os.path.join(PUBLIC, name) for name in BACKGROUNDS}
    os.makedirs(os.path.join(a.out, "traces"), exist_ok=True)
    os.makedirs(os.path.join(a.work, "lines"), exist_ok=True)
    only = set(a.only.split(",")) if a.only else None
    splits = set(a.splits.split(",")) if a.splits else None
    log = open(os.path.join(a.work, "build.log"), "a")
    for name, i, inject, seed in plan(a.per_background, a.plan_seed, backgrounds):
        if only and name not in only:
            continue
        hw, task, model, mode, dist, split = backgrounds[name]
        if splits and split not in splits:
            continue
        stem = name.split(".")[0]
        tag = f"{a.tag}_{stem}_{i:02d}"
        line_path = os.path.join(a.work, "lines", tag + ".json")
        if os.path.exists(line_path):
            continue
        rel = f"traces/{tag}.json.gz"
        out = os.path.join(a.out, rel)
        fields = None
        for attempt in range(4):  # a plan that finds no room (tiny traces) is retried with another seed
            try:
                fields = inject2.make(source_of[name], out, inject, seed + attempt)
                break
            except ValueError as err:
                log.write(f"{tag}: attempt {attempt}: {err}\n")
        if fields is None:
            continue
        size = os.path.getsize(out)
        if size > MAX_TRACE_BYTES:
            os.remove(out)
            log.write(f"{tag}: {size} bytes, over the limit: dropped\n")
            continue
        line = {"trace": rel, "label": "bad" if fields["anti_patterns"] else "good", "task": task, "model": model,
                "mode": mode, "hardware": hw, "software": "as recorded by the source (see inject2.source)",
                "split": split, "background": name, "anti_patterns": fields["anti_patterns"],
                "source": "inject2", "inject2": fields["inject2"]}
        with open(line_path, "w") as f:
            f.write(json.dumps(line) + "\n")
        log.write(f"{tag}: ok {size} bytes {inject}\n")
        log.flush()
        print(f"{tag}: {size // 1024} KB {inject} -> {len(fields['anti_patterns'])} ranges", flush=True)
    lines = []
    for fn in sorted(os.listdir(os.path.join(a.work, "lines"))):
        with open(os.path.join(a.work, "lines", fn)) as f:
            line = json.loads(f.read())
        if os.path.exists(os.path.join(a.out, line["trace"])):
            lines.append(line)
    with open(os.path.join(a.out, "manifest.jsonl"), "w") as f:
        for line in lines:
            f.write(json.dumps(line) + "\n")
    lic = os.path.join(a.out, "licenses")
    os.makedirs(lic, exist_ok=True)
    for fn in os.listdir(os.path.join(PUBLIC, "licenses")):
        shutil.copy(os.path.join(PUBLIC, "licenses", fn), os.path.join(lic, fn))
    print(f"{len(lines)} traces in {os.path.join(a.out, 'manifest.jsonl')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
