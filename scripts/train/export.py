#!/usr/bin/python3
"""Export a trained checkpoint to the TorchScript file the C++ detector loads.

  /usr/bin/python3 scripts/train/export.py /tmp/ttap-train/weak.pt -o models/detector.pt \\
      [--check-features /tmp/ttap-feat]

Scripts the Detector (torch.jit.script), saves it with its config and the feature format
version as extra files (ttap_detector.json), reloads it with torch.jit.load and checks that it
gives the same scores as the eager model on random inputs of the documented shapes and, with
--check-features, on up to 5 real traces' arrays. Prints the file's size and sha256.
"""
import argparse
import hashlib
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from model import Detector, RoutedDetector, random_inputs  # noqa: E402

FEATURE_VERSION = 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("checkpoint")
    ap.add_argument("-o", "--output", default="models/detector.pt")
    ap.add_argument("--check-features", help="features folder (with index.jsonl) to compare on")
    ap.add_argument("--gpu-checkpoint", help="a second checkpoint that scores the traces with GPU activity; "
                    "CHECKPOINT then scores the CPU-only ones (RoutedDetector)")
    a = ap.parse_args()
    torch.set_num_threads(1)
    def load(path):
        ck = torch.load(path, map_location="cpu")
        m = Detector(ck["config"]).eval()
        m.load_state_dict(ck["state_dict"])
        return ck, m

    ck, model = load(a.checkpoint)
    config = ck["config"]
    if a.gpu_checkpoint:
        gck, gpu = load(a.gpu_checkpoint)
        model = RoutedDetector(model, gpu).eval()
        config = {"routed": "gpu activity in any window: gpu, else cpu", "cpu": ck["config"], "gpu": gck["config"]}
    scripted = torch.jit.script(model)
    meta = dict(feature_version=FEATURE_VERSION, config=config, mode=ck.get("mode"),
                torch=torch.__version__, interface="forward(name_tokens, event_name, event_kind, event_opcat, "
                "event_track, event_numeric, event_mask) -> float32 [W] window scores; trace score = mean")
    os.makedirs(os.path.dirname(os.path.abspath(a.output)), exist_ok=True)
    scripted.save(a.output, _extra_files={"ttap_detector.json": json.dumps(meta)})

    loaded = torch.jit.load(a.output)
    vocab = model.cpu_model.vocab if a.gpu_checkpoint else model.vocab
    inputs = [random_inputs(W=100, E=128, U=300, vocab=vocab, seed=s) for s in range(3)]
    inputs.append(random_inputs(W=37, E=128, U=50, vocab=vocab, fill=0.1, seed=9))
    if a.gpu_checkpoint:  # one input for each route
        cpu_only = random_inputs(W=37, E=128, U=50, vocab=vocab, fill=0.1, seed=10)
        cpu_only[5][:, :, 5] = 0.0
        inputs.append(cpu_only)
    if a.check_features:
        from data import load_features
        inputs += [t.inputs for t in load_features(a.check_features, limit=5)]
    worst = 0.0
    with torch.no_grad():
        for x in inputs:
            y0, y1 = model(*x), loaded(*x)
            assert y1.dtype == torch.float32 and y1.shape == (x[1].shape[0],)
            worst = max(worst, float((y0 - y1).abs().max()))
    assert worst < 1e-5, worst
    digest = hashlib.sha256(open(a.output, "rb").read()).hexdigest()
    print(f"wrote {a.output}: {os.path.getsize(a.output)} bytes, sha256 {digest}; reloaded, "
          f"max |eager - loaded| = {worst:.2e} over {len(inputs)} inputs")


if __name__ == "__main__":
    main()
