"""Linear algebra: native torch (LAPACK) vs repmode on 512x512 float32 matrices at 2 threads, and
the accuracy of both against float64 LAPACK on the same inputs (backward errors, orthogonality,
residuals). Run: PYTHONPATH=. python benchmarks/bench_linalg.py [--accuracy-only] [--n 512]

The accuracy table is recorded in docs/semantics.md ("Linear algebra") and docs/evidence.md."""
from __future__ import annotations

import argparse

import torch
from timing import compare

import repmode


def _inputs(n, seed=0):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, n, generator=g, dtype=torch.float64)
    spd = X @ X.mT / n + 0.1 * torch.eye(n, dtype=torch.float64)
    sym = (X + X.mT) / 2
    B = torch.randn(n, 8, generator=g, dtype=torch.float64)
    return X, spd, sym, B


def _rel(E, A):
    return (torch.linalg.matrix_norm(E) / torch.linalg.matrix_norm(A)).item()


def _orth(Q):
    k = Q.shape[-1]
    return torch.linalg.matrix_norm(Q.mT @ Q - torch.eye(k, dtype=torch.float64)).item()


def accuracy(n, dtype):
    """{measure: (repmode, native)} for float `dtype` inputs, every error computed in float64."""
    X, spd, sym, B = _inputs(n)
    Xd, spdd, symd, Bd = (t.to(dtype) for t in (X, spd, sym, B))
    A, S, Y, R = (t.double() for t in (Xd, spdd, symd, Bd))  # the inputs as stored
    rows = {}

    def both(fn):
        with repmode.enabled():
            r = fn()
        return r, fn()

    (Lr, Ln) = both(lambda: torch.linalg.cholesky(spdd))
    rows["cholesky ‖A − LLᵀ‖/‖A‖"] = tuple(_rel(S - L.double() @ L.double().mT, S) for L in (Lr, Ln))
    (xr, xn) = both(lambda: torch.linalg.solve_triangular(Lr, Bd, upper=False))
    Ld = Lr.double()
    rows["solve_triangular ‖LX − B‖/(‖L‖‖X‖)"] = tuple(
        (torch.linalg.matrix_norm(Ld @ x.double() - R) / (torch.linalg.matrix_norm(Ld) * torch.linalg.matrix_norm(
            x.double()))).item() for x in (xr, xn))
    (sr, sn) = both(lambda: torch.linalg.solve(Xd, Bd))
    rows["solve (LU) ‖AX − B‖/(‖A‖‖X‖)"] = tuple(
        (torch.linalg.matrix_norm(A @ x.double() - R) / (torch.linalg.matrix_norm(A) * torch.linalg.matrix_norm(
            x.double()))).item() for x in (sr, sn))
    (qr_r, qr_n) = both(lambda: torch.linalg.qr(Xd))
    rows["qr ‖A − QR‖/‖A‖"] = tuple(_rel(A - Q.double() @ Rm.double(), A) for Q, Rm in (qr_r, qr_n))
    rows["qr ‖QᵀQ − I‖"] = tuple(_orth(Q.double()) for Q, _ in (qr_r, qr_n))
    (er, en) = both(lambda: torch.linalg.eigh(symd))
    rows["eigh ‖A − VΛVᵀ‖/‖A‖"] = tuple(_rel(Y - V.double() @ torch.diag(w.double()) @ V.double().mT, Y)
                                        for w, V in (er, en))
    rows["eigh ‖VᵀV − I‖"] = tuple(_orth(V.double()) for _, V in (er, en))
    wref = torch.linalg.eigvalsh(Y)
    rows["eigh max|λ − λ₆₄|/‖A‖₂"] = tuple(((w.double() - wref).abs().max() / wref.abs().max()).item()
                                          for w, _ in (er, en))
    (svr, svn) = both(lambda: torch.linalg.svd(Xd))
    rows["svd ‖A − UΣVᵀ‖/‖A‖"] = tuple(_rel(A - (U.double() * Sv.double()) @ Vh.double(), A)
                                       for U, Sv, Vh in (svr, svn))
    rows["svd ‖UᵀU − I‖"] = tuple(_orth(U.double()) for U, _, _ in (svr, svn))
    sref = torch.linalg.svdvals(A)
    rows["svd max|σ − σ₆₄|/σ₁"] = tuple(((Sv.double() - sref).abs().max() / sref[0]).item() for _, Sv, _ in (svr, svn))
    return rows


def timings(n):
    _, spd, sym, _ = (t.float() for t in _inputs(n))
    X = _inputs(n)[0].float()
    cases = [("cholesky", lambda: torch.linalg.cholesky(spd)), ("qr", lambda: torch.linalg.qr(X)),
             ("lu_factor", lambda: torch.linalg.lu_factor(X)), ("eigh", lambda: torch.linalg.eigh(sym)),
             ("svd", lambda: torch.linalg.svd(X))]
    for name, fn in cases:
        slow = name in ("eigh", "svd")
        native, rep = compare(fn, 1 if slow else 3, rounds=1 if slow else 2)
        print(f"{name:10s} {n}x{n} float32  native {native * 1e3:9.2f} ms  repmode {rep * 1e3:9.2f} ms  "
              f"ratio {rep / native:7.1f}x")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=512)
    ap.add_argument("--accuracy-only", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(2)
    for dtype in (torch.float32, torch.float64):
        print(f"\naccuracy, {args.n}x{args.n} {str(dtype).split('.')[1]} (repmode | native LAPACK; errors in float64)")
        for k, (r, nat) in accuracy(args.n, dtype).items():
            print(f"  {k:40s} {r:10.2e} | {nat:10.2e}")
    if not args.accuracy_only:
        print()
        timings(args.n)


if __name__ == "__main__":
    main()
