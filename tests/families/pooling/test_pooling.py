"""Pooling (max, avg, adaptive; 1-d/2-d/3-d): the fast paths equal the plain reference loops bit
for bit, results do not depend on threads, ISA path or memory layout, max pooling equals native
torch exactly (values and indices, NaN and ties included), averages and gradients are close to
float64, and the nn modules run in strict mode with and without grad."""
from __future__ import annotations

import contextlib

import pytest
import torch
import torch.nn.functional as F
from support import THREAD_COUNTS, assert_bitwise_equal, available_isas, cpu_isa, num_threads

import repmode
from repmode.kernels import pooling

aten = torch.ops.aten


@contextlib.contextmanager
def reference_loops():
    pooling.USE_REFERENCE = True
    try:
        yield
    finally:
        pooling.USE_REFERENCE = False


def channels_last(x):
    fmt = torch.channels_last if x.dim() == 4 else torch.channels_last_3d
    return x.contiguous(memory_format=fmt)


def sliced(x):
    """The same values stored with gaps in every dimension."""
    big = torch.zeros([2 * s + 1 for s in x.shape], dtype=x.dtype)
    view = big[tuple(slice(1, None, 2) for _ in x.shape)]
    view.copy_(x)
    return view


# (function, kwargs, input shape) cases covering kernels, strides, padding, dilation, ceil_mode,
# count_include_pad, divisor_override, 2-d and 3-d, batched and unbatched, C >= 64 (lane tails).
MAX_CASES = [
    (F.max_pool2d, dict(kernel_size=2), (2, 5, 9, 8)),
    (F.max_pool2d, dict(kernel_size=3, stride=2, padding=1), (2, 70, 7, 9)),
    (F.max_pool2d, dict(kernel_size=(3, 2), stride=(2, 1), ceil_mode=True), (1, 6, 8, 7)),
    (F.max_pool2d, dict(kernel_size=3, stride=1, padding=1, dilation=2), (2, 4, 7, 7)),
    (F.max_pool2d, dict(kernel_size=2, stride=3, ceil_mode=True), (3, 8, 8)),
    (F.max_pool3d, dict(kernel_size=2, stride=(1, 2, 2), padding=(1, 0, 1)), (2, 5, 4, 5, 6)),
    (F.max_pool3d, dict(kernel_size=3, stride=2, ceil_mode=True, dilation=(1, 2, 1)), (1, 4, 6, 7, 7)),
    (F.max_pool3d, dict(kernel_size=2, padding=1), (3, 4, 5, 6)),
    (F.adaptive_max_pool2d, dict(output_size=(3, 4)), (2, 5, 7, 9)),
    (F.adaptive_max_pool2d, dict(output_size=5), (2, 66, 4, 11)),
    (F.adaptive_max_pool3d, dict(output_size=(2, 3, 2)), (2, 4, 5, 7, 3)),
]
AVG_CASES = [
    (F.avg_pool2d, dict(kernel_size=2), (2, 5, 9, 8)),
    (F.avg_pool2d, dict(kernel_size=3, stride=2, padding=1), (2, 70, 7, 9)),
    (F.avg_pool2d, dict(kernel_size=3, stride=2, padding=1, count_include_pad=False, ceil_mode=True), (2, 6, 8, 7)),
    (F.avg_pool2d, dict(kernel_size=(3, 2), stride=(2, 1), ceil_mode=True, divisor_override=5), (1, 4, 8, 7)),
    (F.avg_pool2d, dict(kernel_size=2, padding=1), (3, 8, 8)),
    (F.avg_pool3d, dict(kernel_size=2, stride=(1, 2, 2), padding=(1, 0, 1)), (2, 5, 4, 5, 6)),
    (F.avg_pool3d, dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False), (1, 4, 6, 7, 7)),
    (F.avg_pool3d, dict(kernel_size=2, padding=1, count_include_pad=False), (3, 4, 5, 6)),
    (F.adaptive_avg_pool2d, dict(output_size=(3, 4)), (2, 5, 7, 9)),
    (F.adaptive_avg_pool2d, dict(output_size=5), (2, 66, 4, 11)),
    (F.adaptive_avg_pool2d, dict(output_size=(3, 3)), (4, 9, 9)),
    (F.adaptive_avg_pool3d, dict(output_size=(2, 3, 2)), (2, 4, 5, 7, 3)),
]
CASES = MAX_CASES + AVG_CASES


def case_id(case):
    fn, kw, shape = case
    return f"{fn.__name__}-{'-'.join(f'{k}={v}' for k, v in kw.items())}-{shape}"


def forward(fn, kw, x):
    if fn in (F.max_pool2d, F.max_pool3d, F.adaptive_max_pool2d, F.adaptive_max_pool3d):
        return fn(x, return_indices=True, **kw)
    return (fn(x, **kw),)


# Gradients drawn once, natively (under the mode torch.randn draws from repmode's own stream).
GRADS = torch.randn(50_000, generator=torch.Generator().manual_seed(99))


def forward_backward(fn, kw, x, seed=7):
    """(outputs..., grad_input) of fn at x, with a fixed random grad_output."""
    x = x.detach().clone(memory_format=torch.preserve_format).requires_grad_()
    outs = forward(fn, kw, x)
    n = outs[0].numel()
    g = GRADS[seed % 5: seed % 5 + n].view(outs[0].shape).to(x.dtype)
    outs[0].backward(g)
    return tuple(o.detach() for o in outs) + (x.grad,)


def rand(shape, dtype=torch.float32, seed=0):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


def with_ties(shape, seed=0):
    """Few distinct values (many ties), signed zeros, -inf and NaNs."""
    gen = torch.Generator().manual_seed(seed)
    x = torch.randint(-2, 3, shape, generator=gen).to(torch.float32)
    x[x == 0] = torch.where(torch.rand(x[x == 0].shape, generator=gen) < 0.5, -0.0, 0.0)
    flat = x.view(-1)
    n = flat.numel()
    pick = torch.randperm(n, generator=gen)
    flat[pick[: n // 25]] = float("nan")
    flat[pick[n // 25: n // 10]] = float("-inf")
    return x


@pytest.mark.parametrize("case", CASES, ids=case_id)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_fast_paths_equal_reference_and_are_invariant(case, dtype):
    fn, kw, shape = case
    x = rand(shape, dtype)
    with reference_loops(), repmode.enabled():
        want = forward_backward(fn, kw, x)
    layouts = {"contiguous": x, "sliced": sliced(x)}
    if x.dim() >= 4:
        layouts["channels_last"] = channels_last(x)
    for name, xl in layouts.items():
        for threads in THREAD_COUNTS:
            with num_threads(threads), repmode.enabled():
                assert_bitwise_equal(want, forward_backward(fn, kw, xl), f"{name} threads={threads}")
        for isa in available_isas():
            with cpu_isa(isa), repmode.enabled():
                assert_bitwise_equal(want, forward_backward(fn, kw, xl), f"{name} isa={isa}")


@pytest.mark.parametrize("case", MAX_CASES, ids=case_id)
def test_max_pool_equals_native_exactly(case):
    """Values and indices equal torch's: NaN wins (the last NaN of a window), ties go to the first
    position in row-major window order (-0.0 and +0.0 tie), an all -inf window picks its first."""
    fn, kw, shape = case
    for x in (rand(shape, seed=3), with_ties(shape, seed=4)):
        want = forward(fn, kw, x)
        for xl in (x, channels_last(x) if x.dim() >= 4 else x):
            with repmode.enabled():
                got = forward(fn, kw, xl)
            assert_bitwise_equal(want, got, "max pool vs native")


def test_max_pool_tie_and_nan_rules():
    x = torch.tensor([[[[-0.0, 0.0, 1.0, 1.0, float("nan"), 2.0, float("nan"), 5.0]]]])
    with repmode.enabled():
        v, i = F.max_pool2d(x, (1, 2), return_indices=True)
        v4, i4 = F.max_pool2d(x, (1, 4), return_indices=True)
    assert i.tolist() == [[[[0, 2, 4, 6]]]]
    assert torch.signbit(v[0, 0, 0, 0])  # -0.0, the first of the tie
    assert i4.tolist() == [[[[2, 6]]]] and v4[0, 0, 0, 1].isnan()


@pytest.mark.parametrize("case", AVG_CASES, ids=case_id)
def test_averages_close_to_float64(case):
    """A sequential sum of k terms and one division: error <= (k + 1) * eps * mean|x| (k <= 27)."""
    fn, kw, shape = case
    x = rand(shape, seed=5)
    with repmode.enabled():
        got, = forward(fn, kw, x)
    want, = forward(fn, kw, x.double())
    scale, = forward(fn, kw, x.double().abs())
    if "divisor_override" in kw:
        scale = scale * 6
    tol = 28 * torch.finfo(torch.float32).eps * scale + 1e-30
    assert ((got.double() - want).abs() <= tol).all()


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_gradients_close_to_float64_autograd(case):
    fn, kw, shape = case
    x = rand(shape, seed=6)
    with repmode.enabled():
        got = forward_backward(fn, kw, x)[-1]
    want = forward_backward(fn, kw, x.double())[-1]
    eps = torch.finfo(torch.float32).eps
    # each input gathers at most 27 terms |g| / divisor, added sequentially
    tol = 64 * eps * (want.abs() + forward_backward(fn, kw, x.double(), seed=7)[-1].abs().max())
    assert ((got.double() - want).abs() <= tol).all()


def test_avg_pool_padding_rules_against_python_loops():
    """count_include_pad and divisor_override against exact Python loops (float64 of float32 inputs)."""
    x = rand((1, 1, 5, 6), seed=8)
    for cip, div in ((True, None), (False, None), (True, 4), (False, 7)):
        with repmode.enabled():
            got = F.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=cip, divisor_override=div)
        for oh in range(got.shape[2]):
            for ow in range(got.shape[3]):
                h0, w0 = oh * 2 - 1, ow * 2 - 1
                h1, w1 = min(h0 + 3, 5 + 1), min(w0 + 3, 6 + 1)
                pool = (h1 - h0) * (w1 - w0)
                hs, ws, he, we = max(h0, 0), max(w0, 0), min(h1, 5), min(w1, 6)
                s = torch.tensor(0.0)
                for h in range(hs, he):
                    for w in range(ws, we):
                        s = s + x[0, 0, h, w]
                d = div if div else (pool if cip else (he - hs) * (we - ws))
                assert_bitwise_equal(got[0, 0, oh, ow], s / torch.tensor(float(d)), f"{oh},{ow}")


def test_one_dimensional_forms_reach_the_2d_kernels():
    """The 1-d modules: the same bits with grad, under no_grad and under inference_mode (where
    the composite 1-d ops reach the mode un-decomposed); max pooling equals native torch."""
    x = rand((2, 5, 11), seed=9)
    mods = [torch.nn.MaxPool1d(3, 2, 1), torch.nn.AvgPool1d(3, 2, 1), torch.nn.AdaptiveAvgPool1d(4),
            torch.nn.AdaptiveMaxPool1d(4)]
    for m in mods:
        with repmode.enabled():
            want = forward_backward(lambda t, **_: m(t), {}, x)
        for ctx in (torch.no_grad, torch.inference_mode):
            with ctx(), repmode.enabled():
                y = m(x)
            assert_bitwise_equal(want[0], y, f"{m} {ctx.__name__}")
        with repmode.enabled():
            x2 = x.unsqueeze(2)
            p = {torch.nn.MaxPool1d: lambda: F.max_pool2d(x2, (1, 3), (1, 2), (0, 1)),
                 torch.nn.AvgPool1d: lambda: F.avg_pool2d(x2, (1, 3), (1, 2), (0, 1)),
                 torch.nn.AdaptiveAvgPool1d: lambda: F.adaptive_avg_pool2d(x2, (1, 4)),
                 torch.nn.AdaptiveMaxPool1d: lambda: F.adaptive_max_pool2d(x2, (1, 4))}[type(m)]()
        assert_bitwise_equal(want[0], p.squeeze(2), f"{m} as 2-d")
    with repmode.enabled():
        got = F.max_pool1d(x, 3, 2, 1)
    assert_bitwise_equal(F.max_pool1d(x, 3, 2, 1), got, "max_pool1d vs native")


MODULES = [
    (torch.nn.MaxPool2d(2), (2, 3, 7, 7)),
    (torch.nn.MaxPool2d(3, 2, 1, return_indices=True), (2, 3, 7, 7)),
    (torch.nn.AvgPool2d(3, 2, 1), (2, 3, 7, 7)),
    (torch.nn.AdaptiveAvgPool2d(1), (2, 3, 7, 7)),
    (torch.nn.AdaptiveAvgPool2d((3, 3)), (2, 3, 7, 7)),
    (torch.nn.AdaptiveMaxPool2d(3), (2, 3, 7, 7)),
    (torch.nn.MaxPool1d(2), (2, 3, 7)),
    (torch.nn.AvgPool1d(2), (2, 3, 7)),
    (torch.nn.AdaptiveAvgPool1d(3), (2, 3, 7)),
    (torch.nn.AdaptiveMaxPool1d(3), (2, 3, 7)),
    (torch.nn.MaxPool3d(2), (2, 3, 5, 5, 5)),
    (torch.nn.AvgPool3d(2), (2, 3, 5, 5, 5)),
    (torch.nn.AdaptiveAvgPool3d(2), (2, 3, 5, 5, 5)),
    (torch.nn.AdaptiveMaxPool3d(2), (2, 3, 5, 5, 5)),
]


@pytest.mark.parametrize("module,shape", MODULES, ids=[f"{m}-{s}" for m, s in MODULES])
@pytest.mark.parametrize("layout", ["contiguous", "channels_last"])
def test_modules_strict_in_every_grad_mode(module, shape, layout):
    x = rand(shape, seed=10)
    if layout == "channels_last":
        if x.dim() < 4:
            pytest.skip("no channels_last form")
        x = channels_last(x)
    outs = {}
    xg = x.clone(memory_format=torch.preserve_format).requires_grad_()
    with repmode.enabled(strict=True):
        y = module(xg)
        y = y[0] if isinstance(y, tuple) else y
        y.sum().backward()
        outs["grad"] = y.detach()
        with torch.no_grad():
            y = module(x)
            outs["no_grad"] = y[0] if isinstance(y, tuple) else y
        with torch.inference_mode():
            y = module(x)
            outs["inference_mode"] = (y[0] if isinstance(y, tuple) else y).clone()
    assert xg.grad is not None
    for k in ("no_grad", "inference_mode"):
        assert_bitwise_equal(outs["grad"], outs[k], k)


def test_low_precision_is_widened():
    x = rand((2, 4, 7, 7), seed=11)
    for dtype in (torch.bfloat16, torch.float16):
        xl = x.to(dtype)
        with repmode.enabled():
            got = F.avg_pool2d(xl, 3, 2, 1)
            v, i = F.max_pool2d(xl, 3, 2, 1, return_indices=True)
            want = F.avg_pool2d(xl.float(), 3, 2, 1).to(dtype)
        assert_bitwise_equal(want, got, str(dtype))
        wv, wi = F.max_pool2d(xl, 3, 2, 1, return_indices=True)
        assert_bitwise_equal((wv, wi), (v, i), f"max {dtype}")


def test_out_overloads():
    x = rand((2, 3, 8, 8), seed=12)
    with repmode.enabled():
        want_v, want_i = aten.max_pool2d_with_indices(x, [3, 3], [2, 2], [1, 1])
        out, idx = torch.empty(0), torch.empty(0, dtype=torch.int64)
        aten.max_pool2d_with_indices.out(x, [3, 3], [2, 2], [1, 1], out=out, indices=idx)
        avg = aten.avg_pool2d(x, [2, 2])
        avg_out = torch.empty(0)
        aten.avg_pool2d.out(x, [2, 2], out=avg_out)
        ad = aten._adaptive_avg_pool2d(x, [3, 3])
        ad_out = torch.empty(0)
        aten._adaptive_avg_pool2d.out(x, [3, 3], out=ad_out)
    assert_bitwise_equal((want_v, want_i, avg, ad), (out, idx, avg_out, ad_out), "out=")


def test_errors():
    with repmode.enabled():
        with pytest.raises(repmode.UnsupportedOpError, match="dtype torch.int64"):
            F.max_pool2d(torch.ones(1, 1, 4, 4, dtype=torch.int64), 2)
        with pytest.raises(RuntimeError, match="divisor must be not zero"):
            F.avg_pool2d(torch.ones(1, 1, 4, 4), 2, divisor_override=0)
        with pytest.raises(RuntimeError, match="pad should be"):
            F.max_pool2d(torch.ones(1, 1, 4, 4), 2, padding=2)
        with pytest.raises(RuntimeError, match="too small"):
            F.max_pool2d(torch.ones(1, 1, 2, 2), 3)
        x = torch.ones(1, 1, 4, 4)
        bad = torch.full((1, 1, 2, 2), 99, dtype=torch.int64)
        with pytest.raises(IndexError, match="outside its input plane"):
            aten.max_pool2d_with_indices_backward(torch.ones(1, 1, 2, 2), x, [2, 2], [2, 2], [0, 0], [1, 1], False, bad)


def test_bad_index_in_the_channel_lane_walk():
    x = torch.ones(1, 8, 4, 4).contiguous(memory_format=torch.channels_last)
    bad = torch.zeros(1, 8, 2, 2, dtype=torch.int64).contiguous(memory_format=torch.channels_last)
    bad[0, 5, 1, 0] = -1
    grad = torch.ones(1, 8, 2, 2).contiguous(memory_format=torch.channels_last)
    with repmode.enabled(), pytest.raises(IndexError, match="outside its input plane"):
        aten.max_pool2d_with_indices_backward(grad, x, [2, 2], [2, 2], [0, 0], [1, 1], False, bad)
