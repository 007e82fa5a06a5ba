"""Linear algebra: Cholesky, triangular solves, LU with partial pivoting, Householder QR, the
symmetric eigendecomposition by cyclic Jacobi, the SVD by one-sided Jacobi, Bunch-Kaufman LDLᵀ and
least squares, in the fixed orders of docs/semantics.md "Linear algebra" (csrc/common/linalg.h;
the CPU batch walks in csrc/cpu/linalg.cpp).

Every routine computes in float64: a float32 operand is widened exactly, the float64 algorithm
runs, and each output entry is rounded once to float32. float64 operands of QR, eigh, SVD and
LDLᵀ run the same algorithms in double-double (the `*_wide` entries, and `wide=True`) and are
rounded once: in plain double they were less accurate than LAPACK (rule 6). Batches run the same sequence on each
matrix (threads take whole matrices), so a matrix's bits depend on neither the thread count nor
the rest of its batch. The Python here only moves data (copies into contiguous float64 work
buffers, transposes, permutations from pivots, sorting) and calls the compiled routines or other
registered ops (``prod``, ``log``, ``sum``, ``bmm``) whose orders are defined elsewhere.

LAPACK and vendor solvers choose blocked algorithms, pivots and iteration counts by hardware;
repmode refuses what it has no fixed-order algorithm for yet (the refusals at the end say why).
"""
from __future__ import annotations

import math
import weakref

import torch

from ..registry import register_composite, register_kernel, register_passthrough, register_refusal
from ._common import DTYPE_CODE, FLOAT_ONLY, C, call_registered, get_num_threads, param, params, unsupported

aten = torch.ops.aten
F64 = torch.float64
_F64 = DTYPE_CODE[torch.float64]


# ---- shared helpers ---------------------------------------------------------------------------

def _check(func, args, kwargs, *tensors):
    """The common dtype (float32 or float64) of the operands, all on the CPU."""
    present = [t for t in tensors if isinstance(t, torch.Tensor)]
    for t in present:
        if not t.is_cpu:
            raise unsupported(func, args, kwargs, "repmode's linear algebra has CPU kernels only so far; move the "
                                                  "computation to the CPU (.cpu()) to run it reproducibly")
    dtypes = {t.dtype for t in present}
    if len(dtypes) != 1 or next(iter(dtypes)) not in (torch.float32, torch.float64):
        raise unsupported(func, args, kwargs, "repmode's linear algebra covers float32 and float64 matrices "
                                              f"(all operands of one dtype); got {sorted(map(str, dtypes))}")
    return next(iter(dtypes))


def _work(x: torch.Tensor) -> torch.Tensor:
    """A fresh contiguous float64 copy of x (exact: widening or a copy)."""
    out = torch.empty(x.shape, dtype=F64, device=x.device)
    out.copy_(x)
    return out


def _result(x64: torch.Tensor, dtype) -> torch.Tensor:
    """The float64 result rounded once to the operands' dtype (NaNs are already canonical)."""
    return x64 if dtype == F64 else x64.to(dtype)


def _batch(shape) -> int:
    return math.prod(shape)


def _square(func, args, kwargs, A, what="A"):
    if A.dim() < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{_api(func)}: {what} must be batches of square matrices, but they are "
                           f"{A.shape[-2] if A.dim() >= 2 else '?'} by {A.shape[-1] if A.dim() else '?'} matrices")


def _api(func) -> str:
    return "linalg." + func._schema.name.split("::")[1].replace("linalg_", "").lstrip("_").replace("_ex", "")


def _check_errors(info, api_name, is_matrix):
    torch.ops.aten._linalg_check_errors(info, api_name, is_matrix=is_matrix)


def _threads() -> int:
    return get_num_threads()


# ---- Cholesky ---------------------------------------------------------------------------------

def _cholesky64(A: torch.Tensor, upper: bool):
    """(L or U in float64, info int32) for A (*, n, n): the lower algorithm on A (upper: on Aᵀ, transposed back)."""
    n = A.shape[-1]
    w = _work(A.mT if upper else A)
    info = torch.zeros(A.shape[:-2], dtype=torch.int32)
    if w.numel():
        C.linalg_cholesky(_F64, _batch(A.shape[:-2]), n, w.data_ptr(), info.data_ptr(), _threads())
    return (w.mT.contiguous() if upper else w), info


@register_kernel(aten.linalg_cholesky_ex.default, FLOAT_ONLY, out=aten.linalg_cholesky_ex.L)
def linalg_cholesky_ex(func, args, kwargs):
    A, upper, check_errors = params(func, args, kwargs, "self", "upper", "check_errors")
    dtype = _check(func, args, kwargs, A)
    _square(func, args, kwargs, A)
    L, info = _cholesky64(A, upper)
    if check_errors:
        _check_errors(info, "linalg.cholesky_ex", is_matrix=A.dim() == 2)
    return _result(L, dtype), info


def cholesky(func, args, kwargs):
    A, upper = params(func, args, kwargs, "self", "upper")
    dtype = _check(func, args, kwargs, A)
    _square(func, args, kwargs, A)
    L, info = _cholesky64(A, upper)
    _check_errors(info, "cholesky", is_matrix=A.dim() == 2)
    return _result(L, dtype)


if hasattr(aten, "cholesky"):  # the deprecated torch.cholesky: its aten op is gone from torch 2.14
    register_kernel(aten.cholesky.default, FLOAT_ONLY, out=aten.cholesky.out)(cholesky)


# ---- triangular solves ------------------------------------------------------------------------

def _broadcast_batch(A, B):
    batch = torch.broadcast_shapes(A.shape[:-2], B.shape[:-2])
    return A.expand(*batch, *A.shape[-2:]), B.expand(*batch, *B.shape[-2:]), batch


def _trsm64(A64, B64, upper: bool, unit: bool):
    """Solve A X = B in place of the contiguous float64 B64 (A64 contiguous float64, same batch)."""
    n, k = B64.shape[-2], B64.shape[-1]
    if B64.numel():
        C.linalg_triangular_solve(_F64, _batch(B64.shape[:-2]), n, k, A64.data_ptr(), B64.data_ptr(), upper, unit,
                                  _threads())
    return B64


def _solve_triangular64(A, B, upper, left, unit):
    """X of op(A) X = B (left) or X A = B (not left) in float64; A and B broadcast over the batch."""
    A, B, _ = _broadcast_batch(A, B)
    if left:
        return _trsm64(_work(A), _work(B), upper, unit)
    # X A = B  <=>  Aᵀ Xᵀ = Bᵀ: the algorithm on Aᵀ (a triangle of the other kind).
    return _trsm64(_work(A.mT), _work(B.mT), not upper, unit).mT


@register_kernel(aten.linalg_solve_triangular.default, FLOAT_ONLY, out=aten.linalg_solve_triangular.out)
def linalg_solve_triangular(func, args, kwargs):
    A, B, upper, left, unit = params(func, args, kwargs, "self", "B", "upper", "left", "unitriangular")
    dtype = _check(func, args, kwargs, A, B)
    _square(func, args, kwargs, A)
    if B.dim() < 2 or (B.shape[-2] if left else B.shape[-1]) != A.shape[-1]:
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({A.shape[-2]}x{A.shape[-1]} and "
                           f"{B.shape[-2] if B.dim() > 1 else '?'}x{B.shape[-1] if B.dim() else '?'})")
    return _result(_solve_triangular64(A, B, upper, left, unit).contiguous(), dtype)


@register_kernel(aten.triangular_solve.default, FLOAT_ONLY, out=aten.triangular_solve.X)
def triangular_solve(func, args, kwargs):
    B, A, upper, transpose, unit = params(func, args, kwargs, "self", "A", "upper", "transpose", "unitriangular")
    dtype = _check(func, args, kwargs, A, B)
    _square(func, args, kwargs, A)
    A_b, B_b, _ = _broadcast_batch(A, B)
    if transpose:  # Aᵀ X = B: the algorithm on Aᵀ
        X = _trsm64(_work(A_b.mT), _work(B_b), not upper, unit)
    else:
        X = _trsm64(_work(A_b), _work(B_b), upper, unit)
    return _result(X, dtype), A_b.clone(memory_format=torch.contiguous_format)


def _cholesky_solve64(B, L, upper):
    """A X = B for A = L Lᵀ (or Uᵀ U): two triangular solves in float64."""
    L, B, _ = _broadcast_batch(L, B)
    if upper:  # Uᵀ y = B, then U x = y
        y = _trsm64(_work(L.mT), _work(B), False, False)
        return _trsm64(_work(L), y, True, False)
    y = _trsm64(_work(L), _work(B), False, False)
    return _trsm64(_work(L.mT), y, True, False)


@register_kernel(aten.cholesky_solve.default, FLOAT_ONLY, out=aten.cholesky_solve.out)
def cholesky_solve(func, args, kwargs):
    B, L, upper = params(func, args, kwargs, "self", "input2", "upper")
    dtype = _check(func, args, kwargs, B, L)
    _square(func, args, kwargs, L)
    return _result(_cholesky_solve64(B, L, upper), dtype)


@register_kernel(aten.cholesky_inverse.default, FLOAT_ONLY, out=aten.cholesky_inverse.out)
def cholesky_inverse(func, args, kwargs):
    L, upper = params(func, args, kwargs, "self", "upper")
    dtype = _check(func, args, kwargs, L)
    _square(func, args, kwargs, L)
    n = L.shape[-1]
    if L.numel() == 0:
        return torch.empty(L.shape, dtype=dtype)
    eye = torch.eye(n, dtype=F64).expand(*L.shape[:-2], n, n)
    T = _trsm64(_work(L), _work(eye), upper, False)  # L⁻¹ (lower) or U⁻¹ (upper)
    T3 = T.reshape(-1, n, n)
    # (L Lᵀ)⁻¹ = L⁻ᵀ L⁻¹ and (Uᵀ U)⁻¹ = U⁻¹ U⁻ᵀ by repmode's bmm: entry (i, j) and (j, i) are the
    # same products in the same order, so the result is exactly symmetric.
    P = call_registered(aten.bmm.default, T3, T3.mT) if upper else call_registered(aten.bmm.default, T3.mT, T3)
    return _result(P.reshape(L.shape), dtype)


# ---- LU with partial pivoting -----------------------------------------------------------------

def _lu64(A: torch.Tensor):
    """(LU float64, pivots int32, info int32) of A (*, m, n)."""
    m, n = A.shape[-2], A.shape[-1]
    w = _work(A)
    piv = torch.zeros(*A.shape[:-2], min(m, n), dtype=torch.int32)
    info = torch.zeros(A.shape[:-2], dtype=torch.int32)
    if w.numel():
        C.linalg_lu_factor(_F64, _batch(A.shape[:-2]), m, n, w.data_ptr(), piv.data_ptr(), info.data_ptr(), True,
                           _threads())
    return w, piv, info


def _refuse_no_pivot(func, args, kwargs, pivot):
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")


@register_kernel(aten.linalg_lu_factor_ex.default, FLOAT_ONLY, out=aten.linalg_lu_factor_ex.out)
def linalg_lu_factor_ex(func, args, kwargs):
    A, pivot, check_errors = params(func, args, kwargs, "A", "pivot", "check_errors")
    dtype = _check(func, args, kwargs, A)
    _refuse_no_pivot(func, args, kwargs, pivot)
    LU, piv, info = _lu64(A)
    if check_errors:
        _check_errors(info, "linalg.lu_factor_ex", is_matrix=A.dim() == 2)
    return _result(LU, dtype), piv, info


@register_kernel(aten.linalg_lu.default, FLOAT_ONLY, out=aten.linalg_lu.out)
def linalg_lu(func, args, kwargs):
    A, pivot = params(func, args, kwargs, "A", "pivot")
    dtype = _check(func, args, kwargs, A)
    _refuse_no_pivot(func, args, kwargs, pivot)
    LU, piv, _ = _lu64(A)
    return aten.lu_unpack.default(_result(LU, dtype), piv)  # exact data movement


def _perm(piv: torch.Tensor, m: int) -> torch.Tensor:
    """perm (*, m) int64 with row i of Pᵀ A equal to row perm[i] of A: the row swaps i <-> piv[i]-1
    applied in increasing i to 0 .. m-1 (integer data movement)."""
    perm = torch.arange(m, dtype=torch.int64).expand(*piv.shape[:-1], m).clone()
    p = piv.to(torch.int64) - 1
    for i in range(piv.shape[-1]):
        j = p[..., i:i + 1]
        a = perm[..., i:i + 1].clone()
        perm[..., i:i + 1] = perm.gather(-1, j)
        perm.scatter_(-1, j, a)
    return perm


def _lu_solve64(LU64, piv, B, adjoint):
    """X of A X = B (adjoint: Aᵀ X = B) from A's LU (float64, contiguous) and pivots; B broadcast."""
    n = LU64.shape[-1]
    batch = torch.broadcast_shapes(LU64.shape[:-2], B.shape[:-2], piv.shape[:-1])
    LU = LU64.expand(*batch, n, n)
    piv = piv.expand(*batch, piv.shape[-1])
    B = B.expand(*batch, *B.shape[-2:])
    perm = _perm(piv, n)
    if not adjoint:  # L U X = Pᵀ B
        y = _work(B.gather(-2, perm.unsqueeze(-1).expand(*B.shape)))
        y = _trsm64(LU.contiguous(), y, False, True)
        return _trsm64(LU.contiguous(), y, True, False)
    # Uᵀ Lᵀ Pᵀ X = B:  Uᵀ y = B, Lᵀ z = y, X = P z (row perm[i] of X is row i of z)
    LUt = LU.mT.contiguous()
    y = _trsm64(LUt, _work(B), False, False)
    z = _trsm64(LUt, y, True, True)
    return torch.empty_like(z).scatter_(-2, perm.unsqueeze(-1).expand(*z.shape), z)


# The pivots _linalg_det / _linalg_slogdet return for a non-contiguous A (A's, as torch's backward
# expects them then), by their storage: -> (the LU returned with them, the factors of Aᵀ that a
# contiguous A gets, Aᵀ's pivots, the pivots' version, data pointer and shape when returned). The
# pivots are the key because torch's det backward passes them on unchanged (its LU is `LU + a
# diagonal correction`, a new tensor).
_DET_FACTORS_OF_AT = weakref.WeakKeyDictionary()


def _remember_det_factors(piv_out, LU_out, LUt_out, pivt):
    _DET_FACTORS_OF_AT[piv_out.untyped_storage()] = (LU_out, LUt_out, pivt, piv_out._version, piv_out.data_ptr(),
                                                     tuple(piv_out.shape))


def _det_factors_of_at(LU, piv, left, adjoint):
    """Aᵀ's factors (those returned for a contiguous A) when the call solves Aᵀ X = B (left, adjoint)
    with the unchanged pivots and the values of the LU that det/slogdet returned for a
    non-contiguous A: torch's det backward solves that system with A's factors (adjoint) for a
    non-contiguous A and with Aᵀ's (not adjoint) for a contiguous one; answering both with Aᵀ's
    factors makes the gradient's bits independent of A's layout. None otherwise (then the call is
    the ordinary adjoint solve with the factors given)."""
    if not (left and adjoint) or not isinstance(piv, torch.Tensor):
        return None
    entry = _DET_FACTORS_OF_AT.get(piv.untyped_storage())
    if entry is None:
        return None
    LU_out, LUt_out, pivt, version, ptr, shape = entry
    if (piv._version, piv.data_ptr(), tuple(piv.shape)) != (version, ptr, shape):
        return None
    if LU.shape != LU_out.shape or LU.dtype != LU_out.dtype or not torch.equal(LU, LU_out):
        return None  # other factors (a singular A's LU, whose zero pivots torch's backward replaced)
    return LUt_out, pivt


@register_kernel(aten.linalg_lu_solve.default, FLOAT_ONLY, out=aten.linalg_lu_solve.out)
def linalg_lu_solve(func, args, kwargs):
    LU, piv, B, left, adjoint = params(func, args, kwargs, "LU", "pivots", "B", "left", "adjoint")
    dtype = _check(func, args, kwargs, LU, B)
    _square(func, args, kwargs, LU, "LU")
    at_factors = _det_factors_of_at(LU, piv, left, adjoint)
    if at_factors is not None:  # Aᵀ X = B with Aᵀ's factors: the contiguous layout's sequence
        return _result(_lu_solve64(_work(at_factors[0]), at_factors[1], B, False).contiguous(), dtype)
    LU64 = _work(LU)
    if left:
        X = _lu_solve64(LU64, piv, B, adjoint)
    else:  # X A = B <=> Aᵀ Xᵀ = Bᵀ;  X Aᵀ = B <=> A Xᵀ = Bᵀ
        X = _lu_solve64(LU64, piv, B.mT, not adjoint).mT
    return _result(X.contiguous(), dtype)


def _is_vector_rhs(A, B):
    return B.dim() == 1 or (A.dim() - 1 == B.dim() and B.shape == A.shape[:-1])


@register_kernel(aten._linalg_solve_ex.default, FLOAT_ONLY, out=aten._linalg_solve_ex.result)
def linalg_solve_ex(func, args, kwargs):
    A, B, left, check_errors = params(func, args, kwargs, "A", "B", "left", "check_errors")
    dtype = _check(func, args, kwargs, A, B)
    _square(func, args, kwargs, A)
    vector = _is_vector_rhs(A, B)
    B2 = B.unsqueeze(-1 if left else -2) if vector else B
    LU, piv, info = _lu64(A)  # torch's rule too: the returned factors are A's, whatever its layout
    if left:
        X = _lu_solve64(LU, piv, B2, False)
    else:  # X A = B <=> Aᵀ Xᵀ = Bᵀ
        X = _lu_solve64(LU, piv, B2.mT, True).mT
    if check_errors:
        _check_errors(info, "torch.linalg.solve_ex", is_matrix=A.dim() == 2)
    if vector:
        X = X.squeeze(-1 if left else -2)
    return _result(X.contiguous(), dtype), _result(LU, dtype), piv, info


@register_kernel(aten.linalg_inv_ex.default, FLOAT_ONLY, out=aten.linalg_inv_ex.inverse)
def linalg_inv_ex(func, args, kwargs):
    A, check_errors = params(func, args, kwargs, "A", "check_errors")
    dtype = _check(func, args, kwargs, A)
    _square(func, args, kwargs, A)
    n = A.shape[-1]
    LU, piv, info = _lu64(A)  # X = linalg.solve(A, I)
    X = _lu_solve64(LU, piv, torch.eye(n, dtype=F64).expand(*A.shape[:-2], n, n), False)
    if check_errors:
        _check_errors(info, "linalg.inv_ex", is_matrix=A.dim() == 2)
    return _result(X.contiguous(), dtype), info


def _det_factors(A):
    """The LU that the determinant is computed from, always that of Aᵀ (det A = det Aᵀ), and the LU
    returned for backward: torch's backward of det and slogdet expects the factors of Aᵀ when A is
    contiguous and those of A otherwise (a second factorization then; the values do not depend on
    A's layout)."""
    LUt, pivt, _ = _lu64(A.mT)
    if A.is_contiguous():
        return LUt, pivt, LUt, pivt
    LU, piv, _ = _lu64(A)
    return LUt, pivt, LU, piv


def _det_returned_lu(A, LU, piv, LUt, pivt, dtype):
    """The LU tensor det/slogdet return; for a non-contiguous A (A's factors) remembered with Aᵀ's."""
    out = _result(LU, dtype)
    if not A.is_contiguous():
        _remember_det_factors(piv, out, _result(LUt, dtype), pivt)
    return out


def _swap_parity(piv: torch.Tensor) -> torch.Tensor:
    """True where the pivots make an odd number of swaps."""
    ar = torch.arange(1, piv.shape[-1] + 1, dtype=piv.dtype)
    return ((piv != ar).sum(-1) % 2) == 1


@register_kernel(aten._linalg_det.default, FLOAT_ONLY, out=aten._linalg_det.result)
def linalg_det(func, args, kwargs):
    A = param(func, args, kwargs, "A")
    dtype = _check(func, args, kwargs, A)
    _square(func, args, kwargs, A)
    LUt, pivt, LU, piv = _det_factors(A)
    d = call_registered(aten.prod.dim_int, LUt.diagonal(0, -2, -1), -1)  # repmode's prod order
    d = torch.where(_swap_parity(pivt), -d, d)  # exact negation
    return _result(d, dtype), _det_returned_lu(A, LU, piv, LUt, pivt, dtype), piv


@register_kernel(aten._linalg_slogdet.default, FLOAT_ONLY, out=aten._linalg_slogdet.sign)
def linalg_slogdet(func, args, kwargs):
    A = param(func, args, kwargs, "A")
    dtype = _check(func, args, kwargs, A)
    _square(func, args, kwargs, A)
    LUt, pivt, LU, piv = _det_factors(A)
    diag = LUt.diagonal(0, -2, -1)
    negative = ((diag < 0).sum(-1) % 2 == 1) ^ _swap_parity(pivt)
    sign = torch.where(negative, -1.0, 1.0).to(F64)
    sign = torch.where((diag == 0).any(-1), 0.0, sign)
    sign = torch.where(diag.isnan().any(-1), torch.nan, sign)
    absdiag = torch.where(diag < 0, -diag, diag)  # exact |.|
    logabs = call_registered(aten.sum.dim_IntList, call_registered(aten.log.default, absdiag), [-1])
    return _result(sign, dtype), _result(logabs, dtype), _det_returned_lu(A, LU, piv, LUt, pivt, dtype), piv


# ---- Householder QR ---------------------------------------------------------------------------

def _geqrf64(A, wide: bool, qcols: int = 0):
    """(a, tau, Q): a float64 (*, n, m) contiguous = the column-major m x n result; tau (*, min(m, n));
    wide (the float64 definition): computed in double-double, and Q's first qcols columns as
    (*, qcols, m) (column-major) from the unrounded reflectors (None when qcols = 0)."""
    m, n = A.shape[-2], A.shape[-1]
    w = _work(A.mT)
    tau = torch.zeros(*A.shape[:-2], min(m, n), dtype=F64)
    Q = None
    if wide and qcols:
        Q = torch.zeros(*A.shape[:-2], qcols, m, dtype=F64)
        if Q.numel() and not w.numel():  # no reflectors: Q is the identity's first columns
            Q.copy_(torch.eye(m, dtype=F64)[:qcols])
    if w.numel():
        if wide:
            C.linalg_geqrf_wide(_F64, _batch(A.shape[:-2]), m, n, w.data_ptr(), tau.data_ptr(), qcols,
                                Q.data_ptr() if Q is not None else 0, _threads())
        else:
            C.linalg_geqrf(_F64, _batch(A.shape[:-2]), m, n, w.data_ptr(), tau.data_ptr(), _threads())
    return w, tau, Q


def _apply_q64(refl_cm, tau, Ccm, transpose, wide: bool):
    """C := Q C (Qᵀ C) in place of Ccm (*, ncols, m) contiguous (column-major C); refl_cm (*, k, m)
    contiguous float64 column-major reflectors, tau (*, k) float64; wide: in double-double."""
    m, k, ncols = refl_cm.shape[-1], refl_cm.shape[-2], Ccm.shape[-2]
    if Ccm.numel() and k:
        fn = C.linalg_apply_q_wide if wide else C.linalg_apply_q
        fn(_F64, _batch(Ccm.shape[:-2]), m, k, refl_cm.data_ptr(), tau.data_ptr(), ncols, Ccm.data_ptr(), transpose,
           _threads())
    return Ccm


def _householder_product64(refl_cm, tau, ncols, wide: bool):
    """The first ncols columns of Q = H_0 ... H_{k-1}, as (*, ncols, m) contiguous (column-major)."""
    m = refl_cm.shape[-1]
    eye = torch.eye(m, dtype=F64)[:ncols].expand(*refl_cm.shape[:-2], ncols, m)
    return _apply_q64(refl_cm, tau, _work(eye), False, wide)


@register_kernel(aten.geqrf.default, FLOAT_ONLY, out=aten.geqrf.a)
def geqrf(func, args, kwargs):
    A = param(func, args, kwargs, "self")
    dtype = _check(func, args, kwargs, A)
    if A.dim() < 2:
        raise RuntimeError(f"geqrf: The input tensor A must have at least 2 dimensions, got {A.dim()}")
    a, tau, _ = _geqrf64(A, dtype == F64)
    return _result(a, dtype).mT, _result(tau, dtype)


@register_kernel([aten.linalg_householder_product.default, aten.orgqr.default], FLOAT_ONLY,
                 out=[aten.linalg_householder_product.out, aten.orgqr.out])
def householder_product(func, args, kwargs):
    A, tau = args[0], args[1]
    dtype = _check(func, args, kwargs, A, tau)
    m, n = A.shape[-2], A.shape[-1]
    k = tau.shape[-1]
    if A.dim() < 2 or m < n or k > n:
        raise RuntimeError(f"torch.linalg.householder_product: expected input of shape (*, m, n) with m >= n >= "
                           f"tau.shape[-1], got {tuple(A.shape)} and tau {tuple(tau.shape)}")
    batch = torch.broadcast_shapes(A.shape[:-2], tau.shape[:-1])
    refl = _work(A[..., :k].expand(*batch, m, k).mT)
    Q = _householder_product64(refl, _work(tau.expand(*batch, k)), n, dtype == F64)
    return _result(Q, dtype).mT


@register_kernel(aten.ormqr.default, FLOAT_ONLY, out=aten.ormqr.out)
def ormqr(func, args, kwargs):
    A, tau, Cm, left, transpose = params(func, args, kwargs, "self", "input2", "input3", "left", "transpose")
    dtype = _check(func, args, kwargs, A, tau, Cm)
    k = tau.shape[-1]
    mn = Cm.shape[-2] if left else Cm.shape[-1]
    if A.dim() < 2 or A.shape[-2] != mn or k > A.shape[-1] or k > mn:
        raise RuntimeError(f"torch.ormqr: input of shape {tuple(A.shape)} and tau {tuple(tau.shape)} do not "
                           f"match other of shape {tuple(Cm.shape)} (left={left})")
    batch = torch.broadcast_shapes(A.shape[:-2], tau.shape[:-1], Cm.shape[:-2])
    refl = _work(A[..., :k].expand(*batch, mn, k).mT)
    tau64 = _work(tau.expand(*batch, k))
    Cb = Cm.expand(*batch, *Cm.shape[-2:])
    if left:  # Q C or Qᵀ C on the columns of C
        return _result(_apply_q64(refl, tau64, _work(Cb.mT), transpose, dtype == F64), dtype).mT
    # C Q = (Qᵀ Cᵀ)ᵀ and C Qᵀ = (Q Cᵀ)ᵀ: the rows of C are the columns of Cᵀ (H_j is symmetric)
    return _result(_apply_q64(refl, tau64, _work(Cb), not transpose, dtype == F64), dtype)


@register_kernel(aten.linalg_qr.default, FLOAT_ONLY, out=aten.linalg_qr.out)
def linalg_qr(func, args, kwargs):
    A, mode = params(func, args, kwargs, "A", "mode")
    dtype = _check(func, args, kwargs, A)
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), "
                           "'r', or 'complete'")
    if A.dim() < 2:
        raise RuntimeError("linalg.qr: The input tensor A must have at least 2 dimensions.")
    m, n = A.shape[-2], A.shape[-1]
    k = min(m, n)
    wide = dtype == F64
    qcols = 0 if mode == "r" else (m if mode == "complete" else k)
    a, tau, Q = _geqrf64(A, wide, qcols)  # (*, n, m): column-major
    rows = m if mode == "complete" else k
    R = _result(a.mT[..., :rows, :].triu(), dtype).contiguous()
    if mode == "r":
        return torch.empty(0, dtype=dtype), R
    if not wide:
        Q = _householder_product64(a[..., :k, :].contiguous(), tau, qcols, False)
    return _result(Q, dtype).mT, R


# ---- symmetric eigendecomposition -------------------------------------------------------------

@register_kernel(aten._linalg_eigh.default, FLOAT_ONLY, out=aten._linalg_eigh.eigenvalues)
def linalg_eigh(func, args, kwargs):
    A, uplo, compute_v = params(func, args, kwargs, "A", "UPLO", "compute_v")
    dtype = _check(func, args, kwargs, A)
    _square(func, args, kwargs, A)
    if uplo not in ("L", "U", "l", "u"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {uplo}")
    n = A.shape[-1]
    batch = A.shape[:-2]
    # The symmetric matrix from the named triangle (exact data movement).
    lower = torch.ones(n, n, dtype=torch.bool).tril()
    if uplo in ("U", "u"):
        lower = lower.mT
    S = _work(torch.where(lower, A, A.mT))
    finite = S.isfinite().flatten(-2).all(-1) if n else torch.ones(batch, dtype=torch.bool)
    S.masked_fill_(~finite[..., None, None], 0.0)  # a matrix with inf or NaN gives NaNs (below), not sweeps
    VT = torch.empty(*batch, n, n, dtype=F64) if compute_v else torch.empty(0, dtype=F64)
    sweeps = torch.zeros(batch, dtype=torch.int32)
    if S.numel():
        fn = C.linalg_eigh_jacobi_wide if dtype == F64 else C.linalg_eigh_jacobi  # float64: double-double
        fn(_F64, _batch(batch), n, S.data_ptr(), VT.data_ptr() if compute_v else 0, compute_v, sweeps.data_ptr(),
           _threads())
    w = S.diagonal(0, -2, -1)
    w, order = torch.sort(w, dim=-1, stable=True)  # ascending; equal values keep the lower index first
    w = torch.where(finite.unsqueeze(-1), w, torch.nan)
    if not compute_v:
        return _result(w.contiguous(), dtype), torch.empty(0, dtype=dtype)
    if n == 0:
        return _result(w.contiguous(), dtype), torch.empty(*batch, 0, 0, dtype=dtype)
    V = VT.gather(-2, order.unsqueeze(-1).expand(*batch, n, n)).mT  # column j: the j-th eigenvector
    # Sign: each eigenvector's entry of largest magnitude (the first of equal ones) is positive.
    big = V.abs().argmax(-2, keepdim=True)
    V = torch.where(V.gather(-2, big) < 0, -V, V)
    V = torch.where(finite[..., None, None], V, torch.nan)
    return _result(w.contiguous(), dtype), _result(V.contiguous(), dtype)


# ---- singular value decomposition -------------------------------------------------------------

def _complete_columns(U: torch.Tensor, r: int, cols: int, wide: bool) -> torch.Tensor:
    """U (*, m, ≥r) float64 whose first r columns are orthonormal -> (*, m, cols): those r columns,
    then columns r.. of the complete Q of the Householder QR of them (an orthonormal complement in
    the fixed QR order)."""
    m = U.shape[-2]
    if r == cols:
        return U[..., :cols]
    a, tau, Q = _geqrf64(U[..., :r], wide, m)
    if not wide:
        Q = _householder_product64(a[..., :r, :].contiguous(), tau, m, False)
    Q = Q.mT  # (*, m, m)
    return torch.cat([U[..., :r], Q[..., r:cols]], dim=-1)


def _svd64(M: torch.Tensor, full: bool, compute_uv: bool, wide: bool):
    """(U, S, V) of M (*, m, n) with m >= n in float64: S descending, U (*, m, n or m), V (*, n, n)."""
    m, n = M.shape[-2], M.shape[-1]
    batch = M.shape[:-2]
    if n == 0 or _batch(batch) == 0:  # no singular values: U is the identity's first columns
        cols = m if full else n
        U = torch.eye(m, dtype=F64)[:, :cols].expand(*batch, m, cols).contiguous()
        return U, torch.empty(*batch, n, dtype=F64), torch.eye(n, dtype=F64).expand(*batch, n, n).contiguous()
    G = _work(M.mT)  # (*, n, m): column-major m x n
    finite = G.isfinite().flatten(-2).all(-1) if G.numel() else torch.ones(batch, dtype=torch.bool)
    G.masked_fill_(~finite[..., None, None], 0.0)
    VT = torch.empty(*batch, n, n, dtype=F64) if compute_uv else torch.empty(0, dtype=F64)
    S = torch.zeros(*batch, n, dtype=F64)
    sweeps = torch.zeros(batch, dtype=torch.int32)
    if G.numel():
        fn = C.linalg_svd_jacobi_wide if wide else C.linalg_svd_jacobi
        fn(_F64, _batch(batch), m, n, G.data_ptr(), VT.data_ptr() if compute_uv else 0, S.data_ptr(), compute_uv,
           sweeps.data_ptr(), _threads())
    S, order = torch.sort(S, dim=-1, descending=True, stable=True)  # equal values: the lower index first
    S = torch.where(finite.unsqueeze(-1), S, torch.nan)
    if not compute_uv:
        return None, S, None
    idx = order.unsqueeze(-1)
    U = G.gather(-2, idx.expand(*batch, n, m)).mT  # (*, m, n), column j = u_j
    V = VT.gather(-2, idx.expand(*batch, n, n)).mT  # (*, n, n), column j = v_j
    # Sign: each right singular vector's entry of largest magnitude (the first of equal ones) is
    # positive; its left vector flips with it (exact negations).
    big = V.abs().argmax(-2, keepdim=True)
    flip = V.gather(-2, big) < 0
    V = torch.where(flip, -V, V)
    U = torch.where(flip, -U, U)
    cols = m if full else n
    if cols > n or bool((S == 0).any()):
        # columns for zero singular values (zero after the sweeps) and, for full_matrices, the
        # complement: from the QR of the columns with sigma > 0, matrix by matrix.
        flatU, flatS = U.reshape(-1, m, n), S.reshape(-1, n)
        done = []
        for b in range(flatU.shape[0]):
            r = int((flatS[b] > 0).sum())
            done.append(_complete_columns(flatU[b], r, cols, wide) if r < cols else flatU[b])
        U = torch.stack(done).reshape(*batch, m, cols) if done else U.new_empty(*batch, m, cols)
    U = torch.where(finite[..., None, None], U, torch.nan)
    V = torch.where(finite[..., None, None], V, torch.nan)
    return U, S, V


@register_kernel(aten._linalg_svd.default, FLOAT_ONLY, out=aten._linalg_svd.U)
def linalg_svd(func, args, kwargs):
    A, full, compute_uv = params(func, args, kwargs, "A", "full_matrices", "compute_uv")
    dtype = _check(func, args, kwargs, A)
    if A.dim() < 2:
        raise RuntimeError("linalg.svd: The input tensor A must have at least 2 dimensions.")
    m, n = A.shape[-2], A.shape[-1]
    if m >= n:
        U, S, V = _svd64(A, full, compute_uv, dtype == F64)
    else:  # Aᵀ = U' S V'ᵀ  =>  A = V' S U'ᵀ
        V, S, U = _svd64(A.mT, full, compute_uv, dtype == F64)
    if not compute_uv:
        return torch.empty(0, dtype=dtype), _result(S.contiguous(), dtype), torch.empty(0, dtype=dtype)
    return _result(U.contiguous(), dtype), _result(S.contiguous(), dtype), _result(V.mT.contiguous(), dtype)


def _bmm_nd(a, b):
    """repmode's bmm over the broadcast batch of a (*, m, k) and b (*, k, n)."""
    batch = torch.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = a.expand(*batch, *a.shape[-2:]).reshape(-1, *a.shape[-2:])
    b = b.expand(*batch, *b.shape[-2:]).reshape(-1, *b.shape[-2:])
    return call_registered(aten.bmm.default, a, b).reshape(*batch, a.shape[-2], b.shape[-1])


@register_kernel(aten.linalg_pinv.atol_rtol_tensor, FLOAT_ONLY, out=aten.linalg_pinv.atol_rtol_tensor_out)
def linalg_pinv(func, args, kwargs):
    """torch's formula over repmode's SVD (or eigh, hermitian=True): singular values above
    tol = max(atol, rtol·σ_max) are inverted (repmode's reciprocal), the others give 0, and
    V·diag(σ⁺)·Uᵀ is one repmode bmm after an exact column scaling (one multiplication each)."""
    A, atol, rtol, hermitian = params(func, args, kwargs, "self", "atol", "rtol", "hermitian")
    dtype = _check(func, args, kwargs, A)
    if A.dim() < 2:
        raise RuntimeError("linalg.pinv(A): The input tensor A must have at least 2 dimensions.")
    m, n = A.shape[-2], A.shape[-1]
    default_rtol = torch.finfo(dtype).eps * max(m, n)
    atol_t = torch.zeros((), dtype=dtype) if atol is None else atol.to(dtype)
    if rtol is None:
        rtol_t = torch.full((), default_rtol, dtype=dtype)
        if atol is not None:
            rtol_t = torch.where(atol_t > 0, torch.zeros((), dtype=dtype), rtol_t)
    else:
        rtol_t = rtol.to(dtype)
    if A.numel() == 0:
        return torch.empty(*A.shape[:-2], n, m, dtype=dtype)
    if not hermitian:
        U, S, Vh = linalg_svd(aten._linalg_svd.default, (A, False, True), {})
        big = S[..., :1]
        absS = S
    else:
        S, U = linalg_eigh(aten._linalg_eigh.default, (A, "L", True), {})
        absS = torch.where(S < 0, -S, S)
        big = absS.amax(-1, keepdim=True)
        Vh = U.mT
    tol = torch.maximum(atol_t.unsqueeze(-1), call_registered(aten.mul.Tensor, rtol_t.unsqueeze(-1), big))
    inv = torch.where(absS > tol, call_registered(aten.reciprocal.default, S), torch.zeros((), dtype=dtype))
    left = call_registered(aten.mul.Tensor, Vh.mT, inv.unsqueeze(-2))
    return _bmm_nd(left, U.mT)


# ---- LDLᵀ with Bunch-Kaufman pivoting -------------------------------------------------------------

def _ldl64(A, wide: bool):
    """(LD float64 (*, n, n) lower, pivots int32, info int32) of the lower triangle of A (*, n, n);
    wide (the float64 definition): in double-double."""
    n = A.shape[-1]
    w = _work(A.mT)  # column-major A: w[..., j, i] = A[..., i, j]
    piv = torch.zeros(*A.shape[:-2], n, dtype=torch.int32)
    info = torch.zeros(A.shape[:-2], dtype=torch.int32)
    if w.numel():
        C.linalg_ldl_factor(_F64, _batch(A.shape[:-2]), n, w.data_ptr(), piv.data_ptr(), info.data_ptr(), wide,
                            _threads())
    return w.mT.tril(), piv, info


@register_kernel(aten.linalg_ldl_factor_ex.default, FLOAT_ONLY, out=aten.linalg_ldl_factor_ex.out)
def linalg_ldl_factor_ex(func, args, kwargs):
    """LAPACK's lower Bunch-Kaufman LDLᵀ (sytf2) in its output format, in float64 (docs/semantics.md
    "LDLᵀ"); real matrices, so `hermitian` changes nothing."""
    A, check_errors = params(func, args, kwargs, "self", "check_errors")
    dtype = _check(func, args, kwargs, A)
    _square(func, args, kwargs, A)
    LD, piv, info = _ldl64(A, dtype == F64)
    if check_errors:
        _check_errors(info, "torch.linalg.ldl_factor_ex", is_matrix=A.dim() == 2)
    return _result(LD, dtype), piv, info


def _check_ldl_pivots(piv, n):
    """Pivots in ldl_factor's format (|p| in 1..n; 2x2 blocks as two negative entries that both walks of
    the solve see whole), so that the solve never indexes outside the matrix."""
    if piv.numel() == 0:
        return
    flat = piv.reshape(-1, n)
    if bool(((flat == 0) | (flat.abs() > n)).any()):
        raise RuntimeError(f"torch.linalg.ldl_solve: pivots must lie in 1..{n} in absolute value")
    for row in torch.unique(flat, dim=0).tolist():
        k = 0
        while k < n:  # the forward walk
            if row[k] < 0 and (k == n - 1 or row[k + 1] != row[k]):
                raise RuntimeError("torch.linalg.ldl_solve: pivots are not in ldl_factor's format (a 2x2 "
                                   "block must be two equal negative entries)")
            k += 2 if row[k] < 0 else 1
        k = n - 1
        while k >= 0:  # the backward walk
            if row[k] < 0 and (k == 0 or row[k - 1] != row[k]):
                raise RuntimeError("torch.linalg.ldl_solve: pivots are not in ldl_factor's format (a 2x2 "
                                   "block must be two equal negative entries)")
            k -= 2 if row[k] < 0 else 1


@register_kernel(aten.linalg_ldl_solve.default, FLOAT_ONLY, out=aten.linalg_ldl_solve.out)
def linalg_ldl_solve(func, args, kwargs):
    """A X = B from ldl_factor's LD and pivots: LAPACK's sytrs order (lower), in float64."""
    LD, piv, B = params(func, args, kwargs, "LD", "pivots", "B")
    dtype = _check(func, args, kwargs, LD, B)
    _square(func, args, kwargs, LD, "LD")
    n = LD.shape[-1]
    if B.dim() < 2 or B.shape[-2] != n:
        raise RuntimeError(f"torch.linalg.ldl_solve: Incompatible shapes of A and B for the equation AX = B "
                           f"({n}x{n} and {B.shape[-2] if B.dim() > 1 else '?'}x{B.shape[-1] if B.dim() else '?'})")
    if piv.dtype != torch.int32 or piv.shape[-1:] != (n,):
        raise RuntimeError("torch.linalg.ldl_solve: expected pivots to be int32 of shape (*, n), got "
                           f"{piv.dtype} {tuple(piv.shape)}")
    _check_ldl_pivots(piv, n)
    batch = torch.broadcast_shapes(LD.shape[:-2], piv.shape[:-1], B.shape[:-2])
    a = _work(LD.expand(*batch, n, n).mT)  # column-major LD
    p = piv.expand(*batch, n).contiguous()
    X = _work(B.expand(*batch, *B.shape[-2:]).mT)  # column-major B, solved in place
    if X.numel():
        C.linalg_ldl_solve(_F64, _batch(batch), n, B.shape[-1], a.data_ptr(), p.data_ptr(), X.data_ptr(),
                           dtype == F64, _threads())
    return _result(X.mT.contiguous(), dtype)


# ---- least squares ----------------------------------------------------------------------------

_LSTSQ_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def _lstsq_qr64(A, B, wide):
    """(X, C) in float64: the least-squares solution of A X ≈ B by Householder QR for full-rank A
    (*, m, n) and B (*, m, k) of one batch; C = Qᵀ B (m >= n; None for m < n, where X is the
    minimum-norm solution: Aᵀ = Q R, Rᵀ y = B, X = Q [y; 0])."""
    m, n, k = A.shape[-2], A.shape[-1], B.shape[-1]
    if m >= n:
        a, tau, _ = _geqrf64(A, wide)  # (*, n, m): column-major
        Ccm = _apply_q64(a, tau, _work(B.mT), True, wide)  # Qᵀ B, column-major (*, k, m)
        R = a.mT[..., :n, :].contiguous()  # the upper triangle is R (the solve reads no other entry)
        X = _trsm64(R, Ccm.mT[..., :n, :].contiguous(), True, False)
        return X, Ccm.mT
    a, tau, _ = _geqrf64(A.mT, wide)  # Aᵀ (n x m) = Q R: (*, m, n) column-major
    Rt = a.contiguous()  # row-major (*, m, n) = Rᵀ in its first m columns (lower triangle), reflectors above
    y = _trsm64(Rt[..., :, :m].contiguous(), _work(B), False, False)
    Zcm = torch.zeros(*B.shape[:-2], k, n, dtype=F64)
    Zcm[..., :m] = y.mT
    return _apply_q64(a, tau, Zcm, False, wide).mT, None


@register_kernel(aten.linalg_lstsq.default, FLOAT_ONLY, out=aten.linalg_lstsq.out)
def linalg_lstsq(func, args, kwargs):
    """Least squares with a defined driver (docs/semantics.md "Least squares"): full-rank matrices by
    Householder QR (m < n: the minimum-norm solution through the QR of Aᵀ), rank-deficient ones (rank
    by the rule of the singular values) by the SVD's minimum-norm solution; in float64 inside."""
    A, B, rcond, driver = params(func, args, kwargs, "self", "b", "rcond", "driver")
    dtype = _check(func, args, kwargs, A, B)
    driver = "gelsy" if driver is None else driver
    if driver not in _LSTSQ_DRIVERS:
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    if A.dim() < 2:
        raise RuntimeError(f"torch.linalg.lstsq: input must have at least 2 dimensions, got {A.dim()}")
    vector = _is_vector_rhs(A, B)
    B2 = B.unsqueeze(-1) if vector else B
    if B2.dim() < 2 or B2.shape[-2] != A.shape[-2]:
        raise RuntimeError(f"torch.linalg.lstsq: input.size(-2) should match other.size(-2) ({A.shape[-2]} and "
                           f"{B2.shape[-2] if B2.dim() > 1 else '?'})")
    A, B2, batch = _broadcast_batch(A, B2)
    m, n, k = A.shape[-2], A.shape[-1], B2.shape[-1]
    r = min(m, n)
    wide = dtype == F64
    eps = torch.finfo(dtype).eps
    rc = eps * max(m, n) if rcond is None or rcond < 0 else rcond
    # rank (gelsy, gelsd, gelss): the singular values sigma_i > rcond * sigma_1 (in the dtype)
    need_svd = driver != "gels" and r > 0 and _batch(batch) > 0
    if need_svd:
        if m >= n:
            U, S64, V = _svd64(A, False, True, wide)  # U (*, m, n), V (*, n, n)
        else:
            V, S64, U = _svd64(A.mT, False, True, wide)  # V (*, n, m), U (*, m, m)
        S = _result(S64, dtype)
        tol = call_registered(aten.mul.Tensor, S[..., :1], torch.tensor(rc, dtype=dtype))
        keep = S > tol
        rank = keep.sum(-1)
        full = rank == r
    else:
        S = torch.zeros(*batch, r, dtype=dtype)
        rank = torch.zeros(batch, dtype=torch.int64)
        full = torch.ones(batch, dtype=torch.bool)
    if m == 0 or n == 0 or k == 0 or _batch(batch) == 0:
        X = torch.zeros(*batch, n, k, dtype=F64)
        # gels (LAPACK's quick return) zeroes B for an empty A: its residuals are 0
        C = None if m < n else torch.zeros(B2.shape, dtype=F64) if driver == "gels" else _work(B2)
    else:
        X, C = _lstsq_qr64(A, B2, wide)
        if need_svd and not bool(full.all()):  # minimum-norm: V diag(1/sigma for kept sigma) Uᵀ B
            inv = torch.where(keep, call_registered(aten.reciprocal.default, S64), torch.zeros((), dtype=F64))
            UtB = _bmm_nd(U.mT, _work(B2))
            Xs = _bmm_nd(V, call_registered(aten.mul.Tensor, UtB, inv.unsqueeze(-1)))
            X = torch.where(full[..., None, None], X, Xs)
    # residuals: m > n, not gelsy, and (gelsd/gelss) every matrix of full rank n: the squares of
    # rows n .. m-1 of Qᵀ B summed over those rows (repmode's mul and sum, in float64)
    if m > n and driver != "gelsy" and (driver == "gels" or bool((rank == n).all())):
        tail = C[..., n:, :]
        residuals = _result(call_registered(aten.sum.dim_IntList, call_registered(aten.mul.Tensor, tail, tail),
                                            [-2]), dtype)
    else:
        residuals = torch.empty(0, dtype=dtype)
    if vector:
        X = X.squeeze(-1)
    if driver == "gels":
        rank = torch.empty(0, dtype=torch.int64)
    sv = S if driver in ("gelsd", "gelss") else torch.empty(0, dtype=dtype)
    return _result(X.contiguous(), dtype), residuals, rank, sv.contiguous()


# ---- matrix exponential -----------------------------------------------------------------------

_EXP_DEGREE = 18  # Taylor degree; with ‖X‖₁ ≤ 1/2 the truncation is below 2⁻⁸⁰ relative


@register_composite(aten.linalg_matrix_exp.default, FLOAT_ONLY, out=aten.linalg_matrix_exp.out)
def linalg_matrix_exp(func, args, kwargs):
    """Scaling and squaring with a fixed rule, in float64, from registered ops: per matrix, s is the
    least integer ≥ 0 with ‖A‖₁·2⁻ˢ ≤ 1/2 (‖A‖₁ = the largest column sum of |A| by repmode's sum;
    s = 0 if it is not finite); X = A·2⁻ˢ (exact); T = I, then for k = 18 .. 1:
    T = I + bmm(X, T) / k; then T = bmm(T, T) s times. Each matrix of a batch gets its own s."""
    A = param(func, args, kwargs, "self")
    dtype = _check(func, args, kwargs, A)
    _square(func, args, kwargs, A)
    n = A.shape[-1]
    if A.numel() == 0:
        return torch.empty(A.shape, dtype=dtype)
    batch = A.shape[:-2]
    X = _work(A).reshape(-1, n, n)
    absX = torch.where(X < 0, -X, X)
    norm1 = call_registered(aten.sum.dim_IntList, absX, [-2]).amax(-1)  # (B,)
    scales = []
    for v in norm1.tolist():
        k = 0
        if math.isfinite(v):
            while math.ldexp(v, -k) > 0.5:
                k += 1
        scales.append(k)
    steps = torch.tensor(scales, dtype=torch.int64)
    factor = torch.tensor([math.ldexp(1.0, -k) for k in scales], dtype=F64)
    X = X * factor[:, None, None]  # a power of two: exact (unless the result is subnormal)
    eye = torch.eye(n, dtype=F64).expand_as(X)
    T = eye.clone()
    for k in range(_EXP_DEGREE, 0, -1):
        P = call_registered(aten.bmm.default, X, T)
        T = call_registered(aten.add.Tensor, eye, call_registered(aten.div.Scalar, P, float(k)))
    for i in range(max(scales, default=0)):
        sq = call_registered(aten.bmm.default, T, T)
        T = torch.where((steps > i)[:, None, None], sq, T)
    return _result(T.reshape(*batch, n, n), dtype)


# ---- exact data movement and error checks -----------------------------------------------------

register_passthrough(
    [aten.lu_unpack.default, aten.lu_unpack.out],
    "data movement: L and U are triangles of LU (unit diagonal written), P is the permutation the integer "
    "pivots name",
    family="linalg",
)
register_passthrough(
    [aten._linalg_check_errors.default],
    "reads the integer info tensor and raises torch's error message; computes no floating value",
    family="linalg",
)


# ---- refused: no fixed-order algorithm in repmode yet -----------------------------------------

register_refusal(
    [aten.linalg_eig.default, aten.linalg_eig.out, aten.linalg_eigvals.default, aten.linalg_eigvals.out,
     aten._linalg_eigvals.default],
    "the general (non-symmetric) eigendecomposition has no fixed-order algorithm in repmode (LAPACK's Hessenberg "
    "QR iteration chooses shifts and deflation by hardware); for a symmetric matrix use torch.linalg.eigh / "
    "eigvalsh, which repmode runs by cyclic Jacobi, or compute this outside the mode.",
    family="linalg",
)


# ---- torch >= 2.14: matrix_sqrth and polar ------------------------------------------------------
# New in torch 2.14, with CPU kernels that go through eigh / the SVD (torch's docs: "falls back to an
# SVD-based computation" on the CPU). repmode computes them as those formulas over its own eigh, SVD
# and bmm (docs/semantics.md "Linear algebra"); their backward is torch's composite of registered ops.

def linalg_matrix_sqrth(func, args, kwargs):
    """X = Q·diag(sqrt(max(λ, 0)))·Qᵀ from repmode's eigh of A's lower triangle: each column of Q
    scaled by one multiplication, then one repmode bmm."""
    A = params(func, args, kwargs, "self")[0]
    _check(func, args, kwargs, A)
    _square(func, args, kwargs, A)
    if A.numel() == 0:
        return torch.empty_like(A, memory_format=torch.contiguous_format)
    L, Q = linalg_eigh(aten._linalg_eigh.default, (A, "L", True), {})
    root = call_registered(aten.sqrt.default, call_registered(aten.clamp_min.default, L, 0))
    return _bmm_nd(call_registered(aten.mul.Tensor, Q, root.unsqueeze(-2)), Q.mT)


def linalg_polar(func, args, kwargs):
    """A = U·H (m ≥ n) from repmode's thin SVD A = W·diag(σ)·Vᵀ: U = W·Vᵀ and H = V·diag(σ)·Vᵀ (the
    columns of V scaled by one multiplication each), each one repmode bmm."""
    A = params(func, args, kwargs, "A")[0]
    _check(func, args, kwargs, A)
    if A.dim() < 2 or A.shape[-2] < A.shape[-1]:
        raise RuntimeError(f"linalg.polar: A must be a batch of m x n matrices with m >= n, got shape {tuple(A.shape)}")
    m, n = A.shape[-2], A.shape[-1]
    if A.numel() == 0:
        return (torch.zeros(*A.shape[:-2], m, n, dtype=A.dtype), torch.zeros(*A.shape[:-2], n, n, dtype=A.dtype))
    W, S, Vh = linalg_svd(aten._linalg_svd.default, (A, False, True), {})
    U = _bmm_nd(W, Vh)
    H = _bmm_nd(call_registered(aten.mul.Tensor, Vh.mT, S.unsqueeze(-2)), Vh)
    return U, H


if hasattr(aten, "linalg_matrix_sqrth"):
    register_kernel(aten.linalg_matrix_sqrth.default, FLOAT_ONLY, out=aten.linalg_matrix_sqrth.out)(
        linalg_matrix_sqrth)
if hasattr(aten, "linalg_polar"):
    register_kernel(aten.linalg_polar.default, FLOAT_ONLY, out=aten.linalg_polar.out)(linalg_polar)
