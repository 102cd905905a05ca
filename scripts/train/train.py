#!/usr/bin/python3
"""Train the ttap window detector on what `ttap features DATASET -o FEAT` wrote.

  /usr/bin/python3 scripts/train/train.py --features /tmp/ttap-feat --name weak
  /usr/bin/python3 scripts/train/train.py --features /tmp/ttap-feat --name window --mode window
  /usr/bin/python3 scripts/train/train.py ... --config '{"use_names": 0}'   (ablations)

Modes:
  weak    multiple-instance learning from trace labels alone (the TorchTraceAP setting):
          trace score = mean of window scores, BCE on traces + embedding separation +
          good-window clustering + score smoothness (+ a top-k ranking term); selected on
          val trace AUC (no window labels are used for training or selection).
  window  window-supervised: BCE per window on window_label.npy (positives re-weighted),
          selected on val window AUC. With --instance-share 0.5 the target also marks
          the windows that hold half of a labeled range shorter than a window; with
          --trace-weight 1 a trace BCE on the mean window score is added; --select both
          picks the epoch on the mean of val trace and window AUC (the shipped model's
          setting, models/MODEL_CARD.md).

Writes the checkpoint (state dict + config) to --out-dir/NAME.pt and the metrics to
--out-dir/NAME.json; train on split train, select on val, report train/val/test and test
seen vs unseen tasks (tasks absent from train).
"""
import argparse
import json
import math
import os
import random
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from data import auc, load_features, vocab_rows_from_tokenizer  # noqa: E402
from model import DEFAULT_CONFIG, Detector, count_parameters  # noqa: E402

DEFAULT_WEIGHTS = dict(sep=0.1, clu=0.1, smooth=0.1, rank=0.5)


def topk_idx(s: torch.Tensor, k: int) -> torch.Tensor:
    return torch.topk(s.detach(), min(k, s.shape[0])).indices


def batch_loss(outs, labels, wlabels, mode, w, k, margin_sep, margin_rank, trace_weight=0.0):
    """outs: list of (h [W, D], logits [W]) per trace; returns (loss, parts dict)."""
    parts = {}
    if mode == "window":
        losses = []
        for (h, lg), wl in zip(outs, wlabels):
            # positives counted as windows whose target is at least one half: the labels' count for 0/1
            # targets and for a teacher blend of at most half (--teacher-weight <= 0.5)
            npos = float((wl >= 0.5).sum())
            pw = torch.tensor(min(20.0, (wl.numel() - npos) / npos) if npos > 0 else 1.0)
            losses.append(F.binary_cross_entropy_with_logits(lg, wl, pos_weight=pw))
        loss = torch.stack(losses).mean()
        parts["bce_win"] = float(loss)
        if trace_weight > 0:
            S = torch.stack([torch.sigmoid(lg).mean() for _, lg in outs]).clamp(1e-6, 1 - 1e-6)
            l_tr = F.binary_cross_entropy(S, torch.tensor(labels, dtype=torch.float32))
            parts["bce_trace"] = float(l_tr)
            loss = loss + trace_weight * l_tr
        return loss, parts

    scores = [torch.sigmoid(lg) for _, lg in outs]
    y = torch.tensor(labels, dtype=torch.float32)
    S = torch.stack([s.mean() for s in scores]).clamp(1e-6, 1 - 1e-6)
    l_bce = F.binary_cross_entropy(S, y)
    parts["bce"] = float(l_bce)
    loss = l_bce

    bad = [i for i, l in enumerate(labels) if l == 1]
    good = [i for i, l in enumerate(labels) if l == 0]
    hn = [F.normalize(h, dim=1) for h, _ in outs]
    # top-k window embeddings (by score) of each trace: their centroid
    cent = [hn[i][topk_idx(scores[i], k)].mean(0) for i in range(len(outs))]
    topk_mean = [scores[i][topk_idx(scores[i], k)].mean() for i in range(len(outs))]
    if bad and good:
        sep = [F.relu(margin_sep - (cent[i] - cent[j]).norm()) for i in bad for j in good]
        l_sep = torch.stack(sep).mean()
        rank = [F.relu(margin_rank - (topk_mean[i] - topk_mean[j])) for i in bad for j in good]
        l_rank = torch.stack(rank).mean()
        loss = loss + w["sep"] * l_sep + w["rank"] * l_rank
        parts["sep"] = float(l_sep)
        parts["rank"] = float(l_rank)
    if good:
        g = torch.cat([hn[j] for j in good], 0)
        mu = g.mean(0, keepdim=True)
        l_clu = ((g - mu) ** 2).sum(1).mean()
        loss = loss + w["clu"] * l_clu
        parts["clu"] = float(l_clu)
    sm = [((s[1:] - s[:-1]) ** 2).mean() for s in scores if s.shape[0] > 1]
    if sm:
        l_sm = torch.stack(sm).mean()
        loss = loss + w["smooth"] * l_sm
        parts["smooth"] = float(l_sm)
    return loss, parts


@torch.no_grad()
def predict(model, traces):
    model.eval()
    out = []
    for t in traces:
        out.append(model(*t.inputs).numpy())
    return out


def evaluate(model, traces, train_tasks):
    scores = predict(model, traces)
    res = {}
    groups = {"train": [], "val": [], "test": [], "test_seen": [], "test_unseen": []}
    val_sets = sorted({t.set for t in traces if t.split == "val"})
    for i, t in enumerate(traces):
        groups.setdefault(t.split, []).append(i)
        if t.split == "test":
            groups["test_seen" if t.task in train_tasks else "test_unseen"].append(i)
        if t.split == "val" and len(val_sets) > 1:
            groups.setdefault("val@" + t.set, []).append(i)
    for g, idx in groups.items():
        if not idx:
            continue
        ts = [float(scores[i].mean()) for i in idx]
        tl = [traces[i].label for i in idx]
        ws, wl = [], []
        for i in idx:
            if traces[i].window_label is not None:
                ws.append(scores[i])
                wl.append(traces[i].window_label.numpy())
        r = {"traces": len(idx), "bad": int(sum(tl)), "trace_auc": auc(ts, tl)}
        if ws:
            ws, wl = np.concatenate(ws), np.concatenate(wl)
            r.update(windows=int(len(wl)), pos_windows=int(wl.sum()), window_auc=auc(ws, wl))
            # window AUC within bad traces only (localization inside a trace known to be bad)
            bi = [i for i in idx if traces[i].label == 1 and traces[i].window_label is not None]
            if bi:
                r["window_auc_bad_traces"] = auc(np.concatenate([scores[i] for i in bi]),
                                                 np.concatenate([traces[i].window_label.numpy() for i in bi]))
        res[g] = r
    return res, scores


def selection_value(res, select, select_on="pooled"):
    """The val figure that picks the epoch: 'trace' AUC, 'window' AUC or 'both' (their mean),
    over the pooled val split ('pooled'), the worst of the val splits of the merged sets
    ('min': a model must hold on every set, the unseen-background one included), or one
    set's val split (its name)."""
    def value(m):
        t = m.get("trace_auc", float("nan"))
        w = m.get("window_auc", float("nan"))
        return {"trace": t, "window": w, "both": 0.5 * (t + w)}[select]
    per_set = {g[4:]: m for g, m in res.items() if g.startswith("val@")}
    if select_on == "pooled" or not per_set:
        return value(res.get("val", {}))
    if select_on == "min":
        return min(value(m) for m in per_set.values())
    if select_on not in per_set:
        raise SystemExit(f"--select-on {select_on}: no val split of that set (sets: {', '.join(sorted(per_set))})")
    return value(per_set[select_on])


def fmt(res):
    keys = ["train", "val"] + sorted(g for g in res if g.startswith("val@")) + ["test", "test_seen", "test_unseen"]
    out = []
    for g in keys:
        if g in res:
            r = res[g]
            out.append(f"{g}: n={r['traces']} tAUC={r['trace_auc']:.3f} wAUC={r.get('window_auc', float('nan')):.3f}")
    return " | ".join(out)


def augment_speed(inputs, amount, rng, gaps=False):
    """The trace's inputs with GPU and host durations scaled by exp(U(-amount, amount)) each
    (docs/features.md: column 0 ln(1 + us), 7 min(1, duration / window), 5 is_gpu); with
    `gaps`, launch delays and gaps (columns 1 and 3) by the host's factor too (a slower host
    launches later); the windows stay as recorded."""
    num = inputs[5].clone()
    gpu = num[:, :, 5]
    host = math.exp(rng.uniform(-amount, amount))
    scale = gpu * math.exp(rng.uniform(-amount, amount)) + (1.0 - gpu) * host
    num[:, :, 0] = torch.log1p(torch.expm1(num[:, :, 0]) * scale)
    num[:, :, 7] = (num[:, :, 7] * scale).clamp(max=1.0)
    if gaps:
        for col in (1, 3):
            num[:, :, col] = torch.log1p(torch.expm1(num[:, :, col]) * host)
    return list(inputs[:5]) + [num] + list(inputs[6:])


def augment_drop(inputs, amount, rng):
    """The trace's inputs with each event hidden (mask 0) with probability U(0, amount), drawn
    per trace; a window's first event always stays. Traces of other backgrounds differ in what
    the profiler recorded (Python frames or not, how many small ops), not only in speed."""
    mask = inputs[6].clone()
    p = rng.uniform(0.0, amount)
    g = torch.Generator().manual_seed(rng.randrange(1 << 31))
    drop = torch.rand(mask.shape, generator=g) < p
    drop[:, 0] = False
    mask[drop] = 0
    return list(inputs[:6]) + [mask] + list(inputs[7:])


def augmented(inputs, a, rng):
    """Training inputs with the augmentations the options ask for."""
    if a.augment_speed > 0:
        inputs = augment_speed(inputs, a.augment_speed, rng, a.augment_gaps)
    if a.augment_drop > 0:
        inputs = augment_drop(inputs, a.augment_drop, rng)
    return inputs


def parse_quota(spec, train):
    """--set-quota bench=290,x=290 -> {set: traces per epoch}; every train set must be named."""
    if not spec:
        return None
    quota = {}
    for part in spec.split(","):
        name, _, n = part.partition("=")
        if not n.isdigit():
            raise SystemExit(f"--set-quota: '{part}' is not SET=N")
        quota[name] = int(n)
    sets = {t.set for t in train}
    if sets != set(quota):
        raise SystemExit(f"--set-quota names {sorted(quota)}, the train split holds sets {sorted(sets)}")
    return quota


def draw_epoch(train, quota, rng):
    """One epoch's traces: from each set, its quota drawn without replacement (all of it if the quota
    is larger), at random."""
    out = []
    for name, n in sorted(quota.items()):
        pool = [t for t in train if t.set == name]
        out += pool if n >= len(pool) else rng.sample(pool, n)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--features", required=True, help="folder `ttap features DATASET -o` wrote")
    ap.add_argument("--name", required=True)
    ap.add_argument("--out-dir", default="/tmp/ttap-train")
    ap.add_argument("--mode", choices=["weak", "window"], default="weak")
    ap.add_argument("--config", help="JSON overrides of the model config (ablations)")
    ap.add_argument("--weights", help="JSON overrides of the loss weights " + json.dumps(DEFAULT_WEIGHTS))
    ap.add_argument("--epochs", type=int, default=12)
    ap.add_argument("--batch", type=int, default=8, help="traces per optimizer step")
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--wd", type=float, default=1e-2)
    ap.add_argument("--topk", type=int, default=5)
    ap.add_argument("--margin-sep", type=float, default=0.5)
    ap.add_argument("--margin-rank", type=float, default=0.5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--minutes", type=float, default=30.0, help="stop after this much training time")
    ap.add_argument("--tokenizer", default=os.path.join(os.path.dirname(__file__), "../../models/ttap_names.model"))
    ap.add_argument("--instance-share", type=float, default=0.0,
                    help="window mode: also fit as positive every window holding this share of a labeled range "
                         "(0: fit the eval rule's labels only)")
    ap.add_argument("--trace-weight", type=float, default=0.0,
                    help="window mode: weight of a trace BCE on the mean window score, added to the window BCE")
    ap.add_argument("--select", choices=["trace", "window", "both"],
                    help="val AUC that picks the epoch: trace, window, or their mean (default: weak trace, window window)")
    ap.add_argument("--select-on", default="pooled",
                    help="which val split picks the epoch: pooled, min (the worst of the merged sets' val splits) "
                         "or a set's name (merge_features.py)")
    ap.add_argument("--no-train-eval", action="store_true", help="score only val after each epoch")
    ap.add_argument("--limit", type=int, help="load only the first N traces (smoke tests)")
    ap.add_argument("--set-quota", help="traces per epoch from each merged set, e.g. bench=290,x=290: a set's "
                    "train traces are drawn afresh each epoch (all of them when the quota is at least their "
                    "number), so adding crops to one set does not shrink the others' share of training")
    ap.add_argument("--teacher", help="window mode: .npy of a dict {features folder: [W] window scores} of a "
                    "teacher (e.g. an ensemble's mean); the window target becomes a blend of the label target and "
                    "the teacher's score (distillation into one model)")
    ap.add_argument("--teacher-weight", type=float, default=0.5, help="the teacher's share of the window target")
    ap.add_argument("--augment-speed", type=float, default=0.0,
                    help="training only: each trace's GPU and host event durations scaled by exp(U(-a, a)), "
                         "drawn apart for the two, as on a faster or slower machine (0: off)")
    ap.add_argument("--augment-gaps", action="store_true",
                    help="with --augment-speed: launch delays and gaps scaled by the host's factor too")
    ap.add_argument("--augment-drop", type=float, default=0.0,
                    help="training only: each trace's events hidden with probability U(0, a), drawn per trace "
                         "(a window's first event stays; 0: off)")
    ap.add_argument("--init", help="start from this checkpoint's weights and config (fine-tuning; --config "
                    "overrides only switches that add no weights)")
    ap.add_argument("--swa-from", type=int,
                    help="also keep the running average of the weights at the end of each epoch from this one "
                         "on (stochastic weight averaging); it is scored on val and saved as NAME_swa.pt")
    ap.add_argument("--keep-epoch", type=int,
                    help="keep the weights at the end of this epoch (0-based) and stop there, whatever val says: a "
                         "refit on train and val with the epoch count cross-validation chose (cv_folds.py); "
                         "the learning-rate schedule is still that of --epochs")
    a = ap.parse_args()

    torch.set_num_threads(a.threads)
    random.seed(a.seed)
    np.random.seed(a.seed)
    torch.manual_seed(a.seed)
    os.makedirs(a.out_dir, exist_ok=True)

    t0 = time.time()
    traces = load_features(a.features, a.limit, a.instance_share)
    print(f"loaded {len(traces)} traces in {time.time() - t0:.1f} s", flush=True)
    train = [t for t in traces if t.split == "train"]
    val = [t for t in traces if t.split == "val"]
    train_tasks = sorted({t.task for t in train})
    if a.mode == "window":
        train = [t for t in train if t.window_label is not None]
    if a.teacher:
        if a.mode != "window":
            raise SystemExit("--teacher needs --mode window")
        teacher = np.load(a.teacher, allow_pickle=True).item()
        missing = [t.folder for t in train if t.folder not in teacher]
        if missing:
            raise SystemExit(f"--teacher: no scores for {len(missing)} train traces, e.g. {missing[0]}")
        w = a.teacher_weight
        if not 0.0 <= w <= 0.5:
            raise SystemExit("--teacher-weight: between 0 and 0.5 (the label stays the larger share)")
        for t in train:
            t.target = (1.0 - w) * t.target + w * torch.from_numpy(np.asarray(teacher[t.folder], dtype=np.float32))

    cfg = dict(DEFAULT_CONFIG)
    vocab = vocab_rows_from_tokenizer(a.tokenizer)
    max_id = max(int(t.inputs[0].max()) for t in traces)
    cfg["vocab"] = max(vocab or 0, max_id + 1)
    init = torch.load(a.init, map_location="cpu") if a.init else None
    if init is not None:
        cfg.update(init["config"])
    if a.config:
        cfg.update(json.loads(a.config))
    cfg["chunk"] = 100  # training: whole trace per step (same results; the chunk is a loop size)
    weights = dict(DEFAULT_WEIGHTS)
    if a.weights:
        weights.update(json.loads(a.weights))
    model = Detector(cfg)
    if init is not None:
        model.load_state_dict(init["state_dict"])
    print(f"config {json.dumps(cfg)}; {count_parameters(model)} parameters; tokenizer rows {vocab}, max id {max_id}",
          flush=True)
    print(f"train {len(train)} traces ({sum(t.label for t in train)} bad), val {len(val)}; train tasks {train_tasks}",
          flush=True)

    quota = parse_quota(a.set_quota, train)
    per_epoch = sum(quota.values()) if quota else len(train)
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, weight_decay=a.wd)
    steps_per_epoch = max(1, math.ceil(per_epoch / a.batch))
    total = steps_per_epoch * a.epochs
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / max(1, steps_per_epoch)) * 0.5 * (1 + math.cos(math.pi * min(1.0, s / total))))

    best, best_state, best_epoch, history = -1.0, None, -1, []
    swa_state, swa_n = None, 0
    rng = random.Random(a.seed)
    t_train = time.time()
    for epoch in range(a.epochs):
        model.train()
        epoch_train = draw_epoch(train, quota, rng) if quota else train
        bad_tr = [t for t in epoch_train if t.label == 1]
        good_tr = [t for t in epoch_train if t.label == 0]
        # balanced order: alternate bad and good traces so each batch holds both
        rng.shuffle(bad_tr)
        rng.shuffle(good_tr)
        n = max(len(bad_tr), len(good_tr))
        order = []
        for i in range(n):
            if bad_tr:
                order.append(bad_tr[i % len(bad_tr)])
            if good_tr:
                order.append(good_tr[i % len(good_tr)])
        order = order[:max(len(epoch_train), 2)]
        agg = {}
        te = time.time()
        for b in range(0, len(order), a.batch):
            batch = order[b:b + a.batch]
            outs = [model.embed_and_logits(*augmented(t.inputs, a, rng)) for t in batch]
            loss, parts = batch_loss(outs, [t.label for t in batch], [t.target for t in batch], a.mode, weights,
                                     a.topk, a.margin_sep, a.margin_rank, a.trace_weight)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            for k2, v in parts.items():
                agg[k2] = agg.get(k2, 0.0) + v * len(batch)
        seen = train + val if a.mode == "window" else [t for t in traces if t.split in ("train", "val")]
        # --no-train-eval: score val alone after each epoch (a third less time per epoch on a
        # large train split; train is scored once, at the end)
        res, _ = evaluate(model, val if a.no_train_eval else seen, train_tasks)
        crit = selection_value(res, a.select or ("window" if a.mode == "window" else "trace"), a.select_on)
        if math.isnan(crit):
            crit = float(epoch) * 1e-9  # no val AUC (one class only): the last epoch wins
        tr_parts = {k2: round(v2 / max(1, len(order)), 4) for k2, v2 in agg.items()}
        history.append(dict(epoch=epoch, seconds=round(time.time() - te, 1), loss_parts=tr_parts, metrics=res))
        print(f"epoch {epoch} {time.time() - te:.0f}s loss {tr_parts} | {fmt(res)}", flush=True)
        if (epoch == a.keep_epoch) if a.keep_epoch is not None else crit > best:
            best, best_epoch = crit, epoch
            best_state = {k2: v2.detach().clone() for k2, v2 in model.state_dict().items()}
        if a.swa_from is not None and epoch >= a.swa_from:
            swa_n += 1
            cur = model.state_dict()
            if swa_state is None:
                swa_state = {k2: v2.detach().clone().float() if v2.is_floating_point() else v2.clone()
                             for k2, v2 in cur.items()}
            else:
                for k2, v2 in cur.items():
                    if v2.is_floating_point():
                        swa_state[k2] += (v2.detach().float() - swa_state[k2]) / swa_n
        if a.keep_epoch is not None and epoch >= a.keep_epoch:
            break
        if (time.time() - t_train) / 60.0 > a.minutes:
            print(f"time budget of {a.minutes} min reached", flush=True)
            break
    train_seconds = time.time() - t_train
    if swa_state is not None:
        # the weights averaged over epochs swa_from.. (the model has no batch norm, so nothing to recompute)
        last_state = {k2: v2.detach().clone() for k2, v2 in model.state_dict().items()}
        model.load_state_dict(swa_state)
        res, _ = evaluate(model, val, train_tasks)
        swa_crit = selection_value(res, a.select or ("window" if a.mode == "window" else "trace"), a.select_on)
        print(f"swa over epochs {a.swa_from}-{epoch} ({swa_n}): val {a.select or 'window'} {swa_crit:.3f} | {fmt(res)}",
              flush=True)
        history.append(dict(epoch="swa", swa_epochs=swa_n, metrics=res, selection_value=swa_crit))
        export_cfg = dict(cfg)
        export_cfg["chunk"] = DEFAULT_CONFIG["chunk"]
        torch.save({"config": export_cfg, "state_dict": model.state_dict(), "mode": a.mode, "weights": weights,
                    "args": vars(a), "swa_epochs": swa_n}, os.path.join(a.out_dir, a.name + "_swa.pt"))
        model.load_state_dict(last_state)
    model.load_state_dict(best_state)
    final, _ = evaluate(model, traces, train_tasks)
    print(f"selected epoch {best_epoch} (val {a.select or ('window' if a.mode == 'window' else 'trace')} AUC "
          f"{best:.3f}, {a.select_on})")
    print("final: " + fmt(final))
    export_cfg = dict(cfg)
    export_cfg["chunk"] = DEFAULT_CONFIG["chunk"]
    ck = os.path.join(a.out_dir, a.name + ".pt")
    torch.save({"config": export_cfg, "state_dict": model.state_dict(), "mode": a.mode, "weights": weights,
                "args": vars(a)}, ck)
    summary = dict(name=a.name, mode=a.mode, argv=sys.argv, config=export_cfg, weights=weights,
                   topk=a.topk, margin_sep=a.margin_sep, margin_rank=a.margin_rank, seed=a.seed,
                   parameters=count_parameters(model), train_tasks=train_tasks, selected_epoch=best_epoch,
                   train_seconds=round(train_seconds, 1), torch=torch.__version__, metrics=final, history=history,
                   features=os.path.abspath(a.features), checkpoint=ck)
    with open(os.path.join(a.out_dir, a.name + ".json"), "w") as f:
        json.dump(summary, f, indent=1)
    print(f"wrote {ck} and {os.path.join(a.out_dir, a.name + '.json')} ({train_seconds:.0f} s of training)")


if __name__ == "__main__":
    main()
