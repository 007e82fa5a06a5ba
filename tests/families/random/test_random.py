"""Random ops on repmode's Philox stream: known answers, distributions, invariance, seeding."""
from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
import torch
from support import assert_bitwise_equal, assert_invariant, available_isas, cpu_isa

import repmode
from repmode._ext import C

# ---------------------------------------------------------------- the generator itself

@pytest.mark.parametrize("counter, key, expected", [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
])
def test_philox4x32_10_known_answers(counter, key, expected):
    """The published Random123 known-answer vectors for Philox4x32-10."""
    assert tuple(C.philox4x32_10(*counter, *key)) == expected


def test_bit_balance():
    """Every bit of the 64-bit integer draws is set about half the time."""
    with repmode.enabled(seed=11):
        x = torch.empty(1 << 18, dtype=torch.int64).random_(-(1 << 63), None)
    words = x.numpy().view(np.uint64)
    n = words.size
    for bit in range(64):
        ones = int(((words >> np.uint64(bit)) & np.uint64(1)).sum())
        assert abs(ones - n / 2) < 5 * math.sqrt(n / 4), f"bit {bit}: {ones} of {n}"


# ---------------------------------------------------------------- distributions

def _ks_statistic(sample: np.ndarray, cdf) -> float:
    s = np.sort(sample.astype(np.float64))
    n = s.size
    f = cdf(s)
    return float(max(np.max(np.arange(1, n + 1) / n - f), np.max(f - np.arange(0, n) / n)))


def _normal_cdf(x):
    return 0.5 * (1 + torch.special.erf(torch.from_numpy(x) / math.sqrt(2)).numpy())


N_STAT = 200_000
KS_CRIT = 1.95 / math.sqrt(N_STAT)  # Kolmogorov-Smirnov at the 0.1% level


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_uniform_and_normal_statistics(dtype):
    with repmode.enabled(seed=1234):
        u = torch.empty(N_STAT, dtype=dtype).uniform_(-2.0, 3.0)
        z = torch.randn(N_STAT, dtype=dtype)
        r = torch.rand(N_STAT, dtype=dtype)
    u, z, r = u.double().numpy(), z.double().numpy(), r.double().numpy()
    assert u.min() >= -2.0 and u.max() < 3.0 and r.min() >= 0.0 and r.max() < 1.0
    assert abs(u.mean() - 0.5) < 5 * 5 / math.sqrt(12 * N_STAT) and abs(u.var() - 25 / 12) < 0.02
    assert abs(z.mean()) < 5 / math.sqrt(N_STAT) and abs(z.var() - 1) < 0.015
    assert _ks_statistic(r, lambda s: s) < KS_CRIT
    assert _ks_statistic(u, lambda s: (s + 2) / 5) < KS_CRIT
    assert _ks_statistic(z, _normal_cdf) < KS_CRIT


def test_normal_with_tensor_parameters():
    with repmode.enabled(seed=9):
        x = torch.normal(torch.full((N_STAT,), 3.0), torch.full((N_STAT,), 2.0))
        y = torch.normal(torch.zeros(2, 1), torch.ones(3))
    assert y.shape == (2, 3)
    xs = x.double().numpy()
    assert _ks_statistic(xs, lambda s: _normal_cdf((s - 3.0) / 2.0)) < KS_CRIT


def test_other_distributions_statistics():
    with repmode.enabled(seed=77):
        e = torch.empty(N_STAT, dtype=torch.float64).exponential_(2.0)
        c = torch.empty(N_STAT, dtype=torch.float64).cauchy_(1.0, 0.5)
        ln = torch.empty(N_STAT, dtype=torch.float64).log_normal_(0.3, 0.7)
        g = torch.empty(N_STAT, dtype=torch.float64).geometric_(0.25)
        b = torch.empty(N_STAT).bernoulli_(0.3)
        bt = torch.bernoulli(torch.full((N_STAT,), 0.8))
        k = torch.randint(-3, 7, (N_STAT,))
    e, c, ln, g = e.numpy(), c.numpy(), ln.numpy(), g.numpy()
    assert abs(e.mean() - 0.5) < 0.005 and abs(e.var() - 0.25) < 0.01  # 1/lambda, 1/lambda^2
    lmean, lvar = math.exp(0.3 + 0.49 / 2), (math.exp(0.49) - 1) * math.exp(0.6 + 0.49)
    assert abs(ln.mean() - lmean) < 0.01 and abs(ln.var() / lvar - 1) < 0.05
    assert _ks_statistic(e, lambda s: 1 - np.exp(-2.0 * s)) < KS_CRIT
    assert _ks_statistic(c, lambda s: 0.5 + np.arctan((s - 1.0) / 0.5) / math.pi) < KS_CRIT
    assert _ks_statistic(np.log(ln), lambda s: _normal_cdf((s - 0.3) / 0.7)) < KS_CRIT
    assert g.min() >= 1 and np.all(g == np.floor(g))
    assert abs(g.mean() - 4.0) < 0.05 and abs(g.var() - 12.0) < 0.4  # mean 1/p, variance (1-p)/p^2
    observed = np.array([np.sum(g == k) for k in range(1, 16)] + [np.sum(g >= 16)], dtype=np.float64)
    pk = np.array([0.75 ** (k - 1) * 0.25 for k in range(1, 16)] + [0.75 ** 15])
    assert float(((observed - N_STAT * pk) ** 2 / (N_STAT * pk)).sum()) < 45.0  # 15 dof, p < 1e-4
    assert abs(float(b.mean()) - 0.3) < 5 * math.sqrt(0.21 / N_STAT) and set(b.unique().tolist()) == {0.0, 1.0}
    assert abs(float(bt.mean()) - 0.8) < 5 * math.sqrt(0.16 / N_STAT)
    counts = torch.bincount(k + 3, minlength=10).double()
    assert k.min() == -3 and k.max() == 6
    chi2 = float(((counts - N_STAT / 10) ** 2 / (N_STAT / 10)).sum())
    assert chi2 < 30.0  # 9 degrees of freedom: p < 0.0005


def test_multinomial():
    p = torch.tensor([0.1, 0.0, 0.25, 0.65])
    with repmode.enabled(seed=21):
        draws = torch.multinomial(p, N_STAT, replacement=True)
        firsts = torch.stack([torch.multinomial(p, 3) for _ in range(3000)])
    counts = torch.bincount(draws, minlength=4).double()
    assert counts[1] == 0
    expected = p.double() * N_STAT
    keep = expected > 0
    assert float(((counts[keep] - expected[keep]) ** 2 / expected[keep]).sum()) < 16.0  # 2 dof
    assert bool((firsts.sort(1).values == torch.tensor([0, 2, 3])).all())  # distinct, zero never drawn
    first = torch.bincount(firsts[:, 0], minlength=4).double() / 3000
    assert abs(float(first[3]) - 0.65) < 0.04 and abs(float(first[0]) - 0.1) < 0.03
    with repmode.enabled():
        with pytest.raises(RuntimeError, match="without replacement"):
            torch.multinomial(p, 4)
        w = torch.nn.init.orthogonal_(torch.empty(3, 3))  # QR in a fixed order (tests/families/linalg)
    assert torch.allclose(w @ w.T, torch.eye(3), atol=1e-6)


def test_randperm_is_a_permutation_and_uniform():
    with repmode.enabled(seed=5):
        perms = torch.stack([torch.randperm(4) for _ in range(24_000)])
    assert bool((perms.sort(1).values == torch.arange(4)).all())
    codes = (perms * torch.tensor([64, 16, 4, 1])).sum(1)
    counts = torch.bincount(codes)[codes.unique()].double()
    assert counts.numel() == 24
    assert float(((counts - 1000) ** 2 / 1000).sum()) < 60.0  # 23 degrees of freedom


# ---------------------------------------------------------------- reproducibility

def _draws(_unused=None):
    repmode.manual_seed(2024)
    x = torch.ones(300, 129, requires_grad=True)
    y = torch.nn.functional.dropout(x, 0.4, True)
    y.sum().backward()
    lin = torch.nn.Linear(64, 32)
    return {
        "rand": torch.rand(70_001), "randn": torch.randn(50_001, dtype=torch.float64),
        "randint": torch.randint(0, 1000, (40_001,)), "randperm": torch.randperm(30_001),
        "bernoulli": torch.bernoulli(torch.rand(40_000)), "dropout": y.detach(), "dropout_grad": x.grad,
        "linear": lin.weight.detach(), "exp": torch.empty(40_001).exponential_(),
        "normal_view": torch.zeros(200, 300).t().normal_(),
        "normal_tensor": torch.normal(torch.rand(300) - 0.5, torch.rand(200, 1) + 0.5),
        "normal_float_float": torch.normal(2.0, 3.0, (1001,)),
        "multinomial": torch.multinomial(torch.rand(50, 40), 30, replacement=True),
        "multinomial_distinct": torch.multinomial(torch.rand(50, 40), 20),
    }


def test_invariant_to_threads_and_isa():
    assert_invariant(_draws, torch.zeros(2, 2))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_simd_box_muller_equals_the_scalar_formula(dtype):
    """The AVX2 Box-Muller (four lanes of repmode_log and sincos_turns) gives the scalar bits on
    2M values; also log-normal, which shares the scalar normal path."""
    results = {}
    for isa in available_isas():
        with cpu_isa(isa), repmode.enabled(seed=314):
            results[isa] = (torch.randn(2_000_003, dtype=dtype), torch.empty(100_001, dtype=dtype).log_normal_())
    for isa, got in results.items():
        assert_bitwise_equal(got, results["scalar"], isa)


def test_same_bits_in_a_fresh_process():
    code = (
        "import torch, repmode, hashlib\n"
        "torch.manual_seed(99)\n"
        "with repmode.enabled():\n"
        "    t = [torch.rand(1000), torch.randn(1001), torch.randint(0, 9, (77,)), torch.randperm(50)]\n"
        "print(hashlib.sha256(b''.join(x.numpy().tobytes() for x in t)).hexdigest())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    import hashlib
    torch.manual_seed(99)
    with repmode.enabled():
        t = [torch.rand(1000), torch.randn(1001), torch.randint(0, 9, (77,)), torch.randperm(50)]
    assert out == hashlib.sha256(b"".join(x.numpy().tobytes() for x in t)).hexdigest()


def _uniform_f32(key: int, n: int) -> torch.Tensor:
    """float32 uniform [0, 1) as docs/semantics.md writes it: blocks 0, 1, ... of the Philox stream
    keyed by `key`, one word per element, u = (w >> 8) * 2^-24."""
    words = [w for b in range(-(-n // 4)) for w in C.philox4x32_10(b, 0, 0, 0, key & 0xFFFFFFFF, key >> 32)]
    return torch.tensor([(w >> 8) * 2.0**-24 for w in words[:n]], dtype=torch.float32)


def test_one_call_equals_its_documented_parts():
    """Each random op draws one key from torch's CPU generator (the value a native
    `torch.empty((), dtype=torch.int64).random_()` gives) and reads blocks 0, 1, ... of the stream
    keyed by it; a view is filled in its logical order."""
    torch.manual_seed(3)
    keys = [int(torch.empty((), dtype=torch.int64).random_()) for _ in range(2)]
    with repmode.enabled(seed=3):
        whole = torch.rand(4096)
        after = torch.rand(1001)
    assert_bitwise_equal(whole, _uniform_f32(keys[0], 4096))
    assert_bitwise_equal(after, _uniform_f32(keys[1], 1001))
    with repmode.enabled(seed=3):
        t = torch.empty(64, 64).t().uniform_()
    assert_bitwise_equal(t.contiguous().flatten(), whole[:4096])


def test_out_and_generator_overloads_draw_like_the_functional_forms():
    with repmode.enabled(seed=17):
        want = [torch.rand(5), torch.randn(6, dtype=torch.float64), torch.randint(3, 9, (7,)), torch.randperm(8),
                torch.normal(torch.zeros(4), 2.0), torch.multinomial(torch.tensor([0.3, 0.7]), 5, replacement=True)]
    with repmode.enabled(seed=17):
        got = [torch.empty(5), torch.empty(6, dtype=torch.float64), torch.empty(7, dtype=torch.int64),
               torch.empty(8, dtype=torch.int64), torch.empty(4), torch.empty(5, dtype=torch.int64)]
        torch.rand(5, out=got[0])
        torch.randn(6, out=got[1])
        torch.randint(3, 9, (7,), out=got[2])
        torch.randperm(8, out=got[3])
        torch.normal(torch.zeros(4), 2.0, out=got[4])
        torch.multinomial(torch.tensor([0.3, 0.7]), 5, replacement=True, out=got[5])
    for a, b in zip(got, want):
        assert_bitwise_equal(a, b)
    with repmode.enabled(seed=17):
        r = torch.randint_like(torch.zeros(1000), 3, 7)
        g = torch.Generator().manual_seed(5)
        like = torch.rand_like(torch.zeros(10), generator=g)
    assert r.dtype == torch.float32 and set(r.unique().tolist()) == {3.0, 4.0, 5.0, 6.0}
    g.manual_seed(5)
    with repmode.enabled(seed=99):
        assert_bitwise_equal(torch.rand(10, generator=g), like)


def test_seeding_and_state():
    torch.manual_seed(8)
    with repmode.enabled():
        a = torch.randn(10)
    with repmode.enabled(seed=8):
        b = torch.randn(10)
    assert_bitwise_equal(a, b)
    with repmode.enabled(seed=8):
        torch.rand(3)
        state = repmode.get_rng_state()
        c1 = torch.rand(5)
        repmode.set_rng_state(state)
        c2 = torch.rand(5)
    assert_bitwise_equal(c1, c2)
    # an explicit generator has its own stream, keyed by its seed
    g = torch.Generator()
    g.manual_seed(42)
    with repmode.enabled(seed=1):
        p1 = torch.randperm(20, generator=g)
        torch.rand(100)  # the default stream moves; g's does not
        p2 = torch.randperm(20, generator=g)
        g.manual_seed(42)
        p3 = torch.randperm(20, generator=g)
    assert_bitwise_equal(p1, p3)
    assert not torch.equal(p1, p2)


def test_errors():
    with repmode.enabled():
        with pytest.raises(RuntimeError, match="bernoulli"):
            torch.empty(3).bernoulli_(1.5)
        with pytest.raises(RuntimeError, match="from"):
            torch.randint(5, 5, (3,))
        with pytest.raises(RuntimeError, match="std"):
            torch.empty(3).normal_(0.0, -1.0)


def test_sincos_turns_accuracy():
    """Box-Muller's sin(2 pi u), cos(2 pi u): within 4 ulps of a 100-digit reference on 3000
    random 53-bit u and at the quarter turns and their neighbours."""
    import mpmath
    mpmath.mp.dps = 100
    gen = np.random.default_rng(7)
    us = [int(k) * 2.0**-53 for k in gen.integers(0, 2**53, 3000)]
    for q in (0.0, 0.125, 0.25, 0.375, 0.5, 0.75):
        us += [q, q + 2.0**-53, max(q - 2.0**-53, 0.0)]
    us.append(1.0 - 2.0**-53)
    for u in us:
        s, c = C.sincos_turns(u)
        turn = 2 * mpmath.pi * mpmath.mpf(u)
        for got, want in ((s, mpmath.sin(turn)), (c, mpmath.cos(turn))):
            tol = 4 * math.ulp(float(want)) + 2.0**-70
            assert abs(mpmath.mpf(got) - want) <= tol, (u, got, float(want))


@pytest.mark.parametrize("fn", [torch.rand_like, torch.randn_like, lambda x: torch.randint_like(x, 5)])
def test_like_factories_refuse_tensors_on_other_devices(fn):
    x = torch.empty(3, device="meta")  # a stand-in for a CUDA tensor: the result would belong there
    with pytest.raises(repmode.UnsupportedOpError, match="CPU kernels only"):
        with repmode.enabled():
            fn(x)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_narrow_uniform_stays_below_its_upper_bound(dtype):
    """float32 draws just below 1 round up to 1.0 in bf16/fp16; repmode keeps rand in [0, 1)."""
    with repmode.enabled(seed=1):
        x = torch.rand(200_000, dtype=dtype)
        y = torch.empty(50_000, dtype=dtype).uniform_(-2.0, 3.0)
    below_one = torch.nextafter(torch.tensor(1.0, dtype=dtype), torch.tensor(0.0, dtype=dtype))
    assert float(x.max()) == float(below_one) and bool((x >= 0).all())
    assert bool((y < 3.0).all()) and bool((y >= -2.0).all())


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("draw", [
    lambda t: t.normal_(float("nan"), 1.0),
    lambda t: t.uniform_(float("-inf"), float("inf")),
    lambda t: t.log_normal_(float("nan"), 2.0),
    lambda t: t.cauchy_(float("nan"), 1.0),
], ids=["normal", "uniform (inf - inf)", "log_normal", "cauchy"])
def test_nan_draws_are_the_canonical_nan(draw, dtype):
    """A NaN parameter (or an inf - inf inside the formula) makes NaN draws; they are written as
    repmode's canonical NaN, not the hardware's default NaN (negative on x86, positive on GPUs)."""
    with repmode.enabled(seed=3):
        out = draw(torch.empty(37, dtype=dtype))
    nan = torch.isnan(out)
    assert nan.any()
    as_int, canonical = (torch.int32, 0x7FC00000) if dtype == torch.float32 else (torch.int64, 0x7FF8000000000000)
    assert (out[nan].view(as_int) == canonical).all()
