"""linalg.lstsq (docs/semantics.md "Least squares"): full-rank matrices by Householder QR, the
minimum-norm solution of rank-deficient ones through the SVD with the rank rule of the singular
values; torch's output structure per driver; accuracy at least native's on the same inputs;
the same bits at 1, 2 and 3 threads, for every layout and for each matrix of a batch."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from support import assert_bitwise_equal, assert_invariant, num_threads

import repmode

DRIVERS = (None, "gels", "gelsy", "gelsd", "gelss")


def _rand(*shape, seed=0, dtype=torch.float64):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64).to(dtype)


def _rep(*args, threads=2, **kwargs):
    with num_threads(threads), repmode.enabled():
        return torch.linalg.lstsq(*args, **kwargs)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize("shape", [(7, 4), (4, 7), (2, 6, 6)])
def test_every_driver_has_torchs_outputs_and_values(dtype, driver, shape):
    A = _rand(*shape, seed=1, dtype=dtype)
    B = _rand(*shape[:-1], 3, seed=2, dtype=dtype)
    got, want = _rep(A, B, driver=driver), torch.linalg.lstsq(A, B, driver=driver)
    tol = 1e-4 if dtype == torch.float32 else 1e-12
    for name, g, w in zip(("solution", "residuals", "rank", "singular_values"), got, want):
        assert g.shape == w.shape and g.dtype == w.dtype, name
        if g.is_floating_point() and g.numel():
            assert (g.double() - w.double()).abs().max() <= tol * max(1.0, w.double().abs().max()), name
        elif g.numel():
            assert torch.equal(g, w), name


@pytest.mark.parametrize("driver", ["gelsy", "gelsd", "gelss"])
@pytest.mark.parametrize("shape", [(8, 5), (5, 8)])
def test_rank_deficient_gives_the_minimum_norm_solution_and_the_rank_of_the_values(driver, shape):
    m, n = shape
    A = _rand(m, 3, seed=3) @ _rand(3, n, seed=4)  # rank 3
    B = _rand(m, 2, seed=5)
    got = _rep(A, B, driver=driver)
    assert int(got.rank) == 3 and int(torch.linalg.lstsq(A, B, driver=driver).rank) == 3
    X = torch.linalg.pinv(A) @ B  # the minimum-norm least-squares solution (native float64)
    assert (got.solution - X).abs().max() <= 1e-12 * X.abs().max()
    # rcond large enough to drop a singular value: rank 2
    S = torch.linalg.svdvals(A)
    assert int(_rep(A, B, rcond=float(S[2] / S[0]) * 1.01, driver=driver).rank) == 2


def _normal_residual(A, X, B):
    """‖Aᵀ(AX − B)‖ / (‖A‖² ‖X‖) in extended precision: 0 for the exact least-squares solution."""
    a, x, b = (t.double().numpy().astype(np.longdouble) for t in (A, X, B))
    r = a.T @ (a @ x - b)
    f = lambda t: float(np.sqrt((t * t).sum()))  # noqa: E731
    return f(r) / (f(a) ** 2 * f(x))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("kind", ["random", "ill-conditioned"])
def test_accuracy_at_least_natives_on_the_same_inputs(dtype, kind):
    # The worst case over 20 inputs: one input is not enough, as native LAPACK's result (and its
    # luck on one matrix) changes with its thread count (seen: 1.4e-17 at 1 thread, 2.8e-18 at 2).
    mine, native = [], []
    for seed in range(20):
        g = torch.Generator().manual_seed(seed)
        A = torch.randn(30, 12, generator=g, dtype=torch.float64)
        if kind == "ill-conditioned":  # singular values 1 .. 1e-6 (float64: 1e-10)
            U, _, Vh = torch.linalg.svd(A, full_matrices=False)
            low = -6.0 if dtype == torch.float32 else -10.0
            A = (U * 10.0 ** torch.linspace(0, low, 12, dtype=torch.float64)) @ Vh
        B = torch.randn(30, 2, generator=g, dtype=torch.float64)
        A, B = A.to(dtype), B.to(dtype)
        mine.append(_normal_residual(A, _rep(A, B).solution, B))
        native.append(_normal_residual(A, torch.linalg.lstsq(A, B).solution, B))
    assert max(mine) <= max(native), (max(mine), max(native))


def test_threads_layouts_and_batch_composition():
    A = _rand(5, 9, 6, seed=7)
    A[2] = A[2, :, :3] @ _rand(3, 6, seed=8)  # one rank-deficient matrix in the batch
    B = _rand(5, 9, 2, seed=9)
    assert_invariant(lambda a: dict(zip(("X", "res", "rank", "sv"), torch.linalg.lstsq(a, B[0], driver="gelsd"))),
                     A[0])
    whole = _rep(A, B, driver="gelsd")
    for i in range(5):
        one = _rep(A[i], B[i], driver="gelsd")
        assert_bitwise_equal(whole.solution[i], one.solution, f"matrix {i}")
        assert_bitwise_equal(whole.singular_values[i], one.singular_values, f"matrix {i}")
    assert int(whole.rank[2]) == 3
    for threads in (1, 3):
        assert_bitwise_equal(whole.solution, _rep(A, B, driver="gelsd", threads=threads).solution)


def test_gradient_matches_float64_autograd():
    A, B = _rand(7, 4, seed=10), _rand(7, 2, seed=11)
    w = _rand(4, 2, seed=12)
    a, b = A.clone().requires_grad_(), B.clone().requires_grad_()
    with repmode.enabled():
        (torch.linalg.lstsq(a, b).solution * w).sum().backward()
    ar, br = A.clone().requires_grad_(), B.clone().requires_grad_()
    (torch.linalg.lstsq(ar, br).solution * w).sum().backward()
    assert (a.grad - ar.grad).abs().max() <= 1e-12 * ar.grad.abs().max()
    assert (b.grad - br.grad).abs().max() <= 1e-12 * br.grad.abs().max()


def test_unknown_driver_is_torchs_error():
    with pytest.raises(RuntimeError, match="driver"):
        _rep(torch.eye(3), torch.ones(3, 1), driver="gelsx")
