#!/usr/bin/env python3
"""Records a second run of the controlled DataLoader pair: the job of Kineto's
tb_plugin ResNet-50 samples (tests/data/kineto_resnet50_v100_nw{0,4}), ResNet-50 trained
with SGD on 32x32 images resized to 224, batch 32, once with num_workers=0 and once with
num_workers=4, six profiled steps each with memory profiling on, as the samples were.

What differs from the samples, and why: the images are torchvision's FakeData of CIFAR-10's
shape (no dataset can be fetched on the machines we record on), so the same PIL decode,
resize and normalize work runs per sample; the weights are random; the GPU and PyTorch are
whatever the machine has. The pair is for checking that ttap ranks by the pattern, not by
anything particular to one file, so a different machine and PyTorch is the point.

  python3 scripts/dataset/record_controlled_pair.py --out DIR [--stack]
writes DIR/resnet50_nw0.json.gz and DIR/resnet50_nw4.json.gz (needs a GPU).
"""

import argparse
import gzip
import json
import os
import shutil
import sys
import tempfile
import time


def record(workers, out_path, stack, seed):
    import torch
    import torchvision
    import torchvision.transforms as T
    from torch.profiler import ProfilerActivity, profile, schedule

    torch.manual_seed(seed)
    transform = T.Compose([T.Resize(224), T.ToTensor(), T.Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5))])
    data = torchvision.datasets.FakeData(size=32 * 40, image_size=(3, 32, 32), num_classes=10,
                                         transform=transform, random_offset=seed)
    loader = torch.utils.data.DataLoader(data, batch_size=32, shuffle=True, num_workers=workers)
    device = torch.device("cuda:0")
    model = torchvision.models.resnet50(weights=None).to(device)
    criterion = torch.nn.CrossEntropyLoss().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.001, momentum=0.9)
    model.train()
    # The samples profiled steps 5-10 (ProfilerStep#5..#10): two waited, three warm-up.
    sched = schedule(wait=2, warmup=3, active=6, repeat=1)
    tmp = tempfile.mkdtemp()
    raw = os.path.join(tmp, "trace.json")
    t0 = time.time()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], schedule=sched,
                 on_trace_ready=lambda p: p.export_chrome_trace(raw), record_shapes=True,
                 profile_memory=True, with_stack=stack) as prof:
        for step, (inputs, labels) in enumerate(loader):
            if step >= 11:
                break
            inputs, labels = inputs.to(device), labels.to(device)
            loss = criterion(model(inputs), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            prof.step()
    torch.cuda.synchronize()
    with open(raw, "rb") as src, gzip.open(out_path, "wb", compresslevel=9) as dst:
        shutil.copyfileobj(src, dst)
    shutil.rmtree(tmp)
    return {"workers": workers, "seconds": round(time.time() - t0, 1), "torch": torch.__version__,
            "torchvision": torchvision.__version__, "gpu": torch.cuda.get_device_name(0),
            "with_stack": stack, "bytes": os.path.getsize(out_path)}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True, help="output folder")
    p.add_argument("--stack", action="store_true", help="with_stack=True (Python frames in the trace)")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    import torch
    if not torch.cuda.is_available():
        p.error(f"this PyTorch ({torch.__version__}) sees no GPU")
    os.makedirs(a.out, exist_ok=True)
    runs = [record(w, os.path.join(a.out, f"resnet50_nw{w}.json.gz"), a.stack, a.seed) for w in (0, 4)]
    with open(os.path.join(a.out, "recording.json"), "w") as f:
        json.dump(runs, f, indent=1)
    print(json.dumps(runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
