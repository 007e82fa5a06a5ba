"""nansum/nanmean, std/var with every correction, dist, renorm and linalg.cross
(docs/semantics.md "More elementwise functions"): each equals its stated definition over
repmode's own ops bit for bit, is as accurate as native torch against float64, and is invariant
to the thread count and the layout."""
from __future__ import annotations

import math

import pytest
import torch
from support import assert_bitwise_equal, assert_invariant, num_threads

import repmode


def _data(shape, seed=0, nan_fraction=0.1):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g) * torch.exp2(torch.randint(-6, 7, shape, generator=g).float())
    return torch.where(torch.rand(shape, generator=g) < nan_fraction, torch.tensor(math.nan), x)


def _rel_err(got, want64):
    want64 = want64.double()
    return float(((got.double() - want64).abs() / want64.abs().clamp(min=1e-30)).nan_to_num(0.0).max())


@pytest.mark.parametrize("dims, keepdim", [(None, False), ([1], False), ([0], True), ([0, 2], False), ([], False)])
def test_nansum_is_the_sum_with_nan_as_zero(dims, keepdim):
    x = _data((40, 70, 30))
    with repmode.enabled():
        got = torch.nansum(x) if dims is None else torch.nansum(x, dims, keepdim=keepdim)
        want = torch.sum(torch.where(torch.isnan(x), 0.0, x), [] if dims is None else dims, keepdim=keepdim)
    assert_bitwise_equal(got, want)
    # error normwise (over the sum of |x|, the scale of a sum's rounding errors): within the sum
    # order's bound ("Sum order"), as native's
    def err(t):
        f64 = x.double()
        exact = torch.nansum(f64) if dims is None else torch.nansum(f64, dims, keepdim=keepdim)
        scale = torch.nansum(f64.abs()) if dims is None else torch.nansum(f64.abs(), dims, keepdim=keepdim)
        return float(((t.double() - exact).abs() / scale.clamp(min=1e-30)).max())
    native = torch.nansum(x) if dims is None else torch.nansum(x, dims, keepdim=keepdim)
    assert err(got) <= max(err(native), 4 * 2.0 ** -24)


def test_nansum_and_nanmean_thread_and_layout_invariance_and_dtypes():
    x = _data((300, 400), seed=2)

    def compute(t):  # (support.layouts compares with torch.equal: the NaNs are made inside, by value)
        t = torch.where(t.abs() > 20, math.nan, t)
        return {"s": torch.nansum(t), "s0": torch.nansum(t, 0), "m": torch.nanmean(t, 1),
                "m_all": torch.nanmean(t), "d": torch.nansum(t, 1, dtype=torch.float64)}
    assert_invariant(compute, x.nan_to_num(0.0))
    with repmode.enabled():
        m = torch.nanmean(x, 1)
        bf = torch.nansum(x.bfloat16(), 0)
        ints = torch.nansum(torch.arange(10).reshape(2, 5), 1)
        out = torch.empty(0)
        torch.nansum(x, 0, out=out)
    count = (~torch.isnan(x)).sum(1)
    with repmode.enabled():
        want = torch.nansum(x, 1) / count
    assert_bitwise_equal(m, want)
    assert bf.dtype == torch.bfloat16 and ints.tolist() == [10, 35]
    with repmode.enabled():
        assert_bitwise_equal(out, torch.nansum(x, 0))


def test_all_nan_rows_give_zero_and_nanmean_nan():
    x = torch.full((3, 4), math.nan)
    with repmode.enabled():
        assert torch.nansum(x, 1).tolist() == [0.0, 0.0, 0.0]
        assert torch.isnan(torch.nanmean(x, 1)).all()


@pytest.mark.parametrize("correction", [0, 1, 2, 0.5, 37, 40, 45])
@pytest.mark.parametrize("fn", ["var", "std", "var_mean", "std_mean"])
def test_std_var_every_correction_as_accurate_as_native(fn, correction):
    g = torch.Generator().manual_seed(3)
    x = torch.randn(20, 40, generator=g) * 3 + 100
    op = getattr(torch, fn)
    with repmode.enabled():
        got = op(x, 1, correction=correction)
        got_all = op(x, correction=correction)
    for ours, native, exact in ((got, op(x, 1, correction=correction), op(x.double(), 1, correction=correction)),
                                (got_all, op(x, correction=correction), op(x.double(), correction=correction))):
        ours, native, exact = (t if isinstance(t, tuple) else (t,) for t in (ours, native, exact))
        for o, n, e in zip(ours, native, exact):
            assert torch.equal(torch.isnan(o), torch.isnan(e)) and torch.equal(torch.isinf(o), torch.isinf(e))
            assert _rel_err(o, e) <= max(_rel_err(n, e), 2.0 ** -23)


@pytest.mark.parametrize("p", [0, 1, 2, 3, 1.5, math.inf, -math.inf])
def test_dist_is_vector_norm_of_the_difference(p):
    g = torch.Generator().manual_seed(4)
    a, b = torch.randn(30, 50, generator=g), torch.randn(30, 50, generator=g)
    with repmode.enabled():
        got = torch.dist(a, b, p)
        want = torch.linalg.vector_norm(a - b, p)
    assert_bitwise_equal(got, want)
    exact = torch.dist(a.double(), b.double(), p)
    assert _rel_err(got, exact) <= max(_rel_err(torch.dist(a, b, p), exact), 2.0 ** -23)


def test_dist_gradient_and_invariance():
    g = torch.Generator().manual_seed(5)
    a, b = torch.randn(300, 200, generator=g), torch.randn(300, 200, generator=g)
    assert_invariant(lambda x, y: {"d2": torch.dist(x, y), "d3": torch.dist(x, y, 3)}, a, b)
    x = a.clone().requires_grad_()
    with repmode.enabled():
        torch.dist(x, b, 3).backward()
    x64 = a.double().requires_grad_()
    torch.dist(x64, b.double(), 3).backward()
    assert torch.allclose(x.grad.double(), x64.grad, rtol=1e-4, atol=1e-9)


@pytest.mark.parametrize("p, dim, maxnorm", [(2, 0, 1.0), (1, 1, 5.0), (3, -1, 0.5), (2, 1, 100.0)])
def test_renorm_matches_native_definition(p, dim, maxnorm):
    g = torch.Generator().manual_seed(6)
    x = torch.randn(8, 16, 5, generator=g) * 2
    with repmode.enabled():
        got = torch.renorm(x, p, dim, maxnorm)
        y = x.clone()
        y.renorm_(p, dim, maxnorm)
    assert_bitwise_equal(y, got)
    native = torch.renorm(x, p, dim, maxnorm)
    exact = torch.renorm(x.double(), p, dim, maxnorm)
    assert _rel_err(got, exact) <= max(_rel_err(native, exact), 2.0 ** -23) * 2
    x16 = x.bfloat16()
    with repmode.enabled():
        got16 = torch.renorm(x16, p, dim, maxnorm)
    assert got16.dtype == torch.bfloat16
    assert torch.allclose(got16.float(), torch.renorm(x16, p, dim, maxnorm).float(), rtol=1e-2, atol=1e-3)


def test_renorm_invariance_and_gradient():
    g = torch.Generator().manual_seed(7)
    x = torch.randn(300, 200, generator=g)
    assert_invariant(lambda t: {"r": torch.renorm(t, 2, 0, 3.0)}, x)
    xg = x[:20, :10].clone().requires_grad_()
    with repmode.enabled():
        torch.renorm(xg, 2, 0, 1.0).sum().backward()
    x64 = x[:20, :10].double().requires_grad_()
    torch.renorm(x64, 2, 0, 1.0).sum().backward()
    assert torch.allclose(xg.grad.double(), x64.grad, rtol=1e-4, atol=1e-6)


def _cross_formula(a, b, dim):
    i = [(k + 1) % 3 for k in range(3)], [(k + 2) % 3 for k in range(3)]
    a1, a2 = a.index_select(dim, torch.tensor(i[0])), a.index_select(dim, torch.tensor(i[1]))
    b1, b2 = b.index_select(dim, torch.tensor(i[0])), b.index_select(dim, torch.tensor(i[1]))
    return a1 * b2 - a2 * b1


def test_cross_float32_is_the_float64_difference_rounded_once():
    g = torch.Generator().manual_seed(8)
    a, b = torch.randn(500, 3, generator=g), torch.randn(500, 3, generator=g)
    b[:50] = a[:50] * 2 + torch.randn(50, 3, generator=g) * 1e-6  # nearly parallel: cancellation
    with repmode.enabled():
        got = torch.linalg.cross(a, b)
        got_cross = torch.cross(a, b, dim=1)
    want = _cross_formula(a.double(), b.double(), 1).float()  # exact products, one rounding, then one more
    assert_bitwise_equal(got, want)
    assert_bitwise_equal(got_cross, want)
    exact = _cross_formula(a.double(), b.double(), 1)
    assert _rel_err(got, exact) <= max(_rel_err(torch.linalg.cross(a, b), exact), 2.0 ** -23)


def test_cross_float64_broadcast_dims_ints_and_grad():
    g = torch.Generator().manual_seed(9)
    a = torch.randn(4, 3, 7, generator=g, dtype=torch.float64)
    b = torch.randn(1, 3, 7, generator=g, dtype=torch.float64)
    with repmode.enabled():
        got = torch.linalg.cross(a, b, dim=1)
        ints = torch.linalg.cross(torch.tensor([1, 2, 3]), torch.tensor([4, 5, 6]))
        out = torch.empty(0, dtype=torch.float64)
        torch.linalg.cross(a, b, dim=1, out=out)
    assert_bitwise_equal(got, _cross_formula(a, b.expand_as(a), 1))
    assert_bitwise_equal(out, got)
    assert ints.tolist() == [-3, 6, -3]
    x, y = a.float().requires_grad_(), b.float().requires_grad_()
    with repmode.enabled():
        torch.linalg.cross(x, y, dim=1).sum().backward()
    x64, y64 = a.clone().requires_grad_(), b.clone().requires_grad_()
    torch.linalg.cross(x64, y64, dim=1).sum().backward()
    assert torch.allclose(x.grad.double(), x64.grad, rtol=1e-5, atol=1e-6)
    assert torch.allclose(y.grad.double(), y64.grad, rtol=1e-5, atol=1e-5)
    big_a, big_b = torch.randn(200, 3, 300, generator=g), torch.randn(200, 3, 300, generator=g)
    for threads in (1, 2):
        with num_threads(threads), repmode.enabled():
            r = torch.linalg.cross(big_a, big_b, dim=1)
        if threads == 1:
            first = r
        assert_bitwise_equal(r, first)


def test_foreach_forms_run_their_single_tensor_op():
    g = torch.Generator().manual_seed(10)
    xs = [torch.randn(5, generator=g) * 4 for _ in range(3)]
    with repmode.enabled():
        got = torch._foreach_frac(xs)
        want = [torch.frac(x) for x in xs]
        ys = [x.clone() for x in xs]
        torch._foreach_frac_(ys)
    for a, b, c in zip(got, want, ys):
        assert_bitwise_equal(a, b)
        assert_bitwise_equal(c, b)


def test_norm_overloads_are_vector_norm():
    g = torch.Generator().manual_seed(11)
    x = torch.randn(30, 40, generator=g)
    aten = torch.ops.aten
    with repmode.enabled():
        cases = [
            (aten.norm.Scalar(x, 3), torch.linalg.vector_norm(x, 3)),
            (aten.norm.ScalarOpt_dim(x, None, [1]), torch.linalg.vector_norm(x, 2, [1])),
            (aten.norm.ScalarOpt_dim(x, 1.5, [0], True), torch.linalg.vector_norm(x, 1.5, [0], True)),
            (aten.norm.ScalarOpt_dim_dtype(x, 2, [1], False, dtype=torch.float64),
             torch.linalg.vector_norm(x, 2, [1], dtype=torch.float64)),
            (torch.norm(x.bfloat16(), p=1), torch.linalg.vector_norm(x.bfloat16(), 1)),
            (torch.nn.functional.pairwise_distance(x, x.flip(0)),
             torch.linalg.vector_norm(x - x.flip(0) + 1e-6, 2, [-1])),
        ]
        out = torch.empty(0)
        torch.norm(x, 2, dim=1, out=out)
        cases.append((out, torch.linalg.vector_norm(x, 2, [1])))
    for got, want in cases:
        assert_bitwise_equal(got, want)
    with num_threads(1), repmode.enabled():
        one = torch.norm(torch.randn(300, 400, generator=g), dim=1)
    g = torch.Generator().manual_seed(11)
    torch.randn(30, 40, generator=g)
    with num_threads(2), repmode.enabled():
        two = torch.norm(torch.randn(300, 400, generator=g), dim=1)
    assert_bitwise_equal(one, two)
