"""LDLᵀ with Bunch-Kaufman pivoting (docs/semantics.md "LDLᵀ"): LAPACK's sytf2 (lower) in its
output format — LD and pivots equal native torch's (pivots exactly), 2x2 blocks included —
ldl_solve as LAPACK's sytrs; accuracy at least native's on the same inputs; the same bits at 1,
2 and 3 threads, for every layout and for each matrix of a batch."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from support import assert_bitwise_equal, assert_invariant, num_threads

import repmode


def _sym(*shape, seed=0, dtype=torch.float64):
    X = torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    return ((X + X.mT) / 2).to(dtype)


def _rep(fn, *args, threads=2, **kwargs):
    with num_threads(threads), repmode.enabled():
        return fn(*args, **kwargs)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("n", [1, 2, 5, 12])
def test_factor_equals_lapacks_format_and_pivots(dtype, n):
    A = _sym(4, n, n, seed=n, dtype=dtype)
    LD, piv, info = _rep(torch.linalg.ldl_factor_ex, A)
    LDn, pivn, infon = torch.linalg.ldl_factor_ex(A)
    assert torch.equal(piv, pivn) and torch.equal(info, infon)
    tol = 1e-4 if dtype == torch.float32 else 1e-11
    assert (LD.double() - LDn.double()).abs().max() <= tol * max(1.0, LDn.double().abs().max())
    assert torch.equal(LD.triu(1), torch.zeros_like(LD.triu(1)))


def test_two_by_two_pivots_appear_and_match():
    """A zero diagonal forces Bunch-Kaufman's 2x2 blocks (negative pivots)."""
    A = _sym(6, 6, seed=3)
    A.diagonal().zero_()
    LD, piv, _ = _rep(torch.linalg.ldl_factor_ex, A)
    LDn, pivn, _ = torch.linalg.ldl_factor_ex(A)
    assert (piv < 0).any()
    assert torch.equal(piv, pivn)
    assert (LD - LDn).abs().max() <= 1e-12 * LDn.abs().max()


def test_upper_triangle_is_not_read_and_singular_info():
    A = _sym(5, 5, seed=4)
    B = A.tril() + torch.triu(torch.full((5, 5), 9.0, dtype=torch.float64), 1)
    assert_bitwise_equal(_rep(torch.linalg.ldl_factor_ex, A)[0], _rep(torch.linalg.ldl_factor_ex, B)[0])
    Z = torch.zeros(3, 3, dtype=torch.float64)
    assert int(_rep(torch.linalg.ldl_factor_ex, Z)[2]) == int(torch.linalg.ldl_factor_ex(Z)[2]) == 1
    with pytest.raises(RuntimeError):
        _rep(torch.linalg.ldl_factor, Z)


def _ld(t):
    return t.detach().numpy().astype(np.longdouble)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_solve_accuracy_at_least_natives_on_the_same_inputs(dtype):
    """Forward error against the solution refined in extended precision, over 16 matrices (a third
    with a zero diagonal: 2x2 blocks): repmode's median and largest at most native's. (A single
    matrix's backward error sits at the rounding floor for both and decides nothing.)"""
    mine, native = [], []
    for seed in range(16):
        A = _sym(10, 10, seed=100 + seed)
        if seed % 3 == 0:
            A.diagonal().zero_()
        B = torch.randn(10, 2, generator=torch.Generator().manual_seed(200 + seed), dtype=torch.float64)
        A, B = A.to(dtype), B.to(dtype)
        a, b = _ld(A), _ld(B)
        x = np.linalg.solve(a.astype(np.float64), b.astype(np.float64)).astype(np.longdouble)
        for _ in range(3):  # iterative refinement with extended-precision residuals
            x = x + np.linalg.solve(a.astype(np.float64), (b - a @ x).astype(np.float64)).astype(np.longdouble)
        for out, fn in ((mine, lambda *t: _rep(*t)), (native, lambda f, *t: f(*t))):
            LD, piv = fn(torch.linalg.ldl_factor, A)
            X = fn(torch.linalg.ldl_solve, LD, piv, B)
            out.append(float(np.abs(_ld(X) - x).max() / np.abs(x).max()))
    assert np.median(mine) <= np.median(native) and max(mine) <= max(native), (np.median(mine), np.median(native),
                                                                               max(mine), max(native))


def test_threads_layouts_and_batch_composition():
    A = _sym(6, 40, 40, seed=7)
    A[2].diagonal().zero_()
    B = torch.randn(6, 40, 3, generator=torch.Generator().manual_seed(8), dtype=torch.float64)
    assert_invariant(lambda a: dict(zip(("LD", "piv"), torch.linalg.ldl_factor(a))), A[2])
    LD, piv = _rep(torch.linalg.ldl_factor, A, threads=1)
    X = _rep(torch.linalg.ldl_solve, LD, piv, B, threads=1)
    for threads in (2, 3):
        LD2, piv2 = _rep(torch.linalg.ldl_factor, A, threads=threads)
        assert_bitwise_equal(LD, LD2) and assert_bitwise_equal(piv, piv2)
        assert_bitwise_equal(X, _rep(torch.linalg.ldl_solve, LD, piv, B, threads=threads))
    for i in (0, 2, 5):
        LDi, pivi = _rep(torch.linalg.ldl_factor, A[i])
        assert_bitwise_equal(LD[i], LDi)
        assert_bitwise_equal(X[i], _rep(torch.linalg.ldl_solve, LDi, pivi, B[i]))


@pytest.mark.parametrize("piv", [[1, 2, 4], [1, 0, 3], [1, 2, -3], [-1, 2, 3], [-2, -2, -2]])
def test_malformed_pivots_are_refused_before_the_solve(piv):
    with pytest.raises(RuntimeError, match="pivots"):
        _rep(torch.linalg.ldl_solve, torch.eye(3, dtype=torch.float64), torch.tensor(piv, dtype=torch.int32),
             torch.ones(3, 1, dtype=torch.float64))
