"""The ttap window detector (TorchTraceAP-style), sized for one CPU core.

forward(name_tokens, event_name, event_kind, event_opcat, event_track, event_numeric,
        event_mask) -> float32 [W] window scores in [0, 1]   (docs/features.md)

Three stages, as in the TorchTraceAP paper:
  1. event encoder: name (mean of sentencepiece token embeddings through a Linear+GELU
     adapter), categorical attributes (kind, opcat, track) embedded, each numeric attribute
     projected by its own Linear(1, d); all summed, then LayerNorm.
  2. window encoder: a masked transformer over a window's events with a 2D positional
     encoding (sinusoidal of rel_start + learned embedding of the track slot), masked-mean
     pooled to a window embedding of size D.
  3. window-to-window model: residual dilated 1D convolutions (dilations 1, 2, 4) and one
     multi-head self-attention layer across the W windows; a linear head and a sigmoid give
     one score per window.

Per-trace relative inputs (config rel_stats / rel_emb, off in models trained before the
fifth round): hardware speed and model size differ between backgrounds, while an injected
pattern differs from its own trace's other windows. So each window also gets
  - rel_stats: 16 statistics of its events (counts, GPU and CPU busy shares, longest
    gaps and launch delays, mean durations, copies), each as a robust z-score against the
    same trace's windows (median and MAD over the W windows), and
  - rel_emb: its pooled embedding as a robust z-score against the trace's windows,
both projected and added to the window embedding. They are computed in forward from the
documented inputs, so the C++ side and the feature format are unchanged.

Sixth-round options (off in the shipped file; models/MODEL_CARD.md): pool_max (the window
embedding also from the max over its events), abs_stats (the window statistics as they are)
and name_drop (a share of event names dropped in training).

Everything is written with plain aten ops (linear, matmul, softmax, layer_norm, gelu,
conv1d, embedding) so that the TorchScript file written by torch 1.13 loads in Debian's
libtorch 1.13 and in newer releases (no fused transformer fast paths in the graph).
"""
import math
from typing import Dict, List, Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F

NUM_KINDS = 16      # ttap::Category::kCount (15) + 1 for padding
NUM_OPCATS = 16     # ttap::OpCategory::kCount (15) + 1 (0 = not an op)
NUM_TRACKS = 17     # 0 = padding, 1-8 GPU streams, 9-16 CPU threads
NUM_NUMERIC = 8
REL_START_COL = 2   # event_numeric column of rel_start
NUM_REL_STATS = 16  # window statistics of Detector.window_stats

DEFAULT_CONFIG: Dict[str, int] = dict(
    vocab=4096,        # embedding rows for token ids (+1); larger ids fold back into range
    d_tok=64,          # token embedding size
    d=64,              # event embedding size (per attribute, all summed)
    heads=4,           # window transformer heads
    layers=1,          # window transformer layers
    ffn=128,           # window transformer feed-forward size
    D=128,             # window embedding size
    w2w_heads=4,       # heads of the window-to-window attention
    dropout=10,        # dropout in percent on event and window embeddings (training only)
    chunk=1,           # windows encoded per step of the event stage (1: fastest on one core)
    use_names=1,       # ablation: 0 = no name encoder
    use_window_tf=1,   # ablation: 0 = window embedding is the mean of event embeddings
    use_w2w=1,         # ablation: 0 = no window-to-window model (head on window embeddings)
    rel_stats=0,       # 1 = window statistics as robust z-scores against the trace's windows
    name_drop=0,       # percent of events whose name is dropped in training (names of unseen
                       # backgrounds' kernels are new tokens: the rest of the event must carry it)
    gpu_names=1,       # 0 = no name for GPU events (kernel names are the most background-specific)
    pool_max=0,        # 1 = window embedding also from the max over its events, not the mean only
    abs_stats=0,       # 1 = the window statistics themselves (not relative to the trace) as an input
    rel_emb=0,         # 1 = the pooled window embedding as a robust z-score against the trace's
)


class SelfAttention(nn.Module):
    """Multi-head self-attention with a key padding mask, from plain ops."""

    def __init__(self, dim: int, heads: int):
        super().__init__()
        assert dim % heads == 0
        self.heads = heads
        self.head_dim = dim // heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor, key_pad: Optional[torch.Tensor]) -> torch.Tensor:
        # x [B, L, C]; key_pad [B, L] True where the key is padding
        B, L, C = x.shape[0], x.shape[1], x.shape[2]
        qkv = self.qkv(x).reshape(B, L, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]                       # [B, H, L, hd]
        att = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(self.head_dim))
        if key_pad is not None:
            att = att.masked_fill(key_pad[:, None, None, :], -1e4)
        att = torch.softmax(att, dim=-1)
        y = torch.matmul(att, v).transpose(1, 2).reshape(B, L, C)
        return self.out(y)


class EncoderLayer(nn.Module):
    """Pre-norm transformer encoder layer."""

    def __init__(self, dim: int, heads: int, ffn: int):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = SelfAttention(dim, heads)
        self.norm2 = nn.LayerNorm(dim)
        self.ff1 = nn.Linear(dim, ffn)
        self.ff2 = nn.Linear(ffn, dim)

    def forward(self, x: torch.Tensor, key_pad: Optional[torch.Tensor]) -> torch.Tensor:
        x = x + self.attn(self.norm1(x), key_pad)
        return x + self.ff2(F.gelu(self.ff1(self.norm2(x))))


class Detector(nn.Module):
    def __init__(self, cfg: Optional[Dict[str, int]] = None):
        super().__init__()
        c = dict(DEFAULT_CONFIG)
        if cfg is not None:
            c.update(cfg)
        self.cfg = c
        d, D = c["d"], c["D"]
        self.vocab = int(c["vocab"])
        self.d = d
        self.chunk = int(c["chunk"])
        self.p_drop = float(c["dropout"]) / 100.0
        self.use_names = bool(c["use_names"])
        self.use_window_tf = bool(c["use_window_tf"])
        self.use_w2w = bool(c["use_w2w"])
        self.rel_stats = bool(c.get("rel_stats", 0))
        self.rel_emb = bool(c.get("rel_emb", 0))
        self.pool_max = bool(c.get("pool_max", 0))
        self.p_name_drop = float(c.get("name_drop", 0)) / 100.0
        self.gpu_names = bool(c.get("gpu_names", 1))
        self.abs_stats = bool(c.get("abs_stats", 0))
        self.num_kinds, self.num_opcats, self.num_tracks = NUM_KINDS, NUM_OPCATS, NUM_TRACKS
        self.rel_start_col = REL_START_COL

        # 1. event encoder
        self.tok_emb = nn.Embedding(self.vocab, c["d_tok"], padding_idx=0)
        self.name_adapter = nn.Linear(c["d_tok"], d)
        self.kind_emb = nn.Embedding(NUM_KINDS, d)
        self.opcat_emb = nn.Embedding(NUM_OPCATS, d)
        self.track_emb = nn.Embedding(NUM_TRACKS, d)
        # NUM_NUMERIC separate Linear(1, d) projections, stored as one [8, d] weight and
        # [8, d] bias: sum_k (x_k * w_k + b_k) == x @ W + sum_k b_k, computed that way.
        self.num_weight = nn.Parameter(torch.randn(NUM_NUMERIC, d) * (1.0 / math.sqrt(NUM_NUMERIC)))
        self.num_bias = nn.Parameter(torch.zeros(NUM_NUMERIC, d))
        self.event_norm = nn.LayerNorm(d)

        # 2. window encoder
        self.pos_track = nn.Embedding(NUM_TRACKS, d)   # learned 2D-position part (track slot)
        inv_freq = torch.exp(torch.arange(0, d, 2, dtype=torch.float32) * (-math.log(10000.0) / d))
        self.register_buffer("inv_freq", inv_freq)     # sinusoidal part (rel_start)
        self.layers = nn.ModuleList([EncoderLayer(d, c["heads"], c["ffn"]) for _ in range(c["layers"])])
        self.final_norm = nn.LayerNorm(d)
        # pooled mean (d) [+ max (d)] + log event count (1) -> D
        self.pool_proj = nn.Linear(d * (2 if self.pool_max else 1) + 1, D)
        self.window_norm = nn.LayerNorm(D)
        # per-trace relative inputs (only created when enabled: older files keep their keys)
        self.stat_proj = nn.Linear(NUM_REL_STATS, D) if self.rel_stats else nn.Identity()
        self.emb_rel_proj = nn.Linear(D, D) if self.rel_emb else nn.Identity()
        self.abs_stat_proj = nn.Linear(NUM_REL_STATS, D) if self.abs_stats else nn.Identity()

        # 3. window-to-window model
        self.convs = nn.ModuleList([nn.Conv1d(D, D, 3, padding=dl, dilation=dl) for dl in (1, 2, 4)])
        self.conv_norms = nn.ModuleList([nn.LayerNorm(D) for _ in range(3)])
        self.w2w_norm = nn.LayerNorm(D)
        self.w2w_attn = SelfAttention(D, c["w2w_heads"])
        self.head_norm = nn.LayerNorm(D)
        self.head = nn.Linear(D, 1)

    # -- stage 1 -----------------------------------------------------------------------
    def encode_names(self, name_tokens: torch.Tensor) -> torch.Tensor:
        """[U, T] token ids + 1 (0 = pad) -> [U, d]."""
        ids = name_tokens
        ids = torch.where(ids >= self.vocab, torch.remainder(ids, self.vocab - 1) + 1, ids)
        ids = ids.clamp(min=0)
        e = self.tok_emb(ids)                                   # [U, T, dt]
        m = (ids > 0).to(e.dtype).unsqueeze(-1)                 # [U, T, 1]
        mean = (e * m).sum(1) / m.sum(1).clamp(min=1.0)
        out = F.gelu(self.name_adapter(mean))
        # row 0 is the padding name: no contribution
        keep = (name_tokens.sum(1) > 0).to(out.dtype).unsqueeze(-1)
        return out * keep

    def encode_events(self, names: torch.Tensor, event_name: torch.Tensor, event_kind: torch.Tensor,
                      event_opcat: torch.Tensor, event_track: torch.Tensor,
                      event_numeric: torch.Tensor) -> torch.Tensor:
        """-> [W, E, d] event embeddings (before the positional encoding)."""
        W, E = event_kind.shape[0], event_kind.shape[1]
        x = self.kind_emb(event_kind.clamp(0, self.num_kinds - 1)) \
            + self.opcat_emb(event_opcat.clamp(0, self.num_opcats - 1)) \
            + self.track_emb(event_track.clamp(0, self.num_tracks - 1))
        x = x + torch.matmul(event_numeric, self.num_weight) + self.num_bias.sum(0)
        if self.use_names:
            idx = event_name.clamp(0, names.shape[0] - 1).reshape(-1)
            nm = names.index_select(0, idx).reshape(W, E, self.d)
            if not self.gpu_names:
                nm = nm * (1.0 - event_numeric[:, :, 5:6])      # column 5: is_gpu
            if self.training and self.p_name_drop > 0.0:
                keep = (torch.rand(W, E, 1, device=nm.device) >= self.p_name_drop).to(nm.dtype)
                nm = nm * keep / (1.0 - self.p_name_drop)
            x = x + nm
        return F.dropout(self.event_norm(x), self.p_drop, self.training)

    # -- stage 2 -----------------------------------------------------------------------
    def positional(self, event_track: torch.Tensor, event_numeric: torch.Tensor) -> torch.Tensor:
        pos = event_numeric[:, :, self.rel_start_col] * 128.0   # [W, E]: rel_start on a 0-128 scale
        ang = pos.unsqueeze(-1) * self.inv_freq                                     # [W, E, d/2]
        sincos = torch.stack([torch.sin(ang), torch.cos(ang)], dim=-1).flatten(2)   # [W, E, d]
        return sincos + self.pos_track(event_track.clamp(0, self.num_tracks - 1))

    def encode_windows(self, name_tokens: torch.Tensor, event_name: torch.Tensor, event_kind: torch.Tensor,
                       event_opcat: torch.Tensor, event_track: torch.Tensor, event_numeric: torch.Tensor,
                       event_mask: torch.Tensor) -> torch.Tensor:
        """-> [W, D] window embeddings. Windows are encoded `chunk` at a time: the
        intermediates stay small (cache-resident, no fresh pages to fault in)."""
        names = self.encode_names(name_tokens)                  # [U, d] (unused without names)
        W = event_kind.shape[0]
        outs: List[torch.Tensor] = []
        # slots past a chunk's last real event are padding: cut them (exact, and real traces
        # fill only a fraction of the 128 slots)
        E = event_kind.shape[1]
        slot = torch.arange(1, E + 1, dtype=torch.int64, device=event_mask.device).unsqueeze(0)
        used = (event_mask.to(torch.int64) * slot).max(1).values            # [W] last slot + 1
        for s in range(0, W, self.chunk):
            e = min(W, s + self.chunk)
            n = max(1, int(used[s:e].max()))
            outs.append(self.encode_chunk(names, event_name[s:e, :n], event_kind[s:e, :n], event_opcat[s:e, :n],
                                          event_track[s:e, :n], event_numeric[s:e, :n], event_mask[s:e, :n]))
        p = self.pool_proj(torch.cat(outs, 0))                  # [W, D]
        # relative parts: against the whole trace's windows, so after all chunks
        rel = torch.zeros_like(p)
        if self.rel_stats:
            rel = rel + self.stat_proj(robust_z(self.window_stats(event_numeric, event_mask), 0.05))
        if self.rel_emb:
            rel = rel + self.emb_rel_proj(robust_z(p, 0.1))
        if self.abs_stats:
            rel = rel + self.abs_stat_proj(self.window_stats(event_numeric, event_mask).clamp(-16.0, 16.0) / 4.0)
        if self.rel_stats or self.rel_emb or self.abs_stats:
            p = p + rel
        return F.dropout(self.window_norm(p), self.p_drop, self.training)

    def window_stats(self, event_numeric: torch.Tensor, event_mask: torch.Tensor) -> torch.Tensor:
        """[W, NUM_REL_STATS] statistics of each window's events (absolute; robust_z makes
        them relative to the trace). Columns of event_numeric: docs/features.md."""
        m = event_mask.to(event_numeric.dtype)                  # [W, E]
        g = m * event_numeric[:, :, 5]                          # GPU activity
        c = m - g                                               # host events
        top = c * (event_numeric[:, :, 4] == 0.0).to(m.dtype)   # top-level host events
        cp = g * (event_numeric[:, :, 6] > 0.0).to(m.dtype)     # copies and sets
        dur, delay, gap = event_numeric[:, :, 0], event_numeric[:, :, 1], event_numeric[:, :, 3]
        share, nbytes, depth = event_numeric[:, :, 7], event_numeric[:, :, 6], event_numeric[:, :, 4]
        ng, nc = g.sum(1).clamp(min=1.0), c.sum(1).clamp(min=1.0)
        cols = [
            torch.log1p(m.sum(1)),
            torch.log1p(g.sum(1)),
            torch.log1p(cp.sum(1)),
            (share * g).sum(1).clamp(max=4.0),                  # GPU busy share (overlaps count twice)
            (share * top).sum(1).clamp(max=4.0),                # host busy share
            (share * c).max(1).values,                          # longest host event / window
            (share * g).max(1).values,                          # longest GPU event / window
            (gap * g).max(1).values,                            # longest GPU idle gap (log us)
            (gap * c).max(1).values,                            # longest host gap (log us)
            (delay * g).sum(1) / ng,                            # mean launch delay (log us)
            (delay * g).max(1).values,
            (dur * g).sum(1) / ng,                              # mean GPU event duration (log us)
            (dur * c).sum(1) / nc,                              # mean host event duration (log us)
            (dur * m).max(1).values,
            (nbytes * cp).max(1).values,
            (depth * c).sum(1) / nc,
        ]
        return torch.stack(cols, 1)

    def encode_chunk(self, names: torch.Tensor, event_name: torch.Tensor, event_kind: torch.Tensor,
                     event_opcat: torch.Tensor, event_track: torch.Tensor, event_numeric: torch.Tensor,
                     event_mask: torch.Tensor) -> torch.Tensor:
        x = self.encode_events(names, event_name, event_kind, event_opcat, event_track, event_numeric)
        mask = event_mask.to(torch.bool)
        if self.use_window_tf:
            x = x + self.positional(event_track, event_numeric)
            # an empty window would have every key masked: let its slot 0 attend to itself
            pad = ~mask
            empty = mask.sum(1) == 0
            pad[:, 0] = pad[:, 0] & ~empty
            for layer in self.layers:
                x = layer(x, pad)
            x = self.final_norm(x)
        mf = mask.to(x.dtype).unsqueeze(-1)                     # [w, E, 1]
        count = mf.sum(1)                                       # [w, 1]
        pooled = (x * mf).sum(1) / count.clamp(min=1.0)         # [w, d]
        if self.pool_max:
            # an anti-pattern is often a few events among many normal ones: the mean dilutes
            # them, the max over events keeps them (an empty window's max is 0)
            peak = x.masked_fill(mf == 0.0, -1e4).max(1).values * (count > 0.0).to(x.dtype)
            return torch.cat([pooled, peak, torch.log1p(count) / 5.0], dim=1)
        return torch.cat([pooled, torch.log1p(count) / 5.0], dim=1)

    # -- stage 3 -----------------------------------------------------------------------
    def window_logits(self, h: torch.Tensor) -> torch.Tensor:
        """[W, D] window embeddings -> [W] logits."""
        if self.use_w2w:
            y = h.unsqueeze(0)                                  # [1, W, D]
            for conv, norm in zip(self.convs, self.conv_norms):
                y = y + F.gelu(conv(norm(y).transpose(1, 2)).transpose(1, 2))
            y = y + self.w2w_attn(self.w2w_norm(y), None)
            h = y.squeeze(0)
        return self.head(self.head_norm(h)).squeeze(-1)

    def embed_and_logits(self, name_tokens: torch.Tensor, event_name: torch.Tensor, event_kind: torch.Tensor,
                         event_opcat: torch.Tensor, event_track: torch.Tensor, event_numeric: torch.Tensor,
                         event_mask: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        h = self.encode_windows(name_tokens, event_name, event_kind, event_opcat, event_track, event_numeric,
                                event_mask)
        return h, self.window_logits(h)

    def forward(self, name_tokens: torch.Tensor, event_name: torch.Tensor, event_kind: torch.Tensor,
                event_opcat: torch.Tensor, event_track: torch.Tensor, event_numeric: torch.Tensor,
                event_mask: torch.Tensor) -> torch.Tensor:
        _, logits = self.embed_and_logits(name_tokens, event_name, event_kind, event_opcat, event_track,
                                          event_numeric, event_mask)
        return torch.sigmoid(logits).to(torch.float32)


class RoutedDetector(nn.Module):
    """Two detectors in one file, with the same interface: `gpu` scores traces with GPU
    activity (a kernel, copy, set or GPU sync in any window: event_numeric column 5), `cpu`
    the CPU-only runs. Why (models/MODEL_CARD.md, sixth round): the detectors trained with
    per-trace speed augmentation hold on GPU traces of unseen backgrounds, and lose only on
    CPU-only runs, which the earlier model scores better. One of them runs per trace."""

    def __init__(self, cpu: Detector, gpu: Detector):
        super().__init__()
        self.cpu_model = cpu
        self.gpu_model = gpu

    def forward(self, name_tokens: torch.Tensor, event_name: torch.Tensor, event_kind: torch.Tensor,
                event_opcat: torch.Tensor, event_track: torch.Tensor, event_numeric: torch.Tensor,
                event_mask: torch.Tensor) -> torch.Tensor:
        has_gpu = bool(((event_numeric[:, :, 5] > 0.5) & event_mask.to(torch.bool)).any())
        if has_gpu:
            return self.gpu_model(name_tokens, event_name, event_kind, event_opcat, event_track, event_numeric, event_mask)
        return self.cpu_model(name_tokens, event_name, event_kind, event_opcat, event_track, event_numeric, event_mask)


def robust_z(x: torch.Tensor, floor: float) -> torch.Tensor:
    """[W, K] -> each column as (x - median) / (1.4826 MAD + floor) over the W windows, clipped
    to +-8 and scaled by 1/4. The floor keeps a column that is constant over most windows
    (MAD 0) from turning its rare other values into huge numbers."""
    med = torch.median(x, dim=0).values.unsqueeze(0)
    mad = torch.median((x - med).abs(), dim=0).values.unsqueeze(0)
    return ((x - med) / (1.4826 * mad + floor)).clamp(-8.0, 8.0) * 0.25


def count_parameters(m: nn.Module) -> int:
    return sum(p.numel() for p in m.parameters())


def random_inputs(W: int = 100, E: int = 128, U: int = 400, T: int = 16, vocab: int = 4096,
                  fill: float = 0.8, seed: int = 0) -> List[torch.Tensor]:
    """Inputs of the documented shapes and dtypes (docs/features.md), for checks and benches."""
    g = torch.Generator().manual_seed(seed)
    ntok = torch.randint(1, vocab, (U, T), generator=g)
    lens = torch.randint(1, T + 1, (U, 1), generator=g)
    ntok = ntok * (torch.arange(T).unsqueeze(0) < lens)
    ntok[0] = 0
    mask = torch.rand(W, E, generator=g) < fill
    mask[W // 2] = False  # one empty window
    mi = mask.to(torch.int64)
    name = torch.randint(1, U, (W, E), generator=g) * mi
    kind = torch.randint(1, NUM_KINDS, (W, E), generator=g) * mi
    opcat = torch.randint(0, NUM_OPCATS, (W, E), generator=g) * mi
    track = torch.randint(1, NUM_TRACKS, (W, E), generator=g) * mi
    num = torch.rand(W, E, NUM_NUMERIC, generator=g) * mask.unsqueeze(-1).to(torch.float32)
    return [ntok, name, kind, opcat, track, num, mask]
