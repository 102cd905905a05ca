#!/usr/bin/python3
"""Unit checks of the detector code on tensors of the documented shapes (no corpus needed).

  /usr/bin/python3 scripts/train/selftest.py

1. forward returns float32 [W] in [0, 1] for every ablation, eager and scripted, equal;
2. padding is inert: extra padding events or extra unused names do not change the scores;
3. an empty window and W other than 100 work;
4. the scripted module survives save / torch.jit.load;
5. a synthetic features folder in the docs/features.md layout (a planted "bad" event kind in
   a few windows of the bad traces) is learned by train.py in weak mode: window AUC well above
   chance from trace labels alone. This is a check of the code path, not a result.
6. instance_target: a labeled range shorter than a window marks the window holding most of
   it, a long range only the windows it covers by 20%.
7. the per-trace relative inputs (rel_stats, rel_emb): a robust z-score does not move when
   every window of a trace shifts by the same amount (a faster GPU), and does single out the
   one window that differs; the val split that picks the epoch can be one set's or the worst.
8. the sixth round's training options: per-set quotas per epoch, weight averaging (SWA) and a
   teacher's scores blended into the window target still learn the planted pattern, and the
   max pool gives an empty window a finite score;
9. event dropout (--augment-drop): hides events of a copy, never a window's first, never
   padding, and leaves the trace's own inputs as they were.
10. the tenth round's refit: --keep-epoch keeps that epoch's weights and stops there, whatever
   val says; cv_folds.py finds a trace's background (injector 2's manifest field, injector 1's
   file name) and holds the two recordings of one job out together.
"""
import json
import os
import random
import subprocess
import sys
import tempfile

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from data import instance_target  # noqa: E402
from model import Detector, random_inputs, robust_z  # noqa: E402
from train import augment_drop, selection_value  # noqa: E402
from cv_folds import background_of, group_of  # noqa: E402

torch.set_num_threads(1)


def check_forward():
    for cfg in [{}, {"use_names": 0}, {"use_window_tf": 0}, {"use_w2w": 0}, {"chunk": 7},
                {"use_window_tf": 0, "rel_stats": 1}, {"rel_stats": 1, "rel_emb": 1, "chunk": 7},
                {"use_window_tf": 0, "pool_max": 1}, {"pool_max": 1, "abs_stats": 1, "name_drop": 50, "chunk": 7}]:
        torch.manual_seed(0)
        m = Detector(dict(cfg, vocab=512)).eval()
        s = torch.jit.script(m)
        x = random_inputs(W=23, E=32, U=50, vocab=512)
        with torch.no_grad():
            a, b = m(*x), s(*x)
        assert a.dtype == torch.float32 and a.shape == (23,), (a.dtype, a.shape)
        assert bool(((a >= 0) & (a <= 1)).all()) and not bool(torch.isnan(a).any())
        assert torch.allclose(a, b, atol=1e-5), (cfg, (a - b).abs().max())
        # padding is inert: more event slots (padding) and extra unused names
        ntok, name, kind, opcat, track, num, mask = x
        pad = 9
        x2 = [torch.cat([ntok, torch.randint(1, 512, (5, 16))], 0)] + \
             [torch.cat([t, torch.zeros(t.shape[0], pad, dtype=t.dtype)], 1) for t in (name, kind, opcat, track)] + \
             [torch.cat([num, torch.zeros(num.shape[0], pad, num.shape[2])], 1),
              torch.cat([mask, torch.zeros(mask.shape[0], pad, dtype=torch.bool)], 1)]
        with torch.no_grad():
            c = s(*x2)
        assert torch.allclose(a, c, atol=1e-4), (cfg, "padding changed scores", (a - c).abs().max())
        print(f"ok forward {cfg or 'default'}: eager == scripted, padding inert")
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "m.pt")
        s.save(p)
        r = torch.jit.load(p)
        with torch.no_grad():
            assert torch.allclose(r(*x), s(*x))
    print("ok save/load")


def write_synthetic(root, n=48, W=40, E=24, seed=0):
    """Feature folders in the docs/features.md layout, with a planted pattern."""
    rng = np.random.default_rng(seed)
    os.makedirs(root, exist_ok=True)
    U = 30
    rows = []
    for i in range(n):
        bad = i % 2
        split = ["train", "train", "val", "test"][(i // 2) % 4] if i >= 8 else "train"
        d = os.path.join(root, f"t{i:03d}")
        os.makedirs(d, exist_ok=True)
        nt = np.zeros((U, 16), np.int32)
        nt[1:, :4] = rng.integers(1, 200, (U - 1, 4))
        mask = (rng.random((W, E)) < 0.7).astype(np.uint8)
        kind = (rng.integers(1, 8, (W, E)) * mask).astype(np.int32)
        wl = np.zeros(W, np.uint8)
        if bad:
            s = rng.integers(0, W - 4)
            wl[s:s + 4] = 1
            for w in range(s, s + 4):
                kind[w, :6] = 12  # the planted "anti-pattern": an event kind clean windows never have
                mask[w, :6] = 1
        num = rng.random((W, E, 8)).astype(np.float32) * mask[..., None]
        arrays = dict(name_tokens=nt, event_name=(rng.integers(1, U, (W, E)) * mask).astype(np.int32),
                      event_kind=kind, event_opcat=(rng.integers(0, 16, (W, E)) * mask).astype(np.int32),
                      event_track=(rng.integers(1, 17, (W, E)) * mask).astype(np.int32),
                      event_numeric=num, event_mask=mask, window_label=wl)
        for k, v in arrays.items():
            np.save(os.path.join(d, k + ".npy"), v)
        rows.append(dict(folder=f"t{i:03d}", label="bad" if bad else "good", split=split,
                         task="classification" if i % 3 else "generation"))
    with open(os.path.join(root, "index.jsonl"), "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")


def check_training():
    with tempfile.TemporaryDirectory() as d:
        write_synthetic(os.path.join(d, "feat"))
        cmd = [sys.executable, os.path.join(HERE, "train.py"), "--features", os.path.join(d, "feat"), "--name",
               "synthetic", "--out-dir", os.path.join(d, "out"), "--epochs", "6", "--batch", "8",
               "--config", json.dumps({"d": 32, "D": 64, "ffn": 64}), "--tokenizer", "/nonexistent"]
        subprocess.run(cmd, check=True)
        res = json.load(open(os.path.join(d, "out", "synthetic.json")))
        wauc = res["metrics"]["train"]["window_auc"]
        tauc = res["metrics"]["train"]["trace_auc"]
        print(f"synthetic planted pattern, weak labels: train trace AUC {tauc:.3f}, window AUC {wauc:.3f}")
        assert tauc > 0.9 and wauc > 0.8, "the training code did not learn a trivially planted pattern"
    print("ok training")


def check_training_options():
    with tempfile.TemporaryDirectory() as d:
        feat = os.path.join(d, "feat")
        write_synthetic(feat)
        teacher = {}
        for line in open(os.path.join(feat, "index.jsonl")):
            folder = os.path.join(feat, json.loads(line)["folder"])
            teacher[folder] = np.load(os.path.join(folder, "window_label.npy")).astype(np.float32) * 0.9
        np.save(os.path.join(d, "teacher.npy"), teacher, allow_pickle=True)
        cmd = [sys.executable, os.path.join(HERE, "train.py"), "--features", feat, "--name", "opts",
               "--out-dir", os.path.join(d, "out"), "--epochs", "6", "--mode", "window", "--set-quota", "feat=20",
               "--swa-from", "3", "--augment-drop", "0.3", "--teacher", os.path.join(d, "teacher.npy"), "--teacher-weight", "0.5",
               "--config", json.dumps({"d": 32, "D": 64, "ffn": 64, "pool_max": 1}), "--tokenizer", "/nonexistent"]
        subprocess.run(cmd, check=True)
        res = json.load(open(os.path.join(d, "out", "opts.json")))
        swa = [h for h in res["history"] if h["epoch"] == "swa"]
        assert swa and swa[0]["swa_epochs"] == 3, "the weight average is over epochs 3-5"
        assert os.path.exists(os.path.join(d, "out", "opts_swa.pt"))
        assert res["metrics"]["train"]["window_auc"] > 0.8, res["metrics"]["train"]
        bad = subprocess.run(cmd[:-4] + ["--set-quota", "other=5"], capture_output=True, text=True)
        assert bad.returncode != 0 and "--set-quota names" in bad.stderr, bad.stderr
    m = Detector({"vocab": 512, "use_window_tf": 0, "pool_max": 1}).eval()
    x = random_inputs(W=5, E=16, U=20, vocab=512)
    x[6][2] = False  # window 2 has no event
    with torch.no_grad():
        y = m(*x)
    assert bool(torch.isfinite(y).all()), y
    print("ok quotas, weight averaging, teacher, max pool")


def check_augment_drop():
    x = random_inputs(W=30, E=64, U=20, vocab=512)
    x[6][:, 40:] = False  # padding
    before = x[6].clone()
    hidden = 0
    for seed in range(20):
        y = augment_drop(x, 0.6, random.Random(seed))
        assert torch.equal(x[6], before), "the trace's own mask changed"
        assert torch.equal(y[6][:, 0], before[:, 0]), "a window lost its first event"
        assert not bool((y[6] & ~before).any()), "padding became an event"
        hidden += int((before & ~y[6]).sum())
    share = hidden / (20 * int(before.sum()))
    assert 0.15 < share < 0.45, share  # U(0, 0.6) hides 30% on average, the first events never
    print(f"ok event dropout ({share:.2f} of events hidden)")


def check_instance_target():
    bounds = np.array([[0, 10], [10, 20], [20, 30], [30, 40]], dtype=np.float64)
    cover = np.array([0, 0, 1, 1], dtype=np.uint8)  # the eval rule's labels, kept as they are
    # [8, 13]: window 0 holds 40% of it, window 1 60% -> window 1. [25, 40] spans windows 2-3.
    got = instance_target(cover, bounds, [{"ts_begin": 8, "ts_end": 13}, {"ts_begin": 25, "ts_end": 40}], 0.5)
    assert got.tolist() == [0, 1, 1, 1], got
    got = instance_target(np.zeros(4, np.uint8), bounds, [{"ts_begin": 5, "ts_end": 35}], 0.5)
    assert got.tolist() == [0, 0, 0, 0], got  # a range 3 windows long: no window holds half of it
    print("ok instance_target")


def check_relative():
    g = torch.Generator().manual_seed(1)
    x = torch.rand(50, 4, generator=g)
    x[17] += 3.0                                   # one window unlike the trace's others
    z = robust_z(x, 0.05)
    assert torch.allclose(robust_z(x + 2.5, 0.05), z, atol=1e-5), "a shift of the whole trace moved the z-scores"
    assert int(z.abs().sum(1).argmax()) == 17 and float(z[17].min()) > 1.0, z[17]
    assert float(robust_z(torch.zeros(7, 3), 0.05).abs().max()) == 0.0  # constant column: 0, no nan
    m = Detector({"vocab": 512, "use_window_tf": 0, "rel_stats": 1}).eval()
    st = m.window_stats(*random_inputs(W=9, E=16, U=20, vocab=512)[5:])
    assert st.shape == (9, 16) and not bool(torch.isnan(st).any())
    res = {"val": {"trace_auc": 0.9, "window_auc": 0.9}, "val@a": {"trace_auc": 0.8, "window_auc": 0.6},
           "val@b": {"trace_auc": 1.0, "window_auc": 0.9}}
    assert abs(selection_value(res, "both", "pooled") - 0.9) < 1e-9
    assert abs(selection_value(res, "both", "min") - 0.7) < 1e-9
    assert abs(selection_value(res, "window", "b") - 0.9) < 1e-9
    print("ok relative inputs and per-set selection")


def check_refit():
    with tempfile.TemporaryDirectory() as d:
        feat = os.path.join(d, "feat")
        write_synthetic(feat)
        cmd = [sys.executable, os.path.join(HERE, "train.py"), "--features", feat, "--name", "refit",
               "--out-dir", os.path.join(d, "out"), "--epochs", "6", "--keep-epoch", "2", "--mode", "window",
               "--config", json.dumps({"d": 32, "D": 64, "ffn": 64}), "--tokenizer", "/nonexistent"]
        subprocess.run(cmd, check=True, capture_output=True)
        res = json.load(open(os.path.join(d, "out", "refit.json")))
        assert res["selected_epoch"] == 2, res["selected_epoch"]
        assert [h["epoch"] for h in res["history"]] == [0, 1, 2], "training goes on past the kept epoch"
    assert background_of({"trace": "traces/x_foo_01.json.gz"}, {"manifest": {"background": "hta_mi250_toy.json.gz"}}) \
        == "hta_mi250_toy"
    assert background_of({"trace": "traces/surgery_0007_kineto_resnet50_v100_nw0.json.gz"}, {}) \
        == "kineto_resnet50_v100_nw0"
    assert background_of({"trace": "traces/zoo_0003_resnet18.json.gz"}, {"manifest": {}}) is None
    assert group_of("kineto_resnet50_v100_nw0") == group_of("kineto_resnet50_v100_nw4")
    assert group_of("hta_mi250_toy") != group_of("kineto_resnet50_v100_nw4")
    print("ok refit at a fixed epoch, backgrounds of the folds")


if __name__ == "__main__":
    check_relative()
    check_instance_target()
    check_forward()
    check_training()
    check_training_options()
    check_augment_drop()
    check_refit()
