"""Reading what `ttap features DATASET -o DIR` writes (docs/features.md), and metrics."""
import json
import os
from dataclasses import dataclass, field
from typing import Dict, List, Optional

import numpy as np
import torch

ARRAYS = ["name_tokens", "event_name", "event_kind", "event_opcat", "event_track", "event_numeric", "event_mask"]


@dataclass
class TraceFeatures:
    folder: str
    label: int                 # 1 = bad
    split: str
    task: str
    inputs: List[torch.Tensor]  # the forward's arguments, in order, in the model's dtypes
    window_label: Optional[torch.Tensor]  # float [W] or None: the eval rule's label
    target: Optional[torch.Tensor] = None  # float [W]: what window-mode training fits (default: window_label)
    meta: Dict = field(default_factory=dict)
    set: str = ""              # the labeled set it comes from (merge_features.py's "set", else the folder's name)

    @property
    def windows(self) -> int:
        return int(self.inputs[1].shape[0])


def to_inputs(arrays: Dict[str, np.ndarray]) -> List[torch.Tensor]:
    out = []
    for k in ARRAYS:
        a = arrays[k]
        if k == "event_numeric":
            out.append(torch.from_numpy(np.ascontiguousarray(a, dtype=np.float32)))
        elif k == "event_mask":
            out.append(torch.from_numpy(np.ascontiguousarray(a) != 0))
        else:
            out.append(torch.from_numpy(np.ascontiguousarray(a, dtype=np.int64)))
    return out


def load_trace_dir(path: str) -> Dict[str, np.ndarray]:
    return {k: np.load(os.path.join(path, k + ".npy")) for k in ARRAYS}


def instance_target(cover_label: np.ndarray, bounds: np.ndarray, ranges: List[Dict], share: float) -> np.ndarray:
    """The eval label (window covered >= 20% by labeled ranges) widened to every window that
    holds at least `share` of one labeled range: an injected pattern much shorter than a
    window (a 0.3 ms host sync in a 30 ms window) covers no window by 20%, so under the eval
    rule alone its bad trace has no positive window to learn from."""
    out = cover_label.astype(np.float32).copy()
    for r in ranges:
        b, e = float(r["ts_begin"]), float(r["ts_end"])
        if e <= b:
            continue
        inter = np.clip(np.minimum(bounds[:, 1], e) - np.maximum(bounds[:, 0], b), 0.0, None)
        out[inter >= share * (e - b)] = 1.0
    return out


def load_features(feat_dir: str, limit: Optional[int] = None, instance_share: float = 0.0) -> List[TraceFeatures]:
    """instance_share > 0: the training target is instance_target()'s, else window_label."""
    rows = []
    with open(os.path.join(feat_dir, "index.jsonl")) as f:
        for line in f:
            line = line.strip()
            if line:
                rows.append(json.loads(line))
    out = []
    for r in rows[:limit]:
        folder = r["folder"]
        path = folder if os.path.isabs(folder) else os.path.join(feat_dir, folder)
        arrays = load_trace_dir(path)
        wl = None
        wl_path = os.path.join(path, "window_label.npy")
        if os.path.exists(wl_path):
            wl = np.load(wl_path).astype(np.float32)
        meta = {}
        mp = os.path.join(path, "meta.json")
        if os.path.exists(mp):
            with open(mp) as f:
                meta = json.load(f)
        target = wl
        if wl is not None and instance_share > 0:
            target = instance_target(wl, np.load(os.path.join(path, "window_bounds.npy")),
                                     meta.get("manifest", {}).get("anti_patterns", []), instance_share)
        label = r.get("label")
        label = 1 if label in ("bad", 1, True) else 0
        out.append(TraceFeatures(folder=path, label=label, split=r.get("split", "train"),
                                 set=r.get("set") or os.path.basename(os.path.normpath(feat_dir)),
                                 task=r.get("task", "other"), inputs=to_inputs(arrays), meta=meta,
                                 window_label=None if wl is None else torch.from_numpy(wl),
                                 target=None if target is None else torch.from_numpy(target)))
    return out


def auc(scores, labels) -> float:
    """AUC-ROC by the Mann-Whitney statistic (ties count one half); nan without both classes."""
    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(labels).astype(bool)
    npos, nneg = int(y.sum()), int((~y).sum())
    if npos == 0 or nneg == 0:
        return float("nan")
    order = np.argsort(s, kind="mergesort")
    ranks = np.empty(len(s), dtype=np.float64)
    ss = s[order]
    i = 0
    while i < len(ss):
        j = i
        while j + 1 < len(ss) and ss[j + 1] == ss[i]:
            j += 1
        ranks[order[i:j + 1]] = 0.5 * (i + j) + 1.0
        i = j + 1
    return float((ranks[y].sum() - npos * (npos + 1) / 2.0) / (npos * nneg))


def vocab_rows_from_tokenizer(model_path: str) -> Optional[int]:
    """Pieces in a sentencepiece .model (a ModelProto: field 1 repeated `pieces`), + 1 for the
    +1 shift of docs/features.md. Parsed by hand: the sentencepiece module is not installed."""
    if not os.path.exists(model_path):
        return None
    data = open(model_path, "rb").read()
    pos, n = 0, 0

    def varint(p):
        v, shift = 0, 0
        while True:
            b = data[p]
            p += 1
            v |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                return v, p

    while pos < len(data):
        key, pos = varint(pos)
        fno, wt = key >> 3, key & 7
        if wt == 0:
            _, pos = varint(pos)
        elif wt == 1:
            pos += 8
        elif wt == 2:
            ln, pos = varint(pos)
            pos += ln
            if fno == 1:
                n += 1
        elif wt == 5:
            pos += 4
        else:
            return None
    return n + 1 if n else None
