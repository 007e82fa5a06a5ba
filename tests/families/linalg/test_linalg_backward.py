"""float32 backward of triangular_solve and householder_product (torch's formulas through
repmode's registered ops): accuracy against float64 autograd next to native torch's over many
random inputs, the same bits at 1 and 2 threads, and batch composition. The long measurement
(200 inputs per size, n = 2 .. 64, and what-if float64 products) is
benchmarks/accuracy_linalg_backward.py; docs/semantics.md "Linear algebra" has the summary."""
from __future__ import annotations

import statistics

import pytest
import torch
from support import assert_bitwise_equal, num_threads

import repmode

COUNT = 24


def _g(seed):
    return torch.Generator().manual_seed(seed)


def _triangular_solve(n, i):
    g = _g(100 * n + i)
    A = torch.randn(n, n, generator=g) + (2.0 if i % 2 else 0.0) * torch.eye(n)  # odd: better conditioned
    B = torch.empty(n, 3).uniform_(-9, 9, generator=g)
    upper, transpose = bool(i % 2), bool((i // 2) % 2)

    def f(b, a):
        return torch.triangular_solve(b, a, upper=upper, transpose=transpose)
    return f, (B, A), g


def _householder(n, i):
    g = _g(200 * n + i)
    m, k = n + i % 2, n - (i % 3 == 0)
    A = torch.empty(m, n).uniform_(-2, 2, generator=g)
    tau = torch.empty(k).uniform_(-2, 2, generator=g)
    return torch.linalg.householder_product, (A, tau), g


CASES = {"triangular_solve": _triangular_solve, "householder_product": _householder}


def _grads(f, inputs, cot, strict, threads=2):
    xs = [x.detach().clone().requires_grad_() for x in inputs]
    with num_threads(threads):
        if strict:
            with repmode.enabled():
                out = f(*xs)
                return torch.autograd.grad(out, xs, cot)
        return torch.autograd.grad(f(*xs), xs, cot)


@pytest.mark.filterwarnings("ignore:torch.triangular_solve is deprecated")
@pytest.mark.parametrize("op", sorted(CASES))
@pytest.mark.parametrize("n", [3, 6])
def test_backward_error_against_float64_is_typically_natives_and_has_the_same_bits_at_1_and_2_threads(op, n):
    rep_errors, nat_errors = [], []
    for i in range(COUNT):
        f, inputs, g = CASES[op](n, i)
        outs = f(*inputs)
        outs = outs if isinstance(outs, tuple) else (outs,)
        cot = [torch.randn(o.shape, generator=g) for o in outs]
        ref = _grads(f, [x.double() for x in inputs], [c.double() for c in cot], False)
        one = _grads(f, inputs, cot, True, threads=1)
        two = _grads(f, inputs, cot, True, threads=2)
        for a, b in zip(one, two):
            assert_bitwise_equal(a, b, f"{op} input {i}: 1 vs 2 threads")
        nat = _grads(f, inputs, cot, False)
        scale = max(float(r.abs().max()) for r in ref)
        rep_errors.append(max(float((x.double() - r).abs().max()) for x, r in zip(one, ref)) / scale)
        nat_errors.append(max(float((x.double() - r).abs().max()) for x, r in zip(nat, ref)) / scale)
    # Both run torch's formula with float32 between the ops, and every repmode op in it is locally
    # at least as accurate as native's on the same operands (benchmarks/accuracy_linalg_backward.py);
    # the end-to-end error of one input still goes either way, by which float32 roundings of the
    # formula happen to cancel. Measured over up to 200 inputs per size: triangular_solve's median
    # error is 0.09-0.8x native's, householder_product's 0.8-1.25x, and the worst input up to 2.3x
    # native's worst on either side (docs/evidence.md).
    assert statistics.median(rep_errors) <= 1.5 * statistics.median(nat_errors), (rep_errors, nat_errors)
    assert max(rep_errors) <= 4 * max(nat_errors), (max(rep_errors), max(nat_errors))
    assert max(rep_errors) < 1e-3


@pytest.mark.filterwarnings("ignore:torch.triangular_solve is deprecated")
@pytest.mark.parametrize("op", sorted(CASES))
def test_backward_of_a_batch_gives_each_matrix_the_bits_of_its_own_backward(op):
    n, batch = 5, 3
    cases = [CASES[op](n, i) for i in (1, 5, 13)]  # the same shapes and flags
    f = cases[0][0]
    inputs = [torch.stack([c[1][j] for c in cases]) for j in range(2)]
    outs = f(*inputs)
    outs = outs if isinstance(outs, tuple) else (outs,)
    cot = [torch.randn(o.shape, generator=_g(7)) for o in outs]
    whole = _grads(f, inputs, cot, True)
    for i in range(batch):
        alone = _grads(f, [x[i] for x in inputs], [c[i] for c in cot], True)
        for w, a in zip(whole, alone):
            assert_bitwise_equal(w[i], a, f"{op} matrix {i}")
