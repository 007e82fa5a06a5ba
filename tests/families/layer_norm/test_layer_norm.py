"""Layer norm (native_layer_norm and its backward) and RMS norm: fast path == plain reference,
invariance, accuracy against float64, gradients, nn modules under strict mode."""
from __future__ import annotations

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from support import assert_bitwise_equal, assert_invariant, available_isas, cpu_isa

import repmode
from repmode import _ext

C = _ext.C
CODE = {torch.float32: 0, torch.float64: 1}
SHAPES = [(1, 1), (3, 7), (5, 31), (4, 33), (17, 100), (3, 4096 + 37), (2 * 4096 + 70, 35)]


def _c_forward(x, w, b, eps, reference, threads=2):
    M, N = x.shape
    y = torch.empty_like(x)
    mean = torch.empty(M, dtype=x.dtype)
    rstd = torch.empty(M, dtype=x.dtype)
    C.layer_norm_forward(CODE[x.dtype], x.data_ptr(), M, N, 0 if w is None else w.data_ptr(),
                         0 if b is None else b.data_ptr(), eps, y.data_ptr(), mean.data_ptr(), rstd.data_ptr(),
                         threads, reference)
    return y, mean, rstd


def _c_backward(g, x, mean, rstd, w, reference, threads=2):
    M, N = x.shape
    dx, dw, db = torch.empty_like(x), torch.empty(N, dtype=x.dtype), torch.empty(N, dtype=x.dtype)
    C.layer_norm_backward(CODE[x.dtype], g.data_ptr(), x.data_ptr(), mean.data_ptr(), rstd.data_ptr(),
                          0 if w is None else w.data_ptr(), M, N, dx.data_ptr(), dw.data_ptr(), db.data_ptr(),
                          threads, reference)
    return dx, dw, db


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape", SHAPES)
def test_fast_path_equals_reference(rng, dtype, shape):
    M, N = shape
    x = torch.randn(M, N, generator=rng, dtype=dtype) * 3 + 1.5
    w = torch.randn(N, generator=rng, dtype=dtype)
    b = torch.randn(N, generator=rng, dtype=dtype)
    g = torch.randn(M, N, generator=rng, dtype=dtype)
    for wi, bi in ((w, b), (None, None), (w, None)):
        want = _c_forward(x, wi, bi, 1e-5, True)
        want_b = _c_backward(g, x, want[1], want[2], wi, True)
        for isa in available_isas():
            for threads in (1, 2, 3):
                with cpu_isa(isa):
                    got = _c_forward(x, wi, bi, 1e-5, False, threads)
                    got_b = _c_backward(g, x, want[1], want[2], wi, False, threads)
                assert_bitwise_equal(want, got, f"forward isa={isa} threads={threads}")
                assert_bitwise_equal(want_b, got_b, f"backward isa={isa} threads={threads}")


def _lane_tree_sum(terms):
    """The canonical Sum order for n <= 4096 terms, in Python with float32/64 tensors."""
    lanes = [None] * 32
    for i, t in enumerate(terms):
        lanes[i % 32] = t if lanes[i % 32] is None else lanes[i % 32] + t
    lanes = [torch.tensor(-0.0, dtype=terms[0].dtype) if v is None else v for v in lanes]
    h = 16
    while h >= 1:
        lanes = [lanes[i] + lanes[i + h] for i in range(h)] + lanes[2 * h:]
        h //= 2
    return lanes[0]


def test_reference_matches_documented_formula(rng):
    """The written formulas of docs/semantics.md, step by step with float32 scalars."""
    x = torch.randn(2, 45, generator=rng) * 2 + 0.3
    w = torch.randn(45, generator=rng)
    b = torch.randn(45, generator=rng)
    g = torch.randn(2, 45, generator=rng)
    y, mean, rstd = _c_forward(x, w, b, 1e-5, True)
    dx, dw, db = _c_backward(g, x, mean, rstd, w, True)
    eps = torch.tensor(1e-5, dtype=torch.float32)
    n = torch.tensor(45.0)
    xh_all = []
    for i in range(2):
        row = list(x[i])
        m = _lane_tree_sum(row) / n
        q = _lane_tree_sum([(v - m) * (v - m) for v in row])
        r = 1.0 / torch.sqrt(q / n + eps)
        assert_bitwise_equal(m.reshape(1), mean[i:i + 1])
        assert_bitwise_equal(r.reshape(1), rstd[i:i + 1])
        xh = [(v - m) * r for v in row]
        xh_all.append(xh)
        want = torch.stack([(xh[j] * w[j]) + b[j] for j in range(45)])
        assert_bitwise_equal(want, y[i])
        gw = [g[i, j] * w[j] for j in range(45)]
        a = _lane_tree_sum(gw) / n
        bb = _lane_tree_sum([gw[j] * xh[j] for j in range(45)]) / n
        want_dx = torch.stack([r * ((gw[j] - a) - xh[j] * bb) for j in range(45)])
        assert_bitwise_equal(want_dx, dx[i])
    want_dw = torch.stack([_lane_tree_sum([g[i, j] * xh_all[i][j] for i in range(2)]) for j in range(45)])
    assert_bitwise_equal(want_dw, dw)
    assert_bitwise_equal(torch.stack([_lane_tree_sum([g[0, j], g[1, j]]) for j in range(45)]), db)


def _ln_outputs(x, w, b, g):
    x = x.detach().requires_grad_()
    w = w.detach().requires_grad_()
    b = b.detach().requires_grad_()
    y = F.layer_norm(x, (x.shape[-1],), w, b, eps=1e-5)
    dx, dw, db = torch.autograd.grad(y, (x, w, b), g)
    return {"y": y.detach(), "dx": dx, "dw": dw, "db": db}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_invariant_to_threads_isa_and_layout(rng, dtype):
    x = torch.randn(300, 77, generator=rng, dtype=dtype) * 2 - 1
    w = torch.randn(77, generator=rng, dtype=dtype)
    b = torch.randn(77, generator=rng, dtype=dtype)
    g = torch.randn(300, 77, generator=rng, dtype=dtype)
    want = assert_invariant(_ln_outputs, x, w, b, g)
    # row i of a batch equals the op on row i alone (forward and grad_input)
    with repmode.enabled():
        for i in (0, 123, 299):
            one = _ln_outputs(x[i:i + 1], w, b, g[i:i + 1])
            assert_bitwise_equal(want["y"][i:i + 1], one["y"], f"row {i}")
            assert_bitwise_equal(want["dx"][i:i + 1], one["dx"], f"row {i} dx")


def test_multi_dim_normalized_shape_is_the_flat_row(rng):
    x = torch.randn(4, 6, 5, 7, generator=rng)
    w = torch.randn(5, 7, generator=rng)
    b = torch.randn(5, 7, generator=rng)
    with repmode.enabled():
        y = F.layer_norm(x, (5, 7), w, b)
        flat = F.layer_norm(x.reshape(24, 35), (35,), w.reshape(35), b.reshape(35))
        yt = F.layer_norm(x.transpose(0, 1).contiguous().transpose(0, 1), (5, 7), w, b)
    assert_bitwise_equal(y.reshape(24, 35), flat)
    assert_bitwise_equal(y, yt)


def test_close_to_float64(rng):
    x = torch.randn(64, 300, generator=rng) * 5 + 3
    w = torch.randn(300, generator=rng)
    b = torch.randn(300, generator=rng)
    g = torch.randn(64, 300, generator=rng)
    with repmode.enabled():
        got = _ln_outputs(x, w, b, g)
    want = _ln_outputs(x.double(), w.double(), b.double(), g.double())
    # y: a handful of roundings on O(1) values (mean/var sums of 300 terms each contribute
    # ~sqrt(300)*2^-24 relative); dw/db are sums of 64 products; dx has the cancellation of
    # gw - a - xhat*b, bounded relative to the row's |gw| scale.
    for k, tol in (("y", 2e-6), ("dw", 2e-5), ("db", 2e-5), ("dx", 2e-5)):
        scale = want[k].abs().max().item()
        err = (got[k].double() - want[k]).abs().max().item()
        assert err <= tol * max(scale, 1.0), (k, err, scale)


def test_gradients_against_float64_autograd(rng):
    x = torch.randn(6, 3, 10, generator=rng, dtype=torch.float64)
    w = torch.randn(3, 10, generator=rng, dtype=torch.float64, requires_grad=True)
    b = torch.randn(3, 10, generator=rng, dtype=torch.float64, requires_grad=True)
    xr = x.clone().requires_grad_()
    g = torch.randn(6, 3, 10, generator=rng, dtype=torch.float64)
    with repmode.enabled():
        got = torch.autograd.grad(F.layer_norm(xr, (3, 10), w, b), (xr, w, b), g)
    want = torch.autograd.grad(F.layer_norm(xr, (3, 10), w, b), (xr, w, b), g)
    for a, e in zip(got, want):
        torch.testing.assert_close(a, e, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("module", [
    lambda: nn.LayerNorm(16), lambda: nn.LayerNorm(16, bias=False), lambda: nn.LayerNorm(16, elementwise_affine=False),
    lambda: nn.LayerNorm([4, 16]), lambda: nn.RMSNorm(16), lambda: nn.RMSNorm([4, 16], eps=1e-3),
    lambda: nn.RMSNorm(16, elementwise_affine=False)])
def test_modules_strict_in_every_autograd_mode(rng, module):
    torch.manual_seed(0)
    m = module()
    x = torch.randn(3, 4, 16, generator=rng)
    with repmode.enabled():
        xr = x.clone().requires_grad_()
        y = m(xr)
        y.sum().backward()
        with torch.no_grad():
            y2 = m(x)
        with torch.inference_mode():
            y3 = m(x)
    assert_bitwise_equal(y.detach(), y2)
    assert_bitwise_equal(y2, y3)


def test_bfloat16_is_the_float32_result_rounded_once(rng):
    x = torch.randn(8, 40, generator=rng).bfloat16()
    w = torch.randn(40, generator=rng).bfloat16()
    with repmode.enabled():
        y = F.layer_norm(x, (40,), w)
        y32 = F.layer_norm(x.float(), (40,), w.float())
    assert y.dtype == torch.bfloat16
    assert_bitwise_equal(y, y32.bfloat16())


def test_errors(rng):
    x = torch.randn(3, 8, generator=rng)
    with repmode.enabled(), pytest.raises(repmode.UnsupportedOpError, match="mixed dtypes"):
        torch.ops.aten.native_layer_norm(x, [8], torch.ones(8, dtype=torch.float64), None, 1e-5)
    with repmode.enabled(), pytest.raises(repmode.UnsupportedOpError, match="dtype"):
        F.layer_norm(x.to(torch.complex64), (8,))
