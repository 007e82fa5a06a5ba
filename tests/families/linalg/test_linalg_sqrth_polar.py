"""linalg.matrix_sqrth and linalg.polar (new in torch 2.14; docs/semantics.md "Linear algebra"):
torch's formulas over repmode's eigh, SVD and bmm. Checked against native torch in float64, for the
same bits at 1, 2 and 3 threads, for batch composition, and through autograd (torch's backward
composites of registered ops) against float64 autograd of native torch."""
from __future__ import annotations

import pytest
import torch
from support import assert_bitwise_equal, assert_invariant

import repmode

pytestmark = pytest.mark.skipif(not hasattr(torch.linalg, "matrix_sqrth") or not hasattr(torch.linalg, "polar"),
                                reason="torch < 2.14 has neither linalg.matrix_sqrth nor linalg.polar")

DTYPES = (torch.float32, torch.float64)
TOL = {torch.float32: 2e-5, torch.float64: 1e-12}


def _g(seed):
    return torch.Generator().manual_seed(seed)


def _spd(*shape, seed=0):
    n = shape[-1]
    X = torch.randn(*shape, generator=_g(seed), dtype=torch.float64)
    return X @ X.mT / n + 0.5 * torch.eye(n, dtype=torch.float64)


def _batch_composition(fn, batch):
    """Matrix i of fn(batch) equals fn(batch[i]) bit for bit (every output)."""
    with repmode.enabled():
        whole = fn(batch)
        parts = [fn(batch[i]) for i in range(batch.shape[0])]
    whole = whole if isinstance(whole, tuple) else (whole,)
    for i, one in enumerate(parts):
        for w, o in zip(whole, one if isinstance(one, tuple) else (one,)):
            assert_bitwise_equal(w[i], o, f"matrix {i}")


def _close(got, want, dtype):
    err = (got.double() - want.double()).abs().max().item()
    assert err <= TOL[dtype] * max(1.0, want.double().abs().max().item()), err


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_matrix_sqrth_matches_float64_and_is_invariant(dtype):
    A = _spd(4, 6, 6, seed=1)
    with repmode.enabled():
        X = torch.linalg.matrix_sqrth(A.to(dtype))
    _close(X, torch.linalg.matrix_sqrth(A), dtype)
    _close(X.double() @ X.double(), A, dtype)
    assert_invariant(lambda a: {"X": torch.linalg.matrix_sqrth(a)}, A.to(dtype))
    _batch_composition(torch.linalg.matrix_sqrth, A.to(dtype))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(3, 5, 5), (2, 7, 4)], ids=str)
def test_polar_matches_float64_and_is_invariant(dtype, shape):
    A = torch.randn(*shape, generator=_g(2), dtype=torch.float64)
    with repmode.enabled():
        U, H = torch.linalg.polar(A.to(dtype))
    U64, H64 = torch.linalg.polar(A)
    _close(U, U64, dtype)
    _close(H, H64, dtype)
    _close(U.double() @ H.double(), A, dtype)
    assert_invariant(lambda a: dict(zip("UH", torch.linalg.polar(a))), A.to(dtype))
    _batch_composition(torch.linalg.polar, A.to(dtype))


def test_polar_refuses_a_wide_matrix_as_torch_does():
    A = torch.randn(3, 5, generator=_g(3))
    with pytest.raises(RuntimeError):
        torch.linalg.polar(A)
    with repmode.enabled(), pytest.raises(RuntimeError, match="m >= n"):
        torch.linalg.polar(A)


def test_gradients_match_float64_autograd():
    A = _spd(2, 5, 5, seed=4)
    B = torch.randn(2, 6, 4, generator=_g(5), dtype=torch.float64)

    def grads(dtype, mode):
        a, b = A.to(dtype).requires_grad_(), B.to(dtype).requires_grad_()
        with mode:
            X = torch.linalg.matrix_sqrth(a)
            U, H = torch.linalg.polar(b)
            (X.sum() + (U * torch.arange(24.0).reshape(6, 4)).sum() + H.sum()).backward()
        return a.grad, b.grad
    from contextlib import nullcontext
    ga, gb = grads(torch.float32, repmode.enabled())
    wa, wb = grads(torch.float64, nullcontext())
    _close(ga, wa, torch.float32)
    _close(gb, wb, torch.float32)
