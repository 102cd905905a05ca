#!/usr/bin/python3
"""Fits the hybrid scorer (`ttap ... --scorer hybrid`, include/ttap/hybrid.hpp): a logistic
regression from a window's model score and rule evidence to its label, on the VAL split's
windows only, and writes the weights file ttap reads (models/hybrid.json).

    ttap eval DATASET --window-table TABLE.tsv     # one row per window, every split (per dataset)
    /usr/bin/python3 scripts/train/fit_hybrid.py TABLE.tsv [TABLE2.tsv ...] -o models/hybrid.json

Train windows are not used: the model has seen them, so its scores there are better than
anywhere else and would teach the regression to trust it too much. Test is not read at all
(the figures on test come from `ttap eval --scorer hybrid`). Fitting: Newton's method
(IRLS) on the mean log loss with a small L2 penalty on the weights, deterministic.
"""
import argparse
import csv
import hashlib
import json
import sys

import numpy as np


def auc(scores, labels):
    """Mann-Whitney AUC with ties counted half (as ttap's auc_roc)."""
    order = np.argsort(scores, kind="mergesort")
    s, y = scores[order], labels[order]
    ranks = np.empty(len(s))
    i = 0
    while i < len(s):
        j = i
        while j < len(s) and s[j] == s[i]:
            j += 1
        ranks[i:j] = (i + j - 1) / 2.0 + 1.0
        i = j
    p, n = y.sum(), len(y) - y.sum()
    return float((ranks[y == 1].sum() - p * (p + 1) / 2.0) / (p * n)) if p and n else float("nan")


def fit(x, y, l2=1e-3, iterations=50):
    """Logistic regression by IRLS; returns (bias, weights)."""
    a = np.hstack([np.ones((len(x), 1)), x])
    w = np.zeros(a.shape[1])
    penalty = np.full(a.shape[1], l2)
    penalty[0] = 0.0  # the bias is not shrunk
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-(a @ w)))
        grad = a.T @ (p - y) / len(y) + penalty * w
        hess = (a * (p * (1 - p))[:, None]).T @ a / len(y) + np.diag(penalty)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-10:
            break
    return float(w[0]), [float(v) for v in w[1:]]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("tables", nargs="+", help="the TSVs `ttap eval DATASET --window-table` wrote (their val rows pooled)")
    ap.add_argument("-o", "--output", required=True, help="weights file to write (models/hybrid.json)")
    ap.add_argument("--split", default="val", help="the split fit on (default val; never test)")
    ap.add_argument("--detector", default="models/detector.pt",
                    help="the model whose scores the table holds (its sha256 is recorded; a test checks it is the shipped one)")
    args = ap.parse_args()
    if args.split == "test":
        sys.exit("fit_hybrid.py: fitting on the test split would make its figures a fit, not a test")
    digest = hashlib.sha256()
    rows = []
    for table in args.tables:
        with open(table, "rb") as f:
            digest.update(f.read())
        with open(table, newline="") as f:
            rows += list(csv.DictReader(f, delimiter="\t"))
    digest = digest.hexdigest()
    if not rows:
        sys.exit(f"fit_hybrid.py: {args.tables} hold no windows")
    features = [c for c in rows[0].keys() if c not in ("split", "trace", "window", "label")]
    rows = [r for r in rows if r["split"] == args.split]
    if not rows:
        sys.exit(f"fit_hybrid.py: no {args.split} windows in {args.tables}")
    x = np.array([[float(r[c]) for c in features] for r in rows])
    y = np.array([int(r["label"]) for r in rows], dtype=float)
    bias, weights = fit(x, y)
    z = bias + x @ np.array(weights)
    out = {
        "features": features,
        "weights": weights,
        "bias": bias,
        "fit": {
            "split": args.split,
            "windows": len(rows),
            "positive_windows": int(y.sum()),
            "traces": len({r["trace"] for r in rows}),
            "method": "logistic regression, IRLS, L2 1e-3 on the weights",
            "tables_sha256": digest,
            "detector_sha256": hashlib.sha256(open(args.detector, "rb").read()).hexdigest(),
            "window_auc": {"hybrid": round(auc(z, y), 4), "model": round(auc(x[:, features.index("model_logit")], y), 4),
                           "rules": round(auc(x[:, features.index("rule_score")], y), 4)},
        },
    }
    with open(args.output, "w") as f:
        json.dump(out, f, indent=2)
        f.write("\n")
    print(json.dumps(out["fit"]))
    print("weights:", dict(zip(features, [round(v, 4) for v in weights])), "bias", round(bias, 4))


if __name__ == "__main__":
    main()
