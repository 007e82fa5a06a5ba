"""A MobileNetV3-style stack (expansion conv, batch norm, hardswish, depthwise conv, hardsigmoid
squeeze-and-excite, projection, residual) with a per-pixel segmentation head trains two steps in
strict mode with the same digests at 1 and 2 threads, and its forward (train and eval) is close to
native torch's."""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F
from support import num_threads

import repmode


class SqueezeExcite(nn.Module):
    def __init__(self, c, r=4):
        super().__init__()
        self.fc1 = nn.Conv2d(c, c // r, 1)
        self.fc2 = nn.Conv2d(c // r, c, 1)

    def forward(self, x):
        s = F.adaptive_avg_pool2d(x, 1)
        return x * F.hardsigmoid(self.fc2(F.relu(self.fc1(s))))


class InvertedResidual(nn.Module):
    def __init__(self, c, expand, act):
        super().__init__()
        h = c * expand
        self.expand = nn.Sequential(nn.Conv2d(c, h, 1, bias=False), nn.BatchNorm2d(h), act())
        self.depthwise = nn.Sequential(nn.Conv2d(h, h, 3, padding=1, groups=h, bias=False), nn.BatchNorm2d(h), act())
        self.se = SqueezeExcite(h)
        self.project = nn.Sequential(nn.Conv2d(h, c, 1, bias=False), nn.BatchNorm2d(c))

    def forward(self, x):
        return x + self.project(self.se(self.depthwise(self.expand(x))))


def _model():
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.Hardswish(),
        InvertedResidual(8, 3, nn.Hardswish),
        InvertedResidual(8, 2, lambda: nn.Hardswish(inplace=True)),
        InvertedResidual(8, 2, nn.ReLU),
        nn.Conv2d(8, 5, 1),  # segmentation head: per-pixel logits of 5 classes
    )


def _train(threads):
    model = _model()
    g = torch.Generator().manual_seed(1)
    x = torch.randn(4, 3, 12, 12, generator=g)
    target = torch.randint(0, 5, (4, 12, 12), generator=g)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    losses = []
    with num_threads(threads), repmode.enabled(seed=0):
        for _ in range(2):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), target)
            loss.backward()
            opt.step()
            losses.append(float(loss.detach()))
        model.eval()
        with torch.inference_mode():
            logits = model(x)
    return repmode.digest(model.state_dict()), repmode.digest(logits), losses


def test_mobilenet_v3_block_stack_trains_with_the_same_digests_at_1_and_2_threads():
    a = _train(1)
    b = _train(2)
    assert a == b
    assert a[2][1] < a[2][0] * 1.5  # a real training step, not NaN


def test_mobilenet_v3_block_stack_forward_close_to_native():
    model = _model()
    x = torch.randn(2, 3, 12, 12, generator=torch.Generator().manual_seed(2))
    want = model(x)
    with repmode.enabled():
        got = model(x)
    assert torch.allclose(got, want, rtol=1e-4, atol=1e-5)
