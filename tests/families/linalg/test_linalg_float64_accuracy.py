"""Rule 6 for float64 QR, eigh and SVD (docs/semantics.md "Linear algebra", "float64 in
double-double"): on the same inputs — random, ill-conditioned, graded, clustered — repmode's
backward errors, orthogonality and eigen-/singular-value errors are at most native LAPACK's.
Errors are computed in x87 extended precision (numpy.longdouble), eigen- and singular values
against mpmath at 40 digits, so the measurement's own rounding is far below both errors. The
longer sweep over n = 16 and 64 is benchmarks/accuracy_linalg64.py (docs/evidence.md)."""
from __future__ import annotations

import mpmath
import numpy as np
import pytest
import torch
from support import assert_invariant

import repmode

LD = np.longdouble
N = 10


def _orth(n, g):
    q, r = torch.linalg.qr(torch.randn(n, n, generator=g, dtype=torch.float64))
    return q * torch.sign(torch.diagonal(r))


def _inputs(kind, n=N, seed=5):
    """(general A, symmetric S) of one kind."""
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, n, generator=g, dtype=torch.float64)
    U, V = _orth(n, g), _orth(n, g)
    i = torch.arange(n, dtype=torch.float64)
    if kind == "random":
        return X, (X + X.mT) / 2
    if kind == "ill-conditioned":  # condition number 1e12, eigenvalues of both signs
        sig = 10.0 ** (-12.0 * i / (n - 1))
        S = (U * sig * torch.where(i % 2 == 0, 1.0, -1.0)) @ U.mT
        return (U * sig) @ V.mT, (S + S.mT) / 2
    if kind == "graded":  # columns (rows and columns) scaled by 1 .. 1e-10
        d = 10.0 ** (-10.0 * i / (n - 1))
        S = (X + X.mT) / 2 * d[:, None] * d[None, :]
        return X * d, S
    # clustered: half the values within 1e-10 of 1
    vals = torch.cat([1 + 1e-10 * torch.randn(n // 2, generator=g, dtype=torch.float64),
                      1 + 9 * torch.rand(n - n // 2, generator=g, dtype=torch.float64)])
    S = (U * vals) @ U.mT
    return (U * vals) @ V.mT, (S + S.mT) / 2


def _ld(t):
    return t.detach().numpy().astype(LD)


def _fro(x):
    return float(np.sqrt((x * x).sum()))


def _eye(k):
    return np.eye(k, dtype=LD)


def _mp_values(M, symmetric):
    mpmath.mp.dps = 40
    m = mpmath.matrix(M.tolist())
    vals = mpmath.eigsy(m, eigvals_only=True) if symmetric else mpmath.svd_r(m, compute_uv=False)
    return np.array(sorted(LD(mpmath.nstr(x, 30)) for x in vals), dtype=LD)


def _errors(A, S, wref, sref, threads=2):
    """{measure: error} of QR, eigh and SVD, in repmode (threads) or natively (threads=None)."""
    def run():
        return torch.linalg.qr(A), torch.linalg.eigh(S), torch.linalg.svd(A)

    if threads is None:
        (Q, R), (w, V), (U, sv, Vh) = run()
    else:
        with repmode.enabled():
            (Q, R), (w, V), (U, sv, Vh) = run()
    a, s = _ld(A), _ld(S)
    q, r, lw, v, u, ls, vh = (_ld(t) for t in (Q, R, w, V, U, sv, Vh))
    return {
        "qr backward": _fro(a - q @ r) / _fro(a),
        "qr orthogonality": _fro(q.T @ q - _eye(N)),
        "eigh backward": _fro(s - (v * lw) @ v.T) / _fro(s),
        "eigh orthogonality": _fro(v.T @ v - _eye(N)),
        "eigenvalues": float(np.abs(np.sort(lw) - wref).max() / np.abs(wref).max()),
        "svd backward": _fro(a - (u * ls) @ vh) / _fro(a),
        "svd orthogonality U": _fro(u.T @ u - _eye(N)),
        "svd orthogonality V": _fro(vh @ vh.T - _eye(N)),
        "singular values": float(np.abs(np.sort(ls) - sref).max() / sref.max()),
    }


@pytest.mark.parametrize("kind", ["random", "ill-conditioned", "graded", "clustered"])
def test_float64_qr_eigh_svd_are_at_least_as_accurate_as_lapack(kind):
    A, S = _inputs(kind)
    wref, sref = _mp_values(S, True), _mp_values(A, False)
    mine, native = _errors(A, S, wref, sref), _errors(A, S, wref, sref, threads=None)
    worse = {k: (mine[k], native[k]) for k in mine if mine[k] > native[k]}
    assert not worse, f"{kind}: repmode's float64 error above LAPACK's: {worse}"
    # The eigen- and singular values are within one rounding of the exact ones here.
    floor = float(np.abs(wref.astype(np.float64).astype(LD) - wref).max() / np.abs(wref).max())
    assert mine["eigenvalues"] <= max(2 * floor, 2.0 ** -53), (mine["eigenvalues"], floor)


def test_float64_wide_routines_are_invariant_to_threads_and_layout():
    A, S = _inputs("clustered", n=7, seed=9)
    assert_invariant(lambda x: dict(zip("QR", torch.linalg.qr(x))), A)
    assert_invariant(lambda x: dict(zip("wV", torch.linalg.eigh(x))), S)
    assert_invariant(lambda x: dict(zip("USV", torch.linalg.svd(x))), A)


def test_float32_runs_the_plain_double_routines_and_float64_the_double_double_ones():
    """float32 is the double algorithm rounded once (its bits are those of before the double-double
    routines); float64 is the double-double one (more accurate than the double one)."""
    from repmode._ext import DTYPE_CODE, C
    _, S = _inputs("random", n=6, seed=11)
    s32 = S.float()
    work = s32.double().contiguous()
    vt, sweeps = torch.empty(6, 6, dtype=torch.float64), torch.zeros(1, dtype=torch.int32)
    C.linalg_eigh_jacobi(DTYPE_CODE[torch.float64], 1, 6, work.data_ptr(), vt.data_ptr(), True, sweeps.data_ptr(), 1)
    with repmode.enabled():
        w32 = torch.linalg.eigvalsh(s32)
        w64 = torch.linalg.eigvalsh(S)
    assert torch.equal(w32, torch.sort(work.diagonal()).values.float())
    work = S.clone()
    C.linalg_eigh_jacobi_wide(DTYPE_CODE[torch.float64], 1, 6, work.data_ptr(), vt.data_ptr(), True,
                              sweeps.data_ptr(), 1)
    assert torch.equal(w64, torch.sort(work.diagonal()).values)
