"""Resampling (nearest, nearest-exact, linear, bilinear, bicubic, trilinear; forward and
backward): the fast paths equal the plain reference loops bit for bit, results do not depend on
threads, ISA path or memory layout, nearest equals native torch exactly (forward and backward),
interpolation and gradients are as close to float64 as native torch, bf16/fp16 are the float32
result rounded once, and a small UNet trains in strict mode with the same digests at 1 and 2
threads."""
from __future__ import annotations

import contextlib

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from support import THREAD_COUNTS, assert_bitwise_equal, available_isas, cpu_isa, num_threads

import repmode
from repmode.kernels import resample

aten = torch.ops.aten


@contextlib.contextmanager
def reference_loops():
    resample.USE_REFERENCE = True
    try:
        yield
    finally:
        resample.USE_REFERENCE = False


def channels_last(x):
    if x.dim() not in (4, 5):
        return x
    return x.contiguous(memory_format=torch.channels_last if x.dim() == 4 else torch.channels_last_3d)


def sliced(x):
    """The same values stored with gaps in every dimension."""
    big = torch.zeros([2 * s + 1 for s in x.shape], dtype=x.dtype)
    view = big[tuple(slice(1, None, 2) for _ in x.shape)]
    view.copy_(x)
    return view


# (interpolate kwargs, input shape): every mode, sizes and scale factors (up and down, integer and
# not), align_corners both ways, channel counts below and above the 64-lane block.
CASES = [
    (dict(scale_factor=2, mode="nearest"), (2, 3, 7)),
    (dict(size=5, mode="nearest"), (2, 3, 11)),
    (dict(scale_factor=2, mode="nearest"), (2, 5, 6, 7)),
    (dict(scale_factor=1.7, mode="nearest"), (2, 70, 5, 6)),
    (dict(size=(3, 4), mode="nearest"), (1, 4, 7, 9)),
    (dict(scale_factor=(2, 1.5, 3), mode="nearest"), (1, 3, 3, 4, 5)),
    (dict(scale_factor=1.5, mode="nearest-exact"), (2, 3, 7)),
    (dict(size=(11, 5), mode="nearest-exact"), (2, 6, 6, 8)),
    (dict(scale_factor=0.6, mode="nearest-exact"), (1, 5, 5, 8, 7)),
    (dict(scale_factor=2, mode="linear"), (2, 3, 9)),
    (dict(size=4, mode="linear", align_corners=True), (2, 3, 9)),
    (dict(scale_factor=2, mode="bilinear"), (2, 5, 6, 7)),
    (dict(size=(13, 9), mode="bilinear", align_corners=True), (2, 3, 5, 7)),
    (dict(size=(13, 9), mode="bilinear"), (2, 3, 5, 7)),
    (dict(scale_factor=(2.7, 2.66), mode="bilinear", recompute_scale_factor=False), (1, 4, 9, 8)),
    (dict(scale_factor=0.5, mode="bilinear"), (2, 66, 8, 10)),
    (dict(size=(6, 7), mode="bilinear"), (2, 4, 6, 7)),
    (dict(scale_factor=2, mode="bicubic"), (2, 3, 5, 6)),
    (dict(size=(9, 4), mode="bicubic", align_corners=True), (2, 5, 6, 7)),
    (dict(scale_factor=0.7, mode="bicubic"), (1, 67, 9, 8)),
    (dict(scale_factor=2, mode="trilinear"), (2, 3, 3, 4, 5)),
    (dict(size=(2, 7, 3), mode="trilinear", align_corners=True), (1, 5, 4, 4, 6)),
    # antialiased (variable tap counts; an axis of unchanged size is not resampled)
    (dict(scale_factor=0.5, mode="bilinear", antialias=True), (2, 3, 16, 12)),
    (dict(size=(5, 7), mode="bicubic", antialias=True), (2, 4, 17, 13)),
    (dict(size=(9, 13), mode="bilinear", antialias=True, align_corners=True), (1, 3, 20, 13)),
    (dict(scale_factor=2, mode="bicubic", antialias=True), (1, 66, 5, 6)),
    (dict(scale_factor=(0.3, 0.45), mode="bilinear", antialias=True, recompute_scale_factor=False), (1, 2, 23, 31)),
]
IDS = [f"{kw['mode']}{'-aa' if kw.get('antialias') else ''}-{i}" for i, (kw, _) in enumerate(CASES)]


def _run(kw, x, g):
    """Forward and backward of F.interpolate under repmode (strict): (out, grad of x)."""
    x = x.detach().requires_grad_(True)
    with repmode.enabled():
        y = F.interpolate(x, **kw)
        y.backward(g)
    return y.detach(), x.grad


def _inputs(kw, shape, dtype=torch.float64, seed=0):
    torch.manual_seed(seed)
    x = torch.randn(shape, dtype=dtype)
    out_shape = F.interpolate(x, **kw).shape
    g = torch.randn(out_shape, dtype=dtype)
    return x, g


@pytest.mark.parametrize("kw,shape", CASES, ids=IDS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_fast_paths_equal_the_reference_loops_on_every_layout(kw, shape, dtype):
    x, g = _inputs(kw, shape, dtype)
    with reference_loops():
        want = _run(kw, x, g)
    for name, lay in (("contiguous", lambda t: t), ("channels_last", channels_last), ("sliced", sliced)):
        got = _run(kw, lay(x), lay(g))
        assert_bitwise_equal(got[0].contiguous(), want[0].contiguous(), f"forward {name}")
        assert_bitwise_equal(got[1].contiguous(), want[1].contiguous(), f"backward {name}")


@pytest.mark.parametrize("kw,shape", CASES, ids=IDS)
def test_the_same_bits_at_every_thread_count_and_isa(kw, shape):
    big = (shape[0] * 4, max(shape[1], 16)) + tuple(shape[2:])  # enough planes to split among threads
    x, g = _inputs(kw, big, torch.float32, seed=1)
    with num_threads(1):
        want = _run(kw, x, g)
    for threads in THREAD_COUNTS[1:]:
        with num_threads(threads):
            assert_bitwise_equal(_run(kw, x, g), want, f"threads={threads}")
    for isa in available_isas():
        with cpu_isa(isa):
            assert_bitwise_equal(_run(kw, x, g), want, f"isa={isa}")
    with num_threads(2):
        cl = _run(kw, channels_last(x), channels_last(g))
    assert_bitwise_equal((cl[0].contiguous(), cl[1].contiguous()), want, "channels_last at 2 threads")


NEAREST = [(kw, s) for kw, s in CASES if kw["mode"].startswith("nearest")]


@pytest.mark.parametrize("kw,shape", NEAREST, ids=[f"{kw['mode']}-{i}" for i, (kw, _) in enumerate(NEAREST)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_nearest_equals_native_torch_bit_for_bit_forward_and_backward(kw, shape, dtype):
    x, g = _inputs(kw, shape, dtype, seed=2)
    got = _run(kw, x, g)
    xn = x.detach().requires_grad_(True)
    y = F.interpolate(xn, **kw)
    y.backward(g)
    assert_bitwise_equal(got[0], y.detach(), "forward")
    assert_bitwise_equal(got[1], xn.grad, "backward")


@pytest.mark.parametrize("kw,shape", CASES, ids=IDS)
def test_forward_and_gradient_are_as_close_to_float64_as_native_torch(kw, shape):
    x64, g64 = _inputs(kw, shape, torch.float64, seed=3)
    ref = F.interpolate(x64.requires_grad_(True), **kw)
    ref.backward(g64)
    x, g = x64.detach().float(), g64.float()
    mine = _run(kw, x, g)
    xn = x.clone().requires_grad_(True)
    nat = F.interpolate(xn, **kw)
    nat.backward(g)
    scale_f = ref.detach().abs().max().item()
    scale_b = x64.grad.abs().max().item()
    eps = torch.finfo(torch.float32).eps
    for what, m, n, r, s in (("forward", mine[0], nat.detach(), ref.detach(), scale_f),
                             ("backward", mine[1], xn.grad, x64.grad, scale_b)):
        err_m = (m.double() - r).abs().max().item()
        err_n = (n.double() - r).abs().max().item()
        # no worse than native (one float32 ulp of the largest value of slack: the two differ in
        # where multiply-adds are fused)
        assert err_m <= err_n + eps * s, f"{what}: repmode error {err_m:.3g}, native {err_n:.3g}"
        assert err_m <= 16 * eps * s, f"{what}: repmode error {err_m:.3g} against a scale of {s:.3g}"


@pytest.mark.parametrize("mode,antialias", [("nearest", False), ("bilinear", False), ("bicubic", False),
                                            ("bilinear", True), ("bicubic", True)])
def test_grad_no_grad_and_inference_mode_give_the_same_forward_bits(mode, antialias):
    torch.manual_seed(4)
    x = torch.randn(2, 3, 6, 7)
    results = []
    aa = dict(antialias=True) if antialias else {}
    for ctx in (contextlib.nullcontext, torch.no_grad, torch.inference_mode):
        for kw in (dict(scale_factor=2), dict(size=(9, 5)), dict(scale_factor=1.5, recompute_scale_factor=False),
                   dict(scale_factor=0.6)):
            with ctx(), repmode.enabled():
                results.append(F.interpolate(x, mode=mode, **kw, **aa))
    n = len(results) // 3
    for i in range(n):
        assert_bitwise_equal(results[n + i], results[i], "no_grad")
        assert_bitwise_equal(results[2 * n + i], results[i], "inference_mode")


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("mode", ["nearest", "bilinear", "bicubic"])
def test_low_precision_is_the_float32_result_rounded_once(dtype, mode):
    torch.manual_seed(5)
    x = torch.randn(2, 3, 5, 6).to(dtype)
    g = torch.randn(2, 3, 10, 12).to(dtype)
    low = _run(dict(scale_factor=2, mode=mode), x, g)
    wide = _run(dict(scale_factor=2, mode=mode), x.float(), g.float())
    assert low[0].dtype == dtype and low[1].dtype == dtype
    assert_bitwise_equal(low[0], wide[0].to(dtype), "forward")
    assert_bitwise_equal(low[1], wide[1].to(dtype), "backward")


def test_nn_upsample_modules_run_in_strict_mode():
    torch.manual_seed(6)
    x = torch.randn(1, 2, 4, 4)
    with repmode.enabled():
        for m in (nn.Upsample(scale_factor=2), nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True),
                  nn.UpsamplingNearest2d(scale_factor=3), nn.UpsamplingBilinear2d(size=(5, 7))):
            y = m(x)
            assert torch.isfinite(y).all()


def test_resampling_refuses_complex_inputs_by_name():
    x = torch.randn(1, 2, 8, 8, dtype=torch.complex64)
    with pytest.raises(repmode.UnsupportedOpError, match="upsample_bilinear2d"):
        with repmode.enabled():
            torch.ops.aten.upsample_bilinear2d(x, [4, 4], False)


class TinyUNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc1 = nn.Conv2d(3, 8, 3, padding=1)
        self.enc2 = nn.Conv2d(8, 16, 3, padding=1)
        self.dec1 = nn.Conv2d(16 + 8, 8, 3, padding=1)
        self.dec0 = nn.Conv2d(8 + 3, 2, 3, padding=1)

    def forward(self, x):
        e1 = F.relu(self.enc1(x))
        e2 = F.relu(self.enc2(F.max_pool2d(e1, 2)))
        u1 = F.interpolate(e2, scale_factor=2, mode="bilinear", align_corners=False)
        d1 = F.relu(self.dec1(torch.cat([u1, e1], 1)))
        u0 = F.interpolate(F.avg_pool2d(d1, 2), scale_factor=2, mode="nearest")
        return self.dec0(torch.cat([u0, x], 1))


def _train_unet(threads):
    torch.manual_seed(7)
    model = TinyUNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = torch.randn(4, 3, 16, 16)
    target = torch.randn(4, 2, 16, 16)
    with num_threads(threads), repmode.enabled():
        for _ in range(2):
            opt.zero_grad()
            loss = F.mse_loss(model(x), target)
            loss.backward()
            opt.step()
    return repmode.digest(model.state_dict()), repmode.digest(loss.detach())


def test_a_small_unet_trains_in_strict_mode_with_the_same_digests_at_1_and_2_threads():
    assert _train_unet(1) == _train_unet(2)
