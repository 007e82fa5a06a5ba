"""scatter_reduce, scatter(reduce=), index_reduce (docs/semantics.md "Indexed reductions"): each
destination folds its contributions in increasing source position, one IEEE operation each in its
dtype, starting from self (include_self) or the identity; mean divides once by the exact count;
amax/amin: NaN wins, +0 above -0. Checked bit for bit against a one-at-a-time Python replay,
against native torch where its result is unique, and for thread and layout invariance."""
from __future__ import annotations

import warnings

import pytest
import torch
from support import assert_bitwise_equal, assert_invariant, bits, num_threads

import repmode

REDUCES = ("sum", "prod", "mean", "amax", "amin")
CANON = {torch.float32: 0x7FC00000, torch.float64: 0x7FF8000000000000, torch.bfloat16: 0x7FC0,
         torch.float16: 0x7E00}


def _combine(cur: torch.Tensor, v: torch.Tensor, reduce: str) -> torch.Tensor:
    """One step of the fold on 0-dim tensors of the destination's dtype."""
    if reduce in ("sum", "mean"):
        return cur + v
    if reduce == "prod":
        return cur * v
    if torch.isnan(cur) or torch.isnan(v):
        return torch.tensor(float("nan"), dtype=cur.dtype)
    if cur == v:  # +0 above -0 for amax, -0 below +0 for amin
        if reduce == "amax":
            return v if torch.signbit(cur) else cur
        return v if torch.signbit(v) else cur
    return torch.maximum(cur, v) if reduce == "amax" else torch.minimum(cur, v)


_IDENT = {"sum": 0.0, "mean": 0.0, "prod": 1.0, "amax": float("-inf"), "amin": float("inf")}


def _replay(self: torch.Tensor, dests: list[int], values: torch.Tensor, reduce: str, include_self: bool):
    """The definition, one contribution at a time (flat destinations of a contiguous self)."""
    out = self.contiguous().clone().reshape(-1)
    count = {}
    for j, d in enumerate(dests):
        if d not in count:
            count[d] = 1 if include_self else 0
            if not include_self:
                out[d] = _IDENT[reduce]
        out[d] = _combine(out[d], values[j], reduce)
        count[d] += 1
    for d, c in count.items():
        if reduce == "mean":
            wide = torch.float64 if out.dtype == torch.float64 else torch.float32
            out[d] = (out[d].to(wide) / c).to(out.dtype)
        if torch.isnan(out[d]):
            out.view({torch.float32: torch.int32, torch.float64: torch.int64}.get(out.dtype, torch.int16))[d] = \
                CANON[out.dtype]
    return out.reshape(self.shape)


def _scatter_dests(shape, dim, index):
    strides = torch.empty(shape).stride()
    dests = []
    for pos in torch.cartesian_prod(*[torch.arange(n) for n in index.shape]).reshape(-1, index.dim()).tolist():
        d = list(pos)
        d[dim] = int(index[tuple(pos)])
        dests.append(sum(a * s for a, s in zip(d, strides)))
    return dests


def _with_specials(t: torch.Tensor) -> torch.Tensor:
    t = t.clone()
    flat = t.view(-1)
    flat[0], flat[3], flat[5] = float("nan"), -0.0, 0.0
    flat[7] = float("inf")
    return t


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.float16])
@pytest.mark.parametrize("reduce", REDUCES)
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_folds_contributions_in_source_order(dtype, reduce, include_self, rng):
    self = _with_specials(torch.randn(5, 4, generator=rng)).to(dtype)
    index = torch.randint(0, 5, (9, 4), generator=rng)
    src = _with_specials(torch.randn(10, 6, generator=rng) * 3).to(dtype)
    if reduce == "prod":
        src = src.clamp(-2, 2)
    with repmode.enabled():
        got = self.scatter_reduce(0, index, src, reduce, include_self=include_self)
        inplace = self.clone().scatter_reduce_(0, index, src, reduce, include_self=include_self)
    want = _replay(self, _scatter_dests(self.shape, 0, index), src[:9, :4].reshape(-1), reduce, include_self)
    assert_bitwise_equal(got, want, "scatter_reduce")
    assert_bitwise_equal(inplace, want, "scatter_reduce_")


@pytest.mark.parametrize("reduce", REDUCES)
@pytest.mark.parametrize("include_self", [True, False])
def test_equal_to_native_where_its_result_is_unique(reduce, include_self, rng):
    """Distinct destinations (one contribution each), and amax/amin (order-free) with repeats."""
    self = torch.randn(6, 5, generator=rng)
    distinct = torch.stack([torch.randperm(6, generator=rng)[:4] for _ in range(5)], 1)
    repeated = torch.randint(0, 6, (12, 5), generator=rng)
    src = torch.randn(12, 5, generator=rng)
    cases = [distinct] + ([repeated] if reduce in ("amax", "amin") else [])
    for index in cases:
        want = self.scatter_reduce(1 - 1, index, src, reduce, include_self=include_self)
        with repmode.enabled():
            got = self.scatter_reduce(0, index, src, reduce, include_self=include_self)
        assert_bitwise_equal(got, want, f"{reduce} {tuple(index.shape)}")


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.uint8, torch.bool])
def test_integer_and_bool_reductions_equal_native(dtype, rng):
    """Wrap-around sums and products, max/min, or/and: associative and commutative, so exact."""
    self = torch.randint(0, 100, (6, 5), generator=rng).to(dtype)
    index = torch.randint(0, 6, (20, 5), generator=rng)
    src = torch.randint(0, 100, (20, 5), generator=rng).to(dtype)
    for reduce in REDUCES:
        if dtype == torch.bool and reduce == "mean":
            continue
        for include_self in (True, False):
            want = self.scatter_reduce(0, index, src, reduce, include_self=include_self)
            with repmode.enabled():
                got = self.scatter_reduce(0, index, src, reduce, include_self=include_self)
            assert_bitwise_equal(got, want, f"{reduce} {include_self}")


def test_scatter_with_reduce_argument(rng):
    """scatter(reduce='add'|'multiply') with a source or a value: include_self folds."""
    self = torch.randn(5, 3, generator=rng)
    index = torch.randint(0, 5, (8, 3), generator=rng)
    src = torch.randn(8, 3, generator=rng)
    dests = _scatter_dests(self.shape, 0, index)
    with warnings.catch_warnings(), repmode.enabled():
        warnings.simplefilter("ignore")  # torch: the reduce argument of scatter is deprecated
        add = self.scatter(0, index, src, reduce="add")
        mul = self.scatter(0, index, src, reduce="multiply")
        mul_value = self.clone().scatter_(0, index, 1.5, reduce="multiply")
    assert_bitwise_equal(add, _replay(self, dests, src.reshape(-1), "sum", True))
    assert_bitwise_equal(mul, _replay(self, dests, src.reshape(-1), "prod", True))
    assert_bitwise_equal(mul_value, _replay(self, dests, torch.full((24,), 1.5), "prod", True))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
@pytest.mark.parametrize("reduce", ("prod", "mean", "amax", "amin"))
@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce_folds_in_source_order(dtype, reduce, include_self, rng):
    self = _with_specials(torch.randn(4, 6, generator=rng)).to(dtype)
    index = torch.tensor([5, 1, 5, 0, 1, 5, 2])
    source = _with_specials(torch.randn(4, 7, generator=rng)).to(dtype).clamp(-2, 2)
    with repmode.enabled():
        got = self.index_reduce(1, index, source, reduce, include_self=include_self)
    full = index.reshape(1, -1).expand(4, 7)
    want = _replay(self, _scatter_dests(self.shape, 1, full), source.reshape(-1), reduce, include_self)
    assert_bitwise_equal(got, want)
    if dtype == torch.float32 and reduce in ("amax", "amin"):
        assert_bitwise_equal(got, self.index_reduce(1, index, source, reduce, include_self=include_self)
                             .view(torch.int32).where(~torch.isnan(got), CANON[dtype]).view(torch.float32))


def test_index_reduce_integers_equal_native(rng):
    self = torch.randint(-50, 50, (4, 6), generator=rng)
    index = torch.tensor([5, 1, 5, 0])
    source = torch.randint(-50, 50, (4, 4), generator=rng)
    for reduce in ("prod", "mean", "amax", "amin"):
        want = self.index_reduce(1, index, source, reduce, include_self=False)
        with repmode.enabled():
            got = self.index_reduce(1, index, source, reduce, include_self=False)
        assert_bitwise_equal(got, want, reduce)


def test_mean_divides_by_the_exact_count_in_float32_for_bf16(rng):
    """300 contributions to one bf16 destination: the count (300) is exact in float32; native torch
    counts in bf16, where 256 + 1 rounds back to 256."""
    src = torch.ones(300, dtype=torch.bfloat16)
    index = torch.zeros(300, dtype=torch.int64)
    with repmode.enabled():
        got = torch.zeros(1, dtype=torch.bfloat16).scatter_reduce(0, index, src, "mean", include_self=False)
    # the sum in bf16 stops at 256 (256 + 1 rounds to 256); 256 / 300 rounded once to bf16
    assert_bitwise_equal(got, torch.tensor([256 / 300]).to(torch.bfloat16))


def test_invariant_to_threads_and_layout(rng):
    index = torch.randint(0, 40, (300, 30), generator=rng)
    rows = torch.randint(0, 30, (300,), generator=rng)

    def compute(x, y):
        base = torch.randn(40, 30, generator=torch.Generator().manual_seed(3))
        out = {f"scatter_reduce {r}": base.scatter_reduce(0, index, x, r, include_self=False) for r in REDUCES}
        out["index_reduce mean"] = torch.zeros(30, 129).index_reduce(0, rows, y, "mean")
        out["index_reduce prod"] = torch.ones(30, 129).index_reduce(0, rows, y.clamp(0.9, 1.1), "prod")
        return out
    assert_invariant(compute, torch.randn(300, 30, generator=rng), torch.randn(300, 129, generator=rng))


@pytest.mark.parametrize("reduce", REDUCES)
def test_backward_close_to_float64_and_invariant(reduce, rng):
    """The backward formulas (gather, masks, divisions) run through registered ops; ties-free data."""
    x = torch.randn(5, 4, generator=rng)
    src = torch.rand(9, 4, generator=rng) + 0.5
    index = torch.randint(0, 5, (9, 4), generator=rng)

    def grads(a, b):
        a, b = a.detach().requires_grad_(), b.detach().requires_grad_()
        (a.scatter_reduce(0, index, b, reduce, include_self=True) * torch.arange(20.).reshape(5, 4)).sum().backward()
        return {"self": a.grad, "src": b.grad}

    with num_threads(1), repmode.enabled():
        got = grads(x, src)
    with num_threads(2), repmode.enabled():
        again = grads(x, src)
    assert_bitwise_equal(got["self"], again["self"])
    assert_bitwise_equal(got["src"], again["src"])
    want = grads(x.double(), src.double())
    for k in got:
        torch.testing.assert_close(got[k].double(), want[k], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("ctx", [torch.enable_grad, torch.no_grad, torch.inference_mode])
def test_strict_mode_under_grad_modes(ctx, rng):
    x, src = torch.randn(5, 4, generator=rng), torch.randn(9, 4, generator=rng)
    index = torch.randint(0, 5, (9, 4), generator=rng)
    with ctx(), repmode.enabled():
        a = x.scatter_reduce(0, index, src, "amax")
        b = x.index_reduce(0, index[:, 0], src, "mean")
        c = x.scatter(0, index, src)
    assert a.shape == b.shape == c.shape == x.shape


def test_nan_results_are_canonical_and_errors_are_torchs(rng):
    x = torch.zeros(3)
    src = torch.tensor([float("nan"), 1.0, -float("nan")])
    src.view(torch.int32)[0] = 0x7FC00123  # a payload
    with repmode.enabled():
        got = x.scatter_reduce(0, torch.tensor([0, 1, 1]), src, "sum")
        with pytest.raises(RuntimeError, match="out of bounds"):
            x.scatter_reduce(0, torch.tensor([3]), src[:1], "sum")
        with pytest.raises(RuntimeError):
            x.scatter_reduce(0, torch.tensor([0]), src[:1], "median")
        with pytest.raises(repmode.UnsupportedOpError, match="complex"):
            torch.zeros(3, dtype=torch.complex64).scatter_reduce(0, torch.tensor([0]),
                                                                 torch.ones(1, dtype=torch.complex64), "sum")
    assert int(bits(got)[0]) == 0x7FC00000 and int(bits(got)[1]) == 0x7FC00000
