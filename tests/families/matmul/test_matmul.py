"""mm/addmm/bmm: the canonical order over k (chains of 16 fma from +0, the 16 chains of a 256-k chunk
summed in order, chunk partials summed per group of 64 chunks, group sums summed; a float32 product
of at most 32 terms in that order in float64, rounded once), checked against exact rational
arithmetic, and invariance to threads, ISA, layout and batch composition."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
import torch
from support import assert_bitwise_equal, assert_invariant, available_isas, cpu_isa, layouts, num_threads

import repmode
from repmode._ext import DTYPE_CODE, C


def round_to_float32(q: Fraction) -> float:
    """Round an exact rational to the nearest float32, ties to even (no floating point used)."""
    if q == 0:
        return 0.0
    sign = -1 if q < 0 else 1
    q = abs(q)
    e = q.numerator.bit_length() - q.denominator.bit_length()
    if Fraction(2) ** e > q:
        e -= 1
    e = max(e, -126)  # subnormal spacing below 2^-126
    ulp = Fraction(2) ** (e - 23)
    n, r = divmod(q, ulp)
    if r > ulp / 2 or (r == ulp / 2 and n % 2 == 1):
        n += 1
    value = float(n * ulp)
    if value >= 2.0 ** 128:
        return sign * float("inf")
    return sign * float(np.float32(value))


CHAIN, CHUNK, GROUP = 16, 256, 64  # the definition's sizes (docs/semantics.md "Matrix products"), typed independently
SHORT_K = 32  # float32 sums of at most this many terms run in float64


def round_to_float64(q: Fraction) -> float:
    """Round an exact rational to the nearest float64, ties to even (Python's int / int division is
    correctly rounded)."""
    return q.numerator / q.denominator


def _in_order(parts: list[float], rnd) -> float:
    """The first part, then the others added in order, each addition rounded once."""
    s = parts[0]
    for p in parts[1:]:
        s = _add(s, p, rnd)
    return s


def model_dot(terms: list[tuple[Fraction, Fraction]], rnd=None) -> float:
    """The order over k, each IEEE operation an exact rational rounded once: a chain is
    c = round(a*b + c) from +0 over 16 terms; a chunk's sum starts at its first chain and adds the
    others in order; a group's sum starts at its first chunk's sum and adds the others' in order; the
    total starts at the first group's sum and adds the others' in order. A float32 sum of at most 32
    terms (the default `rnd`) runs all of this in float64 and is rounded once to float32."""
    K = len(terms)
    if K == 0:
        return 0.0
    if rnd is None:
        if K <= SHORT_K:
            return round_to_float32(Fraction(model_dot(terms, round_to_float64)))
        rnd = round_to_float32
    chains = []
    for h0 in range(0, K, CHAIN):
        c = 0.0
        for x, y in terms[h0:h0 + CHAIN]:
            c = rnd(x * y + Fraction(c))
        chains.append(c)
    per_chunk = CHUNK // CHAIN
    chunks = [_in_order(chains[q0:q0 + per_chunk], rnd) for q0 in range(0, len(chains), per_chunk)]
    groups = [_in_order(chunks[g0:g0 + GROUP], rnd) for g0 in range(0, len(chunks), GROUP)]
    return _in_order(groups, rnd)


def _add(x: float, y: float, rnd) -> float:
    if math.isinf(x) or math.isinf(y) or math.isnan(x) or math.isnan(y):
        return x + y
    return rnd(Fraction(x) + Fraction(y))


def model_mm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Every output by model_dot over k = 0..K-1."""
    M, K = a.shape
    N = b.shape[1]
    A = [[Fraction(v) for v in row] for row in a.tolist()]
    B = [[Fraction(v) for v in row] for row in b.tolist()]
    out = torch.empty(M, N)
    for i in range(M):
        for j in range(N):
            out[i, j] = model_dot([(A[i][k], B[k][j]) for k in range(K)])
    return out


@pytest.mark.parametrize("shape", [(1, 1, 1), (3, 5, 7), (7, 13, 17), (17, 9, 33), (6, 40, 16), (2, 0, 3),
                                   (3, 16, 5), (4, 31, 3), (3, 32, 4), (5, 33, 3), (2, 47, 3), (2, 256, 3),
                                   (3, 257, 2), (2, 700, 3)])
def test_mm_equals_exact_rational_model(rng, shape):
    M, K, N = shape
    # wide exponent range so the rounding of every step matters
    a = torch.randn(M, K, generator=rng) * torch.exp2(torch.randint(-10, 10, (M, K), generator=rng).float())
    b = torch.randn(K, N, generator=rng)
    with repmode.enabled():
        got = a @ b
    assert_bitwise_equal(got, model_mm(a, b))


def test_mm_past_one_group_equals_exact_rational_model(rng):
    """K = 2 groups + 300: chunk ends, group ends and the last partial chunk and group."""
    K = 2 * CHUNK * GROUP + 300
    a = torch.randn(2, K, generator=rng) * torch.exp2(torch.randint(-6, 6, (2, K), generator=rng).float())
    b = torch.rand(K, 2, generator=rng)
    with repmode.enabled():
        got = a @ b
    assert_bitwise_equal(got, model_mm(a, b))


def _differs_from_one_chain(a: torch.Tensor, b: torch.Tensor) -> int:
    """How many outputs of repmode's a @ b differ from one float32 fma chain over all of k."""
    with repmode.enabled():
        got = (a @ b).flatten().tolist()
    A = [[Fraction(v) for v in row] for row in a.tolist()]
    B = [[Fraction(v) for v in row] for row in b.t().tolist()]
    chain = []
    for row in A:
        for col in B:
            acc = 0.0
            for x, y in zip(row, col):
                acc = round_to_float32(x * y + Fraction(acc))
            chain.append(acc)
    return sum(g != c for g, c in zip(got, chain))


def test_the_order_is_not_the_single_chain(rng):
    """The model checks mean something: one fma chain over all k (the order of NUMERICS_VERSION <= 2)
    gives other bits on most outputs of a 2,000-long product."""
    assert _differs_from_one_chain(torch.rand(4, 2000, generator=rng), torch.rand(2000, 4, generator=rng)) >= 8


def test_the_order_is_not_version_6s_chunk_chains(rng):
    """The chain level means something: chunks of one 256-term fma chain (NUMERICS_VERSION 3-6; a
    250-long product is one such chunk) give other bits on most outputs."""
    assert _differs_from_one_chain(torch.randn(4, 250, generator=rng), torch.randn(250, 4, generator=rng)) >= 8


@pytest.mark.parametrize("isa", available_isas())
def test_short_float32_products_round_the_float64_sum_once(isa):
    """k <= 32: the sum runs in float64, so a float32 overflow inside it does not stick, a float64
    value past float32's range rounds to inf, and cancellation keeps the small terms exactly."""
    big = 3e38
    a = torch.tensor([[big, big, -big], [big, big, 0.0], [1.0, 2.0 ** -30, -1.0]])
    b = torch.ones(3, 1)
    with cpu_isa(isa), repmode.enabled():
        got = (a @ b).flatten().tolist()
    assert got == [float(np.float32(big)), float("inf"), 2.0 ** -30]
    # k = 33 is a float32 chain: the first two terms overflow and stay inf
    a33 = torch.zeros(1, 33)
    a33[0, :3] = torch.tensor([big, big, -big])
    with cpu_isa(isa), repmode.enabled():
        assert (a33 @ torch.ones(33, 1)).item() == float("inf")


def test_round_to_float32_model_itself():
    for v in [1.0, 1 + 2 ** -24, 1 + 3 * 2 ** -24, 2 ** -149, 3 * 2 ** -150, -0.1]:
        assert round_to_float32(Fraction(v)) == float(np.float32(v))


SHAPES = [(1, 1, 1), (5, 3, 2), (70, 33, 65), (257, 129, 300), (64, 512, 96), (9, 2 * 16384 + 777, 20)]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("M,K,N", SHAPES)
def test_fast_paths_equal_reference(rng, dtype, M, K, N):
    a = torch.randn(M, K, generator=rng, dtype=dtype)
    b = torch.randn(K, N, generator=rng, dtype=dtype)
    ref = torch.empty(M, N, dtype=dtype)
    C.gemm_reference(DTYPE_CODE[dtype], 1, M, N, K, a.data_ptr(), 0, K, 1, b.data_ptr(), 0, N, 1,
                     ref.data_ptr(), 0, N, 1)
    for isa in available_isas():
        for threads in (1, 2, 3):
            with cpu_isa(isa), num_threads(threads), repmode.enabled():
                got = a @ b
            assert_bitwise_equal(got, ref, f"isa={isa} threads={threads}")
    for (na, la), (nb, lb) in zip(layouts(a).items(), layouts(b).items()):
        with repmode.enabled():
            got = la @ lb
        assert_bitwise_equal(got, ref, f"layout={na}")


def test_batch_composition_and_addmm_bmm(rng):
    a = torch.randn(100, 64, generator=rng)
    b = torch.randn(64, 48, generator=rng)
    bias = torch.randn(48, generator=rng)
    with repmode.enabled():
        full = a @ b
        for i in (0, 7, 99):
            assert_bitwise_equal(full[i:i + 1], a[i:i + 1] @ b, f"row {i}")
        lin = torch.addmm(bias, a, b)
        lin_scaled = torch.addmm(bias, a, b, beta=0.5, alpha=2.0)
        lin_beta0 = torch.addmm(torch.full((48,), float("nan")), a, b, beta=0)
        batched = torch.bmm(a.reshape(4, 25, 64), b.expand(4, 64, 48))
    with repmode.enabled():
        expected_lin = full + bias
        expected_scaled = (bias * 0.5) + (full * 2.0)
    assert_bitwise_equal(lin, expected_lin)
    assert_bitwise_equal(lin_scaled, expected_scaled)
    assert_bitwise_equal(lin_beta0, full)
    assert_bitwise_equal(batched.reshape(100, 48), full)


def test_accuracy_against_float64(rng):
    a = torch.randn(50, 300, generator=rng)
    b = torch.randn(300, 40, generator=rng)
    with repmode.enabled():
        got = a @ b
    exact = a.double() @ b.double()
    bound = 300 * 2 ** -24 * (a.abs().double() @ b.abs().double())
    assert ((got.double() - exact).abs() <= bound).all()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("K", [4096, 65536, 300000])
def test_error_stays_flat_in_k(rng, dtype, K):
    """All-positive inputs (no cancellation, the error is the summation's): the four-level order
    keeps the relative error a few units of roundoff at any k, where one chain over k grew like k·u
    (36x native torch at k = 65,536). Bound: the worst draws measured here stay under 6u
    (docs/semantics.md gives the derivation and benchmarks/accuracy.py the comparison with native)."""
    a = torch.rand(8, K, generator=rng, dtype=torch.float64).to(dtype)
    b = torch.rand(K, 8, generator=rng, dtype=torch.float64).to(dtype)
    with repmode.enabled():
        got = a @ b
    exact = a.double() @ b.double() if dtype == torch.float32 else _exact_f64_mm(a, b)
    u = 2.0 ** -24 if dtype == torch.float32 else 2.0 ** -53
    rel = ((got.double() - exact).abs() / exact.abs()).max().item()
    assert rel <= 6 * u, rel / u


def _exact_f64_mm(a, b):
    """The float64 product correctly rounded: each a·b split exactly into p + e (Dekker's
    two-product; no overflow or underflow for rand inputs), all p and e summed by math.fsum."""
    def split(x):
        c = 134217729.0 * x  # 2^27 + 1
        hi = c - (c - x)
        return hi, x - hi

    A, B = a.numpy(), b.numpy()
    out = torch.empty(A.shape[0], B.shape[1], dtype=torch.float64)
    for i in range(A.shape[0]):
        for j in range(B.shape[1]):
            x, y = A[i], B[:, j]
            p = x * y
            xh, xl = split(x)
            yh, yl = split(y)
            e = ((xh * yh - p) + xh * yl + xl * yh) + xl * yl
            out[i, j] = math.fsum(np.concatenate([p, e]))
    return out


def test_gradients_match_float64_autograd(rng):
    a = torch.randn(20, 30, generator=rng, requires_grad=True)
    b = torch.randn(30, 10, generator=rng, requires_grad=True)
    bias = torch.randn(10, generator=rng, requires_grad=True)
    with repmode.enabled():
        torch.addmm(bias, a, b).relu().sum().backward()
    a64, b64, c64 = (t.detach().double().requires_grad_() for t in (a, b, bias))
    torch.addmm(c64, a64, b64).relu().sum().backward()
    for g, w in [(a.grad, a64.grad), (b.grad, b64.grad), (bias.grad, c64.grad)]:
        assert torch.allclose(g.double(), w, rtol=1e-5, atol=1e-5)


def test_errors():
    a, b = torch.ones(2, 3), torch.ones(4, 5)
    c = torch.ones(2, 2, dtype=torch.complex64)
    with repmode.enabled():
        with pytest.raises(RuntimeError, match="cannot be multiplied"):
            a @ b
        with pytest.raises(repmode.UnsupportedOpError, match="complex64"):
            c @ c


def _products(a, v, b3, c3, w):
    return {
        "mv": a @ v, "dot": v @ v, "vdot": torch.vdot(v, v), "addmv": torch.addmv(w, a, v, beta=0.5, alpha=2.0),
        "baddbmm": torch.baddbmm(c3, a.expand(3, *a.shape), b3, beta=0.25), "addr": torch.addr(a, w, v, alpha=0.5),
        "matmul_3d_1d": torch.matmul(b3.transpose(1, 2), v), "einsum": torch.einsum("ij,j->i", a, v),
        "outer": torch.outer(w, v),
    }


def test_vector_products_invariance_and_accuracy(rng):
    a = torch.randn(300, 257, generator=rng)
    v = torch.randn(257, generator=rng)
    b3 = torch.randn(3, 257, 40, generator=rng)
    c3 = torch.randn(3, 300, 40, generator=rng)
    w = torch.randn(300, generator=rng)
    with num_threads(1), repmode.enabled():
        want = _products(a, v, b3, c3, w)
    for threads in (2, 3):
        for isa in available_isas():
            with num_threads(threads), cpu_isa(isa), repmode.enabled():
                got = _products(a, v, b3, c3, w)
            for k in want:
                assert_bitwise_equal(want[k], got[k], f"{k} threads={threads} isa={isa}")
    la = layouts(a)
    for name, lay in la.items():
        with repmode.enabled():
            got = _products(lay, v, b3, c3, w)
        for k in ("mv", "addmv", "einsum"):
            assert_bitwise_equal(want[k], got[k], f"{k} layout={name}")
    native = _products(a.double(), v.double(), b3.double(), c3.double(), w.double())
    for k in want:
        assert torch.allclose(want[k].double(), native[k], rtol=1e-4, atol=1e-4), k
    # the vector forms are the same chain as mm
    with repmode.enabled():
        assert_bitwise_equal(want["mv"], (a @ v.unsqueeze(1)).squeeze(1))
        assert_bitwise_equal(want["dot"], (v.unsqueeze(0) @ v.unsqueeze(1)).reshape(()))


@pytest.mark.parametrize("dtype", [torch.int64, torch.complex64])
def test_addr_refuses_other_dtypes_clearly(dtype):
    a, v = torch.ones(2, 2, dtype=dtype), torch.ones(2, dtype=dtype)
    with pytest.raises(repmode.UnsupportedOpError, match="aten.addr.default"):
        with repmode.enabled():
            torch.addr(a, v, v)



# ---- bf16/fp16 (autocast's products): widened exactly, the float32 chain, one rounding ----------

def round_to_format(value: float, mantissa_bits: int, min_exponent: int, max_exponent: int) -> float:
    """Round a float32 value to a binary format with `mantissa_bits` stored bits, ties to even
    (exact rationals, no floating point): bfloat16 = (7, -126, 127), float16 = (10, -14, 15)."""
    q = Fraction(value)
    if q == 0 or math.isinf(value) or math.isnan(value):
        return value
    sign = -1 if q < 0 else 1
    q = abs(q)
    e = q.numerator.bit_length() - q.denominator.bit_length()
    if Fraction(2) ** e > q:
        e -= 1
    e = max(e, min_exponent)
    ulp = Fraction(2) ** (e - mantissa_bits)
    n, r = divmod(q, ulp)
    if r > ulp / 2 or (r == ulp / 2 and n % 2 == 1):
        n += 1
    rounded = n * ulp
    if rounded >= Fraction(2) ** (max_exponent + 1):
        return sign * float("inf")
    return sign * float(rounded)


_FORMATS = {torch.bfloat16: (7, -126, 127), torch.float16: (10, -14, 15)}


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("shape", [(1, 1, 1), (3, 5, 7), (7, 13, 17), (5, 33, 4)])
def test_low_precision_mm_is_the_widened_float32_chain_rounded_once(rng, dtype, shape):
    M, K, N = shape
    a = (torch.randn(M, K, generator=rng) * 4).to(dtype)
    b = torch.randn(K, N, generator=rng).to(dtype)
    with repmode.enabled():
        got = a @ b
    chain = model_mm(a.float(), b.float())  # exact widening, then the independent float32 chain
    expected = torch.tensor([[round_to_format(v, *_FORMATS[dtype]) for v in row] for row in chain.tolist()],
                            dtype=dtype)
    assert got.dtype == dtype
    assert_bitwise_equal(got, expected)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_low_precision_product_family_rounds_the_float32_result_once(rng, dtype):
    a, b = torch.randn(6, 9, generator=rng), torch.randn(9, 5, generator=rng)
    bias, v = torch.randn(5, generator=rng), torch.randn(9, generator=rng)
    ba, bb = torch.randn(3, 6, 9, generator=rng), torch.randn(3, 9, 5, generator=rng)
    low = {name: t.to(dtype) for name, t in dict(a=a, b=b, bias=bias, v=v, ba=ba, bb=bb).items()}
    wide = {name: t.float() for name, t in low.items()}
    cases = {
        "addmm": lambda t: torch.addmm(t["bias"], t["a"], t["b"], beta=0.5, alpha=2.0),
        "bmm": lambda t: torch.bmm(t["ba"], t["bb"]),
        "baddbmm": lambda t: torch.baddbmm(t["ba"] @ t["bb"], t["ba"], t["bb"]),
        "mv": lambda t: torch.mv(t["a"], t["v"]),
        "dot": lambda t: torch.dot(t["v"], t["v"]),
        "linear": lambda t: torch.nn.functional.linear(t["a"], t["b"].t(), t["bias"]),
    }
    with repmode.enabled():
        for name, case in cases.items():
            got = case(low)
            assert got.dtype == dtype, name
            assert_bitwise_equal(got, case(wide).to(dtype), name)
        out = torch.empty(6, 5, dtype=dtype)
        torch.mm(low["a"], low["b"], out=out)
        assert_bitwise_equal(out, torch.mm(wide["a"], wide["b"]).to(dtype), "mm out=")
        inplace = low["a"] @ low["b"]
        expected = torch.addmm(inplace.float(), wide["a"], wide["b"]).to(dtype)
        inplace.addmm_(low["a"], low["b"])
        assert_bitwise_equal(inplace, expected, "addmm_")
        with pytest.raises(RuntimeError, match="same dtype"):
            torch.mm(low["a"], b)


def test_low_precision_mm_is_invariant_to_threads_and_layout(rng):
    a = torch.randn(37, 70, generator=rng).bfloat16()
    b = torch.randn(70, 45, generator=rng).bfloat16()
    assert_invariant(lambda x, y: {"mm": x @ y}, a, b)


def test_addmm_scales_the_product_not_an_operand():
    """α multiplies mm(A, B) after the chain (docs/semantics.md), so in float64 a subnormal times max
    keeps its term and a zero product stays zero. Native float64 addmm scales an operand by α first:
    it drops the term below and makes (−1.5·max)·0 = NaN, which is why the property suite's
    reference is exact (tests/support/property_checks.exact_addmm), not native float64."""
    big = torch.finfo(torch.float64).max
    t = torch.tensor([[0.0015409961082440433]], dtype=torch.float64)
    a, b = torch.tensor([[5e-324]], dtype=torch.float64), torch.tensor([[big]], dtype=torch.float64)
    with repmode.enabled():
        kept = torch.addmm(t, a, b, alpha=0.25)
        zero = torch.addmm(torch.zeros(1, 1, dtype=torch.float64), torch.tensor([[big, 0.0]], dtype=torch.float64),
                           torch.tensor([[0.0], [2.0]], dtype=torch.float64), alpha=-1.5)
    exact = Fraction(t.item()) + Fraction(1, 4) * Fraction(5e-324) * Fraction(big)
    assert kept.item() == float(exact) != t.item()
    assert zero.item() == 0.0


def _strided(t):
    """The same values with every stride doubled (a view of a buffer twice the size)."""
    buf = torch.zeros(*[2 * s for s in t.shape], dtype=t.dtype)
    view = buf[tuple(slice(None, None, 2) for _ in t.shape)]
    view.copy_(t)
    return view


def test_a_contraction_to_one_element_is_dot_whatever_the_layout():
    # torch's composite tensordot (and inner) picks dot for contiguous operands and mul + sum for
    # strided ones; in the mode it is always dot of the flattened operands, in every autograd mode
    g = torch.Generator().manual_seed(24)
    a, b = torch.randn(300, generator=g), torch.randn(300, generator=g)
    A, B = torch.randn(3, 4, 5, generator=g), torch.randn(5, 4, 3, generator=g)
    with repmode.enabled():
        want = torch.dot(a, b)
        want3 = torch.dot(A.permute(0, 1, 2).reshape(-1), B.permute(2, 1, 0).reshape(-1))
        for x, y in [(a, b), (_strided(a), _strided(b)), (a, _strided(b))]:
            for ctx in (torch.enable_grad, torch.no_grad, torch.inference_mode):
                with ctx():
                    assert_bitwise_equal(torch.inner(x, y), want)
                    assert_bitwise_equal(torch.tensordot(x, y, 1), want)
        for X in (A, _strided(A), A.transpose(0, 2).contiguous().transpose(0, 2)):
            for ctx in (torch.enable_grad, torch.inference_mode):
                with ctx():
                    assert_bitwise_equal(torch.tensordot(X, B, ([0, 1, 2], [2, 1, 0])), want3)
        x = _strided(a).requires_grad_()
        torch.inner(x, b).backward()
    assert_bitwise_equal(x.grad, b)


def test_tensordot_outside_the_mode_is_torchs_own_composite():
    g = torch.Generator().manual_seed(25)
    a, b = torch.randn(300, generator=g), torch.randn(300, generator=g)
    assert_bitwise_equal(torch.inner(a, b), torch.dot(a, b))
    sa, sb = _strided(a), _strided(b)
    assert_bitwise_equal(torch.inner(sa, sb), (sa * sb).sum())
    A, B = torch.randn(3, 4, generator=g), torch.randn(4, 5, generator=g)
    assert_bitwise_equal(torch.tensordot(A, B, 1), torch.mm(A, B))
    with repmode.enabled():
        out = torch.tensordot(A, B, 1)
        assert_bitwise_equal(out, torch.mm(A, B))
