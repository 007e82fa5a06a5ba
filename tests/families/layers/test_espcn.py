"""An ESPCN-style super-resolution net (PixelUnshuffle in, conv/tanh feature layers, PixelShuffle
out) trains two steps in strict mode with the same digests at 1 and 2 threads, and its forward is
close to native torch's."""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F
from support import num_threads

import repmode


def _model(r=2):
    torch.manual_seed(0)
    return nn.Sequential(
        nn.PixelUnshuffle(2),                    # (N, 1, 16, 16) -> (N, 4, 8, 8): space to depth
        nn.Conv2d(4, 16, 5, padding=2), nn.Tanh(),
        nn.Conv2d(16, 8, 3, padding=1), nn.Tanh(),
        nn.Conv2d(8, 4 * r * r, 3, padding=1),
        nn.PixelShuffle(2 * r),                  # (N, 16, 8, 8) -> (N, 1, 32, 32): upscale x2 of the input
    )


def _train(threads):
    model = _model()
    g = torch.Generator().manual_seed(1)
    low = torch.rand(4, 1, 16, 16, generator=g)
    high = F.interpolate(low, scale_factor=2, mode="bilinear", align_corners=False)  # the target image
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    losses = []
    with num_threads(threads), repmode.enabled(seed=0):
        for _ in range(2):
            opt.zero_grad()
            loss = F.mse_loss(model(low), high)
            loss.backward()
            opt.step()
            losses.append(float(loss.detach()))
        with torch.inference_mode():
            out = model(low)
    return repmode.digest(model.state_dict()), repmode.digest(out), losses


def test_espcn_trains_with_the_same_digests_at_1_and_2_threads():
    a, b = _train(1), _train(2)
    assert a == b
    assert a[2][1] < a[2][0]  # Adam's first steps lower the loss


def test_espcn_forward_close_to_native():
    model = _model()
    x = torch.rand(2, 1, 16, 16, generator=torch.Generator().manual_seed(2))
    want = model(x)
    with repmode.enabled():
        got = model(x)
    assert got.shape == (2, 1, 32, 32)
    assert torch.allclose(got, want, rtol=1e-4, atol=1e-6)
