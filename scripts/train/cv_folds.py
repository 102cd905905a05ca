#!/usr/bin/python3
"""Cross-validation by background over the train and val splits (models/MODEL_CARD.md, tenth
round), so that a recipe and its epoch count are chosen on every development background rather
than on one val split of five, and a final model can then be refit on all of them.

  cv_folds.py split -o OUT NAME=FEAT ...      # OUT/fold-K/index.jsonl, K = 0..folds-1
  cv_folds.py report RUN_DIR NAME [NAME ...]   # per-epoch mean over the folds' NAME-foldK.json
  cv_folds.py refit -o OUT NAME=FEAT ... [--monitor NAME=FEAT]   # OUT/index.jsonl: all of it train

split: every line of the train and val splits of the named `ttap features` folders goes into
each fold's index, as "val" when its background is held out in that fold, else "train". Test
lines are never read. A trace's background is its manifest's `background` (injector 2's crops),
or, for injector 1's surgery traces, the public trace named in the file name
(surgery_NNNN_<background>); the two recordings of one job (or one model on two GPUs) are held
out together (JOB_GROUPS). Lines with no public background (the CPU workload zoo's runs) are
spread over the folds by a stable hash of their name. Sets named in --always-train (e.g. crops
made on the GPU zoo's runs) are train in every fold.

refit: one index in which every train and val line is train (the final model, trained with
the epoch count the folds chose: train.py --keep-epoch), and the --monitor sets' lines (all
their splits; a set no model was trained or chosen on) are val, scored after each epoch for
the log only.

report: for each epoch, the mean over the folds of each set's val trace and window AUC, and of
the selection value the training rule uses (the worse set's mean of the two), read from the
histories train.py wrote (NAME-fold0.json ...)."""
import argparse
import hashlib
import json
import os
import re
import sys

# Backgrounds that are one job recorded twice, or one model on two machines: a fold holds
# them out together, as ttap-bench-x's splits do.
JOB_GROUPS = [
    ("kineto_resnet50_v100_nw4", "kineto_resnet50_v100_nw0"),
    ("tracelens_qwen05b_h100", "tracelens_qwen05b_mi300"),
    ("tracelens_sglang_decode_bs32", "tracelens_sglang_qwen3_8b_prefilldecode"),
    ("tracelens_vllm_piecewise_capture", "tracelens_vllm_piecewise_graph_execution"),
]


def background_of(row, meta):
    bg = meta.get("manifest", {}).get("background")
    if bg:
        return re.sub(r"\.(json|tar)\.gz$", "", os.path.basename(bg))
    m = re.match(r"surgery_\d+_(.+)$", os.path.basename(row["trace"]).split(".")[0])
    return m.group(1) if m else None


def group_of(bg):
    for g in JOB_GROUPS:
        if bg in g:
            return g[0]
    return bg


def stable_hash(text):
    return int(hashlib.sha1(text.encode()).hexdigest()[:8], 16)


def read_rows(specs, splits=("train", "val")):
    rows = []
    for spec in specs:
        name, _, path = spec.partition("=")
        with open(os.path.join(path, "index.jsonl")) as f:
            for line in f:
                if not line.strip():
                    continue
                r = json.loads(line)
                if splits and r.get("split") not in splits:
                    continue
                folder = r["folder"] if os.path.isabs(r["folder"]) else os.path.abspath(os.path.join(path, r["folder"]))
                with open(os.path.join(folder, "meta.json")) as mf:
                    meta = json.load(mf)
                r["folder"], r["set"] = folder, name
                rows.append((r, background_of(r, meta)))
    return rows


def split_cmd(a):
    rows = read_rows(a.inputs)
    always = set(a.always_train.split(",")) if a.always_train else set()
    groups = sorted({group_of(bg) for r, bg in rows if bg and r["set"] not in always})
    # groups are dealt round-robin in a fixed order, so a fold's backgrounds do not depend on
    # which sets were given
    fold_of_group = {g: i % a.folds for i, g in enumerate(sorted(groups, key=stable_hash))}
    for k in range(a.folds):
        out = os.path.join(a.out, f"fold-{k}")
        os.makedirs(out, exist_ok=True)
        n = {"train": 0, "val": 0}
        with open(os.path.join(out, "index.jsonl"), "w") as f:
            for r, bg in rows:
                if r["set"] in always:
                    held = False
                elif bg:
                    held = fold_of_group[group_of(bg)] == k
                else:
                    held = stable_hash(os.path.basename(r["trace"])) % a.folds == k
                line = dict(r, split="val" if held else "train")
                n[line["split"]] += 1
                f.write(json.dumps(line) + "\n")
        held_groups = sorted(g for g, i in fold_of_group.items() if i == k)
        print(f"fold {k}: train {n['train']}, val {n['val']}; held out: {', '.join(held_groups)}")
    return 0


def refit_cmd(a):
    rows = [dict(r, split="train") for r, _ in read_rows(a.inputs)]
    rows += [dict(r, split="val") for r, _ in read_rows(a.monitor or [], splits=None)]
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "index.jsonl"), "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    n = sum(r["split"] == "train" for r in rows)
    print(f"{os.path.join(a.out, 'index.jsonl')}: train {n}, monitor (val) {len(rows) - n}")
    return 0


def report_cmd(a):
    for name in a.names:
        per_fold = []
        k = 0
        while os.path.exists(os.path.join(a.run_dir, f"{name}-fold{k}.json")):
            with open(os.path.join(a.run_dir, f"{name}-fold{k}.json")) as f:
                per_fold.append([h for h in json.load(f)["history"] if isinstance(h.get("epoch"), int)])
            k += 1
        if not per_fold:
            print(f"{name}: no {name}-fold0.json in {a.run_dir}")
            continue
        epochs = min(len(h) for h in per_fold)
        sets = sorted(g[4:] for g in per_fold[0][0]["metrics"] if g.startswith("val@"))
        print(f"{name}: {len(per_fold)} folds, epochs 0..{epochs - 1}; mean over folds of val trace AUC / window AUC"
              " per set, and of min over sets of their mean")
        best = None
        for e in range(epochs):
            cells, mins = [], []
            for s in sets:
                t = [h[e]["metrics"][f"val@{s}"]["trace_auc"] for h in per_fold]
                w = [h[e]["metrics"][f"val@{s}"]["window_auc"] for h in per_fold]
                cells.append(f"{s} {sum(t) / len(t):.3f} / {sum(w) / len(w):.3f}")
            for h in per_fold:
                mins.append(min(0.5 * (h[e]["metrics"][f"val@{s}"]["trace_auc"] + h[e]["metrics"][f"val@{s}"]["window_auc"])
                                for s in sets))
            m = sum(mins) / len(mins)
            best = (m, e) if best is None or m > best[0] else best
            print(f"  epoch {e:2d}: " + " | ".join(cells) + f" | min {m:.3f}")
        print(f"  best epoch by the mean min: {best[1]} ({best[0]:.3f})")
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("split")
    s.add_argument("-o", "--out", required=True)
    s.add_argument("--folds", type=int, default=5)
    s.add_argument("--always-train", help="comma-separated set names that are train in every fold")
    s.add_argument("inputs", nargs="+", help="NAME=FEAT (a `ttap features` folder; its train and val lines)")
    r = sub.add_parser("report")
    r.add_argument("run_dir")
    r.add_argument("names", nargs="+")
    f = sub.add_parser("refit")
    f.add_argument("-o", "--out", required=True)
    f.add_argument("--monitor", action="append", help="NAME=FEAT scored as val after each epoch (all its lines)")
    f.add_argument("inputs", nargs="+", help="NAME=FEAT (a `ttap features` folder; its train and val lines)")
    a = ap.parse_args(argv)
    return {"split": split_cmd, "refit": refit_cmd, "report": report_cmd}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
