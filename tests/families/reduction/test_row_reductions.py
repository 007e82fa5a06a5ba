"""var/std/prod/max/min/arg*/logsumexp/norms/cumsum/cumprod/softmax: invariance to threads,
ISA and layout; agreement with float64; the documented edge semantics."""
from __future__ import annotations

import math

import pytest
import torch
from support import assert_bitwise_equal, assert_invariant

import repmode


def _all(x):
    return {
        "var1": x.var(1), "std0": x.std(0), "var_all": x.var(), "var_c0": x.var(1, correction=0),
        "var_mean": torch.var_mean(x, 1), "std_mean": torch.std_mean(x, 0, keepdim=True),
        "prod1": (x * 0.25 + 1).prod(1), "amax": x.amax(1), "amin0": x.amin(0), "max": x.max(),
        "min_dim": x.min(1), "max_dim": x.max(0, keepdim=True), "argmax": x.argmax(), "argmin1": x.argmin(1),
        "logsumexp": torch.logsumexp(x, 1), "norm2": x.norm(), "norm1": torch.linalg.vector_norm(x, 1, dim=1),
        "norm_inf": torch.linalg.vector_norm(x, float("inf"), dim=0), "norm3": torch.linalg.vector_norm(x, 3.0),
        "norm0": torch.linalg.vector_norm(x, 0), "cumsum": x.cumsum(1), "cumprod": (x * 0.1 + 1).cumprod(0),
        "softmax1": torch.softmax(x, 1), "softmax0": torch.softmax(x, 0),
    }


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_invariant_to_threads_isa_and_layout(rng, dtype):
    assert_invariant(_all, torch.randn(300, 129, generator=rng, dtype=dtype))


def test_close_to_float64(rng):
    x = torch.randn(200, 77, generator=rng)
    with repmode.enabled():
        got = _all(x)
    want = _all(x.double())
    for k in got:
        g, w = got[k], want[k]
        for a, b in zip(g if isinstance(g, tuple) else (g,), w if isinstance(w, tuple) else (w,)):
            if a.dtype == torch.int64:
                assert torch.equal(a, b), k
            else:
                assert torch.allclose(a.double(), b, rtol=1e-5, atol=1e-5), k


def test_rows_are_batch_invariant(rng):
    x = torch.randn(64, 500, generator=rng)
    with repmode.enabled():
        full = {"softmax": torch.softmax(x, 1), "var": x.var(1, keepdim=True), "lse": torch.logsumexp(x, 1, True)}
        for i in (0, 40):
            row = x[i:i + 1]
            assert_bitwise_equal(full["softmax"][i:i + 1], torch.softmax(row, 1))
            assert_bitwise_equal(full["var"][i:i + 1], row.var(1, keepdim=True))
            assert_bitwise_equal(full["lse"][i:i + 1], torch.logsumexp(row, 1, True))


def test_extreme_semantics():
    nan = float("nan")
    x = torch.tensor([[1.0, 3.0, 3.0, 2.0], [1.0, nan, 5.0, nan], [-0.0, 0.0, -0.0, -1.0]])
    with repmode.enabled():
        values, indices = x.max(1)
        amin = x.amin(1)
        argmax = x.argmax(1)
    assert indices.tolist() == [1, 1, 1]          # ties: lowest index; NaN wins at its first index
    assert torch.isnan(values[1]) and values[0] == 3.0
    assert math.copysign(1, values[2].item()) > 0  # +0 > -0
    assert torch.isnan(amin[1]) and amin[2] == -1.0
    assert torch.equal(argmax, indices)
    with pytest.raises(IndexError):
        with repmode.enabled():
            torch.empty(0).max(0)


def test_cumulative_is_sequential_in_a_float64_accumulator():
    """cumsum/cumprod (NUMERICS_VERSION 2): acc_j = acc_{j-1} (+|x) x_j in float64, out_j =
    round_T(acc_j); replayed with Python floats (IEEE float64) and one rounding per output."""
    import numpy as np
    x = torch.tensor([1e8, 1.0, -1e8, 1.0, 3e-8, 2.0**-30, 7.0])
    p = torch.tensor([1e20, 1e10, 1e-30, 3.0, 1 + 2.0**-23, 1 - 2.0**-24, 1e-45])
    with repmode.enabled():
        c, cp = x.cumsum(0), p.cumprod(0)
    for got, src, product in ((c, x, False), (cp, p, True)):
        acc, want = None, []
        for v in src.tolist():
            acc = v if acc is None else (acc * v if product else acc + v)
            want.append(float(np.float32(acc)))
        assert got.tolist() == want, (product, got.tolist(), want)
    # a float32 accumulator would have lost the 1.0 under 1e8: out_2 = 0, not 1
    assert c[2].item() == 1.0 and c[3].item() == 2.0
    xd = x.double()
    with repmode.enabled():
        cd = xd.cumsum(0)
    acc, want = None, []
    for v in xd.tolist():  # float64 data: the accumulator is the data's type, as before
        acc = v if acc is None else acc + v
        want.append(acc)
    assert cd.tolist() == want


def test_cumsum_float32_at_least_as_accurate_as_native():
    """docs/design.md §8 on the case of issue 23: a (20, 3000) float32 cumsum's max error against
    float64 is at most native torch's (a float32 accumulator was 16x worse)."""
    for shift in (0.0, 1.0):
        x = torch.randn(20, 3000, generator=torch.Generator().manual_seed(23)) + shift
        ref = x.double().cumsum(1)
        with repmode.enabled():
            got = x.cumsum(1)
            got_prod = (1 + 1e-3 * x).cumprod(1)
        native = x.cumsum(1)
        assert (got.double() - ref).abs().max() <= (native.double() - ref).abs().max()
        y = 1 + 1e-3 * x
        ref_p, native_p = y.double().cumprod(1), y.cumprod(1)
        assert (got_prod.double() - ref_p).abs().max() <= (native_p.double() - ref_p).abs().max()


def test_var_std_of_large_means_accumulate_in_float64():
    """var/std/var_mean of float32 take the mean and the squared deviations in float64 and round
    once (NUMERICS_VERSION 2): within 2x native's error at means 1e4 and 1e6 (a float32 mean was
    9x and 2,000x worse), and exactly the float64 formula rounded to float32."""
    g = torch.Generator().manual_seed(7)
    for mean in (1e4, 1e6):
        x = mean + torch.randn(8, 5000, generator=g)
        ref = x.double().var(1)
        with repmode.enabled():
            got, got_std = x.var(1), x.std(1)
            v64, m64 = torch.var_mean(x.double(), 1)
            vm, mm = torch.var_mean(x, 1)
        native = x.var(1)
        err = lambda y: ((y.double() - ref).abs() / ref).max().item()  # noqa: E731
        assert err(got) <= 2 * max(err(native), 2.0**-24)
        assert_bitwise_equal(got, v64.float(), "var = round_f32(the float64 formula)")
        assert_bitwise_equal(vm, got, "var_mean's var")
        assert_bitwise_equal(mm, m64.float(), "mean = round_f32(float64 mean)")
        assert_bitwise_equal(got_std, v64.sqrt().float(), "std = round_f32(sqrt64(var64))")


def test_softmax_gradients_and_safe_softmax(rng):
    x = torch.randn(30, 12, generator=rng, requires_grad=True)
    weights = torch.arange(12.0)
    with repmode.enabled():
        (torch.softmax(x, 1) * weights).sum().backward()
    x64 = x.detach().double().requires_grad_()
    (torch.softmax(x64, 1) * torch.arange(12.0, dtype=torch.float64)).sum().backward()
    assert torch.allclose(x.grad.double(), x64.grad, atol=1e-6)
    masked = torch.full((2, 3), float("-inf"))
    masked[0, 1] = 0.0
    with repmode.enabled():
        y = torch.ops.aten._safe_softmax(masked, 1)
    assert y.tolist() == [[0.0, 1.0, 0.0], [0.0, 0.0, 0.0]]


def test_var_std_gradients(rng):
    x = torch.randn(20, 9, generator=rng, requires_grad=True)
    with repmode.enabled():
        (x.var(1).sum() + x.std(0).sum() + torch.logsumexp(x, 1).sum() + x.norm() + x.amax(1).sum()).backward()
    x64 = x.detach().double().requires_grad_()
    (x64.var(1).sum() + x64.std(0).sum() + torch.logsumexp(x64, 1).sum() + x64.norm() + x64.amax(1).sum()).backward()
    assert torch.allclose(x.grad.double(), x64.grad, atol=1e-5)


@pytest.mark.parametrize("n", [1, 7, 33, 4097, 9000])
def test_contiguous_row_path_equals_strided_reference(rng, n):
    """Softmax, log_softmax and logsumexp over the last dim take the one-pass exp-and-sum path
    (SIMD lanes, blends for over/underflow, scalar fixups); over dim 0 of the transposed copy
    the plain row formula. Both must give the same bits, also on rows with -inf masks, NaN,
    ties at the maximum and a spread wide enough to reach the underflow and subnormal ranges."""
    x = torch.randn(8, n, generator=rng) * 4
    x[1, ::3] = float("-inf")
    x[2] *= 30
    x[3, n // 2] = float("nan")
    x[4] = 0.0
    x[5] = float("-inf")
    x[6, : (n + 1) // 2] = torch.linspace(-110.0, -80.0, (n + 1) // 2)
    xt = x.t().contiguous()
    with repmode.enabled():
        for fn in (torch.softmax, torch.log_softmax):
            assert_bitwise_equal(fn(x, 1), fn(xt, 0).t(), fn.__name__)
        assert_bitwise_equal(torch.logsumexp(x, 1), torch.logsumexp(xt, 0), "logsumexp")
        safe = torch.ops.aten._safe_softmax(x, 1)
        assert_bitwise_equal(safe, torch.ops.aten._safe_softmax(xt, 0).t())
        assert (safe[5] == 0).all()


def _low_ops(x):
    return {
        "sum": x.sum(), "sum1": x.sum(1), "mean0": x.mean(0), "var": x.var(1), "std_mean": torch.std_mean(x, 0),
        "amax": x.amax(1), "max": x.max(1), "logsumexp": torch.logsumexp(x, 1), "norm": x.norm(),
        "cumsum": x.cumsum(1), "softmax": torch.softmax(x, 1), "log_softmax": torch.log_softmax(x, 1),
        "mul": x * 3, "add": x + x.flip(0), "exp": torch.exp(x),
    }


@pytest.mark.parametrize("low", [torch.bfloat16, torch.float16])
def test_low_precision_accumulates_in_float32_and_rounds_once(rng, low):
    x = (torch.randn(70, 300, generator=rng) * 2).to(low)
    got = assert_invariant(_low_ops, x)
    with repmode.enabled():
        wide = _low_ops(x.float())
    native = _low_ops(x)
    for k in got:
        g = got[k] if isinstance(got[k], tuple) else (got[k],)
        w = wide[k] if isinstance(wide[k], tuple) else (wide[k],)
        n = native[k] if isinstance(native[k], tuple) else (native[k],)
        for a, b, c in zip(g, w, n):
            assert a.dtype == c.dtype, k  # the same result dtype as torch
            expected = b if b.dtype == torch.int64 else b.to(low)
            assert_bitwise_equal(a, expected, f"{k}: float32 result rounded once")


def test_staged_row_paths_agree_on_zero_and_nan_maxima():
    """The staged softmax rows take their maximum with SIMD lanes (the sign of a zero maximum may
    differ from the reference fold); outputs must still equal the reference path bit for bit."""
    n = 21  # two SIMD blocks and a tail
    rows = []
    for lead in ([-0.0], [0.0], [-0.0, 0.0], [0.0, -0.0], [-0.0, -0.0]):
        row = [-200.0 - j for j in range(n)]
        row[3:3 + len(lead)] = lead
        rows.append(row)
    nan_row = [0.5 * j for j in range(n)]
    nan_row[5] = float("nan")
    tail_nan = [0.5 * j for j in range(n)]
    tail_nan[-1] = float("nan")
    rows += [nan_row, tail_nan, [float("-inf")] * n]
    x = torch.tensor(rows)
    xt = x.t().contiguous()
    with repmode.enabled():
        for fn in (torch.softmax, torch.log_softmax):
            assert_bitwise_equal(fn(x, 1), fn(xt, 0).t(), fn.__name__)
        assert_bitwise_equal(torch.ops.aten._safe_softmax(x, 1), torch.ops.aten._safe_softmax(xt, 0).t())


def test_norm_and_cumprod_gradients(rng):
    """General-p norms (their backward needs pow) and cumprod (its backward needs scatter with a
    value) train in strict mode, invariant to threads, ISA path and layout."""
    x = torch.randn(24, 40, generator=rng)
    x[3, 5] = 0.0  # cumprod's backward takes its zero-handling branch

    def grads(t):
        out = {}
        for name, fn in (("norm3", lambda v: torch.linalg.vector_norm(v, ord=3, dim=1)),
                         ("norm_half", lambda v: torch.linalg.vector_norm(v, ord=0.5, dim=0)),
                         ("norm_inf", lambda v: torch.linalg.vector_norm(v, ord=float("inf"), dim=1)),
                         ("cumprod", lambda v: torch.cumprod(v * 0.5, dim=1))):
            leaf = t.detach().requires_grad_()
            fn(leaf).sum().backward()
            out[name] = leaf.grad
        return out

    got = assert_invariant(grads, x)
    for name, fn in (("norm3", lambda v: torch.linalg.vector_norm(v, ord=3, dim=1)),
                     ("cumprod", lambda v: torch.cumprod(v * 0.5, dim=1))):
        leaf = x.double().requires_grad_()
        fn(leaf).sum().backward()
        assert torch.allclose(got[name].double(), leaf.grad, rtol=1e-5, atol=1e-6), name


def test_max_min_dim_gradients_and_scatter(rng):
    """max(dim)/min(dim) train in strict mode (their backward scatters the gradient to the
    selected index, one write per destination) and are invariant; scatter with a source
    copies bits; colliding indices keep the last write in index order."""
    x = torch.randn(30, 17, generator=rng)
    x[4, 2] = x[4, 9] = 50.0  # a tie: the lowest index is selected and gets the gradient

    def grads(t):
        out = {}
        for name, fn in (("max1", lambda v: v.max(1).values), ("min0", lambda v: v.min(0, keepdim=True).values),
                         ("amax_ties", lambda v: v.amax(1))):
            leaf = t.detach().requires_grad_()
            (fn(leaf) * 3).sum().backward()
            out[name] = leaf.grad
        return out

    got = assert_invariant(grads, x)
    want = torch.zeros_like(x)
    want[torch.arange(30), x.argmax(1)] = 3.0
    assert_bitwise_equal(got["max1"], want, "max(1) gradient")
    assert got["max1"][4, 2] == 3.0 and got["max1"][4, 9] == 0.0

    src = torch.randn(3, 4, generator=rng)
    distinct = torch.tensor([[2, 0, 1, 3], [1, 3, 0, 2], [0, 1, 2, 3]])
    base = torch.zeros(3, 4)
    with repmode.enabled():
        got = base.scatter(1, distinct, src)
        collided = base.scatter(1, torch.tensor([[0, 0, 1, 0]]), src[:1])
    assert_bitwise_equal(got, base.scatter(1, distinct, src), "scatter with distinct indices")
    want = base.clone()
    want[0, 0], want[0, 1] = src[0, 3], src[0, 2]  # the last write in index order wins
    assert_bitwise_equal(collided, want, "scatter with colliding indices")


def test_kernels_called_directly_with_empty_rows_do_not_read_past_their_inputs():
    """The Python families refuse or special-case empty reductions first (as torch does); the C++
    kernels themselves must still be safe there (their CUDA twins are tested against them)."""
    from repmode._ext import C
    x = torch.empty(5, 0)
    values, indices = torch.full((5,), 7.0), torch.full((5,), -7, dtype=torch.int64)
    C.extreme_rows(0, x.data_ptr(), 5, 0, 0, 1, True, values.data_ptr(), indices.data_ptr(), 2)
    assert torch.equal(values, torch.full((5,), 7.0)) and torch.equal(indices, torch.full((5,), -7))  # untouched
    g, xs = torch.empty(0, 3), torch.empty(0, 3)
    mean, rstd = torch.empty(0), torch.empty(0)
    dw, db = torch.full((3,), 7.0), torch.full((3,), 7.0)
    C.layer_norm_backward(0, g.data_ptr(), xs.data_ptr(), mean.data_ptr(), rstd.data_ptr(), 0, 0, 3, 0,
                          dw.data_ptr(), db.data_ptr(), 2, False)
    assert torch.equal(dw, torch.zeros(3)) and torch.equal(db, torch.zeros(3))  # the empty sum, +0.0
