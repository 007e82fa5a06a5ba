"""The elementwise op family beyond plain arithmetic: activations, their backward formulas,
clamps, pow, lerp, addcmul/addcdiv — each within one float32 ulp of a float64 reference, bitwise
invariant to threads, ISA path and layout, in every dtype, with defined special values."""
from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from support import assert_bitwise_equal, assert_invariant, bits, ulp_distance_f32

import repmode

aten = torch.ops.aten
CANONICAL_NAN = 0x7FC00000


def _inputs(n=4096, seed=5):
    g = torch.Generator().manual_seed(seed)
    specials = torch.tensor([0.0, -0.0, 30.0, -30.0, 1e-30, -1e-30, 88.0, -90.0])
    x = torch.cat([torch.randn(n - 8, generator=g) * 6, specials])
    grad = torch.randn(n, generator=g)
    w = torch.rand(n, generator=g)
    return x, grad, w


def _sig(t):
    return torch.sigmoid(t)


# name -> (repmode op on float32 tensors, float64 reference on the same values)
FORWARD = {
    "gelu": (lambda x: F.gelu(x), lambda x: 0.5 * x * torch.special.erfc(-x / math.sqrt(2))),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"),
                  lambda x: x * _sig(2 * math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3))),
    "silu": (F.silu, lambda x: x * _sig(x)),
    "mish": (F.mish, lambda x: x * torch.tanh(F.softplus(x, threshold=1000))),
    "softplus": (lambda x: F.softplus(x, beta=2.0, threshold=10.0),
                 lambda x: torch.where(x * 2 > 10, x, torch.log1p(torch.exp(x * 2)) / 2)),
    "elu": (lambda x: F.elu(x, alpha=0.7), lambda x: torch.where(x > 0, x, 0.7 * torch.expm1(x))),
    "selu": (F.selu, lambda x: 1.0507009873554805 * torch.where(x > 0, x, 1.6732632423543772 * torch.expm1(x))),
    "leaky_relu": (lambda x: F.leaky_relu(x, 0.1), lambda x: torch.where(x > 0, x, x * 0.1)),
    "hardtanh": (lambda x: F.hardtanh(x, -2.0, 3.0), lambda x: x.clamp(-2.0, 3.0)),
    "relu6": (F.relu6, lambda x: x.clamp(0.0, 6.0)),
}


@pytest.mark.parametrize("name", sorted(FORWARD))
def test_forward_within_one_ulp_of_float64(name):
    op, ref = FORWARD[name]
    x, _, _ = _inputs()
    with repmode.enabled():
        got = op(x)
    want = ref(x.double()).float()
    d = ulp_distance_f32(got, want)
    assert int(d.max()) <= 1, f"{name}: {int(d.max())} ulps at x = {float(x[d.argmax()])}"


# Forward formulas whose float64 autograd is accurate where FORWARD's is not (autograd of
# expm1 uses expm1(x) + 1, which cancels for x << 0).
BACKWARD_FORMS = {
    "elu": lambda x: torch.where(x > 0, x, 0.7 * (torch.exp(x) - 1)),
    "selu": lambda x: 1.0507009873554805 * torch.where(x > 0, x, 1.6732632423543772 * (torch.exp(x) - 1)),
}


def _backward_reference(name, x, g):
    """d/dx of FORWARD[name] in float64 by autograd on an accurate float64 formula."""
    xd = x.double().requires_grad_()
    BACKWARD_FORMS.get(name, FORWARD[name][1])(xd).backward(g.double())
    return xd.grad


@pytest.mark.parametrize("name", ["gelu", "gelu_tanh", "silu", "mish", "softplus", "elu", "selu", "leaky_relu"])
def test_backward_within_one_ulp_of_float64(name):
    x, g, _ = _inputs()
    x = x[2:-6]  # not at the kinks (0) and not where float64 autograd of the reference overflows
    g = g[2:-6]
    xr = x.clone().requires_grad_()
    with repmode.enabled():
        FORWARD[name][0](xr).backward(g)
    want = _backward_reference(name, x, g).float()
    d = ulp_distance_f32(xr.grad, want)
    # One ulp, or an absolute error below 2^-60 where the derivative nearly vanishes.
    ok = (d <= 1) | ((xr.grad.double() - want.double()).abs() < 2.0 ** -60)
    assert ok.all(), f"{name}: {int(d[~ok].max())} ulps at x = {float(x[~ok][0])}"


def test_tanh_and_sigmoid_backward_formulas():
    _, g, w = _inputs()
    y = w * 2 - 1
    with repmode.enabled():
        tb = aten.tanh_backward(g, y)
        sb = aten.sigmoid_backward(g, w)
    assert int(ulp_distance_f32(tb, (g.double() * (1 - y.double() ** 2)).float()).max()) <= 1
    assert int(ulp_distance_f32(sb, (g.double() * (1 - w.double()) * w.double()).float()).max()) <= 1


def test_three_operand_ops_within_one_ulp():
    x, g, w = _inputs()
    t2 = w + 0.5
    with repmode.enabled():
        got = {
            "addcmul": torch.addcmul(x, g, t2, value=0.3),
            "addcdiv": torch.addcdiv(x, g, t2, value=-0.3),
            "lerp_scalar": torch.lerp(x, g, 0.3),
            "lerp_tensor": torch.lerp(x, g, w),
        }
    xd, gd, wd, td = x.double(), g.double(), w.double(), t2.double()
    v = 0.3  # number arguments enter the double evaluation unrounded
    want = {
        "addcmul": xd + v * gd * td,
        "addcdiv": xd - v * gd / td,
        "lerp_scalar": xd + float(torch.tensor(0.3)) * (gd - xd),  # a Scalar weight is an operand: float32
        "lerp_tensor": xd + wd * (gd - xd),
    }
    for k in got:
        d = ulp_distance_f32(got[k], want[k].float())
        assert int(d.max()) <= 1, f"{k}: {int(d.max())} ulps"


def _all_ops(x, g, w):
    """Every op of the family on 2-D inputs (float32), as a dict of outputs."""
    y = torch.tanh(x)
    s = torch.sigmoid(x)
    out = {name: op(x) for name, (op, _) in FORWARD.items()}
    out.update({
        "tanh": y, "sigmoid": s, "erf": torch.erf(x), "erfc": torch.erfc(x), "sin": torch.sin(x), "cos": torch.cos(x),
        "exp2": torch.exp2(x), "expm1": torch.expm1(x), "log1p": torch.log1p(x.abs()), "log2": torch.log2(x.abs()),
        "rsqrt": torch.rsqrt(x.abs()), "sqrt": torch.sqrt(x.abs()), "reciprocal": torch.reciprocal(x),
        "sign": torch.sign(x), "abs": torch.abs(x), "pow_t": torch.pow(x.abs(), w), "pow_s": x ** 3,
        "pow_base": torch.pow(1.5, x), "clamp": torch.clamp(x, -1.0, 2.0), "clamp_t": torch.clamp(x, min=g, max=w + 1),
        "clamp_min": torch.clamp_min(x, 0.5), "maximum": torch.maximum(x, g), "minimum": torch.minimum(x, g),
        "addcmul": torch.addcmul(x, g, w, value=2.0), "addcdiv": torch.addcdiv(x, g, w + 1, value=0.5),
        "lerp": torch.lerp(x, g, w), "where": torch.where(x > 0, x, g),
        "tanh_backward": aten.tanh_backward(g, y), "sigmoid_backward": aten.sigmoid_backward(g, s),
        "gelu_backward": aten.gelu_backward(g, x), "gelu_tanh_backward": aten.gelu_backward(g, x, approximate="tanh"),
        "silu_backward": aten.silu_backward(g, x), "mish_backward": aten.mish_backward(g, x),
        "softplus_backward": aten.softplus_backward(g, x, 1.0, 20.0),
        "elu_backward": aten.elu_backward(g, 1.0, 1.0, 1.0, False, x),
        "elu_backward_result": aten.elu_backward(g, 1.0, 1.0, 1.0, True, F.elu(x)),
        "leaky_relu_backward": aten.leaky_relu_backward(g, x, 0.01, False),
        "hardtanh_backward": aten.hardtanh_backward(g, x, -1.0, 1.0),
        "threshold_backward": aten.threshold_backward(g, x, 0.0),
    })
    return out


def test_every_op_invariant_to_threads_isa_and_layout():
    x, g, w = (t[:4096].reshape(64, 64) for t in _inputs())
    assert_invariant(_all_ops, x, g, w)


def test_broadcast_zero_dim_and_empty():
    x, g, w = (t[:4096].reshape(64, 64) for t in _inputs())
    with repmode.enabled():
        full = _all_ops(x, g, w)
        row = _all_ops(x[3:4], g[3:4], w[3:4])
        for k in full:
            assert_bitwise_equal(full[k][3:4], row[k], k)  # a row does not depend on the others
        bcast = torch.lerp(x, g[0], w[:, :1])
        zero_dim = _all_ops(x[5, 7], g[5, 7], w[5, 7])
        empty = _all_ops(x[:0], g[:0], w[:0])
    want = torch.lerp(x, g[0].expand(64, 64).contiguous(), w[:, :1].expand(64, 64).contiguous())
    with repmode.enabled():
        assert_bitwise_equal(bcast, torch.lerp(x, g[0].expand(64, 64).contiguous(),
                                               w[:, :1].expand(64, 64).contiguous()), "broadcast")
    assert bcast.shape == want.shape
    for k in full:
        assert zero_dim[k].dim() == 0 and zero_dim[k].dtype == torch.float32, k
        assert_bitwise_equal(zero_dim[k], full[k][5, 7], k)
        assert empty[k].shape == (0, 64), k


@pytest.mark.parametrize("dtype", [torch.float64, torch.bfloat16, torch.float16])
def test_other_dtypes(dtype):
    x, g, w = (t[:1024].reshape(32, 32).to(dtype) for t in _inputs())
    with repmode.enabled():
        got = _all_ops(x, g, w)
    for k, v in got.items():
        if v.is_floating_point():
            assert v.dtype == dtype, f"{k}: {v.dtype}"
    if dtype != torch.float64:
        # bf16/fp16: computed in float32 from the exactly widened inputs, rounded once to the dtype.
        with repmode.enabled():
            wide = _all_ops(x.float(), g.float(), w.float())
        for k in ("tanh", "gelu", "silu", "sin", "pow_t", "lerp", "addcmul"):
            assert_bitwise_equal(got[k], wide[k].to(dtype), k)


def test_inplace_and_out_forms():
    x, g, w = (t[:256] for t in _inputs())
    with repmode.enabled():
        want = {"tanh": torch.tanh(x), "clamp": torch.clamp(x, -1, 1), "lerp": torch.lerp(x, g, w),
                "addcdiv": torch.addcdiv(x, g, w + 1, value=0.5), "gelu": F.gelu(x), "pow": x ** 2}
        a = x.clone()
        a.tanh_()
        assert_bitwise_equal(a, want["tanh"], "tanh_")
        a = x.clone()
        a.clamp_(-1, 1)
        assert_bitwise_equal(a, want["clamp"], "clamp_")
        a = x.clone()
        a.lerp_(g, w)
        assert_bitwise_equal(a, want["lerp"], "lerp_")
        a = x.clone()
        a.addcdiv_(g, w + 1, value=0.5)
        assert_bitwise_equal(a, want["addcdiv"], "addcdiv_")
        a = x.clone()
        a.pow_(2)
        assert_bitwise_equal(a, want["pow"], "pow_")
        o = torch.empty(3)
        torch.tanh(x, out=o)
        assert_bitwise_equal(o, want["tanh"], "tanh out=")
        torch.lerp(x, g, w, out=o)
        assert_bitwise_equal(o, want["lerp"], "lerp out=")
        a = x.clone()
        torch.ops.aten.gelu_(a)
        assert_bitwise_equal(a, want["gelu"], "gelu_")


def test_nan_outputs_are_canonical():
    x = torch.tensor([0x7FC01234, 0xFFC00000, 0x7F800001], dtype=torch.int64).to(torch.int32).view(torch.float32)
    g = torch.ones(3)
    with repmode.enabled():
        outs = _all_ops(x.reshape(1, 3), g.reshape(1, 3), g.reshape(1, 3))
    for k, v in outs.items():
        if v.is_floating_point():
            nan = torch.isnan(v)
            assert (bits(v[nan]) == CANONICAL_NAN).all(), k
    with repmode.enabled():
        assert (bits(torch.sqrt(torch.tensor([-1.0]))) == CANONICAL_NAN).all()
        assert (bits(torch.log(torch.tensor([-1.0]))) == CANONICAL_NAN).all()


def test_minimum_maximum_clamp_nan_and_signed_zero():
    nan = math.nan
    a = torch.tensor([-0.0, 0.0, nan, 1.0, nan, -0.0])
    b = torch.tensor([0.0, -0.0, 1.0, nan, nan, -0.0])
    with repmode.enabled():
        mx, mn = torch.maximum(a, b), torch.minimum(a, b)
        cl = torch.clamp(torch.tensor([-0.0, 0.0, nan, 5.0]), min=0.0, max=1.0)
        cl_nan_bound = torch.clamp(torch.tensor([0.5]), min=nan)
        sign = torch.sign(torch.tensor([-0.0, 0.0, -2.0, 3.0, nan]))
        relu = torch.relu(torch.tensor([-0.0, -1.0]))
    # IEEE 754-2019 maximum/minimum: -0 < +0, NaN wins.
    assert bits(mx).tolist() == bits(torch.tensor([0.0, 0.0, nan, nan, nan, -0.0])).tolist()
    assert bits(mn).tolist() == bits(torch.tensor([-0.0, -0.0, nan, nan, nan, -0.0])).tolist()
    assert bits(cl).tolist() == bits(torch.tensor([0.0, 0.0, nan, 1.0])).tolist()
    assert torch.isnan(cl_nan_bound).all()
    assert bits(sign).tolist() == bits(torch.tensor([0.0, 0.0, -1.0, 1.0, nan])).tolist()
    assert bits(relu).tolist() == bits(torch.tensor([0.0, 0.0])).tolist()


def test_signed_zero_results():
    z = torch.tensor([-0.0, 0.0])
    with repmode.enabled():
        for fn in (torch.tanh, torch.sin, torch.erf, torch.expm1, torch.log1p, F.gelu, F.silu, F.leaky_relu,
                   lambda t: t * 2):
            assert bits(fn(z)).tolist() == bits(z).tolist(), fn
        assert bits(F.gelu(torch.tensor([-30.0]))).tolist() == bits(torch.tensor([-0.0])).tolist()
        assert bits(torch.cos(z)).tolist() == bits(torch.tensor([1.0, 1.0])).tolist()


def test_training_step_with_activations_runs_strict():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.Linear(16, 16), torch.nn.SiLU(),
                                torch.nn.Linear(16, 16), torch.nn.Tanh(), torch.nn.Linear(16, 16), torch.nn.ELU(),
                                torch.nn.Linear(16, 16), torch.nn.Mish(), torch.nn.Linear(16, 16), torch.nn.Softplus(),
                                torch.nn.Linear(16, 16), torch.nn.LeakyReLU(), torch.nn.Linear(16, 16),
                                torch.nn.Hardtanh(), torch.nn.Linear(16, 1), torch.nn.Sigmoid())
    x = torch.randn(32, 8)
    with repmode.enabled():
        loss = model(x).sum()
        loss.backward()
    assert all(p.grad is not None for p in model.parameters())


def test_gelu_simd_path_equals_the_formula_on_bit_patterns():
    """The AVX2 gelu path (a different fast evaluation with a rounding test) gives the formula's bits."""
    from support import cpu_isa, num_threads
    x = torch.arange(0, 2 ** 32, 8191, dtype=torch.int64).to(torch.int32).view(torch.float32)
    with num_threads(1), cpu_isa("scalar"), repmode.enabled():
        want = F.gelu(x)
    with num_threads(2), repmode.enabled():
        assert_bitwise_equal(F.gelu(x), want, "gelu contiguous")
        strided = torch.empty(x.numel() * 2)[::2]
        strided.copy_(x)
        assert_bitwise_equal(F.gelu(strided), want, "gelu strided")


def test_clamp_of_integers_stays_integer():
    # A missing bound must not promote: torch keeps the integer dtype (found by the LSTM tests).
    x = torch.tensor([-100, 2, 7])
    with repmode.enabled():
        got = [x.clamp(min=0), x.to(torch.int32).clamp(max=1), x.clamp(min=0.5), x.clamp(-1, 3)]
    want = [x.clamp(min=0), x.to(torch.int32).clamp(max=1), x.clamp(min=0.5), x.clamp(-1, 3)]
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and torch.equal(g, w)


def test_div_rounding_modes():
    a = torch.tensor([7.5, -7.5, 1.0, -0.0, 5.0])
    b = torch.tensor([2.0, 2.0, 0.1, 3.0, -0.0])
    with repmode.enabled():
        plain = torch.div(a, b)
        none_mode = torch.div(a, b, rounding_mode=None)
        trunc = torch.div(a, b, rounding_mode="trunc")
        in_place = a.clone().div_(b, rounding_mode="trunc")
        ints = torch.div(torch.tensor([7, -7]), 2, rounding_mode="floor")
        floor = torch.div(a, b, rounding_mode="floor")  # torch's floor_divide sequence ("More elementwise functions")
        truncated_quotient = torch.trunc(torch.div(a, b))
    assert torch.equal(none_mode.view(torch.int32), plain.view(torch.int32))
    assert torch.equal(trunc.view(torch.int32), truncated_quotient.view(torch.int32))
    assert torch.equal(in_place.view(torch.int32), trunc.view(torch.int32))
    assert ints.tolist() == [3, -4]
    assert torch.equal(floor.view(torch.int32), torch.div(a, b, rounding_mode="floor").view(torch.int32))


def test_rounding_to_integers_is_exact_native():
    x = torch.tensor([0.5, 1.5, 2.5, -0.5, -1.7, 3.2, float("inf"), float("nan")])
    with repmode.enabled():
        got = [torch.floor(x), torch.ceil(x), torch.trunc(x), torch.round(x)]
    for g, ref in zip(got, [torch.floor(x), torch.ceil(x), torch.trunc(x), torch.round(x)]):
        assert torch.equal(g.view(torch.int32), ref.view(torch.int32))
