#!/usr/bin/python3
"""Forward latency of the detector on one CPU core: W windows x E events.

  /usr/bin/python3 scripts/train/bench_forward.py [--model models/detector.pt] [--W 100 --E 128]

Without --model it times a freshly initialised, scripted Detector of the default config
(the latency does not depend on the weights). Reports the median and p90 of --reps runs.
"""
import argparse
import json
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from model import DEFAULT_CONFIG, Detector, count_parameters, random_inputs  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", help="TorchScript file to time (default: a fresh scripted Detector)")
    ap.add_argument("--config", help="JSON config overrides for a fresh Detector")
    ap.add_argument("--W", type=int, default=100)
    ap.add_argument("--E", type=int, default=128)
    ap.add_argument("--U", type=int, default=400, help="distinct names")
    ap.add_argument("--fill", type=float, default=1.0, help="share of event slots that hold an event")
    ap.add_argument("--trace-features", help="a folder `ttap features` wrote for one trace: time on its arrays")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    if a.model:
        m = torch.jit.load(a.model)
        vocab = 4096
    else:
        cfg = json.loads(a.config) if a.config else None
        det = Detector(cfg).eval()
        vocab = det.vocab
        print(f"parameters: {count_parameters(det)}", flush=True)
        m = torch.jit.script(det)
    m.eval()
    if a.trace_features:
        from data import load_trace_dir, to_inputs
        x = to_inputs(load_trace_dir(a.trace_features))
        a.W, a.E = x[1].shape[0], x[1].shape[1]
        a.fill = float(x[6].float().mean())
    else:
        x = random_inputs(a.W, a.E, a.U, vocab=vocab, fill=a.fill)
    times = []
    with torch.inference_mode():
        for _ in range(3):
            m(*x)
        for _ in range(a.reps):
            t0 = time.perf_counter()
            y = m(*x)
            times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    med = times[len(times) // 2]
    p90 = times[min(len(times) - 1, int(0.9 * len(times)))]
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}, W={a.W} E={a.E} fill={a.fill:.2f}: "
          f"median {med:.1f} ms, p90 {p90:.1f} ms, min {times[0]:.1f} ms over {a.reps} runs; "
          f"output {tuple(y.shape)} {y.dtype}")


if __name__ == "__main__":
    main()
