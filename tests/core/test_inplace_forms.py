"""In-place overloads derived from their functional ones (registry.register_inplace_forms): the
result equals the functional result written into self, bit for bit; torch's shape and dtype errors
are kept; inputs aliasing self are read before the write."""
from __future__ import annotations

import pytest
import torch
from support import assert_bitwise_equal, num_threads

import repmode
from repmode.registry import REGISTRY, functional_of_inplace

aten = torch.ops.aten

DERIVED = [aten.addmv_.default, aten.addr_.default, aten.baddbmm_.default, aten.addbmm_.default,
           aten.cumsum_.default, aten.cumprod_.default, aten.xlogy_.Tensor, aten.xlogy_.Scalar_Other]


def test_derived_forms_are_registered_beside_their_functional_form():
    repmode.registrations()  # loads the kernel families
    for op in DERIVED:
        reg, fun = REGISTRY[op], REGISTRY[functional_of_inplace(op)]
        assert (reg.kind, reg.family, reg.dtypes) == (fun.kind, fun.family, fun.dtypes), op


def _cases():
    g = torch.Generator().manual_seed(7)

    def r(*shape):
        return torch.randn(*shape, generator=g)
    # (in-place method, self, args, kwargs)
    return [
        ("addmv_", r(5), (r(5, 300), r(300)), {"beta": 0.5, "alpha": 2.0}),
        ("addr_", r(4, 6), (r(4), r(6)), {"alpha": 3.0}),
        ("baddbmm_", r(3, 4, 5), (r(3, 4, 270), r(3, 270, 5)), {}),
        ("addbmm_", r(4, 5), (r(3, 4, 100), r(3, 100, 5)), {"beta": 2.0}),
        ("cumsum_", r(6, 700), (1,), {}),
        ("cumprod_", 1 + 0.01 * r(50, 3), (0,), {}),
        ("xlogy_", torch.cat([r(3, 5), torch.zeros(1, 5)]), (r(4, 5).abs(),), {}),
    ]


@pytest.mark.parametrize("name,x,args,kwargs", _cases(), ids=[c[0] for c in _cases()])
def test_inplace_equals_functional(name, x, args, kwargs):
    inplace = x.clone()
    with repmode.enabled():
        got = getattr(inplace, name)(*args, **kwargs)
        want = getattr(torch.Tensor, name[:-1])(x.clone(), *args, **kwargs)
    assert got is inplace
    assert_bitwise_equal(inplace, want, name)
    with num_threads(1), repmode.enabled():
        one = getattr(x.clone(), name)(*args, **kwargs)
    assert_bitwise_equal(one, inplace, f"{name} at 1 thread")


def test_inplace_keeps_torch_errors():
    with repmode.enabled():
        with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
            torch.zeros(1).xlogy_(torch.ones(3))
        with pytest.raises(RuntimeError, match="can't be cast"):
            torch.ones(3, dtype=torch.int64).xlogy_(torch.full((3,), 2.0))


def test_inplace_reads_aliased_inputs_before_writing():
    x = torch.randn(8, 8, generator=torch.Generator().manual_seed(1))
    with repmode.enabled():
        want = torch.addmm(x, x, x)
        got = x.clone()
        got.addmm_(got, got)
        y = x.clone()[None]
        y.baddbmm_(y, y)
    assert_bitwise_equal(got, want)
    with repmode.enabled():
        assert_bitwise_equal(y, torch.baddbmm(x[None], x[None], x[None]))


def test_comparisons_in_place_write_zero_one():
    a = torch.tensor([1.0, float("nan"), -0.0, 2.0])
    b = torch.tensor([1.0, float("nan"), 0.0, 3.0])
    for name in ("eq_", "ne_", "lt_", "le_", "gt_", "ge_", "logical_xor_"):
        want = getattr(a.clone(), name)(b)
        with repmode.enabled():
            got = getattr(a.clone(), name)(b)
        assert_bitwise_equal(got, want, name)


def test_foreach_pow_inplace_equals_pow_():
    xs = [torch.rand(5) + 0.5, torch.rand(3, 2) + 0.5]
    with repmode.enabled():
        got = [x.clone() for x in xs]
        torch._foreach_pow_(got, 2.5)
        got_list = [x.clone() for x in xs]
        torch._foreach_pow_(got_list, [x.clone() for x in xs])
        for x, g, gl in zip(xs, got, got_list):
            assert_bitwise_equal(g, torch.pow(x, 2.5))
            assert_bitwise_equal(gl, torch.pow(x, x))


def test_addbmm_is_one_product_over_the_joined_k():
    g = torch.Generator().manual_seed(3)
    b1, b2, c = torch.randn(4, 3, 300, generator=g), torch.randn(4, 300, 5, generator=g), torch.randn(3, 5, generator=g)
    with repmode.enabled():
        got = torch.addbmm(c, b1, b2, beta=0.5, alpha=2.0)
        joined = torch.addmm(c, b1.permute(1, 0, 2).reshape(3, 1200), b2.reshape(1200, 5), beta=0.5, alpha=2.0)
    assert_bitwise_equal(got, joined)
    ref = 0.5 * c.double() + 2.0 * (b1.double() @ b2.double()).sum(0)
    native = torch.addbmm(c, b1, b2, beta=0.5, alpha=2.0)
    assert (got.double() - ref).abs().max() <= 1.5 * max((native.double() - ref).abs().max().item(), 2e-6)


def test_angle_of_real_tensors():
    x = torch.tensor([-0.0, 0.0, -1.0, float("nan"), -float("inf"), 2.0, float("inf")])
    nan = torch.isnan(x)
    for dt in (torch.float32, torch.float64, torch.bfloat16):
        with repmode.enabled():
            got = torch.angle(x.to(dt))
            canonical = torch.tensor(float("nan"), dtype=dt) + 0  # the canonical NaN of dt (repmode's add)
        want = torch.angle(x.to(dt))
        assert_bitwise_equal(got[~nan], want[~nan], str(dt))
        assert_bitwise_equal(got[nan], canonical.expand(int(nan.sum())), f"{dt} NaN")
    i = torch.tensor([-3, 0, 4])
    with repmode.enabled():
        assert_bitwise_equal(torch.angle(i), torch.angle(i))


def test_avg_pool_negative_divisor_override():
    x = torch.randn(2, 3, 6, 6, generator=torch.Generator().manual_seed(5), requires_grad=True)
    with repmode.enabled():
        y = torch.nn.functional.avg_pool2d(x, 2, divisor_override=-3)
        (gx,) = torch.autograd.grad(y.sum(), x)
        pos = torch.nn.functional.avg_pool2d(x, 2, divisor_override=3)
    assert_bitwise_equal(y, -pos)
    assert torch.allclose(y, torch.nn.functional.avg_pool2d(x, 2, divisor_override=-3), rtol=1e-6, atol=1e-7)
    assert_bitwise_equal(gx, torch.full_like(x, -1 / 3))


def test_allclose_follows_isclose():
    a = torch.tensor([1.0, float("nan"), 2.0, float("inf"), 1e-3])
    cases = [(a, a.clone(), {}), (a, a.clone(), {"equal_nan": True}),
             (a[2:], a[2:] * (1 + 1e-6), {}), (a[2:], a[2:] + 1e-2, {"rtol": 0.0, "atol": 1e-2}),
             (torch.tensor([1, 2]), torch.tensor([1, 3]), {"atol": 1}), (a[:1], a[:1] + 0.5, {"rtol": 0, "atol": 0})]
    for x, y, kw in cases:
        with repmode.enabled():
            got = torch.allclose(x, y, **kw)
        assert got is torch.allclose(x, y, **kw), (x, y, kw)
