"""Linear algebra (docs/semantics.md "Linear algebra"): Cholesky, triangular solves, LU, QR and the
Jacobi eigendecomposition. Each op is checked against native torch in float64 (values, and the
integer outputs — pivots, info — exactly where LAPACK's are unique), for the same bits at 1, 2 and
3 threads and for every layout, and for batch composition (matrix i of a batch equals the op on
matrix i alone); backward runs in the mode and matches float64 autograd of native torch."""
from __future__ import annotations

import pytest
import torch
from support import assert_bitwise_equal, assert_invariant, num_threads

import repmode

DTYPES = (torch.float32, torch.float64)
TOL = {torch.float32: 2e-5, torch.float64: 1e-12}


def _g(seed):
    return torch.Generator().manual_seed(seed)


def _spd(*shape, dtype=torch.float64, seed=0):
    n = shape[-1]
    X = torch.randn(*shape, generator=_g(seed), dtype=torch.float64)
    return (X @ X.mT / n + 0.5 * torch.eye(n, dtype=torch.float64)).to(dtype)


def _rand(*shape, dtype=torch.float64, seed=0):
    return torch.randn(*shape, generator=_g(seed), dtype=torch.float64).to(dtype)


def _close(got, want, dtype, scale=1.0):
    err = (got.double() - want.double()).abs().max().item()
    assert err <= TOL[dtype] * scale * max(1.0, want.double().abs().max().item()), err


def _rep(fn, *args, threads=2, **kwargs):
    with num_threads(threads), repmode.enabled():
        return fn(*args, **kwargs)


def _batch_composition(fn, batch):
    """Matrix i of fn(batch) equals fn(batch[i]) bit for bit (every output)."""
    whole = _rep(fn, batch)
    whole = whole if isinstance(whole, tuple) else (whole,)
    for i in range(batch.shape[0]):
        one = _rep(fn, batch[i])
        one = one if isinstance(one, tuple) else (one,)
        for w, o in zip(whole, one):
            if w.dim() and w.shape[0] == batch.shape[0]:
                assert_bitwise_equal(w[i], o, f"matrix {i}")


# ---- Cholesky ---------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_matches_float64_lapack_and_is_invariant(dtype, upper):
    A = _spd(6, 24, 24, dtype=dtype, seed=1)
    L, info = _rep(torch.linalg.cholesky_ex, A, upper=upper)
    assert info.dtype == torch.int32 and not info.any()
    _close(L, torch.linalg.cholesky(A.double(), upper=upper), dtype)
    tri = L.triu(1) if not upper else L.tril(-1)
    assert (tri == 0).all()
    assert_invariant(lambda a: {"L": torch.linalg.cholesky(a, upper=upper)}, A[0])
    with num_threads(1), repmode.enabled():
        one = torch.linalg.cholesky(A, upper=upper)
    with num_threads(2), repmode.enabled():
        assert_bitwise_equal(one, torch.linalg.cholesky(A, upper=upper))
    _batch_composition(lambda a: torch.linalg.cholesky(a, upper=upper), A)


def test_cholesky_info_and_error_are_torchs():
    A = _spd(3, 5, 5, seed=2)
    A[1, 2, 2] = -10.0  # leading minor of order 3 not positive-definite
    _, info = _rep(torch.linalg.cholesky_ex, A)
    assert info.tolist() == torch.linalg.cholesky_ex(A)[1].tolist() == [0, 3, 0]
    with pytest.raises(torch.linalg.LinAlgError, match="order 3"):
        _rep(torch.linalg.cholesky, A)
    if hasattr(torch.ops.aten, "cholesky"):  # torch.cholesky's op is gone from torch 2.14
        with pytest.raises(torch.linalg.LinAlgError, match="order 3"):
            _rep(torch.cholesky, A[1])


def test_cholesky_gradient_matches_float64_autograd():
    A = _spd(8, 8, seed=3)
    w = _rand(8, 8, seed=4)
    a = A.clone().requires_grad_()
    with repmode.enabled():
        (torch.linalg.cholesky(a) * w).sum().backward()
    ref = A.clone().requires_grad_()
    (torch.linalg.cholesky(ref) * w).sum().backward()
    _close(a.grad, ref.grad, torch.float64, 100)


# ---- triangular solves ------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("unit", [False, True])
def test_solve_triangular_every_form(dtype, upper, left, unit):
    n = 20
    T = _rand(n, n, seed=5) + 4 * torch.eye(n, dtype=torch.float64)
    T = (T.triu() if upper else T.tril()).to(dtype)
    B = _rand(3, n, 7, seed=6).to(dtype) if left else _rand(3, 7, n, seed=6).to(dtype)
    X = _rep(torch.linalg.solve_triangular, T, B, upper=upper, left=left, unitriangular=unit)
    _close(X, torch.linalg.solve_triangular(T.double(), B.double(), upper=upper, left=left, unitriangular=unit),
           dtype, 10)
    assert_invariant(lambda t, b: {"X": torch.linalg.solve_triangular(t, b, upper=upper, left=left,
                                                                     unitriangular=unit)}, T, B[0])


@pytest.mark.filterwarnings("ignore:torch.triangular_solve is deprecated")
@pytest.mark.parametrize("transpose", [False, True])
def test_triangular_solve_and_its_coefficient(transpose):
    n = 12
    A = (_rand(n, n, seed=7) + 4 * torch.eye(n, dtype=torch.float64)).triu().float()
    B = _rand(2, n, 3, seed=8).float()
    X, M = _rep(torch.triangular_solve, B, A, upper=True, transpose=transpose)
    Xr, Mr = torch.triangular_solve(B.double(), A.double(), upper=True, transpose=transpose)
    _close(X, Xr, torch.float32, 10)
    assert M.shape == Mr.shape and torch.equal(M.double(), Mr)


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_solve_and_inverse(upper):
    A = _spd(2, 16, 16, seed=9)
    L = torch.linalg.cholesky(A, upper=upper)
    B = _rand(2, 16, 4, seed=10)
    X = _rep(torch.cholesky_solve, B, L, upper=upper)
    _close(X, torch.cholesky_solve(B, L, upper=upper), torch.float64, 100)
    inv = _rep(torch.cholesky_inverse, L[0], upper=upper)
    assert_bitwise_equal(inv, inv.mT.contiguous(), "exact symmetry")
    _close(inv, torch.cholesky_inverse(L[0], upper=upper), torch.float64, 100)
    assert_invariant(lambda l: {"inv": torch.cholesky_inverse(l, upper=upper)}, L[0].float())


# ---- LU and the solves built on it ------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 9, 9), (3, 11, 6), (3, 6, 11)])
def test_lu_factor_pivots_equal_lapacks(dtype, shape):
    A = _rand(*shape, seed=11, dtype=dtype)
    LU, piv, info = _rep(torch.linalg.lu_factor_ex, A)
    LUr, pivr, infor = torch.linalg.lu_factor_ex(A.double())
    assert torch.equal(piv, pivr) and torch.equal(info, infor)
    _close(LU, LUr, dtype, 20)
    P, L, U = _rep(torch.linalg.lu, A)
    _close(P @ L @ U, A, dtype, 20)
    _batch_composition(torch.linalg.lu_factor, A)
    assert_invariant(lambda a: dict(zip("LP", torch.linalg.lu_factor(a))), A[0])


def test_lu_pivot_rule_first_largest_and_nan_first():
    A = torch.tensor([[1.0, 2.0], [-3.0, 1.0], [3.0, 5.0]])
    _, piv = _rep(torch.linalg.lu_factor, A)
    assert piv[0].item() == 2  # |-3| == |3|: the first row with the largest magnitude
    B = torch.tensor([[1.0, 2.0], [float("nan"), 1.0], [7.0, 5.0]])
    _, piv = _rep(torch.linalg.lu_factor, B)
    assert piv[0].item() == 2  # a NaN counts as larger than any number
    S = torch.tensor([[0.0, 1.0], [0.0, 2.0]])
    _, _, info = _rep(torch.linalg.lu_factor_ex, S)
    assert info.item() == torch.linalg.lu_factor_ex(S)[2].item() == 1


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [False, True])
def test_lu_solve_every_form(left, adjoint):
    A = _rand(2, 10, 10, seed=12) + 3 * torch.eye(10, dtype=torch.float64)
    B = _rand(2, 10, 4, seed=13) if left else _rand(2, 4, 10, seed=13)
    LU, piv = torch.linalg.lu_factor(A)
    X = _rep(torch.linalg.lu_solve, LU, piv, B, left=left, adjoint=adjoint)
    _close(X, torch.linalg.lu_solve(LU, piv, B, left=left, adjoint=adjoint), torch.float64, 100)


@pytest.mark.parametrize("dtype", DTYPES)
def test_solve_inv_det_slogdet(dtype):
    A = (_rand(3, 12, 12, seed=14) + 2 * torch.eye(12, dtype=torch.float64)).to(dtype)
    b = _rand(3, 12, seed=15).to(dtype)
    B = _rand(3, 12, 5, seed=16).to(dtype)
    Ad = A.double()
    _close(_rep(torch.linalg.solve, A, b), torch.linalg.solve(Ad, b.double()), dtype, 100)
    _close(_rep(torch.linalg.solve, A, B), torch.linalg.solve(Ad, B.double()), dtype, 100)
    _close(_rep(torch.linalg.solve, A, B.mT, left=False), torch.linalg.solve(Ad, B.double().mT, left=False), dtype,
           100)
    _close(_rep(torch.linalg.inv, A), torch.linalg.inv(Ad), dtype, 100)
    _close(_rep(torch.linalg.det, A), torch.linalg.det(Ad), dtype, 100)
    sign, logabs = _rep(torch.linalg.slogdet, A)
    signr, logr = torch.linalg.slogdet(Ad)
    assert torch.equal(sign.double(), signr)
    _close(logabs, logr, dtype, 10)
    _close(_rep(torch.logdet, A[0] @ A[0].mT), torch.logdet(Ad[0] @ Ad[0].mT), dtype, 100)
    # the solution's bits do not depend on A's layout (torch's own choice of factorization does)
    assert_invariant(lambda a, x: {"X": torch.linalg.solve(a, x), "inv": torch.linalg.inv(a),
                                   "det": torch.linalg.det(a)}, A[0], B[0])


def test_solve_det_inv_gradients_match_float64_autograd():
    A = _rand(6, 6, seed=17) + 2 * torch.eye(6, dtype=torch.float64)
    B = _rand(6, 2, seed=18)

    def loss(a, b):
        return (torch.linalg.solve(a, b).sum() + torch.linalg.det(a) + torch.linalg.inv(a).sum()
                + torch.linalg.slogdet(a)[1])

    a, b = A.clone().requires_grad_(), B.clone().requires_grad_()
    with repmode.enabled():
        loss(a, b).backward()
    ar, br = A.clone().requires_grad_(), B.clone().requires_grad_()
    loss(ar, br).backward()
    _close(a.grad, ar.grad, torch.float64, 100)
    _close(b.grad, br.grad, torch.float64, 100)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["det", "slogdet", "logdet"])
def test_det_gradients_have_the_same_bits_for_every_layout_of_a(dtype, name):
    """torch's det/slogdet backward solves with Aᵀ's factors for a contiguous A and with A's
    (adjoint) otherwise; repmode answers both with Aᵀ's, so the gradient's bits do not depend on
    the layout (and they match float64 autograd)."""
    f = {"det": torch.linalg.det, "slogdet": lambda a: torch.linalg.slogdet(a)[1], "logdet": torch.logdet}[name]
    X = _spd(3, 5, 5, seed=40, dtype=dtype)
    grads = []
    for layout in ("contiguous", "transposed", "sliced"):
        A = {"contiguous": X.clone(), "transposed": X.mT.contiguous().mT,
             "sliced": torch.cat([X, X], -1)[..., :5]}[layout].requires_grad_()
        assert A.is_contiguous() == (layout == "contiguous")
        with repmode.enabled():
            f(A).sum().backward()
        grads.append(A.grad)
    assert_bitwise_equal(grads[0], grads[1], "transposed")
    assert_bitwise_equal(grads[0], grads[2], "sliced")
    ar = X.double().requires_grad_()
    f(ar).sum().backward()
    _close(grads[0], ar.grad, dtype, 100)


def test_lu_solve_with_det_pivots_but_other_factors_is_the_ordinary_adjoint_solve():
    """The pivots det returns for a non-contiguous A keep their meaning in any other call."""
    A = _rand(5, 5, seed=41).mT
    B = _rand(5, 2, seed=42)
    with repmode.enabled():
        _, LU, piv = torch.ops.aten._linalg_det.default(A)
        X = torch.linalg.lu_solve(LU, piv, B, adjoint=True)  # Aᵀ X = B (answered with Aᵀ's factors)
        Y = torch.linalg.lu_solve(LU * 2, piv, B, adjoint=True)  # other factors: the ordinary solve
    _close(X, torch.linalg.solve(A.mT, B), torch.float64, 10)
    _close(Y, torch.linalg.lu_solve(LU * 2, piv, B, adjoint=True), torch.float64, 10)


# ---- Householder QR ---------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(3, 9, 9), (2, 12, 5), (2, 5, 12)])
def test_geqrf_and_qr_follow_lapacks_convention(dtype, shape):
    A = _rand(*shape, seed=19, dtype=dtype)
    a, tau = _rep(torch.geqrf, A)
    ar, taur = torch.geqrf(A.double())
    _close(a, ar, dtype, 20)
    _close(tau, taur, dtype, 20)
    for mode in ("reduced", "complete"):
        Q, R = _rep(torch.linalg.qr, A, mode=mode)
        Qr, Rr = torch.linalg.qr(A.double(), mode=mode)
        _close(Q, Qr, dtype, 20)
        _close(R, Rr, dtype, 20)
    Q0, R0 = _rep(torch.linalg.qr, A, mode="r")
    assert Q0.numel() == 0 and torch.equal(R0, _rep(torch.linalg.qr, A)[1])
    _batch_composition(torch.geqrf, A)
    assert_invariant(lambda x: dict(zip("QR", torch.linalg.qr(x))), A[0])


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("transpose", [False, True])
def test_householder_product_and_ormqr(left, transpose):
    A = _rand(10, 6, seed=20)
    a, tau = torch.geqrf(A)
    _close(_rep(torch.linalg.householder_product, a, tau), torch.linalg.householder_product(a, tau),
           torch.float64, 10)
    Cm = _rand(10, 3, seed=21) if left else _rand(3, 10, seed=21)
    _close(_rep(torch.ormqr, a, tau, Cm, left=left, transpose=transpose),
           torch.ormqr(a, tau, Cm, left=left, transpose=transpose), torch.float64, 10)


def test_qr_gradient_matches_float64_autograd():
    A = _rand(7, 5, seed=22)
    w1, w2 = _rand(7, 5, seed=23), _rand(5, 5, seed=24)

    def loss(a):
        Q, R = torch.linalg.qr(a)
        return (Q * w1).sum() + (R * w2).sum()

    a = A.clone().requires_grad_()
    with repmode.enabled():
        loss(a).backward()
    ar = A.clone().requires_grad_()
    loss(ar).backward()
    _close(a.grad, ar.grad, torch.float64, 100)


def test_orthogonal_init_runs_in_strict_mode_with_the_same_bits_at_1_and_2_threads():
    def init(threads):
        w = torch.empty(12, 7)
        with num_threads(threads), repmode.enabled(seed=3):
            torch.nn.init.orthogonal_(w)
        return w

    w1 = init(1)
    assert_bitwise_equal(w1, init(2))
    _close(w1.double().mT @ w1.double(), torch.eye(7, dtype=torch.float64), torch.float32, 10)


@pytest.mark.parametrize("orthogonal_map", ["householder", "cayley", "matrix_exp"])
def test_orthogonal_parametrization_runs_in_strict_mode(orthogonal_map):
    def run(threads):
        torch.manual_seed(0)
        lin = torch.nn.Linear(5, 8)
        with num_threads(threads), repmode.enabled(seed=4):
            torch.nn.utils.parametrizations.orthogonal(lin, orthogonal_map=orthogonal_map)
            x = torch.randn(3, 5)
            lin(x).sum().backward()
            w = lin.weight.detach().clone()
        return w, lin.parametrizations.weight.original.grad.clone()

    w1, g1 = run(1)
    w2, g2 = run(2)
    assert_bitwise_equal(w1, w2)
    assert_bitwise_equal(g1, g2)
    _close(w1.double().mT @ w1.double(), torch.eye(5, dtype=torch.float64), torch.float32, 10)


# ---- symmetric eigendecomposition -------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_values_vectors_sign_rule_and_invariance(dtype, uplo):
    n = 16
    X = _rand(4, n, n, seed=25)
    S = (X + X.mT).to(dtype)
    junk = S.clone()
    junk[..., 0, n - 1] = 99.0 if uplo == "L" else junk[..., 0, n - 1]  # the other triangle is never read
    junk[..., n - 1, 0] = 99.0 if uplo == "U" else junk[..., n - 1, 0]
    w, V = _rep(torch.linalg.eigh, junk, UPLO=uplo)
    wr = torch.linalg.eigvalsh(S.double())
    _close(w, wr, dtype, 10)
    assert (w[..., 1:] >= w[..., :-1]).all()
    Vd = V.double()
    _close(Vd @ torch.diag_embed(w.double()) @ Vd.mT, S.double(), dtype, 20)
    _close(Vd.mT @ Vd, torch.eye(n, dtype=torch.float64).expand(4, n, n), dtype, 20)
    big = V.abs().argmax(-2, keepdim=True)
    assert (V.gather(-2, big) > 0).all()
    assert_bitwise_equal(_rep(torch.linalg.eigvalsh, junk, UPLO=uplo), w)
    _batch_composition(lambda a: torch.linalg.eigh(a, UPLO=uplo), junk)
    assert_invariant(lambda a: dict(zip("wV", torch.linalg.eigh(a, UPLO=uplo))), S[0])


def test_eigh_repeated_eigenvalues_and_nonfinite_input():
    Q, _ = torch.linalg.qr(_rand(6, 6, seed=26))
    S = Q @ torch.diag(torch.tensor([1.0, 1.0, 1.0, 2.0, 2.0, 5.0], dtype=torch.float64)) @ Q.mT
    w, V = _rep(torch.linalg.eigh, S)
    _close(w, torch.tensor([1.0, 1.0, 1.0, 2.0, 2.0, 5.0], dtype=torch.float64), torch.float64, 10)
    _close(V @ torch.diag(w) @ V.mT, S, torch.float64, 10)
    bad = S.clone()
    bad[2, 1] = float("inf")
    w, V = _rep(torch.linalg.eigh, bad)
    assert w.isnan().all() and V.isnan().all()
    assert_bitwise_equal(w, torch.full_like(w, float("nan")))  # the canonical NaN


def test_eigh_gradient_matches_float64_autograd():
    X = _rand(6, 6, seed=27)
    S = X + X.mT
    w1 = _rand(6, seed=28)

    def loss(s):
        w, V = torch.linalg.eigh(s)
        return (w * w1).sum() + (V.abs() * w1).sum()

    s = S.clone().requires_grad_()
    with repmode.enabled():
        loss(s).backward()
    sr = S.clone().requires_grad_()
    loss(sr).backward()
    _close(s.grad, sr.grad, torch.float64, 1000)


def test_shampoo_preconditioner_step_is_reproducible():
    """A Shampoo-style step: the gradient's Gram matrices, their inverse fourth roots by eigh, and
    the preconditioned gradient: the same bits at 1 and 2 threads, close to the float64 step."""
    G = _rand(24, 16, seed=29).float()

    def step(g):
        eps = 1e-6
        out = g
        for gram, side in ((g @ g.mT, "left"), (g.mT @ g, "right")):
            w, V = torch.linalg.eigh(gram + eps * torch.eye(gram.shape[0]))
            root = V @ torch.diag(w.clamp_min(eps) ** -0.25) @ V.mT
            out = root @ out if side == "left" else out @ root
        return out

    one = _rep(step, G, threads=1)
    assert_bitwise_equal(one, _rep(step, G, threads=2))
    ref = step(G.double())
    assert ((one.double() - ref).abs().max() / ref.abs().max()).item() < 1e-3


# ---- singular value decomposition -------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(3, 8, 8), (2, 11, 5), (2, 5, 11)])
@pytest.mark.parametrize("full", [False, True])
def test_svd_values_vectors_sign_rule_and_invariance(dtype, shape, full):
    A = _rand(*shape, seed=30, dtype=dtype)
    U, S, Vh = _rep(torch.linalg.svd, A, full_matrices=full)
    Ur, Sr, Vhr = torch.linalg.svd(A.double(), full_matrices=full)
    assert U.shape == Ur.shape and S.shape == Sr.shape and Vh.shape == Vhr.shape
    _close(S, Sr, dtype, 10)
    assert (S[..., 1:] <= S[..., :-1]).all()
    k = min(shape[-2:])
    Ud, Vd = U.double(), Vh.double().mT
    _close((Ud[..., :k] * S.double().unsqueeze(-2)) @ Vd[..., :k].mT, A.double(), dtype, 20)
    _close(Ud.mT @ Ud, torch.eye(U.shape[-1], dtype=torch.float64).expand_as(Ud.mT @ Ud), dtype, 20)
    _close(Vd.mT @ Vd, torch.eye(Vd.shape[-1], dtype=torch.float64).expand_as(Vd.mT @ Vd), dtype, 20)
    if shape[-2] >= shape[-1]:  # the sign rule is stated on the right vectors of the taller side
        big = Vd[..., :k].abs().argmax(-2, keepdim=True)
        assert (Vd[..., :k].gather(-2, big) > 0).all()
    assert_bitwise_equal(_rep(torch.linalg.svdvals, A), S)
    _batch_composition(lambda a: torch.linalg.svd(a, full_matrices=full), A)
    assert_invariant(lambda a: dict(zip("USV", torch.linalg.svd(a, full_matrices=full))), A[0])


def test_svd_of_a_rank_deficient_matrix_completes_u_orthonormally():
    A = _rand(7, 2, seed=31) @ _rand(2, 4, seed=32)
    A[:, 3] = 0.0
    U, S, Vh = _rep(torch.linalg.svd, A)
    _close(S, torch.linalg.svdvals(A), torch.float64, 10)
    _close(U.mT @ U, torch.eye(7, dtype=torch.float64), torch.float64, 10)
    _close((U[:, :4] * S) @ Vh, A, torch.float64, 10)
    bad = A.clone()
    bad[0, 0] = float("nan")
    assert _rep(torch.linalg.svdvals, bad).isnan().all()


def test_svd_gradient_and_ops_built_on_it():
    A = _rand(6, 4, seed=33)
    w = _rand(4, seed=34)

    def loss(a):
        U, S, Vh = torch.linalg.svd(a, full_matrices=False)
        return (S * w).sum() + (U.abs().sum() + Vh.abs().sum()) + torch.linalg.matrix_norm(a, "nuc")

    a = A.clone().requires_grad_()
    with repmode.enabled():
        loss(a).backward()
    ar = A.clone().requires_grad_()
    loss(ar).backward()
    _close(a.grad, ar.grad, torch.float64, 1000)
    for fn in (lambda x: torch.linalg.matrix_rank(x), lambda x: torch.linalg.cond(x),
               lambda x: torch.linalg.matrix_norm(x, 2), lambda x: torch.linalg.pinv(x)):
        got, want = _rep(fn, A), fn(A)
        if got.is_floating_point():
            _close(got, want, torch.float64, 100)
        else:
            assert torch.equal(got, want)


# ---- matrix exponential -----------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_matrix_exp_scaling_and_squaring(dtype):
    A = torch.stack([_rand(6, 6, seed=35) * c for c in (0.05, 1.0, 8.0)]).to(dtype)
    E = _rep(torch.linalg.matrix_exp, A)
    R = torch.linalg.matrix_exp(A.double())
    for i in range(3):
        _close(E[i], R[i], dtype, 100)
    _batch_composition(torch.linalg.matrix_exp, A)  # each matrix keeps its own scaling
    assert_invariant(lambda a: {"E": torch.linalg.matrix_exp(a)}, A[2])
    z = torch.zeros(3, 3, dtype=dtype)
    assert_bitwise_equal(_rep(torch.linalg.matrix_exp, z), torch.eye(3, dtype=dtype))
    a = A[1].double().clone().requires_grad_()
    with repmode.enabled():
        (torch.linalg.matrix_exp(a) * A[0].double()).sum().backward()
    ar = A[1].double().clone().requires_grad_()
    (torch.linalg.matrix_exp(ar) * A[0].double()).sum().backward()
    _close(a.grad, ar.grad, torch.float64 if dtype == torch.float64 else torch.float32, 100)


# ---- threads take whole matrices --------------------------------------------------------------

def test_batches_large_enough_to_thread_give_the_same_bits_at_1_2_and_3_threads():
    """Batches above the threading threshold (csrc/cpu/parallel.h) at 1, 2 and 3 threads, and each
    matrix equal to the op on it alone."""
    X = _rand(8, 32, 32, seed=36)
    S = X + X.mT
    spd = _spd(8, 32, 32, seed=37)
    B = _rand(8, 32, 4, seed=38)

    def every_op():
        return {"chol": torch.linalg.cholesky(spd), "lu": torch.linalg.lu_factor(X)[0],
                "solve": torch.linalg.solve(X, B), "tri": torch.linalg.solve_triangular(spd.tril(), B, upper=False),
                "qr": torch.linalg.qr(X)[0], "eigh": torch.linalg.eigh(S)[1], "svd": torch.linalg.svd(X)[0]}

    want = _rep(every_op, threads=1)
    for threads in (2, 3):
        got = _rep(every_op, threads=threads)
        for k in want:
            assert_bitwise_equal(want[k], got[k], f"{k} at {threads} threads")
    assert_bitwise_equal(want["eigh"][5], _rep(torch.linalg.eigh, S[5], threads=2)[1])
    assert_bitwise_equal(want["svd"][3], _rep(torch.linalg.svd, X[3], threads=2)[0])


# ---- what stays refused -----------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda: torch.linalg.eig(torch.eye(3)),
    lambda: torch.linalg.eigvals(torch.eye(3)),
    lambda: torch.linalg.cholesky(torch.eye(3, dtype=torch.complex64)),
])
def test_refused_ops_say_why(call):
    with pytest.raises(repmode.UnsupportedOpError):
        with repmode.enabled():
            call()


# ---- walks: interleaved sums keep each sum's sequence -------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_walks_in_groups_of_four_give_the_bits_of_one_at_a_time(dtype):
    """Cholesky computes four rows' dots together and QR applies a reflector to four columns
    together, the rest one at a time. Row i of L depends only on A[:i+1, :i+1] and column j of QR
    only on A[:, :j+1], so leading blocks of every size (each row/column lands in a group of four
    for some sizes, in the tail for others) must reproduce the whole result's bits."""
    spd = _spd(23, 23, seed=43, dtype=dtype)
    L = _rep(torch.linalg.cholesky, spd)
    X = _rand(30, 23, seed=44, dtype=dtype)
    a, tau = _rep(torch.geqrf, X)
    for k in range(1, 23):
        assert_bitwise_equal(_rep(torch.linalg.cholesky, spd[:k, :k]), L[:k, :k], f"cholesky k={k}")
        ak, tauk = _rep(torch.geqrf, X[:, :k])
        assert_bitwise_equal(ak, a[:, :k], f"geqrf k={k}")
        assert_bitwise_equal(tauk, tau[:k], f"tau k={k}")
