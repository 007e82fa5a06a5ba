"""Mid-size models for the speed benchmarks (issue 29), built from torch.nn alone (no downloads).

Each entry of MODELS builds (model, inputs, targets) at the benchmark's sizes; `training_step`
makes one AdamW step of it. benchmarks/run.py times them (the "models" group) and
benchmarks/profile_step.py breaks one step down per aten overload.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

# ---- ResNet-18 style (16 × 3 × 64 × 64) ------------------------------------------------------------

class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(y + (x if self.down is None else self.down(x)))


class ResNet18(nn.Module):
    def __init__(self, classes: int = 10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
                                  nn.MaxPool2d(3, 2, 1))
        blocks, cin = [], 64
        for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
            blocks += [BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1)]
            cin = cout
        self.blocks = nn.Sequential(*blocks)
        self.fc = nn.Linear(512, classes)

    def forward(self, x):
        x = self.blocks(self.stem(x))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


# ---- MobileNetV2/V3 style: inverted residuals, depthwise 3×3, hardswish / SiLU --------------------

class InvertedResidual(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int, expand: int, act: type[nn.Module]):
        super().__init__()
        hidden = cin * expand
        self.body = nn.Sequential(
            nn.Conv2d(cin, hidden, 1, bias=False), nn.BatchNorm2d(hidden), act(),
            nn.Conv2d(hidden, hidden, 3, stride, 1, groups=hidden, bias=False), nn.BatchNorm2d(hidden), act(),
            nn.Conv2d(hidden, cout, 1, bias=False), nn.BatchNorm2d(cout))
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        y = self.body(x)
        return x + y if self.residual else y


class MobileNet(nn.Module):
    def __init__(self, classes: int = 10):
        super().__init__()
        cfg = [(16, 24, 2, 4, nn.ReLU), (24, 24, 1, 3, nn.ReLU), (24, 40, 2, 3, nn.Hardswish),
               (40, 40, 1, 3, nn.Hardswish), (40, 80, 2, 6, nn.SiLU), (80, 80, 1, 6, nn.SiLU),
               (80, 112, 1, 6, nn.Hardswish), (112, 160, 2, 6, nn.Hardswish)]
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16), nn.Hardswish())
        self.blocks = nn.Sequential(*[InvertedResidual(*c) for c in cfg])
        self.head = nn.Sequential(nn.Conv2d(160, 576, 1, bias=False), nn.BatchNorm2d(576), nn.Hardswish())
        self.fc = nn.Linear(576, classes)

    def forward(self, x):
        x = self.head(self.blocks(self.stem(x)))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


# ---- ConvNeXt style: 7×7 depthwise, LayerNorm over channels (channels-last), GELU -----------------

class ConvNeXtBlock(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dw = nn.Conv2d(dim, dim, 7, padding=3, groups=dim)
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.pw1 = nn.Linear(dim, 4 * dim)
        self.pw2 = nn.Linear(4 * dim, dim)
        self.gamma = nn.Parameter(torch.full((dim,), 1e-6))

    def forward(self, x):
        y = self.dw(x).permute(0, 2, 3, 1)
        y = self.pw2(F.gelu(self.pw1(self.norm(y))))
        return x + (self.gamma * y).permute(0, 3, 1, 2)


class ConvNeXt(nn.Module):
    def __init__(self, classes: int = 10, dims=(48, 96, 192), depths=(2, 2, 2)):
        super().__init__()
        layers = [nn.Conv2d(3, dims[0], 4, 4)]
        for i, (dim, depth) in enumerate(zip(dims, depths)):
            if i:
                layers += [_ChannelsLayerNorm(dims[i - 1]), nn.Conv2d(dims[i - 1], dim, 2, 2)]
            layers += [ConvNeXtBlock(dim) for _ in range(depth)]
        self.features = nn.Sequential(*layers)
        self.norm = nn.LayerNorm(dims[-1])
        self.fc = nn.Linear(dims[-1], classes)

    def forward(self, x):
        return self.fc(self.norm(self.features(x).mean((2, 3))))


class _ChannelsLayerNorm(nn.LayerNorm):
    def forward(self, x):
        return super().forward(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)


# ---- ViT style: patch 8 on 64 × 64, 6 layers, width 256 -------------------------------------------

class ViT(nn.Module):
    def __init__(self, classes: int = 10, width: int = 256, layers: int = 6, heads: int = 4, patch: int = 8):
        super().__init__()
        self.patch = nn.Conv2d(3, width, patch, patch)
        self.pos = nn.Parameter(torch.zeros(1, (64 // patch) ** 2 + 1, width))
        self.cls = nn.Parameter(torch.zeros(1, 1, width))
        layer = nn.TransformerEncoderLayer(width, heads, 4 * width, dropout=0.0, activation="gelu",
                                           batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(width)
        self.fc = nn.Linear(width, classes)

    def forward(self, x):
        x = self.patch(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], 1) + self.pos
        return self.fc(self.norm(self.encoder(x))[:, 0])


# ---- GPT style: 4 layers, width 256, 128 tokens, batch 8 ------------------------------------------

class GPT(nn.Module):
    def __init__(self, vocab: int = 1024, width: int = 256, layers: int = 4, heads: int = 4, tokens: int = 128):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.pos = nn.Parameter(torch.zeros(1, tokens, width))
        layer = nn.TransformerEncoderLayer(width, heads, 4 * width, dropout=0.1, activation="gelu",
                                           batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab, bias=False)
        self.register_buffer("causal", nn.Transformer.generate_square_subsequent_mask(tokens), persistent=False)

    def forward(self, idx):
        x = self.embed(idx) + self.pos[:, :idx.shape[1]]
        x = self.blocks(x, mask=self.causal, is_causal=True)
        return self.head(self.norm(x)).flatten(0, 1)


def _images(n: int, classes: int = 10):
    g = torch.Generator().manual_seed(1)
    return torch.randn(n, 3, 64, 64, generator=g), torch.randint(0, classes, (n,), generator=g)


def _tokens():
    g = torch.Generator().manual_seed(2)
    idx = torch.randint(0, 1024, (8, 129), generator=g)
    return idx[:, :-1].contiguous(), idx[:, 1:].reshape(-1)


# name -> (label, builder of (model, inputs, targets))
MODELS = {
    "resnet18": ("ResNet-18 style, 16×3×64×64", lambda: (ResNet18(), *_images(16))),
    "mobilenet": ("MobileNetV2/V3 style (depthwise, 1×1, hardswish/SiLU), 16×3×64×64",
                  lambda: (MobileNet(), *_images(16))),
    "convnext": ("ConvNeXt style (7×7 depthwise, LayerNorm channels-last, GELU), 16×3×64×64",
                 lambda: (ConvNeXt(), *_images(16))),
    "vit": ("ViT style (patch 8, 64×64, 6 layers, width 256), batch 16", lambda: (ViT(), *_images(16))),
    "gpt": ("GPT style decoder (4 layers, width 256, 128 tokens, batch 8)", lambda: (GPT(), *_tokens())),
}


def build(name: str, seed: int = 0):
    """(model, optimizer, step): `step()` runs one AdamW training step and returns the loss."""
    torch.manual_seed(seed)
    model, x, y = MODELS[name][1]()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

    def step():
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return model, opt, step
