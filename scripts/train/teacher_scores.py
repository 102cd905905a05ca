#!/usr/bin/python3
"""Window scores of an ensemble (the mean probability of several checkpoints) for every trace
of a features folder: the teacher of train.py --teacher, and the ensemble's val figures.

  /usr/bin/python3 scripts/train/teacher_scores.py FEATURES -o teacher.npy CK1.pt CK2.pt ...

Writes {features folder: [W] float32 scores} (numpy pickle) and prints, per merged set, the
ensemble's val trace AUC (mean window score) and pooled window AUC.

--cpu-checkpoint CK scores the traces without GPU events with CK alone, as the shipped routed
detector does (export.py --gpu-checkpoint), so the figures are those an exported routed
ensemble would give; --only-split val scores the val lines only (a quick comparison of
ensembles, not a teacher).
"""
import argparse
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from data import auc, load_features  # noqa: E402
from model import Detector, RoutedDetector  # noqa: E402


def load_checkpoint(path):
    ck = torch.load(path, map_location="cpu")
    m = Detector(ck["config"]).eval()
    m.load_state_dict(ck["state_dict"])
    return m


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("features")
    ap.add_argument("checkpoints", nargs="+")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--cpu-checkpoint", help="score traces without GPU events with this checkpoint alone (the routed detector)")
    ap.add_argument("--only-split", help="score only the lines of this split")
    a = ap.parse_args()
    torch.set_num_threads(1)
    models = [load_checkpoint(path) for path in a.checkpoints]
    if a.cpu_checkpoint:
        cpu_model = load_checkpoint(a.cpu_checkpoint)
        models = [RoutedDetector(cpu_model, m).eval() for m in models]
    traces = load_features(a.features)
    if a.only_split:
        traces = [t for t in traces if t.split == a.only_split]
    scores = {}
    with torch.no_grad():
        for i, t in enumerate(traces):
            scores[t.folder] = np.mean([m(*t.inputs).numpy() for m in models], 0).astype(np.float32)
            if (i + 1) % 100 == 0:
                print(f"{i + 1} of {len(traces)} traces", flush=True)
    np.save(a.output, scores, allow_pickle=True)
    for name in sorted({t.set for t in traces if t.split == "val"}):
        val = [t for t in traces if t.split == "val" and t.set == name]
        tauc = auc([scores[t.folder].mean() for t in val], [t.label for t in val])
        wauc = auc(np.concatenate([scores[t.folder] for t in val]), np.concatenate([t.window_label.numpy() for t in val]))
        print(f"val@{name}: {len(val)} traces, trace AUC {tauc:.3f}, window AUC {wauc:.3f}")
    print(f"wrote {a.output}: {len(scores)} traces, {len(models)} models")


if __name__ == "__main__":
    main()
