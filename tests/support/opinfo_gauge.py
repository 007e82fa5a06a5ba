"""How the OpInfo harness compares singular and eigenvectors with native torch's: as an
equivalence class, where torch's result is not unique, plus repmode's own rule checked exactly.

An SVD ``A = U diag(S) Vᵀ`` leaves each singular triplet's sign open (``u_j, v_j`` and
``−u_j, −v_j`` are both right), and a symmetric eigendecomposition each eigenvector's sign. LAPACK's
signs follow no rule (they come out of its algorithm), repmode's follow a documented one
(docs/semantics.md "Linear algebra": the entry of largest magnitude of each ``v_j`` — of each
``u_j`` when ``A`` is wide, where the algorithm runs on ``Aᵀ`` —, and of each eigenvector, is
positive). Comparing entries with native's therefore says nothing about the vectors' accuracy.
The forward outputs of ``svd``, ``linalg.svd`` and ``linalg.eigh`` are compared as follows (the
backward is not affected: the OpInfos' ``output_process_fn_grad`` already differentiate
sign-invariant functions, ``|U|``, ``|Vh|``, ``U Vh``, ``|Q|``):

1. **Values**: ``S`` (eigenvalues ``L``) compared as every output is (assert_close, then no
   further from the float64 result than native's).
2. **Groups**, from native's values of each matrix: a singular value (eigenvalue) is *separated*
   when its distance to each neighbour exceeds ``2⁻¹⁰·σ_max`` (``max|λ|``) and, for the SVD, it
   exceeds ``2⁻¹⁰·σ_max`` itself; neighbours closer than that form a *cluster*; the SVD's values
   ``≤ 2⁻¹⁰·σ_max`` form the *null group*. (``2⁻¹⁰``: far above float32's error in the values, so
   the grouping does not depend on whose values decide it, and far enough for native's float32
   vectors, whose error grows as ``eps·σ_max/gap``, to be within ``10⁻⁴`` of the exact ones, so
   that one sign decides between the two candidates unambiguously.)
3. **Separated triplet** ``j``: ONE sign ``d = ±1`` per triplet, applied jointly to ``u_j`` and
   ``v_j`` (``d = sign(u_jᵀu_j' + v_jᵀv_j')`` against native's ``u_j', v_j'``, ``+1`` on a tie),
   then ``d·u_j`` and ``d·v_j`` are compared with native's entry by entry as every output is. A
   triplet whose ``u`` and ``v`` signs do not pair up as native's (``u_j`` flipped without ``v_j``)
   fails: one sign cannot fix both. Eigenvectors: one sign per vector.
4. **Cluster** (repeated or nearly repeated values: the basis of their subspace is not unique):
   the cluster's part of the decomposition, ``U_c diag(S_c) V_cᵀ`` (``Q_c Q_cᵀ`` for eigh; computed
   in float64 from each result's own entries, rounded once to the dtype) is compared with native's.
   It is invariant under every rotation within the cluster.
5. **Null group and complement** (columns of ``U``, ``V`` beyond the separated and clustered
   ones: zero singular values, and the ``full_matrices`` columns): their span is unique only when
   the matrix is complete (``m`` columns of ``U``, ``n`` of ``V``): then the projector
   ``U_t U_tᵀ`` is compared with native's; otherwise nothing but orthonormality (6) is checked.
6. **Orthonormality** of repmode's whole ``U``, ``V`` (``Q``): ``max|XᵀX − I|`` (in float64) no
   larger than native's or than ``rows·eps(dtype)``.
7. **repmode's sign rule, exactly**, on repmode's result: for every vector the rule names (the
   columns of ``V`` for ``m ≥ n``, of ``U`` for ``m < n``, within the first ``min(m, n)``; every
   eigenvector), the first entry of largest magnitude is positive. The rule is applied to the
   float64 vector before its one rounding, so where rounding makes two entries of largest
   magnitude equal, one of them (not necessarily the first) is positive.

Items 3–5 turn each result (repmode's, native's, and the float64 reference) into a list of leaves
of the same shapes (the groups come from native's values); the harness compares these leaves as it
compares any output (assert_close, else the float64 judge) and reports a failing leaf by its label.
Non-finite values (any NaN/inf in native's or repmode's values) fall back to the ordinary
entry-by-entry comparison.
"""
from __future__ import annotations

import torch

SEPARATION = 2.0 ** -10
# OpInfo name -> kind; only these outputs hold sign-ambiguous vectors (svd_lowrank and pca_lowrank
# draw random numbers: compared for structure only, see tests/support/opinfo_harness.py)
GAUGED = {"svd": "svd", "linalg.svd": "linalg.svd", "linalg.eigh": "eigh"}


def applies(op_name: str, sample) -> bool:
    if op_name not in GAUGED:
        return False
    return not (op_name == "svd" and sample.kwargs.get("compute_uv", True) is False)


def _parts(kind, out):
    """(U, S, V) with V's columns the right vectors (eigh: (Q, L, None)), batch flattened."""
    if kind == "eigh":
        L, Q = out[0], out[1]
        n = Q.shape[-1]
        return Q.detach().reshape(-1, n, n), L.detach().reshape(-1, n), None
    U, S, V = out[0].detach(), out[1].detach(), out[2].detach()
    if kind == "linalg.svd":
        V = V.mT
    return (U.reshape(-1, *U.shape[-2:]), S.reshape(-1, S.shape[-1]), V.reshape(-1, *V.shape[-2:]))


def _groups(values, svd: bool):
    """(separated indices, clusters (lists), null indices) from one matrix's values (float64)."""
    v = values.double().tolist()
    k = len(v)
    scale = max((abs(x) for x in v), default=0.0)
    tol = SEPARATION * scale
    null = [j for j in range(k) if svd and v[j] <= tol] if scale > 0 else (list(range(k)) if svd else [])
    while null and null[0] > 0 and v[null[0] - 1] - v[null[0]] <= tol:  # too close to the null group: in it
        null.insert(0, null[0] - 1)
    live = [j for j in range(k) if j not in null]
    runs, run = [], []
    for j in live:
        if run and abs(v[j] - v[run[-1]]) <= tol:
            run.append(j)
        else:
            if run:
                runs.append(run)
            run = [j]
    if run:
        runs.append(run)
    separated = [r[0] for r in runs if len(r) == 1]
    clusters = [r for r in runs if len(r) > 1]
    return separated, clusters, null


def _round(x64, like):
    return x64 if like.dtype == torch.float64 else x64.to(like.dtype)


def comparable(kind, out) -> bool:
    """Whether ``out`` has values and only finite entries (else: the ordinary comparison)."""
    values = out[1] if kind != "eigh" else out[0]
    if not values.numel():
        return False
    U, S, V = _parts(kind, out)
    return all(bool(torch.isfinite(t).all()) for t in (U, S) + ((V,) if V is not None else ()))


def leaves(kind, out, anchor):
    """``out`` as labelled leaves (list of (label, tensor)), with groups and signs from ``anchor``
    (native's result); see the module docstring, items 1 and 3–5."""
    U, S, V = _parts(kind, out)
    Ua, Sa, Va = _parts(kind, anchor)
    svd = kind != "eigh"
    result = [("values", out[1].detach() if svd else out[0].detach())]
    for b in range(Sa.shape[0]):
        separated, clusters, null = _groups(Sa[b], svd)
        at = f"[{b}] " if Sa.shape[0] > 1 else ""
        for j in separated:
            u, ua = U[b, :, j].double(), Ua[b, :, j].double()
            dot = float(u @ ua)
            if svd:
                dot += float(V[b, :, j].double() @ Va[b, :, j].double())
            d = -1.0 if dot < 0 else 1.0
            name = "u" if svd else "q"
            result.append((f"{at}{name}_{j} (sign {d:+.0f})", _round(d * U[b, :, j].double(), U)))
            if svd:
                result.append((f"{at}v_{j} (sign {d:+.0f})", _round(d * V[b, :, j].double(), V)))
        for c in clusters:
            Uc = U[b][:, c].double()
            if svd:
                part = (Uc * S[b][c].double()) @ V[b][:, c].double().mT
                label = f"{at}U_c diag(S_c) V_cᵀ of cluster {c[0]}..{c[-1]}"
            else:
                part = Uc @ Uc.mT
                label = f"{at}Q_c Q_cᵀ of cluster {c[0]}..{c[-1]}"
            result.append((label, _round(part, U)))
        if not svd:
            continue
        r = len(separated) + sum(len(c) for c in clusters)
        for name, X in (("U", U), ("V", V)):
            rows, cols = X.shape[-2], X.shape[-1]
            if cols > r and cols == rows:  # the complement's span is unique: its projector
                T = X[b, :, r:].double()
                result.append((f"{at}{name}_t {name}_tᵀ of columns {r}..{cols - 1}", _round(T @ T.mT, X)))
    return result


def _orthonormality(X):
    X = X.double()
    eye = torch.eye(X.shape[-1], dtype=torch.float64)
    return float((X.mT @ X - eye).abs().max()) if X.numel() else 0.0


def checks(kind, out, native):
    """None, or why repmode's result ``out`` breaks item 6 (orthonormality) or 7 (its sign rule)."""
    U, S, V = _parts(kind, out)
    Un, _, Vn = _parts(kind, native)
    for name, X, Xn in (("U", U, Un), ("V", V, Vn)) if V is not None else (("Q", U, Un),):
        if not X.numel():
            continue
        got, nat = _orthonormality(X), _orthonormality(Xn)
        bound = max(nat, X.shape[-2] * torch.finfo(X.dtype).eps)
        if got > bound:
            return f"{name} is not orthonormal: max|{name}ᵀ{name} − I| = {got:.3g}, native's {nat:.3g}"
    if kind == "eigh":
        ruled, which = U, "eigenvector"
    else:
        m, n = U.shape[-2], V.shape[-2]
        ruled, which = (V, "v") if m >= n else (U, "u")
        ruled = ruled[..., : min(m, n)]
    for b in range(ruled.shape[0]):
        for j in range(ruled.shape[-1]):
            col = ruled[b, :, j]
            mag = col.abs()
            big = mag.max() if col.numel() else None
            if big is None or big == 0:
                continue
            top = col[mag == big]
            if not (top[0] > 0 or (top.numel() > 1 and bool((top > 0).any()))):
                return (f"sign rule broken: {which}_{j}{f' of matrix {b}' if ruled.shape[0] > 1 else ''} has its "
                        f"entry of largest magnitude negative ({float(top[0]):.6g})")
    return None
