"""Elementwise kernels: invariance to threads, ISA and layout; accuracy; promotion; in-place/out=."""
from __future__ import annotations

import pytest
import torch
from support import assert_bitwise_equal, assert_invariant, bits, ulp_distance_f32

import repmode

BIG = (300, 257)  # > 32768 elements so two and three threads really split the work


def _ops(a, b):
    """Every registered elementwise form, on tensors a, b of the same shape."""
    return {
        "add": a + b,
        "add_alpha": torch.add(a, b, alpha=0.375),
        "sub_alpha": torch.sub(a, b, alpha=-1.75),
        "mul": a * b,
        "div": a / b,
        "add_scalar": a + 0.125,
        "mul_scalar": a * 3,
        "div_scalar": a / 7.0,
        "rsub": 1.5 - a,
        "neg": -a,
        "relu": torch.relu(a),
        "exp": torch.exp(a),
        "log": torch.log(a.abs()),
        "threshold_backward": torch.ops.aten.threshold_backward(b, a, 0.0),
        "broadcast_row": a + b[:1],
        "broadcast_col": a * b[:, :1],
    }


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_invariant_to_threads_isa_and_layout(rng, dtype):
    a = torch.randn(BIG, generator=rng, dtype=dtype)
    b = torch.randn(BIG, generator=rng, dtype=dtype)
    assert_invariant(_ops, a, b)


def test_close_to_float64_reference(rng):
    a = torch.randn(BIG, generator=rng)
    b = torch.randn(BIG, generator=rng)
    with repmode.enabled():
        got = _ops(a, b)
    want = _ops(a.double(), b.double())
    # The alpha forms round twice by definition: round(a + round(alpha * b)); both steps are
    # exact in float64 here, so rounding each step to float32 gives the exact expected bits.
    a64, b64 = a.double(), b.double()
    want["add_alpha"] = a64 + (0.375 * b64).float().double()
    want["sub_alpha"] = a64 - (-1.75 * b64).float().double()
    for k in got:
        # every other op is one correctly rounded operation (the scalars are exact in float32),
        # and exp/log are correctly rounded functions: 0 ulp from the float64 result rounded once
        ulps = ulp_distance_f32(got[k], want[k].float())
        assert int(ulps.max()) == 0, f"{k}: {int(ulps.max())} ulp"


def test_single_ieee_operations_match_native_exactly(rng):
    a = torch.randn(1000, generator=rng)
    b = torch.randn(1000, generator=rng)
    with repmode.enabled():
        got = [a + b, a - b, a * b, a / b, a * 0.5, -a, torch.relu(a)]
    want = [a + b, a - b, a * b, a / b, a * 0.5, -a, torch.relu(a)]
    for g, w in zip(got, want):
        assert_bitwise_equal(g, w)


def test_alpha_is_rounded_separately(rng):
    a = torch.randn(1000, generator=rng)
    b = torch.randn(1000, generator=rng)
    with repmode.enabled():
        got = torch.add(a, b, alpha=0.1)
    # documented order: t = round(alpha * b); out = round(a + t), alpha first rounded to float32
    alpha = torch.tensor(0.1, dtype=torch.float32)
    want = a + (alpha * b)
    assert_bitwise_equal(got, want)


def test_type_promotion_and_scalars():
    i = torch.arange(6).reshape(2, 3)
    f = torch.linspace(-1, 1, 6).reshape(2, 3)
    d = torch.linspace(-1, 1, 6, dtype=torch.float64).reshape(2, 3)
    with repmode.enabled():
        cases = {
            "int*float": i * f, "float+double": f + d, "int/int": i / 4, "int+int": i + 1,
            "0-dim double": f * torch.tensor(3.0, dtype=torch.float64), "bool scalar": f + True,
        }
    native = {
        "int*float": i * f, "float+double": f + d, "int/int": i / 4, "int+int": i + 1,
        "0-dim double": f * torch.tensor(3.0, dtype=torch.float64), "bool scalar": f + True,
    }
    for k in cases:
        assert cases[k].dtype == native[k].dtype, k
        assert torch.equal(cases[k], native[k]), k


def test_inplace_and_out_forms(rng):
    a = torch.randn(50, 40, generator=rng)
    b = torch.randn(50, 40, generator=rng)
    with repmode.enabled():
        x = a.clone()
        x.add_(b, alpha=2.0)
        x.mul_(0.9)
        x.sub_(b[0])      # broadcast
        x.div_(3.0)
        out = torch.empty(0)
        torch.add(a, b, out=out)
        y = a.clone()
        y.add_(y)         # aliasing, same view
        z = a.clone()
        z.t().add_(z.t())
    want = ((a + 2.0 * b) * 0.9 - b[0]) / 3.0
    assert torch.allclose(x, want, atol=1e-6)
    assert torch.equal(out, a + b)
    assert torch.equal(y, a + a)
    assert torch.equal(z, a + a)


def test_inplace_with_overlapping_source_reads_old_values():
    base = torch.arange(1.0, 10.0)
    with repmode.enabled():
        x = base.clone()
        x[1:].add_(x[:-1])
    want = base.clone()
    want[1:] = base[1:] + base[:-1]
    assert torch.equal(x, want)


def test_nan_outputs_are_canonical():
    payload = torch.tensor([0x7FC00123, 0xFFC00000 - 2**32, 0x7F800001], dtype=torch.int32).view(torch.float32)
    with repmode.enabled():
        outs = [payload + 1, payload * 2, -payload, torch.relu(payload), torch.exp(payload), payload / 0.5,
                torch.zeros(3) / torch.zeros(3)]
    for o in outs:
        assert torch.isnan(o).all()
        assert (bits(o) == 0x7FC00000).all(), [hex(v) for v in bits(o).tolist()]


def test_signed_zeros_and_special_values():
    x = torch.tensor([-0.0, 0.0, float("inf"), -float("inf"), 1e-45, -1e-45])
    with repmode.enabled():
        r = torch.relu(x)
        e = torch.exp(x)
        n = -x
    assert bits(r).tolist() == bits(torch.tensor([0.0, 0.0, float("inf"), 0.0, 1e-45, 0.0])).tolist()
    assert e.tolist() == [1.0, 1.0, float("inf"), 0.0, 1.0, 1.0]
    assert bits(n).tolist() == bits(torch.tensor([0.0, -0.0, -float("inf"), float("inf"), -1e-45, 1e-45])).tolist()


def test_empty_and_zero_dim():
    with repmode.enabled():
        e = torch.empty(0, 3) + 1
        s = torch.tensor(2.0) * torch.tensor(3.0)
    assert e.shape == (0, 3)
    assert s.shape == () and s.item() == 6.0


def test_unsupported_dtype_raises():
    x = torch.ones(3, dtype=torch.complex64)  # complex mul/add are the FFT path's; exp is refused
    with pytest.raises(repmode.UnsupportedOpError, match="complex64"):
        with repmode.enabled():
            torch.exp(x)


def test_simd_exp_log_equal_scalar_on_random_bit_patterns():
    """The AVX2 array routines must give the scalar routines' bits on every input, including
    NaNs with payloads, infinities, subnormals and the over/underflow edges (the exhaustive
    check over all 2^32 inputs is csrc/verify/check_vec_math.cpp)."""
    from support import available_isas, cpu_isa
    g = torch.Generator().manual_seed(7)
    patterns = torch.randint(-2**31, 2**31, (1 << 21,), generator=g, dtype=torch.int64).to(torch.int32)
    edges = torch.tensor([0x7F800000, 0xFF800000 - 2**32, 0x00000001, 0x807FFFFF - 2**32, 0x42B17217, 0x42B17218,
                          0xC2CFF1B4 - 2**32, 0xC2CFF1B5 - 2**32, 0x3F800000, 0x7FC00001, 0], dtype=torch.int32)
    x = torch.cat([patterns, edges]).view(torch.float32)
    results = {}
    for isa in available_isas():
        with cpu_isa(isa), repmode.enabled():
            results[isa] = (torch.exp(x), torch.log(x))
    for isa, (e, lg) in results.items():
        assert_bitwise_equal(e, results["scalar"][0], f"exp {isa}")
        assert_bitwise_equal(lg, results["scalar"][1], f"log {isa}")
