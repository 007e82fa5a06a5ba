"""Convolution forward and backward: fast path == plain reference of the documented order (bit for bit),
invariance (threads, ISA, chunking, memory layout), accuracy against float64, nn modules in strict mode."""
from __future__ import annotations

import contextlib

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from support import assert_bitwise_equal, available_isas, cpu_isa, num_threads

import repmode
from repmode import _ext
from repmode.kernels.convolution import _Conv

aten = torch.ops.aten
C = _ext.C

# (x shape, w shape, stride, padding, dilation, groups, transposed, output_padding, bias)
CASES = [
    ((2, 3, 9, 11), (5, 3, 3, 3), 1, 1, 1, 1, False, 0, True),
    ((3, 4, 10, 7), (6, 2, 3, 2), (2, 1), (1, 0), (1, 2), 2, False, 0, True),
    ((2, 6, 13, 9), (6, 1, 3, 3), 2, 1, 1, 6, False, 0, False),  # depthwise, stride 2
    ((2, 4, 17), (5, 4, 5), 3, 2, 2, 1, False, 0, True),  # 1-d
    ((1, 3, 40), (3, 1, 3), 1, 1, 1, 3, False, 0, True),  # 1-d depthwise
    ((2, 3, 5, 6, 7), (4, 3, 3, 2, 3), (1, 2, 1), 1, 1, 1, False, 0, True),  # 3-d
    ((2, 2, 6, 5, 4), (4, 1, 2, 2, 2), 2, 0, (1, 2, 1), 2, False, 0, False),
    ((2, 4, 5, 6), (4, 3, 3, 3), 2, 1, 1, 1, True, 1, True),  # transposed
    ((2, 4, 7), (4, 2, 3), 3, 1, 2, 2, True, 2, True),
    ((1, 6, 4, 5), (6, 2, 4, 3), (2, 3), (1, 0), 1, 3, True, (1, 2), False),
    ((2, 2, 3, 4, 3), (2, 3, 3, 2, 3), 2, 1, 1, 1, True, 1, True),
    ((2, 3, 1, 1), (4, 3, 1, 1), 1, 0, 1, 1, False, 0, True),  # 1×1
    ((2, 3, 8, 8), (4, 3, 8, 8), 1, 0, 1, 1, False, 0, True),  # kernel = image
    ((1, 2, 5, 5), (3, 2, 3, 3), 1, 3, 1, 1, False, 0, True),  # padding wider than the kernel reach
]


def _call_args(case):
    _, _, stride, padding, dilation, groups, transposed, op, _ = case
    nd = len(case[1]) - 2

    def lst(v):
        return list(v) if isinstance(v, tuple) else [v] * nd
    return lst(stride), lst(padding), lst(dilation), transposed, lst(op), groups


def _inputs(case, dtype=torch.float32, seed=0, special=False):
    g = torch.Generator().manual_seed(seed)
    xs, ws, *_ = case
    x = torch.randn(xs, generator=g, dtype=dtype)
    w = torch.randn(ws, generator=g, dtype=dtype)
    stride, padding, dilation, transposed, op, groups = _call_args(case)
    cout = ws[1] * groups if transposed else ws[0]
    b = torch.randn(cout, generator=g, dtype=dtype) if case[-1] else None
    y = aten.convolution(x, w, b, stride, padding, dilation, transposed, op, groups)
    gy = torch.randn(y.shape, generator=g, dtype=dtype)
    if special:
        x.view(-1)[3] = float("inf")
        x.view(-1)[7] = float("nan")
        w.view(-1)[1] = float("-inf")
        gy.view(-1)[5] = float("nan")
    return x, w, b, gy


def _repmode(case, x, w, b, gy):
    stride, padding, dilation, transposed, op, groups = _call_args(case)
    with repmode.enabled():
        y = aten.convolution(x, w, b, stride, padding, dilation, transposed, op, groups)
        gx, gw, gb = aten.convolution_backward(gy, x, w, None if b is None else list(b.shape), stride, padding,
                                               dilation, transposed, op, groups, [True, True, b is not None])
    out = {"y": y, "gx": gx, "gw": gw}
    if b is not None:
        out["gb"] = gb
    return out


def _reference(case, x, w, b, gy):
    stride, padding, dilation, transposed, op, groups = _call_args(case)
    g = _Conv(None, (), {}, x, w, stride, padding, dilation, transposed, op, groups)
    code = g.code
    x, w, gy = x.contiguous(), w.contiguous(), gy.contiguous()
    bp = 0 if b is None else b.contiguous().data_ptr()
    y, gx, gw = torch.empty(g.y_shape, dtype=x.dtype), torch.empty_like(x), torch.empty_like(w)
    if transposed:
        C.convolution_reference(1, code, g.geom, x.data_ptr(), w.data_ptr(), bp, y.data_ptr())
        C.convolution_reference(0, code, g.geom, gy.data_ptr(), w.data_ptr(), 0, gx.data_ptr())
        C.convolution_reference(2, code, g.geom, gy.data_ptr(), x.data_ptr(), 0, gw.data_ptr())
    else:
        C.convolution_reference(0, code, g.geom, x.data_ptr(), w.data_ptr(), bp, y.data_ptr())
        C.convolution_reference(1, code, g.geom, gy.data_ptr(), w.data_ptr(), 0, gx.data_ptr())
        C.convolution_reference(2, code, g.geom, x.data_ptr(), gy.data_ptr(), 0, gw.data_ptr())
    return {"y": y, "gx": gx, "gw": gw}


@contextlib.contextmanager
def chunk_elems(n):
    old = C.set_conv_chunk_elems(n)
    try:
        yield
    finally:
        C.set_conv_chunk_elems(old)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}x{c[1]}{'T' if c[6] else ''}")
def test_fast_path_equals_reference(case, dtype):
    x, w, b, gy = _inputs(case, dtype)
    want = _reference(case, x, w, b, gy)
    # tiny chunks: the forward and the input gradient cross many chunk boundaries
    for elems in (None, 1):
        with chunk_elems(elems) if elems else contextlib.nullcontext(), num_threads(2):
            got = _repmode(case, x, w, b, gy)
        for k in want:
            assert_bitwise_equal(got[k], want[k], f"{k} chunk={elems}")


@pytest.mark.parametrize("case", [CASES[0], CASES[2], CASES[7]], ids=str)
def test_special_values_follow_the_reference(case):
    x, w, b, gy = _inputs(case, special=True)
    want = _reference(case, x, w, b, gy)
    got = _repmode(case, x, w, b, gy)
    for k in want:
        assert_bitwise_equal(got[k], want[k], k)
    assert got["y"].isnan().any()
    nan = got["y"][got["y"].isnan()]
    assert (nan.view(torch.int32) == 0x7FC00000).all(), "NaNs are canonical"


def test_padding_is_a_zero_term():
    # im2col semantics: an infinite weight meets the zero padding: 0 * inf = NaN at the border only
    x = torch.ones(1, 1, 3, 3)
    w = torch.zeros(1, 1, 3, 3)
    w[0, 0, 0, 0] = float("inf")
    with repmode.enabled():
        y = F.conv2d(x, w, padding=1)
    assert y[0, 0, 0].isnan().all() and y[0, 0, :, 0].isnan().all()
    assert y[0, 0, 1:, 1:].isinf().all()


def test_small_image_rounds_equal_reference():
    # small images go through batched GEMMs in rounds of images: 420 elements per chunk makes
    # rounds of 3, 3 and 1 images here (K·L = 810 <= 2·420; 8·420 // (810 + 120) = 3); 300 sends the
    # forward and the input gradient through the general path.
    case = ((7, 3, 6, 5), (4, 3, 3, 3), 1, 1, 1, 1, False, 0, True)
    x, w, b, gy = _inputs(case)
    want = _reference(case, x, w, b, gy)
    for elems in (420, 300, 1 << 16):
        with chunk_elems(elems), num_threads(2):
            got = _repmode(case, x, w, b, gy)
        for k in want:
            assert_bitwise_equal(got[k], want[k], f"{k} chunk={elems}")


# Weight gradients with at most one chunk (256) of positions per image: the images' chains and
# their image-order sum run fused in one segmented GEMM (csrc/cpu/convolution.cpp).
SEGMENT_CASES = [
    ((37, 5, 2, 2), (13, 5, 3, 3), 1, 1, 1, 1, False, 0, True),  # L = 4: 64 images' segments per k-block
    ((9, 3, 16, 16), (35, 3, 3, 3), 1, 1, 1, 1, False, 0, False),  # L = 256: one segment per k-block
    ((6, 4, 15, 17), (7, 4, 1, 1), 1, 0, 1, 1, False, 0, True),  # L = 255
    ((11, 8, 1, 1), (33, 8, 1, 1), 1, 0, 1, 1, False, 0, True),  # L = 1
    ((7, 6, 5, 5), (6, 3, 3, 3), 2, 1, 1, 2, False, 0, True),  # groups, stride 2: L = 9
    ((5, 4, 3, 3), (4, 3, 2, 2), 2, 0, 1, 2, True, 1, True),  # transposed: the roles of x and gy swap
    ((5, 3, 2, 3), (256, 3, 2, 2), 1, 1, 1, 1, False, 0, True),  # 256 output channels: written straight into gw
    ((3, 4, 3, 3), (600, 2, 3, 3), 1, 1, 1, 2, False, 0, False),  # 300 per group, two groups, straight into gw
]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("case", SEGMENT_CASES, ids=lambda c: f"{c[0]}x{c[1]}{'T' if c[6] else ''}")
def test_weight_gradient_segments_equal_reference(case, dtype):
    """The fused per-image chains give the per-image order's bits on every ISA path, at 1 and 2
    threads, for rounds of one image (chunk 1) and of all images, with NaN and infinities too."""
    for special in (False, True):
        x, w, b, gy = _inputs(case, dtype, seed=5, special=special)
        want = _reference(case, x, w, b, gy)["gw"]
        for isa in available_isas():
            for threads, elems in ((1, None), (2, None), (2, 1)):
                with cpu_isa(isa), num_threads(threads), chunk_elems(elems) if elems else contextlib.nullcontext():
                    got = _repmode(case, x, w, b, gy)["gw"]
                assert_bitwise_equal(got, want, f"isa={isa} threads={threads} chunk={elems} special={special}")
        if special:
            assert want.isnan().any(), "the special values reach the weight gradient"


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_reductions_longer_than_one_chunk_equal_reference(dtype):
    """Every reduced length past one chunk (256) of the GEMM order: forward over Ci·kvol = 270, the
    input gradient over Co = 264 channels, the weight gradient over 17·17 = 289 positions."""
    case = ((2, 30, 17, 17), (264, 30, 3, 3), 1, 1, 1, 1, False, 0, True)
    x, w, b, gy = _inputs(case, dtype)
    want = _reference(case, x, w, b, gy)
    for threads in (1, 2):
        with num_threads(threads):
            got = _repmode(case, x, w, b, gy)
        for k in want:
            assert_bitwise_equal(got[k], want[k], f"{k} threads={threads}")


def test_big_chunks_and_many_images():
    # shapes big enough for several position chunks per image and several image rounds
    case = ((5, 8, 40, 37), (16, 8, 3, 3), 1, 1, 1, 1, False, 0, True)
    x, w, b, gy = _inputs(case)
    with num_threads(1):
        want = _repmode(case, x, w, b, gy)
    for threads in (2, 3):
        with num_threads(threads):
            got = _repmode(case, x, w, b, gy)
        for k in want:
            assert_bitwise_equal(got[k], want[k], f"{k} threads={threads}")
    for elems in (5000, 1 << 22):
        with chunk_elems(elems), num_threads(2):
            got = _repmode(case, x, w, b, gy)
        for k in want:
            assert_bitwise_equal(got[k], want[k], f"{k} chunk={elems}")


@pytest.mark.parametrize("case", [CASES[1], CASES[5], CASES[8]], ids=str)
def test_invariant_to_threads_isa_and_layout(case):
    x, w, b, gy = _inputs(case, seed=3)
    with num_threads(1):
        want = _repmode(case, x, w, b, gy)

    def check(got, what):
        for k in want:
            assert_bitwise_equal(got[k], want[k], f"{k} {what}")

    for threads in (2, 3):
        with num_threads(threads):
            check(_repmode(case, x, w, b, gy), f"threads={threads}")
    for isa in available_isas():
        with cpu_isa(isa):
            check(_repmode(case, x, w, b, gy), f"isa={isa}")
    # channels-last and strided copies of the same values
    def strided(t):
        big = torch.zeros([2 * s for s in t.shape], dtype=t.dtype)
        view = big[tuple(slice(None, None, 2) for _ in t.shape)]
        view.copy_(t)
        return view

    def chlast(t):
        fmt = {4: torch.channels_last, 5: torch.channels_last_3d}.get(t.dim())
        return t.contiguous(memory_format=fmt) if fmt else t.transpose(1, 2).contiguous().transpose(1, 2)

    for name, f in (("strided", strided), ("channels_last", chlast)):
        check(_repmode(case, f(x), f(w), b, f(gy)), name)


def _abs_bounds(case, x, w, b, gy):
    """Float64 values and the sums of |terms| that bound each output's rounding error."""
    stride, padding, dilation, transposed, op, groups = _call_args(case)

    def run(x, w, b, gy):
        x = x.double().requires_grad_()
        w = w.double().requires_grad_()
        bb = None if b is None else b.double().requires_grad_()
        y = aten.convolution(x, w, bb, stride, padding, dilation, transposed, op, groups)
        gs = torch.autograd.grad(y, [x, w] + ([bb] if bb is not None else []), gy.double())
        out = {"y": y.detach(), "gx": gs[0], "gw": gs[1]}
        if bb is not None:
            out["gb"] = gs[2]
        return out
    return run(x, w, b, gy), run(x.abs(), w.abs(), None if b is None else b.abs(), gy.abs())


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}x{c[1]}{'T' if c[6] else ''}")
def test_close_to_float64(case):
    x, w, b, gy = _inputs(case, seed=5)
    got = _repmode(case, x, w, b, gy)
    exact, mag = _abs_bounds(case, x, w, b, gy)
    # Each output is a chain of at most n roundings (fma chain + the additions after it), so
    # |error| <= n * 2^-24 * (sum of |terms|) (first order; n * u << 1).
    xs, ws = case[0], case[1]
    kvol = 1
    for k in ws[2:]:
        kvol *= k
    positions = max(got["y"][0, 0].numel(), x[0, 0].numel())
    n_terms = {"y": ws[1] * kvol + kvol + 2, "gx": ws[0] + ws[1] * kvol + kvol + 2,
               "gw": positions + xs[0] + 2, "gb": positions * xs[0]}
    u = 2.0 ** -24
    for k in got:
        err = (got[k].double() - exact[k]).abs()
        bound = n_terms[k] * u * mag[k] + 1e-30
        assert (err <= bound).all(), f"{k}: max err/bound {float((err / bound).max()):.3g}"


@pytest.mark.parametrize("case", [CASES[1], CASES[8]], ids=str)
def test_gradients_match_finite_differences(case):
    # float64: <grad, v> from repmode's backward against a central difference of repmode's forward
    x, w, b, gy = _inputs(case, dtype=torch.float64, seed=7)
    stride, padding, dilation, transposed, op, groups = _call_args(case)
    got = _repmode(case, x, w, b, gy)
    g = torch.Generator().manual_seed(8)
    vx, vw, vb = (torch.randn(t.shape, generator=g, dtype=torch.float64) for t in (x, w, b))
    eps = 1e-6

    def f(t):
        with repmode.enabled():
            y = aten.convolution(x + t * vx, w + t * vw, b + t * vb, stride, padding, dilation, transposed, op,
                                 groups)
        return float((y * gy).sum())
    fd = (f(eps) - f(-eps)) / (2 * eps)
    analytic = float((got["gx"] * vx).sum() + (got["gw"] * vw).sum() + (got["gb"] * vb).sum())
    assert abs(fd - analytic) <= 1e-6 * max(1.0, abs(analytic))


def test_output_mask_computes_only_requested():
    case = CASES[0]
    x, w, b, gy = _inputs(case)
    stride, padding, dilation, transposed, op, groups = _call_args(case)
    full = _repmode(case, x, w, b, gy)
    for mask in ([True, False, False], [False, True, False], [False, False, True], [False, True, True]):
        with repmode.enabled():
            got = aten.convolution_backward(gy, x, w, [b.shape[0]], stride, padding, dilation, transposed, op,
                                            groups, mask)
        for m, g, k in zip(mask, got, ("gx", "gw", "gb")):
            if m:
                assert_bitwise_equal(g, full[k], k)
            else:
                assert g is None


MODULES = [
    (lambda: nn.Conv1d(3, 4, 3, padding=1), (2, 3, 10)),
    (lambda: nn.Conv1d(4, 4, 3, padding="same", groups=4), (2, 4, 9)),
    (lambda: nn.Conv2d(3, 6, 3, stride=2, padding=1, groups=3), (2, 3, 9, 8)),
    (lambda: nn.Conv2d(3, 4, 3, padding="same", dilation=2), (2, 3, 7, 7)),
    (lambda: nn.Conv2d(3, 4, 4, padding="same", bias=False), (2, 3, 7, 7)),  # asymmetric 'same'
    (lambda: nn.Conv3d(2, 3, (2, 3, 3), padding=1), (1, 2, 4, 5, 5)),
    (lambda: nn.ConvTranspose1d(3, 4, 3, stride=2, output_padding=1), (2, 3, 6)),
    (lambda: nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, groups=2), (2, 4, 4, 5)),
    (lambda: nn.ConvTranspose3d(2, 3, 2, stride=2), (1, 2, 3, 3, 2)),
]


@pytest.mark.parametrize("make,shape", MODULES, ids=[f"m{i}" for i in range(len(MODULES))])
def test_modules_strict(make, shape):
    torch.manual_seed(0)
    m = make()
    x = torch.randn(shape, requires_grad=True)
    with repmode.enabled():
        y = m(x)
        y.square().sum().backward()
    want = m(x.detach())
    assert torch.allclose(y, want, rtol=1e-5, atol=1e-5)
    for ctx in (torch.no_grad, torch.inference_mode):
        with ctx(), repmode.enabled():
            z = m(x.detach())
        assert_bitwise_equal(z, y.detach(), ctx.__name__)
    # unbatched input (the composite adds the batch dim)
    with repmode.enabled():
        m(x.detach()[0])


def test_low_precision_is_widened():
    case = CASES[0]
    x, w, b, gy = _inputs(case)
    for dtype in (torch.bfloat16, torch.float16):
        xl, wl, bl, gl = (t.to(dtype) for t in (x, w, b, gy))
        got = _repmode(case, xl, wl, bl, gl)
        want = _repmode(case, *(t.float() for t in (xl, wl, bl, gl)))
        for k in got:
            assert_bitwise_equal(got[k], want[k].to(dtype), f"{k} {dtype}")


def test_errors():
    x = torch.randint(0, 5, (1, 2, 5, 5))
    w = torch.randint(0, 5, (3, 2, 3, 3))
    with repmode.enabled(), pytest.raises(repmode.UnsupportedOpError, match="dtype"):
        aten.convolution(x, w, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1)
    with repmode.enabled(), pytest.raises(repmode.UnsupportedOpError, match="batched"):
        aten.convolution(torch.randn(2, 5, 5), torch.randn(3, 2, 3, 3), None, [1, 1], [0, 0], [1, 1], False,
                         [0, 0], 1)
    with repmode.enabled(), pytest.raises(RuntimeError, match="groups"):
        F.conv2d(torch.randn(1, 3, 5, 5), torch.randn(4, 2, 3, 3), groups=2)


def test_empty_batch():
    x, w, b = torch.randn(0, 3, 5, 5), torch.randn(4, 3, 3, 3), torch.randn(4)
    with repmode.enabled():
        y = aten.convolution(x, w, b, [1, 1], [0, 0], [1, 1], False, [0, 0], 1)
        gx, gw, gb = aten.convolution_backward(torch.randn(0, 4, 3, 3), x, w, [4], [1, 1], [0, 0], [1, 1], False,
                                               [0, 0], 1, [True, True, True])
    assert y.shape == (0, 4, 3, 3) and gx.shape == x.shape
    assert_bitwise_equal(gw, torch.zeros_like(w))
    assert_bitwise_equal(gb, torch.zeros_like(b))


def test_weight_layout_that_crashes_torchs_own_conv2d():
    """torch 2.13's CPU conv2d segfaults on this call (dilated, strided, grouped, with a bias and
    a weight whose strides are permuted; the long property run found it). repmode reads the
    weight by its strides: the result is the one for a contiguous copy of the same weight."""
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(1, 4, 6, 1, generator=gen)
    w = torch.empty_strided((4, 2, 2, 1), (4, 1, 2, 2))
    w.copy_(torch.randn(4, 2, 2, 1, generator=gen))
    b = torch.randn(8, generator=gen)[::2]
    args = dict(stride=2, padding=1, dilation=2, groups=2)
    with repmode.enabled():
        got = F.conv2d(x, w, b, **args)
        want = F.conv2d(x, w.contiguous(), b.contiguous(), **args)
    assert_bitwise_equal(got, want)
    exact = F.conv2d(x.double(), w.double().contiguous(), b.double(), **args)
    assert torch.allclose(got.double(), exact, rtol=1e-6, atol=1e-6)
