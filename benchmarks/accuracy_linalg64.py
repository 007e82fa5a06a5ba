"""float64 QR, eigh and SVD: repmode's error next to native LAPACK's on the same inputs (rule 6).

Every error is computed in x87 extended precision (numpy.longdouble, 64-bit significand), so the
measurement's own rounding (~2^-64) is far below the float64 errors measured (~2^-53 and up).
Reference eigen- and singular values: mpmath at 40 digits for n <= 64 (or with --mpmath); above,
the Rayleigh quotients vᵢᵀAvᵢ (uᵢᵀAvᵢ) of LAPACK's vectors in extended precision (error
O(residual²/gap): not a fair reference for graded or clustered values, which sit close to
LAPACK's own).

Inputs (float64, fixed seeds): random normal; ill-conditioned (U·diag(10^-k·12/(n-1))·Vᵀ, κ = 1e12);
graded (columns, or rows and columns for symmetric, scaled by 10^0 .. 10^-10); clustered
(eigen-/singular values 1 + 1e-10·N(0,1) for half of them, the rest spread in [1, 10]).

Run: PYTHONPATH=. python benchmarks/accuracy_linalg64.py [--n 16 64] [--mpmath]
Results recorded in docs/evidence.md ("Linear algebra: float64 accuracy").
"""
from __future__ import annotations

import argparse

import numpy as np
import torch

import repmode

LD = np.longdouble


def _orth(n, g):
    q, r = torch.linalg.qr(torch.randn(n, n, generator=g, dtype=torch.float64))
    return q * torch.sign(torch.diagonal(r))


def inputs(n, seed=0):
    """{name: (general A, symmetric S)}."""
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, n, generator=g, dtype=torch.float64)
    U, V = _orth(n, g), _orth(n, g)
    sig = 10.0 ** (-12.0 * torch.arange(n, dtype=torch.float64) / max(n - 1, 1))
    ill = (U * sig) @ V.mT
    ill_s = (U * sig * torch.where(torch.arange(n) % 2 == 0, 1.0, -1.0)) @ U.mT
    d = 10.0 ** (-10.0 * torch.arange(n, dtype=torch.float64) / max(n - 1, 1))
    graded = X * d
    sym = (X + X.mT) / 2
    graded_s = sym * d[:, None] * d[None, :]
    half = n // 2
    clus = torch.cat([1 + 1e-10 * torch.randn(half, generator=g, dtype=torch.float64),
                      1 + 9 * torch.rand(n - half, generator=g, dtype=torch.float64)])
    clustered = (U * clus) @ V.mT
    clustered_s = (U * clus) @ U.mT
    sym_of = {"random": sym, "ill-conditioned": ill_s, "graded": graded_s, "clustered": clustered_s}
    gen = {"random": X, "ill-conditioned": ill, "graded": graded, "clustered": clustered}
    return {k: (gen[k], (sym_of[k] + sym_of[k].mT) / 2) for k in gen}


def L(t):
    return t.detach().numpy().astype(LD)


def fro(x):
    return float(np.sqrt((x * x).sum()))


def qr_errors(A, Q, R):
    a, q, r = L(A), L(Q), L(R)
    return {"qr ‖A−QR‖/‖A‖": fro(a - q @ r) / fro(a), "qr ‖QᵀQ−I‖": fro(q.T @ q - np.eye(q.shape[1], dtype=LD))}


def eigh_errors(S, w, V, wref):
    s, v, lw = L(S), L(V), L(w)
    return {"eigh ‖A−VΛVᵀ‖/‖A‖": fro(s - (v * lw) @ v.T) / fro(s),
            "eigh ‖VᵀV−I‖": fro(v.T @ v - np.eye(v.shape[1], dtype=LD)),
            "eigh max|λ−λref|/‖A‖₂": float(np.abs(lw - wref).max() / np.abs(wref).max())}


def svd_errors(A, U, S, Vh, sref):
    a, u, s, vh = L(A), L(U), L(S), L(Vh)
    return {"svd ‖A−UΣVᵀ‖/‖A‖": fro(a - (u * s) @ vh) / fro(a),
            "svd ‖UᵀU−I‖": fro(u.T @ u - np.eye(u.shape[1], dtype=LD)),
            "svd ‖VᵀV−I‖": fro(vh @ vh.T - np.eye(vh.shape[0], dtype=LD)),
            "svd max|σ−σref|/σ₁": float(np.abs(s - sref).max() / sref.max())}


def references(A, S, use_mpmath):
    if use_mpmath or A.shape[-1] <= 64:
        import mpmath
        mpmath.mp.dps = 40
        ev = mpmath.eigsy(mpmath.matrix(S.tolist()), eigvals_only=True)
        wref = np.array(sorted(LD(str(x)) for x in ev), dtype=LD)
        sv = mpmath.svd_r(mpmath.matrix(A.tolist()), compute_uv=False)
        sref = np.array(sorted((LD(str(x)) for x in sv), reverse=True), dtype=LD)
        return wref, sref
    w, V = torch.linalg.eigh(S)
    v, s = L(V), L(S)
    wref = np.sort(np.einsum("ij,ij->j", v, s @ v) / np.einsum("ij,ij->j", v, v))
    U, sv, Vh = torch.linalg.svd(A)
    u, a, vh = L(U), L(A), L(Vh)
    sref = np.sort(np.abs(np.einsum("ij,ij->j", u, a @ vh.T)) / np.sqrt(
        np.einsum("ij,ij->j", u, u) * np.einsum("ij,ij->i", vh, vh)))[::-1]
    return wref, sref


def measure(n, use_mpmath=False, kinds=None):
    """[(input, measure, repmode, native)]"""
    rows = []
    for name, (A, S) in inputs(n).items():
        if kinds and name not in kinds:
            continue
        wref, sref = references(A, S, use_mpmath)
        res = {}
        for who in ("repmode", "native"):
            if who == "repmode":
                with repmode.enabled():
                    Q, R = torch.linalg.qr(A)
                    w, V = torch.linalg.eigh(S)
                    U, sv, Vh = torch.linalg.svd(A)
            else:
                Q, R = torch.linalg.qr(A)
                w, V = torch.linalg.eigh(S)
                U, sv, Vh = torch.linalg.svd(A)
            res[who] = {**qr_errors(A, Q, R), **eigh_errors(S, w, V, wref), **svd_errors(A, U, sv, Vh, sref)}
        for k in res["repmode"]:
            rows.append((name, k, res["repmode"][k], res["native"][k]))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, nargs="+", default=[16, 64])
    ap.add_argument("--mpmath", action="store_true", help="mpmath references (small n only)")
    ap.add_argument("--kinds", nargs="+", help="only these inputs (random, ill-conditioned, graded, clustered)")
    args = ap.parse_args()
    torch.set_num_threads(2)
    worst = 0.0
    for n in args.n:
        print(f"\nn = {n}\n| input | measure | f64 repmode | f64 LAPACK | ratio |\n|---|---|---|---|---|")
        for name, k, r, nat in measure(n, args.mpmath, args.kinds):
            ratio = r / nat if nat > 0 else (0.0 if r == 0 else float("inf"))
            worst = max(worst, ratio)
            print(f"| {name} | {k} | {r:.2e} | {nat:.2e} | {ratio:.2f} |")
    print(f"\nworst ratio repmode/LAPACK: {worst:.2f}")


if __name__ == "__main__":
    main()
