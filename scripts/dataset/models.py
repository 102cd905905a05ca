"""The zoo's workloads: torchvision 0.14 models with random weights and a few small
hand-written ones (diffusion UNet, VAE, depth network), each with its synthetic inputs and
its training loss. Nothing is downloaded: every model is built with weights=None."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision

NUM_CLASSES = 5  # small heads keep CPU runs short; the class count does not matter here


# ---- hand-written models -------------------------------------------------------------

class TimeEmbedding(nn.Module):
    """Sinusoidal diffusion-timestep embedding followed by an MLP, as in DDPM."""

    def __init__(self, dim):
        super().__init__()
        self.dim = dim
        self.mlp = nn.Sequential(nn.Linear(dim, dim * 4), nn.SiLU(), nn.Linear(dim * 4, dim))

    def forward(self, t):
        half = self.dim // 2
        freqs = torch.exp(-math.log(10000.0) * torch.arange(half, device=t.device) / half)
        angles = t.float()[:, None] * freqs[None, :]
        return self.mlp(torch.cat([angles.sin(), angles.cos()], dim=1))


class ResBlock(nn.Module):
    def __init__(self, cin, cout, tdim=None):
        super().__init__()
        self.norm1 = nn.GroupNorm(8, cin)
        self.conv1 = nn.Conv2d(cin, cout, 3, padding=1)
        self.norm2 = nn.GroupNorm(8, cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1)
        self.temb = nn.Linear(tdim, cout) if tdim else None
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x, temb=None):
        h = self.conv1(F.silu(self.norm1(x)))
        if self.temb is not None and temb is not None:
            h = h + self.temb(temb)[:, :, None, None]
        h = self.conv2(F.silu(self.norm2(h)))
        return h + self.skip(x)


class SelfAttention2d(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.norm = nn.GroupNorm(8, ch)
        self.attn = nn.MultiheadAttention(ch, 4, batch_first=True)

    def forward(self, x):
        b, c, h, w = x.shape
        seq = self.norm(x).flatten(2).transpose(1, 2)
        out, _ = self.attn(seq, seq, seq, need_weights=False)
        return x + out.transpose(1, 2).reshape(b, c, h, w)


class TinyDiffusionUNet(nn.Module):
    """A two-level DDPM-style UNet: residual blocks with timestep embedding, attention at
    the bottleneck. It predicts the noise added to its input."""

    def __init__(self, ch=32):
        super().__init__()
        self.time = TimeEmbedding(ch)
        self.inp = nn.Conv2d(3, ch, 3, padding=1)
        self.down1 = ResBlock(ch, ch, ch)
        self.down2 = ResBlock(ch, ch * 2, ch)
        self.mid = ResBlock(ch * 2, ch * 2, ch)
        self.attn = SelfAttention2d(ch * 2)
        self.up2 = ResBlock(ch * 4, ch, ch)
        self.up1 = ResBlock(ch * 2, ch, ch)
        self.out = nn.Conv2d(ch, 3, 3, padding=1)

    def forward(self, x, t):
        temb = self.time(t)
        h0 = self.inp(x)
        h1 = self.down1(h0, temb)
        h2 = self.down2(F.avg_pool2d(h1, 2), temb)
        m = self.attn(self.mid(F.avg_pool2d(h2, 2), temb))
        u2 = self.up2(torch.cat([F.interpolate(m, scale_factor=2.0), h2], 1), temb)
        u1 = self.up1(torch.cat([F.interpolate(u2, scale_factor=2.0), h1], 1), temb)
        return self.out(F.silu(u1))


class TinyVAE(nn.Module):
    """A convolutional VAE: strided-conv encoder to a latent mean/log-variance map,
    reparameterization, transposed-conv decoder."""

    def __init__(self, ch=32, latent=8):
        super().__init__()
        self.enc = nn.Sequential(
            nn.Conv2d(3, ch, 4, 2, 1), nn.SiLU(), nn.Conv2d(ch, ch * 2, 4, 2, 1), nn.SiLU(),
            ResBlock(ch * 2, ch * 2))
        self.to_stats = nn.Conv2d(ch * 2, latent * 2, 1)
        self.dec = nn.Sequential(
            nn.Conv2d(latent, ch * 2, 3, padding=1), ResBlock(ch * 2, ch * 2), nn.SiLU(),
            nn.ConvTranspose2d(ch * 2, ch, 4, 2, 1), nn.SiLU(), nn.ConvTranspose2d(ch, 3, 4, 2, 1))

    def forward(self, x):
        mu, logvar = self.to_stats(self.enc(x)).chunk(2, dim=1)
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
        return self.dec(z), mu, logvar


class TinyDepthNet(nn.Module):
    """Monocular depth as dense regression: a ResNet-18 encoder (random weights) and an
    upsampling decoder with skip connections, one output channel."""

    def __init__(self):
        super().__init__()
        r = torchvision.models.resnet18(weights=None)
        self.stem = nn.Sequential(r.conv1, r.bn1, r.relu, r.maxpool)
        self.l1, self.l2, self.l3 = r.layer1, r.layer2, r.layer3
        self.dec3 = nn.Sequential(nn.Conv2d(256 + 128, 128, 3, padding=1), nn.ReLU())
        self.dec2 = nn.Sequential(nn.Conv2d(128 + 64, 64, 3, padding=1), nn.ReLU())
        self.head = nn.Conv2d(64, 1, 3, padding=1)

    def forward(self, x):
        s1 = self.l1(self.stem(x))
        s2 = self.l2(s1)
        s3 = self.l3(s2)
        d = self.dec3(torch.cat([F.interpolate(s3, size=s2.shape[-2:]), s2], 1))
        d = self.dec2(torch.cat([F.interpolate(d, size=s1.shape[-2:]), s1], 1))
        return F.interpolate(F.softplus(self.head(d)), size=x.shape[-2:], mode="bilinear",
                             align_corners=False)


# ---- the workload table ---------------------------------------------------------------

# Debian's torch 1.13 uses the reference BLAS, so a two-stage detector's box head (a
# 12544x1024 linear layer over 512 sampled RoIs) takes seconds per step on one core.
# Fewer proposals and sampled RoIs keep a step near a second; the ops stay the same.
_RCNN_LIMITS = dict(rpn_pre_nms_top_n_train=300, rpn_post_nms_top_n_train=100,
                    rpn_pre_nms_top_n_test=300, rpn_post_nms_top_n_test=50,
                    box_batch_size_per_image=32, box_detections_per_img=20)


def _det_kwargs(size, rcnn=True):
    # Detection transforms resize to min_size (800 by default); keep the input small.
    kw = dict(weights=None, weights_backbone=None, min_size=size, max_size=size)
    if rcnn:
        kw.update(_RCNN_LIMITS)
    return kw


def _build(name, size):
    tv = torchvision.models
    det = torchvision.models.detection
    seg = torchvision.models.segmentation
    if name == "resnet18":
        return tv.resnet18(weights=None, num_classes=NUM_CLASSES)
    if name == "resnet50":
        return tv.resnet50(weights=None, num_classes=NUM_CLASSES)
    if name == "mobilenet_v3_small":
        return tv.mobilenet_v3_small(weights=None, num_classes=NUM_CLASSES)
    if name == "efficientnet_b0":
        return tv.efficientnet_b0(weights=None, num_classes=NUM_CLASSES)
    if name == "vit_b_16":
        # ViT-B/16 at a small image size (positional embedding sized to match); fewer
        # layers than the paper model so a CPU step stays near a second.
        return torchvision.models.vision_transformer.VisionTransformer(
            image_size=size, patch_size=16, num_layers=4, num_heads=12, hidden_dim=768,
            mlp_dim=3072, num_classes=NUM_CLASSES)
    if name == "fasterrcnn_mobilenet_v3_large_fpn":
        return det.fasterrcnn_mobilenet_v3_large_fpn(num_classes=NUM_CLASSES, **_det_kwargs(size))
    if name == "retinanet_resnet50_fpn":
        return det.retinanet_resnet50_fpn(num_classes=NUM_CLASSES, topk_candidates=100,
                                          detections_per_img=20, **_det_kwargs(size, rcnn=False))
    if name == "ssdlite320_mobilenet_v3_large":
        return det.ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None,
                                                 num_classes=NUM_CLASSES, topk_candidates=100,
                                                 detections_per_img=20)
    if name == "maskrcnn_resnet50_fpn":
        return det.maskrcnn_resnet50_fpn(num_classes=NUM_CLASSES, **_det_kwargs(size))
    if name == "keypointrcnn_resnet50_fpn":
        return det.keypointrcnn_resnet50_fpn(num_classes=2, num_keypoints=17, **_det_kwargs(size))
    if name == "deeplabv3_mobilenet_v3_large":
        return seg.deeplabv3_mobilenet_v3_large(weights=None, weights_backbone=None,
                                                num_classes=NUM_CLASSES, aux_loss=False)
    if name == "fcn_resnet50":
        return seg.fcn_resnet50(weights=None, weights_backbone=None, num_classes=NUM_CLASSES,
                                aux_loss=False)
    if name == "diffusion_unet":
        return TinyDiffusionUNet()
    if name == "vae":
        return TinyVAE()
    if name == "depth_resnet18_unet":
        return TinyDepthNet()
    if name == "r3d_18":
        return torchvision.models.video.r3d_18(weights=None, num_classes=NUM_CLASSES)
    raise ValueError(f"unknown workload {name!r}")


# name -> (task, kind). kind picks the inputs and the loss:
#   cls: image -> logits; det: list of images + box targets (torchvision detection API);
#   seg: image -> dict 'out' per-pixel logits; diff: noise prediction; vae; depth; video.
WORKLOADS = {
    "resnet18": ("classification", "cls"),
    "resnet50": ("classification", "cls"),
    "mobilenet_v3_small": ("classification", "cls"),
    "vit_b_16": ("classification", "cls"),
    "efficientnet_b0": ("classification", "cls"),
    "fasterrcnn_mobilenet_v3_large_fpn": ("detection", "det"),
    "retinanet_resnet50_fpn": ("detection", "det"),
    "ssdlite320_mobilenet_v3_large": ("detection", "det"),
    "deeplabv3_mobilenet_v3_large": ("segmentation", "seg"),
    "fcn_resnet50": ("segmentation", "seg"),
    "maskrcnn_resnet50_fpn": ("segmentation", "det"),
    "diffusion_unet": ("generation", "diff"),
    "vae": ("generation", "vae"),
    "keypointrcnn_resnet50_fpn": ("pose", "det"),
    "depth_resnet18_unet": ("depth", "depth"),
    "r3d_18": ("video", "video"),
}

# Workloads made only of 2-D convolutions benefit from channels_last (the "good" config
# uses it; layout_conversion is injectable there). ViT and the 3-D video net are left out.
CONVNETS = {n for n, (_, k) in WORKLOADS.items() if k in ("cls", "seg", "diff", "vae", "depth", "det")
            and n != "vit_b_16"}


def build_model(name, size):
    return _build(name, size)


def task_of(name):
    return WORKLOADS[name][0]


def kind_of(name):
    return WORKLOADS[name][1]


def make_sample(name, size, generator, frames=4):
    """One synthetic sample for `name`: (input tensor, target). Images are float in [0, 1]."""
    kind = kind_of(name)
    if kind == "video":
        return torch.rand(3, frames, size, size, generator=generator), \
            int(torch.randint(0, NUM_CLASSES, (1,), generator=generator))
    img = torch.rand(3, size, size, generator=generator)
    if kind == "cls":
        return img, int(torch.randint(0, NUM_CLASSES, (1,), generator=generator))
    if kind == "seg":
        return img, torch.randint(0, NUM_CLASSES, (size, size), generator=generator)
    if kind == "depth":
        return img, torch.rand(1, size, size, generator=generator) * 10.0
    if kind in ("diff", "vae"):
        return img, torch.zeros(0)
    # Detection-style: 1-3 boxes with labels (and masks / keypoints where the model needs them).
    n = int(torch.randint(1, 4, (1,), generator=generator))
    xy = torch.rand(n, 2, generator=generator) * size * 0.6
    wh = torch.rand(n, 2, generator=generator) * size * 0.3 + size * 0.1
    boxes = torch.cat([xy, (xy + wh).clamp(max=size - 1)], dim=1)
    target = {"boxes": boxes}
    if name == "keypointrcnn_resnet50_fpn":
        target["labels"] = torch.ones(n, dtype=torch.int64)
        kx = boxes[:, None, 0] + torch.rand(n, 17, generator=generator) * (boxes[:, None, 2] - boxes[:, None, 0])
        ky = boxes[:, None, 1] + torch.rand(n, 17, generator=generator) * (boxes[:, None, 3] - boxes[:, None, 1])
        target["keypoints"] = torch.stack([kx, ky, torch.ones(n, 17)], dim=2)
    else:
        target["labels"] = torch.randint(1, NUM_CLASSES, (n,), generator=generator)
    if name == "maskrcnn_resnet50_fpn":
        masks = torch.zeros(n, size, size, dtype=torch.uint8)
        for i, b in enumerate(boxes.long().tolist()):
            masks[i, b[1]:b[3], b[0]:b[2]] = 1
        target["masks"] = masks
    return img, target


def collate(name, samples):
    """Batches samples the way each model family takes them."""
    kind = kind_of(name)
    if kind == "det":
        return [s[0] for s in samples], [s[1] for s in samples]
    inputs = torch.stack([s[0] for s in samples])
    if kind in ("cls", "video"):
        return inputs, torch.tensor([s[1] for s in samples])
    if kind in ("seg", "depth"):
        return inputs, torch.stack([s[1] for s in samples])
    return inputs, None


def forward_loss(name, model, inputs, target, train):
    """Runs the model; in training returns the scalar loss, in inference the outputs."""
    kind = kind_of(name)
    if kind == "det":
        if train:
            return sum(model(inputs, target).values())
        return model(inputs)
    if kind in ("cls", "video"):
        out = model(inputs)
        return F.cross_entropy(out, target) if train else out
    if kind == "seg":
        out = model(inputs)["out"]
        return F.cross_entropy(out, target) if train else out
    if kind == "depth":
        out = model(inputs)
        return F.l1_loss(out, target) if train else out
    if kind == "diff":
        t = torch.randint(0, 1000, (inputs.shape[0],), device=inputs.device)
        alpha = torch.cos(t.float() / 1000 * math.pi / 2)[:, None, None, None]
        noise = torch.randn_like(inputs)
        pred = model(alpha * inputs + (1 - alpha ** 2).sqrt() * noise, t)
        return F.mse_loss(pred, noise) if train else pred
    if kind == "vae":
        recon, mu, logvar = model(inputs)
        if not train:
            return recon
        kl = -0.5 * torch.mean(1 + logvar - mu.pow(2) - logvar.exp())
        return F.mse_loss(recon, inputs) + 1e-3 * kl
    raise ValueError(kind)
