"""Activations and small layers, part 1: hardswish, hardsigmoid, hardshrink, softshrink, threshold, celu,
glu, prelu, log_sigmoid and rrelu in strict mode. Chains of single IEEE operations equal native torch
bit for bit (forward and backward); glu, log_sigmoid and the backwards that sum are at least as close
to float64 as native torch; every result is invariant to threads, ISA and layout."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from support import assert_bitwise_equal, assert_invariant, num_threads

import repmode

aten = torch.ops.aten
SPECIAL = [-3.0, 3.0, 0.0, -0.0, 0.5, -0.5, 0.1, -0.1, float("nan"), float("inf"), -float("inf"), 3.0000002,
           -2.9999998, 1e-40, -1e-40, 6.0, -6.0]


def _input(rng, n=5000, dtype=torch.float32, scale=4.0):
    """Random values with the special points (thresholds, ±0, NaN, ±inf, subnormals) spread over the
    vectorized body and the tail of native torch's kernels."""
    x = torch.randn(n, generator=rng, dtype=torch.float64) * scale
    idx = torch.randperm(n, generator=rng)[: 3 * len(SPECIAL)]
    x[idx] = torch.tensor(SPECIAL * 3, dtype=torch.float64)
    return x.to(dtype)


def _canonical(t):
    """NaN written as one pattern (native torch keeps payloads; repmode writes the canonical NaN)."""
    t = t.detach()
    return torch.where(torch.isnan(t), torch.full((), float("nan"), dtype=t.dtype), t)


_WEIGHT = torch.linspace(-0.7, 0.9, 50, dtype=torch.float64)  # made natively, outside the mode


def _prelu_weight(dtype):
    return _WEIGHT.to(dtype)


# name -> f(x) on a 1-D input of 5000 elements
BITWISE = {
    "hardswish": F.hardswish,
    "hardsigmoid": F.hardsigmoid,
    "hardshrink": lambda x: F.hardshrink(x, 0.5),
    "softshrink": lambda x: F.softshrink(x, 0.5),
    "threshold": lambda x: F.threshold(x, 0.1, 2.0),
    "relu6_like_threshold": lambda x: F.threshold(x, -1.0, -1.0),
    "prelu": lambda x: F.prelu(x.view(100, 50), _prelu_weight(x.dtype)),
    "prelu_scalar": lambda x: F.prelu(x.view(100, 50), torch.tensor([0.25], dtype=x.dtype)),
    "rrelu_eval": lambda x: F.rrelu(x, 0.1, 0.3, training=False),
}
# backward equal to native's bits (the others are compared with float64 below)
BITWISE_BACKWARD = {"hardswish", "hardsigmoid", "hardshrink", "softshrink", "threshold", "relu6_like_threshold",
                    "rrelu_eval"}
DTYPES = [torch.float32, torch.float64, torch.bfloat16, torch.float16]


def _run(f, x, g):
    leaf = x.clone().requires_grad_()
    out = f(leaf)
    out.backward(g)
    return out.detach(), leaf.grad


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(BITWISE))
def test_equals_native_bit_for_bit(name, dtype, rng):
    x = _input(rng, dtype=dtype)
    f = BITWISE[name]
    g = torch.randn(f(x).shape, generator=rng).to(dtype)
    want, want_grad = _run(f, x, g)
    with repmode.enabled():
        got, got_grad = _run(f, x, g)
    if name == "softshrink":
        # inside [-λ, λ] torch's vectorized body writes +0 and its scalar tail x·0 (-0 for x < 0);
        # repmode always writes +0
        assert not bool(((got == 0) & torch.signbit(got)).any())
        want = torch.where(want == 0, torch.zeros((), dtype=dtype), want)
    assert_bitwise_equal(_canonical(got), _canonical(want).view(got.shape), f"{name} forward")
    if name in BITWISE_BACKWARD and not (name == "hardsigmoid" and dtype == torch.float64):
        assert_bitwise_equal(_canonical(got_grad), _canonical(want_grad), f"{name} backward")


def _max_ulps(value, ref):
    """The largest error in units of the last place of the float64 reference rounded to value's dtype."""
    dtype = value.dtype
    value, ref = value.detach().double(), ref.detach().double()
    finite = torch.isfinite(ref) & (ref != 0)
    rounded = ref.abs().to(dtype)
    ulp = (torch.nextafter(rounded, torch.tensor(float("inf"), dtype=dtype)) - rounded).double()
    return float(((value - ref).abs() / ulp)[finite].max())


# name -> f(x) differentiable; compared with float64 autograd of native torch (celu is repmode's elu:
# a float64 formula rounded once, so not native's bits)
REFERENCE = {
    "glu": lambda x: F.glu(x.view(50, 100), dim=1),
    "glu_dim0": lambda x: F.glu(x.view(50, 100), dim=0),
    "logsigmoid": F.logsigmoid,
    "celu": lambda x: F.celu(x, 0.7),
    "hardsigmoid": F.hardsigmoid,
    "prelu": lambda x: F.prelu(x.view(100, 50), _prelu_weight(x.dtype)),
    "multilabel_soft_margin": lambda x: F.multilabel_soft_margin_loss(x.view(100, 50), (x.view(100, 50) > 0.3).to(
        x.dtype)),
}


@pytest.mark.parametrize("name", list(REFERENCE))
def test_float32_at_least_as_close_to_float64_as_native(name, rng):
    dtype = torch.float32
    x = _input(rng, dtype=dtype).nan_to_num(0.0, 1.0, -1.0)
    f = REFERENCE[name]
    g = torch.randn(f(x).shape, generator=rng, dtype=torch.float64)
    ref, ref_grad = _run(f, x.double(), g)
    native, native_grad = _run(f, x, g.to(dtype))
    with repmode.enabled():
        ours, ours_grad = _run(f, x, g.to(dtype))
    for what, a, b, r in (("forward", ours, native, ref), ("backward", ours_grad, native_grad, ref_grad)):
        mine, theirs = _max_ulps(a, r), _max_ulps(b, r)
        # within one ulp of float64, or no worse than native torch
        assert mine <= max(theirs, 1.0), f"{name} {what}: {mine} ulp vs native {theirs}"


@pytest.mark.parametrize("name", list(REFERENCE))
def test_float64_close_to_native_float64(name, rng):
    x = _input(rng, dtype=torch.float64).nan_to_num(0.0, 1.0, -1.0)
    f = REFERENCE[name]
    g = torch.randn(f(x).shape, generator=rng, dtype=torch.float64)
    ref, ref_grad = _run(f, x, g)
    with repmode.enabled():
        ours, ours_grad = _run(f, x, g)
    assert torch.allclose(ours, ref, rtol=1e-14, atol=1e-300)
    if name.startswith("glu"):
        # torch's float64 glu backward takes 1 − sigmoid(b), which cancels for large b; repmode takes
        # sigmoid(−b): compare with that formula evaluated natively
        dim = 1 if name == "glu" else 0
        a, b = x.view(50, 100).chunk(2, dim)
        s, sn = torch.sigmoid(b), torch.sigmoid(-b)
        ref_grad = torch.cat([s * g, s * sn * a * g], dim).reshape(-1)
    if name == "hardsigmoid":
        # torch multiplies float64 gradients by the float32 constant RN32(1/6); repmode by RN64(1/6)
        ref_grad = torch.where((x > -3) & (x < 3), g * (1.0 / 6.0), 0.0)
        assert_bitwise_equal(ours_grad, ref_grad)
    assert torch.allclose(ours_grad.reshape(-1), ref_grad.reshape(-1), rtol=1e-14, atol=1e-300)


def _all_forward_backward(x):
    """Every activation, forward and backward, on a 2-D input (for the invariance checks)."""
    out = {}
    cases = dict(BITWISE)
    cases.update({k: v for k, v in REFERENCE.items() if k not in cases})
    for name, f in cases.items():
        leaf = x.detach().clone().requires_grad_()
        y = f(leaf.reshape(-1))
        y.backward(torch.linspace(-1, 1, y.numel(), dtype=x.dtype).view(y.shape))
        out[name] = y.detach()
        out[name + "_grad"] = leaf.grad
    return out


def test_invariant_to_threads_isa_and_layout(rng):
    x = _input(rng).nan_to_num(0.25).view(50, 100)  # (layouts() compares with torch.equal: no NaN)
    assert_invariant(_all_forward_backward, x)


@pytest.mark.parametrize("name", ["hardswish", "hardsigmoid", "softshrink", "threshold", "celu", "prelu"])
def test_same_bits_under_grad_no_grad_and_inference_mode(name, rng):
    x = _input(rng)
    f = {**BITWISE, **REFERENCE}[name]
    with repmode.enabled():
        want = f(x.clone().requires_grad_()).detach()
        with torch.no_grad():
            a = f(x)
        with torch.inference_mode():
            b = f(x)
    assert_bitwise_equal(want, a, "no_grad")
    assert_bitwise_equal(want, b, "inference_mode")


@pytest.mark.parametrize("name", ["glu", "logsigmoid"])
def test_low_precision_is_the_float32_result_rounded_once(name, rng):
    x = _input(rng).nan_to_num(0.0, 1.0, -1.0)
    f = REFERENCE[name]
    for dtype in (torch.bfloat16, torch.float16):
        low = x.to(dtype)
        with repmode.enabled():
            got = f(low)
            wide = f(low.float())
        assert got.dtype == dtype
        assert_bitwise_equal(_canonical(got), _canonical(wide.to(dtype)), str(dtype))


IN_PLACE = {
    "hardswish": lambda t, inplace: F.hardswish(t, inplace=inplace),
    "hardsigmoid": lambda t, inplace: F.hardsigmoid(t, inplace=inplace),
    "threshold": lambda t, inplace: F.threshold(t, 0.1, 2.0, inplace=inplace),
    "celu": lambda t, inplace: F.celu(t, 1.3, inplace=inplace),
}


@pytest.mark.parametrize("name", list(IN_PLACE))
def test_in_place_forms_equal_the_functional_ones(name, rng):
    x = _input(rng)
    f = IN_PLACE[name]
    with repmode.enabled():
        want = f(x, False)
        y = x.clone()
        got = f(y, True)
        z = x.view(50, 100).t()  # a non-contiguous self
        f(z, True)
    assert got is y
    assert_bitwise_equal(_canonical(y), _canonical(want))
    assert_bitwise_equal(_canonical(z.t().reshape(-1)), _canonical(want), "non-contiguous self")


def test_prelu_module_trains_with_the_weight_gradient_summed_in_the_canonical_order(rng):
    x = torch.randn(8, 6, 5, 5, generator=rng)
    m = torch.nn.PReLU(6, init=0.2)
    results = []
    for threads in (1, 2):
        m.weight.grad = None
        with num_threads(threads), repmode.enabled():
            y = m(x)
            y.square().sum().backward()
        results.append((y.detach(), m.weight.grad.clone()))
    assert_bitwise_equal(results[0], results[1])
    leaf, w = x.double().requires_grad_(), m.weight.detach().double().requires_grad_()
    F.prelu(leaf, w).square().sum().backward()
    assert torch.allclose(results[0][1].double(), w.grad, rtol=1e-5, atol=1e-5)


# ---- rrelu in training: noise from repmode's random stream

def _rrelu_train(x, seed=7):
    torch.manual_seed(seed)
    leaf = x.clone().requires_grad_()
    noise = torch.empty_like(x)
    y = aten.rrelu_with_noise(leaf, noise, 0.1, 0.3, True)
    y.backward(torch.ones_like(y))
    return y.detach(), noise, leaf.grad


def test_rrelu_training_noise_from_the_stream(rng):
    x = _input(rng).nan_to_num(0.0, 1.0, -1.0)
    with num_threads(1), repmode.enabled():
        y, noise, grad = _rrelu_train(x)
    with num_threads(2), repmode.enabled():
        y2, noise2, grad2 = _rrelu_train(x)
    assert_bitwise_equal((y, noise, grad), (y2, noise2, grad2))
    neg = x <= 0
    assert bool((noise[~neg] == 1).all())
    assert bool(((noise[neg] >= 0.1) & (noise[neg] < 0.3)).all())
    assert noise[neg].unique().numel() > neg.sum() // 2  # really random
    with repmode.enabled():
        assert_bitwise_equal(y, x * noise, "y = x * noise")
    assert_bitwise_equal(grad, noise, "backward = g * noise")
    # element i of the noise comes from element i of the stream, whatever the input's layout
    xt = x.view(50, 100).t().contiguous().t()
    with repmode.enabled():
        yt, noise_t, _ = _rrelu_train(xt)
    assert_bitwise_equal(yt.reshape(-1), y, "layout")
    # the draws are repmode's uniform stream (one key for the op)
    torch.manual_seed(7)
    with repmode.enabled():
        u = torch.empty_like(x).uniform_(0.1, 0.3)
    assert_bitwise_equal(noise[neg], u[neg], "uniform draws")


def test_rrelu_module_forms(rng):
    x = _input(rng).nan_to_num(0.0, 1.0, -1.0).view(50, 100)
    m = torch.nn.RReLU(0.1, 0.3)
    with repmode.enabled():
        torch.manual_seed(3)
        a = m(x)
        torch.manual_seed(3)
        b = F.rrelu(x.clone(), 0.1, 0.3, training=True, inplace=True)
        m.eval()
        c = m(x)
        with torch.inference_mode():
            torch.manual_seed(3)
            d = F.rrelu(x, 0.1, 0.3, training=True)
    assert_bitwise_equal(a, b, "in place")
    assert_bitwise_equal(a, d, "inference_mode")
    assert_bitwise_equal(c, F.leaky_relu(x, 0.2), "eval = leaky_relu((l + u) / 2)")


def test_errors(rng):
    x = _input(rng)
    with repmode.enabled():
        with pytest.raises(RuntimeError, match="even"):
            F.glu(x[:5])
        with pytest.raises(repmode.UnsupportedOpError, match="floating-point"):
            F.hardswish(torch.arange(4))
